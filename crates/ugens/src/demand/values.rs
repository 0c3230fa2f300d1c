//! Demand-rate units that compute their values: series, random values and
//! buffer frames (read or written).

use super::{sc_mod_int, Pattern, Repeats};
use crate::common::buffer::sc_loop;
use crate::common::buffer::resolve_buffer_index;
use crate::common::math::{c_int, sc_fold, sc_max};
use crate::rgen::RGen;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};


/// `Dseries(length, start, step)` (added each time) and, with `GEOM`,
/// `Dgeom(length, start, grow)` (multiplied each time).
pub(crate) struct Series<const GEOM: bool> {
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
pub(crate) struct White {
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
pub(crate) struct IWhite {
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

/// What a random walk steps through: floats (`Dbrown`) or integers
/// (`Dibrown`, bounds and step truncated toward zero).
pub(super) trait Walk: Copy + Default + Send + 'static {
    /// A bound or step as read from an input.
    fn from_input(x: f32) -> Self;
    /// A random point of [lo, hi].
    fn start(rgen: &mut RGen, lo: Self, hi: Self) -> Self;
    /// A random step of at most `step` away, folded back into [lo, hi].
    fn walk(self, rgen: &mut RGen, step: Self, lo: Self, hi: Self) -> Self;
    fn out(self) -> f32;
}

impl Walk for f32 {
    fn from_input(x: f32) -> f32 {
        x
    }

    fn start(rgen: &mut RGen, lo: f32, hi: f32) -> f32 {
        rgen.frand() * (hi - lo) + lo
    }

    fn walk(self, rgen: &mut RGen, step: f32, lo: f32, hi: f32) -> f32 {
        sc_fold(self + rgen.frand2() * step, lo, hi)
    }

    fn out(self) -> f32 {
        self
    }
}

impl Walk for i32 {
    fn from_input(x: f32) -> i32 {
        c_int(x)
    }

    fn start(rgen: &mut RGen, lo: i32, hi: i32) -> i32 {
        rgen.irand(hi.wrapping_sub(lo).wrapping_add(1)).wrapping_add(lo)
    }

    fn walk(self, rgen: &mut RGen, step: i32, lo: i32, hi: i32) -> i32 {
        fold_int(self.wrapping_add(rgen.irand2(step)), lo, hi)
    }

    fn out(self) -> f32 {
        self as f32
    }
}

/// `Dbrown(length, lo, hi, step)` and `Dibrown`: a random walk that folds
/// back into [lo, hi], each value at most `step` from the one before.
pub(crate) struct Brown<T> {
    repeats: Repeats,
    lo: T,
    hi: T,
    step: T,
    value: T,
}

impl<T: Walk> Pattern for Brown<T> {
    fn build(_spec: &UnitSpec<'_>) -> Self {
        Brown { repeats: Repeats::new(), lo: T::default(), hi: T::default(), step: T::default(), value: T::default() }
    }

    fn reset(&mut self) {
        self.repeats.reset();
    }

