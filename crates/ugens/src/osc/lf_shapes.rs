//! LFGauss (a Gaussian bump per period) and Vibrato (a randomised vibrato
//! on a frequency, with delay and onset).

use crate::common::signal::{in0, in_rate, In};
use crate::common::math::sc_wrap;
use crate::common::math::{d2i, f2i};
use crate::rgen::RGen;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

// ---------------------------------------------------------------------------
// LFGauss

#[derive(Clone, Copy, PartialEq, Eq)]
enum GaussMode {
    /// Duration and width read once per block.
    Control,
    /// Audio-rate duration.
    Duration,
    /// Audio-rate duration and width.
    Both,
}

/// LFGauss: `exp(-x² / 2c²)` for x sweeping -1..1 once per `dur` seconds,
/// offset by `iphase`; without looping it holds past the end and requests
/// its done action.
pub struct LFGauss {
    phase: f64,
    mode: GaussMode,
}

impl LFGauss {
    /// Steps past the end of the sweep: wraps it, or asks for the done
    /// action (scsynth asks at every such sample; once per block suffices).
    #[inline(always)]
    fn wrap(x: &mut f64, looping: bool, asked: &mut bool, cx: &mut UnitCtx<'_>, action: i32) {
        if *x > 1.0 {
            if looping {
                *x -= 2.0;
            } else if !*asked {
                *asked = true;
                cx.done_action(action);
            }
        }
    }

    fn run(&mut self, mode: GaussMode, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let b = in0(io, 2);
        let looping = in0(io, 3) != 0.0;
        let action = f2i(in0(io, 4));
        let mut x = self.phase - b as f64;
        let mut asked = false;
        let dur = In::new(io, 0);
        let width = In::new(io, 1);
        let out = io.out(0);
        match mode {
            GaussMode::Control => {
                let c = width.first();
                let step = (2.0f32 as f64 / (dur.first() as f64 * cx.rate.sample_rate)) as f32;
                let factor = -1.0f32 / (2.0 * c * c);
                for o in out.iter_mut() {
                    Self::wrap(&mut x, looping, &mut asked, cx, action);
                    *o = (x * x * factor as f64).exp() as f32;
                    x += step as f64;
                }
            }
            GaussMode::Duration | GaussMode::Both => {
                let sr = cx.rate.sample_rate as f32;
                let c = width.first();
                let fixed_factor = -1.0f32 / (2.0 * c * c);
                for (i, o) in out.iter_mut().enumerate() {
                    Self::wrap(&mut x, looping, &mut asked, cx, action);
                    let step = 2.0f32 / (dur.at(i) * sr);
                    let factor = if mode == GaussMode::Both {
                        let c = width.at(i);
                        -1.0f32 / (2.0 * c * c)
                    } else {
                        fixed_factor
                    };
                    *o = (x * x * factor as f64).exp() as f32;
                    x += step as f64;
                }
            }
        }
        self.phase = x + b as f64;
    }
}

impl Construct for LFGauss {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mode = match (in_rate(io, 0), in_rate(io, 1)) {
            (Rate::Audio, Rate::Audio) => GaussMode::Both,
            (Rate::Audio, _) => GaussMode::Duration,
            _ => GaussMode::Control,
        };
        let mut u = LFGauss { phase: -1.0, mode };
        // The first sample always comes from the control-rate path.
        u.run(GaussMode::Control, io, cx);
        u.phase = -1.0;
        u
    }
}

impl Unit for LFGauss {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(self.mode, io, cx);
    }
}

// ---------------------------------------------------------------------------
// Vibrato

/// Vibrato: multiplies the input frequency by `1 + depth * shape`, where the
/// shape is made of parabolic half cycles; each cycle draws a new rate and
/// two new depths (rate and depth vary by the `*Variation` inputs). The
/// vibrato starts after `delay` seconds and fades in over `onset` seconds;
/// a rising `trig` starts it all over.
pub struct Vibrato {
    phase: f64,
    attack_slope: f64,
    attack_level: f64,
    freq_mul: f32,
    scale_a: f32,
    scale_b: f32,
    freq: f32,
    delay: i32,
    attack: i32,
    trig: f32,
}

/// The inputs a new vibrato cycle draws from (read once per block).
#[derive(Clone, Copy)]
struct CycleArgs {
    rate: f32,
    depth: f32,
    rate_var: f32,
    depth_var: f32,
}

impl CycleArgs {
    fn read(io: &Wires<'_>) -> CycleArgs {
        CycleArgs { rate: in0(io, 1), depth: in0(io, 2), rate_var: in0(io, 5), depth_var: in0(io, 6) }
    }

