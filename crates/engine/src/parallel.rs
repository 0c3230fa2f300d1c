//! Parallel groups on several threads.
//!
//! The children of a `/p_new` group may run in any order, so the engine
//! hands the group's subtree to the DSP queue executor (`magnetar-dsp`),
//! which runs it on its pinned threads. The subtree is cut into work items
//! in the order a sequential run computes its synths: consecutive synths of
//! a sequential group form one item, the synth children of a parallel group
//! one item each (or a few per item when there are many), and the queue
//! compiler turns the groups into successor lists, so a voice's effects run
//! after it and a parallel group nested in a chain spreads too. A parallel
//! group of chains that may run place by place (`engine::chains`) is cut
//! into items of several chains each, which run place by place.
//!
//! Each thread computes into a private copy of the world's buses. Every bus
//! write is logged with what it wrote and kept in its item's merge slot;
//! after the group the writes are replayed onto the real buses in item
//! order, which is the sequential order, so the buses receive exactly the
//! writes a sequential run makes: the output is the same bit for bit
//! (Supernova does not promise this; magnetar does). Before an item runs,
//! the buses it reads are set to what a sequential run leaves for it: the
//! bus as the group found it, plus the logged writes of the earlier items
//! that wrote it, which the queue has already run. A bus that only one
//! item's synths read or write (a voice on its own bus) needs no order:
//! when no synth of the group reads it, the item's `Out` writes the real
//! bus in place (`magnetar_ugens::DirectBuses`), logging nothing; else the
//! item applies its logged writes to the real bus as soon as it ends. Only
//! buses shared by several items wait for the replay (their samples stay
//! where the log wrote them: the item's merge slot takes that storage). Of those,
//! the buses no synth of the group reads (voices summing into the outputs)
//! need only their item order: after each item, the thread that ran it
//! applies the finished items' writes to them in order as far as the first
//! unfinished one (one thread at a time), and an item that starts when all
//! earlier ones are applied writes them in place as it goes, logging
//! nothing, so the replay after the group has less left to do.
//!
//! Only groups whose synths are all running (paused ones do nothing, and
//! those that ended in an earlier block are deleted after the group at
//! their place in tree order, `GroupJobs::ended`), of parallel-safe defs (see
//! `GraphDef::parallel`: bus reads through `In`/`InFeedback`/`LagIn`/`InTrig` only, buffer
//! writes through `BufWr`, `RecordBuf` and the buffer delays only, no
//! randomness, one `Out` or `ReplaceOut`, done actions on the synth itself,
//! local buses, unmapped controls) take this path, when the buffers they
//! write can be told before the block. A synth that reads a bus an earlier
//! synth writes, where the groups would let them run alongside (children of
//! a parallel group), has its item wait for the writer's in the queue, and
//! the items that use a buffer one of them writes run one after another
//! (`GroupJobs::check`). Any other parallel group runs its children in
//! order, as scsynth does.

use crate::graph_def::BusSource;
use crate::node_tree::{CalcState, NodeIdx, NodeKind, NodeTree};
use crate::schedule::Walk;
use crate::synth::Synth;
use crossbeam_utils::CachePadded;
use magnetar_dsp::executor::{Executor, ExecutorConfig, ExecutorError, Work};
use magnetar_dsp::in_order::InOrder;
use magnetar_dsp::merge::MergeBuffers;
use magnetar_dsp::pages::{FixedVec, ZeroTable};
use magnetar_dsp::queue::{FlatTree, ItemId, Plan};
use magnetar_rt::histogram::Histogram;
use magnetar_ugens::world::ControlBuses;
use magnetar_ugens::{BusTouch, World, MAX_LANES};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

// Writes not applied at once are marked in a 64-bit mask (`Job::add_now`).
const _: () = assert!(MAX_WRITES_PER_ITEM <= 64);

/// Parallel groups whose jobs the engine keeps from one block to the next
/// (consecutive parallel groups each keep theirs).
pub const KEPT_GROUP_JOBS: usize = 4;
pub use crate::limits::{MAX_PARALLEL_ITEMS, MAX_PARALLEL_SYNTHS};
use crate::limits::{
    MAX_ACCESSES, MAX_BUFFER_WRITES, MAX_CHECKS, MAX_INITS, MAX_PARALLEL_GROUPS as MAX_GROUPS,
    MAX_PARALLEL_NESTING as MAX_NESTING, MAX_WRITES_PER_ITEM,
};
/// Work items per thread a parallel group's synth children are cut into:
/// enough for the threads to balance uneven children, few enough to keep
/// hand-over cheap (one item per small synth costs the executor about as
/// much as the synth).
const ITEMS_PER_THREAD: usize = 16;
/// Lanes the vector kernels compute at once (`fsin_x8`, `dsf_x8`; the
/// filter sections take four): a lane batch cut by an item boundary is
/// cut at a multiple of this.
const LANE_WIDTH: usize = 8;
/// Synths in an item of chains run place by place (`GroupJobs::chain_items`).
const MAX_CHAIN_ITEM: usize = 128;
/// Items per thread whose merge slots take the thread's log storage in
/// exchange for their own, rather than a copy of the samples kept for the
/// replay (`MergeBuffers::new`): twice what a group is cut into, so that
/// only items past those of two fused groups copy. Each such slot's storage
/// is an allocation of its own, which the start-up pays a page fault for.
const EXCHANGING_ITEMS_PER_THREAD: usize = 2 * ITEMS_PER_THREAD;

/// The def of a running synth that may run in a lane batch, to tell
/// whether consecutive children would share one (`schedule::run_ordered`).
fn lane_def(tree: &mut NodeTree, idx: NodeIdx) -> Option<*const crate::graph_def::GraphDef> {
    if tree.node(idx).state != CalcState::Run || tree.has_satellites(idx) {
        return None;
    }
    let s = tree.synth_to_run(idx)?;
    crate::schedule::may_share_lanes(s).then_some(std::sync::Arc::as_ptr(&s.def))
}

const CONTROL_BIT: u32 = 1 << 31;
const REPLACE_BIT: u32 = 1 << 30;

/// A logged write's target as the merge slots keep it: the bus number,
/// with `CONTROL_BIT` for a control bus and `REPLACE_BIT` for a write that
/// replaces what the bus holds.
fn target_of(t: &BusTouch) -> u32 {
    t.bus | if t.audio { 0 } else { CONTROL_BIT } | if t.replace { REPLACE_BIT } else { 0 }
}

/// What `target_of` packed: (control bus, bus number, replacing).
fn unpack(target: u32) -> (bool, usize, bool) {
    (target & CONTROL_BIT != 0, (target & !(CONTROL_BIT | REPLACE_BIT)) as usize, target & REPLACE_BIT != 0)
}

/// The samples a logged write wrote, in its world's log.
fn logged<'w>(w: &'w World, t: &BusTouch) -> &'w [f32] {
    let at = t.at as usize;
    &w.touch_data[at..at + if t.audio { w.block_size } else { 1 }]
}

/// A group of the subtree (the parallel group itself first): its parent,
/// its kind, and the index after its last synth in sequential order (its
/// synths start at or after those of the groups before it).
#[derive(Clone, Copy)]
struct Span {
    parent: u32,
    par: bool,
    end: u32,
}

/// One bus channel a synth reads or writes. Sorted, a bus's reads come
/// before its writes, each in synth order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Access {
    control: bool,
    bus: u32,
    write: bool,
    synth: u32,
}

/// A parallel group's work for one block: its synths in sequential order,
/// cut into work items, the queue they form, and what each item must
/// see before it runs. Worked out before the block from the tree and the
/// synths' controls; storage is reserved up front.
pub struct GroupJobs {
    synths: FixedVec<*mut Synth>,
    /// The synths' nodes, for their done actions after the group.
    pub nodes: FixedVec<NodeIdx>,
    /// The synths that ended in an earlier block, each with the number of
    /// synths in `nodes` before it: a sequential walk deletes them as it
    /// reaches them, the engine after the group at the same place in tree
    /// order (`Engine::settle_group`).
    pub ended: FixedVec<(u32, NodeIdx)>,
    synth_span: FixedVec<u32>,
    synth_item: FixedVec<u32>,
    /// Each synth's bus write: its first bus slot (`bus_slot`) and its
    /// channels ((0, 0) for none), for `update_in_place`.
    synth_write: FixedVec<(u32, u32)>,
    /// Where each synth's reads start in `reads` (and where they end).
    synth_reads: FixedVec<u32>,
    /// (audio, first bus, channels) of every read, synth by synth.
    reads: FixedVec<(bool, u32, u32)>,
    spans: FixedVec<Span>,
    /// Each work item's range of synths.
    items: FixedVec<(u32, u32)>,
    accesses: FixedVec<Access>,
    /// (reader item, earlier item that wrote what it reads), sorted.
    inits: FixedVec<(u32, u32)>,
    /// Where each item's pairs start in `inits` (and where they end).
    init_at: FixedVec<u32>,
    /// (earlier item, item) pairs that only an order in the queue keeps
    /// apart: of the `inits` pairs, those of synths that the groups would
    /// let run alongside (one writing what a later one reads), and items
    /// taking turns on a buffer one of them writes.
    orders: FixedVec<(u32, u32)>,
    /// A read or a write whose bus could not be told in advance.
    read_any: bool,
    write_any: bool,
    /// The item being filled: its first synth and the writes so far.
    open: Option<u32>,
    open_writes: usize,
    /// The queue's shape, for the compiler, and as a key to reuse plans.
    flat: FlatTree,
    audio_buses: usize,
    control_buses: usize,
    /// Per bus (audio buses, then control buses): the stamp of the block
    /// that last noted it, the one item whose synths read or write it
    /// (`SHARED` when several do), and whether any synth reads it. Stamps
    /// save clearing the table.
    owner: ZeroTable<(u32, u32, bool)>,
    stamp: u32,
    /// The bus slots `owner` noted this block, and whether one did not
    /// fit the list (then no bus is written in place).
    noted: FixedVec<u32>,
    noted_full: bool,
    /// Per bus slot: the item whose writes to it go straight to the
    /// world's bus (`NO_ITEM` for none): the only item that touches it,
    /// and no synth of the group reads it (`magnetar_ugens::DirectBuses`).
    /// Held complemented (`!item`, 0 for none) so that a new table is
    /// zeros, left untouched until a bus is given (`set_direct`).
    direct_owner: ZeroTable<u32>,
    /// The same for buffers whose samples synths read or write, and the
    /// buffers written.
    buffer_owner: ZeroTable<(u32, u32)>,
    buffers_written: FixedVec<u32>,
    /// (buffer, item) of every use of a buffer: the items that use a
    /// buffer one of them writes run one after another (`check`).
    buffer_uses: FixedVec<(u32, u32)>,
    /// A buffer read or written whose number could not be told in advance.
    buffer_any: bool,
    /// What the jobs were worked out for: the group, the tree's edit count,
    /// the scratch size and the thread count. While all four stay the same
    /// the jobs stay true, and the next block reuses them.
    prepared: Option<(NodeIdx, u64, usize, usize)>,
    /// How many consecutive sibling parallel groups, the key's group
    /// first, the jobs run as one queue (`prepare_fused`); 1 for one group.
    unit: usize,
    /// The direct children in their first block that `prepare_as_built`
    /// counts as running.
    first_block: FixedVec<NodeIdx>,
    /// Whether the jobs kept qualified when they were worked out.
    ok: bool,
    /// Synths per item in the parallel group itself (its synth children
    /// only: `update_in_place` appends new ones in items of so many).
    top_chunk: usize,
    /// Whether `prepare_as_built` worked these jobs out with its synths in
    /// their first block counted as running (`built_ahead`).
    as_built: bool,
    /// `update_in_place`'s lists: the synths of `nodes` that ended, the
    /// running synths after the last of them, the ended synths as the
    /// group holds them now, the items' new numbers, and the buses the
    /// ended synths wrote.
    gone: FixedVec<u32>,
    fresh: FixedVec<NodeIdx>,
    ended_next: FixedVec<(u32, NodeIdx)>,
    renumber: FixedVec<u32>,
    retouch: FixedVec<u32>,
    /// Times the jobs were worked out from the tree (not reused).
    pub worked_out: u64,
    /// Times the jobs were changed in place after an edit instead
    /// (`update_in_place`).
    pub in_place: u64,
    /// With `verify_in_place`: jobs worked out from the tree after each
    /// change in place, to compare with, and how many differed.
    verify: Option<Box<GroupJobs>>,
    pub mismatches: u64,
    /// Whether the group runs faster on the threads or on one (kept while
    /// the jobs belong to the same group).
    pub chooser: crate::spread::Chooser,
}

