//! Xenakis' dynamic stochastic synthesis: Gendy1, Gendy2 and Gendy3. A
//! waveform of `n` breakpoints whose amplitudes and durations take random
//! walks, steps drawn from one of seven distributions. All draw from the
//! synth's random generator, in scsynth's order.

use crate::common::signal::in0;
use crate::common::math::{d2i, f2i};
use crate::rgen::RGen;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

/// Breakpoint memories larger than this are refused (the unit stays
/// silent), where scsynth's real-time allocator would fail.
const MAX_MEMORY: i32 = 1 << 20;

/// Maps a uniform `f` in [0, 1) to [-1, 1] through distribution `which`
/// (0 linear, 1 Cauchy, 2 logistic, 3 hyperbolic cosine, 4 arcsine,
/// 5 exponential, 6 the parameter itself), shaped by `a` in (0, 1].
/// Single precision throughout, as scsynth computes it.
pub(crate) fn distribution(which: i32, a: f32, f: f32) -> f32 {
    let a = if a > 1.0 { 1.0 } else { a };
    let a = if a < 0.0001 { 0.0001 } else { a };
    match which {
        1 => {
            let c = (10.0 * a).atan();
            let temp = (1.0 / a) * (c * (2.0 * f - 1.0)).tan();
            temp * 0.1
        }
        2 => {
            let c = 0.5 + 0.499 * a;
            let c = ((1.0 - c) / c).ln();
            let f = ((f - 0.5) * 0.998 * a) + 0.5;
            ((1.0 - f) / f).ln() / c
        }
        3 => {
            let c = (1.569_225_5 * a).tan();
            let temp = (1.569_225_5 * a * f).tan() / c;
            let temp = (temp * 0.999 + 0.001).ln() * -0.144_764_8;
            2.0 * temp - 1.0
        }
        4 => {
            let c = (1.570_796_3 * a).sin();
            (std::f32::consts::PI * (f - 0.5) * a).sin() / c
        }
        5 => {
            let c = (1.0 - 0.999 * a).ln();
            let temp = (1.0 - f * 0.999 * a).ln() / c;
            2.0 * temp - 1.0
        }
        6 => 2.0 * a - 1.0,
        _ => 2.0 * f - 1.0,
    }
}

/// Reflects `x` back into [lower, upper] at the bounds.
pub(crate) fn mirror(lower: f32, upper: f32, mut x: f32) -> f32 {
    if x > upper || x < lower {
        let range = upper - lower;
        if x < lower {
            x = (2.0 * upper - lower) - x;
        }
        x = (x - upper) % (2.0 * range);
        x = if x < range { upper - x } else { x - range };
    }
    x
}

/// The memory size from input `i`: at least one breakpoint.
fn memory_size(io: &Wires<'_>, i: usize) -> Option<usize> {
    let n = f2i(in0(io, i)).max(1);
    (n <= MAX_MEMORY).then_some(n as usize)
}

/// How many breakpoints this cycle uses: input `i`, or the whole memory
/// when that is out of range.
fn active_count(io: &Wires<'_>, i: usize, size: usize) -> i32 {
    let num = f2i(in0(io, i));
    if num > size as i32 || num < 1 {
        size as i32
    } else {
        num
    }
}

/// The inputs Gendy1 and Gendy2 share.
#[derive(Clone, Copy)]
struct Walk {
    which_amp: i32,
    which_dur: i32,
    a_amp: f32,
    a_dur: f32,
    min_freq: f32,
    max_freq: f32,
    scale_amp: f32,
    scale_dur: f32,
}

impl Walk {
    fn read(io: &Wires<'_>) -> Walk {
        Walk {
            which_amp: f2i(in0(io, 0)),
            which_dur: f2i(in0(io, 1)),
            a_amp: in0(io, 2),
            a_dur: in0(io, 3),
            min_freq: in0(io, 4),
            max_freq: in0(io, 5),
            scale_amp: in0(io, 6),
            scale_dur: in0(io, 7),
        }
    }
}

/// Where a Gendy1/Gendy2 waveform is between two breakpoints.
struct Segment {
    phase: f64,
    freq_mul: f32,
    amp: f32,
    next_amp: f32,
    speed: f32,
    index: i32,
}

impl Segment {
    fn new(cx: &UnitCtx<'_>) -> Segment {
        Segment { phase: 1.0, freq_mul: cx.rate.sample_dur as f32, amp: 0.0, next_amp: 0.0, speed: 100.0, index: 0 }
    }

    /// Runs a block; `advance(g, seg, num)` moves to the next breakpoint
    /// (index already stepped) and returns its duration in [0, 1].
    fn run(
        &mut self,
        io: &mut Wires<'_>,
        g: &mut RGen,
        w: &Walk,
        size: usize,
        mut advance: impl FnMut(&mut RGen, &mut Segment, usize) -> f32,
    ) {
        let num = active_count(io, 9, size);
        let mut phase = self.phase;
        for o in io.out(0).iter_mut() {
            if phase >= 1.0 {
                phase -= 1.0;
                self.index = (self.index + 1) % num;
                let rate = advance(g, self, self.index as usize);
                self.speed = (w.min_freq + (w.max_freq - w.min_freq) * rate) * self.freq_mul;
                self.speed *= num as f32;
            }
            *o = ((1.0 - phase) * self.amp as f64 + phase * self.next_amp as f64) as f32;
            phase += self.speed as f64;
        }
        self.phase = phase;
    }
}

