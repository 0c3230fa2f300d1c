//! Name → constructor table for every UGen magnetar knows.

use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use std::collections::HashMap;

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

#[derive(Default)]
pub struct Registry {
    ctors: HashMap<&'static str, UnitCtor>,
    batches: HashMap<&'static str, BatchEntry>,
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
        r
    }

    /// Registers `T` under `name`.
    pub fn add<T: Construct>(&mut self, name: &'static str) {
        self.add_ctor(name, build::<T>);
    }

    /// Registers a hand-written constructor (several names for one struct,
    /// or a constructor that picks among structs).
    pub fn add_ctor(&mut self, name: &'static str, ctor: UnitCtor) {
        let previous = self.ctors.insert(name, ctor);
        assert!(previous.is_none(), "UGen {name} registered twice");
    }

    /// Lets instances of `name` be computed in batches.
    pub fn add_batch(&mut self, name: &'static str, batchable: Batchable, ctor: UnitCtor) {
        let previous = self.batches.insert(name, BatchEntry { batchable, ctor });
        assert!(previous.is_none(), "batch for UGen {name} registered twice");
    }

    pub fn batch(&self, name: &str) -> Option<BatchEntry> {
        self.batches.get(name).copied()
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
