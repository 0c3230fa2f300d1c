//! The chaotic maps: Cusp, FBSine, Gbman, Henon, Latoocarfian, LinCong,
//! Lorenz, Quad and Standard, each iterated `freq` times a second and read
//! held (N), linearly (L) or cubically (C) interpolated in between. Inputs
//! are read once per block; changing the initial values restarts the orbit.

use std::marker::PhantomData;

use super::clock::{cubic_at, cubic_coefs, mod2pi, run_hold, sc_mod_f64, timing, Curve, Line, ONE_SIXTH, PI, RECIP_PI};
use crate::common::signal::in0;
use crate::common::math::sc_max;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Input `i` as the double the maps compute with.
#[inline(always)]
fn arg(io: &Wires<'_>, i: usize) -> f64 {
    in0(io, i) as f64
}

/// Implements `Construct` (build the state, compute the first sample, keep
/// the state as it is then) and `Unit` for a map with a `run` method; a
/// generic unit names its one parameter and that parameter's trait.
macro_rules! map_unit {
    ($t:ident $(<$g:ident: $b:ident>)?, |$io:ident| $init:expr) => {
        impl$(<$g: $b>)? Construct for $t$(<$g>)? {
            fn new(_spec: &UnitSpec<'_>, $io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
                let mut u: Self = $init;
                u.run($io, cx.rate.sample_rate);
                u
            }
        }

        impl$(<$g: $b>)? Unit for $t$(<$g>)? {
            fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
                self.run(io, cx.rate.sample_rate);
            }
        }
    };
}

// ---------------------------------------------------------------------------
// The orbit state and the held, linear and cubic readings most maps share

/// The state of the maps read through `PlaneMap` and of StandardN, with the
/// initial values it last started from.
#[derive(Clone, Copy, Debug)]
pub struct Plane {
    x0: f64,
    y0: f64,
    xn: f64,
    yn: f64,
}

impl Plane {
    fn start(x0: f64, y0: f64) -> Plane {
        Plane { x0, y0, xn: x0, yn: y0 }
    }

    fn seeds_changed(&self, x0: f64, y0: f64) -> bool {
        self.x0 != x0 || self.y0 != y0
    }

    fn restart(&mut self, x0: f64, y0: f64) {
        *self = Plane::start(x0, y0);
    }
}

/// A map over a `Plane`, read once per block, whose orbit restarts when its
/// initial x or y changes. A map of x alone names x's input for both.
pub trait PlaneMap: Send + 'static {
    type Args: Copy;
    /// The inputs holding the initial x and y.
    const SEEDS: [usize; 2];
    fn read(io: &Wires<'_>) -> Self::Args;
    /// Iterates the state and returns the new x.
    fn step(s: &mut Plane, p: &Self::Args) -> f64;
    /// The output for an (interpolated) x.
    #[inline(always)]
    fn shape(x: f64) -> f64 {
        x
    }
}

/// A `PlaneMap` read cubically: how its first curve starts, and what a
/// restart does to the state and the history.
pub trait PlaneMapC: PlaneMap {
    /// The value all four coefficients of the first curve start at (its
    /// history starts at `x0`).
    fn first_coef(x0: f64) -> f64;
    /// Restarts the orbit and returns the value that enters the history.
    fn restart(s: &mut Plane, x0: f64, y0: f64) -> f64;
}

/// A `PlaneMap` whose output is x itself, held between iterations.
pub struct PlaneN<M> {
    s: Plane,
    counter: f32,
    map: PhantomData<M>,
}

impl<M: PlaneMap> PlaneN<M> {
    fn start(io: &Wires<'_>) -> Self {
        let [x0, y0] = M::SEEDS.map(|i| arg(io, i));
        PlaneN { s: Plane::start(x0, y0), counter: 0.0, map: PhantomData }
    }

    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let (p, [x0, y0]) = (M::read(io), M::SEEDS.map(|i| arg(io, i)));
        let (spc, _) = timing(in0(io, 0), sr);
        if self.s.seeds_changed(x0, y0) {
            self.s.restart(x0, y0);
        }
        let s = &mut self.s;
        let held = s.xn;
        run_hold(io.out(0), &mut self.counter, spc, held, || M::step(s, &p));
    }
}

map_unit!(PlaneN<M: PlaneMap>, |io| PlaneN::start(io));