/// Notes in `GroupJobs::direct_owner` that bus slot `at` goes straight to
/// the world's bus from `item` (`IN_ORDER` from the item that runs in
/// order, `NO_ITEM` from none), complemented.
fn set_direct(direct_owner: &mut [u32], at: u32, item: u32) {
    if let Some(d) = direct_owner.get_mut(at as usize) {
        *d = !item;
    }
}

/// `GroupJobs::owner` as the items of a group see it while they run,
/// taken once for all of an item's writes (`GroupJobs::direct`).
#[derive(Clone, Copy)]
struct DirectTable<'a> {
    owner: &'a [(u32, u32, bool)],
    stamp: u32,
    audio_buses: usize,
}

impl DirectTable<'_> {
    /// For a bus noted this block, the item whose synths touch it
    /// (`SHARED` when several do) and whether any synth reads it. The item
    /// it names may write the bus itself, in any order with the other
    /// items (`GroupJobs::owns`); writes to a bus no synth reads may go to
    /// it in item order (`GroupJobs::unread`).
    #[inline]
    fn entry(self, control: bool, bus: usize) -> Option<(u32, bool)> {
        let &(stamp, item, read) = self.owner.get(bus + if control { self.audio_buses } else { 0 })?;
        (stamp == self.stamp).then_some((item, read))
    }
}

/// What a parallel group's walk does with a child (`GroupJobs::child_way`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ChildWay {
    /// Paused: does nothing this block.
    Skipped,
    /// Running without satellites: a synth for the items, or a group to walk.
    Runs,
    /// Ended in an earlier block, deleted after the group (`GroupJobs::ended`).
    Ended,
    /// Anything else keeps the group on one thread this block.
    Refused,
}

const SHARED: u32 = u32::MAX;
const NO_ITEM: u32 = u32::MAX;
/// `direct_owner` of a bus that several items write and no synth reads.
const IN_ORDER: u32 = magnetar_ugens::DirectBuses::IN_ORDER;

// SAFETY: the synth pointers are filled and used on the thread that owns
// the engine and the executor's threads it hands them to, while a parallel
// group runs; they are kept from one block to the next only while the tree
// is not edited (no node deleted or moved), else `prepare` refills them.
unsafe impl Send for GroupJobs {}

