//! Hilbert (a pair of 90°-apart all-pass chains) and FreqShift (single-
//! sideband shifting built on it).

use crate::common::signal::zap as zap64;
use crate::common::signal::zap_f32 as zap32;
use crate::common::math::d2i;
use crate::common::wavetable::{lookupi1, sine_tables, SINE_MASK, SINE_SIZE};
use crate::simd::ramp::calc_slope;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use std::f64::consts::PI;

/// Pole frequencies (Hz) of the twelve first-order all-passes: six for the
/// cosine branch, six for the sine branch.
const POLES: [f32; 12] = [
    0.3609, 2.7412, 11.1573, 44.7581, 179.6242, 798.4578, 1.2524, 5.5671, 22.3423, 89.6271, 364.7914, 2770.1114,
];

/// The all-pass coefficients for `gamconst` = 15π / sample rate.
fn coefficients(gamconst: f64) -> [f64; 12] {
    POLES.map(|p| {
        let gamma = gamconst * p as f64;
        (gamma - 1.0) / (gamma + 1.0)
    })
}

/// One sample through both chains: the cosine and sine outputs. `Y` is the
/// state's number type, `C` the coefficients' (the two units keep different
/// precisions); the arithmetic between stages is in double precision.
macro_rules! chains {
    ($x:expr, $coefs:expr, $y1:expr, $t:ty) => {{
        let mut a = [0.0f64; 2];
        for (branch, out) in a.iter_mut().enumerate() {
            let mut x: f64 = $x as f64;
            for k in branch * 6..branch * 6 + 6 {
                let c = $coefs[k];
                let y0: f64 = if k == branch * 6 { ($x - c * $y1[k]) as f64 } else { x - (c * $y1[k]) as f64 };
                x = c as f64 * y0 + $y1[k] as f64;
                $y1[k] = y0 as $t;
            }
            *out = x;
        }
        a
    }};
}

/// Hilbert.ar(in): outputs the input shifted by 0° and by 90° over most of
/// the audio band.
pub struct Hilbert {
    coefs: [f64; 12],
    y1: [f64; 12],
}

impl Hilbert {
    fn run(&mut self, io: &mut Wires<'_>, n: usize) {
        // scsynth runs the chains with single-precision coefficients and state.
        let coefs = self.coefs.map(|c| c as f32);
        let mut y1 = self.y1.map(|y| y as f32);
        let input = io.inp(0);
        let [cos, sin] = io.outs::<2>();
        for i in 0..n {
            let x = crate::common::signal::at(input, i);
            let [c, s] = chains!(x, coefs, y1, f32);
            cos[i] = c as f32;
            sin[i] = s as f32;
        }
        self.y1 = y1.map(|y| zap32(y) as f64);
    }
}

impl Construct for Hilbert {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let gamconst = (15.0f32 * std::f32::consts::PI) as f64 / cx.rate.sample_rate;
        let mut unit = Hilbert { coefs: coefficients(gamconst), y1: [0.0; 12] };
        // The constructor's sample goes through the chains, and its state stays.
        unit.run(io, 1);
        unit
    }
}

impl Unit for Hilbert {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let n = io.n();
        self.run(io, n);
    }
}

/// FreqShift.ar(in, freq, phase): the input's spectrum moved by `freq` Hz
/// (single sideband), its phase offset by `phase` radians.
pub struct FreqShift {
    coefs: [f32; 12],
    y1: [f32; 12],
    phase: i32,
    phase_in: f32,
    rad_to_inc: f64,
    cps_to_inc: f64,
    mode: [Rate; 2],
}

impl FreqShift {
    /// One block of `n` samples; `kk` forces the control-rate loop (as the constructor does).
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>, n: usize, kk: bool) {
        let table = &sine_tables().wavetable[..];
        let half_pi = d2i(self.rad_to_inc * (0.5 * PI)) as u32;
        let coefs = self.coefs.map(|c| c as f64);
        let mut y1 = self.y1.map(|y| y as f64);
        let input = io.inp(0);
        let freq_in = io.inp(1);
        let phase_in = io.inp(2);
        let audio_freq = !kk && self.mode[0] == Rate::Audio;
        let audio_phase = !kk && self.mode[1] == Rate::Audio;
        let mut phase = self.phase;
        // Control-rate frequency: one increment for the block; control-rate phase: a ramp.
        let freq_inc = d2i(self.cps_to_inc * freq_in[0] as f64);
        let mut phase_mod = self.phase_in;
        let phase_slope = calc_slope(phase_in[0], self.phase_in, cx.rate.slope_factor);
        let kk_inc = freq_inc.wrapping_add(d2i(phase_slope as f64 * self.rad_to_inc));
        let out = io.out(0);
        for i in 0..n {
            let [c, s] = chains!(crate::common::signal::at(input, i) as f64, coefs, y1, f64);
            let (outcos, outsin) = (c as f32, s as f32);
            let offset = if kk {
                phase
            } else if audio_phase {
                phase.wrapping_add(d2i(self.rad_to_inc * phase_in[i] as f64))
            } else {
                let p = phase.wrapping_add(d2i(self.rad_to_inc * phase_mod as f64));
                phase_mod += phase_slope;
                p
            };
            // SAFETY: the sine wavetable holds 2 * SINE_SIZE values and SINE_MASK is SINE_SIZE - 1.
            let (sin_osc, cos_osc) = unsafe {
                (lookupi1(table, offset as u32, SINE_MASK), lookupi1(table, (offset as u32).wrapping_add(half_pi), SINE_MASK))
            };
            phase = if kk {
                phase.wrapping_add(kk_inc)
            } else if audio_freq {
                phase.wrapping_add(d2i(self.cps_to_inc * freq_in[i] as f64))
            } else {
                phase.wrapping_add(freq_inc)
            };
            out[i] = outcos * cos_osc + sin_osc * outsin;
        }
        self.phase = phase;
        if kk || !audio_phase {
            self.phase_in = phase_in[0];
        }
        self.y1 = y1.map(|y| zap64(y) as f32);
    }
}

impl Construct for FreqShift {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = SINE_SIZE as f64;
        let gamconst = (15.0 * PI) / cx.rate.sample_rate;
        let mut unit = FreqShift {
            coefs: coefficients(gamconst).map(|c| c as f32),
            y1: [0.0; 12],
            // scsynth sets the starting phase from a factor it has not set yet (0 in fresh memory).
            phase: 0,
            phase_in: io.in0(2),
            rad_to_inc: size * (1.0 / (2.0 * PI) * 65536.0),
            cps_to_inc: size * cx.rate.sample_dur * 65536.0,
            mode: [io.in_rate(1), io.in_rate(2)],
        };
        // The constructor runs one sample of the control-rate loop, whatever the input rates.
        unit.run(io, cx, 1, true);
        unit
    }
}

impl Unit for FreqShift {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let kk = self.mode[0] != Rate::Audio && self.mode[1] != Rate::Audio;
        let n = io.n();
        self.run(io, cx, n, kk);
    }
}