/// A `PlaneMap` read along straight lines between iterations.
pub struct PlaneL<M> {
    s: Plane,
    counter: f32,
    line: Line,
    map: PhantomData<M>,
}

impl<M: PlaneMap> PlaneL<M> {
    fn start(io: &Wires<'_>) -> Self {
        let [x0, y0] = M::SEEDS.map(|i| arg(io, i));
        PlaneL { s: Plane::start(x0, y0), counter: 0.0, line: Line { prev: x0, frac: 0.0 }, map: PhantomData }
    }

    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let (p, [x0, y0]) = (M::read(io), M::SEEDS.map(|i| arg(io, i)));
        let (spc, slope) = timing(in0(io, 0), sr);
        if self.s.seeds_changed(x0, y0) {
            self.line.prev = self.s.xn;
            self.s.restart(x0, y0);
        }
        let s = &mut self.s;
        let target = s.xn;
        self.line.run(io.out(0), &mut self.counter, spc, slope, target, || M::step(s, &p), M::shape);
    }
}

map_unit!(PlaneL<M: PlaneMap>, |io| PlaneL::start(io));

/// A `PlaneMapC` read cubically between iterations.
pub struct PlaneC<M> {
    s: Plane,
    counter: f32,
    curve: Curve,
    map: PhantomData<M>,
}

impl<M: PlaneMapC> PlaneC<M> {
    fn start(io: &Wires<'_>) -> Self {
        let [x0, y0] = M::SEEDS.map(|i| arg(io, i));
        PlaneC { s: Plane::start(x0, y0), counter: 0.0, curve: Curve::new(x0, M::first_coef(x0)), map: PhantomData }
    }

    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let (p, [x0, y0]) = (M::read(io), M::SEEDS.map(|i| arg(io, i)));
        let (spc, slope) = timing(in0(io, 0), sr);
        if self.s.seeds_changed(x0, y0) {
            let entering = M::restart(&mut self.s, x0, y0);
            self.curve.push(entering);
        }
        let s = &mut self.s;
        let target = s.xn;
        self.curve.run(io.out(0), &mut self.counter, spc, slope, target, || M::step(s, &p));
    }
}

map_unit!(PlaneC<M: PlaneMapC>, |io| PlaneC::start(io));

// ---------------------------------------------------------------------------
// Cusp: x = a - b * sqrt(|x|)

/// Cusp's map; its parameters are a and b.
pub enum Cusp {}

impl PlaneMap for Cusp {
    type Args = (f64, f64);
    const SEEDS: [usize; 2] = [3, 3];

    fn read(io: &Wires<'_>) -> (f64, f64) {
        (arg(io, 1), arg(io, 2))
    }

    #[inline(always)]
    fn step(s: &mut Plane, &(a, b): &(f64, f64)) -> f64 {
        s.xn = a - b * s.xn.abs().sqrt();
        s.xn
    }
}

pub type CuspN = PlaneN<Cusp>;
pub type CuspL = PlaneL<Cusp>;

// ---------------------------------------------------------------------------
// FBSine: x = sin(im * y + fb * x), y = (a * y + c) mod 2π

/// The four coefficients of FBSine and Latoocarfian.
#[derive(Clone, Copy)]
pub struct Four {
    a: f64,
    b: f64,
    c: f64,
    d: f64,
}

impl Four {
    fn read(io: &Wires<'_>) -> Four {
        Four { a: arg(io, 1), b: arg(io, 2), c: arg(io, 3), d: arg(io, 4) }
    }
}

/// FBSine's map.
pub enum FBSine {}

impl PlaneMap for FBSine {
    type Args = Four;
    const SEEDS: [usize; 2] = [5, 6];

    fn read(io: &Wires<'_>) -> Four {
        Four::read(io)
    }

    #[inline(always)]
    fn step(s: &mut Plane, p: &Four) -> f64 {
        s.xn = (p.a * s.yn + p.b * s.xn).sin();
        s.yn = p.c * s.yn + p.d;
        s.yn = mod2pi(s.yn);
        s.xn
    }
}

impl PlaneMapC for FBSine {
    fn first_coef(_x0: f64) -> f64 {
        0.0
    }

    fn restart(s: &mut Plane, x0: f64, y0: f64) -> f64 {
        // Only x restarts here; y keeps its orbit, and the new x enters the history.
        s.x0 = x0;
        s.xn = x0;
        s.y0 = y0;
        x0
    }
}

