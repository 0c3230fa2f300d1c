//! Lags with separate rise and fall times in two and three stages
//! (Lag2UD, Lag3UD), the linear VarLag, the first-order section FOS and the
//! two-pole allpass APF.

use crate::filters::sig::{decay_coef, in0, in_rate, zap, In, Loops};
use crate::osc::tables::{d2i, f2i};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// Rise and fall coefficients of an up/down lag and the times they were
/// computed for. When a time changes, the coefficients glide to their new
/// values across the block.
struct UpDown {
    lagu: f32,
    lagd: f32,
    b1u: f64,
    b1d: f64,
}

impl UpDown {
    /// Runs `tick(i, b1u, b1d)` for each sample with the coefficients of
    /// that sample.
    #[inline(always)]
    fn run(&mut self, n: usize, lagu: f32, lagd: f32, cx: &UnitCtx<'_>, mut tick: impl FnMut(usize, f64, f64)) {
        let (mut b1u, mut b1d) = (self.b1u, self.b1d);
        if lagu == self.lagu && lagd == self.lagd {
            for i in 0..n {
                tick(i, b1u, b1d);
            }
            return;
        }
        self.b1u = decay_coef(lagu, cx.rate.sample_rate);
        let su = (self.b1u - b1u) * cx.rate.slope_factor;
        self.lagu = lagu;
        self.b1d = decay_coef(lagd, cx.rate.sample_rate);
        let sd = (self.b1d - b1d) * cx.rate.slope_factor;
        self.lagd = lagd;
        for i in 0..n {
            b1u += su;
            b1d += sd;
            tick(i, b1u, b1d);
        }
    }
}

/// One lag stage: towards `x` with the rise coefficient when `rising`.
#[inline(always)]
fn stage(x: f64, y: f64, rising: bool, b1u: f64, b1d: f64) -> f64 {
    let b1 = if rising { b1u } else { b1d };
    x + b1 * (y - x)
}

/// Lag2UD: two up/down lag stages in series. Inputs: in, lagTimeU, lagTimeD.
pub struct Lag2Ud {
    coefs: UpDown,
    y1a: f64,
    y1b: f64,
}

impl Construct for Lag2Ud {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0) as f64;
        // scsynth starts from zero times (not "unknown"), so constant zero
        // times never glide.
        let coefs = UpDown { lagu: 0.0, lagd: 0.0, b1u: 0.0, b1d: 0.0 };
        let mut u = Lag2Ud { coefs, y1a: x, y1b: x };
        u.next(io, cx);
        u
    }
}

impl Unit for Lag2Ud {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let (lagu, lagd) = (in0(io, 1), in0(io, 2));
        let out = io.out(0);
        let (mut y1a, mut y1b) = (self.y1a, self.y1b);
        self.coefs.run(out.len(), lagu, lagd, cx, |i, bu, bd| {
            let x = inp.at(i) as f64;
            y1a = stage(x, y1a, x > y1a, bu, bd);
            y1b = stage(y1a, y1b, y1a > y1b, bu, bd);
            out[i] = y1b as f32;
        });
        self.y1a = zap(y1a);
        self.y1b = zap(y1b);
    }
}

/// Lag3UD: three up/down lag stages in series. Inputs: in, lagTimeU,
/// lagTimeD. As in scsynth, the third stage picks its coefficient from the
/// first two stages' outputs, not from its own input and state.
pub struct Lag3Ud {
    coefs: UpDown,
    y1a: f64,
    y1b: f64,
    y1c: f64,
}

impl Construct for Lag3Ud {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0) as f64;
        let coefs = UpDown { lagu: f32::NAN, lagd: f32::NAN, b1u: 0.0, b1d: 0.0 };
        let mut u = Lag3Ud { coefs, y1a: x, y1b: x, y1c: x };
        u.next(io, cx);
        u
    }
}

impl Unit for Lag3Ud {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let (lagu, lagd) = (in0(io, 1), in0(io, 2));
        let out = io.out(0);
        let (mut y1a, mut y1b, mut y1c) = (self.y1a, self.y1b, self.y1c);
        self.coefs.run(out.len(), lagu, lagd, cx, |i, bu, bd| {
            let x = inp.at(i) as f64;
            y1a = stage(x, y1a, x > y1a, bu, bd);
            y1b = stage(y1a, y1b, y1a > y1b, bu, bd);
            y1c = stage(y1b, y1c, y1a > y1b, bu, bd);
            out[i] = y1c as f32;
        });
        self.y1a = zap(y1a);
        self.y1b = zap(y1b);
        self.y1c = zap(y1c);
    }
}

