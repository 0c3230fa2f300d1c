//! BinaryOpUGen: every two-argument operator, in every rate combination.
//!
//! Each operator is a zero-sized type implementing [`BinOp`], so the loops
//! are compiled once per operator and never dispatch per sample. scsynth has
//! two code paths per operator (plain loops, and SIMD loops used when the
//! block size is a multiple of 16); they differ in how control inputs are
//! interpolated and, for some operators, in the arithmetic itself, so both
//! are reproduced.

use crate::common::math::*;
use crate::simd::math as simd_math;
use crate::simd::ramp;
use crate::rgen::RGen;
use crate::unit::{downcast_unit, Construct, Lanes, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, MAX_LANES};
use std::marker::PhantomData;

/// Operator numbers (SuperCollider's `special index`).
pub mod op {
    pub const ADD: i16 = 0;
    pub const SUB: i16 = 1;
    pub const MUL: i16 = 2;
    pub const IDIV: i16 = 3;
    pub const FDIV: i16 = 4;
    pub const MOD: i16 = 5;
    pub const EQ: i16 = 6;
    pub const NE: i16 = 7;
    pub const LT: i16 = 8;
    pub const GT: i16 = 9;
    pub const LE: i16 = 10;
    pub const GE: i16 = 11;
    pub const MIN: i16 = 12;
    pub const MAX: i16 = 13;
    pub const BIT_AND: i16 = 14;
    pub const BIT_OR: i16 = 15;
    pub const BIT_XOR: i16 = 16;
    pub const LCM: i16 = 17;
    pub const GCD: i16 = 18;
    pub const ROUND: i16 = 19;
    pub const ROUND_UP: i16 = 20;
    pub const TRUNC: i16 = 21;
    pub const ATAN2: i16 = 22;
    pub const HYPOT: i16 = 23;
    pub const HYPOTX: i16 = 24;
    pub const POW: i16 = 25;
    pub const SHIFT_LEFT: i16 = 26;
    pub const SHIFT_RIGHT: i16 = 27;
    pub const UNSIGNED_SHIFT: i16 = 28;
    pub const FILL: i16 = 29;
    pub const RING1: i16 = 30;
    pub const RING2: i16 = 31;
    pub const RING3: i16 = 32;
    pub const RING4: i16 = 33;
    pub const DIF_SQR: i16 = 34;
    pub const SUM_SQR: i16 = 35;
    pub const SQR_SUM: i16 = 36;
    pub const SQR_DIF: i16 = 37;
    pub const ABS_DIF: i16 = 38;
    pub const THRESH: i16 = 39;
    pub const AM_CLIP: i16 = 40;
    pub const SCALE_NEG: i16 = 41;
    pub const CLIP2: i16 = 42;
    pub const EXCESS: i16 = 43;
    pub const FOLD2: i16 = 44;
    pub const WRAP2: i16 = 45;
    pub const FIRST_ARG: i16 = 46;
    pub const RAND_RANGE: i16 = 47;
    pub const EXP_RAND_RANGE: i16 = 48;
}

/// Which of scsynth's SIMD loops an operator has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Simd {
    /// Plain loops at every block size.
    None,
    /// SIMD loops when both inputs are audio or one is a constant; the
    /// control-input combinations keep the plain loops.
    AudioOnly,
    /// SIMD loops everywhere, including interpolated control inputs.
    Full,
}

/// One binary operator. `f` is the formula of the plain loops; the other
/// methods exist because scsynth special-cases some constant inputs, and
/// its SIMD loops sometimes compute differently.
pub(crate) trait BinOp: Send + 'static {
    fn f(a: f32, b: f32) -> f32;

    /// The formula of the one-sample (control-rate) calculation.
    #[inline(always)]
    fn one(a: f32, b: f32) -> f32 {
        Self::f(a, b)
    }

    /// The formula of the demand-rate calculation (written apart from the
    /// others in scsynth, and different for a few operators).
    #[inline(always)]
    fn demand(a: f32, b: f32) -> f32 {
        Self::one(a, b)
    }

    const SIMD: Simd = Simd::None;

    /// The formula of the SIMD loops.
    #[inline(always)]
    fn simd_f(a: f32, b: f32) -> f32 {
        Self::f(a, b)
    }

    /// Audio `a`, control `b` that did not change this block.
    #[inline(always)]
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        map_a(out, a, |x| Self::f(x, xb));
    }

    /// Control `a` that did not change this block, audio `b`.
    #[inline(always)]
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        map_a(out, b, |y| Self::f(xa, y));
    }

    #[inline(always)]
    fn ai(out: &mut [f32], a: &[f32], xb: f32) {
        map_a(out, a, |x| Self::f(x, xb));
    }

    #[inline(always)]
    fn ia(out: &mut [f32], xa: f32, b: &[f32]) {
        map_a(out, b, |y| Self::f(xa, y));
    }

    #[inline(always)]
    fn simd_ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        map_a(out, a, |x| Self::simd_f(x, xb));
    }

    #[inline(always)]
    fn simd_ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        map_a(out, b, |y| Self::simd_f(xa, y));
    }

    #[inline(always)]
    fn simd_ai(out: &mut [f32], a: &[f32], xb: f32) {
        map_a(out, a, |x| Self::simd_f(x, xb));
    }

    #[inline(always)]
    fn simd_ia(out: &mut [f32], xa: f32, b: &[f32]) {
        map_a(out, b, |y| Self::simd_f(xa, y));
    }
}

