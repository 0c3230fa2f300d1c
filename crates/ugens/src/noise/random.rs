//! Random values: drawn once when built (Rand, IRand, ExpRand, LinRand,
//! NRand), at each trigger (TRand, TExpRand, TIRand, CoinGate), and the
//! units that choose the generator others draw from (RandSeed, RandID).

use super::at;
use crate::common::math::{f2i, sc_max, sc_min};
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
