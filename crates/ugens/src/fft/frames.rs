//! FFT, IFFT and FFTTrigger: the units that start and end a spectral chain.
//!
//! FFT gathers its input, and every `hop` of it windows the last frame,
//! transforms it into the chain's buffer and outputs the buffer's number for
//! that one block (-1 on every other block). IFFT transforms each frame it is
//! handed back, windows it and overlap-adds it into the signal it plays.

use crate::common::signal::trunc_i32;
use crate::common::spectrum::{self as coord, Coord};
use crate::common::real_fft::{apply_window, RealFft, Window, MAX_SIZE, MIN_SIZE};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::World;
use magnetar_rt::fallible;

/// The buffer a transform unit is built on: only numbers that name an
/// existing buffer with data count (no fallback to buffer 0, as in scsynth).
fn frame_buffer(world: &World, fbufnum: f32) -> Option<usize> {
    if !(fbufnum >= 0.0) {
        return None;
    }
    let index = fbufnum as u32 as usize;
    if index >= world.num_bufs() + world.num_local_bufs() {
        return None;
    }
    world.buf(index).filter(|b| b.is_allocated()).map(|_| index)
}

/// What FFT and IFFT share: the buffer, the frame sizes, the window and the
/// transform.
struct Frame {
    buf: usize,
    /// The buffer's length: the transform's length.
    full: usize,
    /// The windowed part of a frame (the rest is zero padding).
    audio: usize,
    window: Vec<f32>,
    fft: RealFft,
    /// One frame of time-domain samples.
    scratch: Vec<f32>,
}

impl Frame {
    /// Checks the buffer and sizes as scsynth does: the buffer and the
    /// windowed frame (`frame_size` < 1 means the whole buffer) must be
    /// powers of two, and the frame a multiple of the block size.
    fn open(world: &World, fbufnum: f32, frame_size: f32, window: Window) -> Option<Frame> {
        let buf = frame_buffer(world, fbufnum)?;
        let full = world.buf(buf)?.samples();
        let frame_size = trunc_i32(frame_size as f64);
        let audio = if frame_size < 1 { full } else { full.min(frame_size as usize) };
        let block = world.block_size;
        if !full.is_power_of_two() || !audio.is_power_of_two() || audio < MIN_SIZE || audio % block != 0 {
            return None;
        }
        if !(MIN_SIZE..=MAX_SIZE).contains(&full) {
            return None;
        }
        Some(Frame { buf, full, audio, window: window.table(audio), fft: RealFft::new(full), scratch: fallible::zeroed(full) })
    }
}

/// `FFT(buffer, in, hop, wintype, active, winsize)`.
pub struct Fft {
    frame: Option<Frame>,
    bufnum: f32,
    /// The last `audio` input samples, oldest first.
    inbuf: Vec<f32>,
    pos: usize,
    hop: usize,
    shunt: usize,
    /// Samples taken per block: a block for audio input, else one value.
    per_block: usize,
}

impl Construct for Fft {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let window = Window::from_input(io.in0(3));
        let frame = Frame::open(cx.world, io.in0(0), io.in0(5), window);
        let block = cx.world.block_size;
        let (audio, bufnum) = match &frame {
            Some(f) => (f.audio, f.buf as f32),
            None => (0, -1.0),
        };
        let mut hop = (io.in0(2).min(1.0).max(0.0) * audio as f32) as i32 as usize;
        if hop < block {
            hop = block;
        } else {
            hop -= hop % block;
        }
        let per_block = if io.in_rate(1) == Rate::Audio { block } else { 1 };
        let first = if frame.is_some() { io.in0(0) } else { -1.0 };
        io.out(0)[0] = first;
        Fft { frame, bufnum, inbuf: fallible::zeroed(audio), pos: 0, hop, shunt: audio.saturating_sub(hop), per_block }
    }
}

