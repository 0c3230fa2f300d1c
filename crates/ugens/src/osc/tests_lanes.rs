//! The lane kernels of SinOsc, LFSaw, LFPulse, LFTri and Impulse against the units
//! run alone: every sample of every lane, bit for bit, with lanes of
//! different parameters and input rates in one call; through the kernel of
//! one step of several synths, and through the batch of several units of
//! one synth (alone and several synths' batches together).

use crate::registry::Registry;
use crate::testing::{fill_inputs, test_world, TestInput, UnitHarness};
use crate::unit::{Lanes, Rate, Unit, UnitCtx, UnitSpec, WireRef, Wires, NO_UNIT};
use crate::world::SynthCtx;
use TestInput::{Audio, Const, Control};

const BLOCKS: usize = 12;

/// How the units run together.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// One unit per lane, through the lane kernel.
    Lanes,
    /// Runs of lanes with the same input rates as batch units, each run
    /// alone (several units of one synth).
    Batch,
    /// The same batches through the batch lane kernel.
    BatchLanes,
}

/// The unit alone: the value its constructor wrote, then every block.
fn alone(name: &str, rate: Rate, inputs: &[TestInput], block_size: usize) -> Vec<f32> {
    let mut h = UnitHarness::new(name, rate).inputs(inputs.to_vec());
    h.world = test_world(block_size);
    let run = h.run_full(BLOCKS);
    let mut all = run.initial;
    all.extend_from_slice(&run.outputs[0]);
    all
}

/// Every lane's output (the constructor's value, then every block) with
/// the units run together in `form`.
fn together(name: &str, rate: Rate, lanes: &[Vec<TestInput>], block_size: usize, form: Form) -> Vec<Vec<f32>> {
    let registry = Registry::with_all();
    let mut world = test_world(block_size);
    let mut synth = SynthCtx { node_id: 1000, done_actions: Vec::with_capacity(16), ..Default::default() };
    let bs = block_size;
    let out_len = if rate == Rate::Audio { bs } else { 1 };
    let mut wires: Vec<f32> = Vec::new();
    let (mut in_refs, mut out_refs) = (Vec::new(), Vec::new());
    for inputs in lanes {
        for i in inputs {
            let r = TestInput::rate(i);
            in_refs.push(WireRef { offset: wires.len() as u32, rate: r, from_unit: NO_UNIT });
            wires.extend(std::iter::repeat_n(0.0, if r == Rate::Audio { bs } else { 1 }));
        }
        out_refs.push(WireRef { offset: wires.len() as u32, rate, from_unit: 0 });
        wires.extend(std::iter::repeat_n(0.0, out_len));
    }
    // Groups of consecutive lanes: (first lane, lanes).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for l in 0..lanes.len() {
        let same = |a: &Vec<TestInput>, b: &Vec<TestInput>| a.iter().map(TestInput::rate).eq(b.iter().map(TestInput::rate));
        match groups.last_mut() {
            Some((first, len)) if !matches!(form, Form::Lanes) && same(&lanes[*first], &lanes[l]) => *len += 1,
            _ => groups.push((l, 1)),
        }
    }
    assert!(groups.len() <= crate::unit::MAX_LANES);
    let ni = lanes[0].len();
    let in_span = |&(first, len): &(usize, usize)| first * ni..(first + len) * ni;
    let out_span = |&(first, len): &(usize, usize)| first..first + len;
    let fill = |wires: &mut Vec<f32>, block: usize| {
        for (l, inputs) in lanes.iter().enumerate() {
            fill_inputs(inputs, &in_refs[l * ni..(l + 1) * ni], wires, block, bs);
        }
    };
    let unit_rate = if rate == Rate::Audio { world.full_rate } else { world.buf_rate };
    let mut done = vec![false; 1];

    fill(&mut wires, 0);
    let mut units: Vec<Box<dyn Unit>> = Vec::new();
    for g in &groups {
        let spec = UnitSpec { name, rate, special_index: 0, num_inputs: g.1 * ni, num_outputs: g.1, lanes: g.1 };
        let ctor = match form {
            Form::Lanes => registry.get(name).expect("registered"),
            Form::Batch | Form::BatchLanes => registry.batch(name).expect("batched").ctor,
        };
        // SAFETY: the wire array holds every wire, laid out without overlap.
        let mut io = unsafe {
            Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &in_refs[in_span(g)], &out_refs[out_span(g)], bs, 1)
        };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &unit_rate, &mut done, 0);
        units.push(ctor(&spec, &mut io, &mut cx));
    }
    let mut outputs: Vec<Vec<f32>> = out_refs.iter().map(|w| vec![wires[w.offset as usize]]).collect();

    let kernel = match form {
        Form::Lanes => registry.lanes(name),
        Form::Batch => None,
        Form::BatchLanes => registry.batch_lanes(name),
    };
    for b in 0..BLOCKS {
        world.buf_counter += 1;
        fill(&mut wires, b);
        let base = wires.as_mut_ptr();
        // SAFETY: as above; each group's wires are its own.
        let ios = groups.iter().map(|g| unsafe {
            Wires::new(base, std::ptr::null_mut(), &in_refs[in_span(g)], &out_refs[out_span(g)], bs, out_len)
        });
        match kernel {
            Some(kernel) => {
                let mut lanes = Lanes::new();
                for (unit, io) in units.iter_mut().zip(ios) {
                    lanes.push(unit.as_mut(), io);
                }
                kernel(&mut lanes, &unit_rate);
            }
            None => {
                for (unit, mut io) in units.iter_mut().zip(ios) {
                    let mut cx = UnitCtx::new(&mut world, &mut synth, &unit_rate, &mut done, 0);
                    unit.next(&mut io, &mut cx);
                }
            }
        }
        for (o, w) in outputs.iter_mut().zip(&out_refs) {
            let s = w.offset as usize;
            o.extend_from_slice(&wires[s..s + out_len]);
        }
    }
    outputs
}

