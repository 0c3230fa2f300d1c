//! The node tree that commands edit: groups holding ordered children,
//! synths as leaves. Nodes live in a slab and link to each other by index.

use crate::synth::Synth;
use std::collections::HashMap;

pub type NodeIdx = u32;

/// What a node does when the traversal reaches it; mirrors scsynth's
/// per-node calc function so that pause/free ordering quirks match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalcState {
    /// A synth that has not yet built its units; it will, then compute.
    FirstCalc,
    /// A synth paused before its first block: builds its units, then pauses.
    NullFirstCalc,
    Run,
    Paused,
    /// Freed: removed when the traversal next reaches it.
    Ended,
}

pub struct GroupData {
    pub head: Option<NodeIdx>,
    pub tail: Option<NodeIdx>,
    /// A `/p_new` group: its children may run in any order.
    pub parallel: bool,
}

pub enum NodeKind {
    Group(GroupData),
    Synth(Box<Synth>),
}

pub struct Node {
    pub id: i32,
    pub parent: Option<NodeIdx>,
    pub prev: Option<NodeIdx>,
    pub next: Option<NodeIdx>,
    pub state: CalcState,
    pub kind: NodeKind,
    /// For a satellite node: the node it runs next to (it is in no group's
    /// list of children; `parent` is its reference's group).
    pub satellite_of: Option<NodeIdx>,
    /// Satellites that run just before and just after this node, in order.
    pub sat_before: Vec<NodeIdx>,
    pub sat_after: Vec<NodeIdx>,
    /// What the node prints on its next run (`/n_trace`, `/g_dumpTree`).
    pub print_next: PrintNext,
    /// The tree's edit count when the node itself last changed: made, or
    /// its state, satellites or synth edited (`Node::changed_since`).
    /// Its place among its siblings is not counted here.
    changed: u64,
}

impl Node {
    pub fn is_group(&self) -> bool {
        matches!(self.kind, NodeKind::Group(_))
    }

    /// Whether the node itself was made or changed (its state, its
    /// satellites, a synth's controls or mapping) after the tree's edit
    /// count was `edits`; a node only moved among its siblings was not.
    pub fn changed_since(&self, edits: u64) -> bool {
        self.changed > edits
    }
}

/// What a node prints when it next runs. scsynth swaps the node's calc
/// function for a printing one, so a node holds at most one request: the
/// first wins, and a paused node takes none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintNext {
    Nothing,
    /// `/n_trace`.
    Trace,
    /// `/g_dumpTree` (groups only), with or without controls.
    DumpTree { controls: bool },
}

/// Where to put a new or moved node, relative to a target (add actions 0–3;
/// 4, replace, is handled by the caller as "before, then free the target").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Head(NodeIdx),
    Tail(NodeIdx),
    Before(NodeIdx),
    After(NodeIdx),
    /// A satellite that runs just before (or after) the reference node, and
    /// is paused and freed with it.
    SatelliteBefore(NodeIdx),
    SatelliteAfter(NodeIdx),
}

pub struct NodeTree {
    nodes: Vec<Option<Node>>,
    free_slots: Vec<NodeIdx>,
    by_id: HashMap<i32, NodeIdx>,
    hidden_id: i32,
    pub num_groups: usize,
    pub num_synths: usize,
    /// Units of the synths in the tree (scsynth's `mNumUnits`), kept as
    /// synths come and go so that `/status` walks nothing.
    pub num_units: usize,
    /// Counts mutable accesses to nodes other than running a synth: a
    /// parallel group whose count did not change since its last block has
    /// the same shape, states and controls (see `edits`).
    edits: u64,
}

pub const ROOT: NodeIdx = 0;

impl Default for NodeTree {
    fn default() -> Self {
        Self::new()
    }
}

impl NodeTree {
    /// A tree holding only the root group, with room for `capacity` nodes
    /// reserved now (the real-time thread then never grows the tables).
    pub fn with_capacity(capacity: usize) -> NodeTree {
        let mut t = NodeTree::new();
        t.nodes.reserve(capacity);
        t.free_slots.reserve(capacity);
        t.by_id.reserve(capacity);
        t
    }

