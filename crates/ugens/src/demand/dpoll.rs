//! Dpoll: a demand-rate unit that passes its input's values through and
//! reports each one as Poll does (printed `label: value` while `run` is
//! positive) and, with a trigger id of 0 or more, sends `/tr` with it.
//! Inputs: in, trigger id, run, label length, one input per label character.

use std::sync::Arc;

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::{PollLine, Trigger};

pub struct Dpoll {
    label: Arc<str>,
}

impl Construct for Dpoll {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let inputs = io.num_inputs();
        let len = if inputs > 3 { (io.in0(3).max(0.0) as usize).min(inputs - 4) } else { 0 };
        let label: String = (0..len).map(|i| io.in0(4 + i) as u8 as char).collect();
        if io.num_outputs() > 0 {
            io.out(0)[0] = 0.0;
        }
        Dpoll { label: label.into() }
    }
}

impl Unit for Dpoll {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let k = cx.demanded;
        if k == 0 {
            cx.reset_input(io, 0);
            return;
        }
        let x = cx.demand_input_at(io, 0, k);
        let run = io.num_inputs() > 2 && cx.demand_input_at(io, 2, k) > 0.0;
        if run {
            cx.world.push_poll(|| PollLine { label: Arc::clone(&self.label), value: x, block_offset: Some(k as u32 - 1) });
        }
        let id = if io.num_inputs() > 1 { io.in0(1) } else { -1.0 };
        if id >= 0.0 {
            let node_id = cx.synth.node_id;
            cx.world.push_trigger(|| Trigger { node_id, id: id as i32, cmd: None, values: vec![x] });
        }
        if io.num_outputs() > 0 {
            io.out(0)[0] = x;
        }
    }
}
