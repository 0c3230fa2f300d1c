use crate::testing::{TestInput, UnitHarness, ar};
use crate::unit::Rate;

/// A signal that is 0 except for `value` at the given samples.
fn pulses(len: usize, at: &[usize], value: f32) -> Vec<f32> {
    let mut v = vec![0.0; len];
    for &i in at {
        v[i] = value;
    }
    v
}

#[test]
fn trig1_fires_only_on_rising_edges_for_its_duration() {
    // 10 samples high from 100, a second rising edge at 300.
    let mut sig = vec![0.0; 640];
    sig[100..110].fill(1.0);
    sig[300] = 0.5;
    let dur = 4.0 / 48_000.0;
    let out = ar("Trig1", vec![TestInput::Audio(sig), TestInput::Const(dur)], 10);
    let ones: Vec<usize> = (0..640).filter(|&i| out[i] == 1.0).collect();
    assert_eq!(ones, vec![100, 101, 102, 103, 300, 301, 302, 303]);
}

#[test]
fn trig_holds_the_trigger_value() {
    let sig = pulses(640, &[64, 200], 0.75);
    let out = ar("Trig", vec![TestInput::Audio(sig), TestInput::Const(0.001)], 10);
    // 0.001 s = 48 samples.
    assert!(out[64..112].iter().all(|&v| v == 0.75));
    assert_eq!(out[112], 0.0);
    assert_eq!(out[200], 0.75);
}

#[test]
fn tdelay_fires_once_after_the_delay() {
    let sig = pulses(640, &[10], 1.0);
    let out = ar("TDelay", vec![TestInput::Audio(sig), TestInput::Const(0.001)], 10);
    let fired: Vec<usize> = (0..640).filter(|&i| out[i] == 1.0).collect();
    assert_eq!(fired, vec![10 + 48]);
}

#[test]
fn latch_holds_the_value_sampled_at_each_trigger() {
    let input: Vec<f32> = (0..640).map(|i| i as f32).collect();
    let trig = pulses(640, &[5, 300], 1.0);
    let out = ar("Latch", vec![TestInput::Audio(input), TestInput::Audio(trig)], 10);
    assert_eq!(out[4], 0.0);
    assert!(out[5..300].iter().all(|&v| v == 5.0));
    assert!(out[300..].iter().all(|&v| v == 300.0));
}

#[test]
fn stepper_wraps_between_min_and_max() {
    let trig: Vec<f32> = (0..640).map(|i| if i % 10 == 5 { 1.0 } else { 0.0 }).collect();
    // trig, reset, min, max, step, resetval
    let ins = vec![
        TestInput::Audio(trig),
        TestInput::Const(0.0),
        TestInput::Const(0.0),
        TestInput::Const(3.0),
        TestInput::Const(1.0),
        TestInput::Const(0.0),
    ];
    let out = ar("Stepper", ins, 10);
    let steps: Vec<f32> = (0..8).map(|k| out[k * 10 + 5]).collect();
    assert_eq!(steps, vec![1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0]);
}

#[test]
fn phasor_wraps_and_jumps_to_reset_pos_on_trigger() {
    let trig = pulses(640, &[200], 1.0);
    // trig, rate, start, end, resetPos
    let ins = vec![
        TestInput::Audio(trig),
        TestInput::Const(0.125),
        TestInput::Const(0.0),
        TestInput::Const(1.0),
        TestInput::Const(0.5),
    ];
    let out = ar("Phasor", ins, 10);
    assert!(out.iter().all(|&v| (0.0..1.0).contains(&v)));
    assert_eq!(&out[0..9], &[0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 0.0]);
    // The trigger lands the phase at resetPos plus the sub-sample part.
    assert!((out[200] - 0.5).abs() <= 0.125);
}

#[test]
fn timer_measures_the_trigger_period() {
    // A square wave with a 100-sample period.
    let sig: Vec<f32> = (0..1280).map(|i| if i % 100 < 50 { 1.0 } else { -1.0 }).collect();
    let out = ar("Timer", vec![TestInput::Audio(sig)], 20);
    assert!((out[1279] - 100.0 / 48_000.0).abs() < 1e-6, "{}", out[1279]);
}

