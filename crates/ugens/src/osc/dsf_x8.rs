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

/// The table index of eight 16.16 phases and their interpolation weight:
/// the low 16 bits as a float, `phase_frac` times 65536 (both exact).
#[inline]
#[target_feature(enable = "avx2")]
fn index_weight(phase: __m256i) -> (__m256i, __m256) {
    let idx = _mm256_and_si256(_mm256_srli_epi32::<16>(phase), _mm256_set1_epi32(SINE_MASK as i32));
    let weight = _mm256_cvtepi32_ps(_mm256_and_si256(phase, _mm256_set1_epi32(0xFFFF)));
    (idx, weight)
}

/// `point + step * weight` for eight lanes from a table of (point, step)
/// pairs: `lookup13`'s `a + (b - a) * frac`, bit for bit (see
/// `SineTables::sine_pairs`). Each lane's pair is one 64-bit load, and
/// two lanes' indices leave the vector in one 64-bit move. On Zen 4 the
/// Saw and Pulse kernels run about 15% faster so than with two 64-bit
/// gathers per look-up, and one AVX-512 gather of all eight pairs is
/// slower than both (`dsf_kernel_speed` measures the kernels).
#[inline]
#[target_feature(enable = "avx2")]
fn lerp(pairs: &[[f32; 2]; SINE_SIZE], idx: __m256i, weight: __m256) -> __m256 {
    let base = pairs.as_ptr().cast::<f64>();
    let (low, high) = (_mm256_castsi256_si128(idx), _mm256_extracti128_si256::<1>(idx));
    let (i01, i23) = (_mm_cvtsi128_si64(low) as u64, _mm_extract_epi64::<1>(low) as u64);
    let (i45, i67) = (_mm_cvtsi128_si64(high) as u64, _mm_extract_epi64::<1>(high) as u64);
    // Loaded so that one shuffle per half yields the lanes in order:
    // lo = p0 s0 p1 s1 | p4 s4 p5 s5, hi = p2 s2 p3 s3 | p6 s6 p7 s7.
    // SAFETY: every index is at most SINE_MASK, inside the table of
    // SINE_SIZE pairs of 8 bytes each.
    let two = |i: u64| unsafe { _mm_loadh_pd(_mm_load_sd(base.add(i as u32 as usize)), base.add((i >> 32) as usize)) };
    let join = |a, b| _mm256_castpd_ps(_mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(a), b));
    let (lo, hi) = (join(two(i01), two(i45)), join(two(i23), two(i67)));
    let (point, step) = (_mm256_shuffle_ps::<0b10_00_10_00>(lo, hi), _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi));
    _mm256_add_ps(point, _mm256_mul_ps(step, weight))
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
    let (idx, weight) = index_weight(phase);
    // NaN exactly in the lanes whose cosecant points hold BAD_VALUE.
    let cosecant = lerp(&t.cosecant_pairs, idx, weight);
    let (nidx, nweight) = index_weight(_mm256_mullo_epi32(phase, n2));
    let numer = lerp(&t.sine_pairs, nidx, nweight);
    let times_cosecant = _mm256_mul_ps(numer, cosecant);
    let bad = _mm256_cmp_ps::<_CMP_UNORD_Q>(cosecant, cosecant);
    if _mm256_testz_ps(bad, bad) != 0 {
        return usable(times_cosecant);
    }
    let denom = lerp(&t.sine_pairs, idx, weight);
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

/// Runs `n` samples of `m` Saw lanes, eight at a time.
///
/// # Safety
/// The CPU has AVX2; `out[j]` for `j < m` is valid for
/// `n` writes and no other live reference aliases it.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn saw(t: &SineTables, s: SawLanes<'_>, m: usize, n: usize) {
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

/// Runs `n` samples of `m` Pulse lanes, eight at a time.
///
/// # Safety
/// As for `saw`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn pulse(t: &SineTables, s: PulseLanes<'_>, m: usize, n: usize) {
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

#[cfg(test)]
mod tests {
    use crate::common::wavetable::{pair13, phase_frac, sine_tables, BAD_VALUE};
    use super::super::{dsf_denom, dsf_ratio};
    use super::*;

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

