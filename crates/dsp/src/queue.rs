//! The DSP queue compiler: turns a tree of sequential and parallel groups
//! (plus satellite items) into a [`Plan`], a compact dependency graph of
//! *queue items* that the [executor](crate::executor) runs.
//!
//! # Rules
//!
//! * A sequential group runs its children in order. Consecutive leaf items
//!   (also across nested sequential groups) merge into one queue item, a run
//!   executed in order by one thread, so they cost one scheduling step.
//! * Each child of a parallel group starts its own queue item; the children
//!   have no order among themselves.
//! * Whatever follows a subtree waits for that subtree's *exits* (its items
//!   that nothing inside the subtree waits for); a subtree's *entries* wait
//!   for whatever precedes it.
//! * When `n > 1` exits would each have to release `m > 1` entries (two
//!   consecutive parallel groups), a *barrier* queue item without work is put
//!   between them, so `n·m` edges become `n + m` (the quadratic pitfall of
//!   the Supernova thesis, §5.2). The barrier is used only when `n·m > n+m`.
//! * A satellite runs before (or after) its reference item and has no other
//!   relation to the tree. A reference with satellites before it starts a new
//!   run, and one with satellites after it ends its run, so satellites wait
//!   for exactly what they must and nothing more. Satellites may have
//!   satellites. A satellite whose reference is not in the tree is omitted
//!   (it shares its reference's life and pause state).
//! * Empty groups cost nothing; the caller leaves paused nodes out.
//! * An *order* ([`FlatTree::order`]) makes one item wait for another that
//!   comes earlier in the tree, where the groups alone would let them run
//!   side by side (a reader of what a sibling in a parallel group writes):
//!   one more edge, between the queue items that run them.
//!
//! # Storage
//!
//! [`Plan::compile_into`] reuses every vector of the plan, including its
//! scratch space: once a plan has compiled a tree of some size, compiling any
//! tree that is not larger does not allocate. [`Plan::with_capacity`] reserves
//! up front. A larger tree grows the vectors (and so allocates) rather than
//! failing.

use crate::ready::ReadyStack;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

/// The work item a queue item runs: for the engine, a synth slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemId(pub u32);

/// A tree description for the compiler: groups nest, leaves are work items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeNode {
    /// A leaf: one work item.
    Item(ItemId),
    /// A sequential group: children run in order.
    Seq(Vec<TreeNode>),
    /// A parallel group: children may run concurrently, in any order.
    Par(Vec<TreeNode>),
}

/// Which side of its reference a satellite runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The satellite runs before its reference (a satellite predecessor).
    Before,
    /// The satellite runs after its reference (a satellite successor).
    After,
}

/// A work item attached to one reference item, with no other order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Satellite {
    /// The satellite's own work item.
    pub item: ItemId,
    /// The item it runs before or after; may itself be a satellite.
    pub reference: ItemId,
    /// Before or after the reference.
    pub side: Side,
}

/// A tree plus its satellites: the compiler's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// The root; usually a [`TreeNode::Seq`] (the root group).
    pub root: TreeNode,
    /// Satellites, in the order they should be attached.
    pub satellites: Vec<Satellite>,
}

/// Why a tree could not be compiled; the plan is left empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// `end` without a matching `begin_*`, or a `begin_*` never ended.
    #[error("unbalanced tree: {0}")]
    Unbalanced(&'static str),
    /// Groups nest deeper than [`MAX_DEPTH`].
    #[error("groups nest deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Satellites refer to each other in a cycle.
    #[error("satellite item {0} is part of a cycle of satellites")]
    SatelliteCycle(u32),
    /// More queue items than the executor can index.
    #[error("the tree needs more than {MAX_QUEUE_ITEMS} queue items")]
    TooManyItems,
    /// An order names an item missing from the tree, or puts an item
    /// before one that comes earlier in the tree.
    #[error("item {0} cannot be ordered before item {1}: the tree lacks one or runs them the other way")]
    Order(u32, u32),
}

/// Deepest group nesting the compiler accepts (it recurses once per level).
pub const MAX_DEPTH: usize = 512;
/// Largest number of queue items in a plan.
pub const MAX_QUEUE_ITEMS: usize = (u32::MAX - 1) as usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Item(ItemId),
    /// A group; `end` is the index after its last descendant, `entries` how
    /// many queue items inside it wait for what precedes it.
    Group { par: bool, end: u32, entries: u32 },
}

