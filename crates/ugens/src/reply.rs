//! Units that talk to clients: SendTrig (`/tr`), SendReply, Poll (printed
//! lines), and SendPeakRMS ([`peak_rms`]).

pub(crate) mod peak_rms;

use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::{PollLine, Trigger};
use std::sync::Arc;

#[inline]
fn input_at(x: &[f32], i: usize) -> f32 {
    x[if x.len() > 1 { i } else { 0 }]
}

/// SendTrig: on each rising trigger, sends `/tr node id value`.
pub struct SendTrig {
    prev: f32,
}

impl Construct for SendTrig {
    fn new(_spec: &UnitSpec<'_>, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        SendTrig { prev: 0.0 }
    }
}

impl Unit for SendTrig {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let id = io.in0(1) as i32;
        let value = io.inp(2);
        let audio_value = io.in_rate(2) == Rate::Audio;
        let mut prev = self.prev;
        for i in 0..io.n() {
            let t = input_at(trig, i);
            if t > 0.0 && prev <= 0.0 {
                let v = if audio_value { value[i] } else { value[0] };
                let node_id = cx.synth.node_id;
                cx.world.push_trigger(|| Trigger { node_id, id, cmd: None, values: vec![v] });
            }
            prev = t;
        }
        self.prev = prev;
    }
}

/// SendReply: on each rising trigger, sends `cmd node id values...`. The
/// command name arrives as its length and one input per character.
pub struct SendReply {
    prev: f32,
    cmd: Arc<str>,
    value_offset: usize,
}

impl Construct for SendReply {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let name_len = (io.in0(2).max(0.0) as usize).min(io.num_inputs().saturating_sub(3));
        let cmd: String = (0..name_len).map(|i| io.in0(3 + i) as u8 as char).collect();
        SendReply { prev: 0.0, cmd: cmd.into(), value_offset: 3 + name_len }
    }
}

impl Unit for SendReply {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let mut prev = self.prev;
        for i in 0..io.n() {
            let t = input_at(trig, i);
            if t > 0.0 && prev <= 0.0 {
                let node_id = cx.synth.node_id;
                cx.world.push_trigger(|| Trigger {
                    node_id,
                    id: io.in0(1) as i32,
                    cmd: Some(self.cmd.to_string()),
                    values: (self.value_offset..io.num_inputs()).map(|k| io.in0(k)).collect(),
                });
            }
            prev = t;
        }
        self.prev = prev;
    }
}

/// Poll: on each rising trigger, reports its input as `label: value` (printed by the server,
/// like scsynth's post output) and, with a trigger id of 0 or more, sends `/tr` too. Inputs:
/// trigger, value, trigger id, label length, one input per label character.
pub struct Poll {
    prev: f32,
    label: Arc<str>,
}

impl Construct for Poll {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let len = if io.num_inputs() > 3 { (io.in0(3).max(0.0) as usize).min(io.num_inputs() - 4) } else { 0 };
        let label: String = (0..len).map(|i| io.in0(4 + i) as u8 as char).collect();
        Poll { prev: 0.0, label: label.into() }
    }
}

impl Unit for Poll {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        // A control-rate trigger is read once per block, with the value's first sample (scsynth).
        let audio_trig = io.in_rate(0) == Rate::Audio;
        let audio_value = audio_trig && io.in_rate(1) == Rate::Audio;
        let n = if audio_trig { io.n() } else { 1 };
        let trig = io.inp(0);
        let value = io.inp(1);
        let id = if io.num_inputs() > 2 { io.in0(2) } else { -1.0 };
        let mut prev = self.prev;
        for i in 0..n {
            let t = trig[i];
            if prev <= 0.0 && t > 0.0 {
                let v = if audio_value { value[i] } else { value[0] };
                cx.world.push_poll(|| PollLine { label: Arc::clone(&self.label), value: v, block_offset: None });
                if id >= 0.0 {
                    let node_id = cx.synth.node_id;
                    cx.world.push_trigger(|| Trigger { node_id, id: id as i32, cmd: None, values: vec![v] });
                }
            }
            prev = t;
        }
        self.prev = prev;
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;
    use crate::world::MAX_TRIGGERS_PER_BLOCK;

    /// A trigger rising on every other sample: 32 rises a block.
    fn rises() -> TestInput {
        TestInput::Audio((0..64 * 9).map(|i| (i % 2) as f32).collect())
    }

    #[test]
    fn triggers_past_a_full_list_are_dropped_and_counted() {
        // Nine blocks of 32 rises into a list nothing drains: 256 kept, 32 dropped.
        let h = UnitHarness::new("SendTrig", Rate::Audio).inputs([rises(), TestInput::Const(1.0), TestInput::Const(0.5)]);
        let run = h.run_full(9);
        assert_eq!((run.world.triggers.len(), run.world.dropped_triggers), (MAX_TRIGGERS_PER_BLOCK, 32));
    }

    #[test]
    fn poll_values_and_their_triggers_past_a_full_list_are_dropped_and_counted() {
        // Trigger id 1: each rise makes a value and a `/tr`; 32 of each are dropped.
        let h = UnitHarness::new("Poll", Rate::Audio).inputs([rises(), TestInput::Const(0.5), TestInput::Const(1.0)]);
        let run = h.run_full(9);
        assert_eq!(run.world.polls.len(), MAX_TRIGGERS_PER_BLOCK);
        assert_eq!((run.world.triggers.len(), run.world.dropped_triggers), (MAX_TRIGGERS_PER_BLOCK, 64));
    }
}
