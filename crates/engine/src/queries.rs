//! Commands that ask the engine something: node, control, bus and tree
//! queries, and the server status. Replies go to `Engine::replies`.

use crate::engine::Engine;
use crate::node_tree::{CalcState, NodeIdx, NodeKind, PrintNext};
use magnetar_protocol::commands::{ControlId, ControlValue, NodeRef};
use magnetar_protocol::replies::{NodeState, QueryTreeNode, QueryTreeReply, Reply, StatusExtension};
use crate::failure::FailReason;
use magnetar_ugens::ControlMap;
use crate::graph_def::GraphDef;
use std::sync::Arc;

use crate::limits::MAX_S_GETN_VALUES;

/// Load figures the driver measures, reported by `/status`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DriverLoad {
    pub avg_cpu: f32,
    pub peak_cpu: f32,
    pub actual_sample_rate: f64,
    /// Periods the driver finished late, or that the audio server dropped.
    pub xruns: u64,
}

/// A `/g_queryTree` group's subtree as the audio side takes it: numbers,
/// bus mappings and shared defs, no text. `to_reply` (on the control side)
/// makes the typed reply, naming the controls.
#[derive(Clone)]
pub struct TreeQuery {
    pub with_controls: bool,
    /// The queried group first, then its subtree in pre order.
    pub nodes: Vec<TreeQueryNode>,
    /// Every listed synth's controls in turn (when asked for): value and mapping.
    pub controls: Vec<(f32, ControlMap)>,
}

/// One node of a [`TreeQuery`].
#[derive(Clone)]
pub enum TreeQueryNode {
    Group { id: i32, num_children: i32 },
    /// `controls`: how many of the query's controls are this synth's.
    Synth { id: i32, def: Arc<GraphDef>, controls: usize },
}

impl TreeQuery {
    /// The `/g_queryTree.reply`: each control named by the def's first
    /// name for it (by index when it has none).
    pub fn to_reply(&self) -> Reply {
        let mut controls = self.controls.iter();
        let nodes = self
            .nodes
            .iter()
            .map(|node| match node {
                TreeQueryNode::Group { id, num_children } => QueryTreeNode::Group { id: *id, num_children: *num_children },
                TreeQueryNode::Synth { id, def, controls: count } => {
                    let listed = self.with_controls.then(|| {
                        let mut names: Vec<Option<&str>> = vec![None; *count];
                        for (name, index) in &def.param_names {
                            if let Some(slot) = names.get_mut(*index as usize) {
                                slot.get_or_insert(name);
                            }
                        }
                        names
                            .iter()
                            .enumerate()
                            .zip(controls.by_ref())
                            .map(|((i, name), &(v, map))| {
                                let id = match name {
                                    Some(name) => ControlId::Name(name.to_string()),
                                    None => ControlId::Index(i as i32),
                                };
                                let value = match map {
                                    ControlMap::Own => ControlValue::Value(v),
                                    ControlMap::ControlBus(b) => ControlValue::ControlBus(b as i32),
                                    ControlMap::AudioBus(b) => ControlValue::AudioBus(b as i32),
                                };
                                (id, value)
                            })
                            .collect::<Vec<_>>()
                    });
                    QueryTreeNode::Synth { id: *id, def_name: def.name.clone(), controls: listed }
                }
            })
            .collect();
        Reply::QueryTree(QueryTreeReply { with_controls: self.with_controls, nodes })
    }
}

impl Engine {
    /// Where a node sits, as notifications and `/n_info` report it.
    pub fn node_state(&self, idx: NodeIdx) -> NodeState {
        let n = self.tree.node(idx);
        let id_of = |o: Option<NodeIdx>| o.map(|i| self.tree.node(i).id).unwrap_or(-1);
        let group = match &n.kind {
            NodeKind::Group(g) => Some((id_of(g.head), id_of(g.tail))),
            NodeKind::Synth(_) => None,
        };
        NodeState { node: n.id, parent: id_of(n.parent), prev: id_of(n.prev), next: id_of(n.next), group }
    }

    fn reply(&mut self, r: Reply) {
        self.replies.push(r);
    }

    pub(crate) fn cmd_n_query(&mut self, nodes: &[NodeRef]) -> Result<(), FailReason> {
        for r in nodes {
            let n = self.node_arg(r)?;
            self.announce_info(n);
        }
        Ok(())
    }