pub type FBSineN = PlaneN<FBSine>;
pub type FBSineL = PlaneL<FBSine>;
pub type FBSineC = PlaneC<FBSine>;

// ---------------------------------------------------------------------------
// Gbman (gingerbread man): x' = 1 - y + |x|, y' = x

#[inline(always)]
fn gbman(xn: &mut f64, yn: &mut f64) -> f64 {
    let prev = *xn;
    *xn = if prev < 0.0 { 1.0 - *yn - prev } else { 1.0 - *yn + prev };
    *yn = prev;
    *xn
}

pub struct GbmanN {
    xn: f64,
    yn: f64,
    counter: f32,
}

impl GbmanN {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let (spc, _) = timing(in0(io, 0), sr);
        let (mut xn, mut yn) = (self.xn, self.yn);
        run_hold(io.out(0), &mut self.counter, spc, xn, || gbman(&mut xn, &mut yn));
        self.xn = xn;
        self.yn = yn;
    }
}

map_unit!(GbmanN, |io| GbmanN { xn: arg(io, 1), yn: arg(io, 2), counter: 0.0 });

/// GbmanL draws its lines from y (the previous x) to x.
pub struct GbmanL {
    xn: f64,
    yn: f64,
    counter: f32,
    frac: f64,
}

impl GbmanL {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let (spc, slope) = timing(in0(io, 0), sr);
        let (mut xn, mut yn) = (self.xn, self.yn);
        let mut line = Line { prev: yn, frac: self.frac };
        line.run(io.out(0), &mut self.counter, spc, slope, xn, || gbman(&mut xn, &mut yn), |v| v);
        self.xn = xn;
        self.yn = yn;
        self.frac = line.frac;
    }
}

map_unit!(GbmanL, |io| GbmanL { xn: arg(io, 1), yn: arg(io, 2), counter: 0.0, frac: 0.0 });

// ---------------------------------------------------------------------------
// Henon: x = 1 - a x[n-1]^2 + b x[n-2]; an orbit that leaves ±1.5 stops
// until a parameter changes.

#[derive(Clone, Copy)]
struct HenonArgs {
    a: f64,
    b: f64,
    x0: f64,
    x1: f64,
}

impl HenonArgs {
    fn read(io: &Wires<'_>) -> HenonArgs {
        HenonArgs { a: arg(io, 1), b: arg(io, 2), x0: arg(io, 3), x1: arg(io, 4) }
    }

    fn differs(&self, o: &HenonArgs) -> bool {
        self.a != o.a || self.b != o.b || self.x0 != o.x0 || self.x1 != o.x1
    }
}

#[inline(always)]
fn henon(p: &HenonArgs, xnm1: f64, xnm2: f64) -> f64 {
    1.0 - p.a * xnm1 * xnm1 + p.b * xnm2
}

/// State shared by the three Henon units.
struct HenonState {
    last: HenonArgs,
    xn: f64,
    xnm1: f64,
    xnm2: f64,
    counter: f32,
    stable: bool,
}

impl HenonState {
    fn new(io: &Wires<'_>) -> HenonState {
        let p = HenonArgs::read(io);
        HenonState { last: p, xn: p.x1, xnm1: p.x0, xnm2: p.x1, counter: 0.0, stable: true }
    }

    /// Takes this block's parameters; a change revives a stopped orbit,
    /// `reseed` putting its start back.
    fn update(&mut self, p: &HenonArgs, reseed: impl FnOnce(&mut HenonState)) {
        if p.differs(&self.last) {
            if !self.stable {
                reseed(self);
            }
            self.stable = true;
            self.last = *p;
        }
    }
}

pub struct HenonN {
    s: HenonState,
}

impl HenonN {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = HenonArgs::read(io);
        let (spc, _) = timing(in0(io, 0), sr);
        let s = &mut self.s;
        s.update(&p, |s| {
            s.xnm2 = p.x0;
            s.xnm1 = p.x0;
            s.xn = p.x1;
        });
        let mut c = s.counter;
        for o in io.out(0).iter_mut() {
            if c >= spc {
                c -= spc;
                if s.stable {
                    s.xn = henon(&p, s.xnm1, s.xnm2);
                    if s.xn > 1.5 || s.xn < -1.5 {
                        s.stable = false;
                        s.xn = 0.0;
                        s.xnm2 = p.x0;
                        s.xnm1 = p.x1;
                    } else {
                        s.xnm2 = s.xnm1;
                        s.xnm1 = s.xn;
                    }
                }
            }
            c += 1.0;
            *o = s.xnm2 as f32;
        }
        s.counter = c;
    }
}