/// A tree in flat, reusable form: the compiler's working representation,
/// and a way for a caller to describe a tree without building nested vectors.
///
/// ```
/// use magnetar_dsp::queue::{FlatTree, ItemId, Plan};
///
/// let mut tree = FlatTree::new();
/// tree.begin_seq();
/// tree.item(ItemId(1));
/// tree.begin_par();
/// tree.item(ItemId(2));
/// tree.item(ItemId(3));
/// tree.end().unwrap();
/// tree.end().unwrap();
/// let mut plan = Plan::new();
/// plan.compile_flat(&tree).unwrap();
/// assert_eq!(plan.len(), 3); // [1], [2], [3]
/// assert_eq!(plan.initially_ready(), &[0]);
/// ```
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FlatTree {
    tokens: Vec<Token>,
    open: Vec<u32>,
    satellites: Vec<Satellite>,
    /// (before, after): `after` waits for `before` (`order`).
    orders: Vec<(ItemId, ItemId)>,
}

impl FlatTree {
    /// An empty tree (an implicit sequential root).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty tree with room for `nodes` items and groups and `satellites`.
    pub fn with_capacity(nodes: usize, satellites: usize) -> Self {
        Self {
            tokens: Vec::with_capacity(nodes),
            open: Vec::with_capacity(64),
            satellites: Vec::with_capacity(satellites),
            orders: Vec::new(),
        }
    }

    /// Room for `orders` orders ([`order`](Self::order)) before they
    /// allocate.
    pub fn reserve_orders(&mut self, orders: usize) {
        self.orders.reserve(orders);
    }

    /// Removes everything, keeping the storage.
    pub fn clear(&mut self) {
        self.tokens.clear();
        self.open.clear();
        self.satellites.clear();
        self.orders.clear();
    }

    /// Makes this tree equal to `other`, reusing this tree's storage (no
    /// allocation when it has room).
    pub fn copy_from(&mut self, other: &FlatTree) {
        self.tokens.clone_from(&other.tokens);
        self.open.clone_from(&other.open);
        self.satellites.clone_from(&other.satellites);
        self.orders.clone_from(&other.orders);
    }

    /// Opens a sequential group.
    pub fn begin_seq(&mut self) {
        self.begin(false);
    }

    /// Opens a parallel group.
    pub fn begin_par(&mut self) {
        self.begin(true);
    }

    fn begin(&mut self, par: bool) {
        self.open.push(self.tokens.len() as u32);
        self.tokens.push(Token::Group { par, end: 0, entries: 0 });
    }

    /// Adds a leaf to the innermost open group.
    pub fn item(&mut self, id: ItemId) {
        self.tokens.push(Token::Item(id));
    }

    /// Makes item `after` wait for item `before`, which comes earlier in
    /// the tree (checked when the tree is compiled), beyond what the
    /// groups order.
    pub fn order(&mut self, before: ItemId, after: ItemId) {
        self.orders.push((before, after));
    }

    /// The orders given so far, in the order given.
    pub fn orders(&self) -> &[(ItemId, ItemId)] {
        &self.orders
    }

    /// Attaches a satellite item.
    pub fn satellite(&mut self, satellite: Satellite) {
        self.satellites.push(satellite);
    }

    /// Closes the innermost open group.
    pub fn end(&mut self) -> Result<(), CompileError> {
        let start = self
            .open
            .pop()
            .ok_or(CompileError::Unbalanced("end without a group"))? as usize;
        let end = self.tokens.len();
        let Token::Group { par, .. } = self.tokens[start] else {
            return Err(CompileError::Unbalanced("open group is not a group"));
        };
        // Entries: a sequence's come from its first non-empty child, a
        // parallel group's from all children.
        let mut entries = 0u32;
        let mut pos = start + 1;
        while pos < end {
            let (child_entries, child_end) = self.extent(pos);
            if par {
                entries = entries.saturating_add(child_entries);
            } else if entries == 0 {
                entries = child_entries;
            }
            pos = child_end;
        }
        self.tokens[start] = Token::Group { par, end: end as u32, entries };
        Ok(())
    }

