//! PV units that transform one spectrum with no randomness.

use crate::common::signal::trunc_i32;

use crate::common::spectrum::{self as coord};
use super::pv::{bins_of, clip_i32, Form, OneBuffer, Room, Spec};
use crate::rgen::RGen;
use crate::unit::Wires;
use crate::world::SndBuf;
use std::cell::Cell;

const TWOPI_F: f32 = 6.283_185_307_179_586;

fn spec(buf: &mut SndBuf) -> Spec<'_> {
    Spec(Cell::from_mut(&mut buf.data[..]).as_slice_of_cells())
}

/// `PV_MagAbove(chain, threshold)`: zeroes magnitudes below the threshold.
pub struct MagAbove;

impl OneBuffer for MagAbove {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        MagAbove
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let t = io.in0(1);
        let p = spec(buf);
        for c in [p.dc(), p.nyq()] {
            if c.get().abs() < t {
                c.set(0.0);
            }
        }
        for i in 0..p.bins() {
            if p.a(i).get() < t {
                p.a(i).set(0.0);
            }
        }
    }
}

/// `PV_MagBelow(chain, threshold)`: zeroes magnitudes above the threshold.
pub struct MagBelow;

impl OneBuffer for MagBelow {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        MagBelow
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let t = io.in0(1);
        let p = spec(buf);
        for c in [p.dc(), p.nyq()] {
            if c.get().abs() > t {
                c.set(0.0);
            }
        }
        for i in 0..p.bins() {
            if p.a(i).get() > t {
                p.a(i).set(0.0);
            }
        }
    }
}

/// `PV_MagClip(chain, threshold)`: limits magnitudes to the threshold.
pub struct MagClip;

impl OneBuffer for MagClip {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        MagClip
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let t = io.in0(1);
        let p = spec(buf);
        for c in [p.dc(), p.nyq()] {
            let v = c.get();
            if v.abs() > t {
                c.set(if v < 0.0 { -t } else { t });
            }
        }
        for i in 0..p.bins() {
            if p.a(i).get() > t {
                p.a(i).set(t);
            }
        }
    }
}

/// `PV_LocalMax(chain, threshold)`: keeps only bins louder than the
/// threshold and than both neighbours (DC and Nyquist count as neighbours).
pub struct LocalMax;

impl OneBuffer for LocalMax {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        LocalMax
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let t = io.in0(1);
        let p = spec(buf);
        let n = p.bins();
        if n < 2 {
            return;
        }
        let dc = p.dc().get().abs();
        let mag = p.a(0).get();
        if dc < t || dc < mag {
            p.dc().set(0.0);
        }
        if mag < t || mag < dc || mag < p.a(1).get() {
            p.a(0).set(0.0);
        }
        // Each bin is compared with its lower neighbour as already thinned.
        for i in 1..n - 1 {
            let m = p.a(i).get();
            if m < t || m < p.a(i - 1).get() || m < p.a(i + 1).get() {
                p.a(i).set(0.0);
            }
        }
        let nyq = p.nyq().get().abs();
        let mag = p.a(n - 1).get();
        if mag < t || mag < nyq || mag < p.a(n - 2).get() {
            p.a(n - 1).set(0.0);
        }
        if nyq < t || nyq < mag {
            p.nyq().set(0.0);
        }
    }
}

/// `PV_MagSquared(chain)`.
pub struct MagSquared;

impl OneBuffer for MagSquared {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        MagSquared
    }
    fn frame(&mut self, buf: &mut SndBuf, _io: &Wires<'_>, _rgen: &mut RGen) {
        let p = spec(buf);
        for c in [p.dc(), p.nyq()] {
            c.set(c.get() * c.get());
        }
        for i in 0..p.bins() {
            let m = p.a(i).get();
            p.a(i).set(m * m);
        }
    }
}

/// `PV_PhaseShift(chain, shift, integrate)`: adds `shift` to every phase;
/// with `integrate` the shifts accumulate from frame to frame.
pub struct PhaseShift {
    integral: f32,
}

impl OneBuffer for PhaseShift {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        PhaseShift { integral: 0.0 }
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let mut shift = io.in0(1);
        if trunc_i32(io.in0(2) as f64) > 0 {
            shift += self.integral;
            self.integral = shift % TWOPI_F;
        }
        let p = spec(buf);
        for i in 0..p.bins() {
            p.b(i).set(p.b(i).get() + shift);
        }
    }
}

/// `PV_PhaseShift90(chain)`: multiplies every bin by i.
pub struct PhaseShift90;

