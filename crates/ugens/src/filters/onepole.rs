//! First-order filters: OnePole, OneZero, Integrator, Decay, Decay2 and
//! the DC blocker LeakDC.

use crate::common::signal::{decay_coef, in0, in_rate, zap, In};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// OnePole: y = (1 - |b1|) x + b1 y[-1], written so that the gain at DC is
/// one for positive and at Nyquist one for negative coefficients.
/// Inputs: in, coef.
pub struct OnePole {
    b1: f64,
    y1: f64,
    audio_coef: bool,
}

impl OnePole {
    fn next_a(&mut self, io: &mut Wires<'_>) {
        let inp = In::new(io, 0);
        let coef = In::new(io, 1);
        let out = io.out(0);
        let mut y1 = self.y1;
        for (i, o) in out.iter_mut().enumerate() {
            let y0 = inp.at(i) as f64;
            let b1 = coef.at(i) as f64;
            y1 = y0 + b1 * (y1 - y0);
            *o = y1 as f32;
        }
        self.y1 = zap(y1);
    }

    fn next_k(&mut self, io: &mut Wires<'_>, slope_factor: f64) {
        let inp = In::new(io, 0);
        let mut b1 = self.b1;
        self.b1 = in0(io, 1) as f64;
        let next_b1 = self.b1;
        let out = io.out(0);
        let mut y1 = self.y1;
        if b1 == next_b1 {
            if b1 >= 0.0 {
                for (i, o) in out.iter_mut().enumerate() {
                    let y0 = inp.at(i) as f64;
                    y1 = y0 + b1 * (y1 - y0);
                    *o = y1 as f32;
                }
            } else {
                for (i, o) in out.iter_mut().enumerate() {
                    let y0 = inp.at(i) as f64;
                    y1 = y0 + b1 * (y1 + y0);
                    *o = y1 as f32;
                }
            }
        } else {
            let slope = (next_b1 - b1) * slope_factor;
            if b1 >= 0.0 && next_b1 >= 0.0 {
                for (i, o) in out.iter_mut().enumerate() {
                    let y0 = inp.at(i) as f64;
                    y1 = y0 + b1 * (y1 - y0);
                    *o = y1 as f32;
                    b1 += slope;
                }
            } else if b1 <= 0.0 && next_b1 <= 0.0 {
                for (i, o) in out.iter_mut().enumerate() {
                    let y0 = inp.at(i) as f64;
                    y1 = y0 + b1 * (y1 + y0);
                    *o = y1 as f32;
                    b1 += slope;
                }
            } else {
                for (i, o) in out.iter_mut().enumerate() {
                    let y0 = inp.at(i) as f64;
                    y1 = (1.0 - b1.abs()) * y0 + b1 * y1;
                    *o = y1 as f32;
                    b1 += slope;
                }
            }
        }
        self.y1 = zap(y1);
    }
}

impl Construct for OnePole {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mut u = OnePole { b1: in0(io, 1) as f64, y1: 0.0, audio_coef: in_rate(io, 1) == Rate::Audio };
        // The first sample goes through the per-sample-coefficient form and
        // its state is kept.
        u.next_a(io);
        u
    }
}

impl Unit for OnePole {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio_coef {
            self.next_a(io);
        } else {
            self.next_k(io, cx.rate.slope_factor);
        }
    }
}

/// OneZero: y = (1 - |b1|) x + b1 x[-1]. Inputs: in, coef.
pub struct OneZero {
    b1: f64,
    x1: f64,
}

impl Construct for OneZero {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = OneZero { b1: in0(io, 1) as f64, x1: in0(io, 0) as f64 };
        u.next(io, cx);
        u
    }
}

