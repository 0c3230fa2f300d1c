//! Eight SinOsc, LFSaw, LFPulse or LFTri lanes per instruction (AVX2).
//!
//! Each kernel does, in every lane, the IEEE operations of the scalar unit
//! in the same order (no fused multiply-add; truncating conversions that
//! give `i32::MIN` out of range and for NaN, as `f2i` does; branches turned
//! into blends of values computed the same way), so each lane's samples are
//! the scalar unit's bit for bit. Audio-rate inputs are read eight samples
//! of eight lanes at a time and transposed, so that each sample's step sees
//! one vector per input.

#![cfg(target_arch = "x86_64")]

use super::dsf_x8::transpose8;
use crate::common::wavetable::{lookupi1, SINE_MASK, SINE_SIZE};
use crate::unit::MAX_LANES;
use std::arch::x86_64::*;

// Lanes are loaded eight at a time from the kernels' lane arrays.
const _: () = assert!(MAX_LANES % 8 == 0);

/// Runs `n` samples of up to eight lanes. `step` gets, for each of the `A`
/// audio inputs, the lanes' sample `i` as one vector (lane j in element j),
/// and returns the lanes' outputs for sample `i`, which go to `out`.
///
/// # Safety
/// `out.len()` is 1..=8; each `out[j]` is valid for `n` writes and aliased
/// by nothing live; each `ins[a][j]` for j < 8 is valid for `n` reads (lanes
/// past `out.len()` point at a used lane's input).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn run8<const A: usize>(
    out: &[*mut f32],
    ins: &[[*const f32; 8]; A],
    n: usize,
    mut step: impl FnMut(&[__m256; A]) -> __m256,
) {
    assert!((1..=8).contains(&out.len()));
    // Lanes past the used ones are stored to the last used lane's output,
    // before that lane's own store overwrites them (as `dsf_x8::emit` does).
    let last = out.len() - 1;
    let to: [*mut f32; 8] = std::array::from_fn(|j| out[j.min(last)]);
    let mut i = 0;
    while i + 8 <= n {
        let cols: [[__m256; 8]; A] = std::array::from_fn(|a| {
            // SAFETY: samples i..i + 8 of each lane's input, by the contract.
            transpose8(std::array::from_fn(|j| unsafe { _mm256_loadu_ps(ins[a][j].add(i)) }))
        });
        let rows: [__m256; 8] = std::array::from_fn(|s| step(&std::array::from_fn(|a| cols[a][s])));
        let outs = transpose8(rows);
        for j in (0..8).rev() {
            // SAFETY: samples i..i + 8 of lane min(j, last)'s output, by the
            // contract; stores through raw pointers keep their order.
            unsafe { _mm256_storeu_ps(to[j].add(i), outs[j]) };
        }
        i += 8;
    }
    let mut lane = [0.0f32; 8];
    while i < n {
        let x: [__m256; A] = std::array::from_fn(|a| {
            // SAFETY: sample i of each lane's input, by the contract.
            let v: [f32; 8] = std::array::from_fn(|j| unsafe { *ins[a][j].add(i) });
            // SAFETY: an unaligned load of a local array of eight.
            unsafe { _mm256_loadu_ps(v.as_ptr()) }
        });
        // SAFETY: `lane` holds eight floats; unaligned stores accept any address.
        unsafe { _mm256_storeu_ps(lane.as_mut_ptr(), step(&x)) };
        for (j, &o) in out.iter().enumerate() {
            // SAFETY: sample i of lane j's output, by the contract.
            unsafe { *o.add(i) = lane[j] };
        }
        i += 1;
    }
}

/// Eight lanes' pointers from a lane array, starting at `start`: lanes past
/// `used` repeat the last used lane's pointer, so that every read is valid.
fn ptrs8(p: &[*const f32; MAX_LANES], start: usize, used: usize) -> [*const f32; 8] {
    std::array::from_fn(|j| p[start + j.min(used - 1)])
}

// ---------------------------------------------------------------------------
// SinOsc

/// How a SinOsc lane's table phase is offset from its accumulator: not at
/// all (Kk), by a control ramp (`f2i(radtoinc * phasemod)`, phasemod moving
/// by `slope` per sample; Ak, Ai), or by an audio input (Ka, Aa).
pub(crate) const PHASE_NONE: u8 = 0;
pub(crate) const PHASE_RAMP: u8 = 1;
pub(crate) const PHASE_AUDIO: u8 = 2;

