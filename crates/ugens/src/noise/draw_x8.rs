//! WhiteNoise and Dust of eight synths per instruction (AVX2), each lane
//! stepping its own synth's generator (taus88) exactly as the scalar
//! `RGen::trand` does, and turning the draw into a sample with the same
//! float operations as the scalar units.

#![cfg(target_arch = "x86_64")]

use crate::osc::dsf_x8::emit;
use crate::rgen::RGen;
use crate::unit::MAX_LANES;
use std::arch::x86_64::*;

pub(super) const WHITE: u8 = 0;
pub(super) const DUST: u8 = 1;
pub(super) const DUST2: u8 = 2;

/// Runs `n` samples of `KIND` for every lane: lane `l` draws from
/// `gens[l]` and writes `out[l]`; Dust lanes use `thresh[l]` and `scale[l]`.
///
/// # Safety
/// The CPU has AVX2; `gens` and `out` have the same length (at most
/// `MAX_LANES`), each generator is valid and used by nothing else meanwhile,
/// and each `out[l]` is valid for `n` writes and aliased by nothing live.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn draw<const KIND: u8>(
    gens: &[*mut RGen],
    out: &[*mut f32],
    thresh: &[f32; MAX_LANES],
    scale: &[f32; MAX_LANES],
    n: usize,
) {
    const { assert!(MAX_LANES % 8 == 0) };
    for start in (0..gens.len()).step_by(8) {
        let used = (gens.len() - start).min(8);
        // Unused lanes hold zeros, which taus88 keeps at zero.
        let mut s = [[0u32; 8]; 3];
        for j in 0..used {
            // SAFETY: the caller's contract on `gens`.
            let g = unsafe { &*gens[start + j] };
            (s[0][j], s[1][j], s[2][j]) = (g.s1, g.s2, g.s3);
        }
        // SAFETY: eight u32 from a local array; unaligned loads.
        let ld = |a: &[u32; 8]| unsafe { _mm256_loadu_si256(a.as_ptr().cast()) };
        let (mut s1, mut s2, mut s3) = (ld(&s[0]), ld(&s[1]), ld(&s[2]));
        // SAFETY: eight floats of MAX_LANES arrays, start + 8 <= MAX_LANES.
        let (th, sc) = unsafe {
            (_mm256_loadu_ps(thresh[start..start + 8].as_ptr()), _mm256_loadu_ps(scale[start..start + 8].as_ptr()))
        };
        let k = |v: u32| _mm256_set1_epi32(v as i32);
        let one = _mm256_set1_ps(1.0);
        let next = || {
            s1 = _mm256_xor_si256(
                _mm256_slli_epi32::<12>(_mm256_and_si256(s1, k(0xFFFF_FFFE))),
                _mm256_srli_epi32::<19>(_mm256_xor_si256(_mm256_slli_epi32::<13>(s1), s1)),
            );
            s2 = _mm256_xor_si256(
                _mm256_slli_epi32::<4>(_mm256_and_si256(s2, k(0xFFFF_FFF8))),
                _mm256_srli_epi32::<25>(_mm256_xor_si256(_mm256_slli_epi32::<2>(s2), s2)),
            );
            s3 = _mm256_xor_si256(
                _mm256_slli_epi32::<17>(_mm256_and_si256(s3, k(0xFFFF_FFF0))),
                _mm256_srli_epi32::<11>(_mm256_xor_si256(_mm256_slli_epi32::<3>(s3), s3)),
            );
            let mantissa = _mm256_srli_epi32::<9>(_mm256_xor_si256(_mm256_xor_si256(s1, s2), s3));
            if KIND == WHITE {
                // frand2: [2, 4) - 3.
                _mm256_sub_ps(_mm256_castsi256_ps(_mm256_or_si256(mantissa, k(0x4000_0000))), _mm256_set1_ps(3.0))
            } else {
                // frand: [1, 2) - 1, kept where below the threshold.
                let z = _mm256_sub_ps(_mm256_castsi256_ps(_mm256_or_si256(mantissa, k(0x3F80_0000))), one);
                let scaled = _mm256_mul_ps(z, sc);
                let v = if KIND == DUST2 { _mm256_sub_ps(scaled, one) } else { scaled };
                _mm256_and_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(z, th), v)
            }
        };
        // SAFETY: the caller's contract on `out`.
        unsafe { emit(&out[start..start + used], n, next) };
        let mut back = [[0u32; 8]; 3];
        // SAFETY: stores into local arrays of eight.
        unsafe {
            _mm256_storeu_si256(back[0].as_mut_ptr().cast(), s1);
            _mm256_storeu_si256(back[1].as_mut_ptr().cast(), s2);
            _mm256_storeu_si256(back[2].as_mut_ptr().cast(), s3);
        }
        for j in 0..used {
            // SAFETY: the caller's contract on `gens`.
            let g = unsafe { &mut *gens[start + j] };
            (g.s1, g.s2, g.s3) = (back[0][j], back[1][j], back[2][j]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane's samples and final generator state equal the scalar
    /// units' bit for bit, for each kind, with lane counts that leave
    /// partial groups and block lengths with a tail.
    #[test]
    fn lanes_draw_what_the_scalar_units_draw() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        for kind in [WHITE, DUST, DUST2] {
            for (lanes, n) in [(16usize, 64usize), (11, 67), (3, 5), (1, 1)] {
                let mut thresh = [0.0f32; MAX_LANES];
                let mut scale = [0.0f32; MAX_LANES];
                for l in 0..lanes {
                    thresh[l] = 0.05 + 0.1 * l as f32;
                    scale[l] = if kind == DUST2 { 2.0 } else { 1.0 } / thresh[l];
                }
                thresh[2] = 0.0;
                scale[2] = 0.0;
                let mut gens: Vec<RGen> = (0..lanes).map(|l| RGen::new(1234 + 77 * l as u32)).collect();
                let mut want_gens = gens.clone();
                let mut bufs = vec![vec![f32::NAN; n]; lanes];
                let outs: Vec<*mut f32> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
                let ptrs: Vec<*mut RGen> = gens.iter_mut().map(std::ptr::from_mut).collect();
                // SAFETY: AVX2 checked; distinct generators and buffers of n.
                unsafe {
                    match kind {
                        WHITE => draw::<WHITE>(&ptrs, &outs, &thresh, &scale, n),
                        DUST => draw::<DUST>(&ptrs, &outs, &thresh, &scale, n),
                        _ => draw::<DUST2>(&ptrs, &outs, &thresh, &scale, n),
                    }
                }
                for l in 0..lanes {
                    let g = &mut want_gens[l];
                    for i in 0..n {
                        let want = if kind == WHITE {
                            g.frand2()
                        } else {
                            let z = g.frand();
                            if z < thresh[l] {
                                if kind == DUST2 { z * scale[l] - 1.0 } else { z * scale[l] }
                            } else {
                                0.0
                            }
                        };
                        assert_eq!(bufs[l][i].to_bits(), want.to_bits(), "kind {kind} lane {l} of {lanes} sample {i}");
                    }
                    assert_eq!((gens[l].s1, gens[l].s2, gens[l].s3), (g.s1, g.s2, g.s3));
                }
            }
        }
    }
}
