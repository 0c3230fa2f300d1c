//! DelTapWr and DelTapRd: a delay line kept in a mono buffer, written by one
//! unit and read by any number of taps.
//!
//! DelTapWr clears its buffer when built, then writes its input at a running
//! position; its output carries that position as the bit pattern of an
//! unsigned integer, not as a number. DelTapRd reads the position from the
//! first sample of that signal and reads the line `delaytime` seconds behind
//! it, with no (interp 1), linear (2) or cubic (4) interpolation. Without a
//! mono buffer holding data both output silence and mark themselves done.

use crate::common::buffer::sample;

use crate::common::math::cubicinterp;

use crate::common::signal::at;
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

/// The mono buffer input 0 names, if it holds data.
fn tap_buffer<'w>(io: &Wires<'_>, cx: &'w UnitCtx<'_>) -> Option<&'w SndBuf> {
    let index = resolve_buffer_index(cx.world, io.in0(0))?;
    cx.world.buf(index).filter(|b| b.is_allocated() && b.channels == 1)
}

/// Gives up for this block as scsynth does without a usable buffer.
fn no_buffer(io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
    cx.set_done(true);
    io.clear_outputs();
}

/// Sample `i` of the line, 0 outside it (where scsynth reads past its memory).
#[inline(always)]
fn rd(data: &[f32], i: i32) -> f32 {
    sample(data, i as isize)
}

pub struct DelTapWr {
    phase: u32,
}

impl DelTapWr {
    fn write(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> bool {
        let Some(index) = resolve_buffer_index(cx.world, io.in0(0)) else {
            return false;
        };
        let Some(buf) = cx.world.buf_mut(index).filter(|b| b.is_allocated() && b.channels == 1) else {
            return false;
        };
        let input = io.inp(1);
        let n = io.n();
        let samples = buf.data.len() as u32;
        // A buffer swapped for a shorter one: start over inside it.
        let mut phase = if self.phase >= samples { self.phase % samples } else { self.phase };
        let out = io.out(0);
        for (i, o) in out.iter_mut().enumerate().take(n) {
            buf.data[phase as usize] = at(input, i);
            *o = f32::from_bits(phase);
            phase += 1;
            if phase == samples {
                phase = 0;
            }
        }
        self.phase = phase;
        true
    }
}

impl Construct for DelTapWr {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = DelTapWr { phase: 0 };
        // The line starts silent: the buffer is cleared once, here.
        if let Some(index) = resolve_buffer_index(cx.world, io.in0(0)) {
            if let Some(buf) = cx.world.buf_mut(index).filter(|b| b.is_allocated() && b.channels == 1) {
                buf.data.fill(0.0);
            }
        }
        if !unit.write(io, cx) {
            no_buffer(io, cx);
        } else if io.in_rate(1) == Rate::Audio {
            // scsynth lets this output share its audio input's wire and writes the position
            // there before reading the input, so the first sample stored is that 0.
            if let Some(buf) = resolve_buffer_index(cx.world, io.in0(0)).and_then(|i| cx.world.buf_mut(i)) {
                if let Some(first) = buf.data.first_mut() {
                    *first = 0.0;
                }
            }
        }
        unit
    }
}

impl Unit for DelTapWr {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if !self.write(io, cx) {
            no_buffer(io, cx);
        }
    }
}

const NEAREST: u8 = 1;
const LINEAR: u8 = 2;
const CUBIC: u8 = 4;

/// DelTapRd with interpolation `INTERP`; `audio_delay` when the delay time
/// is an audio signal.
pub struct DelTapRd<const INTERP: u8> {
    del_time: f32,
    audio_delay: bool,
}

/// Builds the DelTapRd form its interpolation input asks for.
pub fn new_deltaprd(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    match io.in0(3) as i32 {
        2 => Box::new(DelTapRd::<LINEAR>::new(spec, io, cx)),
        4 => Box::new(DelTapRd::<CUBIC>::new(spec, io, cx)),
        _ => Box::new(DelTapRd::<NEAREST>::new(spec, io, cx)),
    }
}

impl<const INTERP: u8> Construct for DelTapRd<INTERP> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let del_time = (io.in0(2) as f64 * cx.rate.sample_rate) as f32;
        let mut unit = DelTapRd { del_time, audio_delay: io.in_rate(2) == Rate::Audio };
        unit.next(io, cx);
        unit
    }
}

impl<const INTERP: u8> Unit for DelTapRd<INTERP> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(buf) = tap_buffer(io, cx) else {
            no_buffer(io, cx);
            return;
        };
        let data = &buf.data[..];
        let phase_in = io.in0(1).to_bits();
        let sr = cx.rate.sample_rate;
        let slope_factor = cx.rate.slope_factor as f32;
        let n = io.n();
        let audio_delay = self.audio_delay;
        let delay = io.inp(2);
        let new_del = io.in0(2) * sr as f32;
        let out = &mut io.out(0)[..n];
        if audio_delay {
            read_audio::<INTERP>(data, phase_in, delay, sr, out);
        } else if self.del_time == new_del {
            read_fixed::<INTERP>(data, phase_in, self.del_time, out);
        } else {
            let inc = (new_del - self.del_time) * slope_factor;
            self.del_time = read_moving::<INTERP>(data, phase_in, self.del_time, inc, out);
        }
    }
}

/// The read position `delay` samples behind `phase_in`, wrapped into the line once.
#[inline(always)]
fn wrapped(phase_in: u32, delay: f64, loop_max: f64) -> f64 {
    let mut phase = phase_in as f64 - delay;
    if phase < 0.0 {
        phase += loop_max;
    }
    if phase >= loop_max {
        phase -= loop_max;
    }
    phase
}

