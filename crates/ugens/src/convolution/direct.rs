//! Convolution3: convolution in the time domain against a kernel buffer.
//!
//! Each input sample adds the kernel, scaled by the sample, into a ring of
//! `framesize` sums starting at the sample's place. As in scsynth, a sum is
//! never cleared once it has been played, so the ring keeps adding up
//! everything that has passed through it.

use super::spectral::{kernel_buffer, load_kernel};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// `Convolution3(in, kernel, trigger, framesize)`.
pub struct Convolution3 {
    /// `None` when the kernel buffer was missing at construction.
    kernel: Option<Vec<f32>>,
    ring: Vec<f32>,
    pos: usize,
    prevtrig: f32,
    audio_in: bool,
}

impl Construct for Convolution3 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let audio_in = io.in_rate(0) == Rate::Audio;
        let off = Convolution3 { kernel: None, ring: Vec::new(), pos: 0, prevtrig: 0.0, audio_in };
        let Some(buf) = kernel_buffer(cx.world, io.in0(1)) else {
            io.out(0)[0] = 0.0;
            cx.set_done(true);
            return off;
        };
        let mut framesize = crate::common::signal::trunc_i32(io.in0(3) as f64);
        if framesize <= 0 {
            framesize = buf.frames as i32;
        }
        let size = usize::try_from(framesize).unwrap_or(0);
        if size == 0 {
            io.out(0)[0] = 0.0;
            return off;
        }
        let mut kernel = crate::unit::unit_samples(size);
        load_kernel(&mut kernel, buf, size);
        io.out(0)[0] = io.in0(0);
        Convolution3 { kernel: Some(kernel), ring: crate::unit::unit_samples(size), pos: 0, prevtrig: 0.0, audio_in }
    }
}

impl Convolution3 {
    /// Reloads the kernel on a rising trigger; false when the buffer is gone.
    fn watch(&mut self, io: &Wires<'_>, cx: &UnitCtx<'_>) -> bool {
        let curtrig = io.in0(2);
        if self.prevtrig <= 0.0 && curtrig > 0.0 {
            let Some(buf) = kernel_buffer(cx.world, io.in0(1)) else { return false };
            if let Some(k) = self.kernel.as_mut() {
                let len = k.len();
                // Only what the buffer holds is replaced.
                let take = len.min(buf.data.len());
                k[..take].copy_from_slice(&buf.data[..take]);
            }
        }
        true
    }
}

impl Unit for Convolution3 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.kernel.is_none() {
            io.out(0).fill(0.0);
            return;
        }
        if !self.watch(io, cx) {
            self.kernel = None;
            io.out(0).fill(0.0);
            cx.set_done(true);
            return;
        }
        let Some(kernel) = self.kernel.as_ref() else { return };
        let size = kernel.len();
        let pos = self.pos;
        if self.audio_in {
            let n = io.n();
            let input = io.inp(0);
            for (j, &x) in input.iter().take(n).enumerate() {
                for (i, &k) in kernel.iter().enumerate() {
                    let ind = (pos + i + j) % size;
                    self.ring[ind] += k * x;
                }
            }
            let out = io.out(0);
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.ring[(pos + i) % size];
            }
            let next = pos + n;
            self.pos = if next > size { next - size } else { next };
        } else {
            let x = io.in0(0);
            for (i, &k) in kernel.iter().enumerate() {
                let ind = (pos + i) % size;
                self.ring[ind] += k * x;
            }
            // scsynth lets the position reach `size` for one block and then
            // reads one past its ring; nothing is known there, so 0 stands in.
            let value = self.ring.get(pos).copied().unwrap_or(0.0);
            io.out(0)[0] = value;
            self.pos = if pos + 1 > size { 0 } else { pos + 1 };
        }
        self.prevtrig = io.in0(2);
    }
}
