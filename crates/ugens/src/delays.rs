//! Delay lines (DelayN/L/C), feedback combs (CombN/L/C), allpass delays
//! (AllpassN/L/C) and the one- and two-sample delays Delay1 and Delay2,
//! following scsynth's DelayUGens and FilterUGens (3.13). The Buf* forms
//! of the first nine, which run their line in a buffer, live in `buf`;
//! the tapped delay line in a buffer (DelTapWr, DelTapRd) in `taps`, and
//! the plucked string Pluck (a damped comb) in `pluck`.
//!
//! N reads the nearest sample, L interpolates linearly, C with a 4-point
//! Hermite cubic. Until the line has been written once all the way round, a
//! checked ("_z") form runs that reads unwritten history as silence.

use crate::common::math::cubicinterp;
use crate::common::signal::{calc_feedback, clip_f32, in0, in_rate, In};
use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

pub(crate) mod buf;
mod pluck;
pub(crate) mod taps;

pub use pluck::Pluck;
pub use buf::{
    BufAllpassC, BufAllpassL, BufAllpassN, BufCombC, BufCombL, BufCombN, BufDelayC, BufDelayL, BufDelayN,
};

const DELAY: u8 = 0;
const COMB: u8 = 1;
const ALLPASS: u8 = 2;

const NEAREST: u8 = 0;
const LINEAR: u8 = 1;
const CUBIC: u8 = 2;

/// Largest delay line a unit may ask for, in samples (512 MB of floats);
/// beyond it construction fails as an exhausted real-time pool does.
pub(crate) const MAX_LINE: i64 = 1 << 27;

/// A delay unit of kind `KIND` (plain, comb, allpass) reading with
/// interpolation `INTERP`. Inputs: in, maxdelaytime, delaytime[, decaytime].
pub struct DelayUnit<const KIND: u8, const INTERP: u8> {
    buf: Vec<f32>,
    mask: i64,
    len: i64,
    core: DelayCore<KIND>,
    mode: Mode,
    /// Straight blocks run in their AVX2 build (`straight_run`).
    wide: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    /// A constant delay of zero: the input is copied.
    Through,
    /// The line could not be allocated: silence.
    Failed,
}

pub type DelayN = DelayUnit<DELAY, NEAREST>;
pub type DelayL = DelayUnit<DELAY, LINEAR>;
pub type DelayC = DelayUnit<DELAY, CUBIC>;
pub type CombN = DelayUnit<COMB, NEAREST>;
pub type CombL = DelayUnit<COMB, LINEAR>;
pub type CombC = DelayUnit<COMB, CUBIC>;
pub type AllpassN = DelayUnit<ALLPASS, NEAREST>;
pub type AllpassL = DelayUnit<ALLPASS, LINEAR>;
pub type AllpassC = DelayUnit<ALLPASS, CUBIC>;

#[inline(always)]
fn lininterp(x: f32, a: f32, b: f32) -> f32 {
    a + x * (b - a)
}

/// Size of the line for `maxdel` seconds: the next power of two of
/// `ceil(maxdel * rate + 1) + block length`.
pub(crate) fn line_size(maxdel: f32, sample_rate: f64, buf_length: usize) -> Option<i64> {
    let want = (maxdel as f64 * sample_rate + 1.0).ceil();
    if !(want < MAX_LINE as f64) {
        return None;
    }
    let n = (want as i64 + buf_length as i64).max(1);
    let size = (n as u64).next_power_of_two() as i64;
    (size <= MAX_LINE).then_some(size)
}

/// A delay line as one block sees it: `len` (a power of two) samples at
/// the start of `data`, indexed through `mask`.
pub(crate) struct Line<'a> {
    pub(crate) data: &'a mut [f32],
    pub(crate) mask: i64,
    pub(crate) len: i64,
    /// The longest delay the line serves, in samples.
    pub(crate) max_delay: f32,
    /// Samples to write before the unchecked form takes over.
    pub(crate) fill: i64,
}

