//! SinOscFB: a sine whose phase is pushed by its own previous output.

use crate::common::math::{d2i, f2i};

use crate::common::wavetable::{lookupi1, sine_tables, SINE_MASK, SINE_SIZE};
use super::RTWOPI;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// SinOscFB: inputs freq, feedback (radians per unit of output). Both are
/// read once per block; the feedback amount ramps across the block.
pub struct SinOscFB {
    phase: i32,
    prevout: f32,
    /// Feedback already scaled to phase increments.
    feedback: f32,
    cpstoinc: f64,
    radtoinc: f64,
}

impl SinOscFB {
    fn calc(&mut self, io: &mut Wires<'_>, slope_factor: f64) {
        let table: &[f32] = &sine_tables().wavetable;
        let freq = d2i(self.cpstoinc * io.in0(0) as f64);
        let next_feedback = (io.in0(1) as f64 * self.radtoinc) as f32;
        let mut feedback = self.feedback;
        let slope = ((next_feedback - feedback) as f64 * slope_factor) as f32;
        let (mut phase, mut prevout) = (self.phase, self.prevout);
        for o in io.out(0).iter_mut() {
            let at = phase.wrapping_add(f2i(feedback * prevout));
            // SAFETY: the sine wavetable holds 2 * SINE_SIZE values and SINE_MASK is SINE_SIZE - 1.
            prevout = unsafe { lookupi1(table, at as u32, SINE_MASK) };
            *o = prevout;
            phase = phase.wrapping_add(freq);
            feedback += slope;
        }
        self.phase = phase;
        self.prevout = prevout;
        self.feedback = feedback;
    }
}

impl Construct for SinOscFB {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = SINE_SIZE as f64;
        let radtoinc = size * (RTWOPI * 65536.0);
        let mut u = SinOscFB {
            phase: 0,
            prevout: 0.0,
            feedback: (io.in0(1) as f64 * radtoinc) as f32,
            cpstoinc: size * cx.rate.sample_dur * 65536.0,
            radtoinc,
        };
        u.calc(io, cx.rate.slope_factor);
        // The first block starts again at phase zero but keeps the output
        // just computed as its feedback source.
        u.phase = 0;
        u
    }
}

impl Unit for SinOscFB {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.calc(io, cx.rate.slope_factor);
    }
}
