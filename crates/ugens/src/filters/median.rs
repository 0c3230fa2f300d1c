//! Median filtering: the Median unit.

use crate::common::median::{MedianWindow, MAX_MEDIAN};
use crate::common::signal::{in0, trunc_i32, In};
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Median: the median of the last `length` input samples (length 1–31,
/// odd). Inputs: length, in.
pub struct Median(MedianWindow);

impl Construct for Median {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 1);
        let size = trunc_i32(in0(io, 0) as f64).clamp(0, MAX_MEDIAN as i32) as usize;
        let mut u = Median(MedianWindow::new(size, x));
        io.out(0)[0] = u.0.insert(x);
        u
    }
}

impl Unit for Median {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 1);
        let out = io.out(0);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.0.insert(inp.at(i));
        }
    }
}
