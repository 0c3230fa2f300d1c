use super::{ifold, imod, iwrap};
use crate::common::wavetable::signal_as_wavetable;
use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;

fn with_table(mut h: UnitHarness, bufnum: usize, data: &[f32]) -> UnitHarness {
    let mut b = SndBuf::new(data.len() as u32, 1, 48_000.0);
    b.data.copy_from_slice(data);
    h.world.buffers[bufnum] = b;
    h
}

fn table_unit(name: &str, rate: Rate, index: TestInput, data: &[f32]) -> UnitHarness {
    let h = UnitHarness::new(name, rate).input(TestInput::Const(0.0)).input(index);
    with_table(h, 0, data)
}

const TABLE: [f32; 5] = [10.0, 20.0, 30.0, 40.0, 50.0];

#[test]
fn integer_wrap_and_fold_stay_in_range() {
    assert_eq!(imod(-1, 5), 4);
    assert_eq!(imod(12, 5), 2);
    assert_eq!(imod(7, 0), 0);
    assert_eq!(iwrap(-6, 0, 4), 4);
    assert_eq!(ifold(5, 0, 4), 3);
    assert_eq!(ifold(-2, 0, 4), 2);
    assert_eq!(ifold(9, 0, 4), 1);
}

#[test]
fn index_clips_to_the_table_ends() {
    let sig = vec![-3.0, 0.0, 2.7, 4.0, 99.0];
    let out = table_unit("Index", Rate::Audio, TestInput::Audio(sig), &TABLE).run(1);
    assert_eq!(&out[0][..5], &[10.0, 10.0, 30.0, 50.0, 50.0]);
}

#[test]
fn index_l_interpolates_between_neighbours() {
    let out = table_unit("IndexL", Rate::Audio, TestInput::Audio(vec![1.25, 3.5, 4.5]), &TABLE).run(1);
    assert_eq!(out[0][0], 22.5);
    assert_eq!(out[0][1], 45.0);
    // Past the last entry the neighbour is the last entry again.
    assert_eq!(out[0][2], 50.0);
}

#[test]
fn wrap_and_fold_index_walk_past_the_ends_differently() {
    let sig = vec![5.0, 6.0, -1.0];
    let wrap = table_unit("WrapIndex", Rate::Audio, TestInput::Audio(sig.clone()), &TABLE).run(1);
    assert_eq!(&wrap[0][..3], &[10.0, 20.0, 50.0]);
    let fold = table_unit("FoldIndex", Rate::Audio, TestInput::Audio(sig), &TABLE).run(1);
    assert_eq!(&fold[0][..3], &[40.0, 30.0, 20.0]);
}

#[test]
fn index_in_between_inverts_a_rising_table() {
    let out = table_unit("IndexInBetween", Rate::Audio, TestInput::Audio(vec![25.0, 5.0, 70.0]), &TABLE).run(1);
    assert_eq!(&out[0][..3], &[1.5, 0.0, 4.0]);
}

#[test]
fn detect_index_finds_exact_values_only() {
    let out = table_unit("DetectIndex", Rate::Audio, TestInput::Audio(vec![30.0, 30.5, 50.0]), &TABLE).run(1);
    assert_eq!(&out[0][..3], &[2.0, -1.0, 4.0]);
}

#[test]
fn degree_to_key_adds_octaves_outside_the_scale() {
    let scale = [0.0, 2.0, 4.0, 5.0, 7.0, 9.0, 11.0];
    let h = UnitHarness::new("DegreeToKey", Rate::Audio)
        .input(TestInput::Const(0.0))
        .input(TestInput::Audio(vec![2.0, 7.0, 9.5, -1.0]))
        .input(TestInput::Const(12.0));
    let out = with_table(h, 0, &scale).run(1);
    assert_eq!(&out[0][..4], &[4.0, 12.0, 16.0, -1.0]);
}

#[test]
fn shaper_with_an_identity_transfer_passes_the_signal() {
    // A straight line from -1 to 1 as the transfer function.
    let n = 256;
    let line: Vec<f32> = (0..n).map(|i| -1.0 + 2.0 * i as f32 / n as f32).collect();
    let mut wt = vec![0.0; 2 * n];
    signal_as_wavetable(&line, &mut wt);
    let sig: Vec<f32> = (0..64).map(|i| (i as f32 / 64.0 - 0.5) * 1.5).collect();
    let out = table_unit("Shaper", Rate::Audio, TestInput::Audio(sig.clone()), &wt).run(1);
    for (o, x) in out[0].iter().zip(&sig) {
        assert!((o - x).abs() < 0.02, "{o} vs {x}");
    }
}

#[test]
fn missing_buffer_gives_silence() {
    let h = UnitHarness::new("Index", Rate::Audio).input(TestInput::Const(3.0)).input(TestInput::Const(1.0));
    let out = h.run(2);
    assert!(out[0].iter().all(|&x| x == 0.0));
}
