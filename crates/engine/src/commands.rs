//! The scsynth commands that edit the engine, performed from their typed
//! decoding (`magnetar_protocol::commands`, read as scsynth reads them):
//! nodes, controls, control buses, SynthDefs, and the dispatch of buffer
//! commands.

use magnetar_protocol::printed::terminal_safe;
use crate::engine::Engine;
use crate::node_tree::{NodeIdx, Position, ROOT};
use magnetar_protocol::commands::{
    BusMap, BusMapRange, BusRanges, Command, ControlFill, ControlRef, ControlSets, ControlValue, NewGroup, NodeRef,
    ValueFill,
};
use magnetar_protocol::{ArgBlock, CommandKind, Prepared, PreparedMessage, Reply};
use magnetar_ugens::ControlMap;
use std::path::Path;

pub use crate::failure::{CommandFailure, FailReason};

use crate::limits::{MAX_CONTROL_RANGE, MAX_SATELLITE_NESTING};

type CmdResult = Result<(), FailReason>;

impl Engine {
    /// Performs a prepared packet (a bundle's elements in order), adding
    /// the failures, which scsynth would answer with `/fail`.
    pub fn perform_prepared(&mut self, packet: &Prepared, failures: &mut Vec<CommandFailure>) {
        packet.for_each_message(&mut |m| failures.extend(self.perform(m).err()));
    }

    /// Text for the console. A real-time engine runs on the audio thread,
    /// which must not write to a file: it queues the text in `log`, which the
    /// server hands to its control thread to print; offline it is printed
    /// at once.
    fn print(&mut self, text: String) {
        if self.options.realtime {
            self.log.push(text);
        } else {
            eprint!("{text}");
        }
    }

