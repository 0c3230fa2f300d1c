//! Real-time memory: the pool everything the audio thread creates lives in.
//!
//! [`RoutingAlloc`] is a global allocator. On the one thread that has
//! [`enter_pool`]ed (the audio thread) it serves allocations from a TLSF pool
//! of fixed size, set up at boot with [`install_pool`]: O(1), no system call,
//! no lock. Everywhere else it passes requests to the inner allocator. Memory
//! from the pool that another thread frees (garbage the audio thread handed
//! back) is not touched there: its address goes into a lock-free queue that
//! the audio thread drains with [`drain_deferred_frees`] at each block start.
//!
//! When the pool is exhausted an allocation falls back to the inner allocator
//! (counted as a miss) rather than failing; callers that can refuse work
//! up front — creating a synth — check [`status`] first and answer `/fail`.
//! An allocation whose size was chosen at run time goes through
//! `magnetar_rt::fallible`: on the pool's thread it is refused (null, never
//! the inner allocator) when it would leave less than [`set_reserve`]'s
//! bytes free, or when no hole holds it.

// The audio path does not panic: `expect`, `panic!` and unchecked
// indexing are errors outside tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use magnetar_rt::mpsc;
use rlsf::Tlsf;
use std::alloc::{GlobalAlloc, Layout};
use std::cell::{Cell, UnsafeCell};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// TLSF parameters: 32-byte granularity, first level up to 2^28 granules
/// (8 GiB blocks), 16 second-level lists (about 6 % worst-case waste).
type Pool = Tlsf<'static, u32, u16, 28, 16>;

/// Frees that may wait for the audio thread at once; beyond that a freed
/// block is leaked (and counted) rather than blocking the freeing thread.
const DEFERRED_CAPACITY: usize = 1 << 16;

thread_local! {
    // const-initialised without a destructor: safe to read inside the allocator.
    static ON_POOL: Cell<bool> = const { Cell::new(false) };
}

struct PoolState {
    tlsf: UnsafeCell<Pool>,
    base: usize,
    len: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
    misses: AtomicU64,
    leaked: AtomicU64,
    /// Allocations refused (see `magnetar_rt::fallible`).
    refused: AtomicU64,
    /// Bytes a fallible allocation must leave free (see [`set_reserve`]).
    reserve: AtomicUsize,
    /// The last [`largest_free_block`] measured on the pool's thread, for
    /// other threads to read.
    largest_free: AtomicUsize,
    deferred_tx: mpsc::Sender<(usize, Layout)>,
    deferred_rx: UnsafeCell<mpsc::Receiver<(usize, Layout)>>,
}

// SAFETY: the TLSF header and the deferred receiver are only touched by the
// thread that entered the pool (one thread, by `enter_pool`'s contract); the
// rest is atomics and a multi-producer sender.
unsafe impl Sync for PoolState {}

static POOL: AtomicPtr<PoolState> = AtomicPtr::new(std::ptr::null_mut());

/// What `/rtMemoryStatus` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStatus {
    pub total: usize,
    pub used: usize,
    pub peak: usize,
    /// Allocations the pool could not serve (they went to the system heap).
    pub misses: u64,
    /// Pool blocks freed by other threads while the deferred queue was full.
    pub leaked: u64,
    /// Allocations of a size chosen at run time that the pool refused.
    pub refused: u64,
}

impl PoolStatus {
    pub fn free(&self) -> usize {
        self.total.saturating_sub(self.used)
    }
}

#[derive(Debug)]
pub enum PoolError {
    AlreadyInstalled,
    TooSmall(usize),
    OutOfMemory(usize),
}

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolError::AlreadyInstalled => write!(f, "the real-time memory pool is already set up"),
            PoolError::TooSmall(n) => write!(f, "a real-time memory pool of {n} bytes is too small"),
            PoolError::OutOfMemory(n) => write!(f, "could not reserve {n} bytes for the real-time memory pool"),
        }
    }
}