    /// A tree holding only the root group, node 0.
    pub fn new() -> NodeTree {
        let root = Node {
            id: 0,
            parent: None,
            prev: None,
            next: None,
            state: CalcState::Run,
            kind: NodeKind::Group(GroupData { head: None, tail: None, parallel: false }),
            satellite_of: None,
            sat_before: Vec::new(),
            sat_after: Vec::new(),
            print_next: PrintNext::Nothing,
            changed: 0,
        };
        let mut by_id = HashMap::new();
        by_id.insert(0, ROOT);
        NodeTree {
            nodes: vec![Some(root)],
            free_slots: Vec::new(),
            by_id,
            hidden_id: 0,
            num_groups: 1,
            num_synths: 0,
            num_units: 0,
            edits: 0,
        }
    }

    /// scsynth's ids for nodes created with id -1: negative, counting down.
    pub fn next_hidden_id(&mut self) -> i32 {
        loop {
            self.hidden_id = (self.hidden_id.wrapping_sub(8)) | i32::MIN;
            if !self.by_id.contains_key(&self.hidden_id) {
                return self.hidden_id;
            }
        }
    }

    pub fn lookup(&self, id: i32) -> Option<NodeIdx> {
        self.by_id.get(&id).copied()
    }

    pub fn contains_id(&self, id: i32) -> bool {
        self.by_id.contains_key(&id)
    }

    /// The node at `idx`.
    ///
    /// A `NodeIdx` names a live node: indices come from `insert`, `lookup`
    /// and the links of live nodes, and every link to a node goes when the
    /// node is deleted. A dead index would be a bug in this module, which
    /// these two accessors report by panicking rather than act on a wrong node.
    #[inline]
    #[allow(clippy::expect_used)]
    pub fn node(&self, idx: NodeIdx) -> &Node {
        self.nodes[idx as usize].as_ref().expect("live node index")
    }

    #[inline]
    #[allow(clippy::expect_used)]
    pub fn node_mut(&mut self, idx: NodeIdx) -> &mut Node {
        self.edits += 1;
        let n = self.nodes[idx as usize].as_mut().expect("live node index");
        n.changed = self.edits;
        n
    }

    /// A node whose place among its siblings (parent, neighbours, a
    /// group's head and tail) changes: an edit of the tree, not of the
    /// node (`Node::changed_since`).
    #[inline]
    #[allow(clippy::expect_used)]
    fn links_mut(&mut self, idx: NodeIdx) -> &mut Node {
        self.edits += 1;
        self.nodes[idx as usize].as_mut().expect("live node index")
    }

    /// Clears and returns what the node was asked to print on this run.
    /// Not an edit: it changes what is printed, not what runs.
    #[inline]
    pub fn take_print(&mut self, idx: NodeIdx) -> PrintNext {
        match self.nodes.get_mut(idx as usize) {
            Some(Some(node)) => std::mem::replace(&mut node.print_next, PrintNext::Nothing),
            _ => PrintNext::Nothing,
        }
    }

    /// A count that changes whenever a node may have changed (links,
    /// states, a synth's controls or mapping), except by running a synth
    /// (`synth_to_run`). Equal counts mean an unchanged tree.
    pub fn edits(&self) -> u64 {
        self.edits
    }

    pub fn is_live(&self, idx: NodeIdx) -> bool {
        self.nodes.get(idx as usize).map(|n| n.is_some()).unwrap_or(false)
    }

    pub fn group(&self, idx: NodeIdx) -> Option<&GroupData> {
        match &self.node(idx).kind {
            NodeKind::Group(g) => Some(g),
            NodeKind::Synth(_) => None,
        }
    }

    /// Sets a group's first child; nothing for a synth, which has none.
    fn set_head(&mut self, group: NodeIdx, head: Option<NodeIdx>) {
        if let NodeKind::Group(g) = &mut self.links_mut(group).kind {
            g.head = head;
        }
    }

    /// Sets a group's last child; nothing for a synth, which has none.
    fn set_tail(&mut self, group: NodeIdx, tail: Option<NodeIdx>) {
        if let NodeKind::Group(g) = &mut self.links_mut(group).kind {
            g.tail = tail;
        }
    }

    pub fn synth_mut(&mut self, idx: NodeIdx) -> Option<&mut Synth> {
        self.edits += 1;
        let edits = self.edits;
        if let Some(Some(n)) = self.nodes.get_mut(idx as usize) {
            n.changed = edits;
        }
        self.synth_to_run(idx)
    }

