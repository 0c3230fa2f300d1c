//! EnvGen: a breakpoint envelope with gate, sustain/loop nodes and curves.
//!
//! Inputs: gate, levelScale, levelBias, timeScale, doneAction, initLevel,
//! numStages, releaseNode, loopNode, then four per stage: level, dur, shape,
//! curve. Levels are read from the inputs when each segment starts, so they
//! may be modulated.

use crate::simd::fill;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use std::f64::consts::PI;

const GATE: usize = 0;
const LEVEL_SCALE: usize = 1;
const LEVEL_BIAS: usize = 2;
const TIME_SCALE: usize = 3;
const DONE_ACTION: usize = 4;
const INIT_LEVEL: usize = 5;
const NUM_STAGES: usize = 6;
const RELEASE_NODE: usize = 7;
const LOOP_NODE: usize = 8;
const NODE_OFFSET: usize = 9;

const SHAPE_STEP: i32 = 0;
const SHAPE_LINEAR: i32 = 1;
const SHAPE_EXPONENTIAL: i32 = 2;
const SHAPE_SINE: i32 = 3;
const SHAPE_WELCH: i32 = 4;
const SHAPE_CURVE: i32 = 5;
const SHAPE_SQUARED: i32 = 6;
const SHAPE_CUBED: i32 = 7;
const SHAPE_HOLD: i32 = 8;
const SHAPE_SUSTAIN: i32 = 9999;

/// Stage number before the first gate opens.
const NOT_STARTED: i32 = 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One value per block (control rate).
    Control,
    /// Audio rate, gate read once per block.
    AudioControlGate,
    /// As above with scsynth's vectorised fills for whole-block segments.
    AudioControlGateSimd,
    /// Audio rate with a sample-accurate gate.
    AudioGate,
}

pub struct EnvGen {
    a2: f64,
    b1: f64,
    y1: f64,
    y2: f64,
    grow: f64,
    level: f64,
    end_level: f64,
    counter: i32,
    stage: i32,
    shape: i32,
    release_node: i32,
    prev_gate: f32,
    released: bool,
    mode: Mode,
}

/// Per-sample gate state while an audio-rate gate is being scanned.
struct GateScan<'g> {
    gate: &'g [f32],
    pos: usize,
    prev: f32,
}

impl Construct for EnvGen {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mode = if spec.rate == Rate::Audio {
            if io.in_rate(GATE) == Rate::Audio {
                Mode::AudioGate
            } else if fill::simd_block(cx.rate.buf_length) {
                Mode::AudioControlGateSimd
            } else {
                Mode::AudioControlGate
            }
        } else {
            Mode::Control
        };
        let init_level = (io.in0(INIT_LEVEL) * io.in0(LEVEL_SCALE) + io.in0(LEVEL_BIAS)) as f64;
        let release_node = io.in0(RELEASE_NODE) as i32;
        let initial_hold = io.num_inputs() > NODE_OFFSET + 2 && io.in0(NODE_OFFSET + 2) as i32 == SHAPE_HOLD;
        let mut unit = EnvGen {
            a2: 0.0,
            b1: 0.0,
            y1: 0.0,
            y2: 0.0,
            grow: 0.0,
            level: init_level,
            end_level: init_level,
            counter: 0,
            stage: NOT_STARTED,
            shape: SHAPE_HOLD,
            release_node,
            prev_gate: 0.0,
            released: false,
            mode,
        };
        if initial_hold {
            // A hold first segment starts from its own end level.
            unit.level = io.in0(NODE_OFFSET) as f64;
        }
        // scsynth 3.13 keeps the state of this first control-rate step.
        unit.next_k(io, cx);
        unit
    }
}

