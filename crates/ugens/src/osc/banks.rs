//! Banks of sines and resonators set up once from a specification array:
//! Klang (fixed-frequency sine oscillators) and Klank (ringing filters).
//!
//! scsynth sums the partials in groups of four, with the leftover partials
//! (the count modulo four) summed first; the sums here follow the same
//! grouping so that rounding matches.

use crate::common::signal::log001;
use crate::common::signal::zap_f32;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// The order in which scsynth adds the partials: first the leftover ones,
/// then each full group of four. Returns (leftover range, group starts).
fn grouping(count: usize, leftover_first: bool) -> (std::ops::Range<usize>, usize) {
    let rem = count & 3;
    if leftover_first {
        (0..rem, rem)
    } else {
        (count - rem..count, 0)
    }
}

// ---------------------------------------------------------------------------
// Klang

/// One sine partial of Klang: a two-pole recursion `y0 = b1 * y1 - y2`.
#[derive(Clone, Copy, Default)]
struct SinePartial {
    y1: f32,
    y2: f32,
    b1: f32,
}

/// Klang: inputs freqscale, freqoffset, then (freq, amp, phase) per
/// partial. Frequencies are fixed when the unit is built.
pub struct Klang {
    partials: Vec<SinePartial>,
}

impl Construct for Klang {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let count = io.num_inputs().saturating_sub(2) / 3;
        let rps = cx.rate.radians_per_sample;
        let freqscale = (io.in0(0) as f64 * rps) as f32;
        let freqoffset = (io.in0(1) as f64 * rps) as f32;
        let mut first = 0.0f32;
        let mut partials = Vec::with_capacity(count);
        for i in 0..count {
            let j = 2 + 3 * i;
            let w = io.in0(j) * freqscale + freqoffset;
            let level = io.in0(j + 1);
            let phase = io.in0(j + 2);
            let (y1, y2) = if phase != 0.0 {
                first += level * phase.sin();
                (level * (phase - w).sin(), level * (phase - w - w).sin())
            } else {
                (level * -w.sin(), level * -(w + w).sin())
            };
            partials.push(SinePartial { y1, y2, b1: 2.0 * w.cos() });
        }
        io.out(0)[0] = first;
        Klang { partials }
    }
}

impl Unit for Klang {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let (leftover, groups_from) = grouping(self.partials.len(), true);
        let parts = &mut self.partials[..];
        for o in io.out(0).iter_mut() {
            let step = |p: &mut SinePartial| {
                let y0 = p.b1 * p.y1 - p.y2;
                p.y2 = p.y1;
                p.y1 = y0;
                y0
            };
            let mut acc = 0.0f32;
            let mut any = false;
            for p in parts[leftover.clone()].iter_mut() {
                let y = step(p);
                acc = if any { acc + y } else { y };
                any = true;
            }
            for group in parts[groups_from..].chunks_exact_mut(4) {
                let mut s = step(&mut group[0]);
                for p in group[1..].iter_mut() {
                    s += step(p);
                }
                acc += s;
            }
            *o = acc;
        }
    }
}

// ---------------------------------------------------------------------------
// Klank

/// One resonator of Klank: `y0 = x + b1 * y1 + b2 * y2`, output `a0 * y0`.
#[derive(Clone, Copy, Default)]
struct Resonator {
    y1: f32,
    y2: f32,
    b1: f32,
    b2: f32,
    a0: f32,
}

/// Klank: inputs input, freqscale, freqoffset, decayscale, then (freq,
/// amp, ring time) per resonator; the sum of the resonators passes through
/// a two-sample difference (`x0 - x2`) that removes DC and Nyquist.
pub struct Klank {
    res: Vec<Resonator>,
    x1: f32,
    x2: f32,
    audio_in: bool,
}

impl Klank {
    fn set_coefs(&mut self, io: &Wires<'_>, cx: &UnitCtx<'_>) {
        let rps = cx.rate.radians_per_sample;
        let freqscale = (io.in0(1) as f64 * rps) as f32;
        let freqoffset = (io.in0(2) as f64 * rps) as f32;
        let decayscale = io.in0(3);
        let sample_rate = cx.rate.sample_rate as f32;
        for (i, r) in self.res.iter_mut().enumerate() {
            let j = 4 + 3 * i;
            let w = io.in0(j) * freqscale + freqoffset;
            let level = io.in0(j + 1);
            let time = io.in0(j + 2) * decayscale;
            let radius = if time == 0.0 { 0.0 } else { (log001() / (time * sample_rate) as f64).exp() as f32 };
            let two_r = 2.0 * radius;
            let r2 = radius * radius;
            let cost = (two_r * w.cos()) / (1.0 + r2);
            *r = Resonator { y1: 0.0, y2: 0.0, b1: two_r * cost, b2: -r2, a0: (level as f64 * 0.25) as f32 };
        }
    }

    fn calc(&mut self, io: &mut Wires<'_>) {
        let input = io.inp(0);
        let (leftover, _) = grouping(self.res.len(), false);
        let full = self.res.len() - leftover.len();
        let res = &mut self.res[..];
        let (mut x1, mut x2) = (self.x1, self.x2);
        let audio_in = self.audio_in;
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let x = input[if audio_in { i } else { 0 }];
            let step = |r: &mut Resonator| {
                let y0 = x + r.b1 * r.y1 + r.b2 * r.y2;
                r.y2 = r.y1;
                r.y1 = y0;
                r.a0 * y0
            };
            let mut acc = 0.0f32;
            let mut any = false;
            for r in res[leftover.clone()].iter_mut() {
                let y = step(r);
                acc = if any { acc + y } else { y };
                any = true;
            }
            for group in res[..full].chunks_exact_mut(4) {
                let mut s = step(&mut group[0]);
                for r in group[1..].iter_mut() {
                    s += step(r);
                }
                acc += s;
            }
            *o = acc - x2;
            x2 = x1;
            x1 = acc;
        }
        for r in res.iter_mut() {
            r.y1 = zap_f32(r.y1);
            r.y2 = zap_f32(r.y2);
        }
        self.x1 = x1;
        self.x2 = x2;
    }
}

impl Construct for Klank {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let count = io.num_inputs().saturating_sub(4) / 3;
        let mut u = Klank {
            res: vec![Resonator::default(); count],
            x1: 0.0,
            x2: 0.0,
            audio_in: io.in_rate(0) == Rate::Audio,
        };
        u.set_coefs(io, cx);
        u.calc(io);
        // The first block starts from rest again.
        u.x1 = 0.0;
        u.x2 = 0.0;
        u.set_coefs(io, cx);
        u
    }
}

impl Unit for Klank {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.calc(io);
    }
}
