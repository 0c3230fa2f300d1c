//! Units that read a buffer as a table: by index (clipped, interpolated,
//! wrapped, folded), by searching it for a value, as a scale, or as a
//! transfer function in wavetable format. Inputs: bufnum, in (, octave).

use super::{entry, ifold, iwrap, LookupMode};
use crate::common::buffer::buffer;
use crate::common::signal::{in0, In};
use crate::common::math::{f2i, sc_clip};
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use std::marker::PhantomData;

/// Implements `Construct` (build with `$init`, compute the first sample in
/// the one-sample form) and `Unit` (each block in the form picked then) for
/// a lookup unit with a `mode` field and a `run` method.
macro_rules! lookup_unit {
    ($t:ident $(<$g:ident: $b:ident>)?, |$io:ident, $cx:ident| $init:expr) => {
        impl$(<$g: $b>)? Construct for $t$(<$g>)? {
            fn new(_spec: &UnitSpec<'_>, $io: &mut Wires<'_>, $cx: &mut UnitCtx<'_>) -> Self {
                let mut u: Self = $init;
                u.run($io, $cx, LookupMode::One);
                u
            }
        }

        impl$(<$g: $b>)? Unit for $t$(<$g>)? {
            fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
                let mode = self.mode;
                self.run(io, cx, mode);
            }
        }
    };
}

/// How an index unit turns its input into a table value.
pub trait IndexRule: Send + 'static {
    /// The value for input `x`; `one` is set in the one-sample calc function,
    /// which scsynth writes differently for some units.
    fn look(table: &[f32], x: f32, one: bool) -> f32;
}

/// A stateless table lookup: `Index`, `IndexL`, `WrapIndex`, `FoldIndex`
/// and `IndexInBetween` differ only in their [`IndexRule`].
pub struct TableIndex<R: IndexRule> {
    mode: LookupMode,
    _rule: PhantomData<fn() -> R>,
}

impl<R: IndexRule> TableIndex<R> {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, mode: LookupMode) {
        let Some(buf) = buffer(io, cx) else {
            io.clear_outputs();
            return;
        };
        let table = &buf.data[..];
        let inp = In::new(io, 1);
        let out = io.out(0);
        match mode {
            LookupMode::Audio => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = R::look(table, inp.at(i), false);
                }
            }
            _ => out.fill(R::look(table, inp.first(), mode == LookupMode::One)),
        }
    }
}

lookup_unit!(TableIndex<R: IndexRule>, |io, cx| TableIndex { mode: LookupMode::pick(io, cx), _rule: PhantomData });

#[inline(always)]
fn last_index(table: &[f32]) -> i32 {
    table.len() as i32 - 1
}

/// Truncates the input and clips it to the table.
pub struct ClipRule;

impl IndexRule for ClipRule {
    #[inline(always)]
    fn look(table: &[f32], x: f32, _one: bool) -> f32 {
        entry(table, f2i(x).min(last_index(table)).max(0))
    }
}

/// Interpolates between the clipped neighbours of the input.
pub struct LinearRule;

impl IndexRule for LinearRule {
    #[inline(always)]
    fn look(table: &[f32], x: f32, _one: bool) -> f32 {
        let last = last_index(table);
        let frac = x - x.floor();
        let i1 = f2i(x).min(last).max(0);
        let i2 = (i1 + 1).min(last).max(0);
        let (a, b) = (entry(table, i1), entry(table, i2));
        a + frac * (b - a)
    }
}

/// Wraps the index around the table. The one-sample form floors the input,
/// the block forms truncate it (they differ for negative inputs).
pub struct WrapRule;

impl IndexRule for WrapRule {
    #[inline(always)]
    fn look(table: &[f32], x: f32, one: bool) -> f32 {
        let i = if one { f2i(x.floor()) } else { f2i(x) };
        entry(table, iwrap(i, 0, last_index(table)))
    }
}

/// Folds the index back and forth across the table.
pub struct FoldRule;

impl IndexRule for FoldRule {
    #[inline(always)]
    fn look(table: &[f32], x: f32, _one: bool) -> f32 {
        entry(table, ifold(f2i(x), 0, last_index(table)))
    }
}

/// The fractional position at which a rising table first passes the input.
pub struct InBetweenRule;

impl IndexRule for InBetweenRule {
    #[inline(always)]
    fn look(table: &[f32], x: f32, _one: bool) -> f32 {
        for (i, &v) in table.iter().enumerate() {
            if v > x {
                if i == 0 {
                    return 0.0;
                }
                let prev = table[i - 1];
                return (x - prev) / (v - prev) + i as f32 - 1.0;
            }
        }
        last_index(table) as f32
    }
}

pub type Index = TableIndex<ClipRule>;
pub type IndexL = TableIndex<LinearRule>;
pub type WrapIndex = TableIndex<WrapRule>;
pub type FoldIndex = TableIndex<FoldRule>;
pub type IndexInBetween = TableIndex<InBetweenRule>;

/// DetectIndex: the first index holding exactly the input value, or -1.
/// The search is skipped while the input repeats.
pub struct DetectIndex {
    mode: LookupMode,
    /// Last index found, as a float (as scsynth keeps it).
    prev: f32,
    prev_in: f32,
}

