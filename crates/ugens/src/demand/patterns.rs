//! Demand-rate units that walk lists of values and of other demand-rate
//! units (patterns within patterns): a list item that is a demand-rate unit
//! gives all its values before the list moves on, and is reset first.
//! Also the units that pick from a list by an index or at random, and those
//! that transform another pattern (repeat, sum up to a total, reset).

use super::{sc_mod_int, Pattern, Repeats, Source};
use crate::unit::{UnitCtx, UnitSpec, Wires};


/// How many list items in a row may run out before a pattern that scsynth
/// would loop on forever (an endless list of empty patterns) gives up.
const MAX_RUN_OUTS: u32 = 1 << 16;

/// Writes the constructor's output value, when the unit has an output.
fn set_out(io: &mut Wires<'_>, x: f32) {
    if io.num_outputs() > 0 {
        io.out(0)[0] = x;
    }
}

/// Input `input` at the asked-for sample; an index past the inputs (which
/// scsynth would follow into its own output, recursing) reads as run out.
fn pull(io: &Wires<'_>, cx: &mut UnitCtx<'_>, input: i32) -> f32 {
    if input >= 0 && (input as usize) < io.num_inputs() {
        cx.demand_input_at(io, input as usize, cx.demanded)
    } else {
        f32::NAN
    }
}

/// Resets the demand-rate unit behind input `input`, if the unit has that input.
fn reset_at(io: &Wires<'_>, cx: &mut UnitCtx<'_>, input: usize) {
    if input < io.num_inputs() {
        cx.reset_input(io, input);
    }
}

use crate::common::math::c_int;

/// The nearest integer to `x` (halves up), as an int32.
fn round_index(x: f32) -> i32 {
    c_int((x + 0.5).floor())
}

/// `i` wrapped into 0..=hi, with scsynth's integer modulo.
fn wrap_index(i: i32, hi: i32) -> i32 {
    sc_mod_int(i, hi.wrapping_add(1))
}

/// What one list item gave.
enum Step {
    /// A demand-rate item gave a value; the list stays on it.
    Held(f32),
    /// A plain item (constant or signal) gave its value; the list moves on.
    Moved(f32),
    /// A demand-rate item (or an index past the inputs) ran out; the list moves on.
    RanOut,
}

/// The next value of the item at `input`. A demand-rate item is reset first
/// when `reset_item` says so; whenever the list must move on, `reset_item` is
/// set for the next item. A plain item is read at the asked-for sample, or
/// with `first_sample` at the block's first.
fn step(io: &Wires<'_>, cx: &mut UnitCtx<'_>, input: i32, reset_item: &mut bool, first_sample: bool) -> Step {
    if input < 0 || input as usize >= io.num_inputs() {
        *reset_item = true;
        return Step::RanOut;
    }
    let i = input as usize;
    if cx.is_demand_input(io, i) {
        if *reset_item {
            *reset_item = false;
            cx.reset_input(io, i);
        }
        let x = cx.demand_input_at(io, i, cx.demanded);
        if !x.is_nan() {
            return Step::Held(x);
        }
        *reset_item = true;
        Step::RanOut
    } else {
        let x = if first_sample { io.in0(i) } else { cx.demand_input_at(io, i, cx.demanded) };
        *reset_item = true;
        Step::Moved(x)
    }
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

    /// The current item's next value (see [`step`]).
    fn item(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, first_sample: bool) -> Item {
        match step(io, cx, self.index as i32, &mut self.reset_item, first_sample) {
            Step::Held(x) => Item::Value(x),
            Step::Moved(x) => {
                self.index += 1;
                Item::Value(x)
            }
            Step::RanOut => {
                self.index += 1;
                Item::RanOut
            }
        }
    }
}

/// `Dseq(repeats, items...)`: the list, `repeats` times.
pub(crate) struct Seq {
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
pub(crate) struct Ser {
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

/// The state the random list patterns share: how many items they took, the
/// item they are on (an input index) and whether to reset it first.
struct Pick {
    repeats: Repeats,
    index: i32,
    reset_item: bool,
}

impl Pick {
    /// scsynth's unit memory starts zeroed, and Dxrand and Dwrand look at
    /// their index before they first set it.
    fn new() -> Pick {
        Pick { repeats: Repeats::new(), index: 0, reset_item: true }
    }

