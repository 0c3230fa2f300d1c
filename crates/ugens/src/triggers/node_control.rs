//! Units that watch other units or end, pause or free nodes: Done,
//! FreeSelf, PauseSelf, FreeSelfWhenDone, PauseSelfWhenDone, Free.

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Done action that frees the synth (scsynth's NodeEnd on itself).
const FREE_SELF: i32 = 2;
/// Done action that pauses the synth.
const PAUSE_SELF: i32 = 1;

/// Writes the single output value, if the def gave the unit an output.
#[inline]
fn write0(io: &mut Wires<'_>, v: f32) {
    if io.num_outputs() > 0 {
        io.out(0)[0] = v;
    }
}

/// Done: 1 while the unit feeding input 0 has finished, else 0.
pub struct Done {
    source: Option<usize>,
}

impl Construct for Done {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = Done { source: io.in_source(0) };
        unit.next(io, cx);
        unit
    }
}

impl Unit for Done {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let done = self.source.is_some_and(|s| cx.unit_done(s));
        write0(io, if done { 1.0 } else { 0.0 });
    }
}

/// Requests `action` when input 0 goes from <= 0 to > 0.
fn on_rising_edge(prev: &mut f32, input: f32, cx: &mut UnitCtx<'_>, action: i32) {
    if input > 0.0 && *prev <= 0.0 {
        cx.done_action(action);
    }
    *prev = input;
}

/// FreeSelf: frees the synth when its input rises above zero.
pub struct FreeSelf {
    prev_trig: f32,
}

impl Construct for FreeSelf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = FreeSelf { prev_trig: 0.0 };
        unit.next(io, cx);
        unit.prev_trig = 0.0;
        unit
    }
}

impl Unit for FreeSelf {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        on_rising_edge(&mut self.prev_trig, io.in0(0), cx, FREE_SELF);
    }
}

/// PauseSelf: pauses the synth when its input rises above zero.
pub struct PauseSelf {
    prev_trig: f32,
}

impl Construct for PauseSelf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = PauseSelf { prev_trig: 0.0 };
        unit.next(io, cx);
        unit.prev_trig = 0.0;
        unit
    }
}

impl Unit for PauseSelf {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        on_rising_edge(&mut self.prev_trig, io.in0(0), cx, PAUSE_SELF);
    }
}

/// FreeSelfWhenDone / PauseSelfWhenDone: pass the input through and carry
/// out `action` once the unit feeding input 0 is done; silent afterwards,
/// and silent throughout if the input is not a unit.
pub struct ActWhenDone {
    source: Option<usize>,
    action: i32,
    silent: bool,
}

impl ActWhenDone {
    fn build(action: i32, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let source = io.in_source(0);
        let mut unit = ActWhenDone { source, action, silent: source.is_none() };
        unit.next(io, cx);
        unit
    }

    pub fn new_free(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(FREE_SELF, io, cx))
    }

    pub fn new_pause(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(PAUSE_SELF, io, cx))
    }
}

impl Unit for ActWhenDone {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.silent {
            write0(io, 0.0);
            return;
        }
        if self.source.is_some_and(|s| cx.unit_done(s)) {
            cx.done_action(self.action);
            self.silent = true;
        }
        let v = io.in0(0);
        write0(io, v);
    }
}

/// Free: frees the node whose id is input 1 when input 0 rises above zero;
/// outputs its trigger input.
pub struct Free {
    prev_trig: f32,
}

impl Construct for Free {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let v = io.in0(0);
        write0(io, v);
        Free { prev_trig: 0.0 }
    }
}

impl Unit for Free {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = io.in0(0);
        if trig > 0.0 && self.prev_trig <= 0.0 {
            cx.synth.request_free_node(io.in0(1) as i32);
        }
        self.prev_trig = trig;
        write0(io, trig);
    }
}

/// Pause: runs (input 0 nonzero) or pauses (0) the node whose id is input 1,
/// each time input 0 changes between the two; outputs input 0.
pub struct Pause {
    running: bool,
}

impl Construct for Pause {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let v = io.in0(0);
        write0(io, v);
        Pause { running: true }
    }
}

impl Unit for Pause {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let v = io.in0(0);
        let running = v != 0.0;
        if running != self.running {
            self.running = running;
            cx.synth.request_run_node(io.in0(1) as i32, running);
        }
        write0(io, v);
    }
}
