//! A SynthDef made ready to instantiate: every UGen resolved to its
//! constructor, an execution order chosen, and every wire given its place.
//!
//! Constants and control-rate wires live in each synth's own array, since
//! control values persist from block to block. Audio-rate wires live in a
//! scratch area shared by all synths (as in scsynth): they only carry a value
//! within a block, so buffers are reused as soon as their last reader ran.
//!
//! The order of pure units (those that only read their inputs and write
//! their outputs) may change within the data dependencies; units that touch
//! anything else keep their relative order. That freedom lets independent
//! instances of a batchable UGen run as one step.

use magnetar_synthdef as sd;
use magnetar_ugens::unit::{NO_UNIT, SCRATCH};
use magnetar_ugens::{BufferUse, BusUse, Effects, Rate, Registry, UnitCtor, UnitSpec, WireRef};
use std::collections::{BTreeSet, HashMap};

mod fuse;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DefError {
    #[error("synthdef \"{def}\": UGen '{ugen}' not installed")]
    UnknownUGen { def: String, ugen: String },
    /// A unit given a rate it does not run at, or fewer inputs or outputs
    /// than it declared.
    #[error("synthdef \"{def}\": UGen {unit} ({ugen}) {mismatch}")]
    Mismatch { def: String, unit: usize, ugen: String, mismatch: magnetar_ugens::Mismatch },
    /// `-d` defs are loaded already (scsynth's words, then the def stays out).
    #[error("Could not add SynthDef {def}. Try adjusting ServerOptions:maxSynthDefs or the -d cmdline flag.")]
    TooManyDefs { def: String },
    /// More wire buffers than `-w` (scsynth's words first).
    #[error("exceeded number of interconnect buffers. SynthDef {def} needs {needed}, the server was started with -w {max}")]
    TooManyWireBufs { def: String, needed: usize, max: usize },
}

/// One UGen of a def, resolved.
pub struct UnitDef {
    pub name: String,
    pub rate: Rate,
    pub special_index: i16,
    pub ctor: UnitCtor,
    pub inputs: Vec<WireRef>,
    pub outputs: Vec<WireRef>,
}

/// Where a unit's bus number comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BusSource {
    Constant(f32),
    /// A control-rate `Control` value (its index in the synth's controls).
    Control(u32),
    /// Computed by other units: any bus, as far as anyone can tell before.
    Unknown,
}

/// A bus reader or writer of a def.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BusAccess {
    pub audio: bool,
    pub bus: BusSource,
    pub channels: u32,
}

/// A unit of a def that reads or writes a buffer's samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufAccess {
    pub write: bool,
    pub buf: BusSource,
}

/// One unit to build and run: a unit of the def, or a batch of several.
pub struct Step {
    pub ctor: UnitCtor,
    /// The def unit this step stands for (the last member of a batch);
    /// its done flag is the one the step sets.
    pub unit: u32,
    pub lanes: usize,
    /// Whether the step runs at audio rate (a block per call) or not (one value).
    pub audio: bool,
    /// A kernel that runs this step for several synths of the def at once.
    pub lane: Option<magnetar_ugens::LaneKernel>,
    /// Whether the step draws random numbers (its lane kernel, if any, then
    /// needs every synth's own generator).
    pub draws: bool,
    pub inputs: Vec<WireRef>,
    pub outputs: Vec<WireRef>,
    /// For a tree of sums run as one step: its nodes (the step's units, in
    /// the def's order), which `Synth::construct` builds in place of `ctor`.
    /// Its inner nodes read wires the step itself writes; its inputs are
    /// the wires from outside the tree.
    pub sum_tree: Option<magnetar_ugens::ops::sum_tree::SumTree>,
    /// Whether one of its units writes a bus: in a lane batch, the one step
    /// whose synths must take their turns in synth order (`run_lanes`).
    pub writes_bus: bool,
}

