//! Behaviour a listener would notice of the zero filters, Slope, MidEQ,
//! LinExp, DetectSilence, the BEQ suite, the dynamics units, the up/down and
//! variable lags and the FOS and APF sections.

use super::tests::{gain_at, peak, run, sine, BS, SR};
use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;

fn db(g: f32) -> f32 {
    20.0 * g.log10()
}

#[test]
fn zero_filters_pass_and_block_where_their_zeros_say() {
    let quarter = SR / 4.0;
    // LPZ1/LPZ2 keep DC and kill Nyquist (checked through a near-Nyquist tone).
    for name in ["LPZ1", "LPZ2"] {
        assert!((gain_at(name, 20.0, &[]) - 1.0).abs() < 0.01, "{name} at DC");
        assert!(gain_at(name, 23_900.0, &[]) < 0.02, "{name} near Nyquist");
    }
    for name in ["HPZ1", "HPZ2"] {
        assert!(gain_at(name, 20.0, &[]) < 0.01, "{name} at DC");
        assert!((gain_at(name, 23_900.0, &[]) - 1.0).abs() < 0.01, "{name} near Nyquist");
    }
    assert!((gain_at("BPZ2", quarter, &[]) - 1.0).abs() < 0.01);
    assert!(gain_at("BPZ2", 20.0, &[]) < 0.01);
    assert!(gain_at("BRZ2", quarter, &[]) < 1e-3);
    assert!((gain_at("BRZ2", 20.0, &[]) - 1.0).abs() < 0.01);
}

#[test]
fn zero_filters_hold_a_constant_input_from_the_first_sample() {
    for name in ["LPZ1", "LPZ2", "BRZ2"] {
        let out = UnitHarness::new(name, Rate::Audio).input(TestInput::Const(0.7)).run_full(2);
        assert_eq!(out.initial[0], 0.7, "{name}");
        assert!(out.outputs[0].iter().all(|&x| (x - 0.7).abs() < 1e-7), "{name}");
    }
    for name in ["HPZ1", "HPZ2", "BPZ2", "Slope"] {
        let out = UnitHarness::new(name, Rate::Audio).input(TestInput::Const(0.7)).run(2);
        assert!(out[0].iter().all(|&x| x == 0.0), "{name}");
    }
}

#[test]
fn slope_of_a_ramp_is_its_rise_per_second() {
    let ramp: Vec<f32> = (0..BS * 4).map(|i| i as f32 * 0.001).collect();
    let out = run("Slope", vec![TestInput::Audio(ramp)], 4);
    for &x in &out[1..] {
        assert!((x - 0.001 * SR).abs() < 0.1, "slope {x}");
    }
    // At control rate the rise is per control period.
    let vals: Vec<f32> = (0..10).map(|i| i as f32).collect();
    let out = UnitHarness::new("Slope", Rate::Control).input(TestInput::Control(vals)).run(10).remove(0);
    assert!((out[5] - SR / BS as f32).abs() < 1e-3, "slope {}", out[5]);
}

#[test]
fn mideq_boosts_and_cuts_its_band_by_db() {
    let boost = gain_at("MidEQ", 1000.0, &[1000.0, 0.3, 12.0]);
    assert!((db(boost) - 12.0).abs() < 0.3, "boost {} dB", db(boost));
    let cut = gain_at("MidEQ", 1000.0, &[1000.0, 0.3, -12.0]);
    assert!((db(cut) + 12.0).abs() < 0.3, "cut {} dB", db(cut));
    let far = gain_at("MidEQ", 50.0, &[4000.0, 0.3, 12.0]);
    assert!(db(far).abs() < 0.5, "far {} dB", db(far));
}

