//! The dynamic LFDNoise family, whose frequency may change at any sample:
//! LFDNoise0, LFDNoise1, LFDNoise3 and LFDClipNoise.

use super::{at, with_rgen};
use crate::common::math::cubicinterp;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

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
