//! Eight Saw or Pulse lanes per instruction (AVX2).
//!
//! The band-limited harmonic sum of `dsf_denom` / `dsf_ratio`, evaluated for
//! eight phases at once. Every lane does the same IEEE operations in the same
//! order as the scalar code (loads, subtract, multiply, add, divide; no fused
//! multiply-add; the interpolation's subtract is done once, when the tables
//! are built), so each lane's result is bit for bit the scalar one; the tests
//! at the bottom check that over every table index and fraction.

#![cfg(target_arch = "x86_64")]

use crate::common::wavetable::{SineTables, SINE_MASK, SINE_SIZE};
use crate::unit::MAX_LANES;
use std::arch::x86_64::*;

// Lanes are loaded eight at a time from the kernels' lane arrays.
const _: () = assert!(MAX_LANES % 8 == 0);

/// How far a 16.16 phase's top index bit is from the sign bit.
const HALF_TO_SIGN: i32 = SINE_MASK.leading_zeros() as i32 - 16;

/// `a + (b - a) * frac` for eight 16.16 phases, from the half table
/// `half` (`SineTables::sine_half` or `cosecant_half`): `lookup13`, bit
/// for bit. Each lane's two points are one unaligned 64-bit load, and two
/// lanes' indices leave the vector in one 64-bit move (on Zen 4 that is
/// faster than gathers, 32- or 64-bit, AVX2 or AVX-512). A phase in the
/// second half of the cycle reads the first half and negates the result;
/// with `SIN_PI` the one point that the negation does not give, sin(pi),
/// is put back (the cosecant's is NaN either way). Half tables take 32 KiB
/// in all where tables of (point, step) pairs took 128 KiB, and the Saw
/// and Pulse kernels run about 6% faster so (`dsf_kernel_speed`).
#[inline]
#[target_feature(enable = "avx2")]
fn lerp_half<const SIN_PI: bool>(t: &SineTables, half: &[f32; SINE_SIZE / 2 + 1], phase: __m256i) -> __m256 {
    const HALF_MASK: i32 = SINE_MASK as i32 >> 1;
    let idx = _mm256_and_si256(_mm256_srli_epi32::<16>(phase), _mm256_set1_epi32(HALF_MASK));
    // The index's top bit (the half of the cycle) moved to the sign bit.
    let cycle = _mm256_slli_epi32::<HALF_TO_SIGN>(phase);
    let negate = _mm256_castsi256_ps(_mm256_and_si256(cycle, _mm256_set1_epi32(i32::MIN)));
    // phase_frac: the low 16 bits over 65536, both steps exact.
    let low = _mm256_cvtepi32_ps(_mm256_and_si256(phase, _mm256_set1_epi32(0xFFFF)));
    let frac = _mm256_mul_ps(low, _mm256_set1_ps(1.0 / 65536.0));
    let base = half.as_ptr();
    let (lo, hi) = (_mm256_castsi256_si128(idx), _mm256_extracti128_si256::<1>(idx));
    let (i01, i23) = (_mm_cvtsi128_si64(lo) as u64, _mm_extract_epi64::<1>(lo) as u64);
    let (i45, i67) = (_mm_cvtsi128_si64(hi) as u64, _mm_extract_epi64::<1>(hi) as u64);
    // SAFETY: every index is at most SINE_SIZE / 2 - 1, so both points lie
    // inside the table of SINE_SIZE / 2 + 1; the loads are unaligned reads.
    let two_points = |i: usize| unsafe { std::ptr::read_unaligned(base.add(i).cast::<f64>()) };
    let two_lanes = |i: u64| _mm_set_pd(two_points((i >> 32) as usize), two_points(i as u32 as usize));
    let join = |x, y| _mm256_castpd_ps(_mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(x), y));
    // lo = a0 b0 a1 b1 | a4 b4 a5 b5, hi = a2 b2 a3 b3 | a6 b6 a7 b7: one
    // shuffle per point yields the lanes in order.
    let (lo, hi) = (join(two_lanes(i01), two_lanes(i45)), join(two_lanes(i23), two_lanes(i67)));
    let (a, b) = (_mm256_shuffle_ps::<0b10_00_10_00>(lo, hi), _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi));
    let value = _mm256_xor_ps(_mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), frac)), negate);
    if !SIN_PI {
        return value;
    }
    // Exactly index SINE_SIZE / 2, fraction 0: the cycle bits are the sign
    // bit alone.
    let at_pi = _mm256_cmpeq_epi32(cycle, _mm256_set1_epi32(i32::MIN));
    _mm256_blendv_ps(value, _mm256_set1_ps(t.sine[SINE_SIZE / 2]), _mm256_castsi256_ps(at_pi))
}

