//! The lane kernels of Out and ReplaceOut against the units run one after
//! another: what every bus holds after every block, bit for bit, with
//! lanes that share a bus (mixed in lane order), lanes of their own, bus
//! numbers out of range or changing, one and two channels, control- and
//! audio-rate signals.

use crate::registry::Registry;
use crate::testing::{fill_inputs, TestInput};
use crate::unit::{Lanes, Rate, Unit, UnitCtx, UnitSpec, WireRef, Wires, MAX_LANES, NO_UNIT};
use crate::world::{SynthCtx, World};
use TestInput::{Audio, Const, Control};

const BLOCKS: usize = 10;

/// The audio buses after every block, the units of `lanes` run one after
/// another (`per_call` None) or through the lane kernel, `per_call` lanes
/// a call.
fn buses(name: &str, lanes: &[Vec<TestInput>], block_size: usize, per_call: Option<usize>) -> Vec<Vec<f32>> {
    let registry = Registry::with_all();
    let ctor = registry.get(name).expect("registered");
    let kernel = registry.lane_kernel(name, 0, false).expect("an ordered lane kernel");
    let mut world = World::new(48_000.0, block_size, 16, 64, 4, 2, 2, 12345);
    let mut synth = SynthCtx { node_id: 1000, done_actions: Vec::with_capacity(16), ..Default::default() };
    let bs = block_size;
    let mut wires: Vec<f32> = Vec::new();
    let mut in_refs: Vec<Vec<WireRef>> = Vec::new();
    for inputs in lanes {
        let mut refs = Vec::new();
        for i in inputs {
            let r = TestInput::rate(i);
            refs.push(WireRef { offset: wires.len() as u32, rate: r, from_unit: NO_UNIT });
            wires.extend(std::iter::repeat_n(0.0, if r == Rate::Audio { bs } else { 1 }));
        }
        in_refs.push(refs);
    }
    let fill = |wires: &mut Vec<f32>, block: usize| {
        for (l, inputs) in lanes.iter().enumerate() {
            fill_inputs(inputs, &in_refs[l], wires, block, bs);
        }
    };
    let rate = world.full_rate;
    let mut done = vec![false; 1];
    fill(&mut wires, 0);
    let mut units: Vec<Box<dyn Unit>> = Vec::new();
    for (l, inputs) in lanes.iter().enumerate() {
        let spec = UnitSpec { name, rate: Rate::Audio, special_index: 0, num_inputs: inputs.len(), num_outputs: 0, lanes: 1 };
        // SAFETY: the wire array holds every wire, laid out without overlap.
        let mut io = unsafe { Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &in_refs[l], &[], bs, 1) };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        units.push(ctor(&spec, &mut io, &mut cx));
    }
    let mut after = Vec::new();
    for b in 0..BLOCKS {
        world.buf_counter += 1;
        // What the buses held before: stale values every write must replace first.
        world.audio_bus.iter_mut().enumerate().for_each(|(i, x)| *x = (b * 1000 + i) as f32 * 0.5);
        fill(&mut wires, b);
        let base = wires.as_mut_ptr();
        // SAFETY: as above; the units write no wire.
        let io = |l: usize| unsafe { Wires::new(base, std::ptr::null_mut(), &in_refs[l], &[], bs, bs) };
        match per_call {
            None => {
                for (l, unit) in units.iter_mut().enumerate() {
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
                    unit.next(&mut io(l), &mut cx);
                }
            }
            Some(per_call) => {
                for (c, chunk) in units.chunks_mut(per_call).enumerate() {
                    let mut group = Lanes::new();
                    for (j, unit) in chunk.iter_mut().enumerate() {
                        group.push(unit.as_mut(), io(c * per_call + j));
                    }
                    group.world = &mut world;
                    kernel(&mut group, &rate);
                }
            }
        }
        after.push(world.audio_bus.clone());
    }
    after
}

fn wander(center: f32, depth: f32, seed: u32) -> TestInput {
    let s = seed as f32;
    Audio((0..64 * BLOCKS).map(|i| center + depth * (i as f32 * (0.01 + 0.003 * s) + s).sin()).collect())
}

/// Lanes as synths of one def write them: many to bus 0 (mixed in order),
/// others to buses of their own, a bus number that moves in and out of
/// range, NaN, a control-rate signal.
fn lanes(channels: usize) -> Vec<Vec<TestInput>> {
    let mut lanes = Vec::new();
    let sig = |k: u32| (0..channels as u32).map(move |c| wander(0.1 * c as f32, 0.7, 3 * k + c));
    for k in 0..7u32 {
        lanes.push(std::iter::once(Const(0.0)).chain(sig(k)).collect());
    }
    for k in 7..12u32 {
        lanes.push(std::iter::once(Const(2.0 + k as f32)).chain(sig(k)).collect());
    }
    lanes.push(std::iter::once(Control(vec![3.0, 3.0, 40.0, -1.0, f32::NAN, 15.0, 14.5, 0.0])).chain(sig(12)).collect());
    lanes.push(std::iter::once(Const(0.0)).chain((0..channels).map(|c| Control(vec![0.5 + c as f32, -0.0, f32::INFINITY]))).collect());
    lanes.push(std::iter::once(Const(1e9)).chain(sig(13)).collect());
    for k in 14..19u32 {
        lanes.push(std::iter::once(Const(1.0)).chain(sig(k)).collect());
    }
    lanes.push(std::iter::once(Const(0.0)).chain(sig(19)).collect());
    lanes
}

#[test]
fn out_lanes_mix_into_the_buses_as_the_units_in_order() {
    for name in ["Out", "ReplaceOut"] {
        for channels in [1, 2] {
            let lanes = lanes(channels);
            for block_size in [64, 20] {
                let want = buses(name, &lanes, block_size, None);
                for per_call in [MAX_LANES, 6, 1] {
                    let got = buses(name, &lanes, block_size, Some(per_call));
                    for (b, (g, w)) in got.iter().zip(&want).enumerate() {
                        for (i, (x, y)) in g.iter().zip(w).enumerate() {
                            assert!(
                                x.to_bits() == y.to_bits(),
                                "{name}, {channels} channels, block size {block_size}, {per_call} a call: block {b}, bus sample {i}: {x} vs {y}"
                            );
                        }
                    }
                }
            }
        }
    }
}