/// What a delay unit reads in one block: the signal, the delay time (in
/// seconds) and, for combs and allpasses, the decay time.
pub(crate) struct Signals<'a> {
    pub(crate) inp: In<'a>,
    pub(crate) delay: In<'a>,
    pub(crate) decaytime: f32,
}

/// The running state of a delay, comb or allpass (`KIND`), apart from its
/// line: the units that own their line and those that borrow a buffer's
/// share it.
pub(crate) struct DelayCore<const KIND: u8> {
    dsamp: f32,
    delaytime: f32,
    decaytime: f32,
    feedbk: f32,
    wr: i64,
    numoutput: i64,
    checked: bool,
    audio_delay: bool,
    /// The shortest delay in samples: interpolation needs history behind
    /// the read point.
    min_delay: f32,
}

impl<const KIND: u8> DelayCore<KIND> {
    /// State for a unit built with these delay and decay times; `max_delay`
    /// is the line's longest delay in samples.
    pub(crate) fn new(
        delaytime: f32,
        decaytime: f32,
        audio_delay: bool,
        min_delay: f32,
        max_delay: f32,
        sample_rate: f64,
    ) -> Self {
        let mut core = DelayCore {
            dsamp: 0.0,
            delaytime,
            decaytime,
            feedbk: 0.0,
            wr: 0,
            numoutput: 0,
            checked: true,
            audio_delay,
            min_delay,
        };
        core.dsamp = core.calc_delay(delaytime, sample_rate, max_delay);
        if KIND != DELAY {
            core.feedbk = calc_feedback(delaytime, decaytime);
        }
        core
    }

    /// Whether the line may still hold unwritten history.
    #[inline]
    pub(crate) fn filling(&self) -> bool {
        self.checked
    }

    #[inline]
    pub(crate) fn audio_delay(&self) -> bool {
        self.audio_delay
    }

    #[inline]
    pub(crate) fn set_min_delay(&mut self, min_delay: f32) {
        self.min_delay = min_delay;
    }

    #[inline(always)]
    fn calc_delay(&self, delaytime: f32, sample_rate: f64, max_delay: f32) -> f32 {
        clip_f32(delaytime * sample_rate as f32, self.min_delay, max_delay)
    }

    /// Samples read behind the read point with interpolation `INTERP`.
    const fn back<const INTERP: u8>() -> i64 {
        reach::<INTERP>().0
    }

    /// One block into `out`, reading with interpolation `INTERP`.
    #[inline]
    pub(crate) fn run<const INTERP: u8>(&mut self, line: Line<'_>, sig: Signals<'_>, out: &mut [f32], rate: &RateInfo) {
        if self.checked {
            self.block::<INTERP, true>(line, sig, out, rate);
        } else {
            self.block::<INTERP, false>(line, sig, out, rate);
        }
    }

    /// One sample: writes `x` at the write head and returns the output.
    #[inline(always)]
    fn perform<const INTERP: u8, const CHECKED: bool>(
        buf: &mut [f32],
        mask: i64,
        wr: i64,
        x: f32,
        idsamp: i64,
        frac: f32,
        fb: f32,
    ) -> f32 {
        let at = |p: i64| (p & mask) as usize;
        let rd = wr - idsamp;
        match INTERP {
            NEAREST => {
                if KIND == DELAY {
                    buf[at(wr)] = x;
                    if CHECKED && rd < 0 {
                        0.0
                    } else {
                        buf[at(rd)]
                    }
                } else if CHECKED && rd < 0 {
                    buf[at(wr)] = x;
                    if KIND == COMB {
                        0.0
                    } else {
                        -fb * x
                    }
                } else {
                    let value = buf[at(rd)];
                    if KIND == COMB {
                        buf[at(wr)] = x + fb * value;
                        value
                    } else {
                        let dwr = value * fb + x;
                        buf[at(wr)] = dwr;
                        value - fb * dwr
                    }
                }
            }
            LINEAR => {
                if KIND == DELAY {
                    buf[at(wr)] = x;
                }
                let value = if CHECKED && rd < 0 {
                    if KIND != DELAY {
                        buf[at(wr)] = x;
                    }
                    return if KIND == ALLPASS { -fb * x } else { 0.0 };
                } else if CHECKED && rd - 1 < 0 {
                    let d1 = buf[at(rd)];
                    d1 - frac * d1
                } else {
                    lininterp(frac, buf[at(rd)], buf[at(rd - 1)])
                };
                Self::feed(buf, at(wr), x, fb, value)
            }
            _ => {
                if KIND == DELAY {
                    buf[at(wr)] = x;
                }
                let (r0, r1, r2, r3) = (rd + 1, rd, rd - 1, rd - 2);
                let value = if CHECKED {
                    if r0 < 0 {
                        if KIND != DELAY {
                            buf[at(wr)] = x;
                        }
                        return 0.0;
                    }
                    let d0 = buf[at(r0)];
                    let d1 = if r1 < 0 { 0.0 } else { buf[at(r1)] };
                    let d2 = if r2 < 0 { 0.0 } else { buf[at(r2)] };
                    let d3 = if r3 < 0 { 0.0 } else { buf[at(r3)] };
                    cubicinterp(frac, d0, d1, d2, d3)
                } else {
                    cubicinterp(frac, buf[at(r0)], buf[at(r1)], buf[at(r2)], buf[at(r3)])
                };
                Self::feed(buf, at(wr), x, fb, value)
            }
        }
    }

