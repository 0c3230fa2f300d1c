//! What the chaotic maps share: the clock that decides when a map iterates,
//! and the three ways of reading its orbit between iterations (held, linear,
//! cubic). The maps keep their state in double precision and count samples
//! in single precision, as scsynth does, so that orbits agree bit for bit.

use crate::common::math::{d2i, sc_max};

// scsynth's own decimal constants, kept as written so the doubles agree.
#[allow(clippy::approx_constant)]
pub(crate) const TWO_PI: f64 = 6.283185307179586;
#[allow(clippy::approx_constant)]
pub(crate) const PI: f64 = 3.141592653589793;
#[allow(clippy::approx_constant)]
pub(crate) const RECIP_PI: f64 = 0.3183098861837907;
#[allow(clippy::approx_constant)]
const RECIP_TWO_PI: f64 = 0.1591549430918953;
#[allow(clippy::excessive_precision)]
pub(crate) const ONE_SIXTH: f64 = 0.1666666666666667;

/// Samples between iterations for `freq` (single precision, at least one)
/// and the per-sample interpolation step, its reciprocal.
#[inline]
pub(crate) fn timing(freq: f32, sample_rate: f64) -> (f32, f64) {
    if (freq as f64) < sample_rate {
        let spc = (sample_rate / sc_max(freq, 0.001) as f64) as f32;
        (spc, (1.0f32 / spc) as f64)
    } else {
        (1.0, 1.0)
    }
}

/// Wraps an angle into [0, 2π), with one add or subtract where that suffices.
#[inline]
pub(crate) fn mod2pi(mut x: f64) -> f64 {
    if x >= TWO_PI {
        x -= TWO_PI;
        if x < TWO_PI {
            return x;
        }
    } else if x < 0.0 {
        x += TWO_PI;
        if x >= 0.0 {
            return x;
        }
    } else {
        return x;
    }
    x - TWO_PI * d2i(x * RECIP_TWO_PI) as f64
}

/// Modulo into [0, hi) in double precision, avoiding the division when one
/// wrap suffices.
#[inline]
pub(crate) fn sc_mod_f64(mut x: f64, hi: f64) -> f64 {
    if x >= hi {
        x -= hi;
        if x < hi {
            return x;
        }
    } else if x < 0.0 {
        x += hi;
        if x >= 0.0 {
            return x;
        }
    } else {
        return x;
    }
    if hi == 0.0 {
        return 0.0;
    }
    x - hi * (x / hi).floor()
}

/// Cubic (Catmull-Rom style) coefficients through four successive points.
#[inline]
pub(crate) fn cubic_coefs(xm3: f64, xm2: f64, xm1: f64, x: f64) -> [f64; 4] {
    [
        xm2,
        0.5 * (xm1 - xm3),
        xm3 - 2.5 * xm2 + xm1 + xm1 - 0.5 * x,
        0.5 * (x - xm3) + 1.5 * (xm2 - xm1),
    ]
}

/// Evaluates the cubic at `frac`, which scsynth passes in single precision.
#[inline]
pub(crate) fn cubic_at(frac: f32, c: &[f64; 4]) -> f64 {
    let f = frac as f64;
    ((c[3] * f + c[2]) * f + c[1]) * f + c[0]
}

/// Runs a map that holds its value between iterations. `held` is the value
/// shown until the first iteration; `step` iterates and returns the next.
#[inline(always)]
pub(crate) fn run_hold(out: &mut [f32], counter: &mut f32, spc: f32, mut held: f64, mut step: impl FnMut() -> f64) {
    let mut c = *counter;
    for o in out.iter_mut() {
        if c >= spc {
            c -= spc;
            held = step();
        }
        c += 1.0;
        *o = held as f32;
    }
    *counter = c;
}

/// Straight lines from the previous iterate to the current one.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Line {
    pub prev: f64,
    pub frac: f64,
}

impl Line {
    /// Runs a map read by linear interpolation; `target` is the current
    /// iterate, `shape` maps the interpolated value to the output.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        out: &mut [f32],
        counter: &mut f32,
        spc: f32,
        slope: f64,
        mut target: f64,
        mut step: impl FnMut() -> f64,
        shape: impl Fn(f64) -> f64,
    ) {
        let (mut c, mut prev, mut frac) = (*counter, self.prev, self.frac);
        let mut dx = target - prev;
        for o in out.iter_mut() {
            if c >= spc {
                c -= spc;
                frac = 0.0;
                prev = target;
                target = step();
                dx = target - prev;
            }
            c += 1.0;
            *o = shape(prev + dx * frac) as f32;
            frac += slope;
        }
        *counter = c;
        self.prev = prev;
        self.frac = frac;
    }
}

/// Cubic interpolation through the last four iterates.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Curve {
    /// The iterates before the current one, newest first.
    pub hist: [f64; 3],
    pub coefs: [f64; 4],
    pub frac: f64,
}

impl Curve {
    pub(crate) fn new(x: f64, coef: f64) -> Curve {
        Curve { hist: [x; 3], coefs: [coef; 4], frac: 0.0 }
    }

    /// Moves `x` into the history, the oldest value dropping out.
    #[inline]
    pub(crate) fn push(&mut self, x: f64) {
        self.hist = [x, self.hist[0], self.hist[1]];
    }

    /// Runs a map read by cubic interpolation; `target` is the current iterate.
    #[inline(always)]
    pub(crate) fn run(&mut self, out: &mut [f32], counter: &mut f32, spc: f32, slope: f64, mut target: f64, mut step: impl FnMut() -> f64) {
        let (mut c, mut frac) = (*counter, self.frac);
        for o in out.iter_mut() {
            if c >= spc {
                c -= spc;
                frac = 0.0;
                self.push(target);
                target = step();
                let [h1, h2, h3] = self.hist;
                self.coefs = cubic_coefs(h3, h2, h1, target);
            }
            c += 1.0;
            *o = cubic_at(frac as f32, &self.coefs) as f32;
            frac += slope;
        }
        *counter = c;
        self.frac = frac;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod2pi_wraps_into_one_turn() {
        // (More than a turn below zero scsynth's version stays negative.)
        for x in [-6.0, -0.1, 0.0, 3.0, 6.3, 13.0, 100.0] {
            let y = mod2pi(x);
            assert!((0.0..TWO_PI).contains(&y), "{x} -> {y}");
            let turns = (x - y) / TWO_PI;
            assert!((turns - turns.round()).abs() < 1e-9);
        }
    }

    #[test]
    fn cubic_passes_through_the_middle_points() {
        let c = cubic_coefs(0.0, 1.0, 4.0, 9.0);
        assert_eq!(cubic_at(0.0, &c), 1.0);
        assert_eq!(cubic_at(1.0, &c), 4.0);
    }

    #[test]
    fn timing_iterates_every_sample_at_or_above_the_sample_rate() {
        assert_eq!(timing(48_000.0, 48_000.0), (1.0, 1.0));
        assert_eq!(timing(12_000.0, 48_000.0).0, 4.0);
    }
}
