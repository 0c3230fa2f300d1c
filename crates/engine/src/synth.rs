//! A running instance of a GraphDef: its wires, its units and its controls.

use crate::graph_def::GraphDef;
use crate::failure::FailReason;
use magnetar_protocol::printed::c_g;
use magnetar_ugens::unit::SCRATCH;
use magnetar_ugens::{
    ControlMap, DemandRunner, RGen, Rate, RateInfo, SynthCtx, Unit, UnitCtx, UnitSpec, WireRef, Wires, World,
};
use std::ops::Range;
use std::sync::Arc;

pub struct Synth {
    pub def: Arc<GraphDef>,
    pub ctx: SynthCtx,
    wires: Vec<f32>,
    units: Vec<Box<dyn Unit>>,
    /// Each calc step's wires and unit context facts, set up when the synth
    /// is built so that a block only points them at its scratch.
    runs: StepRuns,
    done: Vec<bool>,
    /// The synth's own random generator, when the server gives each synth
    /// one (supernova's way); `None` draws from the world's (scsynth's way).
    pub rgen: Option<RGen>,
    /// Whether the synth's generator is in the world's place now (between
    /// `enter_rgen` and `leave_rgen`).
    rgen_swapped: bool,
    /// The step being built or run (for the report of a unit that fails:
    /// see `contain`).
    at: u32,
    /// The step whose unit failed; the synth runs no more.
    pub(crate) failed: Option<u32>,
    /// Pool bytes counted for building it, until it is built (`/s_new`).
    pub(crate) reserved: usize,
    /// Its failure was a refused allocation: the pool ran out.
    pub(crate) out_of_memory: bool,
}

impl Synth {
    pub fn new(def: Arc<GraphDef>, node_id: i32, sample_offset: i32, subsample_offset: f32) -> Synth {
        let mut wires = vec![0.0; def.local_len];
        wires[..def.constants.len()].copy_from_slice(&def.constants);
        let n_controls = def.initial_controls.len();
        let ctx = SynthCtx {
            node_id,
            controls: def.initial_controls.clone(),
            control_map: vec![ControlMap::Own; n_controls],
            sample_offset,
            subsample_offset,
            done_actions: Vec::with_capacity(16),
            free_requests: Vec::with_capacity(16),
            run_requests: Vec::with_capacity(16),
            ..Default::default()
        };
        let done = vec![false; def.units.len()];
        let units = Vec::with_capacity(def.units.len());
        let runs = StepRuns { runs: Vec::with_capacity(def.calc_steps.len()), scratch: std::ptr::null_mut() };
        Synth { def, ctx, wires, units, runs, done, rgen: None, rgen_swapped: false, at: 0, failed: None, reserved: 0, out_of_memory: false }
    }

    /// Puts the synth's generator in the world's `rgen` for the length of
    /// its run: its own one (supernova's way), or the shared one `RandID`
    /// picked. `leave_rgen` puts things back.
    #[inline]
    fn enter_rgen(&mut self, world: &mut World) {
        self.rgen_swapped = true;
        if let Some(own) = &mut self.rgen {
            std::mem::swap(own, &mut world.rgen);
        } else if self.ctx.rgen_id != world.rgen_slot {
            world.select_rgen(self.ctx.rgen_id);
        }
    }

    #[inline]
    fn leave_rgen(&mut self, world: &mut World) {
        self.rgen_swapped = false;
        if let Some(own) = &mut self.rgen {
            std::mem::swap(own, &mut world.rgen);
        } else if world.rgen_slot != 0 {
            world.select_rgen(0);
        }
    }

    /// Lets units reach the synth's local buffers (`LocalBuf`) for the length of its run; a
    /// second call ends that.
    #[inline]
    fn local_bufs(&mut self, world: &mut World, on: bool) {
        if on {
            // SAFETY: the list is this synth's, which is borrowed for the whole run, and `on =
            // false` is called before the run returns.
            unsafe { world.use_local_bufs(&mut self.ctx.local_bufs) };
        } else {
            world.end_local_bufs();
        }
    }

    pub fn is_constructed(&self) -> bool {
        !self.units.is_empty() || self.def.units.is_empty()
    }

