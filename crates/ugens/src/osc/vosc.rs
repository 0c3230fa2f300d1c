//! VOsc and VOsc3: wavetable oscillators whose fractional buffer number
//! crossfades between two consecutive wavetable buffers.
//!
//! When the buffer position changes across a block, the block is cut where
//! the position crosses an integer: each piece reads its own pair of buffers
//! and moves the crossfade level linearly, as scsynth does.

use crate::common::signal::{in0, in_rate, In};
use crate::common::math::{d2i, f2i, sc_max, sc_min};
use crate::common::wavetable::phase_frac1;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::World;

/// 1 / 2π.
const RTWOPI: f64 = 1.0 / (2.0 * std::f64::consts::PI);
/// scsynth refuses wavetables longer than this: its phase loses precision.
const MAX_TABLE: i32 = 131_072;
/// Shifts a 16.16 phase to a byte offset into the (value, slope) pairs.
const XLOBITS1: u32 = 13;

/// The first of the two buffers a position `bufnum` reads: negative numbers
/// read buffer 0; past the world's buffers the synth's local buffers follow,
/// and past those again buffer 0 is read. (A pair that would straddle the
/// last world buffer and the first local one reads memory before the local
/// buffers in scsynth; it reads buffer 0 here.)
fn first_buffer(world: &World, bufnum: i32) -> usize {
    let b = bufnum.max(0) as usize;
    let count = world.num_bufs();
    if b + 1 < count || (b >= count && b - count <= world.num_local_bufs()) {
        b
    } else {
        0
    }
}

/// The two wavetables at `bufnum`, if both hold `size` samples and the size
/// is one scsynth accepts.
fn table_pair(world: &World, bufnum: i32, size: i32) -> Option<(&[f32], &[f32])> {
    if !(2..=MAX_TABLE).contains(&size) || size & (size - 1) != 0 {
        return None;
    }
    let b = first_buffer(world, bufnum);
    let (t0, t1) = (world.buf(b)?, world.buf(b + 1)?);
    let fits = |t: &crate::world::SndBuf| t.is_allocated() && t.samples() == size as usize;
    (fits(t0) && fits(t1)).then(|| (&t0.data[..], &t1.data[..]))
}

/// Reads a (value, slope) pair table at a 16.16 phase.
#[inline(always)]
fn lookup(table: &[f32], phase: i32, lomask: i32) -> f32 {
    let byte = ((phase >> XLOBITS1) & lomask) as usize;
    let i = byte >> 2;
    table[i] + table[i + 1] * phase_frac1(phase as u32)
}

/// The table size a VOsc works with, taken from its first buffer pair when
/// it is built.
fn initial_table_size(world: &World, bufpos: f32) -> i32 {
    let b = first_buffer(world, f2i(bufpos.floor()));
    world.buf(b).map_or(0, |t| t.samples() as i32)
}

/// One piece of a block: `n` samples starting at `start`, with the level
/// starting at `level` and moving by `slope`, reading buffer pair `bufnum`.
#[derive(Clone, Copy)]
struct Piece {
    start: usize,
    n: usize,
    level: f32,
    slope: f32,
    bufnum: i32,
}

/// Splits a block of `n` samples whose buffer position moves from `prev` to
/// `next` (differing) into pieces that each stay between two integers.
/// `truncate` selects VOsc3's rounding towards zero over VOsc's floor.
/// Calls `f` for each piece in order; stops early if `f` returns false.
fn sweep(n: usize, prev: f32, next: f32, truncate: bool, mut f: impl FnMut(Piece) -> bool) {
    let diff = next - prev;
    let down = |x: f32| if truncate { x.trunc() } else { x.floor() };
    let mut cur = prev;
    let mut done = 0i32;
    let mut remain = n as i32;
    let mut start = 0usize;
    while remain > 0 {
        let level = cur - down(cur);
        let rising = if truncate { diff >= 0.0 } else { diff > 0.0 };
        let cut = if rising { sc_min(next, down(cur + 1.0)) } else { sc_max(next, (cur - 1.0).ceil()) };
        let sweepdiff = cut - cur;
        let count = if cut == next {
            remain
        } else {
            let sweep = n as f32 / diff;
            let edge = (sweep * sweepdiff + 0.5).floor();
            // VOsc3 subtracts in float, VOsc in int.
            let c = if truncate { f2i(edge - done as f32) } else { f2i(edge).wrapping_sub(done) };
            c.min(remain).max(1)
        };
        let slope = sweepdiff / count as f32;
        let bufnum = if truncate { f2i(cur) } else { f2i(cur.floor()) };
        if !f(Piece { start, n: count as usize, level, slope, bufnum }) {
            return;
        }
        start += count as usize;
        done += count;
        remain -= count;
        cur = cut;
    }
}