    /// Entries and end index of the node at `pos`.
    fn extent(&self, pos: usize) -> (u32, usize) {
        match self.tokens[pos] {
            Token::Item(_) => (1, pos + 1),
            Token::Group { end, entries, .. } => (entries, end as usize),
        }
    }

    /// Replaces the contents with `tree`.
    pub fn set_tree(&mut self, tree: &Tree) -> Result<(), CompileError> {
        self.clear();
        self.push_node(&tree.root, 0)?;
        self.satellites.extend_from_slice(&tree.satellites);
        Ok(())
    }

    fn push_node(&mut self, node: &TreeNode, depth: usize) -> Result<(), CompileError> {
        if depth > MAX_DEPTH {
            return Err(CompileError::TooDeep);
        }
        match node {
            TreeNode::Item(id) => self.item(*id),
            TreeNode::Seq(children) | TreeNode::Par(children) => {
                self.begin(matches!(node, TreeNode::Par(_)));
                for child in children {
                    self.push_node(child, depth + 1)?;
                }
                self.end()?;
            }
        }
        Ok(())
    }
}

/// Scratch space of the compiler, kept in the plan so it is reused.
#[derive(Debug, Default)]
struct Scratch {
    flat: FlatTree,
    /// Stack of queue item indices: predecessor sets and exit sets.
    frontier: Vec<u32>,
    /// (from, to) pairs in creation order, before sorting by source.
    edges: Vec<(u32, u32)>,
    /// Satellites sorted by reference, for lookup.
    satellites: Vec<Satellite>,
    /// Fill cursor per queue item while building successor lists.
    cursor: Vec<u32>,
    /// Per work item id, the queue item that runs it (for orders).
    queue_of: Vec<u32>,
}

/// The compiled DSP queue: queue items (runs of work items executed in
/// order), successor lists, initial activation counts and the initially
/// ready items, plus the per-block atomics the executor uses.
#[derive(Debug)]
pub struct Plan {
    /// Queue item q runs `ids[item_start[q]..item_start[q + 1]]`.
    item_start: Vec<u32>,
    ids: Vec<ItemId>,
    /// Successors of q are `succs[succ_start[q]..succ_start[q + 1]]`.
    succ_start: Vec<u32>,
    succs: Vec<u32>,
    initial_counts: Vec<u32>,
    initially_ready: Vec<u32>,
    sinks: u32,
    barriers: u32,
    // Per-block state of the executor (reset every block).
    pub(crate) counts: Vec<AtomicU32>,
    pub(crate) ready: ReadyStack,
    scratch: Scratch,
}

impl Default for Plan {
    fn default() -> Self {
        Self::new()
    }
}

impl Plan {
    /// An empty plan.
    pub fn new() -> Self {
        Self::with_capacity(0, 0)
    }

    /// A plan with room for trees of up to `items` work items and groups,
    /// and `edges` dependency edges, before it needs to allocate.
    pub fn with_capacity(items: usize, edges: usize) -> Self {
        // Barriers and satellites add queue items; every queue item holds at
        // least one work item or is a barrier between two groups.
        let queue = items + 1;
        let mut counts = Vec::with_capacity(queue);
        counts.resize_with(queue, || AtomicU32::new(0));
        let mut plan = Self {
            item_start: Vec::with_capacity(queue + 1),
            ids: Vec::with_capacity(items),
            succ_start: Vec::with_capacity(queue + 1),
            succs: Vec::with_capacity(edges),
            initial_counts: Vec::with_capacity(queue),
            initially_ready: Vec::with_capacity(queue),
            sinks: 0,
            barriers: 0,
            counts,
            ready: ReadyStack::new(queue),
            scratch: Scratch {
                flat: FlatTree::with_capacity(items, items),
                frontier: Vec::with_capacity(queue + edges),
                edges: Vec::with_capacity(edges),
                satellites: Vec::with_capacity(items),
                cursor: Vec::with_capacity(queue),
                queue_of: Vec::with_capacity(items),
            },
        };
        plan.clear();
        plan
    }

    /// Number of queue items.
    pub fn len(&self) -> usize {
        self.initial_counts.len()
    }

