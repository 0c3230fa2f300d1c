//! `BeatTrack`: autocorrelation beat tracking on a 1024-point FFT chain.
//!
//! Every FFT frame adds a value of a complex-domain onset detection function
//! to a history. Every 128 frames an analysis starts that is spread over the
//! following blocks (one step per block, as in scsynth, to bound the work
//! per block): autocorrelation of the last 512 values, a tempo estimate under
//! a general and a context-dependent model, detection of tempo changes, and a
//! phase search. A phase accumulator then emits beat, half-beat and
//! quarter-beat triggers and the tempo in beats per second.

use super::beat_tables::{CONTEXT_MODEL, GENERAL_MODEL};
use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const HALF: usize = 512;
const FRAME_PERIOD: f64 = 0.01161;
const SKIP: i64 = 128;
const DF_LEN: i32 = 512;
const DF_STORE: i32 = 700;
const LAGS: usize = 128;

/// The analysis step a block performs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Idle,
    Autocorr,
    PeriodGeneral,
    PeriodContext,
    Decide,
    RedoContext,
    FlatPhase,
    Phase,
    Final,
}

/// `BeatTrack.kr(chain, lock)`: beat, half-beat and quarter-beat triggers and the tempo.
pub struct BeatTrack {
    frame_period: f32,
    prev_mag: Vec<f32>,
    prev_phase: Vec<f32>,
    predict: Vec<f32>,
    frame: i64,
    df: [f32; DF_STORE as usize],
    df_counter: i32,
    df_mem_counter: usize,
    df_mem: [f32; 15],
    /// The autocorrelation followed by the context model: the period search
    /// reads a little past the first into the second, as scsynth's layout does.
    acf_mg: [f32; DF_LEN as usize + LAGS],
    best_tor_sum: f32,
    best_column: i32,
    phase_weights: [f32; LAGS],
    tor: f32,
    tor_round: i32,
    period_p: f32,
    period_g: f32,
    flag_step: i32,
    prev_period_p: [f32; 3],
    best_phase_score: f32,
    best_phase: i32,
    curr_tempo: f32,
    curr_phase: f32,
    phase: f32,
    phase_per_block: f32,
    out_phase: f32,
    out_tempo: f32,
    out_phase_per_block: f32,
    half_trig: bool,
    q1_trig: bool,
    q2_trig: bool,
    step: Step,
    amort_count: i32,
    amort_length: i32,
    amort_steps: i32,
    context: bool,
    time_sig: i32,
    store_df_counter: i32,
    store_df_counter_end: i32,
    block: usize,
    sample_rate: f32,
}

impl Construct for BeatTrack {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut srate = cx.world.full_rate.sample_rate as f32;
        if srate as f64 > 44100.0 * 1.5 {
            srate *= 0.5;
        }
        let conversion = (srate as f64 / 44100.0) as f32;
        let frame_period = (FRAME_PERIOD / conversion as f64) as f32;
        let block = cx.world.full_rate.buf_length;
        let sample_rate = cx.world.sample_rate as f32;
        let phase_per_block = (block as f32 * 2.0) / sample_rate;
        let unit = BeatTrack {
            frame_period,
            prev_mag: vec![0.0; HALF],
            prev_phase: vec![0.0; HALF],
            predict: vec![0.0; HALF],
            frame: 1,
            df: [0.0; DF_STORE as usize],
            df_counter: DF_STORE - 1,
            df_mem_counter: 14,
            df_mem: [0.0; 15],
            acf_mg: [0.0; DF_LEN as usize + LAGS],
            best_tor_sum: 0.0,
            best_column: 0,
            phase_weights: [0.0; LAGS],
            tor: 0.0,
            tor_round: 0,
            period_p: 0.0,
            period_g: 0.0,
            flag_step: 0,
            prev_period_p: [0.0; 3],
            best_phase_score: 0.0,
            best_phase: 0,
            curr_tempo: 2.0,
            curr_phase: 0.0,
            phase: 0.0,
            phase_per_block,
            out_phase: 0.0,
            out_tempo: 2.0,
            out_phase_per_block: phase_per_block,
            half_trig: false,
            q1_trig: false,
            q2_trig: false,
            step: Step::Idle,
            amort_count: 0,
            amort_length: 0,
            amort_steps: 0,
            context: false,
            time_sig: 4,
            store_df_counter: 0,
            store_df_counter_end: 0,
            block,
            sample_rate,
        };
        let o = io.outs::<4>();
        o[0][0] = 0.0;
        o[1][0] = 0.0;
        o[2][0] = 0.0;
        o[3][0] = unit.out_tempo;
        unit
    }
}

