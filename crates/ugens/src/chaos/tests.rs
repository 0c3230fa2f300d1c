use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;

use TestInput::{Audio, Const};

fn run_ar(name: &str, inputs: &[f32], blocks: usize) -> (Vec<f32>, f32) {
    let r = UnitHarness::new(name, Rate::Audio).inputs(inputs.iter().map(|&v| Const(v))).run_full(blocks);
    (r.outputs[0].clone(), r.initial[0])
}

/// Lengths of runs of equal consecutive values.
fn run_lengths(x: &[f32]) -> Vec<usize> {
    let mut runs = vec![1];
    for w in x.windows(2) {
        if w[0] == w[1] {
            *runs.last_mut().unwrap() += 1;
        } else {
            runs.push(1);
        }
    }
    runs
}

#[test]
fn held_maps_change_value_once_per_period() {
    // 48 kHz / 4800 Hz: a new value every 10 samples.
    for name in ["CuspN", "QuadN", "LatoocarfianN", "FBSineN", "StandardN"] {
        let inputs: Vec<f32> = match name {
            "CuspN" => vec![4800.0, 1.0, 1.9, 0.0],
            "QuadN" => vec![4800.0, 1.0, -1.0, -0.75, 0.0],
            "LatoocarfianN" => vec![4800.0, 1.0, 3.0, 0.5, 0.5, 0.5, 0.5],
            "FBSineN" => vec![4800.0, 1.0, 0.1, 1.1, 0.5, 0.1, 0.1],
            _ => vec![4800.0, 1.0, 0.5, 0.0],
        };
        let (out, _) = run_ar(name, &inputs, 8);
        let runs = run_lengths(&out);
        // The first run includes the sample the constructor computed.
        assert!(runs[1..runs.len() - 1].iter().all(|&r| r == 10), "{name}: {runs:?}");
    }
}

#[test]
fn linear_maps_pass_through_the_held_values() {
    let (held, _) = run_ar("CuspN", &[4800.0, 1.0, 1.9, 0.3], 4);
    let (line, _) = run_ar("CuspL", &[4800.0, 1.0, 1.9, 0.3], 4);
    // The linear version reaches each new iterate one period later.
    for k in 1..20 {
        let i = k * 10 - 1;
        assert!((line[i + 10] - held[i]).abs() < 1e-6, "period {k}: {} vs {}", line[i + 10], held[i]);
    }
}

#[test]
fn cubic_maps_meet_their_iterates_one_period_after_the_linear_ones() {
    // 48 kHz / 2400 Hz: 20 samples per iterate. At each knot the linear
    // version shows the previous iterate, the cubic one the one before.
    let (line, _) = run_ar("QuadL", &[2400.0, -1.0, 0.0, 0.9, 0.1], 4);
    let (cubic, _) = run_ar("QuadC", &[2400.0, -1.0, 0.0, 0.9, 0.1], 4);
    let knots_match = (0..20).any(|r| (40 + r..line.len()).step_by(20).all(|i| cubic[i] == line[i - 20]));
    assert!(knots_match);
    assert!(cubic.iter().any(|&v| v != cubic[0]));
}

#[test]
fn henon_stays_bounded_and_chaotic() {
    let (out, _) = run_ar("HenonN", &[48_000.0, 1.4, 0.3, 0.0, 0.0], 16);
    assert!(out.iter().all(|v| v.abs() <= 1.5));
    let distinct: std::collections::BTreeSet<u32> = out.iter().map(|v| v.to_bits()).collect();
    assert!(distinct.len() > 500);
}

#[test]
fn lincong_output_is_scaled_to_plus_minus_one() {
    let (out, _) = run_ar("LinCongN", &[48_000.0, 1.1, 0.13, 1.0, 0.0], 8);
    assert!(out.iter().all(|&v| (-1.0..=1.0).contains(&v)));
}

#[test]
fn lorenz_orbit_is_bounded_after_scaling() {
    let (out, _) = run_ar("LorenzL", &[48_000.0, 10.0, 28.0, 2.667, 0.01, 0.1, 0.0, 0.0], 64);
    assert!(out.iter().all(|v| v.abs() < 2.5));
    assert!(out.iter().any(|&v| v > 0.2) && out.iter().any(|&v| v < -0.2));
}

