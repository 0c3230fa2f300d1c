//! Noise and random-value units. All of them draw from `cx.world.rgen` in
//! the same order as scsynth, copying its state into a local for the length
//! of a block. That is the world's shared generator, or the synth's own one
//! when the server gives each synth its own (the engine swaps it in while
//! the synth runs).

mod more;

pub use more::{
    CoinGate, Crackle, GrayNoise, Hasher, LFDClipNoise, LFDNoise0, LFDNoise1, LFDNoise3, Logistic,
    TExpRand, TIRand,
};

use crate::osc::tables::{d2i, f2i, sc_max, sc_min};
use crate::rgen::RGen;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};


/// RandSeed: on a rising trigger, reseeds the shared generator, so that the
/// random units after it repeat the same sequence. Outputs zeros.
pub struct RandSeed {
    prev_trig: f32,
}

impl RandSeed {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let trig = io.inp(0);
        let seed = io.inp(1);
        let mut prev = self.prev_trig;
        for i in 0..n {
            let t = trig[if trig.len() > 1 { i } else { 0 }];
            if t > 0.0 && prev <= 0.0 {
                let s = seed[if seed.len() > 1 { i } else { 0 }];
                cx.world.rgen.init(s as i32 as u32);
            }
            prev = t;
        }
        self.prev_trig = prev;
        io.out(0).fill(0.0);
    }
}

impl Construct for RandSeed {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = RandSeed { prev_trig: 0.0 };
        u.run(io, cx);
        u
    }
}

impl Unit for RandSeed {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// RandID: makes the synth draw from the world's shared generator number
/// `id` from here on (units after it in this block, every unit in later
/// blocks), as long as there is such a generator. Outputs zeros.
pub struct RandID {
    id: f32,
}

impl RandID {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let id = io.in0(0);
        if id != self.id {
            self.id = id;
            // C's float-to-unsigned conversion: negative ids wrap to huge ones.
            let id = id as i64 as u32;
            if cx.world.select_rgen(id) {
                cx.synth.rgen_id = id;
            }
        }
        io.out(0).fill(0.0);
    }
}

impl Construct for RandID {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = RandID { id: -1.0 };
        u.run(io, cx);
        u
    }
}

impl Unit for RandID {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// Runs `f` with a local copy of the shared generator, then stores it back,
/// so that the inner loop keeps the state in registers.
#[inline(always)]
fn with_rgen<R>(cx: &mut UnitCtx<'_>, f: impl FnOnce(&mut RGen) -> R) -> R {
    let mut g = cx.world.rgen;
    let r = f(&mut g);
    cx.world.rgen = g;
    r
}

// ---------------------------------------------------------------------------
// Noise generators

/// WhiteNoise: uniform in [-1, 1).
pub struct WhiteNoise;

impl Construct for WhiteNoise {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = WhiteNoise;
        u.next(io, cx);
        u
    }
}

impl Unit for WhiteNoise {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = io.out(0);
        with_rgen(cx, |g| out.iter_mut().for_each(|o| *o = g.frand2()));
    }
}

/// ClipNoise: randomly -1 or +1.
pub struct ClipNoise;

impl Construct for ClipNoise {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = ClipNoise;
        u.next(io, cx);
        u
    }
}

impl Unit for ClipNoise {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = io.out(0);
        with_rgen(cx, |g| out.iter_mut().for_each(|o| *o = g.fcoin()));
    }
}

/// PinkNoise: the Voss-McCartney sum of 16 random values, each redrawn
/// half as often as the previous one (picked by the trailing zeros of a
/// random word), plus one fresh value per sample.
pub struct PinkNoise {
    dice: [u32; 16],
    total: u32,
}

impl Construct for PinkNoise {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = PinkNoise { dice: [0; 16], total: 0 };
        with_rgen(cx, |g| {
            for d in u.dice.iter_mut() {
                let r = g.trand() >> 13;
                u.total = u.total.wrapping_add(r);
                *d = r;
            }
        });
        u.next(io, cx);
        u
    }
}

impl Unit for PinkNoise {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = io.out(0);
        let dice = &mut self.dice;
        let mut total = self.total;
        with_rgen(cx, |g| {
            for o in out.iter_mut() {
                let counter = g.trand();
                let newrand = counter >> 13;
                let k = (counter.trailing_zeros() & 15) as usize;
                let prev = std::mem::replace(&mut dice[k], newrand);
                total = total.wrapping_add(newrand.wrapping_sub(prev));
                let fresh = g.trand() >> 13;
                *o = f32::from_bits(total.wrapping_add(fresh) | 0x4000_0000) - 3.0;
            }
        });
        self.total = total;
    }
}

/// BrownNoise: a random walk with steps in [-1/8, 1/8), reflected at ±1.
pub struct BrownNoise {
    level: f32,
}

impl Construct for BrownNoise {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let level = cx.world.rgen.frand2();
        io.out(0)[0] = level;
        BrownNoise { level }
    }
}