    /// Writes the feedback path for an interpolated read `value`.
    #[inline(always)]
    fn feed(buf: &mut [f32], w: usize, x: f32, fb: f32, value: f32) -> f32 {
        match KIND {
            DELAY => value,
            COMB => {
                buf[w] = x + fb * value;
                value
            }
            _ => {
                let dwr = x + fb * value;
                buf[w] = dwr;
                value - fb * dwr
            }
        }
    }

    fn block<const INTERP: u8, const CHECKED: bool>(
        &mut self,
        line: Line<'_>,
        sig: Signals<'_>,
        out: &mut [f32],
        rate: &RateInfo,
    ) {
        let sr = rate.sample_rate;
        let sf = rate.slope_factor as f32;
        let Signals { inp, delay: delay_in, decaytime } = sig;
        let decaytime = if KIND == DELAY { 0.0 } else { decaytime };
        let n = out.len();
        let (buf, mask, max_delay, len) = (&mut *line.data, line.mask, line.max_delay, line.len);
        let mut wr = self.wr;

        if self.audio_delay {
            for (i, o) in out.iter_mut().enumerate() {
                let del = delay_in.at(i);
                let dsamp = self.calc_delay(del, sr, max_delay);
                let fb = if KIND == DELAY { 0.0 } else { calc_feedback(del, decaytime) };
                let idsamp = dsamp as i64;
                let frac = dsamp - idsamp as f32;
                *o = Self::perform::<INTERP, CHECKED>(buf, mask, wr, inp.at(i), idsamp, frac, fb);
                wr += 1;
            }
        } else {
            let delaytime = delay_in.first();
            let mut dsamp = self.dsamp;
            let mut fb = self.feedbk;
            let same_delay = delaytime == self.delaytime;
            let same_decay = KIND == DELAY || decaytime == self.decaytime;
            if same_delay && same_decay {
                let idsamp = dsamp as i64;
                let frac = dsamp - idsamp as f32;
                // A filling line's block whose first read is already behind
                // written history reads nothing unwritten: the checked
                // arithmetic is then the unchecked one.
                let written = !CHECKED || wr - idsamp - Self::back::<INTERP>() >= 0;
                if written && straight_block::<KIND, INTERP>(buf, mask, len, wr, inp, idsamp, frac, fb, out) {
                    wr += n as i64;
                } else {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = Self::perform::<INTERP, CHECKED>(buf, mask, wr, inp.at(i), idsamp, frac, fb);
                        wr += 1;
                    }
                }
            } else if same_delay && INTERP == NEAREST {
                // Only the decay moved: the nearest-sample comb and allpass
                // step the feedback after each sample rather than before.
                let slope = (calc_feedback(delaytime, decaytime) - fb) * sf;
                let idsamp = dsamp as i64;
                if CHECKED && KIND == COMB {
                    comb_n_z_decay(buf, mask, line.len, out, inp, idsamp, &mut fb, slope, &mut wr);
                } else {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = Self::perform::<INTERP, CHECKED>(buf, mask, wr, inp.at(i), idsamp, 0.0, fb);
                        fb += slope;
                        wr += 1;
                    }
                }
                self.feedbk = fb;
                self.decaytime = decaytime;
            } else {
                let next_dsamp = self.calc_delay(delaytime, sr, max_delay);
                let dsamp_slope = (next_dsamp - dsamp) * sf;
                let fb_slope = if KIND == DELAY { 0.0 } else { (calc_feedback(delaytime, decaytime) - fb) * sf };
                for (i, o) in out.iter_mut().enumerate() {
                    dsamp += dsamp_slope;
                    if KIND != DELAY {
                        fb += fb_slope;
                    }
                    let idsamp = dsamp as i64;
                    let frac = dsamp - idsamp as f32;
                    *o = Self::perform::<INTERP, CHECKED>(buf, mask, wr, inp.at(i), idsamp, frac, fb);
                    wr += 1;
                }
                self.dsamp = dsamp;
                self.delaytime = delaytime;
                if KIND != DELAY {
                    self.feedbk = fb;
                    self.decaytime = decaytime;
                }
            }
        }
        self.wr = wr;
        if CHECKED {
            self.numoutput += n as i64;
            if self.numoutput >= line.fill {
                self.checked = false;
            }
        }
    }
}

