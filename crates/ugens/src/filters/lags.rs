//! Smoothing units: exponential lags (one, two and three stages, and with
//! separate rise and fall times), linear Ramp and the Slew rate limiter.

use crate::common::signal::{clip_f64, decay_coef, in0, in_rate, zap, In};
use crate::common::math::{d2i, f2i};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// Lag: one-pole smoothing that moves 60 dB of the way in `lagTime`.
/// Inputs: in, lagTime.
pub struct Lag {
    lag: f32,
    b1: f64,
    y1: f64,
    single: bool,
}

impl Lag {
    fn next_block(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let lag = in0(io, 1);
        let out = io.out(0);
        let mut y1 = self.y1;
        let mut b1 = self.b1;
        if lag == self.lag {
            for (i, o) in out.iter_mut().enumerate() {
                let y0 = inp.at(i) as f64;
                y1 = y0 + b1 * (y1 - y0);
                *o = y1 as f32;
            }
        } else {
            self.b1 = decay_coef(lag, cx.rate.sample_rate);
            let slope = (self.b1 - b1) * cx.rate.slope_factor;
            self.lag = lag;
            for (i, o) in out.iter_mut().enumerate() {
                b1 += slope;
                let y0 = inp.at(i) as f64;
                y1 = y0 + b1 * (y1 - y0);
                *o = y1 as f32;
            }
        }
        self.y1 = zap(y1);
    }

    fn next_single(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let y0 = in0(io, 0) as f64;
        let lag = in0(io, 1);
        if lag != self.lag {
            self.b1 = decay_coef(lag, cx.rate.sample_rate);
            self.lag = lag;
        }
        let y1 = y0 + self.b1 * (self.y1 - y0);
        io.out(0)[0] = y1 as f32;
        self.y1 = zap(y1);
    }
}

impl Construct for Lag {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Lag { lag: f32::NAN, b1: 0.0, y1: in0(io, 0) as f64, single: cx.rate.buf_length == 1 };
        u.next_block(io, cx);
        u
    }
}

impl Unit for Lag {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.single {
            self.next_single(io, cx);
        } else {
            self.next_block(io, cx);
        }
    }
}

/// Lag2: two Lag stages in series. Inputs: in, lagTime.
pub struct Lag2 {
    lag: f32,
    b1: f64,
    y1a: f64,
    y1b: f64,
    /// A constant lag time: the coefficient is never recomputed.
    fixed: bool,
}

impl Lag2 {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, check: bool) {
        let inp = In::new(io, 0);
        let lag = in0(io, 1);
        let out = io.out(0);
        let (mut y1a, mut y1b) = (self.y1a, self.y1b);
        let mut b1 = self.b1;
        if !check || lag == self.lag {
            for (i, o) in out.iter_mut().enumerate() {
                let y0a = inp.at(i) as f64;
                y1a = y0a + b1 * (y1a - y0a);
                y1b = y1a + b1 * (y1b - y1a);
                *o = y1b as f32;
            }
        } else {
            self.b1 = decay_coef(lag, cx.rate.sample_rate);
            let slope = (self.b1 - b1) * cx.rate.slope_factor;
            self.lag = lag;
            for (i, o) in out.iter_mut().enumerate() {
                b1 += slope;
                let y0a = inp.at(i) as f64;
                y1a = y0a + b1 * (y1a - y0a);
                y1b = y1a + b1 * (y1b - y1a);
                *o = y1b as f32;
            }
        }
        self.y1a = zap(y1a);
        self.y1b = zap(y1b);
    }
}

impl Construct for Lag2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0) as f64;
        let fixed = !matches!(in_rate(io, 1), Rate::Audio | Rate::Control);
        let mut u = Lag2 { lag: f32::NAN, b1: 0.0, y1a: x, y1b: x, fixed };
        u.run(io, cx, true);
        u
    }
}

impl Unit for Lag2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let check = !self.fixed;
        self.run(io, cx, check);
    }
}

/// Lag3: three Lag stages in series. Inputs: in, lagTime.
pub struct Lag3 {
    lag: f32,
    b1: f64,
    y1a: f64,
    y1b: f64,
    y1c: f64,
}

impl Construct for Lag3 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0) as f64;
        let mut u = Lag3 { lag: f32::NAN, b1: 0.0, y1a: x, y1b: x, y1c: x };
        u.next(io, cx);
        u
    }
}

impl Unit for Lag3 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let lag = in0(io, 1);
        let out = io.out(0);
        let (mut y1a, mut y1b, mut y1c) = (self.y1a, self.y1b, self.y1c);
        let mut b1 = self.b1;
        let mut slope = 0.0;
        let changed = lag != self.lag;
        if changed {
            self.b1 = decay_coef(lag, cx.rate.sample_rate);
            slope = (self.b1 - b1) * cx.rate.slope_factor;
            self.lag = lag;
        }
        for (i, o) in out.iter_mut().enumerate() {
            if changed {
                b1 += slope;
            }
            let y0a = inp.at(i) as f64;
            y1a = y0a + b1 * (y1a - y0a);
            y1b = y1a + b1 * (y1b - y1a);
            y1c = y1b + b1 * (y1c - y1b);
            *o = y1c as f32;
        }
        self.y1a = zap(y1a);
        self.y1b = zap(y1b);
        self.y1c = zap(y1c);
    }
}

