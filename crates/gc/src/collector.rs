//! The first collector: snapshot between blocks on the audio thread, mark and sweep on a
//! collector thread, zeroing on a free thread, and freed blocks handed back to the audio
//! thread's allocator.

use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};
use magnetar_rt::event::{binary_event, Signaller, Waiter};
use magnetar_rt::ilock::InterruptibleLock;
use magnetar_rt::spsc::{self, Consumer, Producer};

use crate::config::{CollectorMode, GcConfig, WORD};
use crate::error::GcError;
use crate::mark::{HeapView, Tracer};
use crate::poolmem::Poolmem;
use crate::region::Region;
use crate::snapshot::{self, Outcome, Plan, Window};
use crate::stats::*;

/// Registered root regions beyond the built-in slots.
pub const MAX_ROOT_REGIONS: usize = 32;
/// Words the free thread zeroes between two looks at the interruptible lock.
const ZERO_STEP_WORDS: usize = 64;
/// Capacity of the rings that carry dead blocks to the free thread and back.
const FREE_RING: usize = 16 * 1024;
/// How often the audio thread may retry the interruptible lock before skipping a snapshot.
const LOCK_SPINS: u32 = 256;

/// A complementary-block word the barrier has not written since the collector last merged it.
/// A mutator storing this very value leaves the snapshot's older word in place: it is never a
/// heap address, so at worst the older value keeps a block alive for one more write.
const UNUSED: usize = usize::MAX;

const IDLE: u32 = 0;
const WORKING: u32 = 1;

/// An allocation record on the transport stack (`meminfo_minimal`).
#[derive(Clone, Copy)]
#[repr(C)]
struct Record {
    start: usize,
    size: usize,
}

/// What the audio thread hands the collector with a snapshot.
#[derive(Clone, Copy, Default)]
struct CycleInput {
    view: HeapView,
    roots_words: usize,
    records: usize,
    nrecords: usize,
    /// Replicating mode: the complementary block and stack to merge first.
    merge: Option<MergeInput>,
}

/// The half of the replication state handed to the collector at a swap.
#[derive(Clone, Copy, Default)]
struct MergeInput {
    /// Index into `Replica::comp` and `Replica::logs`.
    half: usize,
    /// Entries in the last segment of that half's stack (the home segment when `chained` is 0).
    logged: usize,
    /// Spare segments chained after the home one; all but the last are full.
    chained: usize,
    /// The stack overflowed with no spare segment left: scan the whole complementary block.
    overflowed: bool,
}

/// The second collector's memory: two complementary blocks of the pointer heap's size, filled
/// with `UNUSED` except where the barrier wrote, and two stacks of the byte offsets written.
/// `Shared::snapshot` is the persistent snapshot they are merged into.
///
/// Each stack is a home segment plus a chain of spare segments of the same size, which travel
/// between the threads by address: the collector thread puts free ones on a ring, the barrier
/// takes one when its segment fills and records it in its half's `chains` table.
struct Replica {
    comp: [Region; 2],
    logs: [Region; 2],
    /// Per half, the addresses of the spare segments chained after the home one, in order.
    chains: [Region; 2],
    /// Entries per segment.
    log_cap: usize,
    /// Spare segments that may exist at once (the length of each `chains` table).
    max_spares: usize,
    /// Every spare segment, kept here so that none is freed while either thread may hold its
    /// address. Only the collector thread locks it, to add segments; never the audio thread.
    spares: Mutex<Vec<Region>>,
}

/// The audio thread's side of the write barrier (`comp_block_wb`, `comp_stack_wb`).
struct Barrier {
    heap_base: usize,
    heap_len: usize,
    /// Complementary block the barrier writes; 0 when not replicating (plain stores).
    comp: usize,
    /// The segment being filled.
    log: *mut usize,
    logged: usize,
    cap: usize,
    overflowed: bool,
    half: usize,
    /// Spare segments from the collector thread; `None` when not replicating.
    spares: Option<Consumer<usize>>,
    /// This half's chain table and the segments recorded in it so far.
    chain: *mut usize,
    chained: usize,
    chain_cap: usize,
    /// Spare segments taken since the last swap.
    taken: u64,
}

impl Barrier {
    /// The current segment is full: chain a spare one, or give up on the log until the swap.
    /// Bounded time: one ring pop, no allocation.
    #[cold]
    fn next_segment(&mut self) {
        let seg = if self.chained < self.chain_cap { self.spares.as_mut().and_then(Consumer::pop) } else { None };
        match seg {
            Some(seg) => {
                // SAFETY: chained < chain_cap, the table's length in words; the audio thread
                // owns this half's table until the swap hands it over.
                unsafe { self.chain.add(self.chained).write(seg) };
                self.chained += 1;
                self.taken += 1;
                self.log = seg as *mut usize;
                self.logged = 0;
            }
            None => self.overflowed = true,
        }
    }
}

/// State shared by the audio thread and the collector threads.
struct Shared {
    ptr_heap: Region,
    atomic_heap: Region,
    snapshot: Region,
    roots_snapshot: Region,
    /// The two halves of the transport stack; the audio thread writes one, the collector reads the other.
    records: [Region; 2],
    /// Present in replicating mode only.
    replica: Option<Replica>,
    cycle: UnsafeCell<CycleInput>,
    /// IDLE: the audio thread owns `cycle`, the snapshot, the roots snapshot and both record
    /// stacks. WORKING: the collector owns `cycle`, the snapshots and the stack named in `cycle`.
    state: AtomicU32,
    shutdown: AtomicBool,
    ilock: InterruptibleLock,
    stats: SharedStats,
    fill: usize,
    poison_atomic: bool,
    created: Instant,
    safe_limit: usize,
    full_duration: Duration,
}

// SAFETY: the only non-Sync field is `cycle`, whose accesses follow the `state` protocol:
// written by the audio thread while IDLE and published with a Release store of WORKING,
// read by the collector after an Acquire load of WORKING, never touched by both at once.
unsafe impl Sync for Shared {}