/// A compiled SynthDef, shared by all synths made from it.
pub struct GraphDef {
    pub name: String,
    /// Constant values; they occupy the first slots of the local wire array.
    pub constants: Vec<f32>,
    pub initial_controls: Vec<f32>,
    /// Control name → (first index, number of values).
    pub params: HashMap<String, (u32, u32)>,
    /// Names in definition order, for replies that list controls.
    pub param_names: Vec<(String, u32)>,
    pub units: Vec<UnitDef>,
    /// What a synth builds and runs, in order.
    pub steps: Vec<Step>,
    /// Steps that compute every block (audio and control rate), in order.
    pub calc_steps: Vec<u32>,
    /// The step of each def unit (demand-rate units run when read).
    pub step_of_unit: Vec<u32>,
    /// Whether the def has demand-rate units.
    pub has_demand: bool,
    /// Whether some of its units are plugins' (foreign code).
    pub foreign: bool,
    /// Length of each synth's own wire array (constants and control wires).
    pub local_len: usize,
    /// Samples of shared scratch the audio wires need.
    pub scratch_len: usize,
    /// Whether synths of this def may run step by step side by side (see
    /// `lockstep_safe`).
    pub lockstep: bool,
    /// Whether it may, as `lockstep`, when each synth has its own random
    /// generator: each synth then draws from its own, in its own order.
    pub lockstep_own_rng: bool,
    /// Whether synths of this def in a parallel group may run on any
    /// thread: lockstep-safe, or reading buses with `In`/`InFeedback`/`LagIn`/`InTrig`, with
    /// `Out` or `ReplaceOut` as the bus writer, whose writes the engine
    /// replays in child order.
    pub parallel: bool,
    /// Whether it may, as `parallel`, when each synth has its own random
    /// generator: random units then do not tie synths to their order.
    pub parallel_own_rng: bool,
    /// Whether a synth of this def may be built ahead of its turn in a
    /// parallel group that spreads (see `Engine::build_first_block`): its
    /// scalar-rate units only compute or draw random numbers (they touch no
    /// bus, buffer, node or client), and no unit writes buffer samples, so
    /// building it sees and leaves what it would at its turn.
    pub builds_ahead: bool,
    /// Whether deleting a synth of this def touches nothing outside it but
    /// the node tree: no unit is undeclared, foreign or a disk streamer, nor
    /// an `OffsetOut` (whose destructor writes the samples it held back).
    /// Such a synth, ended in an earlier block, may be deleted after its
    /// parallel group has run rather than at its turn in it: no sibling
    /// could tell (`parallel::GroupJobs::prepare`).
    pub ends_quietly: bool,
    /// Whether a unit may pause its synth (done action 1, or a unit acting
    /// on its own synth): when built, that sends `/n_off` at once.
    pub may_pause_itself: bool,
    /// The buses a synth of a parallel def reads, and the one it writes:
    /// where each bus number comes from, so the engine can tell before a
    /// block whether children of a parallel group depend on each other.
    pub bus_reads: Vec<BusAccess>,
    pub bus_write: Option<BusAccess>,
    /// The units of a parallel def that read or write buffer samples, and
    /// where their buffer numbers come from: synths writing buffers spread
    /// only when no other work item uses the buffers they write.
    pub buffer_accesses: Vec<BufAccess>,
    /// Real-time memory a synth of this def took when created and when its
    /// units were built, the most measured so far (0 until one was built).
    pub new_bytes: std::sync::atomic::AtomicUsize,
    pub construct_bytes: std::sync::atomic::AtomicUsize,
    /// The part of `construct_bytes` whose size does not depend on the
    /// synth's controls (everything but `magnetar_rt::fallible` memory):
    /// what building a synth takes in any case.
    pub fixed_bytes: std::sync::atomic::AtomicUsize,
    /// How many calc steps, from the first, compute nothing but the
    /// synth's controls (see `control_prefix`).
    pub control_prefix: usize,
    /// The `Control` outputs of those steps: (control index, place in the
    /// synth's wire array) of each.
    pub prefix_controls: Vec<(u32, u32)>,
}

fn rate_of(r: sd::Rate) -> Rate {
    match r {
        sd::Rate::Scalar => Rate::Scalar,
        sd::Rate::Control => Rate::Control,
        sd::Rate::Audio => Rate::Audio,
        sd::Rate::Demand => Rate::Demand,
    }
}

/// A unit before wires are placed.
struct Proto<'a> {
    spec: &'a sd::UGenSpec,
    rate: Rate,
    ctor: UnitCtor,
    pure: bool,
    /// Draws from (or reseeds) its synth's random generator.
    draws: bool,
    /// What the unit declared it does.
    effects: Effects,
}

