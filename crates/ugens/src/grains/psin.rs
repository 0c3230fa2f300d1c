//! PSinGrain: one sine grain with a parabolic envelope, then the synth ends.

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// PSinGrain: inputs freq, dur, amp, fixed at construction.
pub struct PSinGrain {
    b1: f64,
    y1: f64,
    y2: f64,
    level: f64,
    slope: f64,
    curve: f64,
    counter: i32,
}

impl Construct for PSinGrain {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let (freq, dur, amp) = (io.in0(0), io.in0(1), io.in0(2));
        let w = (freq as f64 * cx.rate.radians_per_sample) as f32;
        let sdur = (cx.rate.sample_rate * dur as f64) as f32;
        let rdur = 1.0 / sdur;
        let rdur2 = rdur * rdur;
        // Single-precision trig, as the constructor it follows uses.
        let b1 = 2.0 * w.cos() as f64;
        let y1 = (-w.sin() * amp) as f64;
        let y2 = (-(w + w).sin() * amp) as f64;
        io.out(0)[0] = (b1 * y1 - y2) as f32;
        PSinGrain {
            b1,
            y1,
            y2,
            level: 0.0,
            slope: 4.0 * (rdur - rdur2) as f64,
            curve: -8.0 * rdur2 as f64,
            counter: (sdur as f64 + 0.5) as i32,
        }
    }
}

impl Unit for PSinGrain {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let (b1, mut y1, mut y2) = (self.b1 as f32, self.y1 as f32, self.y2 as f32);
        let (mut level, mut slope, curve) = (self.level as f32, self.slope as f32, self.curve as f32);
        let out = &mut io.out(0)[..n];
        let live = if self.counter > 0 { (self.counter as usize).min(n) } else { 0 };
        for o in out[..live].iter_mut() {
            let y0 = b1 * y1 - y2;
            y2 = y1;
            y1 = y0;
            *o = y0 * level;
            level += slope;
            slope += curve;
        }
        out[live..].fill(0.0);
        if live > 0 {
            self.counter -= live as i32;
            if self.counter == 0 {
                cx.done_action(2);
            }
        }
        self.level = level as f64;
        self.slope = slope as f64;
        self.y1 = y1 as f64;
        self.y2 = y2 as f64;
    }
}