    /// Builds every unit, in order, as scsynth does on a synth's first
    /// block: each constructor sees the initial outputs of the ones before.
    pub fn construct(&mut self, world: &mut World, scratch: &mut [f32]) {
        assert!(scratch.len() >= self.def.scratch_len, "scratch smaller than the def needs");
        let def = Arc::clone(&self.def);
        let full = world.full_rate;
        let block = world.buf_rate;
        let bs = world.block_size;
        self.enter_rgen(world);
        self.local_bufs(world, true);
        for step in &def.steps {
            self.at = self.units.len() as u32;
            let ud = &def.units[step.unit as usize];
            let spec = UnitSpec {
                name: &ud.name,
                rate: ud.rate,
                special_index: ud.special_index,
                num_inputs: step.inputs.len(),
                num_outputs: step.outputs.len(),
                lanes: step.lanes,
            };
            let base = self.wires.as_mut_ptr();
            // SAFETY: GraphDef::compile placed local wires inside `local_len`
            // and scratch wires inside `scratch_len` (checked above), gave
            // each output its own span and never let a step's output share
            // a buffer with one of its inputs.
            let mut io = unsafe { Wires::new(base, scratch.as_mut_ptr(), &step.inputs, &step.outputs, bs, 1) };
            // Constructors may read demand-rate units built before them (Duty's first value).
            let mut runner = DemandUnits {
                units: &mut self.units,
                def: &def,
                base,
                scratch: scratch.as_mut_ptr(),
                block: &block,
                block_size: bs,
            };
            let rate = if ud.rate == Rate::Audio { &full } else { &block };
            let mut cx = UnitCtx::new(world, &mut self.ctx, rate, &mut self.done, step.unit as usize);
            if def.has_demand {
                cx.demand = Some(&mut runner);
            }
            let unit = match &step.sum_tree {
                Some(tree) => tree.build(&mut io, &mut cx),
                None => (step.ctor)(&spec, &mut io, &mut cx),
            };
            self.units.push(unit);
        }
        self.local_bufs(world, false);
        self.leave_rgen(world);
        // Only once every unit is built: the runs point at them.
        self.set_up_runs(bs, scratch.as_mut_ptr());
    }

    /// Sets up each calc step's wires (`runs`), in the room `Synth::new`
    /// made for them, once every unit is built: a run's step then always
    /// names a unit of `units`.
    fn set_up_runs(&mut self, bs: usize, scratch: *mut f32) {
        let base = self.wires.as_mut_ptr();
        let def = &*self.def;
        assert_eq!(self.units.len(), def.steps.len(), "runs set up before every unit was built");
        self.runs.runs.clear();
        for &si in &def.calc_steps {
            let step = &def.steps[si as usize];
            // SAFETY: the def outlives the wires: the synth holds it (in an
            // `Arc`, never replaced) as long as it holds `runs`, and its
            // steps never change.
            let (inputs, outputs): (&'static [WireRef], &'static [WireRef]) =
                unsafe { (&*std::ptr::from_ref(step.inputs.as_slice()), &*std::ptr::from_ref(step.outputs.as_slice())) };
            let n = if step.audio { bs } else { 1 };
            // SAFETY: as in `construct`: GraphDef::compile placed every
            // wire inside the synth's array (which never moves: it is never
            // resized) or the scratch, outputs apart from everything else.
            let io = unsafe { Wires::new(base, scratch, inputs, outputs, bs, n) };
            self.runs.runs.push(StepRun { io, step: si, def_unit: step.unit, audio: step.audio });
        }
        self.runs.scratch = scratch;
    }