    /// Performs one prepared command message.
    pub fn perform(&mut self, m: &PreparedMessage) -> Result<(), CommandFailure> {
        use CommandKind as K;
        let Some(kind) = m.kind else {
            return Err(CommandFailure::new(m.name().to_string(), FailReason::CommandNotFound));
        };
        let name = kind.name();
        let fail = |reason: FailReason| CommandFailure::new(name, reason);
        // `/n_cmd` is numbered but not implemented, `/quit` and the
        // server's own extensions are answered around the engine.
        if matches!(kind, K::NCmd | K::Quit | K::SNewargs | K::MagnetarRtStats | K::MagnetarDiskStats) {
            return Err(fail(FailReason::CommandNotFound));
        }
        let cmd = match &m.cmd {
            Ok(cmd) => cmd,
            Err(e) => return Err(fail(FailReason::Rejected(e.message().to_string()))),
        };
        use Command as C;
        let r: CmdResult = match cmd {
            C::SNew { def_name, node, add_action, target, controls } => {
                self.cmd_s_new(def_name, *node, *add_action, target, controls)
            }
            C::GNew { groups } => self.cmd_g_new(groups, false),
            C::PNew { groups } => self.cmd_g_new(groups, true),
            C::NFree { nodes } => self.cmd_n_free(nodes),
            C::NRun { nodes } => self.cmd_n_run(nodes),
            C::NSet { node, controls } | C::NSetn { node, controls } => self.cmd_n_set(node, controls),
            C::NFill { node, fills } => self.cmd_n_fill(node, fills),
            C::NMap { node, maps } => self.cmd_n_map(node, maps, false),
            C::NMapa { node, maps } => self.cmd_n_map(node, maps, true),
            C::NMapn { node, maps } => self.cmd_n_mapn(node, maps, false),
            C::NMapan { node, maps } => self.cmd_n_mapn(node, maps, true),
            C::NBefore { pairs } => self.cmd_n_before_after(pairs, true),
            C::NAfter { pairs } => self.cmd_n_before_after(pairs, false),
            C::NOrder { add_action, target, nodes } => self.cmd_n_order(*add_action, target, nodes),
            C::GHead { pairs } => self.cmd_g_head_tail(pairs, true),
            C::GTail { pairs } => self.cmd_g_head_tail(pairs, false),
            C::GFreeAll { groups } => self.cmd_g_free_all(groups, false),
            C::GDeepFree { groups } => self.cmd_g_free_all(groups, true),
            C::SNoid { nodes } => self.cmd_s_noid(nodes),
            C::CSet { values } => self.cmd_c_set(values),
            C::CSetn { ranges } => self.cmd_c_setn(ranges),
            C::CFill { fills } => self.cmd_c_fill(fills),
            // Stage 2 (files, compiling, buffer memory) is the control
            // side's (`control`, `offline`): the audio side has no way to do it.
            C::DRecv { .. }
            | C::DLoad { .. }
            | C::DLoadDir { .. }
            | C::BAlloc { .. }
            | C::BAllocRead { .. }
            | C::BAllocReadChannel { .. }
            | C::BRead { .. }
            | C::BReadChannel { .. }
            | C::BWrite { .. }
            | C::BFree { .. }
            | C::BClose { .. }
            | C::BZero { .. }
            | C::BGen { .. } => Err(FailReason::NotOnAudioSide),
            C::DFree { names } => self.cmd_d_free(names),
            C::DFreeAll => {
                let Engine { defs, freed_defs, .. } = self;
                freed_defs.extend(defs.drain().map(|(_, def)| def));
                Ok(())
            }
            C::NQuery { nodes } => self.cmd_n_query(nodes),
            C::SGet { node, controls } => self.cmd_s_get(node, controls),
            C::SGetn { node, controls } => self.cmd_s_getn(node, controls),
            C::CGet { buses } => self.cmd_c_get(buses),
            C::CGetn { ranges } => self.cmd_c_getn(ranges),
            C::GQueryTree { groups } => self.cmd_g_query_tree(groups),
            C::GDumpTree { groups } => self.cmd_g_dump_tree(groups),
            C::NTrace { nodes } => self.cmd_n_trace(nodes),
            C::Status { extended } => self.cmd_status(*extended),
            C::RtMemoryStatus => self.cmd_rt_memory_status(),
            C::Cmd { name, args } => self.cmd_plugin(name, &ArgBlock::of(args)),
            C::UCmd { node, unit, name, args } => self.cmd_u_cmd(*node, *unit, name, &ArgBlock::of(args)),
            // Handled by the server around the engine (or meaningless in NRT).
            C::NrtEnd
            | C::MagnetarRtStats
            | C::MagnetarDiskStats { .. }
            | C::None
            | C::Sync { .. }
            | C::DumpOsc { .. }
            | C::ClearSched
            | C::Error { .. }
            | C::Notify { .. }
            | C::Version
            | C::Quit
            | C::SNewargs { .. } => Ok(()),
            C::BSet { .. }
            | C::BSetn { .. }
            | C::BFill { .. }
            | C::BGet { .. }
            | C::BGetn { .. }
            | C::BQuery { .. }
            | C::BSetSampleRate { .. } => return self.cmd_buffer(kind, cmd),
        };
        r.map_err(fail)
    }

    /// `/cmd name args...`: a command a UGen plugin defined.
    fn cmd_plugin(&mut self, name: &str, args: &ArgBlock) -> CmdResult {
        let handler = crate::plugin_hooks::plugin_command_handler().ok_or(FailReason::CommandNotFound)?;
        // Offline, what its asynchronous commands left (completion messages
        // may hold stage-2 commands) is the control side's to perform.
        let outcomes = handler(name, args.as_bytes(), &mut self.world).map_err(FailReason::Plugin)?;
        self.plugin_outcomes.extend(outcomes);
        Ok(())
    }

