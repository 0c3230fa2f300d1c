//! Grains of a sine tone (GrainSin) and of a two-operator FM tone (GrainFM).

use super::envelope::{choose, start_window, Envelope};
use super::{at_least_four, input_at, run_granular, Granular, Outs, Placement, Pool};
use crate::common::math::d2i;
use crate::common::wavetable::{lookupi1, sine_tables, SINE_MASK, SINE_SIZE};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

/// Phase increment per Hz of the shared sine table, in 16.16 fixed point.
fn cps_to_inc(sample_dur: f64) -> f64 {
    SINE_SIZE as f64 * sample_dur * 65536.0
}

// ---- GrainSin ----------------------------------------------------------------

#[derive(Clone, Copy, Debug, Default)]
struct SinGrain {
    env: Envelope,
    place: Placement,
    counter: i32,
    phase: i32,
    freq: i32,
}

/// GrainSin (`trigger, dur, freq, pan, envbufnum, maxGrains`).
pub struct GrainSin {
    pool: Pool<SinGrain>,
    curtrig: f32,
    trig_audio: bool,
    cpstoinc: f64,
}

impl GrainSin {
    /// Plays `g` for `nsmps` samples into the outputs from sample `offset`.
    #[inline(always)]
    fn play(g: &mut SinGrain, win: Option<&SndBuf>, outs: &mut Outs<'_>, offset: usize, nsmps: i32) {
        let table = &sine_tables().wavetable;
        for j in 0..nsmps.max(0) as usize {
            // SAFETY: the wavetable holds 2 * SINE_SIZE values.
            let v = g.env.amp * unsafe { lookupi1(table, g.phase as u32, SINE_MASK) };
            g.place.write(outs, offset + j, v);
            g.env.step(win);
            g.phase = g.phase.wrapping_add(g.freq);
        }
    }
}

impl Granular for GrainSin {
    fn play_active(&mut self, _io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize) {
        self.pool.play_active(cx.world, outs, n, Self::play);
    }

    fn start(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize, pos: usize) {
        if self.pool.full() {
            return;
        }
        let win_type = input_at(cx, io, 4, pos);
        let Some(choice) = choose(cx.world, win_type) else { return };
        let idx = self.pool.push();
        let freq = input_at(cx, io, 2, pos);
        let win_size = input_at(cx, io, 1, pos);
        let counter = at_least_four(win_size as f64 * cx.rate.sample_rate);
        let pan = input_at(cx, io, 3, pos);
        let win = start_window(cx.world, choice);
        let g = &mut self.pool.grains[idx];
        g.freq = d2i(self.cpstoinc * freq as f64);
        g.phase = 0;
        let (env, place) = (Envelope::start(win_type, counter, win), Placement::new(pan, outs.len));
        self.pool.begin(idx, env, place, d2i(counter), outs, n, pos, |g, outs, at, nsmps| Self::play(g, win, outs, at, nsmps));
    }
}

granular_unit!(
    GrainSin,
    |io, cx| GrainSin {
        pool: Pool::new(io.in0(5)),
        curtrig: 0.0,
        trig_audio: io.in_rate(0) == Rate::Audio,
        cpstoinc: cps_to_inc(cx.rate.sample_dur),
    },
    // The first sample is computed with the trigger read as a control.
    |unit| false
);

// ---- GrainFM -----------------------------------------------------------------

#[derive(Clone, Copy, Debug, Default)]
struct FmGrain {
    env: Envelope,
    place: Placement,
    counter: i32,
    car_phase: i32,
    mod_phase: i32,
    mod_freq: i32,
    deviation: f32,
    car_base: f32,
}

/// GrainFM (`trigger, dur, carfreq, modfreq, index, pan, envbufnum, maxGrains`).
pub struct GrainFM {
    pool: Pool<FmGrain>,
    curtrig: f32,
    trig_audio: bool,
    cpstoinc: f64,
}

impl GrainFM {
    #[inline(always)]
    fn play(g: &mut FmGrain, cpstoinc: f64, win: Option<&SndBuf>, outs: &mut Outs<'_>, offset: usize, nsmps: i32) {
        let table = &sine_tables().wavetable;
        for j in 0..nsmps.max(0) as usize {
            // SAFETY: the wavetable holds 2 * SINE_SIZE values.
            let modulation = unsafe { lookupi1(table, g.mod_phase as u32, SINE_MASK) } * g.deviation;
            // SAFETY: as above.
            let v = g.env.amp * unsafe { lookupi1(table, g.car_phase as u32, SINE_MASK) };
            g.place.write(outs, offset + j, v);
            g.env.step(win);
            // The carrier's increment follows the modulator sample by sample.
            let car_freq = d2i(cpstoinc * (g.car_base + modulation) as f64);
            g.car_phase = g.car_phase.wrapping_add(car_freq);
            g.mod_phase = g.mod_phase.wrapping_add(g.mod_freq);
        }
    }
}

impl Granular for GrainFM {
    fn play_active(&mut self, _io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize) {
        let cpstoinc = self.cpstoinc;
        self.pool.play_active(cx.world, outs, n, |g, win, outs, at, nsmps| Self::play(g, cpstoinc, win, outs, at, nsmps));
    }

    fn start(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize, pos: usize) {
        if self.pool.full() {
            return;
        }
        let win_type = input_at(cx, io, 6, pos);
        let Some(choice) = choose(cx.world, win_type) else { return };
        let idx = self.pool.push();
        let win_size = input_at(cx, io, 1, pos);
        let car_freq = input_at(cx, io, 2, pos);
        let mod_freq = input_at(cx, io, 3, pos);
        let index = input_at(cx, io, 4, pos);
        let counter = at_least_four(win_size as f64 * cx.rate.sample_rate);
        let pan = input_at(cx, io, 5, pos);
        let win = start_window(cx.world, choice);
        let g = &mut self.pool.grains[idx];
        g.deviation = index * mod_freq;
        g.mod_freq = d2i(self.cpstoinc * mod_freq as f64);
        g.car_base = car_freq;
        g.car_phase = 0;
        g.mod_phase = 0;
        let (env, place) = (Envelope::start(win_type, counter, win), Placement::new(pan, outs.len));
        let cpstoinc = self.cpstoinc;
        self.pool.begin(idx, env, place, d2i(counter), outs, n, pos, |g, outs, at, nsmps| {
            Self::play(g, cpstoinc, win, outs, at, nsmps)
        });
    }
}

granular_unit!(
    GrainFM,
    |io, cx| GrainFM {
        pool: Pool::new(io.in0(7)),
        curtrig: 0.0,
        trig_audio: io.in_rate(0) == Rate::Audio,
        cpstoinc: cps_to_inc(cx.rate.sample_dur),
    },
    |unit| false
);

enveloped!(SinGrain, FmGrain);