/// `dsf_denom` then `dsf_ratio` for eight lanes, handed to `usable` when
/// every lane's cosecant is usable (the common case, without blends), else
/// to `mixed` with the mask of the lanes where the denominator vanished
/// (`dsf_denom` = None).
#[inline]
#[target_feature(enable = "avx2")]
fn dsf<R>(
    t: &SineTables,
    phase: __m256i,
    n2: __m256i,
    usable: impl FnOnce(__m256) -> R,
    mixed: impl FnOnce(__m256, __m256) -> R,
) -> R {
    // NaN exactly in the lanes whose cosecant points hold BAD_VALUE.
    let cosecant = lerp_half::<false>(t, &t.cosecant_half, phase);
    let numer = lerp_half::<true>(t, &t.sine_half, _mm256_mullo_epi32(phase, n2));
    let times_cosecant = _mm256_mul_ps(numer, cosecant);
    let bad = _mm256_cmp_ps::<_CMP_UNORD_Q>(cosecant, cosecant);
    if _mm256_testz_ps(bad, bad) != 0 {
        return usable(times_cosecant);
    }
    let denom = lerp_half::<true>(t, &t.sine_half, phase);
    let magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0), denom);
    let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(magnitude, _mm256_set1_ps(0.0005));
    let over_sine = _mm256_div_ps(numer, denom);
    mixed(_mm256_blendv_ps(times_cosecant, over_sine, bad), _mm256_and_ps(bad, tiny))
}

/// Writes `n` samples of up to eight lanes, one vector per sample from
/// `next` (lane j in element j), to the lanes' outputs: eight samples at a
/// time are transposed so that each lane gets one contiguous store.
///
/// # Safety
/// Each `out[j]` is valid for `n` writes and aliased by nothing live.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn emit(out: &[*mut f32], n: usize, mut next: impl FnMut() -> __m256) {
    assert!((1..=8).contains(&out.len()));
    // Lanes past the used ones are stored to the last used lane's output,
    // before that lane's own store overwrites them: eight stores without a
    // branch per lane.
    let last = out.len() - 1;
    let to: [*mut f32; 8] = std::array::from_fn(|j| out[j.min(last)]);
    let mut i = 0;
    while i + 8 <= n {
        let rows: [__m256; 8] = std::array::from_fn(|_| next());
        let cols = transpose8(rows);
        for j in (0..8).rev() {
            // SAFETY: samples i..i + 8 of lane min(j, last)'s output, by the
            // contract; stores through raw pointers keep their order.
            unsafe { _mm256_storeu_ps(to[j].add(i), cols[j]) };
        }
        i += 8;
    }
    let mut lane_out = [0.0f32; 8];
    while i < n {
        // SAFETY: `lane_out` holds eight floats; unaligned stores accept any
        // address.
        unsafe { _mm256_storeu_ps(lane_out.as_mut_ptr(), next()) };
        for (j, &o) in out.iter().enumerate() {
            // SAFETY: sample i of lane j's output, by the contract.
            unsafe { *o.add(i) = lane_out[j] };
        }
        i += 1;
    }
}