#[test]
fn linexp_maps_endpoints_and_midpoint_geometrically() {
    let sig = vec![-1.0, 1.0, 0.0, 0.5];
    let mut ins = vec![TestInput::Audio(sig)];
    ins.extend([-1.0, 1.0, 20.0, 2000.0].map(TestInput::Const));
    let out = run("LinExp", ins, 1);
    assert!((out[0] - 20.0).abs() < 1e-3, "{}", out[0]);
    assert!((out[1] - 2000.0).abs() < 0.1, "{}", out[1]);
    assert!((out[2] - 200.0).abs() < 0.01, "{}", out[2]);
    assert!((out[3] - 2000.0f32.powf(0.75) * 20.0f32.powf(0.25)).abs() < 0.05, "{}", out[3]);
}

fn detect_silence(sig: Vec<f32>, time: f32, blocks: usize) -> crate::testing::HarnessRun {
    UnitHarness::new("DetectSilence", Rate::Audio)
        .inputs([TestInput::Audio(sig), TestInput::Const(0.01), TestInput::Const(time), TestInput::Const(2.0)])
        .run_full(blocks)
}

#[test]
fn detect_silence_fires_after_time_below_amp_and_not_before() {
    // 10 blocks of sound, then near silence; 1/64 s is 750 samples.
    let mut sig = vec![0.5; 10 * BS];
    sig.extend(vec![0.001; 30 * BS]);
    let run = detect_silence(sig, 1.0 / 64.0, 30);
    let out = &run.outputs[0];
    let fire = 10 * BS + 750 - 1;
    assert!(out[..fire].iter().all(|&x| x == 0.0));
    assert!(out[fire..].iter().all(|&x| x == 1.0));
    assert_eq!(run.done_actions.first(), Some(&(fire / BS, 2)));
}

#[test]
fn detect_silence_restarts_its_count_when_the_signal_returns() {
    let mut sig = vec![0.5; BS];
    sig.extend(vec![0.0; 300]);
    sig.push(0.5);
    sig.extend(vec![0.0; 20 * BS]);
    let run = detect_silence(sig, 1.0 / 64.0, 20);
    let out = &run.outputs[0];
    let first = out.iter().position(|&x| x == 1.0).unwrap();
    assert_eq!(first, BS + 300 + 750);
}

#[test]
fn detect_silence_ignores_a_signal_silent_from_the_start() {
    let run = detect_silence(vec![0.0; 40 * BS], 0.01, 40);
    assert!(run.outputs[0].iter().all(|&x| x == 0.0));
    assert!(run.done_actions.is_empty());
}

#[test]
fn blowpass_and_bhipass_are_3db_down_at_their_cutoff_with_butterworth_q() {
    let rq = std::f32::consts::SQRT_2;
    for name in ["BLowPass", "BHiPass"] {
        let g = db(gain_at(name, 1000.0, &[1000.0, rq]));
        assert!((g + 3.01).abs() < 0.1, "{name} at cutoff {g} dB");
    }
    assert!(gain_at("BLowPass", 20.0, &[1000.0, rq]) > 0.99);
    assert!(gain_at("BLowPass", 10_000.0, &[1000.0, rq]) < 0.02);
    assert!(gain_at("BHiPass", 20.0, &[1000.0, rq]) < 0.001);
    assert!(gain_at("BHiPass", 10_000.0, &[1000.0, rq]) > 0.99);
}

#[test]
fn bbandpass_peaks_at_its_centre_and_bbandstop_notches_it() {
    let centre = gain_at("BBandPass", 2000.0, &[2000.0, 1.0]);
    assert!((centre - 1.0).abs() < 0.01, "centre {centre}");
    // One octave wide: the band edges, half an octave away, are 3 dB down.
    let edge = db(gain_at("BBandPass", 2000.0 * 2f32.sqrt(), &[2000.0, 1.0]));
    assert!((edge + 3.0).abs() < 0.3, "edge {edge} dB");
    assert!(gain_at("BBandStop", 2000.0, &[2000.0, 1.0]) < 0.01);
    assert!(gain_at("BBandStop", 50.0, &[2000.0, 1.0]) > 0.99);
}

