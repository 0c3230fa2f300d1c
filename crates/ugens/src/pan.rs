//! Panners and cross-faders: the stereo and quadraphonic Pan2, LinPan2,
//! Balance2, Pan4, XFade2 and LinXFade2 here, the multichannel and ambisonic
//! PanAz, PanB, PanB2, BiPanB2, DecodeB2 and Rotate2 in [`multichannel`].
//!
//! The equal-power laws read SuperCollider's sine table (8192 points per
//! cycle, single precision) at a position quantised to 2048 steps across a
//! quarter cycle, exactly as scsynth does.

mod multichannel;

pub use multichannel::{BiPanB2, DecodeB2, PanAz, PanB, PanB2, Rotate2};

use crate::common::math::sc_max;
use crate::common::math::sc_min;
use crate::simd::ramp;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use std::sync::OnceLock;

/// Points per cycle of the sine table.
pub const SINE_SIZE: usize = 8192;

/// `sin(2πi/8192)` for i in 0..=8192, computed in double and stored as f32.
pub fn sine_table() -> &'static [f32; SINE_SIZE + 1] {
    static TABLE: OnceLock<Box<[f32; SINE_SIZE + 1]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0.0f32; SINE_SIZE + 1]);
        let step = std::f64::consts::TAU / SINE_SIZE as f64;
        for (i, v) in t.iter_mut().enumerate() {
            *v = (i as f64 * step).sin() as f32;
        }
        t
    })
}

/// Left and right gains (before level) of the equal-power law at `pos`.
#[inline]
fn equal_power(sine: &[f32; SINE_SIZE + 1], pos: f32) -> (f32, f32) {
    let ipos = ((1024.0f32 * pos + 1024.0 + 0.5) as i32).clamp(0, 2048) as usize;
    (sine[2048 - ipos], sine[ipos])
}

/// Reads a control or audio input's first value, for construction.
#[inline]
fn first(io: &Wires<'_>, i: usize) -> f32 {
    if i < io.num_inputs() {
        io.in0(i)
    } else {
        0.0
    }
}

/// Signal inputs read as blocks: a constant or control value is spread over
/// a block held in the unit, so the loops can index every input alike.
#[derive(Default)]
struct Spread {
    buf: Vec<f32>,
}

impl Spread {
    fn new(cx: &UnitCtx<'_>) -> Spread {
        Spread { buf: vec![0.0; cx.world.block_size.max(cx.rate.buf_length)] }
    }

    #[inline]
    fn get<'a>(&'a mut self, s: &'a [f32], n: usize) -> &'a [f32] {
        if s.len() >= n {
            s
        } else {
            let v = s.first().copied().unwrap_or(0.0);
            let m = n.min(self.buf.len());
            self.buf[..m].fill(v);
            &self.buf[..m]
        }
    }
}

/// Two gains that move together across a block when the controls change.
struct Gains {
    left: f32,
    right: f32,
}

impl Gains {
    /// Runs `f(i, left_gain, right_gain)` for every sample, ramping from the
    /// current gains to `next` (SIMD-style lanes when `simd`), then stores
    /// `next`.
    #[inline(always)]
    fn ramp_to(&mut self, next: (f32, f32), n: usize, sf: f64, simd: bool, mut f: impl FnMut(usize, f32, f32)) {
        let sf = sf as f32;
        let lslope = (next.0 - self.left) * sf;
        let rslope = (next.1 - self.right) * sf;
        if simd {
            let mut lbuf = [0.0f32; 4];
            let mut rbuf = [0.0f32; 4];
            // Walk both ramps lane by lane, in blocks of four samples.
            let mut li = lanes4(self.left, lslope);
            let mut ri = lanes4(self.right, rslope);
            let step_l = (lslope + lslope) + (lslope + lslope);
            let step_r = (rslope + rslope) + (rslope + rslope);
            let mut i = 0;
            while i < n {
                lbuf.copy_from_slice(&li);
                rbuf.copy_from_slice(&ri);
                for k in 0..4 {
                    if i + k < n {
                        f(i + k, lbuf[k], rbuf[k]);
                    }
                    li[k] += step_l;
                    ri[k] += step_r;
                }
                i += 4;
            }
        } else {
            let (mut l, mut r) = (self.left, self.right);
            for i in 0..n {
                f(i, l, r);
                l += lslope;
                r += rslope;
            }
        }
        self.left = next.0;
        self.right = next.1;
    }
}