impl GroupJobs {
    pub fn new(audio_buses: usize, control_buses: usize, buffers: usize) -> GroupJobs {
        GroupJobs {
            synths: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            nodes: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            ended: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            synth_span: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            synth_item: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            synth_write: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            synth_reads: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS + 1),
            reads: FixedVec::with_capacity(MAX_ACCESSES),
            spans: FixedVec::with_capacity(MAX_GROUPS),
            items: FixedVec::with_capacity(MAX_PARALLEL_ITEMS),
            accesses: FixedVec::with_capacity(MAX_ACCESSES),
            inits: FixedVec::with_capacity(MAX_INITS),
            orders: FixedVec::with_capacity(MAX_INITS),
            init_at: FixedVec::with_capacity(MAX_PARALLEL_ITEMS + 1),
            read_any: false,
            write_any: false,
            open: None,
            open_writes: 0,
            flat: {
                let mut flat = FlatTree::with_capacity(MAX_PARALLEL_ITEMS + MAX_GROUPS, 0);
                flat.reserve_orders(MAX_INITS);
                flat
            },
            audio_buses,
            control_buses,
            owner: ZeroTable::new(audio_buses + control_buses),
            stamp: 1,
            noted: FixedVec::with_capacity(MAX_ACCESSES),
            noted_full: false,
            direct_owner: ZeroTable::new(audio_buses + control_buses),
            buffer_owner: ZeroTable::new(buffers),
            buffers_written: FixedVec::with_capacity(MAX_BUFFER_WRITES),
            buffer_uses: FixedVec::with_capacity(MAX_ACCESSES),
            buffer_any: false,
            prepared: None,
            unit: 1,
            first_block: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            ok: false,
            top_chunk: 1,
            as_built: false,
            gone: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            fresh: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            ended_next: FixedVec::with_capacity(MAX_PARALLEL_SYNTHS),
            renumber: FixedVec::with_capacity(MAX_PARALLEL_ITEMS),
            retouch: FixedVec::with_capacity(MAX_ACCESSES),
            worked_out: 0,
            in_place: 0,
            verify: None,
            mismatches: 0,
            chooser: crate::spread::Chooser::new(),
        }
    }

    /// Forgets the last group (its synth pointers included).
    pub fn clear(&mut self) {
        for v in [&mut self.synth_span, &mut self.synth_item, &mut self.synth_reads, &mut self.init_at] {
            v.clear();
        }
        self.synth_write.clear();
        self.ok = false;
        self.as_built = false;
        self.synths.clear();
        self.nodes.clear();
        self.ended.clear();
        self.reads.clear();
        self.spans.clear();
        self.items.clear();
        self.accesses.clear();
        self.inits.clear();
        self.orders.clear();
        self.read_any = false;
        self.write_any = false;
        self.open = None;
        self.flat.clear();
        self.prepared = None;
        self.unit = 1;
        self.buffers_written.clear();
        self.buffer_uses.clear();
        self.buffer_any = false;
        for &at in &self.noted {
            set_direct(&mut self.direct_owner, at, NO_ITEM);
        }
        self.noted.clear();
        self.noted_full = false;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.owner.fill((0, 0, false));
            self.buffer_owner.fill((0, 0));
            self.stamp = 1;
        }
    }

    /// Notes that item `item` reads or writes buffer `index`'s samples.
    fn note_buffer(&mut self, index: usize, item: u32, write: bool) -> bool {
        let Some(e) = self.buffer_owner.get_mut(index) else { return true };
        if e.0 != self.stamp {
            *e = (self.stamp, item);
        } else if e.1 != item {
            e.1 = SHARED;
        }
        if self.buffer_uses.len() == self.buffer_uses.capacity() {
            return false;
        }
        self.buffer_uses.push((index as u32, item));
        if write {
            if self.buffers_written.len() == self.buffers_written.capacity() {
                return false;
            }
            self.buffers_written.push(index as u32);
        }
        true
    }

    /// A bus's place in tables of every bus: audio buses, then control
    /// buses (`owner`, and the bus locks of `Parallel`).
    fn bus_slot(&self, control: bool, bus: usize) -> usize {
        bus + if control { self.audio_buses } else { 0 }
    }

    /// Notes that item `item` reads or writes a bus.
    fn note(&mut self, control: bool, bus: u32, item: u32, read: bool) {
        let at = self.bus_slot(control, bus as usize);
        if let Some(e) = self.owner.get_mut(at) {
            if e.0 != self.stamp {
                *e = (self.stamp, item, read);
                if self.noted.len() < self.noted.capacity() {
                    self.noted.push(at as u32);
                } else {
                    self.noted_full = true;
                }
            } else {
                if e.1 != item {
                    e.1 = SHARED;
                }
                e.2 |= read;
            }
        }
    }

    /// The table that tells which writes may go to the world's buses
    /// while the group runs (`DirectTable::entry`); none when the bus of a
    /// read or a write could not be told in advance.
    #[inline]
    fn direct(&self) -> Option<DirectTable<'_>> {
        (!self.write_any && !self.read_any).then_some(DirectTable {
            owner: &self.owner,
            stamp: self.stamp,
            audio_buses: self.audio_buses,
        })
    }

    /// One look at the table (`DirectTable::entry`), for a single write.
    #[inline]
    fn direct_entry(&self, control: bool, bus: usize) -> Option<(u32, bool)> {
        self.direct()?.entry(control, bus)
    }

    /// Whether item `item` is the only one whose synths touch this bus:
    /// no other item reads or writes it, so the item may write the world's
    /// bus itself while the group runs, in any order with the other items.
    fn owns(&self, item: u32, control: bool, bus: u32) -> bool {
        self.direct_entry(control, bus as usize).is_some_and(|(owner, _)| owner == item)
    }

    /// Whether no synth of the group reads the bus of logged write
    /// `target`: its writes may then go to the world's bus before the
    /// group ends, as long as they go in item order (`Job::commit_one`).
    fn unread(&self, target: u32) -> bool {
        let (control, bus, _) = unpack(target);
        self.direct_entry(control, bus).is_some_and(|(_, read)| !read)
    }

    /// The group these jobs were worked out for, if they are kept, and how
    /// many consecutive sibling groups from it they run as one queue (1
    /// for that group alone; more for `prepare_fused`).
    pub fn prepared_for(&self) -> Option<(NodeIdx, usize)> {
        self.prepared.map(|k| (k.0, self.unit))
    }

    /// Number of work items.
    pub fn items(&self) -> usize {
        self.items.len()
    }

    /// Works out parallel group `group`'s block: true if it may run on the
    /// executor's `threads` threads. Every synth in it must be running, of a
    /// parallel-safe def, with unmapped controls and at most `scratch`
    /// samples of wires, and without satellites (paused nodes and empty
    /// groups are left out, as they do nothing, and so are synths that
    /// ended in an earlier block and may be deleted after the group,
    /// `ended_quietly`); and no synth may read a bus that a synth it may
    /// run alongside writes.
    /// Jobs that qualified are kept for the next block, and reused if the
    /// tree has not been edited since (`NodeTree::edits`): walking a few
    /// hundred synths costs more than most of them take to run, the more
    /// so as their state sits in the cache of the core that ran them.
    // Kept out of line so that profiles (bench/prepare_bench.py) show its cost.
    #[inline(never)]
    pub fn prepare(&mut self, tree: &mut NodeTree, group: NodeIdx, scratch: usize, threads: usize) -> bool {
        let key = (group, tree.edits(), scratch, threads);
        if self.prepared == Some(key) && self.unit == 1 {
            return true;
        }
        if self.update_in_place(tree, group, scratch, threads) {
            self.in_place += 1;
            self.prepared = Some(key);
            self.as_built = false;
            if self.verify.is_some() {
                self.compare_with_full_walk(tree, group, scratch, threads);
            }
            return true;
        }
        self.clear();
        self.worked_out += 1;
        if !Self::children_may_run(tree, group) {
            return false;
        }
        self.synth_reads.push(0);
        let ok = self.walk(tree, group, 0, true, 1, scratch, threads) && self.check();
        if ok {
            self.prepared = Some(key);
            self.ok = true;
            self.fill_direct();
        }
        ok
    }

    /// After the engine built the synths that `prepare_as_built` counted as
    /// running: if every one of them runs now (none failed, ended or
    /// paused itself as it was built, and builds ahead change nothing
    /// else, `GraphDef::builds_ahead`), the jobs are true of the tree as
    /// it is, and the group's block reuses them.
    pub fn built_ahead(&mut self, tree: &NodeTree, group: NodeIdx) {
        let Some(key) = self.prepared.filter(|k| k.0 == group && self.as_built && self.ok) else { return };
        self.as_built = false;
        if self.first_block.iter().all(|&c| tree.is_live(c) && tree.node(c).state == CalcState::Run) {
            self.prepared = Some((group, tree.edits(), key.2, key.3));
        }
    }

    /// Changes jobs that qualified, worked out for `group` before some
    /// edits, to fit the tree as it is, when the edits were only new
    /// running synths after the group's last one and synths of it that
    /// ended: the ended ones leave their items (an item left empty goes),
    /// the new ones join the last item or new ones. Only for a group of
    /// synths alone (no nested group) that read no bus and write no
    /// buffer, whose jobs then hold nothing else that the edits change.
    /// False, having perhaps changed part of the jobs, when the edits were
    /// anything else (a synth's controls, a pause, a move, a synth freed
    /// or added elsewhere): `prepare` then works them out from the tree.
    fn update_in_place(&mut self, tree: &mut NodeTree, group: NodeIdx, scratch: usize, threads: usize) -> bool {
        let Some((g, since, s, t)) = self.prepared else { return false };
        if !(self.ok && g == group && s == scratch && t == threads && self.unit == 1)
            || self.spans.len() != 1
            || self.read_any
            || self.write_any
            || !self.reads.is_empty()
            || self.buffer_any
            || !self.buffers_written.is_empty()
            || self.noted_full
            || !self.inits.is_empty()
        {
            return false;
        }
        if !self.match_children(tree, group, since) {
            return false;
        }
        std::mem::swap(&mut self.ended, &mut self.ended_next);
        if self.gone.is_empty() && self.fresh.is_empty() {
            return true;
        }
        if !self.drop_gone() || !self.append_fresh(tree, scratch) {
            return false;
        }
        // What `check` and `fill_direct` leave for a group that reads no bus.
        self.accesses.clear();
        for at in &self.noted {
            let item = self.owner[*at as usize].1;
            set_direct(&mut self.direct_owner, *at, if item == SHARED { IN_ORDER } else { item });
        }
        self.spans[0].end = self.synths.len() as u32;
        self.init_at.clear();
        self.init_at.resize(self.items.len() + 1, 0);
        self.flat.clear();
        self.flat.begin_par();
        for item in 0..self.items.len() {
            self.flat.item(ItemId(item as u32));
        }
        self.flat.end().is_ok()
    }

    /// Checks every change in place against jobs worked out from the tree
    /// (`mismatches`), for tests: allocates, and doubles the work.
    pub fn verify_in_place(&mut self) {
        let mut full = GroupJobs::new(self.audio_buses, self.control_buses, self.buffer_owner.len());
        full.verify = None;
        self.verify = Some(Box::new(full));
    }

    fn compare_with_full_walk(&mut self, tree: &mut NodeTree, group: NodeIdx, scratch: usize, threads: usize) {
        let Some(mut full) = self.verify.take() else { return };
        full.clear();
        if !(full.prepare(tree, group, scratch, threads) && self.agrees_with(&full)) {
            self.mismatches += 1;
        }
        self.verify = Some(full);
    }

    /// Whether jobs changed in place hold what jobs worked out from the tree
    /// (`full`) hold: the same synths in the same order, writing the same
    /// buses, the same ended synths at the same places, reading nothing;
    /// items that cut the synths into runs in order, the queue of those
    /// items; and the buses' owners as those items imply. The cuts
    /// themselves may differ.
    fn agrees_with(&self, full: &GroupJobs) -> bool {
        let n = self.synths.len();
        let same = self.synths == full.synths
            && self.nodes == full.nodes
            && self.ended == full.ended
            && self.synth_write == full.synth_write
            && full.reads.is_empty()
            && self.reads.is_empty()
            && self.inits.is_empty()
            && full.inits.is_empty()
            && self.accesses.is_empty()
            && self.synth_span.len() == n
            && self.synth_span.iter().all(|&s| s == 0)
            && self.synth_reads.len() == n + 1
            && self.synth_reads.iter().all(|&r| r == 0)
            && self.init_at.len() == self.items.len() + 1
            && self.init_at.iter().all(|&a| a == 0)
            && self.synth_item.len() == n;
        if !same {
            return false;
        }
        let mut at = 0;
        for (item, &(first, end)) in self.items.iter().enumerate() {
            let writes: u32 = self.synth_write[first as usize..end as usize].iter().map(|w| w.1).sum();
            if first != at
                || end <= first
                || writes as usize > MAX_WRITES_PER_ITEM
                || self.synth_item[first as usize..end as usize].iter().any(|&i| i != item as u32)
            {
                return false;
            }
            at = end;
        }
        let mut flat = FlatTree::with_capacity(self.items.len() + 1, 0);
        flat.begin_par();
        for item in 0..self.items.len() {
            flat.item(ItemId(item as u32));
        }
        if at as usize != n || flat.end().is_err() || flat != self.flat {
            return false;
        }
        let mut written: Vec<u32> = self.synth_write.iter().flat_map(|&(f, c)| f..f + c).collect();
        written.sort_unstable();
        written.dedup();
        let mut noted = self.noted.to_vec();
        noted.sort_unstable();
        let mut full_noted = full.noted.to_vec();
        full_noted.sort_unstable();
        written == noted
            && noted == full_noted
            && noted.iter().all(|&at| {
                let Some(item) = self.writer_of(at) else { return false };
                let direct = if item == SHARED { IN_ORDER } else { item };
                self.owner[at as usize] == (self.stamp, item, false) && self.direct_owner[at as usize] == !direct
            })
    }

    /// `update_in_place`'s look at the group's children: whether they are
    /// the synths of `nodes`, unchanged since edit count `since`, but for
    /// those that ended (listed in `gone`), followed by running synths
    /// (`fresh`); ended synths anywhere among them (`ended_next`).
    fn match_children(&mut self, tree: &NodeTree, group: NodeIdx, since: u64) -> bool {
        self.gone.clear();
        self.fresh.clear();
        self.ended_next.clear();
        let old = self.nodes.len();
        let mut k = 0;
        let mut child = tree.group(group).and_then(|gd| gd.head);
        while let Some(c) = child {
            let node = tree.node(c);
            child = node.next;
            let expected = k < old && self.nodes[k] == c;
            // A running synth, most children, without a second look-up.
            let runs = node.state == CalcState::Run && node.sat_before.is_empty() && node.sat_after.is_empty();
            let way = if runs { ChildWay::Runs } else { Self::child_way(tree, c) };
            match way {
                ChildWay::Refused => return false,
                ChildWay::Skipped if expected => return false,
                ChildWay::Skipped => {}
                ChildWay::Ended => {
                    if expected {
                        self.gone.push(k as u32);
                        k += 1;
                    }
                    if self.ended_next.len() == self.ended_next.capacity() {
                        return false;
                    }
                    self.ended_next.push(((k - self.gone.len() + self.fresh.len()) as u32, c));
                }
                ChildWay::Runs if expected => {
                    if node.changed_since(since) {
                        return false;
                    }
                    k += 1;
                }
                ChildWay::Runs => {
                    if k < old || tree.group(c).is_some() || self.fresh.len() == self.fresh.capacity() {
                        return false;
                    }
                    self.fresh.push(c);
                }
            }
        }
        k == old
    }

    /// Takes the synths listed in `gone` out of the jobs and their items,
    /// and the items they leave empty; each bus they wrote goes to the one
    /// item still writing it, if one, or is forgotten if none.
    fn drop_gone(&mut self) -> bool {
        if self.gone.is_empty() {
            return true;
        }
        self.retouch.clear();
        // The synths between gone ones move down, a run at a time.
        let n = self.synths.len();
        let mut kept = self.gone[0] as usize;
        for (g, &at) in self.gone.iter().enumerate() {
            let (first, channels) = self.synth_write[at as usize];
            if self.retouch.len() + channels as usize > self.retouch.capacity() {
                return false;
            }
            self.retouch.extend(first..first + channels);
            let run = at as usize + 1..self.gone.get(g + 1).map_or(n, |&next| next as usize);
            let len = run.len();
            self.synths.copy_within(run.clone(), kept);
            self.nodes.copy_within(run.clone(), kept);
            self.synth_write.copy_within(run, kept);
            kept += len;
        }
        for v in [&mut self.synth_span, &mut self.synth_item] {
            v.truncate(kept);
        }
        self.synths.truncate(kept);
        self.nodes.truncate(kept);
        self.synth_write.truncate(kept);
        self.synth_reads.truncate(kept + 1);
        // Each item loses the gone synths in its range.
        self.renumber.clear();
        let (mut out, mut before_first, mut before_end) = (0, 0, 0);
        for item in 0..self.items.len() {
            let (first, end) = self.items[item];
            while before_first < self.gone.len() && self.gone[before_first] < first {
                before_first += 1;
            }
            while before_end < self.gone.len() && self.gone[before_end] < end {
                before_end += 1;
            }
            let range = (first - before_first as u32, end - before_end as u32);
            if range.1 > range.0 {
                self.renumber.push(out as u32);
                self.items[out] = range;
                out += 1;
            } else {
                self.renumber.push(NO_ITEM);
            }
        }
        self.items.truncate(out);
        for (item, &(first, end)) in self.items.iter().enumerate() {
            self.synth_item[first as usize..end as usize].fill(item as u32);
        }
        for &at in &self.noted {
            let e = &mut self.owner[at as usize];
            if e.1 != SHARED {
                e.1 = self.renumber[e.1 as usize];
            }
        }
        self.retouch.sort_unstable();
        self.retouch.dedup();
        for r in 0..self.retouch.len() {
            let at = self.retouch[r];
            match self.writer_of(at) {
                None => {
                    self.owner[at as usize] = (0, 0, false);
                    if let Some(p) = self.noted.iter().position(|&n| n == at) {
                        self.noted.swap_remove(p);
                    }
                    set_direct(&mut self.direct_owner, at, NO_ITEM);
                }
                Some(item) => self.owner[at as usize] = (self.stamp, item, false),
            }
        }
        true
    }

    /// The one item whose synths write bus slot `at`, `SHARED` if several
    /// do, `None` if none.
    fn writer_of(&self, at: u32) -> Option<u32> {
        let mut found = None;
        for (item, &(first, end)) in self.items.iter().enumerate() {
            let writes = self.synth_write[first as usize..end as usize].iter().any(|&(f, c)| f <= at && at < f + c);
            if writes {
                if found.is_some() {
                    return Some(SHARED);
                }
                found = Some(item as u32);
            }
        }
        found
    }

    /// Adds the synths listed in `fresh` after the group's last, to its
    /// last item while it holds fewer than `top_chunk` synths, then to
    /// new ones; false if one does not qualify or touches a bus or buffer
    /// that `update_in_place` leaves to the walk.
    fn append_fresh(&mut self, tree: &mut NodeTree, scratch: usize) -> bool {
        if self.fresh.is_empty() {
            return true;
        }
        if let Some(&(first, end)) = self.items.last().filter(|&&(f, e)| ((e - f) as usize) < self.top_chunk) {
            self.items.pop();
            self.open = Some(first);
            self.open_writes = self.synth_write[first as usize..end as usize].iter().map(|w| w.1 as usize).sum();
        }
        for k in 0..self.fresh.len() {
            let c = self.fresh[k];
            if self.item_for(tree, c).is_none() || !self.add_synth(tree, c, 0, scratch) {
                return false;
            }
            let filled = self.synths.len() - self.open.map_or(0, |f| f as usize);
            if filled >= self.top_chunk && !self.close_item() {
                return false;
            }
        }
        self.close_item()
            && self.reads.is_empty()
            && !self.read_any
            && !self.write_any
            && !self.buffer_any
            && self.buffers_written.is_empty()
            && !self.noted_full
    }

    /// Whether the jobs worked out last are for `group` as the tree is now,
    /// with the same scratch and threads (then `prepare` reuses them).
    pub fn current(&self, tree: &NodeTree, group: NodeIdx, scratch: usize, threads: usize) -> bool {
        self.current_fused(tree, &[group], scratch, threads)
    }

    /// `current` for the jobs of consecutive sibling groups `groups`
    /// (`prepare_fused`).
    pub fn current_fused(&self, tree: &NodeTree, groups: &[NodeIdx], scratch: usize, threads: usize) -> bool {
        groups.first().is_some_and(|&g| self.prepared == Some((g, tree.edits(), scratch, threads)))
            && self.unit == groups.len()
    }

    /// Works out the block of consecutive sibling parallel groups `groups`
    /// as one queue: a parallel span holding each group's span, in order,
    /// so that the threads take the items of all of them side by side and
    /// the group pays one hand-over to the helpers rather than one each.
    /// The items keep the sequential order (the groups' synths one group
    /// after another), and so do the replay and the engine's settling after
    /// it, so the render is what running the groups one after another
    /// gives. The same conditions as `prepare` hold for every group, and
    /// `check` has a synth reading a bus that a synth of an earlier group
    /// writes wait for it (they may run alongside now). The jobs are not
    /// changed in place after an edit (`update_in_place` takes one group):
    /// they are worked out again. For one group, `prepare`.
    #[inline(never)]
    pub fn prepare_fused(&mut self, tree: &mut NodeTree, groups: &[NodeIdx], scratch: usize, threads: usize) -> bool {
        let &[first, ..] = groups else { return false };
        if groups.len() == 1 {
            return self.prepare(tree, first, scratch, threads);
        }
        if self.current_fused(tree, groups, scratch, threads) {
            return true;
        }
        self.clear();
        self.worked_out += 1;
        if !groups.iter().all(|&g| Self::children_may_run(tree, g)) {
            return false;
        }
        self.synth_reads.push(0);
        // The groups' common span: they may run alongside one another.
        self.spans.push(Span { parent: 0, par: true, end: 0 });
        self.flat.begin_par();
        for &g in groups {
            if !self.walk(tree, g, 0, true, 2, scratch, threads) {
                return false;
            }
        }
        self.spans[0].end = self.synths.len() as u32;
        let ok = self.flat.end().is_ok() && self.check();
        if ok {
            self.prepared = Some((first, tree.edits(), scratch, threads));
            self.unit = groups.len();
            self.ok = true;
            self.fill_direct();
        }
        ok
    }

    /// Whether parallel group `group` would spread (as `prepare`, with at
    /// least two items) were its direct synth children in their first block
    /// built already: they count as running synths, whose buses and
    /// buffers `add_synth` takes from their def and controls, which are
    /// known before they are built. A synth in its first block in a nested
    /// group still keeps the group on one thread. `None`, having done
    /// nothing, when no direct child is in its first block, or one was
    /// paused before it was built (`NullFirstCalc`), has satellites or a
    /// def not to build ahead (`GraphDef::builds_ahead`). The children's
    /// states are put back; the tree's edit count moves on, so these jobs
    /// are the group's but not reused (`prepare` works them out again).
    pub fn prepare_as_built(&mut self, tree: &mut NodeTree, group: NodeIdx, scratch: usize, threads: usize) -> Option<bool> {
        self.first_block.clear();
        let mut child = tree.group(group).and_then(|gd| gd.head);
        while let Some(c) = child {
            let (state, next) = (tree.node(c).state, tree.node(c).next);
            child = next;
            match state {
                CalcState::FirstCalc => {}
                CalcState::NullFirstCalc => return None,
                _ => continue,
            }
            let builds = !tree.has_satellites(c) && tree.synth_to_run(c).is_some_and(|s| s.def.builds_ahead);
            if !builds || self.first_block.len() == self.first_block.capacity() {
                return None;
            }
            self.first_block.push(c);
        }
        if self.first_block.is_empty() {
            return None;
        }
        for &c in &self.first_block {
            tree.node_mut(c).state = CalcState::Run;
        }
        let key = (group, tree.edits(), scratch, threads);
        // A constructor that pauses its synth sends `/n_off` as it is built:
        // ahead of the `/n_end` of an ended synth before it, which the
        // engine deletes after the group, where a sequential walk sends it
        // first.
        let pauses = self.first_block.iter().any(|&c| tree.synth_to_run(c).is_some_and(|s| s.def.may_pause_itself));
        let ok = self.prepare(tree, group, scratch, threads) && self.items() >= 2 && (!pauses || self.ended.is_empty());
        self.prepared = Some(key);
        self.as_built = ok;
        for &c in &self.first_block {
            tree.node_mut(c).state = CalcState::FirstCalc;
        }
        Some(ok)
    }

    /// Whether every child of `group` may run in it as `walk` requires
    /// (paused, running without satellites, or ended quietly). A synth in
    /// its first block (just added, as a new note is) keeps the group on
    /// one thread for that block: this finds it without walking the synths
    /// before it.
    pub(crate) fn children_may_run(tree: &NodeTree, group: NodeIdx) -> bool {
        let mut child = tree.group(group).and_then(|gd| gd.head);
        while let Some(c) = child {
            if Self::child_way(tree, c) == ChildWay::Refused {
                return false;
            }
            child = tree.node(c).next;
        }
        true
    }

    /// How `walk` takes child `c` of a group in the subtree, by its state.
    fn child_way(tree: &NodeTree, c: NodeIdx) -> ChildWay {
        match tree.node(c).state {
            CalcState::Paused => ChildWay::Skipped,
            CalcState::Run if !tree.has_satellites(c) => ChildWay::Runs,
            CalcState::Ended if Self::ended_quietly(tree, c) => ChildWay::Ended,
            _ => ChildWay::Refused,
        }
    }

    /// Whether node `c`, ended in an earlier block (a done action, a
    /// failure), may be deleted after its parallel group has run, at its
    /// place in tree order, rather than when a sequential walk reaches it,
    /// with no difference anyone could tell: a synth without satellites,
    /// nothing reserved for building it (which its deletion would give
    /// back), whose units' destructors touch nothing outside it
    /// (`GraphDef::ends_quietly`). Its siblings on the threads see the
    /// count of synths only through `NumRunningSynths`, which no def that
    /// runs there reads after it is built (`GraphDef::parallel`), and is not
    /// built ahead (`GraphDef::builds_ahead`); the nodes after the group
    /// see the count the deletions leave, as after a sequential walk.
    fn ended_quietly(tree: &NodeTree, c: NodeIdx) -> bool {
        let n = tree.node(c);
        n.state == CalcState::Ended
            && !tree.has_satellites(c)
            && matches!(&n.kind, NodeKind::Synth(s) if s.def.ends_quietly && s.reserved == 0)
    }

    /// Gives each bus that one item alone writes, and no synth reads, to
    /// that item to write in place (`direct_owner`); one that several
    /// items write and none reads, to whichever item runs in order.
    fn fill_direct(&mut self) {
        if self.read_any || self.write_any || self.noted_full {
            return;
        }
        for &at in &self.noted {
            let (stamp, item, read) = self.owner[at as usize];
            if stamp == self.stamp && !read {
                set_direct(&mut self.direct_owner, at, if item == SHARED { IN_ORDER } else { item });
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        tree: &mut NodeTree,
        g: NodeIdx,
        parent: u32,
        par: bool,
        depth: usize,
        scratch: usize,
        threads: usize,
    ) -> bool {
        let span = self.spans.len() as u32;
        if self.spans.len() == MAX_GROUPS || depth > MAX_NESTING {
            return false;
        }
        self.spans.push(Span { parent, par, end: 0 });
        if par {
            self.flat.begin_par();
        } else {
            self.flat.begin_seq();
        }
        if par {
            if let Some(ok) = self.chain_items(tree, g, span, depth, scratch, threads) {
                self.spans[span as usize].end = self.synths.len() as u32;
                return ok && self.flat.end().is_ok();
            }
        }
        // A parallel group's synth children go in items of `chunk`; with
        // `whole_batches`, an item does not end inside a lane batch short
        // of the kernels' width (below): only where there are synths
        // enough to give every thread such a batch, since a group cut into
        // fewer items than threads would leave threads idle (four big
        // voices are four items, not one batch of four).
        let mut whole_batches = false;
        let chunk = if par {
            let (mut n, mut lanes) = (0, 0);
            let mut child = tree.group(g).and_then(|gd| gd.head);
            while let Some(c) = child {
                child = tree.node(c).next;
                if tree.group(c).is_none() && tree.node(c).state == CalcState::Run {
                    n += 1;
                    lanes += usize::from(tree.synth_to_run(c).is_some_and(|s| crate::schedule::may_share_lanes(s)));
                }
            }
            whole_batches = n >= threads * LANE_WIDTH;
            if 2 * lanes >= n {
                // Mostly synths that run side by side: an item is a lane
                // batch, as wide as gives each thread two of them (the
                // vector kernels take lanes eight at a time), so that the
                // threads share batches instead of narrowing them; a
                // narrower width still fills a batch's eight lanes when
                // there are enough synths (`whole_batches`).
                let width = (n / (2 * threads)).clamp(1, MAX_LANES);
                if width >= 8 {
                    width - width % 8
                } else {
                    width
                }
            } else {
                (n / (threads * ITEMS_PER_THREAD)).max(1)
            }
        } else {
            usize::MAX
        };
        if span == 0 {
            self.top_chunk = chunk;
        }
        // The def of the lane batch being filled in the open item, and how
        // many synths it holds so far.
        let (mut run_def, mut run) = (None, 0);
        // The lane def of `child`, when the synth before it looked ahead.
        let mut ahead = None;
        let mut child = tree.group(g).and_then(|gd| gd.head);
        while let Some(c) = child {
            child = tree.node(c).next;
            let known = ahead.take();
            match Self::child_way(tree, c) {
                ChildWay::Skipped => continue,
                ChildWay::Runs => {}
                ChildWay::Ended => {
                    if self.ended.len() == self.ended.capacity() {
                        return false;
                    }
                    self.ended.push((self.synths.len() as u32, c));
                    continue;
                }
                ChildWay::Refused => return false,
            }
            if let Some(inner_par) = tree.group(c).map(|gd| gd.parallel) {
                if !(self.close_item() && self.walk(tree, c, span, inner_par, depth + 1, scratch, threads)) {
                    return false;
                }
            } else {
                match self.item_for(tree, c) {
                    None => return false,
                    Some(true) => run_def = None,
                    Some(false) => {}
                }
                if !self.add_synth(tree, c, span, scratch) {
                    return false;
                }
                let filled = self.synths.len() - self.open.map_or(0, |f| f as usize);
                // The lane batch this synth joins in its item, and whether
                // the next child would join it too.
                let def = known.unwrap_or_else(|| lane_def(tree, c));
                run = if def.is_some() && def == run_def { run + 1 } else { 1 };
                run_def = def;
                ahead = if def.is_some() { child.map(|n| lane_def(tree, n)) } else { None };
                let batch_goes_on = def.is_some() && ahead.flatten() == def;
                // An item does not cut a lane batch short of the kernels'
                // width: a vector kernel computes eight lanes in the time of
                // one, so two half-full batches cost twice one full batch.
                let mid_batch = whole_batches && batch_goes_on && run % LANE_WIDTH != 0 && run < MAX_LANES;
                if filled >= chunk && !mid_batch && !self.close_item() {
                    return false;
                }
            }
        }
        if !self.close_item() {
            return false;
        }
        self.spans[span as usize].end = self.synths.len() as u32;
        self.flat.end().is_ok()
    }

    /// Parallel group `g`'s children as items of several chains each, when
    /// they are chains that may run place by place (`engine::chains`):
    /// each item's synths run the first synth of each of its chains, then
    /// the second, and so on, so that the voices and the effects of an
    /// item's chains run as lane batches, as they do when the group runs on
    /// one thread. An item holds as many chains as gives each thread two
    /// items, at most `MAX_LANES`, a multiple of the kernels' eight when it
    /// has eight or more. The jobs list the synths in tree order (each
    /// chain a sequential span of its own, for `check` and the settling
    /// after the group); only the order an item runs them in changes, which
    /// computes what chain after chain computes since the chains were
    /// found independent (`chains_independent`), and their writes to one
    /// bus keep their order. `None`, having added nothing, when the
    /// children are not such chains, or too few to fill items of two;
    /// else whether the items could be made.
    fn chain_items(
        &mut self,
        tree: &mut NodeTree,
        g: NodeIdx,
        span: u32,
        depth: usize,
        scratch: usize,
        threads: usize,
    ) -> Option<bool> {
        use crate::engine::chains::{chains_independent, collect_chains};
        let c = collect_chains(tree, g)?;
        let (n, m) = (c.chains, c.places);
        // Only worth it when a place runs as lane batches.
        if !(0..m).any(|j| lane_def(tree, c.node(0, j)).is_some()) {
            return None;
        }
        // Every chain writes as many channels; an item keeps them all.
        let writes: usize = (0..m)
            .map(|j| {
                tree.synth_to_run(c.node(0, j))
                    .and_then(|s| s.def.bus_write.as_ref())
                    .map_or(0, |w| w.channels as usize)
            })
            .sum();
        let width = (n / (2 * threads)).clamp(1, MAX_LANES);
        let width = if width >= LANE_WIDTH { width - width % LANE_WIDTH } else { width };
        let width = width.min(MAX_WRITES_PER_ITEM / writes.max(1));
        if width < 2 || width * m > MAX_CHAIN_ITEM || !chains_independent(tree, &c) {
            return None;
        }
        if depth + 1 > MAX_NESTING {
            return Some(false);
        }
        let mut k = 0;
        while k < n {
            let end = (k + width).min(n);
            let first = self.synths.len();
            self.open = Some(first as u32);
            self.open_writes = 0;
            for chain in k..end {
                let inner = self.spans.len() as u32;
                if self.spans.len() == MAX_GROUPS {
                    return Some(false);
                }
                self.spans.push(Span { parent: span, par: false, end: 0 });
                for j in 0..m {
                    if !self.add_synth(tree, c.node(chain, j), inner, scratch) {
                        return Some(false);
                    }
                }
                self.spans[inner as usize].end = self.synths.len() as u32;
            }
            if !self.close_item() {
                return Some(false);
            }
            // The item runs place by place: synth `j` of its chain `l` at
            // `j * chains + l`.
            let len = end - k;
            let mut order = [std::ptr::null_mut(); MAX_CHAIN_ITEM];
            for (at, &s) in self.synths[first..].iter().enumerate() {
                order[(at % m) * len + at / m] = s;
            }
            self.synths[first..].copy_from_slice(&order[..len * m]);
            k = end;
        }
        Some(true)
    }

    /// The item synth `c` joins: the open one, unless the synth's bus
    /// writes would overfill it (an item keeps every write for the replay
    /// and has room for so many: a long run of synths is cut into several
    /// items), else a new one. `Some(true)` when it opened a new item,
    /// `None` when the open one could not be closed.
    fn item_for(&mut self, tree: &mut NodeTree, c: NodeIdx) -> Option<bool> {
        let writes = tree.synth_to_run(c).and_then(|s| s.def.bus_write.as_ref()).map_or(0, |w| w.channels as usize);
        if self.open.is_some() && self.open_writes + writes > MAX_WRITES_PER_ITEM && !self.close_item() {
            return None;
        }
        if self.open.is_some() {
            return Some(false);
        }
        self.open = Some(self.synths.len() as u32);
        self.open_writes = 0;
        Some(true)
    }

    fn close_item(&mut self) -> bool {
        if let Some(first) = self.open.take() {
            if self.items.len() == MAX_PARALLEL_ITEMS {
                return false;
            }
            self.items.push((first, self.synths.len() as u32));
            self.flat.item(ItemId(self.items.len() as u32 - 1));
        }
        true
    }

    fn add_synth(&mut self, tree: &mut NodeTree, idx: NodeIdx, span: u32, scratch: usize) -> bool {
        let Some(s) = tree.synth_to_run(idx) else { return false };
        let qualifies = (s.def.parallel || (s.rgen.is_some() && s.def.parallel_own_rng))
            && s.def.scratch_len <= scratch
            && s.ctx.control_map.iter().all(|m| *m == magnetar_ugens::ControlMap::Own)
            && self.synths.len() < self.synths.capacity();
        if !qualifies {
            return false;
        }
        let synth = self.synths.len() as u32;
        let item = self.items.len() as u32;
        // The buses it will read and write, from its controls as they are now.
        let value = |src: BusSource| match src {
            BusSource::Constant(v) => Some(v),
            BusSource::Control(i) => s.ctx.controls.get(i as usize).copied(),
            BusSource::Unknown => None,
        };
        let (audio_buses, control_buses) = (self.audio_buses, self.control_buses);
        let range = |audio: bool, bus: Option<f32>, channels: u32| {
            let buses = if audio { audio_buses } else { control_buses };
            let first = bus? as i64;
            (first >= 0 && first as usize + channels as usize <= buses).then_some((first as u32, channels))
        };
        for r in &s.def.bus_reads {
            match range(r.audio, value(r.bus), r.channels) {
                Some((first, channels))
                    if self.reads.len() < self.reads.capacity()
                        && self.accesses.len() + channels as usize <= self.accesses.capacity() =>
                {
                    self.reads.push((r.audio, first, channels));
                    for bus in first..first + channels {
                        self.accesses.push(Access { control: !r.audio, bus, write: false, synth });
                        self.note(!r.audio, bus, item, true);
                    }
                }
                _ => self.read_any = true,
            }
        }
        let buffers = self.buffer_owner.len();
        for a in &s.def.buffer_accesses {
            // The buffer the unit will use, as it works it out.
            match value(a.buf) {
                Some(v) => {
                    if let Some(index) = magnetar_ugens::common::buffer::buffer_index(v, buffers) {
                        if !self.note_buffer(index, item, a.write) {
                            return false;
                        }
                    }
                }
                None => self.buffer_any = true,
            }
        }
        let mut written = (0, 0);
        if let Some(w) = &s.def.bus_write {
            match range(w.audio, value(w.bus), w.channels) {
                Some((first, channels)) if self.accesses.len() + channels as usize <= self.accesses.capacity() => {
                    written = (self.bus_slot(!w.audio, first as usize) as u32, channels);
                    for bus in first..first + channels {
                        self.accesses.push(Access { control: !w.audio, bus, write: true, synth });
                        self.note(!w.audio, bus, item, false);
                    }
                }
                _ => self.write_any = true,
            }
            // Every write is kept for the replay; an item has room for so many.
            self.open_writes += w.channels as usize;
        }
        self.synth_reads.push(self.reads.len() as u32);
        self.synths.push(s as *mut Synth);
        self.nodes.push(idx);
        self.synth_span.push(span);
        self.synth_item.push(item);
        self.synth_write.push(written);
        self.open_writes <= MAX_WRITES_PER_ITEM
    }

    /// Whether synths `a < b` run in a fixed order: true when the innermost
    /// group holding both is sequential (then `a` runs first).
    fn ordered(&self, a: u32, b: u32) -> bool {
        let mut g = self.synth_span[a as usize];
        loop {
            let s = self.spans[g as usize];
            if b < s.end {
                return !s.par;
            }
            g = s.parent;
        }
    }

    /// Lists for each item the earlier items whose writes it must see, and
    /// orders in the queue those that the groups alone would let run
    /// alongside it (a reader of what an earlier child of a parallel group
    /// writes waits for it, as in one thread's order). A later writer needs
    /// no order: what it writes to a bus that a synth of the group reads is
    /// kept for the replay after the group, so the reader does not hear it,
    /// whichever runs first.
    fn check(&mut self) -> bool {
        // A buffer written by one item and used by others: what they read
        // or leave there depends on their order, so they run one after
        // another in the queue, in item order. One whose number cannot be
        // told ties everything to an order.
        if !self.buffers_written.is_empty() && self.buffer_any {
            return false;
        }
        if self.buffers_written.iter().any(|&b| self.buffer_owner[b as usize] == (self.stamp, SHARED)) {
            self.buffers_written.sort_unstable();
            self.buffers_written.dedup();
            self.buffer_uses.sort_unstable();
            self.buffer_uses.dedup();
            let mut last: Option<(u32, u32)> = None;
            for &(buffer, item) in self.buffer_uses.iter() {
                let shared_write = self.buffer_owner[buffer as usize] == (self.stamp, SHARED)
                    && self.buffers_written.binary_search(&buffer).is_ok();
                if shared_write {
                    if let Some((_, before)) = last.filter(|&(b, _)| b == buffer) {
                        if self.orders.len() == self.orders.capacity() {
                            return false;
                        }
                        self.orders.push((before, item));
                    }
                    last = Some((buffer, item));
                }
            }
        }
        let any_write = self.write_any || self.accesses.iter().any(|a| a.write);
        let any_read = self.read_any || !self.reads.is_empty();
        if (self.read_any && any_write) || (self.write_any && any_read) {
            return false;
        }
        // Only a bus both read and written can tie synths to an order.
        if any_read && any_write {
            self.accesses.sort_unstable();
        } else {
            self.accesses.clear();
        }
        let mut checks = 0;
        let mut i = 0;
        while i < self.accesses.len() {
            let (control, bus) = (self.accesses[i].control, self.accesses[i].bus);
            let end = i + self.accesses[i..].iter().take_while(|a| a.control == control && a.bus == bus).count();
            let writes = i + self.accesses[i..end].iter().take_while(|a| !a.write).count();
            for r in i..writes {
                for w in writes..end {
                    let (rs, ws) = (self.accesses[r].synth, self.accesses[w].synth);
                    if rs == ws {
                        continue;
                    }
                    checks += 1;
                    if checks > MAX_CHECKS {
                        return false;
                    }
                    let (ri, wi) = (self.synth_item[rs as usize], self.synth_item[ws as usize]);
                    // An earlier writer in another item: the reader's item
                    // must see what it wrote, and so run after it.
                    if ws < rs && ri != wi {
                        if self.inits.len() == self.inits.capacity() {
                            return false;
                        }
                        self.inits.push((ri, wi));
                        if !self.ordered(ws, rs) && self.orders.last() != Some(&(wi, ri)) {
                            if self.orders.len() == self.orders.capacity() {
                                return false;
                            }
                            self.orders.push((wi, ri));
                        }
                    }
                }
            }
            i = end;
        }
        self.inits.sort_unstable();
        self.inits.dedup();
        self.orders.sort_unstable();
        self.orders.dedup();
        for &(before, after) in self.orders.iter() {
            self.flat.order(ItemId(before), ItemId(after));
        }
        let mut at = 0;
        for item in 0..self.items.len() as u32 {
            self.init_at.push(at as u32);
            at += self.inits[at..].iter().take_while(|p| p.0 == item).count();
        }
        self.init_at.push(at as u32);
        true
    }

    /// The group's synths in the order a sequential run computes them (the
    /// items, one after another; an item of chains place by place,
    /// `chain_items`).
    pub(crate) fn synths(&self) -> &[*mut Synth] {
        &self.synths
    }

    fn item_synths(&self, item: usize) -> &[*mut Synth] {
        let (first, end) = self.items[item];
        &self.synths[first as usize..end as usize]
    }

    fn item_reads(&self, item: usize) -> &[(bool, u32, u32)] {
        let (first, end) = self.items[item];
        &self.reads[self.synth_reads[first as usize] as usize..self.synth_reads[end as usize] as usize]
    }

    fn item_inits(&self, item: usize) -> &[(u32, u32)] {
        &self.inits[self.init_at[item] as usize..self.init_at[item + 1] as usize]
    }
}

/// One logged write onto one bus: adds to it if it was written this block
/// (`touched == counter`) and the write mixes, sets it otherwise. `wide`:
/// the CPU has AVX2.
#[inline(always)]
fn mix(out: &mut [f32], touched: &mut i32, counter: i32, replace: bool, samples: &[f32], wide: bool) {
    if !replace && *touched == counter {
        #[cfg(target_arch = "x86_64")]
        if wide {
            // SAFETY: `wide` is set only where the CPU has AVX2.
            unsafe { add_avx2(out, samples) };
            return;
        }
        let _ = wide;
        add(out, samples);
    } else {
        out.copy_from_slice(&samples[..out.len()]);
        *touched = counter;
    }
}

/// Adds `samples` onto `out`, sample by sample: the same sums at any
/// vector width.
#[inline(always)]
fn add(out: &mut [f32], samples: &[f32]) {
    // The usual block as fixed-length arrays: straight vector operations.
    if let (Ok(o), Some(x)) = (<&mut [f32; 64]>::try_from(&mut *out), samples.first_chunk::<64>()) {
        for (o, x) in o.iter_mut().zip(x) {
            *o += *x;
        }
        return;
    }
    for (o, x) in out.iter_mut().zip(samples) {
        *o += *x;
    }
}

/// `add` compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn add_avx2(out: &mut [f32], samples: &[f32]) {
    add(out, samples);
}