impl EnvGen {
    /// Starts segment `self.stage`. `dur` overrides its duration when >= 0
    /// (forced release). Returns false if the envelope ran past its inputs,
    /// in which case the synth is freed.
    fn init_segment(
        &mut self,
        io: &Wires<'_>,
        cx: &mut UnitCtx<'_>,
        out: &mut [f32],
        counter: &mut i32,
        level: &mut f64,
        dur: f64,
    ) -> bool {
        let offset = self.stage as i64 * 4 + NODE_OFFSET as i64;
        if offset < 0 || offset + 4 > io.num_inputs() as i64 {
            if let Some(first) = out.first_mut() {
                *first = 0.0;
            }
            cx.done_action(2);
            return false;
        }
        let offset = offset as usize;
        // scsynth keeps the previous end level in an f32 here.
        let previous_end_level = self.end_level as f32;
        if self.shape == SHAPE_HOLD {
            *level = previous_end_level as f64;
        }
        let end_level = (io.in0(offset) * io.in0(LEVEL_SCALE) + io.in0(LEVEL_BIAS)) as f64;
        let dur = if dur < 0.0 { (io.in0(offset + 1) * io.in0(TIME_SCALE)) as f64 } else { dur };
        self.shape = io.in0(offset + 2) as i32;
        let curve = io.in0(offset + 3) as f64;
        self.end_level = end_level;

        *counter = ((dur * cx.rate.sample_rate) as i32).max(1);
        let counter_fractional = *counter as f64;

        if *counter == 1 {
            self.shape = SHAPE_LINEAR;
        }
        match self.shape {
            SHAPE_STEP => *level = end_level,
            SHAPE_HOLD => *level = previous_end_level as f64,
            SHAPE_LINEAR => self.grow = (end_level - *level) / counter_fractional,
            SHAPE_EXPONENTIAL => self.grow = (end_level / *level).powf(1.0 / counter_fractional),
            SHAPE_SINE => {
                let w = PI / counter_fractional;
                self.a2 = (end_level + *level) * 0.5;
                self.b1 = 2.0 * w.cos();
                self.y1 = (end_level - *level) * 0.5;
                self.y2 = self.y1 * (PI * 0.5 - w).sin();
                *level = self.a2 - self.y1;
            }
            SHAPE_WELCH => {
                let w = (PI * 0.5) / counter_fractional;
                self.b1 = 2.0 * w.cos();
                if end_level >= *level {
                    self.a2 = *level;
                    self.y1 = 0.0;
                    self.y2 = -w.sin() * (end_level - *level);
                } else {
                    self.a2 = end_level;
                    self.y1 = *level - end_level;
                    self.y2 = w.cos() * (*level - end_level);
                }
                *level = self.a2 + self.y1;
            }
            SHAPE_CURVE => {
                if curve.abs() < 0.001 {
                    self.shape = SHAPE_LINEAR;
                    self.grow = (end_level - *level) / counter_fractional;
                } else {
                    let a1 = (end_level - *level) / (1.0 - curve.exp());
                    self.a2 = *level + a1;
                    self.b1 = a1;
                    self.grow = (curve / counter_fractional).exp();
                }
            }
            SHAPE_SQUARED => {
                self.y1 = level.sqrt();
                self.y2 = end_level.sqrt();
                self.grow = (self.y2 - self.y1) / counter_fractional;
            }
            SHAPE_CUBED => {
                self.y1 = level.powf(1.0 / 3.0);
                self.y2 = end_level.powf(1.0 / 3.0);
                self.grow = (self.y2 - self.y1) / counter_fractional;
            }
            _ => {}
        }
        true
    }

    /// Reacts to a gate change. Returns false when the envelope was
    /// retriggered or released, so the caller must stop at this sample.
    /// `level` is taken by value: scsynth discards what a forced release's
    /// segment start does to it.
    #[allow(clippy::too_many_arguments)]
    fn check_gate(
        &mut self,
        io: &Wires<'_>,
        cx: &mut UnitCtx<'_>,
        out: &mut [f32],
        prev_gate: f32,
        gate: f32,
        counter: &mut i32,
        level: f64,
        counter_offset: i32,
    ) -> bool {
        if prev_gate <= 0.0 && gate > 0.0 {
            self.stage = -1;
            self.released = false;
            cx.set_done(false);
            *counter = counter_offset;
            false
        } else if gate <= -1.0 && prev_gate > -1.0 {
            // Forced release: jump to the last segment, lasting -1 - gate s.
            let dur = (-gate - 1.0) as f64;
            *counter = ((dur * cx.rate.sample_rate) as i32).max(1) + counter_offset;
            self.stage = io.in0(NUM_STAGES) as i32 - 1;
            self.released = true;
            let mut scratch_level = level;
            self.init_segment(io, cx, out, counter, &mut scratch_level, dur);
            false
        } else if prev_gate > 0.0 && gate <= 0.0 && self.release_node >= 0 && !self.released {
            *counter = counter_offset;
            self.stage = self.release_node - 1;
            self.released = true;
            false
        } else {
            true
        }
    }