impl Unit for Fft {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(frame) = self.frame.as_mut() else {
            io.out(0)[0] = -1.0;
            return;
        };
        let n = self.per_block;
        let start = self.pos + self.shunt;
        self.inbuf[start..start + n].copy_from_slice(&io.inp(1)[..n]);
        self.pos += n;
        let gate = io.in0(4) > 0.0;
        let buf = cx.world.buf_mut(frame.buf).filter(|b| b.is_allocated() && b.samples() == frame.full);
        let Some(buf) = buf.filter(|_| self.pos == self.hop) else {
            if self.pos == self.hop {
                self.pos = 0;
            }
            io.out(0)[0] = -1.0;
            return;
        };
        self.pos = 0;
        if gate {
            let audio = frame.audio;
            frame.scratch[..audio].copy_from_slice(&self.inbuf);
            apply_window(&mut frame.scratch[..audio], &frame.window);
            frame.scratch[audio..].fill(0.0);
            frame.fft.forward(&frame.scratch, &mut buf.data[..frame.full]);
            coord::set_coord(buf, Coord::Complex);
            io.out(0)[0] = self.bufnum;
        } else {
            io.out(0)[0] = -1.0;
        }
        self.inbuf.copy_within(self.hop.., 0);
    }
}

/// `IFFT(chain, wintype, winsize)`.
pub struct Ifft {
    frame: Option<Frame>,
    /// Overlap-added output waiting to be played.
    ola: Vec<f32>,
    pos: usize,
}

impl Construct for Ifft {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let window = Window::from_input(io.in0(1));
        let frame = Frame::open(cx.world, io.in0(0), io.in0(2), window);
        let audio = frame.as_ref().map_or(0, |f| f.audio);
        io.out(0).fill(0.0);
        Ifft { frame, ola: fallible::zeroed(audio), pos: 0 }
    }
}

impl Unit for Ifft {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(frame) = self.frame.as_mut() else {
            io.out(0).fill(0.0);
            return;
        };
        let audio = frame.audio;
        if io.in0(0) >= 0.0 {
            let buf = cx.world.buf_mut(frame.buf).filter(|b| b.is_allocated() && b.samples() == frame.full);
            if let Some(buf) = buf {
                coord::to_complex(buf);
                frame.fft.inverse(&buf.data[..frame.full], &mut frame.scratch);
                let time = &mut frame.scratch[..audio];
                apply_window(time, &frame.window);
                let scale = 1.0 / frame.full as f32;
                for x in time.iter_mut() {
                    *x *= scale;
                }
                frame.scratch[audio..].fill(0.0);
                // The buffer now holds the frame's samples, as scsynth leaves it.
                buf.data[..frame.full].copy_from_slice(&frame.scratch);
                let hop = self.pos.min(audio);
                let keep = audio - hop;
                self.ola.copy_within(hop.., 0);
                for (o, x) in self.ola[..keep].iter_mut().zip(&frame.scratch[..keep]) {
                    *o += *x;
                }
                self.ola[keep..].copy_from_slice(&frame.scratch[keep..audio]);
                self.pos = 0;
            }
        }
        let n = io.n();
        let out = io.out(0);
        if self.pos >= audio {
            out.fill(0.0);
        } else {
            out.copy_from_slice(&self.ola[self.pos..self.pos + n]);
            self.pos += n;
        }
    }
}

/// `FFTTrigger(buffer, hop, polar)`: outputs the buffer's number every
/// `hop` of a frame, without transforming anything, and marks the buffer as
/// holding a complex or (`polar` = 1) a polar spectrum.
pub struct FftTrigger {
    bufnum: f32,
    periods: i32,
    remain: i32,
}

impl Construct for FftTrigger {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let fbufnum = io.in0(0);
        let count = cx.world.num_bufs() + cx.world.num_local_bufs();
        let index = if fbufnum >= 0.0 && (fbufnum as u32 as usize) < count { fbufnum as u32 as usize } else { 0 };
        let block = cx.world.block_size as f32;
        let hop = io.in0(1);
        let form = if io.in0(2) == 1.0 { Coord::Polar } else { Coord::Complex };
        let samples = match cx.world.buf_mut(index) {
            Some(buf) => {
                if buf.is_allocated() {
                    coord::set_coord(buf, form);
                }
                buf.samples()
            }
            None => 0,
        };
        let periods = trunc_i32(((samples as f32 * hop) / block) as f64).wrapping_sub(1);
        io.out(0)[0] = fbufnum;
        FftTrigger { bufnum: index as f32, periods, remain: periods }
    }
}

impl Unit for FftTrigger {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        if self.remain > 0 {
            io.out(0)[0] = -1.0;
            self.remain -= 1;
        } else {
            io.out(0)[0] = self.bufnum;
            self.remain = self.periods;
        }
    }
}