/// The block size most servers run at: a block of it is mapped as a
/// fixed-length array, in straight vector operations with no test of the
/// lengths or of overlap between the output and the inputs.
const COMMON_BLOCK: usize = 64;

#[inline(always)]
fn map_a(out: &mut [f32], a: &[f32], f: impl Fn(f32) -> f32) {
    if let (Ok(o), Some(x)) = (<&mut [f32; COMMON_BLOCK]>::try_from(&mut *out), a.first_chunk::<COMMON_BLOCK>()) {
        map_fixed(o, x, f);
        return;
    }
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

#[inline(always)]
fn map_fixed<const N: usize>(out: &mut [f32; N], a: &[f32; N], f: impl Fn(f32) -> f32) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

/// `out[i] = f(a[i], b[i])`, a block of [`COMMON_BLOCK`] as fixed-length arrays.
#[inline(always)]
fn map_aa(out: &mut [f32], a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) {
    if let (Ok(o), Some(x), Some(y)) = (
        <&mut [f32; COMMON_BLOCK]>::try_from(&mut *out),
        a.first_chunk::<COMMON_BLOCK>(),
        b.first_chunk::<COMMON_BLOCK>(),
    ) {
        map_aa_fixed(o, x, y, f);
        return;
    }
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[inline(always)]
fn map_aa_fixed<const N: usize>(out: &mut [f32; N], a: &[f32; N], b: &[f32; N], f: impl Fn(f32, f32) -> f32) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[inline(always)]
fn copy(out: &mut [f32], a: &[f32]) {
    let n = out.len();
    out.copy_from_slice(&a[..n]);
}

macro_rules! simple_op {
    ($name:ident, $simd:expr, |$a:ident, $b:ident| $body:expr) => {
        pub(crate) struct $name;
        impl BinOp for $name {
            const SIMD: Simd = $simd;
            #[inline(always)]
            fn f($a: f32, $b: f32) -> f32 {
                $body
            }
        }
    };
}

// ---- arithmetic -----------------------------------------------------------

pub(crate) struct Add;
impl BinOp for Add {
    const SIMD: Simd = Simd::Full;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a + b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            copy(out, a)
        } else {
            map_a(out, a, |x| x + xb)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            copy(out, b)
        } else {
            map_a(out, b, |y| xa + y)
        }
    }
    fn simd_ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        Self::ak_steady(out, a, xb)
    }
    fn simd_ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        Self::ka_steady(out, xa, b)
    }
}

/// Addition through the plain loops only: scsynth's SIMD tables send
/// operators they lack (and firstArg with a control first input) to the
/// plain `add` loops, whose control ramps round differently.
pub(crate) struct PlainAdd;
impl BinOp for PlainAdd {
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a + b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        Add::ak_steady(out, a, xb)
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        Add::ka_steady(out, xa, b)
    }
}

pub(crate) struct Sub;
impl BinOp for Sub {
    const SIMD: Simd = Simd::Full;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a - b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            copy(out, a)
        } else {
            map_a(out, a, |x| x - xb)
        }
    }
    // scsynth's plain loop copies `b` here where `-b` is meant; kept as is.
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            copy(out, b)
        } else {
            map_a(out, b, |y| xa - y)
        }
    }
    fn simd_ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        Self::ak_steady(out, a, xb)
    }
}

pub(crate) struct Mul;
impl BinOp for Mul {
    const SIMD: Simd = Simd::Full;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a * b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            out.fill(0.0)
        } else if xb == 1.0 {
            copy(out, a)
        } else {
            map_a(out, a, |x| x * xb)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else if xa == 1.0 {
            copy(out, b)
        } else {
            map_a(out, b, |y| xa * y)
        }
    }
    fn simd_ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        Self::ak_steady(out, a, xb)
    }
    fn simd_ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        Self::ka_steady(out, xa, b)
    }
}

