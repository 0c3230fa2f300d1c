//! Section batches (a bank of one section inside one synth, six `Ringz`
//! on one source) keep their members' wires resolved across blocks
//! (`crate::batch::KeptBatch`): whatever happens to the wires between
//! blocks, every member computes what its unit alone does, bit for bit.

use super::twopole::{BpfDesign, Design, RingzDesign, RlpfDesign, Section};
use crate::batch::tests_kept_support::{places, run_block, SynthWires};
use crate::batch::{new_kept_batch, KeptBatch};
use crate::testing::test_world;
use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, WireRef, Wires, NO_UNIT, SCRATCH};
use crate::world::SynthCtx;

/// Members per synth: banks of six, three and one, enough together to
/// cross the kernel's sixteen lanes.
const MEMBERS: [usize; 5] = [6, 6, 3, 1, 6];

/// The synths in the lane batch at each block, in order; the others run
/// alone. Synths join, leave and change places, so that each one's
/// scratch (its place in the batch) moves under its kept wires.
const ORDER: [&[usize]; 9] =
    [&[0, 1, 2], &[0, 1, 2, 3], &[3, 0, 2, 1], &[1, 3], &[0, 1, 2, 3, 4], &[4, 2, 0], &[4, 2, 0], &[2], &[0, 1, 2, 3, 4]];