    /// A synth to run (or to look at before running it): callers change
    /// nothing but its units' state through it, so `edits` stays as it is.
    /// Anything else goes through `synth_mut`.
    pub fn synth_to_run(&mut self, idx: NodeIdx) -> Option<&mut Synth> {
        match &mut self.nodes.get_mut(idx as usize)?.as_mut()?.kind {
            NodeKind::Synth(s) => Some(s),
            NodeKind::Group(_) => None,
        }
    }

    /// Gives a node a new id (scsynth moves replaced or `/s_noid` nodes to
    /// hidden ids).
    pub fn rename(&mut self, idx: NodeIdx, id: i32) {
        let old = self.node(idx).id;
        self.by_id.remove(&old);
        self.node_mut(idx).id = id;
        self.by_id.insert(id, idx);
    }

    /// Inserts a new, unlinked node under `id`; the caller links it.
    pub fn insert(&mut self, id: i32, kind: NodeKind, state: CalcState) -> NodeIdx {
        match &kind {
            NodeKind::Group(_) => self.num_groups += 1,
            NodeKind::Synth(s) => {
                self.num_synths += 1;
                self.num_units += s.num_units();
            }
        }
        let node = Node {
            id,
            parent: None,
            prev: None,
            next: None,
            state,
            kind,
            satellite_of: None,
            sat_before: Vec::new(),
            sat_after: Vec::new(),
            print_next: PrintNext::Nothing,
            changed: self.edits + 1,
        };
        self.edits += 1;
        let idx = if let Some(i) = self.free_slots.pop() {
            self.nodes[i as usize] = Some(node);
            i
        } else {
            self.nodes.push(Some(node));
            (self.nodes.len() - 1) as NodeIdx
        };
        self.by_id.insert(id, idx);
        idx
    }

    /// Links an unlinked node at `pos`. Before/After a node without a parent
    /// (the root) does nothing, as in scsynth.
    pub fn link(&mut self, idx: NodeIdx, pos: Position) {
        match pos {
            Position::SatelliteBefore(r) | Position::SatelliteAfter(r) => {
                let parent = self.node(r).parent;
                {
                    let n = self.node_mut(idx);
                    n.parent = parent;
                    n.prev = None;
                    n.next = None;
                    n.satellite_of = Some(r);
                }
                let reference = self.node_mut(r);
                if matches!(pos, Position::SatelliteBefore(_)) {
                    reference.sat_before.push(idx);
                } else {
                    reference.sat_after.push(idx);
                }
            }
            Position::Head(g) => {
                // Commands check that a head or tail target is a group
                // (`/fail` otherwise); were it not, the node goes after it.
                let Some(old_head) = self.group(g).map(|g| g.head) else {
                    return self.link(idx, Position::After(g));
                };
                {
                    let n = self.links_mut(idx);
                    n.parent = Some(g);
                    n.prev = None;
                    n.next = old_head;
                }
                match old_head {
                    Some(h) => self.links_mut(h).prev = Some(idx),
                    None => self.set_tail(g, Some(idx)),
                }
                self.set_head(g, Some(idx));
            }
            Position::Tail(g) => {
                let Some(old_tail) = self.group(g).map(|g| g.tail) else {
                    return self.link(idx, Position::After(g));
                };
                {
                    let n = self.links_mut(idx);
                    n.parent = Some(g);
                    n.next = None;
                    n.prev = old_tail;
                }
                match old_tail {
                    Some(t) => self.links_mut(t).next = Some(idx),
                    None => self.set_head(g, Some(idx)),
                }
                self.set_tail(g, Some(idx));
            }
            Position::Before(t) => {
                let Some(parent) = self.node(t).parent else { return };
                let prev = self.node(t).prev;
                {
                    let n = self.links_mut(idx);
                    n.parent = Some(parent);
                    n.prev = prev;
                    n.next = Some(t);
                }
                match prev {
                    Some(p) => self.links_mut(p).next = Some(idx),
                    None => self.set_head(parent, Some(idx)),
                }
                self.links_mut(t).prev = Some(idx);
            }
            Position::After(t) => {
                let Some(parent) = self.node(t).parent else { return };
                let next = self.node(t).next;
                {
                    let n = self.links_mut(idx);
                    n.parent = Some(parent);
                    n.prev = Some(t);
                    n.next = next;
                }
                match next {
                    Some(x) => self.links_mut(x).prev = Some(idx),
                    None => self.set_tail(parent, Some(idx)),
                }
                self.links_mut(t).next = Some(idx);
            }
        }
    }

