//! Behaviour a listener would notice: gains at DC and Nyquist, resonance,
//! decay and lag times, smoothing and spike removal.

use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;

pub(super) const SR: f32 = 48_000.0;
pub(super) const BS: usize = 64;

pub(super) fn run(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    UnitHarness::new(name, Rate::Audio).inputs(inputs).run(blocks).remove(0)
}

fn run_kr(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    UnitHarness::new(name, Rate::Control).inputs(inputs).run(blocks).remove(0)
}

/// A sine computed in double precision, so that a notch sees a clean tone.
pub(super) fn sine(freq: f32, len: usize) -> Vec<f32> {
    (0..len).map(|i| (std::f64::consts::TAU * freq as f64 * i as f64 / SR as f64).sin() as f32).collect()
}

fn nyquist(len: usize) -> Vec<f32> {
    (0..len).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect()
}

fn impulse(len: usize) -> Vec<f32> {
    let mut v = vec![0.0; len];
    v[0] = 1.0;
    v
}

pub(super) fn peak(s: &[f32]) -> f32 {
    s.iter().fold(0.0f32, |m, &x| m.max(x.abs()))
}

/// Amplitude of a steady sine in the second half of the output.
pub(super) fn gain_at(name: &str, freq: f32, params: &[f32]) -> f32 {
    let blocks = 200;
    let mut ins = vec![TestInput::Audio(sine(freq, blocks * BS))];
    ins.extend(params.iter().map(|&p| TestInput::Const(p)));
    let out = run(name, ins, blocks);
    peak(&out[out.len() / 2..])
}

fn dc_gain(name: &str, params: &[f32]) -> f32 {
    let blocks = 200;
    let mut ins = vec![TestInput::Audio(vec![1.0; blocks * BS])];
    ins.extend(params.iter().map(|&p| TestInput::Const(p)));
    *run(name, ins, blocks).last().unwrap()
}

fn nyquist_gain(name: &str, params: &[f32]) -> f32 {
    let blocks = 200;
    let mut ins = vec![TestInput::Audio(nyquist(blocks * BS))];
    ins.extend(params.iter().map(|&p| TestInput::Const(p)));
    let out = run(name, ins, blocks);
    peak(&out[out.len() / 2..])
}

#[test]
fn lpf_passes_dc_and_blocks_nyquist() {
    assert!((dc_gain("LPF", &[1000.0]) - 1.0).abs() < 1e-4);
    assert!(nyquist_gain("LPF", &[1000.0]) < 1e-3);
}

#[test]
fn lpf_is_3db_down_at_its_cutoff() {
    let g = gain_at("LPF", 1000.0, &[1000.0]);
    assert!((g - std::f32::consts::FRAC_1_SQRT_2).abs() < 0.02, "gain {g}");
    assert!(gain_at("LPF", 8000.0, &[1000.0]) < 0.02);
}

#[test]
fn hpf_blocks_dc_and_passes_nyquist() {
    assert!(dc_gain("HPF", &[1000.0]).abs() < 1e-4);
    assert!((nyquist_gain("HPF", &[1000.0]) - 1.0).abs() < 1e-3);
    let g = gain_at("HPF", 1000.0, &[1000.0]);
    assert!((g - std::f32::consts::FRAC_1_SQRT_2).abs() < 0.02, "gain {g}");
}

#[test]
fn rlpf_resonance_grows_as_rq_shrinks() {
    assert!((dc_gain("RLPF", &[1000.0, 0.2]) - 1.0).abs() < 1e-3);
    assert!(nyquist_gain("RLPF", &[1000.0, 0.2]) < 1e-3);
    let sharp = gain_at("RLPF", 1000.0, &[1000.0, 0.1]);
    let broad = gain_at("RLPF", 1000.0, &[1000.0, 1.0]);
    assert!(sharp > 5.0, "sharp {sharp}");
    assert!(broad < 1.5, "broad {broad}");
}

#[test]
fn rhpf_blocks_dc_and_resonates() {
    assert!(dc_gain("RHPF", &[1000.0, 0.2]).abs() < 1e-3);
    assert!((nyquist_gain("RHPF", &[1000.0, 0.2]) - 1.0).abs() < 1e-2);
    assert!(gain_at("RHPF", 1000.0, &[1000.0, 0.1]) > 5.0);
}

