//! StereoConvolution2L: Convolution2L with a kernel per output channel.
//!
//! scsynth 3.13's version wires its nine transform objects to the wrong
//! buffers (and some to the wrong direction), so that several transforms
//! work on other buffers than the ones the code around them fills. What
//! comes out is reproduced here by keeping its buffers and running each
//! transform on the buffer it is really bound to, with the scaling of the
//! direction it was made for: the right kernel stays in the time domain,
//! the left output plays the product spectrum untransformed, and so on. Buffers scsynth leaves
//! uninitialised are taken to start as zeros.

use super::spectral::{cmul, kernel_buffer, load_kernel, Transform};
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

// The unit's buffers.
const INBUF: usize = 0;
const FFT1: usize = 1;
const FFT2L: usize = 2;
const FFT2R: usize = 3;
const FFT3L: usize = 4;
const FFT3R: usize = 5;
const TEMPL: usize = 6;
const TEMPR: usize = 7;
const OUTL: usize = 8;
const OUTR: usize = 9;
const OVERL: usize = 10;
const OVERR: usize = 11;

/// A transform object: the buffer it runs on in place, and whether it was
/// made for the inverse direction, which decides its scaling (1/N) and not
/// the direction it is run in.
#[derive(Clone, Copy)]
struct Plan {
    buf: usize,
    backward: bool,
}

const fn fwd(buf: usize) -> Plan {
    Plan { buf, backward: false }
}

const fn bwd(buf: usize) -> Plan {
    Plan { buf, backward: true }
}

// The transform objects by the role the code gives them, bound as scsynth binds them.
const SOURCE: Plan = fwd(FFT1);
const KERNEL_L_NOW: Plan = fwd(FFT2L);
const KERNEL_R_NOW: Plan = bwd(OUTL);
const KERNEL_L_NEXT: Plan = fwd(FFT2R);
const KERNEL_R_NEXT: Plan = bwd(TEMPL);
const OUT_L: Plan = fwd(FFT3L);
const OUT_R: Plan = bwd(OUTR);
const FADE_L: Plan = fwd(FFT3R);
const FADE_R: Plan = bwd(TEMPR);

struct State {
    framesize: usize,
    fft: Transform,
    bufs: [Vec<f32>; 12],
}

impl State {
    /// A forward transform; an object made for the inverse scales its
    /// input by 1/N first.
    fn forward(&mut self, plan: Plan) {
        let data = &mut self.bufs[plan.buf];
        if plan.backward {
            let scale = 1.0 / data.len() as f32;
            for x in data.iter_mut() {
                *x *= scale;
            }
        }
        self.fft.forward(data);
    }

    /// An inverse transform, scaled by 1/N only by an object made for it.
    fn inverse(&mut self, plan: Plan) {
        let data = &mut self.bufs[plan.buf];
        if plan.backward {
            self.fft.inverse(data);
        } else {
            self.fft.inverse_unscaled(data);
        }
    }

    /// Copies a kernel into the first half of `dst` and zeroes the second.
    fn load(&mut self, dst: usize, kernel: &crate::world::SndBuf) {
        let fs = self.framesize;
        load_kernel(&mut self.bufs[dst], kernel, fs);
    }

    /// Products of the source spectrum with the two kernels into TEMPL and
    /// TEMPR, bins 1 and up only (DC and Nyquist keep what they held).
    fn multiply(&mut self, kl: usize, kr: usize) {
        let n = self.framesize;
        for i in 1..n {
            let (r, m) = (2 * i, 2 * i + 1);
            let (ar, ai) = (self.bufs[FFT1][r], self.bufs[FFT1][m]);
            let (lr, li) = cmul(ar, ai, self.bufs[kl][r], self.bufs[kl][m]);
            let (rr, ri) = cmul(ar, ai, self.bufs[kr][r], self.bufs[kr][m]);
            self.bufs[TEMPL][r] = lr;
            self.bufs[TEMPL][m] = li;
            self.bufs[TEMPR][r] = rr;
            self.bufs[TEMPR][m] = ri;
        }
    }
}

/// `StereoConvolution2L(in, kernelL, kernelR, trigger, framesize, crossfade)`.
pub struct StereoConvolution2L {
    state: Option<State>,
    pos: usize,
    cflength: i32,
    cfpos: i32,
    curbuf: usize,
    prevtrig: f32,
}

