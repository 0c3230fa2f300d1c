//! Loads plugin libraries from a directory given as `-U` would give it:
//! good ones load, bad ones are refused by name, and a plugin unit runs
//! through the engine's unit contract. Needs Debian's sc3-plugins-server
//! (scripts/setup.sh); skipped without it.

use magnetar_plugin::{Options, Prefer};
use magnetar_ugens::testing::{TestInput, UnitHarness};
use magnetar_ugens::{Rate, Registry};
use std::path::{Path, PathBuf};

const PLUGINS: &str = "/usr/lib/SuperCollider/plugins";

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("magnetar-plugin-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn good_libraries_load_bad_ones_are_refused_and_a_plugin_unit_runs() {
    let plugins = Path::new(PLUGINS);
    if !plugins.join("MCLDOscUGens.so").exists() {
        eprintln!("skipped: sc3-plugins-server is not installed");
        return;
    }
    let dir = scratch_dir();
    std::fs::copy(plugins.join("MCLDOscUGens.so"), dir.join("MCLDOscUGens.so")).unwrap();
    std::fs::copy(plugins.join("AY_UGen.so"), dir.join("AY_UGen.so")).unwrap();
    std::fs::copy(plugins.join("AY_UGen_supernova.so"), dir.join("Nova.so")).unwrap();
    std::fs::write(dir.join("Broken.so"), b"no library").unwrap();

    let report = magnetar_plugin::load(&Options {
        ugen_plugins_path: Some(dir.display().to_string()),
        prefer: Prefer::Native,
        disabled: false,
    });
    assert_eq!(report.libraries, 2, "{report:?}");
    assert_eq!(report.refused.len(), 2, "{report:?}");
    assert!(report.refused.iter().any(|l| l.contains("Nova.so") && l.contains("supernova")), "{report:?}");
    assert!(report.refused.iter().any(|l| l.contains("Broken.so")), "{report:?}");

    magnetar_ugens::registry::set_extension(magnetar_plugin::install);
    let registry = Registry::with_all();
    assert!(registry.is_foreign("SawDPW") && registry.is_foreign("AY"));
    assert!(!registry.is_foreign("SinOsc"), "magnetar keeps its own units by default");

    // A 480 Hz saw at 48 kHz: period 100 samples, rising 0.01 a sample.
    let out = UnitHarness::new("SawDPW", Rate::Audio)
        .inputs([TestInput::Const(480.0), TestInput::Const(0.0)])
        .run(20)
        .remove(0);
    assert!(out.iter().all(|v| v.is_finite() && v.abs() <= 1.01));
    let (lo, hi) = out.iter().fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(hi - lo > 0.9, "a saw spans its range: {lo}..{hi}");
    assert!((out[301] - out[300] - 0.01).abs() < 1e-4 || (out[302] - out[301] - 0.01).abs() < 1e-4);
    for i in 200..1000 {
        assert!((out[i] - out[i + 100]).abs() < 1e-3, "not periodic at {i}: {} vs {}", out[i], out[i + 100]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prefer_takes_the_names_it_lists() {
    assert!(!Prefer::Native.takes("SinOsc"));
    assert!(Prefer::All.takes("SinOsc"));
    assert!(!Prefer::All.takes("Control"), "the engine keeps its control units");
    let some = Prefer::parse("FFT,IFFT");
    assert!(some.takes("FFT") && some.takes("IFFT") && !some.takes("PV_Add"));
    assert_eq!(Prefer::parse("all"), Prefer::All);
}
