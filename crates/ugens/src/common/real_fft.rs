//! The transform itself: a real FFT of a power-of-two length, computed in
//! double precision through a half-length complex FFT, with the windows and
//! the packed spectrum layout scsynth's FFT units share.
//!
//! A spectrum in a buffer is packed as `dc, nyquist, re1, im1, re2, im2, ...`
//! (one float per real sample). The forward transform is unscaled; the
//! inverse is unscaled too, so a round trip multiplies by the length, which
//! the inverse unit undoes with its `1/N` factor, as scsynth does.

/// Shortest transform scsynth accepts.
pub(crate) const MIN_SIZE: usize = 8;
/// Longest transform scsynth accepts.
pub(crate) const MAX_SIZE: usize = 262_144;

/// Window shapes, numbered as the `wintype` inputs number them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Window {
    Rect,
    Sine,
    Hann,
}

impl Window {
    /// The window for a `wintype` input: clipped to -1..=1 after truncation.
    pub(crate) fn from_input(v: f32) -> Window {
        match (v as i32).clamp(-1, 1) {
            -1 => Window::Rect,
            0 => Window::Sine,
            _ => Window::Hann,
        }
    }

    /// The window's `size` coefficients, or none for the rectangular window.
    /// The angle step is a single-precision quotient, the rest double, as in
    /// scsynth's tables.
    pub(crate) fn table(self, size: usize) -> Vec<f32> {
        const PI_F: f32 = 3.141_592_653_589_8;
        const TWOPI_F: f32 = 6.283_185_307_179_526;
        match self {
            Window::Rect => Vec::new(),
            Window::Sine => {
                let step = (PI_F / size as f32) as f64;
                (0..size).map(|i| (i as f64 * step).sin() as f32).collect()
            }
            Window::Hann => {
                let step = (TWOPI_F / size as f32) as f64;
                (0..size).map(|i| (0.5 - 0.5 * (i as f64 * step).cos()) as f32).collect()
            }
        }
    }
}