    /// `/u_cmd node unit name args...`: a command a plugin defined for one
    /// of its units, run on that unit of a running synth.
    fn cmd_u_cmd(&mut self, node: i32, unit: i32, name: &str, args: &ArgBlock) -> CmdResult {
        let idx = self.tree.lookup(node).ok_or(FailReason::NodeNotFound(node))?;
        let world = &mut self.world;
        // An edit: the command may change the unit as no block does.
        let synth = self.tree.synth_mut(idx).ok_or(FailReason::NotASynth(node))?;
        synth.unit_command(world, &mut self.scratch, unit, name, args.as_bytes())
    }

    /// scsynth's node reference: an id, or a string of steps (`h` head, `t`
    /// tail, `u` up, `p` previous, `n` next) followed by the id to start from.
    /// Returns the node, or the id that was asked for.
    fn node_ref(&self, r: &NodeRef) -> Result<NodeIdx, i32> {
        let id = r.id;
        let Some(steps) = &r.steps else { return self.tree.lookup(id).ok_or(id) };
        let mut node = self.tree.lookup(id);
        for step in steps.chars() {
            let Some(n) = node else { return Err(id) };
            node = match step {
                'h' => self.tree.group(n).ok_or(id)?.head,
                't' => self.tree.group(n).ok_or(id)?.tail,
                'u' => self.tree.node(n).parent,
                'p' => self.tree.node(n).prev,
                'n' => self.tree.node(n).next,
                _ => Some(n),
            };
        }
        node.ok_or(id)
    }



    /// The node an argument names; tolerant callers use `.ok()`.
    pub(crate) fn node_arg(&self, r: &NodeRef) -> Result<NodeIdx, FailReason> {
        self.node_ref(r).map_err(FailReason::NodeNotFound)
    }

    pub(crate) fn group_arg(&self, r: &NodeRef) -> Result<NodeIdx, FailReason> {
        match self.node_ref(r) {
            Ok(n) if self.tree.node(n).is_group() => Ok(n),
            Ok(n) => Err(FailReason::GroupNotFound(self.tree.node(n).id)),
            Err(id) => Err(FailReason::GroupNotFound(id)),
        }
    }

    /// Resolves an add action and target to a position, as scsynth does:
    /// head/tail need a group, before/after/replace any node.
    fn position(&self, action: i32, target: &NodeRef) -> Result<(Position, Option<NodeIdx>), FailReason> {
        match action {
            0 | 1 => {
                let g = self.group_arg(target)?;
                Ok((if action == 0 { Position::Head(g) } else { Position::Tail(g) }, None))
            }
            2 | 3 => {
                let n = self.node_arg(target)?;
                if n == ROOT {
                    return Err(FailReason::RootHasNoSiblings);
                }
                Ok((if action == 2 { Position::Before(n) } else { Position::After(n) }, None))
            }
            4 => {
                let n = self.node_arg(target)?;
                if n == ROOT {
                    return Err(FailReason::ReplaceRoot);
                }
                Ok((Position::Before(n), Some(n)))
            }
            // Extension: 5 and 6 add a satellite that runs just before or
            // just after the target node and is paused and freed with it.
            5 | 6 => {
                let n = self.node_arg(target)?;
                if n == ROOT {
                    return Err(FailReason::RootSatellite);
                }
                // Satellites of satellites run nested: their depth is bounded.
                let mut depth = 0;
                let mut cur = self.tree.node(n).satellite_of;
                while let Some(r) = cur {
                    depth += 1;
                    if depth >= MAX_SATELLITE_NESTING {
                        return Err(FailReason::SatellitesTooDeep);
                    }
                    cur = self.tree.node(r).satellite_of;
                }
                Ok((if action == 5 { Position::SatelliteBefore(n) } else { Position::SatelliteAfter(n) }, None))
            }
            _ => Err(FailReason::AddAction(action)),
        }
    }

    fn new_node_id(&mut self, id: i32) -> Result<i32, FailReason> {
        if id < -1 {
            return Err(FailReason::ReservedNodeId(id));
        }
        if id >= 0 && self.tree.contains_id(id) {
            return Err(FailReason::DuplicateNodeId);
        }
        // Every way of making a node counts against -n, server-assigned ids
        // included (the tables and the tree walk are reserved for that many).
        if self.tree.num_groups + self.tree.num_synths >= self.options.max_nodes {
            return Err(FailReason::TooManyNodes);
        }
        if id == -1 {
            return Ok(self.tree.next_hidden_id());
        }
        Ok(id)
    }