    /// Takes a node out of its group (or off its reference node) without
    /// deleting it.
    pub fn unlink(&mut self, idx: NodeIdx) {
        if let Some(r) = self.node(idx).satellite_of {
            let reference = self.node_mut(r);
            reference.sat_before.retain(|&s| s != idx);
            reference.sat_after.retain(|&s| s != idx);
            let n = self.node_mut(idx);
            n.satellite_of = None;
            n.parent = None;
            return;
        }
        let (parent, prev, next) = {
            let n = self.node(idx);
            (n.parent, n.prev, n.next)
        };
        match prev {
            Some(p) => self.links_mut(p).next = next,
            None => {
                if let Some(g) = parent {
                    self.set_head(g, next);
                }
            }
        }
        match next {
            Some(x) => self.links_mut(x).prev = prev,
            None => {
                if let Some(g) = parent {
                    self.set_tail(g, prev);
                }
            }
        }
        let n = self.links_mut(idx);
        n.parent = None;
        n.prev = None;
        n.next = None;
    }

    /// True if `ancestor` is `idx` or one of its enclosing groups.
    pub fn is_ancestor(&self, ancestor: NodeIdx, idx: NodeIdx) -> bool {
        let mut cur = Some(idx);
        while let Some(c) = cur {
            if c == ancestor {
                return true;
            }
            cur = self.node(c).parent;
        }
        false
    }

    /// Deletes a node and everything under it (its satellites too); pushes
    /// the ids of every deleted node to `ended`, each after everything under
    /// it, in `post_order`'s order. Walks without recursion: depth costs no
    /// stack.
    pub fn delete(&mut self, idx: NodeIdx, ended: &mut Vec<i32>) {
        if idx == ROOT {
            self.delete_children(ROOT, ended);
            return;
        }
        let mut cur = self.deepest_first(idx);
        loop {
            let owner = self.owner(cur);
            self.delete_leaf(cur, ended);
            if cur == idx {
                return;
            }
            // The owner's next satellite or child, if any, moved up.
            // A node under the deleted one has an owner: the walk stops at
            // `idx` at the latest.
            let Some(owner) = owner else { return };
            cur = self.deepest_first(owner);
        }
    }

    /// The group or reference node a node belongs to.
    fn owner(&self, idx: NodeIdx) -> Option<NodeIdx> {
        let n = self.node(idx);
        n.satellite_of.or(n.parent)
    }

    /// The first node of `idx`'s subtree in post order: down through first
    /// satellites (before, then after), then heads, while there are any.
    fn deepest_first(&self, idx: NodeIdx) -> NodeIdx {
        let mut cur = idx;
        loop {
            let n = self.node(cur);
            let next = n.sat_before.first().or(n.sat_after.first()).copied().or(match &n.kind {
                NodeKind::Group(g) => g.head,
                NodeKind::Synth(_) => None,
            });
            match next {
                Some(x) => cur = x,
                None => return cur,
            }
        }
    }

    /// The node after `idx` in the post order of `top`'s subtree (a node
    /// comes after its satellites, before then after, and its children), or
    /// None after `top` itself.
    pub fn post_order_next(&self, top: NodeIdx, idx: NodeIdx) -> Option<NodeIdx> {
        if idx == top {
            return None;
        }
        let n = self.node(idx);
        if let Some(r) = n.satellite_of {
            let reference = self.node(r);
            let sats = reference.sat_before.iter().chain(&reference.sat_after);
            let after = sats.skip_while(|&&s| s != idx).nth(1).copied();
            let head = match &reference.kind {
                NodeKind::Group(g) => g.head,
                NodeKind::Synth(_) => None,
            };
            return Some(after.or(head).map_or(r, |x| self.deepest_first(x)));
        }
        match (n.next, n.parent) {
            (Some(x), _) => Some(self.deepest_first(x)),
            (None, Some(p)) => Some(p),
            (None, None) => None,
        }
    }

