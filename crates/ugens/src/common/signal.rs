//! Small signal helpers shared by many families: input access that never
//! reads past a wire, and the exact arithmetic of scsynth's inline helpers
//! (clipping, denormal flushing, decay constants).

use crate::unit::{Rate, Wires};

static SILENCE: [f32; 1] = [0.0];

/// One input as a signal: audio wires step through the block, control and
/// scalar wires (and missing inputs) repeat their single value.
#[derive(Clone, Copy)]
pub(crate) struct In<'a> {
    s: &'a [f32],
    step: usize,
}

impl<'a> In<'a> {
    pub(crate) fn new(io: &Wires<'a>, i: usize) -> In<'a> {
        if i >= io.num_inputs() {
            return In { s: &SILENCE, step: 0 };
        }
        let s = io.inp(i);
        let step = usize::from(io.in_rate(i) == Rate::Audio && s.len() > 1);
        In { s, step }
    }

    /// An input that is always 0.
    pub(crate) fn silent() -> In<'static> {
        In { s: &SILENCE, step: 0 }
    }

    #[inline(always)]
    pub(crate) fn at(&self, i: usize) -> f32 {
        self.s[i * self.step]
    }

    /// The block's samples when the input steps through them (an audio
    /// wire); None when it repeats one value.
    #[inline(always)]
    pub(crate) fn audio(&self) -> Option<&'a [f32]> {
        (self.step == 1).then_some(self.s)
    }

    /// The first value (scsynth's `ZIN0`).
    #[inline(always)]
    pub(crate) fn first(&self) -> f32 {
        self.s[0]
    }

    /// The input with its borrow let go, for a unit that keeps where its
    /// inputs are from one block to the next (`from_raw` takes it back).
    #[inline(always)]
    pub(crate) fn to_raw(self) -> RawIn {
        RawIn { ptr: self.s.as_ptr(), len: self.s.len(), step: self.step }
    }

    /// The input `to_raw` gave.
    ///
    /// # Safety
    /// The wire `raw` came from still holds its `len` samples, live and
    /// written by nothing for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: RawIn) -> In<'a> {
        // SAFETY: the caller's contract.
        In { s: unsafe { std::slice::from_raw_parts(raw.ptr, raw.len) }, step: raw.step }
    }
}

/// An [`In`] without its borrow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct RawIn {
    ptr: *const f32,
    len: usize,
    step: usize,
}

impl RawIn {
    /// No input at all: a place to fill, never read.
    pub(crate) const NONE: RawIn = RawIn { ptr: std::ptr::NonNull::dangling().as_ptr(), len: 0, step: 0 };

    /// Whether two inputs are the same signal: read from the same place,
    /// both stepping through a block or both repeating one value.
    #[inline(always)]
    pub(crate) fn same_signal(&self, other: &RawIn) -> bool {
        self.ptr == other.ptr && (self.step == 1) == (other.step == 1)
    }
}

/// First value of input `i`, or 0 if the unit has fewer inputs.
#[inline]
pub(crate) fn in0(io: &Wires<'_>, i: usize) -> f32 {
    if i < io.num_inputs() {
        io.in0(i)
    } else {
        0.0
    }
}

/// Rate of input `i`; missing inputs count as constants.
#[inline]
pub(crate) fn in_rate(io: &Wires<'_>, i: usize) -> Rate {
    if i < io.num_inputs() {
        io.in_rate(i)
    } else {
        Rate::Scalar
    }
}

/// ln(0.001): a coefficient `exp(LOG001 / n)` decays by 60 dB in n samples.
#[inline(always)]
pub(crate) fn log001() -> f64 {
    0.001f64.ln()
}

/// Flushes denormals, infinities and NaN to zero, as scsynth does on state
/// variables at the end of each block (thresholds 1e-15 and 1e15).
#[inline(always)]
pub(crate) fn zap(x: f64) -> f64 {
    let a = x.abs();
    if a > 1e-15 && a < 1e15 {
        x
    } else {
        0.0
    }
}