/// Transposes an 8×8 block: row k of the result holds element k of every
/// input row.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    let lo = |a, b| _mm256_unpacklo_ps(a, b);
    let hi = |a, b| _mm256_unpackhi_ps(a, b);
    let (t0, t1, t2, t3) = (lo(r[0], r[1]), hi(r[0], r[1]), lo(r[2], r[3]), hi(r[2], r[3]));
    let (t4, t5, t6, t7) = (lo(r[4], r[5]), hi(r[4], r[5]), lo(r[6], r[7]), hi(r[6], r[7]));
    let first = |a, b| _mm256_shuffle_ps::<0x44>(a, b);
    let second = |a, b| _mm256_shuffle_ps::<0xEE>(a, b);
    let (u0, u1, u2, u3) = (first(t0, t2), second(t0, t2), first(t1, t3), second(t1, t3));
    let (u4, u5, u6, u7) = (first(t4, t6), second(t4, t6), first(t5, t7), second(t5, t7));
    let low = |a, b| _mm256_permute2f128_ps::<0x20>(a, b);
    let high = |a, b| _mm256_permute2f128_ps::<0x31>(a, b);
    [low(u0, u4), low(u1, u5), low(u2, u6), low(u3, u7), high(u0, u4), high(u1, u5), high(u2, u6), high(u3, u7)]
}

/// Per-lane state of a Saw lane kernel, in lane order. Lanes past the
/// used count are ignored padding.
pub(super) struct SawLanes<'a> {
    pub phase: &'a mut [i32; MAX_LANES],
    pub y1: &'a mut [f32; MAX_LANES],
    pub freq: &'a [i32; MAX_LANES],
    pub n2: &'a [i32; MAX_LANES],
    pub scale: &'a [f32; MAX_LANES],
    pub out: &'a [*mut f32; MAX_LANES],
}

/// Per-lane state of a Pulse lane kernel (two saws `phaseoff` apart).
pub(super) struct PulseLanes<'a> {
    pub phase: &'a mut [i32; MAX_LANES],
    pub phaseoff: &'a mut [i32; MAX_LANES],
    pub phaseoff_slope: &'a [i32; MAX_LANES],
    pub y1: &'a mut [f32; MAX_LANES],
    pub freq: &'a [i32; MAX_LANES],
    pub n2: &'a [i32; MAX_LANES],
    pub scale: &'a [f32; MAX_LANES],
    pub rscale: &'a [f32; MAX_LANES],
    pub out: &'a [*mut f32; MAX_LANES],
}

