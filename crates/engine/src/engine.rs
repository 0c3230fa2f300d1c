//! The engine: world state, node tree and SynthDefs, one block at a time.

use crate::limits;
use crate::contain::UnitFailure;
use crate::graph_def::GraphDef;
use crate::node_tree::{CalcState, GroupData, NodeIdx, NodeKind, NodeTree, Position, PrintNext, ROOT};
use crate::synth::Synth;
use magnetar_ugens::{World, MAX_LANES};
use magnetar_rt::histogram::Histogram;
use magnetar_rt::trace;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

pub(crate) mod chains;
pub(crate) mod plan;

use plan::{Op, Way};

/// Distributions of the graph's hot spots on the audio thread, in ns.
#[derive(Default)]
pub struct GraphLatency {
    /// A synth's units built, on its first block.
    pub construct: Histogram,
    /// A parallel group collected and checked before it is spread.
    pub parallel_prepare: Histogram,
}

/// The sizes a server is booted with (scsynth's command-line options; their
/// defaults and what each bounds: [`limits`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    pub sample_rate: f64,
    pub block_size: usize,
    pub num_audio_buses: usize,
    pub num_control_buses: usize,
    pub num_buffers: usize,
    pub num_input_channels: usize,
    pub num_output_channels: usize,
    pub max_nodes: usize,
    pub max_synthdefs: usize,
    pub rt_memory_kb: usize,
    pub num_wire_bufs: usize,
    pub random_seeds: usize,
    /// Seed for the world's random generator; scsynth seeds from the clock.
    pub seed: Option<u32>,
    /// Threads that compute parallel groups (supernova's `-T`); 1 runs
    /// everything on the calling thread.
    pub threads: usize,
    /// Whether the engine serves a real-time driver (helpers then get
    /// real-time priority).
    pub realtime: bool,
    /// Gives each synth its own random generator, seeded from the world's
    /// when the synth is created (supernova's way), instead of all synths
    /// drawing from the world's in turn (scsynth's). Noise synths in a
    /// parallel group may then run on any thread.
    pub rgen_per_synth: bool,
    /// Parallel groups add their children's writes to a shared bus in
    /// child order, so that the output is one thread's bit for bit (the
    /// default); false adds them as the threads finish, under a lock per
    /// bus (Supernova's way), which differs from run to run in the last
    /// bits of such sums.
    pub parallel_exact: bool,
    /// Measures each parallel group's blocks on the threads and on one
    /// thread, and runs it the faster way (`spread`); false spreads every
    /// group that may be spread.
    pub parallel_measured: bool,
    /// Runs every parallel group on one thread, children in order (with
    /// the threads started all the same): measurements of the one-thread
    /// way against `-T 1`.
    pub parallel_never: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            sample_rate: 44_100.0,
            block_size: limits::DEFAULT_BLOCK_SIZE,
            num_audio_buses: limits::DEFAULT_AUDIO_BUSES,
            num_control_buses: limits::DEFAULT_CONTROL_BUSES,
            num_buffers: limits::DEFAULT_BUFFERS,
            num_input_channels: limits::DEFAULT_INPUT_CHANNELS,
            num_output_channels: limits::DEFAULT_OUTPUT_CHANNELS,
            max_nodes: limits::DEFAULT_MAX_NODES,
            max_synthdefs: limits::DEFAULT_MAX_SYNTHDEFS,
            rt_memory_kb: limits::DEFAULT_RT_MEMORY_KB,
            num_wire_bufs: limits::DEFAULT_WIRE_BUFS,
            random_seeds: limits::DEFAULT_RANDOM_SEEDS,
            seed: None,
            threads: 1,
            realtime: false,
            rgen_per_synth: false,
            parallel_exact: true,
            parallel_measured: true,
            parallel_never: false,
        }
    }
}

/// Makes the calling thread flush denormal floats to zero, as scsynth does
/// for its audio threads: decaying filters and feedback loops then reach
/// exact zeros there, and here, instead of crawling through slow subnormal
/// arithmetic. Call it on every thread that renders blocks.
pub fn flush_denormals_on_this_thread() {
    #[cfg(target_arch = "x86_64")]
    {
        // Bits 15 (flush to zero) and 6 (denormals are zero) of MXCSR.
        const FTZ_DAZ: u32 = 0x8040;
        #[allow(deprecated)]
        // SAFETY: reading and writing MXCSR only changes how this thread
        // rounds subnormal results; every x86_64 CPU has both flags.
        unsafe {
            std::arch::x86_64::_mm_setcsr(std::arch::x86_64::_mm_getcsr() | FTZ_DAZ)
        };
    }
}

/// A change of node state that clients are told about (`/n_go`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeEventKind {
    Go,
    End,
    On,
    Off,
    Move,
    Info,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeEvent {
    pub kind: NodeEventKind,
    pub id: i32,
    pub parent: i32,
    pub prev: i32,
    pub next: i32,
    /// -1 for synths; for groups the head and tail ids (-1 when empty).
    pub is_group: bool,
    pub head: i32,
    pub tail: i32,
}