    /// Runs unit command `name` (`/u_cmd`) on unit `unit` (its index in
    /// the def), between blocks.
    pub fn unit_command(&mut self, world: &mut World, scratch: &mut [f32], unit: i32, name: &str, args: &[u8]) -> Result<(), FailReason> {
        let def = Arc::clone(&self.def);
        let u = usize::try_from(unit).ok().filter(|&u| u < def.units.len()).ok_or(FailReason::UnitIndex(unit))?;
        if !self.is_constructed() {
            // scsynth fails it too: the units do not exist before the synth's first block.
            return Err(FailReason::NotBuilt);
        }
        let no_command = || FailReason::NoUnitCommand { unit, name: name.to_string() };
        let si = def.step_of_unit[u] as usize;
        let step = &def.steps[si];
        if step.lanes != 1 || step.unit as usize != u || si >= self.units.len() {
            return Err(no_command());
        }
        assert!(scratch.len() >= def.scratch_len, "scratch smaller than the def needs");
        let bs = world.block_size;
        let rate = if step.audio { world.full_rate } else { world.buf_rate };
        let block = world.buf_rate;
        self.enter_rgen(world);
        self.local_bufs(world, true);
        let base = self.wires.as_mut_ptr();
        // SAFETY: as in `construct`: the def placed every wire inside the
        // synth's array or the scratch (checked above), outputs apart.
        let mut io = unsafe { Wires::new(base, scratch.as_mut_ptr(), &step.inputs, &step.outputs, bs, 1) };
        let (before, rest) = self.units.split_at_mut(si);
        let mut runner = DemandUnits { units: before, def: &def, base, scratch: scratch.as_mut_ptr(), block: &block, block_size: bs };
        let mut cx = UnitCtx::new(world, &mut self.ctx, &rate, &mut self.done, u);
        if def.has_demand {
            cx.demand = Some(&mut runner);
        }
        let handled = rest[0].command(name, args, &mut io, &mut cx);
        self.local_bufs(world, false);
        self.leave_rgen(world);
        if handled {
            Ok(())
        } else {
            Err(no_command())
        }
    }

    /// Computes one block.
    pub fn calc(&mut self, world: &mut World, scratch: &mut [f32]) {
        if self.def.has_demand {
            // Demand-rate units run inside the units that read them, which
            // need the runner `calc_watched` gives each step.
            self.calc_watched(world, scratch, |_, _, _, _| {});
            return;
        }
        assert!(scratch.len() >= self.def.scratch_len, "scratch smaller than the def needs");
        let (full, block) = (world.full_rate, world.buf_rate);
        self.enter_rgen(world);
        self.local_bufs(world, true);
        let steps = 0..self.def.calc_steps.len();
        // SAFETY: the scratch holds the def's `scratch_len` samples (checked
        // above) and is borrowed mutably for the call.
        unsafe { self.run_steps(steps, &full, &block, world, scratch.as_mut_ptr()) };
        self.local_bufs(world, false);
        self.leave_rgen(world);
    }

    /// Runs the calc steps `steps` (positions in `def.calc_steps`) in order,
    /// with one unit context for all of them: what changes from step to
    /// step is the rate, the unit index and the wires. No demand-rate
    /// runner: for defs without demand-rate units. The synth is built (its
    /// runs are set up, see `set_up_runs`).
    ///
    /// # Safety
    /// `scratch` must point at `def.scratch_len` samples that nothing else
    /// uses during the call.
    #[inline(always)]
    unsafe fn run_steps(&mut self, steps: Range<usize>, full: &RateInfo, block: &RateInfo, world: &mut World, scratch: *mut f32) {
        // SAFETY: the caller vouches for the scratch.
        unsafe { self.aim_runs(scratch) };
        let Synth { ctx, units, runs, done, at, .. } = self;
        let mut cx = UnitCtx::new(world, ctx, block, done, 0);
        // SAFETY: these are the synth's runs and units, the runs pointing
        // at the scratch the caller vouches for.
        unsafe { run_each(&mut runs.runs[steps], units, at, &[block, full], &mut cx) };
    }

    /// Points the runs' scratch wires at `scratch`, unless they are already.
    ///
    /// # Safety
    /// `scratch` must point at `def.scratch_len` samples, which the synth
    /// alone uses while the runs point there and it runs.
    #[inline(always)]
    unsafe fn aim_runs(&mut self, scratch: *mut f32) {
        let runs = &mut self.runs;
        if runs.scratch != scratch {
            for run in &mut runs.runs {
                // SAFETY: the caller vouches for the scratch, which holds
                // the def's scratch wires as the one the runs were set up with.
                unsafe { run.io.set_scratch(scratch) };
            }
            runs.scratch = scratch;
        }
    }

