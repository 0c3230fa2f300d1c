//! TWindex: on each trigger, a random index chosen with the given weights.

use crate::common::signal::In;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// Inputs: trig, normalize, weights... A rising trigger picks index k with
/// probability weight k / sum (or weight k alone unless `normalize` is 1);
/// when the weights fall short, the index past the last input is output.
pub struct TWindex {
    prev_index: i32,
    trig: f32,
    /// Sum of the weights for this block; negative until computed.
    max_sum: f32,
    audio_trig: bool,
}

impl TWindex {
    fn choose(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) -> i32 {
        let count = io.num_inputs();
        if self.max_sum < 0.0 {
            let normalize = if count > 1 { io.in0(1) } else { 0.0 };
            self.max_sum = if normalize == 1.0 { (2..count).fold(0.0f32, |s, k| s + io.in0(k)) } else { 1.0 };
        }
        let max = self.max_sum * cx.world.rgen.frand();
        let mut sum = 0.0f32;
        for k in 2..count {
            sum += io.in0(k);
            if sum >= max {
                return k as i32 - 2;
            }
        }
        count as i32
    }
}

impl Construct for TWindex {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let audio_trig = io.num_inputs() > 0 && io.in_rate(0) == Rate::Audio;
        let mut u = TWindex { prev_index: 0, trig: 0.0, max_sum: -1.0, audio_trig };
        let index = u.choose(io, cx);
        io.out(0)[0] = index as f32;
        u.prev_index = index;
        // Counts as a trigger already seen: a trigger at the first sample
        // does not draw again, so the first output repeats this value.
        u.trig = 1.0;
        u
    }
}

impl Unit for TWindex {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let trig = In::new(io, 0);
        self.max_sum = -1.0;
        if self.audio_trig {
            for i in 0..io.n() {
                let t = trig.at(i);
                if t > 0.0 && self.trig <= 0.0 {
                    self.prev_index = self.choose(io, cx);
                }
                io.out(0)[i] = self.prev_index as f32;
                self.trig = t;
            }
        } else {
            let t = trig.first();
            if t > 0.0 && self.trig <= 0.0 {
                self.prev_index = self.choose(io, cx);
            }
            io.out(0).fill(self.prev_index as f32);
            self.trig = t;
        }
    }
}
