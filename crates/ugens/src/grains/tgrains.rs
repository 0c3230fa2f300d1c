//! TGrains: triggered grains of a mono buffer, centred on a position, with
//! the built-in envelope and a level per grain.

use super::{buffer_value, gloop, input_at, next_chan, pan_place, Outs};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::{SndBuf, World};

/// Grains one TGrains plays at most (one slot stays spare).
const MAX_GRAINS: usize = 64;
/// Outputs TGrains writes at most.
const MAX_OUTPUTS: usize = 16;

#[derive(Clone, Copy, Debug, Default)]
struct Grain {
    phase: f64,
    rate: f64,
    b1: f64,
    y1: f64,
    y2: f64,
    pan1: f32,
    pan2: f32,
    counter: i32,
    bufnum: u32,
    chan: usize,
    interp: i32,
}

/// TGrains (`trigger, bufnum, rate, centerPos, dur, pan, amp, interp`).
pub struct TGrains {
    prev_trig: f32,
    active: usize,
    grains: [Grain; MAX_GRAINS],
}

/// The buffer TGrains uses for `bufnum`: one of the world's, or one of the
/// synth's local buffers; any other number names none.
fn tgrains_buffer(world: &World, bufnum: u32) -> Option<&SndBuf> {
    let index = bufnum as usize;
    if index < world.num_bufs() + world.num_local_bufs() {
        world.buf(index)
    } else {
        None
    }
}

/// C's conversion of a float to an unsigned 32-bit number as x86-64 code
/// does it (through a 64-bit integer).
#[inline]
fn f2u(x: f32) -> u32 {
    if x.is_nan() || !(-9.2e18..9.2e18).contains(&x) {
        0
    } else {
        x as i64 as u32
    }
}

impl TGrains {
    /// Plays `g` for `nsmps` samples from sample `offset`.
    #[inline(always)]
    fn play(g: &mut Grain, buf: &SndBuf, outs: &mut Outs<'_>, num_outputs: usize, offset: usize, nsmps: i32) {
        let loop_max = buf.frames as f64;
        let chan2 = next_chan(g.chan, num_outputs);
        let (b1, mut y1, mut y2) = (g.b1, g.y1, g.y2);
        let mut phase = g.phase;
        for j in 0..nsmps.max(0) as usize {
            let amp = (y1 * y1) as f32;
            phase = gloop(phase, loop_max);
            let v = amp * buffer_value(buf, phase, g.interp, 0);
            outs.add(g.chan, offset + j, v * g.pan1);
            // Without interpolation the second channel is always written,
            // even when it is the first one again.
            if num_outputs > 1 || g.interp < 2 {
                outs.add(chan2, offset + j, v * g.pan2);
            }
            let y0 = b1 * y1 - y2;
            y2 = y1;
            y1 = y0;
            phase += g.rate;
        }
        g.phase = phase;
        g.y1 = y1;
        g.y2 = y2;
    }

    fn remove(&mut self, i: usize) {
        self.active -= 1;
        self.grains[i] = self.grains[self.active];
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let num_outputs = io.num_outputs().min(MAX_OUTPUTS);
        let mut outs = Outs::cleared(io);
        let io: &Wires<'_> = io;

        let mut i = 0;
        while i < self.active {
            let g = &mut self.grains[i];
            let Some(buf) = tgrains_buffer(cx.world, g.bufnum).filter(|b| b.channels == 1) else {
                // Not a mono buffer (any more): the grain waits, untouched.
                i += 1;
                continue;
            };
            let nsmps = g.counter.min(n as i32);
            Self::play(g, buf, &mut outs, num_outputs, 0, nsmps);
            g.counter = g.counter.wrapping_sub(nsmps);
            if g.counter <= 0 {
                self.remove(i);
            } else {
                i += 1;
            }
        }

        let trig = io.inp(0);
        let trig_samples = if io.in_rate(0) == Rate::Audio { n } else { 1 };
        let mut prev = self.prev_trig;
        for (i, &t) in trig.iter().enumerate().take(trig_samples) {
            if t > 0.0 && prev <= 0.0 {
                if self.active + 1 >= MAX_GRAINS {
                    break;
                }
                let bufnum = f2u(input_at(cx, io, 1, i));
                // A trigger that finds no mono buffer is skipped and not
                // remembered as the previous trigger value.
                let Some(buf_sr) =
                    tgrains_buffer(cx.world, bufnum).filter(|b| b.channels == 1).map(|b| b.sample_rate as f32)
                else {
                    continue;
                };
                let buf_rate_scale = (buf_sr as f64 * cx.rate.sample_dur) as f32;
                let idx = self.active;
                self.active += 1;
                let counter = at_least_four_floor(input_at(cx, io, 4, i) as f64 * cx.rate.sample_rate);
                let rate = (input_at(cx, io, 2, i) * buf_rate_scale) as f64;
                let center = (input_at(cx, io, 3, i) * buf_sr) as f64;
                let pan = input_at(cx, io, 5, i);
                let amp = input_at(cx, io, 6, i);
                let interp = crate::common::math::f2i(input_at(cx, io, 7, i));
                let place = pan_place(pan, num_outputs);
                let (pan1, pan2) = match place.angle {
                    Some(a) => (amp * a.cos(), amp * a.sin()),
                    None => (amp, 0.0),
                };
                let w = std::f64::consts::PI / counter;
                let Some(buf) = tgrains_buffer(cx.world, bufnum) else { continue };
                let g = &mut self.grains[idx];
                *g = Grain {
                    phase: center - 0.5 * counter * rate,
                    rate,
                    b1: 2.0 * w.cos(),
                    y1: w.sin(),
                    y2: 0.0,
                    pan1,
                    pan2,
                    counter: crate::common::math::d2i(counter),
                    bufnum,
                    chan: place.chan,
                    interp,
                };
                let nsmps = g.counter.min((n - i) as i32);
                Self::play(g, buf, &mut outs, num_outputs, i, nsmps);
                g.counter = g.counter.wrapping_sub(nsmps);
                if g.counter <= 0 {
                    self.remove(idx);
                }
            }
            prev = t;
        }
        self.prev_trig = prev;
    }
}

/// A grain length in samples: whole samples, at least four.
#[inline]
fn at_least_four_floor(x: f64) -> f64 {
    super::at_least_four(x.floor())
}

impl Construct for TGrains {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        TGrains { prev_trig: 0.0, active: 0, grains: [Grain::default(); MAX_GRAINS] }
    }
}

impl Unit for TGrains {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
