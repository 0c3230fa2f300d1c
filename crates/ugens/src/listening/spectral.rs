//! Spectral statistics of an FFT chain: centroid, flatness and percentile.
//!
//! Each runs on the blocks where its chain carries a frame and holds its
//! last value on the others.

use crate::common::spectrum::{self as coord, num_bins};
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

/// The buffer a chain value names, on blocks where the chain fires. Writes
/// `held` to the output on the others.
pub(crate) fn frame_buffer<'w>(io: &mut Wires<'_>, cx: &'w mut UnitCtx<'_>, held: f32) -> Option<&'w mut SndBuf> {
    let fbufnum = io.in0(0);
    if fbufnum < 0.0 {
        io.out(0)[0] = held;
        return None;
    }
    io.out(0)[0] = fbufnum;
    let index = resolve_buffer_index(cx.world, fbufnum)?;
    cx.world.buf_mut(index).filter(|b| b.samples() >= 2)
}

/// `SpecCentroid.kr(chain)`: the magnitude-weighted mean frequency.
pub struct SpecCentroid {
    value: f32,
    bin_to_freq: f32,
}

impl Construct for SpecCentroid {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        io.out(0)[0] = 0.0;
        SpecCentroid { value: 0.0, bin_to_freq: 0.0 }
    }
}

impl Unit for SpecCentroid {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let full_sr = cx.world.full_rate.sample_rate;
        let Some(buf) = frame_buffer(io, cx, self.value) else { return };
        coord::to_polar(buf);
        let samples = buf.samples();
        if self.bin_to_freq == 0.0 {
            self.bin_to_freq = (full_sr / samples as f64) as f32;
        }
        let bins = num_bins(samples);
        let d = &buf.data;
        let nyq = d[1].abs();
        let mut num = (nyq * (bins + 1) as f32) as f64;
        let mut denom = nyq as f64;
        for i in 0..bins {
            let m = d[2 + 2 * i].abs();
            num += (m * (i + 1) as f32) as f64;
            denom += m as f64;
        }
        self.value = if denom == 0.0 { 0.0 } else { (self.bin_to_freq as f64 * num / denom) as f32 };
        io.out(0)[0] = self.value;
    }
}

/// `SpecFlatness.kr(chain)`: geometric over arithmetic mean of the magnitudes.
pub struct SpecFlatness {
    value: f32,
    one_over_n: f64,
}

impl Construct for SpecFlatness {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        io.out(0)[0] = 0.0;
        SpecFlatness { value: 0.0, one_over_n: 0.0 }
    }
}

impl Unit for SpecFlatness {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(buf) = frame_buffer(io, cx, self.value) else { return };
        let bins = num_bins(buf.samples());
        if self.one_over_n == 0.0 {
            self.one_over_n = 1.0 / (bins + 2) as f64;
        }
        coord::to_complex(buf);
        let d = &buf.data;
        let (dc, nyq) = (d[0].abs(), d[1].abs());
        let mut geo = dc.ln() as f64 + nyq.ln() as f64;
        let mut mean = (dc + nyq) as f64;
        for i in 0..bins {
            let (re, im) = (d[2 + 2 * i], d[3 + 2 * i]);
            let amp = (re * re + im * im).sqrt();
            // Zero bins would make the logarithm infinite.
            if amp != 0.0 {
                geo += amp.ln() as f64;
                mean += amp as f64;
            }
        }
        let geo = (geo * self.one_over_n).exp();
        mean *= self.one_over_n;
        // Silence has no flatness; the value of very quiet white noise stands in.
        self.value = if mean == 0.0 { 0.8 } else { (geo / mean) as f32 };
        io.out(0)[0] = self.value;
    }
}

/// `SpecPcile.kr(chain, fraction, interpolate, binout)`: the frequency (or
/// bin) below which the given fraction of the magnitude sum lies.
pub struct SpecPcile {
    value: f32,
    bins: Option<usize>,
    scale: f32,
    interpolate: bool,
    bin_out: bool,
}

impl Construct for SpecPcile {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let interpolate = io.num_inputs() > 2 && io.in0(2) > 0.0;
        // Older SynthDefs carry no `binout` input.
        let bin_out = io.num_inputs() > 3 && io.in0(3) > 0.0;
        io.out(0)[0] = 0.0;
        SpecPcile { value: 0.0, bins: None, scale: 0.0, interpolate, bin_out }
    }
}

impl Unit for SpecPcile {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let sr = cx.world.sample_rate;
        let fraction = io.in0(1);
        let Some(buf) = frame_buffer(io, cx, self.value) else { return };
        let bins = num_bins(buf.samples());
        match self.bins {
            None => {
                self.bins = Some(bins);
                self.scale = sr as f32 * 0.5 / (bins + 2) as f32;
            }
            Some(b) if b != bins => return,
            Some(_) => {}
        }
        coord::to_complex(buf);
        let d = &buf.data;
        let mag = |i: usize| {
            let (re, im) = (d[2 + 2 * i], d[3 + 2 * i]);
            (re * re + im * im).sqrt()
        };
        // The running sums are recomputed in the second pass rather than
        // stored; they come out the same.
        let mut total = d[0].abs();
        for i in 0..bins {
            total += mag(i);
        }
        total += d[1].abs();
        let target = total * fraction;
        let mut best = 0.0f32;
        let mut prev = d[0].abs();
        for i in 0..bins {
            let cumul = prev + mag(i);
            if !(cumul < target) {
                let step = (cumul - target) / (cumul - prev);
                best = if self.bin_out {
                    if self.interpolate && i != 0 {
                        i as f32 + step
                    } else {
                        i as f32
                    }
                } else {
                    let pos = if self.interpolate && i != 0 { i as f32 + 1.0 - step } else { i as f32 + 1.0 };
                    pos * self.scale
                };
                break;
            }
            prev = cumul;
        }
        self.value = best;
        io.out(0)[0] = self.value;
    }
}

/// Samples of the buffer the chain input names when the unit is built, so
/// that units keeping per-bin state can make room for it up front.
pub(crate) fn ctor_samples(io: &Wires<'_>, cx: &UnitCtx<'_>) -> usize {
    let fbufnum = io.in0(0);
    if fbufnum < 0.0 {
        return 0;
    }
    resolve_buffer_index(cx.world, fbufnum).and_then(|i| cx.world.buf(i)).map_or(0, |b| b.samples())
}