    fn restart(&mut self) {
        self.repeats.reset();
        self.reset_item = true;
    }

    /// Takes the next value from the list, calling `choose` to move to
    /// another item (after a plain item's value, or when an item ran out);
    /// every move counts as one of the `repeats` items.
    fn take(
        &mut self,
        io: &Wires<'_>,
        cx: &mut UnitCtx<'_>,
        mut choose: impl FnMut(i32, &Wires<'_>, &mut UnitCtx<'_>) -> i32,
        wrap_first: bool,
    ) -> Option<f32> {
        self.repeats.read(io, cx, 0);
        let mut run_outs = 0;
        loop {
            if wrap_first && self.index >= io.num_inputs() as i32 {
                self.index = 1;
            }
            if self.repeats.exhausted() {
                return Some(f32::NAN);
            }
            match step(io, cx, self.index, &mut self.reset_item, false) {
                Step::Held(x) => return Some(x),
                Step::Moved(x) => {
                    self.index = choose(self.index, io, cx);
                    self.repeats.count = self.repeats.count.wrapping_add(1);
                    return Some(x);
                }
                Step::RanOut => {
                    self.index = choose(self.index, io, cx);
                    self.repeats.count = self.repeats.count.wrapping_add(1);
                    run_outs += 1;
                    if run_outs > MAX_RUN_OUTS {
                        return None;
                    }
                }
            }
        }
    }
}

/// Any item but the list's first input: 1 ..= n - 1 for n inputs.
fn any_item(io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> i32 {
    cx.world.rgen.irand(io.num_inputs() as i32 - 1) + 1
}

/// Another item than `current` (items are inputs 1 ..= n - 1).
fn other_item(current: i32, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> i32 {
    let drawn = cx.world.rgen.irand(io.num_inputs() as i32 - 2) + 1;
    if drawn < current {
        drawn
    } else {
        drawn + 1
    }
}

/// `Drand(repeats, items...)`: `repeats` items picked at random (a
/// demand-rate item gives all its values).
pub(crate) struct Rand(Pick);

impl Source for Rand {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut p = Rand(Pick::new());
        p.reset(io, cx);
        set_out(io, 0.0);
        p
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.0.restart();
        self.0.index = any_item(io, cx);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        self.0.take(io, cx, |_, io, cx| any_item(io, cx), false)
    }
}

/// `Dxrand(repeats, items...)`: like Drand, but never the same item twice in a row.
pub(crate) struct XRand(Pick);

impl Source for XRand {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut p = XRand(Pick::new());
        p.reset(io, cx);
        set_out(io, 0.0);
        p
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.0.restart();
        // The first pick avoids the item the last run ended on (input 0 when new).
        self.0.index = other_item(self.0.index, io, cx);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        self.0.take(io, cx, other_item, true)
    }
}

/// `Dwrand(repeats, n, weights[n], items[n])`: `repeats` items picked with
/// the given weights (read once per pick, not demanded).
pub(crate) struct WRand {
    pick: Pick,
    /// The `n` input, as an int32.
    weights: i32,
}

impl WRand {
    /// Picks the item whose weight brings the running sum to a uniform draw;
    /// if the weights fall short, the current item stays.
    fn choose(current: i32, weights: i32, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> i32 {
        let offset = weights.wrapping_add(2);
        let count = (io.num_inputs() as i32).wrapping_sub(offset);
        let r = cx.world.rgen.frand();
        let mut sum = 0.0f32;
        for i in 0..count.max(0) {
            let input = (2 + i) as usize;
            if input >= io.num_inputs() {
                break;
            }
            sum += io.in0(input);
            if sum >= r {
                return i + offset;
            }
        }
        current
    }
}

impl Source for WRand {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let weights = if io.num_inputs() > 1 { c_int(io.in0(1)) } else { 0 };
        let mut p = WRand { pick: Pick::new(), weights };
        p.reset(io, cx);
        set_out(io, 0.0);
        p
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.pick.restart();
        self.pick.index = WRand::choose(self.pick.index, self.weights, io, cx);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let weights = self.weights;
        self.pick.take(io, cx, |current, io, cx| WRand::choose(current, weights, io, cx), false)
    }
}

/// `Dshuf(repeats, items...)`: the list in a random order, the same order
/// each of `repeats` times; a reset shuffles it again.
pub(crate) struct Shuf {
    repeats: Repeats,
    /// Position in `order`.
    pos: usize,
    reset_item: bool,
    /// The items' inputs in playing order (a permutation of 1 ..= n - 1).
    order: Vec<i32>,
}

impl Shuf {
    /// Fisher–Yates over the current order (not over a fresh one).
    fn shuffle(&mut self, cx: &mut UnitCtx<'_>) {
        let size = self.order.len();
        if size > 1 {
            for i in 0..size - 1 {
                let j = i + cx.world.rgen.irand((size - i) as i32) as usize;
                self.order.swap(i, j.min(size - 1));
            }
        }
    }
}

impl Source for Shuf {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        set_out(io, 0.0);
        let order = (1..io.num_inputs() as i32).collect();
        let mut p = Shuf { repeats: Repeats::new(), pos: 0, reset_item: true, order };
        p.reset(io, cx);
        p
    }