/// Runs `lanes` together in every form and at two block sizes (one not a
/// multiple of eight) and checks each lane against its unit alone.
fn check(name: &str, rate: Rate, lanes: &[Vec<TestInput>]) {
    for block_size in [64, 20] {
        let want: Vec<Vec<f32>> = lanes.iter().map(|l| alone(name, rate, l, block_size)).collect();
        for form in [Form::Lanes, Form::Batch, Form::BatchLanes] {
            let got = together(name, rate, lanes, block_size, form);
            for (l, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.len(), w.len());
                for (i, (a, b)) in g.iter().zip(w).enumerate() {
                    assert!(
                        a.to_bits() == b.to_bits(),
                        "{name} {form:?} block size {block_size}: lane {l} ({:?}) sample {i}: {a} vs alone {b}",
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
/// outside the usual range: huge, negative, infinite, NaN.
fn wild() -> TestInput {
    let vals = [1e12f32, -3e9, f32::INFINITY, f32::NAN, -0.0, 5e4, -7e4, 2.5e9];
    Audio((0..64 * BLOCKS).map(|i| if i % 37 < 8 { vals[i % 8] } else { 300.0 + i as f32 }).collect())
}

#[test]
fn sinosc_lanes_match_the_units_in_every_input_rate() {
    let mut lanes = Vec::new();
    // Kk: constants, moving frequency and phase (the phase slope), and
    // enough of them for two vectors.
    for k in 0..10 {
        let k = k as f32;
        lanes.push(vec![Const(55.0 * (k + 1.0)), Const(0.1 * k)]);
    }
    lanes.push(vec![steps(200.0, 37.5, 1), steps(0.0, 0.8, 2)]);
    lanes.push(vec![steps(-300.0, 90.0, 1), Const(-2.0)]);
    lanes.push(vec![Control(vec![1e12, -1e12, f32::NAN, 440.0]), Control(vec![f32::NAN, 1e30, 0.5])]);
    // Ka, Ak (phase still and moving), Ai, Aa.
    lanes.push(vec![steps(330.0, 11.0, 1), wander(0.0, 3.0, 1)]);
    lanes.push(vec![wander(400.0, 300.0, 2), steps(0.0, 0.7, 3)]);
    lanes.push(vec![wander(-200.0, 100.0, 3), Const(1.25)]);
    lanes.push(vec![wander(800.0, 700.0, 4), wander(0.0, 40.0, 5)]);
    lanes.push(vec![wild(), wild()]);
    // The lane kernel takes sixteen: several calls' worth split in two.
    let (a, b) = lanes.split_at(10);
    check("SinOsc", Rate::Audio, a);
    check("SinOsc", Rate::Audio, b);
    let mixed: Vec<_> = lanes.iter().skip(6).cloned().collect();
    check("SinOsc", Rate::Audio, &mixed);
    check("SinOsc", Rate::Control, &mixed);
}

#[test]
fn lfsaw_lanes_match_the_units_in_every_input_rate() {
    let lanes = vec![
        vec![Const(440.0), Const(0.0)],
        vec![Const(-440.0), Const(0.5)],
        vec![Const(0.0), Const(1.0)],
        vec![Const(100.0), Const(-1.5)],
        vec![Const(-100.0), Const(1.5)],
        vec![Const(30_000.0), Const(0.9)],
        vec![Const(70_000.0), Const(0.9)],
        vec![steps(-500.0, 110.0, 1), Const(0.25)],
        vec![Control(vec![5.0, f32::NAN, 7.0]), Const(0.0)],
        vec![Audio(vec![0.0; 64 * BLOCKS]), Const(1.0)],
        vec![wander(0.0, 900.0, 1), Const(-0.3)],
        vec![wander(2000.0, 1500.0, 2), Const(-1.5)],
        vec![wander(-40_000.0, 30_000.0, 3), Const(0.0)],
        vec![wild(), Const(0.0)],
    ];
    check("LFSaw", Rate::Audio, &lanes);
    check("LFSaw", Rate::Control, &lanes);
}

#[test]
fn lfpulse_lanes_match_the_units_in_every_input_rate() {
    let lanes = vec![
        vec![Const(440.0), Const(0.0), Const(0.5)],
        vec![Const(1000.0), Const(0.999), Const(0.2)],
        vec![Const(300.0), Const(1.5), Const(0.8)],
        vec![Const(-50.0), Const(0.3), Const(0.5)],
        vec![steps(120.0, 130.0, 1), Const(0.0), steps(0.1, 0.15, 1)],
        vec![Const(2000.0), Const(0.0), Control(vec![0.3, 0.7, f32::NAN, 0.5, 0.51])],
        vec![Const(60_000.0), Const(0.2), Const(0.4)],
        vec![Const(700.0), Const(0.6), Const(0.0)],
        vec![Const(700.0), Const(0.6), Const(1.0)],
        vec![wander(600.0, 500.0, 1), Const(0.0), steps(0.2, 0.1, 2)],
        vec![wander(-300.0, 400.0, 2), Const(0.5), Const(0.5)],
        vec![wild(), Const(0.0), Const(0.3)],
    ];
    check("LFPulse", Rate::Audio, &lanes);
    check("LFPulse", Rate::Control, &lanes);
}

#[test]
fn lftri_lanes_match_the_units_in_every_input_rate() {
    let lanes = vec![
        vec![Const(440.0), Const(0.0)],
        vec![Const(440.0), Const(1.5)],
        vec![Const(300.0), Const(3.5)],
        vec![Const(-250.0), Const(2.0)],
        vec![Const(0.0), Const(3.0)],
        vec![Const(50_000.0), Const(0.7)],
        vec![steps(-400.0, 100.0, 1), Const(1.0)],
        vec![wander(500.0, 450.0, 1), Const(0.0)],
        vec![wander(-100.0, 800.0, 2), Const(2.5)],
        vec![wild(), Const(0.0)],
    ];
    check("LFTri", Rate::Audio, &lanes);
    check("LFTri", Rate::Control, &lanes);
}

#[test]
fn impulse_lanes_match_the_units_in_every_input_rate() {
    let lanes = vec![
        // Ii, Ik (offset still and moving), Ki, Kk, Ai, Ak, Aa.
        vec![Const(440.0), Const(0.0)],
        vec![Const(-300.0), Const(0.5)],
        vec![Const(0.0), Const(0.0)],
        vec![Const(100_000.0), Const(0.25)],
        vec![Const(-70_000.0), Const(0.0)],
        vec![Const(900.0), steps(0.0, 0.3, 3)],
        vec![steps(-600.0, 150.0, 1), Const(0.0)],
        vec![Control(vec![5000.0, f32::NAN, 200.0, 2e9]), Const(0.7)],
        vec![steps(1200.0, -300.0, 2), steps(0.5, 0.1, 4)],
        vec![wander(0.0, 2000.0, 1), Const(0.2)],
        vec![wild(), Const(0.0)],
        vec![wander(3000.0, 2500.0, 2), steps(0.1, 0.2, 5)],
        vec![wander(500.0, 400.0, 3), wander(0.0, 0.5, 4)],
    ];
    check("Impulse", Rate::Audio, &lanes);
    check("Impulse", Rate::Control, &lanes);
}
