//! Runs one unit outside any synth, for unit tests of the UGen families.
//!
//! ```
//! use magnetar_ugens::testing::{UnitHarness, TestInput};
//! use magnetar_ugens::Rate;
//! let out = UnitHarness::new("DC", Rate::Audio)
//!     .input(TestInput::Const(0.5))
//!     .run(2);
//! assert!(out[0].iter().all(|&x| x == 0.5));
//! ```

// Test support: a harness that cannot be set up fails its test.
#![allow(clippy::panic, clippy::expect_used)]

use crate::registry::Registry;
use crate::unit::{Rate, UnitCtx, UnitSpec, WireRef, Wires, NO_UNIT};
use crate::world::{SynthCtx, World};

/// One input of the unit under test.
#[derive(Clone, Debug)]
pub enum TestInput {
    /// A constant (scalar-rate) input.
    Const(f32),
    /// A control-rate input: one value per block (the last value repeats).
    Control(Vec<f32>),
    /// An audio-rate input: a whole signal (zero-padded past its end).
    Audio(Vec<f32>),
}

impl TestInput {
    /// The rate a def gives such an input.
    pub fn rate(&self) -> Rate {
        match self {
            TestInput::Const(_) => Rate::Scalar,
            TestInput::Control(_) => Rate::Control,
            TestInput::Audio(_) => Rate::Audio,
        }
    }

    /// A wandering audio signal of `samples` samples around `center`,
    /// different per `seed`.
    pub fn wandering(center: f32, depth: f32, seed: u32, samples: usize) -> TestInput {
        let s = seed as f32;
        TestInput::Audio(
            (0..samples)
                .map(|i| {
                    let t = i as f32;
                    center + depth * ((t * (0.003 + 0.001 * s)).sin() + 0.3 * (t * 0.071 + s).sin())
                })
                .collect(),
        )
    }

    /// A control input over `blocks` blocks that steps by `by` every
    /// `every` blocks.
    pub fn stepping(start: f32, by: f32, every: usize, blocks: usize) -> TestInput {
        TestInput::Control((0..blocks).map(|b| start + by * (b / every) as f32).collect())
    }
}

/// A world for unit tests at 48 kHz with `block_size` samples a block.
pub fn test_world(block_size: usize) -> World {
    World::new(48_000.0, block_size, 128, 4096, 16, 2, 2, 12345)
}

pub struct UnitHarness {
    pub name: String,
    pub rate: Rate,
    pub special_index: i16,
    pub inputs: Vec<TestInput>,
    pub num_outputs: usize,
    pub world: World,
    pub synth: SynthCtx,
}

impl UnitHarness {
    /// 48 kHz, 64-sample blocks, 2 outputs + 2 inputs + 124 private audio
    /// buses, 4096 control buses, 16 buffers, fixed seed.
    pub fn new(name: &str, rate: Rate) -> UnitHarness {
        UnitHarness {
            name: name.to_string(),
            rate,
            special_index: 0,
            inputs: Vec::new(),
            num_outputs: 1,
            world: World::new(48_000.0, 64, 128, 4096, 16, 2, 2, 12345),
            synth: SynthCtx { node_id: 1000, done_actions: Vec::with_capacity(16), ..Default::default() },
        }
    }

    pub fn input(mut self, i: TestInput) -> Self {
        self.inputs.push(i);
        self
    }

    pub fn inputs(mut self, ins: impl IntoIterator<Item = TestInput>) -> Self {
        self.inputs.extend(ins);
        self
    }

    pub fn special(mut self, s: i16) -> Self {
        self.special_index = s;
        self
    }

    pub fn outputs(mut self, n: usize) -> Self {
        self.num_outputs = n;
        self
    }

    /// Builds the unit, runs it for `blocks` blocks and returns each output
    /// as one signal (one value per block for control-rate units). The
    /// value the constructor wrote is not included; see [`Self::run_full`].
    pub fn run(self, blocks: usize) -> Vec<Vec<f32>> {
        self.run_full(blocks).outputs
    }

