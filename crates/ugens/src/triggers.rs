//! Trigger and gate units, counters, ramps, peak trackers, the units that
//! follow a signal's history ([`trackers`]), and the units that act on
//! nodes. A trigger is a change from <= 0 to > 0.

mod node_control;
mod trackers;

use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

pub use node_control::{ActWhenDone, Done, Free, FreeSelf, Pause, PauseSelf};
pub use trackers::{LastValue, LeastChange, ModDif, MostChange, PeakFollower, RunningSum, ZeroCrossing};

/// Sample `j` of an input; control and scalar inputs hold one value.
#[inline]
fn at(s: &[f32], j: usize) -> f32 {
    if s.len() == 1 {
        s[0]
    } else {
        s[j]
    }
}

#[inline]
fn rising(prev: f32, cur: f32) -> bool {
    prev <= 0.0 && cur > 0.0
}

/// Trigger length in samples, rounded in f32 as scsynth does, at least 1.
#[inline]
fn trigger_samples(dur: f32, sample_rate: f64) -> u64 {
    let c = (dur * sample_rate as f32 + 0.5) as i64;
    c.max(1) as u64
}

/// Trig and Trig1: on a trigger, output the trigger value (Trig) or 1
/// (Trig1) for `dur` seconds, then 0. Inputs: in, dur.
pub struct TrigHold {
    level: f32,
    prev_trig: f32,
    counter: u64,
    /// Hold the trigger's value (Trig) rather than 1 (Trig1).
    keep_value: bool,
    /// Audio-rate unit with a non-audio trigger: read it once per block.
    once_per_block: bool,
}

impl TrigHold {
    fn build(keep_value: bool, spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = TrigHold {
            level: 0.0,
            prev_trig: 0.0,
            counter: 0,
            keep_value,
            once_per_block: spec.rate == Rate::Audio && io.in_rate(0) != Rate::Audio,
        };
        // The constructor's sample counts: its state carries on.
        let per_block = unit.once_per_block;
        unit.once_per_block = false;
        unit.next(io, cx);
        unit.once_per_block = per_block;
        unit
    }

    pub fn new_trig(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(true, spec, io, cx))
    }

    pub fn new_trig1(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(false, spec, io, cx))
    }
}

impl Unit for TrigHold {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let dur = io.in0(1);
        let sr = cx.rate.sample_rate;
        let n = io.n();
        let (mut prev, mut counter, mut level) = (self.prev_trig, self.counter, self.level);
        let out = io.out(0);
        for j in 0..n {
            let cur = if self.once_per_block { trig[0] } else { at(trig, j) };
            out[j] = if counter > 0 {
                counter -= 1;
                if counter > 0 {
                    level
                } else {
                    0.0
                }
            } else if rising(prev, cur) {
                counter = trigger_samples(dur, sr);
                level = if self.keep_value { cur } else { 1.0 };
                level
            } else {
                0.0
            };
            prev = cur;
        }
        self.prev_trig = prev;
        self.counter = counter;
        self.level = level;
    }
}

/// TDelay: a single-sample trigger `dur` seconds after each trigger that
/// arrives while no delay is pending. Inputs: in, dur.
pub struct TDelay {
    counter: i64,
    prev_trig: f32,
}

impl Construct for TDelay {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = TDelay { counter: 0, prev_trig: 0.0 };
        unit.next(io, cx);
        unit
    }
}

impl Unit for TDelay {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let dur = io.in0(1);
        let sr = cx.rate.sample_rate;
        let n = io.n();
        let (mut prev, mut counter) = (self.prev_trig, self.counter);
        let out = io.out(0);
        for j in 0..n {
            let cur = at(trig, j);
            out[j] = if counter > 1 {
                counter -= 1;
                0.0
            } else if counter <= 0 {
                if rising(prev, cur) {
                    // f32 duration times the f64 rate, plus 0.5f.
                    counter = ((dur as f64 * sr + 0.5) as i64).max(1);
                }
                0.0
            } else {
                counter = 0;
                1.0
            };
            prev = cur;
        }
        self.prev_trig = prev;
        self.counter = counter;
    }
}