impl Shared {
    fn read_stats(&self) -> GcStats {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.stats;
        GcStats {
            blocking: s.blocking.read(),
            blocking_without_full: s.blocking_without_full.read(),
            roots_snapshot: s.roots_snapshot.read(),
            partial_snapshot: s.partial_snapshot.read(),
            full_snapshot: s.full_snapshot.read(),
            snapshot_failures: s.snapshot_failures.load(Relaxed),
            mark: s.mark.read(),
            sweep: s.sweep.read(),
            free_busy: Duration::from_nanos(s.free_busy_ns.load(Relaxed)),
            cycles: s.cycles.load(Relaxed),
            allocations: s.allocations.load(Relaxed),
            alloc_failures: s.alloc_failures.load(Relaxed),
            blocks_freed: s.blocks_freed.load(Relaxed),
            live_blocks: s.live_blocks.load(Relaxed),
            pointer_heap_used: s.pointer_heap_used.load(Relaxed) as usize,
            pointer_live_bytes: s.pointer_live_bytes.load(Relaxed) as usize,
            atomic_heap_used: s.atomic_heap_used.load(Relaxed) as usize,
            atomic_live_bytes: s.atomic_live_bytes.load(Relaxed) as usize,
            interior_pointers: s.interior_pointers.load(Relaxed),
            false_pointers: s.false_pointers.load(Relaxed),
            warnings: s.warnings.load(Relaxed) as u32,
            barrier_logged: s.barrier_logged.load(Relaxed),
            barrier_overflows: s.barrier_overflows.load(Relaxed),
            barrier_segments_taken: s.barrier_segments_taken.load(Relaxed),
            barrier_spare_segments: s.barrier_spare_segments.load(Relaxed),
            merge: s.merge.read(),
            safe_limit_bytes: self.safe_limit,
            full_snapshot_duration: self.full_duration,
            elapsed: self.created.elapsed(),
        }
    }
}

/// What `between_blocks` did about a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotKind {
    /// No snapshot this block (collector busy, nothing to do, or the block after a snapshot).
    None,
    /// The used part of the pointer heap was copied; a collection started.
    Partial,
    /// The whole pointer heap was copied and padded to the worst case; a collection started.
    Full,
    /// The copy did not fit the budget (or the free thread held the lock); retried later.
    Failed,
    /// Stop-the-world mode: a whole mark and sweep ran inside this call.
    Collected,
    /// Replicating mode: the complementary blocks were swapped and only the roots copied; a
    /// collection started.
    Replicated,
}

/// Result of one `between_blocks` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockReport {
    pub snapshot: SnapshotKind,
    /// Time the call took: the audio thread's blocking time for this block.
    pub blocked: Duration,
}

/// Identifies a registered root region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootRegionId(pub(crate) usize);

/// Read-only view of the statistics, usable from any thread.
#[derive(Clone)]
pub struct Monitor {
    shared: Arc<Shared>,
}

impl Monitor {
    pub fn stats(&self) -> GcStats {
        self.shared.read_stats()
    }
}

/// The audio thread's handle: allocation, roots and the per-block call.
///
/// All methods take `&mut self`, so exactly one thread (the audio thread) uses it; other
/// threads read statistics through a [`Monitor`]. Dropping it stops the collector threads.
pub struct Collector {
    shared: Arc<Shared>,
    ptr_pool: Poolmem,
    atomic_pool: Poolmem,
    writer: usize,
    writer_len: usize,
    records_cap: usize,
    roots: Box<[*mut u8]>,
    regions: [Option<(usize, usize)>; MAX_ROOT_REGIONS],
    region_words: usize,
    max_region_words: usize,
    returned: Consumer<(usize, usize)>,
    max_frees_per_block: usize,
    /// Never snapshot two blocks in a row (the thesis's `gc_can_run`).
    skip_next: bool,
    last_full: Option<Instant>,
    period: Duration,
    window: Duration,
    // Counters kept locally and published once per block.
    allocations: u64,
    alloc_failures: u64,
    warnings: u32,
    collector_thread: Option<JoinHandle<()>>,
    free_thread: Option<JoinHandle<()>>,
    /// Hands a cycle to the collector thread.
    wake: Signaller,
    free_handle: Thread,
    /// Root slots not handed out by `claim_root_slot`, lowest index first.
    free_slots: Vec<u32>,
    claimed: Box<[bool]>,
    /// The block table and dead list when collecting on the audio thread (stop-the-world mode).
    in_block: Option<Box<InBlock>>,
    barrier: Barrier,
}

/// Stop-the-world mode's private state.
struct InBlock {
    tracer: Tracer,
    dead: Vec<(usize, usize)>,
}

// SAFETY: the raw pointers in `roots` are plain values the collector copies, never
// dereferences; root regions are read only on the thread that owns the Collector, which
// `add_roots` requires to be valid; the pools' memory and the barrier's complementary block
// and log are owned by `shared`, and only the thread holding the Collector writes them.
unsafe impl Send for Collector {}

