//! Parallel groups on several threads.
//!
//! The children of a `/p_new` group may run in any order, so the engine
//! hands them to the DSP queue executor (`magnetar-dsp`), which runs them on
//! its pinned threads. Each thread computes into a private copy of the
//! world's buses; every bus write a child makes is logged and kept in that
//! child's merge slot, and after the group the writes are replayed onto the
//! real buses in child order. The buses then receive exactly the writes, in
//! exactly the order, a sequential run would have made: the output is the
//! same bit for bit (Supernova does not promise this; magnetar does).
//!
//! Only groups whose children are all running synths of parallel-safe defs
//! (see `GraphDef::parallel`: bus reads through `In`/`InFeedback` only, no
//! buffers, no randomness, one `Out` or `ReplaceOut`, unmapped controls)
//! take this path, and only in blocks where no child writes a bus that a
//! child reads (`BusUse`): readers then get the buses as the group found
//! them, copied into each private world. Any other parallel group runs its
//! children in order, as scsynth does.

use crate::synth::Synth;
use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
use magnetar_dsp::merge::MergeBuffers;
use magnetar_dsp::queue::{FlatTree, ItemId, Plan};
use magnetar_ugens::World;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most children a parallel group may have to run in parallel.
pub const MAX_PARALLEL_CHILDREN: usize = 1024;
/// Queue items per thread a large group is cut into: enough for the
/// threads to balance uneven children, few enough to keep hand-over cheap.
const ITEMS_PER_THREAD: usize = 16;
/// Bus writes one child may make per block (channels of its one writer).
const MAX_WRITES_PER_CHILD: usize = 64;

const CONTROL_BIT: u32 = 1 << 31;
const REPLACE_BIT: u32 = 1 << 30;

/// Bus ranges the children of one parallel group read and write in a
/// block, worked out before it from their controls. The group may run on
/// several threads only if no child writes a bus that any child reads:
/// then every reader sees the bus as it was before the group, as in a
/// sequential run, and no order among siblings matters (which is why no
/// per-bus locks are needed: writes go to private buses and are replayed in
/// child order afterwards). Storage is reserved up front.
pub struct BusUse {
    /// (audio, first bus, channels) of every read.
    reads: Vec<(bool, u32, u32)>,
    read_audio: Vec<u64>,
    read_control: Vec<u64>,
    written_audio: Vec<u64>,
    written_control: Vec<u64>,
    /// Bus counts of the world (the sets are rounded up to whole words).
    audio_buses: usize,
    control_buses: usize,
    /// A read or a write whose bus could not be told in advance.
    read_any: bool,
    write_any: bool,
    wrote: bool,
}

/// Most bus reads a parallel group's children may make in one block.
const MAX_GROUP_READS: usize = 4 * MAX_PARALLEL_CHILDREN;

impl BusUse {
    pub fn new(audio_buses: usize, control_buses: usize) -> BusUse {
        BusUse {
            reads: Vec::with_capacity(MAX_GROUP_READS),
            read_audio: vec![0; audio_buses.div_ceil(64)],
            read_control: vec![0; control_buses.div_ceil(64)],
            written_audio: vec![0; audio_buses.div_ceil(64)],
            written_control: vec![0; control_buses.div_ceil(64)],
            audio_buses,
            control_buses,
            read_any: false,
            write_any: false,
            wrote: false,
        }
    }

    pub fn clear(&mut self) {
        self.reads.clear();
        for set in [&mut self.read_audio, &mut self.read_control, &mut self.written_audio, &mut self.written_control] {
            set.fill(0);
        }
        self.read_any = false;
        self.write_any = false;
        self.wrote = false;
    }

    /// The range `[first, first + channels)` of a bus number, if it is a
    /// valid one (a unit given an invalid number may keep using its last).
    fn range(bus: f32, channels: u32, buses: usize) -> Option<(u32, u32)> {
        let first = bus as i64;
        (first >= 0 && first as usize + channels as usize <= buses).then_some((first as u32, channels))
    }

