//! `DemandEnvGen`: an envelope whose segments (end level, duration, shape,
//! curve) come from demand-rate units, one segment after another.

use super::at;
use crate::common::math::c_int;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use std::f64::consts::PI;


/// Input numbers.
const LEVEL: usize = 0;
const DUR: usize = 1;
const SHAPE: usize = 2;
const CURVE: usize = 3;
const GATE: usize = 4;
const RESET: usize = 5;
const LEVEL_SCALE: usize = 6;
const LEVEL_BIAS: usize = 7;
const TIME_SCALE: usize = 8;
const DONE_ACTION: usize = 9;

/// Segment shapes, numbered as in `Env`.
const STEP: i32 = 0;
const LINEAR: i32 = 1;
const EXPONENTIAL: i32 = 2;
const SINE: i32 = 3;
const WELCH: i32 = 4;
const CURVE_SHAPE: i32 = 5;
const SQUARED: i32 = 6;
const CUBED: i32 = 7;

/// `DemandEnvGen.ar/kr(level, dur, shape, curve, gate, reset, levelScale,
/// levelBias, timeScale, doneAction)`: goes from each demanded level to the
/// next over the demanded duration. A gate between 0 and 1 ends the
/// envelope after the current segment (then the done action), a gate of 0
/// holds it; a rising reset restarts the sources, jumping to the first
/// level when the reset is above 1. A run-out source ends it too.
pub struct DemandEnvGen {
    /// Samples left in the current segment.
    phase: f32,
    prev_reset: f32,
    a2: f64,
    b1: f64,
    y1: f64,
    y2: f64,
    grow: f64,
    level: f64,
    end_level: f64,
    /// The current segment's curve and shape.
    curve: f64,
    shape: i32,
    /// Curve and shape as of the start of the call: what a NaN from their
    /// sources falls back to.
    block_curve: f64,
    block_shape: i32,
    release: bool,
    /// Set from the gate after each block (audio gate: each sample); read
    /// at the start of the next.
    running: bool,
    audio_gate: bool,
}

/// A call's working copies of `running` and `release`.
#[derive(Clone, Copy)]
struct Flags {
    running: bool,
    release: bool,
}

/// Where the two calculation modes differ while starting a segment.
#[derive(Clone, Copy)]
enum Mode {
    /// Control-rate gate: sources asked at the block's first sample, the
    /// shape before the curve.
    Block,
    /// Audio-rate gate and reset: sources asked at sample `k`, the curve
    /// before the shape.
    Sample(usize),
}

impl DemandEnvGen {
    /// Starts the next segment at the end of the current one: demands its
    /// duration, shape, curve and end level, and sets up the shape's recurrence.
    fn start_segment(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, mode: Mode, f: &mut Flags) {
        let k = match mode {
            Mode::Block => 1,
            Mode::Sample(k) => k,
        };
        let dur = cx.demand_input_at(io, DUR, k);
        if dur.is_nan() {
            f.release = true;
            f.running = false;
            self.phase = f32::MAX;
        } else {
            let samples = (dur * io.in0(TIME_SCALE)) as f64 * cx.rate.sample_rate;
            self.phase = (samples + self.phase as f64) as f32;
        }

        let (fshape, curve) = match mode {
            Mode::Block => {
                let fshape = cx.demand_input_at(io, SHAPE, k);
                (fshape, cx.demand_input_at(io, CURVE, k))
            }
            Mode::Sample(_) => {
                let curve = cx.demand_input_at(io, CURVE, k);
                (cx.demand_input_at(io, SHAPE, k), curve)
            }
        };
        let mut shape = if fshape.is_nan() { self.block_shape } else { c_int(fshape) };
        self.curve = if curve.is_nan() { self.block_curve } else { curve as f64 };
        let curve = self.curve;

        let count = if self.phase <= 1.0 {
            shape = LINEAR;
            1.0f32
        } else {
            self.phase
        };
        if ((dur * 0.5) as f64) < cx.rate.sample_dur {
            shape = LINEAR;
        }

        let demanded = cx.demand_input_at(io, LEVEL, k);
        let end = if demanded.is_nan() {
            f.release = true;
            self.phase = 0.0;
            shape = STEP;
            self.end_level
        } else {
            let end = demanded as f64 * io.in0(LEVEL_SCALE) as f64 + io.in0(LEVEL_BIAS) as f64;
            self.end_level = end;
            end
        };

        let level = self.level;
        let count = count as f64;
        match shape {
            STEP => self.level = end,
            LINEAR => self.grow = (end - level) / count,
            EXPONENTIAL => self.grow = (end / level).powf(1.0 / count),
            SINE => {
                let w = PI / count;
                self.a2 = (end + level) * 0.5;
                self.b1 = 2.0 * w.cos();
                self.y1 = (end - level) * 0.5;
                self.y2 = self.y1 * (PI * 0.5 - w).sin();
                self.level = self.a2 - self.y1;
            }
            WELCH => {
                let w = (PI * 0.5) / count;
                self.b1 = 2.0 * w.cos();
                if end >= level {
                    self.a2 = level;
                    self.y1 = 0.0;
                    self.y2 = -w.sin() * (end - level);
                } else {
                    self.a2 = end;
                    self.y1 = level - end;
                    self.y2 = w.cos() * (level - end);
                }
                self.level = self.a2 + self.y1;
            }
            CURVE_SHAPE => {
                if curve.abs() < 0.001 {
                    // A flat curve is a line; the stored shape changes too.
                    shape = LINEAR;
                    self.block_shape = LINEAR;
                    self.grow = (end - level) / count;
                } else {
                    let a1 = (end - level) / (1.0 - curve.exp());
                    self.a2 = level + a1;
                    self.b1 = a1;
                    // The step count rounds up in single precision.
                    self.grow = (curve / (count as f32).ceil() as f64).exp();
                }
            }
            SQUARED => {
                self.y1 = level.sqrt();
                self.y2 = end.sqrt();
                self.grow = (self.y2 - self.y1) / count;
            }
            CUBED => {
                self.y1 = level.powf(0.33333333);
                self.y2 = end.powf(0.33333333);
                self.grow = (self.y2 - self.y1) / count;
            }
            _ => {}
        }
        self.shape = shape;
    }

