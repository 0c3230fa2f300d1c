//! Demand-rate units that walk lists of values and of other demand-rate
//! units (patterns within patterns): a list item that is a demand-rate unit
//! gives all its values before the list moves on, and is reset first.

use super::{Demanded, Pattern, Repeats};
use crate::registry::Registry;
use crate::unit::{UnitCtx, UnitSpec, Wires};

pub(super) fn register(r: &mut Registry) {
    r.add::<Demanded<Seq>>("Dseq");
    r.add::<Demanded<Ser>>("Dser");
}

/// The position in a list (inputs 1..) and whether its current item, when
/// it is a demand-rate unit, must be reset before its next value.
#[derive(Clone, Copy)]
struct Walk {
    index: usize,
    reset_item: bool,
}

/// What the current item of a list gave.
enum Item {
    /// A value; the walk stays on a demand-rate item, moves past any other.
    Value(f32),
    /// The demand-rate item ran out; the walk moved past it.
    RanOut,
}

impl Walk {
    fn new() -> Walk {
        Walk { index: 1, reset_item: true }
    }

    /// The current item's next value. A plain item (constant or signal) is
    /// read at the asked-for sample, or with `first_sample` at the block's first.
    fn item(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, first_sample: bool) -> Item {
        if cx.is_demand_input(io, self.index) {
            if self.reset_item {
                self.reset_item = false;
                cx.reset_input(io, self.index);
            }
            let x = cx.demand_input_at(io, self.index, cx.demanded);
            if !x.is_nan() {
                return Item::Value(x);
            }
            self.index += 1;
            self.reset_item = true;
            Item::RanOut
        } else {
            let x = if first_sample { io.in0(self.index) } else { cx.demand_input_at(io, self.index, cx.demanded) };
            self.index += 1;
            self.reset_item = true;
            Item::Value(x)
        }
    }
}

/// `Dseq(repeats, items...)`: the list, `repeats` times.
pub(super) struct Seq {
    repeats: Repeats,
    walk: Walk,
}

impl Pattern for Seq {
    fn build(_spec: &UnitSpec<'_>) -> Self {
        Seq { repeats: Repeats::new(), walk: Walk::new() }
    }

    fn reset(&mut self) {
        self.repeats.reset();
        self.walk = Walk::new();
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        self.repeats.read(io, cx, 0);
        let mut attempts = 0;
        loop {
            if self.walk.index >= io.num_inputs() {
                self.walk.index = 1;
                self.repeats.count += 1;
            }
            if self.repeats.exhausted() {
                self.walk.index = 1;
                return Some(f32::NAN);
            }
            if let Item::Value(x) = self.walk.item(io, cx, false) {
                return Some(x);
            }
            // Demand-rate items that all run out at once: scsynth gives up
            // on this value and leaves its output as it was.
            attempts += 1;
            if attempts > io.num_inputs() {
                return None;
            }
        }
    }
}

/// `Dser(length, items...)`: the list's items, cycling, until `length` of
/// them were taken (a demand-rate item counts once, when it has run out).
pub(super) struct Ser {
    repeats: Repeats,
    walk: Walk,
}

impl Pattern for Ser {
    fn build(_spec: &UnitSpec<'_>) -> Self {
        Ser { repeats: Repeats::new(), walk: Walk::new() }
    }

    fn reset(&mut self) {
        self.repeats.reset();
        self.walk = Walk::new();
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        self.repeats.read(io, cx, 0);
        loop {
            if self.walk.index >= io.num_inputs() {
                self.walk.index = 1;
            }
            if self.repeats.exhausted() {
                return Some(f32::NAN);
            }
            let demand_item = cx.is_demand_input(io, self.walk.index);
            match self.walk.item(io, cx, true) {
                Item::Value(x) => {
                    if !demand_item {
                        self.repeats.count += 1;
                    }
                    return Some(x);
                }
                Item::RanOut => self.repeats.count += 1,
            }
        }
    }
}
