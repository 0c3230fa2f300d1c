use super::pan_place;
use crate::testing::{TestInput, UnitHarness, peak};
use crate::unit::Rate;
use crate::world::SndBuf;

const SR: f32 = 48_000.0;

/// An audio-rate trigger with a single rise at sample `at`.
fn one_trigger(at: usize, len: usize) -> TestInput {
    let mut v = vec![0.0; len];
    v[at] = 1.0;
    TestInput::Audio(v)
}

/// Samples from the first to the last non-zero one.
fn extent(x: &[f32]) -> Option<(usize, usize)> {
    let first = x.iter().position(|&v| v != 0.0)?;
    let last = x.iter().rposition(|&v| v != 0.0)?;
    Some((first, last))
}

fn grain_sin(trigger: TestInput, dur: f32, freq: f32, pan: f32, env: f32, channels: usize) -> UnitHarness {
    UnitHarness::new("GrainSin", Rate::Audio)
        .inputs([
            trigger,
            TestInput::Const(dur),
            TestInput::Const(freq),
            TestInput::Const(pan),
            TestInput::Const(env),
            TestInput::Const(512.0),
        ])
        .outputs(channels)
}

#[test]
fn a_grain_lasts_its_duration_from_its_trigger() {
    // 1/64 s: exactly 750 samples.
    let out = grain_sin(one_trigger(100, 64 * 20), 0.015625, 1000.0, 0.0, -1.0, 1).run(20);
    let (first, last) = extent(&out[0]).unwrap();
    assert_eq!(first, 101, "the first sample of a sine grain is sin(0) = 0");
    assert_eq!(last, 100 + 750 - 1);
}

#[test]
fn the_builtin_envelope_peaks_in_the_middle_of_the_grain() {
    let out = grain_sin(one_trigger(0, 64 * 20), 0.02, 6000.0, 0.0, -1.0, 1).run(20);
    let x = &out[0];
    let n = (0.02 * SR) as usize;
    let quarter = peak(&x[..n / 8]);
    let middle = peak(&x[n / 2 - 40..n / 2 + 40]);
    assert!(middle > 0.99, "middle peak {middle}");
    assert!(quarter < 0.2, "start peak {quarter}");
}

#[test]
fn centre_pan_splits_a_grain_equally_between_two_outputs() {
    let out = grain_sin(one_trigger(10, 64 * 10), 0.005, 700.0, 0.0, -1.0, 2).run(10);
    for (l, r) in out[0].iter().zip(&out[1]) {
        assert!((l - r).abs() <= 1e-6 * l.abs().max(1e-6));
    }
    assert!(peak(&out[0]) > 0.5);
}

#[test]
fn hard_pan_puts_a_grain_on_one_output() {
    let out = grain_sin(one_trigger(10, 64 * 10), 0.005, 700.0, 1.0, -1.0, 2).run(10);
    assert!(peak(&out[0]) < 1e-6);
    assert!(peak(&out[1]) > 0.5);
}

#[test]
fn pan_on_a_ring_of_outputs_reaches_each_channel() {
    // Pan 0 sits halfway between channels 0 and 1; each step of 0.5 moves one channel on.
    assert_eq!(pan_place(0.0, 4).chan, 0);
    assert_eq!(pan_place(0.5, 4).chan, 1);
    assert_eq!(pan_place(-1.0, 4).chan, 2);
    assert_eq!(pan_place(-0.5, 4).chan, 3);
    assert_eq!(pan_place(0.0, 4).angle, Some(std::f32::consts::FRAC_PI_4));
    // A whole turn either way lands on the same channel.
    assert_eq!(pan_place(2.0, 4).chan, 0);
    assert_eq!(pan_place(-1.5, 4).chan, 1);
}

#[test]
fn an_envelope_buffer_shapes_the_grain() {
    let mut h = grain_sin(one_trigger(0, 64 * 10), 0.01, 3000.0, 0.0, 1.0, 1);
    // A flat envelope: the grain is a plain sine at full level.
    let mut env = SndBuf::new(64, 1, 48_000.0);
    env.data.fill(1.0);
    h.world.buffers[1] = env;
    let out = h.run(10);
    let n = (0.01 * SR) as usize;
    assert!(peak(&out[0][..40]) > 0.9, "a flat envelope is loud from the start");
    assert!(peak(&out[0][n..]) == 0.0);
}

#[test]
fn a_missing_envelope_buffer_starts_no_grain() {
    let out = grain_sin(one_trigger(0, 64 * 10), 0.01, 3000.0, 0.0, 5.0, 1).run(10);
    assert_eq!(peak(&out[0]), 0.0);
}

#[test]
fn the_grain_limit_caps_overlapping_grains() {
    // Triggers every 8 samples, grains of 1000 samples: a limit of 3 keeps two sounding.
    let trig: Vec<f32> = (0..64 * 30).map(|i| if i % 8 == 0 { 1.0 } else { 0.0 }).collect();
    let h = |max: f32| {
        UnitHarness::new("GrainIn", Rate::Audio)
            .inputs([
                TestInput::Audio(trig.iter().map(|&t| if t > 0.0 { 1.0 } else { -1.0 }).collect()),
                TestInput::Const(1000.0 / SR),
                TestInput::Audio(vec![1.0; 64 * 30]),
                TestInput::Const(0.0),
                TestInput::Const(-1.0),
                TestInput::Const(max),
            ])
            .run(30)
    };
    let few = h(3.0);
    let many = h(512.0);
    assert!(peak(&few[0]) <= 2.0 + 1e-5, "two grains at most: {}", peak(&few[0]));
    assert!(peak(&many[0]) > 10.0);
}