/// `lo = input * l`, `ro = input * r`: a panner's block at steady gains,
/// in the AVX2 build where `wide` (the same products, eight at a time).
#[inline(always)]
fn scale_pair(lo: &mut [f32], ro: &mut [f32], input: &[f32], l: f32, r: f32, wide: bool) {
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide` is set only where the CPU has AVX2 (`vector::avx2`).
        unsafe { scale_pair_avx2(lo, ro, input, l, r) };
        return;
    }
    let _ = wide;
    scale_pair_plain(lo, ro, input, l, r);
}

/// `scale_pair` in a function compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn scale_pair_avx2(lo: &mut [f32], ro: &mut [f32], input: &[f32], l: f32, r: f32) {
    scale_pair_plain(lo, ro, input, l, r);
}

#[inline(always)]
fn scale_pair_plain(lo: &mut [f32], ro: &mut [f32], input: &[f32], l: f32, r: f32) {
    for ((a, b), &x) in lo.iter_mut().zip(ro.iter_mut()).zip(input) {
        *a = x * l;
        *b = x * r;
    }
}

#[inline(always)]
fn lanes4(start: f32, slope: f32) -> [f32; 4] {
    let slope2 = slope + slope;
    [start, start + slope, start + slope2, start + slope2 + slope]
}

// ---- Pan2 / LinPan2 / Balance2 / XFade2 -----------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Law {
    EqualPower,
    Linear,
}

/// Pan2 (`in, pos, level`) and LinPan2.
pub struct Pan2 {
    law: Law,
    pos: f32,
    level: f32,
    gains: Gains,
    audio_pos: bool,
    simd: bool,
    /// The steady block runs in its AVX2 build (`scale_pair`).
    wide: bool,
    spread: Spread,
}

impl Pan2 {
    fn gains_at(&self, pos: f32, level: f32) -> (f32, f32) {
        match self.law {
            Law::EqualPower => {
                let (l, r) = equal_power(sine_table(), pos);
                (level * l, level * r)
            }
            Law::Linear => {
                let pan = pos * 0.5 + 0.5;
                let right = level * pan;
                (level - right, right)
            }
        }
    }

    fn next_aa(&mut self, io: &mut Wires<'_>, sf: f64) {
        let n = io.n();
        let input = self.spread.get(io.inp(0), n);
        let pos = io.inp(1);
        let next_level = first(io, 2);
        let [lo, ro] = io.outs::<2>();
        let level = self.level;
        let sine = sine_table();
        let law = self.law;
        let gain = |p: f32, lv: f32| match law {
            Law::EqualPower => {
                let (l, r) = equal_power(sine, p);
                (lv * l, lv * r)
            }
            Law::Linear => {
                let right = lv * (p * 0.5 + 0.5);
                (lv - right, right)
            }
        };
        // LinPan2 always steps the level (its slope may be zero).
        if level != next_level || law == Law::Linear {
            let slope = ramp::calc_slope(next_level, level, sf);
            let mut lv = level;
            for i in 0..lo.len() {
                let (l, r) = gain(pos[i], lv);
                lo[i] = input[i] * l;
                ro[i] = input[i] * r;
                lv += slope;
            }
            self.level = lv;
        } else {
            for i in 0..lo.len() {
                let (l, r) = gain(pos[i], level);
                lo[i] = input[i] * l;
                ro[i] = input[i] * r;
            }
        }
    }

    fn next_ak(&mut self, io: &mut Wires<'_>, sf: f64) {
        let n = io.n();
        let pos = first(io, 1);
        let level = first(io, 2);
        let steady = pos == self.pos && level == self.level;
        let next = if steady { (0.0, 0.0) } else { self.gains_at(pos, level) };
        let inp = io.inp(0);
        // An audio input is read in place; the spread only holds a repeated value.
        let input = if inp.len() >= n { inp } else { self.spread.get(inp, n) };
        let [lo, ro] = io.outs::<2>();
        if steady {
            scale_pair(lo, ro, input, self.gains.left, self.gains.right, self.wide);
        } else {
            let n = lo.len();
            self.gains.ramp_to(next, n, sf, self.simd, |i, l, r| {
                lo[i] = input[i] * l;
                ro[i] = input[i] * r;
            });
            self.pos = pos;
            self.level = level;
        }
    }

    fn build(law: Law, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let pos = first(io, 1);
        let level = first(io, 2);
        let mut unit = Pan2 {
            law,
            pos,
            level,
            gains: Gains { left: 0.0, right: 0.0 },
            audio_pos: io.num_inputs() > 1 && io.in_rate(1) == Rate::Audio,
            simd: ramp::simd_block(cx.rate.buf_length),
            wide: crate::vector::avx2(),
            spread: Spread::new(cx),
        };
        let (l, r) = unit.gains_at(pos, level);
        unit.gains = Gains { left: l, right: r };
        // scsynth computes the first sample with its audio-position loop.
        let input = io.in0(0);
        let [lo, ro] = io.outs::<2>();
        let (l0, r0) = unit.gains_at(pos, level);
        lo[0] = input * l0;
        ro[0] = input * r0;
        unit
    }
}

impl Unit for Pan2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio_pos {
            self.next_aa(io, cx.rate.slope_factor)
        } else {
            self.next_ak(io, cx.rate.slope_factor)
        }
    }
}

pub(crate) fn pan2(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(Pan2::build(Law::EqualPower, io, cx))
}

pub(crate) fn lin_pan2(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(Pan2::build(Law::Linear, io, cx))
}

/// Balance2 (`left, right, pos, level`: two outputs) and XFade2 (`inA, inB,
/// pan, level`: their equal-power mix, one output).
pub struct Balance2 {
    mix: bool,
    pos: f32,
    level: f32,
    gains: Gains,
    audio_pos: bool,
    simd: bool,
    spread: [Spread; 2],
}

impl Balance2 {
    fn next_aa(&mut self, io: &mut Wires<'_>, sf: f64) {
        let n = io.n();
        let [s0, s1] = &mut self.spread;
        let (left, right, pos) = (s0.get(io.inp(0), n), s1.get(io.inp(1), n), io.inp(2));
        let next_level = first(io, 3);
        let sine = sine_table();
        let level = self.level;
        let mix = self.mix;
        let n = io.n();
        let lo_ptr = io.out_ptr(0);
        let ro_ptr = if mix { lo_ptr } else { io.out_ptr(1) };
        let write = |i: usize, lv: f32| {
            let (l, r) = equal_power(sine, pos[i]);
            let (la, ra) = (lv * l, lv * r);
            // SAFETY: `i < n`, the outputs hold `n` samples and do not alias
            // the inputs; with `mix` only the first output is written.
            unsafe {
                if mix {
                    *lo_ptr.add(i) = left[i] * la + right[i] * ra;
                } else {
                    *lo_ptr.add(i) = left[i] * la;
                    *ro_ptr.add(i) = right[i] * ra;
                }
            }
        };
        if level != next_level {
            let slope = ramp::calc_slope(next_level, level, sf);
            let mut lv = level;
            for i in 0..n {
                write(i, lv);
                lv += slope;
            }
            self.level = lv;
        } else {
            for i in 0..n {
                write(i, level);
            }
        }
    }

    fn next_ak(&mut self, io: &mut Wires<'_>, sf: f64) {
        let n = io.n();
        let [mut s0, mut s1] = std::mem::take(&mut self.spread);
        let (left, right) = (s0.get(io.inp(0), n), s1.get(io.inp(1), n));
        let pos = first(io, 2);
        let level = first(io, 3);
        let n = io.n();
        let mix = self.mix;
        let lo_ptr = io.out_ptr(0);
        let ro_ptr = if mix { lo_ptr } else { io.out_ptr(1) };
        let write = |i: usize, la: f32, ra: f32| {
            // SAFETY: as in `next_aa`.
            unsafe {
                if mix {
                    *lo_ptr.add(i) = left[i] * la + right[i] * ra;
                } else {
                    *lo_ptr.add(i) = left[i] * la;
                    *ro_ptr.add(i) = right[i] * ra;
                }
            }
        };
        if pos != self.pos || level != self.level {
            let (l, r) = equal_power(sine_table(), pos);
            self.gains.ramp_to((level * l, level * r), n, sf, self.simd, write);
            self.pos = pos;
            self.level = level;
        } else {
            let (la, ra) = (self.gains.left, self.gains.right);
            for i in 0..n {
                write(i, la, ra);
            }
        }
        self.spread = [s0, s1];
    }

    fn build(mix: bool, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let pos = first(io, 2);
        let level = first(io, 3);
        let (l, r) = equal_power(sine_table(), pos);
        let mut unit = Balance2 {
            mix,
            pos,
            level,
            gains: Gains { left: level * l, right: level * r },
            audio_pos: io.num_inputs() > 2 && io.in_rate(2) == Rate::Audio,
            simd: ramp::simd_block(cx.rate.buf_length),
            spread: [Spread::new(cx), Spread::new(cx)],
        };
        let (a, b) = (io.in0(0), io.in0(1));
        let (la, ra) = (unit.gains.left, unit.gains.right);
        if mix {
            io.out(0)[0] = a * la + b * ra;
        } else {
            io.out(0)[0] = a * la;
            io.out(1)[0] = b * ra;
        }
        unit.level = level;
        unit
    }
}

impl Unit for Balance2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio_pos {
            self.next_aa(io, cx.rate.slope_factor)
        } else {
            self.next_ak(io, cx.rate.slope_factor)
        }
    }
}