    /// Whether the plan has no queue items (nothing to run).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The work items queue item `q` runs, in order (empty for a barrier).
    #[inline]
    pub fn run(&self, q: u32) -> &[ItemId] {
        let q = q as usize;
        &self.ids[self.item_start[q] as usize..self.item_start[q + 1] as usize]
    }

    /// The queue items that wait for `q`.
    #[inline]
    pub fn successors(&self, q: u32) -> &[u32] {
        let q = q as usize;
        &self.succs[self.succ_start[q] as usize..self.succ_start[q + 1] as usize]
    }

    /// How many queue items `q` waits for.
    pub fn initial_count(&self, q: u32) -> u32 {
        self.initial_counts[q as usize]
    }

    /// Queue items that wait for nothing, in creation order.
    pub fn initially_ready(&self) -> &[u32] {
        &self.initially_ready
    }

    /// Queue items that nothing waits for; the block is done when all ran.
    pub fn sinks(&self) -> u32 {
        self.sinks
    }

    /// Number of dependency edges.
    pub fn edge_count(&self) -> usize {
        self.succs.len()
    }

    /// Number of barrier items inserted between consecutive parallel groups.
    pub fn barrier_count(&self) -> u32 {
        self.barriers
    }

    /// Number of work items over all queue items.
    pub fn work_item_count(&self) -> usize {
        self.ids.len()
    }

    fn clear(&mut self) {
        self.item_start.clear();
        self.item_start.push(0);
        self.ids.clear();
        self.succ_start.clear();
        self.succs.clear();
        self.initial_counts.clear();
        self.initially_ready.clear();
        self.sinks = 0;
        self.barriers = 0;
    }

    /// Compiles `tree`, replacing the previous plan and reusing its storage.
    pub fn compile_into(&mut self, tree: &Tree) -> Result<(), CompileError> {
        let mut flat = std::mem::take(&mut self.scratch.flat);
        let result = flat.set_tree(tree).and_then(|()| self.compile_flat(&flat));
        self.scratch.flat = flat;
        if result.is_err() {
            self.clear();
        }
        result
    }

    /// Compiles a tree given in flat form, replacing the previous plan.
    // Kept out of line so that profiles (bench/prepare_bench.py) show its cost.
    #[inline(never)]
    pub fn compile_flat(&mut self, tree: &FlatTree) -> Result<(), CompileError> {
        self.clear();
        let result = self.compile_inner(tree);
        if result.is_err() {
            self.clear();
        }
        result
    }

