//! Granular synthesis: GrainSin, GrainFM, GrainIn, GrainBuf, Warp1, TGrains,
//! PitchShift, and the older fixed-form PSinGrain and GrainTap.
//!
//! A grain is a short stretch of sound shaped by an envelope: the built-in
//! one (a sine-squared bump computed by a two-term recurrence) or a buffer
//! read with linear interpolation. Units keep their grains in a pool sized
//! when they are built; a grain that ends is replaced by the last active
//! one, so the order in which grains are summed matches scsynth's.

use crate::common::buffer::MAX_CHANNELS;
use crate::common::math::sc_wrap;
use crate::unit::{UnitCtx, Wires};
use crate::world::{SndBuf, World};
use envelope::{active_window, Envelope};

/// Implements `Construct` and `Unit` for a triggered grain unit built by
/// `$init`; `$first_audio` says whether its first sample reads the trigger
/// as audio.
macro_rules! granular_unit {
    ($t:ident, |$io:ident, $cx:ident| $init:expr, |$u:ident| $first_audio:expr) => {
        impl Construct for $t {
            fn new(_spec: &UnitSpec<'_>, $io: &mut Wires<'_>, $cx: &mut UnitCtx<'_>) -> Self {
                let mut $u: $t = $init;
                let first_audio = $first_audio;
                let mut curtrig = $u.curtrig;
                run_granular(&mut $u, &mut curtrig, first_audio, $io, $cx);
                $u.curtrig = curtrig;
                $u
            }
        }

        impl Unit for $t {
            fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
                let mut curtrig = self.curtrig;
                run_granular(self, &mut curtrig, self.trig_audio, io, cx);
                self.curtrig = curtrig;
            }
        }
    };
}

/// Implements `Enveloped` for grains with `env`, `place` and `counter` fields.
macro_rules! enveloped {
    ($($t:ty),*) => {$(
        impl super::Enveloped for $t {
            #[inline(always)]
            fn parts(&mut self) -> (&mut Envelope, &mut super::Placement, &mut i32) {
                (&mut self.env, &mut self.place, &mut self.counter)
            }
        }
    )*};
}

mod buf;
mod envelope;
mod osc;
mod pitch_shift;
pub(crate) mod psin;
pub(crate) mod tap;
mod tgrains;
mod warp;

pub use buf::{GrainBuf, GrainIn};
pub use osc::{GrainFM, GrainSin};
pub use pitch_shift::PitchShift;
pub use tgrains::TGrains;
pub use warp::Warp1;

/// π/2 in single precision, the widest pan angle.
const HALF_PI_F32: f32 = std::f32::consts::FRAC_PI_2;

/// Input `index` at sample `pos` of this block: the sample of an audio input,
/// the next value of a demand-rate input, or a control input's value.
#[inline]
fn input_at(cx: &mut UnitCtx<'_>, io: &Wires<'_>, index: usize, pos: usize) -> f32 {
    cx.demand_input_at(io, index, pos + 1)
}

/// Wraps a buffer phase into `[0, hi)`.
#[inline(always)]
fn gloop(x: f64, hi: f64) -> f64 {
    let mut done = false;
    crate::common::buffer::sc_loop(&mut done, x, hi, true)
}

/// `sc_max(4, x)` as the units write it (a NaN stays NaN).
#[inline(always)]
fn at_least_four(x: f64) -> f64 {
    if 4.0 > x {
        4.0
    } else {
        x
    }
}

/// Where a pan position puts a grain: its first output channel and the
/// angle whose cosine and sine weigh that channel and the next one. A
/// single output takes everything on channel 0 (angle `None`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct PanPlace {
    chan: usize,
    angle: Option<f32>,
}

fn pan_place(pan: f32, num_outputs: usize) -> PanPlace {
    if num_outputs <= 1 {
        return PanPlace { chan: 0, angle: None };
    }
    if num_outputs == 2 {
        let p = crate::common::math::sc_clip(pan * 0.5 + 0.5, 0.0, 1.0);
        return PanPlace { chan: 0, angle: Some(p * HALF_PI_F32) };
    }
    // Around a ring of outputs: pan 0..2 covers every channel once.
    let p = sc_wrap(pan * 0.5, 0.0, 1.0);
    let cpan = num_outputs as f32 * p + 0.5;
    let ipan = cpan.floor();
    let frac = cpan - ipan;
    let mut chan = crate::common::math::f2i(ipan);
    if chan >= num_outputs as i32 {
        chan -= num_outputs as i32;
    }
    // Only a NaN pan lands here; scsynth would write out of bounds.
    let chan = chan.clamp(0, num_outputs as i32 - 1) as usize;
    PanPlace { chan, angle: Some(frac * HALF_PI_F32) }
}

