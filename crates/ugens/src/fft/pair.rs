//! PV units that combine two spectra into the first.

use super::pv::{bins_of, Form, Spec, TwoBuffers};
use crate::rgen::RGen;
use crate::unit::Wires;
use std::cell::Cell;

/// scsynth's `sc_max` for floats: `b` only when `a < b`.
#[inline(always)]
fn max_f32(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

/// `PV_MagMul(chainA, chainB)`: A's magnitudes times B's.
pub struct MagMul;

impl TwoBuffers for MagMul {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        p.dc().set(p.dc().get() * q.dc().get());
        p.nyq().set(p.nyq().get() * q.nyq().get());
        for i in 0..p.bins() {
            p.a(i).set(p.a(i).get() * q.a(i).get());
        }
    }
}

/// `PV_MagDiv(chainA, chainB, zeroed)`: A's magnitudes over B's, which
/// count as at least `zeroed`.
pub struct MagDiv;

impl TwoBuffers for MagDiv {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        let z = io.in0(2);
        p.dc().set(p.dc().get() / max_f32(q.dc().get(), z));
        p.nyq().set(p.nyq().get() / max_f32(q.nyq().get(), z));
        for i in 0..p.bins() {
            p.a(i).set(p.a(i).get() / max_f32(q.a(i).get(), z));
        }
    }
}

/// `PV_CopyPhase(chainA, chainB)`: A's magnitudes with B's phases.
pub struct CopyPhase;

impl TwoBuffers for CopyPhase {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        // DC and Nyquist are real: their "phase" is their sign.
        for (a, b) in [(p.dc(), q.dc()), (p.nyq(), q.nyq())] {
            if (a.get() > 0.0) == (b.get() < 0.0) {
                a.set(-a.get());
            }
        }
        for i in 0..p.bins() {
            p.b(i).set(q.b(i).get());
        }
    }
}

/// `PV_Max(chainA, chainB)`: per bin, the louder of A and B.
pub struct Max;

impl TwoBuffers for Max {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        for (a, b) in [(p.dc(), q.dc()), (p.nyq(), q.nyq())] {
            if b.get().abs() > a.get().abs() {
                a.set(b.get());
            }
        }
        for i in 0..p.bins() {
            if q.a(i).get() > p.a(i).get() {
                p.set_bin(i, q, i);
            }
        }
    }
}

/// `PV_Min(chainA, chainB)`: per bin, the quieter of A and B.
pub struct Min;

impl TwoBuffers for Min {
    const FORM: Form = Form::Polar;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        for (a, b) in [(p.dc(), q.dc()), (p.nyq(), q.nyq())] {
            if b.get().abs() < a.get().abs() {
                a.set(b.get());
            }
        }
        for i in 0..p.bins() {
            if q.a(i).get() < p.a(i).get() {
                p.set_bin(i, q, i);
            }
        }
    }
}

/// `PV_Mul(chainA, chainB)`: complex product (three multiplications per bin).
pub struct Mul;

impl TwoBuffers for Mul {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        p.dc().set(p.dc().get() * q.dc().get());
        p.nyq().set(p.nyq().get() * q.nyq().get());
        for i in 0..p.bins() {
            let pre = p.a(i).get();
            let rm = pre * q.a(i).get();
            let im = p.b(i).get() * q.b(i).get();
            p.a(i).set(rm - im);
            p.b(i).set((pre + p.b(i).get()) * (q.a(i).get() + q.b(i).get()) - rm - im);
        }
    }
}

/// `PV_Div(chainA, chainB)`: complex quotient.
pub struct Div;

impl TwoBuffers for Div {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        p.dc().set(p.dc().get() / q.dc().get());
        p.nyq().set(p.nyq().get() / q.nyq().get());
        for i in 0..p.bins() {
            let norm = q.a(i).get() * q.a(i).get() + q.b(i).get() * q.b(i).get();
            let pre = p.a(i).get();
            p.a(i).set((pre * q.a(i).get() + p.b(i).get() * q.b(i).get()) / norm);
            p.b(i).set((p.b(i).get() * q.a(i).get() - pre * q.b(i).get()) / norm);
        }
    }
}

/// `PV_Add(chainA, chainB)`: complex sum.
pub struct Add;

impl TwoBuffers for Add {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], _io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        p.dc().set(p.dc().get() + q.dc().get());
        p.nyq().set(p.nyq().get() + q.nyq().get());
        for i in 0..p.bins() {
            p.a(i).set(p.a(i).get() + q.a(i).get());
            p.b(i).set(p.b(i).get() + q.b(i).get());
        }
    }
}

/// `PV_BinWipe(chainA, chainB, wipe)`: B's lowest (`wipe` > 0) or highest
/// (`wipe` < 0) fraction of bins over A, in whatever form they are.
pub struct BinWipe;

impl TwoBuffers for BinWipe {
    const FORM: Form = Form::Raw;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        Self
    }
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], io: &Wires<'_>, _rgen: &mut RGen) {
        let (p, q) = (Spec(p), Spec(q));
        let n = p.bins() as i32;
        let wipe = bins_of(io.in0(2), p.bins());
        if wipe > 0 {
            let wipe = wipe.min(n);
            p.dc().set(q.dc().get());
            for i in 0..wipe as usize {
                p.set_bin(i, q, i);
            }
            if wipe == n {
                p.nyq().set(q.nyq().get());
            }
        } else if wipe < 0 {
            let wipe = wipe.max(-n);
            if wipe == -n {
                p.dc().set(q.dc().get());
            }
            for i in (n + wipe) as usize..n as usize {
                p.set_bin(i, q, i);
            }
            p.nyq().set(q.nyq().get());
        }
    }
}
