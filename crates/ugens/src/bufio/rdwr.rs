//! BufRd, BufWr and RecordBuf.

use crate::common::buffer::{buffer, out_ptrs, read_frame, sc_loop};

use crate::common::signal::at;
use crate::common::buffer::resolve_buffer_index;
use crate::simd::ramp;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

// ---- BufRd ------------------------------------------------------------------

/// BufRd (`bufnum, phase, loop, interpolation`): reads frames at an audio
/// phase (in frames) with 1 (none), 2 (linear) or 4 (cubic) interpolation.
pub struct BufRd {
    interp: u8,
}

impl BufRd {
    fn run<const INTERP: u8>(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let (mut outs, num_outputs) = out_ptrs(io);
        let outs = &mut outs[..num_outputs];
        let Some(buf) = buffer(io, cx) else {
            io.clear_outputs();
            return;
        };
        let looping = io.in0(2) as i32 != 0;
        let frames = buf.frames as f64;
        let loop_max = if looping { frames } else { frames - 1.0 };
        let phase_in = io.inp(1);
        let mut done = cx.is_done();
        for i in 0..n {
            let phase = sc_loop(&mut done, at(phase_in, i) as f64, loop_max, looping);
            read_frame::<INTERP>(outs, i, buf, phase, looping);
        }
        cx.set_done(done);
    }
}

impl Construct for BufRd {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let interp = match io.in0(3) as i32 {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        let mut unit = BufRd { interp };
        // The first sample is always read without interpolation.
        unit.run::<1>(io, cx);
        unit
    }
}

impl Unit for BufRd {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        match self.interp {
            1 => self.run::<1>(io, cx),
            2 => self.run::<2>(io, cx),
            _ => self.run::<4>(io, cx),
        }
    }
}

// ---- BufWr ------------------------------------------------------------------

/// BufWr (`bufnum, phase, loop, inputs...`): writes its inputs at an audio
/// phase. Its output is cleared once and then left alone.
pub struct BufWr;

impl Construct for BufWr {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        BufWr
    }
}

impl Unit for BufWr {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let num_channels = io.num_inputs().saturating_sub(3);
        let looping = io.in0(2) as i32 != 0;
        let phase_in = io.inp(1);
        let Some(buf) = resolve_buffer_index(cx.world, io.in0(0)).and_then(|i| cx.world.buf_mut(i)) else {
            cx.set_done(true);
            io.clear_outputs();
            return;
        };
        let chans = buf.channels as usize;
        if !buf.is_allocated() || num_channels > chans {
            cx.set_done(true);
            io.clear_outputs();
            return;
        }
        let loop_max = buf.frames as f64 - if looping { 0.0 } else { 1.0 };
        let mut done = cx.done_flags[cx.unit_index];
        for k in 0..n {
            let phase = sc_loop(&mut done, at(phase_in, k) as f64, loop_max, looping);
            let base = phase as i32 as isize * chans as isize;
            for ch in 0..num_channels {
                let idx = base + ch as isize;
                if idx >= 0 {
                    if let Some(s) = buf.data.get_mut(idx as usize) {
                        *s = at(io.inp(3 + ch), k);
                    }
                }
            }
        }
        cx.set_done(done);
    }
}

// ---- RecordBuf --------------------------------------------------------------

/// RecordBuf (`bufnum, offset, recLevel, preLevel, run, loop, trigger,
/// doneAction, inputs...`): records into a buffer, mixing with what is
/// there by `preLevel`.
pub struct RecordBuf {
    writepos: i32,
    rec_level: f32,
    pre_level: f32,
    prev_trig: f32,
    /// Levels fixed at 1 and 0: the input is copied as is.
    plain: bool,
}

