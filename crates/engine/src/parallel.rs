//! Parallel groups on several threads.
//!
//! The children of a `/p_new` group may run in any order, so the engine
//! hands them to the DSP queue executor (`magnetar-dsp`), which runs them on
//! its pinned threads. A child is a synth, or a group whose synths (a voice
//! and its effects, say) one thread runs in order. Each thread computes into
//! a private copy of the world's buses; every bus write a child makes is
//! logged and kept in that child's merge slot, and after the group the
//! writes are replayed onto the real buses in child order. The buses then
//! receive exactly the writes, in exactly the order, a sequential run would
//! have made: the output is the same bit for bit (Supernova does not promise
//! this; magnetar does).
//!
//! Only groups whose synths are all running, of parallel-safe defs (see
//! `GraphDef::parallel`: bus reads through `In`/`InFeedback` only, buffers
//! only read, no randomness, one `Out` or `ReplaceOut`, unmapped controls)
//! take this path, and only in blocks where no child writes a bus that
//! another child reads (`BusUse`): readers then get the buses as the group
//! found them, copied into each private world, plus what their own child
//! wrote. Any other parallel group runs its children in order, as scsynth
//! does.

use crate::graph_def::BusSource;
use crate::node_tree::{CalcState, NodeIdx, NodeTree};
use crate::synth::Synth;
use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
use magnetar_dsp::merge::MergeBuffers;
use magnetar_dsp::queue::{FlatTree, ItemId, Plan};
use magnetar_ugens::World;
use magnetar_rt::histogram::Histogram;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

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
/// several threads only if no child writes a bus that another child reads:
/// then every reader sees the bus as it was before the group plus what its
/// own child wrote to it, as in a sequential run, and no order among
/// siblings matters (which is why no per-bus locks are needed: writes go to
/// private buses and are replayed in child order afterwards). Storage is
/// reserved up front.
pub struct BusUse {
    /// (audio, first bus, channels) of every read, child by child.
    reads: Vec<(bool, u32, u32)>,
    /// Where each child's reads start in `reads`.
    child_reads: Vec<u32>,
    written_audio: Vec<u64>,
    written_control: Vec<u64>,
    /// Buses written by more than one child.
    shared_audio: Vec<u64>,
    shared_control: Vec<u64>,
    /// The child that wrote a bus (meaningful where `written_*` is set).
    writer_audio: Vec<u32>,
    writer_control: Vec<u32>,
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

fn bit(set: &[u64], b: u32) -> bool {
    set[b as usize / 64] & (1 << (b % 64)) != 0
}

impl BusUse {
    pub fn new(audio_buses: usize, control_buses: usize) -> BusUse {
        BusUse {
            reads: Vec::with_capacity(MAX_GROUP_READS),
            child_reads: Vec::with_capacity(MAX_PARALLEL_CHILDREN + 1),
            written_audio: vec![0; audio_buses.div_ceil(64)],
            written_control: vec![0; control_buses.div_ceil(64)],
            shared_audio: vec![0; audio_buses.div_ceil(64)],
            shared_control: vec![0; control_buses.div_ceil(64)],
            writer_audio: vec![0; audio_buses],
            writer_control: vec![0; control_buses],
            audio_buses,
            control_buses,
            read_any: false,
            write_any: false,
            wrote: false,
        }
    }

    pub fn clear(&mut self) {
        self.reads.clear();
        self.child_reads.clear();
        for set in [&mut self.written_audio, &mut self.written_control, &mut self.shared_audio, &mut self.shared_control]
        {
            set.fill(0);
        }
        self.read_any = false;
        self.write_any = false;
        self.wrote = false;
    }

    /// Starts the next child: reads and writes from now on are its own.
    /// False when no more children fit.
    pub fn begin_child(&mut self) -> bool {
        if self.child_reads.len() == MAX_PARALLEL_CHILDREN {
            return false;
        }
        self.child_reads.push(self.reads.len() as u32);
        true
    }

