//! MoogFF: a digital model of the Moog ladder filter (four one-pole
//! sections in a feedback loop, bilinear transform).

use crate::common::signal::{clip_f32, in0, zap, In};
use crate::simd::ramp::calc_slope;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Inputs: in, freq, gain (feedback, 0–4; 4 self-oscillates), reset (> 0
/// clears the state).
pub struct MoogFf {
    freq: f32,
    k: f32,
    b0: f64,
    a1: f64,
    s: [f64; 4],
}

impl MoogFf {
    #[inline(always)]
    fn tick(&mut self, x: f32, k: f32) -> f32 {
        let (b0, a1) = (self.b0, self.a1);
        let [s1, s2, s3, s4] = &mut self.s;
        let k = k as f64;
        let o = *s4 + b0 * (*s3 + b0 * (*s2 + b0 * *s1));
        let ins = x as f64;
        let b04 = b0 * b0 * b0 * b0;
        let outs = (b04 * ins + o) * (1.0 / (1.0 + b04 * k));
        let u = ins - k * outs;
        let mut future = b0 * u + *s1;
        *s1 = b0 * u - a1 * future;
        let past = future;
        future = b0 * past + *s2;
        *s2 = b0 * past - a1 * future;
        let past = future;
        future = b0 * past + *s3;
        *s3 = b0 * past - a1 * future;
        *s4 = b0 * future - a1 * outs;
        outs as f32
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let k = clip_f32(in0(io, 2), 0.0, 4.0);
        if in0(io, 3) > 0.0 {
            self.s = [0.0; 4];
        }
        let freq = in0(io, 1);
        if freq != self.freq {
            let t = cx.rate.sample_dur;
            // scsynth's pi here is a single-precision constant.
            let mut wc = 2.0 * (t * std::f32::consts::PI as f64 * freq as f64).tan() * cx.rate.sample_rate;
            if wc < 0.0 {
                // A negative cutoff counts as zero.
                wc = 0.0;
            }
            let twc = t * wc;
            self.b0 = twc / (twc + 2.0);
            self.a1 = (twc - 2.0) / (twc + 2.0);
            self.freq = freq;
        }
        let inp = In::new(io, 0);
        let out = io.out(0);
        if self.k == k {
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.tick(inp.at(i), k);
            }
        } else {
            let slope = calc_slope(k, self.k, cx.rate.slope_factor);
            let mut kk = self.k;
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.tick(inp.at(i), kk);
                kk += slope;
            }
            self.k = k;
        }
        for s in &mut self.s {
            *s = zap(*s);
        }
    }
}

impl Construct for MoogFf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        // The remembered gain starts unclipped, so a gain above 4 glides
        // down to 4 over the first block.
        let mut u = MoogFf { freq: f32::NAN, k: in0(io, 2), b0: 0.0, a1: 0.0, s: [0.0; 4] };
        u.run(io, cx);
        u
    }
}

impl Unit for MoogFf {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
