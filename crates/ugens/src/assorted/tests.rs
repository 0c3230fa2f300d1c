use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;

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

#[test]
fn ienvgen_reads_a_linear_envelope_at_its_index() {
    // Two stages: 0 -> 1 over 1 s, 1 -> 0.5 over 1 s, linear.
    let env = [0.0, 0.0, 2.0, 2.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.5];
    let mut ins = vec![TestInput::Control(vec![0.5, 1.5, 3.0])];
    ins.extend(env.iter().map(|&v| TestInput::Const(v)));
    let out = UnitHarness::new("IEnvGen", Rate::Control).inputs(ins).run(3);
    assert_eq!(out[0], vec![0.5, 0.75, 0.5]);
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

#[test]
fn deltap_reads_back_what_was_written() {
    let mut h = UnitHarness::new("DelTapWr", Rate::Audio)
        .inputs([TestInput::Const(0.0), TestInput::Audio((0..256).map(|i| i as f32).collect())]);
    h.world.buffers[0] = SndBuf::new(1024, 1, 48_000.0);
    let out = h.run(2);
    // The output is the write position as integer bits; the constructor wrote position 0.
    assert_eq!(out[0][0].to_bits(), 1);
    assert_eq!(out[0][70].to_bits(), 71);
}
