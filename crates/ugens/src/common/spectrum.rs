//! Which form a spectrum buffer holds (complex or polar) and the table-based
//! conversions between the two that scsynth's units use.
//!
//! A unit that works on magnitudes converts the buffer to polar form and
//! leaves it so; the next unit that needs complex numbers converts it back.
//! Chained polar units therefore convert once, which matters because the
//! conversions are approximate (lookup tables). The form is kept in the
//! buffer (`SndBuf::spectrum`); a newly allocated buffer holds none.

use crate::world::SndBuf;
use std::sync::OnceLock;

pub(crate) use crate::world::SpectrumForm as Coord;

/// The form `buf` was last marked with.
#[inline]
pub(crate) fn coord(buf: &SndBuf) -> Coord {
    buf.spectrum
}

/// Marks `buf` as holding `c`.
#[inline]
pub(crate) fn set_coord(buf: &mut SndBuf, c: Coord) {
    buf.spectrum = c;
}

use crate::common::signal::trunc_i32;
use crate::common::wavetable::{sine_tables, SINE_SIZE};

const SINE_MASK: i32 = SINE_SIZE as i32 - 1;
const LUT_SIZE: usize = 2049;
const LUT_HALF: i32 = (LUT_SIZE >> 1) as i32;

const PI: f64 = std::f64::consts::PI;
const PI2: f64 = PI * 0.5;
const PI32: f64 = PI * 1.5;
const TWOPI: f64 = PI * 2.0;

/// The lookup tables of the approximate conversions.
pub(crate) struct Tables {
    /// The oscillators' sine table (one period and its first point again).
    sine: &'static [f32; SINE_SIZE + 1],
    mag: [f32; LUT_SIZE],
    phase: [f32; LUT_SIZE],
}

static TABLES: OnceLock<Box<Tables>> = OnceLock::new();

/// The conversion tables; built on first use, which every spectral unit's
/// constructor makes, so that no unit builds them while it runs.
pub(crate) fn tables() -> &'static Tables {
    TABLES.get_or_init(|| {
        let mut t =
            Box::new(Tables { sine: &sine_tables().sine, mag: [0.0; LUT_SIZE], phase: [0.0; LUT_SIZE] });
        let r = 1.0 / LUT_HALF as f64;
        for i in 0..LUT_SIZE {
            let angle = ((i as i32 - LUT_HALF) as f64 * r).atan();
            t.phase[i] = angle as f32;
            t.mag[i] = (1.0 / angle.cos()) as f32;
        }
        t
    })
}

impl Tables {
    /// Complex to polar by slope lookup; phases land in [-π/4, 7π/4).
    #[inline]
    pub(crate) fn to_polar(&self, re: f32, im: f32) -> (f32, f32) {
        let ar = re.abs();
        let ai = im.abs();
        let lookup = |slope: f32| -> usize {
            let x = LUT_HALF as f32 + LUT_HALF as f32 * slope;
            trunc_i32(x as f64).clamp(0, LUT_SIZE as i32 - 1) as usize
        };
        if ar > ai {
            let i = lookup(im / re);
            let mag = self.mag[i] * ar;
            let phase = self.phase[i];
            if re > 0.0 {
                (mag, phase)
            } else {
                (mag, (PI + phase as f64) as f32)
            }
        } else if ai > 0.0 {
            let i = lookup(re / im);
            let mag = self.mag[i] * ai;
            let phase = self.phase[i];
            if im > 0.0 {
                (mag, (PI2 - phase as f64) as f32)
            } else {
                (mag, (PI32 - phase as f64) as f32)
            }
        } else {
            (0.0, 0.0)
        }
    }

    /// Polar to complex by sine-table lookup (the phase truncated to the table).
    #[inline]
    pub(crate) fn to_complex(&self, mag: f32, phase: f32) -> (f32, f32) {
        let scale = SINE_SIZE as f64 / TWOPI;
        let sin_index = trunc_i32(scale * phase as f64) & SINE_MASK;
        let cos_index = (sin_index + (SINE_SIZE as i32 >> 2)) & SINE_MASK;
        (mag * self.sine[cos_index as usize], mag * self.sine[sin_index as usize])
    }
}

/// Bins (complex pairs after DC and Nyquist) of a buffer of `samples` floats.
#[inline]
pub(crate) fn num_bins(samples: usize) -> usize {
    samples.saturating_sub(2) >> 1
}

/// Converts a complex spectrum to polar form in place (nothing if it is not complex).
pub(crate) fn to_polar(buf: &mut SndBuf) {
    if coord(buf) != Coord::Complex {
        return;
    }
    let t = tables();
    let bins = num_bins(buf.data.len());
    for pair in buf.data[2..2 + 2 * bins].chunks_exact_mut(2) {
        let (m, p) = t.to_polar(pair[0], pair[1]);
        pair[0] = m;
        pair[1] = p;
    }
    set_coord(buf, Coord::Polar);
}

/// Converts a polar spectrum to complex form in place (nothing if it is not polar).
pub(crate) fn to_complex(buf: &mut SndBuf) {
    if coord(buf) != Coord::Polar {
        return;
    }
    let t = tables();
    let bins = num_bins(buf.data.len());
    for pair in buf.data[2..2 + 2 * bins].chunks_exact_mut(2) {
        let (re, im) = t.to_complex(pair[0], pair[1]);
        pair[0] = re;
        pair[1] = im;
    }
    set_coord(buf, Coord::Complex);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polar_round_trip_stays_within_the_tables_resolution() {
        let t = tables();
        for k in 0..360 {
            let a = (k as f64).to_radians() + 0.01;
            let (re, im) = ((2.0 * a.cos()) as f32, (2.0 * a.sin()) as f32);
            let (m, p) = t.to_polar(re, im);
            assert!((m - 2.0).abs() < 2e-3, "magnitude at {k} degrees: {m}");
            assert!((-0.8..5.5).contains(&p));
            let (r2, i2) = t.to_complex(m, p);
            assert!((r2 - re).abs() < 5e-3 && (i2 - im).abs() < 5e-3, "{k}: {re},{im} -> {r2},{i2}");
        }
        assert_eq!(t.to_polar(0.0, 0.0), (0.0, 0.0));
    }

    #[test]
    fn a_buffer_remembers_its_form_until_converted() {
        let mut buf = SndBuf::new(8, 1, 48_000.0);
        buf.data[2] = 0.0;
        buf.data[3] = 1.0;
        set_coord(&mut buf, Coord::Complex);
        to_polar(&mut buf);
        assert_eq!(coord(&buf), Coord::Polar);
        assert!((buf.data[2] - 1.0).abs() < 1e-3);
        assert!((buf.data[3] - std::f32::consts::FRAC_PI_2).abs() < 1e-3);
        to_polar(&mut buf);
        to_complex(&mut buf);
        assert_eq!(coord(&buf), Coord::Complex);
        assert!(buf.data[2].abs() < 1e-3 && (buf.data[3] - 1.0).abs() < 1e-3);
    }
}
