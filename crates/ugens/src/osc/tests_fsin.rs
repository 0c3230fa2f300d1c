//! FSinOsc batches keep their oscillators' wires resolved from block to
//! block: whatever those wires depend on may change between blocks (the
//! synth's wire array moved, another scratch area, another place in the
//! lane kernel, batches joining and leaving it, a block of one sample),
//! and every oscillator must still equal a lone FSinOsc bit for bit.

use crate::registry::Registry;
use crate::testing::test_world;
use crate::unit::{Lanes, Rate, Unit, UnitCtx, UnitSpec, WireRef, Wires, MAX_LANES, NO_UNIT, SCRATCH};
use crate::world::SynthCtx;

/// A small deterministic generator for the test's choices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// One batch of `k` oscillators as a synth holds it: its own array
/// (frequency, phase per oscillator), its outputs in a scratch area.
struct Member {
    unit: Box<dyn Unit>,
    own: Vec<f32>,
    inputs: Vec<WireRef>,
    outputs: Vec<WireRef>,
    /// Which of the scratch areas its outputs are in this block.
    area: usize,
    /// Each oscillator alone: unit, its own array (frequency, phase,
    /// output).
    alone: Vec<(Box<dyn Unit>, Vec<f32>)>,
}

const AREAS: usize = 3;

fn freq(r: &mut Rng) -> f32 {
    [50.0, 440.0, 1234.5, 8000.0, 0.0, -300.0][r.below(6)]
}