    fn cmd_s_new(
        &mut self,
        def_name: &str,
        id: i32,
        action: i32,
        target: &NodeRef,
        controls: &ControlSets,
    ) -> CmdResult {
        let Some(def) = self.defs.get(def_name).cloned() else {
            self.print(format!("*** ERROR: SynthDef {} not found\n", terminal_safe(def_name)));
            return Err(FailReason::SynthDefNotFound);
        };
        let (pos, replaced) = self.position(action, target)?;
        // scsynth moves the replaced node to a hidden id first (so the new
        // node may take its id, and no /n_end is sent for it).
        if let Some(r) = replaced {
            let hidden = self.tree.next_hidden_id();
            self.tree.rename(r, hidden);
        }
        let id = self.new_node_id(id)?;
        let used_before = match self.memory_probe {
            Some(probe) => {
                let (free, used) = probe();
                // The free total counts the pool's block headers as free, so
                // a nearly full pool still shows some; a synth is made only
                // when it fits in one hole, or its memory would come from
                // the system heap.
                let largest = self.largest_free_probe.map_or(free, |largest| largest().min(free));
                // Synths made but not built yet (several /s_new in one block)
                // will take theirs from the same pool.
                if largest.saturating_sub(self.pending_construct) < def.expected_bytes() + self.pool_headroom {
                    return Err(FailReason::OutOfRealTimeMemory);
                }
                Some(used)
            }
            None => None,
        };
        let idx = self.new_synth_quiet(std::sync::Arc::clone(&def), id, pos);
        if let (Some(probe), Some(before)) = (self.memory_probe, used_before) {
            def.new_bytes.fetch_max(probe().1.saturating_sub(before), std::sync::atomic::Ordering::Relaxed);
            let building = def.expected_bytes().saturating_sub(def.new_bytes.load(std::sync::atomic::Ordering::Relaxed));
            if let Some(s) = self.tree.synth_mut(idx) {
                s.reserved = building;
            }
            self.pending_construct += building;
        }
        self.apply_controls(idx, controls);
        if let Some(r) = replaced {
            self.delete_node(r);
        }
        self.announce_go(idx);
        Ok(())
    }

    fn cmd_s_noid(&mut self, nodes: &[NodeRef]) -> CmdResult {
        for r in nodes {
            let Ok(n) = self.node_arg(r) else { continue };
            if n != ROOT && !self.tree.node(n).is_group() {
                let hidden = self.tree.next_hidden_id();
                self.tree.rename(n, hidden);
            }
        }
        Ok(())
    }

    fn cmd_g_new(&mut self, groups: &[NewGroup], parallel: bool) -> CmdResult {
        for g in groups {
            let id = g.id;
            let (pos, replaced) = self.position(g.add_action, &g.target)?;
            if let Some(existing) = self.tree.lookup(id) {
                // scsynth tolerates re-creating a group that already sits in the same parent.
                let target_parent = match pos {
                    Position::Head(g) | Position::Tail(g) => Some(g),
                    Position::Before(n)
                    | Position::After(n)
                    | Position::SatelliteBefore(n)
                    | Position::SatelliteAfter(n) => self.tree.node(n).parent,
                };
                let same = replaced.is_none()
                    && self.tree.node(existing).is_group()
                    && self.tree.node(existing).parent.is_some()
                    && self.tree.node(existing).parent == target_parent;
                if same {
                    continue;
                }
                return Err(FailReason::DuplicateNodeId);
            }
            if let Some(r) = replaced {
                let hidden = self.tree.next_hidden_id();
                self.tree.rename(r, hidden);
            }
            let id = self.new_node_id(id)?;
            let idx = self.new_group_quiet(id, pos, parallel);
            if let Some(r) = replaced {
                self.delete_node(r);
            }
            self.announce_go(idx);
        }
        Ok(())
    }

