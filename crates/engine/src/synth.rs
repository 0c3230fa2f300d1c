//! A running instance of a GraphDef: its wires, its units and its controls.

use crate::graph_def::{GraphDef, Step};
use crate::failure::FailReason;
use magnetar_protocol::printed::c_g;
use magnetar_ugens::unit::SCRATCH;
use magnetar_ugens::{
    ControlMap, DemandRunner, RGen, Rate, RateInfo, SynthCtx, Unit, UnitCtx, UnitSpec, WireRef, Wires, World,
};
use std::sync::Arc;

pub struct Synth {
    pub def: Arc<GraphDef>,
    pub ctx: SynthCtx,
    wires: Vec<f32>,
    units: Vec<Box<dyn Unit>>,
    done: Vec<bool>,
    /// The synth's own random generator, when the server gives each synth
    /// one (supernova's way); `None` draws from the world's (scsynth's way).
    pub rgen: Option<RGen>,
    /// Whether the synth's generator is in the world's place now (between
    /// `enter_rgen` and `leave_rgen`).
    rgen_swapped: bool,
    /// The step being built or run, and whether one is (for the report of a
    /// unit that fails: see `contain`).
    at: u32,
    running: bool,
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
        Synth { def, ctx, wires, units, done, rgen: None, rgen_swapped: false, at: 0, running: false, failed: None, reserved: 0, out_of_memory: false }
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
        self.running = true;
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
            let unit = (step.ctor)(&spec, &mut io, &mut cx);
            self.units.push(unit);
        }
        self.running = false;
        self.local_bufs(world, false);
        self.leave_rgen(world);
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
        self.calc_watched(world, scratch, |_, _, _, _| {});
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
            for (u, ud) in def.units.iter().enumerate() {
                if def.step_of_unit[u] as usize != si {
                    continue;
                }
                let (wires, values) = if after { (&ud.outputs, &mut outs[u]) } else { (&ud.inputs, &mut ins[u]) };
                // SAFETY: `base` and `scratch` are the arrays the step's
                // wires live in (see `calc`), and no unit runs meanwhile.
                values.extend(wires.iter().map(|&w| unsafe { first_sample(base, scratch, w) }));
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
        self.running = true;
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
        self.running = false;
        self.local_bufs(world, false);
        self.leave_rgen(world);
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
        self.running = false;
        self.failed = Some(self.at);
    }

    /// Names the step a lane kernel was computing when it failed.
    pub(crate) fn set_step(&mut self, si: usize) {
        self.at = si as u32;
    }

    pub fn has_failed(&self) -> bool {
        self.failed.is_some()
    }

    /// Computes step `si` only (the engine may run several synths of one
    /// def step by step side by side). `scratch` holds this synth's audio
    /// wires for the whole block; `step` is `def.steps[si]` and `rate` its
    /// rate, looked up once by the caller for all the synths it runs. Only
    /// for lockstep-safe defs, which draw no random numbers per block, and
    /// for defs that draw when the synth has its own generator, which is
    /// then swapped in for the step.
    ///
    /// # Safety
    /// `scratch` must point at `def.scratch_len` samples that nothing else
    /// uses during this synth's block; `step` is this synth's def's step `si`.
    pub unsafe fn calc_step(&mut self, si: usize, step: &Step, rate: &RateInfo, world: &mut World, scratch: *mut f32) {
        let n = if step.audio { world.block_size } else { 1 };
        // SAFETY: as in `calc`, with the scratch the caller vouches for.
        let mut io =
            unsafe { Wires::new(self.wires.as_mut_ptr(), scratch, &step.inputs, &step.outputs, world.block_size, n) };
        self.local_bufs(world, true);
        self.at = si as u32;
        self.running = true;
        // Lockstep defs have no demand-rate units.
        // Only a step that draws needs the generator in place (these defs
        // declare every unit; see `units_safe`).
        let own_rng = step.draws && !self.def.lockstep && self.rgen.is_some();
        if own_rng {
            self.enter_rgen(world);
        }
        let mut cx = UnitCtx::new(world, &mut self.ctx, rate, &mut self.done, step.unit as usize);
        self.units[si].next(&mut io, &mut cx);
        if own_rng {
            self.leave_rgen(world);
        }
        self.running = false;
        self.local_bufs(world, false);
    }

    /// The unit and wires of step `si`, for a lane kernel.
    ///
    /// # Safety
    /// As for [`Self::calc_step`].
    pub unsafe fn lane_parts(&mut self, si: usize, bs: usize, scratch: *mut f32) -> (&mut dyn Unit, Wires<'_>) {
        let Synth { def, units, wires, .. } = self;
        let step = &def.steps[si];
        let n = if step.audio { bs } else { 1 };
        // SAFETY: as in `calc`, with the scratch the caller vouches for.
        let io = unsafe { Wires::new(wires.as_mut_ptr(), scratch, &step.inputs, &step.outputs, bs, n) };
        (&mut *units[si], io)
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