impl Unit for OneZero {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let mut b1 = self.b1;
        self.b1 = in0(io, 1) as f64;
        let next_b1 = self.b1;
        let out = io.out(0);
        let mut x1 = self.x1;
        let slope = if b1 == next_b1 { 0.0 } else { (next_b1 - b1) * cx.rate.slope_factor };
        let moving = b1 != next_b1;
        // Which formula is used is decided once per block, from the ends of the glide.
        let form = if !moving {
            if b1 >= 0.0 {
                0
            } else {
                1
            }
        } else if b1 >= 0.0 && next_b1 >= 0.0 {
            0
        } else if b1 <= 0.0 && next_b1 <= 0.0 {
            1
        } else {
            2
        };
        for (i, o) in out.iter_mut().enumerate() {
            let x0 = inp.at(i) as f64;
            let y = match form {
                0 => x0 + b1 * (x1 - x0),
                1 => x0 + b1 * (x1 + x0),
                _ => (1.0 - b1.abs()) * x0 + b1 * x1,
            };
            *o = y as f32;
            x1 = x0;
            if moving {
                b1 += slope;
            }
        }
        self.x1 = x1;
    }
}

/// Integrator: y = x + coef * y[-1]. Inputs: in, coef.
pub struct Integrator {
    b1: f64,
    y1: f64,
    fixed: bool,
}

impl Construct for Integrator {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let fixed = in_rate(io, 1) == Rate::Scalar;
        io.out(0)[0] = in0(io, 0);
        Integrator { b1: in0(io, 1) as f64, y1: 0.0, fixed }
    }
}

impl Integrator {
    fn steady(out: &mut [f32], inp: In<'_>, b1: f64, mut y1: f64) -> f64 {
        if b1 == 1.0 {
            for (i, o) in out.iter_mut().enumerate() {
                y1 += inp.at(i) as f64;
                *o = y1 as f32;
            }
        } else if b1 == 0.0 {
            for (i, o) in out.iter_mut().enumerate() {
                y1 = inp.at(i) as f64;
                *o = y1 as f32;
            }
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                y1 = inp.at(i) as f64 + b1 * y1;
                *o = y1 as f32;
            }
        }
        y1
    }
}

impl Unit for Integrator {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let new_b1 = in0(io, 1) as f64;
        let out = io.out(0);
        let y1 = if self.fixed || self.b1 == new_b1 {
            Self::steady(out, inp, self.b1, self.y1)
        } else {
            let mut b1 = self.b1;
            let slope = (new_b1 - b1) * cx.rate.slope_factor;
            let mut y1 = self.y1;
            for (i, o) in out.iter_mut().enumerate() {
                y1 = inp.at(i) as f64 + b1 * y1;
                *o = y1 as f32;
                b1 += slope;
            }
            self.b1 = new_b1;
            y1
        };
        self.y1 = zap(y1);
    }
}

/// Decay: each input sample starts an exponential decay reaching -60 dB
/// after `decayTime` seconds. Inputs: in, decayTime.
pub struct Decay {
    decay_time: f32,
    b1: f64,
    y1: f64,
}

impl Construct for Decay {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Decay { decay_time: f32::NAN, b1: 0.0, y1: 0.0 };
        // scsynth 3.13 keeps the state of this first sample.
        u.next(io, cx);
        u
    }
}

impl Unit for Decay {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let decay_time = in0(io, 1);
        let out = io.out(0);
        let mut y1 = self.y1;
        let mut b1 = self.b1;
        if decay_time == self.decay_time {
            if b1 == 0.0 {
                for (i, o) in out.iter_mut().enumerate() {
                    y1 = inp.at(i) as f64;
                    *o = y1 as f32;
                }
            } else {
                for (i, o) in out.iter_mut().enumerate() {
                    y1 = inp.at(i) as f64 + b1 * y1;
                    *o = y1 as f32;
                }
            }
        } else {
            self.b1 = decay_coef(decay_time, cx.rate.sample_rate);
            self.decay_time = decay_time;
            let slope = (self.b1 - b1) * cx.rate.slope_factor;
            for (i, o) in out.iter_mut().enumerate() {
                y1 = inp.at(i) as f64 + b1 * y1;
                *o = y1 as f32;
                b1 += slope;
            }
        }
        self.y1 = zap(y1);
    }
}

