//! Units that follow a signal's history: LastValue, RunningSum,
//! ZeroCrossing, PeakFollower, MostChange, LeastChange and ModDif.

use crate::common::signal::{in0, in_rate, In};
use crate::common::math::c_int;
use crate::simd::ramp;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

// ---- LastValue --------------------------------------------------------------------

/// LastValue (`in, diff`): the value the input had before its last change
/// of at least `diff`.
pub struct LastValue {
    prev: f32,
    curr: f32,
    /// The input is read once per block (it is not audio rate).
    per_block: bool,
}

impl LastValue {
    fn run(&mut self, io: &mut Wires<'_>, per_block: bool) {
        let input = In::new(io, 0);
        let delta = in0(io, 1);
        let (mut prev, mut curr) = (self.prev, self.curr);
        let out = io.out(0);
        if per_block {
            let v = input.first();
            if (v - curr).abs() >= delta {
                prev = curr;
                curr = v;
            }
            out.fill(prev);
        } else {
            for (j, o) in out.iter_mut().enumerate() {
                let v = input.at(j);
                if (v - curr).abs() >= delta {
                    prev = curr;
                    curr = v;
                }
                *o = prev;
            }
        }
        self.prev = prev;
        self.curr = curr;
    }
}

impl Construct for LastValue {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let first = in0(io, 0);
        let per_block = in_rate(io, 0) != Rate::Audio;
        let mut unit = LastValue { prev: first, curr: first, per_block };
        unit.run(io, true);
        unit
    }
}

impl Unit for LastValue {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let per_block = self.per_block;
        self.run(io, per_block);
    }
}

// ---- RunningSum -----------------------------------------------------------------

/// RunningSum (`in, numsamp`): the sum of the last `numsamp` input samples.
/// A second sum restarted every `numsamp` samples replaces the running one
/// then, so rounding errors do not pile up.
pub struct RunningSum {
    window: Vec<f32>,
    count: usize,
    sum: f32,
    fresh_sum: f32,
}

impl Construct for RunningSum {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        // scsynth never finishes a block with a window under one sample.
        let len = c_int(in0(io, 1)).max(1) as usize;
        io.out(0)[0] = 0.0;
        RunningSum { window: crate::unit::unit_samples(len), count: 0, sum: 0.0, fresh_sum: 0.0 }
    }
}

impl Unit for RunningSum {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let input = In::new(io, 0);
        let out = io.out(0);
        let len = self.window.len();
        let (mut count, mut sum, mut fresh) = (self.count, self.sum, self.fresh_sum);
        for (j, o) in out.iter_mut().enumerate() {
            sum -= self.window[count];
            let v = input.at(j);
            self.window[count] = v;
            sum += v;
            fresh += v;
            *o = sum;
            count += 1;
            if count == len {
                count = 0;
                sum = fresh;
                fresh = 0.0;
            }
        }
        self.count = count;
        self.sum = sum;
        self.fresh_sum = fresh;
    }
}

// ---- ZeroCrossing ---------------------------------------------------------------

/// ZeroCrossing (`in`): the frequency implied by the time between the last
/// two upward zero crossings (interpolated to a fraction of a sample).
pub struct ZeroCrossing {
    level: f32,
    prev_frac: f32,
    prev_in: f32,
    counter: i64,
}

impl Construct for ZeroCrossing {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let prev_in = in0(io, 0);
        io.out(0)[0] = 0.0;
        ZeroCrossing { level: 0.0, prev_frac: 0.0, prev_in, counter: 0 }
    }
}

impl Unit for ZeroCrossing {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let input = In::new(io, 0);
        let sr = cx.rate.sample_rate;
        let (mut prev_in, mut prev_frac, mut level, mut counter) =
            (self.prev_in, self.prev_frac, self.level, self.counter);
        let out = io.out(0);
        for (j, o) in out.iter_mut().enumerate() {
            counter += 1;
            let cur = input.at(j);
            // Crossings closer than four samples are taken as noise.
            if counter > 4 && prev_in <= 0.0 && cur > 0.0 {
                let frac = -prev_in / (cur - prev_in);
                let period = frac + counter as f32 - prev_frac;
                level = (sr / period as f64) as f32;
                prev_frac = frac;
                counter = 0;
            }
            *o = level;
            prev_in = cur;
        }
        self.prev_in = prev_in;
        self.prev_frac = prev_frac;
        self.level = level;
        self.counter = counter;
    }
}

// ---- PeakFollower ---------------------------------------------------------------

/// PeakFollower (`in, decay`): jumps up to the input's magnitude and decays
/// towards it by the factor `decay` per sample.
pub struct PeakFollower {
    level: f32,
    decay: f32,
    /// The decay is a constant: never glided.
    fixed_decay: bool,
}

