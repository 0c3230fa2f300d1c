//! Scalar math in single precision, with the exact branch structure of
//! SuperCollider's inline operators so results agree bit for bit, and C's
//! float-to-int conversions as x86 performs them.

/// `sc_mod`: modulo into [0, hi), avoiding the division when one wrap suffices.
#[inline]
pub fn sc_mod(mut x: f32, hi: f32) -> f32 {
    let lo = 0.0f32;
    if x >= hi {
        x -= hi;
        if x < hi {
            return x;
        }
    } else if x < lo {
        x += hi;
        if x >= lo {
            return x;
        }
    } else {
        return x;
    }
    if hi == lo {
        return lo;
    }
    x - hi * (x / hi).floor()
}

/// `sc_mod` on integers: the remainder in [0, hi), with the cheap cases
/// first and a floor division in double precision for the rest.
#[inline]
pub fn sc_mod_i32(x: i32, hi: i32) -> i32 {
    let mut x = x;
    if x >= hi {
        x = x.wrapping_sub(hi);
        if x < hi {
            return x;
        }
    } else if x < 0 {
        x = x.wrapping_add(hi);
        if x >= 0 {
            return x;
        }
    } else {
        return x;
    }
    if hi == 0 {
        return 0;
    }
    let r = x as f64 - hi as f64 * (x as f64 / hi as f64).floor();
    d2i(r)
}

/// Defines `sc_wrap` for one float type: wraps into [lo, hi), with one
/// add or subtract where that suffices, exactly as SuperCollider's inline.
macro_rules! define_sc_wrap {
    ($name:ident, $t:ty) => {
        #[inline]
        pub fn $name(mut x: $t, lo: $t, hi: $t) -> $t {
            let range;
            if x >= hi {
                range = hi - lo;
                x -= range;
                if x < hi {
                    return x;
                }
            } else if x < lo {
                range = hi - lo;
                x += range;
                if x >= lo {
                    return x;
                }
            } else {
                return x;
            }
            if hi == lo {
                return lo;
            }
            x - range * ((x - lo) / range).floor()
        }
    };
}

define_sc_wrap!(sc_wrap, f32);
define_sc_wrap!(sc_wrap_f64, f64);

/// `sc_fold`: reflects into [lo, hi].
#[inline]
pub fn sc_fold(mut x: f32, lo: f32, hi: f32) -> f32 {
    let offset = x - lo;
    if x >= hi {
        x = hi + hi - x;
        if x >= lo {
            return x;
        }
    } else if x < lo {
        x = lo + lo - x;
        if x < hi {
            return x;
        }
    } else {
        return x;
    }
    if hi == lo {
        return lo;
    }
    let range = hi - lo;
    let range2 = range + range;
    let mut c = offset - range2 * (offset / range2).floor();
    if c >= range {
        c = range2 - c;
    }
    c + lo
}

#[inline]
pub fn sc_round(x: f32, quant: f32) -> f32 {
    if quant == 0.0 {
        x
    } else {
        (x / quant + 0.5).floor() * quant
    }
}

#[inline]
pub fn sc_round_up(x: f32, quant: f32) -> f32 {
    if quant == 0.0 {
        x
    } else {
        (x / quant).ceil() * quant
    }
}

#[inline]
pub fn sc_trunc(x: f32, quant: f32) -> f32 {
    if quant == 0.0 {
        x
    } else {
        (x / quant).floor() * quant
    }
}

/// `a < b ? a : b`: returns `b` when either is NaN, like the C++.
#[inline(always)]
pub fn sc_min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

#[inline(always)]
pub fn sc_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// Octagonal approximation of the hypotenuse.
#[inline]
pub fn sc_hypotx(x: f32, y: f32) -> f32 {
    const SQRT2_M1: f32 = (std::f64::consts::SQRT_2 - 1.0) as f32;
    let x = x.abs();
    let y = y.abs();
    let minxy = sc_min(x, y);
    x + y - SQRT2_M1 * minxy
}

/// Two-quadrant multiply, in the branch-free form scsynth uses for floats.
#[inline(always)]
pub fn sc_amclip(a: f32, b: f32) -> f32 {
    a * 0.5 * (b + b.abs())
}

