//! The BEQ suite: second-order sections from the audio-EQ cookbook
//! (BLowPass, BHiPass, BBandPass, BBandStop, BPeakEQ, BAllPass, BLowShelf,
//! BHiShelf), as scsynth's FilterUGens (3.13) compute them.
//!
//! Control-rate parameters glide the coefficients across the block in steps
//! of three samples. When every parameter is at audio rate scsynth reads
//! them once per group of three samples from a pointer that advances by
//! one (two for some units when the coefficients change), so it samples the
//! first part of the parameter block only; this is reproduced.

use crate::common::signal::{in0, in_rate, zap, In, Loops};
use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires};
use std::f64::consts::TAU;
use std::marker::PhantomData;

/// What the audio-rate form does with the remembered parameters in the
/// samples after the last group of three.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Remain {
    /// Leaves them alone.
    Keep,
    /// Reads the next parameter values into them (without new coefficients).
    ReadNext,
    /// Sets them to the values read for the last group.
    LastRead,
}

/// One cookbook filter: how its parameters become a0, a1, a2, b1, b2.
pub trait BDesign: 'static {
    /// Number of parameters after the input (2 or 3).
    const NP: usize;
    /// On a coefficient change the audio-rate form reads the parameters a
    /// second time, remembering those values and skipping ahead.
    const EXTRA_READ: bool;
    const REMAIN: Remain;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5];
}

/// A cookbook section running design `D`. Inputs: in and D::NP parameters.
pub struct BSection<D: BDesign> {
    y1: f64,
    y2: f64,
    /// a0, a1, a2, b1, b2.
    c: [f64; 5],
    params: [f32; 3],
    /// Every parameter at audio rate.
    audio: bool,
    _design: PhantomData<fn() -> D>,
}

#[inline(always)]
fn tick(x: f64, c: &[f64; 5], y1: f64, y2: f64) -> (f64, f64) {
    let y0 = x + c[3] * y1 + c[4] * y2;
    (y0, c[0] * y0 + c[1] * y1 + c[2] * y2)
}

impl<D: BDesign> BSection<D> {
    fn changed(&self, p: &[f32; 3]) -> bool {
        (0..D::NP).any(|k| p[k] != self.params[k])
    }

    fn next_control(&mut self, io: &mut Wires<'_>, rate: &RateInfo, lp: Loops) {
        let inp = In::new(io, 0);
        let mut p = [0.0f32; 3];
        for (k, v) in p.iter_mut().enumerate().take(D::NP) {
            *v = in0(io, k + 1);
        }
        let out = io.out(0);
        let (mut y1, mut y2) = (self.y1, self.y2);
        let mut c = self.c;
        let step = |i: usize, c: &[f64; 5]| {
            let (y0, y) = tick(inp.at(i) as f64, c, y1, y2);
            out[i] = y as f32;
            y2 = y1;
            y1 = y0;
        };
        if self.changed(&p) {
            let target = D::coefs(&p, rate.sample_dur);
            lp.run(&mut c, Some(&target), step);
            self.params = p;
            self.c = target;
        } else {
            lp.run(&mut c, None, step);
        }
        self.y1 = zap(y1);
        self.y2 = zap(y2);
    }

    fn next_audio(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        let inp = In::new(io, 0);
        let pin: [In<'_>; 3] = std::array::from_fn(|k| if k < D::NP { In::new(io, k + 1) } else { In::silent() });
        let read = |at: usize| -> [f32; 3] { std::array::from_fn(|k| pin[k].at(at)) };
        let out = io.out(0);
        let (mut y1, mut y2) = (self.y1, self.y2);
        let mut c = self.c;
        let lp = Loops::of(rate);
        // Where the parameter pointer stands: it moves per group, not per sample.
        let mut at = 0usize;
        let mut last = self.params;
        let mut i = 0usize;
        for _ in 0..lp.loops {
            let p = read(at);
            at += 1;
            last = p;
            if self.changed(&p) {
                c = D::coefs(&p, rate.sample_dur);
                if D::EXTRA_READ {
                    self.params = read(at);
                    at += 1;
                } else {
                    self.params = p;
                }
            }
            for _ in 0..3 {
                let (y0, y) = tick(inp.at(i) as f64, &c, y1, y2);
                out[i] = y as f32;
                y2 = y1;
                y1 = y0;
                i += 1;
            }
        }
        for _ in 0..lp.remain {
            let (y0, y) = tick(inp.at(i) as f64, &c, y1, y2);
            out[i] = y as f32;
            y2 = y1;
            y1 = y0;
            i += 1;
            match D::REMAIN {
                Remain::Keep => {}
                Remain::ReadNext => {
                    self.params = read(at);
                    at += 1;
                }
                Remain::LastRead => self.params = last,
            }
        }
        self.c = c;
        self.y1 = zap(y1);
        self.y2 = zap(y2);
    }
}

impl<D: BDesign> Construct for BSection<D> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut params = [0.0f32; 3];
        for (k, v) in params.iter_mut().enumerate().take(D::NP) {
            *v = in0(io, k + 1);
        }
        let audio = (1..=D::NP).all(|k| in_rate(io, k) == Rate::Audio);
        let mut s = BSection {
            y1: 0.0,
            y2: 0.0,
            c: D::coefs(&params, cx.rate.sample_dur),
            params,
            audio,
            _design: PhantomData,
        };
        // One sample through the control-rate form; its state is kept.
        s.next_control(io, cx.rate, Loops::single(cx.rate));
        s
    }
}