impl PeakFollower {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64, fixed_decay: bool) {
        let input = In::new(io, 0);
        let mut decay = in0(io, 1);
        let mut level = self.level;
        let out = io.out(0);
        if fixed_decay || decay == self.decay {
            for (j, o) in out.iter_mut().enumerate() {
                let inlevel = input.at(j).abs();
                level = if inlevel >= level { inlevel } else { inlevel + decay * (level - inlevel) };
                *o = level;
            }
        } else {
            // scsynth starts the glide at the new value and steps it only on
            // decaying samples; the law depends on the signs of both values.
            let slope = ramp::calc_slope(decay, self.decay, sf);
            let law = if decay >= 0.0 && self.decay >= 0.0 {
                0
            } else if decay <= 0.0 && self.decay <= 0.0 {
                1
            } else {
                2
            };
            for (j, o) in out.iter_mut().enumerate() {
                let inlevel = input.at(j).abs();
                if inlevel >= level {
                    level = inlevel;
                } else {
                    level = match law {
                        0 => inlevel + decay * (level - inlevel),
                        1 => inlevel + decay * (level + inlevel),
                        _ => (1.0 - decay.abs()) * inlevel + decay * level,
                    };
                    decay += slope;
                }
                *o = level;
            }
        }
        self.level = level;
        if !fixed_decay {
            self.decay = decay;
        }
    }
}

impl Construct for PeakFollower {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        // scsynth 3.13 starts from the input itself, sign included, and
        // outputs it as the first sample.
        let level = in0(io, 0);
        io.out(0)[0] = level;
        let fixed_decay = in_rate(io, 1) == Rate::Scalar;
        PeakFollower { level, decay: in0(io, 1), fixed_decay }
    }
}

impl Unit for PeakFollower {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let fixed = self.fixed_decay;
        self.run(io, cx.rate.slope_factor, fixed);
    }
}

// ---- MostChange / LeastChange -----------------------------------------------------

/// MostChange and LeastChange (`a, b`): whichever input changed more (or
/// less) since the previous sample; on a tie, the one chosen last.
pub struct ChangeSelect<const MOST: bool> {
    prev_a: f32,
    prev_b: f32,
    /// The last choice was `b`.
    chose_b: bool,
}

pub type MostChange = ChangeSelect<true>;
pub type LeastChange = ChangeSelect<false>;

impl<const MOST: bool> ChangeSelect<MOST> {
    fn run(&mut self, io: &mut Wires<'_>) {
        let (a_in, b_in) = (In::new(io, 0), In::new(io, 1));
        let (mut prev_a, mut prev_b, mut chose_b) = (self.prev_a, self.prev_b, self.chose_b);
        let out = io.out(0);
        for (j, o) in out.iter_mut().enumerate() {
            let (a, b) = (a_in.at(j), b_in.at(j));
            let diff = (a - prev_a).abs() - (b - prev_b).abs();
            let (pick_a, pick_b) = if MOST { (diff > 0.0, diff < 0.0) } else { (diff < 0.0, diff > 0.0) };
            if pick_a {
                chose_b = false;
            } else if pick_b {
                chose_b = true;
            }
            *o = if chose_b { b } else { a };
            prev_a = a;
            prev_b = b;
        }
        self.prev_a = prev_a;
        self.prev_b = prev_b;
        self.chose_b = chose_b;
    }
}

impl<const MOST: bool> Construct for ChangeSelect<MOST> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        // MostChange starts out preferring `b`, LeastChange `a`; the first
        // sample's state carries on.
        let mut unit = Self { prev_a: 0.0, prev_b: 0.0, chose_b: MOST };
        unit.run(io);
        unit
    }
}

impl<const MOST: bool> Unit for ChangeSelect<MOST> {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.run(io);
    }
}

// ---- ModDif -----------------------------------------------------------------------

/// ModDif (`x, y, mod`): the distance between `x` and `y` on a circle of
/// circumference `mod`.
pub struct ModDif {
    dif: f32,
    modulus: f32,
    /// Control-rate `y` or `mod` of an audio-rate unit glide over the block.
    glide_dif: bool,
    glide_mod: bool,
}