pub(crate) fn balance2(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(Balance2::build(false, io, cx))
}

pub(crate) fn xfade2(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(Balance2::build(true, io, cx))
}

// ---- LinXFade2 --------------------------------------------------------------

/// LinXFade2 (`inA, inB, pan`): a linear cross-fade.
pub struct LinXFade2 {
    pos: f32,
    amp: f32,
    pos_rate: Rate,
    simd: bool,
    spread: [Spread; 2],
}

impl LinXFade2 {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64, simd: bool) {
        let n = io.n();
        let [mut s0, mut s1] = std::mem::take(&mut self.spread);
        self.run_with(io, sf, simd, s0.get(io.inp(0), n), s1.get(io.inp(1), n));
        self.spread = [s0, s1];
    }

    fn run_with(&mut self, io: &mut Wires<'_>, sf: f64, simd: bool, a: &[f32], b: &[f32]) {
        match self.pos_rate {
            Rate::Audio => {
                let pos = io.inp(2);
                let out = io.out(0);
                for i in 0..out.len() {
                    let amp = pos[i].clamp_like_sc() * 0.5 + 0.5;
                    out[i] = a[i] + amp * (b[i] - a[i]);
                }
            }
            Rate::Control => {
                let pos = io.in0(2);
                let amp = self.amp;
                let out = io.out(0);
                if pos != self.pos {
                    let pos = pos.clamp_like_sc();
                    let next_amp = pos * 0.5 + 0.5;
                    if simd {
                        let old_left = 1.0 - amp;
                        let next_left = 1.0 - next_amp;
                        let mut g = Gains { left: old_left, right: amp };
                        g.ramp_to((next_left, next_amp), out.len(), sf, true, |i, l, r| {
                            out[i] = a[i] * l + b[i] * r;
                        });
                        self.amp = next_amp;
                    } else {
                        let slope = ramp::calc_slope(next_amp, amp, sf);
                        let mut amp = amp;
                        for i in 0..out.len() {
                            out[i] = a[i] + amp * (b[i] - a[i]);
                            amp += slope;
                        }
                        self.amp = amp;
                    }
                    self.pos = pos;
                } else if simd {
                    let left = 1.0 - amp;
                    for i in 0..out.len() {
                        out[i] = a[i] * left + b[i] * amp;
                    }
                } else {
                    for i in 0..out.len() {
                        out[i] = a[i] + amp * (b[i] - a[i]);
                    }
                }
            }
            _ => {
                let amp = self.amp;
                let out = io.out(0);
                if simd {
                    let left = 1.0 - amp;
                    for i in 0..out.len() {
                        out[i] = a[i] * left + b[i] * amp;
                    }
                } else {
                    for i in 0..out.len() {
                        out[i] = a[i] + amp * (b[i] - a[i]);
                    }
                }
            }
        }
    }
}