impl BeatTrack {
    fn reset_search(&mut self, step: Step) {
        self.step = step;
        self.amort_length = 128;
        self.amort_count = 0;
        self.best_column = 0;
        self.best_tor_sum = -1000.0;
    }

    /// One block's share of the analysis.
    fn amortised_step(&mut self) {
        self.amort_steps = self.amort_steps.wrapping_add(1);
        match self.step {
            Step::Idle => {}
            Step::Autocorr => {
                self.autocorr(self.amort_count);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.reset_search(Step::PeriodGeneral);
                }
            }
            Step::PeriodGeneral => {
                self.beat_period(self.amort_count, false);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.period_p = self.find_tor();
                    if self.context {
                        self.reset_search(Step::PeriodContext);
                    } else {
                        // Forces a tempo change on the first analysis.
                        self.period_g = -1000.0;
                        self.step = Step::Decide;
                    }
                }
            }
            Step::PeriodContext => {
                self.beat_period(self.amort_count, true);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.period_g = self.find_tor();
                    self.step = Step::Decide;
                }
            }
            Step::Decide => {
                if self.period_changed() {
                    self.reset_search(Step::RedoContext);
                    self.context = true;
                    self.time_sig = 4;
                    let start = 128 - (self.period_p + 0.5) as i32;
                    for i in 0..LAGS {
                        let src = start + i as i32;
                        self.acf_mg[DF_LEN as usize + i] =
                            if src >= 0 { CONTEXT_MODEL.get(src as usize).copied().unwrap_or(0.0) } else { 0.0 };
                    }
                } else {
                    self.tor = if self.context { self.period_g } else { self.period_p };
                    self.tor_round = (self.tor + 0.5) as i32;
                    self.step = Step::Phase;
                    self.amort_length = self.tor_round;
                    self.amort_count = 0;
                }
            }
            Step::RedoContext => {
                self.beat_period(self.amort_count, true);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.period_g = self.find_tor();
                    self.tor = self.period_g;
                    self.tor_round = (self.tor + 0.5f32) as i32;
                    self.step = Step::FlatPhase;
                    self.amort_length = self.tor_round;
                    self.amort_count = 0;
                    self.setup_phase_weights();
                }
            }
            Step::FlatPhase => {
                self.find_phase(self.amort_count, false, 0);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.step = Step::Final;
                }
            }
            Step::Phase => {
                let predicted = (self.curr_phase * self.tor_round as f32 + 0.5) as i32;
                self.find_phase(self.amort_count, self.context, predicted);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.step = Step::Final;
                }
            }
            Step::Final => {
                self.final_decision();
                self.step = Step::Idle;
            }
        }
    }

    fn autocorr(&mut self, j: i32) {
        let base = self.store_df_counter + DF_STORE;
        for k in 0..4 {
            let lag = 4 * j + k;
            let correction = (lag - DF_LEN).abs();
            let mut sum = 0.0f32;
            for i in lag..DF_LEN {
                let a = self.df[((i + base) % DF_STORE) as usize];
                let b = self.df[((i + base - lag) % DF_STORE) as usize];
                sum += a * b;
            }
            if let Some(slot) = self.acf_mg.get_mut(lag as usize) {
                *slot = sum * correction as f32;
            }
        }
    }

    /// `acf[i - 1]` as the period search indexes it.
    fn acf1(&self, i: i32) -> f32 {
        if i < 1 {
            return 0.0;
        }
        self.acf_mg.get((i - 1) as usize).copied().unwrap_or(0.0)
    }

    /// The index (counted from 1 within `lo..=hi`) of the largest value there.
    fn argmax(&self, lo: i32, hi: i32) -> i32 {
        let mut best = 0;
        let mut max = -1000.0f32;
        for i in lo..=hi {
            let v = self.acf1(i);
            if v > max {
                max = v;
                best = i - lo + 1;
            }
        }
        best
    }

    /// The beat period in frames, refined from the best column's multiples.
    fn find_tor(&self) -> f32 {
        let ind = self.best_column + 1;
        let ind2 = self.argmax(2 * ind - 1, 2 * ind + 1) + 2 * (ind + 1) - 2;
        let ind3 = self.argmax(3 * ind - 2, 3 * ind + 2) + 3 * ind - 4;
        if self.time_sig == 4 {
            let ind4 = self.argmax(4 * ind - 3, 4 * ind + 3) + 4 * ind - 9;
            ((ind as f64 + ind2 as f64 * 0.5 + (ind3 as f32 / 3.0) as f64 + ind4 as f64 * 0.25) * 0.25) as f32
        } else {
            ((ind as f64 + ind2 as f64 * 0.5 + (ind3 as f32 / 3.0) as f64) * 0.3333333) as f32
        }
    }

    fn beat_period(&mut self, j: i32, context: bool) {
        let mut sum = 0.0f32;
        for i in 1..=self.time_sig {
            let num = 2 * i - 1;
            let wt = (1.0 / num as f32 as f64) as f32;
            for k in 0..num {
                let pos = k + i * j;
                if pos < DF_LEN {
                    sum += self.acf_mg[pos as usize] * wt;
                }
            }
        }
        let m = if context {
            GENERAL_MODEL.get(j as usize).copied().unwrap_or(0.0)
        } else {
            self.acf_mg.get(DF_LEN as usize + j as usize).copied().unwrap_or(0.0)
        };
        sum *= m;
        if sum > self.best_tor_sum {
            self.best_tor_sum = sum;
            self.best_column = j;
        }
    }

    fn find_phase(&mut self, j: i32, gauss: bool, predicted: i32) {
        let period = self.tor_round;
        let base = self.store_df_counter_end + DF_STORE;
        let numfit = if period != 0 { DF_LEN / period - 1 } else { -1 };
        let mut sum = 0.0f32;
        for k in 0..numfit {
            let loc = (base - period * k - j).rem_euclid(DF_STORE);
            sum += self.df[loc as usize] / (k + 1) as f32;
        }
        if gauss {
            let diff = (predicted - j).abs().min((period - predicted + j).abs());
            sum *= self.phase_weights.get(diff as usize).copied().unwrap_or(0.0);
        }
        if sum > self.best_phase_score {
            self.best_phase_score = sum;
            self.best_phase = j;
        }
    }

    /// Gaussian weights around the predicted phase.
    fn setup_phase_weights(&mut self) {
        let sigma = self.tor_round as f32 * 0.25;
        let mult = (1.0 / (2.5066283 * sigma as f64)) as f32;
        let mult2 = (1.0 / (2.0 * sigma as f64 * sigma as f64)) as f32;
        for (i, w) in self.phase_weights.iter_mut().enumerate() {
            let x = -((i * i) as i32) as f32 * mult2;
            *w = (mult as f64 * (x as f64).exp()) as f32;
        }
    }

    /// Whether the general-model period has moved away from the context one
    /// and then held steady for three analyses.
    fn period_changed(&mut self) -> bool {
        if self.flag_step == 0 {
            if (self.period_g - self.period_p).abs() > 3.9017 {
                self.flag_step = 3;
            }
        } else {
            self.flag_step -= 1;
        }
        if self.flag_step != 0 {
            self.prev_period_p[(self.flag_step - 1) as usize] = self.period_p;
        }
        if self.flag_step == 1 {
            self.flag_step = 0;
            let p = &self.prev_period_p;
            if (2.0 * p[0] - p[1] - p[2]).abs() < 7.8034 {
                return true;
            }
        }
        false
    }

    fn final_decision(&mut self) {
        self.curr_tempo = (1.0 / (self.tor * self.frame_period) as f64) as f32;
        let block = self.block as f32;
        self.phase_per_block = (block * self.curr_tempo) / self.sample_rate;
        let mut elapsed = (self.amort_steps as f32 * self.block as f32) / self.sample_rate;
        // The detection function lags the signal by seven frames.
        elapsed += 7.0 * self.frame_period;
        let phase_elapsed = elapsed * self.curr_tempo;
        let before = self.best_phase as f32 / self.tor_round as f32;
        self.phase = (before + phase_elapsed) % 1.0;
        self.curr_phase = self.phase;
    }

    /// Adds one value of the complex-domain detection function, peak-picked
    /// against the last 15 raw values.
    fn detection(&mut self, data: &[f32]) {
        let at = |i: usize| data.get(i).copied().unwrap_or(0.0);
        let mut sum = 0.0f32;
        for k in 1..HALF {
            let (re, im) = (at(2 * k), at(2 * k + 1));
            let mag = (re * re + im * im).sqrt();
            let qmag = self.prev_mag[k];
            self.prev_mag[k] = mag;
            let phase = (im as f64).atan2(re as f64) as f32;
            let old = self.predict[k];
            self.predict[k] = 2.0 * phase - self.prev_phase[k];
            self.prev_phase[k] = phase;
            let d = (phase - old) as f64;
            let real = (qmag as f64 - mag as f64 * d.cos()) as f32;
            let imag = (mag as f64 * d.sin()) as f32;
            sum += (real * real + imag * imag).sqrt();
        }
        self.df_mem_counter = (self.df_mem_counter + 1) % 15;
        self.df_mem[self.df_mem_counter] = sum;
        let refpos = self.df_mem_counter + 15;
        let centre = self.df_mem[(refpos - 7) % 15];
        let mut rating = 0.0f32;
        for k in 0..15 {
            let mut v = centre - self.df_mem[(refpos - k) % 15];
            if v < 0.0 {
                v *= 10.0;
            }
            rating += v;
        }
        if rating < 0.0 {
            rating = 0.0;
        }
        self.df_counter = (self.df_counter + 1) % DF_STORE;
        self.df[self.df_counter as usize] = rating * 0.1;
    }
}