/// Several logged writes onto one bus, in order (`samples` holds them one
/// after another, `len` samples each): what `mix` makes of them one by one,
/// in one pass over the bus. The same sums in the same order: each sample
/// of the bus adds the writes' samples in write order.
#[inline(always)]
fn mix_run(out: &mut [f32], touched: &mut i32, counter: i32, replace: bool, len: usize, samples: &[f32], wide: bool) {
    if len != out.len() || samples.len() == len {
        // Anything but whole blocks of the bus (or a single write): one by
        // one.
        for block in samples.chunks_exact(len.max(1)) {
            mix(out, touched, counter, replace, block, wide);
        }
        return;
    }
    let mut blocks = samples.chunks_exact(len);
    if replace {
        // Each sets the bus: the last one stays.
        if let Some(last) = blocks.next_back() {
            out.copy_from_slice(last);
            *touched = counter;
        }
        return;
    }
    if *touched != counter {
        let Some(first) = blocks.next() else { return };
        out.copy_from_slice(first);
        *touched = counter;
    }
    let rest = &samples[samples.len() - blocks.len() * len..];
    #[cfg(target_arch = "x86_64")]
    if wide {
        if let Ok(o) = <&mut [f32; 64]>::try_from(&mut *out) {
            // SAFETY: `wide` is set only where the CPU has AVX2.
            unsafe { add_blocks_avx2(o, rest) };
            return;
        }
    }
    for block in rest.chunks_exact(len) {
        add(out, block);
    }
}