/// The Saw and Pulse kernels, compiled for the CPU features `$features`:
/// the same operations on the same eight-lane vectors either way, so the
/// same bits. With AVX-512 (F and VL) the compiler has 32 vector registers
/// instead of 16, which keeps the kernels' constants and lane state out of
/// memory: about 9% faster on Zen 4 (`dsf_kernel_speed`).
macro_rules! dsf_kernels {
    ($saw:ident, $pulse:ident, $features:literal) => {
        /// Runs `n` samples of `m` Saw lanes, eight at a time.
        ///
        /// # Safety
        /// The CPU has the kernel's features; `out[j]` for `j < m` is valid
        /// for `n` writes and no other live reference aliases it.
        #[target_feature(enable = $features)]
        unsafe fn $saw(t: &SineTables, s: SawLanes<'_>, m: usize, n: usize) {
            for start in (0..m).step_by(8) {
                let used = (m - start).min(8);
                // SAFETY: the slice `start..start + 8` is checked in bounds, and
                // unaligned loads accept any address.
                let ld_i = |a: &[i32; MAX_LANES]| unsafe { _mm256_loadu_si256(a[start..start + 8].as_ptr().cast()) };
                // SAFETY: as for `ld_i`.
                let ld_f = |a: &[f32; MAX_LANES]| unsafe { _mm256_loadu_ps(a[start..start + 8].as_ptr()) };
                let (mut phase, freq, n2) = (ld_i(s.phase), ld_i(s.freq), ld_i(s.n2));
                let (mut y1, scale) = (ld_f(s.y1), ld_f(s.scale));
                let (one, decay) = (_mm256_set1_ps(1.0), _mm256_set1_ps(0.999));
                let next = || {
                    // The term is chosen before the leak is added (x + leak or
                    // 1 + leak, operands in the scalar order), so that only a
                    // multiply and an add lie between one sample's y1 and the next.
                    let leak = _mm256_mul_ps(decay, y1);
                    let term = |value| _mm256_mul_ps(_mm256_sub_ps(value, one), scale);
                    let term = dsf(t, phase, n2, term, |value, vanished| _mm256_blendv_ps(term(value), one, vanished));
                    y1 = _mm256_add_ps(term, leak);
                    phase = _mm256_add_epi32(phase, freq);
                    y1
                };
                // SAFETY: the caller's contract on `out`.
                unsafe { emit(&s.out[start..start + used], n, next) };
                // SAFETY: each slice is checked in bounds; unaligned stores accept
                // any address.
                unsafe {
                    _mm256_storeu_si256(s.phase[start..start + 8].as_mut_ptr().cast(), phase);
                    _mm256_storeu_ps(s.y1[start..start + 8].as_mut_ptr(), y1);
                }
            }
        }

        /// Runs `n` samples of `m` Pulse lanes, eight at a time.
        ///
        /// # Safety
        /// As for the Saw kernel.
        #[target_feature(enable = $features)]
        unsafe fn $pulse(t: &SineTables, s: PulseLanes<'_>, m: usize, n: usize) {
            for start in (0..m).step_by(8) {
                let used = (m - start).min(8);
                // SAFETY: the slice `start..start + 8` is checked in bounds, and
                // unaligned loads accept any address.
                let ld_i = |a: &[i32; MAX_LANES]| unsafe { _mm256_loadu_si256(a[start..start + 8].as_ptr().cast()) };
                // SAFETY: as for `ld_i`.
                let ld_f = |a: &[f32; MAX_LANES]| unsafe { _mm256_loadu_ps(a[start..start + 8].as_ptr()) };
                let (mut phase, mut phaseoff) = (ld_i(s.phase), ld_i(s.phaseoff));
                let (off_slope, freq, n2) = (ld_i(s.phaseoff_slope), ld_i(s.freq), ld_i(s.n2));
                let (mut y1, scale, rscale) = (ld_f(s.y1), ld_f(s.scale), ld_f(s.rscale));
                let decay = _mm256_set1_ps(0.999);
                let next = || {
                    let pul = |ph| dsf(t, ph, n2, |value| value, |value, vanished| _mm256_blendv_ps(value, rscale, vanished));
                    let pul1 = pul(phase);
                    let pul2 = pul(_mm256_add_epi32(phase, phaseoff));
                    y1 = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(pul1, pul2), scale), _mm256_mul_ps(decay, y1));
                    phase = _mm256_add_epi32(phase, freq);
                    phaseoff = _mm256_add_epi32(phaseoff, off_slope);
                    y1
                };
                // SAFETY: the caller's contract on `out`.
                unsafe { emit(&s.out[start..start + used], n, next) };
                // SAFETY: each slice is checked in bounds; unaligned stores accept
                // any address.
                unsafe {
                    _mm256_storeu_si256(s.phase[start..start + 8].as_mut_ptr().cast(), phase);
                    _mm256_storeu_si256(s.phaseoff[start..start + 8].as_mut_ptr().cast(), phaseoff);
                    _mm256_storeu_ps(s.y1[start..start + 8].as_mut_ptr(), y1);
                }
            }
        }
    };
}

dsf_kernels!(saw_avx2, pulse_avx2, "avx2");
dsf_kernels!(saw_avx512, pulse_avx512, "avx2,avx512f,avx512vl");

/// Runs `n` samples of `m` Saw lanes, eight at a time, with AVX-512's
/// registers where the CPU has them.
///
/// # Safety
/// The CPU has AVX2; `out[j]` for `j < m` is valid for
/// `n` writes and no other live reference aliases it.
pub(super) unsafe fn saw(t: &SineTables, s: SawLanes<'_>, m: usize, n: usize) {
    // SAFETY: the caller's contract, and the features checked.
    unsafe {
        if crate::vector::avx512_registers() {
            saw_avx512(t, s, m, n)
        } else {
            saw_avx2(t, s, m, n)
        }
    }
}