/// [`zap`] in single precision.
#[inline]
pub(crate) fn zap_f32(x: f32) -> f32 {
    let a = x.abs();
    if a > 1e-15 && a < 1e15 {
        x
    } else {
        0.0
    }
}

/// `std::max(std::min(x, hi), lo)`, NaN handling included.
#[inline(always)]
pub(crate) fn clip_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let m = if hi < x { hi } else { x };
    if m < lo {
        lo
    } else {
        m
    }
}

#[inline(always)]
pub(crate) fn clip_f64(x: f64, lo: f64, hi: f64) -> f64 {
    let m = if hi < x { hi } else { x };
    if m < lo {
        lo
    } else {
        m
    }
}

/// Feedback coefficient that makes a delay of `delay` seconds decay by
/// 60 dB in `decay` seconds; a negative decay gives a negative coefficient.
#[inline]
pub(crate) fn calc_feedback(delay: f32, decay: f32) -> f32 {
    if delay == 0.0 || decay == 0.0 {
        return 0.0;
    }
    let absret = (log001() * delay as f64 / decay.abs() as f64).exp() as f32;
    absret.copysign(decay)
}

/// The one-pole coefficient for a 60 dB decay over `time` seconds at
/// `sample_rate` (0 for a zero time).
#[inline]
pub(crate) fn decay_coef(time: f32, sample_rate: f64) -> f64 {
    if time == 0.0 {
        0.0
    } else {
        (log001() / (time as f64 * sample_rate)).exp()
    }
}

/// How a second-order filter walks a block: `loops` groups of three
/// samples (coefficients step after each group) and then `remain` samples.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loops {
    pub loops: usize,
    pub remain: usize,
    pub slope: f64,
}

impl Loops {
    pub(crate) fn of(rate: &crate::unit::RateInfo) -> Loops {
        Loops { loops: rate.filter_loops, remain: rate.filter_remain, slope: rate.filter_slope }
    }

    /// The single-sample walk scsynth constructors use for their first sample.
    pub(crate) fn single(rate: &crate::unit::RateInfo) -> Loops {
        Loops { loops: 0, remain: 1, slope: rate.filter_slope }
    }

    /// Runs `step(i, coefs)` over the block; if `target` is given the
    /// coefficients move towards it by `1/loops` after each group of three.
    #[inline(always)]
    pub(crate) fn run<const K: usize>(
        self,
        coefs: &mut [f64; K],
        target: Option<&[f64; K]>,
        step: impl FnMut(usize, &[f64; K]),
    ) {
        let mut slope = [0.0; K];
        if let Some(t) = target {
            for k in 0..K {
                slope[k] = (t[k] - coefs[k]) * self.slope;
            }
        }
        self.schedule(coefs, step, |c| {
            if target.is_some() {
                for k in 0..K {
                    c[k] += slope[k];
                }
            }
        });
    }

    /// scsynth's filter loop: `tick(i, state)` for every sample of the block
    /// in groups of three, `advance(state)` after each group (where the
    /// coefficients step), then the remaining samples.
    #[inline(always)]
    pub(crate) fn schedule<S>(self, state: &mut S, mut tick: impl FnMut(usize, &S), mut advance: impl FnMut(&mut S)) {
        let mut i = 0;
        for _ in 0..self.loops {
            tick(i, state);
            tick(i + 1, state);
            tick(i + 2, state);
            i += 3;
            advance(state);
        }
        for _ in 0..self.remain {
            tick(i, state);
            i += 1;
        }
    }
}

/// C's `(int)x` as x86 computes it: truncation, and `INT_MIN` for values
/// out of range or NaN.
#[inline(always)]
pub(crate) fn trunc_i32(x: f64) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// Sample `i` of an input that should be audio; a control or constant
/// input reads as its single value.
#[inline(always)]
pub(crate) fn at(s: &[f32], i: usize) -> f32 {
    match s.get(i) {
        Some(&v) => v,
        None => s.first().copied().unwrap_or(0.0),
    }
}
