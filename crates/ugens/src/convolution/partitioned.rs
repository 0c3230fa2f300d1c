//! PartConv: convolution with a long impulse response cut into partitions,
//! and the buffer preparation (`/b_gen ... "PreparePartConv"`) that stores
//! the partitions' spectra.
//!
//! Every half frame of input is transformed once; its product with the
//! first partition's spectrum is played right away, and the products with
//! the later partitions are added into a ring of future frames over the
//! blocks that follow (spread evenly, so that no block does all the work).

use super::spectral::Transform;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

/// Why a buffer could not be prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreparePartConvError {
    BadFftSize(i32),
    NotAllocated(usize),
}

// Written out by hand: this crate does not depend on thiserror.
impl std::fmt::Display for PreparePartConvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadFftSize(n) => write!(f, "PreparePartConv: FFT size {n} is not a power of two scsynth's FFT accepts"),
            Self::NotAllocated(b) => write!(f, "PreparePartConv: buffer {b} is not allocated"),
        }
    }
}

impl std::error::Error for PreparePartConvError {}

/// `/b_gen dest "PreparePartConv" source fftsize`: writes into `buffers[dest]`
/// the spectra of `source`'s samples cut into partitions of `fftsize / 2`,
/// each zero-padded to `fftsize`; partition `k` fills samples
/// `k·fftsize .. (k+1)·fftsize`. `args` are the command's arguments after its
/// name (source buffer, FFT size); a source number past the last buffer
/// means buffer 0, as in scsynth. The destination should hold
/// `fftsize × ceil(2·frames / fftsize)` samples; what does not fit is left out.
pub fn prepare_part_conv(buffers: &mut [SndBuf], dest: usize, args: &[f32]) -> Result<(), PreparePartConvError> {
    let arg = |i: usize| args.get(i).map_or(0, |&v| v as i32);
    let source = arg(0) as u32 as usize;
    let fftsize = arg(1);
    let source = if source >= buffers.len() { 0 } else { source };
    if buffers.get(dest).is_none_or(|b| !b.is_allocated()) {
        return Err(PreparePartConvError::NotAllocated(dest));
    }
    let n = usize::try_from(fftsize).unwrap_or(0);
    let mut fft = Transform::new(n).ok_or(PreparePartConvError::BadFftSize(fftsize))?;
    let src = &buffers[source];
    let frames = src.frames as usize;
    let half = n / 2;
    let partitions = frames.div_ceil(half);
    let mut spectra = crate::unit::unit_samples(partitions * n);
    let mut frame = crate::unit::unit_samples(n);
    for (k, out) in spectra.chunks_exact_mut(n).enumerate() {
        let start = k * half;
        let take = half.min(frames - start);
        // The source is read as mono: its first `frames` samples.
        let have = src.data.len().saturating_sub(start).min(take);
        frame.fill(0.0);
        frame[..have].copy_from_slice(&src.data[start..start + have]);
        fft.forward(&mut frame);
        out.copy_from_slice(&frame);
    }
    let dst = &mut buffers[dest];
    let fit = spectra.len().min(dst.data.len());
    dst.data[..fit].copy_from_slice(&spectra[..fit]);
    Ok(())
}

/// The running state of a PartConv that could start.
struct Running {
    bufnum: usize,
    fftsize: usize,
    nover2: usize,
    /// Samples in the spectrum buffer: `partitions × fftsize`.
    fullsize: usize,
    fft: Transform,
    /// Input half frame, zero-padded to `fftsize`.
    input: Vec<f32>,
    spectrum: Vec<f32>,
    /// Scratch for one inverse transform.
    frame: Vec<f32>,
    output: Vec<f32>,
    /// Future frames' spectra, one `fftsize` slot per partition.
    accum: Vec<f32>,
    accum_pos: usize,
    pos: usize,
    outputpos: usize,
    spareblocks: i32,
    numamort: i32,
    lastamort: i32,
    /// -1 until the first frame; then counts the blocks since the last one.
    amortcount: i32,
    partitionsdone: i32,
}

/// `PartConv(in, fftsize, irbufnum)`.
pub struct PartConv {
    run: Option<Running>,
}

impl Construct for PartConv {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        io.out(0)[0] = 0.0;
        let run = Running::open(io, cx);
        if run.is_none() {
            cx.set_done(true);
        }
        PartConv { run }
    }
}