/// VOsc: a wavetable oscillator crossfading buffers `floor(bufpos)` and the
/// next one. Inputs: bufpos, freq, phase.
pub struct VOsc {
    cpstoinc: f64,
    radtoinc: f64,
    table_size: i32,
    lomask: i32,
    phase: i32,
    phasein: f32,
    bufpos: f32,
    audio_phase: bool,
}

impl VOsc {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let n = io.n();
        let next_pos = in0(io, 0);
        let freq = d2i(self.cpstoinc * in0(io, 1) as f64);
        let phase_in = In::new(io, 2);
        let inc = if self.audio_phase {
            freq
        } else {
            let p = phase_in.first();
            let slope = (p - self.phasein) * cx.rate.slope_factor as f32;
            self.phasein = p;
            freq.wrapping_add(d2i(slope as f64 * self.radtoinc))
        };
        let (lomask, size, radtoinc, audio) = (self.lomask, self.table_size, self.radtoinc, self.audio_phase);
        let out = io.out(0);
        let mut phase = self.phase;
        let mut ok = true;
        let piece = |p: Piece, out: &mut [f32], phase: &mut i32| -> bool {
            let Some((t0, t1)) = table_pair(cx.world, p.bufnum, size) else {
                return false;
            };
            let mut level = p.level;
            for (i, o) in out.iter_mut().enumerate().skip(p.start).take(p.n) {
                let ph = if audio { phase.wrapping_add(d2i(phase_in.at(i) as f64 * radtoinc)) } else { *phase };
                let a = lookup(t0, ph, lomask);
                let b = lookup(t1, ph, lomask);
                *o = a + level * (b - a);
                *phase = phase.wrapping_add(inc);
                level += p.slope;
            }
            true
        };
        let prev_pos = self.bufpos;
        if next_pos - prev_pos == 0.0 {
            let level = prev_pos - prev_pos.floor();
            let bufnum = f2i(prev_pos.floor());
            ok = piece(Piece { start: 0, n, level, slope: 0.0, bufnum }, out, &mut phase);
        } else {
            sweep(n, prev_pos, next_pos, false, |p| {
                ok = piece(p, out, &mut phase);
                ok
            });
        }
        if !ok {
            out.fill(0.0);
            return;
        }
        self.bufpos = next_pos;
        self.phase = phase;
    }
}

impl Construct for VOsc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let bufpos = in0(io, 0);
        let table_size = initial_table_size(cx.world, bufpos);
        let half = table_size >> 1;
        let radtoinc = half as f64 * (RTWOPI * 65536.0);
        let phasein = in0(io, 2);
        let audio_phase = in_rate(io, 2) == Rate::Audio;
        let initial = if audio_phase { 0 } else { d2i(phasein as f64 * radtoinc) };
        let mut u = VOsc {
            cpstoinc: half as f64 * cx.rate.sample_dur * 65536.0,
            radtoinc,
            table_size,
            lomask: half.wrapping_sub(1).wrapping_shl(3),
            phase: initial,
            phasein,
            bufpos,
            audio_phase,
        };
        u.run(io, cx);
        u.phase = initial;
        u
    }
}

