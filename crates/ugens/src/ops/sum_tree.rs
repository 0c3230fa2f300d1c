//! A `Mix` of many signals as one step: a tree of audio-rate Sum3, Sum4 and
//! `+` units whose inner sums each feed one other sum of the tree.
//!
//! sclang mixes 128 signals as 32 Sum4s, 8 Sum4s of those, 2 more and a
//! `+`: 43 units, each with the cost of a call around a few additions. The
//! def (see the engine's `sum_trees`) hands such a tree to one step, which
//! runs the nodes in the def's order, each with the grouping its unit has
//! ((a + b) + c, (a + b) + (c + d)), and writes each node's output wire as
//! its unit would: nothing that reads wires can tell the difference.

use crate::unit::{Unit, UnitCtx, WireArray, Wires};

/// Where an operand of a node comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// Input `k` of the step (a wire from outside the tree).
    Input(u32),
    /// The output of node `j` of the tree, an earlier one.
    Node(u32),
}

/// The nodes of a tree in the order they run; node `j` writes output `j` of
/// the step. Each node has two (`+`), three (Sum3) or four (Sum4) operands,
/// all audio.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SumTree {
    pub nodes: Vec<Vec<Operand>>,
}

/// A node with its wires looked up: indices in the scratch area.
#[derive(Clone, Copy)]
struct Node {
    arity: u32,
    out: u32,
    args: [u32; 4],
}

/// The running tree.
pub struct SumTreeUnit {
    nodes: Vec<Node>,
    /// Whether `next` runs the AVX2 build of `run`.
    wide: bool,
}

impl SumTree {
    /// Builds the tree's unit on the step's wires and computes each node's
    /// first sample, as each unit's constructor does. Every wire of the step
    /// is an audio wire, in the scratch area (the def fuses nothing else);
    /// operands name inputs of the step or earlier nodes.
    pub fn build(&self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        assert_eq!(self.nodes.len(), io.num_outputs(), "a sum tree writes one output per node");
        let scratch = |(array, k): (WireArray, usize)| {
            assert_eq!(array, WireArray::Scratch, "a sum tree's wires are audio wires");
            u32::try_from(k).unwrap_or(u32::MAX)
        };
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(j, operands)| {
                assert!((2..=4).contains(&operands.len()), "a sum tree node adds two to four signals");
                let mut args = [0u32; 4];
                for (arg, op) in args.iter_mut().zip(operands) {
                    *arg = match *op {
                        Operand::Input(k) => {
                            assert!((k as usize) < io.num_inputs(), "a sum tree operand names a missing input");
                            scratch(io.in_place(k as usize))
                        }
                        Operand::Node(m) => {
                            assert!((m as usize) < j, "a sum tree node reads an earlier node");
                            scratch(io.out_place(m as usize))
                        }
                    };
                }
                // Unused operands name the first one: a wire apart from
                // the node's output, read by no loop.
                let first = args[0];
                for arg in &mut args[operands.len()..] {
                    *arg = first;
                }
                Node { arity: operands.len() as u32, out: scratch(io.out_place(j)), args }
            })
            .collect();
        let mut unit = SumTreeUnit { nodes, wide: false };
        unit.run(io);
        unit.wide = cx.rate.buf_length > 1 && crate::vector::avx2();
        Box::new(unit)
    }
}

impl SumTreeUnit {
    /// `run` compiled for AVX2: eight samples a step, each sample's
    /// additions unchanged.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, io: &mut Wires<'_>) {
        self.run(io);
    }

    #[inline(always)]
    fn run(&self, io: &mut Wires<'_>) {
        let n = io.n();
        if n == 64 {
            self.run_n::<64>(io);
        } else {
            self.run_any(io, n);
        }
    }

    /// The common block size, whose loops unroll whole.
    #[inline(always)]
    fn run_n<const N: usize>(&self, io: &mut Wires<'_>) {
        let base = io.array_ptr(WireArray::Scratch);
        for node in &self.nodes {
            // SAFETY: `build` took every index from these wires' places in
            // the scratch (the def's step, set up the same way each call),
            // where each audio wire holds a block of at least `N` (= n())
            // samples. A node's output is a wire of its own, apart from its
            // operands (the def gives each output of a step its own buffer,
            // apart from the step's inputs), and nothing else views these
            // wires during the call.
            unsafe {
                let out = &mut *base.add(node.out as usize).cast::<[f32; N]>();
                let a = &*base.add(node.args[0] as usize).cast::<[f32; N]>();
                let b = &*base.add(node.args[1] as usize).cast::<[f32; N]>();
                let c = &*base.add(node.args[2] as usize).cast::<[f32; N]>();
                match node.arity {
                    4 => {
                        let d = &*base.add(node.args[3] as usize).cast::<[f32; N]>();
                        for ((((o, &a), &b), &c), &d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
                            *o = (a + b) + (c + d);
                        }
                    }
                    3 => {
                        for (((o, &a), &b), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
                            *o = (a + b) + c;
                        }
                    }
                    _ => {
                        for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
                            *o = a + b;
                        }
                    }
                }
            }
        }
    }

    /// Any other length (and the first sample, at construction).
    #[inline(always)]
    fn run_any(&self, io: &mut Wires<'_>, n: usize) {
        let base = io.array_ptr(WireArray::Scratch);
        for node in &self.nodes {
            // SAFETY: as in `run_n`, for `n` samples.
            let (out, a, b, c, d) = unsafe {
                let at = |k: u32| std::slice::from_raw_parts(base.add(k as usize), n);
                (
                    std::slice::from_raw_parts_mut(base.add(node.out as usize), n),
                    at(node.args[0]),
                    at(node.args[1]),
                    at(node.args[2]),
                    at(node.args[3]),
                )
            };
            match node.arity {
                4 => {
                    for ((((o, &a), &b), &c), &d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
                        *o = (a + b) + (c + d);
                    }
                }
                3 => {
                    for (((o, &a), &b), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
                        *o = (a + b) + c;
                    }
                }
                _ => {
                    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
                        *o = a + b;
                    }
                }
            }
        }
    }
}

impl Unit for SumTreeUnit {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only where the CPU has AVX2.
            unsafe { self.run_avx2(io) };
            return;
        }
        self.run(io);
    }
}
