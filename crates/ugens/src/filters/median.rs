//! Median filtering: the Median unit, and the running window it shares with
//! Pitch.

use super::sig::{in0, In};
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const MAX_MEDIAN: usize = 32;

/// A running median of the last `size` values (at most 32), kept sorted
/// with their ages, as scsynth's Median and Pitch keep theirs.
pub(crate) struct MedianWindow {
    values: [f32; MAX_MEDIAN],
    ages: [i32; MAX_MEDIAN],
    size: usize,
}

impl MedianWindow {
    /// A window of `size` values, all `value` (size clamped to the maximum).
    pub(crate) fn new(size: usize, value: f32) -> MedianWindow {
        let size = size.min(MAX_MEDIAN);
        let mut ages = [0; MAX_MEDIAN];
        for (i, a) in ages.iter_mut().enumerate() {
            *a = i as i32;
        }
        MedianWindow { values: [value; MAX_MEDIAN], ages, size }
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Replaces the oldest value with `value`, keeps the window sorted and
    /// returns its middle element.
    pub(crate) fn insert(&mut self, value: f32) -> f32 {
        let size = self.size;
        if size == 0 {
            return value;
        }
        let last = size as i32 - 1;
        let mut pos = 0usize;
        for i in 0..size {
            if self.ages[i] == last {
                pos = i;
            } else {
                self.ages[i] += 1;
            }
        }
        while pos != 0 && value < self.values[pos - 1] {
            self.values[pos] = self.values[pos - 1];
            self.ages[pos] = self.ages[pos - 1];
            pos -= 1;
        }
        while pos != size - 1 && value > self.values[pos + 1] {
            self.values[pos] = self.values[pos + 1];
            self.ages[pos] = self.ages[pos + 1];
            pos += 1;
        }
        self.values[pos] = value;
        self.ages[pos] = 0;
        self.values[size >> 1]
    }
}

/// Median: the median of the last `length` input samples (length 1–31,
/// odd). Inputs: length, in.
pub struct Median(MedianWindow);

impl Construct for Median {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let x = in0(io, 1);
        let size = super::sig::trunc_i32(in0(io, 0) as f64).clamp(0, MAX_MEDIAN as i32) as usize;
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
