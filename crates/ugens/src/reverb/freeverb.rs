//! FreeVerb and FreeVerb2: Schroeder-Moorer reverbs of eight damped
//! feedback combs in parallel followed by four allpasses in series, per
//! channel, with fixed line lengths (in samples, whatever the sample rate).
//!
//! Additions are grouped exactly as scsynth groups them, so that rounding
//! matches sample for sample.

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

/// Comb lengths of the left (or only) channel.
const COMBS_L: [usize; 8] = [1617, 1557, 1491, 1422, 1277, 1116, 1188, 1356];
/// Allpass lengths of the left channel, from the first in the chain to the last.
const ALLPASSES_L: [usize; 4] = [556, 441, 341, 225];
/// The right channel's lines are 23 samples longer.
const STEREO_SPREAD: usize = 23;

/// A circular line whose write index moves one step before each access.
struct Ring {
    data: Box<[f32]>,
    pos: usize,
}

impl Ring {
    fn new(len: usize) -> Ring {
        Ring { data: fallible::zeroed(len).into_boxed_slice(), pos: 0 }
    }

    /// Advances and returns the oldest value (the one about to be replaced).
    #[inline(always)]
    fn advance(&mut self) -> f32 {
        self.pos += 1;
        if self.pos == self.data.len() {
            self.pos = 0;
        }
        self.data[self.pos]
    }

    #[inline(always)]
    fn write(&mut self, x: f32) {
        self.data[self.pos] = x;
    }
}

/// One comb: its line, the last value read and its damping filter.
struct Comb {
    line: Ring,
    out: f32,
    filt: f32,
}

/// One allpass: its line and the last value read.
struct Allpass {
    line: Ring,
    out: f32,
}

/// The parameters of one block, clipped to [0, 1] as scsynth clips them.
#[derive(Clone, Copy)]
struct Params {
    wet: f32,
    dry: f32,
    feedback: f32,
    damp: f32,
    undamp: f32,
}

impl Params {
    fn new(mix: f32, room: f32, damp: f32) -> Params {
        let unit = |x: f32| {
            let x = if x > 1.0 { 1.0 } else { x };
            if x < 0.0 {
                0.0
            } else {
                x
            }
        };
        let wet = unit(mix);
        let damp = 0.4 * unit(damp);
        Params { wet, dry: 1.0 - wet, feedback: 0.7 + 0.28 * unit(room), damp, undamp: 1.0 - damp }
    }
}

/// One channel of the reverb.
struct Channel {
    combs: [Comb; 8],
    allpasses: [Allpass; 4],
}

impl Channel {
    fn new(spread: usize) -> Channel {
        Channel {
            combs: COMBS_L.map(|n| Comb { line: Ring::new(n + spread), out: 0.0, filt: 0.0 }),
            allpasses: ALLPASSES_L.map(|n| Allpass { line: Ring::new(n + spread), out: 0.0 }),
        }
    }

    /// One sample: `feed` is the scaled input of the combs, `dry` the
    /// channel's own input.
    #[inline(always)]
    fn tick(&mut self, p: &Params, feed: f32, dry: f32) -> f32 {
        // Every line moves on before any is written.
        let [a0, a1, a2, a3] = &mut self.allpasses;
        let t3 = a3.line.advance();
        let t2 = a2.line.advance();
        let t1 = a1.line.advance();
        let t0 = a0.line.advance();
        let mut c = [0.0f32; 8];
        for (k, comb) in self.combs.iter_mut().enumerate() {
            let t = comb.line.advance();
            comb.filt = p.undamp * comb.out + p.damp * comb.filt;
            comb.line.write(feed + p.feedback * comb.filt);
            comb.out = t;
            c[k] = t;
        }
        let last = c[6] + c[7];
        a0.line.write(((0.5 * a0.out + c[0]) + (c[1] + c[2])) + ((c[3] + c[4]) + (c[5] + last)));
        a0.out = t0;
        let y0 = a0.out - (((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + last));
        a1.line.write(0.5 * a1.out + y0);
        a1.out = t1;
        let y1 = a1.out - y0;
        a2.line.write(0.5 * a2.out + y1);
        a2.out = t2;
        let y2 = a2.out - y1;
        a3.line.write(0.5 * a3.out + y2);
        a3.out = t3;
        let y3 = a3.out - y2;
        p.dry * dry + p.wet * y3
    }
}

#[inline(always)]
fn at(sig: &[f32], i: usize) -> f32 {
    sig[if sig.len() > 1 { i } else { 0 }]
}

/// FreeVerb: inputs in, mix, room, damp (read once per block).
pub struct FreeVerb {
    ch: Box<Channel>,
}

impl FreeVerb {
    fn calc(&mut self, io: &mut Wires<'_>) {
        let p = Params::new(io.in0(1), io.in0(2), io.in0(3));
        let input = io.inp(0);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let x = at(input, i);
            *o = self.ch.tick(&p, 0.015 * x, x);
        }
    }
}

impl Construct for FreeVerb {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mut u = FreeVerb { ch: Box::new(Channel::new(0)) };
        // scsynth's constructor runs one sample and keeps its state, so the
        // first input sample enters the lines twice.
        u.calc(io);
        u
    }
}

impl Unit for FreeVerb {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.calc(io);
    }
}

/// FreeVerb2: inputs in, in2, mix, room, damp; both channels' combs are fed
/// the sum of the two inputs.
pub struct FreeVerb2 {
    left: Box<Channel>,
    right: Box<Channel>,
}

impl FreeVerb2 {
    fn calc(&mut self, io: &mut Wires<'_>) {
        let p = Params::new(io.in0(2), io.in0(3), io.in0(4));
        let (in_l, in_r) = (io.inp(0), io.inp(1));
        let [out_l, out_r] = io.outs::<2>();
        for (i, (ol, or)) in out_l.iter_mut().zip(out_r.iter_mut()).enumerate() {
            let (l, r) = (at(in_l, i), at(in_r, i));
            let feed = 0.015 * (l + r);
            *ol = self.left.tick(&p, feed, l);
            *or = self.right.tick(&p, feed, r);
        }
    }
}

impl Construct for FreeVerb2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let mut u = FreeVerb2 { left: Box::new(Channel::new(0)), right: Box::new(Channel::new(STEREO_SPREAD)) };
        u.calc(io);
        u
    }
}

impl Unit for FreeVerb2 {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.calc(io);
    }
}