impl<D: BDesign> Unit for BSection<D> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio {
            self.next_audio(io, cx.rate);
        } else {
            self.next_control(io, cx.rate, Loops::of(cx.rate));
        }
    }
}

#[inline(always)]
fn omega(freq: f32, sample_dur: f64) -> f64 {
    TAU * freq as f64 * sample_dur
}

/// Half-power bandwidth in octaves to the cookbook's alpha.
#[inline(always)]
fn octave_alpha(w0: f64, bw: f32) -> f64 {
    let sinw0 = w0.sin();
    // ln(2) / 2
    sinw0 * ((0.34657359027997 * bw as f64 * w0) / sinw0).sinh()
}

/// Shelf and peak gain: 10^(db/40).
#[inline(always)]
fn shelf_gain(db: f32) -> f64 {
    10.0f64.powf(db as f64 * 0.025)
}

/// Low-pass: in, freq, rq.
pub struct BLowPassDesign;
pub type BLowPass = BSection<BLowPassDesign>;
impl BDesign for BLowPassDesign {
    const NP: usize = 2;
    const EXTRA_READ: bool = false;
    const REMAIN: Remain = Remain::ReadNext;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let w0 = omega(p[0], sample_dur);
        let cosw0 = w0.cos();
        let i = 1.0 - cosw0;
        let alpha = w0.sin() * 0.5 * p[1] as f64;
        let b0rz = 1.0 / (1.0 + alpha);
        let a0 = i * 0.5 * b0rz;
        [a0, i * b0rz, a0, cosw0 * 2.0 * b0rz, (1.0 - alpha) * -b0rz]
    }
}

/// High-pass: in, freq, rq.
pub struct BHiPassDesign;
pub type BHiPass = BSection<BHiPassDesign>;
impl BDesign for BHiPassDesign {
    const NP: usize = 2;
    const EXTRA_READ: bool = false;
    const REMAIN: Remain = Remain::Keep;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let w0 = omega(p[0], sample_dur);
        let cosw0 = w0.cos();
        let i = 1.0 + cosw0;
        let alpha = w0.sin() * 0.5 * p[1] as f64;
        let b0rz = 1.0 / (1.0 + alpha);
        let a0 = i * 0.5 * b0rz;
        [a0, -i * b0rz, a0, cosw0 * 2.0 * b0rz, (1.0 - alpha) * -b0rz]
    }
}

/// Band-pass with constant peak gain: in, freq, bandwidth (octaves).
pub struct BBandPassDesign;
pub type BBandPass = BSection<BBandPassDesign>;
impl BDesign for BBandPassDesign {
    const NP: usize = 2;
    const EXTRA_READ: bool = true;
    const REMAIN: Remain = Remain::LastRead;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let w0 = omega(p[0], sample_dur);
        let alpha = octave_alpha(w0, p[1]);
        let b0rz = 1.0 / (1.0 + alpha);
        let a0 = alpha * b0rz;
        [a0, 0.0, -a0, w0.cos() * 2.0 * b0rz, (1.0 - alpha) * -b0rz]
    }
}

