//! Copying the pointer heap against a time budget, with the thesis's full-snapshot window
//! (ch. 10.1): partial copies of the used part normally, and once per period a copy of the
//! whole heap padded to the worst-case duration, so that the worst case is heard in rehearsal.

use std::time::{Duration, Instant};

/// The clock is read once per chunk (16 KiB in the thesis).
pub const CHUNK_BYTES: usize = 16 * 1024;

/// Where we are relative to the last full snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// Less than one period since the last full snapshot: copy only the used part.
    Before,
    /// A full snapshot is due: copy everything and pad to the worst case.
    Inside,
    /// The window passed without a full snapshot: finish one if possible, else warn.
    After,
}

/// Result of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The used part was copied; a collection may run.
    Partial,
    /// The whole heap was copied (and padded to the worst case when inside the window).
    Full,
    /// Even the used part did not fit; no collection this block.
    Failed,
    /// After the window, the full copy did not fit but the used part did: collect and warn.
    FullMissed,
}

pub(crate) struct Plan {
    pub window: Window,
    /// Bytes in use (below the bump pointer).
    pub used: usize,
    /// Whole heap size.
    pub size: usize,
    /// Time the engine can spare this block.
    pub budget: Duration,
    /// Pointer heap size / p(M): what a full snapshot is padded to.
    pub full_duration: Duration,
}

/// Copy `src` into `dst` following `plan`; returns the outcome and the bytes copied.
///
/// # Safety
/// `src` and `dst` must be valid, non-overlapping ranges of `plan.size` bytes, and nobody may
/// write `dst` or race on `src` (beyond garbage being zeroed under the interruptible lock)
/// while this runs.
pub(crate) unsafe fn copy_heap(src: *const u8, dst: *mut u8, plan: &Plan, start: Instant) -> (Outcome, usize) {
    // SAFETY: forwarded contract.
    let r = unsafe { copy_heap_inner(src, dst, plan, start) };
    // Streaming stores are weakly ordered: make them visible before the collector is told.
    store_fence();
    r
}

unsafe fn copy_heap_inner(src: *const u8, dst: *mut u8, plan: &Plan, start: Instant) -> (Outcome, usize) {
    let (target, limit) = match plan.window {
        // The thesis allows a partial copy up to the full-snapshot duration; the engine's
        // budget may be tighter.
        Window::Before => (plan.used, plan.budget.min(plan.full_duration)),
        Window::Inside | Window::After => (plan.size, plan.budget),
    };
    let mut pos = 0usize;
    loop {
        let next = (pos + CHUNK_BYTES).min(target);
        // SAFETY: pos..next lies within both ranges (next <= target <= size) per the contract.
        unsafe { copy_streaming(src.add(pos), dst.add(pos), next - pos) };
        pos = next;
        // Elapsed time is now - start (the thesis's pseudocode has the sign reversed).
        let elapsed = start.elapsed();
        if pos == target {
            return match plan.window {
                Window::Before => (Outcome::Partial, pos),
                Window::Inside => {
                    // Force the worst case: pad to the full duration (never past the budget).
                    let pad = plan.full_duration.min(plan.budget);
                    while start.elapsed() < pad {
                        std::hint::spin_loop();
                    }
                    (Outcome::Full, pos)
                }
                Window::After => (Outcome::Full, pos),
            };
        }
        if elapsed >= limit {
            match plan.window {
                Window::Before => return (Outcome::Failed, pos),
                // The thesis returns `pos > partial_size`; `>=` is right (used part complete).
                Window::Inside => {
                    return (if pos >= plan.used { Outcome::Partial } else { Outcome::Failed }, pos)
                }
                // After the window the used part must be copied whatever it costs.
                Window::After if pos >= plan.used => return (Outcome::FullMissed, pos),
                Window::After => {}
            }
        }
    }
}

/// Copy `len` bytes with non-temporal stores where the target supports them: the snapshot is
/// written once and read later by another thread, so caching it on the way only costs a read
/// of every destination line (read-for-ownership) and evicts the audio thread's working set.
/// Callers must run [`store_fence`] before another thread reads the destination.
///
/// # Safety
/// `src` and `dst` must be valid, non-overlapping ranges of `len` bytes.
#[inline]
pub(crate) unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        // Align the destination to 16 bytes with an ordinary copy of the head.
        let head = dst.align_offset(16).min(len);
        // SAFETY: head <= len, inside both ranges.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, head) };
        let body = (len - head) / 64 * 64;
        let mut i = head;
        while i < head + body {
            // SAFETY: i + 64 <= head + body <= len; dst + i is 16-byte aligned; SSE2 is part of
            // the x86-64 baseline.
            unsafe {
                let s = src.add(i) as *const __m128i;
                let d = dst.add(i) as *mut __m128i;
                let (a, b, c, e) = (_mm_loadu_si128(s), _mm_loadu_si128(s.add(1)), _mm_loadu_si128(s.add(2)), _mm_loadu_si128(s.add(3)));
                _mm_stream_si128(d, a);
                _mm_stream_si128(d.add(1), b);
                _mm_stream_si128(d.add(2), c);
                _mm_stream_si128(d.add(3), e);
            }
            i += 64;
        }
        // SAFETY: i <= len, the tail lies inside both ranges.
        unsafe { std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}