#[test]
fn bpf_passes_its_centre_and_rejects_far_frequencies() {
    let centre = gain_at("BPF", 2000.0, &[2000.0, 0.5]);
    assert!((centre - 1.0).abs() < 0.02, "centre {centre}");
    assert!(gain_at("BPF", 100.0, &[2000.0, 0.5]) < 0.1);
    assert!(dc_gain("BPF", &[2000.0, 0.5]).abs() < 1e-4);
}

#[test]
fn brf_notches_its_centre_and_passes_dc() {
    assert!(gain_at("BRF", 2000.0, &[2000.0, 0.5]) < 0.02);
    assert!((dc_gain("BRF", &[2000.0, 0.5]) - 1.0).abs() < 1e-4);
}

#[test]
fn resonz_has_unity_gain_at_its_centre() {
    let g = gain_at("Resonz", 1000.0, &[1000.0, 0.1]);
    assert!((g - 1.0).abs() < 0.05, "gain {g}");
    assert!(gain_at("Resonz", 4000.0, &[1000.0, 0.1]) < 0.1);
}

/// Time in seconds after which |out| stays below `level` times its peak.
fn decay_time(out: &[f32], level: f32) -> f32 {
    let p = peak(out);
    let last = out.iter().rposition(|&x| x.abs() > p * level).unwrap_or(0);
    last as f32 / SR
}

#[test]
fn ringz_rings_at_its_frequency_and_decays_60db_in_decay_time() {
    let blocks = 1200; // 1.6 s
    let out = run("Ringz", vec![TestInput::Audio(impulse(blocks * BS)), TestInput::Const(440.0), TestInput::Const(1.0)], blocks);
    let t = decay_time(&out, 0.001);
    assert!((t - 1.0).abs() < 0.02, "decay {t}");
    let crossings = out[..48_000].windows(2).filter(|w| w[0] <= 0.0 && w[1] > 0.0).count();
    assert!((crossings as i32 - 440).abs() <= 1, "crossings {crossings}");
}

#[test]
fn formlet_rings_after_a_soft_attack() {
    let blocks = 800;
    let out = run(
        "Formlet",
        vec![TestInput::Audio(impulse(blocks * BS)), TestInput::Const(440.0), TestInput::Const(0.01), TestInput::Const(0.5)],
        blocks,
    );
    // Peaks after the attack, is -60 dB by the decay time.
    let ipeak = out.iter().enumerate().fold((0, 0.0f32), |m, (i, &x)| if x.abs() > m.1 { (i, x.abs()) } else { m }).0;
    assert!(ipeak > 48 && ipeak < 2400, "peak at {ipeak}");
    let t = decay_time(&out, 0.001);
    assert!((t - 0.5).abs() < 0.03, "decay {t}");
}

#[test]
fn decay_falls_60db_in_decay_time() {
    let blocks = 400;
    let out = run("Decay", vec![TestInput::Audio(impulse(blocks * BS)), TestInput::Const(0.25)], blocks);
    let at = (0.25 * SR) as usize;
    assert!((out[at] / out[0] - 0.001).abs() < 1e-4, "level {}", out[at] / out[0]);
    assert!(out.windows(2).all(|w| w[1] <= w[0]));
}

#[test]
fn decay2_rises_then_falls() {
    let blocks = 400;
    let out = run("Decay2", vec![TestInput::Audio(impulse(blocks * BS)), TestInput::Const(0.01), TestInput::Const(0.2)], blocks);
    let ipeak = out.iter().enumerate().fold((0, 0.0f32), |m, (i, &x)| if x > m.1 { (i, x) } else { m }).0;
    assert!(ipeak > 100 && ipeak < 2000, "peak at {ipeak}");
    assert!(out[(0.4 * SR) as usize] < 0.01);
}

