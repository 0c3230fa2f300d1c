//! More noise and random-value units: the dynamic LFDNoise family (whose
//! frequency may change at any sample), LFClipNoise, GrayNoise, the chaotic
//! Crackle and Logistic, Hasher, CoinGate, TExpRand and TIRand.

use super::{segment_length, with_rgen};
use crate::bufio::cubicinterp;
use crate::osc::tables::f2i;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

#[inline(always)]
fn at(sig: &[f32], i: usize) -> f32 {
    sig[if sig.len() > 1 { i } else { 0 }]
}

/// Wraps a phase that has just gone below zero back into [0, 1).
#[inline(always)]
fn wrap01(x: f32) -> f32 {
    if x >= 1.0 {
        let y = x - 1.0;
        if y < 1.0 {
            return y;
        }
        y - (y / 1.0).floor()
    } else if x < 0.0 {
        let y = x + 1.0;
        if y >= 0.0 {
            return y;
        }
        y - (y / 1.0).floor()
    } else {
        x
    }
}

// ---------------------------------------------------------------------------
// LFDNoise0, LFDNoise1, LFDNoise3, LFDClipNoise

/// What an LFDNoise unit does when its phase runs out, and how it reads
/// its value in between.
pub trait DynShape: Send + 'static {
    fn renew(&mut self, g: &mut crate::rgen::RGen);
    fn value(&self, phase: f32) -> f32;

    /// The phase step for a control-rate frequency: LFDNoise3 forms it in
    /// double precision, the others in single.
    #[inline(always)]
    fn control_step(freq: f32, sample_dur: f64) -> f32 {
        sample_dur as f32 * freq
    }
}

/// Held values in [-1, 1) (LFDNoise0) or of ±1 (LFDClipNoise).
pub struct Step<const CLIP: bool> {
    level: f32,
}

impl<const CLIP: bool> DynShape for Step<CLIP> {
    #[inline(always)]
    fn renew(&mut self, g: &mut crate::rgen::RGen) {
        self.level = if CLIP { g.fcoin() } else { g.frand2() };
    }

    #[inline(always)]
    fn value(&self, _phase: f32) -> f32 {
        self.level
    }
}

/// Straight lines between random values.
pub struct Linear {
    prev: f32,
    next: f32,
}

impl DynShape for Linear {
    #[inline(always)]
    fn renew(&mut self, g: &mut crate::rgen::RGen) {
        self.prev = self.next;
        self.next = g.frand2();
    }

    #[inline(always)]
    fn value(&self, phase: f32) -> f32 {
        self.next + phase * (self.prev - self.next)
    }
}

/// Cubic interpolation through the last four random values, scaled by 0.8
/// so that the curve stays within [-1, 1].
pub struct Cubic {
    v: [f32; 4],
}

impl DynShape for Cubic {
    #[inline(always)]
    fn renew(&mut self, g: &mut crate::rgen::RGen) {
        self.v = [self.v[1], self.v[2], self.v[3], g.frand2() * 0.8];
    }

    #[inline(always)]
    fn value(&self, phase: f32) -> f32 {
        let [a, b, c, d] = self.v;
        cubicinterp(1.0 - phase, a, b, c, d)
    }

    #[inline(always)]
    fn control_step(freq: f32, sample_dur: f64) -> f32 {
        (freq as f64 * sample_dur) as f32
    }
}

/// An LFDNoise unit: a phase falls by freq / sample rate each sample and a
/// new random value is drawn whenever it drops below zero.
pub struct DynNoise<S: DynShape> {
    phase: f32,
    shape: S,
    audio_freq: bool,
}

pub type LFDNoise0 = DynNoise<Step<false>>;
pub type LFDClipNoise = DynNoise<Step<true>>;
pub type LFDNoise1 = DynNoise<Linear>;
pub type LFDNoise3 = DynNoise<Cubic>;

impl<S: DynShape> DynNoise<S> {
    fn calc(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, audio_freq: bool) {
        let smpdur = cx.rate.sample_dur as f32;
        let freq = io.inp(0);
        let dphase = S::control_step(freq[0], cx.rate.sample_dur);
        let mut phase = self.phase;
        let shape = &mut self.shape;
        let out = io.out(0);
        with_rgen(cx, |g| {
            for (i, o) in out.iter_mut().enumerate() {
                phase -= if audio_freq { at(freq, i) * smpdur } else { dphase };
                if phase < 0.0 {
                    phase = wrap01(phase);
                    shape.renew(g);
                }
                *o = shape.value(phase);
            }
        });
        self.phase = phase;
    }

