//! Range units: Clip, Wrap, Fold, InRange.
//!
//! Control-rate bounds are interpolated across the block as scsynth does;
//! Clip additionally follows scsynth's vectorised path (four-lane ramps and
//! SSE min/max) when the block size is a multiple of 16.

use crate::simd::fill;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// Per-block slope of a control-rate value, in f32 as scsynth's CALCSLOPE.
#[inline]
fn calc_slope(next: f32, prev: f32, cx: &UnitCtx<'_>) -> f32 {
    (next - prev) * cx.rate.slope_factor as f32
}

/// `std::max(std::min(x, hi), lo)` with the C++ comparison order.
#[inline]
fn clip_scalar(x: f32, lo: f32, hi: f32) -> f32 {
    let m = if hi < x { hi } else { x };
    if m < lo {
        lo
    } else {
        m
    }
}

/// SSE `max_ps(min_ps(x, hi), lo)`: a NaN operand yields the second one.
#[inline]
fn clip_sse(x: f32, lo: f32, hi: f32) -> f32 {
    let m = if x < hi { x } else { hi };
    if m > lo {
        m
    } else {
        lo
    }
}


/// Folds `x` into [lo, hi] given the range and twice the range, in f32.
#[inline]
fn fold_range(x: f32, lo: f32, hi: f32, range: f32, range2: f32) -> f32 {
    let offset = x - lo;
    if x >= hi {
        let y = hi + hi - x;
        if y >= lo {
            return y;
        }
    } else if x < lo {
        let y = lo + lo - x;
        if y < hi {
            return y;
        }
    } else {
        return x;
    }
    if hi == lo {
        return lo;
    }
    let mut c = offset - range2 * (offset / range2).floor();
    if c >= range {
        c = range2 - c;
    }
    c + lo
}

/// Input `i` at sample `j`; non-audio inputs hold one value.
#[inline]
fn at(s: &[f32], j: usize) -> f32 {
    if s.len() == 1 {
        s[0]
    } else {
        s[j]
    }
}

/// Clip: limits the input to [lo, hi]. Inputs: in, lo, hi.
pub struct Clip {
    lo: f32,
    hi: f32,
    simd: bool,
}

impl Construct for Clip {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let lo = io.in0(1);
        let hi = io.in0(2);
        let x = io.in0(0);
        io.out(0)[0] = clip_scalar(x, lo, hi);
        let simd = spec.rate == Rate::Audio && cx.rate.buf_length > 1 && fill::simd_block(cx.rate.buf_length);
        Clip { lo, hi, simd }
    }
}

impl Clip {
    fn next_simd(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let input = io.inp(0);
        let (lo_in, hi_in) = (io.inp(1), io.inp(2));
        let (lo_rate, hi_rate) = (io.in_rate(1), io.in_rate(2));
        let n = io.n();
        // Each bound is a constant, a per-sample signal, or a block ramp.
        let mut lo_ramp = None;
        let mut hi_ramp = None;
        if lo_rate == Rate::Control && io.in0(1) != self.lo {
            lo_ramp = Some(fill::Ramp::new(self.lo, calc_slope(io.in0(1), self.lo, cx)));
        }
        if hi_rate == Rate::Control && io.in0(2) != self.hi {
            hi_ramp = Some(fill::Ramp::new(self.hi, calc_slope(io.in0(2), self.hi, cx)));
        }
        let (lo_fixed, hi_fixed) = (self.lo, self.hi);
        let out = io.out(0);
        for j in 0..n {
            let lo = match (&mut lo_ramp, lo_rate) {
                (Some(r), _) => r.next().unwrap_or(lo_fixed),
                (None, Rate::Audio) => lo_in[j],
                _ => lo_fixed,
            };
            let hi = match (&mut hi_ramp, hi_rate) {
                (Some(r), _) => r.next().unwrap_or(hi_fixed),
                (None, Rate::Audio) => hi_in[j],
                _ => hi_fixed,
            };
            out[j] = clip_sse(at(input, j), lo, hi);
        }
        if lo_ramp.is_some() {
            self.lo = lo_in[0];
        }
        if hi_ramp.is_some() {
            self.hi = hi_in[0];
        }
    }

