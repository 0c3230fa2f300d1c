//! Commands that ask the engine something: node, control, bus and tree
//! queries, and the server status. Replies go to `Engine::replies`.

use crate::engine::Engine;
use crate::node_tree::{CalcState, NodeIdx, NodeKind, PrintNext};
use magnetar_protocol::printed::c_g;
use magnetar_protocol::commands::{ControlId, ControlValue, NodeRef};
use magnetar_protocol::replies::{NodeState, QueryTreeNode, QueryTreeReply, Reply, StatusExtension};
use crate::failure::FailReason;
use magnetar_ugens::ControlMap;

use crate::limits::{MAX_DUMP_INDENT, MAX_S_GETN_VALUES};

/// Load figures the driver measures, reported by `/status`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DriverLoad {
    pub avg_cpu: f32,
    pub peak_cpu: f32,
    pub actual_sample_rate: f64,
    /// Periods the driver finished late, or that the audio server dropped.
    pub xruns: u64,
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

    /// One node of a `/g_queryTree.reply`, as the reply lists it: a
    /// group's entry counts its children, which follow it in pre order.
    fn query_node(&self, idx: NodeIdx, with_controls: bool) -> QueryTreeNode {
        let n = self.tree.node(idx);
        match &n.kind {
            NodeKind::Group(g) => {
                let mut count = 0;
                let mut c = g.head;
                while let Some(x) = c {
                    count += 1;
                    c = self.tree.node(x).next;
                }
                QueryTreeNode::Group { id: n.id, num_children: count }
            }
            NodeKind::Synth(s) => {
                let controls = with_controls.then(|| {
                    let mut names: Vec<Option<&str>> = vec![None; s.ctx.controls.len()];
                    for (name, index) in &s.def.param_names {
                        if let Some(slot) = names.get_mut(*index as usize) {
                            slot.get_or_insert(name);
                        }
                    }
                    (0..s.ctx.controls.len())
                        .map(|i| {
                            let id = match names[i] {
                                Some(name) => ControlId::Name(name.to_string()),
                                None => ControlId::Index(i as i32),
                            };
                            let value = match s.ctx.control_map[i] {
                                ControlMap::Own => ControlValue::Value(s.ctx.controls[i]),
                                ControlMap::ControlBus(b) => ControlValue::ControlBus(b as i32),
                                ControlMap::AudioBus(b) => ControlValue::AudioBus(b as i32),
                            };
                            (id, value)
                        })
                        .collect::<Vec<_>>()
                });
                QueryTreeNode::Synth { id: n.id, def_name: s.def.name.clone(), controls }
            }
        }
    }

    pub(crate) fn cmd_g_query_tree(&mut self, groups: &[(NodeRef, bool)]) -> Result<(), FailReason> {
        for &(ref r, with_controls) in groups {
            let g = self.group_arg(r)?;
            // Node by node in pre order, without recursion: a deep tree
            // costs memory, not stack.
            let mut nodes = vec![self.query_node(g, with_controls)];
            let mut cur = self.tree.group(g).and_then(|gd| gd.head);
            while let Some(c) = cur {
                nodes.push(self.query_node(c, with_controls));
                cur = self.tree.pre_order_next(g, c, true);
            }
            self.reply(Reply::QueryTree(QueryTreeReply { with_controls, nodes }));
        }
        Ok(())
    }

    /// `/g_dumpTree`'s lines for the children of `top`, as scsynth prints
    /// them: three spaces a level; with controls, a second line per synth
    /// holding ` name: value` (or ` value` for unnamed ones, `cN`/`aN` for
    /// mapped ones) with `%.14g` numbers. scsynth walks the tree as it runs,
    /// so a paused group's children are not listed. Walks node by node in
    /// pre order without recursion; indentation stops growing past
    /// `MAX_DUMP_INDENT` levels, so a deep tree's dump stays linear in size.
    pub(crate) fn dump_tree(&self, top: NodeIdx, depth: usize, with_controls: bool, out: &mut String) {
        if self.tree.node(top).state != CalcState::Run {
            return;
        }
        let mut depth = depth;
        let mut cur = self.tree.group(top).and_then(|g| g.head);
        while let Some(c) = cur {
            let n = self.tree.node(c);
            let pad = "   ".repeat(depth.min(MAX_DUMP_INDENT));
            match &n.kind {
                NodeKind::Group(_) => {
                    out.push_str(&format!("{pad}{} group\n", n.id));
                }
                NodeKind::Synth(s) => {
                    out.push_str(&format!("{pad}{} {}", n.id, s.def.name));
                    if with_controls && !s.ctx.controls.is_empty() {
                        out.push_str("\n ");
                        out.push_str(&pad);
                        for (i, v) in s.ctx.controls.iter().enumerate() {
                            match s.def.param_names.iter().find(|p| p.1 as usize == i) {
                                Some((name, _)) => out.push_str(&format!(" {name}: ")),
                                None => out.push(' '),
                            }
                            match s.ctx.control_map[i] {
                                ControlMap::Own => out.push_str(&c_g(*v as f64, 14)),
                                ControlMap::ControlBus(b) => out.push_str(&format!("c{b}")),
                                ControlMap::AudioBus(b) => out.push_str(&format!("a{b}")),
                            }
                        }
                    }
                    out.push('\n');
                }
            }
            // On to the next node in pre order (into running groups only),
            // keeping count of the depth.
            let head = if n.state == CalcState::Run { self.tree.group(c).and_then(|g| g.head) } else { None };
            cur = match head {
                Some(h) => {
                    depth += 1;
                    Some(h)
                }
                None => {
                    let mut x = c;
                    loop {
                        if x == top {
                            break None;
                        }
                        if let Some(nx) = self.tree.node(x).next {
                            break Some(nx);
                        }
                        match self.tree.node(x).parent {
                            Some(p) => {
                                x = p;
                                depth -= 1;
                            }
                            None => break None,
                        }
                    }
                }
            };
        }
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
    pub fn status_counts(&self) -> (i32, i32, i32, i32) {
        let mut ugens = 0usize;
        let mut stack = vec![crate::node_tree::ROOT];
        while let Some(g) = stack.pop() {
            for c in self.tree.children(g) {
                match &self.tree.node(c).kind {
                    NodeKind::Group(_) => stack.push(c),
                    NodeKind::Synth(s) => ugens += s.num_units(),
                }
            }
        }
        (ugens as i32, self.tree.num_synths as i32, self.tree.num_groups as i32, self.defs.len() as i32)
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
    pub fn take_replies(&mut self) -> Vec<Reply> {
        std::mem::take(&mut self.replies)
    }
}