impl Collector {
    /// Reserve and pre-fault every heap, snapshot and table, calibrate p(M) if not given,
    /// and start the mark-and-sweep and free threads.
    pub fn new(config: GcConfig) -> Result<Collector, GcError> {
        config.validate()?;
        let num_cpus = config
            .num_cpus
            .unwrap_or_else(|| thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        let pf = config.prefault;
        let ptr_heap = Region::new_huge(config.pointer_heap_bytes, pf, "pointer heap")?;
        let atomic_heap = Region::new(config.atomic_heap_bytes, pf, "atomic heap")?;
        let snapshot = Region::new_huge(config.pointer_heap_bytes, true, "snapshot")?;
        let roots_words = config.root_slots + config.max_root_region_bytes / WORD;
        let roots_snapshot = Region::new(roots_words.max(1) * WORD, true, "roots snapshot")?;
        let rec_bytes = config
            .max_allocations_per_cycle
            .checked_mul(std::mem::size_of::<Record>())
            .ok_or(GcError::InvalidConfig("max_allocations_per_cycle too large"))?;
        let records = [
            Region::new(rec_bytes, true, "allocation records")?,
            Region::new(rec_bytes, true, "allocation records")?,
        ];
        let replica = if config.mode == CollectorMode::Replicating {
            let log_bytes = config
                .barrier_log_entries
                .checked_mul(WORD)
                .ok_or(GcError::InvalidConfig("barrier_log_entries too large"))?;
            let comp = [
                Region::new(config.pointer_heap_bytes, true, "complementary block")?,
                Region::new(config.pointer_heap_bytes, true, "complementary block")?,
            ];
            for c in &comp {
                // SAFETY: the region is pointer_heap_bytes long (a whole number of words),
                // word aligned, and not shared with any thread yet.
                unsafe { std::slice::from_raw_parts_mut(c.base() as *mut usize, c.len() / WORD) }.fill(UNUSED);
            }
            let logs =
                [Region::new(log_bytes, true, "barrier log")?, Region::new(log_bytes, true, "barrier log")?];
            let max_spares = config.barrier_log_max_segments;
            let chain_bytes = max_spares.max(1) * WORD;
            let chains =
                [Region::new(chain_bytes, true, "barrier log chain")?, Region::new(chain_bytes, true, "barrier log chain")?];
            let mut spares = Vec::with_capacity(max_spares);
            for _ in 0..config.barrier_log_spare_segments {
                spares.push(Region::new(log_bytes, true, "barrier log segment")?);
            }
            Some(Replica {
                comp,
                logs,
                chains,
                log_cap: config.barrier_log_entries,
                max_spares,
                spares: Mutex::new(spares),
            })
        } else {
            None
        };
        let bandwidth = match config.snapshot_bandwidth {
            Some(b) => b,
            None => calibrate(&ptr_heap, &snapshot),
        };
        let full_duration = Duration::from_secs_f64(config.pointer_heap_bytes as f64 / bandwidth);
        let fill = config.poison.unwrap_or(0) as usize;
        let shared = Arc::new(Shared {
            ptr_heap,
            atomic_heap,
            snapshot,
            roots_snapshot,
            records,
            replica,
            cycle: UnsafeCell::new(CycleInput::default()),
            state: AtomicU32::new(IDLE),
            shutdown: AtomicBool::new(false),
            ilock: InterruptibleLock::default(),
            stats: SharedStats::default(),
            fill,
            poison_atomic: config.poison.is_some(),
            created: Instant::now(),
            safe_limit: config.safe_limit_bytes(num_cpus),
            full_duration,
        });
        let ptr_pool = Poolmem::new(shared.ptr_heap.addr(), config.pointer_heap_bytes, fill);
        let atomic_pool = Poolmem::new(shared.atomic_heap.addr(), config.atomic_heap_bytes, fill);

        let (dead_tx, dead_rx) = spsc::channel(FREE_RING);
        // Room for every spare segment that may ever exist, so that giving one back never fails.
        let (mut spare_tx, spare_rx) = spsc::channel::<usize>(config.barrier_log_max_segments.max(1));
        if let Some(r) = &shared.replica {
            let spares = r.spares.lock().unwrap_or_else(|e| e.into_inner());
            for seg in spares.iter() {
                let _ = spare_tx.push(seg.addr());
            }
            shared.stats.barrier_spare_segments.store(spares.len() as u64, Ordering::Relaxed);
        }
        let (back_tx, back_rx) = spsc::channel(FREE_RING);
        let s = shared.clone();
        let free_thread = thread::Builder::new()
            .name("magnetar-gc-free".into())
            .spawn(move || free_main(s, dead_rx, back_tx))
            .map_err(|_| GcError::ThreadSpawn("free"))?;
        let free_handle = free_thread.thread().clone();
        let s = shared.clone();
        let fh = free_handle.clone();
        let expected = config.max_allocations_per_cycle;
        let (wake, woken) = binary_event();
        let collector_thread = match thread::Builder::new()
            .name("magnetar-gc-mark".into())
            .spawn(move || collector_main(s, woken, dead_tx, spare_tx, fh, expected))
        {
            Ok(t) => t,
            Err(_) => {
                shared.shutdown.store(true, Ordering::Release);
                free_handle.unpark();
                let _ = free_thread.join();
                return Err(GcError::ThreadSpawn("mark-and-sweep"));
            }
        };
        // The persistent snapshot starts equal to the heap (both hold only fill so far); from
        // here on the heap's pointer words reach it only through the complementary blocks.
        let barrier = match &shared.replica {
            Some(r) => Barrier {
                heap_base: shared.ptr_heap.addr(),
                heap_len: shared.ptr_heap.len(),
                comp: r.comp[0].addr(),
                log: r.logs[0].base() as *mut usize,
                logged: 0,
                cap: r.log_cap,
                overflowed: false,
                half: 0,
                spares: Some(spare_rx),
                chain: r.chains[0].base() as *mut usize,
                chained: 0,
                chain_cap: r.max_spares,
                taken: 0,
            },
            None => Barrier {
                heap_base: shared.ptr_heap.addr(),
                heap_len: shared.ptr_heap.len(),
                comp: 0,
                log: std::ptr::null_mut(),
                logged: 0,
                cap: 0,
                overflowed: false,
                half: 0,
                spares: None,
                chain: std::ptr::null_mut(),
                chained: 0,
                chain_cap: 0,
                taken: 0,
            },
        };
        Ok(Collector {
            shared,
            ptr_pool,
            atomic_pool,
            writer: 0,
            writer_len: 0,
            records_cap: config.max_allocations_per_cycle,
            roots: vec![std::ptr::null_mut(); config.root_slots].into_boxed_slice(),
            regions: [None; MAX_ROOT_REGIONS],
            region_words: 0,
            max_region_words: config.max_root_region_bytes / WORD,
            returned: back_rx,
            max_frees_per_block: config.max_frees_per_block,
            skip_next: false,
            last_full: None,
            period: config.full_snapshot_period,
            window: config.full_snapshot_window,
            allocations: 0,
            alloc_failures: 0,
            warnings: 0,
            collector_thread: Some(collector_thread),
            free_thread: Some(free_thread),
            wake,
            free_handle,
            free_slots: (0..config.root_slots as u32).collect(),
            claimed: vec![false; config.root_slots].into_boxed_slice(),
            in_block: (config.mode == CollectorMode::StopTheWorld).then(|| {
                Box::new(InBlock { tracer: Tracer::new(expected), dead: Vec::with_capacity(expected) })
            }),
            barrier,
        })
    }

    /// Allocate `size` bytes of pointer-heap memory, word aligned, filled with zero (or the
    /// poison word). Bounded time: never calls the system allocator, never blocks.
    /// `None` when the heap or the allocation-record stack is full.
    pub fn alloc(&mut self, size: usize) -> Option<NonNull<u8>> {
        self.alloc_in(size, false)
    }

    /// Allocate memory that will never hold heap pointers (sample buffers): it is kept alive
    /// by pointers to it but never copied or scanned. Its contents are unspecified.
    pub fn alloc_atomic(&mut self, size: usize) -> Option<NonNull<u8>> {
        self.alloc_in(size, true)
    }

    /// Store `value` into `*slot`: the write barrier every pointer store into the pointer heap
    /// must go through in [`CollectorMode::Replicating`] (`WRITE_HEAP_POINTER` in the thesis).
    ///
    /// In replicating mode a store to a word-aligned slot inside the pointer heap is also
    /// written to the complementary block, and the slot's offset is pushed on the barrier log
    /// the first time it is written since the last collection. When the log's segment is full
    /// the barrier chains a spare segment the collector thread prepared; only when none is
    /// left does the next collection scan the whole complementary block instead (still
    /// correct, slower). Stores
    /// elsewhere (roots, atomic blocks, the mutator's own memory) are plain stores, and so is
    /// every store in the other modes, so code can use the barrier whatever the mode.
    /// Bounded time: a compare, two stores, at most one push (and one ring pop when a
    /// segment fills).
    ///
    /// Stores of non-pointer data (samples, counters) may bypass the barrier: the snapshot then
    /// keeps the word's older value, which can at worst keep a block alive longer. A pointer
    /// stored into the pointer heap without the barrier is invisible to the collector, which
    /// may then free the block it points to.
    ///
    /// # Safety
    /// `slot` must be valid for a pointer-sized, aligned write, and must be written only from
    /// the thread that owns this collector.
    #[inline]
    pub unsafe fn write_ptr(&mut self, slot: *mut *mut u8, value: *mut u8) {
        let b = &mut self.barrier;
        let off = (slot as usize).wrapping_sub(b.heap_base);
        if b.comp != 0 && off < b.heap_len && off.is_multiple_of(WORD) {
            let mirror = (b.comp + off) as *mut usize;
            // SAFETY: off < heap_len and the complementary block is heap_len bytes and word
            // aligned; the audio thread owns the writer half until it swaps them.
            let first = unsafe { mirror.read() } == UNUSED;
            // SAFETY: as above.
            unsafe { mirror.write(value as usize) };
            // Once overflowed the whole block is scanned anyway: logging is moot.
            if first && !b.overflowed {
                if b.logged == b.cap {
                    b.next_segment();
                }
                if !b.overflowed {
                    // SAFETY: logged < cap, the segment's length (next_segment started a fresh
                    // one if it was full); owned like the block above.
                    unsafe { b.log.add(b.logged).write(off) };
                    b.logged += 1;
                }
            }
        }
        // SAFETY: valid and aligned per the contract.
        unsafe { slot.write(value) };
    }

    fn alloc_in(&mut self, size: usize, atomic: bool) -> Option<NonNull<u8>> {
        if self.writer_len == self.records_cap {
            return self.alloc_failed();
        }
        let mut got = self.pool(atomic).alloc(size);
        if got.is_none() {
            // Freed blocks may be waiting in the ring: take a bounded number back and retry.
            self.take_back_freed(64);
            got = self.pool(atomic).alloc(size);
        }
        let Some((start, block)) = got else {
            return self.alloc_failed();
        };
        let rec = self.shared.records[self.writer].base() as *mut Record;
        // SAFETY: writer_len < records_cap, so the slot is inside the writer stack, which the
        // audio thread owns exclusively (the collector reads only the other stack).
        unsafe { rec.add(self.writer_len).write(Record { start, size: block }) };
        self.writer_len += 1;
        self.allocations += 1;
        NonNull::new(start as *mut u8)
    }

    fn pool(&mut self, atomic: bool) -> &mut Poolmem {
        if atomic {
            &mut self.atomic_pool
        } else {
            &mut self.ptr_pool
        }
    }

    fn alloc_failed(&mut self) -> Option<NonNull<u8>> {
        self.alloc_failures += 1;
        self.warnings |= WARN_ALLOCATION_FAILED;
        None
    }

    /// The built-in root slots. A block stays alive while a slot (or a registered region,
    /// or a live block) holds a pointer to or into it.
    pub fn roots_mut(&mut self) -> &mut [*mut u8] {
        &mut self.roots
    }

    /// The built-in root slots, read-only.
    pub fn roots(&self) -> &[*mut u8] {
        &self.roots
    }

    /// Hand out a root slot for one user (say a UGen) to keep its objects alive through;
    /// `None` when every slot is taken. Slots come from the highest index down, so code that
    /// indexes `roots_mut` directly from 0 does not meet them unless the table is nearly full.
    /// Never allocates.
    pub fn claim_root_slot(&mut self) -> Option<usize> {
        let slot = self.free_slots.pop()? as usize;
        self.claimed[slot] = true;
        self.roots[slot] = std::ptr::null_mut();
        Some(slot)
    }

    /// Give a claimed slot back: it is cleared, so whatever only it held becomes garbage.
    /// Slots that are not claimed are ignored (a second release is harmless).
    pub fn release_root_slot(&mut self, slot: usize) {
        if self.claimed.get(slot) == Some(&true) {
            self.claimed[slot] = false;
            self.roots[slot] = std::ptr::null_mut();
            // Capacity is root_slots, so this push never reallocates.
            self.free_slots.push(slot as u32);
        }
    }

    /// Register `bytes` of memory at `start` as roots (the thesis's global variables).
    ///
    /// # Safety
    /// The range must stay valid and readable until `remove_roots` or drop, and must not be
    /// written concurrently with `between_blocks` (normally it is audio-thread state).
    pub unsafe fn add_roots(&mut self, start: *const u8, bytes: usize) -> Result<RootRegionId, GcError> {
        if start.is_null() || !(start as usize).is_multiple_of(WORD) {
            return Err(GcError::BadRootRegion);
        }
        let words = bytes / WORD;
        let too_many = GcError::TooManyRoots { limit: self.max_region_words * WORD, max_regions: MAX_ROOT_REGIONS };
        if self.region_words + words > self.max_region_words {
            return Err(too_many);
        }
        let slot = self.regions.iter().position(|r| r.is_none()).ok_or(too_many)?;
        self.regions[slot] = Some((start as usize, words));
        self.region_words += words;
        Ok(RootRegionId(slot))
    }

    /// Stop treating a registered region as roots.
    pub fn remove_roots(&mut self, id: RootRegionId) {
        if let Some(Some((_, words))) = self.regions.get(id.0) {
            self.region_words -= words;
            self.regions[id.0] = None;
        }
    }

    /// The call the audio engine makes after each DSP block, with the time it can spare.
    ///
    /// Puts back a bounded number of freed blocks, then, if the collector is idle and this is
    /// not the block right after a snapshot, copies the roots and the pointer heap (partial or
    /// full, see the thesis's ch. 10) and starts a concurrent collection. In replicating mode
    /// it copies only the roots and swaps the barrier's complementary blocks. Never blocks.
    pub fn between_blocks(&mut self, budget: Duration) -> BlockReport {
        let t0 = Instant::now();
        self.take_back_freed(self.max_frees_per_block);
        if self.ptr_pool.used_bytes() > self.shared.safe_limit {
            self.warnings |= WARN_SAFETY_BUFFER;
        }
        let mut kind = SnapshotKind::None;
        if self.never_used() {
            // Nothing was ever allocated, so there is no garbage and no
            // worst case to rehearse: a server whose synths do not use the
            // heap pays nothing for it (the forced full snapshot alone would
            // take a fifth of a 64-sample period once a second).
        } else if self.in_block.is_some() {
            kind = self.collect_in_block(t0);
        } else if self.skip_next {
            self.skip_next = false;
        } else if self.barrier.comp != 0 {
            // Start a collection when the collector is idle and there may be garbage
            // (allocations, pointer stores, or root changes, which are not tracked and so are
            // assumed once per period). Like the first collector, never two blocks in a row: the
            // pause would allow it, but it halves the collector thread's load.
            let due = self.last_full.is_none_or(|t| t0 >= t + self.period);
            let b = &self.barrier;
            if self.shared.state.load(Ordering::Acquire) == IDLE
                && (self.writer_len > 0 || b.logged > 0 || b.chained > 0 || b.overflowed || due)
            {
                kind = self.swap_and_start(t0);
                self.skip_next = true;
            }
        } else if self.shared.state.load(Ordering::Acquire) == IDLE && !budget.is_zero() {
            let window = match self.last_full {
                None => Window::Inside,
                Some(t) if t0 < t + self.period => Window::Before,
                Some(t) if t0 < t + self.period + self.window => Window::Inside,
                Some(_) => Window::After,
            };
            // Collect when something was allocated, and at least once per period even if not.
            if self.writer_len > 0 || window != Window::Before {
                kind = self.snapshot_and_start(budget, window, t0);
                self.skip_next = true;
            }
        }
        self.publish_stats();
        let blocked = t0.elapsed();
        let st = &self.shared.stats;
        st.blocking.record(blocked);
        if kind != SnapshotKind::Full {
            st.blocking_without_full.record(blocked);
        }
        BlockReport { snapshot: kind, blocked }
    }

    /// Whether no block was ever allocated on either heap (nothing pending
    /// either): collecting cannot find anything then.
    fn never_used(&self) -> bool {
        self.allocations == 0 && self.writer_len == 0
    }

    /// Stop-the-world mode: on the same schedule as the snapshots (after allocations, never two
    /// blocks in a row, at least once per period), mark the live heap, sweep, zero and free.
    fn collect_in_block(&mut self, t0: Instant) -> SnapshotKind {
        if self.skip_next {
            self.skip_next = false;
            return SnapshotKind::None;
        }
        let due = self.last_full.is_none_or(|t| t0 >= t + self.period);
        if self.writer_len == 0 && !due {
            return SnapshotKind::None;
        }
        let Some(mut ib) = self.in_block.take() else { return SnapshotKind::None };
        self.skip_next = true;
        if due {
            self.last_full = Some(t0);
        }
        let rt = Instant::now();
        let roots_words = self.copy_roots();
        let sh = &*self.shared;
        sh.stats.roots_snapshot.record(rt.elapsed());
        let recs = sh.records[self.writer].base() as *const Record;
        for k in 0..self.writer_len {
            // SAFETY: k < writer_len <= capacity of the writer stack, which only this thread uses.
            let r = unsafe { recs.add(k).read() };
            ib.tracer.add_block(r.start, r.size, !self.ptr_pool.contains(r.start));
        }
        self.writer_len = 0;
        let view = HeapView {
            ptr_base: sh.ptr_heap.addr(),
            ptr_used: self.ptr_pool.used_bytes(),
            atomic_base: sh.atomic_heap.addr(),
            atomic_used: self.atomic_pool.used_bytes(),
            // No snapshot: blocks are scanned where they live.
            snapshot: sh.ptr_heap.addr(),
        };
        let tm = Instant::now();
        // SAFETY: the roots snapshot holds `roots_words` words; the pointer heap holds
        // `ptr_used` readable bytes and nobody else writes it (the free thread is idle in
        // this mode and the mutator is this thread).
        unsafe { ib.tracer.mark(sh.roots_snapshot.base() as *const usize, roots_words, &view) };
        let ts = Instant::now();
        sh.stats.mark.record(ts - tm);
        ib.dead.clear();
        let dead = &mut ib.dead;
        let freed = ib.tracer.sweep(|start, size| dead.push((start, size)));
        for &(start, size) in ib.dead.iter() {
            let in_ptr_heap = self.ptr_pool.contains(start);
            if in_ptr_heap || sh.poison_atomic {
                // SAFETY: the block is dead (unreachable from the roots), inside a heap this
                // collector owns, and `size` bytes long; nothing else refers to it.
                unsafe { std::slice::from_raw_parts_mut(start as *mut usize, size / WORD) }.fill(sh.fill);
            }
            if in_ptr_heap {
                self.ptr_pool.free(start, size);
            } else {
                self.atomic_pool.free(start, size);
            }
        }
        sh.stats.sweep.record(ts.elapsed());
        let s = &sh.stats;
        SharedStats::add(&s.blocks_freed, freed as u64);
        s.live_blocks.store(ib.tracer.live_blocks() as u64, Ordering::Relaxed);
        s.interior_pointers.store(ib.tracer.interior_found, Ordering::Relaxed);
        s.false_pointers.store(ib.tracer.false_found, Ordering::Relaxed);
        SharedStats::add(&s.cycles, 1);
        self.in_block = Some(ib);
        SnapshotKind::Collected
    }

    fn snapshot_and_start(&mut self, budget: Duration, window: Window, t0: Instant) -> SnapshotKind {
        let sh = &*self.shared;
        if window != Window::Before && budget < sh.full_duration {
            self.warnings |= WARN_BUDGET_BELOW_WORST_CASE;
        }
        let Some(held) = sh.ilock.try_lock_snapshot(LOCK_SPINS) else {
            SharedStats::add(&sh.stats.snapshot_failures, 1);
            return SnapshotKind::Failed;
        };
        let rt = Instant::now();
        let roots_words = self.copy_roots();
        sh.stats.roots_snapshot.record(rt.elapsed());
        let plan = Plan {
            window,
            used: self.ptr_pool.used_bytes(),
            size: sh.ptr_heap.len(),
            budget: budget.saturating_sub(t0.elapsed()),
            full_duration: sh.full_duration,
        };
        let hs = Instant::now();
        // SAFETY: heap and snapshot are distinct regions of `size` bytes; the state is IDLE so
        // the collector does not read the snapshot; the free thread is kept off the heap by the
        // interruptible lock we hold; the audio thread (us) is not mutating during the call.
        let (outcome, _) = unsafe { snapshot::copy_heap(sh.ptr_heap.base(), sh.snapshot.base(), &plan, hs) };
        drop(held);
        let took = hs.elapsed();
        let kind = match outcome {
            Outcome::Failed => {
                SharedStats::add(&sh.stats.snapshot_failures, 1);
                return SnapshotKind::Failed;
            }
            Outcome::Full => {
                self.last_full = Some(hs);
                sh.stats.full_snapshot.record(took);
                SnapshotKind::Full
            }
            Outcome::FullMissed => {
                self.warnings |= WARN_FULL_SNAPSHOT_MISSED;
                self.last_full = Some(hs); // not true, but the user has been warned
                sh.stats.partial_snapshot.record(took);
                SnapshotKind::Partial
            }
            Outcome::Partial => {
                sh.stats.partial_snapshot.record(took);
                SnapshotKind::Partial
            }
        };
        self.start_cycle(plan.used, roots_words, None);
        kind
    }

    /// Replicating mode's critical section: copy the roots, hand the collector the allocation
    /// records and the barrier's half of the replication state, and give the barrier the other
    /// half (which the collector left all `UNUSED` with an empty stack).
    fn swap_and_start(&mut self, t0: Instant) -> SnapshotKind {
        let rt = Instant::now();
        let roots_words = self.copy_roots();
        let sh = &*self.shared;
        sh.stats.roots_snapshot.record(rt.elapsed());
        let Some(replica) = &sh.replica else { return SnapshotKind::None };
        let b = &mut self.barrier;
        SharedStats::add(&sh.stats.barrier_logged, (b.chained * b.cap + b.logged) as u64);
        SharedStats::add(&sh.stats.barrier_segments_taken, b.taken);
        b.taken = 0;
        if b.overflowed {
            SharedStats::add(&sh.stats.barrier_overflows, 1);
        }
        let merge = MergeInput { half: b.half, logged: b.logged, chained: b.chained, overflowed: b.overflowed };
        b.half ^= 1;
        b.comp = replica.comp[b.half].addr();
        b.log = replica.logs[b.half].base() as *mut usize;
        b.logged = 0;
        b.chain = replica.chains[b.half].base() as *mut usize;
        b.chained = 0;
        b.overflowed = false;
        if self.last_full.is_none_or(|t| t0 >= t + self.period) {
            self.last_full = Some(t0);
        }
        self.start_cycle(self.ptr_pool.used_bytes(), roots_words, Some(merge));
        SnapshotKind::Replicated
    }

    /// The collector's next cycle: the heap as it stands (`ptr_used` bytes of the pointer
    /// heap to scan), the roots copied, this half of the transport stack and, in replicating
    /// mode, the barrier's half.
    fn cycle_input(&self, ptr_used: usize, roots_words: usize, merge: Option<MergeInput>) -> CycleInput {
        let sh = &*self.shared;
        CycleInput {
            view: HeapView {
                ptr_base: sh.ptr_heap.addr(),
                ptr_used,
                atomic_base: sh.atomic_heap.addr(),
                atomic_used: self.atomic_pool.used_bytes(),
                snapshot: sh.snapshot.addr(),
            },
            roots_words,
            records: self.writer,
            nrecords: self.writer_len,
            merge,
        }
    }

    /// Copy the root slots and registered regions into the roots snapshot; returns words.
    fn copy_roots(&self) -> usize {
        let dst = self.shared.roots_snapshot.base() as *mut usize;
        let n = self.roots.len();
        // SAFETY: the roots snapshot holds root_slots + max_root_region_bytes/WORD words and
        // is owned by the audio thread while IDLE; the slots are `n` pointer-sized values.
        unsafe { std::ptr::copy_nonoverlapping(self.roots.as_ptr() as *const usize, dst, n) };
        let mut at = n;
        for &(start, words) in self.regions.iter().flatten() {
            // SAFETY: at + words <= total (add_roots keeps region_words within the limit);
            // the region is readable per the add_roots contract.
            unsafe { std::ptr::copy_nonoverlapping(start as *const usize, dst.add(at), words) };
            at += words;
        }
        at
    }

    /// Hands the collector thread its next cycle (see `cycle_input`) and switches the
    /// transport stack: the collector has finished with the other half. The collector polls
    /// for work while collections follow each other, so the audio thread makes no system call
    /// to wake it; only a collector that went to sleep after a quiet spell is woken.
    fn start_cycle(&mut self, ptr_used: usize, roots_words: usize, merge: Option<MergeInput>) {
        let input = self.cycle_input(ptr_used, roots_words, merge);
        // SAFETY: state is IDLE (checked by the callers, and only we move it away from IDLE),
        // so the collector is not reading `cycle`.
        unsafe { *self.shared.cycle.get() = input };
        self.writer ^= 1;
        self.writer_len = 0;
        self.shared.state.store(WORKING, Ordering::Release);
        // Latches the event; a system call only if the collector sleeps in `wait`.
        self.wake.signal();
    }

    /// Put up to `max` blocks the free thread has zeroed back on the free lists.
    fn take_back_freed(&mut self, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let Some((start, size)) = self.returned.pop() else { break };
            if self.ptr_pool.contains(start) {
                self.ptr_pool.free(start, size);
            } else {
                self.atomic_pool.free(start, size);
            }
            n += 1;
        }
        if n > 0 {
            SharedStats::add(&self.shared.stats.blocks_returned, n as u64);
        }
        n
    }