impl Unit for VOsc {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// VOsc3: three VOsc voices at their own frequencies, summed, sharing one
/// buffer position. Inputs: bufpos, freq1, freq2, freq3.
pub struct VOsc3 {
    cpstoinc: f64,
    table_size: i32,
    lomask: i32,
    phases: [i32; 3],
    bufpos: f32,
}

impl VOsc3 {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let n = io.n();
        let next_pos = in0(io, 0);
        let freqs: [i32; 3] = std::array::from_fn(|k| d2i(self.cpstoinc * in0(io, k + 1) as f64));
        let (lomask, size) = (self.lomask, self.table_size);
        let out = io.out(0);
        let mut phases = self.phases;
        let mut ok = true;
        let piece = |p: Piece, out: &mut [f32], phases: &mut [i32; 3]| -> bool {
            let Some((t0, t1)) = table_pair(cx.world, p.bufnum, size) else {
                return false;
            };
            let mut level = p.level;
            for o in &mut out[p.start..p.start + p.n] {
                let ph = *phases;
                for (k, f) in phases.iter_mut().zip(freqs) {
                    *k = k.wrapping_add(f);
                }
                let mut a = lookup(t0, ph[0], lomask);
                let mut b = lookup(t1, ph[0], lomask);
                a += lookup(t0, ph[1], lomask);
                b += lookup(t1, ph[1], lomask);
                a += lookup(t0, ph[2], lomask);
                b += lookup(t1, ph[2], lomask);
                *o = a + level * (b - a);
                level += p.slope;
            }
            true
        };
        let prev_pos = self.bufpos;
        if next_pos - prev_pos == 0.0 {
            let whole = f2i(prev_pos);
            let level = prev_pos - whole as f32;
            ok = piece(Piece { start: 0, n, level, slope: 0.0, bufnum: whole }, out, &mut phases);
        } else {
            sweep(n, prev_pos, next_pos, true, |p| {
                ok = piece(p, out, &mut phases);
                ok
            });
        }
        if !ok {
            out.fill(0.0);
            return;
        }
        self.bufpos = next_pos;
        self.phases = phases;
    }
}

impl Construct for VOsc3 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let bufpos = in0(io, 0);
        let table_size = initial_table_size(cx.world, bufpos);
        let half = table_size >> 1;
        let mut u = VOsc3 {
            cpstoinc: half as f64 * cx.rate.sample_dur * 65536.0,
            table_size,
            lomask: half.wrapping_sub(1).wrapping_shl(3),
            phases: [0; 3],
            bufpos,
        };
        u.run(io, cx);
        u.phases = [0; 3];
        u
    }
}

impl Unit for VOsc3 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

#[cfg(test)]
mod tests {
    use crate::common::wavetable::signal_as_wavetable;
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;
    use crate::world::SndBuf;

    fn with_table(mut h: UnitHarness, bufnum: usize, data: &[f32]) -> UnitHarness {
        let mut b = SndBuf::new(data.len() as u32, 1, 48_000.0);
        b.data.copy_from_slice(data);
        h.world.buffers[bufnum] = b;
        h
    }

    fn sine_wavetable(n: usize, harmonic: f32) -> Vec<f32> {
        let sig: Vec<f32> = (0..n).map(|i| (std::f32::consts::TAU * harmonic * i as f32 / n as f32).sin()).collect();
        let mut wt = vec![0.0; 2 * n];
        signal_as_wavetable(&sig, &mut wt);
        wt
    }

    fn zero_crossings(x: &[f32]) -> usize {
        x.windows(2).filter(|w| (w[0] < 0.0) != (w[1] < 0.0)).count()
    }

    #[test]
    fn vosc_crossfades_between_neighbouring_tables() {
        let mk = |pos: f32| {
            let h = UnitHarness::new("VOsc", Rate::Audio).inputs([
                TestInput::Const(pos),
                TestInput::Const(480.0),
                TestInput::Const(0.0),
            ]);
            let h = with_table(h, 2, &sine_wavetable(512, 1.0));
            with_table(h, 3, &sine_wavetable(512, 3.0)).run(75)
        };
        // 480 Hz over 0.1 s: 48 cycles of the fundamental, or 144 of the third harmonic.
        let low = zero_crossings(&mk(2.0)[0]);
        let high = zero_crossings(&mk(2.999)[0]);
        assert!((low as i32 - 96).abs() <= 2, "{low}");
        assert!((high as i32 - 288).abs() <= 4, "{high}");
        let mid = mk(2.5);
        let peak = mid[0].iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!(peak < 1.0 && peak > 0.5, "{peak}");
    }

    #[test]
    fn vosc3_sums_three_voices() {
        let h = UnitHarness::new("VOsc3", Rate::Audio).inputs([
            TestInput::Const(0.0),
            TestInput::Const(100.0),
            TestInput::Const(100.0),
            TestInput::Const(100.0),
        ]);
        let h = with_table(h, 0, &sine_wavetable(512, 1.0));
        let out = with_table(h, 1, &sine_wavetable(512, 1.0)).run(20);
        let peak = out[0].iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!((peak - 3.0).abs() < 0.01, "{peak}");
    }
}