    fn mark(set: &mut [u64], (first, channels): (u32, u32)) {
        for b in first..first + channels {
            set[b as usize / 64] |= 1 << (b % 64);
        }
    }

    /// Records a read of `channels` buses from number `bus` (None: unknown).
    pub fn read(&mut self, audio: bool, bus: Option<f32>, channels: u32) {
        let buses = if audio { self.audio_buses } else { self.control_buses };
        match bus.and_then(|b| Self::range(b, channels, buses)) {
            Some(r) if self.reads.len() < self.reads.capacity() => {
                Self::mark(if audio { &mut self.read_audio } else { &mut self.read_control }, r);
                self.reads.push((audio, r.0, r.1));
            }
            _ => self.read_any = true,
        }
    }

    /// Records a write of `channels` buses from number `bus` (None: unknown).
    pub fn write(&mut self, audio: bool, bus: Option<f32>, channels: u32) {
        let buses = if audio { self.audio_buses } else { self.control_buses };
        self.wrote = true;
        match bus.and_then(|b| Self::range(b, channels, buses)) {
            Some(r) => Self::mark(if audio { &mut self.written_audio } else { &mut self.written_control }, r),
            None => self.write_any = true,
        }
    }

    /// Whether no child writes what a child reads.
    pub fn independent(&self) -> bool {
        let any_read = self.read_any || !self.reads.is_empty();
        if (self.read_any && self.wrote) || (self.write_any && any_read) {
            return false;
        }
        let disjoint = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x & y == 0);
        disjoint(&self.read_audio, &self.written_audio) && disjoint(&self.read_control, &self.written_control)
    }
}

/// Compiled queues kept for reuse: a parallel group's queue depends only
/// on its number of children, so a group whose children did not change
/// reuses its queue; a few sizes are kept for consecutive groups.
const CACHED_PLANS: usize = 4;

pub struct Parallel {
    executor: Executor,
    flat: FlatTree,
    /// (children, queue) pairs, the most recently used first.
    plans: Vec<(usize, Plan)>,
    /// One private world (buses only matter) per thread.
    worlds: Vec<UnsafeCell<World>>,
    merge: MergeBuffers,
    jobs: Vec<*mut Synth>,
    lost: AtomicBool,
    /// Groups run on several threads so far.
    pub groups_run: u64,
    /// Queues compiled so far (a group whose children did not change since
    /// its last block reuses its queue).
    pub plans_compiled: u64,
}

// SAFETY: the raw synth pointers in `jobs` are only used during one
// `run_group` call, while the engine that owns the synths is borrowed
// mutably; each private world is only touched by the thread whose index it
// has (see `Job::run`).
unsafe impl Send for Parallel {}

impl Parallel {
    /// Starts `threads` threads (the caller included) and sizes private
    /// worlds like `like`. Real-time helpers get SCHED_FIFO just below the
    /// clock driver's audio thread, so a spinning helper never keeps it from
    /// its core; non-real-time helpers stay ordinary threads (a real-time
    /// spinner could starve the rendering thread on a busy machine).
    pub fn new(threads: usize, like: &World, realtime: bool) -> Result<Parallel, String> {
        let config = ExecutorConfig {
            threads,
            fifo_priority: realtime.then_some(40),
            pin: realtime,
            ..Default::default()
        };
        let executor = Executor::new(config).map_err(|e| e.to_string())?;
        let bs = like.block_size;
        let worlds = (0..threads)
            .map(|_| {
                let mut w = World::new(
                    like.sample_rate,
                    bs,
                    like.num_audio_buses(),
                    like.num_control_buses(),
                    0,
                    like.num_input_channels,
                    like.num_output_channels,
                    0,
                );
                w.log_touches = true;
                w.touch_log = Vec::with_capacity(MAX_WRITES_PER_CHILD);
                UnsafeCell::new(w)
            })
            .collect();
        Ok(Parallel {
            executor,
            flat: FlatTree::with_capacity(MAX_PARALLEL_CHILDREN + 4, 0),
            plans: (0..CACHED_PLANS)
                .map(|_| (usize::MAX, Plan::with_capacity(MAX_PARALLEL_CHILDREN + 4, MAX_PARALLEL_CHILDREN * 2)))
                .collect(),
            worlds,
            merge: MergeBuffers::new(MAX_PARALLEL_CHILDREN, MAX_WRITES_PER_CHILD, MAX_WRITES_PER_CHILD * bs),
            jobs: Vec::with_capacity(MAX_PARALLEL_CHILDREN),
            lost: AtomicBool::new(false),
            groups_run: 0,
            plans_compiled: 0,
        })
    }