    fn reset(&mut self, _io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.repeats.reset();
        self.reset_item = true;
        self.pos = 0;
        self.shuffle(cx);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        self.repeats.read(io, cx, 0);
        let mut run_outs = 0;
        loop {
            if self.pos >= self.order.len() {
                self.pos = 0;
                self.repeats.count = self.repeats.count.wrapping_add(1);
            }
            if self.repeats.exhausted() {
                self.pos = 0;
                return Some(f32::NAN);
            }
            match step(io, cx, self.order[self.pos], &mut self.reset_item, false) {
                Step::Held(x) => return Some(x),
                Step::Moved(x) => {
                    self.pos += 1;
                    return Some(x);
                }
                Step::RanOut => {
                    self.pos += 1;
                    run_outs += 1;
                    if run_outs > MAX_RUN_OUTS {
                        return None;
                    }
                }
            }
        }
    }
}

/// Resets every input (the index source too).
fn reset_all(io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
    for i in 0..io.num_inputs() {
        cx.reset_input(io, i);
    }
}

/// `Dswitch1(index, items...)`: each value from the item the index source
/// names (wrapped into the list); the index's end is the pattern's end.
pub(crate) struct Switch1;

impl Source for Switch1 {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        set_out(io, 0.0);
        Switch1
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        reset_all(io, cx);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let x = pull(io, cx, 0);
        if x.is_nan() {
            return Some(x);
        }
        let items = io.num_inputs() as i32 - 1;
        let index = wrap_index(round_index(x), items - 1) + 1;
        Some(pull(io, cx, index))
    }
}

/// `Dswitch(index, items...)`: the item the index names gives all its values,
/// then the next index is read.
pub(crate) struct Switch {
    index: i32,
}

impl Switch {
    /// The first item, from the index source's next value. scsynth wraps it
    /// into one more place than there are items; that extra place reads as run out.
    fn first(io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> i32 {
        let x = if io.num_inputs() > 0 { cx.demand_input(io, 0) } else { f32::NAN };
        wrap_index(round_index(x), io.num_inputs() as i32 - 1) + 1
    }
}

impl Source for Switch {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let index = Switch::first(io, cx);
        set_out(io, 0.0);
        Switch { index }
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        reset_all(io, cx);
        self.index = Switch::first(io, cx);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let x = pull(io, cx, self.index);
        if !x.is_nan() {
            return Some(x);
        }
        let i = pull(io, cx, 0);
        if i.is_nan() {
            return Some(i);
        }
        let items = io.num_inputs() as i32 - 1;
        let index = wrap_index(round_index(i), items - 1) + 1;
        // The new item is read before the finished one is reset, and is not
        // itself reset: picking the same item again reads it run out.
        let x = pull(io, cx, index);
        if self.index >= 0 {
            reset_at(io, cx, self.index as usize);
        }
        self.index = index;
        Some(x)
    }
}

/// `Ddup(n, source)` (and its older name `Dstutter`): each value of `source`
/// repeated `n` times, `n` demanded anew with each value.
pub(crate) struct Dup {
    repeats: f64,
    count: f64,
    value: f32,
}