#[test]
fn grain_buf_plays_the_buffer_at_the_given_position() {
    let mut h = UnitHarness::new("GrainBuf", Rate::Audio).inputs([
        one_trigger(0, 64 * 10),
        TestInput::Const(0.01),
        TestInput::Const(0.0),
        TestInput::Const(1.0),
        TestInput::Const(0.5),
        TestInput::Const(1.0),
        TestInput::Const(0.0),
        TestInput::Const(-1.0),
        TestInput::Const(512.0),
    ]);
    let mut buf = SndBuf::new(1000, 1, 48_000.0);
    for (i, v) in buf.data.iter_mut().enumerate() {
        *v = if i >= 500 { 1.0 } else { -1.0 };
    }
    h.world.buffers[0] = buf;
    let out = h.run(10);
    // From the middle on the buffer holds +1: the whole grain is positive.
    assert!(out[0].iter().all(|&v| v >= 0.0));
    assert!(peak(&out[0]) > 0.9);
}

#[test]
fn tgrains_centres_the_grain_on_its_position() {
    let mut h = UnitHarness::new("TGrains", Rate::Audio)
        .inputs([
            one_trigger(0, 64 * 10),
            TestInput::Const(0.0),
            TestInput::Const(1.0),
            TestInput::Const(500.0 / SR),
            TestInput::Const(200.0 / SR),
            TestInput::Const(0.0),
            TestInput::Const(1.0),
            TestInput::Const(1.0),
        ])
        .outputs(1);
    let mut buf = SndBuf::new(1000, 1, 48_000.0);
    for (i, v) in buf.data.iter_mut().enumerate() {
        *v = if (400..600).contains(&i) { 1.0 } else { 0.0 };
    }
    h.world.buffers[0] = buf;
    let out = h.run(10);
    // The grain reads frames 400..600: all of it inside the plateau (its
    // envelope is already above zero on the first sample).
    let (first, last) = extent(&out[0]).unwrap();
    assert_eq!((first, last), (0, 199));
    assert!(peak(&out[0]) > 0.99);
}

#[test]
fn pitch_shift_at_unity_passes_a_steady_signal() {
    let out = UnitHarness::new("PitchShift", Rate::Audio)
        .inputs([
            TestInput::Audio(vec![0.5; 64 * 100]),
            TestInput::Const(0.02),
            TestInput::Const(1.0),
            TestInput::Const(0.0),
            TestInput::Const(0.0),
        ])
        .run(100);
    // Once the window has filled, the four overlapping heads sum to the input.
    let tail = &out[0][64 * 60..];
    assert!(tail.iter().all(|&v| (v - 0.5).abs() < 1e-3), "{:?}", &tail[..8]);
}

#[test]
fn warp1_without_a_buffer_is_silent_and_done() {
    let run = UnitHarness::new("Warp1", Rate::Audio)
        .inputs([
            TestInput::Const(3.0),
            TestInput::Const(0.0),
            TestInput::Const(1.0),
            TestInput::Const(0.1),
            TestInput::Const(-1.0),
            TestInput::Const(8.0),
            TestInput::Const(0.0),
            TestInput::Const(1.0),
        ])
        .run_full(4);
    assert_eq!(peak(&run.outputs[0]), 0.0);
    assert!(run.done_per_block.iter().all(|&d| d));
}

#[test]
fn warp1_streams_grains_from_its_buffer() {
    let mut h = UnitHarness::new("Warp1", Rate::Audio).inputs([
        TestInput::Const(0.0),
        TestInput::Const(0.5),
        TestInput::Const(1.0),
        TestInput::Const(0.01),
        TestInput::Const(-1.0),
        TestInput::Const(4.0),
        TestInput::Const(0.0),
        TestInput::Const(1.0),
    ]);
    let mut buf = SndBuf::new(2000, 1, 48_000.0);
    buf.data.fill(0.25);
    h.world.buffers[0] = buf;
    let out = h.run(40);
    // Four overlapping sine-squared windows sum to a steady level of twice
    // the mean window times the buffer value: 4 * 0.5 * 0.25.
    let tail = &out[0][64 * 20..];
    let mean = tail.iter().sum::<f32>() / tail.len() as f32;
    assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
}

#[test]
fn psingrain_ends_its_synth_after_the_grain() {
    let h = UnitHarness::new("PSinGrain", Rate::Audio).inputs([
        TestInput::Const(1000.0),
        TestInput::Const(0.002),
        TestInput::Const(1.0),
    ]);
    let out = h.run(3);
    // 96 samples of grain, then silence.
    assert!(out[0][..96].iter().any(|x| x.abs() > 0.5));
    assert!(out[0][96..].iter().all(|&x| x == 0.0));
}