    /// The first node of `top`'s subtree in post order.
    pub fn post_order_first(&self, top: NodeIdx) -> NodeIdx {
        self.deepest_first(top)
    }

    /// Removes a node with no children and no satellites.
    fn delete_leaf(&mut self, idx: NodeIdx, ended: &mut Vec<i32>) {
        self.unlink(idx);
        let Some(node) = self.nodes.get_mut(idx as usize).and_then(Option::take) else { return };
        match &node.kind {
            NodeKind::Group(_) => self.num_groups -= 1,
            NodeKind::Synth(s) => {
                self.num_synths -= 1;
                self.num_units -= s.num_units();
            }
        }
        self.by_id.remove(&node.id);
        self.free_slots.push(idx);
        ended.push(node.id);
    }

    /// `/g_freeAll`: deletes every child of a group.
    pub fn delete_children(&mut self, group: NodeIdx, ended: &mut Vec<i32>) {
        while let Some(child) = self.group(group).and_then(|g| g.head) {
            self.delete(child, ended);
        }
    }

    /// The node after `idx` in the pre order of `top`'s subtree (group
    /// lists only, no satellites), skipping `idx`'s own children when
    /// `into` is false.
    pub fn pre_order_next(&self, top: NodeIdx, idx: NodeIdx, into: bool) -> Option<NodeIdx> {
        if into {
            if let Some(h) = self.group(idx).and_then(|g| g.head) {
                return Some(h);
            }
        }
        let mut cur = idx;
        loop {
            if cur == top {
                return None;
            }
            let n = self.node(cur);
            if let Some(x) = n.next {
                return Some(x);
            }
            cur = n.parent?;
        }
    }


    /// scsynth's `Node_End`: the node is deleted when next reached.
    pub fn end(&mut self, idx: NodeIdx) {
        self.node_mut(idx).state = CalcState::Ended;
    }

    /// scsynth's `Node_SetRun`; returns true when the state changed (and a
    /// `/n_on` or `/n_off` is due).
    pub fn set_run(&mut self, idx: NodeIdx, run: bool) -> bool {
        let n = self.node_mut(idx);
        if run {
            if n.state == CalcState::Paused {
                n.state = CalcState::Run;
                return true;
            }
        } else {
            match n.state {
                CalcState::Paused | CalcState::NullFirstCalc => {}
                CalcState::FirstCalc => {
                    n.state = CalcState::NullFirstCalc;
                    return true;
                }
                CalcState::Run | CalcState::Ended => {
                    // As in scsynth, where pausing replaces the printing calc function.
                    n.print_next = PrintNext::Nothing;
                    n.state = CalcState::Paused;
                    return true;
                }
            }
        }
        false
    }

    /// Whether a node has satellites.
    pub fn has_satellites(&self, idx: NodeIdx) -> bool {
        let n = self.node(idx);
        !n.sat_before.is_empty() || !n.sat_after.is_empty()
    }