/// The steps that compute every block (audio and control rate), in order.
fn calc_steps_of(steps: &[Step], units: &[UnitDef]) -> Vec<u32> {
    steps
        .iter()
        .enumerate()
        .filter(|(_, st)| !matches!(units[st.unit as usize].rate, Rate::Scalar | Rate::Demand))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The longest run of calc steps, from the first, whose outputs are a
/// function of the synth's controls alone, and the controls' places: each
/// step a control-rate `Control` (the server's own), or a run of
/// control-rate operators (`fuse::Fusion::ControlOps`), or one such
/// operator alone in its step, reading only constants and the outputs of
/// steps before it in the run.
///
/// Each block computes these steps together, one after another, and
/// nothing else writes their wires. So while every `Control` output of the
/// run holds, bit for bit, the control it copies (unmapped), the steps
/// would write what their wires already hold, and a synth may leave them
/// out (`Synth::controls_as_computed`).
fn control_prefix(
    steps: &[Step],
    calc_steps: &[u32],
    units: &[UnitDef],
    protos: &[Proto<'_>],
    fusions: &[fuse::Fusion],
) -> (usize, Vec<(u32, u32)>) {
    let mut written: Vec<u32> = Vec::new();
    let mut controls = Vec::new();
    let mut len = 0;
    for &si in calc_steps {
        let step = &steps[si as usize];
        let u = step.unit as usize;
        let own = |w: &WireRef| w.offset & SCRATCH == 0 && w.rate != Rate::Audio;
        let control = step.lanes == 1
            && units[u].name == "Control"
            && units[u].rate == Rate::Control
            && !protos[u].effects.foreign
            && matches!(fusions.get(si as usize), Some(fuse::Fusion::Plain));
        // A run of operators, or one such operator alone in a plain step.
        let op_step = match fusions.get(si as usize) {
            Some(fuse::Fusion::ControlOps(_)) => true,
            Some(fuse::Fusion::Plain) => step.lanes == 1 && fuse::lone_control_op(protos, u).is_some(),
            _ => false,
        };
        let ops = op_step
            && step.inputs.iter().all(|w| own(w) && (w.from_unit == NO_UNIT || written.contains(&w.from_unit)));
        if !(control || ops) || step.audio || step.sum_tree.is_some() || !step.outputs.iter().all(own) {
            break;
        }
        if control {
            let first = units[u].special_index.max(0) as u32;
            controls.extend(step.outputs.iter().enumerate().map(|(i, w)| (first + i as u32, w.offset)));
        }
        written.push(step.unit);
        // A run of operators stands for its members, each the writer of its
        // own output.
        written.extend(step.outputs.iter().map(|w| w.from_unit));
        len += 1;
    }
    if controls.is_empty() {
        return (0, Vec::new());
    }
    (len, controls)
}

impl GraphDef {
    /// Resolves `def` against the installed UGens. The parser has already
    /// checked that every input refers to an earlier unit or a constant.
    pub fn compile(def: &sd::SynthDef, registry: &Registry, block_size: usize) -> Result<GraphDef, DefError> {
        Self::compile_with(def, registry, block_size, true)
    }

    /// [`Self::compile`], with sum trees and runs of control-rate operators
    /// joined into steps (`join`) or not (to check the two against each other).
    pub(crate) fn compile_with(def: &sd::SynthDef, registry: &Registry, block_size: usize, join: bool) -> Result<GraphDef, DefError> {
        let mut protos = Vec::with_capacity(def.ugens.len());
        for (index, spec) in def.ugens.iter().enumerate() {
            let ctor = registry.get(&spec.name).ok_or_else(|| DefError::UnknownUGen {
                def: def.name.clone(),
                ugen: spec.name.clone(),
            })?;
            let rate = rate_of(spec.rate);
            let decl = registry.decl(&spec.name);
            if let Some(mismatch) = decl.mismatch(rate, spec.inputs.len(), spec.outputs.len()) {
                return Err(DefError::Mismatch { def: def.name.clone(), unit: index, ugen: spec.name.clone(), mismatch });
            }
            let effects = decl.effects;
            // A demand-rate operator pulls values from its inputs: it is no pure function of a block.
            let pure = effects.is_pure(spec.special_index) && rate != Rate::Demand;
            let draws = effects.draws(spec.special_index);
            protos.push(Proto { spec, rate, ctor, pure, draws, effects });
        }

        let groups = schedule(&protos, registry);
        let (groups, fusions) = if join {
            fuse::fuse_steps(&protos, groups)
        } else {
            let plain = groups.iter().map(|_| fuse::Fusion::Plain).collect();
            (groups, plain)
        };
        let (units, local_len, scratch_len) = place_wires(def, &protos, &groups, block_size);

        // `schedule` makes no empty step, and puts several units in one step
        // only when they have a batch constructor. (On the control thread.)
        #[allow(clippy::expect_used)]
        let mut steps: Vec<Step> = groups
            .iter()
            .zip(&fusions)
            .map(|(members, fusion)| {
                if let Some(step) = fuse::fused_step(fusion, members, &units) {
                    return step;
                }
                let last = *members.last().expect("a step has members");
                let ctor = if members.len() > 1 {
                    registry.batch(&units[last].name).expect("batched units have a batch constructor").ctor
                } else {
                    units[last].ctor
                };
                Step {
                    ctor,
                    unit: last as u32,
                    lanes: members.len(),
                    audio: units[last].rate == Rate::Audio,
                    draws: protos[last].draws,
                    // Kernels of units that draw take each synth's own
                    // generator (lockstep runs of such defs hold only synths
                    // that have one). A control-rate step computes one
                    // sample: filling a kernel's lanes costs more than the
                    // unit does alone, and would split the synth's run of
                    // plain steps, so only audio-rate steps take a kernel.
                    lane: if units[last].rate != Rate::Audio {
                        None
                    } else if members.len() == 1 {
                        // Units that write a bus take an ordered kernel:
                        // lanes run only in lockstep batches, whose def has
                        // one bus writer at most (`units_safe`).
                        let ud = &units[last];
                        registry.lane_kernel(&ud.name, ud.special_index, protos[last].pure || protos[last].draws)
                    } else if members.len() > 1 && protos[last].pure {
                        registry.batch_lanes(&units[last].name)
                    } else {
                        None
                    },
                    inputs: members.iter().flat_map(|&m| units[m].inputs.iter().copied()).collect(),
                    outputs: members.iter().flat_map(|&m| units[m].outputs.iter().copied()).collect(),
                    sum_tree: None,
                    writes_bus: false,
                }
            })
            .collect();
        keep_light_lanes_beside_others(&mut steps, &units, registry);
        for (step, members) in steps.iter_mut().zip(&groups) {
            step.writes_bus = members.iter().any(|&m| writes_bus(&protos[m].effects));
        }
        let calc_steps = calc_steps_of(&steps, &units);
        let (control_prefix, prefix_controls) = control_prefix(&steps, &calc_steps, &units, &protos, &fusions);
        let safe = lockstep_safe(def, &protos);
        let any_lane = steps.iter().any(|st| st.lane.is_some());
        let lockstep = safe && any_lane;
        let lockstep_own_rng = any_lane && units_safe(def, &protos, false, true);
        let (bus_reads, bus_write) = bus_accesses(def, &protos);
        let buffer_accesses = buffer_accesses(def, &protos);
        // Reading buses and buffers is allowed on top of what lockstep allows.
        let no_offset_writes =
            !protos.iter().any(|p| p.effects.bus.is_some_and(|b| b.how == BusUse::WriteMixed));
        let parallel = no_offset_writes && units_safe(def, &protos, true, false);
        let parallel_own_rng = no_offset_writes && units_safe(def, &protos, true, true);
        let builds_ahead = protos.iter().all(|p| {
            let e = &p.effects;
            let quiet = !e.outside
                && !e.foreign
                && !e.own_synth
                && !e.replies
                && !e.disk
                && e.bus.is_none()
                && e.done_action.is_none()
                && e.buffer.is_none();
            let writes_buffer = e.buffer.is_some_and(|b| b.how == BufferUse::Write);
            !writes_buffer && (p.rate != Rate::Scalar || p.pure || quiet)
        });
        let ends_quietly = protos.iter().all(|p| {
            let e = &p.effects;
            !e.outside && !e.foreign && !e.disk && !e.bus.is_some_and(|b| b.how == BusUse::WriteMixed)
        });
        let constant = |input: &sd::Input| match *input {
            sd::Input::Constant(c) => def.constants.get(c as usize).copied(),
            sd::Input::Unit { .. } => None,
        };
        let may_pause_itself = protos.iter().any(|p| {
            p.effects.own_synth
                || p.effects.done_action.is_some_and(|index| {
                    p.spec.inputs.get(index as usize).and_then(constant).is_none_or(|a| a as i32 == 1)
                })
        });
        let mut step_of_unit = vec![0u32; units.len()];
        for (s, g) in groups.iter().enumerate() {
            for &u in g {
                step_of_unit[u] = s as u32;
            }
        }
        let has_demand = protos.iter().any(|p| p.rate == Rate::Demand);
        let foreign = protos.iter().any(|p| p.effects.foreign);
        if foreign {
            // Here, on the control thread, before any synth of the def exists.
            magnetar_ugens::registry::prepare_foreign();
        }

        let mut params = HashMap::new();
        let mut sorted: Vec<(String, u32)> = def.param_names.iter().map(|p| (p.name.clone(), p.index)).collect();
        sorted.sort_by_key(|p| p.1);
        for (i, (name, index)) in sorted.iter().enumerate() {
            let end = sorted.get(i + 1).map(|p| p.1).unwrap_or(def.params.len() as u32);
            params.entry(name.clone()).or_insert((*index, end.saturating_sub(*index)));
        }
        Ok(GraphDef {
            name: def.name.clone(),
            constants: def.constants.clone(),
            initial_controls: def.params.clone(),
            params,
            param_names: def.param_names.iter().map(|p| (p.name.clone(), p.index)).collect(),
            units,
            steps,
            calc_steps,
            step_of_unit,
            has_demand,
            foreign,
            local_len,
            scratch_len,
            lockstep,
            lockstep_own_rng,
            parallel,
            parallel_own_rng,
            builds_ahead,
            ends_quietly,
            may_pause_itself,
            bus_reads,
            bus_write,
            buffer_accesses,
            new_bytes: Default::default(),
            construct_bytes: Default::default(),
            fixed_bytes: Default::default(),
            control_prefix,
            prefix_controls,
        })
    }

    /// Real-time memory a new synth of this def is expected to need: the
    /// most a synth of it took so far, or [`Self::unmeasured_bytes`] before
    /// the first one was built.
    pub fn expected_bytes(&self) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        let measured = self.new_bytes.load(Relaxed) + self.construct_bytes.load(Relaxed);
        if measured > 0 {
            measured
        } else {
            self.unmeasured_bytes()
        }
    }

    /// What building a synth of this def takes whatever its controls say
    /// (`fixed_bytes`), or [`Self::unmeasured_bytes`] before the first one
    /// was built.
    pub fn fixed_estimate(&self) -> usize {
        match self.fixed_bytes.load(std::sync::atomic::Ordering::Relaxed) {
            0 => self.unmeasured_bytes(),
            fixed => fixed,
        }
    }

    /// A generous guess at a synth's memory before one was built: its wires
    /// and a unit's state per step. Sizes its controls or constants choose
    /// (delay lines, windows, local buffers) are asked for while it is built
    /// and refused there when the pool cannot hold them
    /// (`magnetar_rt::fallible`); the first synth built measures the rest.
    pub fn unmeasured_bytes(&self) -> usize {
        self.local_len * 4 + self.steps.len() * 512 + 4096
    }

    /// The first control index and count for a control name.
    pub fn param(&self, name: &str) -> Option<(u32, u32)> {
        self.params.get(name).copied()
    }
}

fn source_unit(input: &sd::Input) -> Option<usize> {
    match *input {
        sd::Input::Unit { unit, .. } => Some(unit as usize),
        sd::Input::Constant(_) => None,
    }
}

/// Chooses the execution order as a list of steps (each a list of units).
/// List scheduling: among the units whose inputs are ready, the earliest
/// non-batchable one runs next; when only batchable units are ready, all
/// ready units of the same kind run together as one step.
fn schedule(protos: &[Proto<'_>], registry: &Registry) -> Vec<Vec<usize>> {
    const MAX_LANES: usize = 256;
    let n = protos.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    let mut last_effect: Option<usize> = None;
    for (i, p) in protos.iter().enumerate() {
        let mut preds: Vec<usize> = p.spec.inputs.iter().filter_map(source_unit).collect();
        if !p.pure {
            // Effects keep their order, and wait for every earlier effect.
            preds.extend(last_effect);
            last_effect = Some(i);
        }
        preds.sort_unstable();
        preds.dedup();
        for pr in preds {
            succs[pr].push(i);
            indeg[i] += 1;
        }
    }
    let input_rates = |p: &Proto<'_>| -> Vec<Rate> {
        p.spec
            .inputs
            .iter()
            .map(|inp| match source_unit(inp) {
                Some(u) => protos[u].rate,
                None => Rate::Scalar,
            })
            .collect()
    };
    let batch_key = |i: usize| -> Option<(String, Rate, i16, Vec<Rate>, usize)> {
        let p = &protos[i];
        let entry = registry.batch(&p.spec.name)?;
        let rates = input_rates(p);
        let spec = UnitSpec {
            name: &p.spec.name,
            rate: p.rate,
            special_index: p.spec.special_index,
            num_inputs: p.spec.inputs.len(),
            num_outputs: p.spec.outputs.len(),
            lanes: 1,
        };
        (entry.batchable)(&spec, &rates).then(|| (p.spec.name.clone(), p.rate, p.spec.special_index, rates, p.spec.outputs.len()))
    };
    let keys: Vec<_> = (0..n).map(batch_key).collect();

    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut groups = Vec::with_capacity(n);
    let finish = |i: usize, ready: &mut BTreeSet<usize>, indeg: &mut [usize]| {
        for &s in &succs[i] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.insert(s);
            }
        }
    };
    while let Some(&first) = ready.iter().next() {
        if let Some(&plain) = ready.iter().find(|&&i| keys[i].is_none()) {
            ready.remove(&plain);
            groups.push(vec![plain]);
            finish(plain, &mut ready, &mut indeg);
            continue;
        }
        let key = keys[first].clone();
        let members: Vec<usize> = ready.iter().copied().filter(|&i| keys[i] == key).take(MAX_LANES).collect();
        for &m in &members {
            ready.remove(&m);
        }
        for &m in &members {
            finish(m, &mut ready, &mut indeg);
        }
        groups.push(members);
    }
    debug_assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), n, "every unit is scheduled once");
    groups
}