    fn build(shape: S, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = DynNoise { phase: 0.0, shape, audio_freq: io.in_rate(0) == Rate::Audio };
        u.calc(io, cx, true);
        u
    }
}

impl<S: DynShape> Unit for DynNoise<S> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let audio_freq = self.audio_freq;
        self.calc(io, cx, audio_freq);
    }
}

impl<const CLIP: bool> Construct for DynNoise<Step<CLIP>> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        Self::build(Step { level: 0.0 }, io, cx)
    }
}

impl Construct for LFDNoise1 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let next = cx.world.rgen.frand2();
        Self::build(Linear { prev: 0.0, next }, io, cx)
    }
}

impl Construct for LFDNoise3 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let v = with_rgen(cx, |g| std::array::from_fn(|_| g.frand2() * 0.8));
        Self::build(Cubic { v }, io, cx)
    }
}

// ---------------------------------------------------------------------------
// GrayNoise

/// GrayNoise: flips one random bit of a 32-bit word per sample and outputs
/// the word as a fraction of full scale.
pub struct GrayNoise {
    counter: i32,
}

impl Construct for GrayNoise {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = GrayNoise { counter: 0 };
        u.next(io, cx);
        u
    }
}

impl Unit for GrayNoise {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = io.out(0);
        let mut counter = self.counter;
        with_rgen(cx, |g| {
            for o in out.iter_mut() {
                counter ^= 1i32.wrapping_shl(g.trand() & 31);
                *o = counter as f32 * 4.656_613e-10;
            }
        });
        self.counter = counter;
    }
}

// ---------------------------------------------------------------------------
// Crackle, Logistic

/// Crackle: the chaotic map `y0 = |y1 * p - y2 - 0.05|`, started from a
/// random value (so it draws once, when built).
pub struct Crackle {
    y1: f64,
    y2: f64,
}

impl Construct for Crackle {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Crackle { y1: cx.world.rgen.drand(), y2: 0.0 };
        u.next(io, cx);
        u
    }
}

impl Unit for Crackle {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let p = io.in0(0);
        // The state is kept in double precision but every step runs in single.
        let (mut y1, mut y2) = (self.y1 as f32, self.y2 as f32);
        for o in io.out(0).iter_mut() {
            let y0 = (y1 * p - y2 - 0.05).abs();
            *o = y0;
            y2 = y1;
            y1 = y0;
        }
        self.y1 = y1 as f64;
        self.y2 = y2 as f64;
    }
}

/// Logistic: the logistic map `y = r * y * (1 - y)`, iterated `freq` times
/// a second (every sample when freq reaches the sample rate and `r` is
/// fixed).
pub struct Logistic {
    y1: f64,
    counter: i32,
    every_sample: bool,
}

impl Logistic {
    fn every(&mut self, io: &mut Wires<'_>) {
        let r = io.in0(0) as f64;
        let mut y1 = self.y1;
        for o in io.out(0).iter_mut() {
            y1 = r * y1 * (1.0 - y1);
            *o = y1 as f32;
        }
        self.y1 = y1;
    }
}

impl Construct for Logistic {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let every_sample = io.in_rate(0) == Rate::Scalar && io.in0(1) as f64 >= cx.rate.sample_rate;
        let mut u = Logistic { y1: io.in0(2) as f64, counter: 0, every_sample };
        u.every(io);
        u
    }
}

impl Unit for Logistic {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.every_sample {
            self.every(io);
            return;
        }
        let r = io.in0(0) as f64;
        let freq = io.in0(1);
        let sr = cx.rate.sample_rate;
        let (mut y1, mut counter) = (self.y1, self.counter);
        let out = io.out(0);
        let mut start = 0;
        while start < out.len() {
            if counter <= 0 {
                counter = segment_length(sr, freq, 1);
                y1 = r * y1 * (1.0 - y1);
            }
            let n = (out.len() - start).min(counter as usize);
            counter -= n as i32;
            out[start..start + n].fill(y1 as f32);
            start += n;
        }
        self.y1 = y1;
        self.counter = counter;
    }
}

