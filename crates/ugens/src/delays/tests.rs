//! Delays delay by the right number of samples, combs decay in their decay
//! time, allpasses keep the energy.

use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;

const SR: f32 = 48_000.0;
const BS: usize = 64;

fn impulse_at(at: usize, len: usize) -> Vec<f32> {
    let mut v = vec![0.0; len];
    v[at] = 1.0;
    v
}

fn run(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    UnitHarness::new(name, Rate::Audio).inputs(inputs).run(blocks).remove(0)
}

fn delayed(name: &str, delay_samples: f32, blocks: usize) -> Vec<f32> {
    run(
        name,
        vec![TestInput::Audio(impulse_at(5, blocks * BS)), TestInput::Const(0.1), TestInput::Const(delay_samples / SR)],
        blocks,
    )
}

/// Samples above -80 dB (a delay time in seconds is rarely a whole number
/// of samples in single precision, which leaves a faint neighbour).
fn nonzero(out: &[f32]) -> Vec<(usize, f32)> {
    out.iter().enumerate().filter(|(_, &x)| x.abs() > 1e-4).map(|(i, &x)| (i, x)).collect()
}

#[test]
fn delays_move_an_impulse_by_whole_samples() {
    for name in ["DelayN", "DelayL", "DelayC"] {
        for d in [1.0f32, 10.0, 100.0, 1000.0] {
            let out = delayed(name, d, 20);
            let nz = nonzero(&out);
            assert_eq!(nz.len(), 1, "{name} {d}: {nz:?}");
            assert_eq!(nz[0].0, 5 + d as usize, "{name} {d}");
            assert!((nz[0].1 - 1.0).abs() < 1e-4);
        }
    }
}

#[test]
fn delayl_splits_a_half_sample_between_neighbours() {
    let nz = nonzero(&delayed("DelayL", 10.5, 4));
    assert_eq!(nz.len(), 2);
    assert_eq!((nz[0].0, nz[1].0), (15, 16));
    assert!((nz[0].1 - 0.5).abs() < 1e-4 && (nz[1].1 - 0.5).abs() < 1e-4);
}

#[test]
fn delayn_rounds_a_fractional_delay_down() {
    let nz = nonzero(&delayed("DelayN", 10.7, 4));
    assert_eq!(nz, vec![(15, 1.0)]);
}

#[test]
fn delayc_interpolates_a_smooth_signal_at_fractional_delay() {
    let blocks = 20;
    let f = 500.0;
    let sig: Vec<f32> = (0..blocks * BS).map(|i| (std::f32::consts::TAU * f * i as f32 / SR).sin()).collect();
    let d = 20.25f32;
    let out = run("DelayC", vec![TestInput::Audio(sig), TestInput::Const(0.1), TestInput::Const(d / SR)], blocks);
    for i in 200..blocks * BS {
        let want = (std::f32::consts::TAU * f * (i as f32 - d) / SR).sin();
        assert!((out[i] - want).abs() < 1e-3, "at {i}: {} vs {want}", out[i]);
    }
}

#[test]
fn zero_delay_passes_the_input_through() {
    let sig: Vec<f32> = (0..BS * 2).map(|i| i as f32).collect();
    let out = run("DelayN", vec![TestInput::Audio(sig.clone()), TestInput::Const(0.1), TestInput::Const(0.0)], 2);
    assert_eq!(out, sig);
}

#[test]
fn audio_rate_delay_time_is_read_per_sample() {
    let blocks = 4;
    let times = vec![10.0 / SR; blocks * BS];
    let out = run(
        "DelayL",
        vec![TestInput::Audio(impulse_at(3, blocks * BS)), TestInput::Const(0.1), TestInput::Audio(times)],
        blocks,
    );
    assert_eq!(nonzero(&out), vec![(13, 1.0)]);
}

#[test]
fn delay_longer_than_the_line_is_clamped_to_it() {
    // maxdelaytime 0.001 s = 48 samples: a line of 128 samples. A comb with
    // no feedback is a plain delay that reads before it writes.
    let out = run(
        "CombN",
        vec![TestInput::Audio(impulse_at(0, 10 * BS)), TestInput::Const(0.001), TestInput::Const(1.0), TestInput::Const(0.0)],
        10,
    );
    let nz = nonzero(&out);
    assert_eq!(nz.first().map(|p| p.0), Some(128));
}

