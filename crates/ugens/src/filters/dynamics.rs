//! Dynamics: Amplitude (an envelope follower), Compander, and the look-ahead
//! Limiter and Normalizer, following scsynth's FilterUGens (3.13).

use crate::common::signal::{in0, in_rate, In};
use crate::simd::ramp::calc_slope;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

/// ln(0.1): a coefficient `exp(LOG1 / n)` falls by 20 dB in n samples.
#[inline(always)]
fn log1() -> f64 {
    0.1f64.ln()
}

/// The follower coefficient for a 20 dB change in `time` seconds (0 for
/// a zero time: the follower jumps).
#[inline]
fn follow_coef(time: f32, sample_rate: f64) -> f32 {
    if time == 0.0 {
        0.0
    } else {
        (log1() / (time as f64 * sample_rate)).exp() as f32
    }
}

/// One step of the peak follower: towards a louder value with the attack
/// coefficient, towards a quieter one with the release coefficient.
#[inline(always)]
fn follow(x: f32, prev: f32, clampcoef: f32, relaxcoef: f32) -> f32 {
    let val = x.abs();
    if val < prev {
        val + (prev - val) * relaxcoef
    } else {
        val + (prev - val) * clampcoef
    }
}

/// Amplitude: follows the peak amplitude of its input. Inputs: in,
/// attackTime, releaseTime (20 dB per time).
///
/// A control-rate Amplitude of an audio signal follows every audio sample
/// but, as in scsynth, computes its coefficients for the control rate.
pub struct Amplitude {
    previn: f32,
    clampcoef: f32,
    relaxcoef: f32,
    clamp_in: f32,
    relax_in: f32,
    /// Attack or release time is not constant: read each block.
    moving: bool,
    /// Control-rate unit reading an audio input.
    audio_to_control: bool,
}

impl Construct for Amplitude {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let moving = in_rate(io, 1) != Rate::Scalar || in_rate(io, 2) != Rate::Scalar;
        let audio_to_control = in_rate(io, 0) == Rate::Audio && spec.rate != Rate::Audio;
        let (clamp, relax) = (in0(io, 1), in0(io, 2));
        let previn = in0(io, 0).abs();
        let mut u = Amplitude {
            previn,
            clampcoef: follow_coef(clamp, cx.rate.sample_rate),
            relaxcoef: follow_coef(relax, cx.rate.sample_rate),
            clamp_in: clamp,
            relax_in: relax,
            moving,
            audio_to_control,
        };
        let v = follow(in0(io, 0), u.previn, u.clampcoef, u.relaxcoef);
        u.previn = v;
        io.out(0)[0] = v;
        u
    }
}

impl Unit for Amplitude {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.moving {
            let (clamp, relax) = (in0(io, 1), in0(io, 2));
            if clamp != self.clamp_in {
                self.clampcoef = (log1() / (clamp as f64 * cx.rate.sample_rate)).exp() as f32;
                self.clamp_in = clamp;
            }
            if relax != self.relax_in {
                self.relaxcoef = (log1() / (relax as f64 * cx.rate.sample_rate)).exp() as f32;
                self.relax_in = relax;
            }
        }
        let (cc, rc) = (self.clampcoef, self.relaxcoef);
        let mut prev = self.previn;
        if self.audio_to_control {
            for &x in io.inp(0) {
                prev = follow(x, prev, cc, rc);
            }
            io.out(0)[0] = prev;
        } else {
            let inp = In::new(io, 0);
            for (i, o) in io.out(0).iter_mut().enumerate() {
                prev = follow(inp.at(i), prev, cc, rc);
                *o = prev;
            }
        }
        self.previn = prev;
    }
}

/// `pow` on single-precision arguments as the C library computes it.
#[inline(always)]
fn powf(a: f32, b: f32) -> f32 {
    a.powf(b)
}

/// Compander: scales its input by a gain computed, once per block, from the
/// followed peak of a control signal. Inputs: in, control, thresh,
/// slopeBelow, slopeAbove, clampTime, relaxTime.
pub struct Compander {
    prevmaxval: f32,
    gain: f32,
    clamp: f32,
    clampcoef: f32,
    relax: f32,
    relaxcoef: f32,
}

impl Compander {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let control = In::new(io, 1);
        let thresh = in0(io, 2);
        let slope_below = in0(io, 3);
        let slope_above = in0(io, 4);
        let clamp = in0(io, 5);
        let relax = in0(io, 6);
        let sr = cx.rate.sample_rate;
        if clamp != self.clamp {
            self.clampcoef = follow_coef(clamp, sr);
            self.clamp = clamp;
        }
        if relax != self.relax {
            self.relaxcoef = follow_coef(relax, sr);
            self.relax = relax;
        }
        let n = io.n();
        let mut prev = self.prevmaxval;
        for i in 0..n {
            prev = follow(control.at(i), prev, self.clampcoef, self.relaxcoef);
        }
        self.prevmaxval = prev;
        let next_gain = if prev < thresh {
            if slope_below == 1.0 {
                1.0
            } else {
                let g = powf(prev / thresh, slope_below - 1.0);
                // Too small a gain becomes 0, too large 1.
                let a = g.abs();
                if a < 1e-15 {
                    0.0
                } else if a > 1e15 {
                    1.0
                } else {
                    g
                }
            }
        } else if slope_above == 1.0 {
            1.0
        } else {
            powf(prev / thresh, slope_above - 1.0)
        };
        let mut gain = self.gain;
        let slope = calc_slope(next_gain, gain, cx.rate.slope_factor);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            *o = inp.at(i) * gain;
            gain += slope;
        }
        self.gain = gain;
    }
}

