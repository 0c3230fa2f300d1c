//! C ABI, declared in `include/magnetar_gc.h`. Mirrors the Rust API one function each.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::time::Duration;

use crate::collector::{Collector, RootRegionId, SnapshotKind};
use crate::config::{CollectorMode, GcConfig};
use crate::stats::{GcStats, TimeSummary};

/// Opaque collector handle (`mgc_collector` in C).
pub struct MgcCollector(Collector);

#[repr(C)]
pub struct MgcConfig {
    pub pointer_heap_bytes: usize,
    pub atomic_heap_bytes: usize,
    pub root_slots: usize,
    pub max_root_region_bytes: usize,
    pub max_allocations_per_cycle: usize,
    pub max_frees_per_block: usize,
    pub full_snapshot_period_s: f64,
    pub full_snapshot_window_s: f64,
    /// p(M) in bytes per second; 0 measures it.
    pub snapshot_bandwidth: f64,
    /// 0 asks the operating system.
    pub num_cpus: u32,
    /// Non-zero: fill freed memory of both heaps with `poison`.
    pub use_poison: u32,
    pub poison: u64,
    pub prefault: u32,
    /// `MGC_MODE_*`: 0 concurrent, 1 stop-the-world, 2 replicating.
    pub mode: u32,
    /// Replicating mode: distinct slots one barrier log segment holds.
    pub barrier_log_entries: usize,
    /// Replicating mode: spare log segments reserved at start-up.
    pub barrier_log_spare_segments: usize,
    /// Replicating mode: the most spare segments the collector thread may reserve.
    pub barrier_log_max_segments: usize,
}

#[repr(C)]
#[derive(Default)]
pub struct MgcTime {
    pub count: u64,
    pub total_ms: f64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub max_ms: f64,
}