/// Latch: samples the input on each trigger and holds it. Inputs: in, trig.
pub struct Latch {
    level: f32,
    prev_trig: f32,
}

impl Construct for Latch {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let v = if io.in0(1) > 0.0 { io.in0(0) } else { 0.0 };
        io.out(0)[0] = v;
        Latch { level: 0.0, prev_trig: 0.0 }
    }
}

impl Unit for Latch {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let input = io.inp(0);
        let n = io.n();
        if io.in_rate(1) == Rate::Audio {
            let trig = io.inp(1);
            let (mut prev, mut level) = (self.prev_trig, self.level);
            let out = io.out(0);
            for j in 0..n {
                let cur = trig[j];
                if rising(prev, cur) {
                    level = at(input, j);
                }
                out[j] = level;
                prev = cur;
            }
            self.prev_trig = prev;
            self.level = level;
        } else {
            let cur = io.in0(1);
            if rising(self.prev_trig, cur) {
                self.level = input[0];
            }
            self.prev_trig = cur;
            let level = self.level;
            io.out(0).fill(level);
        }
    }
}

/// Gate: passes the input while the gate is > 0, else holds the last value.
/// Inputs: in, gate.
pub struct Gate {
    level: f32,
}

impl Construct for Gate {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = Gate { level: 0.0 };
        unit.next_block_gate(io);
        unit
    }
}

impl Gate {
    fn next_block_gate(&mut self, io: &mut Wires<'_>) {
        let input = io.inp(0);
        let open = io.in0(1) > 0.0;
        let n = io.n();
        let out = io.out(0);
        if open {
            for j in 0..n {
                out[j] = at(input, j);
            }
            self.level = out[n - 1];
        } else {
            out.fill(self.level);
        }
    }
}

impl Unit for Gate {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if io.in_rate(1) != Rate::Audio {
            self.next_block_gate(io);
            return;
        }
        let input = io.inp(0);
        let gate = io.inp(1);
        let n = io.n();
        let mut level = self.level;
        let out = io.out(0);
        for j in 0..n {
            if gate[j] > 0.0 {
                level = at(input, j);
            }
            out[j] = level;
        }
        self.level = level;
    }
}

/// PulseCount: counts triggers; a reset trigger sets the count to 0.
/// Inputs: trig, reset.
pub struct PulseCount {
    level: f32,
    prev_trig: f32,
    prev_reset: f32,
}

impl Construct for PulseCount {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = PulseCount { level: 0.0, prev_trig: 0.0, prev_reset: 0.0 };
        unit.run(io, cx, true);
        unit
    }
}

impl PulseCount {
    fn run(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>, block_reset: bool) {
        let trig = io.inp(0);
        let reset = io.inp(1);
        let reset_rate = io.in_rate(1);
        let n = io.n();
        let (mut prev, mut prev_reset, mut level) = (self.prev_trig, self.prev_reset, self.level);
        let out = io.out(0);
        for j in 0..n {
            let cur = at(trig, j);
            if reset_rate == Rate::Scalar && !block_reset {
                if rising(prev, cur) {
                    level += 1.0;
                }
            } else {
                let cur_reset = if block_reset { reset[0] } else { at(reset, j) };
                if rising(prev_reset, cur_reset) {
                    level = 0.0;
                } else if rising(prev, cur) {
                    level += 1.0;
                }
                prev_reset = cur_reset;
            }
            out[j] = level;
            prev = cur;
        }
        self.level = level;
        self.prev_trig = prev;
        self.prev_reset = prev_reset;
    }
}

impl Unit for PulseCount {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let block_reset = io.in_rate(1) == Rate::Control;
        self.run(io, cx, block_reset);
    }
}