pub(crate) struct FDiv;
impl BinOp for FDiv {
    const SIMD: Simd = Simd::Full;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a / b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            out.fill(0.0)
        } else if xb == 1.0 {
            copy(out, a)
        } else {
            let recip = 1.0 / xb;
            map_a(out, a, |x| x * recip)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else {
            map_a(out, b, |y| xa / y)
        }
    }
    fn ai(out: &mut [f32], a: &[f32], xb: f32) {
        let recip = 1.0 / xb;
        map_a(out, a, |x| x * recip)
    }
    fn simd_ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        Self::ak_steady(out, a, xb)
    }
    fn simd_ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        Self::ka_steady(out, xa, b)
    }
    fn simd_ai(out: &mut [f32], a: &[f32], xb: f32) {
        let recip = sc_reciprocal(xb);
        map_a(out, a, |x| x * recip)
    }
}

pub(crate) struct IDiv;
impl BinOp for IDiv {
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        (a / b).floor()
    }
    // scsynth writes only the first sample here (its loop is missing).
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if let (Some(o), Some(&x)) = (out.first_mut(), a.first()) {
            *o = (x / xb).floor();
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else {
            map_a(out, b, |y| (xa / y).floor())
        }
    }
}

pub(crate) struct Mod;
impl BinOp for Mod {
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        sc_mod(a, b)
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            copy(out, a)
        } else {
            map_a(out, a, |x| sc_mod(x, xb))
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else {
            map_a(out, b, |y| sc_mod(xa, y))
        }
    }
}

pub(crate) struct Pow;
impl BinOp for Pow {
    const SIMD: Simd = Simd::Full;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        if a >= 0.0 {
            a.powf(b)
        } else {
            -(-a).powf(b)
        }
    }
    #[inline(always)]
    fn simd_f(a: f32, b: f32) -> f32 {
        simd_math::signed_pow(a, b)
    }
    fn simd_ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa >= 0.0 {
            map_a(out, b, |y| simd_math::pow(xa, y))
        } else {
            map_a(out, b, |y| simd_math::signed_pow(xa, y))
        }
    }
    fn simd_ia(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa > 0.0 {
            map_a(out, b, |y| simd_math::pow(xa, y))
        } else {
            map_a(out, b, |y| simd_math::signed_pow(xa, y))
        }
    }
}

// ---- comparisons ----------------------------------------------------------

simple_op!(Lt, Simd::Full, |a, b| if a < b { 1.0 } else { 0.0 });
simple_op!(Gt, Simd::Full, |a, b| if a > b { 1.0 } else { 0.0 });
simple_op!(Le, Simd::Full, |a, b| if a <= b { 1.0 } else { 0.0 });
simple_op!(Ge, Simd::Full, |a, b| if a >= b { 1.0 } else { 0.0 });
simple_op!(Eq, Simd::Full, |a, b| if a == b { 1.0 } else { 0.0 });
simple_op!(Ne, Simd::Full, |a, b| if a != b { 1.0 } else { 0.0 });
simple_op!(Min, Simd::Full, |a, b| sc_min(a, b));
simple_op!(Max, Simd::Full, |a, b| sc_max(a, b));

// ---- bitwise and integer --------------------------------------------------

simple_op!(BitAnd, Simd::None, |a, b| (c_int(a) & c_int(b)) as f32);
simple_op!(BitOr, Simd::None, |a, b| (c_int(a) | c_int(b)) as f32);
simple_op!(BitXor, Simd::None, |a, b| (c_int(a) ^ c_int(b)) as f32);
simple_op!(ShiftLeft, Simd::None, |a, b| shift_left(a, b));
simple_op!(ShiftRight, Simd::None, |a, b| shift_right(a, b));
simple_op!(Lcm, Simd::None, |a, b| sc_lcm(a, b));
simple_op!(Gcd, Simd::None, |a, b| sc_gcd(a, b));

// ---- quantisation, geometry -----------------------------------------------

simple_op!(Round, Simd::None, |a, b| sc_round(a, b));
simple_op!(RoundUp, Simd::None, |a, b| sc_round_up(a, b));
simple_op!(Trunc, Simd::None, |a, b| sc_trunc(a, b));
simple_op!(Atan2, Simd::None, |a, b| a.atan2(b));
simple_op!(Hypot, Simd::None, |a, b| a.hypot(b));
simple_op!(Hypotx, Simd::None, |a, b| sc_hypotx(a, b));

// ---- ring modulation and friends ------------------------------------------

pub(crate) struct Ring1;
impl BinOp for Ring1 {
    const SIMD: Simd = Simd::AudioOnly;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a * b + a
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            copy(out, a)
        } else if xb == 1.0 {
            map_a(out, a, |x| x + x)
        } else {
            map_a(out, a, |x| x * xb + x)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else {
            map_a(out, b, |y| xa * y + xa)
        }
    }
}