/// VarLag: moves linearly to each new input value over `time` seconds;
/// a new time rescales the ramp in progress. Inputs: in, time, start.
pub struct VarLag {
    level: f64,
    slope: f64,
    counter: i32,
    input: f32,
    lag_time: f32,
    single: bool,
}

impl VarLag {
    /// The block form: the input is read at the block's first sample.
    fn next_block(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let x = in0(io, 0);
        let lag_time = in0(io, 1);
        let (mut level, mut slope, mut counter) = (self.level, self.slope, self.counter);
        if x != self.input {
            counter = d2i(lag_time as f64 * cx.rate.sample_rate).max(1);
            self.counter = counter;
            slope = (x as f64 - self.level) / counter as f64;
            self.slope = slope;
            self.input = x;
            self.lag_time = lag_time;
        } else if lag_time != self.lag_time {
            let scale = lag_time / self.lag_time;
            counter = f2i(self.counter as f32 * scale).max(1);
            self.counter = counter;
            slope = self.slope / scale as f64;
            self.lag_time = lag_time;
        }
        let target = self.input as f64;
        let out = io.out(0);
        if counter > 0 {
            for o in out.iter_mut() {
                *o = level as f32;
                if counter > 0 {
                    level += slope;
                    counter -= 1;
                } else {
                    level = target;
                }
            }
        } else {
            // A ramp that ended exactly at a block's end holds its last
            // step: scsynth snaps to the target only within a block.
            out.fill(level as f32);
        }
        self.level = level;
        self.slope = slope;
        self.counter = counter;
    }

    /// The one-sample form, which rescales in double precision and only
    /// while a ramp is in progress.
    fn next_single(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let x = in0(io, 0);
        let lag_time = in0(io, 1);
        let mut counter = self.counter;
        if x != self.input {
            counter = d2i(lag_time as f64 * cx.rate.sample_rate).max(1);
            self.counter = counter;
            self.slope = (x as f64 - self.level) / self.counter as f64;
            self.input = x;
            self.lag_time = lag_time;
        }
        if lag_time != self.lag_time {
            if counter != 0 {
                let scale = (lag_time / self.lag_time) as f64;
                self.counter = d2i(self.counter as f64 * scale).max(1);
                self.slope /= scale;
            }
            self.lag_time = lag_time;
        }
        io.out(0)[0] = self.level as f32;
        if self.counter > 0 {
            self.level += self.slope;
            self.counter -= 1;
        } else {
            self.level = self.input as f64;
        }
    }
}

impl Construct for VarLag {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0);
        let lag_time = in0(io, 1);
        let level = in0(io, 2) as f64;
        let counter = d2i(lag_time as f64 * cx.rate.sample_rate).max(1);
        io.out(0)[0] = level as f32;
        VarLag {
            level,
            slope: (x as f64 - level) / counter as f64,
            counter,
            input: x,
            lag_time,
            single: cx.rate.buf_length == 1,
        }
    }
}

