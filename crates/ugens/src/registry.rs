//! Name → constructor and declaration table for every UGen magnetar knows
//! (the list itself: [`crate::catalog`]).

pub use crate::unit::{BatchEntry, Batchable, LaneKernel, Lanes, UnitCtor, MAX_LANES};
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::decl::{Decl, Declare, Effects};
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(Default)]
pub struct Registry {
    ctors: HashMap<&'static str, UnitCtor>,
    batches: HashMap<&'static str, BatchEntry>,
    lanes: HashMap<&'static str, LaneKernel>,
    batch_lanes: HashMap<&'static str, LaneKernel>,
    /// Lane kernels of one operator of a unit that computes several
    /// (`BinaryOpUGen`), by name and special index.
    op_lanes: HashMap<(&'static str, i16), LaneKernel>,
    /// Lane kernels that save little besides the engine's call per synth
    /// (see `add_light_lanes`).
    light_lanes: HashMap<&'static str, LaneKernel>,
    /// Lane kernels of units that write a bus: they need the world and
    /// compute their lanes in order (see `add_ordered_lanes`).
    ordered_lanes: HashMap<&'static str, LaneKernel>,
    /// What each unit declared at registration.
    decls: HashMap<&'static str, Decl>,
}

/// Registers units from outside this crate (the server's plugin host) in
/// every registry [`Registry::with_all`] builds; set once, at boot.
static EXTENSION: OnceLock<fn(&mut Registry)> = OnceLock::new();

/// Installs `f` as the extension every new registry runs (see
/// [`EXTENSION`]); a second call is ignored and returns false.
pub fn set_extension(f: fn(&mut Registry)) -> bool {
    EXTENSION.set(f).is_ok()
}

/// Readies what foreign units need before their first instance (the
/// plugin host's FFT plans); set once, at boot.
static FOREIGN_PREPARE: OnceLock<fn()> = OnceLock::new();

/// Installs `f` as what [`prepare_foreign`] runs; a second call is ignored
/// and returns false.
pub fn set_foreign_prepare(f: fn()) -> bool {
    FOREIGN_PREPARE.set(f).is_ok()
}

/// Runs what [`set_foreign_prepare`] installed, if anything: called off the
/// audio thread when a def that uses foreign units is compiled, before any
/// of them is built. May take long the first time.
pub fn prepare_foreign() {
    if let Some(prepare) = FOREIGN_PREPARE.get() {
        prepare();
    }
}

fn build<T: Construct>(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(T::new(spec, io, cx))
}

impl Registry {
    /// Every UGen of every family.
    pub fn with_all() -> Registry {
        // Tables units share, built once per process here, where the
        // registry is made (off the audio thread), rather than by the first
        // synth that uses them.
        crate::common::wavetable::sine_tables();
        crate::pan::sine_table();
        crate::common::spectrum::tables();
        let mut r = Registry::default();
        crate::catalog::register_all(&mut r);
        if let Some(extend) = EXTENSION.get() {
            extend(&mut r);
        }
        r
    }

    /// Registers a foreign unit (a plugin's) under `name`. An existing
    /// unit of that name stays unless `replace`, which also drops its
    /// batch and lane kernels.
    pub fn add_foreign(&mut self, name: &'static str, ctor: UnitCtor, replace: bool) {
        if self.ctors.contains_key(name) && !replace {
            return;
        }
        self.ctors.insert(name, ctor);
        self.batches.remove(name);
        self.lanes.remove(name);
        self.batch_lanes.remove(name);
        self.op_lanes.retain(|&(n, _), _| n != name);
        self.ordered_lanes.remove(name);
        self.light_lanes.remove(name);
        self.decls.insert(name, Decl::FOREIGN);
    }

    /// Whether `name` is a foreign (plugin) unit.
    pub fn is_foreign(&self, name: &str) -> bool {
        self.effects(name).foreign
    }

