//! UnaryOpUGen: every one-argument operator.
//!
//! As with the binary operators, each operator is a type, and the SIMD path
//! scsynth takes at block sizes that are multiples of 16 is reproduced where
//! its arithmetic differs from the plain loop.

use crate::common::math::*;
use crate::simd::math as simd_math;
use crate::simd::ramp;
use crate::unit::{Rate, Unit, UnitCtx, UnitSpec, Wires};
use std::marker::PhantomData;

/// Operator numbers (SuperCollider's `special index`).
pub mod op {
    pub const NEG: i16 = 0;
    pub const NOT: i16 = 1;
    pub const IS_NIL: i16 = 2;
    pub const NOT_NIL: i16 = 3;
    pub const BIT_NOT: i16 = 4;
    pub const ABS: i16 = 5;
    pub const AS_FLOAT: i16 = 6;
    pub const AS_INTEGER: i16 = 7;
    pub const CEIL: i16 = 8;
    pub const FLOOR: i16 = 9;
    pub const FRAC: i16 = 10;
    pub const SIGN: i16 = 11;
    pub const SQUARED: i16 = 12;
    pub const CUBED: i16 = 13;
    pub const SQRT: i16 = 14;
    pub const EXP: i16 = 15;
    pub const RECIP: i16 = 16;
    pub const MIDICPS: i16 = 17;
    pub const CPSMIDI: i16 = 18;
    pub const MIDIRATIO: i16 = 19;
    pub const RATIOMIDI: i16 = 20;
    pub const DBAMP: i16 = 21;
    pub const AMPDB: i16 = 22;
    pub const OCTCPS: i16 = 23;
    pub const CPSOCT: i16 = 24;
    pub const LOG: i16 = 25;
    pub const LOG2: i16 = 26;
    pub const LOG10: i16 = 27;
    pub const SIN: i16 = 28;
    pub const COS: i16 = 29;
    pub const TAN: i16 = 30;
    pub const ASIN: i16 = 31;
    pub const ACOS: i16 = 32;
    pub const ATAN: i16 = 33;
    pub const SINH: i16 = 34;
    pub const COSH: i16 = 35;
    pub const TANH: i16 = 36;
    pub const RAND: i16 = 37;
    pub const RAND2: i16 = 38;
    pub const LINRAND: i16 = 39;
    pub const BILINRAND: i16 = 40;
    pub const SUM3RAND: i16 = 41;
    pub const DISTORT: i16 = 42;
    pub const SOFTCLIP: i16 = 43;
    pub const COIN: i16 = 44;
    pub const DIGIT_VALUE: i16 = 45;
    pub const SILENCE: i16 = 46;
    pub const THRU: i16 = 47;
    pub const RECT_WINDOW: i16 = 48;
    pub const HAN_WINDOW: i16 = 49;
    pub const WELCH_WINDOW: i16 = 50;
    pub const TRI_WINDOW: i16 = 51;
    pub const RAMP: i16 = 52;
    pub const SCURVE: i16 = 53;
}

/// One unary operator: `f` is the plain loop's formula, `simd_f` the SIMD
/// loop's (the same unless scsynth computes it differently there).
pub(crate) trait UnOp: Send + 'static {
    fn f(x: f32) -> f32;
    #[inline(always)]
    fn simd_f(x: f32) -> f32 {
        Self::f(x)
    }
}

macro_rules! unop {
    ($name:ident, |$x:ident| $body:expr) => {
        pub(crate) struct $name;
        impl UnOp for $name {
            #[inline(always)]
            fn f($x: f32) -> f32 {
                $body
            }
        }
    };
    ($name:ident, |$x:ident| $body:expr, simd |$y:ident| $sbody:expr) => {
        pub(crate) struct $name;
        impl UnOp for $name {
            #[inline(always)]
            fn f($x: f32) -> f32 {
                $body
            }
            #[inline(always)]
            fn simd_f($y: f32) -> f32 {
                $sbody
            }
        }
    };
}