/// Gendy1: the amplitude and duration of each breakpoint take random walks
/// (the amplitude reflected into [-1, 1], the duration into [0, 1]).
pub struct Gendy1 {
    seg: Segment,
    mem_amp: Vec<f32>,
    mem_dur: Vec<f32>,
}

impl Construct for Gendy1 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = memory_size(io, 8).unwrap_or(0);
        let (mut mem_amp, mut mem_dur) = (fallible::with_capacity(size), fallible::with_capacity(size));
        let g = &mut cx.world.rgen;
        for _ in 0..size {
            mem_amp.push(2.0 * g.frand() - 1.0);
            mem_dur.push(g.frand());
        }
        io.out(0).fill(0.0);
        Gendy1 { seg: Segment::new(cx), mem_amp, mem_dur }
    }
}

impl Unit for Gendy1 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.mem_amp.is_empty() {
            io.out(0).fill(0.0);
            return;
        }
        let w = Walk::read(io);
        let (mem_amp, mem_dur) = (&mut self.mem_amp, &mut self.mem_dur);
        let mut g = cx.world.rgen;
        self.seg.run(io, &mut g, &w, mem_amp.len(), |g, seg, i| {
            seg.amp = seg.next_amp;
            let mut next = mem_amp[i] + w.scale_amp * distribution(w.which_amp, w.a_amp, g.frand());
            if next > 1.0 || next < -1.0 {
                if next < 0.0 {
                    next += 4.0;
                }
                next %= 4.0;
                if next > 1.0 && next < 3.0 {
                    next = 2.0 - next;
                } else if next > 1.0 {
                    next -= 4.0;
                }
            }
            mem_amp[i] = next;
            seg.next_amp = next;
            let mut rate = mem_dur[i] + w.scale_dur * distribution(w.which_dur, w.a_dur, g.frand());
            if rate > 1.0 || rate < 0.0 {
                if rate < 0.0 {
                    rate += 2.0;
                }
                rate %= 2.0;
                rate = 2.0 - rate;
            }
            mem_dur[i] = rate;
            rate
        });
        cx.world.rgen = g;
    }
}

/// Gendy2: like Gendy1, but the walks' steps themselves walk (a second
/// random walk), the amplitude step drawn from a Lehmer-style congruence on
/// the previous amplitude (inputs `a` and `c`).
pub struct Gendy2 {
    seg: Segment,
    mem_amp: Vec<f32>,
    mem_dur: Vec<f32>,
    mem_amp_step: Vec<f32>,
    mem_dur_step: Vec<f32>,
}

impl Construct for Gendy2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = memory_size(io, 8).unwrap_or(0);
        let mut mems: [Vec<f32>; 4] = std::array::from_fn(|_| fallible::with_capacity(size));
        let g = &mut cx.world.rgen;
        for _ in 0..size {
            mems[0].push(2.0 * g.frand() - 1.0);
            mems[1].push(g.frand());
            mems[2].push(2.0 * g.frand() - 1.0);
            mems[3].push(2.0 * g.frand() - 1.0);
        }
        io.out(0).fill(0.0);
        let [mem_amp, mem_dur, mem_amp_step, mem_dur_step] = mems;
        Gendy2 { seg: Segment::new(cx), mem_amp, mem_dur, mem_amp_step, mem_dur_step }
    }
}

impl Unit for Gendy2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.mem_amp.is_empty() {
            io.out(0).fill(0.0);
            return;
        }
        let w = Walk::read(io);
        let (la, lc) = (in0(io, 10), in0(io, 11));
        let Gendy2 { seg, mem_amp, mem_dur, mem_amp_step, mem_dur_step } = self;
        let mut g = cx.world.rgen;
        seg.run(io, &mut g, &w, mem_amp.len(), |g, seg, i| {
            let lehmer = (seg.amp * la + lc) % 1.0;
            seg.amp = seg.next_amp;
            let step = mirror(-1.0, 1.0, mem_amp_step[i] + distribution(w.which_amp, w.a_amp, lehmer.abs()));
            mem_amp_step[i] = step;
            let next = mirror(-1.0, 1.0, mem_amp[i] + w.scale_amp * step);
            mem_amp[i] = next;
            seg.next_amp = next;
            let dstep = mirror(-1.0, 1.0, mem_dur_step[i] + distribution(w.which_dur, w.a_dur, g.frand()));
            mem_dur_step[i] = dstep;
            let rate = mirror(0.0, 1.0, mem_dur[i] + w.scale_dur * dstep);
            mem_dur[i] = rate;
            rate
        });
        cx.world.rgen = g;
    }
}