    /// Registers `T` under `name`; its effects are declared on the result.
    pub fn add<T: Construct>(&mut self, name: &'static str) -> Declare<'_> {
        self.add_ctor(name, build::<T>)
    }

    /// Registers a hand-written constructor (several names for one struct,
    /// or a constructor that picks among structs); its effects are declared
    /// on the result.
    pub fn add_ctor(&mut self, name: &'static str, ctor: UnitCtor) -> Declare<'_> {
        let previous = self.ctors.insert(name, ctor);
        assert!(previous.is_none(), "UGen {name} registered twice");
        Declare::new(self.decls.entry(name).or_default())
    }

    /// What `name` declared (an unknown name: what an undeclared unit is
    /// taken to do).
    pub fn effects(&self, name: &str) -> Effects {
        self.decl(name).effects
    }

    /// Everything `name` declared (an unknown name: what an undeclared
    /// unit is taken to be).
    pub fn decl(&self, name: &str) -> Decl {
        self.decls.get(name).copied().unwrap_or_default()
    }

    /// Lets instances of `name` be computed in batches.
    pub fn add_batch(&mut self, name: &'static str, batchable: Batchable, ctor: UnitCtor) {
        let previous = self.batches.insert(name, BatchEntry { batchable, ctor });
        assert!(previous.is_none(), "batch for UGen {name} registered twice");
    }

    /// Lets the same step of several synths of one def run together.
    pub fn add_lanes(&mut self, name: &'static str, kernel: LaneKernel) {
        let previous = self.lanes.insert(name, kernel);
        assert!(previous.is_none(), "lane kernel for UGen {name} registered twice");
    }

    /// Registers the lane kernel of a UGen's batch unit (see `add_batch`):
    /// the batch step of several synths of one def computed together.
    pub fn add_batch_lanes(&mut self, name: &'static str, kernel: LaneKernel) {
        let previous = self.batch_lanes.insert(name, kernel);
        assert!(previous.is_none(), "batch lane kernel for UGen {name} registered twice");
    }

    /// Lets the same step of several synths of one def run together, for
    /// a unit whose kernel costs about what its unit does alone: the call
    /// per synth is all it saves (`lane_is_light`).
    pub fn add_light_lanes(&mut self, name: &'static str, kernel: LaneKernel) {
        let previous = self.light_lanes.insert(name, kernel);
        assert!(previous.is_none(), "light lane kernel for UGen {name} registered twice");
    }

    /// Whether the lane kernel of unit `name` (operator `special_index`)
    /// saves little besides the engine's call per synth: light kernels
    /// (`add_light_lanes`), operators' kernels and ordered kernels. A
    /// light kernel between two plain steps would cost more than it saves,
    /// splitting the synths' runs of plain steps in two.
    pub fn lane_is_light(&self, name: &str, special_index: i16) -> bool {
        let ops: &HashMap<(&str, i16), LaneKernel> = &self.op_lanes;
        !self.lanes.contains_key(name)
            && (self.light_lanes.contains_key(name)
                || self.ordered_lanes.contains_key(name)
                || ops.contains_key(&(name, special_index)))
    }

    /// Lets the same step of several synths of one def run together, for
    /// the operator `special_index` of unit `name` only.
    pub fn add_op_lanes(&mut self, name: &'static str, special_index: i16, kernel: LaneKernel) {
        let previous = self.op_lanes.insert((name, special_index), kernel);
        assert!(previous.is_none(), "lane kernel for UGen {name} operator {special_index} registered twice");
    }

    /// Registers the lane kernel of a unit whose one effect is a bus write:
    /// it reaches the world through [`Lanes::world`] and computes lane
    /// after lane in order, so that the writes of synths that share a bus
    /// happen in synth order. (Synths run in lanes only when their def
    /// writes buses through one unit at most, so no other write of a
    /// lane's synth falls between two of these.)
    pub fn add_ordered_lanes(&mut self, name: &'static str, kernel: LaneKernel) {
        let previous = self.ordered_lanes.insert(name, kernel);
        assert!(previous.is_none(), "ordered lane kernel for UGen {name} registered twice");
    }

    /// The lane kernel for one step of unit `name` (operator
    /// `special_index`): its kernel, or its operator's, for a unit that is
    /// pure or draws only random numbers (`pure`), its ordered kernel for
    /// one that writes a bus.
    pub fn lane_kernel(&self, name: &str, special_index: i16, pure: bool) -> Option<LaneKernel> {
        if pure {
            // The map's keys shortened to `name`'s lifetime, to look it up.
            let ops: &HashMap<(&str, i16), LaneKernel> = &self.op_lanes;
            self.lanes(name)
                .or_else(|| self.light_lanes.get(name).copied())
                .or_else(|| ops.get(&(name, special_index)).copied())
        } else {
            self.ordered_lanes.get(name).copied()
        }
    }

    pub fn batch_lanes(&self, name: &str) -> Option<LaneKernel> {
        self.batch_lanes.get(name).copied()
    }

    pub fn lanes(&self, name: &str) -> Option<LaneKernel> {
        self.lanes.get(name).copied()
    }

    pub fn batch(&self, name: &str) -> Option<BatchEntry> {
        self.batches.get(name).copied()
    }

    /// Whether a unit may be reordered freely within its data dependencies.
    pub fn is_pure(&self, name: &str, special_index: i16) -> bool {
        self.effects(name).is_pure(special_index)
    }

    /// Whether a unit draws from the random generator its synth uses (or
    /// reseeds it, as `RandSeed` does).
    pub fn draws_random(&self, name: &str, special_index: i16) -> bool {
        self.effects(name).draws(special_index)
    }

    pub fn get(&self, name: &str) -> Option<UnitCtor> {
        self.ctors.get(name).copied()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.ctors.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.ctors.keys().copied()
    }
}