    fn publish_stats(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.shared.stats;
        s.allocations.store(self.allocations, Relaxed);
        s.alloc_failures.store(self.alloc_failures, Relaxed);
        s.pointer_heap_used.store(self.ptr_pool.used_bytes() as u64, Relaxed);
        s.pointer_live_bytes.store(self.ptr_pool.live_bytes() as u64, Relaxed);
        s.atomic_heap_used.store(self.atomic_pool.used_bytes() as u64, Relaxed);
        s.atomic_live_bytes.store(self.atomic_pool.live_bytes() as u64, Relaxed);
        s.warnings.store(self.warnings as u64, Relaxed);
    }

    /// Statistics as of the last `between_blocks` call.
    pub fn stats(&self) -> GcStats {
        self.shared.read_stats()
    }

    /// A handle other threads can read statistics through.
    pub fn monitor(&self) -> Monitor {
        Monitor { shared: self.shared.clone() }
    }

    /// True while a mark-and-sweep cycle is running.
    pub fn is_collecting(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) == WORKING
    }

    /// Pointer heap size / p(M): the time a full snapshot is padded to.
    pub fn full_snapshot_duration(&self) -> Duration {
        self.shared.full_duration
    }

    /// Address range of the pointer heap (for diagnostics and tests).
    pub fn pointer_heap_range(&self) -> std::ops::Range<usize> {
        self.shared.ptr_heap.addr()..self.shared.ptr_heap.addr() + self.shared.ptr_heap.len()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.wake.signal();
        self.free_handle.unpark();
        if let Some(t) = self.collector_thread.take() {
            let _ = t.join();
        }
        if let Some(t) = self.free_thread.take() {
            let _ = t.join();
        }
    }
}