    fn cmd_n_free(&mut self, nodes: &[NodeRef]) -> CmdResult {
        for r in nodes {
            let n = self.node_arg(r)?;
            self.delete_node(n);
        }
        Ok(())
    }

    fn cmd_n_run(&mut self, nodes: &[(NodeRef, bool)]) -> CmdResult {
        for (r, run) in nodes {
            let n = self.node_arg(r)?;
            self.set_run(n, *run);
        }
        Ok(())
    }

    /// Applies control settings (`/s_new`, `/n_set`, `/n_setn`): each
    /// value sets or maps the control so many places after the first.
    /// On a group, each synth in it (in its subgroups too) takes them.
    fn apply_controls(&mut self, node: NodeIdx, controls: &ControlSets) {
        // Settings change no node's place, so the walk can follow the links.
        let mut cur = self.tree.next_synth_under(node, None);
        while let Some(c) = cur {
            self.apply_controls_to_synth(c, controls);
            cur = self.tree.next_synth_under(node, Some(c));
        }
    }

    fn apply_controls_to_synth(&mut self, node: NodeIdx, controls: &ControlSets) {
        let (n_audio, n_control) = (self.world.num_audio_buses(), self.world.num_control_buses());
        let Some(s) = self.tree.synth_mut(node) else { return };
        for (ctl, values) in controls.iter() {
            // A name is looked up once per setting, not once per value.
            let named = match ctl {
                ControlRef::Name(name) => match s.def.param(name) {
                    Some(range) => Some(range),
                    None => continue,
                },
                ControlRef::Index(_) => None,
            };
            for (i, value) in (0..).zip(values) {
                let k = match (ctl, named) {
                    (_, Some((first, len))) => ((i as u32) < len).then_some((first + i as u32) as usize),
                    (ControlRef::Index(idx), None) => idx
                        .checked_add(i)
                        .filter(|&k| k >= 0 && (k as usize) < s.def.initial_controls.len())
                        .map(|k| k as usize),
                    (ControlRef::Name(_), None) => None,
                };
                let Some(k) = k else { continue };
                match value {
                    ControlValue::Value(v) => s.set_control(k, v),
                    ControlValue::ControlBus(bus) => map_control_to(s, k, bus, n_control, ControlMap::ControlBus),
                    ControlValue::AudioBus(bus) => map_control_to(s, k, bus, n_audio, ControlMap::AudioBus),
                    ControlValue::Ignored => {}
                }
            }
        }
    }

    fn control_index(def: &crate::graph_def::GraphDef, ctl: ControlRef<'_>, i: i32) -> Option<usize> {
        match ctl {
            ControlRef::Index(idx) => {
                let k = idx.checked_add(i)?;
                (k >= 0 && (k as usize) < def.initial_controls.len()).then_some(k as usize)
            }
            ControlRef::Name(name) => {
                let (first, len) = def.param(name)?;
                (i >= 0 && (i as u32) < len).then_some((first + i as u32) as usize)
            }
        }
    }

    /// Sets a control of a synth, or of every synth under a group (nested
    /// groups too, as scsynth's group recursion reaches them), walking the
    /// tree in place.
    fn set_control(&mut self, node: NodeIdx, ctl: ControlRef<'_>, i: i32, value: f32) {
        let mut cur = self.tree.next_synth_under(node, None);
        while let Some(c) = cur {
            if let Some(s) = self.tree.synth_mut(c) {
                if let Some(k) = Self::control_index(&s.def, ctl, i) {
                    s.set_control(k, value);
                }
            }
            cur = self.tree.next_synth_under(node, Some(c));
        }
    }