fn comb_echoes(name: &str, delay: f32, decay: f32, blocks: usize) -> Vec<f32> {
    run(
        name,
        vec![TestInput::Audio(impulse_at(0, blocks * BS)), TestInput::Const(0.2), TestInput::Const(delay), TestInput::Const(decay)],
        blocks,
    )
}

#[test]
fn comb_echoes_decay_60db_in_decay_time() {
    for name in ["CombN", "CombL", "CombC"] {
        let delay = 0.01; // 480 samples
        let out = comb_echoes(name, delay, 0.5, 600);
        assert_echoes_every_480_samples_fall_60db_in_half_a_second(name, &out);
    }
}

/// What a comb fed one impulse at 0, with a 480-sample delay and 0.5 s decay
/// time, must put out: silence, then echoes every 480 samples, the first at
/// full level and the one 0.5 s later 60 dB down, and nothing in between.
pub(crate) fn assert_echoes_every_480_samples_fall_60db_in_half_a_second(name: &str, out: &[f32]) {
    assert!(out[..480].iter().all(|&x| x == 0.0), "{name}");
    let echo = |k: usize| out[480 * k];
    assert!((echo(1) - 1.0).abs() < 1e-5, "{name} first echo {}", echo(1));
    // 0.5 s at 48 kHz is 50 echoes after the first.
    assert!((echo(51) / echo(1) - 0.001).abs() < 2e-5, "{name} {}", echo(51));
    assert!(out[481..959].iter().all(|&x| x.abs() < 1e-6), "{name}");
}

#[test]
fn negative_decay_time_alternates_echo_sign() {
    let out = comb_echoes("CombN", 0.01, -0.5, 40);
    assert!(out[480] > 0.0 && out[960] < 0.0 && out[1440] > 0.0);
}

#[test]
fn allpass_keeps_the_energy_of_an_impulse() {
    for name in ["AllpassN", "AllpassL", "AllpassC"] {
        let blocks = 3000; // 4 s
        // 750 samples exactly: interpolation between samples would lose
        // treble. The impulse comes once the line (16384 samples) is full:
        // before that, scsynth's cubic allpass drops its direct path.
        let out = run(
            name,
            vec![TestInput::Audio(impulse_at(20_000, blocks * BS)), TestInput::Const(0.2), TestInput::Const(0.015625), TestInput::Const(0.5)],
            blocks,
        );
        let energy: f64 = out.iter().map(|&x| (x as f64) * (x as f64)).sum();
        assert!((energy - 1.0).abs() < 2e-3, "{name} energy {energy}");
    }
}

#[test]
fn allpass_is_flat_for_a_steady_sine() {
    let blocks = 1500;
    let sig: Vec<f32> = (0..blocks * BS).map(|i| (std::f32::consts::TAU * 1234.0 * i as f32 / SR).sin()).collect();
    let out = run(
        "AllpassN",
        vec![TestInput::Audio(sig), TestInput::Const(0.2), TestInput::Const(0.005), TestInput::Const(0.3)],
        blocks,
    );
    let tail = &out[out.len() - 9600..];
    let rms = (tail.iter().map(|&x| x * x).sum::<f32>() / tail.len() as f32).sqrt();
    assert!((rms - std::f32::consts::FRAC_1_SQRT_2).abs() < 0.01, "rms {rms}");
}

#[test]
fn changing_delay_time_glides_across_the_block() {
    // Constant input through a delay whose time jumps: output stays at the input level.
    let blocks = 40;
    let mut times = vec![0.001; 20];
    times.extend(vec![0.002; 20]);
    let out = run("DelayL", vec![TestInput::Audio(vec![1.0; blocks * BS]), TestInput::Const(0.01), TestInput::Control(times)], blocks);
    assert!(out[200..].iter().all(|&x| (x - 1.0).abs() < 1e-6));
}