impl std::error::Error for PoolError {}

/// Sets up the pool with `bytes` of memory (scsynth's `-m`, in KB × 1024),
/// touched page by page now so that the audio thread never faults it in.
pub fn install_pool(bytes: usize) -> Result<(), PoolError> {
    if !POOL.load(Ordering::Acquire).is_null() {
        return Err(PoolError::AlreadyInstalled);
    }
    let layout = Layout::from_size_align(bytes.max(4096), 4096).map_err(|_| PoolError::TooSmall(bytes))?;
    // SAFETY: the layout has a non-zero size. The arena lives for the rest
    // of the process (it is never freed), which the 'static pool requires.
    let base = unsafe { std::alloc::alloc_zeroed(layout) };
    let Some(base_ptr) = NonNull::new(base) else {
        return Err(PoolError::OutOfMemory(bytes));
    };
    for off in (0..layout.size()).step_by(4096) {
        // SAFETY: inside the arena just allocated.
        unsafe { base.add(off).write_volatile(0) };
    }
    let mut tlsf = Pool::new();
    let arena = NonNull::slice_from_raw_parts(base_ptr, layout.size());
    // SAFETY: the arena is valid, exclusively owned by the pool, and 'static.
    if unsafe { tlsf.insert_free_block_ptr(arena) }.is_none() {
        return Err(PoolError::TooSmall(bytes));
    }
    let (tx, rx) = mpsc::channel(DEFERRED_CAPACITY);
    let state = Box::new(PoolState {
        tlsf: UnsafeCell::new(tlsf),
        base: base as usize,
        len: layout.size(),
        used: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        misses: AtomicU64::new(0),
        leaked: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        reserve: AtomicUsize::new(0),
        largest_free: AtomicUsize::new(0),
        deferred_tx: tx,
        deferred_rx: UnsafeCell::new(rx),
    });
    // Nothing is allocated yet: the whole arena is the largest block.
    // SAFETY: no other thread can see the state before it is published below.
    let whole = unsafe { probe_largest_free(&state) };
    state.largest_free.store(whole, Ordering::Relaxed);
    let ptr = Box::into_raw(state);
    if POOL.compare_exchange(std::ptr::null_mut(), ptr, Ordering::AcqRel, Ordering::Acquire).is_err() {
        // SAFETY: `ptr` came from Box::into_raw above and was never shared.
        drop(unsafe { Box::from_raw(ptr) });
        return Err(PoolError::AlreadyInstalled);
    }
    Ok(())
}

fn pool() -> Option<&'static PoolState> {
    let p = POOL.load(Ordering::Acquire);
    // SAFETY: once installed the state is never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Makes the calling thread allocate from the pool from now on.
///
/// # Safety
/// At most one thread may ever be in the pool: the pool's bookkeeping is
/// not synchronised, which is what makes it cheap enough for the audio
/// thread.
pub unsafe fn enter_pool() {
    ON_POOL.with(|c| c.set(true));
}

/// Whether the calling thread allocates from the pool.
pub fn in_pool() -> bool {
    ON_POOL.with(Cell::get)
}

/// Frees, on the pool's thread, what other threads freed since last time.
/// Bounded: at most `max` blocks per call.
pub fn drain_deferred_frees(max: usize) -> usize {
    let Some(p) = pool() else { return 0 };
    if !in_pool() {
        return 0;
    }
    // SAFETY: only the pool's thread (checked just above) reaches the receiver.
    let rx = unsafe { &mut *p.deferred_rx.get() };
    let mut n = 0;
    while n < max {
        let Some((addr, layout)) = rx.pop() else { break };
        // SAFETY: the address came from this pool and was freed exactly once
        // (by the thread that queued it); we are the pool's thread.
        unsafe { pool_free(p, addr as *mut u8, layout) };
        n += 1;
    }
    n
}