#[test]
fn bpeakeq_and_shelves_apply_their_gain_where_they_should() {
    let peak_db = db(gain_at("BPeakEQ", 1000.0, &[1000.0, 0.5, 9.0]));
    assert!((peak_db - 9.0).abs() < 0.1, "peak {peak_db} dB");
    assert!(db(gain_at("BPeakEQ", 10_000.0, &[1000.0, 0.5, 9.0])).abs() < 0.5);
    let low = db(gain_at("BLowShelf", 30.0, &[1000.0, 1.0, -10.0]));
    assert!((low + 10.0).abs() < 0.2, "low shelf {low} dB");
    assert!(db(gain_at("BLowShelf", 15_000.0, &[1000.0, 1.0, -10.0])).abs() < 0.2);
    let high = db(gain_at("BHiShelf", 15_000.0, &[1000.0, 1.0, 6.0]));
    assert!((high - 6.0).abs() < 0.2, "high shelf {high} dB");
    assert!(db(gain_at("BHiShelf", 30.0, &[1000.0, 1.0, 6.0])).abs() < 0.2);
}

#[test]
fn ballpass_keeps_every_frequency_at_unity_gain() {
    for f in [50.0, 1000.0, 5000.0, 15_000.0] {
        let g = gain_at("BAllPass", f, &[1000.0, 0.5]);
        assert!((g - 1.0).abs() < 0.01, "gain {g} at {f} Hz");
    }
}

#[test]
fn beq_control_rate_changes_take_effect_within_a_block() {
    // Cutoff jumps from 200 Hz to 10 kHz: a 5 kHz tone goes from blocked to passed.
    let blocks = 100;
    let freq: Vec<f32> = (0..blocks).map(|b| if b < 50 { 200.0 } else { 10_000.0 }).collect();
    let out = run(
        "BLowPass",
        vec![TestInput::Audio(sine(5000.0, blocks * BS)), TestInput::Control(freq), TestInput::Const(1.0)],
        blocks,
    );
    assert!(peak(&out[40 * BS..50 * BS]) < 0.01);
    assert!(peak(&out[60 * BS..]) > 0.9);
}

#[test]
fn amplitude_follows_an_envelope_with_its_attack_and_release_times() {
    // 20 blocks of silence, 100 of full level, then silence; attack 0.01 s,
    // release 0.05 s, each for a 20 dB change.
    let mut sig = vec![0.0; 20 * BS];
    sig.extend(vec![1.0; 100 * BS]);
    sig.extend(vec![0.0; 100 * BS]);
    let ins = vec![TestInput::Audio(sig), TestInput::Const(0.01), TestInput::Const(0.05)];
    let out = run("Amplitude", ins, 220);
    let on = 20 * BS;
    let attack = (0.01 * SR) as usize;
    assert!((out[on + attack - 1] - 0.9).abs() < 0.01, "after the attack {}", out[on + attack - 1]);
    assert!(out[on + attack / 2] < 0.8);
    let off = 120 * BS;
    let release = (0.05 * SR) as usize;
    assert!((out[off + release - 1] - 0.1).abs() < 0.01, "after the release {}", out[off + release - 1]);
    assert!(out[off + release / 2] > 0.2);
}

#[test]
fn amplitude_at_control_rate_follows_an_audio_input() {
    let sig = vec![0.5; 40 * BS];
    let out = UnitHarness::new("Amplitude", Rate::Control)
        .inputs([TestInput::Audio(sig), TestInput::Const(0.0), TestInput::Const(0.0)])
        .run(4)
        .remove(0);
    assert!(out.iter().all(|&x| x == 0.5));
}