/// Adds the blocks of 64 samples in `blocks` onto `out`, one after another,
/// with the bus held in registers meanwhile: for each sample the sums of
/// `add` applied block by block.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn add_blocks_avx2(out: &mut [f32; 64], blocks: &[f32]) {
    use std::arch::x86_64::{_mm256_add_ps, _mm256_loadu_ps, _mm256_storeu_ps};
    let o = out.as_mut_ptr();
    // SAFETY: every offset below is inside `out` (64 samples) or inside
    // one block of 64 samples of `blocks`.
    unsafe {
        let mut acc = [_mm256_loadu_ps(o); 8];
        for (k, a) in acc.iter_mut().enumerate().skip(1) {
            *a = _mm256_loadu_ps(o.add(8 * k));
        }
        for block in blocks.chunks_exact(64) {
            let x = block.as_ptr();
            for (k, a) in acc.iter_mut().enumerate() {
                *a = _mm256_add_ps(*a, _mm256_loadu_ps(x.add(8 * k)));
            }
        }
        for (k, a) in acc.iter().enumerate() {
            _mm256_storeu_ps(o.add(8 * k), *a);
        }
    }
}

/// Whether the CPU has AVX2, for `mix`.
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The world's buses as raw storage, for the items that own a bus (see
/// `GroupJobs::owns`) to write it while the others run: distinct items
/// write distinct buses, and no item reads a bus another one writes.
#[derive(Clone, Copy)]
struct MainBuses {
    audio: *mut f32,
    audio_touched: *mut i32,
    audio_count: usize,
    control: *mut f32,
    control_touched: *mut i32,
    control_count: usize,
    counter: i32,
    block_size: usize,
    /// The CPU has AVX2 (`mix`).
    wide: bool,
}