pub(crate) struct Ring2;
impl BinOp for Ring2 {
    const SIMD: Simd = Simd::AudioOnly;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a * b + a + b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            copy(out, a)
        } else {
            map_a(out, a, |x| x * xb + x + xb)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            copy(out, b)
        } else {
            map_a(out, b, |y| xa * y + xa + y)
        }
    }
}

pub(crate) struct Ring3;
impl BinOp for Ring3 {
    const SIMD: Simd = Simd::AudioOnly;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a * a * b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            out.fill(0.0)
        } else if xb == 1.0 {
            map_a(out, a, |x| x * x)
        } else {
            map_a(out, a, |x| x * x * xb)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else if xa == 1.0 {
            copy(out, b)
        } else {
            map_a(out, b, |y| xa * xa * y)
        }
    }
}

pub(crate) struct Ring4;
impl BinOp for Ring4 {
    const SIMD: Simd = Simd::AudioOnly;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        a * a * b - a * b * b
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb == 0.0 {
            out.fill(0.0)
        } else if xb == 1.0 {
            map_a(out, a, |x| x * x - x)
        } else {
            map_a(out, a, |x| x * x * xb - x * xb * xb)
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa == 0.0 {
            out.fill(0.0)
        } else if xa == 1.0 {
            map_a(out, b, |y| y - y * y)
        } else {
            map_a(out, b, |y| xa * xa * y - xa * y * y)
        }
    }
}

simple_op!(DifSqr, Simd::Full, |a, b| a * a - b * b);
simple_op!(SumSqr, Simd::Full, |a, b| a * a + b * b);
simple_op!(SqrSum, Simd::Full, |a, b| {
    let s = a + b;
    s * s
});
simple_op!(SqrDif, Simd::Full, |a, b| {
    let d = a - b;
    d * d
});
simple_op!(AbsDif, Simd::None, |a, b| (a - b).abs());
simple_op!(Thresh, Simd::None, |a, b| if a < b { 0.0 } else { a });
pub(crate) struct Excess;
impl BinOp for Excess {
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        if a > b {
            a - b
        } else if a < -b {
            a + b
        } else {
            0.0
        }
    }
    fn demand(a: f32, b: f32) -> f32 {
        a - clip_min_max(a, -b, b)
    }
}

/// `std::max(std::min(x, hi), lo)`: scsynth's `sc_clip`, which its demand-rate operators use.
#[inline(always)]
fn clip_min_max(x: f32, lo: f32, hi: f32) -> f32 {
    sc_max(sc_min(x, hi), lo)
}
simple_op!(Fold2, Simd::None, |a, b| sc_fold(a, -b, b));
simple_op!(Wrap2, Simd::None, |a, b| sc_wrap(a, -b, b));
simple_op!(FirstArg, Simd::None, |a, _b| a);

pub(crate) struct AmClip;
impl BinOp for AmClip {
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        sc_amclip(a, b)
    }
    fn ak_steady(out: &mut [f32], a: &[f32], xb: f32) {
        if xb > 0.0 {
            map_a(out, a, |x| x * xb)
        } else {
            out.fill(0.0)
        }
    }
}

pub(crate) struct ScaleNeg;
impl BinOp for ScaleNeg {
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        if a >= 0.0 {
            a
        } else {
            a * b
        }
    }
    fn ka_steady(out: &mut [f32], xa: f32, b: &[f32]) {
        if xa >= 0.0 {
            out.fill(xa)
        } else {
            map_a(out, b, |y| xa * y)
        }
    }
    // The branch-free form of scsynth's float specialisation.
    fn demand(a: f32, b: f32) -> f32 {
        let b = 0.5 * b + 0.5;
        (a.abs() - a) * b + a
    }
}

pub(crate) struct Clip2;
impl BinOp for Clip2 {
    const SIMD: Simd = Simd::Full;
    #[inline(always)]
    fn f(a: f32, b: f32) -> f32 {
        if a > b {
            b
        } else if a < -b {
            -b
        } else {
            a
        }
    }
    fn demand(a: f32, b: f32) -> f32 {
        clip_min_max(a, -b, b)
    }
    // The SIMD form is max(-b, min(a, b)), which differs for negative `b`.
    #[inline(always)]
    fn simd_f(a: f32, b: f32) -> f32 {
        sc_max(0.0 - b, sc_min(a, b))
    }
}