#[test]
fn compander_above_threshold_applies_its_slope() {
    // A steady level of 1 over a threshold of 0.5 with slope 1/2 comes out
    // at 0.5 * (1 / 0.5)^(1/2).
    let blocks = 100;
    // A steady `level` controlling itself: threshold 0.5, slopes 1 below and
    // 1/2 above, 1 ms clamp, 100 ms relax.
    let compander = |level: f32| {
        let sig = vec![level; blocks * BS];
        let params = [0.5, 1.0, 0.5, 0.001, 0.1].map(TestInput::Const);
        let ins = [TestInput::Audio(sig.clone()), TestInput::Audio(sig)].into_iter().chain(params).collect();
        let out = run("Compander", ins, blocks);
        out[out.len() - 1]
    };
    let want = 0.5 * 2f32.sqrt();
    assert!((compander(1.0) - want).abs() < 1e-4, "{}", compander(1.0));
    // Below the threshold with slope 1 the signal passes unchanged.
    assert!((compander(0.2) - 0.2).abs() < 1e-6);
}

fn swell(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let t = i as f64 / SR as f64;
            ((std::f64::consts::TAU * 440.0 * t).sin() * (1.0 + 0.9 * (std::f64::consts::TAU * 3.0 * t).sin()) * 2.0) as f32
        })
        .collect()
}

#[test]
fn limiter_output_never_exceeds_its_level_after_the_look_ahead() {
    let blocks = 400;
    let sig = swell(blocks * BS);
    let dur = 0.01;
    let ins = vec![TestInput::Audio(sig.clone()), TestInput::Const(0.5), TestInput::Const(dur)];
    let out = run("Limiter", ins, blocks);
    let delay = 2 * (dur * SR).ceil() as usize;
    // Silent during the look-ahead, then the input delayed and scaled down.
    assert!(out[..delay - 1].iter().all(|&x| x == 0.0));
    assert!(peak(&out) <= 0.5 + 1e-4, "peak {}", peak(&out));
    assert!(peak(&out) > 0.45);
    // The output is the input `delay` samples earlier, scaled by a gain
    // between 0 and 1 (up to the rounding of its ramps).
    for t in 0..blocks * BS - delay {
        if sig[t].abs() > 0.1 {
            let ratio = out[t + delay] / sig[t];
            assert!(ratio > 0.0 && ratio <= 1.0 + 1e-4, "gain {ratio} at {t}");
        }
    }
}

#[test]
fn normalizer_brings_peaks_to_its_level() {
    let blocks = 400;
    let sig: Vec<f32> = swell(blocks * BS).iter().map(|x| x * 0.05).collect();
    let ins = vec![TestInput::Audio(sig), TestInput::Const(0.8), TestInput::Const(0.01)];
    let out = run("Normalizer", ins, blocks);
    let p = peak(&out);
    assert!(p <= 0.8 + 1e-4 && p > 0.75, "peak {p}");
}

#[test]
fn limiter_with_an_empty_window_is_silent_rather_than_stuck() {
    let ins = vec![TestInput::Audio(swell(4 * BS)), TestInput::Const(0.5), TestInput::Const(0.0)];
    let run = UnitHarness::new("Limiter", Rate::Audio).inputs(ins).run_full(4);
    assert!(run.outputs[0].iter().all(|&x| x == 0.0));
}

#[test]
fn moogff_passes_lows_cuts_highs_and_resonates_with_gain() {
    assert!((gain_at("MoogFF", 20.0, &[1000.0, 0.0]) - 1.0).abs() < 0.01);
    // Four poles: two octaves above the cutoff is about 48 dB down.
    assert!(db(gain_at("MoogFF", 4000.0, &[1000.0, 0.0])) < -40.0);
    // Feedback k lowers the passband to 1 / (1 + k) and lifts the cutoff.
    let dc = gain_at("MoogFF", 20.0, &[1000.0, 3.5]);
    assert!((dc - 1.0 / 4.5).abs() < 0.01, "passband {dc}");
    assert!(gain_at("MoogFF", 1000.0, &[1000.0, 3.5]) > 2.0 * dc);
}