/// A steady block (delay and decay unchanged, the line full) whose reads
/// all come before its writes: the same per-sample arithmetic as
/// `DelayCore::perform`, over plain slices, which lets the compiler run
/// several samples per instruction (eight with AVX2, where the CPU has
/// it). A block whose reads or writes wrap round the line runs straight
/// up to each wrap, and the samples whose reads straddle it one by one.
/// Returns false, having done nothing, for blocks that do not qualify.
#[inline]
#[allow(clippy::too_many_arguments)]
fn straight_block<const KIND: u8, const INTERP: u8>(
    buf: &mut [f32],
    mask: i64,
    len: i64,
    wr: i64,
    inp: In<'_>,
    idsamp: i64,
    frac: f32,
    fb: f32,
    out: &mut [f32],
) -> bool {
    let n = out.len();
    let wide = cfg!(target_arch = "x86_64") && crate::vector::avx2();
    if let Some((read, write)) = straight_parts::<INTERP>(buf, mask, len, wr, idsamp, n) {
        straight_span::<KIND, INTERP>(out, write, read, inp, 0, frac, fb, wide);
        return true;
    }
    let (back, ahead) = reach::<INTERP>();
    if !straight_fits::<INTERP>(len, idsamp, n as i64) || len as usize > buf.len() {
        return false;
    }
    let l = len as usize;
    let mut i = 0;
    while i < n {
        let w = wr + i as i64;
        let (w0, r0) = ((w & mask) as usize, ((w - idsamp - back) & mask) as usize);
        // Samples from `i` before the writes or the reads reach the end
        // of the line (none while the reads straddle it).
        let m = (n - i).min(l - w0).min((l - r0).saturating_sub((back + ahead) as usize));
        if m > 0 {
            if let Some((read, write)) = straight_parts::<INTERP>(buf, mask, len, w, idsamp, m) {
                straight_span::<KIND, INTERP>(&mut out[i..i + m], write, read, inp, i, frac, fb, wide);
                i += m;
                continue;
            }
        }
        out[i] = DelayCore::<KIND>::perform::<INTERP, false>(buf, mask, w, inp.at(i), idsamp, frac, fb);
        i += 1;
    }
    true
}

/// Samples read behind and ahead of the read point with interpolation `INTERP`.
#[inline(always)]
const fn reach<const INTERP: u8>() -> (i64, i64) {
    match INTERP {
        NEAREST => (0, 0),
        LINEAR => (1, 0),
        _ => (2, 1),
    }
}

