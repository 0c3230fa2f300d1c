//! Warp1: time stretching by overlapping grains read from a buffer at a
//! moving pointer, one independent grain stream per output channel.

use super::envelope::{active_window, Envelope};
use super::{at_least_four, buffer_value, gloop, input_at, Outs};
use crate::common::math::f2i;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Channels Warp1 serves at most.
const MAX_CHANNELS: usize = 16;
/// Grains per channel at most (one slot stays spare).
const MAX_GRAINS: usize = 64;

#[derive(Clone, Copy, Debug, Default)]
struct WarpGrain {
    env: Envelope,
    phase: f64,
    rate: f64,
    counter: i32,
    interp: i32,
}

/// Warp1 (`bufnum, pointer, freqScale, windowSize, envbufnum, overlaps,
/// windowRandRatio, interp`).
pub struct Warp1 {
    active: [usize; MAX_CHANNELS],
    next_grain: [i32; MAX_CHANNELS],
    grains: Vec<[WarpGrain; MAX_GRAINS]>,
}

impl Warp1 {
    fn remove(&mut self, ch: usize, i: usize) {
        self.active[ch] -= 1;
        self.grains[ch][i] = self.grains[ch][self.active[ch]];
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let num_outputs = io.num_outputs();
        let mut outs = Outs::cleared(io);
        let io: &Wires<'_> = io;
        let Some(bufidx) = crate::common::buffer::resolve_buffer_index(cx.world, io.in0(0)) else {
            cx.set_done(true);
            return;
        };
        let (channels, frames, buf_sr, has_data) = match cx.world.buf(bufidx) {
            Some(b) => (b.channels as usize, b.frames, b.sample_rate as f32, b.is_allocated()),
            None => (0, 0, 0.0, false),
        };
        // More outputs than the buffer has channels, or no data: silence.
        if num_outputs > channels || !has_data {
            cx.set_done(true);
            return;
        }
        let loop_max = frames as f64;
        let sample_rate = cx.rate.sample_rate;

        for ch in 0..num_outputs.min(MAX_CHANNELS) {
            let mut next_grain = self.next_grain[ch];

            let mut i = 0;
            while i < self.active[ch] {
                let g = &mut self.grains[ch][i];
                let Some(buf) = cx.world.buf(bufidx) else { break };
                let Ok(win) = active_window(cx.world, &g.env) else { break };
                let nsmps = g.counter.min(n as i32);
                let mut phase = g.phase;
                for j in 0..nsmps.max(0) as usize {
                    phase = gloop(phase, loop_max);
                    let v = g.env.amp * buffer_value(buf, phase, g.interp, ch);
                    outs.add(ch, j, v);
                    g.env.step(win);
                    phase += g.rate;
                }
                g.phase = phase;
                g.counter = g.counter.wrapping_sub(nsmps);
                if g.counter <= 0 {
                    self.remove(ch, i);
                } else {
                    i += 1;
                }
            }

            for i in 0..n {
                next_grain = next_grain.wrapping_sub(1);
                if next_grain != 0 {
                    continue;
                }
                // A full channel stops looking for grains until the count
                // comes round again.
                if self.active[ch] + 1 >= MAX_GRAINS {
                    break;
                }
                let buf_rate_scale = (buf_sr as f64 * cx.rate.sample_dur) as f32;
                let gi = self.active[ch];
                self.active[ch] += 1;

                let overlaps = input_at(cx, io, 5, i);
                let length = (input_at(cx, io, 3, i) as f64 * sample_rate) as f32;
                let rand_amount = cx.world.rgen.frand2() as f64 * input_at(cx, io, 6, i) as f64;
                let l = length as f64;
                let counter = at_least_four((l + l * rand_amount).floor()) as f32;
                let g = &mut self.grains[ch][gi];
                g.counter = f2i(counter);
                next_grain = f2i(counter / overlaps);
                self.next_grain[ch] = next_grain;

                let rate = input_at(cx, io, 2, i) * buf_rate_scale;
                g.rate = rate as f64;
                let mut phase = input_at(cx, io, 1, i) * frames as f32;
                g.interp = f2i(input_at(cx, io, 7, i));
                let win_type = f2i(input_at(cx, io, 4, i)) as f32;
                g.env.win_type = win_type;

                if win_type >= cx.world.num_bufs() as f32 {
                    break;
                }
                let win = if win_type < 0.0 {
                    None
                } else {
                    match cx.world.buf(win_type as usize).filter(|w| w.is_allocated()) {
                        Some(w) => Some(w),
                        // The grain keeps the slot, half set up, as in scsynth.
                        None => continue,
                    }
                };
                let Some(buf) = cx.world.buf(bufidx) else { break };
                g.env.restart(counter as f64, win);
                let nsmps = g.counter.min((n - i) as i32);
                // A new grain's first stretch runs in single precision.
                for j in 0..nsmps.max(0) as usize {
                    phase = gloop(phase as f64, loop_max) as f32;
                    let v = g.env.amp * buffer_value(buf, phase as f64, g.interp, ch);
                    outs.add(ch, i + j, v);
                    g.env.step(win);
                    phase += rate;
                }
                g.phase = phase as f64;
                g.counter = g.counter.wrapping_sub(nsmps);
                if g.counter <= 0 {
                    self.remove(ch, gi);
                }
            }

            self.next_grain[ch] = next_grain;
        }
    }
}

impl Construct for Warp1 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        Warp1 {
            active: [0; MAX_CHANNELS],
            next_grain: [1; MAX_CHANNELS],
            grains: vec![[WarpGrain::default(); MAX_GRAINS]; MAX_CHANNELS],
        }
    }
}

impl Unit for Warp1 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
