//! LFDNoise*, LFClipNoise, GrayNoise, Crackle, Logistic, Hasher, CoinGate,
//! TExpRand and TIRand.

use crate::testing::{TestInput, UnitHarness, ar};
use crate::unit::Rate;
use TestInput::{Audio, Const, Control};

const BS: usize = 64;
const SECOND: usize = 750;

fn kr(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    UnitHarness::new(name, Rate::Control).inputs(inputs).run(blocks).remove(0)
}

fn range(sig: &[f32]) -> (f32, f32) {
    sig.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// Lengths of the runs of equal consecutive values.
fn runs(sig: &[f32]) -> Vec<usize> {
    let mut out = vec![1];
    for w in sig.windows(2) {
        if w[0] == w[1] {
            *out.last_mut().unwrap() += 1;
        } else {
            out.push(1);
        }
    }
    out
}

fn pulses(period: usize, len: usize) -> Vec<f32> {
    (0..len).map(|i| if i % period == 0 { 1.0 } else { 0.0 }).collect()
}

// ----- LFDNoise0/1/3, LFClipNoise, LFDClipNoise -----

#[test]
fn lfdnoise0_holds_each_value_for_one_period() {
    let out = ar("LFDNoise0", vec![Const(480.0)], 100);
    let r = runs(&out);
    // Interior runs are 100 samples (48 kHz / 480 Hz), give or take a sample of rounding.
    for &len in &r[1..r.len() - 1] {
        assert!((99..=101).contains(&len), "{len}");
    }
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi < 1.0);
}

#[test]
fn lfdnoise0_follows_an_audio_rate_frequency_within_a_block() {
    // Frequency jumps from 100 Hz to 4800 Hz halfway through the signal.
    let n = 200 * BS;
    let freq: Vec<f32> = (0..n).map(|i| if i < n / 2 { 100.0 } else { 4800.0 }).collect();
    let out = ar("LFDNoise0", vec![Audio(freq)], 200);
    let (slow, fast) = (runs(&out[..n / 2]), runs(&out[n / 2 + 20..]));
    assert!(slow.len() < 30, "{}", slow.len());
    assert!(fast[1..fast.len() - 1].iter().all(|&l| (9..=11).contains(&l)));
}

#[test]
fn lfdnoise1_moves_in_straight_lines_between_values() {
    let out = ar("LFDNoise1", vec![Const(100.0)], 150);
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi <= 1.0);
    // Within a 480-sample segment the second difference is (nearly) zero.
    let max_curve = out.windows(3).map(|w| (w[2] - 2.0 * w[1] + w[0]).abs()).fold(0.0f32, f32::max);
    let max_step = out.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
    assert!(max_step < 2.0 / 480.0 + 1e-4, "{max_step}");
    assert!(max_curve <= 2.0 * max_step, "{max_curve}");
}

#[test]
fn lfdnoise3_is_smooth_and_stays_in_range() {
    let out = ar("LFDNoise3", vec![Const(200.0)], SECOND);
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi <= 1.0, "{lo}..{hi}");
    let max_step = out.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
    assert!(max_step < 0.05, "{max_step}");
}

#[test]
fn clip_noises_output_only_plus_or_minus_one() {
    for name in ["LFClipNoise", "LFDClipNoise"] {
        let out = ar(name, vec![Const(1000.0)], 100);
        assert!(out.iter().all(|&x| x == 1.0 || x == -1.0), "{name}");
        assert!(out.contains(&1.0) && out.contains(&-1.0), "{name}");
    }
}

#[test]
fn lfclipnoise_changes_at_most_once_per_period() {
    let out = ar("LFClipNoise", vec![Const(480.0)], 100);
    let r = runs(&out);
    assert!(r[1..r.len() - 1].iter().all(|&l| l % 100 == 0), "{r:?}");
}

// ----- GrayNoise, Crackle, Logistic -----

#[test]
fn graynoise_changes_one_bit_per_sample() {
    let out = ar("GrayNoise", vec![], 100);
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi <= 1.0);
    let scale = 2f64.powi(31);
    for w in out.windows(2) {
        // Each step is ± a power of two of the 32-bit word (within float rounding).
        // Flips of the lowest bits may vanish in the float's rounding.
        let d = ((w[1] as f64 - w[0] as f64) * scale).abs();
        if d >= 512.0 {
            let bit = d.log2().round();
            assert!((d / 2f64.powf(bit) - 1.0).abs() < 0.01, "{d}");
        }
    }
}

