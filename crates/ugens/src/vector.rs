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
