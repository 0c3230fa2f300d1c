//! Short FIR filters on the input history: LPZ1, HPZ1, LPZ2, HPZ2, BPZ2,
//! BRZ2 and the differentiator Slope. The history starts filled with the
//! first input sample, so a constant input gives a steady output from the
//! first sample on.

use crate::common::signal::{in0, In};
use crate::unit::{Construct, RateInfo, Unit, UnitCtx, UnitSpec, Wires};
use std::marker::PhantomData;

/// One filter's formula over the current input and the two before it.
pub trait FirDesign: 'static {
    /// `x0` is the current input, `x1` the previous, `x2` the one before.
    fn out(x0: f64, x1: f64, x2: f64, rate: &RateInfo) -> f64;
}

/// A filter running formula `D` on the input history. Input: in.
pub struct Fir<D: FirDesign> {
    x1: f64,
    x2: f64,
    _design: PhantomData<fn() -> D>,
}

impl<D: FirDesign> Fir<D> {
    fn run(&mut self, io: &mut Wires<'_>, rate: &RateInfo) {
        let inp = In::new(io, 0);
        let out = io.out(0);
        let (mut x1, mut x2) = (self.x1, self.x2);
        for (i, o) in out.iter_mut().enumerate() {
            let x0 = inp.at(i) as f64;
            *o = D::out(x0, x1, x2, rate) as f32;
            x2 = x1;
            x1 = x0;
        }
        self.x1 = x1;
        self.x2 = x2;
    }
}

impl<D: FirDesign> Construct for Fir<D> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 0) as f64;
        let mut u = Fir { x1: x, x2: x, _design: PhantomData };
        // The first sample is computed (and kept in the history) here.
        u.run(io, cx.rate);
        u
    }
}

impl<D: FirDesign> Unit for Fir<D> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx.rate);
    }
}

/// Two-point average: a gentle low-pass with a zero at Nyquist.
pub struct Lpz1Design;
pub type Lpz1 = Fir<Lpz1Design>;
impl FirDesign for Lpz1Design {
    #[inline(always)]
    fn out(x0: f64, x1: f64, _x2: f64, _rate: &RateInfo) -> f64 {
        0.5 * (x0 + x1)
    }
}

/// Two-point difference: a gentle high-pass with a zero at DC.
pub struct Hpz1Design;
pub type Hpz1 = Fir<Hpz1Design>;
impl FirDesign for Hpz1Design {
    #[inline(always)]
    fn out(x0: f64, x1: f64, _x2: f64, _rate: &RateInfo) -> f64 {
        0.5 * (x0 - x1)
    }
}

/// Two zeros at Nyquist.
pub struct Lpz2Design;
pub type Lpz2 = Fir<Lpz2Design>;
impl FirDesign for Lpz2Design {
    #[inline(always)]
    fn out(x0: f64, x1: f64, x2: f64, _rate: &RateInfo) -> f64 {
        (x0 + 2.0 * x1 + x2) * 0.25
    }
}

/// Two zeros at DC.
pub struct Hpz2Design;
pub type Hpz2 = Fir<Hpz2Design>;
impl FirDesign for Hpz2Design {
    #[inline(always)]
    fn out(x0: f64, x1: f64, x2: f64, _rate: &RateInfo) -> f64 {
        (x0 - 2.0 * x1 + x2) * 0.25
    }
}

/// Zeros at DC and Nyquist: a band-pass centred on a quarter of the rate.
pub struct Bpz2Design;
pub type Bpz2 = Fir<Bpz2Design>;
impl FirDesign for Bpz2Design {
    #[inline(always)]
    fn out(x0: f64, _x1: f64, x2: f64, _rate: &RateInfo) -> f64 {
        (x0 - x2) * 0.5
    }
}

/// Zeros at a quarter of the rate: a band-reject.
pub struct Brz2Design;
pub type Brz2 = Fir<Brz2Design>;
impl FirDesign for Brz2Design {
    #[inline(always)]
    fn out(x0: f64, _x1: f64, x2: f64, _rate: &RateInfo) -> f64 {
        (x0 + x2) * 0.5
    }
}

/// Slope: the input's rate of change per second.
pub struct SlopeDesign;
pub type Slope = Fir<SlopeDesign>;
impl FirDesign for SlopeDesign {
    #[inline(always)]
    fn out(x0: f64, x1: f64, _x2: f64, rate: &RateInfo) -> f64 {
        rate.sample_rate * (x0 - x1)
    }
}