/// PulseDivider: one output trigger every `div` input triggers.
/// Inputs: trig, div, start.
pub struct PulseDivider {
    prev_trig: f32,
    counter: i64,
}

impl Construct for PulseDivider {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let counter = (io.in0(2) as f64 + 0.5).floor() as i64;
        let mut unit = PulseDivider { prev_trig: 0.0, counter };
        unit.next(io, cx);
        unit
    }
}

impl Unit for PulseDivider {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let div = io.in0(1) as i64;
        let n = io.n();
        let (mut prev, mut counter) = (self.prev_trig, self.counter);
        let out = io.out(0);
        for j in 0..n {
            let cur = at(trig, j);
            out[j] = if rising(prev, cur) {
                counter += 1;
                if counter >= div {
                    counter = 0;
                    1.0
                } else {
                    0.0
                }
            } else {
                0.0
            };
            prev = cur;
        }
        self.counter = counter;
        self.prev_trig = prev;
    }
}

/// Integer wrap into [lo, hi] inclusive, as scsynth's `sc_wrap(int, ...)`.
fn wrap_int(x: i32, lo: i32, hi: i32) -> i32 {
    let span = hi.wrapping_sub(lo).wrapping_add(1);
    let mut v = x.wrapping_sub(lo);
    let m = if v >= span {
        v -= span;
        if v < span {
            Some(v)
        } else {
            None
        }
    } else if v < 0 {
        v += span;
        if v >= 0 {
            Some(v)
        } else {
            None
        }
    } else {
        Some(v)
    };
    let m = m.unwrap_or_else(|| {
        if span == 0 {
            0
        } else {
            let c = v.wrapping_rem(span);
            if c < 0 {
                c + span
            } else {
                c
            }
        }
    });
    m.wrapping_add(lo)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StepperMode {
    /// Reset input read per sample.
    ResetPerSample,
    /// Reset input read once per block.
    ResetPerBlock,
    /// Constant reset input: never resets.
    NoReset,
}

/// Stepper: steps an integer counter on each trigger, wrapping within
/// [min, max]. Inputs: trig, reset, min, max, step, resetval.
pub struct Stepper {
    level: f32,
    prev_trig: f32,
    prev_reset: f32,
    mode: StepperMode,
}

impl Construct for Stepper {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let audio = spec.rate == Rate::Audio && io.in_rate(0) == Rate::Audio;
        let mode = if audio && io.in_rate(1) == Rate::Scalar {
            StepperMode::NoReset
        } else if audio && io.in_rate(1) != Rate::Audio {
            StepperMode::ResetPerBlock
        } else {
            StepperMode::ResetPerSample
        };
        let reset_val = io.in0(5) as i32;
        let mut unit =
            Stepper { level: reset_val as f32, prev_trig: 0.0, prev_reset: 0.0, mode: StepperMode::ResetPerBlock };
        unit.next(io, cx);
        unit.mode = mode;
        unit
    }
}

impl Unit for Stepper {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let reset = io.inp(1);
        let zmin = io.in0(2) as i32;
        let zmax = io.in0(3) as i32;
        let step = io.in0(4) as i32;
        let reset_val = io.in0(5) as i32;
        let n = io.n();
        let (mut prev, mut prev_reset, mut level) = (self.prev_trig, self.prev_reset, self.level);
        let out = io.out(0);
        for j in 0..n {
            let cur = at(trig, j);
            let reset_now = match self.mode {
                StepperMode::NoReset => false,
                StepperMode::ResetPerBlock => {
                    let r = reset[0];
                    let fire = rising(prev_reset, r);
                    prev_reset = r;
                    fire
                }
                StepperMode::ResetPerSample => {
                    let r = at(reset, j);
                    let fire = rising(prev_reset, r);
                    prev_reset = r;
                    fire
                }
            };
            if reset_now {
                level = wrap_int(reset_val, zmin, zmax) as f32;
            } else if rising(prev, cur) {
                level = wrap_int((level as i32).wrapping_add(step), zmin, zmax) as f32;
            }
            out[j] = level;
            prev = cur;
        }
        self.level = level;
        self.prev_trig = prev;
        self.prev_reset = prev_reset;
    }
}