impl Unit for BrownNoise {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = io.out(0);
        let mut z = self.level;
        with_rgen(cx, |g| {
            for o in out.iter_mut() {
                z += g.frand8();
                if z > 1.0 {
                    z = 2.0 - z;
                } else if z < -1.0 {
                    z = -2.0 - z;
                }
                *o = z;
            }
        });
        self.level = z;
    }
}

/// Dust (`bipolar == false`, impulses in (0, 1]) and Dust2 (`bipolar`,
/// impulses in (-1, 1]): random impulses at `density` per second on average.
pub struct DustUnit<const BIPOLAR: bool> {
    density: f32,
    thresh: f32,
    scale: f32,
}

pub type Dust = DustUnit<false>;
pub type Dust2 = DustUnit<true>;

impl<const BIPOLAR: bool> Construct for DustUnit<BIPOLAR> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = DustUnit { density: 0.0, thresh: 0.0, scale: 0.0 };
        u.next(io, cx);
        u
    }
}

impl<const BIPOLAR: bool> Unit for DustUnit<BIPOLAR> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let density = io.in0(0);
        if density != self.density {
            self.thresh = (density as f64 * cx.rate.sample_dur) as f32;
            let span = if BIPOLAR { 2.0 } else { 1.0 };
            self.scale = if self.thresh > 0.0 { span / self.thresh } else { 0.0 };
            self.density = density;
        }
        let (thresh, scale) = (self.thresh, self.scale);
        let out = io.out(0);
        with_rgen(cx, |g| {
            for o in out.iter_mut() {
                let z = g.frand();
                *o = if z < thresh {
                    if BIPOLAR {
                        z * scale - 1.0
                    } else {
                        z * scale
                    }
                } else {
                    0.0
                };
            }
        });
    }
}

/// Samples until the next breakpoint of the LFNoise units, at least `min`.
#[inline(always)]
fn segment_length(sample_rate: f64, freq: f32, min: i32) -> i32 {
    d2i(sample_rate / sc_max(freq, 0.001) as f64).max(min)
}

/// A new random value every 1/freq seconds, held: in [-1, 1) (LFNoise0),
/// or with `COIN` either -1 or +1 (LFClipNoise).
pub struct HeldNoise<const COIN: bool> {
    level: f32,
    counter: i32,
}

pub type LFNoise0 = HeldNoise<false>;
pub type LFClipNoise = HeldNoise<true>;

impl<const COIN: bool> Construct for HeldNoise<COIN> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = HeldNoise { level: 0.0, counter: 0 };
        u.next(io, cx);
        u
    }
}

impl<const COIN: bool> Unit for HeldNoise<COIN> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let freq = io.in0(0);
        let sr = cx.rate.sample_rate;
        let out = io.out(0);
        let (mut level, mut counter) = (self.level, self.counter);
        with_rgen(cx, |g| {
            let mut start = 0;
            while start < out.len() {
                if counter <= 0 {
                    counter = segment_length(sr, freq, 1);
                    level = if COIN { g.fcoin() } else { g.frand2() };
                }
                let n = (out.len() - start).min(counter as usize);
                counter -= n as i32;
                out[start..start + n].fill(level);
                start += n;
            }
        });
        self.level = level;
        self.counter = counter;
    }
}

/// LFNoise1: straight lines between random values every 1/freq seconds.
pub struct LFNoise1 {
    level: f32,
    slope: f32,
    counter: i32,
}

impl Construct for LFNoise1 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let level = cx.world.rgen.frand2();
        let mut u = LFNoise1 { level, slope: 0.0, counter: 0 };
        u.next(io, cx);
        u
    }
}

impl Unit for LFNoise1 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let freq = io.in0(0);
        let sr = cx.rate.sample_rate;
        let out = io.out(0);
        let (mut level, mut slope, mut counter) = (self.level, self.slope, self.counter);
        with_rgen(cx, |g| {
            let mut start = 0;
            while start < out.len() {
                if counter <= 0 {
                    counter = segment_length(sr, freq, 1);
                    let next_level = g.frand2();
                    slope = (next_level - level) / counter as f32;
                }
                let n = (out.len() - start).min(counter as usize);
                counter -= n as i32;
                for o in &mut out[start..start + n] {
                    *o = level;
                    level += slope;
                }
                start += n;
            }
        });
        self.level = level;
        self.slope = slope;
        self.counter = counter;
    }
}

/// LFNoise2: quadratic curves through the midpoints of random values
/// drawn every 1/freq seconds.
pub struct LFNoise2 {
    level: f32,
    slope: f32,
    curve: f32,
    next_value: f32,
    next_midpt: f32,
    counter: i32,
}

impl Construct for LFNoise2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let next_value = cx.world.rgen.frand2();
        let mut u = LFNoise2 { level: 0.0, slope: 0.0, curve: 0.0, next_value, next_midpt: next_value * 0.5, counter: 0 };
        u.next(io, cx);
        u
    }
}