#[test]
fn fsinosc_batches_with_wires_that_move_match_lone_oscillators() {
    let registry = Registry::with_all();
    let batch = registry.batch("FSinOsc").expect("a batch").ctor;
    let lone = registry.get("FSinOsc").expect("registered");
    let kernel = registry.batch_lanes("FSinOsc").expect("a batch lane kernel");
    for bs in [64usize, 20, 1] {
        let mut r = Rng(bs as u64 * 7919 + 1);
        let mut world = test_world(bs);
        let mut synth = SynthCtx { node_id: 1000, done_actions: Vec::with_capacity(16), ..Default::default() };
        let full = world.full_rate;
        let mut done = vec![false; 1];
        // Members of 1 to 9 oscillators: whole quads and partial ones.
        let sizes = [4usize, 3, 5, 1, 8, 9, 2, 4, 6, 4, 7, 4, 1, 4, 3, 4, 4, 2];
        let slot = 9 * bs;
        let mut areas: Vec<Vec<f32>> = (0..AREAS).map(|_| vec![0.0; MAX_LANES * slot]).collect();
        let mut members: Vec<Member> = Vec::new();
        for (m, &k) in sizes.iter().enumerate() {
            let mut own = Vec::new();
            let mut inputs = Vec::new();
            for _ in 0..k {
                inputs.push(WireRef { offset: own.len() as u32, rate: Rate::Control, from_unit: 0 });
                own.push(freq(&mut r));
                inputs.push(WireRef { offset: own.len() as u32, rate: Rate::Scalar, from_unit: NO_UNIT });
                own.push(0.1 * r.below(30) as f32);
            }
            let outputs: Vec<WireRef> =
                (0..k).map(|l| WireRef { offset: SCRATCH | (m % MAX_LANES * slot + l * bs) as u32, rate: Rate::Audio, from_unit: 1 }).collect();
            let spec = UnitSpec { name: "FSinOsc", rate: Rate::Audio, special_index: 0, num_inputs: 2 * k, num_outputs: k, lanes: k };
            let area = r.below(AREAS);
            // SAFETY: the arrays hold every wire named, without overlap.
            let mut io = unsafe { Wires::new(own.as_mut_ptr(), areas[area].as_mut_ptr(), &inputs, &outputs, bs, 1) };
            let mut cx = UnitCtx::new(&mut world, &mut synth, &full, &mut done, 0);
            let unit = batch(&spec, &mut io, &mut cx);
            let alone = (0..k)
                .map(|l| {
                    let mut w = vec![own[2 * l], own[2 * l + 1], 0.0];
                    let ins = [WireRef { offset: 0, rate: Rate::Control, from_unit: 0 }, WireRef { offset: 1, rate: Rate::Scalar, from_unit: NO_UNIT }];
                    let outs = [WireRef { offset: 2, rate: Rate::Audio, from_unit: 1 }];
                    let one = UnitSpec { lanes: 1, num_inputs: 2, num_outputs: 1, ..spec };
                    // SAFETY: as above; the output wire is one sample, as
                    // construction writes.
                    let mut io = unsafe { Wires::new(w.as_mut_ptr(), std::ptr::null_mut(), &ins, &outs, bs, 1) };
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &full, &mut done, 0);
                    let u = lone(&one, &mut io, &mut cx);
                    let first = areas[area][(outputs[l].offset & !SCRATCH) as usize];
                    assert_eq!(first.to_bits(), w[2].to_bits(), "block size {bs}: member {m} oscillator {l}: first sample");
                    w.resize(2 + bs, 0.0);
                    (u, w)
                })
                .collect();
            members.push(Member { unit, own, inputs, outputs, area, alone });
        }
        for block in 0..40 {
            // This block's batches, in a shuffled order (another place in
            // the kernel's lanes), some left out, at most a kernel's worth.
            let mut order: Vec<usize> = (0..members.len()).filter(|_| r.below(5) != 0).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, r.below(i + 1));
            }
            order.truncate(MAX_LANES);
            for &m in &order {
                let mb = &mut members[m];
                match r.below(6) {
                    // The synth's array moves (same values).
                    0 => mb.own = mb.own.clone(),
                    // Its outputs are in another scratch area.
                    1 => mb.area = r.below(AREAS),
                    _ => {}
                }
                if r.below(3) == 0 {
                    let l = r.below(mb.alone.len());
                    let f = freq(&mut r);
                    mb.own[2 * l] = f;
                    mb.alone[l].1[0] = f;
                }
            }
            // Members in distinct slots of their areas: lanes of one area
            // must not share outputs.
            let mut used = [[false; MAX_LANES]; AREAS];
            order.retain(|&m| {
                let s = m % MAX_LANES;
                let a = members[m].area;
                !std::mem::replace(&mut used[a][s], true)
            });
            let area_ptrs: Vec<*mut f32> = areas.iter_mut().map(|a| a.as_mut_ptr()).collect();
            if r.below(4) == 0 {
                // One at a time, each through its own `next`.
                for &m in &order {
                    let mb = &mut members[m];
                    // SAFETY: as above.
                    let mut io = unsafe { Wires::new(mb.own.as_mut_ptr(), area_ptrs[mb.area], &mb.inputs, &mb.outputs, bs, bs) };
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &full, &mut done, 0);
                    mb.unit.next(&mut io, &mut cx);
                }
            } else {
                let mut lanes = Lanes::new();
                let all = members.as_mut_ptr();
                for &m in &order {
                    // SAFETY: `order` holds distinct members, each borrowed
                    // once, until the kernel has run.
                    let mb = unsafe { &mut *all.add(m) };
                    // SAFETY: as above; each member's outputs are its own
                    // slot of its area.
                    let io = unsafe { Wires::new(mb.own.as_mut_ptr(), area_ptrs[mb.area], &mb.inputs, &mb.outputs, bs, bs) };
                    lanes.push(mb.unit.as_mut(), io);
                }
                kernel(&mut lanes, &full);
            }
            for &m in &order {
                let mb = &mut members[m];
                for (l, (u, w)) in mb.alone.iter_mut().enumerate() {
                    let ins = [WireRef { offset: 0, rate: Rate::Control, from_unit: 0 }, WireRef { offset: 1, rate: Rate::Scalar, from_unit: NO_UNIT }];
                    let outs = [WireRef { offset: 2, rate: Rate::Audio, from_unit: 1 }];
                    // SAFETY: as above.
                    let mut io = unsafe { Wires::new(w.as_mut_ptr(), std::ptr::null_mut(), &ins, &outs, bs, bs) };
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &full, &mut done, 0);
                    u.next(&mut io, &mut cx);
                    let at = (mb.outputs[l].offset & !SCRATCH) as usize;
                    let got = &areas[mb.area][at..at + bs];
                    for (i, (a, b)) in got.iter().zip(&w[2..]).enumerate() {
                        assert!(a.to_bits() == b.to_bits(), "block size {bs}, block {block}: member {m} oscillator {l} sample {i}: {a} vs alone {b}");
                    }
                }
            }
        }
    }
}
