//! FreeVerb and FreeVerb2.

use crate::testing::{TestInput, ar, ar_outputs, peak};
use TestInput::{Audio, Const};

const SR: f64 = 48_000.0;
const BS: usize = 64;
const SECOND: usize = 750;

fn impulse(len: usize) -> TestInput {
    let mut v = vec![0.0; len];
    v[0] = 1.0;
    Audio(v)
}

#[test]
fn freeverb_dry_mix_passes_the_input_through() {
    let input: Vec<f32> = (0..50 * BS).map(|i| ((i as f32) * 0.01).sin()).collect();
    let out = ar("FreeVerb", vec![Audio(input.clone()), Const(0.0), Const(0.5), Const(0.5)], 50);
    assert_eq!(out, input);
}

#[test]
fn freeverb_tail_lasts_longer_with_a_bigger_room() {
    let tail = |room: f32| {
        let out = ar("FreeVerb", vec![impulse(SECOND * BS), Const(1.0), Const(room), Const(0.5)], SECOND);
        let s = (0.5 * SR) as usize;
        peak(&out[s..s + 4800])
    };
    let (small, big) = (tail(0.1), tail(0.9));
    assert!(big > 10.0 * small, "{big} vs {small}");
    assert!(big > 0.0);
}

#[test]
fn freeverb_wet_output_starts_after_the_shortest_comb() {
    let out = ar("FreeVerb", vec![impulse(40 * BS), Const(1.0), Const(0.5), Const(0.5)], 40);
    let first = out.iter().position(|&x| x != 0.0).unwrap();
    // The shortest comb (1116 samples) plus the allpass chain's first tap.
    assert!((1000..1200).contains(&first), "{first}");
}

#[test]
fn freeverb2_channels_differ_but_match_freeverb_energy() {
    let r = ar_outputs(
        "FreeVerb2",
        vec![impulse(200 * BS), impulse(200 * BS), Const(1.0), Const(0.7), Const(0.3)],
        2,
        200,
    );
    let (l, rr) = (&r.outputs[0], &r.outputs[1]);
    assert_ne!(l, rr, "the right channel's lines are longer");
    let e = |s: &[f32]| s.iter().map(|&x| (x * x) as f64).sum::<f64>();
    let ratio = e(l) / e(rr);
    assert!((0.5..2.0).contains(&ratio), "{ratio}");
}