#[test]
fn delay1_and_delay2_shift_by_one_and_two() {
    let sig: Vec<f32> = (1..=BS as i32 * 2).map(|i| i as f32).collect();
    let d1 = run("Delay1", vec![TestInput::Audio(sig.clone())], 2);
    let d2 = run("Delay2", vec![TestInput::Audio(sig.clone())], 2);
    // The constructor primes Delay1 with the first input sample.
    assert_eq!(d1[0], 1.0);
    assert_eq!(&d1[1..], &sig[..sig.len() - 1]);
    assert_eq!(&d2[2..], &sig[..sig.len() - 2]);
}

#[test]
fn huge_max_delay_fails_softly_with_silence() {
    let run = UnitHarness::new("CombN", Rate::Audio)
        .inputs(vec![TestInput::Audio(vec![1.0; BS]), TestInput::Const(1e9), TestInput::Const(0.1), TestInput::Const(1.0)])
        .run_full(2);
    assert!(run.outputs[0].iter().all(|&x| x == 0.0));
    assert!(run.done_per_block[0]);
}

#[test]
fn deltap_reads_back_what_was_written() {
    let mut h = UnitHarness::new("DelTapWr", Rate::Audio)
        .inputs([TestInput::Const(0.0), TestInput::Audio((0..256).map(|i| i as f32).collect())]);
    h.world.buffers[0] = crate::world::SndBuf::new(1024, 1, 48_000.0);
    let out = h.run(2);
    // The output is the write position as integer bits; the constructor wrote position 0.
    assert_eq!(out[0][0].to_bits(), 1);
    assert_eq!(out[0][70].to_bits(), 71);
}

/// A reproducible noise signal in [-1, 1).
fn noise(len: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
fn steady_blocks_put_out_what_a_sample_by_sample_delay_does() {
    // A delay time given as an audio signal is computed sample by sample;
    // the same constant time as a scalar or control input takes the
    // straight (vectorised) path for steady blocks, while the line fills
    // and once it is full, and must give the same samples bit for bit.
    let blocks = 300; // the 8192-sample line fills in 128 blocks
    let len = blocks * BS;
    let names = ["DelayN", "DelayL", "DelayC", "CombN", "CombL", "CombC", "AllpassN", "AllpassL", "AllpassC"];
    for name in names {
        for (k, delay) in [300.4f32 / SR, 1000.0 / SR, 70.7 / SR, 6000.25 / SR].into_iter().enumerate() {
            let inputs = [
                TestInput::Audio(noise(len, 7 + k as u32)),
                TestInput::Const(0.25),
                TestInput::Control(vec![0.5 + k as f32]),
            ];
            for input in inputs {
                let with = |time: TestInput| {
                    run(name, vec![input.clone(), TestInput::Const(0.1), time, TestInput::Const(0.4)], blocks)
                };
                let reference = with(TestInput::Audio(vec![delay; len]));
                for time in [TestInput::Const(delay), TestInput::Control(vec![delay])] {
                    let out = with(time);
                    let first = out.iter().zip(&reference).position(|(a, b)| a.to_bits() != b.to_bits());
                    assert_eq!(first, None, "{name}, delay {delay}, input {input:?}");
                }
            }
        }
    }
}

#[test]
fn straight_runs_give_the_same_samples_in_both_builds() {
    fn check<const KIND: u8, const INTERP: u8>() {
        for m in [1usize, 7, 8, 31, 64] {
            let read = noise(m + 3, m as u32);
            let xs = noise(m, 99 + m as u32);
            let run = |wide: bool| {
                let (mut out, mut write) = (vec![0.0f32; m], vec![0.0f32; m]);
                super::straight_run::<KIND, INTERP>(&mut out, &mut write, &read, &xs, 0.37, -0.6, wide);
                (out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), write.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
            };
            let wide = cfg!(target_arch = "x86_64") && crate::vector::avx2();
            assert_eq!(run(false), run(wide), "kind {KIND}, interp {INTERP}, {m} samples");
        }
    }
    use super::{ALLPASS, COMB, CUBIC, DELAY, LINEAR, NEAREST};
    check::<DELAY, NEAREST>();
    check::<DELAY, LINEAR>();
    check::<DELAY, CUBIC>();
    check::<COMB, NEAREST>();
    check::<COMB, LINEAR>();
    check::<COMB, CUBIC>();
    check::<ALLPASS, NEAREST>();
    check::<ALLPASS, LINEAR>();
    check::<ALLPASS, CUBIC>();
}