    pub fn threads(&self) -> usize {
        self.executor.threads()
    }

    /// Whether private worlds still match the world (rates change once,
    /// when the driver decides).
    pub fn matches(&self, world: &World) -> bool {
        // SAFETY: no block is running; the caller holds `&self`.
        let w = unsafe { &*self.worlds[0].get() };
        w.sample_rate == world.sample_rate && w.block_size == world.block_size
    }

    /// Runs the synths (children of one parallel group, in child order) on
    /// the executor's threads, then replays their bus writes in order.
    /// `scratch` holds one audio scratch area of `scratch_len` samples per
    /// thread. Returns false if a child's writes did not fit the merge
    /// buffers (the caller then treats the output of this block as lost).
    ///
    /// # Safety
    /// The pointers must be to distinct, constructed, running synths that
    /// nothing else touches during the call, and `scratch` must hold
    /// `threads() * scratch_len` samples.
    pub unsafe fn run_group(
        &mut self,
        synths: &[*mut Synth],
        world: &mut World,
        scratch: *mut f32,
        scratch_len: usize,
        buses: &BusUse,
    ) -> bool {
        self.jobs.clear();
        self.jobs.extend_from_slice(synths);
        // Many small children are handed out in runs: a queue item per
        // child would cost the executor about as much as a small synth.
        let per_item = (synths.len() / (self.executor.threads() * ITEMS_PER_THREAD)).max(1);
        let n = synths.len().div_ceil(per_item);
        match self.plans.iter().position(|(k, _)| *k == n) {
            // Most recently used first: a rotation moves no plan's storage.
            Some(at) => self.plans[..=at].rotate_right(1),
            None => {
                self.plans.rotate_right(1);
                let (k, plan) = &mut self.plans[0];
                *k = usize::MAX;
                self.flat.clear();
                self.flat.begin_par();
                for i in 0..n {
                    self.flat.item(ItemId(i as u32));
                }
                if self.flat.end().is_err() || plan.compile_flat(&self.flat).is_err() {
                    return false;
                }
                *k = n;
                self.plans_compiled += 1;
            }
        }
        let bs = world.block_size;
        for cell in &self.worlds {
            // SAFETY: no block is running yet; each world is only ours here.
            let w = unsafe { &mut *cell.get() };
            w.buf_counter = world.buf_counter;
            w.full_rate = world.full_rate;
            w.buf_rate = world.buf_rate;
            // Readers see the buses as the group found them (no child
            // writes them: `BusUse::independent`).
            for &(audio, first, channels) in &buses.reads {
                let (first, end) = (first as usize, (first + channels) as usize);
                if audio {
                    w.audio_bus[first * bs..end * bs].copy_from_slice(&world.audio_bus[first * bs..end * bs]);
                    w.audio_touched[first..end].copy_from_slice(&world.audio_touched[first..end]);
                } else {
                    w.control_bus[first..end].copy_from_slice(&world.control_bus[first..end]);
                    w.control_touched[first..end].copy_from_slice(&world.control_touched[first..end]);
                }
            }
        }
        self.lost.store(false, Ordering::Relaxed);
        let job = Job {
            synths: &self.jobs,
            per_item,
            worlds: &self.worlds,
            merge: &self.merge,
            scratch,
            scratch_len,
            lost: &self.lost,
        };
        self.executor.run_block(&self.plans[0].1, &job);
        self.groups_run += 1;

        let counter = world.buf_counter;
        let replayed = self.merge.replay(0..synths.len(), |target, samples| {
            let bus = (target & !(CONTROL_BIT | REPLACE_BIT)) as usize;
            let replace = target & REPLACE_BIT != 0;
            if target & CONTROL_BIT != 0 {
                if bus < world.control_bus.len() {
                    if !replace && world.control_touched[bus] == counter {
                        world.control_bus[bus] += samples[0];
                    } else {
                        world.control_bus[bus] = samples[0];
                        world.control_touched[bus] = counter;
                    }
                }
            } else if let Some(out) = world.audio_bus.get_mut(bus * bs..(bus + 1) * bs) {
                if !replace && world.audio_touched[bus] == counter {
                    for (o, x) in out.iter_mut().zip(samples) {
                        *o += *x;
                    }
                } else {
                    out.copy_from_slice(&samples[..bs]);
                    world.audio_touched[bus] = counter;
                }
            }
        });
        replayed.is_ok() && !self.lost.load(Ordering::Relaxed)
    }
}

