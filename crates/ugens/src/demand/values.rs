//! Demand-rate units that compute their values: series and random values.

use super::{Demanded, Pattern, Repeats};
use crate::registry::Registry;
use crate::unit::{UnitCtx, UnitSpec, Wires};

pub(super) fn register(r: &mut Registry) {
    r.add::<Demanded<Series<false>>>("Dseries");
    r.add::<Demanded<Series<true>>>("Dgeom");
    r.add::<Demanded<White>>("Dwhite");
    r.add::<Demanded<IWhite>>("Diwhite");
}

/// `Dseries(length, start, step)` (added each time) and, with `GEOM`,
/// `Dgeom(length, start, grow)` (multiplied each time).
pub(super) struct Series<const GEOM: bool> {
    repeats: Repeats,
    value: f64,
    step: f64,
}

impl<const GEOM: bool> Pattern for Series<GEOM> {
    fn build(_spec: &UnitSpec<'_>) -> Self {
        Series { repeats: Repeats::new(), value: 0.0, step: 0.0 }
    }

    fn reset(&mut self) {
        self.repeats.reset();
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let k = cx.demanded;
        let step = cx.demand_input_at(io, 2, k);
        if !step.is_nan() {
            self.step = step as f64;
        }
        if self.repeats.limit < 0.0 {
            self.repeats.read(io, cx, 0);
            self.value = cx.demand_input_at(io, 1, k) as f64;
        }
        if self.repeats.exhausted() {
            return Some(f32::NAN);
        }
        let x = self.value as f32;
        if GEOM {
            self.value *= self.step;
        } else {
            self.value += self.step;
        }
        self.repeats.count += 1;
        Some(x)
    }
}

/// `Dwhite(length, lo, hi)`: uniform random values.
pub(super) struct White {
    repeats: Repeats,
    lo: f32,
    range: f32,
}

impl Pattern for White {
    fn build(_spec: &UnitSpec<'_>) -> Self {
        White { repeats: Repeats::new(), lo: 0.0, range: 0.0 }
    }

    fn reset(&mut self) {
        self.repeats.reset();
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let k = cx.demanded;
        self.repeats.read(io, cx, 0);
        if self.repeats.exhausted() {
            return Some(f32::NAN);
        }
        self.repeats.count += 1;
        let lo = cx.demand_input_at(io, 1, k);
        let hi = cx.demand_input_at(io, 2, k);
        if !lo.is_nan() {
            self.lo = lo;
        }
        if !hi.is_nan() {
            // As scsynth: the range is taken from this call's `lo`, even a NaN one.
            self.range = hi - lo;
        }
        Some(cx.world.rgen.frand() * self.range + self.lo)
    }
}

/// `Diwhite(length, lo, hi)`: uniform random integers from lo to hi.
pub(super) struct IWhite {
    repeats: Repeats,
    lo: i32,
    range: i32,
}

impl Pattern for IWhite {
    fn build(_spec: &UnitSpec<'_>) -> Self {
        IWhite { repeats: Repeats::new(), lo: 0, range: 0 }
    }

    fn reset(&mut self) {
        self.repeats.reset();
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let k = cx.demanded;
        let lo = cx.demand_input_at(io, 1, k);
        let hi = cx.demand_input_at(io, 2, k);
        // scsynth asks each bound's source again for the value it keeps.
        if !lo.is_nan() {
            self.lo = (cx.demand_input_at(io, 1, k) + 0.5).floor() as i32;
        }
        if !hi.is_nan() {
            let hi = (cx.demand_input_at(io, 2, k) + 0.5).floor() as i32;
            self.range = hi.wrapping_sub(self.lo).wrapping_add(1);
        }
        self.repeats.read(io, cx, 0);
        if self.repeats.exhausted() {
            return Some(f32::NAN);
        }
        self.repeats.count += 1;
        Some(cx.world.rgen.irand(self.range).wrapping_add(self.lo) as f32)
    }
}