/// Per-lane state of a SinOsc lane kernel, in lane order.
pub(crate) struct SinLanes<'a> {
    pub phase: &'a mut [i32; MAX_LANES],
    /// The increment when the frequency is not an audio input.
    pub inc: &'a [i32; MAX_LANES],
    pub phasemod: &'a [f32; MAX_LANES],
    pub slope: &'a [f32; MAX_LANES],
    pub cpstoinc: &'a [f32; MAX_LANES],
    pub radtoinc: &'a [f32; MAX_LANES],
    pub freq: &'a [*const f32; MAX_LANES],
    pub phasein: &'a [*const f32; MAX_LANES],
    pub out: &'a [*mut f32; MAX_LANES],
}

/// `lookupi1` on the sine wavetable for eight 16.16 phases: the pair at the
/// phase's index, `a + b * (1 + frac)`.
#[inline]
#[target_feature(enable = "avx2")]
fn wavetable_lookup(table: &[f32; 2 * SINE_SIZE], phase: __m256i) -> __m256 {
    // Twice the pair's index, ((phase >> 16) & mask) << 1, in one shift:
    // bit 0 falls outside the mask.
    let idx = _mm256_and_si256(_mm256_srli_epi32::<15>(phase), _mm256_set1_epi32((SINE_MASK << 1) as i32));
    let base = table.as_ptr();
    // SAFETY: every index is at most 2 * SINE_MASK, and the table holds
    // SINE_SIZE pairs, so both values of each pair are inside it.
    let (a, b) = unsafe { (_mm256_i32gather_ps::<4>(base, idx), _mm256_i32gather_ps::<4>(base.add(1), idx)) };
    // `phase_frac1`: the phase's bits 0..16 as the mantissa of 1 + frac.
    let frac1 = _mm256_or_si256(
        _mm256_and_si256(_mm256_slli_epi32::<7>(phase), _mm256_set1_epi32(0x007F_FF80)),
        _mm256_set1_epi32(0x3F80_0000),
    );
    _mm256_add_ps(a, _mm256_mul_ps(b, _mm256_castsi256_ps(frac1)))
}

/// Runs `n` samples of `m` SinOsc lanes, eight at a time: `FREQ_AUDIO` says
/// whether the frequency is an audio input, `PHASE` how the table phase is
/// offset (see `PHASE_NONE`).
///
/// # Safety
/// The CPU has AVX2; `out[j]` for `j < m` is valid for `n` writes and no
/// other live reference aliases it; `freq[j]` (if `FREQ_AUDIO`) and
/// `phasein[j]` (if `PHASE == PHASE_AUDIO`) are valid for `n` reads.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sinosc<const FREQ_AUDIO: bool, const PHASE: u8>(
    table: &[f32; 2 * SINE_SIZE],
    s: SinLanes<'_>,
    m: usize,
    n: usize,
) {
    for start in (0..m).step_by(8) {
        let used = (m - start).min(8);
        // SAFETY: the slice `start..start + 8` is checked in bounds, and
        // unaligned loads accept any address.
        let ld_i = |a: &[i32; MAX_LANES]| unsafe { _mm256_loadu_si256(a[start..start + 8].as_ptr().cast()) };
        // SAFETY: as for `ld_i`.
        let ld_f = |a: &[f32; MAX_LANES]| unsafe { _mm256_loadu_ps(a[start..start + 8].as_ptr()) };
        let (mut phase, inc) = (ld_i(s.phase), ld_i(s.inc));
        let (mut phasemod, slope) = (ld_f(s.phasemod), ld_f(s.slope));
        let (cpstoinc, radtoinc) = (ld_f(s.cpstoinc), ld_f(s.radtoinc));
        let step = |x: &[__m256; 2]| {
            let table_phase = match PHASE {
                PHASE_NONE => phase,
                PHASE_RAMP => {
                    let off = _mm256_cvttps_epi32(_mm256_mul_ps(radtoinc, phasemod));
                    phasemod = _mm256_add_ps(phasemod, slope);
                    _mm256_add_epi32(phase, off)
                }
                _ => _mm256_add_epi32(phase, _mm256_cvttps_epi32(_mm256_mul_ps(radtoinc, x[1]))),
            };
            let z = wavetable_lookup(table, table_phase);
            let advance = if FREQ_AUDIO { _mm256_cvttps_epi32(_mm256_mul_ps(cpstoinc, x[0])) } else { inc };
            phase = _mm256_add_epi32(phase, advance);
            z
        };
        // Both input slots are always filled: a slot the variant does not
        // read points at the lanes' outputs, valid for n samples.
        let outs: [*const f32; MAX_LANES] = std::array::from_fn(|j| s.out[j].cast_const());
        let freq = ptrs8(if FREQ_AUDIO { s.freq } else { &outs }, start, used);
        let phasein = ptrs8(if PHASE == PHASE_AUDIO { s.phasein } else { &outs }, start, used);
        // SAFETY: the caller's contract on `out` and the inputs.
        unsafe { run_inputs::<FREQ_AUDIO, PHASE>(&s.out[start..start + used], freq, phasein, n, step) };
        // SAFETY: the slice is checked in bounds; unaligned stores accept
        // any address.
        unsafe { _mm256_storeu_si256(s.phase[start..start + 8].as_mut_ptr().cast(), phase) };
    }
}