impl MainBuses {
    fn of(world: &mut World) -> MainBuses {
        MainBuses {
            audio: world.audio_bus.as_mut_ptr(),
            audio_touched: world.audio_touched.as_mut_ptr(),
            audio_count: world.audio_touched.len().min(world.audio_bus.len() / world.block_size.max(1)),
            control: world.control_bus.as_mut_ptr(),
            control_touched: world.control_touched.as_mut_ptr(),
            control_count: world.control_touched.len().min(world.control_bus.len()),
            counter: world.buf_counter,
            block_size: world.block_size,
            wide: has_avx2(),
        }
    }

    /// Applies one logged write to the buses, as the writing unit did: a
    /// mixing write adds to a bus written this block and sets any other; a
    /// replacing write sets. Writes past the last bus are left out, as the
    /// writing unit leaves them out.
    ///
    /// # Safety
    /// The world must outlive the call with its bus storage unmoved, and
    /// no other thread may read or write the target bus meanwhile.
    unsafe fn apply(&self, target: u32, samples: &[f32]) {
        // SAFETY: the caller's contract.
        unsafe { self.apply_run(target, samples.len(), samples) }
    }

    /// Applies several logged writes to one target, one after another
    /// (`samples` holds them in order, `len` samples each): what `apply`
    /// makes of them one by one.
    ///
    /// # Safety
    /// As `apply`.
    unsafe fn apply_run(&self, target: u32, len: usize, samples: &[f32]) {
        let (control, bus, replace) = unpack(target);
        // SAFETY: as in `apply`.
        unsafe {
            if control {
                if bus < self.control_count {
                    let out = std::slice::from_raw_parts_mut(self.control.add(bus), 1);
                    mix_run(out, &mut *self.control_touched.add(bus), self.counter, replace, len, samples, false);
                }
            } else if bus < self.audio_count {
                let bs = self.block_size;
                let out = std::slice::from_raw_parts_mut(self.audio.add(bus * bs), bs);
                mix_run(out, &mut *self.audio_touched.add(bus), self.counter, replace, len, samples, self.wide);
            }
        }
    }
}

/// A thread's private world, aligned to (and so filling) whole cache line
/// pairs: the threads write their worlds' fields at the same time (each
/// logged bus write moves the log's length), and two worlds sharing a line
/// at their boundary would make those writes transfers between cores.
#[repr(align(128))]
struct Private(UnsafeCell<World>, SetUp);

/// The group a private world was last set up for (`Job::run`), touched
/// only by the world's thread.
struct SetUp(std::cell::Cell<u64>);

impl std::ops::Deref for Private {
    type Target = UnsafeCell<World>;
    fn deref(&self) -> &UnsafeCell<World> {
        &self.0
    }
}

/// Compiled queues kept for reuse: a parallel group's queue depends only
/// on the shape of its subtree, so a group whose shape did not change
/// reuses its queue; a few shapes are kept for consecutive groups.
const CACHED_PLANS: usize = 4;

pub struct Parallel {
    executor: Executor,
    /// Every synth of this block ran the whole of the block before and its
    /// controls did not change since (`Engine::run_block`): lane batches
    /// skip the controls check (`schedule::run_lanes`).
    pub(crate) controls_known: bool,
    /// (tree, queue) pairs, the most recently used first.
    plans: Vec<(FlatTree, Plan)>,
    /// One private world (buses only matter) per thread, each on cache
    /// lines of its own.
    privates: Vec<Private>,
    merge: MergeBuffers,
    /// Add shared-bus writes in child order (see `EngineOptions::parallel_exact`).
    exact: bool,
    /// Without `exact`: one lock per bus (audio buses, then control buses),
    /// held while an item adds its writes to that bus.
    bus_locks: Box<[AtomicBool]>,
    /// Which items' writes are logged in their merge slots, and how many
    /// items' writes to unread buses are on the buses while the group
    /// runs (`Job::commit_one`). Each item notes with its merge slot what
    /// the slot holds for the replay (`Left`).
    in_order: InOrder,
    /// Whether a synth of the last group run failed or asked for
    /// something (a done action, a free or run request). On lines of its
    /// own, as is `lost`: the audio thread clears them at every group, and
    /// the fields beside them (which the items read) would then move to
    /// its core every block.
    unsettled: CachePadded<AtomicBool>,
    lost: CachePadded<AtomicBool>,
    /// Groups run on several threads so far.
    pub groups_run: u64,
    /// Queues compiled so far (a group whose subtree kept its shape since
    /// its last block reuses its queue).
    pub plans_compiled: u64,
    /// How long each queue compilation took (ns).
    pub compile_times: Box<Histogram>,
}

// SAFETY: each private world is only touched by the thread whose index it
// has (see `Job::run`), and only during `run_group`.
unsafe impl Send for Parallel {}