    /// Maps a control of a synth, or of every synth under a group, as
    /// `set_control` reaches them.
    fn map_control(&mut self, node: NodeIdx, ctl: ControlRef<'_>, i: i32, bus: i32, audio: bool) {
        let n_audio = self.world.num_audio_buses();
        let n_control = self.world.num_control_buses();
        let mut cur = self.tree.next_synth_under(node, None);
        while let Some(c) = cur {
            if let Some(s) = self.tree.synth_mut(c) {
                if let Some(k) = Self::control_index(&s.def, ctl, i) {
                    if audio {
                        map_control_to(s, k, bus, n_audio, ControlMap::AudioBus);
                    } else {
                        map_control_to(s, k, bus, n_control, ControlMap::ControlBus);
                    }
                }
            }
            cur = self.tree.next_synth_under(node, Some(c));
        }
    }

    fn cmd_n_set(&mut self, node: &NodeRef, controls: &ControlSets) -> CmdResult {
        let n = self.node_arg(node)?;
        self.apply_controls(n, controls);
        Ok(())
    }



    fn cmd_n_fill(&mut self, node: &NodeRef, fills: &[ControlFill]) -> CmdResult {
        let n = self.node_arg(node)?;
        for f in fills {
            let ctl = ControlRef::from(&f.control);
            let count = f.count.min(MAX_CONTROL_RANGE);
            for i in 0..count.max(0) {
                self.set_control(n, ctl, i, f.value);
            }
            // scsynth 3.13 then applies one more argument to the same range.
            match f.then {
                ControlValue::ControlBus(bus) => {
                    for i in 0..count.max(0) {
                        self.map_control(n, ctl, i, bus.wrapping_add(i), false);
                    }
                }
                ControlValue::Value(value) => {
                    for i in 0..count.max(0) {
                        self.set_control(n, ctl, i, value);
                    }
                }
                ControlValue::AudioBus(_) | ControlValue::Ignored => {}
            }
        }
        Ok(())
    }

    fn cmd_n_map(&mut self, node: &NodeRef, maps: &[BusMap], audio: bool) -> CmdResult {
        let n = self.node_arg(node)?;
        for m in maps {
            self.map_control(n, ControlRef::from(&m.control), 0, m.bus, audio);
        }
        Ok(())
    }

    fn cmd_n_mapn(&mut self, node: &NodeRef, maps: &[BusMapRange], audio: bool) -> CmdResult {
        let n = self.node_arg(node)?;
        for m in maps {
            let ctl = ControlRef::from(&m.control);
            for i in 0..m.count.clamp(0, MAX_CONTROL_RANGE) {
                let b = if m.bus == -1 { -1 } else { m.bus.wrapping_add(i) };
                self.map_control(n, ctl, i, b, audio);
            }
        }
        Ok(())
    }

    fn cmd_n_before_after(&mut self, pairs: &[(NodeRef, NodeRef)], before: bool) -> CmdResult {
        let mut prev: Option<(NodeIdx, NodeIdx)> = None;
        let mut beside_root = false;
        let mut place = |this: &mut Engine, node: NodeIdx, target: NodeIdx| {
            if target == ROOT {
                beside_root = true;
                return;
            }
            if node == ROOT || this.tree.is_ancestor(node, target) {
                return;
            }
            this.move_node(node, if before { Position::Before(target) } else { Position::After(target) });
        };
        for (node, target) in pairs {
            let node = self.node_arg(node);
            let target = self.node_arg(target);
            let (Ok(node), Ok(target)) = (node, target) else { continue };
            if let Some((pn, pt)) = prev {
                if pn != node {
                    place(self, pn, pt);
                }
            }
            prev = Some((node, target));
        }
        if let Some((pn, pt)) = prev {
            if pn != pt {
                place(self, pn, pt);
            }
        }
        if beside_root {
            return Err(FailReason::RootHasNoSiblings);
        }
        Ok(())
    }

