use crate::testing::{HarnessRun, TestInput, UnitHarness};
use crate::unit::Rate;
use TestInput::{Audio, Const, Control};

const BS: usize = 64;
const SECOND: usize = 750;

fn run(name: &str, rate: Rate, inputs: Vec<TestInput>, blocks: usize) -> HarnessRun {
    UnitHarness::new(name, rate).inputs(inputs).run_full(blocks)
}

fn ar(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    run(name, Rate::Audio, inputs, blocks).outputs.remove(0)
}

fn range(sig: &[f32]) -> (f32, f32) {
    sig.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

fn mean(sig: &[f32]) -> f64 {
    sig.iter().map(|&x| x as f64).sum::<f64>() / sig.len() as f64
}

fn variance(sig: &[f32]) -> f64 {
    let m = mean(sig);
    sig.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / sig.len() as f64
}

/// Draws `n` values from an init-only unit, each from a fresh seed.
fn draws(name: &str, inputs: &[f32], n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let mut h = UnitHarness::new(name, Rate::Scalar).inputs(inputs.iter().map(|&v| Const(v)));
            h.world.rgen = crate::rgen::RGen::new(i as u32 + 1);
            h.run_full(0).initial[0]
        })
        .collect()
}

/// Power in `band` octaves: sum of squared DFT magnitudes over [lo, hi) Hz
/// of 4096-sample frames (naive DFT on a few bins keeps this dependency-free).
fn band_power(sig: &[f32], lo: f64, hi: f64) -> f64 {
    let n = 4096;
    let sr = 48_000.0;
    let mut total = 0.0;
    for frame in sig.chunks_exact(n).take(8) {
        let k0 = (lo / sr * n as f64).ceil() as usize;
        let k1 = (hi / sr * n as f64).ceil() as usize;
        for k in (k0..k1).step_by(((k1 - k0) / 24).max(1)) {
            let (mut re, mut im) = (0.0f64, 0.0f64);
            for (i, &x) in frame.iter().enumerate() {
                let a = std::f64::consts::TAU * k as f64 * i as f64 / n as f64;
                re += x as f64 * a.cos();
                im -= x as f64 * a.sin();
            }
            total += (re * re + im * im) * ((k1 - k0) as f64 / (k1 - k0).div_ceil(((k1 - k0) / 24).max(1)) as f64);
        }
    }
    total
}

// ----- noise generators -----

#[test]
fn whitenoise_is_uniform_in_minus_one_to_one() {
    let out = ar("WhiteNoise", vec![], SECOND);
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi < 1.0 && lo < -0.999 && hi > 0.999);
    assert!(mean(&out).abs() < 0.01);
    assert!((variance(&out) - 1.0 / 3.0).abs() < 0.01, "{}", variance(&out));
}

#[test]
fn whitenoise_constructor_draws_the_first_value() {
    let r = run("WhiteNoise", Rate::Audio, vec![], 1);
    assert!((-1.0..1.0).contains(&r.initial[0]));
    assert_ne!(r.initial[0], r.outputs[0][0], "each sample is a new draw");
}

#[test]
fn clipnoise_is_plus_or_minus_one_evenly() {
    let out = ar("ClipNoise", vec![], SECOND);
    assert!(out.iter().all(|&x| x == 1.0 || x == -1.0));
    assert!(mean(&out).abs() < 0.02);
}

#[test]
fn pinknoise_falls_about_3_db_per_octave() {
    let out = ar("PinkNoise", vec![], 600);
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi < 1.0);
    assert!(mean(&out).abs() < 0.1);
    // Equal power per octave means power density halves per octave: compare
    // one-octave bands four octaves apart; they hold about equal power.
    let low = band_power(&out, 375.0, 750.0);
    let high = band_power(&out, 6000.0, 12000.0);
    let db = 10.0 * (high / low).log10();
    assert!(db.abs() < 3.0, "octave bands differ by {db} dB");
    // White noise has 12 dB more in the higher band.
    let white = ar("WhiteNoise", vec![], 600);
    let wdb = 10.0 * (band_power(&white, 6000.0, 12000.0) / band_power(&white, 375.0, 750.0)).log10();
    assert!((wdb - 12.0).abs() < 3.0, "{wdb}");
}

