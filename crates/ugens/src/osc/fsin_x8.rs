//! FSinOsc recurrences sixteen at a time (AVX2).
//!
//! Each oscillator does `y0 = b1 * y1 - y2` in double precision, a multiply
//! then a subtract (no fused multiply-add), exactly as a lone FSinOsc does,
//! so every output is the scalar one bit for bit. A quad of four
//! oscillators takes eight steps, then its eight samples are turned into
//! one vector store per oscillator; the quads' steps do not depend on each
//! other, so the next quad's recurrence runs while one waits on its own.
//! Each quad keeps only `y1` and `y2` in registers across the loop (`b1`
//! is read by the multiply from memory), and one quad's samples are stored
//! before the next quad's are made, so that the state of four quads and
//! the samples of one fit the sixteen vector registers without spills.

#![cfg(target_arch = "x86_64")]

use super::FsinQuad;
use std::arch::x86_64::*;

/// Oscillators per call.
pub(super) const WIDTH: usize = 16;

/// Quads of four oscillators per call.
pub(super) const QUADS: usize = WIDTH / 4;

/// Eight samples of four oscillators, `x[s]` holding sample `s` of each,
/// turned into one vector of eight samples per oscillator.
#[inline]
#[target_feature(enable = "avx2")]
fn columns(x: [__m128; 8]) -> [__m256; 4] {
    // r[k] = sample k | sample k + 4: then a 4 x 4 transpose in each half.
    let r: [__m256; 4] = std::array::from_fn(|k| _mm256_set_m128(x[k + 4], x[k]));
    let lo01 = _mm256_castps_pd(_mm256_unpacklo_ps(r[0], r[1]));
    let hi01 = _mm256_castps_pd(_mm256_unpackhi_ps(r[0], r[1]));
    let lo23 = _mm256_castps_pd(_mm256_unpacklo_ps(r[2], r[3]));
    let hi23 = _mm256_castps_pd(_mm256_unpackhi_ps(r[2], r[3]));
    [
        _mm256_castpd_ps(_mm256_unpacklo_pd(lo01, lo23)),
        _mm256_castpd_ps(_mm256_unpackhi_pd(lo01, lo23)),
        _mm256_castpd_ps(_mm256_unpacklo_pd(hi01, hi23)),
        _mm256_castpd_ps(_mm256_unpackhi_pd(hi01, hi23)),
    ]
}

/// Runs `n` samples of the oscillators of `quads[..Q]`, each read from and
/// left in its quad, writing oscillator `j`'s samples (element `j % 4` of
/// quad `j / 4`) to `out[j]` where that is not null. `ALL` says that every
/// output of those quads is there (none null), which spares a test per
/// store.
///
/// # Safety
/// The CPU has AVX2; the quads `quads[..Q]` are distinct and aliased by
/// nothing live; each non-null `out[j]`, j < 4 * Q, is valid for `n` writes
/// and aliased by nothing live.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run<const Q: usize, const ALL: bool>(quads: &[*mut FsinQuad; QUADS], out: &[*mut f32; WIDTH], n: usize) {
    const { assert!(Q >= 1 && Q <= QUADS) };
    // SAFETY: quads 0..Q are valid and unaliased (the contract).
    let q = |v: usize| unsafe { &*quads[v] };
    let ld = |a: &[f64; 4]| {
        // SAFETY: four doubles of a quad.
        unsafe { _mm256_loadu_pd(a.as_ptr()) }
    };
    let b1: [__m256d; Q] = std::array::from_fn(|v| ld(&q(v).b1));
    let mut y1: [__m256d; Q] = std::array::from_fn(|v| ld(&q(v).y1));
    let mut y2: [__m256d; Q] = std::array::from_fn(|v| ld(&q(v).y2));
    let mut i = 0;
    while i + 8 <= n {
        for v in 0..Q {
            let (mut a, mut b) = (y2[v], y1[v]);
            let x: [__m128; 8] = std::array::from_fn(|_| {
                let y0 = _mm256_sub_pd(_mm256_mul_pd(b1[v], b), a);
                (a, b) = (b, y0);
                _mm256_cvtpd_ps(y0)
            });
            (y2[v], y1[v]) = (a, b);
            for (j, col) in columns(x).iter().enumerate() {
                let o = out[4 * v + j];
                if ALL || !o.is_null() {
                    // SAFETY: samples i..i + 8 of oscillator 4v + j's
                    // output, by the contract.
                    unsafe { _mm256_storeu_ps(o.add(i), *col) };
                }
            }
        }
        i += 8;
    }
    let mut lane = [0.0f32; 4];
    while i < n {
        for v in 0..Q {
            let y0 = _mm256_sub_pd(_mm256_mul_pd(b1[v], y1[v]), y2[v]);
            (y2[v], y1[v]) = (y1[v], y0);
            // SAFETY: a store into a local array of four.
            unsafe { _mm_storeu_ps(lane.as_mut_ptr(), _mm256_cvtpd_ps(y0)) };
            for (j, &x) in lane.iter().enumerate() {
                let o = out[4 * v + j];
                if ALL || !o.is_null() {
                    // SAFETY: sample i of oscillator 4v + j's output, by the
                    // contract.
                    unsafe { *o.add(i) = x };
                }
            }
        }
        i += 1;
    }
    for v in 0..Q {
        // SAFETY: quad v is valid and unaliased (the contract).
        let dst = unsafe { &mut *quads[v] };
        // SAFETY: four doubles into a quad's arrays of four.
        unsafe {
            _mm256_storeu_pd(dst.y1.as_mut_ptr(), y1[v]);
            _mm256_storeu_pd(dst.y2.as_mut_ptr(), y2[v]);
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
        for (live, n) in [(16usize, 64usize), (13, 67), (12, 64), (8, 5), (5, 64), (4, 17), (1, 9), (11, 1)] {
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
                    match (live.div_ceil(4), live % 4 == 0) {
                        (4, true) => run::<4, true>(&quads, &outs, n),
                        (4, false) => run::<4, false>(&quads, &outs, n),
                        (3, true) => run::<3, true>(&quads, &outs, n),
                        (3, false) => run::<3, false>(&quads, &outs, n),
                        (2, true) => run::<2, true>(&quads, &outs, n),
                        (2, false) => run::<2, false>(&quads, &outs, n),
                        (_, true) => run::<1, true>(&quads, &outs, n),
                        (_, false) => run::<1, false>(&quads, &outs, n),
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