    /// The rate and the two depths of one cycle.
    fn draw(&self, freq_mul: f32, g: &mut RGen) -> (f32, f32, f32) {
        let rate = self.rate * freq_mul;
        let freq = rate * (1.0 + self.rate_var * g.frand2());
        let scale_a = self.depth * (1.0 + self.depth_var * g.frand2());
        let scale_b = self.depth * (1.0 + self.depth_var * g.frand2());
        (freq, scale_a, scale_b)
    }
}

/// One vibrato cycle in progress.
struct Cycle {
    phase: f64,
    freq: f64,
    scale_a: f32,
    scale_b: f32,
}

impl Cycle {
    /// The factor at the current phase (scaled by `level` during the
    /// onset), starting a new cycle when the phase has run out.
    #[inline(always)]
    fn factor(&mut self, level: Option<f32>, args: &CycleArgs, freq_mul: f32, g: &mut RGen) -> f32 {
        let fade = |s: f32| match level {
            Some(l) => l * s,
            None => s,
        };
        let v = if self.phase < 1.0 {
            let z = self.phase as f32;
            1.0 + fade(self.scale_a) * (1.0 - z * z)
        } else if self.phase < 3.0 {
            let z = (self.phase - 2.0) as f32;
            1.0 + fade(self.scale_b) * (z * z - 1.0)
        } else {
            self.phase -= 4.0;
            let z = self.phase as f32;
            let (f, a, b) = args.draw(freq_mul, g);
            self.freq = f as f64;
            self.scale_a = a;
            self.scale_b = b;
            1.0 + fade(self.scale_a) * (1.0 - z * z)
        };
        self.phase += self.freq;
        v
    }
}

impl Vibrato {
    /// (Re)starts: phase, a cycle's draws, delay and onset.
    fn start(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.freq_mul = (4.0 * cx.rate.sample_dur) as f32;
        self.phase = 4.0 * sc_wrap(in0(io, 7), 0.0, 1.0) as f64 - 1.0;
        (self.freq, self.scale_a, self.scale_b) = CycleArgs::read(io).draw(self.freq_mul, &mut cx.world.rgen);
        self.delay = d2i(in0(io, 3) as f64 * cx.rate.sample_rate);
        self.attack = d2i(in0(io, 4) as f64 * cx.rate.sample_rate);
        self.attack_slope = 1.0 / 1i32.wrapping_add(self.attack) as f64;
        self.attack_level = self.attack_slope;
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let cur_trig = in0(io, 8);
        if self.trig <= 0.0 && cur_trig > 0.0 {
            self.start(io, cx);
        }
        self.trig = cur_trig;

        let args = CycleArgs::read(io);
        let input = In::new(io, 0);
        let out = io.out(0);
        let g = &mut cx.world.rgen;
        let mut cyc = Cycle { phase: self.phase, freq: self.freq as f64, scale_a: self.scale_a, scale_b: self.scale_b };
        let mut i = 0usize;
        let mut remaining = out.len();

        let mut attack_now = false;
        let mut normal_now = false;
        if self.delay > 0 {
            let remain = remaining.min(self.delay as usize);
            self.delay -= remain as i32;
            remaining -= remain;
            for _ in 0..remain {
                out[i] = input.at(i);
                i += 1;
            }
            if self.delay <= 0 && remaining > 0 {
                attack_now = self.attack > 0;
                normal_now = !attack_now;
            }
        } else if self.attack != 0 {
            attack_now = true;
        } else {
            normal_now = true;
        }

        if attack_now {
            // A negative onset means no fade-in at all.
            let remain = remaining.min(self.attack.max(0) as usize);
            self.attack = if self.attack < 0 { 0 } else { self.attack - remain as i32 };
            remaining -= remain;
            let mut level = self.attack_level;
            for _ in 0..remain {
                out[i] = input.at(i) * cyc.factor(Some(level as f32), &args, self.freq_mul, g);
                i += 1;
                level += self.attack_slope;
            }
            self.attack_level = level;
            normal_now = self.attack <= 0 && remaining > 0;
        }

        if normal_now {
            for _ in 0..remaining {
                out[i] = input.at(i) * cyc.factor(None, &args, self.freq_mul, g);
                i += 1;
            }
        }

        self.phase = cyc.phase;
        self.freq = cyc.freq as f32;
        self.scale_a = cyc.scale_a;
        self.scale_b = cyc.scale_b;
    }
}

impl Construct for Vibrato {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut u = Vibrato {
            phase: 0.0,
            attack_slope: 0.0,
            attack_level: 0.0,
            freq_mul: 0.0,
            scale_a: 0.0,
            scale_b: 0.0,
            freq: 0.0,
            delay: 0,
            attack: 0,
            trig: 0.0,
        };
        u.start(io, cx);
        // scsynth 3.13 keeps the state this first sample leaves (the
        // phase one step on, a trigger already high counted as seen).
        u.run(io, cx);
        u
    }
}

impl Unit for Vibrato {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