/// C's float-to-int conversion as scsynth's `int(x)` does it: truncation,
/// with out-of-range values giving `i32::MIN` as on x86.
#[inline(always)]
pub fn c_int(x: f32) -> i32 {
    if x.is_nan() || x >= 2_147_483_648.0 || x < -2_147_483_648.0 {
        i32::MIN
    } else {
        x as i32
    }
}

#[inline(always)]
pub fn c_long(x: f32) -> i64 {
    if x.is_nan() || x >= 9.223_372e18 || x < -9.223_372e18 {
        i64::MIN
    } else {
        x as i64
    }
}

fn gcd_i64(a: i64, b: i64) -> i64 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let negative = a <= 0 && b <= 0;
    let mut a = a.wrapping_abs();
    let mut b = b.wrapping_abs();
    if a == 1 || b == 1 {
        return if negative { -1 } else { 1 };
    }
    if a < b {
        std::mem::swap(&mut a, &mut b);
    }
    while b > 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    if negative {
        -a
    } else {
        a
    }
}

#[inline]
pub fn sc_gcd(a: f32, b: f32) -> f32 {
    gcd_i64(c_long(a.trunc()), c_long(b.trunc())) as f32
}

#[inline]
pub fn sc_lcm(a: f32, b: f32) -> f32 {
    let a = c_long(a.trunc());
    let b = c_long(b.trunc());
    if a == 0 || b == 0 {
        0.0
    } else {
        (a.wrapping_mul(b) / gcd_i64(a, b)) as f32
    }
}

/// Shifts as x86 does them: the count is taken modulo 32.
#[inline]
pub fn shift_left(a: f32, b: f32) -> f32 {
    c_int(a).wrapping_shl(c_int(b) as u32) as f32
}

#[inline]
pub fn shift_right(a: f32, b: f32) -> f32 {
    c_int(a).wrapping_shr(c_int(b) as u32) as f32
}

/// `1/x` through the SSE reciprocal estimate refined by one Newton step,
/// which is what scsynth uses on x86 (23 of 24 bits exact).
#[inline]
pub fn sc_reciprocal(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE is part of the x86_64 baseline, so these intrinsics are
        // always available on this target.
        unsafe {
            let arg = _mm_set_ss(x);
            let approx = _mm_rcp_ss(arg);
            let muls = _mm_mul_ss(_mm_mul_ss(arg, approx), approx);
            let doubled = _mm_add_ss(approx, approx);
            _mm_cvtss_f32(_mm_sub_ss(doubled, muls))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x
    }
}

// Unary helpers.

#[inline]
pub fn sc_sign(x: f32) -> f32 {
    if x < 0.0 {
        -1.0
    } else if x > 0.0 {
        1.0
    } else {
        0.0
    }
}

#[inline]
pub fn sc_sqrt(x: f32) -> f32 {
    if x < 0.0 {
        -(-x).sqrt()
    } else {
        x.sqrt()
    }
}

#[inline]
pub fn sc_frac(x: f32) -> f32 {
    x - x.floor()
}

#[inline]
pub fn sc_midicps(note: f32) -> f32 {
    440.0 * 2.0f32.powf((note - 69.0) * 0.083_333_333_333)
}

#[inline]
pub fn sc_cpsmidi(freq: f32) -> f32 {
    (freq * 0.002_272_727_272_7).log2() * 12.0 + 69.0
}

#[inline]
pub fn sc_midiratio(midi: f32) -> f32 {
    2.0f32.powf(midi * 0.083_333_333_333)
}

#[inline]
pub fn sc_ratiomidi(ratio: f32) -> f32 {
    12.0 * ratio.log2()
}

#[inline]
pub fn sc_octcps(note: f32) -> f32 {
    440.0 * 2.0f32.powf(note - 4.75)
}

#[inline]
pub fn sc_cpsoct(freq: f32) -> f32 {
    (freq * 0.002_272_727_272_7).log2() + 4.75
}

#[inline]
pub fn sc_ampdb(amp: f32) -> f32 {
    amp.log10() * 20.0
}

#[inline]
pub fn sc_dbamp(db: f32) -> f32 {
    10.0f32.powf(db * 0.05)
}

#[inline]
pub fn sc_distort(x: f32) -> f32 {
    x / (1.0 + x.abs())
}

#[inline]
pub fn sc_softclip(x: f32) -> f32 {
    let absx = x.abs();
    if absx <= 0.5 {
        x
    } else {
        (absx - 0.25) / x
    }
}

