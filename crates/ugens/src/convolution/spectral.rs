//! What the FFT convolvers share: an in-place transform with scsynth's
//! scaling, the product of two packed spectra, and the kernel buffer lookup.

use crate::common::real_fft::{RealFft, MAX_SIZE, MIN_SIZE};
use crate::world::{SndBuf, World};
use magnetar_rt::fallible;

/// A real transform of one length, run in place on a frame.
pub(super) struct Transform {
    fft: RealFft,
    scratch: Vec<f32>,
    /// The inverse's `1/N`, applied in single precision after the transform.
    scale: f32,
}

impl Transform {
    /// `None` unless `n` is a power of two in the sizes scsynth's FFT accepts.
    pub(super) fn new(n: usize) -> Option<Transform> {
        if !n.is_power_of_two() || !(MIN_SIZE..=MAX_SIZE).contains(&n) {
            return None;
        }
        Some(Transform { fft: RealFft::new(n), scratch: fallible::zeroed(n), scale: 1.0 / n as f32 })
    }

    /// Time samples to packed spectrum, unscaled.
    pub(super) fn forward(&mut self, data: &mut [f32]) {
        let n = self.scratch.len();
        self.scratch.copy_from_slice(&data[..n]);
        self.fft.forward(&self.scratch, &mut data[..n]);
    }

    /// Packed spectrum to time samples, scaled by `1/N`.
    pub(super) fn inverse(&mut self, data: &mut [f32]) {
        self.inverse_unscaled(data);
        let n = self.scratch.len();
        for x in &mut data[..n] {
            *x *= self.scale;
        }
    }

    /// Packed spectrum to time samples, unscaled.
    pub(super) fn inverse_unscaled(&mut self, data: &mut [f32]) {
        let n = self.scratch.len();
        self.scratch.copy_from_slice(&data[..n]);
        self.fft.inverse(&self.scratch, &mut data[..n]);
    }
}

/// One bin's complex product, in the order scsynth's convolvers compute it.
#[inline(always)]
pub(super) fn cmul(ar: f32, ai: f32, br: f32, bi: f32) -> (f32, f32) {
    (ar * br - ai * bi, ar * bi + ai * br)
}

/// `dst = a × b` over packed spectra of `n` floats (DC and Nyquist real).
pub(super) fn multiply(dst: &mut [f32], a: &[f32], b: &[f32], n: usize) {
    dst[0] = a[0] * b[0];
    dst[1] = a[1] * b[1];
    for i in 1..n / 2 {
        let (re, im) = cmul(a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1]);
        dst[2 * i] = re;
        dst[2 * i + 1] = im;
    }
}

/// `a *= b` over packed spectra of `n` floats.
pub(super) fn multiply_in_place(a: &mut [f32], b: &[f32], n: usize) {
    a[0] *= b[0];
    a[1] *= b[1];
    for i in 1..n / 2 {
        let (re, im) = cmul(a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1]);
        a[2 * i] = re;
        a[2 * i + 1] = im;
    }
}

/// The kernel buffer a convolver reads: the number truncated and taken as
/// unsigned (negative numbers name no buffer), global buffers first, then
/// the synth's local ones; it must hold data.
pub(super) fn kernel_buffer(world: &World, fbufnum: f32) -> Option<&SndBuf> {
    let index = fbufnum as i32 as u32 as usize;
    world.buf(index).filter(|b| b.is_allocated())
}

/// Copies up to `len` samples of `buf` into the start of `dst` and zeroes
/// the rest of `dst` (scsynth reads past a short buffer; zeros stand in for
/// what lies beyond).
pub(super) fn load_kernel(dst: &mut [f32], buf: &SndBuf, len: usize) {
    let take = len.min(buf.data.len()).min(dst.len());
    dst[..take].copy_from_slice(&buf.data[..take]);
    dst[take..].fill(0.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forward_then_inverse_transform_returns_the_frame() {
        let mut t = Transform::new(64).unwrap();
        let x: Vec<f32> = (0..64).map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0).collect();
        let mut y = x.clone();
        t.forward(&mut y);
        t.inverse(&mut y);
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b).abs() < 1e-5);
        }
        assert!(Transform::new(48).is_none() && Transform::new(4).is_none());
    }

    #[test]
    fn multiplying_spectra_convolves_circularly() {
        let n = 32;
        let mut t = Transform::new(n).unwrap();
        let mut a = vec![0.0; n];
        let mut b = vec![0.0; n];
        a[1] = 1.0;
        a[2] = 0.5;
        b[3] = 2.0;
        t.forward(&mut a);
        t.forward(&mut b);
        let mut c = vec![0.0; n];
        multiply(&mut c, &a, &b, n);
        t.inverse(&mut c);
        for (i, v) in c.iter().enumerate() {
            let want = match i {
                4 => 2.0,
                5 => 1.0,
                _ => 0.0,
            };
            assert!((v - want).abs() < 1e-5, "{i}: {v}");
        }
    }
}
