//! SOS (a general biquad with coefficients as inputs) and Median.

use super::sig::{in0, in_rate, zap, In, Loops};
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

const MAX_MEDIAN: usize = 32;

/// A running median of the last `size` values (at most 32), kept sorted
/// with their ages, as scsynth's Median and Pitch keep theirs.
pub(crate) struct MedianWindow {
    values: [f32; MAX_MEDIAN],
    ages: [i32; MAX_MEDIAN],
    size: usize,
}

impl MedianWindow {
    /// A window of `size` values, all `value` (size clamped to the maximum).
    pub(crate) fn new(size: usize, value: f32) -> MedianWindow {
        let size = size.min(MAX_MEDIAN);
        let mut ages = [0; MAX_MEDIAN];
        for (i, a) in ages.iter_mut().enumerate() {
            *a = i as i32;
        }
        MedianWindow { values: [value; MAX_MEDIAN], ages, size }
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Replaces the oldest value with `value`, keeps the window sorted and
    /// returns its middle element.
    pub(crate) fn insert(&mut self, value: f32) -> f32 {
        let size = self.size;
        if size == 0 {
            return value;
        }
        let last = size as i32 - 1;
        let mut pos = 0usize;
        for i in 0..size {
            if self.ages[i] == last {
                pos = i;
            } else {
                self.ages[i] += 1;
            }
        }
        while pos != 0 && value < self.values[pos - 1] {
            self.values[pos] = self.values[pos - 1];
            self.ages[pos] = self.ages[pos - 1];
            pos -= 1;
        }
        while pos != size - 1 && value > self.values[pos + 1] {
            self.values[pos] = self.values[pos + 1];
            self.ages[pos] = self.ages[pos + 1];
            pos += 1;
        }
        self.values[pos] = value;
        self.ages[pos] = 0;
        self.values[size >> 1]
    }
}

/// Median: the median of the last `length` input samples (length 1–31,
/// odd). Inputs: length, in.
pub struct Median(MedianWindow);

impl Construct for Median {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 1);
        let size = super::sig::trunc_i32(in0(io, 0) as f64).clamp(0, MAX_MEDIAN as i32) as usize;
        let mut u = Median(MedianWindow::new(size, x));
        io.out(0)[0] = u.0.insert(x);
        u
    }
}

impl Unit for Median {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 1);
        let out = io.out(0);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.0.insert(inp.at(i));
        }
    }
}
