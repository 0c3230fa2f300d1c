//! Per-block interpolation of control-rate values.
//!
//! scsynth walks a control input from its previous to its new value across a
//! block in one of two ways, and the rounding differs between them: a plain
//! loop adds the slope once per sample, while its SIMD path (taken when the
//! block size is a multiple of 16) keeps four lanes that each add four slopes
//! per step. Matching its output sample for sample means doing the same.

/// Block sizes at which scsynth takes its SIMD paths.
#[inline]
pub(crate) fn simd_block(buf_length: usize) -> bool {
    buf_length > 1 && buf_length % 16 == 0
}

/// The per-sample slope scsynth computes for a control value (`CALCSLOPE`).
#[inline(always)]
pub(crate) fn calc_slope(next: f32, prev: f32, slope_factor: f64) -> f32 {
    (next - prev) * slope_factor as f32
}

/// Calls `f(i, value)` for the `n` samples of a ramp from `start` by `slope`,
/// accumulating once per sample. Returns the value after the last step.
#[inline(always)]
pub(crate) fn serial(n: usize, start: f32, slope: f32, mut f: impl FnMut(usize, f32)) -> f32 {
    let mut x = start;
    for i in 0..n {
        f(i, x);
        x += slope;
    }
    x
}

/// Like [`serial`], but with four interleaved lanes as the SIMD code does.
#[inline(always)]
pub(crate) fn lanes(n: usize, start: f32, slope: f32, mut f: impl FnMut(usize, f32)) {
    let slope2 = slope + slope;
    let mut lane = [start, start + slope, start + slope2, start + slope2 + slope];
    let step = slope2 + slope2;
    let mut i = 0;
    // Whole groups of four first, with no test per sample, so that the
    // four lanes can share one vector.
    while i + 4 <= n {
        for (k, v) in lane.iter_mut().enumerate() {
            f(i + k, *v);
            *v += step;
        }
        i += 4;
    }
    if i < n {
        for (k, v) in lane.iter().enumerate() {
            if i + k < n {
                f(i + k, *v);
            }
        }
    }
}

/// [`lanes`] mapped over an input: `out[i] = f(inp[i], ramp value i)`.
///
/// The ramp's four lanes step as one vector into a buffer first (the same
/// float additions, lane by lane), and `f` then maps two plain arrays, a
/// loop the compiler widens as it does any element-wise one.
#[inline(always)]
pub(crate) fn lanes_map(out: &mut [f32], inp: &[f32], start: f32, slope: f32, f: impl Fn(f32, f32) -> f32) {
    /// Samples whose ramp values one pass keeps (a multiple of four).
    const PASS: usize = 64;
    let slope2 = slope + slope;
    let mut lane = [start, start + slope, start + slope2, start + slope2 + slope];
    let step = slope2 + slope2;
    let n = out.len().min(inp.len());
    let mut buf = [0.0f32; PASS];
    for (o, x) in out[..n].chunks_mut(PASS).zip(inp[..n].chunks(PASS)) {
        let m = o.len();
        for q in buf[..m.div_ceil(4) * 4].chunks_exact_mut(4) {
            q.copy_from_slice(&lane);
            lane = step4(lane, step);
        }
        for ((o, &x), &v) in o.iter_mut().zip(x).zip(&buf[..m]) {
            *o = f(x, v);
        }
    }
}

/// Each of the four lanes plus `step`, one vector addition where there is one.
#[inline(always)]
fn step4(lane: [f32; 4], step: f32) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut r = [0.0f32; 4];
        // SAFETY: SSE is part of x86_64; unaligned loads and stores of four
        // floats from and to local arrays.
        unsafe { _mm_storeu_ps(r.as_mut_ptr(), _mm_add_ps(_mm_loadu_ps(lane.as_ptr()), _mm_set1_ps(step))) };
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        lane.map(|v| v + step)
    }
}

/// A ramp in either of the two styles.
#[inline(always)]
pub(crate) fn ramp(simd: bool, n: usize, start: f32, slope: f32, f: impl FnMut(usize, f32)) -> f32 {
    if simd {
        lanes(n, start, slope, f);
        start + slope * n as f32
    } else {
        serial(n, start, slope, f)
    }
}

/// The ramp values themselves, written into `out`.
#[inline]
pub(crate) fn fill(simd: bool, out: &mut [f32], start: f32, slope: f32) {
    let n = out.len();
    ramp(simd, n, start, slope, |i, v| out[i] = v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_styles_walk_from_start_towards_the_target() {
        for simd in [false, true] {
            let mut out = [0.0f32; 64];
            fill(simd, &mut out, 0.0, 1.0 / 64.0);
            assert_eq!(out[0], 0.0);
            assert!((out[63] - 63.0 / 64.0).abs() < 1e-6);
            assert!(out.windows(2).all(|w| w[1] > w[0]));
        }
    }
}