#[inline]
pub fn sc_rectwindow(x: f32) -> f32 {
    if !(0.0..=1.0).contains(&x) {
        0.0
    } else {
        1.0
    }
}

#[inline]
pub fn sc_hanwindow(x: f32) -> f32 {
    if !(0.0..=1.0).contains(&x) {
        return 0.0;
    }
    // Both the product and the cosine are single precision (the float
    // overload of cos), unlike the Welch window's double-precision sine.
    0.5 - 0.5 * (x * std::f32::consts::TAU).cos()
}

#[inline]
pub fn sc_welwindow(x: f32) -> f32 {
    if !(0.0..=1.0).contains(&x) {
        return 0.0;
    }
    (x as f64 * std::f64::consts::PI).sin() as f32
}

#[inline]
pub fn sc_triwindow(x: f32) -> f32 {
    if !(0.0..=1.0).contains(&x) {
        return 0.0;
    }
    if x < 0.5 {
        2.0 * x
    } else {
        -2.0 * x + 2.0
    }
}

#[inline]
pub fn sc_scurve(x: f32) -> f32 {
    if x <= 0.0 {
        0.0
    } else if x >= 1.0 {
        1.0
    } else {
        x * x * (3.0 - 2.0 * x)
    }
}

#[inline]
pub fn sc_ramp(x: f32) -> f32 {
    if x <= 0.0 {
        0.0
    } else if x >= 1.0 {
        1.0
    } else {
        x
    }
}

/// C's truncating double-to-int32 conversion as x86 does it: values out
/// of range (and NaN) give `i32::MIN`.
#[inline(always)]
pub fn d2i(x: f64) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// C's truncating float-to-int32 conversion as x86 does it.
#[inline(always)]
pub fn f2i(x: f32) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        x as i32
    } else {
        i32::MIN
    }
}

/// SuperCollider's `sc_clip` on floats, built on `std::min`/`std::max`
/// (a NaN input stays NaN).
#[inline(always)]
pub fn sc_clip(x: f32, lo: f32, hi: f32) -> f32 {
    let m = if hi < x { hi } else { x };
    if m < lo {
        lo
    } else {
        m
    }
}

/// 4-point, 3rd-order Hermite interpolation (x-form).
#[inline(always)]
pub(crate) fn cubicinterp(x: f32, y0: f32, y1: f32, y2: f32, y3: f32) -> f32 {
    let c0 = y1;
    let c1 = 0.5 * (y2 - y0);
    let c2 = y0 - 2.5 * y1 + 2.0 * y2 - 0.5 * y3;
    let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2);
    ((c3 * x + c2) * x + c1) * x + c0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod_of_negatives_is_positive() {
        assert_eq!(sc_mod(-1.0, 3.0), 2.0);
        assert_eq!(sc_mod(-7.0, 3.0), 2.0);
        assert_eq!(sc_mod(7.5, 3.0), 1.5);
        assert_eq!(sc_mod(5.0, 0.0), 0.0);
    }

    #[test]
    fn wrap_and_fold_stay_in_range() {
        assert_eq!(sc_wrap(1.25, -1.0, 1.0), -0.75);
        assert_eq!(sc_wrap(-5.5, -1.0, 1.0), 0.5);
        assert_eq!(sc_fold(1.25, -1.0, 1.0), 0.75);
        assert_eq!(sc_fold(-3.5, -1.0, 1.0), 0.5);
    }

    #[test]
    fn gcd_and_lcm_follow_integer_rules() {
        assert_eq!(sc_gcd(12.0, 18.0), 6.0);
        assert_eq!(sc_lcm(4.0, 6.0), 12.0);
        assert_eq!(sc_gcd(-4.0, -6.0), -2.0);
    }

    #[test]
    fn reciprocal_is_close_to_exact() {
        for x in [0.1f32, 1.0, 3.0, -7.5, 1000.0] {
            assert!((sc_reciprocal(x) * x - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn out_of_range_conversions_behave_like_x86() {
        assert_eq!(d2i(1e10), i32::MIN);
        assert_eq!(d2i(f64::NAN), i32::MIN);
        assert_eq!(d2i(-2.7), -2);
        assert_eq!(f2i(3e9), i32::MIN);
        assert_eq!(f2i(7.9), 7);
    }
}