/// p(M): best of several copies of the real heap into the real snapshot (which also warms both).
fn calibrate(heap: &Region, snapshot: &Region) -> f64 {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut n = 0;
    while n < 3 || (n < 50 && start.elapsed() < Duration::from_millis(30)) {
        let t = Instant::now();
        // SAFETY: both regions are `len` bytes, distinct, and no thread uses them yet.
        unsafe { snapshot::copy_streaming(heap.base(), snapshot.base(), heap.len()) };
        snapshot::store_fence();
        best = best.min(t.elapsed());
        n += 1;
    }
    heap.len() as f64 / best.max(Duration::from_nanos(100)).as_secs_f64()
}

/// How often an idle collector thread looks for work, and for how many looks before it waits
/// on its event until signalled. While something allocates, cycles start every few blocks and
/// the collector never waits on the event, so the audio thread's signal only latches it (no
/// system call); a server that does not use the heap has its collector asleep (woken for the
/// once-a-period cycle).
const POLL_INTERVAL: Duration = Duration::from_micros(500);
const IDLE_POLLS: u32 = 40;

fn collector_main(
    shared: Arc<Shared>,
    mut woken: Waiter,
    mut to_free: Producer<(usize, usize)>,
    mut spare_tx: Producer<usize>,
    free_thread: Thread,
    expected: usize,
) {
    let mut tracer = Tracer::new(expected);
    let mut dead: Vec<(usize, usize)> = Vec::with_capacity(1024);
    loop {
        let mut polls = 0;
        while shared.state.load(Ordering::Acquire) != WORKING {
            if shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            if polls < IDLE_POLLS {
                // Asleep in a timer, not on the event: a signal meanwhile only latches.
                polls += 1;
                thread::sleep(POLL_INTERVAL);
                woken.try_wait();
            } else {
                woken.wait();
            }
        }
        // SAFETY: state is WORKING (Acquire above), so the audio thread finished writing
        // `cycle` and will not touch it until we store IDLE.
        let input = unsafe { *shared.cycle.get() };
        if let (Some(m), Some(r)) = (input.merge, &shared.replica) {
            let tm = Instant::now();
            // SAFETY: while WORKING the collector owns the persistent snapshot and this half of
            // the replication state; the audio thread writes only the other half.
            unsafe { merge(&shared, r, m) };
            shared.stats.merge.record(tm.elapsed());
            // SAFETY: as for the merge: this half's chain table is ours while WORKING.
            unsafe { recycle_segments(&shared, r, m, &mut spare_tx) };
        }
        let t0 = Instant::now();
        let recs = shared.records[input.records].base() as *const Record;
        let (abase, asize) = (shared.atomic_heap.addr(), shared.atomic_heap.len());
        for k in 0..input.nrecords {
            // SAFETY: k < nrecords <= capacity of this stack, which the audio thread does not
            // write while we are WORKING on it.
            let r = unsafe { recs.add(k).read() };
            let atomic = r.start.wrapping_sub(abase) < asize;
            tracer.add_block(r.start, r.size, atomic);
        }
        // SAFETY: the roots snapshot holds `roots_words` words and the snapshot holds the
        // used part of the heap; both are ours while WORKING.
        unsafe { tracer.mark(shared.roots_snapshot.base() as *const usize, input.roots_words, &input.view) };
        let t1 = Instant::now();
        shared.stats.mark.record(t1 - t0);
        dead.clear();
        let freed = tracer.sweep(|start, size| dead.push((start, size)));
        if input.merge.is_some() {
            // The persistent snapshot outlives this cycle: a dead block's words there must read
            // as fill, like the heap words the free thread is about to fill, so that the block
            // is consistent when it is allocated again (and stale pointers in it die with it).
            let (pbase, plen) = (shared.ptr_heap.addr(), shared.ptr_heap.len());
            for &(start, size) in &dead {
                let off = start.wrapping_sub(pbase);
                if off < plen {
                    // SAFETY: the block lies inside the pointer heap, so off..off+size lies
                    // inside the snapshot, which the collector owns while WORKING.
                    unsafe { std::slice::from_raw_parts_mut((shared.snapshot.addr() + off) as *mut usize, size / WORD) }
                        .fill(shared.fill);
                }
            }
        }
        shared.stats.sweep.record(t1.elapsed());
        for &block in &dead {
            let mut b = block;
            while let Err(v) = to_free.push(b) {
                if shared.shutdown.load(Ordering::Acquire) {
                    return;
                }
                free_thread.unpark();
                thread::sleep(Duration::from_micros(200));
                b = v;
            }
        }
        free_thread.unpark();
        let s = &shared.stats;
        SharedStats::add(&s.blocks_freed, freed as u64);
        s.live_blocks.store(tracer.live_blocks() as u64, Ordering::Relaxed);
        s.interior_pointers.store(tracer.interior_found, Ordering::Relaxed);
        s.false_pointers.store(tracer.false_found, Ordering::Relaxed);
        SharedStats::add(&s.cycles, 1);
        shared.state.store(IDLE, Ordering::Release);
    }
}