#[repr(C)]
#[derive(Default)]
pub struct MgcStats {
    pub blocking: MgcTime,
    pub blocking_without_full: MgcTime,
    pub roots_snapshot: MgcTime,
    pub partial_snapshot: MgcTime,
    pub full_snapshot: MgcTime,
    pub mark: MgcTime,
    pub sweep: MgcTime,
    pub free_busy_ms: f64,
    pub cycles: u64,
    pub allocations: u64,
    pub alloc_failures: u64,
    pub blocks_freed: u64,
    pub live_blocks: u64,
    pub snapshot_failures: u64,
    pub pointer_heap_used: usize,
    pub pointer_live_bytes: usize,
    pub atomic_heap_used: usize,
    pub atomic_live_bytes: usize,
    pub safe_limit_bytes: usize,
    pub full_snapshot_duration_ms: f64,
    pub elapsed_s: f64,
    pub blocking_share: f64,
    pub concurrent_share: f64,
    pub warnings: u32,
    pub barrier_logged: u64,
    pub barrier_overflows: u64,
    pub merge: MgcTime,
    pub barrier_segments_taken: u64,
    pub barrier_spare_segments: u64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl From<TimeSummary> for MgcTime {
    fn from(t: TimeSummary) -> Self {
        MgcTime { count: t.count, total_ms: ms(t.total), min_ms: ms(t.min), mean_ms: ms(t.mean()), max_ms: ms(t.max) }
    }
}

impl From<&GcStats> for MgcStats {
    fn from(s: &GcStats) -> Self {
        MgcStats {
            blocking: s.blocking.into(),
            blocking_without_full: s.blocking_without_full.into(),
            roots_snapshot: s.roots_snapshot.into(),
            partial_snapshot: s.partial_snapshot.into(),
            full_snapshot: s.full_snapshot.into(),
            mark: s.mark.into(),
            sweep: s.sweep.into(),
            free_busy_ms: ms(s.free_busy),
            cycles: s.cycles,
            allocations: s.allocations,
            alloc_failures: s.alloc_failures,
            blocks_freed: s.blocks_freed,
            live_blocks: s.live_blocks,
            snapshot_failures: s.snapshot_failures,
            pointer_heap_used: s.pointer_heap_used,
            pointer_live_bytes: s.pointer_live_bytes,
            atomic_heap_used: s.atomic_heap_used,
            atomic_live_bytes: s.atomic_live_bytes,
            safe_limit_bytes: s.safe_limit_bytes,
            full_snapshot_duration_ms: ms(s.full_snapshot_duration),
            elapsed_s: s.elapsed.as_secs_f64(),
            blocking_share: s.blocking_share(),
            concurrent_share: s.concurrent_share(),
            warnings: s.warnings,
            barrier_logged: s.barrier_logged,
            barrier_overflows: s.barrier_overflows,
            merge: s.merge.into(),
            barrier_segments_taken: s.barrier_segments_taken,
            barrier_spare_segments: s.barrier_spare_segments,
        }
    }
}

/// Fill `cfg` with the defaults of [`GcConfig::default`].
///
/// # Safety
/// `cfg` must be null or point to writable memory for one `mgc_config`.
#[no_mangle]
pub unsafe extern "C" fn mgc_config_default(cfg: *mut MgcConfig) {
    if cfg.is_null() {
        return;
    }
    let d = GcConfig::default();
    let c = MgcConfig {
        pointer_heap_bytes: d.pointer_heap_bytes,
        atomic_heap_bytes: d.atomic_heap_bytes,
        root_slots: d.root_slots,
        max_root_region_bytes: d.max_root_region_bytes,
        max_allocations_per_cycle: d.max_allocations_per_cycle,
        max_frees_per_block: d.max_frees_per_block,
        full_snapshot_period_s: d.full_snapshot_period.as_secs_f64(),
        full_snapshot_window_s: d.full_snapshot_window.as_secs_f64(),
        snapshot_bandwidth: 0.0,
        num_cpus: 0,
        use_poison: 0,
        poison: 0,
        prefault: 1,
        mode: 0,
        barrier_log_entries: d.barrier_log_entries,
        barrier_log_spare_segments: d.barrier_log_spare_segments,
        barrier_log_max_segments: d.barrier_log_max_segments,
    };
    // SAFETY: non-null and writable per the contract.
    unsafe { cfg.write(c) };
}

fn secs(s: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(s).ok()
}

/// Create a collector; null on error, with the reason written (NUL-terminated) to `err`.
///
/// # Safety
/// `cfg` must point to a valid `mgc_config`; `err` must be null or writable for `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn mgc_new(cfg: *const MgcConfig, err: *mut c_char, err_len: usize) -> *mut MgcCollector {
    let fail = |msg: String| {
        if !err.is_null() && err_len > 0 {
            let n = msg.len().min(err_len - 1);
            // SAFETY: n + 1 <= err_len bytes are writable per the contract.
            unsafe {
                ptr::copy_nonoverlapping(msg.as_ptr() as *const c_char, err, n);
                err.add(n).write(0);
            }
        }
        ptr::null_mut()
    };
    if cfg.is_null() {
        return fail("null configuration".into());
    }
    // SAFETY: non-null and valid per the contract.
    let c = unsafe { &*cfg };
    let (Some(period), Some(window)) = (secs(c.full_snapshot_period_s), secs(c.full_snapshot_window_s)) else {
        return fail("full-snapshot period and window must be non-negative seconds".into());
    };
    let mode = match c.mode {
        0 => CollectorMode::Concurrent,
        1 => CollectorMode::StopTheWorld,
        2 => CollectorMode::Replicating,
        _ => return fail("unknown collector mode".into()),
    };
    let config = GcConfig {
        pointer_heap_bytes: c.pointer_heap_bytes,
        atomic_heap_bytes: c.atomic_heap_bytes,
        root_slots: c.root_slots,
        max_root_region_bytes: c.max_root_region_bytes,
        max_allocations_per_cycle: c.max_allocations_per_cycle,
        max_frees_per_block: c.max_frees_per_block,
        full_snapshot_period: period,
        full_snapshot_window: window,
        snapshot_bandwidth: (c.snapshot_bandwidth != 0.0).then_some(c.snapshot_bandwidth),
        num_cpus: (c.num_cpus != 0).then_some(c.num_cpus as usize),
        poison: (c.use_poison != 0).then_some(c.poison),
        prefault: c.prefault != 0,
        mode,
        barrier_log_entries: c.barrier_log_entries,
        barrier_log_spare_segments: c.barrier_log_spare_segments,
        barrier_log_max_segments: c.barrier_log_max_segments,
    };
    match Collector::new(config) {
        Ok(gc) => Box::into_raw(Box::new(MgcCollector(gc))),
        Err(e) => fail(e.to_string()),
    }
}

/// Stop the collector threads and release every heap. Pointers into its heaps become invalid.
///
/// # Safety
/// `gc` must be null or a pointer from `mgc_new` not yet deleted.
#[no_mangle]
pub unsafe extern "C" fn mgc_delete(gc: *mut MgcCollector) {
    if !gc.is_null() {
        // SAFETY: created by Box::into_raw in mgc_new and not freed yet.
        drop(unsafe { Box::from_raw(gc) });
    }
}

/// Allocate zeroed pointer-heap memory; null when full. Realtime safe.
///
/// # Safety
/// `gc` must be a live collector used only by this (audio) thread.
#[no_mangle]
pub unsafe extern "C" fn mgc_alloc(gc: *mut MgcCollector, size: usize) -> *mut c_void {
    // SAFETY: valid and exclusively used per the contract.
    let gc = unsafe { &mut (*gc).0 };
    gc.alloc(size).map_or(ptr::null_mut(), |p| p.as_ptr() as *mut c_void)
}