impl Parallel {
    /// Starts `threads` threads (the caller included) and sizes private
    /// worlds like `like`. Real-time helpers start under SCHED_FIFO at the
    /// lowest priority, never above the audio thread, and are moved to the
    /// audio thread's own once it is known (`priorities`); non-real-time
    /// helpers stay ordinary threads (a real-time spinner could starve the
    /// rendering thread on a busy machine).
    pub fn new(threads: usize, like: &World, realtime: bool, exact: bool) -> Result<Parallel, ExecutorError> {
        let config = ExecutorConfig {
            threads,
            fifo_priority: realtime.then_some(1),
            pin: realtime,
            // Non-real-time threads share their CPUs with whatever else
            // runs: a wait on a thread the system put aside yields to it.
            patience: (!realtime).then_some(magnetar_dsp::executor::SHARED_CPU_PATIENCE),
            ..Default::default()
        };
        let executor = Executor::new(config)?;
        let bs = like.block_size;
        let privates = (0..threads)
            .map(|_| {
                let controls = like.num_control_buses();
                let mut w = World::new(
                    like.sample_rate,
                    bs,
                    like.num_audio_buses(),
                    0,
                    0,
                    like.num_input_channels,
                    like.num_output_channels,
                    0,
                );
                // The control buses on zero pages of their own, faulted in
                // only where an item reads or writes them.
                let mut buses = ZeroTable::<f32>::new(controls);
                let first = buses.as_non_null();
                // SAFETY: `controls` zeroed floats, aligned, that live as
                // long as the table kept with them, and that only this
                // world reaches.
                w.control_bus = unsafe { ControlBuses::external(first, controls, std::sync::Arc::new(buses)) };
                w.control_touched = vec![-1; controls];
                w.log_touches = true;
                w.touch_log = Vec::with_capacity(MAX_WRITES_PER_ITEM);
                w.touch_data = Vec::with_capacity(MAX_WRITES_PER_ITEM * bs);
                Private(UnsafeCell::new(w), SetUp(std::cell::Cell::new(0)))
            })
            .collect();
        let nodes = MAX_PARALLEL_ITEMS + MAX_GROUPS;
        Ok(Parallel {
            controls_known: false,
            executor,
            plans: (0..CACHED_PLANS)
                .map(|_| {
                    // The orders of `GroupJobs::check`, one edge each.
                    let mut tree = FlatTree::with_capacity(nodes, 0);
                    tree.reserve_orders(MAX_INITS);
                    (tree, Plan::with_capacity(nodes, 4 * nodes + MAX_INITS))
                })
                .collect(),
            privates,
            merge: if exact {
                let exchanging = (EXCHANGING_ITEMS_PER_THREAD * threads).min(MAX_PARALLEL_ITEMS);
                MergeBuffers::new(MAX_PARALLEL_ITEMS, MAX_WRITES_PER_ITEM, MAX_WRITES_PER_ITEM * bs, exchanging)
            } else {
                MergeBuffers::new(0, 0, 0, 0)
            },
            exact,
            bus_locks: if exact {
                Box::default()
            } else {
                (0..like.num_audio_buses() + like.num_control_buses()).map(|_| AtomicBool::new(false)).collect()
            },
            in_order: InOrder::new(MAX_PARALLEL_ITEMS),
            unsettled: CachePadded::new(AtomicBool::new(false)),
            lost: CachePadded::new(AtomicBool::new(false)),
            groups_run: 0,
            plans_compiled: 0,
            compile_times: Box::new(Histogram::new()),
        })
    }

    pub fn threads(&self) -> usize {
        self.executor.threads()
    }

    /// Whether a synth of the group last run on the threads failed or
    /// asked for something, which the engine then carries out; if none
    /// did, the engine need not look at each of them.
    pub fn unsettled(&self) -> bool {
        self.unsettled.load(Ordering::Relaxed)
    }

    /// How long the audio thread waited for the other threads in the last
    /// group run on them (ns; see `Executor::last_wait`).
    pub fn last_wait_ns(&self) -> u64 {
        self.executor.last_wait().as_nanos() as u64
    }

    /// Whether idle helpers spin between blocks (see `Executor::set_linger`).
    pub fn set_linger(&self, linger: bool) {
        self.executor.set_linger(linger);
    }

    /// Kernel thread ids of the helper threads.
    pub fn helper_tids(&self) -> Vec<i32> {
        self.executor.helper_setups().iter().map(|s| s.tid).collect()
    }

    /// Whether private worlds still match the world (rates change once,
    /// when the driver decides).
    pub fn matches(&self, world: &World) -> bool {
        // SAFETY: no block is running; the caller holds `&self`.
        let w = unsafe { &*self.privates[0].get() };
        w.sample_rate == world.sample_rate && w.block_size == world.block_size
    }

    /// Runs a parallel group's work items (`jobs`, prepared for this block)
    /// on the executor's threads, then replays their bus writes in order.
    /// `scratch` holds one audio scratch area of `scratch_len` samples per
    /// thread. Returns false if some writes did not fit the merge buffers
    /// (the caller then treats the output of this block as lost).
    ///
    /// # Safety
    /// `jobs` must have been prepared from the tree now holding its synths,
    /// which nothing else touches during the call, and `scratch` must hold
    /// `threads() * scratch_len` samples.
    pub unsafe fn run_group(&mut self, jobs: &GroupJobs, world: &mut World, scratch: *mut f32, scratch_len: usize) -> bool {
        self.unsettled.store(false, Ordering::Relaxed);
        match self.plans.iter().position(|(tree, _)| *tree == jobs.flat) {
            // Most recently used first: a rotation moves no plan's storage.
            Some(at) => self.plans[..=at].rotate_right(1),
            None => {
                let started = Instant::now();
                self.plans.rotate_right(1);
                let (tree, plan) = &mut self.plans[0];
                tree.clear();
                if plan.compile_flat(&jobs.flat).is_err() {
                    return false;
                }
                tree.copy_from(&jobs.flat);
                self.plans_compiled += 1;
                self.compile_times.record_duration(started.elapsed());
            }
        }
        // Each thread sets up its own world for the group as it runs its
        // first item, and clears what points into the world as it leaves
        // (`Job::run`, `Job::leave`): were this thread to write the helpers'
        // worlds before and after every group, the lines it wrote would move
        // to its core and back to theirs at every group.
        let loan = {
            // SAFETY: no block is running; the audio thread's own world.
            let w = unsafe { &mut *self.privates[0].get() };
            // Synths may read buffers, and write those no other item uses
            // (`GroupJobs::check`); no command runs until the group is done.
            // SAFETY: the loan is copied into the worlds of the threads
            // that run items, each of which ends it as it leaves the block,
            // before `run_block` returns and `world` is used again.
            unsafe { w.lend_buffers(world) };
            let loan = w.lent_buffers;
            w.end_loan();
            loan
        };
        let buses = MainBuses::of(world);
        let direct = magnetar_ugens::DirectBuses {
            audio: buses.audio,
            audio_touched: buses.audio_touched,
            audio_count: buses.audio_count,
            control: buses.control,
            control_touched: buses.control_touched,
            control_count: buses.control_count,
            owner: jobs.direct_owner.as_ptr(),
            item: NO_ITEM,
            in_order: false,
        };
        // The table is laid out as `GroupJobs::bus_slot` counts the buses.
        let direct = (jobs.audio_buses == direct.audio_count
            && jobs.control_buses == direct.control_count
            && jobs.direct_owner.len() == direct.audio_count + direct.control_count)
            .then_some(direct);
        self.lost.store(false, Ordering::Relaxed);
        self.in_order.reset(jobs.items());
        // On cache lines of its own: the helpers read it at every item and
        // poll, and this thread's stack beside it is written all the time.
        let job = CachePadded::new(Job {
            group: self.groups_run + 1,
            loan,
            direct,
            jobs,
            buses,
            main: world,
            privates: &self.privates,
            merge: &self.merge,
            exact: self.exact,
            bus_locks: &self.bus_locks,
            in_order: &self.in_order,
            unsettled: &self.unsettled,
            scratch,
            scratch_len,
            lost: &self.lost,
            controls_known: self.controls_known,
        });
        self.executor.run_block(&self.plans[0].1, &*job);
        self.groups_run += 1;
        if !self.exact {
            // Every write went to the buses as its item ended.
            return !self.lost.load(Ordering::Relaxed);
        }
        // The first `committed` items' writes to unread buses are on the
        // buses already; the rest follow in item order.
        let traced = magnetar_rt::trace::now();
        let committed = self.in_order.committed();
        let mut replayed = true;
        for slot in 0..jobs.items() {
            let early = slot < committed;
            // The block's end orders the items' notes before.
            let left = self.merge.note(slot).unwrap_or(Left::Read as u8);
            if left == Left::Nothing as u8 || (early && left == Left::Unread as u8) {
                // Nothing for the replay: the slot is not even looked at
                // (its item's thread empties it when it next writes it).
                continue;
            }
            replayed &= self
                .merge
                .replay_runs(slot..slot + 1, |target, len, samples| {
                    if !(early && jobs.unread(target)) {
                        // SAFETY: the group is over; the world is ours.
                        unsafe { buses.apply_run(target, len, samples) }
                    }
                })
                .is_ok();
        }
        magnetar_rt::trace::span(magnetar_rt::trace::Kind::Merge, traced, 0, 0);
        replayed && !self.lost.load(Ordering::Relaxed)
    }
}

/// What an item left in its merge slot for the replay after the group.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Left {
    /// No write.
    Nothing = 0,
    /// Writes to buses no synth of the group reads, which the in-order
    /// commit applies once the item is committed.
    Unread = 1,
    /// Writes to a bus that a synth of the group reads, or that could not
    /// be kept: the replay applies them in any case.
    Read = 2,
}

struct Job<'a> {
    /// The group's number (from 1), and what each thread sets up its world
    /// with as it runs its first item of the group.
    group: u64,
    loan: magnetar_ugens::world::LentBuffers,
    direct: Option<magnetar_ugens::DirectBuses>,
    jobs: &'a GroupJobs,
    /// The world's buses, written only by the items that own them.
    buses: MainBuses,
    /// The world as the group found it: only read while the group runs.
    main: *const World,
    privates: &'a [Private],
    merge: &'a MergeBuffers,
    exact: bool,
    bus_locks: &'a [AtomicBool],
    in_order: &'a InOrder,
    unsettled: &'a AtomicBool,
    scratch: *mut f32,
    scratch_len: usize,
    lost: &'a AtomicBool,
    /// As `Parallel::controls_known`.
    controls_known: bool,
}

// SAFETY: items hold distinct synths and each worker index owns one private
// world (with its set-up stamp) and one scratch slice; the executor runs each item exactly once,
// after the items it depends on; meanwhile the main world's buses are only
// read, but for those one item owns (or, without `exact`, writes under
// their locks), and a buffer is written only by the one item that uses it.
unsafe impl Sync for Job<'_> {}

