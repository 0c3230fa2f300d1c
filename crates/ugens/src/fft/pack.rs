//! Units that write or read single bins of a spectrum chain (PackFFT,
//! Unpack1FFT) and PV_ConformalMap, which maps every bin through a Möbius
//! transform of the unit disc.

use crate::common::spectrum::{self as coord, num_bins};
use super::pv::{Form, OneBuffer, Spec};
use crate::common::buffer::resolve_buffer_index;
use crate::rgen::RGen;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;
use std::cell::Cell;

/// Where PackFFT's magnitude and phase inputs start.
const PACK_INPUTS: usize = 6;

/// `PackFFT(chain, bufsize, frombin, tobin, zeroothers, numvals, mag0, phase0, ...)`:
/// writes bins `frombin..=tobin` of the chain's spectrum from magnitude and
/// phase inputs, optionally zeroing the others.
pub struct PackFft {
    frombin: i32,
    tobin: i32,
    zero_others: bool,
    numinvals: i32,
    /// Values read this frame: DC, Nyquist, then magnitude and phase pairs.
    values: Vec<f32>,
}

impl Construct for PackFft {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let unit = PackFft {
            frombin: io.in0(2) as i32,
            tobin: io.in0(3) as i32,
            zero_others: io.in0(4) > 0.0,
            numinvals: io.in0(5) as i32,
            values: vec![0.0; io.num_inputs() + 2],
        };
        io.out(0)[0] = io.in0(0);
        unit
    }
}

impl PackFft {
    /// Input `i` (a demand-rate unit gives its next value); inputs past the
    /// last read as 0.
    fn read(io: &Wires<'_>, cx: &mut UnitCtx<'_>, i: i32) -> f32 {
        match usize::try_from(i) {
            Ok(i) if i < io.num_inputs() => cx.demand_input(io, i),
            _ => 0.0,
        }
    }
}

impl Unit for PackFft {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let fbufnum = io.in0(0);
        if fbufnum < 0.0 {
            io.out(0)[0] = -1.0;
            return;
        }
        let Some(index) = resolve_buffer_index(cx.world, fbufnum) else { return };
        let Some(samples) = cx.world.buf(index).map(|b| b.samples()) else { return };
        let numbins = (samples as i32 - 2) >> 1;
        let (from, to) = (self.frombin, self.tobin);
        let base = PACK_INPUTS as i32;
        let dc = (from == 0).then(|| Self::read(io, cx, base));
        let nyq = (to == numbins + 1).then(|| Self::read(io, cx, base + self.numinvals - 2 - 2 * from));
        let start = if from == 0 { 0 } else { from - 1 };
        let end = numbins.min(to);
        let mut k = 0;
        for i in start..end {
            if k + 1 >= self.values.len() {
                break;
            }
            self.values[k] = Self::read(io, cx, 2 * i + base + 2 - 2 * from);
            self.values[k + 1] = Self::read(io, cx, 2 * i + base + 3 - 2 * from);
            k += 2;
        }
        let Some(buf) = cx.world.buf_mut(index) else { return };
        coord::to_complex(buf);
        let zero = self.zero_others;
        let data = &mut buf.data;
        if data.len() < 2 {
            return;
        }
        if let Some(v) = dc {
            data[0] = v;
        } else if zero {
            data[0] = 0.0;
        }
        if let Some(v) = nyq {
            data[1] = v;
        } else if zero {
            data[1] = 0.0;
        }
        let bins = usize::try_from(numbins).unwrap_or(0).min(num_bins(data.len()));
        for (j, i) in (start..end).enumerate().take(k / 2) {
            let Ok(i) = usize::try_from(i) else { continue };
            if i >= bins {
                break;
            }
            let (mag, phase) = (self.values[2 * j], self.values[2 * j + 1]);
            data[2 + 2 * i] = mag * phase.cos();
            data[3 + 2 * i] = mag * phase.sin();
        }
        if zero {
            let start = usize::try_from(start).unwrap_or(0).min(bins);
            let end = usize::try_from(end).unwrap_or(0).min(bins);
            data[2..2 + 2 * start].fill(0.0);
            if end < bins {
                data[2 + 2 * end..2 + 2 * bins].fill(0.0);
            }
        }
        io.out(0)[0] = fbufnum;
    }
}