    /// The step tables interpolate both tables exactly as the scalar
    /// `a + (b - a) * frac` does, at every index and every fraction; the
    /// cosecant is NaN exactly where a point holds `BAD_VALUE`.
    #[test]
    fn step_interpolation_matches_the_scalar_lerp_everywhere() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        let scalar = |table: &[f32; SINE_SIZE + 1], phase: i32| {
            let (a, b) = pair13(table, phase);
            a + (b - a) * phase_frac(phase as u32)
        };
        for i in 0..SINE_SIZE as i32 {
            for low in (0..65536).step_by(8) {
                let phases: [i32; 8] = std::array::from_fn(|k| (i << 16) | (low + k as i32));
                let (mut sine, mut cosecant) = ([0f32; 8], [0f32; 8]);
                // SAFETY: AVX2 checked above; plain stores into local arrays.
                unsafe {
                    let (idx, weight) = index_weight(_mm256_loadu_si256(phases.as_ptr().cast()));
                    _mm256_storeu_ps(sine.as_mut_ptr(), lerp(&t.sine_pairs, idx, weight));
                    _mm256_storeu_ps(cosecant.as_mut_ptr(), lerp(&t.cosecant_pairs, idx, weight));
                }
                for k in 0..8 {
                    assert_eq!(sine[k].to_bits(), scalar(&t.sine, phases[k]).to_bits(), "phase {:#x}", phases[k]);
                    let (c0, c1) = pair13(&t.cosecant, phases[k]);
                    if c0 == BAD_VALUE || c1 == BAD_VALUE {
                        assert!(cosecant[k].is_nan(), "phase {:#x}", phases[k]);
                    } else {
                        let want = scalar(&t.cosecant, phases[k]);
                        assert_eq!(cosecant[k].to_bits(), want.to_bits(), "phase {:#x}", phases[k]);
                    }
                }
            }
        }
    }

    /// The former look-up, two 64-bit gathers of four pairs each: the
    /// reference that `lerp`'s scalar loads must reproduce.
    #[target_feature(enable = "avx2")]
    fn gather_lerp(pairs: &[[f32; 2]; SINE_SIZE], idx: __m256i, weight: __m256) -> __m256 {
        let idx = _mm256_permutevar8x32_epi32(idx, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
        let base = pairs.as_ptr().cast::<f64>();
        // SAFETY: every index is at most SINE_MASK, inside the table.
        let (lo, hi) = unsafe {
            (
                _mm256_castpd_ps(_mm256_i32gather_pd::<8>(base, _mm256_castsi256_si128(idx))),
                _mm256_castpd_ps(_mm256_i32gather_pd::<8>(base, _mm256_extracti128_si256::<1>(idx))),
            )
        };
        let (point, step) = (_mm256_shuffle_ps::<0b10_00_10_00>(lo, hi), _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi));
        _mm256_add_ps(point, _mm256_mul_ps(step, weight))
    }

    /// Scalar loads and gathers give the same bits on random phases (each
    /// lane its own index, so that a lane mix-up would show), in both
    /// tables.
    #[test]
    fn scalar_loads_match_the_gathers_on_random_phases() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let t = sine_tables();
        let mut x = 0x2545_F491u32;
        for _ in 0..200_000 {
            let phases: [i32; 8] = std::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as i32
            });
            // SAFETY: AVX2 checked above.
            let (got, want) = unsafe {
                let (idx, weight) = index_weight(_mm256_loadu_si256(phases.as_ptr().cast()));
                (
                    [lerp(&t.sine_pairs, idx, weight), lerp(&t.cosecant_pairs, idx, weight)].map(to_array),
                    [gather_lerp(&t.sine_pairs, idx, weight), gather_lerp(&t.cosecant_pairs, idx, weight)]
                        .map(to_array),
                )
            };
            for k in 0..8 {
                for table in 0..2 {
                    assert_eq!(
                        got[table][k].to_bits(),
                        want[table][k].to_bits(),
                        "phase {:#x} table {table}",
                        phases[k]
                    );
                }
            }
        }
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
        let mut best = [f64::MAX; 2];
        for _ in 0..200 {
            let t0 = Instant::now();
            for _ in 0..blocks {
                let s = SawLanes { phase: &mut phase, y1: &mut y1, freq: &freq, n2: &n2, scale: &scale, out: &out };
                // SAFETY: AVX2 checked; 64 samples per lane buffer.
                unsafe { saw(t, s, MAX_LANES, n) };
            }
            best[0] = best[0].min(per_lane_sample(t0));
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
            best[1] = best[1].min(per_lane_sample(t0));
            std::hint::black_box(&bufs);
        }
        println!("saw {:.3} ns per lane-sample, pulse {:.3}", best[0], best[1]);
    }
}
