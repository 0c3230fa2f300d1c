//! `BeatTrack2`: template-matching beat tracking over features the user
//! writes to consecutive control buses. Every half second the last few
//! seconds of each feature are matched against beat templates (120 tempi,
//! straight and swung, every phase at the given accuracy), spread over the
//! following blocks; the tempo is adopted when two analyses agree.

use super::beat_tables::PERIODS;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const TEMPI: usize = 120;
const SEP: [f32; 8] = [0.0, 0.25, 0.5, 0.75, 0.0, 0.32, 0.5, 0.82];
const WEIGHT: [f32; 4] = [1.0, 0.5, 0.9, 0.6];
const SPREAD: [f32; 9] = [0.05, 0.1, 0.3, 0.7, 1.0, 0.7, 0.3, 0.1, 0.05];

/// `BeatTrack2.kr(busindex, numfeatures, windowsize, phaseaccuracy, lock,
/// weightingscheme)`: beat, half and quarter triggers, tempo, phase, groove.
pub struct BeatTrack2 {
    kr_length: f32,
    accuracy: f32,
    num_phases: [i32; TEMPI],
    features: usize,
    window: f32,
    buffer_size: i32,
    /// Each feature's recent values, `buffer_size` per feature.
    past: Vec<f32>,
    scores: Vec<f32>,
    best_score: Vec<f32>,
    best_phase: Vec<i32>,
    best_tempo: Vec<i32>,
    best_groove: Vec<i32>,
    counter: i32,
    start_counter: i32,
    schedule: f32,
    calc_period: f32,
    period: f32,
    groove: i32,
    curr_tempo: f32,
    phase: f32,
    phase_per_block: f32,
    out_phase: f32,
    out_tempo: f32,
    out_groove: f32,
    out_phase_per_block: f32,
    predict_phase: f32,
    predict_period: f32,
    computing: u8,
    amort_count: i32,
    amort_length: i32,
    half_trig: bool,
    q1_trig: bool,
    q2_trig: bool,
    /// A buffer of per-tempo weights, or flat weighting when none.
    weights_buf: Option<usize>,
}

impl Construct for BeatTrack2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let kr_length = cx.world.full_rate.buf_duration as f32;
        let accuracy = io.in0(3);
        let mut num_phases = [0; TEMPI];
        for (n, p) in num_phases.iter_mut().zip(&PERIODS) {
            *n = (p / accuracy) as i32;
        }
        let features = ((io.in0(1) + 0.001) as i32).max(0) as usize;
        let window = io.in0(2);
        let full_window = window + 1.0 + 0.1;
        let buffer_size = ((full_window / kr_length) as i32).max(1);
        let mut bufnum = (io.in0(5) + 0.001f32) as i32;
        if bufnum >= cx.world.num_bufs() as i32 {
            bufnum = 0;
        }
        let weights_buf = (bufnum >= 0).then_some(bufnum as usize);
        let period = 0.5f32;
        let phase_per_block = kr_length / period;
        let unit = BeatTrack2 {
            kr_length,
            accuracy,
            num_phases,
            features,
            window,
            buffer_size,
            past: crate::unit::unit_samples(features * buffer_size as usize),
            scores: crate::unit::unit_samples(2 * features),
            best_score: vec![-9999.0; 4 * features],
            best_phase: vec![0; 4 * features],
            best_tempo: vec![60; 4 * features],
            best_groove: vec![0; 4 * features],
            counter: 0,
            start_counter: 0,
            schedule: 0.0,
            calc_period: 0.5,
            period,
            groove: 0,
            curr_tempo: 2.0,
            phase: 0.0,
            phase_per_block,
            out_phase: 0.0,
            out_tempo: 2.0,
            out_groove: 0.0,
            out_phase_per_block: phase_per_block,
            predict_phase: 0.4,
            predict_period: 0.3,
            computing: 0,
            amort_count: 0,
            amort_length: 0,
            half_trig: false,
            q1_trig: false,
            q2_trig: false,
            weights_buf,
        };
        let mut o = io.outs::<6>();
        for x in o.iter_mut().take(3) {
            x[0] = 0.0;
        }
        o[3][0] = unit.out_tempo;
        o[4][0] = unit.out_phase;
        o[5][0] = unit.out_groove;
        unit
    }
}

impl BeatTrack2 {
    fn template(&mut self, which: usize, j: usize, tempo_weight: f32) {
        let nf = self.features;
        let bs = self.buffer_size;
        let period = PERIODS[which];
        let beats = (self.window / period) as i32;
        for i in 0..self.num_phases[which] {
            for k in 0..nf {
                self.scores[2 * k + j] = 0.0;
            }
            let phase_add = i as f32 * self.accuracy;
            for h in 0..beats {
                for (l, &w) in WEIGHT.iter().enumerate() {
                    let sep = phase_add + h as f32 * period + SEP[j * 4 + l] * period;
                    let blocks = ((sep / self.kr_length) as f64 + 0.5) as i32;
                    let index = (self.start_counter + bs - blocks).rem_euclid(bs);
                    for (m, &s) in SPREAD.iter().enumerate() {
                        let actual = (index + bs + m as i32 - 4).rem_euclid(bs) as usize;
                        for k in 0..nf {
                            self.scores[2 * k + j] += w * s * self.past[k * bs as usize + actual];
                        }
                    }
                }
            }
            for k in 0..nf {
                let score = self.scores[2 * k + j] * tempo_weight;
                let second = nf + k;
                if score > self.best_score[k] {
                    self.best_score[second] = self.best_score[k];
                    self.best_phase[second] = self.best_phase[k];
                    self.best_tempo[second] = self.best_tempo[k];
                    self.best_groove[second] = self.best_groove[k];
                    self.best_score[k] = score;
                    self.best_phase[k] = i;
                    self.best_tempo[k] = which as i32;
                    self.best_groove[k] = j as i32;
                } else if score > self.best_score[second] {
                    self.best_score[second] = score;
                    self.best_phase[second] = i;
                    self.best_tempo[second] = which as i32;
                    self.best_groove[second] = j as i32;
                }
            }
        }
    }