map_unit!(HenonN, |io| HenonN { s: HenonState::new(io) });

pub struct HenonL {
    s: HenonState,
    frac: f64,
}

impl HenonL {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = HenonArgs::read(io);
        let (spc, slope) = timing(in0(io, 0), sr);
        let s = &mut self.s;
        s.update(&p, |s| {
            s.xnm2 = p.x0;
            s.xnm1 = p.x0;
            s.xn = p.x1;
        });
        let (mut c, mut frac) = (s.counter, self.frac);
        let mut diff = s.xnm1 - s.xnm2;
        for o in io.out(0).iter_mut() {
            if c >= spc {
                c -= spc;
                if s.stable {
                    s.xn = henon(&p, s.xnm1, s.xnm2);
                    if s.xn > 1.5 || s.xn < -1.5 {
                        s.stable = false;
                        diff = 0.0;
                        s.xn = 1.0;
                        s.xnm1 = 0.0;
                        s.xnm2 = 0.0;
                    } else {
                        s.xnm2 = s.xnm1;
                        s.xnm1 = s.xn;
                        diff = s.xnm1 - s.xnm2;
                    }
                    frac = 0.0;
                }
            }
            c += 1.0;
            *o = (s.xnm2 + diff * frac) as f32;
            frac += slope;
        }
        s.counter = c;
        self.frac = frac;
    }
}

map_unit!(HenonL, |io| HenonL { s: HenonState::new(io), frac: 0.0 });

pub struct HenonC {
    s: HenonState,
    xnm3: f64,
    coefs: [f64; 4],
    frac: f64,
}

impl HenonC {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = HenonArgs::read(io);
        let (spc, slope) = timing(in0(io, 0), sr);
        let s = &mut self.s;
        let mut xnm3 = self.xnm3;
        s.update(&p, |s| {
            xnm3 = s.xnm2;
            s.xnm2 = p.x0;
            s.xnm1 = p.x0;
            s.xn = p.x1;
        });
        let (mut c, mut frac) = (s.counter, self.frac);
        for o in io.out(0).iter_mut() {
            if c >= spc {
                c -= spc;
                frac = 0.0;
                if s.stable {
                    xnm3 = s.xnm2;
                    s.xnm2 = s.xnm1;
                    s.xnm1 = s.xn;
                    s.xn = henon(&p, s.xnm1, s.xnm2);
                    if s.xn > 1.5 || s.xn < -1.5 {
                        s.stable = false;
                        s.xn = 1.0;
                        s.xnm1 = 0.0;
                        s.xnm2 = 0.0;
                        xnm3 = 0.0;
                    }
                    self.coefs = cubic_coefs(xnm3, s.xnm2, s.xnm1, s.xn);
                }
            }
            c += 1.0;
            *o = cubic_at(frac as f32, &self.coefs) as f32;
            frac += slope;
        }
        s.counter = c;
        self.frac = frac;
        self.xnm3 = xnm3;
    }
}

map_unit!(HenonC, |io| HenonC { s: HenonState::new(io), xnm3: arg(io, 4), coefs: [0.0; 4], frac: 0.0 });

// ---------------------------------------------------------------------------
// Latoocarfian: x' = sin(b y) + c sin(b x), y' = sin(a x) + d sin(a y)

/// Latoocarfian's map.
pub enum Latoocarfian {}

impl PlaneMap for Latoocarfian {
    type Args = Four;
    const SEEDS: [usize; 2] = [5, 6];

    fn read(io: &Wires<'_>) -> Four {
        Four::read(io)
    }

    #[inline(always)]
    fn step(s: &mut Plane, p: &Four) -> f64 {
        let x = s.xn;
        s.xn = (s.yn * p.b).sin() + p.c * (x * p.b).sin();
        s.yn = (x * p.a).sin() + p.d * (s.yn * p.a).sin();
        s.xn
    }
}

impl PlaneMapC for Latoocarfian {
    fn first_coef(x0: f64) -> f64 {
        x0
    }

    fn restart(s: &mut Plane, x0: f64, y0: f64) -> f64 {
        // The x from before the restart enters the history.
        let entering = s.xn;
        s.restart(x0, y0);
        entering
    }
}