trait ClampLikeSc {
    fn clamp_like_sc(self) -> f32;
}

impl ClampLikeSc for f32 {
    /// `sc_clip(x, -1, 1)`.
    #[inline(always)]
    fn clamp_like_sc(self) -> f32 {
        sc_max(sc_min(self, 1.0), -1.0)
    }
}

impl Construct for LinXFade2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let pos = first(io, 2).clamp_like_sc();
        let amp = pos * 0.5 + 0.5;
        let pos_rate = if io.num_inputs() > 2 { io.in_rate(2) } else { Rate::Scalar };
        let simd = pos_rate != Rate::Audio && ramp::simd_block(cx.rate.buf_length);
        let unit = LinXFade2 { pos, amp, pos_rate, simd, spread: [Spread::new(cx), Spread::new(cx)] };
        // The first sample uses the audio-position formula.
        let (a, b, p) = (io.in0(0), io.in0(1), first(io, 2).clamp_like_sc());
        let amp0 = p * 0.5 + 0.5;
        io.out(0)[0] = a + amp0 * (b - a);
        unit
    }
}

impl Unit for LinXFade2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let simd = self.simd;
        self.run(io, cx.rate.slope_factor, simd);
    }
}

// ---- Pan4 -------------------------------------------------------------------

/// Pan4 (`in, xpos, ypos, level`): four outputs LF, RF, LB, RB.
pub struct Pan4 {
    xpos: f32,
    ypos: f32,
    level: f32,
    amps: [f32; 4],
    spread: Spread,
}

