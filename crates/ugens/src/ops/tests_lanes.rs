//! The lane kernels of Sum3, Sum4 and BinaryOpUGen's operators against the
//! units run alone: every sample of every lane, bit for bit, with lanes of
//! different input rates and values in one call, whole and part-filled
//! calls, at block sizes 64 and 20.

use crate::registry::Registry;
use crate::testing::{fill_inputs, test_world, TestInput, UnitHarness};
use crate::unit::{Lanes, Rate, Unit, UnitCtx, UnitSpec, WireRef, Wires, MAX_LANES, NO_UNIT};
use crate::world::SynthCtx;
use TestInput::{Audio, Const, Control};

const BLOCKS: usize = 12;

/// The unit alone: the value its constructor wrote, then every block.
fn alone(name: &str, special: i16, inputs: &[TestInput], block_size: usize) -> Vec<f32> {
    let mut h = UnitHarness::new(name, Rate::Audio).special(special).inputs(inputs.to_vec());
    h.world = test_world(block_size);
    let run = h.run_full(BLOCKS);
    let mut all = run.initial;
    all.extend_from_slice(&run.outputs[0]);
    all
}

/// Every lane's output (the constructor's value, then every block), the
/// units run through the step's lane kernel, `per_call` lanes a call.
fn together(name: &str, special: i16, lanes: &[Vec<TestInput>], block_size: usize, per_call: usize) -> Vec<Vec<f32>> {
    let registry = Registry::with_all();
    let kernel = registry.lane_kernel(name, special, true).expect("a lane kernel");
    let ctor = registry.get(name).expect("registered");
    let mut world = test_world(block_size);
    let mut synth = SynthCtx { node_id: 1000, done_actions: Vec::with_capacity(16), ..Default::default() };
    let bs = block_size;
    let mut wires: Vec<f32> = Vec::new();
    let (mut in_refs, mut out_refs) = (Vec::new(), Vec::new());
    for inputs in lanes {
        for i in inputs {
            let r = TestInput::rate(i);
            in_refs.push(WireRef { offset: wires.len() as u32, rate: r, from_unit: NO_UNIT });
            wires.extend(std::iter::repeat_n(0.0, if r == Rate::Audio { bs } else { 1 }));
        }
        out_refs.push(WireRef { offset: wires.len() as u32, rate: Rate::Audio, from_unit: 0 });
        wires.extend(std::iter::repeat_n(0.0, bs));
    }
    let ni = lanes[0].len();
    let fill = |wires: &mut Vec<f32>, block: usize| {
        for (l, inputs) in lanes.iter().enumerate() {
            fill_inputs(inputs, &in_refs[l * ni..(l + 1) * ni], wires, block, bs);
        }
    };
    let unit_rate = world.full_rate;
    let mut done = vec![false; 1];
    fill(&mut wires, 0);
    let mut units: Vec<Box<dyn Unit>> = Vec::new();
    for l in 0..lanes.len() {
        let spec = UnitSpec { name, rate: Rate::Audio, special_index: special, num_inputs: ni, num_outputs: 1, lanes: 1 };
        // SAFETY: the wire array holds every wire, laid out without overlap.
        let mut io = unsafe {
            Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &in_refs[l * ni..(l + 1) * ni], &out_refs[l..l + 1], bs, 1)
        };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &unit_rate, &mut done, 0);
        units.push(ctor(&spec, &mut io, &mut cx));
    }
    let mut outputs: Vec<Vec<f32>> = out_refs.iter().map(|w| vec![wires[w.offset as usize]]).collect();
    for b in 0..BLOCKS {
        fill(&mut wires, b);
        let base = wires.as_mut_ptr();
        for (c, chunk) in units.chunks_mut(per_call).enumerate() {
            let mut group = Lanes::new();
            for (j, unit) in chunk.iter_mut().enumerate() {
                let l = c * per_call + j;
                // SAFETY: as above; each lane's wires are its own.
                let io = unsafe {
                    Wires::new(base, std::ptr::null_mut(), &in_refs[l * ni..(l + 1) * ni], &out_refs[l..l + 1], bs, bs)
                };
                group.push(unit.as_mut(), io);
            }
            kernel(&mut group, &unit_rate);
        }
        for (o, w) in outputs.iter_mut().zip(&out_refs) {
            let s = w.offset as usize;
            o.extend_from_slice(&wires[s..s + bs]);
        }
    }
    outputs
}