/// ToggleFF: flips between 0 and 1 on each trigger. Input: trig.
pub struct ToggleFF {
    level: f32,
    prev_trig: f32,
}

impl Construct for ToggleFF {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.out(0)[0] = 0.0;
        ToggleFF { level: 0.0, prev_trig: 0.0 }
    }
}

impl Unit for ToggleFF {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let n = io.n();
        let (mut prev, mut level) = (self.prev_trig, self.level);
        let out = io.out(0);
        for j in 0..n {
            let cur = at(trig, j);
            if rising(prev, cur) {
                level = 1.0 - level;
            }
            out[j] = level;
            prev = cur;
        }
        self.prev_trig = prev;
        self.level = level;
    }
}

/// SetResetFF: set to 1 by a trigger, to 0 by a reset trigger (reset wins).
/// Inputs: trig, reset.
pub struct SetResetFF {
    level: f32,
    prev_trig: f32,
    prev_reset: f32,
}

impl Construct for SetResetFF {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = SetResetFF { level: 0.0, prev_trig: 0.0, prev_reset: 0.0 };
        unit.next_block_reset(io);
        unit
    }
}

impl SetResetFF {
    fn next_block_reset(&mut self, io: &mut Wires<'_>) {
        let trig = io.inp(0);
        let cur_reset = io.in0(1);
        let n = io.n();
        let (mut prev, mut level) = (self.prev_trig, self.level);
        let out = io.out(0);
        // The reset is checked on the first sample of the block only.
        let cur = trig[0];
        if rising(self.prev_reset, cur_reset) {
            level = 0.0;
        } else if rising(prev, cur) {
            level = 1.0;
        }
        out[0] = level;
        prev = cur;
        for j in 1..n {
            let cur = at(trig, j);
            if rising(prev, cur) {
                level = 1.0;
            }
            out[j] = level;
            prev = cur;
        }
        self.prev_trig = prev;
        self.prev_reset = cur_reset;
        self.level = level;
    }
}

impl Unit for SetResetFF {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if io.in_rate(1) != Rate::Audio {
            self.next_block_reset(io);
            return;
        }
        let trig = io.inp(0);
        let reset = io.inp(1);
        let n = io.n();
        let (mut prev, mut prev_reset, mut level) = (self.prev_trig, self.prev_reset, self.level);
        let out = io.out(0);
        for j in 0..n {
            let (cur, cur_reset) = (at(trig, j), reset[j]);
            if rising(prev_reset, cur_reset) {
                level = 0.0;
            } else if rising(prev, cur) {
                level = 1.0;
            }
            out[j] = level;
            prev = cur;
            prev_reset = cur_reset;
        }
        self.prev_trig = prev;
        self.prev_reset = prev_reset;
        self.level = level;
    }
}

/// Schmidt trigger: goes to 1 above `hi`, back to 0 below `lo`.
/// Inputs: in, lo, hi.
pub struct Schmidt {
    level: f32,
}

impl Construct for Schmidt {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = Schmidt { level: 0.0 };
        unit.next(io, cx);
        unit
    }
}

impl Unit for Schmidt {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let input = io.inp(0);
        let (lo, hi) = (io.in0(1), io.in0(2));
        let n = io.n();
        let mut level = self.level;
        let out = io.out(0);
        for j in 0..n {
            let x = at(input, j);
            if level == 1.0 {
                if x < lo {
                    level = 0.0;
                }
            } else if x > hi {
                level = 1.0;
            }
            out[j] = level;
        }
        self.level = level;
    }
}