struct Job<'a> {
    synths: &'a [*mut Synth],
    /// Queue item k runs children `k * per_item ..` (at most `per_item`).
    per_item: usize,
    worlds: &'a [UnsafeCell<World>],
    merge: &'a MergeBuffers,
    scratch: *mut f32,
    scratch_len: usize,
    lost: &'a AtomicBool,
}

// SAFETY: items are distinct synths and each worker index owns one private
// world and one scratch slice; the executor runs each item exactly once.
unsafe impl Sync for Job<'_> {}

impl Work for Job<'_> {
    fn run(&self, item: ItemId, worker: usize) {
        let first = item.0 as usize * self.per_item;
        for i in first..self.synths.len().min(first + self.per_item) {
            self.run_child(i, worker);
        }
    }
}

impl Job<'_> {
    fn run_child(&self, i: usize, worker: usize) {
        // SAFETY: item `i` is run once per block, by one thread, and no one
        // else touches synth `i` meanwhile (`run_group`'s contract).
        let synth = unsafe { &mut *self.synths[i] };
        // SAFETY: only the thread with index `worker` uses this world.
        let w = unsafe { &mut *self.worlds[worker].get() };
        // SAFETY: thread `worker`'s own slice of the scratch area.
        let scratch =
            unsafe { std::slice::from_raw_parts_mut(self.scratch.add(worker * self.scratch_len), self.scratch_len) };
        w.touch_log.clear();
        synth.calc(w, scratch);
        if w.touch_log.len() == w.touch_log.capacity() {
            self.lost.store(true, Ordering::Relaxed);
        }
        let bs = w.block_size;
        match self.merge.writer(i) {
            Ok(mut slot) => {
                for t in &w.touch_log {
                    let bus = t.bus as usize;
                    let mut target = t.bus;
                    if t.replace {
                        target |= REPLACE_BIT;
                    }
                    let written = if t.audio {
                        &w.audio_bus[bus * bs..(bus + 1) * bs]
                    } else {
                        target |= CONTROL_BIT;
                        &w.control_bus[bus..bus + 1]
                    };
                    if slot.add(target, written).is_err() {
                        self.lost.store(true, Ordering::Relaxed);
                    }
                }
            }
            Err(_) => self.lost.store(true, Ordering::Relaxed),
        }
        // The next child on this thread starts from untouched buses.
        for t in &w.touch_log {
            if t.audio {
                w.audio_touched[t.bus as usize] = -1;
            } else {
                w.control_touched[t.bus as usize] = -1;
            }
        }
    }
}
