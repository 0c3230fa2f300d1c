//! IEnvGen: an envelope read at a time given by its index input instead of
//! played through. Inputs: index, offset, initial level, number of stages,
//! total duration, then per stage: duration, shape, curve, level.

use std::f64::consts::{FRAC_PI_2, PI};

use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

const SHAPE_STEP: i32 = 0;
const SHAPE_EXPONENTIAL: i32 = 2;
const SHAPE_SINE: i32 = 3;
const SHAPE_WELCH: i32 = 4;
const SHAPE_CURVE: i32 = 5;
const SHAPE_SQUARED: i32 = 6;
const SHAPE_CUBED: i32 = 7;
const SHAPE_HOLD: i32 = 8;

pub struct IEnvGen {
    level: f32,
    offset: f32,
    /// The last index seen, less the offset (compared, as in scsynth, with
    /// the raw index: with an offset every sample is looked up again).
    point_in: f32,
    /// The initial level, then four values per stage.
    env: Vec<f32>,
    audio_index: bool,
}

impl IEnvGen {
    #[inline]
    fn env_at(&self, i: usize) -> f32 {
        self.env.get(i).copied().unwrap_or(0.0)
    }

    /// The level at `point` seconds, updating the held level; `level` is
    /// the value reported so far this block.
    fn level_at(&mut self, point: f32, num_stages: i32, total_dur: f32) -> f32 {
        if point >= total_dur {
            self.level = self.env_at((num_stages.max(0) * 4) as usize);
            return self.level;
        }
        if point <= 0.0 {
            self.level = self.env_at(0);
            return self.level;
        }
        // Walk the stages until their summed durations pass the point.
        let mut newtime = 0.0f32;
        let mut segpos = point;
        let mut seglen = 0.0f32;
        let mut stage = 0usize;
        let mut j = 0usize;
        while point >= newtime && j * 4 + 4 < self.env.len() {
            seglen = self.env[j * 4 + 1];
            newtime += seglen;
            segpos -= seglen;
            stage = j;
            j += 1;
        }
        segpos += seglen;
        let base = stage * 4;
        let beg = self.env_at(base);
        let shape = self.env_at(base + 2) as i32;
        let curve = self.env_at(base + 3) as i32;
        let end = self.env_at(base + 4);
        let pos = segpos / seglen;
        let level = match shape {
            SHAPE_STEP => end,
            SHAPE_HOLD => {
                let held = self.level;
                self.level = end;
                return held;
            }
            SHAPE_EXPONENTIAL => beg * (end / beg).powf(pos),
            SHAPE_SINE => (beg as f64 + (end - beg) as f64 * (-(PI * pos as f64).cos() * 0.5 + 0.5)) as f32,
            SHAPE_WELCH => {
                if beg < end {
                    (beg as f64 + (end - beg) as f64 * (FRAC_PI_2 * pos as f64).sin()) as f32
                } else {
                    (end as f64 - (end - beg) as f64 * (FRAC_PI_2 - FRAC_PI_2 * pos as f64).sin()) as f32
                }
            }
            // The curve arrives truncated to a whole number.
            SHAPE_CURVE if curve != 0 => {
                let c = curve as f32;
                let denom = 1.0 - c.exp() as f64;
                let numer = 1.0 - (pos * c).exp() as f64;
                (beg as f64 + (end - beg) as f64 * (numer / denom)) as f32
            }
            SHAPE_SQUARED => {
                let (b, e) = (beg.sqrt() as f64, end.sqrt() as f64);
                let l = pos as f64 * (e - b) + b;
                (l * l) as f32
            }
            SHAPE_CUBED => {
                let (b, e) = (beg.powf(0.333_333_3) as f64, end.powf(0.333_333_3) as f64);
                let l = pos as f64 * (e - b) + b;
                (l * l * l) as f32
            }
            _ => pos * (end - beg) + beg,
        };
        self.level = level;
        level
    }
}

impl Construct for IEnvGen {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let num_stages = io.in0(3) as i32;
        let num_vals = (num_stages.max(0) as usize) * 4;
        // The stage count is an input: sized within what a unit may take.
        let mut env = crate::unit::unit_samples(num_vals + 1);
        env[0] = io.in0(2);
        let inputs = io.num_inputs();
        for (i, v) in env.iter_mut().enumerate().skip(1) {
            *v = if 4 + i < inputs { io.in0(4 + i) } else { 0.0 };
        }
        let offset = io.in0(1);
        let point = io.in0(0) - offset;
        let mut unit = IEnvGen { level: 0.0, offset, point_in: point, env, audio_index: io.in_rate(0) == Rate::Audio };
        let level = unit.level_at(point, num_stages, io.in0(4));
        io.out(0)[0] = level;
        unit
    }
}

impl Unit for IEnvGen {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let index = io.inp(0);
        let num_stages = io.in0(3) as i32;
        let total_dur = io.in0(4);
        let n = io.n();
        let audio = self.audio_index;
        let mut level = self.level;
        let out = io.out(0);
        for (i, o) in out.iter_mut().enumerate().take(n) {
            let x = if audio { index[i] } else { index[0] };
            if x != self.point_in {
                let point = (x - self.offset).max(0.0);
                self.point_in = point;
                level = self.level_at(point, num_stages, total_dur);
            }
            *o = level;
        }
    }
}