/// Whether a delay of `idsamp` samples lets every read of an `n`-sample
/// block in a line of `len` samples come before the block's first write
/// and after its last write one turn before, as positions in the line.
#[inline(always)]
fn straight_fits<const INTERP: u8>(len: i64, idsamp: i64, n: i64) -> bool {
    let (back, ahead) = reach::<INTERP>();
    idsamp > n + ahead && idsamp + back + n < len
}

/// One straight stretch of a block, from sample `i0` of the block:
/// `out.len()` samples of `inp` written to `write`, reading from `read`.
/// An audio input is read in place; one value is repeated into a chunk.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn straight_span<const KIND: u8, const INTERP: u8>(
    out: &mut [f32],
    write: &mut [f32],
    read: &[f32],
    inp: In<'_>,
    i0: usize,
    frac: f32,
    fb: f32,
    wide: bool,
) {
    const CHUNK: usize = 64;
    let nu = out.len();
    if let Some(a) = inp.audio().filter(|a| a.len() >= i0 + nu) {
        straight_run::<KIND, INTERP>(out, write, read, &a[i0..i0 + nu], frac, fb, wide);
        return;
    }
    let mut xs = [0.0f32; CHUNK];
    let mut k = 0;
    while k < nu {
        let m = (nu - k).min(CHUNK);
        for (j, x) in xs[..m].iter_mut().enumerate() {
            *x = inp.at(i0 + k + j);
        }
        let r = &read[k..];
        straight_run::<KIND, INTERP>(&mut out[k..k + m], &mut write[k..k + m], r, &xs[..m], frac, fb, wide);
        k += m;
    }
}

/// For a straight block of `n` samples writing from `wr`: the stretch of
/// the line it reads (from `back` samples behind its first read point to
/// `ahead` samples past its last) and the stretch it writes, or None when
/// the block does not qualify (see `straight_block`).
#[inline(always)]
fn straight_parts<const INTERP: u8>(
    buf: &mut [f32],
    mask: i64,
    len: i64,
    wr: i64,
    idsamp: i64,
    n: usize,
) -> Option<(&[f32], &mut [f32])> {
    let n = n as i64;
    let (back, ahead) = reach::<INTERP>();
    if !straight_fits::<INTERP>(len, idsamp, n) || len as usize > buf.len() {
        return None;
    }
    let (w0, r0) = ((wr & mask) as usize, ((wr - idsamp - back) & mask) as usize);
    let (nu, span, l) = (n as usize, (n + back + ahead) as usize, len as usize);
    if w0 + nu > l || r0 + span > l || (r0 < w0 && r0 + span > w0) || (w0 < r0 && w0 + nu > r0) {
        return None;
    }
    Some(if r0 < w0 {
        let (a, b) = buf.split_at_mut(w0);
        (&a[r0..r0 + span], &mut b[..nu])
    } else {
        let (a, b) = buf.split_at_mut(r0);
        (&b[..span], &mut a[w0..w0 + nu])
    })
}

