//! Single-lane versions of the vector math scsynth's SIMD loops use.
//!
//! scsynth computes several operators in its SIMD paths with polynomial
//! approximations (cephes-style, max. relative error around 5e-7) instead of
//! the C library. To produce the same samples, each function here repeats the
//! same single-precision steps for one lane.

const SIGN_MASK: u32 = 0x8000_0000;
const EXP_MASK: u32 = 0x7F80_0000;
const HALF_EXP: u32 = 0x3F00_0000;

#[inline(always)]
fn bits(x: f32) -> u32 {
    x.to_bits()
}

#[inline(always)]
fn from_bits(b: u32) -> f32 {
    f32::from_bits(b)
}

/// Round half to even by the 2^23 trick (the SSE2 path has no round
/// instruction).
#[inline(always)]
pub fn round(x: f32) -> f32 {
    let sign = bits(x) & SIGN_MASK;
    let abs = from_bits(bits(x) ^ sign);
    let two23 = 8_388_608.0f32;
    let rounded = (abs + two23) - two23;
    from_bits(sign ^ bits(rounded))
}

#[inline(always)]
pub fn floor(x: f32) -> f32 {
    let r = round(x);
    // Always subtract (possibly zero), so signed zeros come out as in SIMD.
    r - if r > x { 1.0 } else { 0.0 }
}

#[inline(always)]
pub fn ceil(x: f32) -> f32 {
    let r = round(x);
    r + if r < x { 1.0 } else { 0.0 }
}

/// SSE `cvttps2dq`: truncation, with 0x80000000 for out-of-range values.
#[inline(always)]
fn truncate_to_int(x: f32) -> i32 {
    if x.is_nan() || x >= 2_147_483_648.0 || x < -2_147_483_648.0 {
        i32::MIN
    } else {
        x as i32
    }
}

#[inline(always)]
fn ldexp(x: f32, n: i32) -> f32 {
    let exponent = bits(x) & EXP_MASK;
    let mantissa = bits(x) & !EXP_MASK;
    let new_exp = (n.wrapping_shl(23)).wrapping_add(exponent as i32) as u32;
    from_bits(mantissa | new_exp)
}

#[inline(always)]
fn frexp(x: f32) -> (f32, i32) {
    let exponent = bits(x) & EXP_MASK;
    let e = ((exponent >> 23) as i32) - 126;
    (from_bits((bits(x) & !EXP_MASK) | HALF_EXP), e)
}

/// `e^x`.
#[inline]
pub fn exp(arg: f32) -> f32 {
    let approx = exp_unchecked(arg);
    if arg > 88.722_839_052_068_35_f32 {
        f32::MAX
    } else if arg < -88.0 {
        0.0
    } else {
        approx
    }
}

/// Natural logarithm.
#[inline]
pub fn log(x: f32) -> f32 {
    let (mut x, mut e) = frexp(x);
    let below = x < 0.707_106_781_186_547_5_f32;
    if below {
        e -= 1;
    }
    let x_add = if below { x } else { 0.0 };
    x += x_add - 1.0;
    let mut y = ((((((((7.037_683_629_2e-2_f32 * x - 1.151_461_031_0e-1_f32) * x + 1.167_699_874_0e-1_f32) * x
        - 1.242_014_084_6e-1_f32)
        * x
        + 1.424_932_278_7e-1_f32)
        * x
        - 1.666_805_766_5e-1_f32)
        * x
        + 2.000_071_476_5e-1_f32)
        * x
        - 2.499_999_399_3e-1_f32)
        * x
        + 3.333_333_117_4e-1_f32)
        * x
        * x
        * x;
    let fe = e as f32;
    y += fe * -2.121_944_4e-4_f32;
    y -= 0.5f32 * x * x;
    let z = x + y;
    z + 0.693_359_375f32 * fe
}

/// `a^b` by `exp(b * log(a))`, with an exact zero for `a == 0`.
#[inline]
pub fn pow(a: f32, b: f32) -> f32 {
    if a == 0.0 {
        0.0
    } else {
        exp(b * log(a))
    }
}

