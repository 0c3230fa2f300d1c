//! SinOsc batches keep their members' wires resolved across blocks
//! (`crate::batch::KeptBatch`): whatever happens to the wires between
//! blocks, every member computes what its unit alone does, bit for bit.

use super::SinOsc;
use crate::batch::new_kept_batch;
use crate::batch::tests_kept_support::{places, run_block, SynthWires};
use crate::testing::test_world;
use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, WireRef, Wires, NO_UNIT, SCRATCH};
use crate::world::SynthCtx;

/// Members per synth: enough together to cross the kernel's sixteen lanes.
const MEMBERS: [usize; 6] = [4, 6, 3, 1, 4, 7];

/// The rates of each synth's frequency and phase inputs: every mode of the
/// table phase (Kk twice), so that a queue mixes them.
const RATES: [(Rate, Rate); 6] = [
    (Rate::Control, Rate::Control),
    (Rate::Audio, Rate::Audio),
    (Rate::Audio, Rate::Control),
    (Rate::Control, Rate::Audio),
    (Rate::Audio, Rate::Scalar),
    (Rate::Control, Rate::Control),
];

/// The synths in the lane batch at each block, in order; the others run
/// alone. Synths join, leave and change places, so that each one's scratch
/// (its place in the batch) moves under its kept wires.
const ORDER: [&[usize]; 10] = [
    &[0, 1, 2],
    &[0, 1, 2, 3],
    &[3, 0, 2, 1],
    &[1, 3],
    &[0, 1, 2, 3, 4, 5],
    &[5, 4, 2, 0],
    &[5, 4, 2, 0],
    &[2],
    &[0, 1, 2, 3, 4, 5],
    &[0, 1, 2, 3, 4, 5],
];