fn find_exact(table: &[f32], x: f32) -> i32 {
    table.iter().position(|&v| v == x).map_or(-1, |i| i as i32)
}

impl DetectIndex {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, mode: LookupMode) {
        let Some(buf) = buffer(io, cx) else {
            io.clear_outputs();
            return;
        };
        let table = &buf.data[..];
        let inp = In::new(io, 1);
        let out = io.out(0);
        if mode == LookupMode::Audio {
            let mut prev = self.prev_in;
            let mut index = self.prev as i32;
            let mut x = prev;
            for (i, o) in out.iter_mut().enumerate() {
                x = inp.at(i);
                if x != prev {
                    index = find_exact(table, x);
                }
                prev = x;
                *o = index as f32;
            }
            self.prev = index as f32;
            self.prev_in = x;
        } else {
            let x = inp.first();
            let index = if x == self.prev_in {
                self.prev as i32
            } else {
                let found = find_exact(table, x);
                self.prev = found as f32;
                self.prev_in = x;
                found
            };
            out.fill(index as f32);
        }
    }
}

// A NaN previous input makes the first block search.
lookup_unit!(DetectIndex, |io, cx| DetectIndex { mode: LookupMode::pick(io, cx), prev: -1.0, prev_in: f32::NAN });

/// DegreeToKey: a scale degree to a key through a table of one octave,
/// adding `octave` per table length outside it. Inputs: bufnum, in, octave.
pub struct DegreeToKey {
    mode: LookupMode,
    octave: i32,
    prev_index: i32,
    prev_key: f32,
}

impl DegreeToKey {
    /// The key of degree `index`. The one-sample form multiplies the octave
    /// as an integer, the block forms as a float.
    #[inline(always)]
    fn key(table: &[f32], index: i32, octave: i32, one: bool) -> f32 {
        let size = table.len() as i32;
        let (key, oct) = if index < 0 {
            (size.wrapping_add(index.wrapping_rem(size)), index.wrapping_add(1).wrapping_div(size) - 1)
        } else {
            (index.wrapping_rem(size), index.wrapping_div(size))
        };
        let shift = if one { octave.wrapping_mul(oct) as f32 } else { octave as f32 * oct as f32 };
        entry(table, key) + shift
    }

    #[inline(always)]
    fn step(&mut self, table: &[f32], x: f32, one: bool) -> f32 {
        let index = f2i(x.floor());
        if index == self.prev_index {
            return self.prev_key;
        }
        self.prev_index = index;
        self.prev_key = if index < 0 || index > last_index(table) {
            Self::key(table, index, self.octave, one)
        } else {
            entry(table, index)
        };
        self.prev_key
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, mode: LookupMode) {
        let Some(buf) = buffer(io, cx) else {
            io.clear_outputs();
            return;
        };
        let table = &buf.data[..];
        let inp = In::new(io, 1);
        let out = io.out(0);
        if mode == LookupMode::Audio {
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.step(table, inp.at(i), false);
            }
        } else {
            let v = self.step(table, inp.first(), mode == LookupMode::One);
            out.fill(v);
        }
    }
}

lookup_unit!(DegreeToKey, |io, cx| DegreeToKey {
    mode: LookupMode::pick(io, cx),
    octave: f2i(in0(io, 2)),
    prev_index: i32::MAX,
    prev_key: 0.0,
});

/// Shaper: wave shaping through a transfer function stored in wavetable
/// format, the input -1..1 spanning the table.
pub struct Shaper {
    mode: LookupMode,
    prev_in: f32,
}

impl Shaper {
    #[inline(always)]
    fn shape(table: &[f32], x: f32, offset: f32, fmax: f32) -> f32 {
        let findex = sc_clip(offset + x * offset, 0.0, fmax);
        let index = f2i(findex);
        // 1 + the fraction: the form wavetable pairs expect.
        let pfrac = findex - index.wrapping_sub(1) as f32;
        let at = index.wrapping_shl(1);
        entry(table, at) + entry(table, at.wrapping_add(1)) * pfrac
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, mode: LookupMode) {
        let Some(buf) = buffer(io, cx) else {
            io.clear_outputs();
            return;
        };
        let table = &buf.data[..];
        let size = table.len() as i32;
        let fmax = ((size >> 1) as f64 - 0.001) as f32;
        let offset = (size as f64 * 0.25) as f32;
        let inp = In::new(io, 1);
        let out = io.out(0);
        match mode {
            LookupMode::Audio => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = Self::shape(table, inp.at(i), offset, fmax);
                }
            }
            LookupMode::One => out[0] = Self::shape(table, inp.first(), offset, fmax),
            LookupMode::Block => {
                let mut x = inp.first();
                if x == self.prev_in {
                    out.fill(Self::shape(table, x, offset, fmax));
                } else {
                    // scsynth starts at the new value and steps by the change
                    // scaled by the table offset, not towards it.
                    let step = (x - self.prev_in) * offset;
                    self.prev_in = x;
                    for o in out.iter_mut() {
                        *o = Self::shape(table, x, offset, fmax);
                        x += step;
                    }
                }
            }
        }
    }
}

lookup_unit!(Shaper, |io, cx| Shaper { mode: LookupMode::pick(io, cx), prev_in: in0(io, 1) });