/// Band-stop: in, freq, bandwidth (octaves).
pub struct BBandStopDesign;
pub type BBandStop = BSection<BBandStopDesign>;
impl BDesign for BBandStopDesign {
    const NP: usize = 2;
    const EXTRA_READ: bool = true;
    const REMAIN: Remain = Remain::LastRead;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let w0 = omega(p[0], sample_dur);
        let alpha = octave_alpha(w0, p[1]);
        let b0rz = 1.0 / (1.0 + alpha);
        // 2 * b0rz * cos(w0) and cos(w0) * 2 * b0rz round alike.
        let b1 = 2.0 * b0rz * w0.cos();
        [b0rz, -b1, b0rz, b1, (1.0 - alpha) * -b0rz]
    }
}

/// Peaking equaliser: in, freq, rq, db.
pub struct BPeakEqDesign;
pub type BPeakEq = BSection<BPeakEqDesign>;
impl BDesign for BPeakEqDesign {
    const NP: usize = 3;
    const EXTRA_READ: bool = false;
    const REMAIN: Remain = Remain::ReadNext;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let a = shelf_gain(p[2]);
        let w0 = omega(p[0], sample_dur);
        let alpha = w0.sin() * 0.5 * p[1] as f64;
        let b0rz = 1.0 / (1.0 + (alpha / a));
        let b1 = 2.0 * b0rz * w0.cos();
        [(1.0 + (alpha * a)) * b0rz, -b1, (1.0 - (alpha * a)) * b0rz, b1, (1.0 - (alpha / a)) * -b0rz]
    }
}

/// All-pass: in, freq, rq.
pub struct BAllPassDesign;
pub type BAllPass = BSection<BAllPassDesign>;
impl BDesign for BAllPassDesign {
    const NP: usize = 2;
    const EXTRA_READ: bool = false;
    const REMAIN: Remain = Remain::ReadNext;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let w0 = omega(p[0], sample_dur);
        // Scaling by one half is exact, so the order of the products is free.
        let alpha = w0.sin() * 0.5 * p[1] as f64;
        let b0rz = 1.0 / (1.0 + alpha);
        let a0 = (1.0 - alpha) * b0rz;
        let b1 = 2.0 * b0rz * w0.cos();
        [a0, -b1, 1.0, b1, -a0]
    }
}

/// The shelves' shared intermediate values: a, i, j, k.
#[inline(always)]
fn shelf(p: &[f32; 3], sample_dur: f64) -> (f64, f64, f64, f64) {
    let a = shelf_gain(p[2]);
    let w0 = omega(p[0], sample_dur);
    let sinw0 = w0.sin();
    let cosw0 = w0.cos();
    let alpha = sinw0 * 0.5 * ((a + (1.0 / a)) * (p[1] as f64 - 1.0) + 2.0).sqrt();
    let i = (a + 1.0) * cosw0;
    let j = (a - 1.0) * cosw0;
    let k = 2.0 * a.sqrt() * alpha;
    (a, i, j, k)
}

/// Low shelf: in, freq, rs (reciprocal of the slope), db.
pub struct BLowShelfDesign;
pub type BLowShelf = BSection<BLowShelfDesign>;
impl BDesign for BLowShelfDesign {
    const NP: usize = 3;
    const EXTRA_READ: bool = false;
    const REMAIN: Remain = Remain::ReadNext;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let (a, i, j, k) = shelf(p, sample_dur);
        let b0rz = 1.0 / ((a + 1.0) + j + k);
        [
            a * ((a + 1.0) - j + k) * b0rz,
            2.0 * a * ((a - 1.0) - i) * b0rz,
            a * ((a + 1.0) - j - k) * b0rz,
            2.0 * ((a - 1.0) + i) * b0rz,
            ((a + 1.0) + j - k) * -b0rz,
        ]
    }
}

/// High shelf: in, freq, rs (reciprocal of the slope), db.
pub struct BHiShelfDesign;
pub type BHiShelf = BSection<BHiShelfDesign>;
impl BDesign for BHiShelfDesign {
    const NP: usize = 3;
    const EXTRA_READ: bool = true;
    const REMAIN: Remain = Remain::ReadNext;
    fn coefs(p: &[f32; 3], sample_dur: f64) -> [f64; 5] {
        let (a, i, j, k) = shelf(p, sample_dur);
        let b0rz = 1.0 / ((a + 1.0) - j + k);
        [
            a * ((a + 1.0) + j + k) * b0rz,
            -2.0 * a * ((a - 1.0) + i) * b0rz,
            a * ((a + 1.0) + j - k) * b0rz,
            -2.0 * ((a - 1.0) - i) * b0rz,
            ((a + 1.0) - j - k) * -b0rz,
        ]
    }
}