/// The four gains for a position; positions outside the square are
/// projected onto its edge first.
fn pan4_gains(mut xpos: f32, mut ypos: f32, level: f32) -> [f32; 4] {
    if !(-1.0..=1.0).contains(&xpos) || !(-1.0..=1.0).contains(&ypos) {
        let xabs = xpos.abs();
        if ypos > xabs {
            xpos = (xpos + ypos) / ypos - 1.0;
            ypos = 1.0;
        } else if ypos < -xabs {
            xpos = (xpos - ypos) / -ypos - 1.0;
            ypos = -1.0;
        } else {
            let yabs = ypos.abs();
            if yabs < xpos {
                ypos = (ypos + xpos) / xpos - 1.0;
                xpos = 1.0;
            } else {
                ypos = (ypos - xpos) / -xpos - 1.0;
                xpos = -1.0;
            }
        }
    }
    let sine = sine_table();
    let (left, right) = equal_power(sine, xpos);
    let (back, front) = equal_power(sine, ypos);
    let front = front * level;
    let back = back * level;
    [left * front, right * front, left * back, right * back]
}

impl Construct for Pan4 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let (xpos, ypos, level) = (first(io, 1), first(io, 2), first(io, 3));
        let amps = pan4_gains(xpos, ypos, level);
        let z = io.in0(0);
        for (k, amp) in amps.iter().enumerate() {
            io.out(k)[0] = z * amp;
        }
        Pan4 { xpos, ypos, level, amps, spread: Spread::new(_cx) }
    }
}

