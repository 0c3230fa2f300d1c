//! Parallel groups as the walk meets them: the threads, the work of the
//! groups run lately (kept while the tree is not edited), and for each
//! group the choice between the threads and one thread (`spread`).
//!
//! The engine hands a `/p_new` group to [`ParallelGroups::run`] and, once
//! it has run, carries out what its synths asked for in tree order, then
//! calls [`ParallelGroups::finish`]. Everything between is decided here:
//! whether the group qualifies (`parallel::GroupJobs::prepare`), which way
//! it runs, and running its compiled synths, on the executor's threads
//! (`parallel::Parallel::run_group`) or as one ordered run on the calling
//! thread, both through the same runner (`schedule`).

use crate::node_tree::{NodeIdx, NodeTree};
use crate::parallel::{GroupJobs, Parallel, KEPT_GROUP_JOBS};
use crate::spread::Way;
use magnetar_dsp::executor::ExecutorError;
use magnetar_rt::histogram::Histogram;
use magnetar_rt::trace;
use magnetar_ugens::{World, MAX_LANES};
use std::time::{Duration, Instant};

/// Refused groups remembered (`ParallelGroups::refused`): a tree with
/// more than this many refused parallel groups works the oldest out again.
const REFUSALS: usize = 16;

/// How the engine asked parallel groups to run (`EngineOptions`).
#[derive(Clone, Copy)]
pub(crate) struct Policy {
    /// A real-time driver: the one-thread way is tried only while it ends
    /// well within the period.
    pub realtime: bool,
    /// Measure both ways and run the faster (else always the threads).
    pub measured: bool,
    /// Always one thread.
    pub never: bool,
}

impl Policy {
    /// Whether the group these jobs belong to runs on one thread for now:
    /// its runs are measured, and the chooser keeps it there.
    fn keeps_one(&self, jobs: &GroupJobs) -> bool {
        self.measured && jobs.chooser.keeps_one()
    }
}

/// The threads and the parallel groups' kept work.
pub struct ParallelGroups {
    pool: Parallel,
    /// The work of the parallel groups computed lately, the most recent
    /// first: a group's is reused while the tree is not edited.
    jobs: Vec<GroupJobs>,
    policy: Policy,
    /// Whether a parallel group of this block is to run on the threads in
    /// the next block: if none is, the helpers sleep between blocks
    /// instead of spinning (`Executor::set_linger`).
    spread_next: bool,
    /// Groups, or consecutive sibling groups as one queue (`run_fused`),
    /// refused lately (the first, how many, the tree's edit count), and
    /// the next entry to replace: not worked out again until the tree is
    /// edited, which counts every change to a node that could decide it.
    refused: [Option<(NodeIdx, usize, u64)>; REFUSALS],
    refused_next: usize,
    /// Runs of several groups as one queue (`run_fused`).
    fused: u64,
}

/// A group that [`ParallelGroups::run`] ran, until [`ParallelGroups::finish`].
pub(crate) struct Ran {
    way: Way,
    /// When it started running; `None` for a block of a one-thread
    /// stretch, not timed.
    started: Option<Instant>,
    traced: u64,
    id: u32,
    items: u32,
    budget: Option<u64>,
    /// How long collecting and checking the group took, before it ran.
    pub prepare: Duration,
    /// False when some bus writes did not fit the merge buffers: the
    /// block's output is incomplete.
    pub complete: bool,
    /// Whether some synth may have failed or asked for something that the
    /// engine carries out after the group (`Engine::settle_group`).
    pub settle: bool,
    /// The one-thread way, left to the caller: it runs the group's
    /// children itself (its chains place by place), then `finish`.
    pub walk: bool,
}

impl Ran {
    /// Whether the block was timed (and its preparation with it).
    pub fn timed(&self) -> bool {
        self.started.is_some()
    }
}

impl ParallelGroups {
    /// Starts `threads` threads (the caller included) for a world like
    /// `like` with `buffers` buffers (see `Parallel::new`).
    pub(crate) fn new(
        threads: usize,
        like: &World,
        buffers: usize,
        exact: bool,
        policy: Policy,
    ) -> Result<ParallelGroups, ExecutorError> {
        let pool = Parallel::new(threads, like, policy.realtime, exact)?;
        let jobs = (0..KEPT_GROUP_JOBS)
            .map(|_| GroupJobs::new(like.num_audio_buses(), like.num_control_buses(), buffers))
            .collect();
        Ok(ParallelGroups {
            pool,
            jobs,
            policy,
            spread_next: false,
            refused: [None; REFUSALS],
            refused_next: 0,
            fused: 0,
        })
    }

