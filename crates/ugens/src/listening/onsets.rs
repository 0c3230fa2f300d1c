//! `Onsets`: onset detection on an FFT chain (the OnsetsDS method): an
//! optional adaptive whitening of the magnitudes, one of seven detection
//! functions, and a threshold on the function minus its running median.

use super::spectral::ctor_samples;
use crate::common::spectrum::{self as coord, num_bins};
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const PI: f32 = 3.141_592_653_589_8;
const MINUS_PI: f32 = -3.141_592_653_589_8;
const TWO_PI: f32 = 6.283_185_307_179_526;
const INV_TWO_PI: f32 = 0.159_154_943_091_9;
const LOG_0_1: f64 = -2.30258509;

const ODF_POWER: i32 = 0;
const ODF_MAGSUM: i32 = 1;
const ODF_COMPLEX: i32 = 2;
const ODF_RCOMPLEX: i32 = 3;
const ODF_PHASE: i32 = 4;
const ODF_WPHASE: i32 = 5;
const ODF_MKL: i32 = 6;

/// Brings a phase into (-π, π).
#[inline]
fn rewrap(phase: f32) -> f32 {
    if phase > MINUS_PI && phase < PI {
        phase
    } else {
        phase + TWO_PI * (1.0 + ((MINUS_PI - phase) * INV_TWO_PI).floor())
    }
}

/// The detector's state, sized for one FFT length.
struct Detector {
    fftsize: usize,
    bins: usize,
    /// The current frame, polar, whitened in place.
    curr: Vec<f32>,
    /// Peak-following magnitude trace: dc, bins, nyquist.
    psp: Vec<f32>,
    /// Recent detection-function values, newest first.
    odf: Vec<f32>,
    sort: Vec<f32>,
    /// Per-bin history the phase and complex functions need.
    other: Vec<f32>,
    odftype: i32,
    relaxcoef: f32,
    odfparam: f32,
    normfactor: f32,
    post: f32,
    post_prev: f32,
    medspan: usize,
    gapleft: u32,
}

impl Detector {
    fn new(odftype: i32, fftsize: usize, medspan: usize, srate: f32, relax: f32) -> Detector {
        let bins = (fftsize >> 1).saturating_sub(1);
        let real_bins = bins + 2;
        let per_bin = match odftype {
            ODF_COMPLEX | ODF_RCOMPLEX => 3,
            ODF_PHASE | ODF_WPHASE => 2,
            ODF_MKL => 1,
            _ => 0,
        };
        let (odfparam, normfactor) = match odftype {
            ODF_POWER => (0.01, 2560.0f32 / (real_bins * fftsize) as f32),
            ODF_MAGSUM => (0.01, (113.137085f32 as f64 / (real_bins as f64 * (fftsize as f64).sqrt())) as f32),
            ODF_COMPLEX | ODF_RCOMPLEX => (0.01, (231.70475f32 as f64 / (fftsize as f64).powf(1.5)) as f32),
            ODF_PHASE => (0.01, 5.12f32 / fftsize as f32),
            ODF_WPHASE => (0.0001, (115.852375f32 as f64 / (fftsize as f64).powf(1.5)) as f32),
            ODF_MKL => (0.01, 7.68f32 * 0.25f32 / fftsize as f32),
            _ => (0.0, 0.0),
        };
        let mut d = Detector {
            fftsize,
            bins,
            curr: crate::unit::unit_samples(fftsize.max(2)),
            psp: crate::unit::unit_samples(real_bins),
            odf: crate::unit::unit_samples(medspan),
            sort: crate::unit::unit_samples(medspan),
            other: crate::unit::unit_samples(per_bin * bins),
            odftype,
            relaxcoef: 0.0,
            odfparam,
            normfactor,
            post: 0.0,
            post_prev: 0.0,
            medspan,
            gapleft: 0,
        };
        d.set_relax(relax, fftsize >> 1, srate);
        d
    }

    fn set_relax(&mut self, time: f32, hop: usize, srate: f32) {
        self.relaxcoef = if time == 0.0 { 0.0 } else { ((LOG_0_1 * hop as f64) / (time * srate) as f64).exp() as f32 };
    }

    fn whiten(&mut self, floor: f32) {
        let n = self.bins;
        let c = &mut self.curr;
        let psp = &mut self.psp;
        let relax = self.relaxcoef;
        let follow = |val: f32, old: f32| if val < old { val + (old - val) * relax } else { val };
        psp[0] = follow(c[0].abs(), psp[0]);
        psp[n + 1] = follow(c[1].abs(), psp[n + 1]);
        for i in 0..n {
            psp[i + 1] = follow(c[2 + 2 * i].abs(), psp[i + 1]);
        }
        c[0] /= floor.max(psp[0]);
        c[1] /= floor.max(psp[n + 1]);
        for i in 0..n {
            c[2 + 2 * i] /= floor.max(psp[i + 1]);
        }
    }