pub type LatoocarfianN = PlaneN<Latoocarfian>;
pub type LatoocarfianL = PlaneL<Latoocarfian>;
pub type LatoocarfianC = PlaneC<Latoocarfian>;

// ---------------------------------------------------------------------------
// LinCong: x = (a x + c) mod m, scaled to [-1, 1)

#[derive(Clone, Copy)]
struct LinCongArgs {
    a: f64,
    c: f64,
    m: f64,
    scale: f64,
}

impl LinCongArgs {
    fn read(io: &Wires<'_>) -> LinCongArgs {
        let m = sc_max(in0(io, 3), 0.001) as f64;
        LinCongArgs { a: arg(io, 1), c: arg(io, 2), m, scale: 2.0 / m }
    }

    #[inline(always)]
    fn scaled(&self, xn: f64) -> f64 {
        xn * self.scale - 1.0
    }

    #[inline(always)]
    fn step(&self, xn: &mut f64) -> f64 {
        *xn = *xn * self.a + self.c;
        *xn = sc_mod_f64(*xn, self.m);
        self.scaled(*xn)
    }
}

pub struct LinCongN {
    xn: f64,
    counter: f32,
}

impl LinCongN {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = LinCongArgs::read(io);
        let (spc, _) = timing(in0(io, 0), sr);
        let mut xn = self.xn;
        run_hold(io.out(0), &mut self.counter, spc, p.scaled(xn), || p.step(&mut xn));
        self.xn = xn;
    }
}

map_unit!(LinCongN, |io| LinCongN { xn: arg(io, 4), counter: 0.0 });

pub struct LinCongL {
    xn: f64,
    counter: f32,
    line: Line,
}

impl LinCongL {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = LinCongArgs::read(io);
        let (spc, slope) = timing(in0(io, 0), sr);
        let mut xn = self.xn;
        self.line.run(io.out(0), &mut self.counter, spc, slope, p.scaled(xn), || p.step(&mut xn), |v| v);
        self.xn = xn;
    }
}

// The first line starts from the unscaled initial value, as in scsynth.
map_unit!(LinCongL, |io| LinCongL { xn: arg(io, 4), counter: 0.0, line: Line { prev: arg(io, 4), frac: 0.0 } });

pub struct LinCongC {
    xn: f64,
    counter: f32,
    curve: Curve,
}

impl LinCongC {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = LinCongArgs::read(io);
        let (spc, slope) = timing(in0(io, 0), sr);
        let mut xn = self.xn;
        self.curve.run(io.out(0), &mut self.counter, spc, slope, p.scaled(xn), || p.step(&mut xn));
        self.xn = xn;
    }
}

map_unit!(LinCongC, |io| LinCongC { xn: arg(io, 4), counter: 0.0, curve: Curve::new(arg(io, 4), arg(io, 4)) });

// ---------------------------------------------------------------------------
// Lorenz: the Lorenz system integrated by fourth-order Runge-Kutta with step h

pub struct LorenzL {
    seeds: [f64; 3],
    x: [f64; 3],
    counter: f32,
    line: Line,
}

#[derive(Clone, Copy)]
struct LorenzArgs {
    s: f64,
    r: f64,
    b: f64,
    h: f64,
}

impl LorenzArgs {
    /// The derivative at `(x, y, z)` times h (σ·h for x, as `hs`).
    #[inline(always)]
    fn slope(&self, hs: f64, x: f64, y: f64, z: f64, dx: f64, dy: f64, dz: f64) -> [f64; 3] {
        [
            hs * (y + dy - x - dx),
            self.h * ((x + dx) * (self.r - z - dz) - (y + dy)),
            self.h * ((x + dx) * (y + dy) - self.b * (z + dz)),
        ]
    }

    #[inline(always)]
    fn step(&self, v: &mut [f64; 3]) -> f64 {
        let [x, y, z] = *v;
        let hs = self.h * self.s;
        let k1 = [hs * (y - x), self.h * (x * (self.r - z) - y), self.h * (x * y - self.b * z)];
        let k2 = self.slope(hs, x, y, z, k1[0] * 0.5, k1[1] * 0.5, k1[2] * 0.5);
        let k3 = self.slope(hs, x, y, z, k2[0] * 0.5, k2[1] * 0.5, k2[2] * 0.5);
        let k4 = self.slope(hs, x, y, z, k3[0], k3[1], k3[2]);
        for i in 0..3 {
            v[i] += (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i]) * ONE_SIXTH;
        }
        v[0]
    }
}

