//! PV units that draw random numbers (from the synth's generator, as the
//! noise units do): PV_MagNoise on every frame, the others when their
//! trigger fires (and on their first frame).

use crate::common::signal::trunc_i32;

use crate::common::spectrum::{self as coord, Coord};
use super::pv::{bins_of, clip_i32, Form, OneBuffer, Room, Spec, Trigger, TwoBuffers};
use crate::rgen::RGen;
use crate::unit::Wires;
use crate::world::SndBuf;
use std::cell::Cell;

const TWOPI: f64 = std::f64::consts::PI * 2.0;

fn spec(buf: &mut SndBuf) -> Spec<'_> {
    Spec(Cell::from_mut(&mut buf.data[..]).as_slice_of_cells())
}

/// A random order of `0..order.len()` (scsynth's in-place shuffle).
fn shuffle(order: &mut [i32], rgen: &mut RGen) {
    let n = order.len();
    for (i, o) in order.iter_mut().enumerate() {
        *o = i as i32;
    }
    for i in 0..n {
        let j = trunc_i32((rgen.frand() * (n - i) as i32 as f32) as f64);
        if let Some(j) = usize::try_from(j).ok().filter(|&j| j < n) {
            order.swap(i, j);
        }
    }
}

/// `PV_MagNoise(chain)`: multiplies every magnitude by a random value in [-1, 1).
pub struct MagNoise;

impl OneBuffer for MagNoise {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        MagNoise
    }
    fn frame(&mut self, buf: &mut SndBuf, _io: &Wires<'_>, rgen: &mut RGen) {
        let complex = coord::coord(buf) == Coord::Complex;
        let p = spec(buf);
        for i in 0..p.bins() {
            let r = rgen.frand2();
            p.a(i).set(p.a(i).get() * r);
            if complex {
                p.b(i).set(p.b(i).get() * r);
            }
        }
        p.dc().set(p.dc().get() * rgen.frand2());
        p.nyq().set(p.nyq().get() * rgen.frand2());
    }
}

/// `PV_RandComb(chain, wipe, trig)`: zeroes a random `wipe` fraction of the
/// bins; a new random choice on each trigger.
pub struct RandComb {
    order: Room<i32>,
    trig: Trigger,
}

impl OneBuffer for RandComb {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        RandComb { order: Room::new(coord::num_bins(samples)), trig: Trigger::default() }
    }
    fn watch(&mut self, io: &Wires<'_>) {
        self.trig.watch(io.in0(2));
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        let Some(first) = self.order.claim(n, n) else { return };
        if first || self.trig.take() {
            shuffle(&mut self.order.data[..n], rgen);
        }
        let count = clip_i32(bins_of(io.in0(1), n), 0, n as i32) as usize;
        let p = spec(buf);
        for &k in &self.order.data[..count] {
            p.zero_bin(k as usize);
        }
        if count == n {
            p.dc().set(0.0);
            p.nyq().set(0.0);
        }
    }
}

/// `PV_RandWipe(chainA, chainB, wipe, trig)`: B's bins over A's in a random
/// `wipe` fraction of the bins; a new random choice on each trigger.
pub struct RandWipe {
    order: Room<i32>,
    trig: Trigger,
}

impl TwoBuffers for RandWipe {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        RandWipe { order: Room::new(coord::num_bins(samples)), trig: Trigger::default() }
    }
    fn watch(&mut self, io: &Wires<'_>) {
        self.trig.watch(io.in0(3));
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], io: &Wires<'_>, rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        let n = p.bins();
        let Some(first) = self.order.claim(n, n) else { return };
        if first || self.trig.take() {
            shuffle(&mut self.order.data[..n], rgen);
        }
        let count = clip_i32(bins_of(io.in0(2), n), 0, n as i32) as usize;
        for &k in &self.order.data[..count] {
            p.set_bin(k as usize, q, k as usize);
        }
    }
}

/// `PV_Diffuser(chain, trig)`: adds a random phase to every bin; new
/// phases on each trigger. As in scsynth, the trigger input also sets the
/// fraction of bins shifted, so a zero trigger leaves the spectrum alone.
pub struct Diffuser {
    shifts: Room<f32>,
    trig: Trigger,
}

impl OneBuffer for Diffuser {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        Diffuser { shifts: Room::new(coord::num_bins(samples)), trig: Trigger::default() }
    }
    fn watch(&mut self, io: &Wires<'_>) {
        self.trig.watch(io.in0(1));
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        let Some(first) = self.shifts.claim(n, n) else { return };
        if first || self.trig.take() {
            for s in &mut self.shifts.data[..n] {
                *s = (rgen.frand() as f64 * TWOPI) as f32;
            }
        }
        let count = clip_i32(bins_of(io.in0(1), n), 0, n as i32) as usize;
        coord::to_polar(buf);
        let p = spec(buf);
        for (i, s) in self.shifts.data[..count].iter().enumerate() {
            p.b(i).set(p.b(i).get() + *s);
        }
    }
}

/// `PV_BinScramble(chain, wipe, width, trig)`: moves a `wipe` fraction of
/// the bins to random places at most `width` (a fraction of the bins) away;
/// a new scramble on each trigger.
pub struct BinScramble {
    /// Destinations, then sources, of the moves.
    moves: Room<i32>,
    temp: Vec<f32>,
    trig: Trigger,
}

impl BinScramble {
    fn choose(&mut self, n: usize, width: f32, rgen: &mut RGen) {
        let (to, from) = self.moves.data[..2 * n].split_at_mut(n);
        shuffle(to, rgen);
        let width = bins_of(width, n);
        for (f, &k) in from.iter_mut().zip(to.iter()) {
            let lo = 0.max(k.wrapping_sub(width));
            let hi = (n as i32 - 1).min(k.wrapping_add(width));
            *f = trunc_i32((rgen.frand() * (hi.wrapping_sub(lo)) as f32 + lo as f32) as f64);
        }
    }
}

impl OneBuffer for BinScramble {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        BinScramble {
            moves: Room::new(2 * coord::num_bins(samples)),
            temp: vec![0.0; samples],
            trig: Trigger::default(),
        }
    }
    fn watch(&mut self, io: &Wires<'_>) {
        self.trig.watch(io.in0(3));
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        if 2 + 2 * n > self.temp.len() {
            return;
        }
        let Some(first) = self.moves.claim(n, 2 * n) else { return };
        if first || self.trig.take() {
            self.choose(n, io.in0(2), rgen);
        }
        let count = trunc_i32((n as f32 * io.in0(1).clamp(0.0, 1.0)) as f64).max(0) as usize;
        let p = spec(buf);
        let (to, from) = self.moves.data[..2 * n].split_at(n);
        let q = &mut self.temp;
        let bin = |k: i32| -> (f32, f32) {
            // A source outside the spectrum (a negative width) reads as silence.
            if k >= 0 && (k as usize) < n {
                (p.a(k as usize).get(), p.b(k as usize).get())
            } else {
                (0.0, 0.0)
            }
        };
        for j in 0..n {
            let src = if j < count { from[j] } else { to[j] };
            let (a, b) = bin(src);
            let d = to[j] as usize;
            q[2 + 2 * d] = a;
            q[3 + 2 * d] = b;
        }
        for i in 0..n {
            p.a(i).set(q[2 + 2 * i]);
            p.b(i).set(q[3 + 2 * i]);
        }
    }
}