// ---- the unit -------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Calc {
    /// Control or scalar rate: one value per call.
    One,
    Aa,
    Ak,
    Ka,
    Ai,
    Ia,
    /// Combinations scsynth has no loop for: the output is silent.
    Zero,
    /// An input rate scsynth does not handle: only the first sample is ever written.
    Nothing,
    /// Demand rate: a value of each input when asked for one (NaN if either
    /// ran out), a reset of both when asked to reset.
    Demand,
}

fn choose_calc(spec: &UnitSpec<'_>, io: &Wires<'_>, cx: &UnitCtx<'_>) -> Calc {
    if io.num_inputs() < 2 {
        return Calc::Nothing;
    }
    if spec.rate == Rate::Demand {
        return Calc::Demand;
    }
    if cx.rate.buf_length == 1 {
        return Calc::One;
    }
    match (io.in_rate(0), io.in_rate(1)) {
        (Rate::Audio, Rate::Audio) => Calc::Aa,
        (Rate::Audio, Rate::Control) => Calc::Ak,
        (Rate::Audio, Rate::Scalar) => Calc::Ai,
        (Rate::Audio, _) => Calc::Nothing,
        (Rate::Control, Rate::Audio) => Calc::Ka,
        (Rate::Scalar, Rate::Audio) => Calc::Ia,
        (Rate::Control | Rate::Scalar, _) => Calc::Zero,
        (Rate::Demand, _) => Calc::Nothing,
    }
}

/// A demand-rate operator's step: resets both inputs (None) or gives their next values.
fn demand_values(io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<(f32, f32)> {
    let k = cx.demanded;
    if k == 0 {
        cx.reset_input(io, 0);
        cx.reset_input(io, 1);
        None
    } else {
        let a = cx.demand_input_at(io, 0, k);
        Some((a, cx.demand_input_at(io, 1, k)))
    }
}

/// A BinaryOpUGen computing operator `O`.
pub(crate) struct BinaryOp<O: BinOp> {
    prev_a: f32,
    prev_b: f32,
    calc: Calc,
    simd: bool,
    /// Whether `next` runs the AVX2 build of `run` (a block at a time, on
    /// a CPU that has it).
    wide: bool,
    _op: PhantomData<O>,
}

impl<O: BinOp> BinaryOp<O> {
    fn build(calc: Calc, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let simd = ramp::simd_block(cx.rate.buf_length) && O::SIMD != Simd::None;
        let mut unit = BinaryOp { prev_a: io.in0(0), prev_b: io.in0(1), calc, simd: false, wide: false, _op: PhantomData };
        if matches!(calc, Calc::Nothing | Calc::Demand) {
            io.out(0)[0] = 0.0;
        } else {
            // The first sample always comes from the plain loops.
            unit.run(io, cx);
        }
        unit.simd = simd;
        unit.wide = cx.rate.buf_length > 1
            && matches!(calc, Calc::Aa | Calc::Ai | Calc::Ia | Calc::Ak | Calc::Ka)
            && crate::vector::avx2();
        unit
    }

    /// `run` compiled for AVX2: its element-wise loops take eight samples
    /// a step instead of four, each sample's arithmetic unchanged.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&mut self, io: &mut Wires<'_>, sf: f64) {
        self.run_block(io, sf);
    }

    /// `run` out of line, so that `next` stays a jump to one build or the
    /// other, with nothing to save on the way.
    #[inline(never)]
    fn run_plain(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }

    #[inline(always)]
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.calc == Calc::Demand {
            if let Some((a, b)) = demand_values(io, cx) {
                io.out(0)[0] = if a.is_nan() || b.is_nan() { f32::NAN } else { O::demand(a, b) };
            }
            return;
        }
        self.run_block(io, cx.rate.slope_factor);
    }

    /// Every calculation but the demand-rate one, which needs the unit
    /// context; `sf` is the rate's slope factor.
    #[inline(always)]
    fn run_block(&mut self, io: &mut Wires<'_>, sf: f64) {
        let simd = self.simd;
        let full = simd && O::SIMD == Simd::Full;
        match self.calc {
            Calc::One => {
                let (a, b) = (io.in0(0), io.in0(1));
                io.out(0)[0] = O::one(a, b);
            }
            Calc::Aa => {
                let (a, b) = (io.inp(0), io.inp(1));
                let out = io.out(0);
                if simd {
                    map_aa(out, a, b, O::simd_f);
                } else {
                    map_aa(out, a, b, O::f);
                }
            }
            Calc::Ai => {
                let (a, xb) = (io.inp(0), io.in0(1));
                let out = io.out(0);
                if simd {
                    O::simd_ai(out, a, xb)
                } else {
                    O::ai(out, a, xb)
                }
                self.prev_b = xb;
            }
            Calc::Ia => {
                let (xa, b) = (io.in0(0), io.inp(1));
                let out = io.out(0);
                if simd {
                    O::simd_ia(out, xa, b)
                } else {
                    O::ia(out, xa, b)
                }
                self.prev_a = xa;
            }
            Calc::Ak => {
                let (a, next_b) = (io.inp(0), io.in0(1));
                let out = io.out(0);
                let xb = self.prev_b;
                if xb == next_b {
                    if full {
                        O::simd_ak_steady(out, a, xb)
                    } else {
                        O::ak_steady(out, a, xb)
                    }
                } else {
                    let slope = ramp::calc_slope(next_b, xb, sf);
                    let n = out.len();
                    if full {
                        ramp::lanes_map(out, a, xb, slope, |x, v| O::simd_f(x, v));
                        self.prev_b = next_b;
                    } else {
                        self.prev_b = ramp::serial(n, xb, slope, |i, v| out[i] = O::f(a[i], v));
                    }
                }
            }
            Calc::Ka => {
                let (next_a, b) = (io.in0(0), io.inp(1));
                let out = io.out(0);
                let xa = self.prev_a;
                if xa == next_a {
                    if full {
                        O::simd_ka_steady(out, xa, b)
                    } else {
                        O::ka_steady(out, xa, b)
                    }
                } else {
                    let slope = ramp::calc_slope(next_a, xa, sf);
                    let n = out.len();
                    if full {
                        ramp::lanes_map(out, b, xa, slope, |x, v| O::simd_f(v, x));
                        self.prev_a = next_a;
                    } else {
                        self.prev_a = ramp::serial(n, xa, slope, |i, v| out[i] = O::f(v, b[i]));
                    }
                }
            }
            Calc::Zero => io.out(0).fill(0.0),
            // Demand: `run`.
            Calc::Nothing | Calc::Demand => {}
        }
    }
}

