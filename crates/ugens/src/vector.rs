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

/// The CPU has AVX-512 F and VL, which AVX2 kernels built a second time
/// for them use for 32 vector registers instead of 16 (the same operations
/// on the same 256-bit vectors, so the same bits). Only asked by kernels
/// that `avx2` already let run.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx512_registers() -> bool {
    #[cfg(test)]
    if AVX2_REGISTERS_ONLY.with(|c| c.get()) {
        return false;
    }
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
}

#[cfg(all(test, target_arch = "x86_64"))]
thread_local! {
    static AVX2_REGISTERS_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` on this thread with the AVX2 builds of the kernels that have
/// AVX-512 ones too, so that tests check both on CPUs with AVX-512.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn with_avx2_registers_only<R>(f: impl FnOnce() -> R) -> R {
    AVX2_REGISTERS_ONLY.with(|c| c.set(true));
    let r = f();
    AVX2_REGISTERS_ONLY.with(|c| c.set(false));
    r
}

/// `f` with each build of the kernels that this CPU runs: AVX-512's
/// registers if it has them, and AVX2's.
#[cfg(test)]
pub(crate) fn each_register_build(mut f: impl FnMut()) {
    f();
    #[cfg(target_arch = "x86_64")]
    with_avx2_registers_only(f);
}