/// Decay2: Decay with a smooth attack, the difference of two decays.
/// Inputs: in, attackTime, decayTime.
pub struct Decay2 {
    attack_time: f32,
    decay_time: f32,
    y1a: f64,
    b1a: f64,
    y1b: f64,
    b1b: f64,
}

impl Construct for Decay2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let attack_time = in0(io, 1);
        let decay_time = in0(io, 2);
        let y0 = in0(io, 0) as f64;
        io.out(0)[0] = 0.0;
        Decay2 {
            attack_time,
            decay_time,
            b1a: decay_coef(decay_time, cx.rate.sample_rate),
            b1b: decay_coef(attack_time, cx.rate.sample_rate),
            y1a: y0,
            y1b: y0,
        }
    }
}

impl Unit for Decay2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let attack_time = in0(io, 1);
        let decay_time = in0(io, 2);
        let out = io.out(0);
        let (mut y1a, mut y1b) = (self.y1a, self.y1b);
        let (mut b1a, mut b1b) = (self.b1a, self.b1b);
        if decay_time == self.decay_time && attack_time == self.attack_time {
            for (i, o) in out.iter_mut().enumerate() {
                let y0 = inp.at(i) as f64;
                y1a = y0 + b1a * y1a;
                y1b = y0 + b1b * y1b;
                *o = (y1a - y1b) as f32;
            }
        } else {
            self.decay_time = decay_time;
            self.attack_time = attack_time;
            let next_a = decay_coef(decay_time, cx.rate.sample_rate);
            let next_b = decay_coef(attack_time, cx.rate.sample_rate);
            let sa = (next_a - b1a) * cx.rate.slope_factor;
            let sb = (next_b - b1b) * cx.rate.slope_factor;
            for (i, o) in out.iter_mut().enumerate() {
                let y0 = inp.at(i) as f64;
                y1a = y0 + b1a * y1a;
                y1b = y0 + b1b * y1b;
                *o = (y1a - y1b) as f32;
                b1a += sa;
                b1b += sb;
            }
        }
        // No denormal flush here, and the glided coefficients are kept.
        self.y1a = y1a;
        self.y1b = y1b;
        self.b1a = b1a;
        self.b1b = b1b;
    }
}

/// LeakDC: removes DC with y = x - x[-1] + coef * y[-1]. Inputs: in, coef.
pub struct LeakDc {
    b1: f64,
    x1: f64,
    y1: f64,
    single: bool,
    fixed: bool,
}

impl LeakDc {
    fn next_single(&mut self, io: &mut Wires<'_>) {
        self.b1 = in0(io, 1) as f64;
        let x0 = in0(io, 0) as f64;
        let y1 = x0 - self.x1 + self.b1 * self.y1;
        io.out(0)[0] = y1 as f32;
        self.x1 = x0;
        self.y1 = zap(y1);
    }
}

impl Construct for LeakDc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LeakDc {
            b1: 0.0,
            x1: in0(io, 0) as f64,
            y1: 0.0,
            single: cx.rate.buf_length == 1,
            fixed: in_rate(io, 1) == Rate::Scalar,
        };
        u.next_single(io);
        u
    }
}

impl Unit for LeakDc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.single {
            self.next_single(io);
            return;
        }
        let inp = In::new(io, 0);
        let new_b1 = in0(io, 1) as f64;
        let mut b1 = self.b1;
        let moving = !self.fixed && new_b1 != self.b1;
        let slope = if moving {
            self.b1 = new_b1;
            (new_b1 - b1) * cx.rate.slope_factor
        } else {
            0.0
        };
        let out = io.out(0);
        let (mut x1, mut y1) = (self.x1, self.y1);
        for (i, o) in out.iter_mut().enumerate() {
            let x0 = inp.at(i) as f64;
            y1 = x0 - x1 + b1 * y1;
            *o = y1 as f32;
            x1 = x0;
            if moving {
                b1 += slope;
            }
        }
        self.x1 = x1;
        self.y1 = zap(y1);
    }
}
