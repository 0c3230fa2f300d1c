//! Whether lane kernels use the CPU's vector instructions.
//!
//! Every vector kernel has a scalar twin with bit-identical output; the
//! switch exists so that the two can be checked against each other (and
//! against scsynth) on machines that have the vector instructions.

use std::sync::atomic::{AtomicBool, Ordering};

static SCALAR_ONLY: AtomicBool = AtomicBool::new(false);

/// Restricts lane kernels to their scalar loops (same output, slower).
pub fn set_scalar_only(on: bool) {
    SCALAR_ONLY.store(on, Ordering::Relaxed);
}

/// The AVX2 kernels may run: the CPU has AVX2 and they are not switched off.
#[inline]
pub(crate) fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !SCALAR_ONLY.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `out[i] += x[i]` over the shorter of the two, eight samples a step where
/// the AVX2 code may run: each sum is the same at any width.
#[inline]
pub(crate) fn add_into(out: &mut [f32], x: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: AVX2 is present.
        unsafe { add_into_avx2(out, x) };
        return;
    }
    add_into_plain(out, x);
}

#[inline(always)]
fn add_into_plain(out: &mut [f32], x: &[f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o += v;
    }
}

/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_into_avx2(out: &mut [f32], x: &[f32]) {
    add_into_plain(out, x);
}
