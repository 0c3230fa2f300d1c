//! Collector configuration: every size and limit is fixed at start-up.

use std::time::Duration;

use crate::error::GcError;

/// Machine word; blocks, roots and snapshots are scanned a word at a time.
pub const WORD: usize = std::mem::size_of::<usize>();

/// Where the mark-and-sweep work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CollectorMode {
    /// The thesis's first collector: a snapshot between blocks, mark and sweep on a
    /// collector thread, zeroing on a free thread.
    #[default]
    Concurrent,
    /// The same collector without the snapshot: `between_blocks` marks the live heap, sweeps,
    /// zeroes and frees on the audio thread (the thesis's `NO_SNAPSHOT` baseline). For comparison
    /// only; its pause grows with the live heap, and its tables use the system allocator.
    StopTheWorld,
    /// The thesis's second collector (heap replication): pointer stores go through
    /// [`Collector::write_ptr`](crate::Collector::write_ptr), which also writes them into a
    /// complementary block; between blocks only the roots are copied, and the collector thread
    /// merges the complementary block into a persistent snapshot before marking it.
    Replicating,
}

/// Sizes, limits and timing of one collector. All memory is reserved by
/// [`Collector::new`](crate::Collector::new); nothing grows afterwards on the audio side.
#[derive(Debug, Clone, PartialEq)]
pub struct GcConfig {
    /// Pointer heap: scanned, snapshotted every collection. Its size fixes the
    /// worst-case snapshot time, so keep it small (the paper used 4 MB).
    pub pointer_heap_bytes: usize,
    /// Atomic heap: blocks that hold no heap pointers (sample buffers). Never copied or scanned.
    pub atomic_heap_bytes: usize,
    /// Built-in root slots, a word each, reachable through `Collector::roots_mut`.
    pub root_slots: usize,
    /// Extra bytes of roots that may be registered with `Collector::add_roots`.
    pub max_root_region_bytes: usize,
    /// Allocation records one collection can take in (the paper's `MAX_RB_ELEMENTS`).
    /// Allocation fails when this many blocks were allocated since the last snapshot.
    pub max_allocations_per_cycle: usize,
    /// Freed blocks the audio thread puts back on its free lists per `between_blocks` call.
    pub max_frees_per_block: usize,
    /// A full (worst-case) snapshot is due this long after the previous one.
    pub full_snapshot_period: Duration,
    /// How long to keep trying a full snapshot once it is due, before warning.
    pub full_snapshot_window: Duration,
    /// Best-case copy bandwidth p(M) in bytes per second. `None` measures it at start-up.
    pub snapshot_bandwidth: Option<f64>,
    /// CPUs sharing the memory bus (the paper's c). `None` asks the operating system.
    pub num_cpus: Option<usize>,
    /// Word written over freed memory. `None` zeroes pointer-heap blocks and leaves atomic
    /// blocks alone; `Some(p)` fills both heaps with `p` (for tests that detect use after free).
    pub poison: Option<u64>,
    /// Touch every page at start-up so that no page fault happens on the audio thread.
    pub prefault: bool,
    /// Concurrent (the real-time collector) or stop-the-world (a baseline for benchmarks).
    pub mode: CollectorMode,
    /// Replicating mode: distinct pointer-heap slots one segment of the write barrier's log
    /// (the complementary stack) holds. When a segment fills, the barrier chains a spare one.
    pub barrier_log_entries: usize,
    /// Replicating mode: spare log segments reserved at start-up. The barrier takes one from
    /// a ring when its segment fills (no allocation on the audio thread); the collector thread
    /// puts them back after merging. Only when none is left does the next collection scan the
    /// whole complementary block instead (heap/WORD reads on the collector thread).
    pub barrier_log_spare_segments: usize,
    /// Replicating mode: after a collection that had to scan the whole block for want of
    /// spares, the collector thread reserves more, up to this many spare segments in all.
    pub barrier_log_max_segments: usize,
}

/// Most write-barrier log segments a collector may reserve.
pub const MAX_LOG_SEGMENTS: usize = 1 << 20;

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            pointer_heap_bytes: 4 << 20,
            atomic_heap_bytes: 16 << 20,
            root_slots: 1024,
            max_root_region_bytes: 64 << 10,
            max_allocations_per_cycle: 1 << 16,
            max_frees_per_block: 4096,
            full_snapshot_period: Duration::from_secs(1),
            full_snapshot_window: Duration::from_secs(1),
            snapshot_bandwidth: None,
            num_cpus: None,
            poison: None,
            prefault: true,
            mode: CollectorMode::Concurrent,
            barrier_log_entries: 1 << 14,
            barrier_log_spare_segments: 4,
            barrier_log_max_segments: 64,
        }
    }
}

impl GcConfig {
    /// Reject values the collector cannot honour.
    pub fn validate(&self) -> Result<(), GcError> {
        if self.pointer_heap_bytes < 4096 || !self.pointer_heap_bytes.is_multiple_of(WORD) {
            return Err(GcError::InvalidConfig("pointer_heap_bytes must be >= 4096 and word aligned"));
        }
        if !self.atomic_heap_bytes.is_multiple_of(WORD) {
            return Err(GcError::InvalidConfig("atomic_heap_bytes must be word aligned"));
        }
        if self.max_allocations_per_cycle == 0 {
            return Err(GcError::InvalidConfig("max_allocations_per_cycle must be > 0"));
        }
        if self.mode == CollectorMode::Replicating && self.barrier_log_entries == 0 {
            return Err(GcError::InvalidConfig("barrier_log_entries must be > 0"));
        }
        if self.barrier_log_max_segments < self.barrier_log_spare_segments {
            return Err(GcError::InvalidConfig("barrier_log_max_segments must be >= barrier_log_spare_segments"));
        }
        // The ring that hands spare segments back has a slot for each.
        if self.barrier_log_max_segments > MAX_LOG_SEGMENTS {
            return Err(GcError::InvalidConfig("barrier_log_max_segments must be <= 1048576"));
        }
        if self.max_frees_per_block == 0 {
            return Err(GcError::InvalidConfig("max_frees_per_block must be > 0"));
        }
        if !self.max_root_region_bytes.is_multiple_of(WORD) {
            return Err(GcError::InvalidConfig("max_root_region_bytes must be word aligned"));
        }
        if let Some(bw) = self.snapshot_bandwidth {
            if !(bw.is_finite() && bw > 0.0) {
                return Err(GcError::InvalidConfig("snapshot_bandwidth must be positive"));
            }
        }
        if self.num_cpus == Some(0) {
            return Err(GcError::InvalidConfig("num_cpus must be > 0"));
        }
        if self.full_snapshot_period.is_zero() {
            return Err(GcError::InvalidConfig("full_snapshot_period must be > 0"));
        }
        Ok(())
    }

    /// Used pointer-heap bytes above which a partial snapshot may no longer fit the
    /// full-snapshot time under bus contention: heap/c, or 70 % of the heap on one CPU.
    pub fn safe_limit_bytes(&self, num_cpus: usize) -> usize {
        if num_cpus <= 1 {
            self.pointer_heap_bytes / 10 * 7
        } else {
            self.pointer_heap_bytes / num_cpus
        }
    }
}
