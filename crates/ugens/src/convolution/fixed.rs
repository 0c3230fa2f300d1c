//! Convolution, Convolution2 and Convolution2L: block convolution by FFT
//! with overlap-add. Each frame of `framesize` input samples is zero-padded
//! to twice its length, transformed, multiplied by the kernel's spectrum
//! and transformed back; the frame's second half is added to the next.

use super::spectral::{kernel_buffer, load_kernel, multiply, multiply_in_place, Transform};
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// The input side and the overlap-add output side of a convolver.
struct Frames {
    framesize: usize,
    fft: Transform,
    pos: usize,
    /// Input samples of the frame being gathered.
    inbuf: Vec<f32>,
    /// The input frame, then its spectrum.
    spectrum: Vec<f32>,
    /// The last frame's convolution (`2 × framesize` samples).
    outbuf: Vec<f32>,
    /// The second half of the frame before it.
    overlap: Vec<f32>,
}

impl Frames {
    /// `None` when the sizes cannot run: the transform must be a power of
    /// two scsynth's FFT accepts, and a frame a whole number of blocks
    /// (scsynth writes past its frame otherwise).
    fn new(framesize: usize, block: usize) -> Option<Frames> {
        let fft = Transform::new(framesize.checked_mul(2)?)?;
        if framesize < block || framesize % block != 0 {
            return None;
        }
        Some(Frames {
            framesize,
            fft,
            pos: 0,
            inbuf: crate::unit::unit_samples(framesize),
            spectrum: crate::unit::unit_samples(2 * framesize),
            outbuf: crate::unit::unit_samples(2 * framesize),
            overlap: crate::unit::unit_samples(framesize),
        })
    }

    /// Appends a block of input.
    fn gather(&mut self, input: &[f32], n: usize) {
        copy_block(&mut self.inbuf[self.pos..self.pos + n], input);
        self.pos += n;
    }

    /// Zero-pads the gathered frame and transforms it into `spectrum`.
    fn transform_input(&mut self) {
        let fs = self.framesize;
        self.spectrum[..fs].copy_from_slice(&self.inbuf);
        self.spectrum[fs..].fill(0.0);
        self.fft.forward(&mut self.spectrum);
    }

    /// Keeps the old frame's tail as overlap before `outbuf` is replaced.
    fn shift_overlap(&mut self) {
        let fs = self.framesize;
        self.overlap.copy_from_slice(&self.outbuf[fs..]);
    }

    fn write(&self, out: &mut [f32]) {
        let p = self.pos;
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.outbuf[p + i] + self.overlap[p + i];
        }
    }
}

/// Copies a block input (a whole block for audio inputs, else the one value
/// repeated) into `dst`.
fn copy_block(dst: &mut [f32], input: &[f32]) {
    if input.len() >= dst.len() {
        dst.copy_from_slice(&input[..dst.len()]);
    } else {
        dst.fill(input[0]);
    }
}

/// The frame size input as scsynth reads it (an int; negatives mean none).
fn int_input(v: f32) -> i32 {
    crate::common::signal::trunc_i32(v as f64)
}

fn size_of(v: i32) -> usize {
    usize::try_from(v).unwrap_or(0)
}

/// `Convolution(in, kernel, framesize)`: convolves two audio signals, each
/// frame of the input with the same frame of the kernel signal.
pub struct Convolution {
    frames: Option<Frames>,
    kernel_in: Vec<f32>,
    kernel_spec: Vec<f32>,
}

impl Construct for Convolution {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let framesize = size_of(int_input(io.in0(2)));
        let frames = Frames::new(framesize, cx.world.block_size);
        let first = if frames.is_some() { io.in0(0) } else { 0.0 };
        io.out(0)[0] = first;
        if frames.is_none() {
            cx.set_done(true);
        }
        let len = if frames.is_some() { framesize } else { 0 };
        Convolution { frames, kernel_in: crate::unit::unit_samples(len), kernel_spec: crate::unit::unit_samples(2 * len) }
    }
}

impl Unit for Convolution {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let Some(f) = self.frames.as_mut() else {
            io.out(0).fill(0.0);
            return;
        };
        let n = io.n();
        let start = f.pos;
        f.gather(io.inp(0), n);
        copy_block(&mut self.kernel_in[start..start + n], io.inp(1));
        let fs = f.framesize;
        // The frame is due when the position reaches the frame size's bit.
        if f.pos & fs != 0 {
            f.pos = 0;
            f.transform_input();
            self.kernel_spec[..fs].copy_from_slice(&self.kernel_in);
            self.kernel_spec[fs..].fill(0.0);
            f.fft.forward(&mut self.kernel_spec);
            multiply_in_place(&mut f.spectrum, &self.kernel_spec, 2 * fs);
            f.shift_overlap();
            f.outbuf.copy_from_slice(&f.spectrum);
            f.fft.inverse(&mut f.outbuf);
        }
        f.write(io.out(0));
    }
}

/// `Convolution2(in, kernel, trigger, framesize)`: convolves with a kernel
/// buffer, whose spectrum is taken again on each rising trigger.
pub struct Convolution2 {
    frames: Option<Frames>,
    kernel_spec: Vec<f32>,
    prevtrig: f32,
}