impl LorenzL {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let p = LorenzArgs { s: arg(io, 1), r: arg(io, 2), b: arg(io, 3), h: arg(io, 4) };
        let seeds = [arg(io, 5), arg(io, 6), arg(io, 7)];
        let (spc, slope) = timing(in0(io, 0), sr);
        if self.seeds != seeds {
            self.line.prev = self.x[0];
            self.seeds = seeds;
            self.x = seeds;
        }
        let x = &mut self.x;
        let target = x[0];
        let scale = 0.04f32 as f64;
        self.line.run(io.out(0), &mut self.counter, spc, slope, target, || p.step(x), |v| v * scale);
    }
}

map_unit!(LorenzL, |io| LorenzL {
    seeds: [arg(io, 5), arg(io, 6), arg(io, 7)],
    x: [arg(io, 5), arg(io, 6), arg(io, 7)],
    counter: 0.0,
    line: Line { prev: arg(io, 5), frac: 0.0 },
});

// ---------------------------------------------------------------------------
// Quad: x = a x^2 + b x + c

#[derive(Clone, Copy)]
pub struct QuadArgs {
    a: f64,
    b: f64,
    c: f64,
}

impl QuadArgs {
    fn read(io: &Wires<'_>) -> QuadArgs {
        QuadArgs { a: arg(io, 1), b: arg(io, 2), c: arg(io, 3) }
    }
}

/// Quad's map.
pub enum Quad {}

impl PlaneMap for Quad {
    type Args = QuadArgs;
    const SEEDS: [usize; 2] = [4, 4];

    fn read(io: &Wires<'_>) -> QuadArgs {
        QuadArgs::read(io)
    }

    #[inline(always)]
    fn step(s: &mut Plane, p: &QuadArgs) -> f64 {
        s.xn = p.a * s.xn * s.xn + p.b * s.xn + p.c;
        s.xn
    }
}

impl PlaneMapC for Quad {
    fn first_coef(x0: f64) -> f64 {
        x0
    }

    fn restart(s: &mut Plane, x0: f64, y0: f64) -> f64 {
        // The x from before the restart enters the history.
        let entering = s.xn;
        s.restart(x0, y0);
        entering
    }
}

pub type QuadN = PlaneN<Quad>;
pub type QuadL = PlaneL<Quad>;
pub type QuadC = PlaneC<Quad>;

// ---------------------------------------------------------------------------
// Standard map: y = (y + k sin x) mod 2π, x = (x + y) mod 2π; output (x - π) / π

#[inline(always)]
fn standard(s: &mut Plane, k: f64) -> f64 {
    s.yn = s.yn + k * s.xn.sin();
    s.yn = mod2pi(s.yn);
    s.xn = s.xn + s.yn;
    s.xn = mod2pi(s.xn);
    s.xn
}

#[inline(always)]
fn standard_out(x: f64) -> f64 {
    (x - PI) * RECIP_PI
}

pub struct StandardN {
    s: Plane,
    counter: f32,
}

impl StandardN {
    fn run(&mut self, io: &mut Wires<'_>, sr: f64) {
        let (k, x0, y0) = (arg(io, 1), arg(io, 2), arg(io, 3));
        let (spc, _) = timing(in0(io, 0), sr);
        // The value shown until the next iteration comes from before a restart.
        let held = standard_out(self.s.xn);
        if self.s.seeds_changed(x0, y0) {
            self.s.restart(x0, y0);
        }
        let s = &mut self.s;
        run_hold(io.out(0), &mut self.counter, spc, held, || standard_out(standard(s, k)));
    }
}

map_unit!(StandardN, |io| StandardN { s: Plane::start(arg(io, 2), arg(io, 3)), counter: 0.0 });

/// The standard map; its parameters are k and the initial x and y.
pub enum Standard {}

impl PlaneMap for Standard {
    type Args = f64;
    const SEEDS: [usize; 2] = [2, 3];

    fn read(io: &Wires<'_>) -> f64 {
        arg(io, 1)
    }

    #[inline(always)]
    fn step(s: &mut Plane, k: &f64) -> f64 {
        standard(s, *k)
    }

    #[inline(always)]
    fn shape(x: f64) -> f64 {
        standard_out(x)
    }
}

pub type StandardL = PlaneL<Standard>;