#[test]
fn lag_ud_rises_faster_than_it_falls() {
    let step: Vec<f32> = (0..64 * 40).map(|i| if i < 64 * 20 { 1.0 } else { 0.0 }).collect();
    for name in ["Lag2UD", "Lag3UD"] {
        let h = UnitHarness::new(name, Rate::Audio).inputs([
            TestInput::Audio(step.clone()),
            TestInput::Const(0.005),
            TestInput::Const(0.05),
        ]);
        let out = &h.run(40)[0];
        let rise = out.iter().position(|&x| x > 0.5).unwrap();
        let fall = out[64 * 20..].iter().position(|&x| x < 0.5).unwrap();
        assert!(fall > 5 * rise, "{name}: rise {rise}, fall {fall}");
        assert!(out[64 * 20 - 1] > 0.99);
    }
}

#[test]
fn var_lag_reaches_the_target_linearly_in_time() {
    let h = UnitHarness::new("VarLag", Rate::Audio).inputs([
        TestInput::Const(1.0),
        TestInput::Const(0.01),
        TestInput::Const(0.0),
    ]);
    let out = &h.run(10)[0];
    // 0.01 s at 48 kHz: about 480 samples from 0 to 1 (the float time
    // truncates to 479).
    assert!((out[239] - 0.5).abs() < 0.005, "{}", out[239]);
    assert!((out[479] - 1.0).abs() < 1e-4);
    assert_eq!(out[600], 1.0);
}

#[test]
fn fos_as_one_pole_lowpass_has_unit_dc_gain() {
    let h = UnitHarness::new("FOS", Rate::Audio).inputs([
        TestInput::Const(1.0),
        TestInput::Const(0.1),
        TestInput::Const(0.0),
        TestInput::Const(0.9),
    ]);
    let out = &h.run(10)[0];
    assert!((out[639] - 1.0).abs() < 1e-4);
}

#[test]
fn apf_keeps_a_sine_level() {
    let sig: Vec<f32> = (0..64 * 50).map(|i| (i as f32 * 0.05).sin()).collect();
    let h = UnitHarness::new("APF", Rate::Audio).inputs([
        TestInput::Audio(sig),
        TestInput::Const(1000.0),
        TestInput::Const(0.5),
    ]);
    let out = &h.run(50)[0];
    let peak = out[64 * 30..].iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(peak > 0.3, "{peak}");
}

#[test]
fn ampcomp_halves_for_a_doubling_when_exponent_is_one() {
    let out = UnitHarness::new("AmpComp", Rate::Control)
        .inputs([TestInput::Control(vec![200.0, 400.0, 800.0]), TestInput::Const(100.0), TestInput::Const(1.0)])
        .run(3);
    assert_eq!(out[0], vec![0.5, 0.25, 0.125]);
}

#[test]
fn ampcompa_gives_root_amp_at_root_and_boosts_lows() {
    let out = UnitHarness::new("AmpCompA", Rate::Control)
        .inputs([TestInput::Control(vec![1000.0, 50.0, 3000.0]), TestInput::Const(1000.0), TestInput::Const(0.32), TestInput::Const(1.0)])
        .run(3);
    assert!((out[0][0] - 1.0).abs() < 1e-6);
    assert!(out[0][1] > 2.0);
    assert!(out[0][2] < 1.0 && out[0][2] > 0.3);
}

#[test]
fn flip_negates_every_other_sample() {
    let sig: Vec<f32> = (0..128).map(|i| 1.0 + i as f32).collect();
    let out = UnitHarness::new("Flip", Rate::Audio).input(TestInput::Audio(sig.clone())).run(2);
    for i in 0..128 {
        let want = if i % 2 == 0 { -sig[i] } else { sig[i] };
        assert_eq!(out[0][i], want);
    }
}

#[test]
fn mantissa_mask_keeps_only_the_high_bits() {
    let out = UnitHarness::new("MantissaMask", Rate::Control)
        .inputs([TestInput::Control(vec![1.0 + 1.0 / 3.0]), TestInput::Const(2.0)])
        .run(1);
    // 1.333 is 1.0101..b: two mantissa bits keep 1.01b.
    assert_eq!(out[0][0], 1.25);
}
