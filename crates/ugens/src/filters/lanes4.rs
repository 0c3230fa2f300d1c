//! Four filter lanes per instruction (AVX, double precision).
//!
//! A filter design's `tick` is written once over `Sample`, so the lane
//! kernels run the very same additions and multiplications on four lanes
//! at a time as a single unit runs on its own: each lane's result is bit
//! for bit the scalar one (no fused multiply-add is ever formed).

use std::ops::{Add, Mul, Sub};

/// The arithmetic a filter tick needs.
pub trait Sample: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn splat(v: f64) -> Self;
}

impl Sample for f64 {
    #[inline(always)]
    fn splat(v: f64) -> Self {
        v
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::*;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Sample;
    use std::arch::x86_64::*;
    use std::ops::{Add, Mul, Sub};

    /// Four doubles; only ever used inside functions compiled for AVX2
    /// (the operators are inlined into them).
    #[derive(Clone, Copy)]
    pub(crate) struct F64x4(pub __m256d);

    impl Add for F64x4 {
        type Output = Self;
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: reached only from code that checked `vector::avx2()`.
            F64x4(unsafe { _mm256_add_pd(self.0, o.0) })
        }
    }

    impl Sub for F64x4 {
        type Output = Self;
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: as for `add`.
            F64x4(unsafe { _mm256_sub_pd(self.0, o.0) })
        }
    }

    impl Mul for F64x4 {
        type Output = Self;
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            // SAFETY: as for `add`.
            F64x4(unsafe { _mm256_mul_pd(self.0, o.0) })
        }
    }

    impl Sample for F64x4 {
        #[inline(always)]
        fn splat(v: f64) -> Self {
            // SAFETY: as for `add`.
            F64x4(unsafe { _mm256_set1_pd(v) })
        }
    }
}