/// Orders earlier non-temporal stores before later stores (a no-op where none are used).
#[inline]
pub(crate) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no preconditions; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Best, median and worst memcpy bandwidth over repeated copies (bytes per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bandwidth {
    pub bytes: usize,
    pub copies: usize,
    pub best: f64,
    pub median: f64,
    pub worst: f64,
    /// Time of the best, median and worst copy.
    pub best_time: Duration,
    pub median_time: Duration,
    pub worst_time: Duration,
}

/// Copy a `bytes`-sized buffer repeatedly for about `duration` (at least 3 times), as the
/// thesis's appendix A.4 does, and report the spread. Allocates; not for the audio thread.
pub fn measure_memcpy_bandwidth(bytes: usize, duration: Duration) -> Bandwidth {
    let bytes = bytes.max(64);
    let src = vec![1u8; bytes];
    // Non-zero fill touches every page now, so page faults are not timed; one warm-up copy.
    let mut dst = vec![2u8; bytes];
    dst.copy_from_slice(&src);
    let mut times = Vec::new();
    let t0 = Instant::now();
    while times.len() < 3 || (t0.elapsed() < duration && times.len() < 100_000) {
        let t = Instant::now();
        dst.copy_from_slice(&src);
        std::hint::black_box(&mut dst);
        times.push(t.elapsed().max(Duration::from_nanos(1)));
    }
    times.sort();
    let bw = |d: Duration| bytes as f64 / d.as_secs_f64();
    let (best, med, worst) = (times[0], times[times.len() / 2], times[times.len() - 1]);
    Bandwidth {
        bytes,
        copies: times.len(),
        best: bw(best),
        median: bw(med),
        worst: bw(worst),
        best_time: best,
        median_time: med,
        worst_time: worst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(window: Window, used: usize, size: usize, budget_us: u64, full_us: u64) -> Plan {
        Plan {
            window,
            used,
            size,
            budget: Duration::from_micros(budget_us),
            full_duration: Duration::from_micros(full_us),
        }
    }

    #[test]
    fn partial_snapshot_copies_only_the_used_part() {
        let src = vec![7u8; 64 << 10];
        let mut dst = vec![0u8; 64 << 10];
        // SAFETY: both buffers are 64 KiB and distinct.
        let (o, n) = unsafe { copy_heap(src.as_ptr(), dst.as_mut_ptr(), &plan(Window::Before, 1000, 64 << 10, 10_000, 10_000), Instant::now()) };
        assert_eq!((o, n), (Outcome::Partial, 1000));
        assert_eq!(dst[999], 7);
        assert_eq!(dst[1000], 0);
    }

    #[test]
    fn full_snapshot_inside_window_is_padded_to_the_worst_case() {
        let src = vec![7u8; 64 << 10];
        let mut dst = vec![0u8; 64 << 10];
        let t = Instant::now();
        // SAFETY: both buffers are 64 KiB and distinct.
        let (o, n) = unsafe { copy_heap(src.as_ptr(), dst.as_mut_ptr(), &plan(Window::Inside, 10, 64 << 10, 50_000, 3_000), t) };
        assert_eq!((o, n), (Outcome::Full, 64 << 10));
        assert!(t.elapsed() >= Duration::from_micros(3_000));
        assert_eq!(dst[(64 << 10) - 1], 7);
    }

    #[test]
    fn streaming_copy_is_exact_at_any_alignment_and_length() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        for (off, len) in [(0, 4000), (1, 63), (3, 1000), (15, 64), (16, 129), (7, 0)] {
            let mut dst = vec![0xAAu8; 4200];
            // SAFETY: off + len <= 4096 bytes of src and <= 4200 of dst; distinct buffers.
            unsafe { copy_streaming(src.as_ptr().add(off), dst.as_mut_ptr().add(off), len) };
            store_fence();
            assert_eq!(&dst[off..off + len], &src[off..off + len], "offset {off}, length {len}");
            assert!(dst[..off].iter().chain(&dst[off + len..]).all(|&b| b == 0xAA), "nothing outside was written");
        }
    }

    #[test]
    fn zero_budget_fails_a_large_partial_copy() {
        let src = vec![7u8; 256 << 10];
        let mut dst = vec![0u8; 256 << 10];
        // SAFETY: both buffers are 256 KiB and distinct.
        let (o, _) = unsafe { copy_heap(src.as_ptr(), dst.as_mut_ptr(), &plan(Window::Before, 200 << 10, 256 << 10, 0, 1000), Instant::now()) };
        assert_eq!(o, Outcome::Failed);
    }
}
