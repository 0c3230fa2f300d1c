//! The buffer-backed delays delay, echo and pass energy as their own-line
//! counterparts do, within the buffer they are given.

use crate::testing::{HarnessRun, TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;

const SR: f32 = 48_000.0;
const BS: usize = 64;

fn impulse_at(at: usize, len: usize) -> Vec<f32> {
    let mut v = vec![0.0; len];
    v[at] = 1.0;
    v
}

/// Runs `name` at audio rate on buffer 0 of `frames` x `channels`.
fn run_on(name: &str, frames: u32, channels: u32, inputs: Vec<TestInput>, blocks: usize) -> HarnessRun {
    let mut h = UnitHarness::new(name, Rate::Audio).inputs(inputs);
    h.world.buffers[0] = SndBuf::new(frames, channels, SR as f64);
    h.run_full(blocks)
}

fn run(name: &str, frames: u32, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    run_on(name, frames, 1, inputs, blocks).outputs.remove(0)
}

/// Samples above -80 dB, with their positions.
fn nonzero(out: &[f32]) -> Vec<(usize, f32)> {
    out.iter().enumerate().filter(|(_, &x)| x.abs() > 1e-4).map(|(i, &x)| (i, x)).collect()
}

#[test]
fn buf_delays_move_an_impulse_by_the_delay_time() {
    for name in ["BufDelayN", "BufDelayL", "BufDelayC"] {
        for d in [2.0f32, 10.0, 100.0, 1000.0] {
            let blocks = 20;
            let inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(5, blocks * BS)), TestInput::Const(d / SR)];
            let nz = nonzero(&run(name, 2048, inputs, blocks));
            assert_eq!(nz.len(), 1, "{name} {d}: {nz:?}");
            assert_eq!(nz[0].0, 5 + d as usize, "{name} {d}");
            assert!((nz[0].1 - 1.0).abs() < 1e-4, "{name} {d}: {}", nz[0].1);
        }
    }
}

#[test]
fn audio_rate_delay_time_is_read_per_sample() {
    let blocks = 4;
    let inputs = vec![
        TestInput::Const(0.0),
        TestInput::Audio(impulse_at(3, blocks * BS)),
        TestInput::Audio(vec![10.0 / SR; blocks * BS]),
    ];
    for name in ["BufDelayN", "BufDelayL", "BufDelayC"] {
        assert_eq!(nonzero(&run(name, 1024, inputs.clone(), blocks)), vec![(13, 1.0)], "{name}");
    }
}

#[test]
fn control_rate_delay_counts_control_periods() {
    // At control rate a 48 kHz server with 64-sample blocks runs at 750 Hz.
    let mut h = UnitHarness::new("BufDelayN", Rate::Control).inputs([
        TestInput::Const(0.0),
        TestInput::Control(impulse_at(2, 40)),
        TestInput::Const(10.0 / 750.0),
    ]);
    h.world.buffers[0] = SndBuf::new(64, 1, SR as f64);
    let out = h.run(40).remove(0);
    assert_eq!(nonzero(&out), vec![(12, 1.0)]);
}

#[test]
fn buf_comb_echoes_decay_60db_in_decay_time() {
    for name in ["BufCombN", "BufCombL", "BufCombC"] {
        let blocks = 600;
        let inputs = vec![
            TestInput::Const(0.0),
            TestInput::Audio(impulse_at(0, blocks * BS)),
            TestInput::Const(0.01), // 480 samples
            TestInput::Const(0.5),
        ];
        let out = run(name, 1024, inputs, blocks);
        crate::delays::tests::assert_echoes_every_480_samples_fall_60db_in_half_a_second(name, &out);
    }
}

#[test]
fn negative_decay_time_alternates_echo_sign() {
    let inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(0, 40 * BS)), TestInput::Const(0.01), TestInput::Const(-0.5)];
    let out = run("BufCombN", 1024, inputs, 40);
    assert!(out[480] > 0.0 && out[960] < 0.0 && out[1440] > 0.0);
    assert!((out[960] / out[480] + 0.001f32.powf(0.02)).abs() < 1e-5);
}

#[test]
fn zero_or_infinite_decay_time_gives_one_echo_or_endless_ones() {
    let comb = |decay: f32| {
        let inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(0, 40 * BS)), TestInput::Const(0.01), TestInput::Const(decay)];
        run("BufCombN", 1024, inputs, 40)
    };
    assert_eq!(nonzero(&comb(0.0)), vec![(480, 1.0)]);
    let endless = comb(f32::INFINITY);
    assert_eq!((endless[480], endless[960], endless[1440], endless[1920]), (1.0, 1.0, 1.0, 1.0));
}