/// Runs `n` samples of SinOsc lanes whose table phase advances by a fixed
/// increment and has no offset (Kk), lane after lane, eight consecutive
/// samples to a vector: sample i's phase is the block's first plus i
/// increments, which is what adding the increment i times gives (both wrap
/// at 32 bits). No inputs to read means nothing to transpose.
///
/// # Safety
/// The CPU has AVX2; `out[j]` for `j < phase.len()` is valid for `n` writes
/// and no other live reference aliases it; `inc` and `out` are at least as
/// long as `phase`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sinosc_fixed(table: &[f32; 2 * SINE_SIZE], phase: &mut [i32], inc: &[i32], out: &[*mut f32], n: usize) {
    assert!(inc.len() >= phase.len() && out.len() >= phase.len());
    let steps = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for ((ph, &inc), &o) in phase.iter_mut().zip(inc).zip(out) {
        // Samples i..i + 8 and i + 8..i + 16, sixteen at a time.
        let mut p0 = _mm256_add_epi32(_mm256_set1_epi32(*ph), _mm256_mullo_epi32(_mm256_set1_epi32(inc), steps));
        let step8 = _mm256_set1_epi32(inc.wrapping_mul(8));
        let step16 = _mm256_set1_epi32(inc.wrapping_mul(16));
        let mut p1 = _mm256_add_epi32(p0, step8);
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: samples i..i + 16 of the lane's output, by the contract.
            unsafe {
                _mm256_storeu_ps(o.add(i), wavetable_lookup(table, p0));
                _mm256_storeu_ps(o.add(i + 8), wavetable_lookup(table, p1));
            }
            p0 = _mm256_add_epi32(p0, step16);
            p1 = _mm256_add_epi32(p1, step16);
            i += 16;
        }
        if i + 8 <= n {
            // SAFETY: samples i..i + 8 of the lane's output, by the contract.
            unsafe { _mm256_storeu_ps(o.add(i), wavetable_lookup(table, p0)) };
            p0 = p1;
            i += 8;
        }
        // Sample i's phase.
        let mut q = _mm256_cvtsi256_si32(p0);
        while i < n {
            // SAFETY: sample i of the lane's output, by the contract; the
            // table holds SINE_SIZE pairs.
            unsafe { *o.add(i) = lookupi1(table, q as u32, SINE_MASK) };
            q = q.wrapping_add(inc);
            i += 1;
        }
        *ph = q;
    }
}