impl Source for Dup {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut p = Dup { repeats: -1.0, count: 0.0, value: 0.0 };
        p.reset(io, cx);
        set_out(io, 0.0);
        p
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.repeats = -1.0;
        self.count = 0.0;
        reset_at(io, cx, 0);
        reset_at(io, cx, 1);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        if self.count >= self.repeats {
            // The value is demanded before the count.
            let x = pull(io, cx, 1);
            let n = pull(io, cx, 0);
            if n.is_nan() || x.is_nan() {
                return Some(f32::NAN);
            }
            self.value = x;
            self.repeats = (n + 0.5).floor() as f64;
            self.count = 0.0;
        }
        self.count += 1.0;
        Some(self.value)
    }
}

/// `Dconst(total, source, tolerance)`: values of `source` until they add up
/// to `total` (within `tolerance`); the last one is cut to land on it.
pub(crate) struct Const {
    /// Negative until read.
    total: f32,
    tolerance: f32,
    /// NaN once the total was reached.
    sum: f32,
}

impl Source for Const {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut p = Const { total: -1.0, tolerance: 0.0, sum: 0.0 };
        p.reset(io, cx);
        set_out(io, 0.0);
        p
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.total = -1.0;
        self.sum = 0.0;
        for i in 0..3 {
            reset_at(io, cx, i);
        }
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        if self.sum.is_nan() {
            return Some(f32::NAN);
        }
        // A negative total is read again each time, as scsynth does.
        if self.total < 0.0 {
            let total = pull(io, cx, 0);
            let tolerance = pull(io, cx, 2);
            if total.is_nan() || tolerance.is_nan() {
                return Some(f32::NAN);
            }
            self.total = total;
            self.tolerance = tolerance;
        }
        let x = pull(io, cx, 1);
        if x.is_nan() {
            return Some(f32::NAN);
        }
        let sum = self.sum + x;
        if sum > self.total || (self.total - sum).abs() <= self.tolerance {
            let last = self.total - self.sum;
            self.sum = f32::NAN;
            Some(last)
        } else {
            self.sum = sum;
            Some(x)
        }
    }
}

/// `Dreset(source, reset)`: passes `source` through and resets it when the
/// demanded `reset` value rises above 0 (after the value read with it).
pub(crate) struct Reset {
    prev_reset: f32,
}

impl Source for Reset {
    fn build(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        // scsynth leaves the output as the synth's fresh memory has it.
        let mut p = Reset { prev_reset: 0.0 };
        p.reset(io, cx);
        p
    }

    fn reset(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        reset_at(io, cx, 0);
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let x = pull(io, cx, 0);
        let reset = pull(io, cx, 1);
        if x.is_nan() {
            return Some(f32::NAN);
        }
        if reset > 0.0 && self.prev_reset <= 0.0 {
            reset_at(io, cx, 0);
        }
        self.prev_reset = reset;
        Some(x)
    }
}

#[cfg(test)]
mod tests {
    use super::{c_int, round_index, wrap_index};

    #[test]
    fn index_rounds_halves_up() {
        assert_eq!(round_index(1.5), 2);
        assert_eq!(round_index(1.49), 1);
        assert_eq!(round_index(-0.5), 0);
        assert_eq!(round_index(-0.51), -1);
    }

    #[test]
    fn index_out_of_int_range_or_nan_becomes_the_lowest_int() {
        assert_eq!(c_int(f32::NAN), i32::MIN);
        assert_eq!(c_int(f32::INFINITY), i32::MIN);
        assert_eq!(c_int(-f32::INFINITY), i32::MIN);
        assert_eq!(c_int(3e9), i32::MIN);
        assert_eq!(c_int(-7.9), -7);
    }

    #[test]
    fn wrapped_index_stays_in_the_list_for_any_index() {
        for hi in 0..6 {
            for i in [-1000, -13, -7, -1, 0, 1, 5, 6, 7, 12, 999, i32::MIN, i32::MAX] {
                let w = wrap_index(i, hi);
                assert!((0..=hi).contains(&w), "wrap_index({i}, {hi}) = {w}");
                assert_eq!((w as i64 - i as i64).rem_euclid(hi as i64 + 1), 0, "wrap_index({i}, {hi}) = {w}");
            }
        }
    }

    #[test]
    fn wrapped_index_counts_backwards_from_the_end() {
        assert_eq!(wrap_index(-1, 3), 3);
        assert_eq!(wrap_index(4, 3), 0);
        assert_eq!(wrap_index(9, 3), 1);
    }
}