/// Bring the persistent snapshot up to date with one half of the replication state
/// (the thesis's unloading of `comp_block_gc`), leaving that half all `UNUSED` with an empty stack.
///
/// # Safety
/// The caller must own the snapshot and `m.half` of `r` (the collector while WORKING).
unsafe fn merge(shared: &Shared, r: &Replica, m: MergeInput) {
    let comp = r.comp[m.half].base() as *mut usize;
    let snap = shared.snapshot.base() as *mut usize;
    let take = |w: usize| {
        // SAFETY: w < heap words; the complementary block and the snapshot are both
        // heap-sized and owned by the caller.
        unsafe {
            let v = comp.add(w).read();
            if v != UNUSED {
                snap.add(w).write(v);
                comp.add(w).write(UNUSED);
            }
        }
    };
    if m.overflowed {
        for w in 0..shared.ptr_heap.len() / WORD {
            take(w);
        }
        return;
    }
    let chain = r.chains[m.half].base() as *const usize;
    for s in 0..=m.chained {
        let (log, entries) = match s {
            0 => (r.logs[m.half].base() as *const usize, if m.chained == 0 { m.logged } else { r.log_cap }),
            // SAFETY: s - 1 < chained <= the chain table's length; the barrier wrote it.
            _ => (unsafe { chain.add(s - 1).read() } as *const usize, if s == m.chained { m.logged } else { r.log_cap }),
        };
        for k in 0..entries {
            // SAFETY: k < entries <= the segment's capacity; the barrier stored only
            // word-aligned offsets below the heap length.
            take(unsafe { log.add(k).read() } / WORD);
        }
    }
}