/// `run8` with the inputs a SinOsc variant reads: none, the frequency, the
/// phase, or both (as slots 0 and 1 of the step's inputs).
///
/// # Safety
/// As for `run8`, for the inputs the variant reads.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn run_inputs<const FREQ_AUDIO: bool, const PHASE: u8>(
    out: &[*mut f32],
    freq: [*const f32; 8],
    phasein: [*const f32; 8],
    n: usize,
    mut step: impl FnMut(&[__m256; 2]) -> __m256,
) {
    let zero = _mm256_setzero_ps();
    // SAFETY: forwarded from this function's contract.
    unsafe {
        match (FREQ_AUDIO, PHASE == PHASE_AUDIO) {
            (false, false) => run8::<0>(out, &[], n, |_| step(&[zero, zero])),
            (true, false) => run8::<1>(out, &[freq], n, |x| step(&[x[0], zero])),
            (false, true) => run8::<1>(out, &[phasein], n, |x| step(&[zero, x[0]])),
            (true, true) => run8::<2>(out, &[freq, phasein], n, |x| step(x)),
        }
    }
}

// ---------------------------------------------------------------------------
// LFSaw, LFPulse, LFTri: a double-precision phase, four lanes to a vector

/// Per-lane state of an LFSaw, LFPulse or LFTri lane kernel.
pub(crate) struct LfLanes<'a> {
    pub phase: &'a mut [f64; MAX_LANES],
    /// The increment (`freq * freqmul`, widened) when the frequency is not
    /// an audio input.
    pub inc: &'a [f64; MAX_LANES],
    pub freqmul: &'a [f32; MAX_LANES],
    pub freq: &'a [*const f32; MAX_LANES],
    pub out: &'a [*mut f32; MAX_LANES],
}

/// Eight lanes of doubles as two vectors of four.
#[derive(Clone, Copy)]
struct D8(__m256d, __m256d);

impl D8 {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(a: &[f64; MAX_LANES], start: usize) -> D8 {
        // SAFETY: the slices are checked in bounds; unaligned loads accept
        // any address.
        unsafe { D8(_mm256_loadu_pd(a[start..start + 4].as_ptr()), _mm256_loadu_pd(a[start + 4..start + 8].as_ptr())) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store(self, a: &mut [f64; MAX_LANES], start: usize) {
        // SAFETY: as in `load`.
        unsafe {
            _mm256_storeu_pd(a[start..start + 4].as_mut_ptr(), self.0);
            _mm256_storeu_pd(a[start + 4..start + 8].as_mut_ptr(), self.1);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(x: f64) -> D8 {
        D8(_mm256_set1_pd(x), _mm256_set1_pd(x))
    }

    /// `x as f64` of eight floats.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn widen(x: __m256) -> D8 {
        D8(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)))
    }

    /// `x as f32` of the eight lanes (round to nearest, as `as` does).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn narrow(self) -> __m256 {
        _mm256_set_m128(_mm256_cvtpd_ps(self.1), _mm256_cvtpd_ps(self.0))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn zip(self, o: D8, f: impl Fn(__m256d, __m256d) -> __m256d) -> D8 {
        D8(f(self.0, o.0), f(self.1, o.1))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn add(self, o: D8) -> D8 {
        self.zip(o, |a, b| _mm256_add_pd(a, b))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn sub(self, o: D8) -> D8 {
        self.zip(o, |a, b| _mm256_sub_pd(a, b))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn and(self, o: D8) -> D8 {
        self.zip(o, |a, b| _mm256_and_pd(a, b))
    }

    /// `o` where `mask` is set, else `self`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn select(self, o: D8, mask: D8) -> D8 {
        D8(_mm256_blendv_pd(self.0, o.0, mask.0), _mm256_blendv_pd(self.1, o.1, mask.1))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn cmp<const P: i32>(self, o: D8) -> D8 {
        self.zip(o, |a, b| _mm256_cmp_pd::<P>(a, b))
    }
}

/// Runs `n` samples of one eight-lane group of an LF shape: `step` gets
/// each sample's increments and returns the outputs.
///
/// # Safety
/// The CPU has AVX2; `out[j]` for `j < out.len()` (1..=8) is valid for `n`
/// writes and no other live reference aliases it; `freq[j]` (if
/// `FREQ_AUDIO`) is valid for `n` reads.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn lf_run<const FREQ_AUDIO: bool>(
    out: &[*mut f32],
    freq: [*const f32; 8],
    inc: D8,
    freqmul: __m256,
    n: usize,
    mut step: impl FnMut(D8) -> __m256,
) {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        if FREQ_AUDIO {
            run8::<1>(out, &[freq], n, |x| step(D8::widen(_mm256_mul_ps(x[0], freqmul))));
        } else {
            run8::<0>(out, &[], n, |_| step(inc));
        }
    }
}

/// One eight-lane group's shared loads: its phase, constant increment,
/// `freqmul`, audio frequency pointers and outputs.
struct LfGroup<'o> {
    phase: D8,
    inc: D8,
    freqmul: __m256,
    freq: [*const f32; 8],
    out: &'o [*mut f32],
}

impl LfLanes<'_> {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn group(&self, start: usize, m: usize) -> LfGroup<'_> {
        let used = (m - start).min(8);
        LfGroup {
            phase: D8::load(self.phase, start),
            inc: D8::load(self.inc, start),
            // SAFETY: the slice is checked in bounds; unaligned loads accept
            // any address.
            freqmul: unsafe { _mm256_loadu_ps(self.freqmul[start..start + 8].as_ptr()) },
            freq: ptrs8(self.freq, start, used),
            out: &self.out[start..start + used],
        }
    }
}