impl Unit for LFNoise2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let freq = io.in0(0);
        let sr = cx.rate.sample_rate;
        let out = io.out(0);
        let (mut level, mut slope, mut curve, mut counter) = (self.level, self.slope, self.curve, self.counter);
        let (mut next_value, mut next_midpt) = (self.next_value, self.next_midpt);
        with_rgen(cx, |g| {
            let mut start = 0;
            while start < out.len() {
                if counter <= 0 {
                    let value = next_value;
                    next_value = g.frand2();
                    level = next_midpt;
                    next_midpt = ((next_value + value) as f64 * 0.5) as f32;
                    counter = segment_length(sr, freq, 2);
                    let len = counter as f32;
                    curve = 2.0 * (next_midpt - level - len * slope) / (len * len + len);
                }
                let n = (out.len() - start).min(counter as usize);
                counter -= n as i32;
                for o in &mut out[start..start + n] {
                    *o = level;
                    slope += curve;
                    level += slope;
                }
                start += n;
            }
        });
        self.level = level;
        self.slope = slope;
        self.curve = curve;
        self.counter = counter;
        self.next_value = next_value;
        self.next_midpt = next_midpt;
    }
}

// ---------------------------------------------------------------------------
// Random values chosen once, at construction

/// Units that only draw a value when built; afterwards they keep it.
macro_rules! init_only_unit {
    ($(#[$doc:meta])* $name:ident, |$io:ident, $g:ident| $value:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl Construct for $name {
            fn new(_spec: &UnitSpec<'_>, $io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
                let $g = &mut cx.world.rgen;
                let v: f32 = $value;
                $io.out(0)[0] = v;
                $name
            }
        }

        impl Unit for $name {
            fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
        }
    };
}

init_only_unit!(
    /// Rand: uniform in [lo, hi).
    Rand,
    |io, g| {
        let lo = io.in0(0);
        g.frand() * (io.in0(1) - lo) + lo
    }
);

init_only_unit!(
    /// IRand: uniform integer in lo..=hi.
    IRand,
    |io, g| {
        let lo = f2i(io.in0(0));
        let hi = f2i(io.in0(1));
        g.irand(hi.wrapping_sub(lo).wrapping_add(1)).wrapping_add(lo) as f32
    }
);

init_only_unit!(
    /// ExpRand: exponentially distributed in [lo, hi) (same signs).
    ExpRand,
    |io, g| {
        let lo = io.in0(0);
        let ratio = io.in0(1) / lo;
        ratio.powf(g.frand()) * lo
    }
);

init_only_unit!(
    /// LinRand: linearly distributed in [lo, hi), skewed to lo when
    /// `minmax <= 0`, else to hi.
    LinRand,
    |io, g| {
        let lo = io.in0(0);
        let range = io.in0(1) - lo;
        let n = f2i(io.in0(2));
        let a = g.frand();
        let b = g.frand();
        if n <= 0 {
            sc_min(a, b) * range + lo
        } else {
            sc_max(a, b) * range + lo
        }
    }
);

init_only_unit!(
    /// NRand: mean of `n` uniform values in [lo, hi) (bell-shaped for n > 2).
    NRand,
    |io, g| {
        let lo = io.in0(0);
        let range = io.in0(1) - lo;
        let n = f2i(io.in0(2));
        let mut sum = 0.0f32;
        for _ in 0..n.max(0) {
            sum += g.frand();
        }
        (sum / n as f32) * range + lo
    }
);

/// TRand: a new uniform value in [lo, hi) at each trigger (a rise from
/// <= 0 to > 0), held in between.
pub struct TRand {
    trig: f32,
    value: f32,
    audio_bounds: bool,
}

impl Construct for TRand {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let lo = io.in0(0);
        let value = cx.world.rgen.frand() * (io.in0(1) - lo) + lo;
        io.out(0)[0] = value;
        let audio_bounds = spec.rate == Rate::Audio && io.in_rate(0) == Rate::Audio;
        TRand { trig: io.in0(2), value, audio_bounds }
    }
}

impl Unit for TRand {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (lo, hi, trig) = (io.inp(0), io.inp(1), io.inp(2));
        let out = io.out(0);
        if out.len() == 1 {
            let t = trig[0];
            if t > 0.0 && self.trig <= 0.0 {
                self.value = cx.world.rgen.frand() * (hi[0] - lo[0]) + lo[0];
            }
            out[0] = self.value;
            self.trig = t;
            return;
        }
        // Inputs that are not audio-rate hold one value for the block.
        let step = |s: &[f32]| if s.len() > 1 { 1 } else { 0 };
        let (ls, hs, ts) = if self.audio_bounds { (step(lo), step(hi), step(trig)) } else { (0, 0, step(trig)) };
        let (mut prev, mut value) = (self.trig, self.value);
        let g = &mut cx.world.rgen;
        for (i, o) in out.iter_mut().enumerate() {
            let t = trig[i * ts];
            if t > 0.0 && prev <= 0.0 {
                let l = lo[i * ls];
                value = g.frand() * (hi[i * hs] - l) + l;
            }
            *o = value;
            prev = t;
        }
        self.trig = prev;
        self.value = value;
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;