impl Unit for Pan4 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let mut spread = std::mem::take(&mut self.spread);
        let input = spread.get(io.inp(0), n);
        let (xpos, ypos, level) = (first(io, 1), first(io, 2), first(io, 3));
        let outs = io.outs::<4>();
        if xpos != self.xpos || ypos != self.ypos || level != self.level {
            self.xpos = xpos;
            self.ypos = ypos;
            self.level = level;
            let next = pan4_gains(xpos, ypos, level);
            let sf = cx.rate.slope_factor;
            let slopes: [f32; 4] = std::array::from_fn(|k| ramp::calc_slope(next[k], self.amps[k], sf));
            let mut amps = self.amps;
            for i in 0..outs[0].len() {
                let z = input[i];
                for k in 0..4 {
                    outs[k][i] = z * amps[k];
                    amps[k] += slopes[k];
                }
            }
            self.amps = amps;
        } else {
            let amps = self.amps;
            for i in 0..outs[0].len() {
                let z = input[i];
                for k in 0..4 {
                    outs[k][i] = z * amps[k];
                }
            }
        }
        self.spread = spread;
    }
}

/// Stands in for a unit whose SynthDef gave it fewer outputs than it
/// writes: outputs silence rather than writing past its wires.
struct Silent;

impl Unit for Silent {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        io.clear_outputs();
    }
}

