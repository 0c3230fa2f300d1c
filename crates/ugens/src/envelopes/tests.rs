use crate::testing::{HarnessRun, TestInput, UnitHarness};
use crate::unit::Rate;

const SR: f32 = 48_000.0;

/// EnvGen inputs: gate, levelScale, levelBias, timeScale, doneAction, then
/// the envelope array (initLevel, numStages, releaseNode, loopNode, stages).
fn env_gen(rate: Rate, gate: TestInput, done_action: f32, env: &[f32], blocks: usize) -> HarnessRun {
    let mut h = UnitHarness::new("EnvGen", rate).input(gate);
    for v in [1.0, 0.0, 1.0, done_action] {
        h = h.input(TestInput::Const(v));
    }
    h.inputs(env.iter().map(|&v| TestInput::Const(v))).run_full(blocks)
}

/// Envelope array for `stages` of (level, dur, shape, curve).
fn env(init: f32, release_node: f32, loop_node: f32, stages: &[(f32, f32, f32, f32)]) -> Vec<f32> {
    let mut v = vec![init, stages.len() as f32, release_node, loop_node];
    for &(l, d, s, c) in stages {
        v.extend([l, d, s, c]);
    }
    v
}

#[test]
fn linear_segment_reaches_its_level_after_exactly_its_duration() {
    // 0 -> 1 over 7.8125 ms: 375 samples at 48 kHz. The constructor's
    // sample is the segment's first, so the block starts one step in.
    let e = env(0.0, -99.0, -99.0, &[(1.0, 0.0078125, 1.0, 0.0)]);
    let run = env_gen(Rate::Audio, TestInput::Const(1.0), 0.0, &e, 10);
    let out = &run.outputs[0];
    assert_eq!(run.initial[0], 0.0);
    assert!((out[0] - 1.0 / 375.0).abs() < 1e-7);
    assert!((out[186] - 187.0 / 375.0).abs() < 1e-5, "value {}", out[186]);
    assert!(out[373] < 1.0);
    assert!(out[374..].iter().all(|&v| v == 1.0), "holds the end level");
}

#[test]
fn every_curve_shape_is_monotone_and_hits_both_ends() {
    // linear, exponential, sine, welch, curve(+/-), squared, cubed
    for (shape, curve) in [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0), (5.0, 4.0), (5.0, -4.0), (6.0, 0.0), (7.0, 0.0)] {
        let e = env(0.01, -99.0, -99.0, &[(1.0, 0.0078125, shape, curve)]);
        let run = env_gen(Rate::Audio, TestInput::Const(1.0), 0.0, &e, 10);
        assert!((run.initial[0] - 0.01).abs() < 1e-6, "shape {shape} starts at {}", run.initial[0]);
        let out = &run.outputs[0];
        assert!(out[0] >= 0.01 && out[0] < 0.05, "shape {shape} first step {}", out[0]);
        for w in out.windows(2) {
            assert!(w[1] >= w[0] - 1e-6, "shape {shape} not monotone: {} -> {}", w[0], w[1]);
        }
        assert!((out[373] - 1.0).abs() < 0.03, "shape {shape} ends near 1: {}", out[373]);
        assert!(out[374..].iter().all(|&v| v == 1.0), "shape {shape} holds its end");
    }
}

#[test]
fn step_and_hold_jump_at_opposite_ends_of_the_segment() {
    let step = env(0.0, -99.0, -99.0, &[(1.0, 0.01, 0.0, 0.0)]);
    let out = &env_gen(Rate::Audio, TestInput::Const(1.0), 0.0, &step, 10).outputs[0];
    assert_eq!(out[0], 1.0, "step jumps at the start");
    let hold = env(0.0, -99.0, -99.0, &[(0.5, 0.001, 1.0, 0.0), (1.0, 0.01, 8.0, 0.0)]);
    let out = &env_gen(Rate::Audio, TestInput::Const(1.0), 0.0, &hold, 10).outputs[0];
    assert_eq!(out[100], 0.5, "hold keeps the previous level");
    assert_eq!(out[48 + 480 + 2], 1.0, "hold jumps at the end");
}

#[test]
fn sustains_at_release_node_until_the_gate_closes() {
    // attack 10 ms to 1, decay 10 ms to 0.5 (sustain), release 10 ms to 0.
    let e = env(0.0, 2.0, -99.0, &[(1.0, 0.01, 1.0, 0.0), (0.5, 0.01, 1.0, 0.0), (0.0, 0.0078125, 1.0, 0.0)]);
    let gate: Vec<f32> = (0..60).map(|b| if b < 40 { 1.0 } else { 0.0 }).collect();
    let run = env_gen(Rate::Audio, TestInput::Control(gate), 2.0, &e, 60);
    let out = &run.outputs[0];
    assert!(out[30 * 64..40 * 64].iter().all(|&v| v == 0.5), "sustains");
    assert!(out[40 * 64 + 100] < 0.5, "releases when the gate closes");
    assert!(out[40 * 64 + 375..].iter().all(|&v| v == 0.0), "ends at 0");
    // 375 release samples from block 40 end in block 45.
    assert_eq!(run.done_actions, vec![(45, 2)]);
    assert!(run.done_per_block[45] && !run.done_per_block[44]);
}