    fn final_decision(&mut self) {
        let nf = self.features;
        let mut best = 0;
        let mut best_matches = 0;
        for i in 0..nf {
            let mut matches = 0;
            let second = self.best_score[nf + i];
            let excess = if second != 0.0 { self.best_score[i] / second } else { self.best_score[i] };
            let tempo = self.best_tempo[i];
            for j in 0..nf {
                if j != i && (self.best_tempo[j] - tempo).abs() < 5 {
                    matches += 1;
                }
                if (self.best_tempo[2 * nf + j] - tempo).abs() < 5 {
                    matches += 1;
                }
            }
            if second != 0.0 {
                matches += excess as i32;
            }
            if matches > best_matches {
                best = i;
                best_matches = matches;
            }
        }
        let Some(&tempo) = self.best_tempo.get(best) else { return };
        let tempo_period = PERIODS.get(tempo as usize).copied().unwrap_or(0.5);
        let elapsed = self.kr_length * self.amort_length as f32;
        let found = self.best_phase[best] as f32 * self.accuracy;
        let phase = ((found + elapsed) / self.period) % 1.0;
        if (phase - self.predict_phase).abs() < (2.0 * self.accuracy) / self.predict_period
            && ((tempo_period - self.predict_period).abs() as f64) < 0.04
        {
            self.period = self.predict_period;
            self.phase = phase;
            self.curr_tempo = 1.0 / self.period;
            self.phase_per_block = self.kr_length / self.period;
        }
        self.predict_period = tempo_period;
        self.predict_phase = ((found + elapsed + self.calc_period) / self.period) % 1.0;
    }
}

impl Unit for BeatTrack2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let bs = self.buffer_size;
        self.counter = (self.counter + 1) % bs;
        let bus = (io.in0(0) + 0.001f32) as i32;
        for j in 0..self.features {
            let v = usize::try_from(bus + j as i32).ok().and_then(|b| cx.world.control_bus.get(b)).copied();
            self.past[j * bs as usize + self.counter as usize] = v.unwrap_or(0.0);
        }
        self.schedule += self.kr_length;
        if self.schedule > self.calc_period {
            self.schedule -= self.calc_period;
            let nf = self.features;
            for i in 0..2 {
                let (to, from) = ((2 + i) * nf, i * nf);
                for j in 0..nf {
                    self.best_score[to + j] = self.best_score[from + j];
                    self.best_score[from + j] = -9999.0;
                    self.best_phase[to + j] = self.best_phase[from + j];
                    self.best_phase[from + j] = 0;
                    self.best_tempo[to + j] = self.best_tempo[from + j];
                    self.best_tempo[from + j] = 60;
                }
            }
            self.computing = 1;
            self.amort_count = 0;
            self.amort_length = TEMPI as i32 * 2;
            self.start_counter = self.counter;
        }
        match self.computing {
            1 => {
                let which = (self.amort_count >> 1) as usize;
                let weight = match self.weights_buf {
                    None => 1.0,
                    Some(b) => cx.world.buf(b).and_then(|buf| buf.data.get(which)).copied().unwrap_or(1.0),
                };
                self.template(which, (self.amort_count % 2) as usize, weight);
                self.amort_count += 1;
                if self.amort_count == self.amort_length {
                    self.computing = 2;
                }
            }
            2 => {
                self.final_decision();
                self.computing = 0;
            }
            _ => {}
        }
        self.phase += self.phase_per_block;
        if io.in0(4) < 0.5 {
            self.out_phase = self.phase;
            self.out_tempo = self.curr_tempo;
            self.out_groove = self.groove as f32;
            self.out_phase_per_block = self.phase_per_block;
        } else {
            self.out_phase += self.out_phase_per_block;
        }
        if self.phase >= 1.0 {
            self.phase -= 1.0;
        }
        let mut trig = [0.0f32; 3];
        let (tempo, phase_out, groove_out) = (self.out_tempo, self.out_phase, self.out_groove);
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
        let groove = self.out_groove * 0.07;
        if self.out_phase as f64 >= 0.25 + groove as f64 && !self.q1_trig {
            trig[2] = 1.0;
            self.q1_trig = true;
        }
        if self.out_phase as f64 >= 0.75 + groove as f64 && !self.q2_trig {
            trig[2] = 1.0;
            self.q2_trig = true;
        }
        let o = io.outs::<6>();
        o[0][0] = trig[0];
        o[1][0] = trig[1];
        o[2][0] = trig[2];
        o[3][0] = tempo;
        o[4][0] = phase_out;
        o[5][0] = groove_out;
    }
}
