//! Buffer access shared by every family that reads or writes buffers: which
//! buffer a unit's number names (scsynth's fallback to buffer 0 included),
//! and reading interleaved frames with scsynth's interpolation and looping.

use crate::common::math::cubicinterp;
use crate::unit::{UnitCtx, Wires};
use crate::world::{SndBuf, World};

/// The buffer a unit's first input names, resolved as scsynth does: negative
/// numbers mean 0, numbers past the last buffer fall back to buffer 0.
pub(crate) fn resolve_buffer(world: &World, fbufnum: f32) -> Option<&SndBuf> {
    world.buf(resolve_buffer_index(world, fbufnum)?)
}

/// The index [`resolve_buffer`] picks, if the world has any buffers; the
/// running synth's local buffers follow the world's.
pub(crate) fn resolve_buffer_index(world: &World, fbufnum: f32) -> Option<usize> {
    buffer_index(fbufnum, world.num_bufs() + world.num_local_bufs())
}

/// The buffer a unit given buffer number `fbufnum` uses among `count`:
/// negative numbers and numbers past the last buffer mean buffer 0, as in
/// scsynth; `None` when there are no buffers.
pub fn buffer_index(fbufnum: f32, count: usize) -> Option<usize> {
    let f = if fbufnum < 0.0 { 0.0 } else { fbufnum };
    let index = f as u32 as usize;
    if index < count {
        Some(index)
    } else if count == 0 {
        None
    } else {
        Some(0)
    }
}

/// `1 / sample_rate`, or 0 for a buffer that was never allocated (scsynth's
/// buffers start zero-filled).
#[inline]
pub(crate) fn buf_sample_dur(buf: &SndBuf) -> f64 {
    if buf.sample_rate == 0.0 {
        0.0
    } else {
        1.0 / buf.sample_rate
    }
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