/// Give the spare segments one half's stack used back to the barrier, and, if that stack ran
/// out of them, reserve more (here, off the audio thread) up to the configured limit.
///
/// # Safety
/// The caller must own `m.half` of `r` (the collector while WORKING).
unsafe fn recycle_segments(shared: &Shared, r: &Replica, m: MergeInput, spare_tx: &mut Producer<usize>) {
    let chain = r.chains[m.half].base() as *const usize;
    for s in 0..m.chained {
        // SAFETY: s < chained <= the chain table's length; the barrier wrote it.
        let seg = unsafe { chain.add(s).read() };
        // The ring holds every segment there can be, so this cannot fail.
        let _ = spare_tx.push(seg);
    }
    if !m.overflowed {
        return;
    }
    let mut spares = r.spares.lock().unwrap_or_else(|e| e.into_inner());
    // Double the reserve (at least one more), within the limit.
    let want = spares.len().max(1).min(r.max_spares - spares.len());
    for _ in 0..want {
        let Ok(seg) = Region::new(r.log_cap * WORD, true, "barrier log segment") else { break };
        if spare_tx.push(seg.addr()).is_err() {
            break;
        }
        spares.push(seg);
    }
    shared.stats.barrier_spare_segments.store(spares.len() as u64, Ordering::Relaxed);
}