    /// Children of a group, in order, read from the links as they go
    /// (nothing is collected): none for a synth.
    pub fn children(&self, group: NodeIdx) -> impl Iterator<Item = NodeIdx> + '_ {
        let head = self.group(group).and_then(|g| g.head);
        std::iter::successors(head, move |&c| self.node(c).next)
    }

    /// The synths of `top`'s subtree (`top` itself if it is one), in pre
    /// order through group lists (no satellites), as `/n_set` and `/n_map`
    /// on a group reach them; the next one after `idx` (None: start).
    /// Walks the links in place: callers may change a synth between steps,
    /// but not the tree's shape.
    pub fn next_synth_under(&self, top: NodeIdx, idx: Option<NodeIdx>) -> Option<NodeIdx> {
        let mut cur = match idx {
            None => top,
            Some(i) => self.pre_order_next(top, i, true)?,
        };
        loop {
            if !self.node(cur).is_group() {
                return Some(cur);
            }
            cur = self.pre_order_next(top, cur, true)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(tree: &mut NodeTree, id: i32, pos: Position) -> NodeIdx {
        let idx = tree.insert(
            id,
            NodeKind::Group(GroupData { head: None, tail: None, parallel: false }),
            CalcState::Run,
        );
        tree.link(idx, pos);
        idx
    }

    fn ids(tree: &NodeTree, g: NodeIdx) -> Vec<i32> {
        tree.children(g).map(|c| tree.node(c).id).collect()
    }

    #[test]
    fn head_tail_before_after_keep_the_order_a_user_asked_for() {
        let mut t = NodeTree::new();
        let a = group(&mut t, 1, Position::Head(ROOT));
        group(&mut t, 2, Position::Tail(ROOT));
        group(&mut t, 3, Position::Before(a));
        group(&mut t, 4, Position::After(a));
        group(&mut t, 5, Position::Head(ROOT));
        assert_eq!(ids(&t, ROOT), vec![5, 3, 1, 4, 2]);
    }

    #[test]
    fn deleting_a_group_deletes_its_subtree_and_frees_the_ids() {
        let mut t = NodeTree::new();
        let a = group(&mut t, 1, Position::Head(ROOT));
        let b = group(&mut t, 2, Position::Head(a));
        group(&mut t, 3, Position::Tail(b));
        group(&mut t, 4, Position::Tail(ROOT));
        let mut ended = Vec::new();
        t.delete(a, &mut ended);
        assert_eq!(ended, vec![3, 2, 1]);
        assert_eq!(ids(&t, ROOT), vec![4]);
        assert!(!t.contains_id(1) && !t.contains_id(3));
        assert_eq!(t.num_groups, 2);
    }

    #[test]
    fn satellites_stay_out_of_the_group_and_go_with_their_reference() {
        let mut t = NodeTree::new();
        let a = group(&mut t, 1, Position::Head(ROOT));
        let before = group(&mut t, 2, Position::SatelliteBefore(a));
        let after = group(&mut t, 3, Position::SatelliteAfter(a));
        assert_eq!(ids(&t, ROOT), vec![1]);
        assert_eq!(t.node(a).sat_before, vec![before]);
        assert_eq!(t.node(a).sat_after, vec![after]);
        assert_eq!(t.node(before).parent, Some(ROOT));
        let mut ended = Vec::new();
        t.delete(a, &mut ended);
        assert_eq!(ended, vec![2, 3, 1]);
        assert!(!t.contains_id(2) && !t.contains_id(3));
    }

    #[test]
    fn hidden_ids_are_negative_and_unique() {
        let mut t = NodeTree::new();
        let a = t.next_hidden_id();
        let b = t.next_hidden_id();
        assert!(a < 0 && b < 0 && a != b);
    }

    #[test]
    fn a_deep_chain_is_walked_and_deleted_without_recursion() {
        // Deep enough to overflow a test thread's stack with one frame per level.
        const DEPTH: i32 = 300_000;
        let mut t = NodeTree::with_capacity(DEPTH as usize + 1);
        let mut g = ROOT;
        for id in 1..=DEPTH {
            g = group(&mut t, id, Position::Head(g));
        }
        let top = t.lookup(1).unwrap();
        let mut seen = 0;
        let mut cur = Some(t.post_order_first(top));
        while let Some(c) = cur {
            seen += 1;
            cur = t.post_order_next(top, c);
        }
        assert_eq!(seen, DEPTH);
        let mut ended = Vec::new();
        t.delete(top, &mut ended);
        assert_eq!(ended.len(), DEPTH as usize);
        assert_eq!(ended[0], DEPTH);
        assert_eq!(t.num_groups, 1);
    }

    #[test]
    fn post_order_puts_satellites_then_children_before_their_node() {
        let mut t = NodeTree::new();
        let a = group(&mut t, 1, Position::Head(ROOT));
        let b = group(&mut t, 2, Position::Head(a));
        group(&mut t, 3, Position::Tail(a));
        group(&mut t, 4, Position::SatelliteAfter(a));
        group(&mut t, 5, Position::SatelliteBefore(b));
        group(&mut t, 6, Position::Head(b));
        let mut order = Vec::new();
        let mut cur = Some(t.post_order_first(a));
        while let Some(c) = cur {
            order.push(t.node(c).id);
            cur = t.post_order_next(a, c);
        }
        assert_eq!(order, vec![4, 5, 6, 2, 3, 1]);
        let mut ended = Vec::new();
        t.delete(a, &mut ended);
        ended.sort();
        assert_eq!(ended, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(t.num_groups, 1);
    }
}