pub fn status() -> PoolStatus {
    match pool() {
        Some(p) => PoolStatus {
            total: p.len,
            used: p.used.load(Ordering::Relaxed),
            peak: p.peak.load(Ordering::Relaxed),
            misses: p.misses.load(Ordering::Relaxed),
            leaked: p.leaked.load(Ordering::Relaxed),
            refused: p.refused.load(Ordering::Relaxed),
        },
        None => PoolStatus::default(),
    }
}

/// Room a fallible allocation on the pool's thread must leave in the pool
/// besides [`FALLIBLE_HEADROOM`]: what the work in progress will still
/// take through ordinary allocations (the rest of a synth being built, the
/// synths made but not built yet), which must not miss the pool.
pub fn set_reserve(bytes: usize) {
    if let Some(p) = pool() {
        p.reserve.store(bytes, Ordering::Relaxed);
    }
}

/// Room every fallible allocation leaves, at most a sixteenth of the pool:
/// unwinding after a refusal and reporting it take a little memory.
pub const FALLIBLE_HEADROOM: usize = 16 << 10;

/// The largest single allocation the pool can serve right now, in bytes.
///
/// The free total says nothing about fragmentation: a pool with half its
/// memory free in small holes cannot serve one big request. On the pool's
/// thread this measures the pool (a binary search of about 25 trial
/// allocations, each O(1) and undone at once: a few microseconds, with no
/// system call, so `/rtMemoryStatus` may call it on the audio thread) and
/// remembers the result; other threads may not touch the pool's bookkeeping
/// and get the value last measured there. TLSF only hands out a block from a
/// size class whose every member fits the request, so the answer may be up
/// to one sixteenth (one second-level class) below the biggest hole itself.
pub fn largest_free_block() -> usize {
    let Some(p) = pool() else { return 0 };
    if in_pool() {
        // SAFETY: we are the pool's thread (checked just above).
        let largest = unsafe { probe_largest_free(p) };
        p.largest_free.store(largest, Ordering::Relaxed);
        largest
    } else {
        p.largest_free.load(Ordering::Relaxed)
    }
}

