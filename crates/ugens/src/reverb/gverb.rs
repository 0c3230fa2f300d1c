//! GVerb: a feedback delay network of four damped lines fed by an input
//! diffuser and early-reflection taps, with three diffusers per output.
//!
//! The arithmetic keeps scsynth 3.13.0's types and its quirks, since they
//! change the sound: network gains are single-precision powers, parameter
//! changes update gains before ramping them, and the ramps' end values are
//! what the next block starts from.

use crate::common::signal::zap_f32;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const ORDER: usize = 4;

/// Input numbers.
const ROOM_SIZE: usize = 1;
const REV_TIME: usize = 2;
const DAMPING: usize = 3;
const INPUT_BW: usize = 4;
const SPREAD: usize = 5;
const DRY: usize = 6;
const EARLY: usize = 7;
const TAIL: usize = 8;
const MAX_ROOM_SIZE: usize = 9;

/// `i % n` with C's sign rule, and 0 where C would divide by zero.
#[inline(always)]
fn c_rem(i: i32, n: i32) -> i32 {
    i.checked_rem(n).unwrap_or(0)
}

/// A circular line of `size` cells (stored in `max` cells).
struct FixedDelay {
    size: i32,
    idx: i32,
    buf: Vec<f32>,
}

impl FixedDelay {
    fn new(size: i32, max: i32) -> FixedDelay {
        FixedDelay { size, idx: 0, buf: crate::unit::unit_samples(max.max(1) as usize) }
    }

    /// The value written `n` samples ago.
    #[inline(always)]
    fn read(&self, n: i32) -> f32 {
        let i = c_rem(self.idx - n + self.size, self.size);
        // An index outside the line (a length grown past the line's) reads silence.
        usize::try_from(i).ok().and_then(|i| self.buf.get(i)).copied().unwrap_or(0.0)
    }

    #[inline(always)]
    fn write(&mut self, x: f32) {
        if let Some(cell) = usize::try_from(self.idx).ok().and_then(|i| self.buf.get_mut(i)) {
            *cell = zap_f32(x);
        }
        self.idx = c_rem(self.idx + 1, self.size);
    }
}

/// A Schroeder all-pass on a line of `size` cells.
struct Diffuser {
    size: i32,
    coef: f32,
    idx: i32,
    buf: Vec<f32>,
}

impl Diffuser {
    fn new(size: i32, coef: f32) -> Diffuser {
        // A room too small for a cell (or a NaN size) keeps one.
        let size = size.max(1);
        Diffuser { size, coef, idx: 0, buf: crate::unit::unit_samples(size.max(1) as usize) }
    }

    #[inline(always)]
    fn run(&mut self, x: f32) -> f32 {
        let i = self.idx.max(0) as usize;
        let held = self.buf[i];
        let w = flush_to_zero(x - held * self.coef);
        let y = held + w * self.coef;
        self.buf[i] = zap_f32(w);
        self.idx = c_rem(self.idx + 1, self.size);
        y
    }
}

/// A one-pole low-pass: `damping` of the previous output, the rest of the input.
struct Damper {
    damping: f32,
    delay: f32,
}

impl Damper {
    #[inline(always)]
    fn run(&mut self, x: f32) -> f32 {
        let y = (x as f64 * (1.0 - self.damping as f64) + (self.delay * self.damping) as f64) as f32;
        self.delay = zap_f32(y);
        y
    }
}

/// Zero for values with a tiny exponent (denormals and near-denormals).
#[inline(always)]
fn flush_to_zero(x: f32) -> f32 {
    if x.to_bits() & 0x7f80_0000 < 0x0800_0000 {
        0.0
    } else {
        x
    }
}

/// Rounds to the nearest integer (ties to even) through the float-adding trick scsynth uses.
#[inline(always)]
fn f_round(f: f32) -> i32 {
    ((f + (3 << 22) as f32).to_bits() as i32).wrapping_sub(0x4b40_0000)
}

fn is_prime(n: i32) -> bool {
    if n == 2 {
        return true;
    }
    if n & 1 == 0 {
        return false;
    }
    let limit = (n as f32).sqrt() as i32 as u32;
    let mut i = 3u32;
    while i <= limit {
        if n as u32 % i == 0 {
            return false;
        }
        i += 2;
    }
    true
}

/// The prime nearest `n` within `n / 2`, looking above before below; -1 if none.
fn nearest_prime(n: i32) -> i32 {
    if is_prime(n) {
        return n;
    }
    let bound = (n as f32 * 0.5) as i32;
    for k in 1..=bound {
        if is_prime(n + k) {
            return n + k;
        }
        if is_prime(n - k) {
            return n - k;
        }
    }
    -1
}

/// A network line's gain: minus alpha to the line's length, in single precision.
fn fdn_gain(alpha: f64, len: i32) -> f32 {
    -(alpha as f32).powf(len as f32)
}