/// Gives every wire its place: constants and control wires in the synth's
/// own array, audio wires in shared scratch, reusing a scratch buffer once
/// its last reader has run. A step's outputs never share a buffer with its
/// inputs or with each other.
fn place_wires(
    def: &sd::SynthDef,
    protos: &[Proto<'_>],
    groups: &[Vec<usize>],
    block_size: usize,
) -> (Vec<UnitDef>, usize, usize) {
    let n = protos.len();
    // Step index of the last reader of each unit's outputs.
    let mut step_of = vec![0usize; n];
    for (s, g) in groups.iter().enumerate() {
        for &u in g {
            step_of[u] = s;
        }
    }
    let mut last_read = vec![None::<usize>; n];
    for (i, p) in protos.iter().enumerate() {
        for inp in &p.spec.inputs {
            if let Some(src) = source_unit(inp) {
                let s = step_of[i];
                last_read[src] = Some(last_read[src].map_or(s, |old: usize| old.max(s)));
            }
        }
    }

    // A demand-rate unit runs when a unit reading it runs (and a demand-rate
    // reader when its own reader does), so what it reads must stay until then.
    let mut runs_at: Vec<Option<usize>> = vec![None; n];
    for i in (0..n).rev() {
        if protos[i].rate != Rate::Demand {
            continue;
        }
        runs_at[i] = last_read[i];
        for inp in &protos[i].spec.inputs {
            if let (Some(src), Some(at)) = (source_unit(inp), runs_at[i]) {
                last_read[src] = Some(last_read[src].map_or(at, |old: usize| old.max(at)));
            }
        }
    }
    let mut local_len = def.constants.len();
    let mut outputs: Vec<Vec<WireRef>> = vec![Vec::new(); n];
    let mut free: Vec<u32> = Vec::new();
    let mut scratch_bufs: u32 = 0;
    let mut releases: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    for (i, lr) in last_read.iter().enumerate() {
        // Unread audio outputs are released right after their own step.
        releases[lr.unwrap_or(step_of[i])].push(i);
    }
    for (s, g) in groups.iter().enumerate() {
        for &u in g {
            let p = &protos[u];
            outputs[u] = (0..p.spec.outputs.len())
                .map(|_| {
                    if p.rate == Rate::Audio {
                        let buf = free.pop().unwrap_or_else(|| {
                            scratch_bufs += 1;
                            scratch_bufs - 1
                        });
                        WireRef { offset: SCRATCH | (buf * block_size as u32), rate: p.rate, from_unit: u as u32 }
                    } else {
                        local_len += 1;
                        WireRef { offset: (local_len - 1) as u32, rate: p.rate, from_unit: u as u32 }
                    }
                })
                .collect();
        }
        for &u in &releases[s] {
            if protos[u].rate == Rate::Audio {
                // Released in reverse so that the next step reuses the most
                // recently written (cache-warm) buffer first.
                for w in outputs[u].iter().rev() {
                    free.push((w.offset & !SCRATCH) / block_size as u32);
                }
            }
        }
    }

    let units = protos
        .iter()
        .enumerate()
        .map(|(i, p)| UnitDef {
            name: p.spec.name.clone(),
            rate: p.rate,
            special_index: p.spec.special_index,
            ctor: p.ctor,
            inputs: p
                .spec
                .inputs
                .iter()
                .map(|inp| match *inp {
                    sd::Input::Constant(c) => WireRef { offset: c, rate: Rate::Scalar, from_unit: NO_UNIT },
                    sd::Input::Unit { unit, output } => outputs[unit as usize][output as usize],
                })
                .collect(),
            outputs: outputs[i].clone(),
        })
        .collect();
    (units, local_len, scratch_bufs as usize * block_size)
}

/// The def's bus readers (`In`, `InFeedback`, and `LagIn` and `InTrig`,
/// which read control buses) and its writer (`Out`, `ReplaceOut`), with
/// where their bus numbers come from.
fn bus_accesses(def: &sd::SynthDef, protos: &[Proto<'_>]) -> (Vec<BusAccess>, Option<BusAccess>) {
    let mut reads = Vec::new();
    let mut write = None;
    for p in protos {
        let Some(bus) = p.effects.bus else { continue };
        let source = input_source(def, protos, bus.input.and_then(|i| p.spec.inputs.get(i as usize)));
        let audio = p.rate == Rate::Audio;
        match bus.how {
            BusUse::Read { feedback } => {
                reads.push(BusAccess { audio: audio || feedback, bus: source, channels: p.spec.outputs.len() as u32 })
            }
            BusUse::ReadControl => {
                reads.push(BusAccess { audio: false, bus: source, channels: p.spec.outputs.len() as u32 })
            }
            BusUse::Write { .. } => {
                write = Some(BusAccess {
                    audio,
                    bus: source,
                    channels: p.spec.inputs.len().saturating_sub(1) as u32,
                })
            }
            BusUse::WriteMixed => {}
        }
    }
    (reads, write)
}

/// Where the number an input carries (a bus or buffer number) comes from:
/// a constant, a control-rate `Control` (its value then follows the
/// synth's control), or anything else, which cannot be told before.
fn input_source(def: &sd::SynthDef, protos: &[Proto<'_>], input: Option<&sd::Input>) -> BusSource {
    match input {
        Some(sd::Input::Constant(c)) => def.constants.get(*c as usize).map_or(BusSource::Unknown, |&v| BusSource::Constant(v)),
        Some(&sd::Input::Unit { unit, output }) => match protos.get(unit as usize) {
            Some(p) if p.spec.name == "Control" && p.rate == Rate::Control => {
                BusSource::Control(p.spec.special_index.max(0) as u32 + output)
            }
            _ => BusSource::Unknown,
        },
        None => BusSource::Unknown,
    }
}

/// The def's units that read or write buffer samples (as they declare),
/// with where their buffer numbers come from. The engine tracks every one
/// of them, so `units_safe` lets a unit touch samples only through them.
fn buffer_accesses(def: &sd::SynthDef, protos: &[Proto<'_>]) -> Vec<BufAccess> {
    protos
        .iter()
        .filter_map(|p| {
            let (input, write) = p.effects.buffer_samples()?;
            Some(BufAccess { write, buf: input_source(def, protos, input.and_then(|i| p.spec.inputs.get(i as usize))) })
        })
        .collect()
}

/// Drops the light lane kernels (`Registry::lane_is_light`) that would
/// split a run of plain steps: in calc order, a light kernel stays only
/// next to a step that keeps a kernel, starting from the others' kernels.
/// A def whose only kernels are light ones then has none.
fn keep_light_lanes_beside_others(steps: &mut [Step], units: &[UnitDef], registry: &Registry) {
    let calc: Vec<usize> = (0..steps.len())
        .filter(|&s| !matches!(units[steps[s].unit as usize].rate, Rate::Scalar | Rate::Demand))
        .collect();
    let light: Vec<bool> = steps
        .iter()
        .map(|st| {
            let ud = &units[st.unit as usize];
            st.lanes == 1 && st.lane.is_some() && registry.lane_is_light(&ud.name, ud.special_index)
        })
        .collect();
    let mut keep: Vec<bool> = steps.iter().zip(&light).map(|(st, &l)| st.lane.is_some() && !l).collect();
    loop {
        let mut changed = false;
        for (pos, &s) in calc.iter().enumerate() {
            if !light[s] || keep[s] {
                continue;
            }
            let before = pos > 0 && keep[calc[pos - 1]];
            let after = calc.get(pos + 1).is_some_and(|&n| keep[n]);
            if before || after {
                keep[s] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (s, st) in steps.iter_mut().enumerate() {
        if light[s] && !keep[s] {
            st.lane = None;
        }
    }
}

/// Whether a unit with these effects writes a bus (mixing, replacing or
/// offset), rather than only reading one or none.
fn writes_bus(e: &Effects) -> bool {
    e.bus.is_some_and(|b| !matches!(b.how, BusUse::Read { .. } | BusUse::ReadControl))
}

/// Whether consecutive synths of this def may run step by step side by side
/// (step 1 of every synth, then step 2, ...) instead of synth by synth, with
/// the same result. True when, besides pure units and units that only
/// compute when the synth is built (scalar rate), the def only reads its
/// own controls, writes buses through at most one unit (so writes to a bus
/// keep their synth order), and ends itself through envelopes whose done
/// action touches no other node (0, 1 or 2) or through the units that free
/// or pause the synth itself (done actions run after the synths' block
/// either way); its local buses (`LocalIn`/`LocalOut`) are its own.
/// Controls mapped to buses are checked per block by the engine.
fn lockstep_safe(def: &sd::SynthDef, protos: &[Proto<'_>]) -> bool {
    units_safe(def, protos, false, false)
}

/// The lockstep check, widened for parallel groups by `readers`: `In`,
/// `InFeedback`, `LagIn` and `InTrig` may read buses (the engine gives each reader the buses as a
/// sequential run would leave them), units may read buffers (buffer
/// commands run between blocks), and `BufWr`, `RecordBuf` and the buffer
/// delays may write them (the engine spreads such synths only when no other work item uses the
/// buffers they write, see `buffer_accesses`). With `own_rng`, units that draw random numbers pass
/// too: each synth then draws from its own generator, so the order in which
/// synths run does not change what any of them draws.
fn units_safe(def: &sd::SynthDef, protos: &[Proto<'_>], readers: bool, own_rng: bool) -> bool {
    let constant = |input: &sd::Input| match *input {
        sd::Input::Constant(c) => def.constants.get(c as usize).copied(),
        sd::Input::Unit { .. } => None,
    };
    let mut writers = 0;
    for p in protos {
        let e = &p.effects;
        // Plugin code may keep state shared between its units: synths
        // using it run in order, on the thread that runs the group.
        if e.foreign {
            return false;
        }
        // Scalar-rate units compute once, when the synth is built (its first
        // block, which runs in order): `Rand.ir` draws there, not per block.
        if p.pure || (p.rate == Rate::Scalar && !writes_bus(e)) {
            continue;
        }
        if p.draws {
            if own_rng {
                continue;
            }
            return false;
        }
        // Anything undeclared touches what the engine cannot track.
        if e.outside {
            return false;
        }
        // Controls, local buses and the synth's own end are the synth's own.
        let mut ok = true;
        if let Some(bus) = e.bus {
            ok &= match bus.how {
                BusUse::Read { .. } | BusUse::ReadControl => readers,
                BusUse::Write { .. } | BusUse::WriteMixed => {
                    writers += 1;
                    writers == 1
                }
            };
        }
        // Buffer information (no unit changes a buffer's size) and samples
        // (tracked through `buffer_accesses`).
        ok &= e.buffer.is_none() || readers;
        // Done actions that touch no other node (0, 1 or 2).
        ok &= e.done_action.is_none_or(|index| {
            p.spec
                .inputs
                .get(index as usize)
                .and_then(constant)
                .is_some_and(|a| a == 0.0 || a == 1.0 || a == 2.0)
        });
        if !ok {
            return false;
        }
    }
    true
}
