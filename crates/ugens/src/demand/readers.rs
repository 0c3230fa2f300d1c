//! Units that run at audio or control rate and read demand-rate units:
//! `Demand` (on a trigger), `Duty` and `TDuty` (after durations they demand).

use super::at;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};


/// `Demand.ar/kr(trig, reset, sources...)`: on each rising trigger, one value
/// from every source (one output each); a rising reset restarts them. A
/// source that ran out keeps its output at the last value and marks the unit done.
pub struct Demand {
    prev_trig: f32,
    prev_reset: f32,
    prev_out: Vec<f32>,
}

impl Construct for Demand {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        for k in 0..io.num_outputs() {
            io.out(k)[0] = 0.0;
        }
        Demand { prev_trig: 0.0, prev_reset: 0.0, prev_out: vec![0.0; io.num_outputs()] }
    }
}

impl Unit for Demand {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let sources = io.num_inputs().saturating_sub(2).min(io.num_outputs());
        for i in 0..io.n() {
            let trig = at(io, 0, i);
            let reset = at(io, 1, i);
            if reset > 0.0 && self.prev_reset <= 0.0 {
                for j in 2..io.num_inputs() {
                    cx.reset_input(io, j);
                }
            }
            if trig > 0.0 && self.prev_trig <= 0.0 {
                for k in 0..sources {
                    let x = cx.demand_input_at(io, k + 2, i + 1);
                    if x.is_nan() {
                        cx.set_done(true);
                    } else {
                        self.prev_out[k] = x;
                    }
                }
            }
            for k in 0..sources {
                io.out(k)[i] = self.prev_out[k];
            }
            self.prev_trig = trig;
            self.prev_reset = reset;
        }
    }
}

/// Input numbers shared by `Duty` and `TDuty`.
const DUR: usize = 0;
const RESET: usize = 1;
const DONE_ACTION: usize = 2;
const LEVEL: usize = 3;

/// How `Duty`'s reset input works: a rising signal, or (demand rate) the
/// time until the next reset.
#[derive(Clone, Copy, PartialEq)]
enum ResetBy {
    Signal,
    Durations,
}

/// What `Duty` and `TDuty` share: the countdown (in samples of the unit's
/// rate) to the next value and the reset that restarts their sources.
struct Clock {
    count: f32,
    /// The previous reset signal, or the countdown to the next reset.
    reset: f32,
    reset_by: ResetBy,
}

impl Clock {
    fn new(io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Clock {
        if io.in_rate(RESET) == Rate::Demand {
            let reset = (cx.demand_input(io, RESET) as f64 * cx.rate.sample_rate) as f32;
            Clock { count: 0.0, reset, reset_by: ResetBy::Durations }
        } else {
            Clock { count: 0.0, reset: 0.0, reset_by: ResetBy::Signal }
        }
    }

    /// Sample `i`: restarts the sources if a reset falls on it; true when a
    /// new value is due (its duration then already read into the countdown).
    fn tick(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, i: usize, sr: f32) -> bool {
        let restart = match self.reset_by {
            ResetBy::Signal => {
                let r = at(io, RESET, i);
                let rising = r > 0.0 && self.reset <= 0.0;
                self.reset = r;
                rising
            }
            ResetBy::Durations => {
                if self.reset <= 0.0 {
                    true
                } else {
                    self.reset -= 1.0;
                    false
                }
            }
        };
        if restart {
            cx.reset_input(io, LEVEL);
            cx.reset_input(io, DUR);
            self.count = 0.0;
            if self.reset_by == ResetBy::Durations {
                self.reset += cx.demand_input_at(io, RESET, i + 1) * sr;
            }
        }
        if self.count <= 0.0 {
            self.count += cx.demand_input_at(io, DUR, i + 1) * sr;
            if self.count.is_nan() {
                cx.done_action(io.in0(DONE_ACTION) as i32);
            }
            true
        } else {
            false
        }
    }
}

/// `Duty.ar/kr(dur, reset, doneAction, level)`: demands a level and holds it
/// for a duration it demands too; when either runs out, the done action.
pub struct Duty {
    clock: Clock,
    prev_out: f32,
}

impl Construct for Duty {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut clock = Clock::new(io, cx);
        clock.count = (cx.demand_input(io, DUR) as f64 * cx.rate.sample_rate) as f32;
        let prev_out = cx.demand_input(io, LEVEL);
        io.out(0)[0] = prev_out;
        Duty { clock, prev_out }
    }
}

impl Unit for Duty {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let sr = cx.rate.sample_rate as f32;
        for i in 0..io.n() {
            if self.clock.tick(io, cx, i, sr) {
                let x = cx.demand_input_at(io, LEVEL, i + 1);
                if x.is_nan() {
                    cx.done_action(io.in0(DONE_ACTION) as i32);
                } else {
                    self.prev_out = x;
                }
            }
            io.out(0)[i] = self.prev_out;
            self.clock.count -= 1.0;
        }
    }
}

/// `TDuty.ar/kr(dur, reset, doneAction, level, gapFirst)`: as `Duty`, but
/// each level is a one-sample trigger (0 in between); with `gapFirst` the
/// first duration passes before the first trigger.
pub struct TDuty {
    clock: Clock,
}

impl Construct for TDuty {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut clock = Clock::new(io, cx);
        if io.num_inputs() > 4 && io.in0(4) != 0.0 {
            clock.count = (cx.demand_input(io, DUR) as f64 * cx.rate.sample_rate) as f32;
        }
        io.out(0)[0] = 0.0;
        TDuty { clock }
    }
}

impl Unit for TDuty {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let sr = cx.rate.sample_rate as f32;
        for i in 0..io.n() {
            let x = if self.clock.tick(io, cx, i, sr) {
                let x = cx.demand_input_at(io, LEVEL, i + 1);
                if x.is_nan() {
                    0.0
                } else {
                    x
                }
            } else {
                0.0
            };
            io.out(0)[i] = x;
            self.clock.count -= 1.0;
        }
    }
}