impl<O: BinOp> Unit for BinaryOp<O> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only where the CPU has AVX2.
            unsafe { self.run_avx2(io, cx.rate.slope_factor) };
            return;
        }
        self.run_plain(io, cx);
    }
}

/// The step of operator `O` of several synths together, lane by lane,
/// each lane computed by its own unit's loops as `next` computes it,
/// without a call through the unit's table and the engine's step per
/// synth. (Registered per operator, so each lane is `O`'s unit: a block
/// operator, or the one-value operator at a block size of one.)
pub(crate) fn binary_lanes<O: BinOp>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        // SAFETY: the CPU has AVX2 (checked just now).
        unsafe { binary_lanes_avx2::<O>(lanes, rate) };
        return;
    }
    binary_lanes_in::<O>(lanes, rate);
}

/// `binary_lanes_in` compiled for AVX2: the units' block loops take eight
/// samples a step, each sample's arithmetic unchanged (as `run_avx2`).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn binary_lanes_avx2<O: BinOp>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    binary_lanes_in::<O>(lanes, rate);
}

#[inline(always)]
fn binary_lanes_in<O: BinOp>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let sf = rate.slope_factor;
    // Every lane a block operator (the common case): its type is looked up
    // once for the lanes that share its table, not through each unit.
    if let Some(units) = crate::unit::lane_units::<BinaryOp<O>>(lanes) {
        for l in 0..lanes.len.min(MAX_LANES) {
            // SAFETY: the pointers came from distinct units borrowed
            // mutably through `lanes` for the whole call.
            let u = unsafe { &mut *units[l] };
            let Some(io) = lanes.ios[l].as_mut() else { return };
            if u.calc == Calc::Demand {
                return;
            }
            u.run_block(io, sf);
        }
        return;
    }
    for l in 0..lanes.len.min(MAX_LANES) {
        // A lane that is not filled or not this operator's unit leaves the
        // step uncomputed rather than panic (as the other lane kernels do).
        let (Some(io), Some(unit)) = (lanes.ios[l].as_mut(), lanes.units[l].as_mut()) else { return };
        if let Some(u) = downcast_unit::<BinaryOp<O>>(&mut **unit) {
            if u.calc == Calc::Demand {
                return;
            }
            u.run_block(io, sf);
        } else if let Some(u) = downcast_unit::<BinaryOpOne<O>>(&mut **unit) {
            u.compute(io);
        } else {
            return;
        }
    }
}

/// Registers the lane kernels of the operators whose steps synths most
/// often share: each index is built as that operator's unit (`construct`).
pub(crate) fn register_lanes(r: &mut crate::registry::Registry) {
    r.add_op_lanes("BinaryOpUGen", op::ADD, binary_lanes::<Add>);
    r.add_op_lanes("BinaryOpUGen", op::SUB, binary_lanes::<Sub>);
    r.add_op_lanes("BinaryOpUGen", op::MUL, binary_lanes::<Mul>);
    r.add_op_lanes("BinaryOpUGen", op::FDIV, binary_lanes::<FDiv>);
}