    /// Tells the groups of this block whether every synth ran the whole of
    /// the block before and its controls did not change since
    /// (`Parallel::controls_known`).
    pub(crate) fn set_controls_known(&mut self, known: bool) {
        self.pool.controls_known = known;
    }

    /// The threads, for their figures and ids.
    pub fn pool(&self) -> &Parallel {
        &self.pool
    }

    /// How long each DSP queue compilation took (ns).
    pub fn compile_times(&self) -> &Histogram {
        &self.pool.compile_times
    }

    /// Times a group's work was worked out from the tree rather than reused.
    pub fn worked_out(&self) -> u64 {
        self.jobs.iter().map(|j| j.worked_out).sum()
    }

    /// Times consecutive sibling groups ran as one queue (`run_fused`), on
    /// the threads or on one.
    pub fn fused(&self) -> u64 {
        self.fused
    }

    /// Times a group's work was changed in place after an edit
    /// (`GroupJobs::update_in_place`).
    pub fn in_place(&self) -> u64 {
        self.jobs.iter().map(|j| j.in_place).sum()
    }

    /// From now on every change in place is checked against the work
    /// worked out from the tree (for tests: it allocates, and costs a full
    /// walk each time); `in_place_mismatches` counts those that differed.
    pub fn verify_in_place(&mut self) {
        for j in &mut self.jobs {
            j.verify_in_place();
        }
    }

    pub fn in_place_mismatches(&self) -> u64 {
        self.jobs.iter().map(|j| j.mismatches).sum()
    }

    /// After the engine built the synths in their first block of a group
    /// for which `may_spread_built` said yes: the group's jobs, worked
    /// out with them running, hold if they all run now.
    pub(crate) fn built_ahead(&mut self, group: NodeIdx, tree: &NodeTree) {
        let (at, known) = self.slot_for(group, 1);
        if let Some(jobs) = self.jobs.get_mut(at).filter(|_| known) {
            jobs.built_ahead(tree, group);
        }
    }

    /// At the end of a block: the helpers spin for the next block only if
    /// a group will run on them.
    pub fn end_block(&mut self) {
        self.pool.set_linger(self.spread_next);
        self.spread_next = false;
    }

    /// Runs parallel group `group` if its subtree qualifies (see
    /// `GroupJobs::prepare`): on the threads, or on this one when its
    /// recent blocks ran faster so (`spread`). `None`, having done
    /// nothing, when it does not qualify. `scratch_len` is the size of one
    /// synth's audio-wire scratch; `lane_scratch` holds `MAX_LANES` of them
    /// per thread when a group qualifies.
    pub(crate) fn run(
        &mut self,
        group: NodeIdx,
        tree: &mut NodeTree,
        world: &mut World,
        lane_scratch: &mut [f32],
        scratch_len: usize,
        walk_one: bool,
    ) -> Option<Ran> {
        let unit = (group, 1, tree.edits());
        if self.refused.contains(&Some(unit)) {
            return None;
        }
        let ran = self.run_unit(&[group], tree, world, lane_scratch, scratch_len, walk_one);
        self.note_refusal(ran.is_none(), unit);
        ran
    }

    /// Remembers `unit` as refused if it did not run and left no jobs (a
    /// group on one thread for now keeps them, with its chooser): a group
    /// that does not qualify (a def that may not run on the threads, a
    /// buffer two items use) is then not worked out again in every block.
    fn note_refusal(&mut self, refused: bool, unit: (NodeIdx, usize, u64)) {
        let (first, count, _) = unit;
        let kept = self.jobs.first().is_some_and(|j| j.prepared_for() == Some((first, count)));
        if refused && !kept {
            let at = self.refused_next % self.refused.len();
            self.refused[at] = Some(unit);
            self.refused_next = at + 1;
        }
    }

    /// Runs consecutive sibling parallel groups `groups` (two or more,
    /// without satellites, none to be traced or dumped) as one queue
    /// (`GroupJobs::prepare_fused`), as `run` runs one: `None`, having
    /// done nothing, when they do not qualify together (a synth of one
    /// reads what a synth of an earlier one writes, say), or they run on
    /// one thread for now and were edited; the engine then runs them one
    /// by one. Their synths are those of `nodes`, in tree order.
    pub(crate) fn run_fused(
        &mut self,
        groups: &[NodeIdx],
        tree: &mut NodeTree,
        world: &mut World,
        lane_scratch: &mut [f32],
        scratch_len: usize,
    ) -> Option<Ran> {
        let &first = groups.first()?;
        let unit = (first, groups.len(), tree.edits());
        if groups.len() < 2 || self.policy.never || self.refused.contains(&Some(unit)) {
            return None;
        }
        // A new note (built ahead only for its own group) keeps them apart
        // for its first block: found before the jobs, kept with their
        // chooser, are given up.
        if !groups.iter().all(|&g| GroupJobs::children_may_run(tree, g)) {
            return None;
        }
        let ran = self.run_unit(groups, tree, world, lane_scratch, scratch_len, false);
        self.fused += u64::from(ran.is_some());
        self.note_refusal(ran.is_none(), unit);
        ran
    }

