//! Sections with their coefficients as inputs: the first-order FOS, the
//! second-order SOS (a general biquad), and the two-pole allpass APF.

use crate::common::signal::{in0, in_rate, zap, In, Loops};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

#[derive(Clone, Copy, PartialEq)]
enum SosMode {
    /// Every coefficient at audio rate: read per sample.
    Audio,
    /// Every coefficient constant.
    Fixed,
    /// Coefficients glide across the block.
    Glide,
    /// Control-rate unit.
    Single,
}

/// SOS: y0 = x + b1 y1 + b2 y2, out = a0 y0 + a1 y1 + a2 y2.
/// Inputs: in, a0, a1, a2, b1, b2.
pub struct Sos {
    y1: f64,
    y2: f64,
    /// a0, a1, a2, b1, b2.
    c: [f64; 5],
    mode: SosMode,
}

impl Sos {
    #[inline(always)]
    fn tick(x: f64, c: &[f64; 5], y1: f64, y2: f64) -> (f64, f64) {
        let y0 = x + c[3] * y1 + c[4] * y2;
        (y0, c[0] * y0 + c[1] * y1 + c[2] * y2)
    }

    fn next_single(&mut self, io: &mut Wires<'_>) {
        let x = in0(io, 0) as f64;
        let mut c = [0.0; 5];
        for (k, v) in c.iter_mut().enumerate() {
            *v = in0(io, k + 1) as f64;
        }
        let (y0, y) = Self::tick(x, &c, self.y1, self.y2);
        io.out(0)[0] = y as f32;
        self.y2 = zap(self.y1);
        self.y1 = zap(y0);
    }
}

impl Construct for Sos {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let rates: [Rate; 5] = std::array::from_fn(|k| in_rate(io, k + 1));
        let mode = if cx.rate.buf_length == 1 {
            SosMode::Single
        } else if rates.iter().all(|&r| r == Rate::Audio) {
            SosMode::Audio
        } else if rates.iter().all(|&r| r == Rate::Scalar) {
            SosMode::Fixed
        } else {
            SosMode::Glide
        };
        let mut c = [0.0; 5];
        for (k, v) in c.iter_mut().enumerate() {
            *v = in0(io, k + 1) as f64;
        }
        let mut u = Sos { y1: 0.0, y2: 0.0, c, mode };
        u.next_single(io);
        u
    }
}

impl Unit for Sos {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.mode == SosMode::Single {
            self.next_single(io);
            return;
        }
        let inp = In::new(io, 0);
        let coef_in: [In<'_>; 5] = std::array::from_fn(|k| In::new(io, k + 1));
        let out = io.out(0);
        let (mut y1, mut y2) = (self.y1, self.y2);
        match self.mode {
            SosMode::Audio => {
                for (i, o) in out.iter_mut().enumerate() {
                    let c: [f64; 5] = std::array::from_fn(|k| coef_in[k].at(i) as f64);
                    let (y0, y) = Self::tick(inp.at(i) as f64, &c, y1, y2);
                    *o = y as f32;
                    y2 = y1;
                    y1 = y0;
                }
            }
            _ => {
                let target: [f64; 5] = std::array::from_fn(|k| coef_in[k].first() as f64);
                let mut c = self.c;
                let glide = self.mode == SosMode::Glide;
                Loops::of(cx.rate).run(&mut c, glide.then_some(&target), |i, c| {
                    let (y0, y) = Self::tick(inp.at(i) as f64, c, y1, y2);
                    out[i] = y as f32;
                    y2 = y1;
                    y1 = y0;
                });
                if glide {
                    // The coefficients reached by the glide, not the targets, carry on.
                    self.c = c;
                }
            }
        }
        self.y1 = zap(y1);
        self.y2 = zap(y2);
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