impl Unit for BeatTrack {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.amortised_step();
        let fbufnum = io.in0(0);
        if !(fbufnum < 0.0) {
            self.frame += 1;
            if let Some(buf) = resolve_buffer_index(cx.world, fbufnum).and_then(|i| cx.world.buf(i)) {
                // The data is read as complex whatever form the buffer is in.
                self.detection(&buf.data);
            }
            if self.frame % SKIP == 0 {
                self.best_column = 0;
                self.best_tor_sum = -1000.0;
                self.best_phase_score = -1000.0;
                self.best_phase = 0;
                self.step = Step::Autocorr;
                self.amort_count = 0;
                self.amort_length = 128;
                self.amort_steps = 0;
                self.store_df_counter = self.df_counter + DF_STORE - DF_LEN;
                self.store_df_counter_end = self.df_counter;
                self.curr_phase = self.phase;
            }
        }
        self.phase += self.phase_per_block;
        if io.in0(1) < 0.5 {
            self.out_phase = self.phase;
            self.out_tempo = self.curr_tempo;
            self.out_phase_per_block = self.phase_per_block;
        } else {
            self.out_phase += self.out_phase_per_block;
        }
        if self.phase >= 1.0 {
            self.phase -= 1.0;
        }
        let mut trig = [0.0f32; 3];
        if self.out_phase >= 1.0 {
            self.out_phase -= 1.0;
            trig = [1.0; 3];
            self.half_trig = false;
            self.q1_trig = false;
            self.q2_trig = false;
        }
        if self.out_phase >= 0.5 && !self.half_trig {
            trig[1] = 1.0;
            trig[2] = 1.0;
            self.half_trig = true;
        }
        if self.out_phase >= 0.25 && !self.q1_trig {
            trig[2] = 1.0;
            self.q1_trig = true;
        }
        if self.out_phase >= 0.75 && !self.q2_trig {
            trig[2] = 1.0;
            self.q2_trig = true;
        }
        let tempo = self.out_tempo;
        let o = io.outs::<4>();
        o[0][0] = trig[0];
        o[1][0] = trig[1];
        o[2][0] = trig[2];
        o[3][0] = tempo;
    }
}