/// LagUD: a Lag with one time for rising and another for falling input.
/// Inputs: in, lagTimeU, lagTimeD.
pub struct LagUd {
    lagu: f32,
    lagd: f32,
    b1u: f64,
    b1d: f64,
    y1: f64,
}

impl Construct for LagUd {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LagUd { lagu: f32::NAN, lagd: f32::NAN, b1u: 0.0, b1d: 0.0, y1: in0(io, 0) as f64 };
        u.next(io, cx);
        u
    }
}

impl Unit for LagUd {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let lagu = in0(io, 1);
        let lagd = in0(io, 2);
        let out = io.out(0);
        let mut y1 = self.y1;
        let (mut b1u, mut b1d) = (self.b1u, self.b1d);
        let changed = !(lagu == self.lagu && lagd == self.lagd);
        let (mut su, mut sd) = (0.0, 0.0);
        if changed {
            self.b1u = decay_coef(lagu, cx.rate.sample_rate);
            su = (self.b1u - b1u) * cx.rate.slope_factor;
            self.lagu = lagu;
            self.b1d = decay_coef(lagd, cx.rate.sample_rate);
            sd = (self.b1d - b1d) * cx.rate.slope_factor;
            self.lagd = lagd;
        }
        for (i, o) in out.iter_mut().enumerate() {
            if changed {
                b1u += su;
                b1d += sd;
            }
            let y0 = inp.at(i) as f64;
            let b1 = if y0 > y1 { b1u } else { b1d };
            y1 = y0 + b1 * (y1 - y0);
            *o = y1 as f32;
        }
        self.y1 = zap(y1);
    }
}

/// Ramp: linear interpolation towards the input value sampled every
/// `lagTime` seconds. Inputs: in, lagTime.
pub struct Ramp {
    level: f64,
    slope: f64,
    counter: i32,
    single: bool,
}

impl Ramp {
    fn segment_length(period: f32, sample_rate: f64) -> i32 {
        crate::common::signal::trunc_i32(period as f64 * sample_rate).max(1)
    }
}

impl Construct for Ramp {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let level = in0(io, 0) as f64;
        io.out(0)[0] = level as f32;
        Ramp { level, slope: 0.0, counter: 1, single: cx.rate.buf_length == 1 }
    }
}

impl Unit for Ramp {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let sr = cx.rate.sample_rate;
        if self.single {
            io.out(0)[0] = self.level as f32;
            self.level += self.slope;
            self.counter -= 1;
            if self.counter <= 0 {
                let x = in0(io, 0);
                self.counter = Self::segment_length(in0(io, 1), sr);
                self.slope = (x as f64 - self.level) / self.counter as f64;
            }
            return;
        }
        let inp = In::new(io, 0);
        let period = in0(io, 1);
        let out = io.out(0);
        let n = out.len();
        let (mut level, mut slope, mut counter) = (self.level, self.slope, self.counter);
        let mut pos = 0usize;
        while pos < n {
            let nsmps = ((n - pos) as i64).min(counter as i64).max(0) as usize;
            for o in &mut out[pos..pos + nsmps] {
                *o = level as f32;
                level += slope;
            }
            pos += nsmps;
            counter -= nsmps as i32;
            if counter <= 0 {
                counter = Self::segment_length(period, sr);
                // The new target is the input where the next segment starts;
                // at the block's end that sample is not known yet, so the
                // last one stands in for it.
                let x = inp.at(pos.min(n - 1));
                slope = (x as f64 - level) / counter as f64;
            }
        }
        self.level = level;
        self.slope = slope;
        self.counter = counter;
    }
}

/// Slew: limits the rate of change to `up` and `dn` units per second.
/// Inputs: in, up, dn.
pub struct Slew {
    level: f64,
}

impl Construct for Slew {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Slew { level: in0(io, 0) as f64 };
        u.next(io, cx);
        u
    }
}

impl Unit for Slew {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let dur = cx.rate.sample_dur as f32;
        let inp = In::new(io, 0);
        let upf = in0(io, 1) * dur;
        let dnf = 0.0f32 - in0(io, 2) * dur;
        let out = io.out(0);
        let mut level = self.level;
        for (i, o) in out.iter_mut().enumerate() {
            let slope = inp.at(i) as f64 - level;
            level += clip_f64(slope, dnf as f64, upf as f64);
            *o = level as f32;
        }
        self.level = level;
    }
}

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
