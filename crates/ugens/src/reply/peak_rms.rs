//! SendPeakRMS: measures the peak and RMS of its inputs and sends them to
//! clients `replyRate` times a second, as `cmd node id peak0 rms0 peak1 rms1 ...`.
//! Inputs: reply rate, peak lag, reply id, channel count, the channels,
//! then the command name as its length and one input per character.

use std::sync::Arc;

use crate::world::MAX_TRIGGERS_PER_BLOCK;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::Trigger;

const SIGNALS: usize = 4;

pub struct SendPeakRMS {
    channels: usize,
    /// Peak and squared sum per channel, then the lagged peak per channel.
    data: Vec<f32>,
    cmd: Arc<str>,
    b1: f32,
    audio_per_tick: i32,
    control_per_tick: i32,
    phase_remain: i32,
    audio: bool,
    /// Blocks a multiple of 16 long are measured four lanes at a time,
    /// which sums the squares in another order.
    simd: bool,
}

/// Adds `x` to a running peak and squared sum, one sample after another.
fn peak_rms_serial(x: &[f32], peak: &mut f32, sum: &mut f32) {
    let (mut p, mut s) = (*peak, *sum);
    for &v in x {
        let a = v.abs();
        if p < a {
            p = a;
        }
        s += v * v;
    }
    *peak = p;
    *sum = s;
}

/// The same in four lanes, sixteen samples per step; the lanes are joined
/// at the end as (0 + 2) + (1 + 3). `x.len()` is a multiple of 16.
fn peak_rms_lanes(x: &[f32], peak: &mut f32, sum: &mut f32) {
    let mut maxes = [*peak, 0.0, 0.0, 0.0];
    let mut sums = [*sum, 0.0, 0.0, 0.0];
    for chunk in x.chunks_exact(16) {
        for lane in 0..4 {
            let v = [chunk[lane], chunk[lane + 4], chunk[lane + 8], chunk[lane + 12]];
            let m = lane_max(lane_max(v[0].abs(), v[1].abs()), lane_max(v[2].abs(), v[3].abs()));
            maxes[lane] = lane_max(maxes[lane], m);
            sums[lane] += v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
        }
    }
    *peak = lane_max(lane_max(maxes[0], maxes[2]), lane_max(maxes[1], maxes[3]));
    *sum = (sums[0] + sums[2]) + (sums[1] + sums[3]);
}

/// The vector maximum: the second operand unless the first is larger.
#[inline(always)]
fn lane_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

impl SendPeakRMS {
    fn analyze(&mut self, io: &Wires<'_>, first: usize, count: usize, whole: bool) {
        for c in 0..self.channels {
            let x = io.inp(SIGNALS + c);
            let (head, tail) = self.data.split_at_mut(2 * c + 1);
            let (peak, sum) = (&mut head[2 * c], &mut tail[0]);
            if x.len() == 1 {
                if first == 0 {
                    peak_rms_serial(x, peak, sum);
                }
            } else if whole {
                if self.simd {
                    peak_rms_lanes(x, peak, sum);
                } else {
                    peak_rms_serial(x, peak, sum);
                }
            } else {
                let part = &x[first..first + count];
                if count.is_multiple_of(16) && first.is_multiple_of(4) {
                    peak_rms_lanes(part, peak, sum);
                } else {
                    peak_rms_serial(part, peak, sum);
                }
            }
        }
    }

    fn send(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = self.channels;
        if cx.world.triggers.len() < MAX_TRIGGERS_PER_BLOCK {
            let mut values = Vec::with_capacity(2 * n);
            for c in 0..n {
                let y0 = self.data[2 * c];
                let y1 = &mut self.data[2 * n + c];
                *y1 = if y0 >= *y1 { y0 } else { y0 + self.b1 * (*y1 - y0) };
                let peak = *y1;
                let ticks = if io.in_rate(SIGNALS + c) == Rate::Audio { self.audio_per_tick } else { self.control_per_tick };
                values.push(peak);
                values.push((self.data[2 * c + 1] / ticks as f32).sqrt());
            }
            let node_id = cx.synth.node_id;
            let id = io.in0(2) as i32;
            cx.world.triggers.push(Trigger { node_id, id, cmd: Some(self.cmd.to_string()), values });
        } else {
            // The message is dropped (and counted), the lagged peaks still move on.
            cx.world.dropped_triggers += 1;
            for c in 0..n {
                let y0 = self.data[2 * c];
                let y1 = &mut self.data[2 * n + c];
                *y1 = if y0 >= *y1 { y0 } else { y0 + self.b1 * (*y1 - y0) };
            }
        }
        self.data[..2 * n].fill(0.0);
    }
}

impl Construct for SendPeakRMS {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let inputs = io.num_inputs();
        let channels = (io.in0(3).max(0.0) as usize).min(inputs.saturating_sub(SIGNALS + 1));
        let size_index = SIGNALS + channels;
        let name_len = if size_index < inputs { io.in0(size_index).max(0.0) as usize } else { 0 };
        let name_len = name_len.min(inputs.saturating_sub(size_index + 1));
        let cmd: String = (0..name_len).map(|i| io.in0(size_index + 1 + i) as u8 as char).collect();
        let reply_rate = io.in0(0);
        // At least one sample per reply: scsynth would never finish a block otherwise.
        let audio_per_tick = ((cx.world.full_rate.sample_rate / reply_rate as f64) as i32).max(1);
        let control_per_tick = ((cx.rate.buf_rate / reply_rate as f64) as i32).max(1);
        let audio = spec.rate == Rate::Audio;
        let lag = io.in0(1);
        let b1 = if lag != 0.0 { ((0.001f64).ln() / (lag * reply_rate) as f64).exp() as f32 } else { 0.0 };
        SendPeakRMS {
            channels,
            data: vec![0.0; 3 * channels],
            cmd: cmd.into(),
            b1,
            audio_per_tick,
            control_per_tick,
            phase_remain: if audio { audio_per_tick } else { control_per_tick },
            audio,
            simd: cx.world.full_rate.buf_length.is_multiple_of(16),
        }
    }
}

impl Unit for SendPeakRMS {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if !self.audio {
            self.phase_remain -= 1;
            if self.phase_remain <= 0 {
                self.phase_remain += self.control_per_tick;
                self.send(io, cx);
            }
            self.analyze(io, 0, 0, true);
            return;
        }
        let n = io.n() as i32;
        if self.phase_remain >= n {
            self.phase_remain -= n;
            self.analyze(io, 0, 0, true);
            return;
        }
        if self.phase_remain == 0 {
            self.send(io, cx);
            self.phase_remain = self.audio_per_tick;
        }
        let mut start = 0;
        let mut count = self.phase_remain.min(n);
        let mut remain = n;
        loop {
            self.analyze(io, start as usize, count as usize, false);
            start += count;
            self.phase_remain -= count;
            if self.phase_remain == 0 {
                self.send(io, cx);
                self.phase_remain = self.audio_per_tick;
            }
            remain -= count;
            count = remain.min(self.phase_remain);
            if remain == 0 {
                break;
            }
        }
    }
}