impl Construct for StereoConvolution2L {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let framesize = usize::try_from(io.in0(4) as i32).unwrap_or(0);
        let cflength = io.in0(5) as i32;
        let mut unit = StereoConvolution2L { state: None, pos: 0, cflength, cfpos: cflength, curbuf: 0, prevtrig: 0.0 };
        let block = cx.world.block_size;
        let fft = framesize
            .checked_mul(2)
            .and_then(Transform::new)
            .filter(|_| framesize >= block && framesize % block == 0);
        let left = kernel_buffer(cx.world, io.in0(1));
        let right = kernel_buffer(cx.world, io.in0(2));
        let (Some(fft), Some(left), Some(right)) = (fft, left, right) else {
            io.out(0)[0] = 0.0;
            io.out(1)[0] = 0.0;
            cx.set_done(true);
            return unit;
        };
        let size = 2 * framesize;
        let bufs = std::array::from_fn(|i| crate::unit::unit_samples(if i == INBUF || i >= OVERL { framesize } else { size }));
        let mut st = State { framesize, fft, bufs };
        st.load(FFT2L, left);
        st.forward(KERNEL_L_NOW);
        st.load(FFT2R, right);
        st.forward(KERNEL_R_NOW);
        unit.state = Some(st);
        let first = io.in0(0);
        io.out(0)[0] = first;
        io.out(1)[0] = first;
        unit
    }
}

impl StereoConvolution2L {
    fn stop(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.state = None;
        io.out(0).fill(0.0);
        io.out(1).fill(0.0);
        cx.set_done(true);
    }
}

impl Unit for StereoConvolution2L {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(st) = self.state.as_mut() else {
            io.out(0).fill(0.0);
            io.out(1).fill(0.0);
            return;
        };
        let n = io.n();
        let input = io.inp(0);
        let dst = &mut st.bufs[INBUF][self.pos..self.pos + n];
        if input.len() >= n {
            dst.copy_from_slice(&input[..n]);
        } else {
            dst.fill(input[0]);
        }
        self.pos += n;
        let curtrig = io.in0(3);
        if self.prevtrig <= 0.0 && curtrig > 0.0 {
            self.cflength = io.in0(5) as i32;
            let left = kernel_buffer(cx.world, io.in0(1));
            let right = kernel_buffer(cx.world, io.in0(2));
            let (Some(left), Some(right)) = (left, right) else {
                self.stop(io, cx);
                return;
            };
            self.cfpos = 0;
            if self.curbuf == 1 {
                st.load(FFT2L, left);
                st.forward(KERNEL_L_NOW);
                st.load(FFT2R, right);
                st.forward(KERNEL_R_NOW);
            } else {
                st.load(FFT3L, left);
                st.forward(KERNEL_L_NEXT);
                st.load(FFT3R, right);
                st.forward(KERNEL_R_NEXT);
            }
        }
        let fs = st.framesize;
        let size = 2 * fs;
        if self.pos & fs != 0 {
            self.pos = 0;
            let (head, tail) = st.bufs.split_at_mut(FFT1);
            tail[0][..fs].copy_from_slice(&head[INBUF]);
            tail[0][fs..].fill(0.0);
            st.forward(SOURCE);
            let (now, next) = if self.curbuf == 0 { ((FFT2L, FFT2R), (FFT3L, FFT3R)) } else { ((FFT3L, FFT3R), (FFT2L, FFT2R)) };
            st.multiply(now.0, now.1);
            for (out, over, temp, plan) in [(OUTL, OVERL, TEMPL, OUT_L), (OUTR, OVERR, TEMPR, OUT_R)] {
                let (a, b) = st.bufs.split_at_mut(OVERL);
                b[over - OVERL].copy_from_slice(&a[out][fs..]);
                let (lo, hi) = a.split_at_mut(OUTL);
                hi[out - OUTL].copy_from_slice(&lo[temp]);
                st.inverse(plan);
            }
            if self.cfpos < self.cflength {
                st.multiply(next.0, next.1);
                st.inverse(FADE_L);
                st.inverse(FADE_R);
                let mut fact = self.cfpos as f32 / self.cflength as f32;
                let rc = 1.0 / self.cflength.wrapping_mul(fs as i32) as f32;
                let (lo, hi) = st.bufs.split_at_mut(OUTL);
                let (tl, tr) = (&lo[TEMPL], &lo[TEMPR]);
                let (ol, rest) = hi.split_at_mut(1);
                let (ol, or) = (&mut ol[0], &mut rest[0]);
                for i in 0..fs {
                    ol[i] = (1.0 - fact) * ol[i] + fact * tl[i];
                    or[i] = (1.0 - fact) * or[i] + fact * tr[i];
                    fact += rc;
                }
                if self.cflength == 1 {
                    ol[fs..].copy_from_slice(&tl[fs..]);
                    or[fs..].copy_from_slice(&tr[fs..]);
                } else {
                    for i in fs + 1..size {
                        ol[i] = (1.0 - fact) * ol[i] + fact * tl[i];
                        or[i] = (1.0 - fact) * or[i] + fact * tr[i];
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
        let p = self.pos;
        let [l, r] = io.outs::<2>();
        for i in 0..n {
            l[i] = st.bufs[OUTL][p + i] + st.bufs[OVERL][p + i];
            r[i] = st.bufs[OUTR][p + i] + st.bufs[OVERR][p + i];
        }
    }
}