    /// Forgets the child begun last, which turned out to have nothing to run.
    pub fn drop_child(&mut self) {
        if let Some(from) = self.child_reads.pop() {
            self.reads.truncate(from as usize);
        }
    }

    fn child(&self) -> u32 {
        self.child_reads.len().saturating_sub(1) as u32
    }

    /// The reads of child `i`.
    pub fn child_reads(&self, i: usize) -> &[(bool, u32, u32)] {
        let from = self.child_reads[i] as usize;
        let to = self.child_reads.get(i + 1).map_or(self.reads.len(), |&t| t as usize);
        &self.reads[from..to]
    }

    /// The range `[first, first + channels)` of a bus number, if it is a
    /// valid one (a unit given an invalid number may keep using its last).
    fn range(bus: f32, channels: u32, buses: usize) -> Option<(u32, u32)> {
        let first = bus as i64;
        (first >= 0 && first as usize + channels as usize <= buses).then_some((first as u32, channels))
    }

    /// Records a read of `channels` buses from number `bus` (None: unknown).
    pub fn read(&mut self, audio: bool, bus: Option<f32>, channels: u32) {
        let buses = if audio { self.audio_buses } else { self.control_buses };
        match bus.and_then(|b| Self::range(b, channels, buses)) {
            Some((first, channels)) if self.reads.len() < self.reads.capacity() => {
                self.reads.push((audio, first, channels))
            }
            _ => self.read_any = true,
        }
    }

    /// Records a write of `channels` buses from number `bus` (None: unknown).
    pub fn write(&mut self, audio: bool, bus: Option<f32>, channels: u32) {
        let buses = if audio { self.audio_buses } else { self.control_buses };
        self.wrote = true;
        let child = self.child();
        let Some((first, channels)) = bus.and_then(|b| Self::range(b, channels, buses)) else {
            self.write_any = true;
            return;
        };
        let (written, shared, writer) = if audio {
            (&mut self.written_audio, &mut self.shared_audio, &mut self.writer_audio)
        } else {
            (&mut self.written_control, &mut self.shared_control, &mut self.writer_control)
        };
        for b in first..first + channels {
            let (word, mask) = (b as usize / 64, 1u64 << (b % 64));
            if written[word] & mask == 0 {
                written[word] |= mask;
                writer[b as usize] = child;
            } else if writer[b as usize] != child {
                shared[word] |= mask;
            }
        }
    }

    /// Whether no child writes what another child reads.
    pub fn independent(&self) -> bool {
        let any_read = self.read_any || !self.reads.is_empty();
        if (self.read_any && self.wrote) || (self.write_any && any_read) {
            return false;
        }
        (0..self.child_reads.len()).all(|j| {
            self.child_reads(j).iter().all(|&(audio, first, channels)| {
                let (written, shared, writer) = if audio {
                    (&self.written_audio, &self.shared_audio, &self.writer_audio)
                } else {
                    (&self.written_control, &self.shared_control, &self.writer_control)
                };
                (first..first + channels)
                    .all(|b| !bit(written, b) || (!bit(shared, b) && writer[b as usize] == j as u32))
            })
        })
    }
}

/// The synths of one parallel group's children, in the order a sequential
/// run computes them: a child that is a group contributes its whole
/// subtree, which one thread runs in order. Storage is reserved up front.
pub struct GroupJobs {
    pub synths: Vec<*mut Synth>,
    pub nodes: Vec<NodeIdx>,
    /// Each child's range in `synths`.
    pub children: Vec<(u32, u32)>,
}

/// Most synths the children of one parallel group may hold.
pub const MAX_PARALLEL_SYNTHS: usize = 4 * MAX_PARALLEL_CHILDREN;

// SAFETY: the pointers are only filled and used within one parallel group's
// block, on the thread that owns the engine; between blocks they are cleared.
unsafe impl Send for GroupJobs {}

impl Default for GroupJobs {
    fn default() -> GroupJobs {
        GroupJobs {
            synths: Vec::with_capacity(MAX_PARALLEL_SYNTHS),
            nodes: Vec::with_capacity(MAX_PARALLEL_SYNTHS),
            children: Vec::with_capacity(MAX_PARALLEL_CHILDREN),
        }
    }
}

impl GroupJobs {
    pub fn clear(&mut self) {
        self.synths.clear();
        self.nodes.clear();
        self.children.clear();
    }

