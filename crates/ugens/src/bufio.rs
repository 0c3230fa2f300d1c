//! Buffer playback and recording: PlayBuf, BufRd, BufWr, RecordBuf.
//!
//! Buffers are addressed as scsynth does it: a negative or out-of-range
//! number falls back to buffer 0, and a buffer with no data silences the
//! unit's outputs.

use crate::info::resolve_buffer;
use crate::unit::{UnitCtx, Wires};
use crate::world::SndBuf;

pub(crate) mod local;
mod play;
mod rdwr;

pub use play::PlayBuf;
pub use rdwr::{BufRd, BufWr, RecordBuf};

/// 4-point, 3rd-order Hermite interpolation (x-form).
#[inline(always)]
pub(crate) fn cubicinterp(x: f32, y0: f32, y1: f32, y2: f32, y3: f32) -> f32 {
    let c0 = y1;
    let c1 = 0.5 * (y2 - y0);
    let c2 = y0 - 2.5 * y1 + 2.0 * y2 - 0.5 * y3;
    let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2);
    ((c3 * x + c2) * x + c1) * x + c0
}

/// Sample `index` of a buffer's interleaved data, or 0 outside it (where
/// scsynth would read whatever memory lies there).
#[inline(always)]
pub(crate) fn sample(data: &[f32], index: isize) -> f32 {
    if index < 0 {
        0.0
    } else {
        data.get(index as usize).copied().unwrap_or(0.0)
    }
}

/// Writes frame `phase` of a buffer to sample `i` of every output, with no
/// (`INTERP == 1`), linear (2) or cubic (4) interpolation. Outputs beyond the
/// buffer's channels get zeros; buffer channels beyond the outputs are
/// skipped. Near the ends the neighbouring frames wrap when looping and are
/// clamped otherwise, as in scsynth.
#[inline(always)]
pub(crate) fn read_frame<const INTERP: u8>(
    outs: &mut [*mut f32],
    i: usize,
    buf: &SndBuf,
    phase: f64,
    looping: bool,
) {
    let data = &buf.data[..];
    let chans = buf.channels as usize;
    let iphase = phase as i32;
    let guard = buf.frames as i32 - 2;
    let samples = data.len() as isize;
    let c = chans as isize;
    let t1 = iphase as isize * c;
    let frac = (phase - iphase as f64) as f32;
    let (mut t0, mut t2, mut t3) = (t1 - c, t1 + c, t1 + 2 * c);
    match INTERP {
        4 => {
            if iphase == 0 {
                t0 += if looping { samples } else { c };
            } else if iphase >= guard {
                if iphase == guard {
                    t3 -= if looping { samples } else { c };
                } else if looping {
                    t2 -= samples;
                    t3 -= samples;
                } else {
                    t2 -= c;
                    t3 -= 2 * c;
                }
            }
        }
        2 => {
            if iphase > guard {
                t2 -= if looping { samples } else { c };
            }
        }
        _ => {}
    }
    for (ch, out) in outs.iter_mut().enumerate() {
        let v = if ch < chans {
            let k = ch as isize;
            match INTERP {
                4 => cubicinterp(frac, sample(data, t0 + k), sample(data, t1 + k), sample(data, t2 + k), sample(data, t3 + k)),
                2 => {
                    let b = sample(data, t1 + k);
                    let c = sample(data, t2 + k);
                    b + frac * (c - b)
                }
                _ => sample(data, t1 + k),
            }
        } else {
            0.0
        };
        // SAFETY: every pointer is an output wire holding `n()` samples and
        // callers pass `i < n()`; outputs never alias inputs or each other.
        unsafe { *out.add(i) = v };
    }
}

/// Up to this many output channels are served by the buffer readers.
pub(crate) const MAX_CHANNELS: usize = 64;

/// Pointers to the first `min(num_outputs, MAX_CHANNELS)` outputs.
#[inline]
pub(crate) fn out_ptrs(io: &mut Wires<'_>) -> ([*mut f32; MAX_CHANNELS], usize) {
    let mut outs = [std::ptr::null_mut::<f32>(); MAX_CHANNELS];
    let n = io.num_outputs().min(MAX_CHANNELS);
    for (k, o) in outs.iter_mut().enumerate().take(n) {
        *o = io.out_ptr(k);
    }
    (outs, n)
}

/// Sample `i` of an input that should be audio; a control or constant
/// input reads as its single value.
#[inline(always)]
pub(crate) fn at(s: &[f32], i: usize) -> f32 {
    match s.get(i) {
        Some(&v) => v,
        None => s.first().copied().unwrap_or(0.0),
    }
}

/// The buffer for input 0, if it has data.
#[inline]
pub(crate) fn buffer<'w>(io: &Wires<'_>, cx: &'w UnitCtx<'_>) -> Option<&'w SndBuf> {
    resolve_buffer(cx.world, io.in0(0)).filter(|b| b.is_allocated())
}

/// Wraps a phase into the loop, or clamps it and marks the unit done.
#[inline]
pub(crate) fn sc_loop(done: &mut bool, x: f64, hi: f64, looping: bool) -> f64 {
    let mut x = x;
    if x >= hi {
        if !looping {
            *done = true;
            return hi;
        }
        x -= hi;
        if x < hi {
            return x;
        }
    } else if x < 0.0 {
        if !looping {
            *done = true;
            return 0.0;
        }
        x += hi;
        if x >= 0.0 {
            return x;
        }
    } else {
        return x;
    }
    x - hi * (x / hi).floor()
}


#[cfg(test)]
mod tests;
