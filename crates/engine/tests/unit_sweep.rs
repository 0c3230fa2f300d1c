//! Every unit, at every rate it declares, with as many inputs as it declares
//! it needs and a few more, fed constants, control-rate and audio-rate
//! wires holding ordinary and hostile values (zero, negative, huge, NaN,
//! infinite), with buffers holding samples: its synth is built and runs
//! without a unit failing. A def the compiler accepts is one its units can
//! run (the declarations are the whole check at `/d_recv`); a size too large
//! for memory is "out of real time memory", not a failure.

mod common;

use common::{def_bytes, Rng, PerformOsc};
use magnetar_engine::{EngineOptions, OfflineEngine};
use magnetar_protocol::{OscArg, OscMessage};
use magnetar_ugens::{Rate, Registry};
use std::collections::BTreeSet;

const VALUES: &[f32] = &[
    0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    3.0,
    64.0,
    1e9,
    -1e9,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    1e-30,
];

/// Where the tested unit's inputs come from.
#[derive(Clone, Copy, Debug)]
enum Source {
    Constant,
    Audio,
    Control,
    /// Constants, control and audio wires in turn.
    Mixed,
}

fn engine() -> OfflineEngine {
    let mut e = OfflineEngine::new(EngineOptions {
        sample_rate: 48_000.0,
        block_size: 64,
        num_buffers: 16,
        seed: Some(3),
        ..Default::default()
    });
    let msg = |e: &mut OfflineEngine, cmd: &str, args: Vec<OscArg>| {
        let _ = e.perform_message(&OscMessage::new(cmd, args));
    };
    // Buffers 0 to 3 hold samples (one channel for even numbers, two for odd).
    for b in 0..4 {
        msg(&mut e, "/b_alloc", vec![OscArg::Int(b), OscArg::Int(1024 >> b), OscArg::Int(1 + b % 2)]);
        msg(&mut e, "/b_gen", vec![OscArg::Int(b), OscArg::Str("sine1".into()), OscArg::Int(7), OscArg::Float(1.0)]);
    }
    e
}

/// The def: a DC at audio and one at control rate feeding the tested unit.
fn sweep_def(unit: &str, rate: Rate, outputs: usize, values: &[f32], source: Source) -> Vec<u8> {
    let mut constants = values.to_vec();
    let zero = constants.len() as i32;
    constants.push(0.25);
    let mut inputs = Vec::with_capacity(values.len());
    for (i, _) in values.iter().enumerate() {
        let k = i as i32;
        let from = match source {
            Source::Constant => (-1, k),
            Source::Audio => (0, 0),
            Source::Control => (1, 0),
            Source::Mixed => [(-1, k), (1, 0), (0, 0)][i % 3],
        };
        inputs.push(from);
    }
    // The DCs carry the first value (or 0.25): the wires' values matter less
    // than their rates.
    let first = if values.is_empty() { zero } else { 0 };
    let out_rates = vec![rate as u8; outputs];
    def_bytes(
        "sweep",
        &constants,
        &[],
        &[
            ("DC", Rate::Audio as u8, &[(-1, first)], &[Rate::Audio as u8], 0),
            ("DC", Rate::Control as u8, &[(-1, first)], &[Rate::Control as u8], 0),
            (unit, rate as u8, &inputs, &out_rates, 0),
        ],
    )
}

// Unoptimised builds check integer arithmetic for overflow, which the
// release server, like scsynth's C++, wraps: hostile values make such a
// build's units stop where the server's run on. The verdict is about the
// server as built, so the sweep runs in release (scripts/test.sh does).
#[test]
#[cfg_attr(debug_assertions, ignore = "release only: run with --release")]
fn every_unit_runs_with_what_its_declaration_allows() {
    let registry = Registry::with_all();
    let mut names: Vec<&str> = registry.names().collect();
    names.sort_unstable();
    let only = std::env::var("SWEEP_UNITS").ok();
    let mut failures = BTreeSet::new();
    let mut rng = Rng(0x5eed);
    let sources = [Source::Constant, Source::Audio, Source::Control, Source::Mixed];
    for name in names {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|n| n == name)) {
            continue;
        }
        let decl = registry.decl(name);
        if decl.effects.foreign || name.starts_with("Magnetar") {
            continue;
        }
        let mut e = engine();
        for rate in [Rate::Scalar, Rate::Control, Rate::Audio] {
            if !decl.rates.contains(rate) {
                continue;
            }
            let min_in = decl.min_inputs as usize;
            let min_out = (decl.min_outputs as usize).max(1);
            for (n_in, n_out) in [(min_in, min_out), (min_in + 1, min_out), (min_in + 2, min_out + 1), (min_in + 5, min_out + 3)] {
                let mut patterns: Vec<Vec<f32>> = VALUES.iter().map(|&v| vec![v; n_in]).collect();
                for _ in 0..4 {
                    patterns.push((0..n_in).map(|_| VALUES[rng.below(VALUES.len() as u64) as usize]).collect());
                }
                for values in &patterns {
                    for &source in &sources {
                        let bytes = sweep_def(name, rate, n_out, values, source);
                        let Ok(loaded) = e.add_synthdefs(&bytes) else { continue };
                        if !loaded.iter().all(Result::is_ok) {
                            continue;
                        }
                        let s_new = OscMessage::new(
                            "/s_new",
                            vec![OscArg::Str("sweep".into()), OscArg::Int(-1), OscArg::Int(0), OscArg::Int(0)],
                        );
                        let _ = e.perform_message(&s_new);
                        e.run_block();
                        e.run_block();
                        let _ = e.perform_message(&OscMessage::new("/g_freeAll", vec![OscArg::Int(0)]));
                        e.run_block();
                        for f in e.unit_failures.drain(..) {
                            if !f.out_of_memory && f.unit == 2 {
                                failures.insert(format!(
                                    "{name} {rate:?} inputs {n_in} outputs {n_out} {source:?} {values:?}"
                                ));
                            }
                        }
                        e.unit_failures.clear();
                    }
                }
            }
        }
    }
    // One line per unit, rate and count is enough to find each.
    let mut seen = BTreeSet::new();
    let report: Vec<&String> = failures
        .iter()
        .filter(|f| seen.insert(f.split(' ').take(6).collect::<Vec<_>>().join(" ")))
        .collect();
    assert!(report.is_empty(), "{} failing cases, e.g.:\n{}", failures.len(), report.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
}