/// Allocate pointer-free memory (never scanned); null when full. Realtime safe.
///
/// # Safety
/// As `mgc_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mgc_alloc_atomic(gc: *mut MgcCollector, size: usize) -> *mut c_void {
    // SAFETY: valid and exclusively used per the contract.
    let gc = unsafe { &mut (*gc).0 };
    gc.alloc_atomic(size).map_or(ptr::null_mut(), |p| p.as_ptr() as *mut c_void)
}

/// The built-in root slots; their number is written to `count`.
///
/// # Safety
/// As `mgc_alloc`; `count` must be null or writable. The array lives as long as `gc`.
#[no_mangle]
pub unsafe extern "C" fn mgc_roots(gc: *mut MgcCollector, count: *mut usize) -> *mut *mut c_void {
    // SAFETY: valid and exclusively used per the contract.
    let roots = unsafe { (*gc).0.roots_mut() };
    if !count.is_null() {
        // SAFETY: writable per the contract.
        unsafe { count.write(roots.len()) };
    }
    roots.as_mut_ptr() as *mut *mut c_void
}

/// Register memory as roots; returns an id >= 0, or -1 if refused.
///
/// # Safety
/// As `mgc_alloc`; the range must stay readable until `mgc_remove_roots` or `mgc_delete`.
#[no_mangle]
pub unsafe extern "C" fn mgc_add_roots(gc: *mut MgcCollector, start: *const c_void, bytes: usize) -> c_int {
    // SAFETY: valid and exclusively used per the contract.
    let gc = unsafe { &mut (*gc).0 };
    // SAFETY: the region contract is forwarded from this function's contract.
    match unsafe { gc.add_roots(start as *const u8, bytes) } {
        Ok(RootRegionId(id)) => id as c_int,
        Err(_) => -1,
    }
}

/// Unregister a root region.
///
/// # Safety
/// As `mgc_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mgc_remove_roots(gc: *mut MgcCollector, id: c_int) {
    if id >= 0 {
        // SAFETY: valid and exclusively used per the contract.
        unsafe { (*gc).0.remove_roots(RootRegionId(id as usize)) };
    }
}

/// Call after each DSP block with the time to spare. Returns 0 none, 1 partial snapshot,
/// 2 full snapshot, 3 snapshot did not fit, 4 stop-the-world collection inside the call,
/// 5 replicating mode swapped its complementary blocks and started a collection.
///
/// # Safety
/// As `mgc_alloc`.
#[no_mangle]
pub unsafe extern "C" fn mgc_between_blocks(gc: *mut MgcCollector, budget_ns: u64) -> c_int {
    // SAFETY: valid and exclusively used per the contract.
    let gc = unsafe { &mut (*gc).0 };
    match gc.between_blocks(Duration::from_nanos(budget_ns)).snapshot {
        SnapshotKind::None => 0,
        SnapshotKind::Partial => 1,
        SnapshotKind::Full => 2,
        SnapshotKind::Failed => 3,
        SnapshotKind::Collected => 4,
        SnapshotKind::Replicated => 5,
    }
}

/// Store `value` into `*slot` through the write barrier (see [`Collector::write_ptr`]): in
/// replicating mode every pointer store into the pointer heap must use it. Realtime safe.
///
/// # Safety
/// As `mgc_alloc`; `slot` must be valid for an aligned pointer-sized write.
#[no_mangle]
pub unsafe extern "C" fn mgc_write_ptr(gc: *mut MgcCollector, slot: *mut *mut c_void, value: *mut c_void) {
    // SAFETY: valid and exclusively used per the contract; the slot contract is forwarded.
    unsafe { (*gc).0.write_ptr(slot as *mut *mut u8, value as *mut u8) };
}

/// Copy the statistics into `out`.
///
/// # Safety
/// `gc` must be a live collector; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn mgc_get_stats(gc: *const MgcCollector, out: *mut MgcStats) {
    // SAFETY: valid per the contract; stats are read through atomics.
    let s = unsafe { (*gc).0.stats() };
    // SAFETY: writable per the contract.
    unsafe { out.write(MgcStats::from(&s)) };
}

/// 1 while a mark-and-sweep cycle runs, else 0.
///
/// # Safety
/// `gc` must be a live collector.
#[no_mangle]
pub unsafe extern "C" fn mgc_is_collecting(gc: *const MgcCollector) -> c_int {
    // SAFETY: valid per the contract.
    unsafe { (*gc).0.is_collecting() as c_int }
}