/// `straight` in its AVX2 build where `wide` (the same operations, so the
/// same samples).
#[inline(always)]
fn straight_run<const KIND: u8, const INTERP: u8>(
    out: &mut [f32],
    write: &mut [f32],
    read: &[f32],
    xs: &[f32],
    frac: f32,
    fb: f32,
    wide: bool,
) {
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide` is true only where the CPU has AVX2 (`vector::avx2`).
        unsafe { straight_avx2::<KIND, INTERP>(out, write, read, xs, frac, fb) };
        return;
    }
    let _ = wide;
    straight::<KIND, INTERP>(out, write, read, xs, frac, fb);
}

/// `straight` in a function compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn straight_avx2<const KIND: u8, const INTERP: u8>(
    out: &mut [f32],
    write: &mut [f32],
    read: &[f32],
    xs: &[f32],
    frac: f32,
    fb: f32,
) {
    straight::<KIND, INTERP>(out, write, read, xs, frac, fb);
}

/// One run of a straight block: `out.len()` samples of input `xs` written
/// to `write`, reading the line from `read` (which starts `back` samples
/// behind the first read point and holds `back + ahead` samples more than
/// the run). The slices are separate borrows, so the compiler needs no
/// check that the writes might change what is read.
#[inline(always)]
fn straight<const KIND: u8, const INTERP: u8>(
    out: &mut [f32],
    write: &mut [f32],
    read: &[f32],
    xs: &[f32],
    frac: f32,
    fb: f32,
) {
    let m = out.len();
    let (w, xs) = (&mut write[..m], &xs[..m]);
    // The taps as slices of the run's length: tap k is read[j + k].
    let tap = |k: usize| &read[k..k + m];
    match INTERP {
        NEAREST => {
            let r0 = tap(0);
            for j in 0..m {
                straight_out::<KIND>(&mut out[j], &mut w[j], xs[j], r0[j], fb);
            }
        }
        LINEAR => {
            let (r0, r1) = (tap(0), tap(1));
            for j in 0..m {
                let value = lininterp(frac, r1[j], r0[j]);
                straight_out::<KIND>(&mut out[j], &mut w[j], xs[j], value, fb);
            }
        }
        _ => {
            let (r0, r1, r2, r3) = (tap(0), tap(1), tap(2), tap(3));
            for j in 0..m {
                let value = cubicinterp(frac, r3[j], r2[j], r1[j], r0[j]);
                straight_out::<KIND>(&mut out[j], &mut w[j], xs[j], value, fb);
            }
        }
    }
}

/// A straight sample's write to the line and output, from its read `value`.
#[inline(always)]
fn straight_out<const KIND: u8>(o: &mut f32, w: &mut f32, x: f32, value: f32, fb: f32) {
    match KIND {
        DELAY => {
            *w = x;
            *o = value;
        }
        COMB => {
            *w = x + fb * value;
            *o = value;
        }
        _ => {
            let dwr = x + fb * value;
            *w = dwr;
            *o = value - fb * dwr;
        }
    }
}

/// CombN before the line is full, decay changing: the stretch of the
/// block that reads unwritten history advances the feedback in one step
/// per contiguous run of the line, as scsynth does.
#[allow(clippy::too_many_arguments)]
fn comb_n_z_decay(
    buf: &mut [f32],
    mask: i64,
    len: i64,
    out: &mut [f32],
    inp: In<'_>,
    idsamp: i64,
    fb: &mut f32,
    slope: f32,
    wr: &mut i64,
) {
    let mut rd = *wr - idsamp;
    let mut i = 0usize;
    let n = out.len();
    while i < n {
        let rdspace = len - (rd & mask);
        let wrspace = len - (*wr & mask);
        let nsmps = ((n - i) as i64).min(rdspace).min(wrspace) as usize;
        if rd < 0 {
            *fb += nsmps as f32 * slope;
            for k in i..i + nsmps {
                buf[((*wr + (k - i) as i64) & mask) as usize] = inp.at(k);
                out[k] = 0.0;
            }
        } else {
            for k in i..i + nsmps {
                let off = (k - i) as i64;
                let value = buf[((rd + off) & mask) as usize];
                buf[((*wr + off) & mask) as usize] = value * *fb + inp.at(k);
                out[k] = value;
                *fb += slope;
            }
        }
        i += nsmps;
        *wr += nsmps as i64;
        rd += nsmps as i64;
    }
}

impl<const KIND: u8, const INTERP: u8> DelayUnit<KIND, INTERP> {
    /// Cubic combs and allpasses need two samples of history behind the
    /// read point; everything else one.
    const MIN_DELAY: f32 = if INTERP == CUBIC && KIND != DELAY { 2.0 } else { 1.0 };

    /// The usual block, straight from the wires: an audio input through a
    /// full line, delay and decay times that are not audio and did not
    /// change, reads and writes that do not wrap round the line. The
    /// same samples as `DelayCore::run`, without building its arguments.
    /// False, having done nothing, for any other block.
    #[inline(always)]
    fn steady_block(&mut self, io: &mut Wires<'_>) -> bool {
        let core = &mut self.core;
        if core.checked || core.audio_delay || in_rate(io, 0) != Rate::Audio {
            return false;
        }
        if in0(io, 2) != core.delaytime || (KIND != DELAY && in0(io, 3) != core.decaytime) {
            return false;
        }
        let input = io.inp(0);
        let out = io.out(0);
        let n = out.len();
        if input.len() < n {
            return false;
        }
        let idsamp = core.dsamp as i64;
        let frac = core.dsamp - idsamp as f32;
        let Some((read, write)) = straight_parts::<INTERP>(&mut self.buf, self.mask, self.len, core.wr, idsamp, n) else {
            return false;
        };
        straight_run::<KIND, INTERP>(out, write, read, &input[..n], frac, core.feedbk, self.wide);
        core.wr += n as i64;
        true
    }
}

impl<const KIND: u8, const INTERP: u8> Construct for DelayUnit<KIND, INTERP> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let maxdel = in0(io, 1);
        let delaytime = in0(io, 2);
        let decaytime = if KIND == DELAY { 0.0 } else { in0(io, 3) };
        let size = line_size(maxdel, cx.rate.sample_rate, cx.rate.buf_length);
        let len = size.unwrap_or(1);
        let audio_delay = in_rate(io, 2) == Rate::Audio;
        let core = DelayCore::new(delaytime, decaytime, audio_delay, Self::MIN_DELAY, len as f32, cx.rate.sample_rate);
        let wide = cfg!(target_arch = "x86_64") && crate::vector::avx2();
        let mut u = DelayUnit { buf: Vec::new(), mask: len - 1, len, core, mode: Mode::Run, wide };
        if size.is_none() {
            u.mode = Mode::Failed;
            cx.set_done(true);
            io.out(0)[0] = 0.0;
            return u;
        }
        u.buf = fallible::zeroed(len as usize);
        if KIND == DELAY && in_rate(io, 2) == Rate::Scalar && delaytime == 0.0 {
            u.mode = Mode::Through;
            io.out(0)[0] = in0(io, 0);
            return u;
        }
        io.out(0)[0] = 0.0;
        u
    }
}

impl<const KIND: u8, const INTERP: u8> Unit for DelayUnit<KIND, INTERP> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        match self.mode {
            Mode::Run => {
                if self.steady_block(io) {
                    return;
                }
                let line = Line {
                    data: &mut self.buf,
                    mask: self.mask,
                    len: self.len,
                    max_delay: self.len as f32,
                    fill: self.len,
                };
                let sig = Signals { inp: In::new(io, 0), delay: In::new(io, 2), decaytime: in0(io, 3) };
                self.core.run::<INTERP>(line, sig, io.out(0), cx.rate);
            }
            Mode::Through => {
                let inp = In::new(io, 0);
                for (i, o) in io.out(0).iter_mut().enumerate() {
                    *o = inp.at(i);
                }
            }
            Mode::Failed => io.out(0).fill(0.0),
        }
    }
}

/// Delay1: the input delayed by one sample. Inputs: in.
pub struct Delay1 {
    x1: f32,
}

impl Construct for Delay1 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0);
        io.out(0)[0] = x;
        Delay1 { x1: x }
    }
}

impl Unit for Delay1 {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let mut x1 = self.x1;
        for (i, o) in io.out(0).iter_mut().enumerate() {
            *o = x1;
            x1 = inp.at(i);
        }
        self.x1 = x1;
    }
}

/// Delay2: the input delayed by two samples. Inputs: in.
pub struct Delay2 {
    x1: f32,
    x2: f32,
}

impl Construct for Delay2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.out(0)[0] = 0.0;
        // scsynth leaves the older sample unset; silence is the sane reading.
        Delay2 { x1: in0(io, 0), x2: 0.0 }
    }
}

impl Unit for Delay2 {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let (mut x1, mut x2) = (self.x1, self.x2);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            *o = x2;
            x2 = x1;
            x1 = inp.at(i);
        }
        self.x1 = x1;
        self.x2 = x2;
    }
}


#[cfg(test)]
#[path = "delays/tests.rs"]
mod tests;
