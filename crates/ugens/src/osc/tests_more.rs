//! SinOscFB, Klang, Klank, LFGauss and Vibrato.

use crate::testing::{TestInput, UnitHarness, ar, peak};
use crate::unit::Rate;
use TestInput::{Audio, Const};

const SR: f64 = 48_000.0;
const BS: usize = 64;
const SECOND: usize = 750;

fn upward_crossings(sig: &[f32]) -> usize {
    sig.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count()
}

fn impulse(len: usize) -> TestInput {
    let mut v = vec![0.0; len];
    v[0] = 1.0;
    Audio(v)
}

// ----- SinOscFB -----

#[test]
fn sinoscfb_without_feedback_is_a_plain_sine() {
    let fb = ar("SinOscFB", vec![Const(440.0), Const(0.0)], 100);
    let sine = ar("SinOsc", vec![Const(440.0), Const(0.0)], 100);
    assert_eq!(fb, sine);
}

#[test]
fn sinoscfb_feedback_keeps_pitch_and_adds_harmonics() {
    let plain = ar("SinOscFB", vec![Const(200.0), Const(0.0)], SECOND);
    let fed = ar("SinOscFB", vec![Const(200.0), Const(0.8)], SECOND);
    assert!((199..=201).contains(&upward_crossings(&fed)), "{}", upward_crossings(&fed));
    assert!(peak(&fed) <= 1.0001);
    // Harmonics steepen the edges: the largest step between samples grows.
    let slope = |s: &[f32]| s.windows(2).fold(0.0f32, |m, w| m.max((w[1] - w[0]).abs()));
    assert!(slope(&fed) > 1.2 * slope(&plain), "{} vs {}", slope(&fed), slope(&plain));
}

// ----- Klang -----

#[test]
fn klang_partial_sounds_at_its_scaled_frequency_and_level() {
    // One partial: 100 Hz scaled by 2 and offset by 50 → 250 Hz, amplitude 0.5.
    let out = ar("Klang", vec![Const(2.0), Const(50.0), Const(100.0), Const(0.5), Const(0.0)], SECOND);
    let n = upward_crossings(&out);
    assert!((249..=251).contains(&n), "{n}");
    assert!((peak(&out) - 0.5).abs() < 1e-3, "{}", peak(&out));
}

#[test]
fn klang_sums_its_partials() {
    let spec = |f: f32, a: f32| vec![Const(f), Const(a), Const(0.0)];
    let mut both = vec![Const(1.0), Const(0.0)];
    both.extend(spec(300.0, 0.3));
    both.extend(spec(700.0, 0.2));
    let mut one = vec![Const(1.0), Const(0.0)];
    one.extend(spec(300.0, 0.3));
    let mut other = vec![Const(1.0), Const(0.0)];
    other.extend(spec(700.0, 0.2));
    let (s, a, b) = (ar("Klang", both, 50), ar("Klang", one, 50), ar("Klang", other, 50));
    for i in 0..s.len() {
        assert!((s[i] - (a[i] + b[i])).abs() < 1e-5);
    }
}

// ----- Klank -----

fn klank(modes: &[(f32, f32, f32)], blocks: usize) -> Vec<f32> {
    let mut inputs = vec![impulse(blocks * BS), Const(1.0), Const(0.0), Const(1.0)];
    for &(f, a, t) in modes {
        inputs.extend([Const(f), Const(a), Const(t)]);
    }
    ar("Klank", inputs, blocks)
}

#[test]
fn klank_mode_rings_at_its_frequency() {
    let out = klank(&[(1000.0, 1.0, 2.0)], SECOND);
    let n = upward_crossings(&out);
    assert!((998..=1001).contains(&n), "{n}");
}

#[test]
fn klank_mode_decays_60_db_in_its_ring_time() {
    let ring = 0.5f32;
    let out = klank(&[(500.0, 1.0, ring)], SECOND);
    let window = |t: f32| {
        let s = (t as f64 * SR) as usize;
        peak(&out[s..s + 480])
    };
    let drop_db = 20.0 * (window(ring) / window(0.0)).log10();
    assert!((-62.0..=-58.0).contains(&drop_db), "{drop_db} dB");
}

#[test]
fn klank_with_several_modes_holds_each_frequency() {
    // Five modes: one group of four plus a leftover one.
    let modes = [(200.0, 1.0, 1.0), (300.0, 0.0, 1.0), (400.0, 0.0, 1.0), (500.0, 0.0, 1.0), (600.0, 0.0, 1.0)];
    let out = klank(&modes, SECOND);
    let n = upward_crossings(&out);
    assert!((199..=201).contains(&n), "only the 200 Hz mode is heard: {n}");
    let single = klank(&modes[..1], SECOND);
    assert_eq!(out, single, "modes of zero level add nothing");
}

#[test]
fn lfgauss_peaks_at_one_once_per_period() {
    // 0.1 s at 48 kHz: one peak every 4800 samples.
    let out = UnitHarness::new("LFGauss", Rate::Audio)
        .inputs([Const(0.1), Const(0.1), Const(0.0), Const(1.0), Const(0.0)])
        .run(300);
    let o = &out[0];
    let peaks: Vec<usize> = (1..o.len() - 1).filter(|&i| o[i] > 0.99 && o[i] >= o[i - 1] && o[i] > o[i + 1]).collect();
    assert!(peaks.len() >= 3);
    for w in peaks.windows(2) {
        assert!((w[1] - w[0]).abs_diff(4800) <= 1, "{peaks:?}");
    }
}

#[test]
fn lfgauss_without_loop_asks_for_its_done_action() {
    let r = UnitHarness::new("LFGauss", Rate::Control)
        .inputs([Const(0.05), Const(0.1), Const(0.0), Const(0.0), Const(2.0)])
        .run_full(100);
    assert!(r.done_actions.iter().any(|&(_, a)| a == 2));
}

#[test]
fn vibrato_swings_around_the_frequency_after_the_delay() {
    let n = 64 * 400;
    let out = UnitHarness::new("Vibrato", Rate::Audio)
        .inputs([
            Audio(vec![440.0; n]),
            Const(6.0),
            Const(0.02),
            Const(0.1),
            Const(0.0),
            Const(0.04),
            Const(0.1),
            Const(0.0),
            Const(0.0),
        ])
        .run(400);
    let o = &out[0];
    assert!(o[..4700].iter().all(|&v| v == 440.0));
    let hi = o.iter().fold(0.0f32, |m, &v| m.max(v));
    let lo = o.iter().fold(1e9f32, |m, &v| m.min(v));
    assert!(hi > 445.0 && hi < 455.0 && lo < 435.0 && lo > 425.0, "{lo}..{hi}");
}
