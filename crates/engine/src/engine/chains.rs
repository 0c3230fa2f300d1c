//! A parallel group of chains on one thread, place by place.
//!
//! A parallel group whose children are sequential groups of the same shape
//! (synths of the same defs in the same places: a voice and its effect, say)
//! runs on one thread (with `-T 1`, or when the chooser gives it one,
//! `parallel_groups::Ran::walk`) the first synth of every chain, then the
//! second of every chain, and so on, rather than chain after chain. Consecutive synths
//! of one lockstep-safe def then run side by side, so the chains' filters
//! and oscillators compute several voices' recurrences at once, as lane
//! batches of a group's own children do.
//!
//! Only the order of synths of different chains and places changes: synth
//! `j` of chain `k` runs before synth `j' > j` of an earlier chain `k' < k`.
//! That computes the same as chain after chain when no such pair shares a
//! bus that one of them writes (a bus written by both would receive their
//! sums in another order), their synths read and write no buffer, draw
//! from their own generators if any, and end or pause only themselves
//! (parallel-safe defs, see `graph_def::units_safe`): what they ask for is
//! carried out after all of them ran, in tree order, as a sequential run
//! has it, and nothing a synth asks for changes what another computes.
//!
//! On the threads the same chains, found and checked by the same functions
//! (`collect_chains`, `chains_independent`), go in items of several chains
//! that run place by place (`parallel::GroupJobs::chain_items`).

use super::Engine;
use crate::graph_def::BusSource;
use crate::node_tree::{CalcState, NodeIdx, NodeKind, NodeTree, PrintNext};
use magnetar_ugens::ControlMap;
use std::sync::Arc;

/// Synths in the chains of one group at most, and places in a chain.
const MAX_SYNTHS: usize = 256;
const MAX_PLACES: usize = 8;
/// Buses a synth reads and writes, at most (ranges).
const MAX_USES: usize = 4;

/// A range of buses a synth reads or writes.
#[derive(Clone, Copy, Default)]
struct BusUse {
    audio: bool,
    write: bool,
    first: i64,
    end: i64,
}

impl BusUse {
    fn conflicts(&self, o: &BusUse) -> bool {
        (self.write || o.write) && self.audio == o.audio && self.first < o.end && o.first < self.end
    }
}

/// The chains of a parallel group: `nodes[k * places + j]` is synth `j`
/// of chain `k`.
#[derive(Clone, Copy)]
pub(crate) struct Chains {
    nodes: [NodeIdx; MAX_SYNTHS],
    pub(crate) chains: usize,
    pub(crate) places: usize,
}

impl Chains {
    /// Synth `place` of chain `chain`.
    pub(crate) fn node(&self, chain: usize, place: usize) -> NodeIdx {
        self.nodes[chain * self.places + place]
    }
}

/// What `chains_ready` found for a group since the tree's last edit: its
/// chains, kept with the verdict, and whether they may run place by place.
pub(super) struct ChainsSeen {
    group: NodeIdx,
    edits: u64,
    ok: bool,
    chains: Chains,
}

/// Groups whose verdict the engine keeps.
pub(super) const KEPT_VERDICTS: usize = 8;

/// Room for `KEPT_VERDICTS` verdicts, made before the audio thread runs.
pub(super) fn verdicts() -> Box<[Option<ChainsSeen>]> {
    (0..KEPT_VERDICTS).map(|_| None).collect()
}

impl Engine {
    /// Runs parallel group `group`'s chains place by place, if it is made
    /// of chains that may run so (see the module's text). False, having run
    /// nothing, if not.
    pub(super) fn calc_chains(&mut self, group: NodeIdx) -> bool {
        let Some(at) = self.chains_ready(group) else { return false };
        self.run_chains(at);
        true
    }

    /// Whether parallel group `group` is made of chains that may run place
    /// by place: where `run_chains` finds them (a slot of the kept
    /// verdicts). Collected and checked once after each edit of the tree.
    pub(super) fn chains_ready(&mut self, group: NodeIdx) -> Option<usize> {
        if !self.lockstep || self.tracing {
            return None;
        }
        // What was found for the group since the tree's last edit: its
        // shape and states, and its synths' controls, are as they were.
        let edits = self.tree.edits();
        let known =
            self.chains_checked.iter().position(|c| c.as_ref().is_some_and(|c| c.group == group && c.edits == edits));
        if let Some(at) = known {
            return self.chains_checked[at].as_ref().is_some_and(|c| c.ok).then_some(at);
        }
        let at = self.chains_next % self.chains_checked.len();
        self.chains_next = at + 1;
        let found = collect_chains(&self.tree, group);
        let ok = found.as_ref().is_some_and(|c| chains_independent(&mut self.tree, c));
        let slot = &mut self.chains_checked[at];
        match (slot.as_mut(), found) {
            // In place: the slot's storage is kept, nothing is allocated.
            (Some(seen), found) => {
                seen.group = group;
                seen.edits = edits;
                seen.ok = ok;
                seen.chains = found.unwrap_or(seen.chains);
            }
            (None, found) => {
                *slot = Some(ChainsSeen {
                    group,
                    edits,
                    ok,
                    chains: found.unwrap_or(Chains { nodes: [0; MAX_SYNTHS], chains: 0, places: 0 }),
                })
            }
        }
        ok.then_some(at)
    }

    /// Synth `place` of chain `chain` of the chains kept at `at`.
    fn chain_node(&self, at: usize, chain: usize, place: usize) -> NodeIdx {
        self.chains_checked[at].as_ref().map_or(0, |c| c.chains.node(chain, place))
    }