impl OneBuffer for PhaseShift90 {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        PhaseShift90
    }
    fn frame(&mut self, buf: &mut SndBuf, _io: &Wires<'_>, _rgen: &mut RGen) {
        let p = spec(buf);
        for i in 0..p.bins() {
            let re = p.a(i).get();
            p.a(i).set(-p.b(i).get());
            p.b(i).set(re);
        }
    }
}

/// `PV_PhaseShift270(chain)`: multiplies every bin by -i.
pub struct PhaseShift270;

impl OneBuffer for PhaseShift270 {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        PhaseShift270
    }
    fn frame(&mut self, buf: &mut SndBuf, _io: &Wires<'_>, _rgen: &mut RGen) {
        let p = spec(buf);
        for i in 0..p.bins() {
            let re = p.a(i).get();
            p.a(i).set(p.b(i).get());
            p.b(i).set(-re);
        }
    }
}

/// `PV_Conj(chain)`: the complex conjugate of every bin.
pub struct Conj;

impl OneBuffer for Conj {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Conj
    }
    fn frame(&mut self, buf: &mut SndBuf, _io: &Wires<'_>, _rgen: &mut RGen) {
        let p = spec(buf);
        for i in 0..p.bins() {
            p.b(i).set(0.0 - p.b(i).get());
        }
    }
}

/// `PV_BrickWall(chain, wipe)`: zeroes the lowest (`wipe` > 0) or highest
/// (`wipe` < 0) fraction of the bins, whatever form they are in.
pub struct BrickWall;

impl OneBuffer for BrickWall {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        BrickWall
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let p = spec(buf);
        let n = p.bins() as i32;
        let wipe = bins_of(io.in0(1), p.bins());
        if wipe > 0 {
            let wipe = wipe.min(n);
            p.dc().set(0.0);
            for i in 0..wipe as usize {
                p.zero_bin(i);
            }
            if wipe == n {
                p.nyq().set(0.0);
            }
        } else if wipe < 0 {
            let wipe = wipe.max(-n);
            if wipe == -n {
                p.dc().set(0.0);
            }
            for i in (n + wipe) as usize..n as usize {
                p.zero_bin(i);
            }
            p.nyq().set(0.0);
        }
    }
}

/// Walks a comb's phase across the spectrum (DC, the bins, Nyquist) and
/// calls `gap` where the comb is closed.
fn rect_comb(n: usize, teeth: f32, phase: f32, width: f32, mut gap: impl FnMut(Option<usize>, bool)) {
    let freq = teeth / (n as i32 + 1) as f32;
    let mut phase = phase;
    let step = |phase: &mut f32| {
        *phase += freq;
        if *phase >= 1.0 {
            *phase -= 1.0;
        } else if *phase < 0.0 {
            *phase += 1.0;
        }
    };
    if phase > width {
        gap(None, false);
    }
    step(&mut phase);
    for i in 0..n {
        if phase > width {
            gap(Some(i), false);
        }
        step(&mut phase);
    }
    if phase > width {
        gap(None, true);
    }
}

/// `PV_RectComb(chain, numTeeth, phase, width)`: zeroes the gaps of a
/// rectangular comb laid over the bins.
pub struct RectComb;

impl OneBuffer for RectComb {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        RectComb
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let p = spec(buf);
        rect_comb(p.bins(), io.in0(1), io.in0(2), io.in0(3), |bin, nyq| match bin {
            Some(i) => p.zero_bin(i),
            None if nyq => p.nyq().set(0.0),
            None => p.dc().set(0.0),
        });
    }
}

/// `PV_RectComb2(chainA, chainB, numTeeth, phase, width)`: fills the comb's
/// gaps in A with B.
pub struct RectComb2;

impl super::pv::TwoBuffers for RectComb2 {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        RectComb2
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        rect_comb(p.bins(), io.in0(2), io.in0(3), io.in0(4), |bin, nyq| match bin {
            Some(i) => p.set_bin(i, q, i),
            None if nyq => p.nyq().set(q.nyq().get()),
            None => p.dc().set(q.dc().get()),
        });
    }
}

/// `PV_MagSmear(chain, bins)`: averages each magnitude with its `bins`
/// neighbours on either side.
pub struct MagSmear {
    room: Room<f32>,
}

