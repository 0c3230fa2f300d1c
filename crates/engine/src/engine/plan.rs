//! The block's plan: what the walk did, kept while nothing changes, so
//! that the next block does it again without deciding it again.
//!
//! The walk (`Engine::walk_from`) decides every block, from the tree, what
//! each step of a sequential run is: a synth on its own, a lane batch (and
//! which synths join it, across group borders too), a group run its own
//! way (on the threads, as chains, fused with its siblings) or entered. All
//! of that depends only on the tree (its shape, states, satellites,
//! controls and mappings, which `NodeTree::edits` counts), on the lane
//! scratch's size and on whether synths may run side by side at all: while
//! those stay, the walk decides the same, so a block whose walk changed
//! nothing records its steps and the blocks after it replay them.
//!
//! A plan holds the items the runner computes (single nodes, and lane
//! batches with their synths held directly) between the walk's moves on its
//! stack, so that a block that replays it leaves the stack as the walk would
//! at every point: when an item changes the tree (a synth ends or pauses
//! itself or another node, a unit fails, a new synth is built), the walk
//! goes on from there, deciding again, and the plan is dropped. A group run
//! its own way is asked again every block (its way may change from block to
//! block without an edit: the threads or one thread), and when it answers
//! otherwise than it did, the walk goes on from its answer.
//!
//! Not recorded, and so never replayed: blocks that print (`/n_trace`,
//! `/g_dumpTree`), trees with satellites, walks deeper than the stack's room,
//! and plans longer than the room reserved for them (`Plan::new`).

use crate::node_tree::NodeIdx;
use crate::synth::Synth;

/// What a group did as the walk reached it (`Engine::group_way`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// Run its own way (on the threads, as chains, fused with the parallel
    /// groups after it): the walk goes on at this node.
    Done(Option<NodeIdx>),
    /// Entered: the walk pushed where to go on after it and goes on at its
    /// first child, naming its children first when it is traced.
    Entered(bool),
}

/// One move of the walk.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    /// A node run as the walk runs a child without satellites
    /// (`Engine::calc_node`), then the walk goes on at `next`.
    Node { node: NodeIdx, next: Option<NodeIdx> },
    /// A lane batch: the `len` synths from `at` in the plan's lists, then
    /// the walk goes on at `next`.
    Lanes { at: u32, len: u32, next: Option<NodeIdx> },
    /// A running group without satellites, and what it did.
    Group { group: NodeIdx, next: Option<NodeIdx>, way: Way },
    /// A group's children were done: the walk goes on where its stack says.
    Pop,
    /// A lane batch went on out of groups: the stack was cut to this height.
    Truncate(u32),
    /// A lane batch went on into a group: where to go on after it.
    Push(Option<NodeIdx>),
}

/// A synth held by a plan. Only the engine's thread uses it, while the
/// tree is unchanged since the plan was recorded.
#[derive(Clone, Copy)]
pub(super) struct Held(pub(super) *mut Synth);

// SAFETY: the pointer is only followed on the thread that runs the engine's
// blocks, and only while the plan is valid (the synth is alive and in place:
// deleting or adding a node is an edit, which drops the plan).
unsafe impl Send for Held {}

pub(super) struct Plan {
    pub(super) ops: Vec<Op>,
    /// The lane batches' synths and nodes, in order.
    pub(super) synths: Vec<Held>,
    pub(super) nodes: Vec<NodeIdx>,
    /// Whether the walk is recording this block.
    pub(super) recording: bool,
    /// Whether the plan holds a whole walk, which a block after a quiet one
    /// (`Engine::quiet`: the walk recorded changed nothing, nor did anything
    /// since) replays while what it was recorded under holds.
    pub(super) valid: bool,
    /// The lane scratch's size and whether synths may share lanes, as they
    /// were when the plan was recorded.
    pub(super) lane_len: usize,
    pub(super) lockstep: bool,
    /// Blocks that replayed a plan, and of those the blocks where the walk
    /// went on from the middle of it.
    pub(super) replays: u64,
    pub(super) resumed: u64,
}

impl Plan {
    /// Room for a tree of `max_nodes` nodes, at most 16,384 of them; a
    /// larger walk is not recorded. Never grown on the audio thread.
    pub(super) fn new(max_nodes: usize) -> Plan {
        let nodes = max_nodes.clamp(16, 1 << 14);
        Plan {
            ops: Vec::with_capacity(3 * nodes),
            synths: Vec::with_capacity(nodes),
            nodes: Vec::with_capacity(nodes),
            recording: false,
            valid: false,
            lane_len: 0,
            lockstep: false,
            replays: 0,
            resumed: 0,
        }
    }

    /// Whether the plan replays a walk, after a quiet block, with a lane
    /// scratch of `lane_len` samples.
    pub(super) fn holds(&self, lane_len: usize, lockstep: bool) -> bool {
        self.valid && self.lane_len == lane_len && self.lockstep == lockstep
    }

    /// Starts recording this block's walk, the plan held so far dropped.
    pub(super) fn begin(&mut self, record: bool) {
        self.valid = false;
        self.ops.clear();
        self.synths.clear();
        self.nodes.clear();
        self.recording = record;
    }

    /// Ends the recording: the plan is kept if the whole walk was recorded.
    pub(super) fn end(&mut self, lane_len: usize, lockstep: bool) {
        self.valid = self.recording;
        self.recording = false;
        self.lane_len = lane_len;
        self.lockstep = lockstep;
    }

    /// Records a move of the walk (nothing when not recording); a plan
    /// that outgrows its room is not kept.
    #[inline]
    pub(super) fn note(&mut self, op: Op) {
        if self.recording {
            if self.ops.len() < self.ops.capacity() {
                self.ops.push(op);
            } else {
                self.recording = false;
            }
        }
    }

    /// Records a lane batch of the walk, `nodes` with their `synths`.
    #[inline]
    pub(super) fn note_lanes(&mut self, nodes: &[NodeIdx], synths: &[*mut Synth], next: Option<NodeIdx>) {
        if !self.recording {
            return;
        }
        if self.synths.len() + nodes.len() > self.synths.capacity() {
            self.recording = false;
            return;
        }
        let at = self.synths.len() as u32;
        self.synths.extend(synths.iter().map(|&s| Held(s)));
        self.nodes.extend_from_slice(nodes);
        self.note(Op::Lanes { at, len: nodes.len() as u32, next });
    }

    /// The walk met what a plan does not hold: this block is not recorded.
    #[inline]
    pub(super) fn stop(&mut self) {
        self.recording = false;
    }
}