    /// Computes one block and returns what scsynth prints for a synth
    /// under `/n_trace`: each unit that runs every block (in def order),
    /// the first value of each input before it runs and of each output
    /// after.
    pub fn calc_traced(&mut self, world: &mut World, scratch: &mut [f32]) -> String {
        let def = Arc::clone(&self.def);
        let mut ins: Vec<Vec<f32>> = vec![Vec::new(); def.units.len()];
        let mut outs: Vec<Vec<f32>> = vec![Vec::new(); def.units.len()];
        self.calc_watched(world, scratch, |si, after, base, scratch| {
            // A sum tree's inner nodes read wires its step writes: their
            // inputs are read after it, which leaves its other inputs as
            // they were.
            let inputs_after = def.steps[si].sum_tree.is_some();
            for (u, ud) in def.units.iter().enumerate() {
                if def.step_of_unit[u] as usize != si {
                    continue;
                }
                let read = |wires: &[WireRef], values: &mut Vec<f32>| {
                    // SAFETY: `base` and `scratch` are the arrays the step's
                    // wires live in (see `calc`), and no unit runs meanwhile.
                    values.extend(wires.iter().map(|&w| unsafe { first_sample(base, scratch, w) }))
                };
                if after {
                    read(&ud.outputs, &mut outs[u]);
                }
                if after == inputs_after {
                    read(&ud.inputs, &mut ins[u]);
                }
            }
        });
        let calc_units: Vec<usize> =
            (0..def.units.len()).filter(|&u| !matches!(def.units[u].rate, Rate::Scalar | Rate::Demand)).collect();
        let mut text = format!("\nTRACE {}  {}    #units: {}\n", self.ctx.node_id, def.name, calc_units.len());
        for (i, &u) in calc_units.iter().enumerate() {
            text.push_str(&format!("  unit {i} {}\n    in ", def.units[u].name));
            for v in &ins[u] {
                text.push(' ');
                text.push_str(&c_g(*v as f64, 6));
            }
            text.push_str("\n    out");
            for v in &outs[u] {
                text.push(' ');
                text.push_str(&c_g(*v as f64, 6));
            }
            text.push('\n');
        }
        text
    }

    /// Computes one block, calling `watch(step, after, wires, scratch)`
    /// before and after each step.
    #[inline(always)]
    fn calc_watched(&mut self, world: &mut World, scratch: &mut [f32], mut watch: impl FnMut(usize, bool, *const f32, *const f32)) {
        self.enter_rgen(world);
        self.local_bufs(world, true);
        let def = &*self.def;
        assert!(scratch.len() >= def.scratch_len, "scratch smaller than the def needs");
        let scratch = scratch.as_mut_ptr();
        let full = world.full_rate;
        let block = world.buf_rate;
        let bs = world.block_size;
        let base = self.wires.as_mut_ptr();
        for &si in &def.calc_steps {
            self.at = si;
            let step = &def.steps[si as usize];
            let (rate, n) = if step.audio { (&full, bs) } else { (&block, 1) };
            watch(si as usize, false, base, scratch);
            // SAFETY: GraphDef::compile placed local wires inside `local_len`
            // and scratch wires inside `scratch_len` (checked above), gave
            // each output its own span and never let a step's output share
            // a buffer with one of its inputs.
            let mut io = unsafe { Wires::new(base, scratch, &step.inputs, &step.outputs, bs, n) };
            let (before, rest) = self.units.split_at_mut(si as usize);
            let mut runner = DemandUnits { units: before, def, base, scratch, block: &block, block_size: bs };
            let mut cx = UnitCtx::new(world, &mut self.ctx, rate, &mut self.done, step.unit as usize);
            if def.has_demand {
                cx.demand = Some(&mut runner);
            }
            rest[0].next(&mut io, &mut cx);
            watch(si as usize, true, base, scratch);
        }
        self.local_bufs(world, false);
        self.leave_rgen(world);
    }

    /// Computes one block and returns every unit's outputs as its step
    /// left them (whole blocks for audio wires), for tests that compare
    /// two compilations of a def.
    #[cfg(test)]
    pub(crate) fn calc_outputs(&mut self, world: &mut World, scratch: &mut [f32]) -> Vec<Vec<f32>> {
        let def = Arc::clone(&self.def);
        let bs = world.block_size;
        let mut outs: Vec<Vec<f32>> = vec![Vec::new(); def.units.len()];
        self.calc_watched(world, scratch, |si, after, base, scratch| {
            if !after {
                return;
            }
            for (u, ud) in def.units.iter().enumerate() {
                if def.step_of_unit[u] as usize != si {
                    continue;
                }
                for &w in &ud.outputs {
                    let len = if w.rate == Rate::Audio { bs } else { 1 };
                    for k in 0..len as u32 {
                        let at = WireRef { offset: w.offset + k, ..w };
                        // SAFETY: as in `calc_traced`; an audio wire holds a block.
                        outs[u].push(unsafe { first_sample(base, scratch, at) });
                    }
                }
            }
        });
        outs
    }

