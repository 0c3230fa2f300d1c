//! FSinOsc recurrences sixteen at a time (AVX2).
//!
//! Each oscillator does `y0 = b1 * y1 - y2` in double precision, a multiply
//! then a subtract (no fused multiply-add), exactly as a lone FSinOsc does,
//! so every output is the scalar one bit for bit. Four vectors of four
//! oscillators advance together, so that the latency of one recurrence
//! hides behind the others'; eight samples of eight oscillators are
//! transposed so that each oscillator's output gets one vector store.

#![cfg(target_arch = "x86_64")]

use super::dsf_x8::transpose8;
use super::FsinQuad;
use std::arch::x86_64::*;

/// Oscillators per call.
pub(super) const WIDTH: usize = 16;

/// Quads of four oscillators per call.
pub(super) const QUADS: usize = WIDTH / 4;

/// Runs `n` samples of the oscillators of `quads[..2 * G]`, each read from
/// and left in its quad, writing oscillator `j`'s samples (element `j % 4`
/// of quad `j / 4`) to `out[j]` where that is not null. `G` is the number
/// of groups of eight computed (1 or 2); `ALL` says that every output of
/// those groups is there (none null), which spares a test per store.
///
/// # Safety
/// The CPU has AVX2; the quads are distinct and aliased by nothing live;
/// each non-null `out[j]`, j < 8 * G, is valid for `n` writes and aliased
/// by nothing live.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run<const G: usize, const ALL: bool>(quads: &[*mut FsinQuad; QUADS], out: &[*mut f32; WIDTH], n: usize) {
    const { assert!(G == 1 || G == 2) };
    // SAFETY: quads 0..2G are valid and unaliased (the contract).
    let q = |v: usize| unsafe { &*quads[v] };
    let ld = |a: &[f64; 4]| {
        // SAFETY: four doubles of a quad.
        unsafe { _mm256_loadu_pd(a.as_ptr()) }
    };
    let b1: [[__m256d; 2]; G] = std::array::from_fn(|g| [ld(&q(2 * g).b1), ld(&q(2 * g + 1).b1)]);
    let mut y1: [[__m256d; 2]; G] = std::array::from_fn(|g| [ld(&q(2 * g).y1), ld(&q(2 * g + 1).y1)]);
    let mut y2: [[__m256d; 2]; G] = std::array::from_fn(|g| [ld(&q(2 * g).y2), ld(&q(2 * g + 1).y2)]);
    // One sample of every group: oscillator 8g + k in element k of row g.
    let mut step = || -> [__m256; G] {
        std::array::from_fn(|g| {
            let lo = _mm256_sub_pd(_mm256_mul_pd(b1[g][0], y1[g][0]), y2[g][0]);
            let hi = _mm256_sub_pd(_mm256_mul_pd(b1[g][1], y1[g][1]), y2[g][1]);
            y2[g] = y1[g];
            y1[g] = [lo, hi];
            _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo))
        })
    };
    let mut i = 0;
    while i + 8 <= n {
        let mut rows = [[_mm256_setzero_ps(); 8]; G];
        for r in 0..8 {
            let one = step();
            for g in 0..G {
                rows[g][r] = one[g];
            }
        }
        for g in 0..G {
            let cols = transpose8(rows[g]);
            for (j, col) in cols.iter().enumerate() {
                let o = out[8 * g + j];
                if ALL || !o.is_null() {
                    // SAFETY: samples i..i + 8 of oscillator 8g + j's
                    // output, by the contract.
                    unsafe { _mm256_storeu_ps(o.add(i), *col) };
                }
            }
        }
        i += 8;
    }
    let mut lane = [0.0f32; 8];
    while i < n {
        let one = step();
        for g in 0..G {
            // SAFETY: a store into a local array of eight.
            unsafe { _mm256_storeu_ps(lane.as_mut_ptr(), one[g]) };
            for (j, &x) in lane.iter().enumerate() {
                let o = out[8 * g + j];
                if ALL || !o.is_null() {
                    // SAFETY: sample i of oscillator 8g + j's output, by the
                    // contract.
                    unsafe { *o.add(i) = x };
                }
            }
        }
        i += 1;
    }
    for g in 0..G {
        for h in 0..2 {
            // SAFETY: quad 2g + h is valid and unaliased (the contract).
            let dst = unsafe { &mut *quads[2 * g + h] };
            // SAFETY: four doubles into a quad's arrays of four.
            unsafe {
                _mm256_storeu_pd(dst.y1.as_mut_ptr(), y1[g][h]);
                _mm256_storeu_pd(dst.y2.as_mut_ptr(), y2[g][h]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every oscillator's samples equal the scalar recurrence bit for bit,
    /// for block lengths with and without a tail of fewer than eight, and
    /// oscillators without an output (null) leave the others alone.
    #[test]
    fn sixteen_oscillators_match_the_scalar_recurrence() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        for (live, n) in [(16usize, 64usize), (13, 67), (8, 5), (5, 64), (1, 9), (11, 1)] {
            let init = |j: usize| {
                let w = 0.001 + 0.037 * j as f64;
                (2.0 * w.cos(), (0.3 - w).sin(), (0.3 - 2.0 * w).sin())
            };
            let mut qs: Vec<FsinQuad> = (0..QUADS).map(|_| FsinQuad::default()).collect();
            for j in 0..live {
                let q = &mut qs[j / 4];
                (q.b1[j % 4], q.y1[j % 4], q.y2[j % 4]) = init(j);
            }
            let mut bufs = vec![vec![f32::NAN; n]; WIDTH];
            let mut outs = [std::ptr::null_mut::<f32>(); WIDTH];
            for (o, b) in outs.iter_mut().zip(bufs.iter_mut()).take(live) {
                *o = b.as_mut_ptr();
            }
            let quads: [*mut FsinQuad; QUADS] = std::array::from_fn(|v| &mut qs[v] as *mut FsinQuad);
            for _ in 0..3 {
                // SAFETY: AVX2 checked; distinct quads; each pointer is its
                // own buffer of n.
                unsafe {
                    match (live > 8, live % 8 == 0) {
                        (true, true) => run::<2, true>(&quads, &outs, n),
                        (true, false) => run::<2, false>(&quads, &outs, n),
                        (false, true) => run::<1, true>(&quads, &outs, n),
                        (false, false) => run::<1, false>(&quads, &outs, n),
                    }
                }
            }
            for j in 0..live {
                let (b1, mut y1, mut y2) = init(j);
                let mut want = vec![0.0f32; n];
                for _ in 0..3 {
                    for w in want.iter_mut() {
                        let y0 = b1 * y1 - y2;
                        *w = y0 as f32;
                        y2 = y1;
                        y1 = y0;
                    }
                }
                for i in 0..n {
                    assert_eq!(bufs[j][i].to_bits(), want[i].to_bits(), "oscillator {j} of {live}, sample {i}");
                }
                let q = &qs[j / 4];
                assert_eq!((q.y1[j % 4].to_bits(), q.y2[j % 4].to_bits()), (y1.to_bits(), y2.to_bits()));
            }
            assert!(bufs[live..].iter().all(|b| b.iter().all(|x| x.is_nan())), "a null output was written");
        }
    }
}
