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
use std::arch::x86_64::*;

/// Oscillators per call.
pub(super) const WIDTH: usize = 16;

/// The recurrence state of up to sixteen oscillators (unused ones are
/// padding: zeros in, zeros out).
pub(super) struct Fsin16 {
    pub b1: [f64; WIDTH],
    pub y1: [f64; WIDTH],
    pub y2: [f64; WIDTH],
}

/// Runs `n` samples of the oscillators, writing oscillator `j`'s samples
/// to `out[j]` for `j < out.len()` (at most sixteen). `G` is the number of
/// groups of eight computed (1 or 2); oscillators past `8 * G` are left alone.
///
/// # Safety
/// The CPU has AVX2; each `out[j]` is valid for `n` writes and aliased by
/// nothing live.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run<const G: usize>(s: &mut Fsin16, out: &[*mut f32], n: usize) {
    const { assert!(G == 1 || G == 2) };
    let live = out.len().min(8 * G);
    // SAFETY: four doubles from arrays of sixteen, at most 4 * (2G - 1) + 4
    // <= 16.
    let ld = |a: &[f64; WIDTH], v: usize| unsafe { _mm256_loadu_pd(a[4 * v..4 * v + 4].as_ptr()) };
    let b1: [[__m256d; 2]; G] = std::array::from_fn(|g| [ld(&s.b1, 2 * g), ld(&s.b1, 2 * g + 1)]);
    let mut y1: [[__m256d; 2]; G] = std::array::from_fn(|g| [ld(&s.y1, 2 * g), ld(&s.y1, 2 * g + 1)]);
    let mut y2: [[__m256d; 2]; G] = std::array::from_fn(|g| [ld(&s.y2, 2 * g), ld(&s.y2, 2 * g + 1)]);
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
            let end = live.min(8 * g + 8);
            for j in 8 * g..end {
                // SAFETY: samples i..i + 8 of oscillator j's output, by the
                // contract.
                unsafe { _mm256_storeu_ps(out[j].add(i), cols[j - 8 * g]) };
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
            let end = live.min(8 * g + 8);
            for j in 8 * g..end {
                // SAFETY: sample i of oscillator j's output, by the contract.
                unsafe { *out[j].add(i) = lane[j - 8 * g] };
            }
        }
        i += 1;
    }
    for g in 0..G {
        for h in 0..2 {
            let v = 4 * (2 * g + h);
            // SAFETY: four doubles into arrays of sixteen, v + 4 <= 16.
            unsafe {
                _mm256_storeu_pd(s.y1[v..v + 4].as_mut_ptr(), y1[g][h]);
                _mm256_storeu_pd(s.y2[v..v + 4].as_mut_ptr(), y2[g][h]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every oscillator's samples equal the scalar recurrence bit for bit,
    /// for block lengths with and without a tail of fewer than eight.
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
            let mut s = Fsin16 { b1: [0.0; WIDTH], y1: [0.0; WIDTH], y2: [0.0; WIDTH] };
            for j in 0..live {
                (s.b1[j], s.y1[j], s.y2[j]) = init(j);
            }
            let mut bufs = vec![vec![f32::NAN; n]; live];
            let outs: Vec<*mut f32> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
            for _ in 0..3 {
                // SAFETY: AVX2 checked; each pointer is its own buffer of n.
                unsafe {
                    if live > 8 {
                        run::<2>(&mut s, &outs, n);
                    } else {
                        run::<1>(&mut s, &outs, n);
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
                assert_eq!((s.y1[j].to_bits(), s.y2[j].to_bits()), (y1.to_bits(), y2.to_bits()));
            }
        }
    }
}