/// LFSaw: the output is the phase before the step; for a control-rate
/// frequency the phase wraps by 2 upward at 1 where the increment is not
/// negative, else downward at -1 (NaN counts as negative); for an
/// audio-rate one, upward at 1 or else downward at -1 in every lane.
///
/// # Safety
/// As for `lf_run`, for every lane below `m`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn lfsaw<const FREQ_AUDIO: bool>(s: LfLanes<'_>, m: usize, n: usize) {
    let (zero, one, minus_one, two) = (D8::splat(0.0), D8::splat(1.0), D8::splat(-1.0), D8::splat(2.0));
    for start in (0..m).step_by(8) {
        let g = s.group(start, m);
        // `freq >= 0.0` on the float is the same test on its exact widening.
        let allow_up = if FREQ_AUDIO { one.cmp::<_CMP_EQ_OQ>(one) } else { g.inc.cmp::<_CMP_GE_OQ>(zero) };
        let mut phase = g.phase;
        let step = |inc: D8| {
            let z = phase.narrow();
            let p = phase.add(inc);
            let wrap_up = p.cmp::<_CMP_GE_OQ>(one).and(allow_up);
            let p = p.select(p.sub(two), wrap_up);
            // Down only where up is not allowed (control rate), or did not
            // wrap this sample (audio rate: the `else if`).
            let no_down = if FREQ_AUDIO { wrap_up } else { allow_up };
            let below = p.cmp::<_CMP_LE_OQ>(minus_one);
            let wrap_down = D8(_mm256_andnot_pd(no_down.0, below.0), _mm256_andnot_pd(no_down.1, below.1));
            phase = p.select(p.add(two), wrap_down);
            z
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { lf_run::<FREQ_AUDIO>(g.out, g.freq, g.inc, g.freqmul, n, step) };
        phase.store(s.phase, start);
    }
}