    fn cmd_n_order(&mut self, action: i32, target: &NodeRef, nodes: &[NodeRef]) -> CmdResult {
        let anchor: Position = match action {
            0 | 1 => {
                let g = self.group_arg(target)?;
                if action == 0 {
                    Position::Head(g)
                } else {
                    Position::Tail(g)
                }
            }
            2 | 3 => {
                let t = self.node_arg(target)?;
                if t == ROOT {
                    return Err(FailReason::RootHasNoSiblings);
                }
                if action == 2 {
                    Position::Before(t)
                } else {
                    Position::After(t)
                }
            }
            _ => return Err(FailReason::OrderAction(action)),
        };
        let mut rest = nodes.iter();
        let first = rest.by_ref().find_map(|r| self.node_arg(r).ok()).ok_or(FailReason::NoNodeFound)?;
        let movable = |this: &Engine, n: NodeIdx, p: Position| {
            let anchor_node = match p {
                Position::Head(g) | Position::Tail(g) => g,
                Position::Before(t) | Position::After(t) | Position::SatelliteBefore(t) | Position::SatelliteAfter(t) => t,
            };
            let beside_root = anchor_node == ROOT && matches!(p, Position::Before(_) | Position::After(_));
            n != ROOT && !beside_root && !this.tree.is_ancestor(n, anchor_node) && n != anchor_node
        };
        if movable(self, first, anchor) {
            self.move_node(first, anchor);
        }
        let mut prev = first;
        for r in rest {
            let Ok(n) = self.node_arg(r) else { continue };
            if movable(self, n, Position::After(prev)) {
                self.move_node(n, Position::After(prev));
                prev = n;
            }
        }
        Ok(())
    }

    fn cmd_g_head_tail(&mut self, pairs: &[(NodeRef, NodeRef)], head: bool) -> CmdResult {
        for (group, node) in pairs {
            let g = self.group_arg(group)?;
            let n = self.node_arg(node)?;
            if n == ROOT || self.tree.is_ancestor(n, g) {
                continue;
            }
            self.move_node(n, if head { Position::Head(g) } else { Position::Tail(g) });
        }
        Ok(())
    }

    fn cmd_g_free_all(&mut self, groups: &[NodeRef], deep: bool) -> CmdResult {
        for r in groups {
            let g = self.group_arg(r)?;
            if deep {
                self.deep_free(g);
            } else {
                self.delete_group_children(g);
            }
        }
        Ok(())
    }

    fn cmd_c_set(&mut self, values: &[(i32, f32)]) -> CmdResult {
        let counter = self.world.buf_counter;
        for &(index, value) in values {
            let index = index as u32 as usize;
            if index >= self.world.num_control_buses() {
                return Err(FailReason::IndexOutOfRange);
            }
            self.world.control_bus[index] = value;
            self.world.control_touched[index] = counter;
        }
        Ok(())
    }

    fn cmd_c_setn(&mut self, ranges: &BusRanges) -> CmdResult {
        let counter = self.world.buf_counter;
        let max = self.world.num_control_buses() as i64;
        for (start, count, values) in ranges.iter() {
            let start = i64::from(start);
            let end = start + i64::from(count) - 1;
            if start < 0 || end >= max || start > end {
                return Err(FailReason::IndexOutOfRange);
            }
            for (i, value) in (start as usize..).zip(values) {
                self.world.control_bus[i] = value;
                self.world.control_touched[i] = counter;
            }
        }
        Ok(())
    }

    fn cmd_c_fill(&mut self, fills: &[ValueFill]) -> CmdResult {
        let counter = self.world.buf_counter;
        let max = self.world.num_control_buses() as i64;
        for f in fills {
            let start = i64::from(f.start);
            let end = start + i64::from(f.count) - 1;
            if start < 0 || end >= max || start > end {
                return Err(FailReason::IndexOutOfRange);
            }
            for i in start..=end {
                self.world.control_bus[i as usize] = f.value;
                self.world.control_touched[i as usize] = counter;
            }
        }
        Ok(())
    }