/// Linear interpolation between samples `i` and `i + 1` (wrapped at the end).
#[inline(always)]
fn linear_at(data: &[f32], i: i32, frac: f32) -> f32 {
    let len = data.len() as i32;
    let mut i1 = i + 1;
    if i1 >= len {
        i1 -= len;
    }
    let b = rd(data, i);
    let c = rd(data, i1);
    b + frac * (c - b)
}

/// Cubic interpolation around sample `i`; as in scsynth the points after it
/// wrap only once they are past the end, not at it.
#[inline(always)]
fn cubic_at(data: &[f32], i: i32, frac: f32) -> f32 {
    let len = data.len() as i32;
    let (mut i0, mut i1, mut i2) = (i - 1, i + 1, i + 2);
    if i0 < 0 {
        i0 += len;
    }
    if i1 > len {
        i1 -= len;
    }
    if i2 > len {
        i2 -= len;
    }
    cubicinterp(frac, rd(data, i0), rd(data, i), rd(data, i1), rd(data, i2))
}

/// An audio-rate delay time, in seconds, per sample.
fn read_audio<const INTERP: u8>(data: &[f32], mut phase_in: u32, delay: &[f32], sr: f64, out: &mut [f32]) {
    let loop_max = data.len() as f64;
    for (i, o) in out.iter_mut().enumerate() {
        let phase = wrapped(phase_in, at(delay, i) as f64 * sr, loop_max);
        let iphase = phase as i32;
        *o = match INTERP {
            LINEAR => linear_at(data, iphase, (phase - iphase as f64) as f32),
            CUBIC => cubic_at(data, iphase, (phase - iphase as f64) as f32),
            _ => rd(data, iphase),
        };
        phase_in = phase_in.wrapping_add(1);
    }
}

/// A control-rate delay that changes this block: it ramps towards its new
/// value. Returns the delay reached.
fn read_moving<const INTERP: u8>(data: &[f32], mut phase_in: u32, mut del: f32, inc: f32, out: &mut [f32]) -> f32 {
    let loop_max = data.len() as f64;
    let len = data.len() as i32;
    for o in out.iter_mut() {
        *o = match INTERP {
            LINEAR => {
                let phase = wrapped(phase_in, del as f64, loop_max);
                let iphase = phase as i32;
                linear_at(data, iphase, (phase - iphase as f64) as f32)
            }
            CUBIC => {
                // This form wraps the integer position only, the fraction keeps its sign.
                let phase = phase_in as f64 - del as f64;
                let whole = phase.trunc();
                let frac = (phase - whole) as f32;
                let mut iphase = whole as i32;
                if iphase < 0 {
                    iphase += len;
                }
                if iphase >= len {
                    iphase -= len;
                }
                cubic_at(data, iphase, frac)
            }
            _ => rd(data, wrapped(phase_in, del as f64, loop_max) as i32),
        };
        del += inc;
        phase_in = phase_in.wrapping_add(1);
    }
    del
}

/// A control-rate delay that holds still: one position, stepped per sample.
fn read_fixed<const INTERP: u8>(data: &[f32], phase_in: u32, del: f32, out: &mut [f32]) {
    let samples = data.len() as u32;
    let len = samples as i32;
    let n = out.len() as i32;
    let phase = phase_in as f64 - del as f64;
    match INTERP {
        LINEAR => {
            let whole = phase.trunc();
            let frac = (phase - whole) as f32;
            let mut iphase = whole as i32;
            if phase >= 0.0 && phase + (n as f64) < data.len() as f64 - 2.0 {
                for o in out.iter_mut() {
                    let b = rd(data, iphase);
                    let c = rd(data, iphase + 1);
                    *o = b + frac * (c - b);
                    iphase += 1;
                }
            } else {
                for o in out.iter_mut() {
                    // Past the end scsynth does not wrap this position back.
                    if iphase < 0 {
                        iphase += len;
                    }
                    *o = linear_at(data, iphase, frac);
                    iphase += 1;
                }
            }
        }
        CUBIC => {
            let whole = phase.trunc();
            let frac = (phase - whole) as f32;
            let mut iphase = whole as i32;
            if iphase >= 1 && iphase + n < len - 4 {
                for o in out.iter_mut() {
                    let (a, b, c, d) = (rd(data, iphase - 1), rd(data, iphase), rd(data, iphase + 1), rd(data, iphase + 2));
                    *o = cubicinterp(frac, a, b, c, d);
                    iphase += 1;
                }
            } else {
                for o in out.iter_mut() {
                    if iphase < 0 {
                        iphase += len;
                    } else if iphase >= len {
                        iphase -= len;
                    }
                    *o = cubic_at(data, iphase, frac);
                    iphase += 1;
                }
            }
        }
        _ => {
            let mut iphase = phase as i32;
            if iphase >= 0 && ((iphase + n) as u32) < samples.wrapping_sub(1) {
                for o in out.iter_mut() {
                    *o = rd(data, iphase);
                    iphase += 1;
                }
            } else {
                for o in out.iter_mut() {
                    if iphase < 0 {
                        iphase = iphase.wrapping_add(len);
                    }
                    if iphase as u32 >= samples {
                        iphase = (iphase as u32).wrapping_sub(samples) as i32;
                    }
                    *o = rd(data, iphase);
                    iphase = iphase.wrapping_add(1);
                }
            }
        }
    }
}
