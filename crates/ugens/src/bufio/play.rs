//! PlayBuf: plays a buffer at a variable rate with cubic interpolation.

use crate::common::buffer::{buffer, out_ptrs, read_frame, sc_loop};

use crate::common::signal::at;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// PlayBuf (`bufnum, rate, trigger, startPos, loop, doneAction`).
pub struct PlayBuf {
    phase: f64,
    prev_trig: f32,
    rate_audio: bool,
    trig_audio: bool,
}

impl PlayBuf {
    fn run(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let (mut outs, num_outputs) = out_ptrs(io);
        let outs = &mut outs[..num_outputs];
        let Some(buf) = buffer(io, cx) else {
            io.clear_outputs();
            return;
        };
        let looping = io.in0(4) as i32 != 0;
        let frames = buf.frames;
        let loop_max = if looping { frames as f64 } else { frames as f64 - 1.0 };
        let mut phase = self.phase;
        let mut done = cx.is_done();
        let rate_in = io.inp(1);
        let trig_in = io.inp(2);
        let start = io.inp(3);
        let start_audio = io.in_rate(3) == Rate::Audio;
        let rate_at = |i: usize| if self.rate_audio { at(rate_in, i) } else { rate_in[0] } as f64;

        if self.trig_audio {
            let mut prev = self.prev_trig;
            for i in 0..n {
                let trig = at(trig_in, i);
                if trig > 0.0 && prev <= 0.0 {
                    done = false;
                    // Only the control-rate-rate variant reads an audio
                    // start position sample by sample.
                    phase = if start_audio && !self.rate_audio { at(start, i) } else { start[0] } as f64;
                }
                prev = trig;
                phase = sc_loop(&mut done, phase, loop_max, looping);
                read_frame::<4>(outs, i, buf, phase, looping);
                phase += rate_at(i);
            }
            self.prev_trig = prev;
        } else {
            if self.rate_audio && phase == -1.0 {
                phase = frames as f64;
            }
            let trig = trig_in[0];
            if trig > 0.0 && self.prev_trig <= 0.0 {
                done = false;
                phase = start[0] as f64;
            }
            self.prev_trig = trig;
            for i in 0..n {
                phase = sc_loop(&mut done, phase, loop_max, looping);
                read_frame::<4>(outs, i, buf, phase, looping);
                phase += rate_at(i);
            }
        }
        cx.set_done(done);
        if done {
            cx.done_action(io.in0(5) as i32);
        }
        self.phase = phase;
    }
}

impl Construct for PlayBuf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let unit = PlayBuf {
            phase: io.in0(3) as f64,
            prev_trig: 0.0,
            rate_audio: io.in_rate(1) == Rate::Audio,
            trig_audio: io.in_rate(2) == Rate::Audio,
        };
        io.clear_outputs();
        unit
    }
}

impl Unit for PlayBuf {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}