/// The channel after `chan`, wrapping to 0.
#[inline(always)]
fn next_chan(chan: usize, num_outputs: usize) -> usize {
    if chan + 1 >= num_outputs {
        0
    } else {
        chan + 1
    }
}

/// Where a new grain sits among the outputs.
#[derive(Clone, Copy, Debug, Default)]
struct Placement {
    chan: usize,
    pan1: f32,
    pan2: f32,
}

impl Placement {
    fn new(pan: f32, num_outputs: usize) -> Placement {
        let p = pan_place(pan, num_outputs);
        match p.angle {
            Some(a) => Placement { chan: p.chan, pan1: a.cos(), pan2: a.sin() },
            None => Placement { chan: 0, pan1: 1.0, pan2: 0.0 },
        }
    }

    /// Adds one grain sample at `i`, split over this channel and the next.
    #[inline(always)]
    fn write(&self, outs: &mut Outs<'_>, i: usize, v: f32) {
        outs.add(self.chan, i, v * self.pan1);
        if outs.len > 1 {
            outs.add(next_chan(self.chan, outs.len), i, v * self.pan2);
        }
    }
}

/// The unit's output blocks, written sample by sample while inputs (and
/// demand-rate units) are read.
struct Outs<'a> {
    ch: [&'a mut [f32]; MAX_CHANNELS],
    len: usize,
}