// The SIMD negation subtracts from zero, so -(+0) is +0 there.
unop!(Neg, |x| -x, simd |x| 0.0 - x);
unop!(Not, |x| if x > 0.0 { 0.0 } else { 1.0 });
unop!(BitNot, |x| (!c_int(x)) as f32);
unop!(Abs, |x| x.abs());
unop!(Ceil, |x| x.ceil(), simd |x| simd_math::ceil(x));
unop!(Floor, |x| x.floor(), simd |x| simd_math::floor(x));
unop!(Frac, |x| sc_frac(x), simd |x| x - simd_math::floor(x));
unop!(Sign, |x| sc_sign(x), simd |x| {
    let sign = x.to_bits() & 0x8000_0000;
    let one = if x != 0.0 { 1.0f32.to_bits() } else { 0 };
    f32::from_bits(sign | one)
});
unop!(Squared, |x| x * x);
unop!(Cubed, |x| x * x * x);
unop!(Sqrt, |x| sc_sqrt(x), simd |x| {
    let sign = x.to_bits() & 0x8000_0000;
    f32::from_bits(sign | f32::from_bits(x.to_bits() ^ sign).sqrt().to_bits())
});
unop!(Exp, |x| x.exp(), simd |x| simd_math::exp(x));
unop!(Recip, |x| sc_reciprocal(x), simd |x| simd_math::reciprocal(x));
unop!(MidiCps, |x| sc_midicps(x), simd |x| simd_math::midicps(x));
unop!(CpsMidi, |x| sc_cpsmidi(x), simd |x| simd_math::cpsmidi(x));
unop!(MidiRatio, |x| sc_midiratio(x), simd |x| simd_math::midiratio(x));
unop!(RatioMidi, |x| sc_ratiomidi(x), simd |x| simd_math::ratiomidi(x));
unop!(DbAmp, |x| sc_dbamp(x), simd |x| simd_math::dbamp(x));
unop!(AmpDb, |x| sc_ampdb(x), simd |x| simd_math::ampdb(x));
unop!(OctCps, |x| sc_octcps(x), simd |x| simd_math::octcps(x));
unop!(CpsOct, |x| sc_cpsoct(x), simd |x| simd_math::cpsoct(x));
unop!(Log, |x| x.ln(), simd |x| simd_math::log(x));
unop!(Log2, |x| x.log2(), simd |x| simd_math::log2(x));
unop!(Log10, |x| x.abs().log10(), simd |x| simd_math::log10(x));
unop!(Sin, |x| x.sin(), simd |x| simd_math::sin(x));
unop!(Cos, |x| x.cos(), simd |x| simd_math::cos(x));
unop!(Tan, |x| x.tan(), simd |x| simd_math::tan(x));
unop!(Asin, |x| x.asin(), simd |x| simd_math::asin(x));
unop!(Acos, |x| x.acos(), simd |x| simd_math::acos(x));
unop!(Atan, |x| x.atan(), simd |x| simd_math::atan(x));
unop!(Sinh, |x| x.sinh());
unop!(Cosh, |x| x.cosh());
unop!(Tanh, |x| x.tanh(), simd |x| simd_math::tanh(x));
unop!(Distort, |x| sc_distort(x), simd |x| x * simd_math::reciprocal(1.0 + x.abs()));
unop!(SoftClip, |x| sc_softclip(x), simd |x| simd_math::softclip(x));
unop!(RectWindow, |x| sc_rectwindow(x));
unop!(HanWindow, |x| sc_hanwindow(x));
unop!(WelchWindow, |x| sc_welwindow(x));
unop!(TriWindow, |x| sc_triwindow(x));
unop!(Ramp, |x| sc_ramp(x), simd |x| sc_max(sc_min(x, 1.0), 0.0));
unop!(SCurve, |x| sc_scurve(x), simd |x| {
    let r = (x * x) * (3.0 - (2.0 * x));
    if x > 1.0 {
        1.0
    } else if x < 0.0 {
        0.0
    } else {
        r
    }
});
unop!(Silence, |_x| 0.0);
unop!(Thru, |x| x);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Calc {
    One,
    Audio,
    Simd,
    /// No input: the output stays as constructed.
    Nothing,
    /// Demand rate: the input's next value through the operator when asked
    /// for one (NaN stays NaN), a reset of the input when asked to reset.
    Demand,
}