fn free_main(shared: Arc<Shared>, mut from_collector: Consumer<(usize, usize)>, mut to_audio: Producer<(usize, usize)>) {
    loop {
        let Some((start, size)) = from_collector.pop() else {
            if shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            thread::park_timeout(Duration::from_millis(50));
            continue;
        };
        let t = Instant::now();
        let words = size / WORD;
        let in_ptr_heap = start.wrapping_sub(shared.ptr_heap.addr()) < shared.ptr_heap.len();
        if in_ptr_heap {
            // Zero (or poison) so stale pointers in reused memory cannot keep blocks alive.
            let mut k = 0;
            while k < words {
                let step = loop {
                    if let Some(held) = shared.ilock.try_step() {
                        break held;
                    }
                    if shared.shutdown.load(Ordering::Acquire) {
                        return;
                    }
                    thread::yield_now();
                };
                let end = (k + ZERO_STEP_WORDS).min(words);
                for w in k..end {
                    // SAFETY: the block is dead (unreachable at the snapshot, so the mutator
                    // cannot reach it) and not yet handed back, so only this thread writes it;
                    // the snapshot copy, the only reader, is excluded by the lock step.
                    unsafe { (start as *mut usize).add(w).write(shared.fill) };
                }
                drop(step);
                k = end;
            }
        } else if shared.poison_atomic {
            for w in 0..words {
                // SAFETY: dead atomic block owned by this thread until handed back; the atomic
                // heap is never copied, so there is no reader.
                unsafe { (start as *mut usize).add(w).write(shared.fill) };
            }
        }
        SharedStats::add(&shared.stats.free_busy_ns, t.elapsed().as_nanos() as u64);
        let mut b = (start, size);
        while let Err(v) = to_audio.push(b) {
            if shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            thread::sleep(Duration::from_micros(500));
            b = v;
        }
    }
}