/// A BinaryOpUGen computing operator `O` one value per call (control and
/// scalar rate, or a block of one sample): nothing to choose per call.
pub(crate) struct BinaryOpOne<O: BinOp> {
    _op: PhantomData<O>,
}

impl<O: BinOp> BinaryOpOne<O> {
    fn build(io: &mut Wires<'_>) -> Self {
        let unit = BinaryOpOne { _op: PhantomData };
        unit.compute(io);
        unit
    }

    #[inline(always)]
    fn compute(&self, io: &mut Wires<'_>) {
        // Input 1 first: its bounds check then covers input 0.
        let b = io.in0(1);
        let a = io.in0(0);
        *io.out0(0) = O::one(a, b);
    }
}

impl<O: BinOp> Unit for BinaryOpOne<O> {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.compute(io);
    }
}

// ---- random ranges --------------------------------------------------------

/// `rrand` and `exprand` of two signals: they draw from the synth's random
/// generator, so they get their own loops.
pub(crate) struct RandRange {
    exponential: bool,
    prev_a: f32,
    prev_b: f32,
    calc: Calc,
}

impl RandRange {
    /// One draw as the one-sample calculation makes it.
    #[inline]
    fn one(&self, a: f32, b: f32, rg: &mut RGen) -> f32 {
        if self.exponential {
            exprand(a, b, rg)
        } else if b > a {
            a + rg.frand() * (b - a)
        } else {
            b + rg.frand() * (a - b)
        }
    }

    /// One draw as the block loops make it; scsynth's linear loops use the
    /// bipolar generator here, so their values stray outside the range.
    #[inline]
    fn draw(&self, a: f32, b: f32, rg: &mut RGen) -> f32 {
        if self.exponential {
            exprand(a, b, rg)
        } else if b > a {
            a + rg.frand2() * (b - a)
        } else {
            b + rg.frand2() * (a - b)
        }
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.calc == Calc::Demand {
            if let Some((a, b)) = demand_values(io, cx) {
                io.out(0)[0] = if a.is_nan() || b.is_nan() { f32::NAN } else { self.one(a, b, &mut cx.world.rgen) };
            }
            return;
        }
        let sf = cx.rate.slope_factor;
        let rg = &mut cx.world.rgen;
        match self.calc {
            Calc::One => {
                let v = self.one(io.in0(0), io.in0(1), rg);
                io.out(0)[0] = v;
            }
            Calc::Aa => {
                let (a, b) = (io.inp(0), io.inp(1));
                let out = io.out(0);
                for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                    *o = self.draw(x, y, rg);
                }
            }
            Calc::Ai | Calc::Ak => {
                let (a, next_b) = (io.inp(0), io.in0(1));
                let out = io.out(0);
                let xb = if self.calc == Calc::Ai { next_b } else { self.prev_b };
                let slope = ramp::calc_slope(next_b, xb, sf);
                let n = out.len();
                let this = &*self;
                let end = ramp::serial(n, xb, slope, |i, v| out[i] = this.draw(a[i], v, rg));
                self.prev_b = if self.calc == Calc::Ai || xb == next_b { next_b } else { end };
            }
            Calc::Ia | Calc::Ka => {
                let (next_a, b) = (io.in0(0), io.inp(1));
                let out = io.out(0);
                let xa = if self.calc == Calc::Ia { next_a } else { self.prev_a };
                let slope = ramp::calc_slope(next_a, xa, sf);
                let n = out.len();
                let this = &*self;
                let end = ramp::serial(n, xa, slope, |i, v| out[i] = this.draw(v, b[i], rg));
                self.prev_a = if self.calc == Calc::Ia || xa == next_a { next_a } else { end };
            }
            Calc::Zero => io.out(0).fill(0.0),
            Calc::Nothing | Calc::Demand => {}
        }
    }
}

#[inline]
fn exprand(a: f32, b: f32, rg: &mut RGen) -> f32 {
    let (lo, hi) = if b > a { (a, b) } else { (b, a) };
    rg.exprandrng(lo as f64, hi as f64) as f32
}