    fn compile_inner(&mut self, tree: &FlatTree) -> Result<(), CompileError> {
        if !tree.open.is_empty() {
            return Err(CompileError::Unbalanced("a group was never ended"));
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.frontier.clear();
        scratch.edges.clear();
        scratch.satellites.clear();
        scratch.satellites.extend_from_slice(&tree.satellites);
        // Stable, so satellites of one reference keep the caller's order.
        scratch.satellites.sort_by_key(|s| s.reference);
        let mut c = Compiler {
            tokens: &tree.tokens,
            sats: &scratch.satellites,
            frontier: &mut scratch.frontier,
            edges: &mut scratch.edges,
            plan: self,
            open: None,
            sat_depth: 0,
        };
        let result = c
            .seq(0, tree.tokens.len(), 0..0, 0)
            .and_then(|_| self.order_edges(&tree.orders, &mut scratch.queue_of, &mut scratch.edges));
        if result.is_ok() {
            self.link(&scratch.edges, &mut scratch.cursor);
        }
        self.scratch = scratch;
        result
    }

    /// Adds the edges of `orders`, from the queue item running the first
    /// item of each to the one running the second, once the tree's items
    /// are in their queue items. Queue items are made in the tree's order,
    /// as the tree's own edges go: an order from a later queue item to an
    /// earlier one could close a cycle, and is refused.
    fn order_edges(
        &self,
        orders: &[(ItemId, ItemId)],
        queue_of: &mut Vec<u32>,
        edges: &mut Vec<(u32, u32)>,
    ) -> Result<(), CompileError> {
        if orders.is_empty() {
            return Ok(());
        }
        const NONE: u32 = u32::MAX;
        let ids = self.ids.iter().map(|id| id.0 as usize + 1).max().unwrap_or(0);
        queue_of.clear();
        queue_of.resize(ids, NONE);
        for q in 0..self.item_start.len() - 1 {
            for id in self.run(q as u32) {
                queue_of[id.0 as usize] = q as u32;
            }
        }
        let queue = |id: ItemId| queue_of.get(id.0 as usize).copied().unwrap_or(NONE);
        for &(before, after) in orders {
            let (from, to) = (queue(before), queue(after));
            if from == NONE || to == NONE || from > to {
                return Err(CompileError::Order(before.0, after.0));
            }
            // In one run, they run in the tree's order already.
            if from < to {
                edges.push((from, to));
            }
        }
        Ok(())
    }

    /// Builds successor lists, activation counts and the ready list from
    /// the edge pairs (a counting sort by source, stable in edge order).
    fn link(&mut self, edges: &[(u32, u32)], cursor: &mut Vec<u32>) {
        let n = self.item_start.len() - 1;
        self.initial_counts.clear();
        self.initial_counts.resize(n, 0);
        self.succ_start.clear();
        self.succ_start.resize(n + 1, 0);
        for &(from, to) in edges {
            self.succ_start[from as usize + 1] += 1;
            self.initial_counts[to as usize] += 1;
        }
        for q in 0..n {
            self.succ_start[q + 1] += self.succ_start[q];
        }
        cursor.clear();
        cursor.extend_from_slice(&self.succ_start[..n]);
        self.succs.clear();
        self.succs.resize(edges.len(), 0);
        for &(from, to) in edges {
            let at = &mut cursor[from as usize];
            self.succs[*at as usize] = to;
            *at += 1;
        }
        self.initially_ready.clear();
        self.sinks = 0;
        for q in 0..n {
            if self.initial_counts[q] == 0 {
                self.initially_ready.push(q as u32);
            }
            if self.succ_start[q] == self.succ_start[q + 1] {
                self.sinks += 1;
            }
        }
        if self.counts.len() < n {
            self.counts.resize_with(n, || AtomicU32::new(0));
        }
        self.ready.resize(n.max(self.ready.capacity()));
    }

    /// Resets the activation counts and the ready stack for a new block.
    pub(crate) fn reset_block(&self) {
        for (count, &initial) in self.counts.iter().zip(&self.initial_counts) {
            count.store(initial, Ordering::Relaxed);
        }
        self.ready.reset();
    }
}

/// Compiles `tree` into `plan`, reusing the plan's storage (see [`Plan`]).
pub fn compile_into(tree: &Tree, plan: &mut Plan) -> Result<(), CompileError> {
    plan.compile_into(tree)
}

struct Compiler<'a> {
    tokens: &'a [Token],
    sats: &'a [Satellite],
    /// Stack of queue indices; every compile step leaves its exits on top.
    frontier: &'a mut Vec<u32>,
    edges: &'a mut Vec<(u32, u32)>,
    plan: &'a mut Plan,
    /// The last created queue item, while later leaves of the same sequence
    /// may still be appended to it.
    open: Option<u32>,
    sat_depth: usize,
}

