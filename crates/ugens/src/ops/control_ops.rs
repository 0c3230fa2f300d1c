//! Runs of control-rate BinaryOpUGens of one operator as one step.
//!
//! `freq * (i + 1)` for each of 128 oscillators makes 128 control-rate
//! multiplications, one value each: the call around each costs more than
//! the multiplication. The def (see the engine's `sum_trees`) hands a run
//! of independent ones with the same operator and inputs in the synth's
//! own array (constants and control-rate wires) to one step, which computes
//! each member's value with the formula its unit uses, in order.

use super::binary::{op, Add, BinOp, FDiv, Mul, Sub};
use crate::unit::{Unit, UnitCtor, UnitCtx, UnitSpec, WireArray, Wires};
use std::marker::PhantomData;

/// The constructor of a run of control-rate BinaryOpUGens with operator
/// `special_index`, if the operator has one. Each member has two inputs
/// and one output, member after member (a batch's layout), all in the
/// synth's own array; no member reads another's output.
pub fn control_batch(special_index: i16) -> Option<UnitCtor> {
    match special_index {
        op::ADD => Some(build::<Add>),
        op::SUB => Some(build::<Sub>),
        op::MUL => Some(build::<Mul>),
        op::FDIV => Some(build::<FDiv>),
        _ => None,
    }
}

/// A run of one-value operators: each member's inputs and output, as
/// indices in the synth's own array.
struct ControlOps<O: BinOp> {
    members: Vec<[u32; 3]>,
    _op: PhantomData<O>,
}

fn build<O: BinOp>(spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    let lanes = spec.lanes.max(1);
    assert_eq!(io.num_inputs(), 2 * lanes, "each member of a control-rate operator run has two inputs");
    assert_eq!(io.num_outputs(), lanes, "each member of a control-rate operator run has one output");
    let own = |(array, k): (WireArray, usize)| {
        assert_eq!(array, WireArray::Own, "a control-rate operator run's wires are the synth's own");
        u32::try_from(k).unwrap_or(u32::MAX)
    };
    let members = (0..lanes).map(|l| [own(io.in_place(2 * l)), own(io.in_place(2 * l + 1)), own(io.out_place(l))]).collect();
    let unit = ControlOps::<O> { members, _op: PhantomData };
    unit.run(io);
    Box::new(unit)
}

impl<O: BinOp> ControlOps<O> {
    #[inline(always)]
    fn run(&self, io: &mut Wires<'_>) {
        let base = io.array_ptr(WireArray::Own);
        for &[a, b, out] in &self.members {
            // SAFETY: `build` took the indices from these wires' places in
            // the synth's own array, which holds each of them (one value
            // each); no member's output is another's input, and nothing
            // else views these wires during the call.
            unsafe {
                let (a, b) = (*base.add(a as usize), *base.add(b as usize));
                *base.add(out as usize) = O::one(a, b);
            }
        }
    }
}

impl<O: BinOp> Unit for ControlOps<O> {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.run(io);
    }
}