/// `pow` of |a| carrying the sign of `a`.
#[inline]
pub fn signed_pow(a: f32, b: f32) -> f32 {
    let sign = bits(a) & SIGN_MASK;
    let abs = from_bits(bits(a) ^ sign);
    from_bits(sign | bits(pow(abs, b)))
}

#[inline]
pub fn log2(x: f32) -> f32 {
    log(x) * (1.0 / std::f64::consts::LN_2) as f32
}

#[inline]
pub fn log10(x: f32) -> f32 {
    log(x) * (1.0 / std::f64::consts::LN_10) as f32
}

/// The SSE reciprocal estimate.
#[inline(always)]
fn rcp_estimate(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE is part of the x86_64 baseline.
        unsafe { _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(x))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x
    }
}

/// Reciprocal estimate refined by one Newton step, in the vector form.
#[inline]
pub fn reciprocal(x: f32) -> f32 {
    let approx = rcp_estimate(x);
    let diff = 1.0 - approx * x;
    diff * approx + approx
}

/// `e^x` without the range checks (used inside `tanh`, and by `exp`).
#[inline]
fn exp_unchecked(arg: f32) -> f32 {
    let mut x = arg;
    let z = round(1.442_695_040_888_963_4_f32 * x);
    let n = truncate_to_int(z);
    x -= z * 0.693_359_375f32;
    x -= z * -2.121_944_4e-4f32;
    let p = 1.0f32
        + x * (1.000_000_357_627_868_7_f32
            + x * (0.499_999_672_174_453_7_f32
                + x * (0.166_655_614_972_114_56_f32
                    + x * (4.167_006_909_847_259_5e-2_f32
                        + x * (8.420_792_408_287_525e-3_f32 + x * 1.386_119_984_090_328_2e-3_f32)))));
    ldexp(p, n)
}

const FOUR_OVER_PI: f32 = 1.273_239_544_735_162_7;
const DP1: f32 = 0.785_156_25;
const DP2: f32 = 2.418_756_484_985_351_6e-4;
const DP3: f32 = 3.774_894_977_445_941e-8;

/// Octant reduction shared by sin, cos and tan: returns (j, reduced |x|).
#[inline(always)]
fn reduce(abs: f32) -> (i32, f32) {
    let y = abs * FOUR_OVER_PI;
    let j = truncate_to_int(y).wrapping_add(1) & !1;
    let y = j as f32;
    (j, ((abs - y * DP1) - y * DP2) - y * DP3)
}

#[inline(always)]
fn cos_poly(z: f32) -> f32 {
    ((2.443_315_711_809_948e-5_f32 * z - 1.388_731_625_493_765e-3_f32) * z + 4.166_664_568_298_827e-2_f32) * z * z
        - 0.5 * z
        + 1.0
}

#[inline(always)]
fn sin_poly(z: f32, base: f32) -> f32 {
    ((-1.951_529_589_1e-4_f32 * z + 8.332_160_873_6e-3_f32) * z - 1.666_665_461_1e-1_f32) * z * base + base
}

#[inline]
pub fn sin(x: f32) -> f32 {
    let sign = bits(x) & SIGN_MASK;
    let abs = from_bits(bits(x) & !SIGN_MASK);
    let (j, base) = reduce(abs);
    let sign = sign ^ (((j & 4) as u32) << 29);
    let z = base * base;
    let r = if j & 2 == 0 { sin_poly(z, base) } else { cos_poly(z) };
    from_bits(bits(r) ^ sign)
}

#[inline]
pub fn cos(x: f32) -> f32 {
    let abs = from_bits(bits(x) & !SIGN_MASK);
    let (j, base) = reduce(abs);
    let jm2 = j.wrapping_sub(2);
    let sign = ((!jm2 & 4) as u32) << 29;
    let z = base * base;
    let r = if jm2 & 2 == 0 { sin_poly(z, base) } else { cos_poly(z) };
    from_bits(bits(r) ^ sign)
}