    /// `run` for one group, or `run_fused` for several. With `walk_one`,
    /// the one-thread way is left to the caller (`Ran::walk`).
    fn run_unit(
        &mut self,
        groups: &[NodeIdx],
        tree: &mut NodeTree,
        world: &mut World,
        lane_scratch: &mut [f32],
        scratch_len: usize,
        walk_one: bool,
    ) -> Option<Ran> {
        let &group = groups.first()?;
        // This group's jobs to the front (a rotation moves no storage).
        let (at, known) = self.slot_for(group, groups.len());
        if at > 0 {
            if let Some(kept) = self.jobs.get_mut(..=at) {
                kept.rotate_right(1);
            }
        }
        let fits = self.fits(world, lane_scratch.len(), scratch_len);
        let jobs = self.jobs.first_mut()?;
        if !known {
            jobs.chooser.reset();
        }
        // A group that runs on this thread for now is not timed
        // (`Chooser::skip_one`): no clock is read. It needs no jobs: after
        // an edit it runs as a plain group, and its jobs are worked out
        // again only for the blocks timed before the next look at the
        // threads. Its kept jobs stay its own, with its chooser.
        let threads = self.pool.threads();
        let keep_one = known && self.policy.keeps_one(jobs);
        let current = keep_one && jobs.current_fused(tree, groups, scratch_len, threads);
        if keep_one && !current {
            jobs.chooser.skip_one();
            return None;
        }
        let started = (!keep_one).then(Instant::now);
        // Kept jobs found current need no second look (`prepare_fused`).
        let ok = fits && (current || jobs.prepare_fused(tree, groups, scratch_len, threads)) && jobs.items() >= 2;
        if !ok {
            jobs.clear();
            return None;
        }
        // One clock read ends the preparation and starts the run.
        let ran_from = started.map(|_| Instant::now());
        let prepare = started.zip(ran_from).map_or(Duration::ZERO, |(s, r)| r.saturating_duration_since(s));
        jobs.chooser.note_items(jobs.items());
        // In real time the one-thread way is tried only while it is sure to
        // end well within the period.
        let budget = self.policy.realtime.then(|| (world.block_size as f64 / world.sample_rate * 0.5e9) as u64);
        let way = if self.policy.never || keep_one {
            Way::One
        } else if self.policy.measured {
            jobs.chooser.way(threads, budget)
        } else {
            Way::Spread
        };
        let mut ran = Ran {
            way,
            started: ran_from,
            traced: trace::now(),
            id: tree.node(group).id as u32,
            items: jobs.items() as u32,
            budget,
            prepare,
            complete: true,
            settle: true,
            walk: false,
        };
        if way == Way::One && walk_one {
            // The caller runs the group's children and carries out what
            // they asked for.
            ran.walk = true;
            ran.settle = false;
        } else if way == Way::One {
            // The group's synths as one ordered run on this thread, in the
            // sequential order, lane batches and all: the parallel groups
            // inside run here too, their time part of this way's.
            // SAFETY: the jobs were prepared from this tree just now, and
            // nothing touches it until the run is done; every synth has at
            // most `scratch_len` samples of wires (`GroupJobs::prepare`),
            // which the lane scratch holds `MAX_LANES` times over.
            unsafe {
                crate::schedule::run_ordered(
                    jobs.synths(),
                    world,
                    lane_scratch,
                    self.pool.controls_known,
                    crate::schedule::Walk::Up,
                )
            };
            // Looked at here, through the synths just run, rather than by
            // the engine through the tree for each of them: in most blocks
            // none failed or asked for anything.
            // SAFETY: the group's synths, alive until the engine settles it.
            ran.settle = !jobs.ended.is_empty()
                || jobs.synths().iter().any(|&s| unsafe { (*s).has_failed() || (*s).has_requests() });
        } else {
            // Each thread gets an equal share of the lane scratch (room for
            // `MAX_LANES` synths, checked above) for its lane batches.
            let share = lane_scratch.len() / threads;
            // SAFETY: the jobs were prepared from this tree just now, and
            // nothing touches it until the call returns; the lane scratch
            // holds `share` samples for each thread.
            ran.complete = unsafe { self.pool.run_group(jobs, world, lane_scratch.as_mut_ptr(), share) };
            ran.settle = self.pool.unsettled() || !jobs.ended.is_empty();
        }
        Some(ran)
    }