/// Runs `n` samples of `m` Pulse lanes, as `saw` does Saw lanes.
///
/// # Safety
/// As for `saw`.
pub(super) unsafe fn pulse(t: &SineTables, s: PulseLanes<'_>, m: usize, n: usize) {
    // SAFETY: the caller's contract, and the features checked.
    unsafe {
        if crate::vector::avx512_registers() {
            pulse_avx512(t, s, m, n)
        } else {
            pulse_avx2(t, s, m, n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{dsf_denom, dsf_ratio};
    use super::*;
    use crate::common::wavetable::{lookup13, pair13, phase_frac, sine_tables, BAD_VALUE};

    /// Every lane equals the scalar harmonic sum, bit for bit, at every
    /// table index (and fractions within it), including the zeros of the
    /// sine where the cosecant table is unusable.
    #[test]
    fn transpose_moves_element_k_of_row_j_to_element_j_of_row_k() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let m: [[f32; 8]; 8] = std::array::from_fn(|j| std::array::from_fn(|k| (j * 8 + k) as f32));
        // SAFETY: AVX2 checked; loads and stores of local arrays.
        let got = unsafe {
            let rows = m.map(|r| _mm256_loadu_ps(r.as_ptr()));
            transpose8(rows).map(|v| {
                let mut a = [0f32; 8];
                _mm256_storeu_ps(a.as_mut_ptr(), v);
                a
            })
        };
        for j in 0..8 {
            for k in 0..8 {
                assert_eq!(got[k][j], m[j][k]);
            }
        }
    }

    /// The scalar interpolations that the half tables must reproduce:
    /// `lookup13` of the sine, and of the cosecant (NaN where the scalar
    /// code finds a `BAD_VALUE` point).
    fn scalar_lerps(t: &SineTables, phase: i32) -> (f32, Option<f32>) {
        let (c0, c1) = pair13(&t.cosecant, phase);
        let cosecant = (c0 != BAD_VALUE && c1 != BAD_VALUE).then(|| c0 + (c1 - c0) * phase_frac(phase as u32));
        (lookup13(&t.sine, phase), cosecant)
    }

    /// Both half tables interpolated for eight phases.
    fn half_lerps(t: &SineTables, phases: [i32; 8]) -> ([f32; 8], [f32; 8]) {
        // SAFETY: the callers check AVX2; loads of a local array.
        unsafe {
            let phase = _mm256_loadu_si256(phases.as_ptr().cast());
            (
                to_array(lerp_half::<true>(t, &t.sine_half, phase)),
                to_array(lerp_half::<false>(t, &t.cosecant_half, phase)),
            )
        }
    }

    fn assert_lanes_match(t: &SineTables, phases: [i32; 8]) {
        let (sine, cosecant) = half_lerps(t, phases);
        for k in 0..8 {
            let (want_sine, want_cosecant) = scalar_lerps(t, phases[k]);
            assert_eq!(sine[k].to_bits(), want_sine.to_bits(), "sine at phase {:#x}", phases[k]);
            match want_cosecant {
                None => assert!(cosecant[k].is_nan(), "cosecant at phase {:#x}", phases[k]),
                Some(c) => assert_eq!(cosecant[k].to_bits(), c.to_bits(), "cosecant at phase {:#x}", phases[k]),
            }
        }
    }

    /// The half tables interpolate both tables exactly as the scalar
    /// `a + (b - a) * frac` does, at every index of the whole cycle and
    /// every fraction (sin(pi) included); the cosecant is NaN exactly where
    /// a point holds `BAD_VALUE`.
    #[test]
    fn half_tables_match_the_scalar_lerp_everywhere() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        for i in 0..SINE_SIZE as i32 {
            for low in (0..65536).step_by(8) {
                // The bits above the index vary too: they must not matter.
                let high = i.wrapping_mul(0x2000_0000 >> 2) & !0x1FFF_FFFF;
                assert_lanes_match(t, std::array::from_fn(|k| high | (i << 16) | (low + k as i32)));
            }
        }
    }

    /// The same on random phases, each lane its own index, so that a lane
    /// mix-up would show.
    #[test]
    fn half_tables_match_the_scalar_lerp_on_random_phases() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        let mut x = 0x2545_F491u32;
        for _ in 0..200_000 {
            assert_lanes_match(
                t,
                std::array::from_fn(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as i32
                }),
            );
        }
    }

    /// Random Saw and Pulse lanes (phases, frequencies, harmonic counts,
    /// pulse widths) through the kernels and through the scalar loops of
    /// `saw_lanes` and `pulse_lanes`: the same bits, sample for sample. Some
    /// lanes step a power-of-two fraction of a cycle per sample, so that
    /// they land on sin(pi) and on the cosecant's poles exactly.
    #[test]
    fn saw_and_pulse_kernels_match_the_scalar_loops_on_random_lanes() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for round in 0..200 {
            let (m, n) = (1 + round % MAX_LANES, [64, 1, 7, 13][round % 4]);
            let mut phase: [i32; MAX_LANES] = std::array::from_fn(|_| next() as i32);
            let mut freq = [0i32; MAX_LANES];
            let (mut n2, mut scale) = ([0i32; MAX_LANES], [0f32; MAX_LANES]);
            for j in 0..MAX_LANES {
                let hz = 20.0 + (next() % 12_000) as f64;
                freq[j] = (hz / 48000.0 * (1u64 << 29) as f64) as i32;
                if next() % 4 == 0 {
                    (phase[j], freq[j]) = ((next() % 8) as i32 * 0x0400_0000, 0x0400_0000 >> (next() % 6));
                }
                let harmonics = (24000.0 / hz).max(1.0) as i32;
                (n2[j], scale[j]) = (2 * harmonics + 1, 0.5 / harmonics as f32);
            }
            let rscale: [f32; MAX_LANES] = std::array::from_fn(|j| 1.0 / scale[j] + 1.0);
            let phaseoff: [i32; MAX_LANES] = std::array::from_fn(|_| next() as i32 & 0x1FFF_FFFF);
            let slope: [i32; MAX_LANES] = std::array::from_fn(|_| (next() as i32) >> 12);
            let y1: [f32; MAX_LANES] = std::array::from_fn(|_| (next() % 1000) as f32 / 1000.0);
            let mut bufs = vec![[0f32; 64]; MAX_LANES];
            let out: [*mut f32; MAX_LANES] = std::array::from_fn(|j| bufs[j].as_mut_ptr());

            // The scalar loops, on copies of the state.
            let (mut sp, mut sy, mut want_saw) = (phase, y1, vec![[0f32; 64]; MAX_LANES]);
            let (mut pp, mut po, mut py, mut want_pulse) = (phase, phaseoff, y1, vec![[0f32; 64]; MAX_LANES]);
            for i in 0..n {
                for j in 0..m {
                    sy[j] = match dsf_denom(t, sp[j]) {
                        None => 1.0 + 0.999 * sy[j],
                        Some(d) => (dsf_ratio(t, sp[j], n2[j], d) - 1.0) * scale[j] + 0.999 * sy[j],
                    };
                    want_saw[j][i] = sy[j];
                    sp[j] = sp[j].wrapping_add(freq[j]);
                    let pul = |ph: i32| match dsf_denom(t, ph) {
                        None => rscale[j],
                        Some(d) => dsf_ratio(t, ph, n2[j], d),
                    };
                    let (pul1, pul2) = (pul(pp[j]), pul(pp[j].wrapping_add(po[j])));
                    py[j] = (pul1 - pul2) * scale[j] + 0.999 * py[j];
                    want_pulse[j][i] = py[j];
                    pp[j] = pp[j].wrapping_add(freq[j]);
                    po[j] = po[j].wrapping_add(slope[j]);
                }
            }

            for (build, (saw, pulse)) in builds() {
                let mut saw_phase = phase;
                let mut saw_y1 = y1;
                let lanes =
                    SawLanes { phase: &mut saw_phase, y1: &mut saw_y1, freq: &freq, n2: &n2, scale: &scale, out: &out };
                // SAFETY: the build's features checked; each lane's buffer
                // holds 64 >= n samples.
                unsafe { saw(t, lanes, m, n) };
                for j in 0..m {
                    for i in 0..n {
                        let (got, want) = (bufs[j][i], want_saw[j][i]);
                        assert_eq!(got.to_bits(), want.to_bits(), "{build} saw round {round} lane {j} sample {i}");
                    }
                    assert_eq!((saw_phase[j], saw_y1[j].to_bits()), (sp[j], sy[j].to_bits()), "{build} saw state, lane {j}");
                }
                let (mut pulse_phase, mut pulse_off, mut pulse_y1) = (phase, phaseoff, y1);
                let lanes = PulseLanes {
                    phase: &mut pulse_phase,
                    phaseoff: &mut pulse_off,
                    phaseoff_slope: &slope,
                    y1: &mut pulse_y1,
                    freq: &freq,
                    n2: &n2,
                    scale: &scale,
                    rscale: &rscale,
                    out: &out,
                };
                // SAFETY: as above.
                unsafe { pulse(t, lanes, m, n) };
                for j in 0..m {
                    for i in 0..n {
                        let (got, want) = (bufs[j][i], want_pulse[j][i]);
                        assert_eq!(got.to_bits(), want.to_bits(), "{build} pulse round {round} lane {j} sample {i}");
                    }
                    let state = (pulse_phase[j], pulse_off[j], pulse_y1[j].to_bits());
                    assert_eq!(state, (pp[j], po[j], py[j].to_bits()), "{build} pulse state, lane {j}");
                }
            }
        }
    }

    type SawKernel = unsafe fn(&SineTables, SawLanes<'_>, usize, usize);
    type PulseKernel = unsafe fn(&SineTables, PulseLanes<'_>, usize, usize);

    /// The builds of the Saw and Pulse kernels that this CPU runs, named.
    pub(super) fn builds() -> Vec<(&'static str, (SawKernel, PulseKernel))> {
        let mut b: Vec<(&'static str, (SawKernel, PulseKernel))> = vec![("avx2", (saw_avx2, pulse_avx2))];
        if crate::vector::avx512_registers() {
            b.push(("avx512", (saw_avx512, pulse_avx512)));
        }
        b
    }

    fn to_array(v: __m256) -> [f32; 8] {
        let mut a = [0f32; 8];
        // SAFETY: an unaligned store into a local array of eight.
        unsafe { _mm256_storeu_ps(a.as_mut_ptr(), v) };
        a
    }

    #[test]
    fn eight_lanes_match_the_scalar_sum() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        let mut checked = 0u32;
        let mut vanished = 0u32;
        for n in [1, 2, 7, 40, 120, 239, 1000] {
            let n2 = 2 * n + 1;
            for base in (0..(1u32 << 29)).step_by(1 << 16) {
                let mut phases = [0i32; 8];
                for (k, p) in phases.iter_mut().enumerate() {
                    // Spread the lanes over fractions and over the whole cycle.
                    *p = base.wrapping_add((k as u32) * 0x1357_9BDF).wrapping_mul(1 + (k as u32 & 1) * 4) as i32;
                }
                // SAFETY: AVX2 checked above.
                let (value, mask) = unsafe {
                    dsf(
                        t,
                        _mm256_loadu_si256(phases.as_ptr().cast()),
                        _mm256_set1_epi32(n2),
                        |value| (value, _mm256_setzero_ps()),
                        |value, vanished| (value, vanished),
                    )
                };
                let (value, mask) = (to_array(value), to_array(mask));
                for k in 0..8 {
                    match dsf_denom(t, phases[k]) {
                        None => {
                            assert!(mask[k].to_bits() != 0, "phase {:#x}: scalar vanished, lanes did not", phases[k]);
                            vanished += 1;
                        }
                        Some(den) => {
                            assert_eq!(mask[k].to_bits(), 0, "phase {:#x}: lanes vanished, scalar did not", phases[k]);
                            let want = dsf_ratio(t, phases[k], n2, den);
                            assert_eq!(value[k].to_bits(), want.to_bits(), "phase {:#x} n2 {n2}", phases[k]);
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 50_000 && vanished > 0, "checked {checked}, vanished {vanished}");
    }
}

#[cfg(test)]
mod speed {
    use super::*;
    use crate::common::wavetable::sine_tables;
    use std::time::Instant;

    /// Nanoseconds per lane-sample of the Saw and Pulse kernels (16 lanes,
    /// 64-sample blocks, 80 to 1300 Hz), the best of many short runs so
    /// that a busy machine disturbs it less:
    /// `cargo test --release -p magnetar-ugens dsf_kernel_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn dsf_kernel_speed() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        let (n, blocks) = (64, 1000);
        let mut bufs = vec![[0f32; 64]; MAX_LANES];
        let out: [*mut f32; MAX_LANES] = std::array::from_fn(|j| bufs[j].as_mut_ptr());
        let mut x = 7u32;
        let (mut phase, mut freq, mut n2, mut scale) =
            ([0i32; MAX_LANES], [0i32; MAX_LANES], [0i32; MAX_LANES], [0f32; MAX_LANES]);
        for j in 0..MAX_LANES {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let f = 80.0 + (x >> 20) as f64 * 0.3;
            let harmonics = (24000.0 / f) as i32;
            (phase[j], freq[j]) = (x as i32, (f / 48000.0 * (1u64 << 29) as f64) as i32);
            (n2[j], scale[j]) = (2 * harmonics + 1, 0.5 / harmonics as f32);
        }
        let (mut y1, mut phaseoff) = ([0f32; MAX_LANES], [0x0800_0000i32; MAX_LANES]);
        let slope = [0i32; MAX_LANES];
        let rscale: [f32; MAX_LANES] = std::array::from_fn(|j| 1.0 / scale[j] + 1.0);
        let per_lane_sample = |t0: Instant| t0.elapsed().as_nanos() as f64 / (blocks * n * MAX_LANES) as f64;
        // The builds take turns, so that a busy machine disturbs them alike.
        let builds = super::tests::builds();
        let mut best = vec![[f64::MAX; 2]; builds.len()];
        for _ in 0..200 {
            for (b, (_, (saw, pulse))) in builds.iter().enumerate() {
                let t0 = Instant::now();
                for _ in 0..blocks {
                    let s = SawLanes { phase: &mut phase, y1: &mut y1, freq: &freq, n2: &n2, scale: &scale, out: &out };
                    // SAFETY: the build's features checked; 64 samples per
                    // lane buffer.
                    unsafe { saw(t, s, MAX_LANES, n) };
                }
                best[b][0] = best[b][0].min(per_lane_sample(t0));
                let t0 = Instant::now();
                for _ in 0..blocks {
                    let s = PulseLanes {
                        phase: &mut phase,
                        phaseoff: &mut phaseoff,
                        phaseoff_slope: &slope,
                        y1: &mut y1,
                        freq: &freq,
                        n2: &n2,
                        scale: &scale,
                        rscale: &rscale,
                        out: &out,
                    };
                    // SAFETY: as above.
                    unsafe { pulse(t, s, MAX_LANES, n) };
                }
                best[b][1] = best[b][1].min(per_lane_sample(t0));
                std::hint::black_box(&bufs);
            }
        }
        for ((name, _), [saw, pulse]) in builds.iter().zip(&best) {
            println!("{name}: saw {saw:.3} ns per lane-sample, pulse {pulse:.3}");
        }
    }
}