/// Binary search for the largest request the TLSF allocator accepts. Each
/// successful trial block is freed at once; freeing coalesces it with the
/// remainder it was split from, so the pool is left as it was found (up to
/// the order of blocks inside one free list).
///
/// # Safety
/// Must run on the pool's thread, or before the pool is published.
unsafe fn probe_largest_free(p: &PoolState) -> usize {
    // SAFETY: the caller has exclusive access to the pool's bookkeeping.
    let tlsf = unsafe { &mut *p.tlsf.get() };
    // Sizes in granules: every block is a whole number of them.
    const GRAIN: usize = 32;
    let fits = |tlsf: &mut Pool, size: usize| -> bool {
        let Ok(layout) = Layout::from_size_align(size, 1) else { return false };
        match tlsf.allocate(layout) {
            Some(ptr) => {
                // SAFETY: the block was just allocated from this pool with
                // alignment 1 and nothing else has seen it.
                unsafe { tlsf.deallocate(ptr, 1) };
                true
            }
            None => false,
        }
    };
    // Invariant: `lo` granules fit (0 trivially), `hi` granules do not.
    let (mut lo, mut hi) = (0usize, p.len / GRAIN + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(tlsf, mid * GRAIN) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if lo == 0 {
        return if fits(tlsf, 1) { 1 } else { 0 };
    }
    // Refine inside the last granule: a request needs its header too, so
    // the limit is rarely a whole number of granules.
    let (mut lo_b, mut hi_b) = (lo * GRAIN, (lo + 1) * GRAIN);
    while hi_b - lo_b > 1 {
        let mid = lo_b + (hi_b - lo_b) / 2;
        if fits(tlsf, mid) {
            lo_b = mid;
        } else {
            hi_b = mid;
        }
    }
    lo_b
}

/// Bytes a block of `size` takes in the pool: the TLSF block header (two
/// words) and the rounding to 32-byte granules. Counting the header keeps
/// `used` close to what the pool really holds, so that estimates built on
/// it (many small unit states) do not overcommit the pool.
fn accounted(size: usize) -> usize {
    (size + 16 + 31) & !31
}

/// # Safety
/// Must run on the pool's thread.
unsafe fn pool_alloc(p: &PoolState, layout: Layout) -> *mut u8 {
    // SAFETY: the caller is the pool's only thread.
    let tlsf = unsafe { &mut *p.tlsf.get() };
    match tlsf.allocate(layout) {
        Some(ptr) => {
            let used = p.used.fetch_add(accounted(layout.size()), Ordering::Relaxed) + accounted(layout.size());
            p.peak.fetch_max(used, Ordering::Relaxed);
            ptr.as_ptr()
        }
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// Must run on the pool's thread, with a block this pool allocated with
/// `layout`.
unsafe fn pool_free(p: &PoolState, ptr: *mut u8, layout: Layout) {
    // SAFETY: the caller is the pool's only thread.
    let tlsf = unsafe { &mut *p.tlsf.get() };
    // SAFETY: the block came from this pool with this layout (caller's
    // contract). rlsf finds the header of a block aligned to its granule or
    // more through a pointer stored before it, and of a less aligned one
    // right before it: it must be told the alignment the block was made with.
    unsafe { tlsf.deallocate(NonNull::new_unchecked(ptr), layout.align()) };
    p.used.fetch_sub(accounted(layout.size()), Ordering::Relaxed);
}

/// The global allocator that routes the pool's thread to the pool.
pub struct RoutingAlloc<A: GlobalAlloc> {
    inner: A,
}

impl<A: GlobalAlloc> RoutingAlloc<A> {
    pub const fn new(inner: A) -> Self {
        RoutingAlloc { inner }
    }
}

// SAFETY: every block is served either by the pool (only on the pool's
// thread) or by the inner allocator, and is returned to the one that served
// it: pool blocks are recognised by address.
unsafe impl<A: GlobalAlloc> GlobalAlloc for RoutingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if in_pool() {
            if let Some(p) = pool() {
                let fallible = magnetar_rt::fallible::active();
                if fallible {
                    let keep = p.reserve.load(Ordering::Relaxed) + FALLIBLE_HEADROOM.min(p.len / 16);
                    let after = p.used.load(Ordering::Relaxed).saturating_add(accounted(layout.size()));
                    if after.saturating_add(keep) > p.len {
                        p.refused.fetch_add(1, Ordering::Relaxed);
                        return std::ptr::null_mut();
                    }
                }
                // SAFETY: we are the pool's thread.
                let ptr = unsafe { pool_alloc(p, layout) };
                if !ptr.is_null() {
                    return ptr;
                }
                if fallible {
                    p.refused.fetch_add(1, Ordering::Relaxed);
                    return std::ptr::null_mut();
                }
                p.misses.fetch_add(1, Ordering::Relaxed);
            }
        }
        // SAFETY: forwarded with the caller's valid layout.
        unsafe { self.inner.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if in_pool() && pool().is_some() {
            // SAFETY: forwarded with the caller's valid layout.
            let ptr = unsafe { self.alloc(layout) };
            if !ptr.is_null() {
                // SAFETY: the block just allocated holds `layout.size()` bytes.
                unsafe { ptr.write_bytes(0, layout.size()) };
            }
            return ptr;
        }
        // SAFETY: forwarded with the caller's valid layout; the kernel's
        // zeroed pages are not touched here.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = pool() {
            let addr = ptr as usize;
            if addr >= p.base && addr < p.base + p.len {
                if in_pool() {
                    // SAFETY: a pool block, freed on the pool's thread.
                    unsafe { pool_free(p, ptr, layout) };
                } else if p.deferred_tx.push((addr, layout)).is_err() {
                    p.leaked.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
        }
        // SAFETY: not a pool block, so the inner allocator served it.
        unsafe { self.inner.dealloc(ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The pool is process-wide, so one test exercises it end to end.
    #[test]
    fn pool_thread_allocates_from_the_pool_and_other_threads_free_through_the_queue() {
        #[global_allocator]
        static A: RoutingAlloc<std::alloc::System> = RoutingAlloc::new(std::alloc::System);

        install_pool(1 << 20).unwrap();
        assert!(matches!(install_pool(1 << 20), Err(PoolError::AlreadyInstalled)));
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let (back_tx, back_rx) = std::sync::mpsc::channel::<usize>();
        let (tx_aligned, rx_aligned) = std::sync::mpsc::channel();
        let (back_aligned_tx, back_aligned) = std::sync::mpsc::channel::<bool>();
        // Waits (up to 100 ms) for a block freed elsewhere to reach the
        // queue, and drains what is there.
        fn drain_the_queued_free() -> usize {
            let mut drained = 0;
            for _ in 0..100 {
                drained += drain_deferred_frees(16);
                if drained > 0 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            drained
        }
        let audio = std::thread::spawn(move || {
            // SAFETY: this is the only thread that enters the pool.
            unsafe { enter_pool() };
            let before = status().used;
            let v = vec![7u8; 1000];
            let p = status();
            assert!(p.used >= before + 1000, "the vector came from the pool");
            let addr = v.as_ptr() as usize;
            tx.send(v).unwrap();
            // Freed on another thread: comes back through the queue.
            let freed_addr = back_rx.recv().unwrap();
            assert_eq!(freed_addr, addr);
            let used_before_drain = status().used;
            let drained = drain_the_queued_free();
            assert_eq!(drained, 1);
            assert_eq!(used_before_drain - status().used, accounted(1000), "the block went back to the pool");
            // Blocks aligned beyond the pool's granule (cache-padded
            // atomics, boxed structs aligned to their lines) go back whole,
            // freed here or through the queue, and the pool stays usable.
            #[repr(align(128))]
            struct Lines([u8; 200]);
            let used_before = status().used;
            for round in 0..64u8 {
                let kept: Vec<Box<Lines>> = (0..8).map(|i| Box::new(Lines([round ^ i; 200]))).collect();
                for (i, b) in kept.iter().enumerate() {
                    assert_eq!(b.as_ref() as *const Lines as usize % 128, 0);
                    assert!(b.0.iter().all(|&x| x == round ^ i as u8));
                }
                drop(kept);
            }
            assert_eq!(status().used, used_before, "every aligned block went back to the pool");
            tx_aligned.send(Box::new(Lines([9; 200]))).unwrap();
            assert!(back_aligned.recv().unwrap());
            let used_before_drain = status().used;
            let drained = drain_the_queued_free();
            assert_eq!(drained, 1);
            let size = std::mem::size_of::<Lines>();
            assert_eq!(
                used_before_drain - status().used,
                accounted(size),
                "an aligned block freed elsewhere came back"
            );
            assert_eq!(status().misses, 0);
            // A size chosen at run time is refused, not served elsewhere.
            assert!(magnetar_rt::fallible::try_filled(0u8, 4 << 20).is_err());
            assert_eq!((status().misses, status().refused), (0, 1));
            // So is one that would eat the reserve.
            set_reserve((1 << 20) - 64 * 1024);
            assert!(magnetar_rt::fallible::try_filled(0u8, 64 * 1024).is_err());
            set_reserve(0);
            assert!(magnetar_rt::fallible::try_filled(0u8, 64 * 1024).is_ok());
            // Exhaustion falls back to the system heap instead of failing.
            let big = vec![0u8; 4 << 20];
            assert_eq!(status().misses, 1);
            drop(big);
        });
        let v = rx.recv().unwrap();
        let addr = v.as_ptr() as usize;
        drop(v);
        back_tx.send(addr).unwrap();
        let aligned = rx_aligned.recv().unwrap();
        drop(aligned);
        back_aligned_tx.send(true).unwrap();
        audio.join().unwrap();
    }
}