impl<'a> Outs<'a> {
    /// Clears every output and takes the first `MAX_CHANNELS` of them.
    fn cleared(io: &mut Wires<'a>) -> Outs<'a> {
        io.clear_outputs();
        let n = io.n();
        let len = io.num_outputs().min(MAX_CHANNELS);
        let mut ch: [&'a mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| <&mut [f32]>::default());
        for (k, slot) in ch.iter_mut().enumerate().take(len) {
            let p = io.out_ptr(k);
            // SAFETY: output wires hold `n()` samples, never overlap each
            // other or any input, and nothing else writes them while the
            // unit runs (the unit only reads inputs through `io` meanwhile).
            *slot = unsafe { std::slice::from_raw_parts_mut(p, n) };
        }
        Outs { ch, len }
    }

    #[inline(always)]
    fn add(&mut self, chan: usize, i: usize, v: f32) {
        self.ch[chan][i] += v;
    }
}

/// A fixed pool of grains: `grains.len()` is the unit's grain limit, and
/// slots past `active` keep whatever the last grain there left behind.
struct Pool<G> {
    grains: Vec<G>,
    active: usize,
}

/// Grain memory a unit may ask for, as scsynth's default real-time pool
/// would grant it; larger requests leave the unit silent.
const MAX_POOL_BYTES: usize = 8 << 20;

impl<G: Copy + Default> Pool<G> {
    fn new(max_grains: f32) -> Pool<G> {
        let max = crate::common::math::f2i(max_grains).max(0) as usize;
        let max = if max.saturating_mul(std::mem::size_of::<G>()) > MAX_POOL_BYTES { 0 } else { max };
        Pool { grains: magnetar_rt::fallible::filled(G::default(), max), active: 0 }
    }

    /// A new grain would leave no free slot (scsynth keeps one spare).
    #[inline]
    fn full(&self) -> bool {
        self.active + 1 >= self.grains.len()
    }

    /// Takes the next free slot, as it is.
    #[inline]
    fn push(&mut self) -> usize {
        self.active += 1;
        self.active - 1
    }

    /// Ends grain `i`: the last active grain moves into its slot.
    #[inline]
    fn remove(&mut self, i: usize) {
        self.active -= 1;
        self.grains[i] = self.grains[self.active];
    }
}

/// A grain that lives by its envelope alone (GrainIn, GrainSin, GrainFM):
/// its envelope, its place among the outputs and the samples it has left.
trait Enveloped: Copy + Default {
    fn parts(&mut self) -> (&mut Envelope, &mut Placement, &mut i32);
}

impl<G: Enveloped> Pool<G> {
    /// Plays the running grains through the first `n` samples, ending those
    /// that finish; `play` plays a grain with its window into the outputs
    /// from a sample for a number of samples.
    fn play_active<'o>(
        &mut self,
        world: &World,
        outs: &mut Outs<'o>,
        n: usize,
        mut play: impl FnMut(&mut G, Option<&SndBuf>, &mut Outs<'o>, usize, i32),
    ) {
        let mut i = 0;
        while i < self.active {
            let g = &mut self.grains[i];
            let Ok(win) = active_window(world, g.parts().0) else { break };
            let nsmps = (*g.parts().2).min(n as i32);
            play(g, win, outs, 0, nsmps);
            let counter = g.parts().2;
            *counter = counter.wrapping_sub(nsmps);
            if *counter <= 0 {
                self.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Gives the grain in slot `idx` its envelope, place and length, plays
    /// it from sample `pos` to the block's end (`n`) with `play`, as above,
    /// and ends it there if it is done.
    #[allow(clippy::too_many_arguments)]
    fn begin<'o>(
        &mut self,
        idx: usize,
        env: Envelope,
        place: Placement,
        counter: i32,
        outs: &mut Outs<'o>,
        n: usize,
        pos: usize,
        play: impl FnOnce(&mut G, &mut Outs<'o>, usize, i32),
    ) {
        let g = &mut self.grains[idx];
        let (g_env, g_place, g_counter) = g.parts();
        *g_counter = counter;
        *g_env = env;
        *g_place = place;
        let nsmps = counter.min((n - pos) as i32);
        play(g, outs, pos, nsmps);
        let left = g.parts().2;
        *left = left.wrapping_sub(nsmps);
        if *left <= 0 {
            self.remove(idx);
        }
    }
}

/// A triggered grain unit (GrainSin, GrainFM, GrainIn, GrainBuf).
trait Granular {
    /// Plays the running grains through the first `n` samples.
    fn play_active(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize);
    /// Starts a grain at sample `pos` and plays it to the block's end.
    fn start(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, outs: &mut Outs<'_>, n: usize, pos: usize);
}

/// One block of a triggered grain unit: the running grains first, then a
/// new grain for every rise of the trigger (input 0) above zero. A trigger
/// that is not audio rate is read once, at the block's start.
fn run_granular<U: Granular>(unit: &mut U, curtrig: &mut f32, audio_trig: bool, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
    let n = io.n();
    let mut outs = Outs::cleared(io);
    let io: &Wires<'_> = io;
    unit.play_active(io, cx, &mut outs, n);
    if audio_trig {
        let trig = io.inp(0);
        for (i, &t) in trig.iter().enumerate().take(n) {
            if *curtrig <= 0.0 && t > 0.0 {
                unit.start(io, cx, &mut outs, n, i);
            }
            *curtrig = t;
        }
    } else {
        let t = io.in0(0);
        if *curtrig <= 0.0 && t > 0.0 {
            unit.start(io, cx, &mut outs, n, 0);
        }
        *curtrig = t;
    }
}

/// The buffer a grain unit plays: negative numbers mean buffer 0, numbers
/// past the world's buffers and the synth's local ones fall back to 0.
#[inline]
fn grain_buffer(world: &World, bufnum: i32) -> Option<&SndBuf> {
    let index = crate::common::buffer::resolve_buffer_index(world, bufnum.max(0) as f32)?;
    world.buf(index)
}

/// One interpolated value of channel `ch` of a buffer at a phase already
/// wrapped into `[0, frames)`: `interp` >= 4 is cubic, >= 2 linear, else
/// none. Neighbouring frames wrap around the buffer's ends. Without
/// interpolation the channel offset is added to the frame number, not to
/// its first sample, as scsynth does.
#[inline(always)]
fn buffer_value(buf: &SndBuf, phase: f64, interp: i32, ch: usize) -> f32 {
    use crate::common::buffer::sample;
    use crate::common::math::cubicinterp;
    let data = &buf.data[..];
    let chans = buf.channels as isize;
    let samples = data.len() as isize;
    let guard = buf.frames as i32 - 2;
    let iphase = phase as i32;
    let ch = ch as isize;
    if interp >= 4 {
        let t1 = iphase as isize * chans;
        let (mut t0, mut t2, mut t3) = (t1 - chans, t1 + chans, t1 + 2 * chans);
        if iphase == 0 {
            t0 += samples;
        } else if iphase >= guard {
            if iphase == guard {
                t3 -= samples;
            } else {
                t2 -= samples;
                t3 -= samples;
            }
        }
        let frac = (phase - iphase as f64) as f32;
        cubicinterp(frac, sample(data, t0 + ch), sample(data, t1 + ch), sample(data, t2 + ch), sample(data, t3 + ch))
    } else if interp >= 2 {
        let t1 = iphase as isize * chans;
        let mut t2 = t1 + chans;
        if iphase > guard {
            t2 -= samples;
        }
        let frac = (phase - iphase as f64) as f32;
        let b = sample(data, t1 + ch);
        let c = sample(data, t2 + ch);
        b + frac * (c - b)
    } else {
        sample(data, iphase as isize + ch)
    }
}


#[cfg(test)]
mod tests;