/// Timer: the time in seconds between the last two triggers, interpolated
/// to the sub-sample crossing. Input: trig.
pub struct Timer {
    level: f32,
    prev_frac: f32,
    prev_in: f32,
    counter: i64,
}

impl Construct for Timer {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let prev_in = io.in0(0);
        io.out(0)[0] = 0.0;
        Timer { level: 0.0, prev_frac: 0.0, prev_in, counter: 0 }
    }
}

impl Unit for Timer {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let input = io.inp(0);
        let sample_dur = cx.rate.sample_dur;
        let n = io.n();
        let (mut prev_in, mut prev_frac, mut level, mut counter) =
            (self.prev_in, self.prev_frac, self.level, self.counter);
        let out = io.out(0);
        for j in 0..n {
            counter += 1;
            let cur = at(input, j);
            if prev_in <= 0.0 && cur > 0.0 {
                let frac = -prev_in / (cur - prev_in);
                level = (sample_dur * ((frac + counter as f32) - prev_frac) as f64) as f32;
                prev_frac = frac;
                counter = 0;
            }
            out[j] = level;
            prev_in = cur;
        }
        self.prev_in = prev_in;
        self.prev_frac = prev_frac;
        self.level = level;
        // scsynth keeps the counter in an int32 between blocks.
        self.counter = counter as i32 as i64;
    }
}

/// Sweep: a ramp rising at `rate` per second, restarted by triggers.
/// Inputs: trig, rate.
pub struct Sweep {
    level: f64,
    prev_in: f32,
}

impl Construct for Sweep {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let prev_in = io.in0(0);
        io.out(0)[0] = 0.0;
        Sweep { level: 0.0, prev_in }
    }
}

impl Unit for Sweep {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let rate = io.inp(1);
        let trig_rate = io.in_rate(0);
        let rate_audio = io.in_rate(1) == Rate::Audio;
        let sample_dur = cx.rate.sample_dur;
        let sample_dur_f = sample_dur as f32;
        let n = io.n();
        let mut level = self.level;
        let out = io.out(0);
        // Control-rate rate: f32 input times the f64 sample duration.
        let block_rate = rate[0] as f64 * sample_dur;
        match trig_rate {
            Rate::Audio => {
                let mut prev = self.prev_in;
                for j in 0..n {
                    let cur = trig[j];
                    let step = if rate_audio { (rate[j] * sample_dur_f) as f64 } else { block_rate };
                    if prev <= 0.0 && cur > 0.0 {
                        let frac = -prev / (cur - prev);
                        level = if rate_audio {
                            (frac * (rate[j] * sample_dur_f)) as f64
                        } else {
                            frac as f64 * block_rate
                        };
                    } else {
                        level += step;
                    }
                    out[j] = level as f32;
                    prev = cur;
                }
                self.prev_in = prev;
            }
            _ => {
                if trig_rate == Rate::Control {
                    let cur = trig[0];
                    let prev = self.prev_in;
                    if prev <= 0.0 && cur > 0.0 {
                        let frac = -prev / (cur - prev);
                        level = if rate_audio {
                            (frac * rate[0] * sample_dur_f) as f64
                        } else {
                            frac as f64 * block_rate
                        };
                    }
                    self.prev_in = cur;
                }
                for j in 0..n {
                    level += if rate_audio { (rate[j] * sample_dur_f) as f64 } else { block_rate };
                    out[j] = level as f32;
                }
            }
        }
        self.level = level;
    }
}


#[derive(Clone, Copy, PartialEq, Eq)]
enum PhasorMode {
    /// Trigger and rate read once per block.
    Block,
    /// Trigger per sample, rate per block.
    TrigPerSample,
    /// Trigger and rate per sample.
    AllPerSample,
}

/// Phasor: a wrapping ramp from start to end, jumped to resetPos by a
/// trigger. Inputs: trig, rate, start, end, resetPos.
pub struct Phasor {
    level: f64,
    prev_in: f32,
    mode: PhasorMode,
}