pub struct GVerb {
    room_size: f32,
    rev_time: f32,
    damping: f32,
    input_bw: f32,
    dry: f32,
    early: f32,
    tail: f32,
    max_room_size: f32,
    alpha: f64,
    input_damper: Damper,
    fdn_dels: [FixedDelay; ORDER],
    fdn_damps: [Damper; ORDER],
    fdn_lens: [i32; ORDER],
    fdn_gains: [f32; ORDER],
    fdn_gain_slopes: [f32; ORDER],
    ldifs: [Diffuser; ORDER],
    rdifs: [Diffuser; ORDER],
    tap_delay: FixedDelay,
    taps: [i32; ORDER],
    tap_gains: [f32; ORDER],
    tap_gain_slopes: [f32; ORDER],
    dry_slope: f32,
    early_slope: f32,
    tail_slope: f32,
    u: [f32; ORDER],
    f: [f32; ORDER],
    d: [f32; ORDER],
}

/// Per-channel diffuser lengths for `spread`, with the two ratios of one side.
fn diffusers(diffscale: f32, spread: f32, ratios: [f32; 2]) -> [Diffuser; ORDER] {
    let b = 210;
    let a = (spread * ratios[0]) as i32;
    let c = 210 + 159 + a;
    let cc = c - b;
    let a = ((3.0 * spread as f64) as f32 * ratios[1]) as i32;
    let d = 210 + 159 + 562 + a;
    let dd = d - c;
    let e = 1341 - d;
    [
        Diffuser::new(f_round(diffscale * b as f32), 0.75),
        Diffuser::new(f_round(diffscale * cc as f32), 0.75),
        Diffuser::new(f_round(diffscale * dd as f32), 0.625),
        Diffuser::new(f_round(diffscale * e as f32), 0.625),
    ]
}

impl GVerb {
    fn set_room_size(&mut self, a: f32, cx: &UnitCtx<'_>) {
        self.room_size = if a <= 1.0 || a.is_nan() {
            1.0
        } else if a >= self.max_room_size {
            self.max_room_size - 1.0
        } else {
            a
        };
        let largest = (cx.rate.sample_rate * self.room_size as f64 / 340.0) as f32;
        for (len, ratio) in self.fdn_lens.iter_mut().zip([0.0, 0.816490, 0.707100, 0.632450]).skip(1) {
            *len = (ratio * largest as f64) as i32;
        }
        self.update_fdn_gains(cx);
        for (tap, ratio) in self.taps.iter_mut().zip([0.410, 0.300, 0.155]) {
            *tap = 5 + (ratio * largest as f64) as i32;
        }
        self.taps[3] = 5;
        let sf = cx.rate.slope_factor as f32;
        for i in 0..ORDER {
            let old = self.tap_gains[i];
            self.tap_gains[i] = self.alpha.powf(self.taps[i] as f64) as f32;
            self.tap_gain_slopes[i] = (self.tap_gains[i] - old) * sf;
        }
    }

    fn update_fdn_gains(&mut self, cx: &UnitCtx<'_>) {
        let sf = cx.rate.slope_factor as f32;
        for i in 0..ORDER {
            let old = self.fdn_gains[i];
            self.fdn_gains[i] = fdn_gain(self.alpha, self.fdn_lens[i]);
            self.fdn_gain_slopes[i] = (self.fdn_gains[i] - old) * sf;
        }
    }

    fn set_rev_time(&mut self, a: f32, cx: &UnitCtx<'_>) {
        self.rev_time = a;
        let n = cx.rate.sample_rate * a as f64;
        self.alpha = 0.001f32.powf((1.0 / n) as f32) as f64;
        self.update_fdn_gains(cx);
    }

    /// Sets a level and its ramp; returns the old level, where the ramp starts.
    fn set_level(level: &mut f32, slope: &mut f32, a: f32, cx: &UnitCtx<'_>) -> f32 {
        let old = *level;
        *level = a;
        *slope = (a - old) * cx.rate.slope_factor as f32;
        old
    }
}

