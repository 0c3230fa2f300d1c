//! Counters the collector publishes; each has one writing thread, any thread may read.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// min / mean / max of a series of durations, written by one thread.
#[derive(Default)]
pub(crate) struct TimeStat {
    count: AtomicU64,
    total_ns: AtomicU64,
    min_ns: AtomicU64,
    max_ns: AtomicU64,
}

impl TimeStat {
    /// Only one thread calls this per stat, so plain load + store is enough.
    pub(crate) fn record(&self, d: Duration) {
        let ns = d.as_nanos().min(u64::MAX as u128) as u64;
        let n = self.count.load(Relaxed);
        if n == 0 || ns < self.min_ns.load(Relaxed) {
            self.min_ns.store(ns, Relaxed);
        }
        if ns > self.max_ns.load(Relaxed) {
            self.max_ns.store(ns, Relaxed);
        }
        self.total_ns.store(self.total_ns.load(Relaxed) + ns, Relaxed);
        self.count.store(n + 1, Relaxed);
    }

    pub(crate) fn read(&self) -> TimeSummary {
        TimeSummary {
            count: self.count.load(Relaxed),
            total: Duration::from_nanos(self.total_ns.load(Relaxed)),
            min: Duration::from_nanos(self.min_ns.load(Relaxed)),
            max: Duration::from_nanos(self.max_ns.load(Relaxed)),
        }
    }
}

/// Summary of one timed operation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeSummary {
    pub count: u64,
    pub total: Duration,
    pub min: Duration,
    pub max: Duration,
}

impl TimeSummary {
    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            Duration::ZERO
        } else {
            self.total / self.count.min(u32::MAX as u64) as u32
        }
    }
}

/// Set when used pointer-heap memory passed the safe limit (the thesis's safety buffer).
pub const WARN_SAFETY_BUFFER: u32 = 1;
/// Set when no full snapshot fitted the budget within the window (thesis: "Unable to take full snapshot").
pub const WARN_FULL_SNAPSHOT_MISSED: u32 = 2;
/// Set when an allocation failed because the heap or the allocation-record stack was full.
pub const WARN_ALLOCATION_FAILED: u32 = 4;
/// Set when the configured full-snapshot time is longer than a budget we were given.
pub const WARN_BUDGET_BELOW_WORST_CASE: u32 = 8;

#[derive(Default)]
pub(crate) struct SharedStats {
    // audio thread
    pub(crate) blocking: TimeStat,
    pub(crate) blocking_without_full: TimeStat,
    pub(crate) roots_snapshot: TimeStat,
    pub(crate) partial_snapshot: TimeStat,
    pub(crate) full_snapshot: TimeStat,
    pub(crate) snapshot_failures: AtomicU64,
    pub(crate) alloc_failures: AtomicU64,
    pub(crate) allocations: AtomicU64,
    pub(crate) pointer_heap_used: AtomicU64,
    pub(crate) pointer_live_bytes: AtomicU64,
    pub(crate) atomic_heap_used: AtomicU64,
    pub(crate) atomic_live_bytes: AtomicU64,
    pub(crate) blocks_returned: AtomicU64,
    pub(crate) warnings: AtomicU64,
    pub(crate) barrier_logged: AtomicU64,
    pub(crate) barrier_overflows: AtomicU64,
    pub(crate) barrier_segments_taken: AtomicU64,
    // collector thread
    pub(crate) barrier_spare_segments: AtomicU64,
    // collector thread
    pub(crate) merge: TimeStat,
    pub(crate) mark: TimeStat,
    pub(crate) sweep: TimeStat,
    pub(crate) cycles: AtomicU64,
    pub(crate) live_blocks: AtomicU64,
    pub(crate) blocks_freed: AtomicU64,
    pub(crate) interior_pointers: AtomicU64,
    pub(crate) false_pointers: AtomicU64,
    // free thread
    pub(crate) free_busy_ns: AtomicU64,
}

impl SharedStats {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Relaxed) + n, Relaxed);
    }
}

/// A copy of the collector's statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GcStats {
    /// Time spent in every `between_blocks` call (the audio thread's blocking time).
    pub blocking: TimeSummary,
    /// The same, leaving out the calls that took a full (worst-case) snapshot.
    pub blocking_without_full: TimeSummary,
    pub roots_snapshot: TimeSummary,
    pub partial_snapshot: TimeSummary,
    /// Full snapshots, including the busy wait that pads them to the worst case.
    pub full_snapshot: TimeSummary,
    /// Snapshots abandoned because they did not fit the budget.
    pub snapshot_failures: u64,
    pub mark: TimeSummary,
    pub sweep: TimeSummary,
    /// Time the free thread spent zeroing or poisoning dead blocks.
    pub free_busy: Duration,
    /// Completed mark-and-sweep cycles.
    pub cycles: u64,
    pub allocations: u64,
    pub alloc_failures: u64,
    pub blocks_freed: u64,
    /// Blocks the collector knew of at the end of the last cycle.
    pub live_blocks: u64,
    pub pointer_heap_used: usize,
    pub pointer_live_bytes: usize,
    pub atomic_heap_used: usize,
    pub atomic_live_bytes: usize,
    pub interior_pointers: u64,
    pub false_pointers: u64,
    /// Bitwise OR of the `WARN_*` flags raised so far.
    pub warnings: u32,
    /// Replicating mode: distinct pointer-heap slots the write barrier logged.
    pub barrier_logged: u64,
    /// Replicating mode: collections whose barrier log had overflowed with no spare segment
    /// left, so the collector fell back to scanning the whole complementary block.
    pub barrier_overflows: u64,
    /// Replicating mode: spare log segments the barrier chained on because its segment was full.
    pub barrier_segments_taken: u64,
    /// Replicating mode: spare log segments reserved so far (grows after fallbacks, up to
    /// `GcConfig::barrier_log_max_segments`).
    pub barrier_spare_segments: u64,
    /// Replicating mode: merging the complementary block into the persistent snapshot
    /// (collector thread, before each mark).
    pub merge: TimeSummary,
    /// Pointer-heap usage above which the worst case is no longer guaranteed.
    pub safe_limit_bytes: usize,
    /// Time a full snapshot is padded to: pointer heap size / p(M).
    pub full_snapshot_duration: Duration,
    /// Wall time since the collector was created.
    pub elapsed: Duration,
}

impl GcStats {
    /// Share of wall time the audio thread spent blocked in the collector.
    pub fn blocking_share(&self) -> f64 {
        ratio(self.blocking.total, self.elapsed)
    }

    /// Share of wall time the collector threads worked (merge, mark, sweep, free), off the audio thread.
    pub fn concurrent_share(&self) -> f64 {
        ratio(self.merge.total + self.mark.total + self.sweep.total + self.free_busy, self.elapsed)
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    if b.is_zero() {
        0.0
    } else {
        a.as_secs_f64() / b.as_secs_f64()
    }
}