impl Construct for Phasor {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mode = if spec.rate == Rate::Audio {
            if io.in_rate(0) == Rate::Audio {
                if io.in_rate(1) == Rate::Audio {
                    PhasorMode::AllPerSample
                } else {
                    PhasorMode::TrigPerSample
                }
            } else {
                PhasorMode::Block
            }
        } else {
            PhasorMode::TrigPerSample
        };
        let level = io.in0(2) as f64;
        io.out(0)[0] = level as f32;
        Phasor { level, prev_in: io.in0(0), mode }
    }
}

impl Unit for Phasor {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let trig = io.inp(0);
        let rate_in = io.inp(1);
        let start = io.in0(2) as f64;
        let end = io.in0(3) as f64;
        let reset_pos = io.in0(4);
        let n = io.n();
        let mut level = self.level;
        let out = io.out(0);
        match self.mode {
            PhasorMode::Block => {
                let cur = trig[0];
                let rate = rate_in[0] as f64;
                if self.prev_in <= 0.0 && cur > 0.0 {
                    level = reset_pos as f64;
                }
                for o in out.iter_mut() {
                    level = crate::common::math::sc_wrap_f64(level, start, end);
                    *o = level as f32;
                    level += rate;
                }
                self.prev_in = cur;
            }
            PhasorMode::TrigPerSample | PhasorMode::AllPerSample => {
                let mut prev = self.prev_in;
                let per_sample_rate = self.mode == PhasorMode::AllPerSample;
                for j in 0..n {
                    let cur = at(trig, j);
                    let rate = if per_sample_rate { rate_in[j] as f64 } else { rate_in[0] as f64 };
                    if prev <= 0.0 && cur > 0.0 {
                        let frac = 1.0 - prev / (cur - prev);
                        level = reset_pos as f64 + frac as f64 * rate;
                    }
                    out[j] = level as f32;
                    level += rate;
                    level = crate::common::math::sc_wrap_f64(level, start, end);
                    prev = cur;
                }
                self.prev_in = prev;
            }
        }
        self.level = level;
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TrackKind {
    /// Largest absolute value.
    Peak,
    RunningMax,
    RunningMin,
}

/// Peak, RunningMax, RunningMin: track the extreme of the input since the
/// last trigger. Inputs: in, trig.
pub struct Tracker {
    level: f32,
    prev_trig: f32,
    kind: TrackKind,
    /// Control-rate Peak of an audio input: scan the whole input block.
    block_peak: bool,
}

impl Tracker {
    fn build(kind: TrackKind, spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let level = io.in0(0);
        io.out(0)[0] = level;
        let block_peak = kind == TrackKind::Peak
            && spec.rate != Rate::Audio
            && cx.rate.buf_length == 1
            && io.in_rate(0) == Rate::Audio;
        Tracker { level, prev_trig: 0.0, kind, block_peak }
    }

    pub fn new_peak(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(TrackKind::Peak, spec, io, cx))
    }