impl Compiler<'_> {
    /// Creates a queue item (empty: a barrier) waiting for `preds`.
    fn new_item(&mut self, preds: Range<usize>) -> Result<u32, CompileError> {
        let q = self.plan.item_start.len() - 1;
        if q >= MAX_QUEUE_ITEMS {
            return Err(CompileError::TooManyItems);
        }
        let q = q as u32;
        self.plan.item_start.push(self.plan.ids.len() as u32);
        for i in preds {
            self.edges.push((self.frontier[i], q));
        }
        self.open = None;
        Ok(q)
    }

    fn append_work(&mut self, q: u32, id: ItemId) {
        debug_assert_eq!(q as usize, self.plan.item_start.len() - 2, "only the last item grows");
        self.plan.ids.push(id);
        // `item_start` is never empty: it starts with one entry.
        if let Some(end) = self.plan.item_start.last_mut() {
            *end += 1;
        }
    }

    fn satellites_of(&self, id: ItemId) -> &'_ [Satellite] {
        let lo = self.sats.partition_point(|s| s.reference < id);
        let hi = lo + self.sats[lo..].partition_point(|s| s.reference == id);
        &self.sats[lo..hi]
    }

    /// Compiles the node at `pos`; returns its end and its exits, which are
    /// the top `len` entries of the frontier starting where it stood on entry.
    fn node(
        &mut self,
        pos: usize,
        preds: Range<usize>,
        in_seq: bool,
        depth: usize,
    ) -> Result<(usize, Range<usize>), CompileError> {
        if depth > MAX_DEPTH {
            return Err(CompileError::TooDeep);
        }
        match self.tokens[pos] {
            Token::Item(id) => {
                let q = self.leaf(id, preds, in_seq)?;
                let base = self.frontier.len();
                self.frontier.push(q);
                Ok((pos + 1, base..base + 1))
            }
            Token::Group { par: false, end, .. } => {
                let exits = self.seq(pos + 1, end as usize, preds, depth + 1)?;
                Ok((end as usize, exits))
            }
            Token::Group { par: true, end, entries } => {
                let exits = self.par(pos + 1, end as usize, entries, preds, depth + 1)?;
                Ok((end as usize, exits))
            }
        }
    }

    fn seq(
        &mut self,
        start: usize,
        end: usize,
        preds: Range<usize>,
        depth: usize,
    ) -> Result<Range<usize>, CompileError> {
        let base = self.frontier.len();
        let mut cur = preds;
        let mut pos = start;
        while pos < end {
            let (next, exits) = self.node(pos, cur.clone(), true, depth)?;
            // Exits sit on top of the frontier; keep only them, at `base`.
            let len = exits.len();
            self.frontier.copy_within(exits, base);
            self.frontier.truncate(base + len);
            cur = base..base + len;
            pos = next;
        }
        if cur.start < base {
            // An empty sequence passes its predecessors through.
            self.frontier.extend_from_within(cur);
            return Ok(base..self.frontier.len());
        }
        Ok(cur)
    }

    fn par(
        &mut self,
        start: usize,
        end: usize,
        entries: u32,
        preds: Range<usize>,
        depth: usize,
    ) -> Result<Range<usize>, CompileError> {
        let base = self.frontier.len();
        if entries == 0 {
            self.frontier.extend_from_within(preds);
            return Ok(base..self.frontier.len());
        }
        self.open = None;
        let (n, m) = (preds.len(), entries as usize);
        let preds = if n > 1 && m > 1 && n.saturating_mul(m) > n + m {
            let barrier = self.new_item(preds)?;
            self.plan.barriers += 1;
            self.frontier.push(barrier);
            base..base + 1
        } else {
            preds
        };
        let acc = self.frontier.len();
        let mut acc_end = acc;
        let mut pos = start;
        while pos < end {
            self.open = None;
            let (next, exits) = self.node(pos, preds.clone(), false, depth)?;
            let len = exits.len();
            self.frontier.copy_within(exits, acc_end);
            acc_end += len;
            self.frontier.truncate(acc_end);
            pos = next;
        }
        self.open = None;
        let len = acc_end - acc;
        self.frontier.copy_within(acc..acc_end, base);
        self.frontier.truncate(base + len);
        Ok(base..base + len)
    }

    /// Places a tree leaf: appended to the open run when it is in a sequence
    /// right after it, otherwise a new queue item.
    fn leaf(&mut self, id: ItemId, preds: Range<usize>, in_seq: bool) -> Result<u32, CompileError> {
        let sats = self.satellites_of(id);
        let has_before = sats.iter().any(|s| s.side == Side::Before);
        let has_after = sats.iter().any(|s| s.side == Side::After);
        let mergeable = match self.open {
            Some(open) => in_seq && !has_before && preds.len() == 1 && self.frontier[preds.start] == open,
            None => false,
        };
        let q = if let Some(q) = self.open.filter(|_| mergeable) {
            self.append_work(q, id);
            q
        } else {
            self.item_with_satellites_before(id, preds)?
        };
        self.open = in_seq.then_some(q);
        if has_after {
            self.satellites_after(id, q)?;
            self.open = None;
        }
        Ok(q)
    }

    /// A new queue item for `id`, waiting for `preds` and for the
    /// satellites that run before `id`.
    fn item_with_satellites_before(&mut self, id: ItemId, preds: Range<usize>) -> Result<u32, CompileError> {
        let base = self.frontier.len();
        let sats = self.sats;
        let lo = sats.partition_point(|s| s.reference < id);
        for s in sats[lo..].iter().take_while(|s| s.reference == id) {
            if s.side == Side::Before {
                let sq = self.satellite(s.item, None)?;
                self.frontier.push(sq);
            }
        }
        let q = self.new_item(preds)?;
        for i in base..self.frontier.len() {
            self.edges.push((self.frontier[i], q));
        }
        self.frontier.truncate(base);
        self.append_work(q, id);
        Ok(q)
    }

    fn satellites_after(&mut self, id: ItemId, q: u32) -> Result<(), CompileError> {
        let sats = self.sats;
        let lo = sats.partition_point(|s| s.reference < id);
        for s in sats[lo..].iter().take_while(|s| s.reference == id) {
            if s.side == Side::After {
                self.satellite(s.item, Some(q))?;
            }
        }
        Ok(())
    }

    /// Emits satellite `id` (its own satellites included), after `pred`.
    fn satellite(&mut self, id: ItemId, pred: Option<u32>) -> Result<u32, CompileError> {
        self.sat_depth += 1;
        // Deeper than the number of satellites means a cycle.
        if self.sat_depth > self.sats.len() {
            return Err(CompileError::SatelliteCycle(id.0));
        }
        if self.sat_depth > MAX_DEPTH {
            return Err(CompileError::TooDeep);
        }
        let base = self.frontier.len();
        if let Some(p) = pred {
            self.frontier.push(p);
        }
        let q = self.item_with_satellites_before(id, base..self.frontier.len())?;
        self.frontier.truncate(base);
        self.satellites_after(id, q)?;
        self.sat_depth -= 1;
        Ok(q)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use TreeNode::{Item, Par, Seq};

    fn it(i: u32) -> TreeNode {
        Item(ItemId(i))
    }

    fn compile(root: TreeNode, satellites: Vec<Satellite>) -> Plan {
        let mut plan = Plan::new();
        plan.compile_into(&Tree { root, satellites }).unwrap();
        plan
    }

    fn runs(plan: &Plan) -> Vec<Vec<u32>> {
        (0..plan.len() as u32).map(|q| plan.run(q).iter().map(|i| i.0).collect()).collect()
    }

    #[test]
    fn consecutive_items_of_a_sequence_share_one_queue_item() {
        let plan = compile(Seq(vec![it(1), it(2), Seq(vec![it(3)]), it(4)]), vec![]);
        assert_eq!(runs(&plan), vec![vec![1, 2, 3, 4]]);
        assert_eq!(plan.initially_ready(), &[0]);
        assert_eq!(plan.edge_count(), 0);
    }

    #[test]
    fn each_child_of_a_parallel_group_is_its_own_queue_item() {
        let plan = compile(Seq(vec![it(0), Par(vec![it(1), it(2), Seq(vec![it(3), it(4)])]), it(5)]), vec![]);
        assert_eq!(runs(&plan), vec![vec![0], vec![1], vec![2], vec![3, 4], vec![5]]);
        assert_eq!(plan.successors(0), &[1, 2, 3]);
        for q in 1..4 {
            assert_eq!(plan.successors(q), &[4]);
        }
        assert_eq!(plan.initial_count(4), 3);
        assert_eq!(plan.sinks(), 1);
    }

    #[test]
    fn consecutive_parallel_groups_meet_at_one_barrier() {
        let a: Vec<_> = (0..8).map(it).collect();
        let b: Vec<_> = (8..16).map(it).collect();
        let plan = compile(Seq(vec![Par(a), Par(b)]), vec![]);
        assert_eq!(plan.barrier_count(), 1);
        assert_eq!(plan.edge_count(), 16, "8 + 8 edges instead of 64");
        assert_eq!(plan.initially_ready().len(), 8);
    }

    #[test]
    fn two_by_two_parallel_groups_need_no_barrier() {
        let plan = compile(Seq(vec![Par(vec![it(0), it(1)]), Par(vec![it(2), it(3)])]), vec![]);
        assert_eq!(plan.barrier_count(), 0);
        assert_eq!(plan.edge_count(), 4);
    }

    #[test]
    fn empty_groups_cost_nothing() {
        let plan = compile(Seq(vec![it(0), Par(vec![]), Seq(vec![]), it(1)]), vec![]);
        assert_eq!(runs(&plan), vec![vec![0, 1]]);
        let plan = compile(Seq(vec![]), vec![]);
        assert!(plan.is_empty());
    }

    #[test]
    fn satellites_wait_only_for_their_reference() {
        let sats = vec![
            Satellite { item: ItemId(10), reference: ItemId(2), side: Side::Before },
            Satellite { item: ItemId(11), reference: ItemId(2), side: Side::After },
            Satellite { item: ItemId(12), reference: ItemId(11), side: Side::After },
        ];
        let plan = compile(Seq(vec![it(1), it(2), it(3)]), sats);
        // [1] and [10] start; [2] waits for both; [3] and [11] follow [2]; [12] follows [11].
        assert_eq!(runs(&plan), vec![vec![1], vec![10], vec![2], vec![11], vec![12], vec![3]]);
        assert_eq!(plan.initially_ready(), &[0, 1]);
        assert_eq!(plan.initial_count(2), 2);
        assert_eq!(plan.successors(2), &[3, 5]);
        assert_eq!(plan.successors(3), &[4]);
    }

    #[test]
    fn a_satellite_cycle_is_an_error_not_a_hang() {
        let sats = vec![
            Satellite { item: ItemId(5), reference: ItemId(6), side: Side::Before },
            Satellite { item: ItemId(6), reference: ItemId(5), side: Side::Before },
            Satellite { item: ItemId(5), reference: ItemId(1), side: Side::Before },
        ];
        let mut plan = Plan::new();
        let err = plan.compile_into(&Tree { root: Seq(vec![it(1)]), satellites: sats }).unwrap_err();
        assert!(matches!(err, CompileError::SatelliteCycle(_)));
        assert!(plan.is_empty());
    }

    #[test]
    fn an_order_makes_a_child_of_a_parallel_group_wait_for_an_earlier_one() {
        let mut t = FlatTree::new();
        t.set_tree(&Tree { root: Seq(vec![Par(vec![it(0), it(1), it(2)]), it(3)]), satellites: vec![] }).unwrap();
        t.order(ItemId(0), ItemId(2));
        let mut plan = Plan::new();
        plan.compile_flat(&t).unwrap();
        assert_eq!(runs(&plan), vec![vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(plan.initially_ready(), &[0, 1]);
        assert_eq!(plan.initial_count(2), 1);
        assert_eq!(plan.successors(0), &[3, 2]);
        assert_eq!(plan.initial_count(3), 3);
        // Item 0 is no sink any more: item 3 and the ordered item wait for it.
        assert_eq!(plan.sinks(), 1);
    }

    #[test]
    fn an_order_inside_one_run_adds_no_edge() {
        let mut t = FlatTree::new();
        t.set_tree(&Tree { root: Seq(vec![it(0), it(1), Par(vec![it(2), it(3)])]), satellites: vec![] }).unwrap();
        t.order(ItemId(0), ItemId(1));
        let mut plan = Plan::new();
        plan.compile_flat(&t).unwrap();
        assert_eq!(plan.edge_count(), 2);
    }

    #[test]
    fn an_order_against_the_tree_or_of_a_missing_item_is_refused() {
        let mut t = FlatTree::new();
        t.set_tree(&Tree { root: Par(vec![it(0), it(1)]), satellites: vec![] }).unwrap();
        let mut plan = Plan::new();
        let mut backwards = t.clone();
        backwards.order(ItemId(1), ItemId(0));
        assert_eq!(plan.compile_flat(&backwards), Err(CompileError::Order(1, 0)));
        assert!(plan.is_empty());
        let mut missing = t.clone();
        missing.order(ItemId(0), ItemId(7));
        assert_eq!(plan.compile_flat(&missing), Err(CompileError::Order(0, 7)));
        // Cleared, the tree compiles without them.
        t.order(ItemId(0), ItemId(1));
        t.clear();
        assert!(t.orders().is_empty());
    }

    #[test]
    fn unbalanced_flat_trees_are_refused() {
        let mut t = FlatTree::new();
        assert!(t.end().is_err());
        t.begin_par();
        t.item(ItemId(1));
        assert_eq!(Plan::new().compile_flat(&t), Err(CompileError::Unbalanced("a group was never ended")));
    }
}