impl Running {
    fn open(io: &Wires<'_>, cx: &UnitCtx<'_>) -> Option<Running> {
        let fftsize = usize::try_from(io.in0(1) as i32).ok()?;
        let fft = Transform::new(fftsize)?;
        let nover2 = fftsize / 2;
        // Only global buffers: scsynth's lookup of local ones misses them.
        let bufnum = io.in0(2) as i32 as u32 as usize;
        if bufnum >= cx.world.num_bufs() {
            return None;
        }
        let buf = cx.world.buf(bufnum).filter(|b| b.is_allocated())?;
        let fullsize = buf.samples();
        if fullsize == 0 || fullsize % fftsize != 0 {
            return None;
        }
        let partitions = (fullsize / fftsize) as i32;
        let block = cx.world.block_size;
        if nover2 % block != 0 {
            return None;
        }
        let spareblocks = (nover2 / block) as i32 - 1;
        if spareblocks < 1 {
            return None;
        }
        let numamort = (partitions - 1) / spareblocks;
        let lastamort = (partitions - 1) - (spareblocks - 1) * numamort;
        Some(Running {
            bufnum,
            fftsize,
            nover2,
            fullsize,
            fft,
            input: crate::unit::unit_samples(fftsize),
            spectrum: crate::unit::unit_samples(fftsize),
            frame: crate::unit::unit_samples(fftsize),
            output: crate::unit::unit_samples(fftsize),
            accum: crate::unit::unit_samples(fullsize),
            accum_pos: 0,
            pos: 0,
            outputpos: 0,
            spareblocks,
            numamort,
            lastamort,
            amortcount: -1,
            partitionsdone: 1,
        })
    }

    /// Adds the spectrum's product with partition `ir_index` into the ring slot at `at`.
    fn accumulate(&mut self, ir: &[f32], ir_index: usize, at: usize) {
        let n = self.fftsize;
        let ir = &ir[ir_index * n..(ir_index + 1) * n];
        let s = &self.spectrum;
        let t = &mut self.accum[at..at + n];
        t[0] += ir[0] * s[0];
        t[1] += ir[1] * s[1];
        for j in 1..self.nover2 {
            let (r, i) = (2 * j, 2 * j + 1);
            t[r] += ir[r] * s[r] - ir[i] * s[i];
            t[i] += ir[i] * s[r] + ir[r] * s[i];
        }
    }

    fn block(&mut self, input: &[f32], out: &mut [f32], ir: &[f32]) {
        let n = out.len();
        let (fftsize, nover2) = (self.fftsize, self.nover2);
        let dst = &mut self.input[self.pos..self.pos + n];
        if input.len() >= n {
            dst.copy_from_slice(&input[..n]);
        } else {
            dst.fill(input[0]);
        }
        self.pos += n;
        if self.pos == nover2 {
            self.spectrum.copy_from_slice(&self.input);
            self.fft.forward(&mut self.spectrum);
            self.pos = 0;
            self.outputpos = 0;
            let at = self.accum_pos % self.fullsize;
            self.accumulate(ir, 0, at);
            let ap = self.accum_pos;
            self.frame.copy_from_slice(&self.accum[ap..ap + fftsize]);
            self.fft.inverse(&mut self.frame);
            self.output.copy_within(nover2.., 0);
            self.output[nover2..].fill(0.0);
            for (o, x) in self.output.iter_mut().zip(&self.frame) {
                *o += *x;
            }
            self.accum[ap..ap + fftsize].fill(0.0);
            self.accum_pos = (ap + fftsize) % self.fullsize;
            self.amortcount = 0;
            self.partitionsdone = 1;
        } else if self.amortcount >= 0 {
            let number = if self.amortcount == self.spareblocks - 1 { self.lastamort } else { self.numamort };
            let start = self.partitionsdone;
            self.partitionsdone += number;
            self.amortcount += 1;
            for i in start..start + number {
                let at = (self.accum_pos + (i as usize - 1) * fftsize) % self.fullsize;
                self.accumulate(ir, i as usize, at);
            }
        }
        out.copy_from_slice(&self.output[self.outputpos..self.outputpos + n]);
        self.outputpos += n;
    }
}

impl Unit for PartConv {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(run) = self.run.as_mut() else {
            io.out(0).fill(0.0);
            return;
        };
        // The spectra must still be there, at the size the unit started with.
        let ok = cx.world.buf(run.bufnum).is_some_and(|b| b.is_allocated() && b.data.len() >= run.fullsize);
        if !ok {
            self.run = None;
            io.out(0).fill(0.0);
            cx.set_done(true);
            return;
        }
        let Some(buf) = cx.world.buf(run.bufnum) else { return };
        let input = io.inp(0);
        let out = io.out(0);
        run.block(input, out, &buf.data[..run.fullsize]);
    }
}