// ---------------------------------------------------------------------------
// Hasher

/// Hasher: a deterministic hash of the input's bit pattern, in [-1, 1).
pub struct Hasher;

impl Construct for Hasher {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Hasher;
        u.next(io, cx);
        u
    }
}

impl Unit for Hasher {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let input = io.inp(0);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let h = crate::rgen::hash32(at(input, i).to_bits() as i32) as u32;
            *o = f32::from_bits(0x4000_0000 | (h >> 9)) - 3.0;
        }
    }
}

// ---------------------------------------------------------------------------
// CoinGate

/// CoinGate: lets each trigger through with probability `prob`.
pub struct CoinGate {
    trig: f32,
}

impl Construct for CoinGate {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.out(0)[0] = 0.0;
        CoinGate { trig: io.in0(1) }
    }
}

impl Unit for CoinGate {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let prob = io.in0(0);
        let trig = io.inp(1);
        let mut prev = self.trig;
        let g = &mut cx.world.rgen;
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let t = at(trig, i);
            *o = if prev <= 0.0 && t > 0.0 && g.frand() < prob { t } else { 0.0 };
            prev = t;
        }
        self.trig = prev;
    }
}

// ---------------------------------------------------------------------------
// TExpRand, TIRand

/// How a triggered random unit draws one value from its bounds.
pub trait Draw: Send + 'static {
    fn draw(g: &mut crate::rgen::RGen, lo: f32, hi: f32) -> f32;
}

/// Exponentially distributed in [lo, hi) (bounds of the same sign).
pub struct ExpDraw;

impl Draw for ExpDraw {
    #[inline(always)]
    fn draw(g: &mut crate::rgen::RGen, lo: f32, hi: f32) -> f32 {
        let ratio = hi / lo;
        ratio.powf(g.frand()) * lo
    }
}

/// A uniform integer in lo..=hi (bounds truncated to integers).
pub struct IntDraw;

impl Draw for IntDraw {
    #[inline(always)]
    fn draw(g: &mut crate::rgen::RGen, lo: f32, hi: f32) -> f32 {
        let (lo, hi) = (f2i(lo), f2i(hi));
        g.irand(hi.wrapping_sub(lo).wrapping_add(1)).wrapping_add(lo) as f32
    }
}

/// A new random value at each trigger, held in between. At audio rate
/// scsynth compares every sample of a block with the trigger value from
/// before the block (not the previous sample), so a trigger that stays high
/// draws anew at each of its samples within that block; this does the same.
pub struct TrigRand<D: Draw> {
    trig: f32,
    value: f32,
    audio_bounds: bool,
    _draw: std::marker::PhantomData<D>,
}

pub type TExpRand = TrigRand<ExpDraw>;
pub type TIRand = TrigRand<IntDraw>;

impl<D: Draw> Construct for TrigRand<D> {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let value = D::draw(&mut cx.world.rgen, io.in0(0), io.in0(1));
        io.out(0)[0] = value;
        let audio_bounds = spec.rate == Rate::Audio && io.in_rate(0) == Rate::Audio;
        TrigRand { trig: io.in0(2), value, audio_bounds, _draw: std::marker::PhantomData }
    }
}

impl<D: Draw> Unit for TrigRand<D> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (lo, hi, trig) = (io.inp(0), io.inp(1), io.inp(2));
        let g = &mut cx.world.rgen;
        let out = io.out(0);
        if out.len() == 1 {
            let t = trig[0];
            if t > 0.0 && self.trig <= 0.0 {
                self.value = D::draw(g, lo[0], hi[0]);
            }
            out[0] = self.value;
            self.trig = t;
            return;
        }
        let prev = self.trig;
        let mut value = self.value;
        let mut last = prev;
        for (i, o) in out.iter_mut().enumerate() {
            let t = at(trig, i);
            if t > 0.0 && prev <= 0.0 {
                value = if self.audio_bounds { D::draw(g, at(lo, i), at(hi, i)) } else { D::draw(g, lo[0], hi[0]) };
            }
            *o = value;
            last = t;
        }
        self.trig = last;
        self.value = value;
    }
}