    /// One sample of the current segment's recurrence.
    fn advance(&mut self) {
        match self.shape {
            LINEAR => self.level += self.grow,
            EXPONENTIAL => self.level *= self.grow,
            SINE | WELCH => {
                let y0 = self.b1 * self.y1 - self.y2;
                self.level = if self.shape == SINE { self.a2 - y0 } else { self.a2 + y0 };
                self.y2 = self.y1;
                self.y1 = y0;
            }
            CURVE_SHAPE => {
                self.b1 *= self.grow;
                self.level = self.a2 - self.b1;
            }
            SQUARED => {
                self.y1 += self.grow;
                self.level = self.y1 * self.y1;
            }
            CUBED => {
                self.y1 += self.grow;
                self.level = self.y1 * self.y1 * self.y1;
            }
            _ => {}
        }
        self.phase -= 1.0;
    }

    /// Sample `i`: the end of a segment starts the next one (or, after a
    /// release, ends the envelope), then the recurrence steps.
    fn sample(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, mode: Mode, f: &mut Flags) -> f32 {
        if self.phase <= 0.0 && f.running {
            if f.release {
                f.running = false;
                f.release = false;
                cx.done_action(c_int(io.in0(DONE_ACTION)));
            } else {
                self.start_segment(io, cx, mode, f);
            }
        }
        if f.running {
            self.advance();
        }
        self.level as f32
    }

    /// What the gate means for the next segment end: running on (1 or
    /// more), running but releasing at it (between 0 and 1), or holding.
    fn gate(&mut self, gate: f32, release: &mut bool) {
        if gate >= 1.0 {
            self.running = true;
        } else if gate > 0.0 {
            self.running = true;
            *release = true;
        } else {
            self.running = false;
        }
    }

    fn end_call(&mut self, release: bool) {
        self.release = release;
        self.block_shape = self.shape;
        self.block_curve = self.curve;
    }

    /// Control-rate gate (and reset): both read once per call; the previous
    /// reset is only updated at the end, so a rising reset restarts the
    /// sources at every sample of an audio-rate block.
    fn next_block(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let reset = io.in0(RESET);
        let mut f = Flags { running: self.running, release: self.release };
        for i in 0..io.n() {
            if reset > 0.0 && self.prev_reset <= 0.0 {
                for input in [LEVEL, DUR, SHAPE, CURVE] {
                    cx.reset_input(io, input);
                }
                let first = cx.demand_input(io, LEVEL);
                if reset > 1.0 {
                    self.level = first as f64;
                }
                f.release = false;
                f.running = true;
                self.phase = 0.0;
            }
            let x = self.sample(io, cx, Mode::Block, &mut f);
            io.out(0)[i] = x;
        }
        self.gate(io.in0(GATE), &mut f.release);
        self.prev_reset = reset;
        self.end_call(f.release);
    }