#[inline]
pub fn tan(x: f32) -> f32 {
    let sign = bits(x) & SIGN_MASK;
    let abs = from_bits(bits(x) & !SIGN_MASK);
    let (j, base) = reduce(abs);
    let x = base;
    let x2 = x * x;
    let approx = x + x
        * x2
        * (0.333_331_555_128_097_53_f32
            + x2 * (0.133_388_251_066_207_89_f32
                + x2 * (5.340_956_896_543_502_8e-2_f32
                    + x2 * (2.443_529_665_470_123_3e-2_f32
                        + x2 * (3.112_703_096_121_549_6e-3_f32 + x2 * 9.389_210_492_372_512_8e-3_f32)))));
    let r = if j & 2 == 0 { approx } else { -1.0 / approx };
    from_bits(bits(r) ^ sign)
}

#[inline]
pub fn asin(arg: f32) -> f32 {
    let abs = from_bits(bits(arg) & !SIGN_MASK);
    let sign = bits(arg) & SIGN_MASK;
    let greater = abs > 0.5;
    let reduced = ((1.0 - abs) * 0.5).sqrt();
    let x = if greater { reduced } else { abs };
    let x2 = x * x;
    let poly = x + x
        * x2
        * (0.166_667_521_f32
            + x2 * (7.495_310_157_537_460_3e-2_f32
                + x2 * (4.546_901_956_200_599_7e-2_f32
                    + x2 * (2.418_550_290_167_331_7e-2_f32 + x2 * 4.215_701_296_925_544_7e-2_f32))));
    let approx = if greater { 1.570_796_370_506_286_6_f32 - poly - poly } else { poly };
    let approx = from_bits(bits(approx) ^ sign);
    if abs > 1.0 {
        0.0
    } else {
        approx
    }
}

#[inline]
pub fn acos(arg: f32) -> f32 {
    let abs = from_bits(bits(arg) & !SIGN_MASK);
    let greater = abs > 0.5;
    let asin_arg = if greater { ((1.0 - abs) * 0.5).sqrt() } else { arg };
    let a = asin(asin_arg);
    let two = a + a;
    let r = if arg > -0.5 {
        if arg > 0.5 {
            two
        } else {
            1.570_796_370_506_286_6_f32 - a
        }
    } else {
        std::f32::consts::PI - two
    };
    if abs > 1.0 {
        0.0
    } else {
        r
    }
}

#[inline]
pub fn atan(arg: f32) -> f32 {
    let sign = bits(arg) & SIGN_MASK;
    let abs = from_bits(bits(arg) & !SIGN_MASK);
    let range1 = (abs - 1.0) / (abs + 1.0);
    let range2 = -1.0 / abs;
    let above01 = abs > (std::f64::consts::SQRT_2 - 1.0) as f32;
    let above12 = abs > (std::f64::consts::SQRT_2 + 1.0) as f32;
    let (x, offset) = if above01 {
        if above12 {
            (range2, std::f32::consts::FRAC_PI_2)
        } else {
            (range1, std::f32::consts::FRAC_PI_4)
        }
    } else {
        (abs, 0.0)
    };
    let x2 = x * x;
    let approx = offset
        + x
        + x * x2
            * (-0.333_329_498_767_852_78_f32
                + x2 * (0.199_777_320_027_351_38_f32
                    + x2 * (-0.138_778_775_930_404_66_f32 + x2 * 8.054_284_751_415_252_7e-2_f32)));
    from_bits(bits(approx) ^ sign)
}

#[inline]
pub fn tanh(arg: f32) -> f32 {
    let sign = bits(arg) & SIGN_MASK;
    let abs = from_bits(bits(arg) ^ sign);
    let medium = 1.0 - 2.0 / (exp_unchecked(abs + abs) + 1.0);
    let sq = abs * abs;
    let small = ((((-5.704_988_727_45e-3_f32 * sq + 2.063_908_879_54e-2_f32) * sq - 5.373_971_555_31e-2_f32) * sq
        + 1.333_144_220_36e-1_f32)
        * sq
        - 3.333_328_194_22e-1_f32)
        * sq
        * arg
        + arg;
    let large_or_medium = if abs > 22.0 { 1.0 } else { medium };
    let lm = from_bits(bits(large_or_medium) | sign);
    if abs < 0.625 {
        small
    } else {
        lm
    }
}

