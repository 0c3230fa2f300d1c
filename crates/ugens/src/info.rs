//! Constant and informational units.

use crate::registry::Registry;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// DC: outputs its input's value, fixed at construction.
pub struct Dc {
    value: f32,
}

impl Construct for Dc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let value = io.in0(0);
        io.out(0).fill(value);
        Dc { value }
    }
}

impl Unit for Dc {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let v = self.value;
        io.out(0).fill(v);
    }
}

pub fn register(r: &mut Registry) {
    r.add::<Dc>("DC");
}