    /// [`Self::construct`], with a unit that panics contained: returns
    /// false, and the synth is marked failed, with the world as it was.
    pub fn construct_contained(&mut self, world: &mut World, scratch: &mut [f32]) -> bool {
        let outcome = crate::contain::contained(|| self.construct(world, scratch));
        self.settle(world, outcome)
    }

    /// [`Self::calc`], with a unit that panics contained (as above).
    pub fn calc_contained(&mut self, world: &mut World, scratch: &mut [f32]) -> bool {
        let outcome = crate::contain::contained(|| self.calc(world, scratch));
        self.settle(world, outcome)
    }

    /// After a contained section: recovers if it failed, remembering
    /// whether the pool ran out; true when it finished.
    pub(crate) fn settle(&mut self, world: &mut World, outcome: Result<(), crate::contain::Failure>) -> bool {
        match outcome {
            Ok(()) => true,
            Err(failure) => {
                self.out_of_memory = failure == crate::contain::Failure::OutOfMemory;
                self.recover(world);
                false
            }
        }
    }

    /// After a unit panicked: gives the world back what the synth's run had
    /// lent it (its generator, its local buffers) and marks the synth
    /// failed at the step that was running.
    pub(crate) fn recover(&mut self, world: &mut World) {
        world.end_local_bufs();
        if self.rgen_swapped {
            self.leave_rgen(world);
        }
        self.failed = Some(self.at);
    }

    /// Names the step a lane kernel was computing when it failed.
    pub(crate) fn set_step(&mut self, si: usize) {
        self.at = si as u32;
    }

    pub fn has_failed(&self) -> bool {
        self.failed.is_some()
    }

    /// Readies the synth for a lane batch (`schedule::run_lanes`), in which
    /// `scratch` holds its audio wires for the whole block: points its
    /// step wires there once, for the kernels' steps and the steps between
    /// them alike, and returns what the kernels' lanes are made of. `None`,
    /// having done nothing, if the synth was never built (it has no runs set
    /// up; lane batches hold built synths).
    ///
    /// # Safety
    /// `scratch` must point at `def.scratch_len` samples that nothing else
    /// uses during this synth's block.
    #[inline(always)]
    pub(crate) unsafe fn join_lanes(&mut self, scratch: *mut f32) -> Option<LaneSlot> {
        if self.runs.runs.len() != self.def.calc_steps.len() {
            debug_assert!(false, "an unbuilt synth in a lane batch");
            return None;
        }
        // SAFETY: the caller vouches for the scratch.
        unsafe { self.aim_runs(scratch) };
        Some(LaneSlot { base: self.wires.as_mut_ptr(), scratch, units: self.units.as_mut_ptr() })
    }

    /// Whether the def's leading control steps (`GraphDef::control_prefix`)
    /// would write what their wires hold now: every `Control` output among
    /// them holds, bit for bit, the control it copies. Their other outputs
    /// were computed from those values in the same block as they were last
    /// written (a synth computes the steps together, or fails and computes
    /// no more). For a synth in a lane batch, none of whose controls is
    /// mapped (`may_share_lanes` checked that for the block), so the values
    /// alone are compared.
    #[inline(always)]
    pub(crate) fn controls_as_computed(&self) -> bool {
        debug_assert!(self.ctx.control_map.iter().all(|m| *m == ControlMap::Own), "a mapped control in a lane batch");
        let controls = &self.ctx.controls;
        self.def.prefix_controls.iter().all(|&(c, w)| {
            let now = controls.get(c as usize).copied().unwrap_or(0.0);
            self.wires.get(w as usize).is_some_and(|v| v.to_bits() == now.to_bits())
        })
    }