#[test]
fn brownnoise_wanders_within_bounds_with_small_steps() {
    let r = run("BrownNoise", Rate::Audio, vec![], SECOND);
    let out = &r.outputs[0];
    assert!((-1.0..1.0).contains(&r.initial[0]));
    assert!(out.iter().all(|x| (-1.0..=1.0).contains(x)));
    assert!(out.windows(2).all(|w| (w[1] - w[0]).abs() <= 0.25));
    assert!((out[0] - r.initial[0]).abs() <= 0.125);
    let (lo, hi) = range(out);
    assert!(hi - lo > 0.5, "it does wander: {lo}..{hi}");
}

#[test]
fn dust_density_sets_the_impulse_rate() {
    let out = ar("Dust", vec![Const(200.0)], SECOND * 4);
    let n = out.iter().filter(|&&x| x != 0.0).count();
    assert!((700..=900).contains(&n), "{n} impulses in 4 s");
    assert!(out.iter().all(|x| (0.0..=1.0).contains(x)));
    let dust2 = ar("Dust2", vec![Const(200.0)], SECOND * 4);
    let nz: Vec<f32> = dust2.iter().copied().filter(|&x| x != 0.0).collect();
    assert!((700..=900).contains(&nz.len()));
    assert!(nz.iter().all(|x| (-1.0..=1.0).contains(x)));
    assert!(nz.iter().any(|&x| x < -0.5) && nz.iter().any(|&x| x > 0.5));
    assert!(ar("Dust", vec![Const(0.0)], 10).iter().all(|&x| x == 0.0));
}

#[test]
fn lfnoise0_holds_values_for_one_period() {
    let out = ar("LFNoise0", vec![Const(100.0)], SECOND);
    assert!(out.iter().all(|x| (-1.0..1.0).contains(x)));
    let changes = out.windows(2).filter(|w| w[0] != w[1]).count();
    assert!((98..=100).contains(&changes), "{changes}");
    // The constructor's sample used up the first of the 480.
    assert!(out[..479].iter().all(|&x| x == out[0]));
    assert_ne!(out[479], out[0]);
}

#[test]
fn lfnoise1_ramps_linearly_between_random_values() {
    let out = ar("LFNoise1", vec![Const(100.0)], 40);
    assert!(out.iter().all(|x| (-1.0..=1.0).contains(x)));
    // Within a segment the steps are constant.
    let d: Vec<f32> = out[1..400].windows(2).map(|w| w[1] - w[0]).collect();
    assert!(d.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-5));
    assert!(out.windows(2).all(|w| (w[1] - w[0]).abs() < 2.0 / 480.0 + 1e-5));
}

#[test]
fn lfnoise2_is_smooth_and_bounded() {
    let out = ar("LFNoise2", vec![Const(50.0)], SECOND);
    let (lo, hi) = range(&out);
    assert!(lo > -1.5 && hi < 1.5, "{lo}..{hi}");
    assert!(hi - lo > 0.5);
    // Second differences are tiny: no corners.
    assert!(out.windows(3).all(|w| (w[2] - 2.0 * w[1] + w[0]).abs() < 1e-3));
}

#[test]
fn lfnoise_control_rate_counts_control_periods() {
    let r = run("LFNoise0", Rate::Control, vec![Const(75.0)], SECOND);
    let changes = r.outputs[0].windows(2).filter(|w| w[0] != w[1]).count();
    assert!((70..=75).contains(&changes), "{changes}");
}

// ----- random values -----

#[test]
fn rand_stays_in_range_and_is_uniform() {
    let v = draws("Rand", &[2.0, 5.0], 2000);
    assert!(v.iter().all(|x| (2.0..5.0).contains(x)));
    assert!((mean(&v) - 3.5).abs() < 0.1, "{}", mean(&v));
    let low_third = v.iter().filter(|&&x| x < 3.0).count();
    assert!((560..=780).contains(&low_third), "{low_third}");
}

#[test]
fn rand_constructor_writes_the_value_and_keeps_it() {
    let r = run("Rand", Rate::Control, vec![Const(0.0), Const(1.0)], 3);
    assert!(r.outputs[0].iter().all(|&x| x == r.initial[0]));
}