#[test]
fn gendy_stays_in_range_and_starts_at_zero() {
    // Gendy2 and Gendy3 reflect values below -1 to above +1, so they may reach past 1.
    for (name, n) in [("Gendy1", 10), ("Gendy2", 12), ("Gendy3", 9)] {
        let inputs: Vec<f32> = match name {
            "Gendy3" => vec![1.0, 1.0, 1.0, 1.0, 440.0, 0.5, 0.5, 12.0, 12.0],
            "Gendy2" => vec![1.0, 1.0, 1.0, 1.0, 440.0, 660.0, 0.5, 0.5, 12.0, 12.0, 1.17, 0.31],
            _ => vec![1.0, 1.0, 1.0, 1.0, 440.0, 660.0, 0.5, 0.5, 12.0, 12.0],
        };
        assert_eq!(inputs.len(), n);
        let (out, first) = run_ar(name, &inputs, 64);
        assert_eq!(first, 0.0);
        let bound = if name == "Gendy1" { 1.0 } else { 3.0 };
        assert!(out.iter().all(|v| v.abs() <= bound), "{name}");
        assert!(out.iter().any(|v| v.abs() > 0.1), "{name} is silent");
    }
}

#[test]
fn every_distribution_maps_into_minus_one_to_one() {
    for which in 0..7 {
        for k in 0..100 {
            let f = k as f32 / 100.0;
            let v = super::gendy::distribution(which, 0.5, f);
            assert!((-1.01..=1.01).contains(&v), "dist {which} at {f}: {v}");
        }
    }
}

#[test]
fn mirror_reflects_at_the_bounds() {
    assert_eq!(super::gendy::mirror(-1.0, 1.0, 1.25), 0.75);
    assert_eq!(super::gendy::mirror(0.0, 1.0, 1.5), 0.5);
    assert_eq!(super::gendy::mirror(0.0, 1.0, 0.5), 0.5);
}

#[test]
fn spring_rings_and_decays_with_damping() {
    let mut push = vec![0.0; 64 * 200];
    push[0] = 1000.0;
    let out = UnitHarness::new("Spring", Rate::Audio)
        .inputs([Audio(push), Const(10.0), Const(0.0001)])
        .run(200);
    let early = out[0][64..64 * 20].iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let late = out[0][64 * 180..].iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(early > 0.0 && late < early, "early {early}, late {late}");
}

/// A floor at 1 for the first sample (where the ball starts), then at 0.
fn dropped_floor(blocks: usize) -> Vec<f32> {
    let mut f = vec![0.0; 64 * blocks];
    f[0] = 1.0;
    f
}

#[test]
fn ball_falls_onto_the_floor_and_bounces() {
    let out = UnitHarness::new("Ball", Rate::Audio)
        .inputs([Audio(dropped_floor(1000)), Const(10.0), Const(0.2), Const(0.001)])
        .run(1000);
    let o = &out[0];
    // Gravity adds g / sr to the per-sample velocity: a fall of 1 takes sqrt(2 sr / g) samples.
    let landing = o.iter().position(|&v| v <= 0.01).expect("the ball never lands");
    assert!(landing.abs_diff(98) <= 2, "landed at {landing}");
    assert!(o[landing..].iter().any(|&v| v > 0.2), "no bounce");
    assert!(o.iter().all(|&v| v > -0.05));
}

#[test]
fn tball_emits_impulses_only_on_impact() {
    let out = UnitHarness::new("TBall", Rate::Audio)
        .inputs([Audio(dropped_floor(1000)), Const(10.0), Const(0.2), Const(0.001)])
        .run(1000);
    let hits: Vec<usize> = (0..out[0].len()).filter(|&i| out[0][i] != 0.0).collect();
    assert!(!hits.is_empty() && hits.len() < 20, "{} impacts", hits.len());
    assert!(hits[0].abs_diff(98) <= 2, "first impact at {}", hits[0]);
}