    /// Computes the calc steps `steps` (positions in `def.calc_steps`) only,
    /// in a lane batch, after `join_lanes`: the engine may run several
    /// synths of one def side by side, a run of steps of each at a time.
    /// `rates` are the world's block rate and full rate, copied once by the
    /// caller for all the synths it runs. Only for lockstep-safe defs, which draw
    /// no random numbers per block, and for defs that draw when the synth
    /// has its own generator: `swap_rng` (one of the steps draws and the
    /// def is not lockstep-safe) swaps it in for the run.
    ///
    /// # Safety
    /// As for [`Self::join_lanes`], which returned true and whose scratch
    /// is still this synth's; `steps` lies inside `0..def.calc_steps.len()`.
    #[inline(always)]
    pub(crate) unsafe fn calc_steps(&mut self, steps: Range<usize>, swap_rng: bool, rates: &[&RateInfo; 2], world: &mut World) {
        self.local_bufs(world, true);
        // Lockstep defs have no demand-rate units, and declare every unit
        // that draws (see `units_safe`).
        let own_rng = swap_rng && self.rgen.is_some();
        if own_rng {
            self.enter_rgen(world);
        }
        let Synth { ctx, units, runs, done, at, .. } = self;
        let mut cx = UnitCtx::new(world, ctx, rates[0], done, 0);
        // SAFETY: `join_lanes` found one run per calc step, and the caller
        // vouches for `steps`.
        let runs = unsafe { runs.runs.get_unchecked_mut(steps) };
        // SAFETY: these are the synth's runs and units, the runs pointing
        // at the scratch the caller vouches for.
        unsafe { run_each(runs, units, at, rates, &mut cx) };
        if own_rng {
            self.leave_rgen(world);
        }
        self.local_bufs(world, false);
    }

    /// Lets units that owe the world something settle it before the
    /// synth is freed (only units that were built).
    pub fn run_dtors(&mut self, world: &mut World) {
        let def = Arc::clone(&self.def);
        let full = world.full_rate;
        let block = world.buf_rate;
        for (i, unit) in self.units.iter_mut().enumerate() {
            let step = &def.steps[i];
            let ud = &def.units[step.unit as usize];
            let rate = if ud.rate == Rate::Audio { &full } else { &block };
            let mut cx = UnitCtx::new(world, &mut self.ctx, rate, &mut self.done, step.unit as usize);
            unit.dtor(&mut cx);
        }
    }

    /// Sets control `index` to `value` and unmaps it, as `/n_set` does.
    pub fn set_control(&mut self, index: usize, value: f32) {
        if index < self.ctx.controls.len() {
            self.ctx.controls[index] = value;
            self.ctx.control_map[index] = ControlMap::Own;
        }
    }

    pub fn map_control(&mut self, index: usize, map: ControlMap) {
        if index < self.ctx.control_map.len() {
            self.ctx.control_map[index] = map;
        }
    }

    /// Whether units asked for done actions or node frees this block.
    #[inline]
    pub fn has_requests(&self) -> bool {
        !self.ctx.done_actions.is_empty() || !self.ctx.free_requests.is_empty() || !self.ctx.run_requests.is_empty()
    }

    pub fn num_units(&self) -> usize {
        self.def.units.len()
    }
}

/// Runs calc steps `runs` of a synth with their wires as they point now
/// (`Synth::aim_runs`), in one unit context `cx`, noting in `at` the step
/// that runs; `rates` are the world's block rate and full rate, in that
/// order.
///
/// # Safety
/// `runs` and `units` are one built synth's (`Synth::set_up_runs`), `cx`
/// is its context, and the runs point at a scratch that nothing else uses
/// during the call.
#[inline(always)]
unsafe fn run_each<'a>(runs: &mut [StepRun], units: &mut [Box<dyn Unit>], at: &mut u32, rates: &[&'a RateInfo; 2], cx: &mut UnitCtx<'a>) {
    for run in runs {
        *at = run.step;
        cx.rate = rates[run.audio as usize];
        cx.unit_index = run.def_unit as usize;
        // SAFETY: runs exist only once every unit is built
        // (`set_up_runs`), and units are never removed.
        let unit = unsafe { units.get_unchecked_mut(run.step as usize) };
        unit.next(&mut run.io, cx);
    }
}

/// A calc step of one synth, set up once (`Synth::set_up_runs`).
struct StepRun {
    /// The step's wires in the synth's array and in `StepRuns::scratch`.
    io: Wires<'static>,
    /// The step (its unit's place in `Synth::units`) and the def unit it
    /// stands for.
    step: u32,
    def_unit: u32,
    audio: bool,
}

/// A synth's calc steps, set up once, and the scratch their audio wires
/// are in now.
struct StepRuns {
    runs: Vec<StepRun>,
    scratch: *mut f32,
}