impl ModDif {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64, glide_dif: bool, glide_mod: bool) {
        let input = In::new(io, 0);
        let (dif_in, mod_in) = (In::new(io, 1), In::new(io, 2));
        let (mut dif, mut modulus) = (self.dif, self.modulus);
        let dif_slope = ramp::calc_slope(dif_in.first(), dif, sf);
        let mod_slope = ramp::calc_slope(mod_in.first(), modulus, sf);
        let out = io.out(0);
        for (j, o) in out.iter_mut().enumerate() {
            let d = if glide_dif { dif } else { dif_in.at(j) };
            let m = if glide_mod { modulus } else { mod_in.at(j) };
            let diff = (input.at(j) - d).abs() % m;
            let half = m * 0.5;
            *o = half - (diff - half).abs();
            if glide_dif {
                dif += dif_slope;
            }
            if glide_mod {
                modulus += mod_slope;
            }
        }
        if glide_dif {
            self.dif = dif;
        }
        if glide_mod {
            self.modulus = modulus;
        }
    }
}

impl Construct for ModDif {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        // With one-sample blocks nothing glides.
        let per_sample = cx.rate.buf_length > 1;
        let mut unit = ModDif {
            dif: in0(io, 1),
            modulus: in0(io, 2),
            glide_dif: per_sample && in_rate(io, 1) != Rate::Audio,
            glide_mod: per_sample && in_rate(io, 2) != Rate::Audio,
        };
        unit.run(io, cx.rate.slope_factor, true, true);
        unit
    }
}

impl Unit for ModDif {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (gd, gm) = (self.glide_dif, self.glide_mod);
        self.run(io, cx.rate.slope_factor, gd, gm);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    fn sine(freq: f32, len: usize) -> Vec<f32> {
        (0..len).map(|i| (std::f32::consts::TAU * freq * i as f32 / 48_000.0).sin()).collect()
    }

    #[test]
    fn zero_crossing_reports_a_sines_frequency() {
        let out = UnitHarness::new("ZeroCrossing", Rate::Audio).input(TestInput::Audio(sine(440.0, 64 * 40))).run(40);
        let last = *out[0].last().unwrap();
        assert!((last - 440.0).abs() < 0.5, "{last}");
    }

    #[test]
    fn running_sum_of_ones_counts_up_to_the_window() {
        let out = UnitHarness::new("RunningSum", Rate::Audio)
            .inputs([TestInput::Audio(vec![1.0; 640]), TestInput::Const(40.0)])
            .run(10);
        assert_eq!(out[0][0], 1.0);
        assert_eq!(out[0][38], 39.0);
        assert!(out[0][39..].iter().all(|&x| x == 40.0));
    }

    #[test]
    fn peak_follower_holds_peaks_and_decays() {
        let mut sig = vec![0.0; 256];
        sig[10] = -1.0;
        let out = UnitHarness::new("PeakFollower", Rate::Audio)
            .inputs([TestInput::Audio(sig), TestInput::Const(0.9)])
            .run(4);
        assert_eq!(out[0][10], 1.0);
        assert!((out[0][11] - 0.9).abs() < 1e-6);
        assert!(out[0][11..].windows(2).all(|w| w[1] < w[0]));
    }

    #[test]
    fn last_value_reports_the_value_before_a_big_enough_change() {
        let sig: Vec<f32> = (0..256).map(|i| if i < 100 { 0.0 } else if i < 150 { 0.05 } else { 1.0 }).collect();
        let out = UnitHarness::new("LastValue", Rate::Audio)
            .inputs([TestInput::Audio(sig), TestInput::Const(0.1)])
            .run(4);
        // A step of 0.05 is too small to count; the step to 1 does.
        assert_eq!(out[0][120], 0.0);
        assert_eq!(out[0][200], 0.0);
        let out = UnitHarness::new("LastValue", Rate::Audio)
            .inputs([TestInput::Audio((0..256).map(|i| (i / 64) as f32).collect()), TestInput::Const(0.5)])
            .run(4);
        assert_eq!(out[0][130], 1.0);
    }

    #[test]
    fn most_and_least_change_pick_opposite_inputs() {
        let a: Vec<f32> = (0..64).map(|i| i as f32 * 0.1).collect();
        let b: Vec<f32> = (0..64).map(|i| i as f32 * 0.01).collect();
        let run = |name: &str| {
            UnitHarness::new(name, Rate::Audio)
                .inputs([TestInput::Audio(a.clone()), TestInput::Audio(b.clone())])
                .run(1)
        };
        assert_eq!(run("MostChange")[0][10], a[10]);
        assert_eq!(run("LeastChange")[0][10], b[10]);
    }

    #[test]
    fn moddif_measures_distance_round_a_circle() {
        let out = UnitHarness::new("ModDif", Rate::Audio)
            .inputs([TestInput::Const(0.9), TestInput::Const(0.1), TestInput::Const(1.0)])
            .run(1);
        assert!((out[0][5] - 0.2).abs() < 1e-6, "{}", out[0][5]);
    }
}