    pub fn run_full(mut self, blocks: usize) -> HarnessRun {
        let registry = Registry::with_all();
        let ctor = registry
            .get(&self.name)
            .unwrap_or_else(|| panic!("UGen {} is not registered", self.name));
        let bs = self.world.block_size;
        let mut wires: Vec<f32> = Vec::new();
        let mut in_refs = Vec::new();
        for inp in &self.inputs {
            let rate = match inp {
                TestInput::Const(_) => Rate::Scalar,
                TestInput::Control(_) => Rate::Control,
                TestInput::Audio(_) => Rate::Audio,
            };
            in_refs.push(WireRef { offset: wires.len() as u32, rate, from_unit: NO_UNIT });
            let len = if rate == Rate::Audio { bs } else { 1 };
            wires.extend(std::iter::repeat_n(0.0, len));
        }
        let out_len = if self.rate == Rate::Audio { bs } else { 1 };
        let mut out_refs = Vec::new();
        for _ in 0..self.num_outputs {
            out_refs.push(WireRef { offset: wires.len() as u32, rate: self.rate, from_unit: 0 });
            wires.extend(std::iter::repeat_n(0.0, out_len));
        }
        let mut done = vec![false; 1];
        let unit_rate = if self.rate == Rate::Audio { self.world.full_rate } else { self.world.buf_rate };
        let spec = UnitSpec {
            name: &self.name,
            rate: self.rate,
            special_index: self.special_index,
            num_inputs: self.inputs.len(),
            num_outputs: self.num_outputs,
            lanes: 1,
        };

        fill_inputs(&self.inputs, &in_refs, &mut wires, 0, bs);
        // SAFETY: the wire array holds every input and output wire, laid out
        // one after another without overlap.
        let mut io = unsafe { Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &in_refs, &out_refs, bs, 1) };
        let mut cx = UnitCtx::new(&mut self.world, &mut self.synth, &unit_rate, &mut done, 0);
        let mut unit = ctor(&spec, &mut io, &mut cx);
        let initial: Vec<f32> = out_refs.iter().map(|w| wires[w.offset as usize]).collect();

        let mut outputs = vec![Vec::with_capacity(blocks * out_len); self.num_outputs];
        let mut done_per_block = Vec::with_capacity(blocks);
        let mut done_actions = Vec::new();
        for b in 0..blocks {
            self.world.buf_counter += 1;
            fill_inputs(&self.inputs, &in_refs, &mut wires, b, bs);
            // SAFETY: as above.
            let mut io = unsafe { Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &in_refs, &out_refs, bs, out_len) };
            let mut cx = UnitCtx::new(&mut self.world, &mut self.synth, &unit_rate, &mut done, 0);
            unit.next(&mut io, &mut cx);
            for (o, w) in out_refs.iter().enumerate() {
                let s = w.offset as usize;
                outputs[o].extend_from_slice(&wires[s..s + out_len]);
            }
            done_per_block.push(done[0]);
            for a in self.synth.done_actions.drain(..) {
                done_actions.push((b, a));
            }
        }
        HarnessRun { outputs, initial, done_per_block, done_actions, world: self.world }
    }
}

/// Everything a harness run produced.
pub struct HarnessRun {
    pub outputs: Vec<Vec<f32>>,
    /// What the constructor wrote as each output's first value.
    pub initial: Vec<f32>,
    /// The unit's done flag after each block.
    pub done_per_block: Vec<bool>,
    /// (block, action) for every done action requested.
    pub done_actions: Vec<(usize, i32)>,
    pub world: World,
}

pub(crate) fn fill_inputs(inputs: &[TestInput], refs: &[WireRef], wires: &mut [f32], block: usize, bs: usize) {
    for (inp, w) in inputs.iter().zip(refs) {
        let o = w.offset as usize;
        match inp {
            TestInput::Const(v) => wires[o] = *v,
            TestInput::Control(vals) => {
                wires[o] = vals.get(block).or(vals.last()).copied().unwrap_or(0.0);
            }
            TestInput::Audio(sig) => {
                for i in 0..bs {
                    wires[o + i] = sig.get(block * bs + i).copied().unwrap_or(0.0);
                }
            }
        }
    }
}

/// The samples of the first output of an audio-rate unit over `blocks` blocks.
pub fn ar(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    UnitHarness::new(name, Rate::Audio).inputs(inputs).run(blocks).remove(0)
}

/// An audio-rate unit with `outputs` outputs run for `blocks` blocks.
pub fn ar_outputs(name: &str, inputs: Vec<TestInput>, outputs: usize, blocks: usize) -> HarnessRun {
    UnitHarness::new(name, Rate::Audio).inputs(inputs).outputs(outputs).run_full(blocks)
}

/// The largest magnitude in a signal.
pub fn peak(sig: &[f32]) -> f32 {
    sig.iter().fold(0.0f32, |m, &x| m.max(x.abs()))
}
