//! Onset detectors that compare each FFT frame's magnitudes with the
//! previous frame's: `PV_HainsworthFoote` and `PV_JensenAndersen`. Both
//! output 1 for the block of a detection and 0 otherwise, then ignore
//! further detections for a wait time.

use super::spectral::ctor_samples;
use crate::common::spectrum::{self as coord, num_bins};
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

/// What the two detectors share: the previous frame and the wait after a detection.
struct Base {
    prev: Vec<f32>,
    waiting: bool,
    wait_samp: i32,
    wait_len: i32,
}

impl Base {
    fn new(io: &mut Wires<'_>, cx: &UnitCtx<'_>) -> (Base, usize) {
        let bins = num_bins(ctor_samples(io, cx));
        io.out(0).fill(0.0);
        (Base { prev: fallible::zeroed(bins), waiting: false, wait_samp: 0, wait_len: 0 }, bins)
    }

    /// Counts down the wait; the count is in calls times samples per call.
    fn tick(&mut self, n: i32) {
        if self.waiting {
            self.wait_samp += n;
            if self.wait_samp >= self.wait_len {
                self.waiting = false;
            }
        }
    }

    /// Whether `sum` fires a detection, starting the wait if it does.
    fn fire(&mut self, sum: f32, thresh: f32, wait_time: f32, n: i32, sr: f64) -> bool {
        if sum > thresh && !self.waiting {
            self.waiting = true;
            self.wait_samp = n;
            self.wait_len = (wait_time as f64 * sr) as i32;
            true
        } else {
            false
        }
    }
}

/// Runs `f` on the polar spectrum the chain names this block, if any.
fn with_frame(io: &Wires<'_>, cx: &mut UnitCtx<'_>, f: impl FnOnce(&[f32], usize)) {
    let fbufnum = io.in0(0);
    if fbufnum < 0.0 {
        return;
    }
    let Some(buf) = resolve_buffer_index(cx.world, fbufnum).and_then(|i| cx.world.buf_mut(i)) else { return };
    if buf.samples() < 2 {
        return;
    }
    coord::to_polar(buf);
    let bins = num_bins(buf.samples());
    f(&buf.data, bins);
}

/// `PV_HainsworthFoote(chain, proph, propf, threshold, waittime)`: a
/// weighted sum of a rise in log magnitudes (30 Hz to 5 kHz) and the change
/// in spectral shape (one minus the frames' cosine similarity).
pub struct PvHainsworthFoote {
    base: Base,
    prev_norm: f32,
    k5: i32,
    h30: i32,
}

impl Construct for PvHainsworthFoote {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let (base, bins) = Base::new(io, cx);
        let sr = cx.world.sample_rate;
        let k5 = ((5000.0 / sr) * bins as f64) as i32;
        let h30 = ((30.0 / sr) * bins as f64) as i32;
        PvHainsworthFoote { base, prev_norm: 1.0, k5, h30 }
    }
}

impl Unit for PvHainsworthFoote {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        const INV_LN2: f32 = 1.442_695_040_889;
        let n = io.n() as i32;
        self.base.tick(n);
        let sr = cx.world.sample_rate;
        let mut hit = false;
        let (k5, h30) = (self.k5, self.h30);
        let (prop_h, prop_f, thresh, wait) = (io.in0(1), io.in0(2), io.in0(3), io.in0(4));
        let this = &mut *self;
        with_frame(io, cx, |d, bins| {
            let bins = bins.min(this.base.prev.len());
            let q = &this.base.prev;
            let (mut mkl, mut foote_sum, mut norm) = (0.0f32, 0.0f32, 0.0f32);
            for i in 0..bins {
                let mag = d[2 + 2 * i];
                let qmag = q[i];
                if (i as i32) >= h30 && (i as i32) < k5 {
                    let prev = if qmag < 0.0001 { 0.0001 } else { qmag };
                    let dnk = ((mag / prev) as f64).ln() as f32 * INV_LN2;
                    if dnk > 0.0 {
                        mkl += dnk;
                    }
                }
                norm += mag * mag;
                foote_sum += mag * qmag;
            }
            mkl /= (k5 - h30) as f32;
            let div = ((norm as f64).sqrt() as f32 * (this.prev_norm as f64).sqrt() as f32).max(0.0001);
            let foote = (1.0 - (foote_sum / div) as f64) as f32;
            this.prev_norm = norm;
            hit = this.base.fire(prop_h * mkl + prop_f * foote, thresh, wait, n, sr);
            for i in 0..bins {
                this.base.prev[i] = d[2 + 2 * i];
            }
        });
        io.out(0).fill(if hit { 1.0 } else { 0.0 });
    }
}

/// `PV_JensenAndersen(chain, propsc, prophfe, prophfc, propsf, threshold,
/// waittime)`: a weighted sum of the rises in spectral centroid,
/// high-frequency energy, high-frequency content and spectral flux.
pub struct PvJensenAndersen {
    base: Base,
    sc: f32,
    hfe: f32,
    hfc: f32,
    sf: f32,
    k4: i32,
}

impl Construct for PvJensenAndersen {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let (base, bins) = Base::new(io, cx);
        // The fraction is truncated before it is scaled, as in scsynth, so the
        // high band starts right above the first bin.
        let k4 = (4000.0 / cx.world.sample_rate) as i32 * bins as i32;
        PvJensenAndersen { base, sc: 0.0, hfe: 0.0, hfc: 0.0, sf: 0.0, k4 }
    }
}

impl Unit for PvJensenAndersen {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n() as i32;
        self.base.tick(n);
        let sr = cx.world.sample_rate;
        let mut hit = false;
        let props = [io.in0(1), io.in0(2), io.in0(3), io.in0(4)];
        let (thresh, wait) = (io.in0(5), io.in0(6));
        let this = &mut *self;
        with_frame(io, cx, |d, bins| {
            let bins = bins.min(this.base.prev.len());
            let q = &this.base.prev;
            let (mut magsum, mut magsumk, mut magsumkk, mut sfsum, mut hfesum) = (0.0f32, 0.0f32, 0.0f32, 0.0f32, 0.0f32);
            for i in 0..bins {
                let mag = d[2 + 2 * i];
                let k = i as i32 + 1;
                magsum += mag;
                magsumk += k as f32 * mag;
                magsumkk += k.wrapping_mul(k) as f32 * mag;
                sfsum += (mag - q[i]).abs();
                if (i as i32) > this.k4 {
                    hfesum += mag;
                }
            }
            let binmult = 1.0f32 / bins as f32;
            let sc = (magsumk / magsum) * binmult;
            let hfe = hfesum * binmult;
            let hfc = magsumkk * binmult * binmult * binmult;
            let sf = sfsum * binmult;
            let diffs = [sc - this.sc, hfe - this.hfe, hfc - this.hfc, sf - this.sf];
            this.sc = sc;
            this.hfe = hfe;
            this.hfc = hfc;
            this.sf = sf;
            let sum = props[0] * diffs[0] + props[1] * diffs[1] + props[2] * diffs[2] + props[3] * diffs[3];
            hit = this.base.fire(sum, thresh, wait, n, sr);
            for i in 0..bins {
                this.base.prev[i] = d[2 + 2 * i];
            }
        });
        io.out(0).fill(if hit { 1.0 } else { 0.0 });
    }
}