impl OneBuffer for MagSmear {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        MagSmear { room: Room::new(samples) }
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        if self.room.claim(n, buf.samples()).is_none() {
            return;
        }
        coord::to_polar(buf);
        let p = spec(buf);
        let width = clip_i32(trunc_i32(io.in0(1) as f64), 0, n as i32 - 1);
        let scale = 1.0 / (2 * width + 1) as f32;
        let q = &mut self.room.data;
        for j in 0..n as i32 {
            let mut sum = 0.0f32;
            for pos in j - width..=j + width {
                if pos >= 0 && pos < n as i32 {
                    sum += p.a(pos as usize).get();
                }
            }
            q[2 * j as usize] = sum * scale;
            q[2 * j as usize + 1] = p.b(j as usize).get();
        }
        for i in 0..n {
            p.a(i).set(q[2 * i]);
            p.b(i).set(q[2 * i + 1]);
        }
    }
}

/// `PV_BinShift(chain, stretch, shift, interp)`: moves bins to
/// `i * stretch + shift`, summing those that land together (optionally
/// shared between the two nearest bins).
pub struct BinShift {
    room: Room<f32>,
}

impl OneBuffer for BinShift {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        BinShift { room: Room::new(samples) }
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        if self.room.claim(n, buf.samples()).is_none() {
            return;
        }
        let (stretch, shift, interp) = (io.in0(1), io.in0(2), io.in0(3));
        coord::to_complex(buf);
        let p = spec(buf);
        let q = &mut self.room.data[..2 * n];
        q.fill(0.0);
        let mut fpos = shift;
        let in_range = |k: i32| k >= 0 && (k as usize) < n;
        if interp > 0.0 {
            for i in 0..n {
                let lo = trunc_i32(fpos.floor() as f64);
                let hi = lo.wrapping_add(1);
                let beta = fpos - fpos.floor();
                let alpha = 1.0 - beta;
                let (re, im) = (p.a(i).get(), p.b(i).get());
                if in_range(lo) {
                    q[2 * lo as usize] += re * alpha;
                    q[2 * lo as usize + 1] += im * alpha;
                }
                if in_range(hi) {
                    q[2 * hi as usize] += re * beta;
                    q[2 * hi as usize + 1] += im * beta;
                }
                fpos += stretch;
            }
        } else {
            for i in 0..n {
                let k = trunc_i32(fpos as f64 + 0.5);
                if in_range(k) {
                    q[2 * k as usize] += p.a(i).get();
                    q[2 * k as usize + 1] += p.b(i).get();
                }
                fpos += stretch;
            }
        }
        for (i, v) in q.iter().enumerate() {
            p.0[2 + i].set(*v);
        }
    }
}

/// `PV_MagShift(chain, stretch, shift)`: moves magnitudes to
/// `i * stretch + shift`, keeping every bin's own phase.
pub struct MagShift {
    room: Room<f32>,
}

impl OneBuffer for MagShift {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        MagShift { room: Room::new(samples) }
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        if self.room.claim(n, buf.samples()).is_none() {
            return;
        }
        let (stretch, shift) = (io.in0(1), io.in0(2));
        coord::to_polar(buf);
        let p = spec(buf);
        let q = &mut self.room.data[..2 * n];
        for i in 0..n {
            q[2 * i] = 0.0;
            q[2 * i + 1] = p.b(i).get();
        }
        let mut fpos = shift;
        for i in 0..n {
            let k = trunc_i32(fpos as f64 + 0.5);
            if k >= 0 && (k as usize) < n {
                q[2 * k as usize] += p.a(i).get();
            }
            fpos += stretch;
        }
        for (i, v) in q.iter().enumerate() {
            p.0[2 + i].set(*v);
        }
    }
}

/// `PV_MagFreeze(chain, freeze)`: while `freeze` > 0, replaces the
/// magnitudes with those of the last frame before it.
pub struct MagFreeze {
    room: Room<f32>,
    dc: f32,
    nyq: f32,
}

impl OneBuffer for MagFreeze {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, samples: usize) -> Self {
        MagFreeze { room: Room::new(coord::num_bins(samples)), dc: 0.0, nyq: 0.0 }
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let n = coord::num_bins(buf.samples());
        let Some(first) = self.room.claim(n, n) else { return };
        // The first frame only records, so that nothing unset is ever played.
        let freeze = if first { 0.0 } else { io.in0(1) };
        coord::to_polar(buf);
        let p = spec(buf);
        let mags = &mut self.room.data[..n];
        if freeze > 0.0 {
            for (i, m) in mags.iter().enumerate() {
                p.a(i).set(*m);
            }
            p.dc().set(self.dc);
            p.nyq().set(self.nyq);
        } else {
            for (i, m) in mags.iter_mut().enumerate() {
                *m = p.a(i).get();
            }
            self.dc = p.dc().get();
            self.nyq = p.nyq().get();
        }
    }
}