impl Construct for Convolution2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let off = Convolution2 { frames: None, kernel_spec: Vec::new(), prevtrig: 0.0 };
        let Some(kernel) = kernel_buffer(cx.world, io.in0(1)) else {
            io.out(0)[0] = 0.0;
            cx.set_done(true);
            return off;
        };
        let mut framesize = int_input(io.in0(3));
        if framesize <= 0 {
            framesize = kernel.frames as i32;
        }
        let framesize = size_of(framesize);
        let Some(frames) = Frames::new(framesize, cx.world.block_size) else {
            io.out(0)[0] = 0.0;
            cx.set_done(true);
            return off;
        };
        let mut kernel_spec = crate::unit::unit_samples(2 * framesize);
        load_kernel(&mut kernel_spec, kernel, (kernel.frames as usize).min(framesize));
        let mut unit = Convolution2 { frames: Some(frames), kernel_spec, prevtrig: 0.0 };
        if let Some(f) = unit.frames.as_mut() {
            f.fft.forward(&mut unit.kernel_spec);
        }
        io.out(0)[0] = io.in0(0);
        unit
    }
}

impl Unit for Convolution2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(f) = self.frames.as_mut() else {
            io.out(0).fill(0.0);
            return;
        };
        let n = io.n();
        let curtrig = io.in0(2);
        f.gather(io.inp(0), n);
        let fs = f.framesize;
        if self.prevtrig <= 0.0 && curtrig > 0.0 {
            let Some(kernel) = kernel_buffer(cx.world, io.in0(1)) else {
                // A missing kernel stops the unit for good.
                self.frames = None;
                io.out(0).fill(0.0);
                cx.set_done(true);
                return;
            };
            load_kernel(&mut self.kernel_spec, kernel, (kernel.frames as usize).min(fs));
            f.fft.forward(&mut self.kernel_spec);
        }
        if f.pos >= fs {
            f.pos = 0;
            f.transform_input();
            multiply_in_place(&mut f.spectrum, &self.kernel_spec, 2 * fs);
            f.shift_overlap();
            f.outbuf.copy_from_slice(&f.spectrum);
            f.fft.inverse(&mut f.outbuf);
        }
        self.prevtrig = curtrig;
        f.write(io.out(0));
    }
}

/// `Convolution2L(in, kernel, trigger, framesize, crossfade)`: as
/// Convolution2, but a new kernel fades in linearly over `crossfade` frames.
pub struct Convolution2L {
    frames: Option<Frames>,
    /// The two kernel spectra: the current one and the one fading in.
    kernels: [Vec<f32>; 2],
    temp: Vec<f32>,
    cflength: i32,
    cfpos: i32,
    curbuf: usize,
    prevtrig: f32,
}

impl Construct for Convolution2L {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let framesize = size_of(int_input(io.in0(3)));
        let cflength = int_input(io.in0(4));
        let mut unit = Convolution2L {
            frames: None,
            kernels: [Vec::new(), Vec::new()],
            temp: Vec::new(),
            cflength,
            cfpos: cflength,
            curbuf: 0,
            prevtrig: 0.0,
        };
        let frames = Frames::new(framesize, cx.world.block_size);
        let kernel = kernel_buffer(cx.world, io.in0(1));
        let (Some(mut frames), Some(kernel)) = (frames, kernel) else {
            io.out(0)[0] = 0.0;
            cx.set_done(true);
            return unit;
        };
        let mut k0 = crate::unit::unit_samples(2 * framesize);
        load_kernel(&mut k0, kernel, framesize);
        frames.fft.forward(&mut k0);
        unit.kernels = [k0, crate::unit::unit_samples(2 * framesize)];
        unit.temp = crate::unit::unit_samples(2 * framesize);
        unit.frames = Some(frames);
        io.out(0)[0] = io.in0(0);
        unit
    }
}

impl Unit for Convolution2L {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(f) = self.frames.as_mut() else {
            io.out(0).fill(0.0);
            return;
        };
        let n = io.n();
        let curtrig = io.in0(2);
        f.gather(io.inp(0), n);
        let fs = f.framesize;
        let size = 2 * fs;
        if self.prevtrig <= 0.0 && curtrig > 0.0 {
            let Some(kernel) = kernel_buffer(cx.world, io.in0(1)) else {
                self.frames = None;
                io.out(0).fill(0.0);
                cx.set_done(true);
                return;
            };
            self.cflength = int_input(io.in0(4));
            self.cfpos = 0;
            // The new kernel goes into the slot not in use.
            let slot = &mut self.kernels[1 - self.curbuf];
            load_kernel(slot, kernel, fs);
            f.fft.forward(slot);
        }
        if f.pos & fs != 0 {
            f.pos = 0;
            f.transform_input();
            multiply(&mut self.temp, &f.spectrum, &self.kernels[self.curbuf], size);
            f.shift_overlap();
            f.outbuf.copy_from_slice(&self.temp);
            f.fft.inverse(&mut f.outbuf);
            if self.cfpos < self.cflength {
                multiply_in_place(&mut f.spectrum, &self.kernels[1 - self.curbuf], size);
                self.temp.copy_from_slice(&f.spectrum);
                f.fft.inverse(&mut self.temp);
                let mut fact = self.cfpos as f32 / self.cflength as f32;
                let rc = 1.0 / self.cflength.wrapping_mul(fs as i32) as f32;
                for i in 0..fs {
                    f.outbuf[i] = (1.0 - fact) * f.outbuf[i] + fact * self.temp[i];
                    fact += rc;
                }
                if self.cflength == 1 {
                    f.outbuf[fs..].copy_from_slice(&self.temp[fs..]);
                } else {
                    // The fade skips the first sample of the second half, as scsynth's does.
                    for i in fs + 1..size {
                        f.outbuf[i] = (1.0 - fact) * f.outbuf[i] + fact * self.temp[i];
                        fact += rc;
                    }
                }
                self.cfpos += 1;
                if self.cfpos == self.cflength {
                    self.curbuf = 1 - self.curbuf;
                }
            }
        }
        self.prevtrig = curtrig;
        f.write(io.out(0));
    }
}
