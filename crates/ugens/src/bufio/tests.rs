//! Behaviour of the buffer units.

use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;

const BS: usize = 64;

fn ramp_buffer(frames: u32) -> SndBuf {
    let mut b = SndBuf::new(frames, 1, 48_000.0);
    for (i, x) in b.data.iter_mut().enumerate() {
        *x = i as f32;
    }
    b
}

fn playbuf(rate: f32, looping: bool, frames: u32, blocks: usize) -> crate::testing::HarnessRun {
    let mut h = UnitHarness::new("PlayBuf", Rate::Audio).inputs([
        TestInput::Const(0.0),
        TestInput::Const(rate),
        TestInput::Const(1.0),
        TestInput::Const(0.0),
        TestInput::Const(if looping { 1.0 } else { 0.0 }),
        TestInput::Const(2.0),
    ]);
    h.world.buffers[0] = ramp_buffer(frames);
    h.run_full(blocks)
}

#[test]
fn playbuf_at_rate_one_reproduces_the_buffer() {
    let run = playbuf(1.0, false, 256, 2);
    let out = &run.outputs[0];
    for (i, &x) in out.iter().enumerate() {
        assert_eq!(x, i as f32);
    }
}

#[test]
fn playbuf_at_rate_two_skips_every_other_frame() {
    let run = playbuf(2.0, false, 256, 1);
    for (i, &x) in run.outputs[0].iter().enumerate() {
        assert_eq!(x, 2.0 * i as f32);
    }
}

#[test]
fn playbuf_loops_back_to_the_start() {
    let run = playbuf(1.0, true, 100, 2);
    let out = &run.outputs[0];
    assert_eq!(out[99], 99.0);
    assert_eq!(out[100], 0.0);
    assert_eq!(out[127], 27.0);
    assert!(run.done_actions.is_empty());
}

#[test]
fn playbuf_without_loop_stops_at_the_end_and_fires_its_done_action() {
    let run = playbuf(1.0, false, 100, 3);
    let out = &run.outputs[0];
    assert_eq!(out[98], 98.0);
    assert!(out[99..].iter().all(|&x| x == 99.0));
    assert!(run.done_per_block[1]);
    assert_eq!(run.done_actions.first(), Some(&(1, 2)));
}

#[test]
fn playbuf_interpolates_between_frames() {
    let run = playbuf(0.5, false, 256, 1);
    let out = &run.outputs[0];
    assert_eq!(out[2], 1.0);
    assert!((out[3] - 1.5).abs() < 1e-6);
}

#[test]
fn playbuf_without_a_buffer_is_silent() {
    let out = UnitHarness::new("PlayBuf", Rate::Audio)
        .inputs([1.0f32, 1.0, 1.0, 0.0, 1.0, 0.0].map(TestInput::Const))
        .run(2);
    assert!(out[0].iter().all(|&x| x == 0.0));
    let _ = BS;
}

fn phase_ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn bufwr_then_bufrd_round_trips_a_signal() {
    let sig: Vec<f32> = (0..128).map(|i| (i as f32 * 0.37).sin()).collect();
    let mut w = UnitHarness::new("BufWr", Rate::Audio).inputs([
        TestInput::Const(1.0),
        TestInput::Audio(phase_ramp(128)),
        TestInput::Const(1.0),
        TestInput::Audio(sig.clone()),
    ]);
    w.world.buffers[1] = SndBuf::new(128, 1, 48_000.0);
    let written = w.run_full(2).world.buffers[1].clone();
    assert_eq!(written.data, sig);

    for interp in [1.0, 2.0, 4.0] {
        let mut r = UnitHarness::new("BufRd", Rate::Audio).inputs([
            TestInput::Const(1.0),
            TestInput::Audio(phase_ramp(128)),
            TestInput::Const(1.0),
            TestInput::Const(interp),
        ]);
        r.world.buffers[1] = written.clone();
        let out = r.run(2);
        assert_eq!(out[0], sig, "interpolation {interp}");
    }
}

#[test]
fn bufrd_interpolates_between_frames() {
    let phases: Vec<f32> = (0..64).map(|i| i as f32 * 0.5).collect();
    let read = |interp: f32| {
        let mut r = UnitHarness::new("BufRd", Rate::Audio).inputs([
            TestInput::Const(0.0),
            TestInput::Audio(phases.clone()),
            TestInput::Const(0.0),
            TestInput::Const(interp),
        ]);
        r.world.buffers[0] = ramp_buffer(256);
        r.run(1).remove(0)
    };
    assert_eq!(read(1.0)[3], 1.0);
    assert_eq!(read(2.0)[3], 1.5);
    assert!((read(4.0)[3] - 1.5).abs() < 1e-6);
}

#[test]
fn bufrd_with_more_outputs_than_channels_zeroes_the_rest() {
    let mut r = UnitHarness::new("BufRd", Rate::Audio).outputs(2).inputs([
        TestInput::Const(0.0),
        TestInput::Audio(phase_ramp(64)),
        TestInput::Const(1.0),
        TestInput::Const(1.0),
    ]);
    r.world.buffers[0] = ramp_buffer(64);
    let out = r.run(1);
    assert_eq!(out[0][5], 5.0);
    assert!(out[1].iter().all(|&x| x == 0.0));
}

fn recordbuf(rec: f32, pre: f32, looping: bool, frames: u32, blocks: usize, sig: &[f32]) -> crate::testing::HarnessRun {
    let mut h = UnitHarness::new("RecordBuf", Rate::Audio).inputs([
        TestInput::Const(2.0),
        TestInput::Const(0.0),
        TestInput::Const(rec),
        TestInput::Const(pre),
        TestInput::Const(1.0),
        TestInput::Const(if looping { 1.0 } else { 0.0 }),
        TestInput::Const(1.0),
        TestInput::Const(2.0),
        TestInput::Audio(sig.to_vec()),
    ]);
    let mut b = SndBuf::new(frames, 1, 48_000.0);
    b.data.fill(1.0);
    h.world.buffers[2] = b;
    h.run_full(blocks)
}

#[test]
fn recordbuf_writes_its_input_and_stops_at_the_end() {
    let sig: Vec<f32> = (0..256).map(|i| i as f32 + 10.0).collect();
    let run = recordbuf(1.0, 0.0, false, 100, 3, &sig);
    assert_eq!(&run.world.buffers[2].data[..], &sig[..100]);
    assert!(run.done_per_block[1]);
    assert_eq!(run.done_actions.first(), Some(&(1, 2)));
}

#[test]
fn recordbuf_overdubs_with_prelevel_and_wraps_when_looping() {
    let sig = vec![2.0f32; 128];
    let run = recordbuf(0.5, 0.5, true, 100, 2, &sig);
    let data = &run.world.buffers[2].data;
    // The first 28 frames were written twice, the rest once.
    assert!(data[..28].iter().all(|&x| x == 1.75));
    assert!(data[28..].iter().all(|&x| x == 1.5));
    assert!(run.done_actions.is_empty());
}