/// LFPulse: at a phase of 1 or more the phase drops by 1, the duty cycle
/// takes the block's `next_duty`, and the output is 1 where that duty is at
/// most 0.5; elsewhere the output is 1 while the phase is below the duty.
/// The duty cycles are held widened (exact) and narrowed back at the end.
///
/// # Safety
/// As for `lf_run`, for every lane below `m`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn lfpulse<const FREQ_AUDIO: bool>(
    s: LfLanes<'_>,
    duty: &mut [f64; MAX_LANES],
    next_duty: &[f64; MAX_LANES],
    m: usize,
    n: usize,
) {
    let (one, half) = (D8::splat(1.0), D8::splat(0.5));
    for start in (0..m).step_by(8) {
        let g = s.group(start, m);
        let next = D8::load(next_duty, start);
        let (mut phase, mut d) = (g.phase, D8::load(duty, start));
        let step = |inc: D8| {
            let wrap = phase.cmp::<_CMP_GE_OQ>(one);
            let p = phase.select(phase.sub(one), wrap);
            d = d.select(next, wrap);
            let high = p.cmp::<_CMP_LT_OQ>(d).select(d.cmp::<_CMP_LE_OQ>(half), wrap);
            phase = p.add(inc);
            high.and(one).narrow()
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { lf_run::<FREQ_AUDIO>(g.out, g.freq, g.inc, g.freqmul, n, step) };
        phase.store(s.phase, start);
        d.store(duty, start);
    }
}

/// LFTri: the output folds the phase above 1 down (`2 - phase`); the phase
/// wraps by 4 at 3.
///
/// # Safety
/// As for `lf_run`, for every lane below `m`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn lftri<const FREQ_AUDIO: bool>(s: LfLanes<'_>, m: usize, n: usize) {
    let (one, two, three, four) = (D8::splat(1.0), D8::splat(2.0), D8::splat(3.0), D8::splat(4.0));
    for start in (0..m).step_by(8) {
        let g = s.group(start, m);
        let mut phase = g.phase;
        let step = |inc: D8| {
            let z = phase.select(two.sub(phase), phase.cmp::<_CMP_GT_OQ>(one)).narrow();
            let p = phase.add(inc);
            phase = p.select(p.sub(four), p.cmp::<_CMP_GE_OQ>(three));
            z
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { lf_run::<FREQ_AUDIO>(g.out, g.freq, g.inc, g.freqmul, n, step) };
        phase.store(s.phase, start);
    }
}

/// How an Impulse lane's increment moves: held, ramped by a slope per
/// sample (a control-rate frequency), or read from an audio input.
pub(crate) const INC_HELD: u8 = 0;
pub(crate) const INC_RAMP: u8 = 1;
pub(crate) const INC_AUDIO: u8 = 2;

/// `impulse_wrap` for eight lanes: the phasor wrapped into [0, 1) after a
/// step in the direction of `inc`, and the output (1 where it wrapped).
#[inline]
#[target_feature(enable = "avx2")]
fn impulse_wrap(inc: D8, phase: D8) -> (D8, __m256) {
    let (zero, one) = (D8::splat(0.0), D8::splat(1.0));
    let neg = inc.cmp::<_CMP_LT_OQ>(zero);
    let down = neg.and(phase.cmp::<_CMP_LE_OQ>(zero));
    let p1 = phase.add(one);
    let ceil = p1.zip(p1, |a, _| _mm256_round_pd::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(a));
    let p1 = p1.select(p1.sub(ceil), p1.cmp::<_CMP_LE_OQ>(zero));
    let ge = phase.cmp::<_CMP_GE_OQ>(one);
    let up = D8(_mm256_andnot_pd(neg.0, ge.0), _mm256_andnot_pd(neg.1, ge.1));
    let p2 = phase.sub(one);
    let floor = p2.zip(p2, |a, _| _mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(a));
    let p2 = p2.select(p2.sub(floor), p2.cmp::<_CMP_GE_OQ>(one));
    let phase = phase.select(p1, down).select(p2, up);
    let fired = D8(_mm256_or_pd(down.0, up.0), _mm256_or_pd(down.1, up.1));
    (phase, fired.and(one).narrow())
}

/// Impulse without a moving phase offset: each sample wraps the phasor
/// with the current increment, then moves the increment (`INC`) and adds
/// it. `inc` holds each lane's increment at the start and gets it at the
/// end; `inc_slope` is the ramp's step.
///
/// # Safety
/// As for `lf_run`, for every lane below `m`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn impulse<const INC: u8>(
    s: LfLanes<'_>,
    inc: &mut [f64; MAX_LANES],
    inc_slope: &[f64; MAX_LANES],
    m: usize,
    n: usize,
) {
    for start in (0..m).step_by(8) {
        let g = s.group(start, m);
        let slope = D8::load(inc_slope, start);
        let (mut phase, mut cur) = (g.phase, D8::load(inc, start));
        let step = |next: D8| {
            let (p, z) = impulse_wrap(cur, phase);
            cur = match INC {
                INC_HELD => cur,
                INC_RAMP => cur.add(slope),
                _ => next,
            };
            phase = p.add(cur);
            z
        };
        // SAFETY: forwarded from this function's contract.
        unsafe {
            if INC == INC_AUDIO {
                lf_run::<true>(g.out, g.freq, g.inc, g.freqmul, n, step)
            } else {
                lf_run::<false>(g.out, g.freq, g.inc, g.freqmul, n, step)
            }
        }
        phase.store(s.phase, start);
        cur.store(inc, start);
    }
}
