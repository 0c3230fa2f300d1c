//! Grains of an input signal (GrainIn) and of a mono buffer (GrainBuf).

use super::envelope::{active_window, choose, start_window, Envelope};
use super::{
    at_least_four, buffer_value, gloop, grain_buffer, input_at, run_granular, Granular, Outs, Placement, Pool,
};
use crate::common::signal::at;
use crate::common::math::{d2i, f2i};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

// ---- GrainIn -----------------------------------------------------------------

#[derive(Clone, Copy, Debug, Default)]
struct InGrain {
    env: Envelope,
    place: Placement,
    counter: i32,
}

/// GrainIn (`trigger, dur, in, pan, envbufnum, maxGrains`).
pub struct GrainIn {
    pool: Pool<InGrain>,
    curtrig: f32,
    trig_audio: bool,
}

impl GrainIn {
    /// Plays `g` for `nsmps` samples from sample `offset` of the input.
    #[inline(always)]
    fn play(g: &mut InGrain, input: &[f32], win: Option<&SndBuf>, outs: &mut Outs<'_>, offset: usize, nsmps: i32) {
        for j in 0..nsmps.max(0) as usize {
            let v = g.env.amp * at(input, offset + j);
            g.place.write(outs, offset + j, v);
            g.env.step(win);
        }
    }
}

impl Granular for GrainIn {
    fn play_active(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize) {
        let input = io.inp(2);
        self.pool.play_active(cx.world, outs, n, |g, win, outs, at, nsmps| Self::play(g, input, win, outs, at, nsmps));
    }

    fn start(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize, pos: usize) {
        if self.pool.full() {
            return;
        }
        let win_type = input_at(cx, io, 4, pos);
        let Some(choice) = choose(cx.world, win_type) else { return };
        let idx = self.pool.push();
        let win_size = input_at(cx, io, 1, pos);
        let counter = at_least_four(win_size as f64 * cx.rate.sample_rate);
        let pan = input_at(cx, io, 3, pos);
        let win = start_window(cx.world, choice);
        let (env, place) = (Envelope::start(win_type, counter, win), Placement::new(pan, outs.len));
        let input = io.inp(2);
        self.pool.begin(idx, env, place, d2i(counter), outs, n, pos, |g, outs, at, nsmps| {
            Self::play(g, input, win, outs, at, nsmps)
        });
    }
}

granular_unit!(
    GrainIn,
    |io, cx| GrainIn { pool: Pool::new(io.in0(5)), curtrig: 0.0, trig_audio: io.in_rate(0) == Rate::Audio },
    // The first sample is computed with the trigger read as a control.
    |unit| false
);

enveloped!(InGrain);

// ---- GrainBuf ----------------------------------------------------------------

#[derive(Clone, Copy, Debug, Default)]
struct BufGrain {
    env: Envelope,
    place: Placement,
    phase: f64,
    rate: f64,
    counter: i32,
    bufnum: i32,
    interp: i32,
}

/// GrainBuf (`trigger, dur, sndbuf, rate, pos, interp, pan, envbufnum,
/// maxGrains`): plays grains of a mono buffer.
pub struct GrainBuf {
    pool: Pool<BufGrain>,
    curtrig: f32,
    trig_audio: bool,
}

/// The buffer a grain plays, if it is a mono buffer with data.
#[inline]
fn mono(buf: Option<&SndBuf>) -> Option<&SndBuf> {
    buf.filter(|b| b.is_allocated() && b.channels == 1)
}

impl GrainBuf {
    /// Plays `g` for `nsmps` samples from sample `offset` of the outputs,
    /// leaving the phase in `phase`.
    #[inline(always)]
    fn play(
        g: &mut BufGrain,
        phase: &mut f64,
        buf: &SndBuf,
        win: Option<&SndBuf>,
        outs: &mut Outs<'_>,
        offset: usize,
        nsmps: i32,
    ) {
        let loop_max = buf.frames as f64;
        let rate = g.rate;
        for j in 0..nsmps.max(0) as usize {
            *phase = gloop(*phase, loop_max);
            let v = g.env.amp * buffer_value(buf, *phase, g.interp, 0);
            g.place.write(outs, offset + j, v);
            g.env.step(win);
            *phase += rate;
        }
    }
}

impl Granular for GrainBuf {
    fn play_active(&mut self, _io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize) {
        let mut i = 0;
        while i < self.pool.active {
            let g = &mut self.pool.grains[i];
            let Some(buf) = mono(grain_buffer(cx.world, g.bufnum)) else {
                // A grain whose buffer went away runs out silently.
                g.counter = g.counter.wrapping_sub(n as i32);
                if g.counter <= 0 {
                    self.pool.remove(i);
                } else {
                    i += 1;
                }
                continue;
            };
            let Ok(win) = active_window(cx.world, &g.env) else { break };
            let nsmps = g.counter.min(n as i32);
            let mut phase = g.phase;
            Self::play(g, &mut phase, buf, win, outs, 0, nsmps);
            // scsynth tests for the end before counting this block's
            // samples, so a finished grain leaves the pool one block late.
            if g.counter <= 0 {
                self.pool.remove(i);
                continue;
            }
            i += 1;
            g.phase = phase;
            g.counter = g.counter.wrapping_sub(nsmps);
        }
    }

    fn start(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize, pos: usize) {
        if self.pool.full() {
            return;
        }
        let win_type = input_at(cx, io, 7, pos);
        let Some(choice) = choose(cx.world, win_type) else { return };
        let idx = self.pool.push();
        let bufnum = f2i(input_at(cx, io, 2, pos));
        self.pool.grains[idx].bufnum = bufnum;
        let Some((frames, buf_sample_rate)) = mono(grain_buffer(cx.world, bufnum)).map(|b| (b.frames, b.sample_rate))
        else {
            // The slot keeps its previous grain's count, as in scsynth.
            if self.pool.grains[idx].counter <= 0 {
                self.pool.remove(idx);
            }
            return;
        };
        let buf_rate_scale = (buf_sample_rate as f32 as f64 * cx.rate.sample_dur) as f32;
        let rate = (input_at(cx, io, 3, pos) * buf_rate_scale) as f64;
        self.pool.grains[idx].rate = rate;
        let mut phase = (input_at(cx, io, 4, pos) * frames as f32) as f64;
        if !phase.is_finite() {
            if self.pool.grains[idx].counter <= 0 {
                self.pool.remove(idx);
            }
            return;
        }
        let counter = at_least_four(input_at(cx, io, 1, pos) as f64 * cx.rate.sample_rate);
        let interp = f2i(input_at(cx, io, 5, pos));
        let pan = input_at(cx, io, 6, pos);
        let win = start_window(cx.world, choice);
        let Some(buf) = mono(grain_buffer(cx.world, bufnum)) else { return };
        let g = &mut self.pool.grains[idx];
        g.counter = d2i(counter);
        g.interp = interp;
        g.env = Envelope::start(win_type, counter, win);
        g.place = Placement::new(pan, outs.len);
        let nsmps = g.counter.min((n - pos) as i32);
        Self::play(g, &mut phase, buf, win, outs, pos, nsmps);
        g.phase = phase;
        g.counter = g.counter.wrapping_sub(nsmps);
        if g.counter <= 0 {
            self.pool.remove(idx);
        }
    }
}

granular_unit!(
    GrainBuf,
    |io, cx| GrainBuf { pool: Pool::new(io.in0(8)), curtrig: 0.0, trig_audio: io.in_rate(0) == Rate::Audio },
    |unit| unit.trig_audio
);