/// The audio side of the engine: the world, the node tree and the defs
/// installed, one block at a time. It performs the commands that edit them
/// in place and installs what the control side ([`crate::control`]) prepared
/// (defs, buffers, scratch areas); it owns no registry, compiler or file, so
/// work that may block cannot be reached from it. `offline` runs both sides
/// in step for non-real-time rendering.
pub struct Engine {
    pub options: EngineOptions,
    pub world: World,
    pub tree: NodeTree,
    /// The defs installed, by name (reserved for `-d`, never grown here).
    pub defs: HashMap<String, Arc<GraphDef>>,
    /// Sample offset and sub-sample fraction of the bundle being performed.
    pub sample_offset: i32,
    pub subsample_offset: f32,
    /// Node notifications produced since last drained.
    pub events: Vec<NodeEvent>,
    /// Pool bytes that synths made but not built yet will take.
    pub(crate) pending_construct: usize,
    /// The pool's count of allocations it could not serve (the server sets
    /// it): a synth whose building made it grow is ended, out of memory.
    pub pool_misses_probe: Option<fn() -> u64>,
    /// Tells the pool how much a fallible allocation (a size a unit chose at
    /// run time) must leave free: what building the synth at hand takes in
    /// any case, plus the synths waiting to be built (the server sets it).
    pub pool_reserve: Option<fn(usize)>,
    /// Room the pool keeps beyond what a synth is expected to take, so that
    /// a synth `/s_new` admits is not refused while it is built.
    pub pool_headroom: usize,
    /// `calc_group`'s stack: for each group being run, the sibling to go on
    /// with after it, the group itself when its satellites after it are
    /// still to run, and whether its parent is traced (reserved for `-n`
    /// nodes).
    walk: Vec<(Option<NodeIdx>, Option<NodeIdx>, bool)>,
    /// Synths a failing unit ended since the server last looked (reported as
    /// `/fail`; see `contain`).
    pub unit_failures: Vec<UnitFailure>,
    /// Whether to record node notifications (only clients that asked get them).
    pub record_events: bool,
    /// Notifications dropped because `events` was full.
    pub events_dropped: u64,
    /// Replies to send (`/done`, `/b_info`, ...), drained by the driver.
    /// Typed: the control side encodes them (`Reply::to_message`).
    pub replies: Vec<magnetar_protocol::Reply>,
    /// `/g_queryTree` answers, as numbers and shared defs: the driver
    /// makes each reply (`TreeQuery::to_reply`) where it encodes replies.
    pub tree_queries: Vec<crate::queries::TreeQuery>,
    /// What `/b_set`, `/b_setn` and `/b_fill` do about a convolution
    /// response prepared from the buffer they change (inline; the real-time
    /// server defers it to the control thread).
    pub responses: crate::buffer_cmds::ResponseRefresh,
    /// What asynchronous commands that a plugin command ran in place
    /// (offline) left for the control side: their completion messages and
    /// `/done` names, in order (always empty in real time, where they are
    /// staged instead).
    pub plugin_outcomes: Vec<crate::plugin_hooks::AsyncOutcome>,
    /// Reads the real-time memory pool: (free, used) bytes. Set by the
    /// real-time server; without it memory is not checked.
    pub memory_probe: Option<fn() -> (usize, usize)>,
    /// The largest block the pool can hand out, for `/rtMemoryStatus`
    /// (without it the free total is reported).
    pub largest_free_probe: Option<fn() -> usize>,
    /// Defs removed by `/d_free`, kept until no synth uses them; the
    /// server then reports `/d_removed`.
    pub removed_defs: Vec<Arc<GraphDef>>,
    /// Defs let go of by `/d_freeAll` or replaced by `/d_recv`: the
    /// real-time server hands each to its control thread to be dropped there
    /// once no synth uses it, rather than freeing it on the audio thread; no
    /// `/d_removed` is reported for them.
    pub freed_defs: Vec<Arc<GraphDef>>,
    /// Text the server prints (`/g_dumpTree`, `/n_trace`), drained by the driver.
    pub log: Vec<String>,
    /// What the driver measured, for `/status`.
    pub driver_load: crate::queries::DriverLoad,
    /// Audio wires of synths running side by side, one slice each.
    lane_scratch: Vec<f32>,
    /// Whether consecutive synths of one def may run side by side.
    pub lockstep: bool,
    /// Whether a block that changes nothing is kept as a plan for the next
    /// (`plan`); off, every block walks the tree (for comparisons).
    pub plans: bool,
    /// Groups that lane batches of the walk ran on out of or into.
    lane_group_crossings: u64,
    /// `/n_trace` or `/g_dumpTree` marked nodes for this block: parallel
    /// groups then run on one thread, so that the text prints in tree order.
    pub(crate) tracing: bool,
    /// Threads for parallel groups and the groups' kept work, when more
    /// than one thread was asked for.
    parallel: Option<crate::parallel_groups::ParallelGroups>,
    /// Parallel groups of chains lately checked (`chains`): the group,
    /// the tree's edit count then, its chains and whether they were found
    /// independent; the next slot to take.
    chains_checked: Box<[Option<chains::ChainsSeen>]>,
    chains_next: usize,
    /// What the walk did in the last block that changed nothing, replayed
    /// while the tree stays as it was (`plan`).
    plan: plan::Plan,
    /// The tree's edit count at the end of the last block, if nothing was
    /// edited during it and the whole tree ran (its root running, nothing
    /// printed): while the count stays there, every running synth ran the
    /// whole of that block, and its controls did not change since.
    quiet_at: Option<u64>,
    /// This block began where `quiet_at` says (`run_block`), after a quiet
    /// block: the walk replays the plan (`plan`), and lane batches skip the
    /// controls check (`schedule::run_lanes`).
    pub(crate) quiet: bool,
    /// Time spent on the audio thread by the graph's hot spots (ns): a
    /// synth's first block building its units, and a parallel group's
    /// preparation each block (collecting its children and checking their
    /// buses, before the threads start).
    pub latency: Box<GraphLatency>,
    /// Audio wires of the synth being computed (shared: they only hold a
    /// value within one synth's block).
    pub(crate) scratch: Vec<f32>,
    scratch_ended: Vec<i32>,
    /// Units' periodic tasks and the threads serving them (`tasks`).
    pub tasks: crate::tasks::TaskThreads,
}

