//! `Loudness` and `MFCC`: perceptual summaries of a 1024-point FFT chain.

use super::eql_tables::{CONTOURS, EQL_BAND_BINS, EQL_BAND_SIZES, PHONS};
use super::mfcc_tables as mt;
use crate::common::spectrum as coord;
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

const BANDS: usize = 42;

/// The buffer the chain names on blocks where it carries a frame (any value
/// above -0.01, as scsynth tests it).
fn chain_frame<'w>(fbufnum: f32, cx: &'w mut UnitCtx<'_>) -> Option<&'w mut SndBuf> {
    if !(fbufnum > -0.01) {
        return None;
    }
    let index = resolve_buffer_index(cx.world, fbufnum)?;
    cx.world.buf_mut(index)
}

#[inline]
fn at(data: &[f32], i: usize) -> f32 {
    data.get(i).copied().unwrap_or(0.0)
}

/// `Loudness.kr(chain, smask, tmask)`: loudness in sones, from the power in
/// 42 ERB-like bands mapped through equal-loudness contours.
pub struct Loudness {
    bands: [f32; BANDS],
    sones: f32,
}

impl Construct for Loudness {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut unit = Loudness { bands: [0.0; BANDS], sones: 0.0 };
        unit.next(io, cx);
        unit
    }
}

impl Loudness {
    fn frame(&mut self, data: &[f32], smask: f32, tmask: f32) {
        let mut loudsum = 0.0f32;
        for k in 0..BANDS {
            let start = EQL_BAND_BINS[k] as usize;
            let end = start + EQL_BAND_SIZES[k] as usize;
            let mut bsum = 0.0f32;
            let mut last = 0.0f32;
            for h in start..end {
                let (re, im) = (at(data, 2 * h), at(data, 2 * h + 1));
                // Leaky masking from the bin below.
                let power = (last * smask).max(re * re + im * im);
                last = power;
                bsum += power;
            }
            // The scale makes a reference tone come out at one sone.
            let mut db = (10.0 * ((bsum * 76032.936f32 + 0.001f32) as f64).log10()) as f32;
            let c = &CONTOURS[k];
            if db < c[0] {
                db = 0.0;
            } else if db > c[10] {
                db = PHONS[10] as f32;
            } else {
                let mut prop = 0.0f32;
                let mut j = 1;
                while j < 11 {
                    if db < c[j] {
                        prop = (db - c[j - 1]) / (c[j] - c[j - 1]);
                        break;
                    }
                    if j == 10 {
                        prop = 1.0;
                        break;
                    }
                    j += 1;
                }
                db = ((1.0 - prop) as f64 * PHONS[j - 1] + prop as f64 * PHONS[j]) as f32;
            }
            self.bands[k] = db.max(self.bands[k] - tmask);
            loudsum += (10f64.powf(0.1 * self.bands[k] as f64) - 0.001) as f32;
        }
        let phons = 10.0 * (loudsum as f64 + 0.001).log10();
        self.sones = 2f32.powf(((phons - 40.0) / 10.0) as f32);
    }
}

impl Unit for Loudness {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (smask, tmask) = (io.in0(1), io.in0(2));
        if let Some(buf) = chain_frame(io.in0(0), cx) {
            // The data is read as complex whatever form the buffer is in.
            self.frame(&buf.data, smask, tmask);
        }
        io.out(0)[0] = self.sones;
    }
}

/// `MFCC.kr(chain, numcoeff)`: Mel-frequency cepstral coefficients, scaled
/// to about 0..1.
pub struct Mfcc {
    bands: [f32; BANDS],
    coeffs: [f32; BANDS],
    count: usize,
    start: &'static [i32],
    end: &'static [i32],
    cumul: &'static [i32],
    weights: &'static [f32],
}

impl Construct for Mfcc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let mut srate = cx.world.full_rate.sample_rate as f32;
        if srate as f64 > 44100.0 * 1.5 {
            srate *= 0.5;
        }
        // Only 44.1 and 48 kHz tables exist; other rates use the 48 kHz ones.
        let is44 = (srate as f64 + 0.01) as i32 == 44100;
        let count = ((io.in0(1) as i32).clamp(1, BANDS as i32) as usize).min(io.num_outputs());
        for k in 0..io.num_outputs() {
            io.out(k)[0] = 0.0;
        }
        let (start, end, cumul, weights) = if is44 {
            (&mt::START_BIN_44100[..], &mt::END_BIN_44100[..], &mt::CUMUL_INDEX_44100[..], &mt::MEL_WEIGHTS_44100[..])
        } else {
            (&mt::START_BIN_48000[..], &mt::END_BIN_48000[..], &mt::CUMUL_INDEX_48000[..], &mt::MEL_WEIGHTS_48000[..])
        };
        Mfcc { bands: [0.0; BANDS], coeffs: [0.0; BANDS], count, start, end, cumul, weights }
    }
}

impl Mfcc {
    fn frame(&mut self, data: &[f32]) {
        for k in 0..BANDS {
            let (s, e) = (self.start[k], self.end[k]);
            let offset = self.cumul[k] - s;
            let mut bsum = 0.0f32;
            for j in s..e {
                let (re, im) = (at(data, 2 * j as usize), at(data, 2 * j as usize + 1));
                // DC's second slot is the Nyquist value, not an imaginary part.
                let power = if j == 0 { re * re } else { re * re + im * im };
                let w = self.weights.get((offset + j) as usize).copied().unwrap_or(0.0);
                bsum += power * w;
            }
            self.bands[k] = 10.0 * (bsum.max(1e-5).log10() + 5.0);
        }
        let mult = 0.01f32;
        for k in 0..self.count {
            let row = &mt::DCT[k * BANDS..(k + 1) * BANDS];
            let mut sum = 0.0f32;
            for (d, b) in row.iter().zip(&self.bands) {
                sum += d * b;
            }
            self.coeffs[k] = 0.25 * (sum * mult + 1.0);
        }
    }
}

impl Unit for Mfcc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if let Some(buf) = chain_frame(io.in0(0), cx) {
            coord::to_complex(buf);
            self.frame(&buf.data);
        }
        for k in 0..self.count {
            io.out(k)[0] = self.coeffs[k];
        }
    }
}