#[test]
fn negative_gate_forces_a_release_of_minus_one_minus_gate_seconds() {
    let e = env(0.0, 2.0, -99.0, &[(1.0, 0.01, 1.0, 0.0), (0.5, 0.01, 1.0, 0.0), (0.0, 1.0, 1.0, 0.0)]);
    // gate -1.005: release over about 5 ms (240 samples) instead of 1 s.
    let gate: Vec<f32> = (0..40).map(|b| if b < 20 { 1.0 } else { -1.005 }).collect();
    let run = env_gen(Rate::Audio, TestInput::Control(gate), 2.0, &e, 40);
    let out = &run.outputs[0];
    assert!(out[20 * 64 - 1] == 0.5, "sustaining before the release");
    assert!(out[20 * 64 + 120] > 0.2 && out[20 * 64 + 120] < 0.3, "{}", out[20 * 64 + 120]);
    assert!(out[20 * 64 + 250..].iter().all(|&v| v == 0.0));
    assert_eq!(run.done_actions.len(), 1);
    assert_eq!(run.done_actions[0].0, 23);
}

#[test]
fn loop_node_repeats_until_release() {
    // Loop the stages 0.2 -> 1 -> 0.2 (5 ms each) while the gate is open.
    let e = env(0.2, 2.0, 0.0, &[(1.0, 0.005, 1.0, 0.0), (0.2, 0.005, 1.0, 0.0), (0.0, 0.005, 1.0, 0.0)]);
    let gate: Vec<f32> = (0..80).map(|b| if b < 60 { 1.0 } else { 0.0 }).collect();
    let run = env_gen(Rate::Audio, TestInput::Control(gate), 0.0, &e, 80);
    let out = &run.outputs[0];
    let peaks = out[..60 * 64].windows(3).filter(|w| w[1] > w[0] && w[1] >= w[2] && w[1] > 0.9).count();
    // 60 blocks = 3840 samples = 8 cycles of 480 samples.
    assert_eq!(peaks, 8);
    assert!(out[75 * 64..].iter().all(|&v| v == 0.0), "released after the loop");
}

#[test]
fn control_rate_envelope_counts_in_blocks() {
    // At 750 control periods per second, 64 ms is 48 periods; the
    // constructor computes the first of them.
    let e = env(0.0, -99.0, -99.0, &[(1.0, 0.064, 1.0, 0.0)]);
    let run = env_gen(Rate::Control, TestInput::Const(1.0), 2.0, &e, 60);
    let out = &run.outputs[0];
    let end = out.iter().position(|&v| v == 1.0).unwrap();
    assert!((46..=47).contains(&end), "ends after {end} blocks");
    assert_eq!(run.done_actions, vec![(end, 2)]);
}

#[test]
fn line_reaches_its_end_on_the_last_sample_of_its_duration() {
    let run = UnitHarness::new("Line", Rate::Audio)
        .inputs([0.0, 1.0, 0.01, 2.0].map(TestInput::Const))
        .run_full(10);
    let out = &run.outputs[0];
    // 480 samples; scsynth 3.13 starts one step in, so sample 479 is 1.
    assert!((out[0] - 1.0 / 480.0).abs() < 1e-7);
    assert!(out[478] < 1.0);
    assert!(out[479..].iter().all(|&v| (v - 1.0).abs() < 1e-6));
    assert_eq!(run.done_actions, vec![(7, 2)]);
}

#[test]
fn xline_grows_geometrically_to_its_end() {
    let run = UnitHarness::new("XLine", Rate::Audio)
        .inputs([0.01, 1.0, 0.01, 0.0].map(TestInput::Const))
        .run_full(10);
    assert_eq!(run.initial[0], 0.01);
    let out = &run.outputs[0];
    // Constant ratio between neighbours: 100^(1/480).
    let ratio = 100f32.powf(1.0 / 480.0);
    assert!((out[101] / out[100] - ratio).abs() < 1e-4);
    assert!(out[478] < 1.0 && out[480..].iter().all(|&v| v == 1.0));
    assert!(run.done_per_block[7]);
}

#[test]
fn linen_attacks_sustains_and_releases_to_silence() {
    let gate: Vec<f32> = (0..120).map(|b| if b < 60 { 1.0 } else { 0.0 }).collect();
    let run = UnitHarness::new("Linen", Rate::Control)
        .input(TestInput::Control(gate))
        .inputs([0.02, 0.8, 0.04, 2.0].map(TestInput::Const))
        .run_full(120);
    let out = &run.outputs[0];
    let rate = SR / 64.0;
    let attack = (0.02 * rate) as usize;
    assert!((out[attack + 2] - 0.8).abs() < 1e-5);
    assert!(out[59] == out[40]);
    assert!(out[61] == out[59] && out[62] < 0.8, "release starts the block after the gate closes");
    assert!(out[100..].iter().all(|&v| v == 0.0));
    assert_eq!(run.done_actions.len(), 1);
}

#[test]
fn ienvgen_reads_a_linear_envelope_at_its_index() {
    // Two stages: 0 -> 1 over 1 s, 1 -> 0.5 over 1 s, linear.
    let env = [0.0, 0.0, 2.0, 2.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.5];
    let mut ins = vec![TestInput::Control(vec![0.5, 1.5, 3.0])];
    ins.extend(env.iter().map(|&v| TestInput::Const(v)));
    let out = UnitHarness::new("IEnvGen", Rate::Control).inputs(ins).run(3);
    assert_eq!(out[0], vec![0.5, 0.75, 0.5]);
}