/// Runs `lanes` through the kernel at two block sizes (one not a multiple
/// of eight), all in one call and in part-filled calls, and checks each
/// lane against its unit alone.
fn check(name: &str, special: i16, lanes: &[Vec<TestInput>]) {
    for block_size in [64, 20] {
        let want: Vec<Vec<f32>> = lanes.iter().map(|l| alone(name, special, l, block_size)).collect();
        for per_call in [MAX_LANES, 5, 1] {
            let got = together(name, special, lanes, block_size, per_call);
            for (l, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.len(), w.len());
                for (i, (a, b)) in g.iter().zip(w).enumerate() {
                    assert!(
                        a.to_bits() == b.to_bits(),
                        "{name} {special} block size {block_size}, {per_call} a call: lane {l} ({:?}) sample {i}: {a} vs alone {b}",
                        lanes[l].iter().map(TestInput::rate).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

/// A wandering audio signal around `center`, different per `seed`.
fn wander(center: f32, depth: f32, seed: u32) -> TestInput {
    TestInput::wandering(center, depth, seed, 64 * BLOCKS)
}

/// A control input that steps every `every` blocks.
fn steps(start: f32, by: f32, every: usize) -> TestInput {
    TestInput::stepping(start, by, every, BLOCKS)
}

/// Audio input values a kernel must treat exactly as the unit does, far
/// outside the usual range: huge, negative, infinite, NaN, signed zeros.
fn wild(shift: usize) -> TestInput {
    let vals = [1e12f32, -3e9, f32::INFINITY, f32::NAN, -0.0, 5e4, f32::NEG_INFINITY, 2.5e-39];
    Audio((0..64 * BLOCKS).map(|i| if (i + shift) % 37 < 8 { vals[(i + shift) % 8] } else { 0.3 - i as f32 * 1e-3 }).collect())
}

/// Lanes of `inputs` inputs: every input audio in most, the later inputs
/// at control rate or constant in others (sclang sorts a Mix's inputs by
/// rate, the audio ones first).
fn sum_lanes(inputs: usize) -> Vec<Vec<TestInput>> {
    let mut lanes = Vec::new();
    for k in 0..9u32 {
        lanes.push((0..inputs as u32).map(|i| wander(0.1 * i as f32, 0.5, 4 * k + i)).collect());
    }
    let mut mixed = vec![wild(0), wander(-0.3, 0.2, 1), steps(0.5, -0.25, 2)];
    mixed.extend((3..inputs).map(|_| Const(-0.0)));
    lanes.push(mixed);
    let mut ramps = vec![wander(0.0, 1.0, 2), steps(1.0, 0.5, 1), Control(vec![1e30, -1e30, f32::NAN, 0.25])];
    ramps.extend((3..inputs).map(|_| steps(-2.0, 0.75, 3)));
    lanes.push(ramps);
    let mut consts = vec![wander(3.0, 1.0, 7), Const(1.5), Const(f32::INFINITY)];
    consts.extend((3..inputs).map(|_| Const(-7.25)));
    lanes.push(consts);
    lanes.push((0..inputs).map(wild).collect());
    let mut audio_then_const = vec![wild(3), wild(5)];
    audio_then_const.extend((2..inputs).map(|_| Const(0.125)));
    lanes.push(audio_then_const);
    for k in 0..5u32 {
        lanes.push((0..inputs as u32).map(|i| wander(-1.0, 2.0, 40 + k + i)).collect());
    }
    lanes
}

#[test]
fn sum3_lanes_match_the_units_in_every_input_rate() {
    check("Sum3", 0, &sum_lanes(3));
}

#[test]
fn sum4_lanes_match_the_units_in_every_input_rate() {
    check("Sum4", 0, &sum_lanes(4));
}

/// Lanes of a binary operator in every rate combination a block unit
/// takes: Aa, Ak (steady and moving), Ai, Ka, Ia, with the constants each
/// operator treats apart (0, 1) and extreme values.
fn binary_lanes() -> Vec<Vec<TestInput>> {
    vec![
        vec![wander(0.0, 1.0, 1), wander(0.5, 0.5, 2)],
        vec![wander(0.0, 1.0, 3), Const(0.025)],
        vec![wander(0.0, 1.0, 4), Const(0.0)],
        vec![wander(0.0, 1.0, 5), Const(1.0)],
        vec![wander(0.0, 1.0, 6), Const(-0.0)],
        vec![wander(2.0, 1.0, 7), steps(0.5, 0.25, 2)],
        vec![wander(2.0, 1.0, 8), Control(vec![3.0, 3.0, f32::NAN, 0.0, 1.0, 1e30, -2.0])],
        vec![steps(0.0, 1.0, 3), wander(0.0, 3.0, 9)],
        vec![Control(vec![1.0, 1.0, 0.0, f32::INFINITY, -0.5]), wild(2)],
        vec![Const(0.0), wander(1.0, 1.0, 10)],
        vec![Const(1.0), wild(4)],
        vec![Const(-3.5), wander(1.0, 1.0, 11)],
        vec![wild(0), wild(1)],
        vec![wild(6), Const(f32::NAN)],
        vec![wild(9), Const(1e-30)],
        vec![wander(-1.0, 0.5, 12), wander(0.0, 0.001, 13)],
        vec![wander(100.0, 50.0, 14), steps(-1.0, 0.5, 1)],
        vec![Const(f32::INFINITY), steps(1.0, -0.5, 2)],
    ]
}

#[test]
fn binary_operator_lanes_match_the_units_in_every_input_rate() {
    use super::binary::op;
    for special in [op::ADD, op::SUB, op::MUL, op::FDIV] {
        check("BinaryOpUGen", special, &binary_lanes());
    }
}

#[test]
fn only_the_registered_operators_take_a_lane_kernel() {
    use super::binary::op;
    let r = Registry::with_all();
    assert!(r.lane_kernel("BinaryOpUGen", op::MUL, true).is_some());
    for special in [op::FIRST_ARG, op::RAND_RANGE, op::EXP_RAND_RANGE, op::POW, 99] {
        assert!(r.lane_kernel("BinaryOpUGen", special, true).is_none(), "operator {special}");
    }
    // A unit with effects takes no pure unit's kernel, and the other way round.
    assert!(r.lane_kernel("Sum4", 0, false).is_none());
    assert!(r.lane_kernel("Out", 0, true).is_none());
    assert!(r.lane_kernel("Out", 0, false).is_some());
}