    fn value(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> Option<f32> {
        let k = cx.demanded;
        for (index, slot) in [(1, &mut self.lo), (2, &mut self.hi), (3, &mut self.step)] {
            let x = cx.demand_input_at(io, index, k);
            if !x.is_nan() {
                *slot = T::from_input(x);
            }
        }
        if self.repeats.limit < 0.0 {
            self.repeats.read(io, cx, 0);
            // Each run after a reset starts at a random point of the range.
            self.value = T::start(&mut cx.world.rgen, self.lo, self.hi);
        }
        if self.repeats.exhausted() {
            return Some(f32::NAN);
        }
        self.repeats.count += 1;
        let out = self.value.out();
        self.value = self.value.walk(&mut cx.world.rgen, self.step, self.lo, self.hi);
        Some(out)
    }
}

/// Integer fold into [lo, hi], with scsynth's integer modulo.
fn fold_int(x: i32, lo: i32, hi: i32) -> i32 {
    let b = hi.wrapping_sub(lo);
    let b2 = b.wrapping_add(b);
    let c = sc_mod_int(x.wrapping_sub(lo), b2);
    let c = if c > b { b2.wrapping_sub(c) } else { c };
    c.wrapping_add(lo)
}


/// Input `i` for a value asked at sample `k`, or (k = 0) while resetting:
/// a demand-rate source is then reset and its last value read; a signal
/// gives its first sample.
fn input(io: &Wires<'_>, cx: &mut UnitCtx<'_>, i: usize, k: usize) -> f32 {
    if k == 0 && io.in_rate(i) == Rate::Audio {
        io.in0(i)
    } else {
        cx.demand_input_at(io, i, k)
    }
}

/// What a `Dbufrd`/`Dbufwr` buffer number leads to: nothing (NaN; the unit
/// answers NaN), a buffer without data, or a buffer's index and shape.
enum Target {
    NoNumber,
    Missing,
    Found { index: usize, frames: u32, channels: u32 },
}

fn target(cx: &UnitCtx<'_>, fbufnum: f32) -> Target {
    if fbufnum.is_nan() {
        return Target::NoNumber;
    }
    let fbufnum = sc_max(0.0, fbufnum);
    match resolve_buffer_index(cx.world, fbufnum) {
        Some(index) => match cx.world.buf(index) {
            Some(b) if b.is_allocated() => Target::Found { index, frames: b.frames, channels: b.channels },
            _ => Target::Missing,
        },
        None => Target::Missing,
    }
}

/// Reads the loop flag (input `loop_input`) and the buffer number, in
/// scsynth's order: the buffer's index, frames, channels and the flag, or
/// None with the output already answered (NaN without a number, 0 and done
/// without a buffer).
fn buffer_for(io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, k: usize, loop_input: usize) -> Option<(usize, u32, u32, i32)> {
    let looping = c_int(input(io, cx, loop_input, k));
    let fbufnum = input(io, cx, BUFNUM, k);
    match target(cx, fbufnum) {
        Target::NoNumber => {
            io.out(0)[0] = f32::NAN;
            None
        }
        Target::Missing => {
            cx.set_done(true);
            io.out(0)[0] = 0.0;
            None
        }
        Target::Found { index, frames, channels } => Some((index, frames, channels, looping)),
    }
}

/// A frame index within a buffer of `frames` frames: wraps with `looping`
/// (nonzero), otherwise clamps to the last frame and marks the unit done.
fn frame_of(cx: &mut UnitCtx<'_>, phase: f32, frames: u32, looping: i32) -> i64 {
    let loop_max = if looping != 0 { frames as f64 } else { frames.wrapping_sub(1) as f64 };
    let mut done = false;
    let phase = sc_loop(&mut done, phase as f64, loop_max, looping != 0);
    if done {
        cx.set_done(true);
    }
    // C's conversion: NaN and out-of-range phases give i32::MIN.
    if (-2_147_483_648.0..2_147_483_648.0).contains(&phase) {
        phase as i32 as i64
    } else {
        i32::MIN as i64
    }
}

/// The first-channel sample of `frame`, as an index into the buffer's data.
fn sample_index(frame: i64, channels: u32, len: usize) -> Option<usize> {
    usize::try_from(frame * channels as i64).ok().filter(|&i| i < len)
}

/// Input numbers of `Dbufrd(bufnum, phase, loop)` and `Dbufwr(bufnum, phase, input, loop)`.
const BUFNUM: usize = 0;
const PHASE: usize = 1;
const WRITTEN: usize = 2;

/// `Dbufrd(bufnum, phase, loop)`: the first channel of the buffer frame at
/// each phase it demands.
pub struct BufRead;

impl BufRead {
    fn step(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, k: usize) {
        let Some((index, frames, channels, looping)) = buffer_for(io, cx, k, 2) else { return };
        if k == 0 {
            cx.reset_input(io, PHASE);
            return;
        }
        let x = cx.demand_input_at(io, PHASE, k);
        if x.is_nan() {
            io.out(0)[0] = f32::NAN;
            return;
        }
        let frame = frame_of(cx, x, frames, looping);
        let value = cx.world.buf(index).and_then(|b| sample_index(frame, channels, b.data.len()).map(|i| b.data[i]));
        io.out(0)[0] = value.unwrap_or(0.0);
    }
}

impl Construct for BufRead {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = BufRead;
        unit.step(io, cx, 0);
        io.out(0)[0] = 0.0;
        unit
    }
}

impl Unit for BufRead {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.step(io, cx, cx.demanded);
    }
}

/// `Dbufwr(bufnum, phase, input, loop)`: writes each value it demands from
/// `input` into the first channel of the buffer frame at the phase it
/// demands, and gives that value.
pub struct BufWrite;

impl BufWrite {
    fn step(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, k: usize) {
        let Some((index, frames, channels, looping)) = buffer_for(io, cx, k, 3) else { return };
        if k == 0 {
            cx.reset_input(io, PHASE);
            cx.reset_input(io, WRITTEN);
            return;
        }
        let x = cx.demand_input_at(io, PHASE, k);
        if x.is_nan() {
            io.out(0)[0] = f32::NAN;
            return;
        }
        let value = cx.demand_input_at(io, WRITTEN, k);
        if value.is_nan() {
            io.out(0)[0] = f32::NAN;
            return;
        }
        let frame = frame_of(cx, x, frames, looping);
        if let Some(b) = cx.world.buf_mut(index) {
            if let Some(i) = sample_index(frame, channels, b.data.len()) {
                b.data[i] = value;
            }
        }
        io.out(0)[0] = value;
    }
}

impl Construct for BufWrite {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = BufWrite;
        unit.step(io, cx, 0);
        io.out(0)[0] = 0.0;
        unit
    }
}

impl Unit for BufWrite {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.step(io, cx, cx.demanded);
    }
}

#[cfg(test)]
mod tests {
    use super::fold_int;

    #[test]
    fn integer_fold_reflects_off_both_bounds() {
        assert_eq!(fold_int(5, 0, 8), 5);
        assert_eq!(fold_int(10, 0, 8), 6);
        assert_eq!(fold_int(-3, 0, 8), 3);
        // Further than one range away: reflected as often as it takes.
        assert_eq!(fold_int(19, 0, 8), 3);
        assert_eq!(fold_int(-12, -2, 2), 0);
        assert!((-100..100).all(|x| (0..=3).contains(&fold_int(x, 0, 3))));
        assert_eq!(fold_int(7, 4, 4), 4);
    }
}