/// Gendy3: every period, all breakpoints walk at once and their durations
/// are normalised to one period of `freq`; breakpoints shorter than a
/// sample are dropped.
pub struct Gendy3 {
    phase: f64,
    next_phase: f64,
    last_phase: f64,
    speed: f32,
    freq_mul: f32,
    amp: f32,
    next_amp: f32,
    interp_mult: f32,
    index: i32,
    mem_amp: Vec<f32>,
    mem_dur: Vec<f32>,
    /// Durations of the kept breakpoints, then a guard of 2.
    phase_list: Vec<f64>,
    /// Amplitudes of the kept breakpoints, then a closing 0; one spare
    /// slot past the guard is read (times zero) at the end of a period.
    amp_list: Vec<f32>,
}

impl Construct for Gendy3 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let size = memory_size(io, 7).unwrap_or(0);
        let mut mem_amp = fallible::with_capacity(size);
        let mut mem_dur = fallible::with_capacity(size);
        let mut amp_list = fallible::with_capacity(size + 2);
        let g = &mut cx.world.rgen;
        for _ in 0..size {
            mem_amp.push(2.0 * g.frand() - 1.0);
            mem_dur.push(g.frand());
            amp_list.push(2.0 * g.frand() - 1.0);
        }
        if let Some(first) = mem_amp.first_mut() {
            *first = 0.0;
        }
        amp_list.resize(size + 2, 0.0);
        io.out(0).fill(0.0);
        Gendy3 {
            phase: 1.0,
            next_phase: 0.0,
            last_phase: 0.0,
            speed: 100.0,
            freq_mul: cx.rate.sample_dur as f32,
            amp: 0.0,
            next_amp: 0.0,
            interp_mult: 1.0,
            index: 0,
            mem_amp,
            mem_dur,
            phase_list: fallible::filled(1.0, size + 1),
            amp_list,
        }
    }
}

impl Gendy3 {
    /// Walks every breakpoint and lays out the next period.
    fn new_period(&mut self, io: &Wires<'_>, g: &mut RGen, w: &Walk3) {
        let num = active_count(io, 8, self.mem_amp.len()) as usize;
        let mut dursum = 0.0f32;
        for j in 0..num {
            if j > 0 {
                let amp = self.mem_amp[j] + w.scale_amp * distribution(w.which_amp, w.a_amp, g.frand());
                self.mem_amp[j] = mirror(-1.0, 1.0, amp);
            }
            let dur = self.mem_dur[j] + w.scale_dur * distribution(w.which_dur, w.a_dur, g.frand());
            let dur = mirror(0.01, 1.0, dur);
            self.mem_dur[j] = dur;
            dursum += dur;
        }
        dursum = 1.0 / dursum;
        let min_phase = self.freq_mul;
        self.speed = w.freq * min_phase;
        let mut active = 0;
        for j in 0..num {
            let dur = self.mem_dur[j] * dursum;
            if dur >= min_phase {
                self.amp_list[active] = self.mem_amp[j];
                self.phase_list[active] = dur as f64;
                active += 1;
            }
        }
        self.amp_list[active] = 0.0;
        self.phase_list[active] = 2.0;
        self.next_phase = 0.0;
        self.next_amp = self.amp_list[0];
        self.index = -1;
    }
}

#[derive(Clone, Copy)]
struct Walk3 {
    which_amp: i32,
    which_dur: i32,
    a_amp: f32,
    a_dur: f32,
    freq: f32,
    scale_amp: f32,
    scale_dur: f32,
}

impl Unit for Gendy3 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.mem_amp.is_empty() {
            io.out(0).fill(0.0);
            return;
        }
        let w = Walk3 {
            which_amp: f2i(in0(io, 0)),
            which_dur: f2i(in0(io, 1)),
            a_amp: in0(io, 2),
            a_dur: in0(io, 3),
            freq: in0(io, 4),
            scale_amp: in0(io, 5),
            scale_dur: in0(io, 6),
        };
        let mut g = cx.world.rgen;
        let mut interp_mult = self.interp_mult as i32;
        for k in 0..io.n() {
            if self.phase >= 1.0 {
                self.phase -= 1.0;
                self.new_period(io, &mut g, &w);
            }
            if self.phase >= self.next_phase {
                self.index += 1;
                self.amp = self.next_amp;
                self.last_phase = self.next_phase;
                let i = self.index as usize;
                self.next_phase = self.last_phase + self.phase_list[i];
                self.next_amp = self.amp_list[i + 1];
                interp_mult = d2i(1.0 / (self.next_phase - self.last_phase));
            }
            let interp = ((self.phase - self.last_phase) * interp_mult as f64) as f32;
            io.out(0)[k] = (1.0 - interp) * self.amp + interp * self.next_amp;
            self.phase += self.speed as f64;
        }
        self.interp_mult = interp_mult as f32;
        cx.world.rgen = g;
    }
}