impl Unit for VarLag {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.single {
            self.next_single(io, cx);
        } else {
            self.next_block(io, cx);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FosMode {
    Single,
    Audio,
    Glide,
}

/// FOS: y0 = in + b1 y1, out = a0 y0 + a1 y1. Inputs: in, a0, a1, b1.
pub struct Fos {
    y1: f64,
    a0: f64,
    a1: f64,
    b1: f64,
    mode: FosMode,
}

impl Fos {
    fn next_single(&mut self, io: &mut Wires<'_>) {
        let x = in0(io, 0);
        let (a0, a1, b1) = (in0(io, 1), in0(io, 2), in0(io, 3));
        let y1 = self.y1;
        let y0 = x as f64 + b1 as f64 * y1;
        io.out(0)[0] = (a0 as f64 * y0 + a1 as f64 * y1) as f32;
        self.y1 = zap(y0);
    }
}

impl Construct for Fos {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mode = if cx.rate.buf_length == 1 {
            FosMode::Single
        } else if (1..4).all(|k| in_rate(io, k) == Rate::Audio) {
            FosMode::Audio
        } else {
            FosMode::Glide
        };
        let mut u = Fos { y1: 0.0, a0: in0(io, 1) as f64, a1: in0(io, 2) as f64, b1: in0(io, 3) as f64, mode };
        u.next_single(io);
        u
    }
}

impl Unit for Fos {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.mode == FosMode::Single {
            self.next_single(io);
            return;
        }
        let inp = In::new(io, 0);
        let coef: [In<'_>; 3] = std::array::from_fn(|k| In::new(io, k + 1));
        let out = io.out(0);
        let mut y1 = self.y1;
        if self.mode == FosMode::Audio {
            for (i, o) in out.iter_mut().enumerate() {
                let y0 = inp.at(i) as f64 + coef[2].at(i) as f64 * y1;
                *o = (coef[0].at(i) as f64 * y0 + coef[1].at(i) as f64 * y1) as f32;
                y1 = y0;
            }
        } else {
            // The slope factor is narrowed to float, as the next values are floats.
            let sf = cx.rate.slope_factor as f32 as f64;
            let next: [f32; 3] = std::array::from_fn(|k| coef[k].first());
            let (mut a0, mut a1, mut b1) = (self.a0, self.a1, self.b1);
            let s0 = (next[0] as f64 - a0) * sf;
            let s1 = (next[1] as f64 - a1) * sf;
            let s2 = (next[2] as f64 - b1) * sf;
            for (i, o) in out.iter_mut().enumerate() {
                let y0 = inp.at(i) as f64 + b1 * y1;
                *o = (a0 * y0 + a1 * y1) as f32;
                y1 = y0;
                a0 += s0;
                a1 += s1;
                b1 += s2;
            }
            self.a0 = next[0] as f64;
            self.a1 = next[1] as f64;
            self.b1 = next[2] as f64;
        }
        self.y1 = zap(y1);
    }
}

/// APF: a two-pole allpass with poles at `freq` and radius `radius`.
/// Inputs: in, freq, radius. The recursion reproduces scsynth's exactly,
/// including the terms of its unrolled loop that differ from the textbook
/// allpass.
pub struct Apf {
    freq: f32,
    reson: f32,
    y1: f64,
    y2: f64,
    x1: f64,
    x2: f64,
    b1: f64,
    b2: f64,
}

impl Apf {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, loops: Loops) {
        let inp = In::new(io, 0);
        let (freq, reson) = (in0(io, 1), in0(io, 2));
        let out = io.out(0);
        let (mut y1, mut y2, mut x1, mut x2) = (self.y1, self.y2, self.x1, self.x2);
        let mut b = [self.b1, self.b2];
        let mut slope = [0.0; 2];
        let changed = freq != self.freq || reson != self.reson;
        if changed {
            let b1_next = (2.0f32 * reson) as f64 * (freq as f64 * cx.rate.radians_per_sample).cos();
            let b2_next = -(reson * reson) as f64;
            slope = [(b1_next - b[0]) * loops.slope, (b2_next - b[1]) * loops.slope];
            self.freq = freq;
            self.reson = reson;
            self.b1 = b1_next;
            self.b2 = b2_next;
        }
        let mut i = 0;
        for _ in 0..loops.loops {
            let [b1, b2] = b;
            let x0 = inp.at(i) as f64;
            let y0 = x0 + b1 * (y1 - x1) + b2 * (y2 - x2);
            out[i] = y0 as f32;
            x2 = inp.at(i + 1) as f64;
            y2 = x2 + b1 * (y0 - x0) + b2 * (y2 - x1);
            out[i + 1] = y2 as f32;
            x1 = inp.at(i + 2) as f64;
            y1 = x1 + b1 * (y2 - x2) + b2 * (y2 - x0);
            out[i + 2] = y1 as f32;
            i += 3;
            if changed {
                b[0] += slope[0];
                b[1] += slope[1];
            }
        }
        for _ in 0..loops.remain {
            let [b1, b2] = b;
            let x0 = inp.at(i) as f64;
            let y0 = x0 + b1 * (y1 - x1) + b2 * (y2 - x2);
            out[i] = y0 as f32;
            y2 = y1;
            y1 = y0;
            x2 = x1;
            x1 = x0;
            i += 1;
        }
        self.y1 = zap(y1);
        self.y2 = zap(y2);
        self.x1 = x1;
        self.x2 = x2;
    }
}

impl Construct for Apf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Apf {
            freq: f32::NAN,
            reson: f32::NAN,
            y1: 0.0,
            y2: 0.0,
            x1: 0.0,
            x2: 0.0,
            b1: 0.0,
            b2: 0.0,
        };
        u.run(io, cx, Loops::single(cx.rate));
        u
    }
}

impl Unit for Apf {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx, Loops::of(cx.rate));
    }
}