#[test]
fn lag_is_60db_settled_after_lag_time() {
    let blocks = 200;
    let mut step = vec![0.0; 64];
    step.extend(vec![1.0; blocks * BS]);
    let out = run("Lag", vec![TestInput::Audio(step), TestInput::Const(0.1)], blocks);
    let at = 64 + (0.1 * SR) as usize;
    assert!((1.0 - out[at] - 0.001).abs() < 2e-4, "remaining {}", 1.0 - out[at]);
    // Halfway through the lag time, 1 - 10^-1.5 of the step is done.
    let mid = 64 + (0.05 * SR) as usize;
    assert!((1.0 - out[mid] - 0.0316).abs() < 1e-3, "remaining {}", 1.0 - out[mid]);
}

#[test]
fn lag_at_control_rate_follows_steps() {
    let mut vals = vec![0.0; 2];
    vals.extend(vec![1.0; 1000]);
    let out = run_kr("Lag", vec![TestInput::Control(vals), TestInput::Const(0.5)], 1000);
    let kr = SR / BS as f32;
    let at = 2 + (0.5 * kr) as usize;
    assert!(out[at] > 0.99 && out[at] < 1.0, "value {}", out[at]);
}

#[test]
fn lag2_and_lag3_are_smoother_than_lag() {
    let blocks = 100;
    let mut step = vec![0.0; 64];
    step.extend(vec![1.0; blocks * BS]);
    let l1 = run("Lag", vec![TestInput::Audio(step.clone()), TestInput::Const(0.05)], blocks);
    let l2 = run("Lag2", vec![TestInput::Audio(step.clone()), TestInput::Const(0.05)], blocks);
    let l3 = run("Lag3", vec![TestInput::Audio(step), TestInput::Const(0.05)], blocks);
    let i = 64 + 100;
    assert!(l1[i] > l2[i] && l2[i] > l3[i]);
    assert!(l3.last().unwrap() > &0.99);
}

#[test]
fn lagud_rises_and_falls_at_different_speeds() {
    let blocks = 300;
    let mut sig = vec![1.0; 100 * BS];
    sig.extend(vec![0.0; 200 * BS]);
    let mut pre = vec![0.0; BS];
    pre.extend(sig);
    let out = run("LagUD", vec![TestInput::Audio(pre), TestInput::Const(0.01), TestInput::Const(0.2)], blocks);
    let rise = out[BS + (0.01 * SR) as usize];
    assert!(rise > 0.99, "rise {rise}");
    let fall_start = 101 * BS;
    let fall = out[fall_start + (0.1 * SR) as usize];
    assert!(fall > 0.02 && fall < 0.05, "fall {fall}");
}

#[test]
fn ramp_moves_linearly_between_samples() {
    let blocks = 40;
    let sig: Vec<f32> = (0..blocks * BS).map(|i| if i < 1000 { 0.0 } else { 1.0 }).collect();
    let out = run("Ramp", vec![TestInput::Audio(sig), TestInput::Const(0.01)], blocks);
    // Straight segments between 0 and 1, never overshooting.
    assert!(out.iter().all(|&x| (-1e-6..=1.0 + 1e-6).contains(&x)));
    assert!((out.last().unwrap() - 1.0).abs() < 1e-4);
    let d: Vec<f32> = out.windows(2).map(|w| w[1] - w[0]).filter(|d| d.abs() > 1e-7).collect();
    assert!(d.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-5), "slope changes inside a segment");
}

#[test]
fn slew_limits_the_rate_of_change() {
    let blocks = 20;
    let mut sig = vec![0.0; BS];
    sig.extend(vec![1.0; blocks * BS]);
    let out = run("Slew", vec![TestInput::Audio(sig), TestInput::Const(4800.0), TestInput::Const(2400.0)], blocks);
    // 4800 per second = 0.1 per sample up: reaches 1 ten samples after the step.
    assert!((out[BS + 4] - 0.5).abs() < 1e-4, "{}", out[BS + 4]);
    assert!((out[BS + 20] - 1.0).abs() < 1e-6);
}

#[test]
fn onepole_has_unity_dc_gain_for_either_sign() {
    assert!((dc_gain("OnePole", &[0.9]) - 1.0).abs() < 1e-4);
    assert!((nyquist_gain("OnePole", &[-0.9]) - 1.0).abs() < 1e-3);
    assert!(nyquist_gain("OnePole", &[0.9]) < 0.06);
}