// SAFETY: the pointers are into the synth's own wire array and the scratch
// of the thread that ran it last; they are used only while the synth runs,
// by the one thread that runs it, which points them at its own scratch first.
unsafe impl Send for StepRuns {}
// SAFETY: as for `Send`; a shared synth gives no access to them.
unsafe impl Sync for StepRuns {}

/// Where a synth in a lane batch keeps what its kernels' lanes are made
/// of (`Synth::join_lanes`): its wire array, the scratch slice its runs
/// point at, and its units. Looked up once per synth and batch, so that
/// filling a kernel's lane reads no more of the synth.
#[derive(Clone, Copy)]
pub(crate) struct LaneSlot {
    base: *mut f32,
    scratch: *mut f32,
    units: *mut Box<dyn Unit>,
}

impl LaneSlot {
    /// A slot that no lane uses.
    pub(crate) const EMPTY: LaneSlot = LaneSlot {
        base: std::ptr::null_mut(),
        scratch: std::ptr::null_mut(),
        units: std::ptr::null_mut(),
    };

    /// The wires of a step for a lane kernel: they point at the scratch
    /// `join_lanes` gave. `inputs` and `outputs` are the step's wires and
    /// `n` its samples per call, looked up once by the caller for all the
    /// synths it runs.
    ///
    /// # Safety
    /// The slot is from `join_lanes` of a synth that is live, built, runs
    /// in this batch and is reached through nothing else meanwhile, its
    /// scratch still its own; `inputs` and `outputs` are the wires of a step
    /// of its def. The wires are used only until the synth is reached
    /// otherwise, and no two of them for one step and slot at once.
    #[inline(always)]
    pub(crate) unsafe fn wires<'a>(self, inputs: &'a [WireRef], outputs: &'a [WireRef], n: usize, bs: usize) -> Wires<'a> {
        // SAFETY: as in `calc`, with the scratch the runs point at, which
        // the caller vouches for.
        unsafe { Wires::new(self.base, self.scratch, inputs, outputs, bs, n) }
    }

    /// The unit of step `si`.
    ///
    /// # Safety
    /// As for [`Self::wires`], with `si` a step of the synth's def; the unit
    /// is used only while the synth is reached through nothing else, and
    /// not twice at once.
    #[inline(always)]
    pub(crate) unsafe fn unit<'a>(self, si: usize) -> &'a mut dyn Unit {
        // SAFETY: a built synth has one unit per step (`set_up_runs`), and
        // its units are never moved or removed while it lives.
        unsafe { &mut **self.units.add(si) }
    }
}

/// The first sample of wire `w`.
///
/// # Safety
/// `base` and `scratch` must be the wire arrays `w` was placed in, holding it.
unsafe fn first_sample(base: *const f32, scratch: *const f32, w: WireRef) -> f32 {
    // SAFETY: the caller's contract puts the wire inside the array its flag names.
    unsafe {
        if w.offset & SCRATCH != 0 {
            *scratch.add((w.offset & !SCRATCH) as usize)
        } else {
            *base.add(w.offset as usize)
        }
    }
}

/// The demand-rate units a unit may read: the synth's units built before it
/// (a unit's inputs always come from earlier steps).
struct DemandUnits<'a> {
    units: &'a mut [Box<dyn Unit>],
    def: &'a GraphDef,
    base: *mut f32,
    scratch: *mut f32,
    block: &'a RateInfo,
    block_size: usize,
}

impl DemandRunner for DemandUnits<'_> {
    fn run(&mut self, unit: usize, demanded: usize, world: &mut World, synth: &mut SynthCtx, done_flags: &mut [bool]) {
        let si = self.def.step_of_unit[unit] as usize;
        if si >= self.units.len() {
            return;
        }
        let step = &self.def.steps[si];
        let (before, rest) = self.units.split_at_mut(si);
        // SAFETY: the wire arrays are the running synth's (see `calc`). The reader holds no slice
        // of this unit's output across the call: it reads the value after it.
        let mut io = unsafe { Wires::new(self.base, self.scratch, &step.inputs, &step.outputs, self.block_size, 1) };
        let mut inner =
            DemandUnits { units: before, def: self.def, base: self.base, scratch: self.scratch, block: self.block, block_size: self.block_size };
        let mut cx = UnitCtx::new(world, synth, self.block, done_flags, step.unit as usize);
        cx.demand = Some(&mut inner);
        cx.demanded = demanded;
        rest[0].next(&mut io, &mut cx);
    }
}