    fn odf(&mut self) {
        let n = self.bins;
        let c = &self.curr;
        let mag = |i: usize| c[2 + 2 * i];
        let phase = |i: usize| c[3 + 2 * i];
        self.odf.copy_within(0..self.medspan - 1, 1);
        let other = &mut self.other;
        let value = match self.odftype {
            ODF_POWER => {
                let mut v = c[1] * c[1] + c[0] * c[0];
                for i in 0..n {
                    v += mag(i) * mag(i);
                }
                v
            }
            ODF_MAGSUM => {
                let mut v = c[1].abs() + c[0].abs();
                for i in 0..n {
                    v += mag(i).abs();
                }
                v
            }
            ODF_COMPLEX | ODF_RCOMPLEX => {
                let rectify = self.odftype == ODF_RCOMPLEX;
                let mut total = 0.0f64;
                for i in 0..n {
                    let cur = mag(i).abs();
                    let (pred_mag, y_phase, y_diff) = (other[3 * i], other[3 * i + 1], other[3 * i + 2]);
                    if cur > self.odfparam && (!rectify || !(cur < pred_mag)) {
                        let dev = (y_phase + y_diff) - phase(i);
                        let dev = (pred_mag * pred_mag + cur * cur - pred_mag * cur * rewrap(dev).cos()).sqrt();
                        total += dev as f64;
                    }
                }
                for i in 0..n {
                    other[3 * i] = mag(i).abs();
                    let diff = phase(i) - other[3 * i + 1];
                    other[3 * i + 1] = phase(i);
                    other[3 * i + 2] = rewrap(diff);
                }
                total as f32
            }
            ODF_PHASE | ODF_WPHASE => {
                let weighted = self.odftype == ODF_WPHASE;
                let mut total = 0.0f64;
                // The history pointer only moves on loud bins, as in the
                // original, so quiet bins shift later ones' history.
                let mut tb = 0;
                for i in 0..n {
                    if mag(i).abs() > self.odfparam {
                        let dev = rewrap(phase(i) - other[tb] - other[tb + 1]);
                        tb += 2;
                        total += if weighted { (dev * mag(i).abs()).abs() } else { dev.abs() } as f64;
                    }
                }
                for i in 0..n {
                    let diff = phase(i) - other[2 * i];
                    other[2 * i] = phase(i);
                    other[2 * i + 1] = rewrap(diff);
                }
                total as f32
            }
            ODF_MKL => {
                let mut total = 0.0f64;
                for i in 0..n {
                    let cur = mag(i).abs();
                    let dev = cur.abs() / (other[i].abs() + self.odfparam);
                    total += ((1.0f32 + dev) as f64).ln();
                    other[i] = cur;
                }
                total as f32
            }
            _ => self.odf[0],
        };
        self.odf[0] = value * self.normfactor;
    }

    fn detect(&mut self, thresh: f32, mingap: u32) -> bool {
        let m = self.medspan;
        self.post_prev = self.post;
        self.sort.copy_from_slice(&self.odf);
        // Selection sort, largest value moved to the end each pass.
        let mut len = m;
        while len > 0 {
            let mut max = 0;
            for i in 1..len {
                if self.sort[i] > self.sort[max] {
                    max = i;
                }
            }
            self.sort.swap(len - 1, max);
            len -= 1;
        }
        self.post = if m & 1 != 0 {
            self.odf[0] - self.sort[(m - 1) >> 1]
        } else {
            self.odf[0] - (self.sort[m >> 1] + self.sort[(m >> 1) - 1]) * 0.5
        };
        if self.gapleft != 0 {
            self.gapleft -= 1;
            false
        } else {
            let hit = self.post > thresh && self.post_prev <= thresh;
            if hit {
                self.gapleft = mingap;
            }
            hit
        }
    }
}

/// `Onsets.kr(chain, threshold, odftype, relaxtime, floor, mingap,
/// medianspan, whtype, rawodf)`: 1 on frames with an onset (held until the
/// next frame), or the detection function itself when `rawodf` is set.
pub struct Onsets {
    value: f32,
    raw: bool,
    /// Built on the first frame, from room prepared in the constructor.
    det: Option<Detector>,
    spare: Option<Detector>,
}

impl Construct for Onsets {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let samples = ctor_samples(io, cx);
        let spare = (samples >= 4).then(|| {
            let medspan = (io.in0(6) as i32).max(1) as usize;
            Detector::new(io.in0(2) as i32, samples, medspan, cx.world.full_rate.sample_rate as f32, io.in0(3))
        });
        io.out(0)[0] = 0.0;
        Onsets { value: 0.0, raw: io.in0(8) > 0.0, det: None, spare }
    }
}

impl Unit for Onsets {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let fbufnum = io.in0(0);
        if fbufnum < 0.0 {
            io.out(0)[0] = self.value;
            return;
        }
        io.out(0)[0] = fbufnum;
        let srate = cx.world.full_rate.sample_rate as f32;
        let Some(index) = resolve_buffer_index(cx.world, fbufnum) else { return };
        let Some(buf) = cx.world.buf_mut(index) else { return };
        let samples = buf.samples();
        if samples < 4 {
            return;
        }
        coord::to_polar(buf);
        if self.det.is_none() {
            let medspan = (io.in0(6) as i32).max(1) as usize;
            let odftype = io.in0(2) as i32;
            let fits = |d: &Detector| d.fftsize == samples && d.medspan == medspan && d.odftype == odftype;
            let mut det = match self.spare.take() {
                Some(d) if fits(&d) => d,
                spare => {
                    self.spare = spare;
                    // The chain's size was not known when the unit was built.
                    Detector::new(odftype, samples, medspan, srate, 1.0)
                }
            };
            det.set_relax(io.in0(3), samples >> 1, srate);
            self.det = Some(det);
        }
        let Some(det) = self.det.as_mut() else { return };
        let n = det.fftsize.min(samples);
        det.curr[..n].copy_from_slice(&buf.data[..n]);
        debug_assert_eq!(num_bins(det.fftsize), det.bins);
        let (thresh, floor) = (io.in0(1), io.in0(4));
        let mingap = io.in0(5) as i32 as u32;
        if io.in0(7) as i32 != 0 {
            det.whiten(floor);
        }
        det.odf();
        let hit = det.detect(thresh, mingap);
        self.value = if self.raw { det.odf[0] } else if hit { 1.0 } else { 0.0 };
        io.out(0)[0] = self.value;
    }
}