    fn synth_control(&self, idx: NodeIdx, ctl: &ControlId, offset: i32) -> Option<f32> {
        let NodeKind::Synth(s) = &self.tree.node(idx).kind else { return None };
        let k = match ctl {
            ControlId::Index(i) => i.checked_add(offset)?,
            ControlId::Name(name) => {
                let (first, len) = s.def.param(name)?;
                if offset < 0 || offset as u32 >= len {
                    return None;
                }
                (first + offset as u32) as i32
            }
        };
        s.ctx.controls.get(usize::try_from(k).ok()?).copied()
    }

    fn synth_arg(&self, r: &NodeRef) -> Result<NodeIdx, FailReason> {
        let n = self.node_arg(r)?;
        if self.tree.node(n).is_group() {
            return Err(FailReason::IsAGroup(self.tree.node(n).id));
        }
        Ok(n)
    }

    /// `/s_get`: a control that does not exist (an unknown name, an index
    /// past the synth's controls) reads 0, as in scsynth, which answers
    /// every request.
    pub(crate) fn cmd_s_get(&mut self, node: &NodeRef, ids: &[ControlId]) -> Result<(), FailReason> {
        let n = self.synth_arg(node)?;
        let mut controls = Vec::with_capacity(ids.len());
        for ctl in ids {
            let v = self.synth_control(n, ctl, 0).unwrap_or(0.0);
            controls.push((ctl.clone(), v));
        }
        let node = self.tree.node(n).id;
        self.reply(Reply::NodeSet { node, controls });
        Ok(())
    }

    /// `/s_getn`: values past a named control's channels or past the synth's
    /// controls read 0, as in scsynth; the count is honoured up to
    /// [`MAX_S_GETN_VALUES`] so that the reply still fits a datagram.
    pub(crate) fn cmd_s_getn(&mut self, node: &NodeRef, ranges: &[(ControlId, i32)]) -> Result<(), FailReason> {
        let n = self.synth_arg(node)?;
        let mut controls = Vec::with_capacity(ranges.len());
        let mut budget = MAX_S_GETN_VALUES;
        for (ctl, count) in ranges {
            let count = (*count).clamp(0, budget);
            budget -= count;
            let values = (0..count).map(|i| self.synth_control(n, ctl, i).unwrap_or(0.0)).collect();
            controls.push((ctl.clone(), values));
        }
        let node = self.tree.node(n).id;
        self.reply(Reply::NodeSetn { node, controls });
        Ok(())
    }

    pub(crate) fn cmd_c_get(&mut self, buses: &[i32]) -> Result<(), FailReason> {
        let mut values = Vec::with_capacity(buses.len());
        for &index in buses {
            let v = usize::try_from(index)
                .ok()
                .and_then(|i| self.world.control_bus.get(i).copied())
                .ok_or(FailReason::IndexOutOfRange)?;
            values.push((index, v));
        }
        self.reply(Reply::ControlSet { values });
        Ok(())
    }

    pub(crate) fn cmd_c_getn(&mut self, wanted: &[(i32, i32)]) -> Result<(), FailReason> {
        let mut ranges = Vec::with_capacity(wanted.len());
        for &(start, count) in wanted {
            let end = start as i64 + count as i64;
            if start < 0 || count < 0 || end > self.world.num_control_buses() as i64 {
                return Err(FailReason::IndexOutOfRange);
            }
            ranges.push((start, self.world.control_bus[start as usize..end as usize].to_vec()));
        }
        self.reply(Reply::ControlSetn { ranges });
        Ok(())
    }

    /// `/g_queryTree`: each group's subtree, taken as numbers and shared
    /// defs (`TreeQuery`) in two blocks of the pool counted first, so that
    /// the audio side copies no name and makes no message whatever the
    /// tree's size; the control side names the controls and encodes.
    pub(crate) fn cmd_g_query_tree(&mut self, groups: &[(NodeRef, bool)]) -> Result<(), FailReason> {
        for &(ref r, with_controls) in groups {
            let g = self.group_arg(r)?;
            // Node by node in pre order, without recursion: a deep tree
            // costs memory, not stack. Counted first, then taken.
            let (mut num_nodes, mut num_controls) = (0usize, 0usize);
            let mut cur = Some(g);
            while let Some(c) = cur {
                num_nodes += 1;
                if let (true, NodeKind::Synth(s)) = (with_controls, &self.tree.node(c).kind) {
                    num_controls += s.ctx.controls.len();
                }
                cur = self.tree.pre_order_next(g, c, true);
            }
            let mut query = TreeQuery {
                with_controls,
                nodes: Vec::with_capacity(num_nodes),
                controls: Vec::with_capacity(num_controls),
            };
            let mut cur = Some(g);
            while let Some(c) = cur {
                let n = self.tree.node(c);
                let entry = match &n.kind {
                    NodeKind::Group(_) => {
                        let num_children = self.tree.children(c).count().min(i32::MAX as usize) as i32;
                        TreeQueryNode::Group { id: n.id, num_children }
                    }
                    NodeKind::Synth(s) => {
                        let values = s.ctx.controls.iter().zip(&s.ctx.control_map);
                        let controls = if with_controls { values.len() } else { 0 };
                        query.controls.extend(values.take(controls).map(|(&v, &m)| (v, m)));
                        TreeQueryNode::Synth { id: n.id, def: Arc::clone(&s.def), controls }
                    }
                };
                query.nodes.push(entry);
                cur = self.tree.pre_order_next(g, c, true);
            }
            self.tree_queries.push(query);
        }
        Ok(())
    }

