//! Table units: lookups into a buffer by index (Index, IndexL, WrapIndex,
//! FoldIndex), searches of a buffer (IndexInBetween, DetectIndex), scale
//! degrees (DegreeToKey) and wave shaping (Shaper).
//!
//! Each follows scsynth 3.13 sample for sample: the calc function chosen from
//! the input rates, the first sample computed by the constructor, and the
//! float or double width of every intermediate value.

mod index;

pub use index::{DegreeToKey, DetectIndex, FoldIndex, Index, IndexInBetween, IndexL, Shaper, TableIndex, WrapIndex};


/// Which calc function a buffer lookup unit runs, from its rate and the
/// rate of its second input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LookupMode {
    /// One-sample blocks (control-rate units): the first sample only.
    One,
    /// The input is read once per block and the value held.
    Block,
    /// An audio-rate input looked up sample by sample.
    Audio,
}

impl LookupMode {
    fn pick(io: &crate::unit::Wires<'_>, cx: &crate::unit::UnitCtx<'_>) -> LookupMode {
        if cx.rate.buf_length == 1 {
            LookupMode::One
        } else if crate::common::signal::in_rate(io, 1) == crate::unit::Rate::Audio {
            LookupMode::Audio
        } else {
            LookupMode::Block
        }
    }
}

/// Entry `i` of a table; scsynth reads past the end for some inputs, where
/// there is nothing defined to read, so those read as 0.
#[inline(always)]
fn entry(table: &[f32], i: i32) -> f32 {
    usize::try_from(i).ok().and_then(|i| table.get(i)).copied().unwrap_or(0.0)
}

use crate::common::math::sc_mod_i32 as imod;

/// Integer wrap into [lo, hi].
#[inline]
fn iwrap(x: i32, lo: i32, hi: i32) -> i32 {
    imod(x.wrapping_sub(lo), hi.wrapping_sub(lo).wrapping_add(1)).wrapping_add(lo)
}

/// Integer fold into [lo, hi].
#[inline]
fn ifold(x: i32, lo: i32, hi: i32) -> i32 {
    let b = hi.wrapping_sub(lo);
    let b2 = b.wrapping_add(b);
    let mut c = imod(x.wrapping_sub(lo), b2);
    if c > b {
        c = b2.wrapping_sub(c);
    }
    c.wrapping_add(lo)
}

#[cfg(test)]
mod tests;