/// A UnaryOpUGen computing operator `O`.
pub(crate) struct UnaryOp<O: UnOp> {
    calc: Calc,
    _op: PhantomData<O>,
}

impl<O: UnOp> Unit for UnaryOp<O> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        match self.calc {
            Calc::One => {
                let x = io.in0(0);
                io.out(0)[0] = O::f(x);
            }
            Calc::Audio => {
                let a = io.inp(0);
                for (o, &x) in io.out(0).iter_mut().zip(a) {
                    *o = O::f(x);
                }
            }
            Calc::Simd => {
                let a = io.inp(0);
                for (o, &x) in io.out(0).iter_mut().zip(a) {
                    *o = O::simd_f(x);
                }
            }
            Calc::Nothing => {}
            Calc::Demand => {
                if let Some(x) = demand_value(io, cx) {
                    io.out(0)[0] = if x.is_nan() { f32::NAN } else { O::f(x) };
                }
            }
        }
    }
}

/// A demand-rate operator's step: resets its input (None) or gives the input's next value.
fn demand_value(io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
    if cx.demanded == 0 {
        cx.reset_input(io, 0);
        None
    } else {
        Some(cx.demand_input_at(io, 0, cx.demanded))
    }
}

/// The random operators: the input scales a draw from the synth's generator.
pub(crate) struct RandUnary {
    kind: i16,
    demand: bool,
}