impl Construct for Compander {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Compander { prevmaxval: 0.0, gain: 0.0, clamp: 0.0, clampcoef: 0.0, relax: 0.0, relaxcoef: 0.0 };
        // One sample is computed here and its state (a first step of the
        // gain ramp) kept.
        u.run(io, cx);
        u
    }
}

impl Unit for Compander {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// Longest look-ahead window, in samples; beyond it the unit is silent, as
/// when scsynth's real-time pool cannot provide the memory.
const MAX_WINDOW: f64 = (1u64 << 24) as f64;

/// The look-ahead machinery Limiter and Normalizer share: the input is
/// written into one window while the window written two windows ago is
/// played back; at each window boundary the gain heads, over the next
/// window, for a level found from the peaks of the last two windows.
pub struct LookAhead {
    /// Three windows of `size` samples.
    table: Vec<f32>,
    size: usize,
    /// Offsets of the input, middle and output windows in `table`.
    win_in: usize,
    win_mid: usize,
    win_out: usize,
    pos: usize,
    flips: u64,
    slope: f32,
    level: f32,
    curmaxval: f32,
    prevmaxval: f32,
    slopefactor: f32,
}

impl LookAhead {
    /// `None` when the window is empty or too large to allocate.
    fn new(dur: f32, sample_rate: f64) -> Option<LookAhead> {
        let want = (dur as f64 * sample_rate).ceil();
        if !(1.0..=MAX_WINDOW).contains(&want) {
            return None;
        }
        let size = want as usize;
        Some(LookAhead {
            table: fallible::zeroed(size * 3),
            size,
            win_in: 0,
            win_mid: size,
            win_out: 2 * size,
            pos: 0,
            flips: 0,
            slope: 0.0,
            level: 1.0,
            curmaxval: 0.0,
            prevmaxval: 0.0,
            slopefactor: 1.0 / size as f32,
        })
    }

    /// Runs one call; `next_level(peak)` gives the gain for a window peak.
    fn run(&mut self, inp: In<'_>, out: &mut [f32], next_level: impl Fn(f32) -> f32) {
        let mut slope = self.slope;
        let mut level = self.level;
        let mut curmaxval = self.curmaxval;
        let mut i = 0;
        let n = out.len();
        while i < n {
            let nsmps = (n - i).min(self.size - self.pos);
            let playing = self.flips >= 2;
            for k in 0..nsmps {
                let val = inp.at(i + k);
                self.table[self.win_in + self.pos + k] = val;
                out[i + k] = if playing { level * self.table[self.win_out + self.pos + k] } else { 0.0 };
                level += slope;
                let a = val.abs();
                if a > curmaxval {
                    curmaxval = a;
                }
            }
            self.pos += nsmps;
            i += nsmps;
            if self.pos >= self.size {
                self.pos = 0;
                let maxval2 = if self.prevmaxval > curmaxval { self.prevmaxval } else { curmaxval };
                self.prevmaxval = curmaxval;
                curmaxval = 0.0;
                slope = (next_level(maxval2) - level) * self.slopefactor;
                let t = self.win_out;
                self.win_out = self.win_mid;
                self.win_mid = self.win_in;
                self.win_in = t;
                self.flips += 1;
            }
        }
        self.slope = slope;
        self.level = level;
        self.curmaxval = curmaxval;
    }
}

/// Limiter (`NORMALIZE` false): delays its input by two windows of `dur`
/// seconds and scales it so that its peaks stay at or below `level`.
/// Normalizer (`NORMALIZE` true): the same delay, scaled so that its peaks
/// reach `level`. Inputs: in, level, dur.
pub struct LookAheadGain<const NORMALIZE: bool> {
    la: Option<LookAhead>,
}

pub type Limiter = LookAheadGain<false>;
pub type Normalizer = LookAheadGain<true>;

impl<const NORMALIZE: bool> Construct for LookAheadGain<NORMALIZE> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = LookAheadGain { la: LookAhead::new(in0(io, 2), cx.rate.sample_rate) };
        if u.la.is_none() {
            cx.set_done(true);
        }
        u.next(io, cx);
        u
    }
}

impl<const NORMALIZE: bool> Unit for LookAheadGain<NORMALIZE> {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        let amp = in0(io, 1);
        // The gain for a window whose peak is `maxval`.
        let gain = move |maxval: f32| match NORMALIZE {
            true if maxval <= 0.00001 => 100000.0 * amp,
            true => amp / maxval,
            false if maxval > amp => amp / maxval,
            false => 1.0,
        };
        match &mut self.la {
            Some(la) => la.run(inp, io.out(0), gain),
            None => io.out(0).fill(0.0),
        }
    }
}