    /// Adds child `idx` of a parallel group: true if it may run on a helper
    /// thread (every synth in it running, of a parallel-safe def, with
    /// unmapped controls and at most `scratch` samples of wires; no
    /// satellites; paused nodes and empty groups are left out, as they do
    /// nothing). Records the buses it reads and writes in `buses`.
    pub fn add_child(&mut self, tree: &mut NodeTree, idx: NodeIdx, scratch: usize, buses: &mut BusUse) -> bool {
        if !buses.begin_child() {
            return false;
        }
        let first = self.synths.len();
        let mut writes = 0;
        if !self.add_subtree(tree, idx, scratch, buses, &mut writes) {
            return false;
        }
        if self.synths.len() == first {
            buses.drop_child();
        } else {
            self.children.push((first as u32, self.synths.len() as u32));
        }
        // Every write is kept for the replay; each child has room for so many.
        writes <= MAX_WRITES_PER_CHILD
    }

    fn add_subtree(
        &mut self,
        tree: &mut NodeTree,
        idx: NodeIdx,
        scratch: usize,
        buses: &mut BusUse,
        writes: &mut usize,
    ) -> bool {
        match tree.node(idx).state {
            CalcState::Paused => return true,
            CalcState::Run if !tree.has_satellites(idx) => {}
            _ => return false,
        }
        if let Some(g) = tree.group(idx) {
            let mut child = g.head;
            while let Some(c) = child {
                child = tree.node(c).next;
                if !self.add_subtree(tree, c, scratch, buses, writes) {
                    return false;
                }
            }
            return true;
        }
        let Some(s) = tree.synth_mut(idx) else { return false };
        let qualifies = s.def.parallel
            && s.def.scratch_len <= scratch
            && s.ctx.control_map.iter().all(|m| *m == magnetar_ugens::ControlMap::Own)
            && self.synths.len() < self.synths.capacity();
        if !qualifies {
            return false;
        }
        // The buses it will read and write, from its controls as they are now.
        let value = |src: BusSource| match src {
            BusSource::Constant(v) => Some(v),
            BusSource::Control(i) => s.ctx.controls.get(i as usize).copied(),
            BusSource::Unknown => None,
        };
        for r in &s.def.bus_reads {
            buses.read(r.audio, value(r.bus), r.channels);
        }
        if let Some(w) = &s.def.bus_write {
            buses.write(w.audio, value(w.bus), w.channels);
            *writes += w.channels as usize;
        }
        self.synths.push(s as *mut Synth);
        self.nodes.push(idx);
        true
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
    privates: Vec<UnsafeCell<Private>>,
    merge: MergeBuffers,
    lost: AtomicBool,
    /// Groups run on several threads so far.
    pub groups_run: u64,
    /// Queues compiled so far (a group whose children did not change since
    /// its last block reuses its queue).
    pub plans_compiled: u64,
    /// How long each queue compilation took (ns).
    pub compile_times: Box<Histogram>,
}

/// What one thread computes into.
struct Private {
    world: World,
    /// Buses the child being run read and then wrote: (audio, bus).
    finals: Vec<(bool, u32)>,
}

// SAFETY: each private world is only touched by the thread whose index it
// has (see `Job::run`), and only during `run_group`.
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
        let privates = (0..threads)
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
                UnsafeCell::new(Private { world: w, finals: Vec::with_capacity(MAX_WRITES_PER_CHILD) })
            })
            .collect();
        Ok(Parallel {
            executor,
            flat: FlatTree::with_capacity(MAX_PARALLEL_CHILDREN + 4, 0),
            plans: (0..CACHED_PLANS)
                .map(|_| (usize::MAX, Plan::with_capacity(MAX_PARALLEL_CHILDREN + 4, MAX_PARALLEL_CHILDREN * 2)))
                .collect(),
            privates,
            merge: MergeBuffers::new(MAX_PARALLEL_CHILDREN, MAX_WRITES_PER_CHILD, MAX_WRITES_PER_CHILD * bs),
            lost: AtomicBool::new(false),
            groups_run: 0,
            plans_compiled: 0,
            compile_times: Box::new(Histogram::new()),
        })
    }

    pub fn threads(&self) -> usize {
        self.executor.threads()
    }

    /// Whether private worlds still match the world (rates change once,
    /// when the driver decides).
    pub fn matches(&self, world: &World) -> bool {
        // SAFETY: no block is running; the caller holds `&self`.
        let w = unsafe { &(*self.privates[0].get()).world };
        w.sample_rate == world.sample_rate && w.block_size == world.block_size
    }

    /// Runs the children of one parallel group (`jobs`, in child order) on
    /// the executor's threads, then replays their bus writes in order.
    /// `scratch` holds one audio scratch area of `scratch_len` samples per
    /// thread. Returns false if a child's writes did not fit the merge
    /// buffers (the caller then treats the output of this block as lost).
    ///
    /// # Safety
    /// The pointers must be to distinct, constructed, running synths that
    /// nothing else touches during the call, `buses` must describe their
    /// reads child by child, and `scratch` must hold `threads() *
    /// scratch_len` samples.
    pub unsafe fn run_group(
        &mut self,
        jobs: &GroupJobs,
        world: &mut World,
        scratch: *mut f32,
        scratch_len: usize,
        buses: &BusUse,
    ) -> bool {
        let children = jobs.children.len();
        // Many small children are handed out in runs: a queue item per
        // child would cost the executor about as much as a small synth.
        let per_item = (children / (self.executor.threads() * ITEMS_PER_THREAD)).max(1);
        let n = children.div_ceil(per_item);
        match self.plans.iter().position(|(k, _)| *k == n) {
            // Most recently used first: a rotation moves no plan's storage.
            Some(at) => self.plans[..=at].rotate_right(1),
            None => {
                let started = Instant::now();
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
                self.compile_times.record_duration(started.elapsed());
            }
        }
        let bs = world.block_size;
        for cell in &self.privates {
            // SAFETY: no block is running yet; each world is only ours here.
            let w = unsafe { &mut (*cell.get()).world };
            w.buf_counter = world.buf_counter;
            w.full_rate = world.full_rate;
            w.buf_rate = world.buf_rate;
            // Children may read buffers (never write them: `GraphDef::parallel`),
            // and no command runs until the group is done.
            // SAFETY: the loan ends below, before `world` is used again.
            unsafe { w.lend_buffers(world) };
            // Readers see the buses as the group found them (no other child
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
            jobs,
            buses,
            per_item,
            privates: &self.privates,
            merge: &self.merge,
            scratch,
            scratch_len,
            lost: &self.lost,
        };
        self.executor.run_block(&self.plans[0].1, &job);
        self.groups_run += 1;
        for cell in &self.privates {
            // SAFETY: the block is over; each world is only ours again.
            let w = unsafe { &mut (*cell.get()).world };
            w.end_loan();
            // The buses copied in count as untouched for the next group:
            // its children's writes must start from nothing.
            for &(audio, first, channels) in &buses.reads {
                let touched = if audio { &mut w.audio_touched } else { &mut w.control_touched };
                touched[first as usize..(first + channels) as usize].fill(-1);
            }
        }

        let counter = world.buf_counter;
        let replayed = self.merge.replay(0..children, |target, samples| {
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
    jobs: &'a GroupJobs,
    buses: &'a BusUse,
    /// Queue item k runs children `k * per_item ..` (at most `per_item`).
    per_item: usize,
    privates: &'a [UnsafeCell<Private>],
    merge: &'a MergeBuffers,
    scratch: *mut f32,
    scratch_len: usize,
    lost: &'a AtomicBool,
}

// SAFETY: items are distinct children (their synths distinct too) and each
// worker index owns one private world and one scratch slice; the executor
// runs each item exactly once.
unsafe impl Sync for Job<'_> {}

impl Work for Job<'_> {
    fn run(&self, item: ItemId, worker: usize) {
        let first = item.0 as usize * self.per_item;
        for i in first..self.jobs.children.len().min(first + self.per_item) {
            self.run_child(i, worker);
        }
    }
}

impl Job<'_> {
    /// Runs child `i`'s synths in order into thread `worker`'s private
    /// world and keeps its bus writes for the replay. A write to a bus the
    /// child does not read is kept as that synth's contribution (the bus
    /// starts untouched for each synth), so the replay repeats every write
    /// in order, bit for bit. A bus the child reads is its alone (no other
    /// child writes it); the child's writes to it build on the bus as the
    /// group found it, so its readers hear them, and the replay sets the
    /// bus to what the child left there.
    fn run_child(&self, i: usize, worker: usize) {
        // SAFETY: only the thread with index `worker` uses this world.
        let p = unsafe { &mut *self.privates[worker].get() };
        // SAFETY: thread `worker`'s own slice of the scratch area.
        let scratch =
            unsafe { std::slice::from_raw_parts_mut(self.scratch.add(worker * self.scratch_len), self.scratch_len) };
        let reads = self.buses.child_reads(i);
        let read = |audio: bool, bus: u32| reads.iter().any(|&(a, f, c)| a == audio && (f..f + c).contains(&bus));
        let (from, to) = self.jobs.children[i];
        let Ok(mut slot) = self.merge.writer(i) else {
            self.lost.store(true, Ordering::Relaxed);
            return;
        };
        let w = &mut p.world;
        let bs = w.block_size;
        p.finals.clear();
        let keep = |slot: &mut magnetar_dsp::merge::SlotWriter<'_>, w: &World, audio: bool, bus: u32, replace: bool| {
            let mut target = bus;
            if replace {
                target |= REPLACE_BIT;
            }
            let written = if audio {
                &w.audio_bus[bus as usize * bs..(bus as usize + 1) * bs]
            } else {
                target |= CONTROL_BIT;
                &w.control_bus[bus as usize..bus as usize + 1]
            };
            if slot.add(target, written).is_err() {
                self.lost.store(true, Ordering::Relaxed);
            }
        };
        for &sp in &self.jobs.synths[from as usize..to as usize] {
            // SAFETY: each synth belongs to one child, run once per block by
            // one thread; no one else touches it meanwhile (`run_group`).
            let synth = unsafe { &mut *sp };
            w.touch_log.clear();
            synth.calc(w, scratch);
            if w.touch_log.len() == w.touch_log.capacity() {
                self.lost.store(true, Ordering::Relaxed);
            }
            for t in &w.touch_log {
                if read(t.audio, t.bus) {
                    if !p.finals.contains(&(t.audio, t.bus)) {
                        p.finals.push((t.audio, t.bus));
                    }
                } else {
                    keep(&mut slot, w, t.audio, t.bus, t.replace);
                }
            }
            // The next synth on this thread starts from untouched buses.
            for t in w.touch_log.iter().filter(|t| !read(t.audio, t.bus)) {
                if t.audio {
                    w.audio_touched[t.bus as usize] = -1;
                } else {
                    w.control_touched[t.bus as usize] = -1;
                }
            }
        }
        for &(audio, bus) in &p.finals {
            keep(&mut slot, w, audio, bus, true);
        }
    }
}