    /// Moves to the next segment when the current one has run out.
    fn next_segment(
        &mut self,
        io: &Wires<'_>,
        cx: &mut UnitCtx<'_>,
        out: &mut [f32],
        counter: &mut i32,
        level: &mut f64,
    ) -> bool {
        let num_stages = io.in0(NUM_STAGES) as i32;
        if self.stage.saturating_add(1) >= num_stages {
            *counter = i32::MAX;
            self.shape = SHAPE_STEP;
            *level = self.end_level;
            cx.set_done(true);
            cx.done_action(io.in0(DONE_ACTION) as i32);
        } else if self.stage == NOT_STARTED {
            *counter = i32::MAX;
            return true;
        } else if self.stage + 1 == io.in0(RELEASE_NODE) as i32 && !self.released {
            let loop_node = io.in0(LOOP_NODE) as i32;
            if loop_node >= 0 && loop_node < num_stages {
                self.stage = loop_node;
                return self.init_segment(io, cx, out, counter, level, -1.0);
            }
            *counter = i32::MAX;
            self.shape = SHAPE_SUSTAIN;
            *level = self.end_level;
        } else {
            self.stage += 1;
            return self.init_segment(io, cx, out, counter, level, -1.0);
        }
        true
    }

    /// Writes up to `*nsmps` samples of the current segment from `*pos`.
    /// With a gate scan, each sample first checks the gate; a retrigger or
    /// release shortens `*nsmps` to the samples written.
    #[allow(clippy::too_many_arguments)]
    fn perform(
        &mut self,
        io: &Wires<'_>,
        cx: &mut UnitCtx<'_>,
        out: &mut [f32],
        pos: &mut usize,
        level: &mut f64,
        nsmps: &mut usize,
        counter: &mut i32,
        mut scan: Option<&mut GateScan<'_>>,
    ) {
        // Returns whether sample `i` may be written.
        macro_rules! gate_ok {
            ($i:expr) => {
                match scan.as_deref_mut() {
                    None => true,
                    Some(s) => {
                        let gate = s.gate[s.pos];
                        s.pos += 1;
                        let ok = self.check_gate(io, cx, out, s.prev, gate, counter, *level, $i as i32);
                        if !ok {
                            s.pos -= 1;
                            *nsmps = $i;
                        }
                        s.prev = gate;
                        ok
                    }
                }
            };
        }
        match self.shape {
            SHAPE_STEP | SHAPE_HOLD => {
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    i += 1;
                }
            }
            SHAPE_LINEAR => {
                let grow = self.grow;
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    *level += grow;
                    i += 1;
                }
            }
            SHAPE_EXPONENTIAL => {
                let grow = self.grow;
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    *level *= grow;
                    i += 1;
                }
            }
            SHAPE_SINE | SHAPE_WELCH => {
                let sign = if self.shape == SHAPE_SINE { -1.0 } else { 1.0 };
                let (a2, b1) = (self.a2, self.b1);
                let (mut y1, mut y2) = (self.y1, self.y2);
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    let y0 = b1 * y1 - y2;
                    *level = if sign < 0.0 { a2 - y0 } else { a2 + y0 };
                    y2 = y1;
                    y1 = y0;
                    i += 1;
                }
                self.y1 = y1;
                self.y2 = y2;
            }
            SHAPE_CURVE => {
                let (a2, grow) = (self.a2, self.grow);
                let mut b1 = self.b1;
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    b1 *= grow;
                    *level = a2 - b1;
                    i += 1;
                }
                self.b1 = b1;
            }
            SHAPE_SQUARED => {
                let grow = self.grow;
                let mut y1 = self.y1;
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    y1 += grow;
                    *level = y1 * y1;
                    i += 1;
                }
                self.y1 = y1;
            }
            SHAPE_CUBED => {
                let grow = self.grow;
                let mut y1 = self.y1;
                let mut i = 0;
                while i < *nsmps {
                    if !gate_ok!(i) {
                        break;
                    }
                    out[*pos] = *level as f32;
                    *pos += 1;
                    y1 += grow;
                    // sc_max(y1, 0): a NaN stays NaN.
                    if y1 < 0.0 {
                        y1 = 0.0;
                    }
                    *level = y1 * y1 * y1;
                    i += 1;
                }
                self.y1 = y1;
            }
            SHAPE_SUSTAIN => {
                let mut i = 0;
                while i < *nsmps {
                    if gate_ok!(i) {
                        out[*pos] = *level as f32;
                        *pos += 1;
                    }
                    i += 1;
                }
            }
            // Unknown shapes write nothing, as in scsynth.
            _ => {}
        }
    }

    /// Raw view of output 0 that leaves `io` free for reading inputs.
    fn out_slice<'o>(io: &mut Wires<'_>) -> &'o mut [f32] {
        let n = io.n();
        let ptr = io.out_ptr(0);
        // SAFETY: `out_ptr` points at `n` samples of this unit's output
        // wire, which never overlaps an input wire (the `Wires` contract);
        // inputs are only read through `in0`/`inp` while this slice lives
        // and no other view of output 0 is made during the call.
        unsafe { std::slice::from_raw_parts_mut(ptr, n) }
    }

    fn next_k(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = Self::out_slice(io);
        let io = &*io;
        let gate = io.in0(GATE);
        let mut counter = self.counter;
        let mut level = self.level;
        self.check_gate(io, cx, out, self.prev_gate, gate, &mut counter, level, 0);
        self.prev_gate = gate;
        if counter <= 0 && !self.next_segment(io, cx, out, &mut counter, &mut level) {
            return;
        }
        let mut pos = 0;
        let mut one = 1;
        self.perform(io, cx, out, &mut pos, &mut level, &mut one, &mut counter, None);
        self.level = level;
        self.counter = counter.wrapping_sub(1);
    }

    fn next_ak(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, simd: bool) {
        let out = Self::out_slice(io);
        let io = &*io;
        let n = out.len();
        let gate = io.in0(GATE);
        let mut counter = self.counter;
        let mut level = self.level;
        self.check_gate(io, cx, out, self.prev_gate, gate, &mut counter, level, 0);
        self.prev_gate = gate;

        let mut remain = n;
        if simd && counter > n as i32 {
            let whole_block = match self.shape {
                SHAPE_STEP | SHAPE_HOLD | SHAPE_SUSTAIN => {
                    out.fill(level as f32);
                    true
                }
                SHAPE_LINEAR => {
                    fill::slope_fill(out, level as f32, self.grow as f32);
                    level += n as f64 * self.grow;
                    true
                }
                SHAPE_EXPONENTIAL => {
                    fill::exp_fill(out, level as f32, self.grow as f32);
                    level *= fill::powi(self.grow, n as u32);
                    true
                }
                _ => false,
            };
            if whole_block {
                remain = 0;
                counter -= n as i32;
            }
        }

        let mut pos = 0;
        while remain > 0 {
            if counter <= 0 {
                if !self.next_segment(io, cx, out, &mut counter, &mut level) {
                    return;
                }
            }
            let mut nsmps = remain.min(counter.max(0) as usize);
            self.perform(io, cx, out, &mut pos, &mut level, &mut nsmps, &mut counter, None);
            remain -= nsmps;
            counter -= nsmps as i32;
        }
        self.level = level;
        self.counter = counter;
    }

    fn next_aa(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let out = Self::out_slice(io);
        let io = &*io;
        let n = out.len();
        let mut scan = GateScan { gate: io.inp(GATE), pos: 0, prev: self.prev_gate };
        let mut counter = self.counter;
        let mut level = self.level;
        let mut remain = n;
        let mut pos = 0;
        while remain > 0 {
            if counter <= 0 && !self.next_segment(io, cx, out, &mut counter, &mut level) {
                return;
            }
            let mut nsmps = remain.min(counter.max(0) as usize);
            self.perform(io, cx, out, &mut pos, &mut level, &mut nsmps, &mut counter, Some(&mut scan));
            remain -= nsmps;
            counter -= nsmps as i32;
        }
        self.level = level;
        self.counter = counter;
        self.prev_gate = scan.prev;
    }
}

impl Unit for EnvGen {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        match self.mode {
            Mode::Control => self.next_k(io, cx),
            Mode::AudioControlGate => self.next_ak(io, cx, false),
            Mode::AudioControlGateSimd => self.next_ak(io, cx, true),
            Mode::AudioGate => self.next_aa(io, cx),
        }
    }
}