#[test]
fn crackle_stays_positive_and_bounded() {
    let out = ar("Crackle", vec![Const(1.95)], SECOND);
    let (lo, hi) = range(&out);
    assert!(lo >= 0.0 && hi < 2.0, "{lo}..{hi}");
    assert!(out.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn logistic_settles_on_its_two_cycle() {
    // r = 3.2 has the attracting 2-cycle {0.5130, 0.7995}.
    let out = ar("Logistic", vec![Const(3.2), Const(48_000.0), Const(0.3)], 20);
    let tail = &out[out.len() - 2..];
    let (lo, hi) = (tail[0].min(tail[1]), tail[0].max(tail[1]));
    assert!((lo - 0.5130).abs() < 1e-3 && (hi - 0.7995).abs() < 1e-3, "{tail:?}");
}

#[test]
fn logistic_holds_each_value_for_one_period_of_its_frequency() {
    let out = ar("Logistic", vec![Const(3.7), Const(480.0), Const(0.3)], 50);
    let r = runs(&out);
    assert!(r[1..r.len() - 1].iter().all(|&l| l == 100), "{r:?}");
}

// ----- Hasher -----

#[test]
fn hasher_is_deterministic_and_spreads_nearby_inputs() {
    let input: Vec<f32> = (0..BS * 4).map(|i| i as f32 * 1e-3).collect();
    let a = ar("Hasher", vec![Audio(input.clone())], 4);
    let b = ar("Hasher", vec![Audio(input)], 4);
    assert_eq!(a, b);
    let (lo, hi) = range(&a);
    assert!(lo >= -1.0 && hi < 1.0 && hi - lo > 1.0, "{lo}..{hi}");
    let constant = ar("Hasher", vec![Const(0.25)], 2);
    assert!(constant.iter().all(|&x| x == constant[0]));
}

// ----- CoinGate -----

#[test]
fn coingate_passes_all_or_no_triggers_at_probability_one_or_zero() {
    // The first pulse comes after the start (a trigger already high when
    // the unit is built is not a rising edge).
    let mut trig = pulses(100, 50 * BS);
    trig[0] = 0.0;
    let all = ar("CoinGate", vec![Const(1.0), Audio(trig.clone())], 50);
    let none = ar("CoinGate", vec![Const(0.0), Audio(trig.clone())], 50);
    assert!(all == trig, "every trigger passes at probability 1");
    assert!(none.iter().all(|&x| x == 0.0));
}

#[test]
fn coingate_passes_about_the_given_share_of_triggers() {
    let trig = pulses(10, SECOND * BS);
    let out = ar("CoinGate", vec![Const(0.3), Audio(trig)], SECOND);
    let passed = out.iter().filter(|&&x| x > 0.0).count() as f64 / 4800.0;
    assert!((0.27..0.33).contains(&passed), "{passed}");
}

// ----- TExpRand, TIRand -----

#[test]
fn tirand_outputs_integers_in_range_and_holds_between_triggers() {
    let out = ar("TIRand", vec![Const(-3.0), Const(5.0), Audio(pulses(50, 200 * BS))], 200);
    assert!(out.iter().all(|&x| x == x.round() && (-3.0..=5.0).contains(&x)));
    for v in -3..=5 {
        assert!(out.contains(&(v as f32)), "{v} never drawn");
    }
    // Values change only at triggers.
    for (i, w) in out.windows(2).enumerate() {
        if w[0] != w[1] {
            assert_eq!((i + 1) % 50, 0);
        }
    }
}

#[test]
fn tirand_control_rate_draws_on_rising_triggers() {
    let trig: Vec<f32> = (0..200).map(|i| if i % 4 == 0 { 1.0 } else { 0.0 }).collect();
    let out = kr("TIRand", vec![Const(0.0), Const(1000.0), Control(trig)], 200);
    assert!(out.iter().all(|&x| x == x.round() && (0.0..=1000.0).contains(&x)));
    assert!(runs(&out)[1..].iter().all(|&l| l == 4));
}

#[test]
fn texprand_is_log_uniform_between_its_bounds() {
    let out = ar("TExpRand", vec![Const(1.0), Const(100.0), Audio(pulses(8, SECOND * BS))], SECOND);
    let (lo, hi) = range(&out);
    assert!(lo >= 1.0 && hi < 100.0, "{lo}..{hi}");
    // Half of the draws fall below the geometric mean, 10.
    let draws: Vec<f32> = out.iter().step_by(8).copied().collect();
    let below = draws.iter().filter(|&&x| x < 10.0).count() as f64 / draws.len() as f64;
    assert!((0.47..0.53).contains(&below), "{below}");
}

#[test]
fn twindex_follows_the_weights() {
    let h = UnitHarness::new("TWindex", Rate::Audio).inputs([
        TestInput::Audio((0..64 * 400).map(|i| if i % 2 == 0 { 1.0 } else { 0.0 }).collect()),
        TestInput::Const(1.0),
        TestInput::Const(1.0),
        TestInput::Const(3.0),
    ]);
    let out = h.run(400);
    let ones = out[0].iter().filter(|&&x| x == 1.0).count() as f64;
    let zeros = out[0].iter().filter(|&&x| x == 0.0).count() as f64;
    assert_eq!(ones + zeros, out[0].len() as f64);
    let share = ones / (ones + zeros);
    assert!((share - 0.75).abs() < 0.03, "share {share}");
}