    fn cmd_d_free(&mut self, names: &[Option<String>]) -> CmdResult {
        for name in names {
            let name = name.as_deref().ok_or(FailReason::SynthDefNotFound)?;
            match self.defs.remove(name) {
                Some(def) => self.removed_defs.push(def),
                None => return Err(FailReason::NamedSynthDefNotFound(name.to_string())),
            }
        }
        Ok(())
    }

    fn cmd_buffer(&mut self, kind: CommandKind, cmd: &Command) -> Result<(), CommandFailure> {
        let name = kind.name();
        let result = crate::buffer_cmds::perform_in_place(cmd, &mut self.world);
        // Even a failed `/b_set` or `/b_setn` keeps the values before the bad one.
        if let Command::BSet { buffer, .. } | Command::BSetn { buffer, .. } | Command::BFill { buffer, .. } = cmd {
            self.responses.changed(&mut self.world, *buffer);
        }
        match result {
            Ok(mut done) => {
                let done_reply: Option<Reply> = done.done_reply(name);
                self.replies.append(&mut done.replies);
                self.replies.extend(done_reply);
                Ok(())
            }
            Err(f) => Err(CommandFailure::new(name, f)),
        }
    }
}

/// Maps control `k` of a synth to bus `bus` of `buses` (`map` says which
/// kind); a negative bus unmaps it, a bus past the last changes nothing.
fn map_control_to(s: &mut crate::synth::Synth, k: usize, bus: i32, buses: usize, map: fn(u32) -> ControlMap) {
    if bus < 0 {
        if let Some(m) = s.ctx.control_map.get_mut(k) {
            *m = ControlMap::Own;
        }
    } else if (bus as usize) < buses {
        s.map_control(k, map(bus as u32));
    }
}

/// The SynthDef files `/d_load` (a pattern) or `/d_loadDir` (a directory)
/// names, under `-P`: the pattern or directory must lie inside the
/// restricted directory, and so must each file found (a symlink leading out
/// is left out with an error). The errors say what was refused or missing.
pub fn def_files(
    commands: &crate::buffer_cmds::BufferCommands,
    path: &str,
    dir: bool,
) -> (Vec<std::path::PathBuf>, Vec<crate::control::DefLoadError>) {
    use crate::control::DefLoadError;
    let mut errors = Vec::new();
    let path = match commands.restrict(path) {
        Ok(p) => p,
        Err(e) => return (Vec::new(), vec![e.into()]),
    };
    let found = if dir { synthdef_files_in(&path) } else { glob_files(&path.to_string_lossy()) };
    if found.is_empty() && !dir {
        errors.push(DefLoadError::NoMatch(path));
    }
    let mut files = Vec::with_capacity(found.len());
    for f in found {
        match commands.restrict(&f.to_string_lossy()) {
            Ok(_) => files.push(f),
            Err(e) => errors.push(e.into()),
        }
    }
    (files, errors)
}

/// Files matching a pattern with `*` and `?` in its last component.
pub fn glob_files(pattern: &str) -> Vec<std::path::PathBuf> {
    let p = Path::new(pattern);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !name.contains(['*', '?']) {
        return if p.is_file() { vec![p.to_path_buf()] } else { vec![] };
    }
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|f| f.is_file() && f.file_name().and_then(|n| n.to_str()).is_some_and(|n| wildcard(name, n)))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn wildcard(pat: &str, s: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (pat.chars().collect(), s.chars().collect());
    fn rec(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|k| rec(&p[1..], &s[k..])),
            Some('?') => !s.is_empty() && rec(&p[1..], &s[1..]),
            Some(c) => s.first() == Some(c) && rec(&p[1..], &s[1..]),
        }
    }
    rec(&p, &s)
}

/// Every `.scsyndef` file below `dir`, recursively, in name order. Links to
/// directories are not followed (as a directory iterator does by default),
/// so a link back up the tree cannot make the walk endless.
pub fn synthdef_files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.extension().and_then(|x| x.to_str()) == Some("scsyndef") && p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
