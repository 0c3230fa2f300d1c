//! Thread and clock primitives the drivers' real-time threads need.

use std::sync::atomic::{AtomicBool, Ordering};

const NS_PER_SEC: u64 = 1_000_000_000;

/// CLOCK_MONOTONIC in nanoseconds (a vDSO call, no kernel entry).
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * NS_PER_SEC + ts.tv_nsec as u64
}

/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`; absolute, so the
/// period schedule does not drift with wake-up latency.
pub(crate) fn sleep_until_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / NS_PER_SEC) as libc::time_t,
        tv_nsec: (deadline_ns % NS_PER_SEC) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
        };
        // A signal interrupts the sleep; the absolute deadline makes retrying exact.
        if r != libc::EINTR {
            return;
        }
    }
}

static PRIORITY_WARNED: AtomicBool = AtomicBool::new(false);

/// Puts the calling thread under SCHED_FIFO at `priority` (clamped to the
/// system's range, then to RLIMIT_RTPRIO if that is lower). Warns once per
/// process on stderr and carries on when the system refuses.
pub(crate) fn make_current_thread_realtime(priority: i32) -> bool {
    // SAFETY: plain queries of the scheduler's static priority range.
    let (min, max) = unsafe {
        (libc::sched_get_priority_min(libc::SCHED_FIFO), libc::sched_get_priority_max(libc::SCHED_FIFO))
    };
    let wanted = priority.clamp(min, max);
    let mut candidates = vec![wanted];
    if let Some(limit) = rtprio_limit() {
        if limit >= min as u64 && (limit as i32) < wanted {
            candidates.push(limit as i32);
        }
    }
    let mut last_err = 0;
    for prio in candidates {
        let param = libc::sched_param { sched_priority: prio };
        // SAFETY: pthread_self() is the calling thread and `param` is a valid sched_param.
        let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
        if r == 0 {
            return true;
        }
        last_err = r;
    }
    if !PRIORITY_WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "WARNING: could not use real-time scheduling (SCHED_FIFO priority {wanted}): {}; \
             the audio thread runs at normal priority",
            std::io::Error::from_raw_os_error(last_err)
        );
    }
    false
}

fn rtprio_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid, writable rlimit.
    let r = unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut lim) };
    (r == 0).then_some(lim.rlim_cur)
}

/// Makes the FPU flush denormals to zero on this thread, as scsynth's audio
/// thread does, so decaying filters cannot slow the period down.
pub(crate) fn flush_denormals() {
    #[cfg(target_arch = "x86_64")]
    {
        let mut csr: u32 = 0;
        // SAFETY: reads and writes only this thread's MXCSR; FTZ (bit 15) and DAZ
        // (bit 6) change rounding of tiny values only, never trap.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
            csr |= 0x8040;
            std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack));
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: sets the FZ bit (24) of this thread's FPCR only.
        unsafe {
            let mut fpcr: u64;
            std::arch::asm!("mrs {}, fpcr", out(reg) fpcr);
            fpcr |= 1 << 24;
            std::arch::asm!("msr fpcr, {}", in(reg) fpcr);
        }
    }
}
