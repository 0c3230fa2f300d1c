//! Name → constructor table for every UGen magnetar knows.

use crate::unit::{Construct, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires};
use crate::decl::{Decl, Declare, Effects};
use std::collections::HashMap;
use std::sync::OnceLock;

pub type UnitCtor = fn(&UnitSpec<'_>, &mut Wires<'_>, &mut UnitCtx<'_>) -> Box<dyn Unit>;

/// Says whether a unit with this spec and these input rates may join a
/// batch: several independent instances computed together, lane by lane,
/// with exactly the arithmetic each would do alone.
pub type Batchable = fn(&UnitSpec<'_>, &[Rate]) -> bool;

#[derive(Clone, Copy)]
pub struct BatchEntry {
    pub batchable: Batchable,
    /// Builds one unit for `spec.lanes` members.
    pub ctor: UnitCtor,
}

/// Most synths whose same step one lane kernel computes at once.
pub const MAX_LANES: usize = 16;

/// The same step of up to [`MAX_LANES`] synths: unit `l` and its wires.
pub struct Lanes<'a> {
    pub units: [Option<&'a mut dyn Unit>; MAX_LANES],
    pub ios: [Option<Wires<'a>>; MAX_LANES],
    pub len: usize,
}

impl<'a> Lanes<'a> {
    pub fn new() -> Lanes<'a> {
        Lanes { units: std::array::from_fn(|_| None), ios: std::array::from_fn(|_| None), len: 0 }
    }

    pub fn push(&mut self, unit: &'a mut dyn Unit, io: Wires<'a>) {
        assert!(self.len < MAX_LANES, "more lanes than a kernel takes");
        self.units[self.len] = Some(unit);
        self.ios[self.len] = Some(io);
        self.len += 1;
    }
}

impl Default for Lanes<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Computes the same step of several synths together, lane by lane, with
/// exactly the arithmetic each unit would do alone. All units are of the
/// UGen the kernel is registered for. Only for pure units: the kernel sees
/// nothing of the world but the rate.
pub type LaneKernel = fn(lanes: &mut Lanes<'_>, rate: &RateInfo);

#[derive(Default)]
pub struct Registry {
    ctors: HashMap<&'static str, UnitCtor>,
    batches: HashMap<&'static str, BatchEntry>,
    lanes: HashMap<&'static str, LaneKernel>,
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

fn build<T: Construct>(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    Box::new(T::new(spec, io, cx))
}

impl Registry {
    /// Every UGen of every family.
    pub fn with_all() -> Registry {
        let mut r = Registry::default();
        crate::osc::register(&mut r);
        crate::noise::register(&mut r);
        crate::filters::register(&mut r);
        crate::delays::register(&mut r);
        crate::envelopes::register(&mut r);
        crate::triggers::register(&mut r);
        crate::ops::register(&mut r);
        crate::io::register(&mut r);
        crate::pan::register(&mut r);
        crate::bufio::register(&mut r);
        crate::info::register(&mut r);
        crate::reply::register(&mut r);
        crate::gc_units::register(&mut r);
        crate::demand::register(&mut r);
        crate::tables::register(&mut r);
        crate::utility::register(&mut r);
        crate::chaos::register(&mut r);
        crate::fft::register(&mut r);
        crate::grains::register(&mut r);
        crate::listening::register(&mut r);
        crate::convolution::register(&mut r);
        crate::assorted::register(&mut r);
        crate::scope::register(&mut r);
        crate::ui::register(&mut r);
        crate::disk::register(&mut r);
        crate::fault_test::register_if_enabled(&mut r);
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