#[test]
fn pulse_count_counts_and_resets() {
    let trig: Vec<f32> = (0..640).map(|i| if i % 20 == 1 { 1.0 } else { 0.0 }).collect();
    let reset = pulses(640, &[300], 1.0);
    let out = ar("PulseCount", vec![TestInput::Audio(trig), TestInput::Audio(reset)], 10);
    assert_eq!(out[299], 15.0);
    assert_eq!(out[300], 0.0);
    assert_eq!(out[639], 17.0);
}

#[test]
fn toggle_ff_flips_on_each_trigger() {
    let trig = pulses(640, &[10, 20, 30], 1.0);
    let out = ar("ToggleFF", vec![TestInput::Audio(trig)], 10);
    assert_eq!((out[15], out[25], out[35]), (1.0, 0.0, 1.0));
}

#[test]
fn peak_and_running_max_restart_after_a_trigger() {
    let input: Vec<f32> = (0..640).map(|i| if i == 50 { -2.0 } else if i == 400 { 0.5 } else { 0.1 }).collect();
    let trig = pulses(640, &[300], 1.0);
    let peak = ar("Peak", vec![TestInput::Audio(input.clone()), TestInput::Audio(trig.clone())], 10);
    assert_eq!(peak[299], 2.0);
    assert_eq!(peak[301], 0.1);
    assert_eq!(peak[639], 0.5);
    let max = ar("RunningMax", vec![TestInput::Audio(input.clone()), TestInput::Audio(trig.clone())], 10);
    assert_eq!(max[299], 0.1);
    assert_eq!(max[639], 0.5);
    let min = ar("RunningMin", vec![TestInput::Audio(input), TestInput::Audio(trig)], 10);
    assert_eq!(min[299], -2.0);
    assert_eq!(min[301], 0.1);
}

#[test]
fn select_picks_the_indexed_input_and_clips_the_index() {
    let which = TestInput::Const(5.0);
    let out = ar("Select", vec![which, TestInput::Const(1.0), TestInput::Const(2.0)], 1);
    assert!(out.iter().all(|&v| v == 2.0));
}

#[test]
fn sweep_rises_at_its_rate_per_second() {
    let out = ar("Sweep", vec![TestInput::Const(0.0), TestInput::Const(48_000.0)], 2);
    assert_eq!(&out[0..3], &[1.0, 2.0, 3.0]);
}

#[test]
fn free_self_requests_freeing_on_a_rising_input() {
    let run = UnitHarness::new("FreeSelf", Rate::Control)
        .input(TestInput::Control(vec![0.0, 0.0, 1.0, 1.0, 0.0, 2.0]))
        .run_full(6);
    assert_eq!(run.done_actions, vec![(2, 2), (5, 2)]);
    let run = UnitHarness::new("PauseSelf", Rate::Control)
        .input(TestInput::Control(vec![0.0, 1.0]))
        .run_full(3);
    assert_eq!(run.done_actions, vec![(1, 1)]);
}

#[test]
fn done_reads_zero_without_a_source_unit() {
    let run = UnitHarness::new("Done", Rate::Control).input(TestInput::Const(1.0)).run(3);
    assert!(run[0].iter().all(|&v| v == 0.0));
    let run = UnitHarness::new("FreeSelfWhenDone", Rate::Control).input(TestInput::Const(1.0)).run_full(3);
    assert!(run.done_actions.is_empty());
    assert!(run.outputs[0].iter().all(|&v| v == 0.0));
}

#[test]
fn in_range_and_schmidt_report_levels() {
    let sig: Vec<f32> = vec![0.0, 0.5, 1.0, 0.6, 0.2, -0.1];
    let out = ar("InRange", vec![TestInput::Audio(sig.clone()), TestInput::Const(0.1), TestInput::Const(0.8)], 1);
    assert_eq!(&out[0..6], &[0.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
    let out = ar("Schmidt", vec![TestInput::Audio(sig), TestInput::Const(0.1), TestInput::Const(0.8)], 1);
    assert_eq!(&out[0..6], &[0.0, 0.0, 1.0, 1.0, 1.0, 0.0]);
}