#[test]
fn onezero_averages_neighbours() {
    assert!(nyquist_gain("OneZero", &[0.5]) < 1e-6);
    assert!((dc_gain("OneZero", &[0.5]) - 1.0).abs() < 1e-6);
}

#[test]
fn integrator_sums_its_input() {
    let out = run("Integrator", vec![TestInput::Audio(vec![0.5; 10 * BS]), TestInput::Const(1.0)], 2);
    assert!((out[9] - 5.0).abs() < 1e-5);
    let leaky = run("Integrator", vec![TestInput::Audio(vec![1.0; 100 * BS]), TestInput::Const(0.5)], 100);
    assert!((leaky.last().unwrap() - 2.0).abs() < 1e-5);
}

#[test]
fn leakdc_removes_dc_and_keeps_audio() {
    let blocks = 2000;
    let sig: Vec<f32> = sine(1000.0, blocks * BS).iter().map(|x| x + 0.5).collect();
    let out = run("LeakDC", vec![TestInput::Audio(sig), TestInput::Const(0.995)], blocks);
    let tail = &out[out.len() - 4800..];
    let mean: f32 = tail.iter().sum::<f32>() / tail.len() as f32;
    assert!(mean.abs() < 1e-3, "mean {mean}");
    assert!((peak(tail) - 1.0).abs() < 0.02);
}

#[test]
fn twopole_resonates_and_twozero_notches() {
    assert!(gain_at("TwoPole", 1000.0, &[1000.0, 0.99]) > 10.0);
    assert!(gain_at("TwoZero", 1000.0, &[1000.0, 1.0]) < 1e-3);
}

#[test]
fn sos_with_identity_coefficients_passes_the_input() {
    let sig = sine(300.0, 4 * BS);
    let out = run(
        "SOS",
        vec![TestInput::Audio(sig.clone()), TestInput::Const(1.0), TestInput::Const(0.0), TestInput::Const(0.0), TestInput::Const(0.0), TestInput::Const(0.0)],
        4,
    );
    assert!(out.iter().zip(&sig).all(|(a, b)| (a - b).abs() < 1e-6));
    // a1 = 1 alone is a one-sample delay.
    let mut imp = vec![0.0; BS];
    imp[5] = 1.0;
    let d = run(
        "SOS",
        vec![TestInput::Audio(imp), TestInput::Const(0.0), TestInput::Const(1.0), TestInput::Const(0.0), TestInput::Const(0.0), TestInput::Const(0.0)],
        1,
    );
    assert_eq!(&d[4..8], &[0.0, 0.0, 1.0, 0.0]);
}

#[test]
fn median_removes_an_impulse_spike() {
    let mut sig = vec![0.25; 4 * BS];
    sig[100] = 10.0;
    let out = run("Median", vec![TestInput::Const(3.0), TestInput::Audio(sig)], 4);
    assert!(out.iter().all(|&x| x == 0.25));
}

#[test]
fn control_rate_filters_run_one_sample_per_block() {
    let out = run_kr("LPF", vec![TestInput::Control(vec![1.0]), TestInput::Const(10.0)], 2000);
    assert!((out.last().unwrap() - 1.0).abs() < 1e-3);
    let out = run_kr("Ringz", vec![TestInput::Control(vec![1.0, 0.0]), TestInput::Const(10.0), TestInput::Const(1.0)], 400);
    assert!(out.iter().any(|&x| x < 0.0));
}

#[test]
fn changing_cutoff_settles_to_the_new_response() {
    // A control-rate cutoff that moves from passing to blocking a tone.
    let blocks = 200;
    let mut freqs = vec![8000.0; 100];
    freqs.extend(vec![200.0; 100]);
    let out = run("LPF", vec![TestInput::Audio(sine(4000.0, blocks * BS)), TestInput::Control(freqs)], blocks);
    assert!(peak(&out[50 * BS..100 * BS]) > 0.9);
    assert!(peak(&out[150 * BS..]) < 0.01);
}