    /// `/g_dumpTree`: scsynth prints when the group next runs (so after the
    /// rest of the bundle), and a paused group prints nothing.
    pub(crate) fn cmd_g_dump_tree(&mut self, groups: &[(NodeRef, bool)]) -> Result<(), FailReason> {
        for &(ref r, controls) in groups {
            let g = self.group_arg(r)?;
            self.print_next(g, PrintNext::DumpTree { controls });
        }
        Ok(())
    }

    /// `/n_trace`: the node prints its next block (see `Engine::calc_group`
    /// and `Synth::calc_traced`). As in scsynth, a node that is paused or
    /// not yet built ignores the request.
    pub(crate) fn cmd_n_trace(&mut self, nodes: &[NodeRef]) -> Result<(), FailReason> {
        for r in nodes {
            let n = self.node_arg(r)?;
            self.print_next(n, PrintNext::Trace);
        }
        Ok(())
    }

    fn print_next(&mut self, idx: NodeIdx, what: PrintNext) {
        let node = self.tree.node_mut(idx);
        if node.state == CalcState::Run && node.print_next == PrintNext::Nothing {
            node.print_next = what;
            self.tracing = true;
        }
    }

    /// Counts for `/status`: UGens, synths, groups, loaded SynthDefs.
    /// The tree keeps them as nodes come and go, as scsynth's world does:
    /// nothing is walked.
    pub fn status_counts(&self) -> (i32, i32, i32, i32) {
        let count = |n: usize| n.min(i32::MAX as usize) as i32;
        (count(self.tree.num_units), count(self.tree.num_synths), count(self.tree.num_groups), count(self.defs.len()))
    }

    /// `/status`; `/status 1` (an extension) appends the xrun count, disk
    /// underruns and task deadline misses.
    pub(crate) fn cmd_status(&mut self, with_xruns: bool) -> Result<(), FailReason> {
        let (ugens, synths, groups, synthdefs) = self.status_counts();
        let load = self.driver_load;
        let clamp = |v: u64| v.min(i32::MAX as u64) as i32;
        let reply = Reply::Status {
            ugens,
            synths,
            groups,
            synthdefs,
            avg_cpu: load.avg_cpu,
            peak_cpu: load.peak_cpu,
            nominal_sample_rate: self.world.sample_rate,
            actual_sample_rate: if load.actual_sample_rate > 0.0 { load.actual_sample_rate } else { self.world.sample_rate },
            extension: with_xruns.then(|| StatusExtension {
                xruns: clamp(load.xruns),
                disk_underruns: clamp(self.world.disk_underruns),
                deadline_misses: clamp(self.tasks.deadline_misses()),
            }),
        };
        self.reply(reply);
        Ok(())
    }

    pub(crate) fn cmd_rt_memory_status(&mut self) -> Result<(), FailReason> {
        let free = match self.memory_probe {
            Some(probe) => probe().0,
            None => self.options.rt_memory_kb * 1024,
        };
        let largest = self.largest_free_probe.map_or(free, |probe| probe().min(free));
        let clamp = |v: usize| v.min(i32::MAX as usize) as i32;
        self.reply(Reply::RtMemoryStatus { free: clamp(free), largest_free_chunk: clamp(largest) });
        Ok(())
    }

    /// Replies produced so far, taken out.
    /// `/g_queryTree` answers are made here, after the others.
    pub fn take_replies(&mut self) -> Vec<Reply> {
        let mut replies = std::mem::take(&mut self.replies);
        replies.extend(self.tree_queries.drain(..).map(|q| q.to_reply()));
        replies
    }
}