    /// Audio-rate gate and reset, read per sample; a gate change takes
    /// effect from the next block.
    fn next_audio(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let mut f = Flags { running: self.running, release: self.release };
        for i in 0..io.n() {
            let reset = at(io, RESET, i);
            if reset > 0.0 && self.prev_reset <= 0.0 {
                // Unlike the control-rate form, the curve source is not reset.
                cx.reset_input(io, LEVEL);
                let first = cx.demand_input_at(io, LEVEL, i + 1);
                if reset > 1.0 {
                    self.level = first as f64;
                }
                cx.reset_input(io, DUR);
                cx.reset_input(io, SHAPE);
                f.release = false;
                f.running = true;
                self.phase = 0.0;
            }
            self.prev_reset = reset;
            let x = self.sample(io, cx, Mode::Sample(i + 1), &mut f);
            io.out(0)[i] = x;
            self.gate(at(io, GATE, i), &mut f.release);
        }
        self.end_call(f.release);
    }
}

impl Construct for DemandEnvGen {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let first = cx.demand_input(io, LEVEL) as f64;
        let level = if first.is_nan() { 0.0 } else { first };
        let mut unit = DemandEnvGen {
            phase: 0.0,
            prev_reset: 0.0,
            a2: 0.0,
            b1: 0.0,
            y1: 0.0,
            y2: 0.0,
            grow: 0.0,
            level,
            end_level: level,
            curve: 0.0,
            shape: 0,
            block_curve: 0.0,
            block_shape: 0,
            release: false,
            running: io.in0(GATE) > 0.0,
            audio_gate: io.in_rate(GATE) == Rate::Audio,
        };
        // The first sample is computed (and kept) in the control-rate way.
        unit.next_block(io, cx);
        unit
    }
}

impl Unit for DemandEnvGen {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio_gate {
            self.next_audio(io, cx);
        } else {
            self.next_block(io, cx);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    /// Constant sources: every segment's end level is `level * scale + bias`
    /// (the first level, read at the start, is not scaled).
    fn env(rate: Rate, level: f32, dur: f32, shape: f32, gate: TestInput, scale: f32) -> UnitHarness {
        UnitHarness::new("DemandEnvGen", rate).inputs([
            TestInput::Const(level),
            TestInput::Const(dur),
            TestInput::Const(shape),
            TestInput::Const(0.0),
            gate,
            TestInput::Const(1.0),
            TestInput::Const(scale),
            TestInput::Const(0.0),
            TestInput::Const(1.0),
            TestInput::Const(2.0),
        ])
    }

    #[test]
    fn first_segment_ramps_linearly_to_the_scaled_level_in_its_duration() {
        // 480 samples at 48 kHz; the constructor's sample is the first step.
        let run = env(Rate::Audio, 1.0, 0.01, 1.0, TestInput::Const(1.0), 2.0).run_full(10);
        let out = &run.outputs[0];
        assert!((run.initial[0] - (1.0 + 1.0 / 480.0)).abs() < 1e-6);
        let steps: Vec<f32> = out.windows(2).take(470).map(|w| w[1] - w[0]).collect();
        assert!(steps.iter().all(|&d| (d - 1.0 / 480.0).abs() < 1e-5), "not a straight line");
        assert!((out[478] - 2.0).abs() < 1e-5);
        assert!(out[480..].iter().all(|&x| (x - 2.0).abs() < 1e-5), "does not hold the end level");
        assert!(run.done_actions.is_empty());
    }

    #[test]
    fn half_open_gate_ends_the_envelope_after_the_segment_with_its_done_action() {
        // 0.048 s segments at the control rate of 750 Hz: 36 blocks each.
        let gate = TestInput::Control(vec![1.0, 1.0, 0.5]);
        let run = env(Rate::Control, 1.0, 0.048, 1.0, gate, 0.5).run_full(100);
        assert_eq!(run.done_actions.first().map(|&(_, a)| a), Some(2));
        let (block, _) = run.done_actions[0];
        assert!((34..=37).contains(&block), "released at block {block}");
        let out = &run.outputs[0];
        assert!((out[block] - 0.5).abs() < 1e-4, "did not reach the end level first");
    }

    #[test]
    fn closed_gate_holds_the_level_until_it_opens() {
        // A ramp from 1 to 2 over 37.5 blocks, the gate closed for blocks 10 to 19.
        let mut gate = vec![1.0; 10];
        gate.extend([0.0; 10]);
        gate.push(1.0);
        let out = &env(Rate::Control, 1.0, 0.05, 1.0, TestInput::Control(gate), 2.0).run(40)[0];
        assert!(out[11..20].windows(2).all(|w| w[0] == w[1]), "moved while the gate was closed");
        assert!(out[5] < out[11] && out[11] < out[25], "did not ramp around the hold");
    }
}