/// Builds `T`, which writes `N` outputs, if the SynthDef gave it that many.
pub(crate) fn with_outputs<T: Construct, const N: usize>(
    spec: &UnitSpec<'_>,
    io: &mut Wires<'_>,
    cx: &mut UnitCtx<'_>,
) -> Box<dyn Unit> {
    if io.num_outputs() < N {
        io.clear_outputs();
        Box::new(Silent)
    } else {
        Box::new(T::new(spec, io, cx))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    fn pan2(pos: f32) -> (f32, f32) {
        let out = UnitHarness::new("Pan2", Rate::Audio)
            .outputs(2)
            .inputs([TestInput::Const(1.0), TestInput::Control(vec![pos]), TestInput::Const(1.0)])
            .run(1);
        (out[0][10], out[1][10])
    }

    #[test]
    fn pan2_centre_is_minus_3_db_on_both_sides() {
        let (l, r) = pan2(0.0);
        let db = |x: f32| 20.0 * x.log10();
        assert!((db(l) + 3.0103).abs() < 0.01 && (db(r) + 3.0103).abs() < 0.01, "{l} {r}");
        assert!((l * l + r * r - 1.0).abs() < 1e-3);
    }

    #[test]
    fn pan2_extremes_send_everything_to_one_side() {
        assert_eq!(pan2(-1.0), (1.0, 0.0));
        assert_eq!(pan2(1.0), (0.0, 1.0));
        let (l, r) = pan2(0.5);
        assert!(r > l && (l * l + r * r - 1.0).abs() < 1e-3);
    }

    #[test]
    fn pan2_glides_to_a_new_position_within_one_block() {
        let out = UnitHarness::new("Pan2", Rate::Audio)
            .outputs(2)
            .inputs([TestInput::Const(1.0), TestInput::Control(vec![-1.0, 1.0]), TestInput::Const(1.0)])
            .run(3);
        let right = &out[1];
        assert!(right[..64].iter().all(|&x| x == 0.0));
        assert!(right[64..128].windows(2).all(|w| w[1] >= w[0]));
        assert!(right[128..].iter().all(|&x| x == 1.0));
    }

    #[test]
    fn linpan2_is_linear() {
        let out = UnitHarness::new("LinPan2", Rate::Audio)
            .outputs(2)
            .inputs([TestInput::Const(1.0), TestInput::Const(0.0), TestInput::Const(1.0)])
            .run(1);
        assert_eq!((out[0][5], out[1][5]), (0.5, 0.5));
    }

    #[test]
    fn pan4_corners_reach_a_single_speaker() {
        let corner = |x: f32, y: f32| {
            UnitHarness::new("Pan4", Rate::Audio)
                .outputs(4)
                .inputs([TestInput::Const(1.0), TestInput::Const(x), TestInput::Const(y), TestInput::Const(1.0)])
                .run(1)
                .iter()
                .map(|o| o[3])
                .collect::<Vec<f32>>()
        };
        // Outputs are LF, RF, LB, RB.
        assert_eq!(corner(-1.0, 1.0), vec![1.0, 0.0, 0.0, 0.0]);
        assert_eq!(corner(1.0, 1.0), vec![0.0, 1.0, 0.0, 0.0]);
        assert_eq!(corner(-1.0, -1.0), vec![0.0, 0.0, 1.0, 0.0]);
        assert_eq!(corner(1.0, -1.0), vec![0.0, 0.0, 0.0, 1.0]);
        let centre = corner(0.0, 0.0);
        assert!(centre.iter().all(|&g| (g - 0.5).abs() < 1e-3));
    }

    #[test]
    fn balance2_and_xfade2_follow_the_equal_power_law() {
        let out = UnitHarness::new("Balance2", Rate::Audio)
            .outputs(2)
            .inputs([TestInput::Const(1.0), TestInput::Const(1.0), TestInput::Const(1.0), TestInput::Const(1.0)])
            .run(1);
        assert_eq!((out[0][3], out[1][3]), (0.0, 1.0));
        let x = UnitHarness::new("XFade2", Rate::Audio)
            .inputs([TestInput::Const(1.0), TestInput::Const(0.0), TestInput::Const(-1.0), TestInput::Const(1.0)])
            .run(1);
        assert_eq!(x[0][3], 1.0);
    }

    #[test]
    fn linxfade2_mixes_linearly() {
        for pos_input in [TestInput::Const(0.0), TestInput::Control(vec![0.0]), TestInput::Audio(vec![0.0; 64])] {
            let out = UnitHarness::new("LinXFade2", Rate::Audio)
                .inputs([TestInput::Const(1.0), TestInput::Const(0.0), pos_input])
                .run(1);
            assert!(out[0].iter().all(|&x| x == 0.5));
        }
    }

    #[test]
    fn a_panner_given_too_few_outputs_is_silent_instead_of_failing() {
        let out = UnitHarness::new("PanB", Rate::Audio)
            .outputs(3)
            .inputs([TestInput::Const(1.0), TestInput::Const(0.0), TestInput::Const(0.0), TestInput::Const(1.0)])
            .run(2);
        assert!(out.iter().all(|ch| ch.iter().all(|&x| x == 0.0)));
    }

    #[test]
    fn pan2_at_a_steady_control_position_matches_the_per_sample_law() {
        // An audio-rate position computes the gains sample by sample; a
        // steady scalar or control position scales by gains kept from
        // block to block (the wide loop), and must give the same samples.
        let blocks = 6;
        let len = blocks * 64;
        let sig: Vec<f32> = (0..len).map(|i| ((i * 7919) % 1013) as f32 / 506.5 - 1.0).collect();
        for name in ["Pan2", "LinPan2"] {
            for pos in [-1.0f32, -0.37, 0.0, 0.5, 1.0] {
                for input in [TestInput::Audio(sig.clone()), TestInput::Const(0.3), TestInput::Control(vec![-0.7, 0.2])] {
                    let run = |p: TestInput| {
                        UnitHarness::new(name, Rate::Audio)
                            .outputs(2)
                            .inputs([input.clone(), p, TestInput::Const(0.8)])
                            .run(blocks)
                    };
                    let reference = run(TestInput::Audio(vec![pos; len]));
                    for p in [TestInput::Const(pos), TestInput::Control(vec![pos])] {
                        let out = run(p);
                        for ch in 0..2 {
                            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert_eq!(bits(&out[ch]), bits(&reference[ch]), "{name} pos {pos} {input:?} channel {ch}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn scale_pair_gives_the_same_products_in_both_builds() {
        let input: Vec<f32> = (0..67).map(|i| (i as f32 * 0.731).sin()).collect();
        let run = |wide: bool| {
            let (mut lo, mut ro) = (vec![0.0f32; 67], vec![0.0f32; 67]);
            super::scale_pair(&mut lo, &mut ro, &input, 0.7071, -0.31, wide);
            (lo, ro)
        };
        let wide = cfg!(target_arch = "x86_64") && crate::vector::avx2();
        let (plain, vector) = (run(false), run(wide));
        assert_eq!(plain, vector);
        assert!(plain.0.iter().zip(&input).all(|(&l, &x)| l == x * 0.7071));
    }
}
