//! Noise and random-value units: the noise generators here (WhiteNoise,
//! PinkNoise, Dust, LFNoise0-2, GrayNoise, Crackle, Logistic, Hasher ...),
//! the dynamic LFDNoise family in [`dynamic`], random values in
//! [`random`], the weighted choice TWindex in [`twindex`]. All of them draw from `cx.world.rgen` in
//! the same order as scsynth, copying its state into a local for the length
//! of a block. That is the world's shared generator, or the synth's own one
//! when the server gives each synth its own (the engine swaps it in while
//! the synth runs).

mod dynamic;
#[cfg(target_arch = "x86_64")]
mod draw_x8;
mod random;
mod twindex;

pub use twindex::TWindex;
pub use dynamic::{LFDClipNoise, LFDNoise0, LFDNoise1, LFDNoise3};
pub use random::{
    CoinGate, ExpRand, IRand, LinRand, NRand, Rand, RandID, RandSeed, TExpRand, TIRand, TRand,
};

use crate::common::math::{d2i, sc_max};
use crate::rgen::RGen;
use crate::unit::{Construct, Lanes, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, MAX_LANES};

/// Sample `i` of an input; control and scalar inputs hold one value.
#[inline(always)]
fn at(sig: &[f32], i: usize) -> f32 {
    sig[if sig.len() > 1 { i } else { 0 }]
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

impl<const BIPOLAR: bool> DustUnit<BIPOLAR> {
    /// Threshold and scale for the density input.
    fn follow(&mut self, io: &Wires<'_>, rate: &RateInfo) {
        let density = io.in0(0);
        if density != self.density {
            self.thresh = (density as f64 * rate.sample_dur) as f32;
            let span = if BIPOLAR { 2.0 } else { 1.0 };
            self.scale = if self.thresh > 0.0 { span / self.thresh } else { 0.0 };
            self.density = density;
        }
    }
}

impl<const BIPOLAR: bool> Unit for DustUnit<BIPOLAR> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.follow(io, cx.rate);
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

/// The outputs and generators of a drawing unit's lanes: `None` when a lane
/// lacks either (the engine gives every lane both).
fn draw_lanes(lanes: &mut Lanes<'_>) -> Option<([*mut f32; MAX_LANES], [*mut RGen; MAX_LANES], usize)> {
    let mut out = [std::ptr::null_mut(); MAX_LANES];
    let mut gens = [std::ptr::null_mut(); MAX_LANES];
    let mut n = 0;
    for l in 0..lanes.len {
        let io = lanes.ios[l].as_mut()?;
        gens[l] = std::ptr::from_mut(lanes.rgens[l].as_deref_mut()?);
        out[l] = io.out_ptr(0);
        n = io.n();
    }
    Some((out, gens, n))
}

/// WhiteNoise of several synths, each drawing from its own generator
/// exactly the numbers it draws alone.
pub(crate) fn white_noise_lanes(lanes: &mut Lanes<'_>, _rate: &RateInfo) {
    let k = lanes.len;
    let Some((out, gens, n)) = draw_lanes(lanes) else { return };
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        let none = [0.0f32; MAX_LANES];
        // SAFETY: AVX2 is present; each output is lane l's own, valid for n
        // samples, and each generator lane l's synth's own.
        unsafe { draw_x8::draw::<{ draw_x8::WHITE }>(&gens[..k], &out[..k], &none, &none, n) };
        return;
    }
    for l in 0..k {
        // SAFETY: as above.
        let g = unsafe { &mut *gens[l] };
        for i in 0..n {
            // SAFETY: as above.
            unsafe { *out[l].add(i) = g.frand2() };
        }
    }
}

/// Dust or Dust2 of several synths, as `white_noise_lanes`.
pub(crate) fn dust_lanes<const BIPOLAR: bool>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let k = lanes.len;
    let mut thresh = [0.0f32; MAX_LANES];
    let mut scale = [0.0f32; MAX_LANES];
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_ref() else { return };
        let Some(u) = lanes.units[l].as_deref_mut().and_then(crate::unit::downcast_unit::<DustUnit<BIPOLAR>>) else {
            return;
        };
        u.follow(io, rate);
        thresh[l] = u.thresh;
        scale[l] = u.scale;
    }
    let Some((out, gens, n)) = draw_lanes(lanes) else { return };
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        // SAFETY: as in `white_noise_lanes`.
        unsafe {
            if BIPOLAR {
                draw_x8::draw::<{ draw_x8::DUST2 }>(&gens[..k], &out[..k], &thresh, &scale, n);
            } else {
                draw_x8::draw::<{ draw_x8::DUST }>(&gens[..k], &out[..k], &thresh, &scale, n);
            }
        }
        return;
    }
    for l in 0..k {
        // SAFETY: as in `white_noise_lanes`.
        let g = unsafe { &mut *gens[l] };
        for i in 0..n {
            let z = g.frand();
            let v = if z < thresh[l] {
                if BIPOLAR {
                    z * scale[l] - 1.0
                } else {
                    z * scale[l]
                }
            } else {
                0.0
            };
            // SAFETY: as above.
            unsafe { *out[l].add(i) = v };
        }
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

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;