impl RandUnary {
    #[inline]
    fn draw(kind: i16, x: f32, rg: &mut crate::rgen::RGen) -> f32 {
        match kind {
            op::RAND => rg.frand() * x,
            op::RAND2 => rg.frand2() * x,
            op::LINRAND => rg.flinrand() * x,
            op::BILINRAND => rg.fbilinrand() * x,
            op::SUM3RAND => rg.fsum3rand() * x,
            _ => {
                if rg.frand() < x {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}

impl Unit for RandUnary {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.demand {
            if let Some(x) = demand_value(io, cx) {
                // scsynth's coin draws even for a NaN; the others only for a value.
                io.out(0)[0] = if self.kind == op::COIN {
                    let v = Self::draw(self.kind, x, &mut cx.world.rgen);
                    if x.is_nan() {
                        f32::NAN
                    } else {
                        v
                    }
                } else if x.is_nan() {
                    f32::NAN
                } else {
                    Self::draw(self.kind, x, &mut cx.world.rgen)
                };
            }
            return;
        }
        let a = io.inp(0);
        let kind = self.kind;
        let rg = &mut cx.world.rgen;
        for (o, &x) in io.out(0).iter_mut().zip(a) {
            *o = Self::draw(kind, x, rg);
        }
    }
}

fn boxed<O: UnOp>(calc: Calc, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    // The first sample is computed by the plain loop even where the SIMD loop
    // runs afterwards.
    let first = if calc == Calc::Simd { Calc::Audio } else { calc };
    let mut unit = UnaryOp::<O> { calc: first, _op: PhantomData };
    // scsynth's constructor runs the demand-rate calculation once too: it takes the first
    // value of its input.
    if calc == Calc::Demand {
        cx.demanded = 1;
    }
    if calc == Calc::Nothing {
        io.out(0)[0] = 0.0;
    } else {
        unit.next(io, cx);
    }
    unit.calc = calc;
    Box::new(unit)
}

/// Builds the UnaryOpUGen for `spec.special_index`.
pub(crate) fn construct(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    let calc = if io.num_inputs() < 1 {
        Calc::Nothing
    } else if spec.rate == Rate::Demand {
        Calc::Demand
    } else if cx.rate.buf_length == 1 {
        Calc::One
    } else if ramp::simd_block(cx.rate.buf_length) {
        Calc::Simd
    } else {
        Calc::Audio
    };
    let index = spec.special_index;
    if matches!(index, op::RAND | op::RAND2 | op::LINRAND | op::BILINRAND | op::SUM3RAND | op::COIN)
        && calc != Calc::Nothing
    {
        let demand = calc == Calc::Demand;
        let mut unit = RandUnary { kind: index, demand };
        if demand {
            cx.demanded = 1;
        }
        unit.next(io, cx);
        return Box::new(unit);
    }
    match index {
        op::NEG => boxed::<Neg>(calc, io, cx),
        op::NOT => boxed::<Not>(calc, io, cx),
        op::BIT_NOT => boxed::<BitNot>(calc, io, cx),
        op::ABS => boxed::<Abs>(calc, io, cx),
        op::CEIL => boxed::<Ceil>(calc, io, cx),
        op::FLOOR => boxed::<Floor>(calc, io, cx),
        op::FRAC => boxed::<Frac>(calc, io, cx),
        op::SIGN => boxed::<Sign>(calc, io, cx),
        op::SQUARED => boxed::<Squared>(calc, io, cx),
        op::CUBED => boxed::<Cubed>(calc, io, cx),
        op::SQRT => boxed::<Sqrt>(calc, io, cx),
        op::EXP => boxed::<Exp>(calc, io, cx),
        op::RECIP => boxed::<Recip>(calc, io, cx),
        op::MIDICPS => boxed::<MidiCps>(calc, io, cx),
        op::CPSMIDI => boxed::<CpsMidi>(calc, io, cx),
        op::MIDIRATIO => boxed::<MidiRatio>(calc, io, cx),
        op::RATIOMIDI => boxed::<RatioMidi>(calc, io, cx),
        op::DBAMP => boxed::<DbAmp>(calc, io, cx),
        op::AMPDB => boxed::<AmpDb>(calc, io, cx),
        op::OCTCPS => boxed::<OctCps>(calc, io, cx),
        op::CPSOCT => boxed::<CpsOct>(calc, io, cx),
        op::LOG => boxed::<Log>(calc, io, cx),
        op::LOG2 => boxed::<Log2>(calc, io, cx),
        op::LOG10 => boxed::<Log10>(calc, io, cx),
        op::SIN => boxed::<Sin>(calc, io, cx),
        op::COS => boxed::<Cos>(calc, io, cx),
        op::TAN => boxed::<Tan>(calc, io, cx),
        op::ASIN => boxed::<Asin>(calc, io, cx),
        op::ACOS => boxed::<Acos>(calc, io, cx),
        op::ATAN => boxed::<Atan>(calc, io, cx),
        op::SINH => boxed::<Sinh>(calc, io, cx),
        op::COSH => boxed::<Cosh>(calc, io, cx),
        op::TANH => boxed::<Tanh>(calc, io, cx),
        op::DISTORT => boxed::<Distort>(calc, io, cx),
        op::SOFTCLIP => boxed::<SoftClip>(calc, io, cx),
        op::RECT_WINDOW => boxed::<RectWindow>(calc, io, cx),
        op::HAN_WINDOW => boxed::<HanWindow>(calc, io, cx),
        op::WELCH_WINDOW => boxed::<WelchWindow>(calc, io, cx),
        op::TRI_WINDOW => boxed::<TriWindow>(calc, io, cx),
        op::RAMP => boxed::<Ramp>(calc, io, cx),
        op::SCURVE => boxed::<SCurve>(calc, io, cx),
        op::SILENCE => boxed::<Silence>(calc, io, cx),
        // Everything else (isNil, asFloat, digitValue, unknown numbers...)
        // passes its input through, as in scsynth.
        _ => boxed::<Thru>(calc, io, cx),
    }
}