impl Construct for GVerb {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let sr = cx.rate.sample_rate;
        let room_size = io.in0(ROOM_SIZE);
        let rev_time = io.in0(REV_TIME);
        let damping = io.in0(DAMPING);
        let spread = io.in0(SPREAD);
        let max_room_size = io.in0(MAX_ROOM_SIZE);
        let max_delay = (sr * max_room_size as f64 / 340.0f32 as f64) as f32;
        let largest = (sr * room_size as f64 / 340.0f32 as f64) as f32;
        let n = (sr * rev_time as f64) as f32;
        let alpha = (0.001f32 as f64).powf(1.0 / n as f64);
        let mut fdn_lens = [0; ORDER];
        let mut fdn_gains = [0.0; ORDER];
        for (i, mul) in [1.000f32, 0.816490, 0.707100, 0.632450].into_iter().enumerate() {
            let gb = mul * largest;
            fdn_lens[i] = if i == 0 { nearest_prime(gb as i32) } else { f_round(gb) };
            fdn_gains[i] = fdn_gain(alpha, fdn_lens[i]);
        }
        let line_max = max_delay as i32 + 1000;
        let diffscale = (fdn_lens[3] as f32 as f64 / (210.0 + 159.0 + 562.0 + 410.0)) as f32;
        let mut taps = [5; ORDER];
        for (tap, ratio) in taps.iter_mut().zip([0.410, 0.300, 0.155]) {
            *tap = 5 + (ratio * largest as f64) as i32;
        }
        let tap_gains = taps.map(|t| alpha.powf(t as f64) as f32);
        let unit = GVerb {
            room_size,
            rev_time,
            damping,
            input_bw: 0.0,
            dry: 0.0,
            early: 0.0,
            tail: 0.0,
            max_room_size,
            alpha,
            input_damper: Damper { damping: 1.0, delay: 0.0 },
            fdn_dels: fdn_lens.map(|len| FixedDelay::new(len, line_max)),
            fdn_damps: std::array::from_fn(|_| Damper { damping, delay: 0.0 }),
            fdn_lens,
            fdn_gains,
            // scsynth leaves these unset until the first parameter change.
            fdn_gain_slopes: [0.0; ORDER],
            ldifs: diffusers(diffscale, spread, [0.125541, 0.854046]),
            rdifs: diffusers(diffscale, spread, [-0.568366, -0.126815]),
            tap_delay: FixedDelay::new(44000, 44000),
            taps,
            tap_gains,
            tap_gain_slopes: [0.0; ORDER],
            dry_slope: 0.0,
            early_slope: 0.0,
            tail_slope: 0.0,
            u: [0.0; ORDER],
            f: [0.0; ORDER],
            d: [0.0; ORDER],
        };
        io.out(0)[0] = 0.0;
        io.out(1)[0] = 0.0;
        unit
    }
}

impl Unit for GVerb {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let room_size = io.in0(ROOM_SIZE);
        let rev_time = io.in0(REV_TIME);
        let damping = io.in0(DAMPING);
        let input_bw = io.in0(INPUT_BW);
        let (mut dry, mut early, mut tail) = (io.in0(DRY), io.in0(EARLY), io.in0(TAIL));
        #[allow(clippy::float_cmp)]
        let changed = room_size != self.room_size
            || rev_time != self.rev_time
            || damping != self.damping
            || input_bw != self.input_bw
            || dry != self.dry
            || early != self.early
            || tail != self.tail;
        if changed {
            self.set_room_size(room_size, cx);
            self.set_rev_time(rev_time, cx);
            self.damping = damping;
            for d in &mut self.fdn_damps {
                d.damping = damping;
            }
            self.input_bw = input_bw;
            self.input_damper.damping = (1.0 - input_bw as f64) as f32;
            dry = Self::set_level(&mut self.dry, &mut self.dry_slope, dry, cx);
            early = Self::set_level(&mut self.early, &mut self.early_slope, early, cx);
            tail = Self::set_level(&mut self.tail, &mut self.tail_slope, tail, cx);
        }
        let (dry_slope, early_slope, tail_slope) = (self.dry_slope, self.early_slope, self.tail_slope);
        let input = io.inp(0);
        let [outl, outr] = io.outs::<2>();
        for i in 0..outl.len() {
            let x = crate::common::signal::at(input, i);
            let x = if x.is_nan() { 0.0 } else { x };
            let z = self.input_damper.run(x);
            let z = self.ldifs[0].run(z);
            for j in 0..ORDER {
                self.u[j] = self.tap_gains[j] * self.tap_delay.read(self.taps[j]);
            }
            self.tap_delay.write(z);
            for j in 0..ORDER {
                let delayed = self.fdn_gains[j] * self.fdn_dels[j].read(self.fdn_lens[j]);
                self.d[j] = self.fdn_damps[j].run(delayed);
            }
            let mut sum = 0.0f32;
            let mut sign = 1.0f32;
            for j in 0..ORDER {
                sum += sign * (tail * self.d[j] + early * self.u[j]);
                sign = -sign;
            }
            sum += x * early;
            let [d0, d1, d2, d3] = self.d;
            self.f = [
                0.5 * (d0 + d1 - d2 - d3),
                0.5 * (d0 - d1 - d2 + d3),
                0.5 * (-d0 + d1 - d2 + d3),
                0.5 * (d0 + d1 + d2 + d3),
            ];
            for j in 0..ORDER {
                self.fdn_dels[j].write(self.u[j] + self.f[j]);
            }
            let mut l = sum;
            let mut r = sum;
            for k in 1..ORDER {
                l = self.ldifs[k].run(l);
            }
            for k in 1..ORDER {
                r = self.rdifs[k].run(r);
            }
            let wet_dry = x * dry;
            outl[i] = l + wet_dry;
            outr[i] = r + wet_dry;
            dry += dry_slope;
            tail += tail_slope;
            early += early_slope;
            for j in 0..ORDER {
                self.fdn_gains[j] += self.fdn_gain_slopes[j];
                self.tap_gains[j] += self.tap_gain_slopes[j];
            }
        }
        self.fdn_gain_slopes = [0.0; ORDER];
        self.tap_gain_slopes = [0.0; ORDER];
        self.dry_slope = 0.0;
        self.early_slope = 0.0;
        self.tail_slope = 0.0;
    }
}