#[test]
fn buf_allpass_keeps_the_energy_of_an_impulse() {
    for name in ["BufAllpassN", "BufAllpassL", "BufAllpassC"] {
        let blocks = 3000; // 4 s
        // 750 samples exactly, so no treble is lost between samples; the
        // impulse comes once the buffer has been written through.
        let inputs = vec![
            TestInput::Const(0.0),
            TestInput::Audio(impulse_at(3000, blocks * BS)),
            TestInput::Const(0.015625),
            TestInput::Const(0.5),
        ];
        let out = run(name, 2048, inputs, blocks);
        let energy: f64 = out.iter().map(|&x| (x as f64) * (x as f64)).sum();
        assert!((energy - 1.0).abs() < 2e-3, "{name} energy {energy}");
    }
}

#[test]
fn delay_longer_than_the_buffer_is_clamped_to_its_line() {
    // 1000 samples: the line is the first 512, so the longest delay is 511.
    for name in ["BufDelayN", "BufCombN", "BufAllpassL"] {
        let mut inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(0, 20 * BS)), TestInput::Const(1.0)];
        if name != "BufDelayN" {
            inputs.push(TestInput::Const(0.0));
        }
        let out = run(name, 1000, inputs, 20);
        assert_eq!(nonzero(&out).first().map(|p| p.0), Some(511), "{name}");
    }
}

#[test]
fn every_channel_of_the_buffer_counts_towards_the_line() {
    // 300 stereo frames are 600 samples: a line of 512.
    let inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(0, 20 * BS)), TestInput::Const(1.0)];
    let out = run_on("BufDelayL", 300, 2, inputs, 20).outputs.remove(0);
    assert_eq!(nonzero(&out), vec![(511, 1.0)]);
}

#[test]
fn old_buffer_contents_stay_silent_until_overwritten() {
    for name in ["BufDelayN", "BufDelayL", "BufDelayC", "BufCombN", "BufCombL", "BufCombC", "BufAllpassN", "BufAllpassL", "BufAllpassC"] {
        let mut h = UnitHarness::new(name, Rate::Audio).inputs([
            TestInput::Const(0.0),
            TestInput::Const(0.0),
            TestInput::Const(100.0 / SR),
            TestInput::Const(1.0),
        ]);
        let mut b = SndBuf::new(512, 1, SR as f64);
        b.data.fill(1.0);
        h.world.buffers[0] = b;
        let out = h.run(20).remove(0);
        assert!(out.iter().all(|&x| x == 0.0), "{name}");
    }
}

#[test]
fn the_line_is_written_into_the_buffer() {
    let sig: Vec<f32> = (1..=256).map(|i| i as f32).collect();
    let inputs = vec![TestInput::Const(0.0), TestInput::Audio(sig.clone()), TestInput::Const(10.0 / SR)];
    let run = run_on("BufDelayN", 256, 1, inputs, 4);
    assert_eq!(run.world.buffers[0].data, sig);
}

#[test]
fn missing_buffer_outputs_silence_and_marks_the_unit_done() {
    for (name, bufnum) in [("BufDelayL", 3.0), ("BufCombC", 99.0), ("BufAllpassN", -1.0)] {
        let run = UnitHarness::new(name, Rate::Audio)
            .inputs([
                TestInput::Const(bufnum),
                TestInput::Audio(vec![1.0; 4 * BS]),
                TestInput::Const(0.001),
                TestInput::Const(1.0),
            ])
            .run_full(4);
        assert_eq!(run.initial, vec![0.0]);
        assert!(run.outputs[0].iter().all(|&x| x == 0.0), "{name}");
        assert!(run.done_per_block.iter().all(|&d| d), "{name}");
    }
}

#[test]
fn tiny_buffers_run_without_fault() {
    // One and two samples leave no history to spare behind the read point.
    for (frames, name) in [(1u32, "BufDelayN"), (2, "BufDelayL"), (2, "BufDelayC"), (1, "BufCombC"), (2, "BufAllpassC")] {
        let inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(4, BS)), TestInput::Const(0.1), TestInput::Const(1.0)];
        let out = run(name, frames, inputs, 2);
        assert!(out.iter().all(|x| x.is_finite()), "{name}");
    }
    let inputs = vec![TestInput::Const(0.0), TestInput::Audio(impulse_at(4, BS)), TestInput::Const(0.1)];
    assert_eq!(nonzero(&run("BufDelayL", 2, inputs, 1)), vec![(5, 1.0)]);
}