    pub fn new_running_max(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(TrackKind::RunningMax, spec, io, cx))
    }

    pub fn new_running_min(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        Box::new(Self::build(TrackKind::RunningMin, spec, io, cx))
    }

    /// The input's contribution and the updated extreme, in scsynth's
    /// comparison order.
    #[inline]
    fn step(&self, x: f32, level: f32) -> (f32, f32) {
        match self.kind {
            TrackKind::Peak => {
                let inlevel = x.abs();
                (inlevel, if inlevel < level { level } else { inlevel })
            }
            TrackKind::RunningMax => (x, if x > level { x } else { level }),
            TrackKind::RunningMin => (x, if x < level { x } else { level }),
        }
    }

    fn next_block_peak(&mut self, io: &mut Wires<'_>) {
        let input = io.inp(0);
        let trig_rate = io.in_rate(1);
        let mut level = self.level;
        if trig_rate == Rate::Audio {
            let trig = io.inp(1);
            let mut prev = self.prev_trig;
            let mut out_level = None;
            for (j, &x) in input.iter().enumerate() {
                let cur = at(trig, j);
                let (inlevel, l) = self.step(x, level);
                level = l;
                if rising(prev, cur) {
                    out_level = Some(level);
                    level = inlevel;
                }
                prev = cur;
            }
            io.out(0)[0] = out_level.unwrap_or(level);
            self.prev_trig = prev;
        } else {
            let cur = io.in0(1);
            let mut inlevel = 0.0;
            for &x in input {
                let (i, l) = self.step(x, level);
                inlevel = i;
                level = l;
            }
            io.out(0)[0] = level;
            if trig_rate == Rate::Control {
                if rising(self.prev_trig, cur) {
                    level = inlevel;
                }
                self.prev_trig = cur;
            }
        }
        self.level = level;
    }
}

impl Unit for Tracker {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.block_peak {
            self.next_block_peak(io);
            return;
        }
        let input = io.inp(0);
        let n = io.n();
        let mut level = self.level;
        match io.in_rate(1) {
            Rate::Audio => {
                let trig = io.inp(1);
                let mut prev = self.prev_trig;
                let out = io.out(0);
                for j in 0..n {
                    let cur = trig[j];
                    let (inlevel, l) = self.step(at(input, j), level);
                    level = l;
                    out[j] = level;
                    if rising(prev, cur) {
                        level = inlevel;
                    }
                    prev = cur;
                }
                self.prev_trig = prev;
            }
            trig_rate => {
                let cur = io.in0(1);
                let mut inlevel = 0.0;
                let out = io.out(0);
                for j in 0..n {
                    let (i, l) = self.step(at(input, j), level);
                    inlevel = i;
                    level = l;
                    out[j] = level;
                }
                if trig_rate == Rate::Control {
                    if rising(self.prev_trig, cur) {
                        level = inlevel;
                    }
                    self.prev_trig = cur;
                }
            }
        }
        self.level = level;
    }
}

/// Select: outputs the input chosen by `which` (clipped to the range).
/// Inputs: which, in0, in1, ...
pub struct Select {
    per_sample: bool,
}

impl Construct for Select {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let per_sample = cx.rate.buf_length > 1 && io.in_rate(0) == Rate::Audio;
        let index = Self::index(io.in0(0), io.num_inputs());
        let v = io.in0(index);
        io.out(0)[0] = v;
        Select { per_sample }
    }
}

impl Select {
    #[inline]
    fn index(which: f32, num_inputs: usize) -> usize {
        let max_index = num_inputs as i32 - 1;
        let i = (which as i32).saturating_add(1);
        let i = if max_index < i { max_index } else { i };
        (if i < 1 { 1 } else { i }) as usize
    }
}

impl Unit for Select {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let num_inputs = io.num_inputs();
        if num_inputs < 2 {
            io.out(0).fill(0.0);
            return;
        }
        let n = io.n();
        if self.per_sample {
            let which = io.inp(0);
            // Inputs are gathered per sample; reading them first keeps the
            // output borrow separate.
            let mut ptr = io.out_ptr(0);
            for (j, &w) in which.iter().enumerate().take(n) {
                let v = at(io.inp(Self::index(w, num_inputs)), j);
                // SAFETY: `ptr` walks the `n` samples of output 0, which
                // do not overlap any input (the `Wires` contract).
                unsafe {
                    *ptr = v;
                    ptr = ptr.add(1);
                }
            }
        } else {
            let src = io.inp(Self::index(io.in0(0), num_inputs));
            let out = io.out(0);
            for (j, o) in out.iter_mut().enumerate() {
                *o = at(src, j);
            }
        }
    }
}


#[cfg(test)]
mod tests;