impl Unit for RandRange {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

// ---- construction ---------------------------------------------------------

fn boxed<O: BinOp>(calc: Calc, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    if calc == Calc::One {
        return Box::new(BinaryOpOne::<O>::build(io));
    }
    Box::new(BinaryOp::<O>::build(calc, io, cx))
}

/// Builds the BinaryOpUGen for `spec.special_index`.
pub(crate) fn construct(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    let calc = choose_calc(spec, io, cx);
    let mut index = spec.special_index;
    // scsynth has no firstArg loop with a control or constant first input,
    // and falls back to addition there.
    if index == op::FIRST_ARG && matches!(calc, Calc::Ka | Calc::Ia) {
        return boxed::<PlainAdd>(calc, io, cx);
    }
    // Its SIMD table at block sizes other than 64 maps this case to rrand.
    if index == op::EXP_RAND_RANGE
        && calc == Calc::Ia
        && ramp::simd_block(cx.rate.buf_length)
        && cx.rate.buf_length != 64
    {
        index = op::RAND_RANGE;
    }
    if index == op::RAND_RANGE || index == op::EXP_RAND_RANGE {
        let mut unit = RandRange { exponential: index == op::EXP_RAND_RANGE, prev_a: io.in0(0), prev_b: io.in0(1), calc };
        if matches!(calc, Calc::Nothing | Calc::Demand) {
            io.out(0)[0] = 0.0;
        } else {
            unit.run(io, cx);
        }
        return Box::new(unit);
    }
    match index {
        op::ADD => boxed::<Add>(calc, io, cx),
        op::SUB => boxed::<Sub>(calc, io, cx),
        op::MUL => boxed::<Mul>(calc, io, cx),
        op::IDIV => boxed::<IDiv>(calc, io, cx),
        op::FDIV => boxed::<FDiv>(calc, io, cx),
        op::MOD => boxed::<Mod>(calc, io, cx),
        op::EQ => boxed::<Eq>(calc, io, cx),
        op::NE => boxed::<Ne>(calc, io, cx),
        op::LT => boxed::<Lt>(calc, io, cx),
        op::GT => boxed::<Gt>(calc, io, cx),
        op::LE => boxed::<Le>(calc, io, cx),
        op::GE => boxed::<Ge>(calc, io, cx),
        op::MIN => boxed::<Min>(calc, io, cx),
        op::MAX => boxed::<Max>(calc, io, cx),
        op::BIT_AND => boxed::<BitAnd>(calc, io, cx),
        op::BIT_OR => boxed::<BitOr>(calc, io, cx),
        op::BIT_XOR => boxed::<BitXor>(calc, io, cx),
        op::LCM => boxed::<Lcm>(calc, io, cx),
        op::GCD => boxed::<Gcd>(calc, io, cx),
        op::ROUND => boxed::<Round>(calc, io, cx),
        op::ROUND_UP => boxed::<RoundUp>(calc, io, cx),
        op::TRUNC => boxed::<Trunc>(calc, io, cx),
        op::ATAN2 => boxed::<Atan2>(calc, io, cx),
        op::HYPOT => boxed::<Hypot>(calc, io, cx),
        op::HYPOTX => boxed::<Hypotx>(calc, io, cx),
        op::POW => boxed::<Pow>(calc, io, cx),
        op::SHIFT_LEFT => boxed::<ShiftLeft>(calc, io, cx),
        op::SHIFT_RIGHT => boxed::<ShiftRight>(calc, io, cx),
        op::RING1 => boxed::<Ring1>(calc, io, cx),
        op::RING2 => boxed::<Ring2>(calc, io, cx),
        op::RING3 => boxed::<Ring3>(calc, io, cx),
        op::RING4 => boxed::<Ring4>(calc, io, cx),
        op::DIF_SQR => boxed::<DifSqr>(calc, io, cx),
        op::SUM_SQR => boxed::<SumSqr>(calc, io, cx),
        op::SQR_SUM => boxed::<SqrSum>(calc, io, cx),
        op::SQR_DIF => boxed::<SqrDif>(calc, io, cx),
        op::ABS_DIF => boxed::<AbsDif>(calc, io, cx),
        op::THRESH => boxed::<Thresh>(calc, io, cx),
        op::AM_CLIP => boxed::<AmClip>(calc, io, cx),
        op::SCALE_NEG => boxed::<ScaleNeg>(calc, io, cx),
        op::CLIP2 => boxed::<Clip2>(calc, io, cx),
        op::EXCESS => boxed::<Excess>(calc, io, cx),
        op::FOLD2 => boxed::<Fold2>(calc, io, cx),
        op::WRAP2 => boxed::<Wrap2>(calc, io, cx),
        op::FIRST_ARG => boxed::<FirstArg>(calc, io, cx),
        // Unknown operators (and the unsigned shift and fill selectors,
        // which scsynth never implemented) compute a sum, as scsynth does.
        _ => boxed::<PlainAdd>(calc, io, cx),
    }
}

/// Keeps the generic [`Construct`] path available for tests that want a
/// specific operator type.
impl<O: BinOp> Construct for BinaryOp<O> {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let calc = choose_calc(spec, io, cx);
        Self::build(calc, io, cx)
    }
}
