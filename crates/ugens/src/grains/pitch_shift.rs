//! PitchShift: four read heads sweep a delay line at the pitch ratio, each
//! faded in and out by a triangle, a quarter window apart.

use super::MAX_POOL_BYTES;
use crate::common::signal::at;
use crate::common::math::sc_clip;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use magnetar_rt::fallible;

/// Read heads, one per quarter of the window.
const HEADS: usize = 4;

/// PitchShift (`in, windowSize, pitchRatio, pitchDispersion, timeDispersion`).
pub struct PitchShift {
    dlybuf: Vec<f32>,
    dsamp: [f32; HEADS],
    dsamp_slope: [f32; HEADS],
    ramp: [f32; HEADS],
    ramp_slope: [f32; HEADS],
    slope: f32,
    iwrphase: i64,
    idelaylen: i64,
    mask: i64,
    counter: i64,
    stage: i64,
    numoutput: i64,
    framesize: i64,
}

impl PitchShift {
    /// Starts the next quarter: head `stage` restarts at a (possibly
    /// dispersed) distance behind the write head, fading in, while the
    /// head opposite it starts fading out.
    fn next_stage(&mut self, pchratio: f32, pchdisp: f32, timedisp: f32, cx: &mut UnitCtx<'_>) {
        self.counter = self.framesize >> 2;
        self.stage = (self.stage + 1) & 3;
        let mut ratio = pchratio;
        if pchdisp != 0.0 {
            ratio += pchdisp * cx.world.rgen.frand2();
        }
        let ratio = sc_clip(ratio, 0.0, 4.0);
        let ratio1 = ratio - 1.0;
        let mut startpos = if ratio1 < 0.0 { 2.0 } else { self.framesize as f32 * ratio1 + 2.0 };
        startpos += timedisp * cx.world.rgen.frand();
        let s = self.stage as usize;
        self.dsamp_slope[s] = -ratio1;
        self.dsamp[s] = startpos;
        self.ramp[s] = 0.0;
        self.ramp_slope[s] = self.slope;
        self.ramp_slope[(s + 2) & 3] = -self.slope;
    }

    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        if self.dlybuf.is_empty() {
            io.out(0).fill(0.0);
            return;
        }
        let input = io.inp(0);
        let winsize = io.in0(1);
        let pchratio = io.in0(2);
        let pchdisp = io.in0(3);
        let timedisp = (sc_clip(io.in0(4), 0.0, winsize) as f64 * cx.rate.sample_rate) as f32;
        let out = io.out(0);
        let mask = self.mask;

        let mut k = 0;
        let mut remain = n as i64;
        while remain > 0 {
            if self.counter <= 0 {
                self.next_stage(pchratio, pchdisp, timedisp, cx);
            }
            let nsmps = remain.min(self.counter);
            remain -= nsmps;
            self.counter -= nsmps;
            for _ in 0..nsmps {
                self.numoutput += 1;
                // Until the line has been filled once, heads reading ahead
                // of the write head (unwritten memory) stay silent.
                let filling = self.numoutput < self.idelaylen;
                let wr = (self.iwrphase + 1) & mask;
                self.iwrphase = wr;
                let mut value = 0.0f32;
                for h in 0..HEADS {
                    self.dsamp[h] += self.dsamp_slope[h];
                    let idsamp = self.dsamp[h] as i64;
                    let frac = self.dsamp[h] - idsamp as f32;
                    let rd = (wr - idsamp) & mask;
                    let rdb = (rd - 1) & mask;
                    let d1 = self.dlybuf[rd as usize];
                    let v = if filling && rd > wr {
                        None
                    } else if filling && rdb > wr {
                        Some((d1 - frac * d1) * self.ramp[h])
                    } else {
                        let d2 = self.dlybuf[rdb as usize];
                        Some((d1 + frac * (d2 - d1)) * self.ramp[h])
                    };
                    value = match (h, v) {
                        (0, v) => v.unwrap_or(0.0),
                        (_, Some(v)) => value + v,
                        (_, None) => value,
                    };
                    self.ramp[h] += self.ramp_slope[h];
                }
                self.dlybuf[wr as usize] = at(input, k);
                out[k] = value * 0.5;
                k += 1;
            }
        }
    }
}

impl Construct for PitchShift {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let sample_rate = cx.rate.sample_rate;
        let minimum = (3.0 * cx.rate.sample_dur) as f32;
        // Windows under three samples are widened: shorter ones make no sense.
        let winsize = if io.in0(1) < minimum { minimum } else { io.in0(1) };
        let span = (winsize as f64 * sample_rate * 3.0 + 3.0).ceil() as i64;
        let size = (span + cx.rate.buf_length as i64) as i32;
        let size = if size <= 1 { 1 } else { (size as u32).next_power_of_two() as i64 };
        let mut dlybuf = Vec::new();
        if (size as usize).saturating_mul(4) <= MAX_POOL_BYTES {
            dlybuf = fallible::zeroed(size as usize);
            dlybuf[0] = io.in0(0);
        }
        io.out(0)[0] = 0.0;
        // At least one sample per quarter frame: a NaN or infinite window
        // would otherwise give a frame of 0 (or a wrapped negative) samples,
        // and `run` would never get through a block.
        let framesize = (((winsize as f64 * sample_rate) as i64).saturating_add(2) & !3).max(4);
        let slope = 2.0 / framesize as f32;
        PitchShift {
            dlybuf,
            dsamp: [2.0; HEADS],
            dsamp_slope: [1.0; HEADS],
            ramp: [0.5, 1.0, 0.5, 0.0],
            ramp_slope: [-slope, -slope, slope, slope],
            slope,
            iwrphase: 0,
            idelaylen: size,
            mask: size - 1,
            counter: framesize >> 2,
            stage: 3,
            numoutput: 0,
            framesize,
        }
    }
}

impl Unit for PitchShift {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
