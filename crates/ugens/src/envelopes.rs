//! Envelope generators: Line, XLine, EnvGen, Linen, and IEnvGen (an envelope
//! read at an index).
//!
//! Segment arithmetic follows scsynth's f32/f64 mix step by step, including
//! its vectorised block fills (see [`crate::simd::fill`]), so that outputs agree to the bit.

mod env_gen;
pub(crate) mod ienv_gen;

use crate::simd::fill;

use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

pub use env_gen::EnvGen;

/// Line: a linear ramp from `start` to `end` over `dur` seconds, then holds.
/// Inputs: start, end, dur, doneAction.
pub struct Line {
    level: f64,
    slope: f64,
    end_level: f32,
    counter: i32,
    simd: bool,
}

impl Construct for Line {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let start = io.in0(0) as f64;
        let end = io.in0(1) as f64;
        let dur = io.in0(2) as f64;
        let counter = (dur * cx.rate.sample_rate + 0.5) as i32;
        let mut unit = Line {
            level: end,
            slope: 0.0,
            end_level: end as f32,
            counter: counter.max(1),
            simd: spec.rate == Rate::Audio && fill::simd_block(cx.rate.buf_length),
        };
        if counter != 0 {
            unit.slope = (end - start) / unit.counter as f64;
            // scsynth 3.13 starts one step in: the first sample is start + slope.
            unit.level = start + unit.slope;
        }
        io.out(0)[0] = unit.level as f32;
        unit
    }
}

impl Line {
    fn run_loop(&mut self, out: &mut [f32], done_action: f32, cx: &mut UnitCtx<'_>) {
        let mut pos = 0;
        while pos < out.len() {
            if self.counter == 0 {
                out[pos..].fill(self.end_level);
                return;
            }
            let nsmps = (out.len() - pos).min(self.counter as usize);
            self.counter -= nsmps as i32;
            for o in &mut out[pos..pos + nsmps] {
                *o = self.level as f32;
                self.level += self.slope;
            }
            pos += nsmps;
            if self.counter == 0 {
                cx.set_done(true);
                cx.done_action(done_action as i32);
            }
        }
    }
}

impl Unit for Line {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let done_action = io.in0(3);
        let n = io.n();
        let out = io.out(0);
        if self.simd {
            if self.counter == 0 {
                out.fill(self.end_level);
                return;
            }
            if self.counter as usize > n {
                fill::slope_fill(out, self.level as f32, self.slope as f32);
                self.level += n as f64 * self.slope;
                self.counter -= n as i32;
                return;
            }
        }
        self.run_loop(out, done_action, cx);
    }
}

/// XLine: an exponential ramp from `start` to `end` over `dur` seconds.
/// Inputs: start, end, dur, doneAction.
pub struct XLine {
    level: f64,
    growth: f64,
    end_level: f32,
    counter: i32,
    simd: bool,
}

impl Construct for XLine {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let start = io.in0(0) as f64;
        let end = io.in0(1) as f64;
        let dur = io.in0(2) as f64;
        let counter = (dur * cx.rate.sample_rate + 0.5) as i32;
        let simd = spec.rate == Rate::Audio && fill::simd_block(cx.rate.buf_length);
        let unit = if counter == 0 {
            io.out(0)[0] = end as f32;
            XLine { level: end, growth: 0.0, end_level: end as f32, counter: 0, simd }
        } else {
            io.out(0)[0] = start as f32;
            let growth = (end / start).powf(1.0 / counter as f64);
            XLine { level: start * growth, growth, end_level: end as f32, counter, simd }
        };
        unit
    }
}

impl Unit for XLine {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let done_action = io.in0(3);
        let n = io.n();
        let out = io.out(0);
        if self.simd {
            if self.counter == 0 {
                out.fill(self.level as f32);
                return;
            }
            if self.counter as usize > n {
                fill::exp_fill(out, self.level as f32, self.growth as f32);
                self.level *= fill::powi(self.growth, n as u32);
                self.counter -= n as i32;
                return;
            }
        }
        let mut pos = 0;
        while pos < n {
            if self.counter == 0 {
                out[pos..].fill(self.level as f32);
                return;
            }
            let nsmps = (n - pos).min(self.counter as usize);
            self.counter -= nsmps as i32;
            for o in &mut out[pos..pos + nsmps] {
                *o = self.level as f32;
                self.level *= self.growth;
            }
            pos += nsmps;
            if self.counter == 0 {
                self.level = self.end_level as f64;
                cx.set_done(true);
                cx.done_action(done_action as i32);
            }
        }
    }
}

/// Linen: attack to a sustain level while the gate is open, linear release
/// when it closes. Inputs: gate, attackTime, susLevel, releaseTime,
/// doneAction. Computes one value per block, as in scsynth.
pub struct Linen {
    level: f64,
    slope: f64,
    counter: i32,
    stage: u8,
    prev_gate: f32,
}

impl Construct for Linen {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = Linen { level: 0.0, slope: 0.0, counter: 0, stage: 4, prev_gate: 0.0 };
        if io.in0(0) <= -1.0 {
            // Created already in forced release: skip straight to sustain.
            unit.stage = 1;
        }
        unit.next(io, cx);
        unit
    }
}

impl Linen {
    fn start_release(&mut self, release_time: f32, sample_rate: f64) {
        self.stage = 2;
        let counter = ((release_time as f64 * sample_rate) as i32).max(1);
        self.slope = -self.level / counter as f64;
        self.counter = counter;
    }
}

impl Unit for Linen {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let gate = io.in0(0);
        let sample_rate = cx.rate.sample_rate;
        if self.prev_gate <= 0.0 && gate > 0.0 {
            cx.set_done(false);
            self.stage = 0;
            let attack = io.in0(1);
            let sus_level = io.in0(2);
            let counter = ((attack as f64 * sample_rate) as i32).max(1);
            self.slope = (sus_level as f64 - self.level) / counter as f64;
            self.counter = counter;
        }
        let value = match self.stage {
            0 | 2 => {
                let v = self.level as f32;
                self.level += self.slope;
                self.counter -= 1;
                if self.counter == 0 {
                    self.stage += 1;
                }
                v
            }
            1 => {
                let v = self.level as f32;
                if gate <= -1.0 {
                    self.start_release(-gate - 1.0, sample_rate);
                } else if gate <= 0.0 {
                    self.start_release(io.in0(3), sample_rate);
                }
                v
            }
            3 => {
                cx.set_done(true);
                self.stage = 4;
                cx.done_action(io.in0(4) as i32);
                0.0
            }
            _ => 0.0,
        };
        io.out(0)[0] = value;
        self.prev_gate = gate;
    }
}


#[cfg(test)]
mod tests;