impl Construct for RecordBuf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        use crate::unit::Rate;
        let num_inputs = io.num_inputs().saturating_sub(8) as i32;
        let rec_level = io.in0(2);
        let pre_level = io.in0(3);
        let plain = io.in_rate(2) == Rate::Scalar
            && io.in_rate(3) == Rate::Scalar
            && rec_level == 1.0
            && pre_level == 0.0;
        io.clear_outputs();
        RecordBuf {
            writepos: (io.in0(1) as i32).wrapping_mul(num_inputs),
            rec_level,
            pre_level,
            prev_trig: 0.0,
            plain,
        }
    }
}

impl Unit for RecordBuf {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let num_inputs = io.num_inputs().saturating_sub(8);
        let found = resolve_buffer_index(cx.world, io.in0(0))
            .and_then(|i| cx.world.buf(i).filter(|b| b.is_allocated()).map(|b| (i, b.channels as usize)));
        let Some((index, chans)) = found else {
            cx.set_done(true);
            io.clear_outputs();
            return;
        };
        if num_inputs != chans {
            cx.set_done(true);
            io.clear_outputs();
            return;
        }
        let sf = cx.rate.slope_factor;
        let run = io.in0(4);
        let looping = io.in0(5) as i32 != 0;
        let trig = io.in0(6);
        let (mut rec, mut pre, rec_slope, pre_slope) = if self.plain {
            (1.0, 0.0, 0.0, 0.0)
        } else {
            let (next_rec, next_pre) = (io.in0(2), io.in0(3));
            (
                self.rec_level,
                self.pre_level,
                ramp::calc_slope(next_rec, self.rec_level, sf),
                ramp::calc_slope(next_pre, self.pre_level, sf),
            )
        };
        let plain = self.plain;
        let Some(buf) = cx.world.buf_mut(index) else { return };
        let samples = buf.data.len() as i32;
        let c = chans as i32;
        let mut writepos = self.writepos;
        let mut done = cx.done_flags[cx.unit_index];
        let start = (io.in0(1) as i32).wrapping_mul(c);

        // Writes one frame of the inputs at `pos`, sample `k` of the block.
        let mut write = |pos: i32, k: usize, rec: f32, pre: f32| {
            for ch in 0..chans {
                let x = at(io.inp(8 + ch), k);
                if let Some(s) = usize::try_from(pos + ch as i32).ok().and_then(|p| buf.data.get_mut(p)) {
                    *s = if plain { x } else { x * rec + *s * pre };
                }
            }
        };

        if looping {
            if trig > 0.0 && self.prev_trig <= 0.0 {
                done = false;
                writepos = start;
            }
            if writepos < 0 {
                writepos = samples - c;
            } else if writepos >= samples {
                writepos = 0;
            }
            if run > 0.0 {
                for k in 0..n {
                    write(writepos, k, rec, pre);
                    writepos += c;
                    if writepos >= samples {
                        writepos = 0;
                    }
                    rec += rec_slope;
                    pre += pre_slope;
                }
            } else if run < 0.0 {
                for k in 0..n {
                    write(writepos, k, rec, pre);
                    writepos -= c;
                    if writepos < 0 {
                        writepos = samples - c;
                    }
                    rec += rec_slope;
                    pre += pre_slope;
                }
            }
        } else {
            if trig > 0.0 && self.prev_trig <= 0.0 {
                done = false;
                writepos = start;
            }
            let block = n as i32 * c;
            if run > 0.0 {
                let frames = (samples - writepos).clamp(0, block) / c.max(1);
                for k in 0..frames as usize {
                    write(writepos, k, rec, pre);
                    writepos += c;
                    rec += rec_slope;
                    pre += pre_slope;
                }
            } else if run < 0.0 {
                let frames = writepos.clamp(0, block) / c.max(1);
                for k in 0..frames as usize {
                    write(writepos, k, rec, pre);
                    writepos -= c;
                    rec += rec_slope;
                    pre += pre_slope;
                }
            }
            if writepos >= samples {
                done = true;
                cx.done_action(io.in0(7) as i32);
            }
        }
        cx.set_done(done);
        self.prev_trig = trig;
        self.writepos = writepos;
        if !plain {
            self.rec_level = rec;
            self.pre_level = pre;
        }
    }
}
