//! Name → constructor table for every UGen magnetar knows.

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use std::collections::HashMap;

pub type UnitCtor = fn(&UnitSpec<'_>, &mut Wires<'_>, &mut UnitCtx<'_>) -> Box<dyn Unit>;

#[derive(Default)]
pub struct Registry {
    ctors: HashMap<&'static str, UnitCtor>,
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