/// `(|x| - 0.25) / x` outside ±0.5, computed branch-free in SIMD.
#[inline]
pub fn softclip(x: f32) -> f32 {
    let abs = x.abs();
    if abs < 0.5 {
        x
    } else {
        (abs - 0.25) / x
    }
}

// Unit conversions, through the approximated pow and log.

#[inline]
pub fn midicps(midi: f32) -> f32 {
    440.0 * pow(2.0, (midi - 69.0) * 0.083_333_333_333)
}

#[inline]
pub fn cpsmidi(freq: f32) -> f32 {
    log2((freq * 0.002_272_727_272_7).abs()) * 12.0 + 69.0
}

#[inline]
pub fn midiratio(midi: f32) -> f32 {
    pow(2.0, midi * 0.083_333_333_333)
}

#[inline]
pub fn ratiomidi(ratio: f32) -> f32 {
    12.0 * log2(ratio)
}

#[inline]
pub fn octcps(note: f32) -> f32 {
    440.0 * pow(2.0, note - 4.75)
}

#[inline]
pub fn cpsoct(freq: f32) -> f32 {
    log2((freq * 0.002_272_727_272_7).abs()) + 4.75
}

#[inline]
pub fn ampdb(amp: f32) -> f32 {
    log10(amp.abs()) * 20.0
}

#[inline]
pub fn dbamp(db: f32) -> f32 {
    pow(10.0, db * 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximations_are_close_to_the_library() {
        for &x in &[-10.0f32, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5, 20.0] {
            let e = exp(x);
            assert!((e - x.exp()).abs() <= 2e-6 * x.exp(), "exp({x}) = {e}");
        }
        for &x in &[0.001f32, 0.5, 0.7071, 1.0, 2.0, 1000.0] {
            assert!((log(x) - x.ln()).abs() < 1e-6 * (1.0 + x.ln().abs()), "log({x})");
        }
        assert!((pow(2.0, 10.0) - 1024.0).abs() < 1e-3);
        assert_eq!(signed_pow(-2.0, 2.0).signum(), -1.0);
        assert_eq!(floor(-1.5), -2.0);
        assert_eq!(ceil(1.25), 2.0);
        assert!((reciprocal(3.0) - 1.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn trigonometry_is_close_to_the_library() {
        for i in -40..=40 {
            let x = i as f32 * 0.173;
            assert!((sin(x) - x.sin()).abs() < 2e-6, "sin({x}) = {}", sin(x));
            assert!((cos(x) - x.cos()).abs() < 2e-6, "cos({x}) = {}", cos(x));
            assert!((atan(x) - x.atan()).abs() < 2e-6, "atan({x})");
            assert!((tanh(x) - x.tanh()).abs() < 2e-6, "tanh({x})");
            if x.cos().abs() > 0.1 {
                assert!((tan(x) - x.tan()).abs() < 1e-5 * (1.0 + x.tan().abs()), "tan({x})");
            }
        }
        for i in -10..=10 {
            let x = i as f32 * 0.099;
            assert!((asin(x) - x.asin()).abs() < 2e-6, "asin({x})");
            assert!((acos(x) - x.acos()).abs() < 2e-6, "acos({x})");
        }
        assert_eq!(asin(1.5), 0.0);
        assert!((midicps(69.0) - 440.0).abs() < 1e-3);
        assert!((cpsmidi(440.0) - 69.0).abs() < 1e-4);
        assert!((dbamp(-20.0) - 0.1).abs() < 1e-6);
        assert!((ampdb(0.1) + 20.0).abs() < 1e-4);
    }
}
