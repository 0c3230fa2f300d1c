//! DetectSilence: watches a signal and, once it has stayed at or below a
//! threshold for a given time, outputs 1 and carries out a done action.

use crate::common::signal::{in0, in_rate, trunc_i32, In};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// Input index of the done action.
pub const DETECT_SILENCE_DONE_ACTION: usize = 3;

/// Inputs: in, amp (threshold), time (seconds), doneAction.
///
/// Counting only starts once the input has been above the threshold: a
/// signal that is silent from its first sample never triggers.
pub struct DetectSilence {
    thresh: f32,
    end_counter: i32,
    /// Samples at or below the threshold so far, or -1 before the input
    /// has first risen above it.
    counter: i32,
    /// Threshold and time are constants, read once.
    fixed: bool,
}

impl DetectSilence {
    fn samples_for(time: f32, sample_rate: f64) -> i32 {
        trunc_i32(sample_rate * time as f64)
    }
}

impl Construct for DetectSilence {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let fixed = in_rate(io, 1) == Rate::Scalar && in_rate(io, 2) == Rate::Scalar;
        let u = DetectSilence {
            thresh: in0(io, 1),
            end_counter: Self::samples_for(in0(io, 2), cx.rate.sample_rate),
            counter: -1,
            fixed,
        };
        io.out(0)[0] = 0.0;
        u
    }
}

impl Unit for DetectSilence {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (thresh, end_counter) = if self.fixed {
            (self.thresh, self.end_counter)
        } else {
            (in0(io, 1), Self::samples_for(in0(io, 2), cx.rate.sample_rate))
        };
        let inp = In::new(io, 0);
        let out = io.out(0);
        let mut counter = self.counter;
        let mut fired = false;
        for (i, o) in out.iter_mut().enumerate() {
            let val = inp.at(i).abs();
            *o = if val > thresh {
                counter = 0;
                0.0
            } else if counter >= 0 {
                counter = counter.wrapping_add(1);
                if counter >= end_counter {
                    fired = true;
                    1.0
                } else {
                    0.0
                }
            } else {
                0.0
            };
        }
        self.counter = counter;
        if fired {
            // Asking once per block does what asking on every silent sample
            // would: the action applies to the synth after its block.
            let action = trunc_i32(in0(io, DETECT_SILENCE_DONE_ACTION) as f64);
            cx.done_action(action);
        }
    }
}