    fn next_scalar(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let input = io.inp(0);
        let (lo_in, hi_in) = (io.inp(1), io.inp(2));
        let (lo_rate, hi_rate) = (io.in_rate(1), io.in_rate(2));
        let n = io.n();
        if lo_rate == Rate::Audio && hi_rate == Rate::Audio {
            let out = io.out(0);
            for j in 0..n {
                out[j] = clip_scalar(at(input, j), lo_in[j], hi_in[j]);
            }
            return;
        }
        if lo_rate == Rate::Scalar && hi_rate == Rate::Scalar {
            let (lo, hi) = (self.lo, self.hi);
            for (j, o) in io.out(0).iter_mut().enumerate() {
                *o = clip_scalar(at(input, j), lo, hi);
            }
            return;
        }
        if lo_rate == Rate::Audio || hi_rate == Rate::Audio {
            // scsynth routes both mixed cases to its audio-lo variant: the
            // low bound is read per sample and the high bound ramps.
            let next_hi = hi_in[0];
            let mut hi = self.hi;
            let slope = calc_slope(next_hi, hi, cx);
            let out = io.out(0);
            for j in 0..n {
                out[j] = clip_scalar(at(input, j), at(lo_in, j), hi);
                hi += slope;
            }
            self.hi = hi;
            return;
        }
        let (next_lo, next_hi) = (lo_in[0], hi_in[0]);
        let (mut lo, mut hi) = (self.lo, self.hi);
        let out = io.out(0);
        if lo == next_lo && hi == next_hi {
            for j in 0..n {
                out[j] = clip_scalar(at(input, j), lo, hi);
            }
            return;
        }
        let lo_slope = calc_slope(next_lo, lo, cx);
        let hi_slope = calc_slope(next_hi, hi, cx);
        for j in 0..n {
            out[j] = clip_scalar(at(input, j), lo, hi);
            lo += lo_slope;
            hi += hi_slope;
        }
        self.lo = lo;
        self.hi = hi;
    }
}

impl Unit for Clip {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if io.n() == 1 && cx.rate.buf_length == 1 {
            let v = clip_scalar(io.in0(0), io.in0(1), io.in0(2));
            io.out(0)[0] = v;
        } else if self.simd {
            self.next_simd(io, cx);
        } else {
            self.next_scalar(io, cx);
        }
    }
}

/// Shared shape of Wrap and Fold: bounds that ramp per block unless they
/// are audio-rate (or the unit runs at control rate).
fn run_bounded(
    io: &mut Wires<'_>,
    cx: &UnitCtx<'_>,
    lo_state: &mut f32,
    hi_state: &mut f32,
    f: impl Fn(f32, f32, f32) -> f32,
) {
    let input = io.inp(0);
    let (lo_in, hi_in) = (io.inp(1), io.inp(2));
    let n = io.n();
    let control_unit = cx.rate.buf_length == 1;
    let lo_audio = control_unit || io.in_rate(1) == Rate::Audio;
    let hi_audio = control_unit || io.in_rate(2) == Rate::Audio;
    let mut lo = *lo_state;
    let mut hi = *hi_state;
    let lo_slope = if lo_audio { 0.0 } else { calc_slope(lo_in[0], lo, cx) };
    let hi_slope = if hi_audio { 0.0 } else { calc_slope(hi_in[0], hi, cx) };
    let out = io.out(0);
    for j in 0..n {
        let cur_lo = if lo_audio { at(lo_in, j) } else { lo };
        let cur_hi = if hi_audio { at(hi_in, j) } else { hi };
        out[j] = f(at(input, j), cur_lo, cur_hi);
        lo += lo_slope;
        hi += hi_slope;
    }
    if !lo_audio {
        *lo_state = lo;
    }
    if !hi_audio {
        *hi_state = hi;
    }
}

/// Wrap: wraps the input into [lo, hi). Inputs: in, lo, hi.
pub struct Wrap {
    lo: f32,
    hi: f32,
}

impl Construct for Wrap {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let (lo, hi) = (io.in0(1), io.in0(2));
        io.out(0)[0] = crate::common::math::sc_wrap(io.in0(0), lo, hi);
        Wrap { lo, hi }
    }
}

impl Unit for Wrap {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        run_bounded(io, cx, &mut self.lo, &mut self.hi, crate::common::math::sc_wrap);
    }
}

/// Fold: reflects the input back into [lo, hi]. Inputs: in, lo, hi.
pub struct Fold {
    lo: f32,
    hi: f32,
}

fn fold3(x: f32, lo: f32, hi: f32) -> f32 {
    let range = hi - lo;
    fold_range(x, lo, hi, range, range * 2.0)
}

impl Construct for Fold {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let (lo, hi) = (io.in0(1), io.in0(2));
        io.out(0)[0] = fold3(io.in0(0), lo, hi);
        Fold { lo, hi }
    }
}

impl Unit for Fold {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        run_bounded(io, cx, &mut self.lo, &mut self.hi, fold3);
    }
}

/// InRange: 1 where lo <= in <= hi, else 0. Bounds are read once per block.
pub struct InRange;

impl Construct for InRange {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = InRange;
        unit.next(io, cx);
        unit
    }
}

impl Unit for InRange {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let input = io.inp(0);
        let (lo, hi) = (io.in0(1), io.in0(2));
        let n = io.n();
        let out = io.out(0);
        for j in 0..n {
            let x = at(input, j);
            out[j] = if x >= lo && x <= hi { 1.0 } else { 0.0 };
        }
    }
}