    /// Runs the chains `chains_ready` found (at `at`) place by place, then
    /// carries out what their synths asked for, in tree order.
    pub(super) fn run_chains(&mut self, at: usize) {
        let Some((n, m)) = self.chains_checked[at].as_ref().map(|c| (c.chains.chains, c.chains.places)) else { return };
        for j in 0..m {
            let mut k = 0;
            while k < n {
                let first = self.chain_node(at, k, j);
                let (batch, len) = self.lane_batch(first, |e, _, l, def| {
                    (k + l < n).then(|| e.chain_node(at, k + l, j)).filter(|&nx| e.lane_member(nx, def))
                });
                let run = if len >= 2 { self.lane_synths(&batch[..len]) } else { None };
                if let Some(run) = run {
                    let (world, known) = (&mut self.world, self.quiet);
                    // SAFETY: distinct synths owned by the tree, which is
                    // not changed until the run is done; the lane scratch
                    // holds `scratch_len * MAX_LANES` samples of their def
                    // (`lockstep_candidate`).
                    unsafe {
                        crate::schedule::run_lanes(
                            &run[..len],
                            world,
                            self.lane_scratch.as_mut_ptr(),
                            known,
                            crate::schedule::Walk::Up,
                        )
                    };
                    k += len;
                } else {
                    if let Some(s) = self.tree.synth_to_run(first) {
                        // A failure is noted in the synth (`has_failed`).
                        s.calc_contained(&mut self.world, &mut self.scratch);
                    }
                    k += 1;
                }
            }
        }
        for k in 0..n {
            for j in 0..m {
                let idx = self.chain_node(at, k, j);
                let Some(s) = self.tree.synth_to_run(idx) else { continue };
                if s.has_failed() {
                    self.unit_failed(idx, false);
                } else if s.has_requests() {
                    self.after_synth(idx);
                }
            }
        }
    }
}

/// The group's children as chains: two or more sequential groups,
/// each running and holding only running synths of parallel-safe defs,
/// the same defs in the same places, with nothing to print and no
/// satellites.
pub(crate) fn collect_chains(tree: &NodeTree, group: NodeIdx) -> Option<Chains> {
    let mut c = Chains { nodes: [0; MAX_SYNTHS], chains: 0, places: 0 };
    let mut defs: [*const crate::graph_def::GraphDef; MAX_PLACES] = [std::ptr::null(); MAX_PLACES];
    let mut child = tree.group(group)?.head;
    let mut len = 0;
    while let Some(g) = child {
        let n = tree.node(g);
        let NodeKind::Group(data) = &n.kind else { return None };
        if n.state != CalcState::Run || n.print_next != PrintNext::Nothing || data.parallel || tree.has_satellites(g) {
            return None;
        }
        let mut place = 0;
        let mut at = data.head;
        while let Some(sx) = at {
            let sn = tree.node(sx);
            let NodeKind::Synth(s) = &sn.kind else { return None };
            let ok = sn.state == CalcState::Run
                && sn.print_next == PrintNext::Nothing
                && !tree.has_satellites(sx)
                && (s.def.parallel || (s.def.parallel_own_rng && s.rgen.is_some()))
                && s.def.buffer_accesses.is_empty()
                && s.def.bus_reads.len() < MAX_USES
                && s.ctx.control_map.iter().all(|m| *m == ControlMap::Own);
            if !ok || place == MAX_PLACES || len == MAX_SYNTHS {
                return None;
            }
            let def = Arc::as_ptr(&s.def);
            if c.chains == 0 {
                defs[place] = def;
            } else if place >= c.places || defs[place] != def {
                return None;
            }
            c.nodes[len] = sx;
            len += 1;
            place += 1;
            at = sn.next;
        }
        if c.chains == 0 {
            c.places = place;
        } else if place != c.places {
            return None;
        }
        c.chains += 1;
        child = n.next;
    }
    (c.chains >= 2 && c.places >= 2).then_some(c)
}

/// Whether no synth of one chain shares a bus that either writes with a
/// synth of another chain in a later place, from the synths' controls
/// as they are now.
#[cold]
pub(crate) fn chains_independent(tree: &mut NodeTree, c: &Chains) -> bool {
    let mut uses = [[BusUse::default(); MAX_USES]; MAX_SYNTHS];
    let mut counts = [0usize; MAX_SYNTHS];
    for (l, &idx) in c.nodes[..c.chains * c.places].iter().enumerate() {
        let Some(s) = tree.synth_to_run(idx) else { return false };
        let value = |src: BusSource| match src {
            BusSource::Constant(v) => Some(v),
            BusSource::Control(i) => s.ctx.controls.get(i as usize).copied(),
            BusSource::Unknown => None,
        };
        let accesses = s.def.bus_reads.iter().map(|r| (r, false)).chain(s.def.bus_write.iter().map(|w| (w, true)));
        for (a, write) in accesses {
            let Some(v) = value(a.bus).filter(|v| v.is_finite()) else { return false };
            // The bus as the unit works it out; a negative one is left
            // to the units (and kept apart here).
            let first = v as i64;
            if first < 0 || counts[l] == MAX_USES {
                return false;
            }
            uses[l][counts[l]] = BusUse { audio: a.audio, write, first, end: first + a.channels as i64 };
            counts[l] += 1;
        }
    }
    let m = c.places;
    for k in 1..c.chains {
        for j in 0..m - 1 {
            let a = &uses[k * m + j][..counts[k * m + j]];
            for kk in 0..k {
                for jj in j + 1..m {
                    let b = &uses[kk * m + jj][..counts[kk * m + jj]];
                    if a.iter().any(|x| b.iter().any(|y| x.conflicts(y))) {
                        return false;
                    }
                }
            }
        }
    }
    true
}
