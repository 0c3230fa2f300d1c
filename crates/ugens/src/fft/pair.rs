//! PV units that combine two spectra into the first.

use super::pv::{bins_of, Form, Spec, TwoBuffers};
use crate::rgen::RGen;
use crate::unit::Wires;
use std::cell::Cell;

/// Declares a stateless unit combining two spectra: its struct and a
/// `TwoBuffers` impl whose frame runs the body on A (`p`, written) and B
/// (`q`) in the given form.
macro_rules! pair_unit {
    ($(#[$doc:meta])* $name:ident, $form:ident, |$p:ident, $q:ident, $io:ident| $body:block) => {
        $(#[$doc])*
        pub struct $name;

        impl TwoBuffers for $name {
            const FORM: Form = Form::$form;
            fn new(_io: &Wires<'_>, _samples: usize) -> Self {
                Self
            }
            fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], $io: &Wires<'_>, _rgen: &mut RGen) {
                let ($p, $q) = (Spec(p), Spec(q));
                $body
            }
        }
    };
}

/// scsynth's `sc_max` for floats: `b` only when `a < b`.
#[inline(always)]
fn max_f32(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

/// Moves B's DC, Nyquist and bins into A wherever `takes(b, a)` says B
/// wins: for DC and Nyquist on their sizes, for bins on their magnitudes.
#[inline(always)]
fn take_where(p: Spec<'_>, q: Spec<'_>, takes: impl Fn(f32, f32) -> bool) {
    for (a, b) in [(p.dc(), q.dc()), (p.nyq(), q.nyq())] {
        if takes(b.get().abs(), a.get().abs()) {
            a.set(b.get());
        }
    }
    for i in 0..p.bins() {
        if takes(q.a(i).get(), p.a(i).get()) {
            p.set_bin(i, q, i);
        }
    }
}

pair_unit!(
    /// `PV_MagMul(chainA, chainB)`: A's magnitudes times B's.
    MagMul, Polar, |p, q, _io| {
        p.dc().set(p.dc().get() * q.dc().get());
        p.nyq().set(p.nyq().get() * q.nyq().get());
        for i in 0..p.bins() {
            p.a(i).set(p.a(i).get() * q.a(i).get());
        }
    }
);

pair_unit!(
    /// `PV_MagDiv(chainA, chainB, zeroed)`: A's magnitudes over B's, which
    /// count as at least `zeroed`.
    MagDiv, Polar, |p, q, io| {
        let z = io.in0(2);
        p.dc().set(p.dc().get() / max_f32(q.dc().get(), z));
        p.nyq().set(p.nyq().get() / max_f32(q.nyq().get(), z));
        for i in 0..p.bins() {
            p.a(i).set(p.a(i).get() / max_f32(q.a(i).get(), z));
        }
    }
);

pair_unit!(
    /// `PV_CopyPhase(chainA, chainB)`: A's magnitudes with B's phases.
    CopyPhase, Polar, |p, q, _io| {
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
);

pair_unit!(
    /// `PV_Max(chainA, chainB)`: per bin, the louder of A and B.
    Max, Polar, |p, q, _io| {
        take_where(p, q, |b, a| b > a);
    }
);

pair_unit!(
    /// `PV_Min(chainA, chainB)`: per bin, the quieter of A and B.
    Min, Polar, |p, q, _io| {
        take_where(p, q, |b, a| b < a);
    }
);

pair_unit!(
    /// `PV_Mul(chainA, chainB)`: complex product (three multiplications per bin).
    Mul, Complex, |p, q, _io| {
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
);

pair_unit!(
    /// `PV_Div(chainA, chainB)`: complex quotient.
    Div, Complex, |p, q, _io| {
        p.dc().set(p.dc().get() / q.dc().get());
        p.nyq().set(p.nyq().get() / q.nyq().get());
        for i in 0..p.bins() {
            let norm = q.a(i).get() * q.a(i).get() + q.b(i).get() * q.b(i).get();
            let pre = p.a(i).get();
            p.a(i).set((pre * q.a(i).get() + p.b(i).get() * q.b(i).get()) / norm);
            p.b(i).set((p.b(i).get() * q.a(i).get() - pre * q.b(i).get()) / norm);
        }
    }
);

pair_unit!(
    /// `PV_Add(chainA, chainB)`: complex sum.
    Add, Complex, |p, q, _io| {
        p.dc().set(p.dc().get() + q.dc().get());
        p.nyq().set(p.nyq().get() + q.nyq().get());
        for i in 0..p.bins() {
            p.a(i).set(p.a(i).get() + q.a(i).get());
            p.b(i).set(p.b(i).get() + q.b(i).get());
        }
    }
);

pair_unit!(
    /// `PV_BinWipe(chainA, chainB, wipe)`: B's lowest (`wipe` > 0) or highest
    /// (`wipe` < 0) fraction of bins over A, in whatever form they are.
    BinWipe, Raw, |p, q, io| {
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
);