fn noise(seed: &mut u32) -> f32 {
    *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    (*seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
}

/// Input `k` (0 frequency, 1 phase) of member j of synth s at block b, at
/// sample i: control values that move for a while and then hold (the
/// phase slope, and its end), audio values that wander.
fn value(s: usize, j: usize, k: usize, b: usize, seed: &mut u32) -> f32 {
    let audio = if k == 0 { RATES[s].0 } else { RATES[s].1 } == Rate::Audio;
    match (k, audio) {
        (0, false) => 110.0 + 37.0 * s as f32 + 13.0 * j as f32 + if s == 0 && b < 6 { 7.5 * b as f32 } else { 0.0 },
        (0, true) => 300.0 + 40.0 * s as f32 + 200.0 * noise(seed),
        (_, false) => 0.1 * j as f32 + if (2..5).contains(&b) && j % 2 == 0 { 0.3 * b as f32 } else { 0.0 },
        (_, true) => 3.0 * noise(seed),
    }
}

/// SinOsc batches run through `kept_batch_lanes` with synths joining and
/// leaving the batch, changing places and running alone between blocks,
/// and their controls moving, give every member's unit alone's output.
fn sinosc_batches_keep_their_wires(n: usize) {
    let rate = RateInfo::full(48_000.0, n);
    let mut world = test_world(n);
    let mut synth = SynthCtx::default();
    let mut done = vec![false; 1];
    let wire = |offset: usize, rate: Rate| WireRef { offset: offset as u32, rate, from_unit: NO_UNIT };
    // Synth s: its control inputs in its own array (two per member); its
    // members' outputs, then their audio inputs, in a scratch slice.
    let sl = 3 * n * MEMBERS.iter().max().unwrap();
    let mut own: Vec<Vec<f32>> = MEMBERS.iter().map(|m| vec![0.0f32; 2 * m]).collect();
    let mut scratch = vec![0.0f32; sl * (2 * MEMBERS.len() + 1)];
    let input = |s: usize, j: usize, k: usize| {
        let r = if k == 0 { RATES[s].0 } else { RATES[s].1 };
        if r == Rate::Audio {
            wire(SCRATCH as usize + n * (MEMBERS[s] + 2 * j + k), r)
        } else {
            wire(2 * j + k, r)
        }
    };
    let ins: Vec<Vec<WireRef>> =
        (0..MEMBERS.len()).map(|s| (0..MEMBERS[s]).flat_map(|j| [input(s, j, 0), input(s, j, 1)]).collect()).collect();
    let outs: Vec<Vec<WireRef>> = MEMBERS
        .iter()
        .map(|&m| (0..m).map(|j| WireRef { offset: SCRATCH + (n * j) as u32, rate: Rate::Audio, from_unit: 0 }).collect())
        .collect();
    // Each member alone: frequency at 0, phase at n, output at 2n.
    let alone_ins: Vec<[WireRef; 2]> = RATES.iter().map(|&(f, p)| [wire(0, f), wire(n, p)]).collect();
    let alone_out = [WireRef { offset: (2 * n) as u32, rate: Rate::Audio, from_unit: 0 }];
    let mut alone_wires: Vec<Vec<Vec<f32>>> = MEMBERS.iter().map(|&m| vec![vec![0.0f32; 3 * n]; m]).collect();
    let mut seed = 4242u32;
    let mut fill = |b: usize, places: &[usize], own: &mut [Vec<f32>], scratch: &mut [f32], alone: &mut [Vec<Vec<f32>>]| {
        for s in 0..MEMBERS.len() {
            for j in 0..MEMBERS[s] {
                for k in 0..2 {
                    let w = input(s, j, k);
                    let len = if w.rate == Rate::Audio { n } else { 1 };
                    let vals: Vec<f32> = (0..len).map(|_| value(s, j, k, b, &mut seed)).collect();
                    if w.rate == Rate::Audio {
                        let at = places[s] * sl + (w.offset & !SCRATCH) as usize;
                        scratch[at..at + n].copy_from_slice(&vals);
                    } else {
                        own[s][w.offset as usize] = vals[0];
                    }
                    alone[s][j][k * n..k * n + len].copy_from_slice(&vals);
                }
            }
        }
    };
    let first: Vec<usize> = (0..MEMBERS.len()).collect();
    fill(0, &first, &mut own, &mut scratch, &mut alone_wires);
    let mut batches: Vec<Box<dyn Unit>> = Vec::new();
    let mut alone: Vec<Vec<SinOsc>> = Vec::new();
    for s in 0..MEMBERS.len() {
        let m = MEMBERS[s];
        let spec = UnitSpec { name: "SinOsc", rate: Rate::Audio, special_index: 0, num_inputs: 2 * m, num_outputs: m, lanes: m };
        // SAFETY: the arrays hold every wire named, outputs apart.
        let mut io = unsafe { Wires::new(own[s].as_mut_ptr(), scratch.as_mut_ptr().add(s * sl), &ins[s], &outs[s], n, 1) };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        batches.push(new_kept_batch::<SinOsc>(&spec, &mut io, &mut cx));
        let member = UnitSpec { num_inputs: 2, num_outputs: 1, lanes: 1, ..spec };
        alone.push(
            (0..m)
                .map(|j| {
                    let w = alone_wires[s][j].as_mut_ptr();
                    // SAFETY: as above.
                    let mut io = unsafe { Wires::new(w, w, &alone_ins[s], &alone_out, n, 1) };
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
                    SinOsc::new(&member, &mut io, &mut cx)
                })
                .collect(),
        );
    }
    for (b, order) in ORDER.iter().enumerate() {
        let places = places(order, MEMBERS.len(), b);
        fill(b + 1, &places, &mut own, &mut scratch, &mut alone_wires);
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        let w = SynthWires { own: &mut own, scratch: &mut scratch, slice: sl, ins: &ins, outs: &outs };
        run_block::<SinOsc>(&mut batches, order, &places, w, &mut cx);
        for s in 0..MEMBERS.len() {
            for j in 0..MEMBERS[s] {
                let w = alone_wires[s][j].as_mut_ptr();
                // SAFETY: as above.
                let mut io = unsafe { Wires::new(w, w, &alone_ins[s], &alone_out, n, n) };
                let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
                alone[s][j].next(&mut io, &mut cx);
                let got = &scratch[places[s] * sl + n * j..][..n];
                let want = &alone_wires[s][j][2 * n..];
                for i in 0..n {
                    assert_eq!(got[i].to_bits(), want[i].to_bits(), "n {n}, block {b}, synth {s}, member {j}, sample {i}");
                }
            }
        }
    }
}

#[test]
fn sinosc_batches_keep_their_wires_across_blocks_as_synths_come_and_go() {
    for n in [64, 20, 66] {
        sinosc_batches_keep_their_wires(n);
    }
}

#[test]
fn sinosc_batches_in_blocks_shorter_than_a_vector_match_their_members_alone() {
    for n in [1, 2, 7] {
        sinosc_batches_keep_their_wires(n);
    }
}