#[test]
fn irand_covers_both_ends_inclusive() {
    let v = draws("IRand", &[-2.0, 3.0], 2000);
    for k in -2..=3 {
        let c = v.iter().filter(|&&x| x == k as f32).count();
        assert!((250..=420).contains(&c), "{k}: {c}");
    }
    assert!(v.iter().all(|&x| x.fract() == 0.0 && (-2.0..=3.0).contains(&x)));
}

#[test]
fn exprand_is_log_uniform() {
    let v = draws("ExpRand", &[10.0, 1000.0], 2000);
    assert!(v.iter().all(|x| (10.0..=1000.0).contains(x)));
    let below_100 = v.iter().filter(|&&x| x < 100.0).count();
    assert!((900..=1100).contains(&below_100), "{below_100}");
}

#[test]
fn linrand_skews_toward_the_chosen_end() {
    let low = draws("LinRand", &[0.0, 1.0, 0.0], 2000);
    let high = draws("LinRand", &[0.0, 1.0, 1.0], 2000);
    assert!((mean(&low) - 1.0 / 3.0).abs() < 0.03, "{}", mean(&low));
    assert!((mean(&high) - 2.0 / 3.0).abs() < 0.03, "{}", mean(&high));
    assert!(low.iter().chain(&high).all(|x| (0.0..1.0).contains(x)));
}

#[test]
fn nrand_narrows_around_the_middle() {
    let v = draws("NRand", &[-1.0, 1.0, 4.0], 2000);
    assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
    assert!(mean(&v).abs() < 0.05);
    // The mean of 4 uniforms on [-1, 1) has variance (1/3)/4.
    assert!((variance(&v) - 1.0 / 12.0).abs() < 0.015, "{}", variance(&v));
}

#[test]
fn trand_draws_a_new_value_only_on_rising_triggers() {
    let trig: Vec<f32> = (0..BS * 10).map(|i| if i % 100 == 50 { 1.0 } else { 0.0 }).collect();
    let r = run("TRand", Rate::Audio, vec![Const(-5.0), Const(5.0), Audio(trig)], 10);
    let out = &r.outputs[0];
    assert!(out.iter().all(|x| (-5.0..5.0).contains(x)));
    let changes: Vec<usize> = (1..out.len()).filter(|&i| out[i] != out[i - 1]).collect();
    assert!(changes.iter().all(|&i| i % 100 == 50), "{changes:?}");
    assert!(changes.len() >= 5);
    assert_eq!(out[0], r.initial[0]);
    // Control rate: one trigger per rising block value.
    let r = run("TRand", Rate::Control, vec![Const(0.0), Const(1.0), Control(vec![0.0, 1.0, 1.0, 0.0, 1.0])], 6);
    let o = &r.outputs[0];
    assert_eq!(o[0], r.initial[0]);
    assert_ne!(o[1], o[0]);
    assert_eq!(o[2], o[1]);
    assert_eq!(o[3], o[2]);
    assert_ne!(o[4], o[3]);
}

#[test]
fn every_noise_unit_declares_its_random_draws() {
    // The engine lets noise synths run side by side only when each has its
    // own generator; a unit that draws without declaring it would break that rule.
    let r = crate::registry::Registry::with_all();
    // The chaotic and hash units live here but draw nothing: the engine may reorder them.
    let deterministic = ["Logistic", "Hasher"];
    let family = [
        "WhiteNoise", "ClipNoise", "PinkNoise", "BrownNoise", "Dust", "Dust2", "LFNoise0", "LFNoise1", "LFNoise2",
        "Rand", "IRand", "ExpRand", "LinRand", "NRand", "TRand", "RandSeed", "RandID", "LFDNoise0", "LFDNoise1",
        "LFDNoise3", "LFClipNoise", "LFDClipNoise", "GrayNoise", "Crackle", "Logistic", "Hasher", "CoinGate",
        "TExpRand", "TIRand",
    ];
    for name in family {
        assert!(r.contains(name), "{name}");
        if deterministic.contains(&name) {
            assert!(!r.draws_random(name, 0) && r.is_pure(name, 0), "{name}");
        } else {
            assert!(r.draws_random(name, 0) && !r.is_pure(name, 0), "{name}");
        }
    }
    assert!(!r.draws_random("SinOsc", 0));
}