impl Engine {
    pub fn new(options: EngineOptions) -> Engine {
        // Panics of units are contained and reported, not printed from the
        // audio thread (`contain`).
        crate::contain::install_quiet_hook();
        let seed = options.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos() ^ d.as_secs() as u32)
                .unwrap_or(0)
        });
        let mut world = World::new(
            options.sample_rate,
            options.block_size,
            options.num_audio_buses,
            options.num_control_buses,
            options.num_buffers,
            options.num_input_channels,
            options.num_output_channels,
            seed,
        );
        if !options.rgen_per_synth {
            // scsynth seeds each of its `-r` shared generators from the clock;
            // these follow from the first one's seed.
            world.rgens = (1..=options.random_seeds.max(1) as u32)
                .map(|k| magnetar_ugens::RGen::new(seed.wrapping_add(k.wrapping_mul(0x9e37_79b9))))
                .collect();
        }
        let (max_nodes, max_defs) = (options.max_nodes, options.max_synthdefs);
        let tasks = crate::tasks::TaskThreads::new(options.realtime, options.threads);
        world.tasks = Some(std::sync::Arc::clone(&tasks.table));
        let num_buffers = world.buffers.len();
        let mut engine = Engine {
            options,
            world,
            tree: NodeTree::with_capacity(max_nodes),
            defs: HashMap::with_capacity(max_defs),
            sample_offset: 0,
            subsample_offset: 0.0,
            // Room for a few notifications about every node the server may
            // hold: freeing the whole tree at once fits.
            events: Vec::with_capacity(2 * max_nodes + 256),
            pending_construct: 0,
            pool_misses_probe: None,
            pool_reserve: None,
            pool_headroom: 0,
            walk: Vec::with_capacity(max_nodes + 1),
            lane_group_crossings: 0,
            // Room for a bundle's worth of failures in one block.
            unit_failures: Vec::with_capacity(1024),
            record_events: false,
            events_dropped: 0,
            replies: Vec::with_capacity(256),
            tree_queries: Vec::with_capacity(64),
            responses: crate::buffer_cmds::ResponseRefresh::Inline,
            plugin_outcomes: Vec::new(),
            scratch: Vec::new(),
            lane_scratch: Vec::new(),
            lockstep: true,
            plans: true,
            tracing: false,
            parallel: None,
            chains_checked: chains::verdicts(),
            chains_next: 0,
            plan: plan::Plan::new(max_nodes),
            quiet_at: None,
            quiet: false,
            latency: Default::default(),
            log: Vec::with_capacity(16),
            removed_defs: Vec::with_capacity(16),
            freed_defs: Vec::with_capacity(2 * max_defs),
            memory_probe: None,
            largest_free_probe: None,
            driver_load: Default::default(),
            scratch_ended: Vec::with_capacity(256),
            tasks,
        };
        if engine.options.threads > 1 {
            let o = &engine.options;
            let policy = crate::parallel_groups::Policy {
                realtime: o.realtime,
                measured: o.parallel_measured,
                never: o.parallel_never,
            };
            match crate::parallel_groups::ParallelGroups::new(o.threads, &engine.world, num_buffers, o.parallel_exact, policy) {
                Ok(p) => engine.parallel = Some(p),
                Err(e) => eprintln!("WARNING: parallel groups will run on one thread: {e}"),
            }
        }
        engine
    }

    /// What the control thread needs to keep the helper and task threads'
    /// priorities relative to the audio thread's (`priorities`).
    /// The follower of the audio thread's priority for this engine's
    /// helper and task threads.
    pub fn priority_follower(&self) -> crate::priorities::PriorityFollower {
        crate::priorities::PriorityFollower::new(
            std::sync::Arc::clone(&self.tasks.audio_priority),
            self.parallel.as_ref().map(|p| p.pool().helper_tids()).unwrap_or_default(),
            self.tasks.tids.clone(),
        )
    }

    /// Installs defs the control side compiled. The defs they replace go to
    /// `out_replaced`, to be dropped off the audio thread.
    /// Defs beyond `-d` (a new name when that many are loaded) go to
    /// `out_refused` instead, as scsynth leaves them out.
    pub fn install_defs(
        &mut self,
        defs: &mut Vec<Arc<GraphDef>>,
        out_replaced: &mut Vec<Arc<GraphDef>>,
        out_refused: &mut Vec<Arc<GraphDef>>,
    ) {
        for g in defs.drain(..) {
            if !self.has_room_for_def(&g.name) {
                out_refused.push(g);
                continue;
            }
            if let Some(old) = self.defs.insert(g.name.clone(), g) {
                out_replaced.push(old);
            }
        }
    }

    /// Whether a def of this name may be added under `-d` (the table is
    /// reserved for that many, and never grows on the audio thread).
    fn has_room_for_def(&self, name: &str) -> bool {
        self.defs.len() < self.options.max_synthdefs || self.defs.contains_key(name)
    }

    /// Samples of scratch the engine has for audio wires.
    pub fn scratch_len(&self) -> usize {
        self.scratch.len()
    }

    /// Swaps in a larger scratch area prepared off the audio thread;
    /// returns the old one.
    pub fn swap_scratch(&mut self, bigger: Vec<f32>) -> Vec<f32> {
        if bigger.len() >= self.scratch.len() {
            std::mem::replace(&mut self.scratch, bigger)
        } else {
            bigger
        }
    }

    /// Swaps in a larger lane scratch (`MAX_LANES` times the scratch for
    /// each thread);
    /// returns the old one.
    pub fn swap_lane_scratch(&mut self, bigger: Vec<f32>) -> Vec<f32> {
        if bigger.len() >= self.lane_scratch.len() {
            std::mem::replace(&mut self.lane_scratch, bigger)
        } else {
            bigger
        }
    }

    /// Changes the sample rate before any synth runs (the audio driver
    /// decides the rate only once it has started).
    pub fn set_sample_rate(&mut self, sample_rate: f64) {
        let bs = self.world.block_size;
        self.options.sample_rate = sample_rate;
        self.world.sample_rate = sample_rate;
        self.world.full_rate = magnetar_ugens::RateInfo::full(sample_rate, bs);
        self.world.buf_rate = magnetar_ugens::RateInfo::block(sample_rate, bs);
    }

    /// Parallel groups computed on several threads so far.
    pub fn parallel_groups_run(&self) -> u64 {
        self.parallel.as_ref().map_or(0, |p| p.pool().groups_run)
    }

    /// Work items of the parallel group worked out last (for tests).
    pub fn parallel_items_last(&self) -> usize {
        self.parallel.as_ref().map_or(0, |p| p.last_items())
    }

    /// Groups that lane batches of the sequential walk ran on out of (from
    /// their last child to what follows them) or into (to their first
    /// child), so far.
    pub fn lane_group_crossings(&self) -> u64 {
        self.lane_group_crossings
    }

    /// How long each DSP queue compilation for a parallel group took (ns).
    pub fn queue_compile_times(&self) -> Option<&Histogram> {
        self.parallel.as_ref().map(|p| p.compile_times())
    }

    /// Times a parallel group's work was worked out from the tree (its
    /// children collected and their buses checked) rather than reused.
    pub fn parallel_groups_worked_out(&self) -> u64 {
        self.parallel.as_ref().map_or(0, |p| p.worked_out())
    }

    /// Times consecutive sibling parallel groups ran as one queue.
    pub fn parallel_groups_fused(&self) -> u64 {
        self.parallel.as_ref().map_or(0, |p| p.fused())
    }

    /// Times a parallel group's work was changed in place after an edit
    /// (new synths after its last one, synths of it that ended) rather
    /// than worked out from the tree.
    pub fn parallel_groups_in_place(&self) -> u64 {
        self.parallel.as_ref().map_or(0, |p| p.in_place())
    }

    /// From now on each change in place of a parallel group's work is
    /// checked against the work worked out from the tree (for tests).
    pub fn verify_parallel_in_place(&mut self) {
        if let Some(p) = self.parallel.as_mut() {
            p.verify_in_place();
        }
    }

    /// Changes in place that differed from the work worked out from the
    /// tree (see `verify_parallel_in_place`).
    pub fn parallel_in_place_mismatches(&self) -> u64 {
        self.parallel.as_ref().map_or(0, |p| p.in_place_mismatches())
    }

    /// DSP queues compiled for parallel groups so far.
    pub fn parallel_queues_compiled(&self) -> u64 {
        self.parallel.as_ref().map_or(0, |p| p.pool().plans_compiled)
    }

    /// Blocks that replayed the plan of the block before (`plan`), and of
    /// those the blocks whose walk went on from the middle of it.
    pub fn plan_replays(&self) -> (u64, u64) {
        (self.plan.replays, self.plan.resumed)
    }

    /// Threads computing parallel groups (1 without helpers).
    pub fn threads(&self) -> usize {
        self.parallel.as_ref().map_or(1, |p| p.pool().threads())
    }

    fn event(&mut self, kind: NodeEventKind, idx: NodeIdx) {
        if !self.record_events {
            return;
        }
        let n = self.tree.node(idx);
        if n.id < 0 && kind != NodeEventKind::Info {
            return;
        }
        let id_of = |o: Option<NodeIdx>| o.map(|i| self.tree.node(i).id).unwrap_or(-1);
        let (is_group, head, tail) = match &n.kind {
            NodeKind::Group(g) => (true, id_of(g.head), id_of(g.tail)),
            NodeKind::Synth(_) => (false, -1, -1),
        };
        let e = NodeEvent {
            kind,
            id: n.id,
            parent: id_of(n.parent),
            prev: id_of(n.prev),
            next: id_of(n.next),
            is_group,
            head,
            tail,
        };
        // Never grown on the audio thread: past the room reserved, a
        // notification is dropped and counted.
        if self.events.len() < self.events.capacity() {
            self.events.push(e);
        } else {
            self.events_dropped += 1;
        }
    }

    /// Deletes a node now (scsynth's `Node_Delete`), with `/n_end`s.
    pub fn delete_node(&mut self, idx: NodeIdx) {
        if idx == ROOT {
            return;
        }
        self.retire_subtree(idx);
        let mut ended = std::mem::take(&mut self.scratch_ended);
        self.tree.delete(idx, &mut ended);
        ended.clear();
        self.scratch_ended = ended;
        // A synth that ended is deleted when its group next reaches it, mid-block: the synths
        // after it count one fewer (scsynth's graph count drops at the same point).
        self.world.num_synths = self.tree.num_synths as u32;
    }

    /// Runs unit destructors and queues `/n_end` for a subtree about to go:
    /// every node after its satellites and its children. Walks the tree's
    /// own links, so depth costs no stack.
    fn retire_subtree(&mut self, idx: NodeIdx) {
        let mut cur = Some(self.tree.post_order_first(idx));
        while let Some(c) = cur {
            if !self.tree.node(c).is_group() {
                let world = &mut self.world;
                if let Some(s) = self.tree.synth_mut(c) {
                    s.run_dtors(world);
                    self.pending_construct = self.pending_construct.saturating_sub(std::mem::take(&mut s.reserved));
                }
            }
            self.event(NodeEventKind::End, c);
            cur = self.tree.post_order_next(idx, c);
        }
    }

    pub fn delete_group_children(&mut self, group: NodeIdx) {
        while let Some(c) = self.tree.group(group).and_then(|g| g.head) {
            self.delete_node(c);
        }
    }

    /// `/g_deepFree`: every synth below `group`, in order, keeping the groups.
    pub fn deep_free(&mut self, group: NodeIdx) {
        let mut cur = self.tree.group(group).and_then(|g| g.head);
        while let Some(c) = cur {
            if self.tree.node(c).is_group() {
                cur = self.tree.pre_order_next(group, c, true);
            } else {
                cur = self.tree.pre_order_next(group, c, false);
                self.delete_node(c);
            }
        }
    }

    pub fn set_run(&mut self, idx: NodeIdx, run: bool) {
        if self.tree.set_run(idx, run) {
            self.event(if run { NodeEventKind::On } else { NodeEventKind::Off }, idx);
        }
    }

    /// Creates a group at `pos`.
    pub fn new_group(&mut self, id: i32, pos: Position, parallel: bool) -> NodeIdx {
        let idx = self.new_group_quiet(id, pos, parallel);
        self.announce_go(idx);
        idx
    }

    /// Creates a group without announcing it yet (`/n_go` follows once the
    /// command is complete, e.g. after a replaced node is gone).
    pub fn new_group_quiet(&mut self, id: i32, pos: Position, parallel: bool) -> NodeIdx {
        let idx = self.tree.insert(
            id,
            NodeKind::Group(GroupData { head: None, tail: None, parallel }),
            CalcState::Run,
        );
        self.tree.link(idx, pos);
        idx
    }

    /// Creates a synth at `pos`; its units are built on its first block.
    pub fn new_synth(&mut self, def: Arc<GraphDef>, id: i32, pos: Position) -> NodeIdx {
        let idx = self.new_synth_quiet(def, id, pos);
        self.announce_go(idx);
        idx
    }

    pub fn new_synth_quiet(&mut self, def: Arc<GraphDef>, id: i32, pos: Position) -> NodeIdx {
        let mut synth = Synth::new(def, id, self.sample_offset, self.subsample_offset);
        if self.options.rgen_per_synth {
            // Seeded in command order, so a render does not depend on threads.
            synth.rgen = Some(magnetar_ugens::RGen::new(self.world.rgen.trand()));
        }
        let idx = self.tree.insert(id, NodeKind::Synth(Box::new(synth)), CalcState::FirstCalc);
        self.tree.link(idx, pos);
        idx
    }

    /// Queues `/n_go` for a node.
    pub fn announce_go(&mut self, idx: NodeIdx) {
        self.event(NodeEventKind::Go, idx);
    }

    /// Queues `/n_info` for a node (sent, like scsynth, to notified clients).
    pub fn announce_info(&mut self, idx: NodeIdx) {
        self.event(NodeEventKind::Info, idx);
    }

    /// Moves an existing node to `pos` (`/n_before`, `/g_head`, ...).
    pub fn move_node(&mut self, idx: NodeIdx, pos: Position) {
        self.tree.unlink(idx);
        self.tree.link(idx, pos);
        self.event(NodeEventKind::Move, idx);
    }

    /// Computes one block: runs the tree from the root.
    pub fn run_block(&mut self) {
        let started = self.world.gc.is_some().then(std::time::Instant::now);
        let traced = trace::now();
        self.world.num_synths = self.tree.num_synths as u32;
        let edits = self.tree.edits();
        self.quiet = self.quiet_at == Some(edits);
        if let Some(p) = &mut self.parallel {
            p.set_controls_known(self.quiet);
        }
        let root_runs = self.tree.node(ROOT).state == CalcState::Run;
        let whole = root_runs && !self.tracing;
        if root_runs {
            let lane_len = self.lane_scratch.len();
            if self.plans && !self.tracing && self.quiet && self.plan.holds(lane_len, self.lockstep) {
                self.replay();
            } else {
                // A block that prints is not recorded: it walks otherwise.
                self.plan.begin(self.plans && !self.tracing);
                self.calc_group(ROOT);
                self.plan.end(lane_len, self.lockstep);
            }
        }
        self.tracing = false;
        self.quiet_at = (whole && self.tree.edits() == edits).then_some(edits);
        if let Some(p) = &mut self.parallel {
            p.end_block();
        }
        trace::span(trace::Kind::Block, traced, self.world.buf_counter as u32, 0);
        // Between this block and the next: the collector's snapshot (paper 000, ch. 10).
        if let Some(t) = started {
            let traced = trace::now();
            magnetar_ugens::gc_units::between_blocks(&mut self.world, t);
            trace::span(trace::Kind::Gc, traced, 0, 0);
        }
    }

    /// What a group does as the walk reaches it: what `/n_trace` or
    /// `/g_dumpTree` asked to print then, and running on the parallel
    /// helpers when it may. `None` when the group is done (run in
    /// parallel); otherwise the walk is to go through its children, with
    /// each child named before it runs when the group is traced.
    fn enter_group(&mut self, group: NodeIdx) -> Option<bool> {
        let mut traced = false;
        match self.tree.take_print(group) {
            PrintNext::Nothing => {}
            PrintNext::Trace => {
                self.log.push(format!("TRACE Group {}\n", self.tree.node(group).id));
                traced = true;
            }
            PrintNext::DumpTree { controls } => {
                let mut out = format!("NODE TREE Group {}\n", self.tree.node(group).id);
                crate::tree_print::dump_tree(&self.tree, group, 1, controls, &mut out);
                self.log.push(out);
            }
        }
        let parallel = !traced
            && self.parallel.is_some()
            && !self.tracing
            && self.tree.group(group).is_some_and(|g| g.parallel)
            && self.calc_parallel(group);
        (!parallel).then_some(traced)
    }

    /// Under `/n_trace` of its group, scsynth prints each child's id and
    /// def name (`group` for groups) just before the child runs.
    fn trace_child(&mut self, c: NodeIdx) {
        let n = self.tree.node(c);
        let name = match &n.kind {
            NodeKind::Group(_) => "group",
            NodeKind::Synth(s) => s.def.name.as_str(),
        };
        let line = format!("   {} {}\n", n.id, name);
        self.log.push(line);
    }

    /// Runs a group's children in order, and theirs: groups are entered
    /// without recursion (the sibling to come back to is kept on a stack
    /// reserved for `-n` nodes), so a deep tree costs memory, not stack,
    /// traced groups (`/n_trace`) included.
    fn calc_group(&mut self, group: NodeIdx) {
        let Some(traced) = self.enter_group(group) else { return };
        let base = self.walk.len();
        let head = self.tree.group(group).and_then(|g| g.head);
        self.walk_from(head, traced, base);
    }

    /// The walk of `calc_group` from node `child` on (in a traced group
    /// when `traced`), until its stack is back at height `base`. Its moves
    /// go into the block's plan while it is recorded (`plan`).
    fn walk_from(&mut self, mut child: Option<NodeIdx>, mut traced: bool, base: usize) {
        loop {
            let Some(c) = child else {
                let Some((next, after, parent_traced)) = (self.walk.len() > base).then(|| self.walk.pop()).flatten()
                else {
                    return;
                };
                self.plan.note(Op::Pop);
                traced = parent_traced;
                // A group's satellites after it run once its children have.
                if let Some(g) = after {
                    if self.tree.is_live(g) {
                        self.calc_satellites(g, false);
                    }
                }
                child = next;
                continue;
            };
            if traced {
                self.plan.stop();
                self.trace_child(c);
            }
            let n = self.tree.node(c);
            if n.state == CalcState::Run && n.is_group() {
                let next = n.next;
                // Reserved for every node the server may hold; a walk
                // deeper than that (it cannot be) recurses instead.
                if self.walk.len() == self.walk.capacity() {
                    self.plan.stop();
                    self.calc_with_satellites(c);
                    child = next;
                    continue;
                }
                let satellites = self.tree.has_satellites(c);
                if satellites {
                    self.plan.stop();
                    self.calc_satellites(c, true);
                    if !self.tree.is_live(c) || self.tree.node(c).state != CalcState::Run {
                        // A satellite before it ended or paused it.
                        self.calc_node(c);
                        if self.tree.is_live(c) {
                            self.calc_satellites(c, false);
                        }
                        child = next;
                        continue;
                    }
                }
                let way = self.group_way(c, next, traced, satellites);
                self.plan.note(Op::Group { group: c, next, way });
                (child, traced) = self.after_way(c, way, traced);
                continue;
            }
            // A traced group names each child before it runs: one at a time.
            // Consecutive synths of one lockstep-safe def run side by side.
            let (run, k) = if traced { ([c; MAX_LANES], 0) } else { self.walk_lane_batch(c, base) };
            if k >= 2 {
                let next = self.tree.node(run[k - 1]).next;
                self.calc_lockstep(&run[..k], next);
                child = next;
                continue;
            }
            let next = self.tree.node(c).next;
            if self.tree.has_satellites(c) {
                self.plan.stop();
            }
            self.plan.note(Op::Node { node: c, next });
            self.calc_with_satellites(c);
            child = next;
        }
    }

    /// What the walk does with running group `c` (`next` after it, in a
    /// traced group when `traced`, with satellites when `satellites`, those
    /// before it run): parallel siblings run side by side as one queue, a
    /// parallel group on the threads, or as chains on one thread; otherwise
    /// it is entered, the walk's stack keeping where to go on after it.
    fn group_way(&mut self, c: NodeIdx, next: Option<NodeIdx>, traced: bool, satellites: bool) -> Way {
        // Parallel siblings run side by side, as one queue.
        if !satellites && !traced {
            if let Some(after) = self.calc_fused(c) {
                return Way::Done(after);
            }
        }
        let Some(inner_traced) = self.enter_group(c) else {
            if satellites && self.tree.is_live(c) {
                self.calc_satellites(c, false);
            }
            return Way::Done(next);
        };
        // With one thread, a parallel group of chains runs them place by
        // place.
        let parallel = self.tree.group(c).is_some_and(|g| g.parallel);
        if !inner_traced && !satellites && parallel && self.calc_chains(c) {
            return Way::Done(next);
        }
        self.walk.push((next, satellites.then_some(c), traced));
        Way::Entered(inner_traced)
    }

    /// Where the walk goes on after group `c` went `way`, and whether in a
    /// traced group (`traced`: the group's own).
    fn after_way(&self, c: NodeIdx, way: Way, traced: bool) -> (Option<NodeIdx>, bool) {
        match way {
            Way::Done(at) => (at, traced),
            Way::Entered(inner) => (self.tree.group(c).and_then(|g| g.head), inner),
        }
    }

    /// Replays the block's plan (`plan`): the walk's moves as it made them
    /// when it last recorded, with the stack moved as it moved it. When a
    /// move changes the tree, or a group goes another way than it went, the
    /// walk goes on from there and the plan is dropped.
    fn replay(&mut self) {
        let edits = self.tree.edits();
        self.plan.replays += 1;
        let mut i = 0;
        while let Some(&op) = self.plan.ops.get(i) {
            i += 1;
            let at = match op {
                Op::Pop => {
                    self.walk.pop();
                    continue;
                }
                Op::Truncate(height) => {
                    self.lane_group_crossings += self.walk.len().saturating_sub(height as usize) as u64;
                    self.walk.truncate(height as usize);
                    continue;
                }
                Op::Push(after) => {
                    self.walk.push((after, None, false));
                    self.lane_group_crossings += 1;
                    continue;
                }
                Op::Node { node, next } => {
                    self.calc_node(node);
                    next
                }
                Op::Lanes { at, len, next } => {
                    let (at, len) = (at as usize, len as usize);
                    let mut synths = [std::ptr::null_mut(); MAX_LANES];
                    for (s, held) in synths.iter_mut().zip(&self.plan.synths[at..at + len]) {
                        *s = held.0;
                    }
                    let mut nodes = [0; MAX_LANES];
                    nodes[..len].copy_from_slice(&self.plan.nodes[at..at + len]);
                    // SAFETY: the plan holds (no node was added, deleted or
                    // changed since it was recorded), so these are the live,
                    // distinct, running synths the walk found for `nodes`.
                    // The block before changed nothing either, so their
                    // controls are known (`quiet`).
                    unsafe { self.run_lane_batch(&nodes[..len], &synths[..len], self.quiet) };
                    next
                }
                Op::Group { group, next, way } => {
                    let went = self.group_way(group, next, false, false);
                    let (at, _) = self.after_way(group, went, false);
                    if went != way {
                        self.plan.valid = false;
                        self.plan.resumed += 1;
                        let traced = matches!(went, Way::Entered(true));
                        self.walk_from(at, traced, 0);
                        return;
                    }
                    at
                }
            };
            if self.tree.edits() != edits {
                self.plan.valid = false;
                self.plan.resumed += 1;
                self.walk_from(at, false, 0);
                return;
            }
        }
    }

    /// Runs a node with its satellites: those before it, the node, those
    /// after it. Satellites only run while their reference does.
    fn calc_with_satellites(&mut self, idx: NodeIdx) {
        if !self.tree.has_satellites(idx) {
            self.calc_node(idx);
            return;
        }
        let runs = matches!(self.tree.node(idx).state, CalcState::Run | CalcState::FirstCalc);
        if runs {
            self.calc_satellites(idx, true);
        }
        self.calc_node(idx);
        if runs && self.tree.is_live(idx) {
            self.calc_satellites(idx, false);
        }
    }

    fn calc_satellites(&mut self, idx: NodeIdx, before: bool) {
        fn list(t: &NodeTree, idx: NodeIdx, before: bool) -> &[NodeIdx] {
            let n = t.node(idx);
            if before {
                &n.sat_before
            } else {
                &n.sat_after
            }
        }
        let mut i = 0;
        while let Some(&s) = list(&self.tree, idx, before).get(i) {
            self.calc_with_satellites(s);
            if !self.tree.is_live(idx) {
                return;
            }
            // A satellite that ended was deleted, and the next one moved up.
            if list(&self.tree, idx, before).get(i) == Some(&s) {
                i += 1;
            }
        }
    }

    /// Runs a parallel group whose subtree qualifies on several threads or
    /// on this one (`parallel_groups`), then carries out what its synths
    /// asked for; returns false, having done nothing, when it does not
    /// qualify.
    fn calc_parallel(&mut self, group: NodeIdx) -> bool {
        self.build_first_block(group);
        let sl = self.scratch.len();
        if self.parallel.is_none() {
            return false;
        }
        // A group of chains that may run place by place runs so on this
        // thread, when it runs on one.
        let chains = self.chains_ready(group);
        let Some(groups) = self.parallel.as_mut() else { return false };
        let walk = chains.is_some();
        let Some(ran) = groups.run(group, &mut self.tree, &mut self.world, &mut self.lane_scratch, sl, walk) else {
            return false;
        };
        if let (true, Some(at)) = (ran.walk, chains) {
            self.run_chains(at);
        }
        self.after_parallel(ran);
        true
    }

    /// Whether node `g` may join consecutive sibling parallel groups run
    /// as one queue (`calc_fused`): a running parallel group without
    /// satellites, with nothing to print as the walk reaches it.
    fn fusable(&self, g: NodeIdx) -> bool {
        let n = self.tree.node(g);
        n.state == CalcState::Run
            && n.print_next == PrintNext::Nothing
            && !self.tree.has_satellites(g)
            && self.tree.group(g).is_some_and(|gd| gd.parallel)
    }

    /// Runs running parallel group `first` (without satellites, in an
    /// untraced group) with the parallel groups that follow it directly
    /// in its group as one queue (`ParallelGroups::run_fused`), then
    /// carries out what their synths asked for, in tree order: one
    /// hand-over to the threads for all of them, and their items fill the
    /// threads together. What a walk running them one after another
    /// renders, since they qualify together only when no synth of one
    /// reads a bus or buffer that a synth of another writes. `Some(next)`,
    /// the node after the last of them, when they ran; `None`, having
    /// done nothing, when they do not run so (one group, a new note, a
    /// shared bus): the walk then enters each as it comes.
    fn calc_fused(&mut self, first: NodeIdx) -> Option<Option<NodeIdx>> {
        const MAX_FUSED: usize = 8;
        if self.parallel.is_none() || self.tracing || !self.fusable(first) {
            return None;
        }
        let mut run = [first; MAX_FUSED];
        let mut k = 0;
        let mut at = Some(first);
        while let Some(g) = at.filter(|&g| k < MAX_FUSED && self.fusable(g)) {
            run[k] = g;
            k += 1;
            at = self.tree.node(g).next;
        }
        if k < 2 {
            return None;
        }
        let sl = self.scratch.len();
        let groups = self.parallel.as_mut()?;
        let ran = groups.run_fused(&run[..k], &mut self.tree, &mut self.world, &mut self.lane_scratch, sl)?;
        self.after_parallel(ran);
        Some(at)
    }

    /// After a parallel group (or several as one queue) ran: what its
    /// synths asked for, then its time to the chooser.
    fn after_parallel(&mut self, ran: crate::parallel_groups::Ran) {
        if ran.timed() {
            // Blocks of a one-thread stretch measure nothing.
            self.latency.parallel_prepare.record_duration(ran.prepare);
        }
        if !ran.complete {
            self.log.push("parallel group: bus writes did not fit the merge buffers; block incomplete\n".into());
        }
        if ran.settle {
            self.settle_group();
        }
        if let Some(groups) = self.parallel.as_mut() {
            groups.finish(ran);
        }
    }

    /// After the parallel group just run: ends its synths whose unit
    /// failed, carries out what the others' units asked for, and deletes
    /// those that had ended in an earlier block, in tree order, as a
    /// sequential run has them: notifications go out in the same order, and
    /// with the same neighbours (its synths end or pause only themselves,
    /// and the ended ones touch nothing else as they go, so nothing else in
    /// the group saw the difference).
    fn settle_group(&mut self) {
        let (mut k, mut e) = (0, 0);
        loop {
            let Some(p) = self.parallel.as_ref() else { return };
            // An ended synth before the `k`-th of the group's synths goes first.
            if let Some(&(at, idx)) = p.ended().get(e).filter(|&&(at, _)| at as usize <= k) {
                debug_assert_eq!(at as usize, k);
                e += 1;
                self.delete_node(idx);
                continue;
            }
            let Some(&idx) = p.nodes().get(k) else { return };
            match self.tree.synth_to_run(idx) {
                Some(s) if s.has_failed() => self.unit_failed(idx, false),
                Some(s) if s.has_requests() => self.after_synth(idx),
                _ => {}
            }
            k += 1;
        }
    }

    /// The def of a synth that may join a lockstep run: running, its def
    /// lockstep-safe (or safe but for random numbers, drawn from the
    /// synth's own generator), and none of its controls mapped to a bus.
    #[inline]
    fn lockstep_candidate(&self, idx: NodeIdx) -> Option<*const GraphDef> {
        if !self.lockstep {
            return None;
        }
        let NodeKind::Synth(s) = &self.tree.node(idx).kind else { return None };
        let def = Arc::as_ptr(&s.def);
        (s.def.scratch_len * MAX_LANES <= self.lane_scratch.len() && self.lane_member(idx, def)).then_some(def)
    }

    /// Whether node `idx` may join a lane batch of `def`, which
    /// `lockstep_candidate` gave for the batch's first synth: whether
    /// `lockstep_candidate(idx) == Some(def)`, without again checking what
    /// depends on the def alone (`lockstep_candidate` checks the rest
    /// through this). A synth of another def fails first.
    #[inline]
    fn lane_member(&self, idx: NodeIdx, def: *const GraphDef) -> bool {
        let node = self.tree.node(idx);
        let NodeKind::Synth(s) = &node.kind else { return false };
        std::ptr::eq(Arc::as_ptr(&s.def), def)
            && node.state == CalcState::Run
            && node.print_next == PrintNext::Nothing
            && !self.tree.has_satellites(idx)
            && crate::schedule::may_share_lanes(s)
    }

    /// The lane batch that starts with node `first`: it and the nodes
    /// `after` names next (from the engine, the batch's last node, its
    /// length so far and its def: a `lane_member` of that def, or `None`
    /// where the batch ends), up to `MAX_LANES`; and its length, 0
    /// when `first` is no candidate. For the walk the next node is the one a
    /// sequential run goes to (`walk_next`), for chains place by place the
    /// next chain's synth in the same place.
    pub(super) fn lane_batch(
        &mut self,
        first: NodeIdx,
        mut after: impl FnMut(&mut Self, NodeIdx, usize, *const GraphDef) -> Option<NodeIdx>,
    ) -> ([NodeIdx; MAX_LANES], usize) {
        let mut run = [first; MAX_LANES];
        let Some(def) = self.lockstep_candidate(first) else { return (run, 0) };
        let mut k = 1;
        while k < MAX_LANES {
            let Some(nx) = after(self, run[k - 1], k, def) else { break };
            run[k] = nx;
            k += 1;
        }
        (run, k)
    }

    /// The walk's lane batch that starts with node `c` (`lane_batch`, and
    /// its length), in sequential order across groups (`walk_next`). The
    /// walk's stack is left as if the walk had come to the batch's last
    /// synth: the groups left are popped, those entered pushed. `base` is
    /// the stack's height where the group being walked began.
    fn walk_lane_batch(&mut self, c: NodeIdx, base: usize) -> ([NodeIdx; MAX_LANES], usize) {
        // Groups the batch went on out of or into.
        let mut crossed = 0;
        let batch = self.lane_batch(c, |e, last, _, def| e.walk_next(last, def, base, &mut crossed));
        self.lane_group_crossings += crossed as u64;
        batch
    }

    /// The node after `last` in a lane batch of the walk whose def is
    /// `def`, if a synth of `def` that may join it comes next in sequential
    /// order: the next sibling, or from a group's last child on to what
    /// follows the group, or its group's (satellites after a group, or a
    /// trace, stop the batch), or the first child of a group
    /// `plain_group_head` admits. The walk's stack is changed as the walk
    /// would change it on the way there, and the groups so left or entered
    /// are added to `crossed`.
    #[inline]
    fn walk_next(&mut self, last: NodeIdx, def: *const GraphDef, base: usize, crossed: &mut usize) -> Option<NodeIdx> {
        let (member, entered) = match self.tree.node(last).next {
            Some(nx) if self.lane_member(nx, def) => return Some(nx),
            // Most batches end at a synth of another def, where the walk
            // stays.
            Some(nx) if !self.tree.node(nx).is_group() => return None,
            Some(nx) => self.group_member(nx, def)?,
            // After a group's last child the walk goes on after the group,
            // or after its group if it was the last child there too, ...
            None => {
                let mut up = self.walk.len();
                while up > base && matches!(self.walk[up - 1], (None, None, false)) {
                    up -= 1;
                }
                let &(Some(after), None, false) = self.walk.get(up.wrapping_sub(1)).filter(|_| up > base)? else {
                    return None;
                };
                let member = if self.lane_member(after, def) { (after, None) } else { self.group_member(after, def)? };
                *crossed += self.walk.len() - (up - 1);
                self.walk.truncate(up - 1);
                self.plan.note(Op::Truncate((up - 1) as u32));
                member
            }
        };
        if let Some(g) = entered {
            // As the walk enters a group (`plain_group_head` made sure that
            // doing so has no other effect): its remaining children follow
            // the batch, then its siblings after it.
            let after = self.tree.node(g).next;
            self.walk.push((after, None, false));
            self.plan.note(Op::Push(after));
            *crossed += 1;
        }
        Some(member)
    }

    /// When `nx`, the node a sequential run goes to next, is a group the
    /// walk enters with no other effect and its first child a synth of `def`
    /// that may join a lane batch: that child, and the group.
    fn group_member(&self, nx: NodeIdx, def: *const GraphDef) -> Option<(NodeIdx, Option<NodeIdx>)> {
        let head = self.plain_group_head(nx)?;
        self.lane_member(head, def).then_some((head, Some(nx)))
    }

    /// The first child of `idx` when `idx` is a running sequential group
    /// that the walk enters with no effect but walking its children: no
    /// satellites, nothing to print, room on the walk's stack, and no other
    /// way to run it (only parallel groups have one). The synths of a lane
    /// batch may then run on from a group's last children into this one's
    /// first, which is where a sequential run goes next.
    fn plain_group_head(&self, idx: NodeIdx) -> Option<NodeIdx> {
        let node = self.tree.node(idx);
        if node.state != CalcState::Run
            || node.print_next != PrintNext::Nothing
            || self.tree.has_satellites(idx)
            || self.walk.len() == self.walk.capacity()
        {
            return None;
        }
        let g = self.tree.group(idx)?;
        if g.parallel {
            return None;
        }
        g.head
    }

    /// The synths of lane batch `run` (`lane_batch`), `None` if one is not
    /// a synth (which a lockstep candidate is).
    pub(super) fn lane_synths(&mut self, run: &[NodeIdx]) -> Option<[*mut Synth; MAX_LANES]> {
        let mut synths: [*mut Synth; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
        for (l, &idx) in run.iter().enumerate() {
            synths[l] = self.tree.synth_to_run(idx)?;
        }
        Some(synths)
    }

    /// Runs synths of one def step by step: step 1 of each, then step 2, ...
    /// Steps with a lane kernel compute all synths at once. Equivalent to
    /// running them one after another for lockstep-safe defs (see
    /// `graph_def::lockstep_safe`): their only shared effect, one bus write
    /// per synth, still happens in synth order. The walk then goes on at
    /// `next` (for the plan).
    fn calc_lockstep(&mut self, run: &[NodeIdx], next: Option<NodeIdx>) {
        let k = run.len();
        let Some(synths) = self.lane_synths(run) else {
            // Unreachable: lockstep candidates are synths. Were one not,
            // the run goes one node at a time instead.
            self.plan.stop();
            for &idx in run {
                self.calc_node(idx);
            }
            return;
        };
        self.plan.note_lanes(run, &synths[..k], next);
        // SAFETY: the pointers are to distinct synths owned by the tree,
        // which is not changed until the run is done; the lane scratch holds
        // `scratch_len * MAX_LANES` samples (checked in lockstep_candidate).
        unsafe { self.run_lane_batch(run, &synths[..k], self.quiet) };
    }

    /// Runs lane batch `synths` (the synths of `run`), then ends those
    /// whose unit failed and carries out what the others asked for, in
    /// order. `controls_known`: each synth ran its last block whole, and
    /// its controls did not change since.
    ///
    /// # Safety
    /// As for `schedule::run_lanes`, with the engine's lane scratch, which
    /// holds `scratch_len * MAX_LANES` samples of the synths' def.
    unsafe fn run_lane_batch(&mut self, run: &[NodeIdx], synths: &[*mut Synth], controls_known: bool) {
        // SAFETY: the caller vouches for the synths and the scratch.
        unsafe {
            crate::schedule::run_lanes(
                synths,
                &mut self.world,
                self.lane_scratch.as_mut_ptr(),
                controls_known,
                crate::schedule::Walk::Up,
            )
        };
        for (&sp, &idx) in synths.iter().zip(run) {
            // SAFETY: as above.
            let s = unsafe { &*sp };
            if s.has_failed() {
                self.unit_failed(idx, false);
            } else if s.has_requests() {
                self.after_synth(idx);
            }
        }
    }

    fn calc_node(&mut self, idx: NodeIdx) {
        let state = self.tree.node(idx).state;
        match state {
            CalcState::Ended => self.delete_node(idx),
            CalcState::Paused => {}
            CalcState::Run if self.tree.node(idx).is_group() => self.calc_group(idx),
            CalcState::FirstCalc | CalcState::NullFirstCalc => {
                if self.build(idx, state) && state == CalcState::FirstCalc {
                    let world = &mut self.world;
                    if let Some(synth) = self.tree.synth_mut(idx) {
                        if !synth.calc_contained(world, &mut self.scratch) {
                            self.unit_failed(idx, false);
                            return;
                        }
                    }
                    self.after_synth(idx);
                }
            }
            CalcState::Run => {
                let traced = self.tree.take_print(idx) == PrintNext::Trace;
                let world = &mut self.world;
                let Some(synth) = self.tree.synth_to_run(idx) else { return };
                let ran = if traced {
                    match crate::contain::contained(|| synth.calc_traced(world, &mut self.scratch)) {
                        Ok(text) => {
                            self.log.push(text);
                            true
                        }
                        Err(failure) => synth.settle(world, Err(failure)),
                    }
                } else {
                    synth.calc_contained(world, &mut self.scratch)
                };
                if !ran {
                    self.unit_failed(idx, false);
                } else if synth.has_requests() {
                    self.after_synth(idx);
                }
            }
        }
    }

    /// Builds synth `idx` in its first block (`FirstCalc`, or
    /// `NullFirstCalc` when paused before): its units' constructors, then
    /// what they asked for, then the synth runs (or stays paused) from its
    /// next calc on. False when it could not be built (it is ended).
    fn build(&mut self, idx: NodeIdx, state: CalcState) -> bool {
        let used_before = self.memory_probe.map(|p| p().1);
        let world = &mut self.world;
        let Some(synth) = self.tree.synth_mut(idx) else { return false };
        self.pending_construct = self.pending_construct.saturating_sub(std::mem::take(&mut synth.reserved));
        let misses_before = self.pool_misses_probe.map(|p| p());
        if let Some(reserve) = self.pool_reserve {
            reserve(self.pending_construct + synth.def.fixed_estimate());
        }
        let fallible_before = magnetar_rt::fallible::bytes_allocated();
        let started = Instant::now();
        if !synth.construct_contained(world, &mut self.scratch) {
            self.unit_failed(idx, true);
            return false;
        }
        if let (Some(probe), Some(before)) = (self.pool_misses_probe, misses_before) {
            if probe() > before {
                // Its units took memory the pool did not have.
                self.out_of_memory(idx, true);
                return false;
            }
        }
        self.latency.construct.record_duration(started.elapsed());
        if let (Some(probe), Some(before)) = (self.memory_probe, used_before) {
            let took = probe().1.saturating_sub(before);
            synth.def.construct_bytes.fetch_max(took, std::sync::atomic::Ordering::Relaxed);
            let chosen = magnetar_rt::fallible::bytes_allocated().saturating_sub(fallible_before) as usize;
            synth.def.fixed_bytes.fetch_max(took.saturating_sub(chosen), std::sync::atomic::Ordering::Relaxed);
        }
        // What constructors asked for happens, but scsynth then installs
        // the synth's calc function over any end or pause of itself.
        self.after_synth(idx);
        let running = state == CalcState::FirstCalc;
        self.tree.node_mut(idx).state = if running { CalcState::Run } else { CalcState::Paused };
        true
    }

    /// Before parallel group `group` runs: builds its direct synth children
    /// in their first block, in tree order, when the group would then
    /// spread (`ParallelGroups::may_spread_built`), so that their first
    /// block runs on the threads with their siblings'. The same as building
    /// each at its turn: the group spreads only when no child reads a bus
    /// or buffer that another writes, none draws from the shared random
    /// generator while it runs, and these synths' constructors touch
    /// nothing else outside their synth (`GraphDef::builds_ahead`), so a
    /// constructor sees what it would after its earlier siblings ran.
    /// Should the group not spread after all (a unit failed, say), the walk
    /// runs the built synths as any running ones.
    fn build_first_block(&mut self, group: NodeIdx) {
        let (scratch_len, lanes) = (self.scratch.len(), self.lane_scratch.len());
        let Some(groups) = self.parallel.as_mut() else { return };
        if !groups.may_spread_built(group, &mut self.tree, &self.world, lanes, scratch_len) {
            return;
        }
        let mut child = self.tree.group(group).and_then(|g| g.head);
        while let Some(c) = child {
            // Its constructors may end or pause it, nothing else.
            child = self.tree.node(c).next;
            if self.tree.node(c).state == CalcState::FirstCalc {
                self.build(c, CalcState::FirstCalc);
            }
        }
        if let Some(groups) = self.parallel.as_mut() {
            groups.built_ahead(group, &self.tree);
        }
    }

    /// A unit of synth `idx` panicked (see `contain`): the synth is ended,
    /// as if it had freed itself, and the failure is kept for the report.
    /// Whatever its units asked for in this block is dropped.
    fn unit_failed(&mut self, idx: NodeIdx, constructing: bool) {
        let node = self.tree.node(idx).id;
        let Some(synth) = self.tree.synth_mut(idx) else { return };
        if synth.out_of_memory {
            // A unit asked for more than the pool had: refused, not a bug.
            self.out_of_memory(idx, constructing);
            return;
        }
        let step = synth.failed.unwrap_or(0) as usize;
        let unit = synth.def.steps.get(step).map_or(0, |s| s.unit as usize);
        synth.ctx.done_actions.clear();
        synth.ctx.free_requests.clear();
        synth.ctx.run_requests.clear();
        // Room is reserved; past it the synth still ends, unreported.
        if self.unit_failures.len() < self.unit_failures.capacity() {
            let def = Arc::clone(&synth.def);
            self.unit_failures.push(UnitFailure { node, def, unit, constructing, out_of_memory: false });
        }
        self.tree.end(idx);
    }

    /// A synth whose units could not get their memory from the pool while
    /// it was built: ended, and reported like a failing unit.
    fn out_of_memory(&mut self, idx: NodeIdx, constructing: bool) {
        let node = self.tree.node(idx).id;
        let Some(synth) = self.tree.synth_mut(idx) else { return };
        synth.ctx.done_actions.clear();
        synth.ctx.free_requests.clear();
        synth.ctx.run_requests.clear();
        if self.unit_failures.len() < self.unit_failures.capacity() {
            let def = Arc::clone(&synth.def);
            self.unit_failures.push(UnitFailure { node, def, unit: 0, constructing, out_of_memory: true });
        }
        self.tree.end(idx);
    }

    /// Carries out what the synth's units asked for during its block.
    fn after_synth(&mut self, idx: NodeIdx) {
        let Some(synth) = self.tree.synth_mut(idx) else { return };
        if !synth.has_requests() {
            return;
        }
        let mut actions = std::mem::take(&mut synth.ctx.done_actions);
        let mut frees = std::mem::take(&mut synth.ctx.free_requests);
        let mut runs = std::mem::take(&mut synth.ctx.run_requests);
        for &a in &actions {
            self.done_action(idx, a);
        }
        for &(id, run) in &runs {
            if let Some(n) = self.tree.lookup(id) {
                if n != ROOT {
                    self.set_run(n, run);
                }
            }
        }
        for &id in &frees {
            if let Some(n) = self.tree.lookup(id) {
                if n != ROOT {
                    self.tree.end(n);
                }
            }
        }
        actions.clear();
        frees.clear();
        runs.clear();
        if let Some(synth) = self.tree.synth_mut(idx) {
            synth.ctx.done_actions = actions;
            synth.ctx.free_requests = frees;
            synth.ctx.run_requests = runs;
        }
    }

    /// scsynth's done actions 1–15 relative to synth `idx`.
    pub fn done_action(&mut self, idx: NodeIdx, action: i32) {
        if !self.tree.is_live(idx) {
            return;
        }
        let (prev, next, parent) = {
            let n = self.tree.node(idx);
            (n.prev, n.next, n.parent)
        };
        match action {
            1 => self.set_run(idx, false),
            2 => self.tree.end(idx),
            3 => {
                self.tree.end(idx);
                if let Some(p) = prev {
                    self.tree.end(p);
                }
            }
            4 => {
                self.tree.end(idx);
                if let Some(n) = next {
                    self.tree.end(n);
                }
            }
            5 | 6 => {
                self.tree.end(idx);
                let other = if action == 5 { prev } else { next };
                if let Some(o) = other {
                    if self.tree.node(o).is_group() {
                        self.delete_group_children(o);
                    } else {
                        self.tree.end(o);
                    }
                }
            }
            7 => {
                let mut cur = Some(idx);
                while let Some(c) = cur {
                    cur = self.tree.node(c).prev;
                    self.tree.end(c);
                }
            }
            8 => {
                let mut cur = Some(idx);
                while let Some(c) = cur {
                    cur = self.tree.node(c).next;
                    self.tree.end(c);
                }
            }
            9 | 10 => {
                self.tree.end(idx);
                if let Some(o) = if action == 9 { prev } else { next } {
                    self.set_run(o, false);
                }
            }
            11 | 12 => {
                self.tree.end(idx);
                if let Some(o) = if action == 11 { prev } else { next } {
                    if self.tree.node(o).is_group() {
                        self.deep_free(o);
                    } else {
                        self.tree.end(o);
                    }
                }
            }
            13 => {
                if let Some(g) = parent {
                    let mut c = self.tree.group(g).and_then(|gd| gd.head);
                    while let Some(x) = c {
                        c = self.tree.node(x).next;
                        self.tree.end(x);
                    }
                }
            }
            14 => {
                if let Some(g) = parent {
                    self.tree.end(g);
                }
            }
            15 => {
                self.tree.end(idx);
                if let Some(n) = next {
                    self.set_run(n, true);
                }
            }
            _ => {}
        }
    }

    /// Moves on to the next block (scsynth's `mBufCounter`).
    pub fn advance_block_counter(&mut self) {
        self.world.buf_counter = self.world.buf_counter.wrapping_add(1);
    }
}