fn noise(seed: &mut u32) -> f32 {
    *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    (*seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
}

/// Parameters of member j of synth s at block b: some glide from block
/// to block for a while, then hold (the kernel's moving and fixed
/// passes, and the change between them).
fn params(s: usize, j: usize, b: usize, base: [f32; 2]) -> [f32; 2] {
    let sweep = if s == 1 && (2..5).contains(&b) { 40.0 * b as f32 } else { 0.0 };
    let sweep4 = if s == 4 && j % 2 == 0 && b < 6 { 13.0 * b as f32 } else { 0.0 };
    let decay = if s == 0 && b == 5 { 0.05 } else { 0.0 };
    // A held lane beside gliding ones whose coefficients are zeros of
    // either sign (a Ringz with no decay): its steps must not touch them.
    let second = if s == 4 && j == 1 { 0.0 } else { base[1] + 0.01 * j as f32 + decay };
    [base[0] + 97.0 * s as f32 + 31.0 * j as f32 + sweep + sweep4, second]
}

/// Section batches run through `kept_batch_lanes` with synths
/// joining and leaving the batch, changing places and running alone
/// between blocks, give every member's unit run alone's output and
/// state, bit for bit.
fn batches_keep_their_wires_across_blocks<D: Design>(base: [f32; 2], sizes: &[usize]) {
    for &n in sizes {
        let rate = RateInfo::full(48_000.0, n);
        let mut world = test_world(n);
        let mut synth = SynthCtx::default();
        let mut done = vec![false; 1];
        let audio = |offset: usize| WireRef { offset: offset as u32, rate: Rate::Audio, from_unit: 0 };
        let control = |offset: usize| WireRef { offset: offset as u32, rate: Rate::Control, from_unit: NO_UNIT };
        // Synth s: its parameters in its own array; its source and its
        // members' outputs in a scratch slice of `sl` samples.
        let sls: Vec<usize> = MEMBERS.iter().map(|m| n * (1 + m)).collect();
        let sl = *sls.iter().max().unwrap();
        let mut own: Vec<Vec<f32>> = MEMBERS.iter().map(|m| vec![0.0f32; 2 * m]).collect();
        let mut scratch = vec![0.0f32; sl * (2 * MEMBERS.len() + 1)];
        let ins: Vec<Vec<WireRef>> = MEMBERS
            .iter()
            .map(|&m| {
                (0..m).flat_map(|j| [audio(SCRATCH as usize), control(2 * j), control(2 * j + 1)]).collect()
            })
            .collect();
        let outs: Vec<Vec<WireRef>> =
            MEMBERS.iter().map(|&m| (0..m).map(|j| audio(SCRATCH as usize + n * (1 + j))).collect()).collect();
        // Each member alone: source, two parameters, output.
        let alone_in = [audio(0), control(n), control(n + 1)];
        let alone_out = [audio(n + 2)];
        let mut alone_wires: Vec<Vec<Vec<f32>>> = MEMBERS.iter().map(|&m| vec![vec![0.0f32; 2 * n + 2]; m]).collect();
        let mut seed = 777u32;
        let mut fill = |b: usize, places: &[usize], own: &mut [Vec<f32>], scratch: &mut [f32], alone: &mut [Vec<Vec<f32>>]| {
            for s in 0..MEMBERS.len() {
                let src: Vec<f32> = (0..n).map(|_| noise(&mut seed)).collect();
                let at = places[s] * sl;
                scratch[at..at + n].copy_from_slice(&src);
                for j in 0..MEMBERS[s] {
                    let p = params(s, j, b, base);
                    own[s][2 * j..2 * j + 2].copy_from_slice(&p);
                    alone[s][j][..n].copy_from_slice(&src);
                    alone[s][j][n..n + 2].copy_from_slice(&p);
                }
            }
        };
        // Places before the first block: synth s at slice s.
        let first: Vec<usize> = (0..MEMBERS.len()).collect();
        fill(0, &first, &mut own, &mut scratch, &mut alone_wires);
        let mut batches: Vec<Box<dyn Unit>> = Vec::new();
        let mut alone: Vec<Vec<Section<D>>> = Vec::new();
        for s in 0..MEMBERS.len() {
            let m = MEMBERS[s];
            let spec = UnitSpec { name: "section", rate: Rate::Audio, special_index: 0, num_inputs: 3 * m, num_outputs: m, lanes: m };
            // SAFETY: the arrays hold every wire named, outputs apart.
            let mut io = unsafe { Wires::new(own[s].as_mut_ptr(), scratch.as_mut_ptr().add(s * sl), &ins[s], &outs[s], n, 1) };
            let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
            batches.push(new_kept_batch::<Section<D>>(&spec, &mut io, &mut cx));
            let member = UnitSpec { num_inputs: 3, num_outputs: 1, lanes: 1, ..spec };
            alone.push(
                (0..m)
                    .map(|j| {
                        let w = alone_wires[s][j].as_mut_ptr();
                        // SAFETY: as above.
                        let mut io = unsafe { Wires::new(w, w, &alone_in, &alone_out, n, 1) };
                        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
                        Section::<D>::new(&member, &mut io, &mut cx)
                    })
                    .collect(),
            );
        }
        for (b, order) in ORDER.iter().enumerate() {
            let places = places(order, MEMBERS.len(), b);
            fill(b + 1, &places, &mut own, &mut scratch, &mut alone_wires);
            let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
            let w = SynthWires { own: &mut own, scratch: &mut scratch, slice: sl, ins: &ins, outs: &outs };
            run_block::<Section<D>>(&mut batches, order, &places, w, &mut cx);
            for s in 0..MEMBERS.len() {
                for j in 0..MEMBERS[s] {
                    let w = alone_wires[s][j].as_mut_ptr();
                    // SAFETY: as above.
                    let mut io = unsafe { Wires::new(w, w, &alone_in, &alone_out, n, n) };
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
                    alone[s][j].next(&mut io, &mut cx);
                    let got = &scratch[places[s] * sl + n * (1 + j)..][..n];
                    let want = &alone_wires[s][j][n + 2..];
                    for i in 0..n {
                        assert_eq!(got[i].to_bits(), want[i].to_bits(), "n {n}, block {b}, synth {s}, member {j}, sample {i}");
                    }
                }
                let batch = batches[s].as_any_mut().downcast_mut::<KeptBatch<Section<D>>>().unwrap();
                for j in 0..MEMBERS[s] {
                    assert_eq!(batch.members()[j].state_bits(), alone[s][j].state_bits(), "n {n}, block {b}, synth {s}, member {j}");
                }
            }
        }
    }
}

/// Block sizes of whole quads, of a tile and a half and of a part quad.
const SIZES: [usize; 3] = [64, 20, 66];

/// Blocks shorter than a quad; in one-sample blocks a filter with a
/// one-sample form (RLPF, BPF) takes its new coefficients at once.
const SHORT: [usize; 4] = [1, 2, 3, 5];

#[test]
fn ringz_batches_keep_their_wires_across_blocks_as_synths_come_and_go() {
    batches_keep_their_wires_across_blocks::<RingzDesign>([150.0, 0.2], &SIZES);
}

#[test]
fn rlpf_batches_keep_their_wires_across_blocks_as_synths_come_and_go() {
    batches_keep_their_wires_across_blocks::<RlpfDesign>([400.0, 0.5], &SIZES);
}

#[test]
fn batches_in_blocks_shorter_than_a_quad_match_their_members_alone() {
    batches_keep_their_wires_across_blocks::<RingzDesign>([150.0, 0.2], &SHORT);
    batches_keep_their_wires_across_blocks::<RlpfDesign>([400.0, 0.5], &SHORT);
    batches_keep_their_wires_across_blocks::<BpfDesign>([700.0, 0.3], &SHORT);
}