    /// Whether parallel group `group` would spread, as `run` works it out,
    /// once its direct synth children in their first block are built
    /// (`GroupJobs::prepare_as_built`); false when it holds none, or the
    /// jobs worked out for it are current (no node was added since).
    pub(crate) fn may_spread_built(
        &mut self,
        group: NodeIdx,
        tree: &mut NodeTree,
        world: &World,
        lane_scratch_len: usize,
        scratch_len: usize,
    ) -> bool {
        let threads = self.pool.threads();
        // The jobs `run` will take for this group (which `run` then finds
        // as the group's).
        let (at, known) = self.slot_for(group, 1);
        let Some(jobs) = self.jobs.get(at) else { return false };
        // Most blocks: nothing was edited since the jobs were worked out.
        if known && (jobs.current(tree, group, scratch_len, threads) || self.policy.keeps_one(jobs)) {
            return false;
        }
        if !self.fits(world, lane_scratch_len, scratch_len) {
            return false;
        }
        let Some(jobs) = self.jobs.get_mut(at) else { return false };
        let Some(ok) = jobs.prepare_as_built(tree, group, scratch_len, threads) else { return false };
        if !known {
            jobs.chooser.reset();
        }
        ok
    }

    /// Whether a group whose synths have at most `scratch_len` samples of
    /// wires may run on the threads: the lane scratch holds `MAX_LANES` of
    /// them per thread, and the threads' worlds match `world`'s rates.
    fn fits(&self, world: &World, lane_scratch_len: usize, scratch_len: usize) -> bool {
        self.pool.threads() * scratch_len * MAX_LANES <= lane_scratch_len && self.pool.matches(world)
    }

    /// The jobs for `group`, or for the `count` consecutive sibling groups
    /// from it run as one queue: their own kept ones (true), or else the
    /// least recently used ones (false), whose chooser then starts over.
    fn slot_for(&self, group: NodeIdx, count: usize) -> (usize, bool) {
        match self.jobs.iter().position(|j| j.prepared_for() == Some((group, count))) {
            Some(at) => (at, true),
            None => (self.jobs.len().saturating_sub(1), false),
        }
    }

    /// Work items of the group run last (for tests).
    pub fn last_items(&self) -> usize {
        self.jobs.first().map_or(0, |j| j.items())
    }

    /// The synths of the group just run, in tree order: the engine carries
    /// out what they asked for, and ends those whose unit failed.
    pub(crate) fn nodes(&self) -> &[NodeIdx] {
        self.jobs.first().map_or(&[], |j| &j.nodes[..])
    }

    /// The synths of the group just run that had ended in an earlier block,
    /// each after how many of `nodes` it comes in tree order: the engine
    /// deletes them there.
    pub(crate) fn ended(&self) -> &[(u32, NodeIdx)] {
        self.jobs.first().map_or(&[], |j| &j.ended[..])
    }

    /// After the engine settled the group just run: its time goes to the
    /// chooser, and whether it runs on the threads in the next block to
    /// the helpers' idling.
    pub(crate) fn finish(&mut self, ran: Ran) {
        let kind = if ran.way == Way::One { trace::Kind::GroupOne } else { trace::Kind::GroupSpread };
        trace::span(kind, ran.traced, ran.id, ran.items);
        let Some(started) = ran.started else {
            if let Some(jobs) = self.jobs.first_mut() {
                jobs.chooser.skip_one();
            }
            return;
        };
        // The threads' blocks pay for working out the jobs (after an edit);
        // the one-thread way runs as a plain group then and does not.
        let prepare = if ran.way == Way::One { 0 } else { ran.prepare.as_nanos() as u64 };
        let ns = started.elapsed().as_nanos() as u64 + prepare;
        let wait = if ran.way == Way::One { 0 } else { self.pool.last_wait_ns() };
        let threads = self.pool.threads();
        let Some(jobs) = self.jobs.first_mut() else { return };
        jobs.chooser.record(ran.way, ns, wait);
        let spread = if self.policy.never {
            false
        } else if self.policy.measured {
            jobs.chooser.way(threads, ran.budget) == Way::Spread
        } else {
            true
        };
        self.spread_next |= spread;
    }
}