impl Work for Job<'_> {
    /// Runs work item `item` into thread `worker`'s private world: sets the
    /// buses it reads to what a sequential run leaves for it, runs its
    /// synths in order, and keeps what they wrote for the replay.
    fn run(&self, item: ItemId, worker: usize) {
        let i = item.0 as usize;
        // SAFETY: only the thread with index `worker` uses this world.
        let w = unsafe { &mut *self.privates[worker].get() };
        // SAFETY: nothing writes the main world until the group is done.
        let main = unsafe { &*self.main };
        let set_up = &self.privates[worker].1 .0;
        if set_up.get() != self.group {
            set_up.set(self.group);
            w.buf_counter = main.buf_counter;
            w.full_rate = main.full_rate;
            w.buf_rate = main.buf_rate;
            // The world's loan lasts until this thread leaves the block
            // (`leave`), before the audio thread uses its buffers again.
            w.lent_buffers = self.loan;
            // The table and the buses outlive the block.
            w.direct = self.direct;
        }
        // SAFETY: thread `worker`'s own slice of the scratch area.
        let scratch =
            unsafe { std::slice::from_raw_parts_mut(self.scratch.add(worker * self.scratch_len), self.scratch_len) };
        let reads = self.jobs.item_reads(i);
        let bs = w.block_size;
        for &(audio, first, channels) in reads {
            let (first, end) = (first as usize, (first + channels) as usize);
            if audio {
                w.audio_bus[first * bs..end * bs].copy_from_slice(&main.audio_bus[first * bs..end * bs]);
                w.audio_touched[first..end].copy_from_slice(&main.audio_touched[first..end]);
            } else {
                w.control_bus[first..end].copy_from_slice(&main.control_bus[first..end]);
                w.control_touched[first..end].copy_from_slice(&main.control_touched[first..end]);
            }
        }
        let read = |target: u32| {
            let (control, bus, _) = unpack(target);
            reads.iter().any(|&(audio, f, c)| audio != control && (f as usize..(f + c) as usize).contains(&bus))
        };
        // In child order, a bus holds only the writes of the items before
        // the group; add those of the earlier items this one must hear.
        // Otherwise they are on the bus already (and later ones are not:
        // the writers of what an item reads all run before or after it).
        let inits = if self.exact { self.jobs.item_inits(i) } else { &[] };
        let private = if inits.is_empty() { None } else { Some(MainBuses::of(w)) };
        for &(_, earlier) in inits {
            let hear = |target: u32, len: usize, samples: &[f32]| {
                if let Some(buses) = private.filter(|_| read(target)) {
                    // SAFETY: this thread's own world, borrowed for the
                    // item; nothing else reaches its buses meanwhile.
                    unsafe { buses.apply_run(target, len, samples) };
                }
            };
            // SAFETY: the earlier item wrote the buses this one reads, so
            // the queue ran it before this one (`GroupJobs::check`), and its
            // slot is only claimed again by the replay after the group.
            let seen = unsafe { self.merge.visit_runs(earlier as usize, hear) };
            if seen.is_err() {
                self.lost.store(true, Ordering::Relaxed);
            }
        }
        w.touch_log.clear();
        w.touch_data.clear();
        w.touch_overflow = false;
        if let Some(d) = w.direct.as_mut() {
            d.item = item.0;
            // Every earlier item's writes to the unread buses are on them
            // (Acquire: with what they wrote, `commit_one`), and no later
            // item's can be until this one is done: this item's writes to
            // those buses go to them as it makes them, in order.
            d.in_order = self.exact && self.in_order.committed() == i;
        }
        // No synth of this item reads a bus (`GroupJobs::check` refuses a
        // group with a read it cannot tell): its writes need only be
        // logged, not also mixed into this thread's copy of the buses.
        w.touch_only = reads.is_empty() && !self.jobs.read_any;
        // The first thread's share of the items comes first, its synths
        // (made one after another) just below the next thread's in memory:
        // it walks its lane batches down, leaving the next thread's lines
        // alone (`Walk`). The others walk up, away from the threads before.
        let walk = if worker == 0 && self.privates.len() > 1 { Walk::Down } else { Walk::Up };
        // SAFETY: each synth belongs to one item, run once per block by one
        // thread; no one else touches it meanwhile (`run_group`), and the
        // scratch slice is this thread's. A failing unit marks its synth
        // failed; the audio thread ends it after the group.
        unsafe { crate::schedule::run_ordered(self.jobs.item_synths(i), w, scratch, self.controls_known, walk) };
        // Looked at here, where the synths are in this thread's cache,
        // rather than by the audio thread for every synth after the group.
        // SAFETY: the item's synths, still this thread's alone.
        if self.jobs.item_synths(i).iter().any(|&s| unsafe { (*s).has_failed() || (*s).has_requests() }) {
            // Relaxed: the end of the block orders it before the audio
            // thread's look (`Parallel::unsettled`).
            self.unsettled.store(true, Ordering::Relaxed);
        }
        if !self.exact {
            self.add_now(item.0, w);
            return;
        }
        let Ok(mut slot) = self.merge.writer(i) else {
            self.merge.set_note(i, Left::Read as u8);
            self.lost.store(true, Ordering::Relaxed);
            return;
        };
        // What the last block left there, unless its replay emptied it.
        slot.clear();
        // With every earlier item's writes to unread buses applied
        // already, this item's may follow them at once (no one applies a
        // later item's before this one is done).
        let in_order = self.in_order.committed() == i;
        let (kept, left) = self.log_writes(item.0, w, &mut slot, in_order);
        drop(slot);
        // The end of the block orders it before the replay.
        self.merge.set_note(i, if kept { left } else { Left::Read } as u8);
        if !kept {
            self.lost.store(true, Ordering::Relaxed);
        }
        // Whoever applies the item sees the slot and the buses it wrote.
        self.in_order.finish(i, worker, |n| self.commit_one(n));
    }

    /// A thread with nothing to run while others finish their items
    /// applies those of its own that ended (`commit_one`), when the items
    /// before them are applied: the replay after the group then has only
    /// what ended last left to do.
    fn idle(&self, worker: usize) {
        if self.exact {
            self.in_order.commit(Some(worker), |n| self.commit_one(n));
        }
    }

    /// Every item ran: whatever another thread left is applied now, by
    /// the first thread to leave, rather than by the replay.
    fn leave(&self, worker: usize) {
        if self.exact {
            self.in_order.commit(None, |n| self.commit_one(n));
        }
        // SAFETY: only the thread with index `worker` uses this world.
        let w = unsafe { &mut *self.privates[worker].get() };
        // What points into the main world goes with the block.
        w.end_loan();
        w.direct = None;
    }
}

impl Job<'_> {
    /// Without `exact`: adds item `item`'s logged writes to the world's
    /// buses now, a bus it alone touches directly, any other under that
    /// bus's lock. A lock is only tried: writes whose bus is busy wait for
    /// the next pass over the log, so no thread waits on one bus while it
    /// could add to another (a holder adds one block and lets go).
    fn add_now(&self, item: u32, w: &World) {
        let mut pending = 0u64;
        for (k, t) in w.touch_log.iter().enumerate() {
            if self.jobs.owns(item, !t.audio, t.bus) {
                // SAFETY: the world outlives the group, and only this item
                // reads or writes the bus while the group runs (`owns`).
                unsafe { self.buses.apply(target_of(t), logged(w, t)) };
            } else {
                pending |= 1 << k;
            }
        }
        while pending != 0 {
            let mut left = pending;
            while left != 0 {
                let k = left.trailing_zeros() as usize;
                left &= left - 1;
                let t = &w.touch_log[k];
                let Some(lock) = self.bus_locks.get(self.jobs.bus_slot(!t.audio, t.bus as usize)) else {
                    // Past the last bus: `apply` would skip it too.
                    pending &= !(1 << k);
                    continue;
                };
                if lock.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    // SAFETY: the world outlives the group; writers of this
                    // bus hold its lock, and no item reads a bus that an
                    // item it may run alongside writes (`GroupJobs::check`).
                    unsafe { self.buses.apply(target_of(t), logged(w, t)) };
                    lock.store(false, Ordering::Release);
                    pending &= !(1 << k);
                }
            }
            if pending != 0 {
                std::hint::spin_loop();
            }
        }
        if w.touch_overflow {
            self.lost.store(true, Ordering::Relaxed);
        }
    }

    /// Keeps item `item`'s logged writes in its slot, but for those to a
    /// bus it owns, and with `in_order` those to unread buses, which go to
    /// the world's buses now; false if some did not fit, and what the slot
    /// holds for the replay.
    fn log_writes(
        &self,
        item: u32,
        w: &mut World,
        slot: &mut magnetar_dsp::merge::SlotWriter<'_>,
        in_order: bool,
    ) -> (bool, Left) {
        let mut kept = !w.touch_overflow;
        let mut left = Left::Nothing;
        // The writes to keep (`MAX_WRITES_PER_ITEM` fit the mask).
        let mut keep = 0u64;
        let direct = self.jobs.direct();
        let log = &w.touch_log;
        let mut k = 0;
        while k < log.len() {
            let t = &log[k];
            let (target, len) = (target_of(t), if t.audio { w.block_size } else { 1 });
            // The writes that follow to the same bus, logged next to this
            // one: all go the same way, in one pass over the bus.
            let (start, mut end) = (t.at as usize, k + 1);
            while end < log.len() && target_of(&log[end]) == target && log[end].at as usize == start + (end - k) * len {
                end += 1;
            }
            let samples = &w.touch_data[start..start + (end - k) * len];
            // Owned, or unread (`owns`, `unread`), in one look.
            let e = direct.and_then(|d| d.entry(!t.audio, t.bus as usize));
            if e.is_some_and(|(owner, _)| owner == item) {
                // No other item touches this bus: write it now rather than
                // at the replay (the same writes in the same order).
                // SAFETY: the world outlives the group, and only this item
                // reads or writes the bus while the group runs (`owns`).
                unsafe { self.buses.apply_run(target, len, samples) };
            } else if in_order && e.is_some_and(|(_, read)| !read) {
                // Next in item order on the unread buses (`commit_one`): no
                // need to keep the write for later.
                // SAFETY: the world outlives the group; while this item is
                // next in order and not done, no other thread writes an
                // unread bus that several items write, and no item reads it.
                unsafe { self.buses.apply_run(target, len, samples) };
            } else {
                // Writes k..end (at most 64 in all, `MAX_WRITES_PER_ITEM`).
                keep |= (u64::MAX >> (64 - (end - k))) << k;
                left = left.max(if e.is_some_and(|(_, read)| !read) { Left::Unread } else { Left::Read });
            }
            k = end;
        }
        if keep == 0 {
            return (kept, left);
        }
        // The slot takes the log's storage as it is, rather than a copy of
        // the samples, and gives its own empty storage to the world.
        let bs = w.block_size;
        let len = |t: &BusTouch| if t.audio { bs } else { 1 };
        let kept_writes = (0..w.touch_log.len()).filter(|&k| keep & (1 << k) != 0).map(|k| &w.touch_log[k]);
        if slot.adopt(&mut w.touch_data) {
            return (slot.add_all_in_place(kept_writes.map(|t| (target_of(t), t.at as usize, len(t)))) && kept, left);
        }
        for t in kept_writes {
            kept &= slot.add(target_of(t), &w.touch_data[t.at as usize..t.at as usize + len(t)]).is_ok();
        }
        (kept, left)
    }

    /// After each item, on whichever thread ran it (`InOrder::finish`):
    /// the logged writes of the finished items are applied, in item order
    /// from the first not applied yet and up to the first not finished, to
    /// the buses no synth of the group reads. What is left, the replay
    /// after the group applies; meanwhile the other threads go on with the
    /// group. One thread at a time does it, and a thread that finds
    /// another at it leaves it the work. This applies item `n`.
    fn commit_one(&self, n: usize) {
        let apply_unread = |target: u32, len: usize, samples: &[f32]| {
            if self.jobs.unread(target) {
                // SAFETY: the world outlives the group; an unread bus that
                // several items write is written only by the thread
                // applying finished items (`InOrder`) and the item next in
                // order (which is not done, so not being applied), and no
                // item reads it.
                unsafe { self.buses.apply_run(target, len, samples) };
            }
        };
        // SAFETY: item n is done and its writer gone; its slot is claimed
        // again only by the replay after the group.
        let seen = unsafe { self.merge.visit_runs(n, apply_unread) };
        if seen.is_err() {
            self.lost.store(true, Ordering::Relaxed);
        }
    }
}