/// What Unpack1FFT reads from its bin.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Measure {
    Dc,
    Nyquist,
    Magnitude,
    Phase,
    /// The phase of DC or Nyquist: always 0.
    Zero,
}

/// `Unpack1FFT(chain, bufsize, binindex, whichmeasure)`: the magnitude
/// (`whichmeasure` 0) or phase (1) of one bin, held between frames.
pub struct Unpack1Fft {
    measure: Measure,
    bin: i32,
    outval: f32,
    latest: Option<i32>,
}

impl Construct for Unpack1Fft {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let bufsize = io.in0(1) as i32;
        let bin = io.in0(2) as i32;
        let edge = |a: Measure, b: Measure| if bin == 0 { Some(a) } else if bin == bufsize >> 1 { Some(b) } else { None };
        let measure = if io.in0(3) == 0.0 {
            edge(Measure::Dc, Measure::Nyquist).unwrap_or(Measure::Magnitude)
        } else {
            edge(Measure::Zero, Measure::Zero).unwrap_or(Measure::Phase)
        };
        io.out(0)[0] = 0.0;
        Unpack1Fft { measure, bin, outval: 0.0, latest: None }
    }
}

impl Unpack1Fft {
    fn read(&self, buf: &SndBuf) -> f32 {
        let d = &buf.data;
        let pair = || {
            let i = usize::try_from(self.bin - 1).ok().filter(|&i| 3 + 2 * i < d.len());
            i.map(|i| (d[2 + 2 * i], d[3 + 2 * i]))
        };
        match self.measure {
            Measure::Dc => d.first().copied().unwrap_or(0.0),
            Measure::Nyquist => d.get(1).copied().unwrap_or(0.0),
            Measure::Magnitude => pair().map_or(0.0, |(re, im)| re.hypot(im)),
            Measure::Phase => pair().map_or(0.0, |(re, im)| im.atan2(re)),
            Measure::Zero => 0.0,
        }
    }
}

impl Unit for Unpack1Fft {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.measure == Measure::Zero {
            io.out(0).fill(0.0);
            return;
        }
        let counter = cx.world.buf_counter;
        if self.latest != Some(counter) {
            let fbufnum = io.in0(0);
            if fbufnum < 0.0 {
                io.out(0)[0] = self.outval;
                return;
            }
            if let Some(buf) = resolve_buffer_index(cx.world, fbufnum).and_then(|i| cx.world.buf_mut(i)) {
                coord::to_complex(buf);
                self.outval = self.read(buf);
            }
            self.latest = Some(counter);
        }
        io.out(0)[0] = self.outval;
    }
}

/// `PV_ConformalMap(chain, areal, aimag)`: maps each bin z to
/// (z − a) / (1 − z·conj(a)).
pub struct ConformalMap;

impl OneBuffer for ConformalMap {
    const FORM: Form = Form::Complex;
    fn new(_io: &Wires<'_>, _samples: usize) -> Self {
        ConformalMap
    }
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, _rgen: &mut RGen) {
        let (ar, ai) = (io.in0(1), io.in0(2));
        let p = Spec(Cell::from_mut(&mut buf.data[..]).as_slice_of_cells());
        for i in 0..p.bins() {
            let (zr, zi) = (p.a(i).get(), p.b(i).get());
            let mut numr = zr - ar;
            let mut numi = zi - ai;
            let dr = 1.0 - (zr * ar + zi * ai);
            let di = zr * ai - ar * zi;
            numr = numr * dr + numi * di;
            // scsynth uses the new real part here, which bends the map.
            numi = numi * dr - numr * di;
            let mut den = dr * dr + di * di;
            if den < 0.001 {
                den = 0.001;
            }
            let den = 1.0 / den;
            p.a(i).set(numr * den);
            p.b(i).set(numi * den);
        }
    }
}