/// Multiplies `data` by `window` (nothing for the rectangular window).
#[inline]
pub(crate) fn apply_window(data: &mut [f32], window: &[f32]) {
    for (x, w) in data.iter_mut().zip(window) {
        *x *= *w;
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct C64 {
    re: f64,
    im: f64,
}

impl C64 {
    #[inline(always)]
    fn new(re: f64, im: f64) -> C64 {
        C64 { re, im }
    }
    #[inline(always)]
    fn add(self, o: C64) -> C64 {
        C64::new(self.re + o.re, self.im + o.im)
    }
    #[inline(always)]
    fn sub(self, o: C64) -> C64 {
        C64::new(self.re - o.re, self.im - o.im)
    }
    #[inline(always)]
    fn mul(self, o: C64) -> C64 {
        C64::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
    #[inline(always)]
    fn conj(self) -> C64 {
        C64::new(self.re, -self.im)
    }
}

/// A real transform of one length, with its tables and scratch space made
/// up front so that transforming allocates nothing.
pub(crate) struct RealFft {
    n: usize,
    /// `exp(-2πik/(n/2))` for the half-length complex transform, k < n/4.
    twiddle: Vec<C64>,
    /// `exp(-2πik/n)`, k < n/2: splits the half-length result into the real spectrum.
    split: Vec<C64>,
    bitrev: Vec<u32>,
    work: Vec<C64>,
}

impl RealFft {
    /// A transform of `n` points; `n` must be a power of two of at least 4.
    pub(crate) fn new(n: usize) -> RealFft {
        debug_assert!(n.is_power_of_two() && n >= 4);
        let m = n / 2;
        let twiddle = (0..m / 2)
            .map(|k| {
                let a = -std::f64::consts::TAU * k as f64 / m as f64;
                C64::new(a.cos(), a.sin())
            })
            .collect();
        let split = (0..m)
            .map(|k| {
                let a = -std::f64::consts::TAU * k as f64 / n as f64;
                C64::new(a.cos(), a.sin())
            })
            .collect();
        let bits = m.trailing_zeros();
        let bitrev = (0..m as u32).map(|i| if bits == 0 { 0 } else { i.reverse_bits() >> (32 - bits) }).collect();
        RealFft { n, twiddle, split, bitrev, work: vec![C64::default(); m] }
    }

    /// In-place complex transform of `work`; `inverse` uses the conjugate twiddles.
    fn complex(&mut self, inverse: bool) {
        let m = self.work.len();
        let x = &mut self.work;
        for i in 0..m {
            let j = self.bitrev[i] as usize;
            if j > i {
                x.swap(i, j);
            }
        }
        let mut len = 2;
        while len <= m {
            let half = len / 2;
            let step = m / len;
            for start in (0..m).step_by(len) {
                for k in 0..half {
                    let w = self.twiddle[k * step];
                    let w = if inverse { w.conj() } else { w };
                    let a = x[start + k];
                    let b = x[start + k + half].mul(w);
                    x[start + k] = a.add(b);
                    x[start + k + half] = a.sub(b);
                }
            }
            len *= 2;
        }
    }

    /// Forward transform of `n` real samples into the packed layout.
    pub(crate) fn forward(&mut self, input: &[f32], out: &mut [f32]) {
        let m = self.n / 2;
        for (k, z) in self.work.iter_mut().enumerate() {
            *z = C64::new(input[2 * k] as f64, input[2 * k + 1] as f64);
        }
        self.complex(false);
        let z0 = self.work[0];
        out[0] = (z0.re + z0.im) as f32;
        out[1] = (z0.re - z0.im) as f32;
        for k in 1..m {
            let a = self.work[k];
            let b = self.work[m - k].conj();
            let even = a.add(b);
            let d = a.sub(b);
            // (a - b) / i, the odd samples' spectrum (both halves doubled)
            let odd = C64::new(d.im, -d.re);
            let x = even.add(odd.mul(self.split[k]));
            out[2 * k] = (0.5 * x.re) as f32;
            out[2 * k + 1] = (0.5 * x.im) as f32;
        }
    }

    /// Inverse transform of a packed spectrum into `n` real samples,
    /// unscaled (a round trip multiplies by `n`); the imaginary parts of DC
    /// and Nyquist do not exist in the packed layout.
    pub(crate) fn inverse(&mut self, input: &[f32], out: &mut [f32]) {
        let m = self.n / 2;
        let bin = |k: usize| -> C64 {
            if k == 0 {
                C64::new(input[0] as f64, 0.0)
            } else if k == m {
                C64::new(input[1] as f64, 0.0)
            } else {
                C64::new(input[2 * k] as f64, input[2 * k + 1] as f64)
            }
        };
        for k in 0..m {
            let a = bin(k);
            let b = bin(m - k).conj();
            let even = a.add(b);
            let odd = a.sub(b).mul(self.split[k].conj());
            self.work[k] = C64::new(even.re - odd.im, even.im + odd.re);
        }
        self.complex(true);
        for (k, z) in self.work.iter().enumerate() {
            out[2 * k] = z.re as f32;
            out[2 * k + 1] = z.im as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dft(x: &[f32]) -> Vec<(f64, f64)> {
        let n = x.len();
        (0..=n / 2)
            .map(|k| {
                let mut re = 0.0;
                let mut im = 0.0;
                for (t, &v) in x.iter().enumerate() {
                    let a = -std::f64::consts::TAU * ((k * t) % n) as f64 / n as f64;
                    re += v as f64 * a.cos();
                    im += v as f64 * a.sin();
                }
                (re, im)
            })
            .collect()
    }

    fn signal(n: usize) -> Vec<f32> {
        (0..n).map(|i| ((i * 7919 % 263) as f32 / 131.0 - 1.0) * 0.7 + (i as f32 * 0.05).sin()).collect()
    }

    #[test]
    fn forward_matches_the_definition_in_packed_layout() {
        for n in [8, 64, 512] {
            let x = signal(n);
            let mut fft = RealFft::new(n);
            let mut out = vec![0.0; n];
            fft.forward(&x, &mut out);
            let want = dft(&x);
            let tol = 1e-4 * n as f64;
            assert!((out[0] as f64 - want[0].0).abs() < tol);
            assert!((out[1] as f64 - want[n / 2].0).abs() < tol);
            for k in 1..n / 2 {
                assert!((out[2 * k] as f64 - want[k].0).abs() < tol, "re {k} of {n}");
                assert!((out[2 * k + 1] as f64 - want[k].1).abs() < tol, "im {k} of {n}");
            }
        }
    }

    #[test]
    fn inverse_undoes_forward_up_to_the_length() {
        let n = 1024;
        let x = signal(n);
        let mut fft = RealFft::new(n);
        let mut spec = vec![0.0; n];
        let mut back = vec![0.0; n];
        fft.forward(&x, &mut spec);
        fft.inverse(&spec, &mut back);
        for (a, b) in x.iter().zip(&back) {
            assert!((a - b / n as f32).abs() < 1e-5);
        }
    }

    #[test]
    fn hann_window_rises_from_zero_to_one_at_the_middle() {
        let w = Window::Hann.table(512);
        assert_eq!(w[0], 0.0);
        assert!((w[256] - 1.0).abs() < 1e-6);
        let s = Window::Sine.table(512);
        assert!((s[256] - 1.0).abs() < 1e-6);
        assert!(Window::Rect.table(512).is_empty());
        assert_eq!(Window::from_input(5.0), Window::Hann);
        assert_eq!(Window::from_input(-3.0), Window::Rect);
    }
}
