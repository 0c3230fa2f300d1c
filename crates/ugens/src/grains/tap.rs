//! GrainTap: granular pitch shifting of a delay line kept in a buffer.

use crate::common::buffer::resolve_buffer_index;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

const MAX_GRAINS: usize = 32;
/// End of a grain list.
const NONE: u8 = u8::MAX;

#[derive(Clone, Copy, Default)]
struct Grain {
    pos: f32,
    rate: f32,
    level: f32,
    slope: f32,
    curve: f32,
    counter: i64,
    next: u8,
}

/// GrainTap: inputs bufnum, grainDur, pchRatio, pchDisp, timeDisp,
/// overlap. Reads grains from the buffer behind a write position that
/// advances one block per block from where the unit started; the buffer
/// must hold a power of two of samples.
pub struct GrainTap {
    bufsize: u32,
    fdelaylen: f32,
    iwrphase: i64,
    next_time: i64,
    grains: [Grain; MAX_GRAINS],
    /// Grains in order of their summing: the newest first.
    first_active: u8,
    first_free: u8,
    failed: bool,
}

/// One grain's samples added into `out`, from write position `iwrphase`.
#[inline(always)]
fn play(g: &mut Grain, data: &[f32], mask: i64, mut iwrphase: i64, out: &mut [f32]) {
    let (mut dsamp, rate, mut level, mut slope, curve) = (g.pos, g.rate, g.level, g.slope, g.curve);
    for o in out.iter_mut() {
        dsamp += rate;
        let idsamp = dsamp as i64;
        let frac = dsamp - idsamp as f32;
        iwrphase = (iwrphase + 1) & mask;
        let ird = (iwrphase - idsamp) & mask;
        let irdb = (ird - 1) & mask;
        let d1 = data[ird as usize];
        let d2 = data[irdb as usize];
        *o += (d1 + frac * (d2 - d1)) * level;
        level += slope;
        slope += curve;
    }
    g.pos = dsamp;
    g.level = level;
    g.slope = slope;
    g.counter -= out.len() as i64;
}

impl Construct for GrainTap {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let samples = resolve_buffer_index(cx.world, io.in0(0))
            .and_then(|i| cx.world.buf(i))
            .map_or(0, |b| b.data.len() as u32);
        let mut grains = [Grain::default(); MAX_GRAINS];
        for (i, g) in grains.iter_mut().enumerate() {
            g.next = if i + 1 < MAX_GRAINS { (i + 1) as u8 } else { NONE };
        }
        let fdelaylen = samples.wrapping_sub(2 * cx.rate.buf_length as u32).wrapping_sub(3) as f32;
        io.out(0)[0] = 0.0;
        GrainTap {
            bufsize: samples,
            fdelaylen,
            iwrphase: 0,
            next_time: 0,
            grains,
            first_active: NONE,
            first_free: 0,
            failed: samples & samples.wrapping_sub(1) != 0,
        }
    }
}

impl Unit for GrainTap {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let buf = resolve_buffer_index(cx.world, io.in0(0)).and_then(|i| cx.world.buf(i));
        let data = match buf {
            Some(b) if !self.failed && b.is_allocated() && b.data.len() as u32 == self.bufsize => &b.data[..],
            _ => {
                io.clear_outputs();
                return;
            }
        };
        let mask = data.len() as i64 - 1;
        // The generator is worked on a copy while the buffer is borrowed, and put back after.
        let mut rgen = cx.world.rgen;
        let density = io.in0(5).max(0.0001);
        let sr = cx.rate.sample_rate;
        let fdelaylen = self.fdelaylen;
        let iwrphase0 = self.iwrphase;
        let (grain_dur, pch_ratio, pch_disp, time_disp) = (io.in0(1), io.in0(2), io.in0(3), io.in0(4));
        let out = &mut io.out(0)[..n];
        out.fill(0.0);

        // The grains already playing.
        let mut prev = NONE;
        let mut g = self.first_active;
        while g != NONE {
            let grain = &mut self.grains[g as usize];
            let count = (grain.counter.max(0) as usize).min(n);
            play(grain, data, mask, iwrphase0, &mut out[..count]);
            let next = grain.next;
            if grain.counter <= 0 {
                if prev == NONE {
                    self.first_active = next;
                } else {
                    self.grains[prev as usize].next = next;
                }
                self.grains[g as usize].next = self.first_free;
                self.first_free = g;
            } else {
                prev = g;
            }
            g = next;
        }

        // New grains, each starting at its offset in the block.
        let mut remain = n as i64;
        while self.next_time <= remain {
            remain -= self.next_time;
            let sdur = ((grain_dur as f64 * sr) as f32).max(4.0);
            let g = self.first_free;
            if g != NONE {
                let grain = &mut self.grains[g as usize];
                self.first_free = grain.next;
                grain.next = self.first_active;
                self.first_active = g;
                let koffset = n as i64 - remain;
                let iwrphase = (iwrphase0 + koffset) & mask;
                grain.counter = sdur as i64;
                let mut timedisp = time_disp.max(0.0);
                timedisp = ((rgen.frand() * timedisp) as f64 * sr) as f32;
                let mut pitch = pch_ratio + rgen.frand2() * pch_disp;
                let start = (cx.rate.buf_length as i64 + koffset) as f32 + 2.0;
                let dsamp = if pitch >= 1.0 {
                    pitch = pitch.min(1.0 + fdelaylen / sdur);
                    let rate = 1.0 - pitch;
                    grain.rate = rate;
                    timedisp = timedisp.min(fdelaylen + sdur * rate);
                    start + timedisp - sdur * rate
                } else {
                    pitch = pitch.max(-(1.0 + fdelaylen / sdur));
                    let rate = 1.0 - pitch;
                    grain.rate = rate;
                    timedisp = timedisp.min(fdelaylen - sdur * rate);
                    start + timedisp
                };
                grain.pos = dsamp.min(fdelaylen);
                let rdur = 1.0 / sdur;
                let rdur2 = rdur * rdur;
                grain.level = 0.0;
                grain.slope = (4.0 * (rdur - rdur2) as f64) as f32;
                grain.curve = (-8.0 * rdur2 as f64) as f32;
                play(grain, data, mask, iwrphase, &mut out[koffset as usize..]);
                if grain.counter <= 0 {
                    self.first_active = grain.next;
                    grain.next = self.first_free;
                    self.first_free = g;
                }
            }
            self.next_time = ((sdur / density) as i64).max(1);
        }
        self.iwrphase = (iwrphase0 + cx.rate.buf_length as i64) & mask;
        self.next_time = (self.next_time - remain).max(0);
        cx.world.rgen = rgen;
    }
}
