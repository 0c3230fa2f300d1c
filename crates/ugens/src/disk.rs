//! Disk streaming: DiskIn, VDiskIn and DiskOut play and record a sound file
//! through a buffer that `/b_read` or `/b_write` left open.
//!
//! As in scsynth, the buffer is two halves: while a unit plays (or fills)
//! one, the other is read from (or written to) the file. A unit never touches
//! the file itself: when it has finished a half it queues a [`DiskRequest`]
//! in the world, and the server serves it (at once in non-real-time mode, on
//! its disk thread in real time).


use crate::common::math::cubicinterp;
use crate::common::buffer::{resolve_buffer_index, MAX_CHANNELS};
use crate::common::signal::in0;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::{SndBuf, Trigger};

/// Most disk requests queued between two services (scsynth's queue holds
/// 256); past that a request is dropped, as scsynth drops it.
pub const MAX_DISK_REQUESTS: usize = 256;

/// What a disk request asks the server to do with a buffer's open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskOp {
    /// Read the next frames; past the end of the file, zeros (and the
    /// buffer remembers where the file ended).
    Read,
    /// Read the next frames, going back to the start of the file at its end.
    ReadLoop,
    /// Append the frames to the file.
    Write,
}

/// One half (or, for DiskOut's last write, part of one) of a streaming
/// buffer to move between the buffer and its file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskRequest {
    pub op: DiskOp,
    pub bufnum: u32,
    /// The channel count the unit saw; a buffer that changed since is left alone.
    pub channels: u32,
    /// First frame of the buffer to fill or write.
    pub pos: u32,
    pub frames: u32,
    /// Buffer frames the unit moves through per sample (VDiskIn's rate; 1
    /// for the others): with `frames`, how soon the stream runs dry.
    pub rate: f32,
}

/// Whether a buffer can stream: allocated, with a frame count that is a
/// multiple of two blocks (so that halves end on block boundaries).
#[inline]
fn streamable(buf: &SndBuf, block_size: usize) -> bool {
    buf.is_allocated() && (buf.frames as usize & (2 * block_size - 1)) == 0
}

/// The `disk_pending` bit of the half that starts at frame `pos`.
#[inline]
pub fn half_bit(pos: u32) -> u8 {
    if pos == 0 {
        1
    } else {
        2
    }
}

/// The `disk_pending` bit of the half that holds frame `framepos`.
#[inline]
fn bit_at(framepos: u32, half: u32) -> u8 {
    if framepos < half {
        1
    } else {
        2
    }
}

/// Queues `req` unless the queue is full (never grows it on the audio
/// thread). In real time the half is pending until the disk delivers it.
#[inline]
fn queue(cx: &mut UnitCtx<'_>, req: DiskRequest) {
    let index = req.bufnum as usize;
    // Local buffers have no file; scsynth would reach past its buffer table.
    if index < cx.world.buffers.len() && cx.world.disk_requests.len() < cx.world.disk_requests.capacity() {
        cx.world.disk_requests.push(req);
        if cx.world.real_time {
            cx.world.buffers[index].disk_pending |= half_bit(req.pos);
        }
    }
}

/// Counts an underrun when a unit's stream first finds its half missing.
#[inline]
fn note_starved(cx: &mut UnitCtx<'_>, was: &mut bool, now: bool) {
    if now && !*was {
        cx.world.disk_underruns += 1;
    }
    *was = now;
}

/// The half a unit just finished is refilled: the end of file found by the
/// previous refill becomes the one that ends playback (scsynth's `mask1 = mask`).
#[inline]
fn arm_end(buf: &mut SndBuf) {
    if buf.disk_mask >= 0 {
        buf.disk_mask1 = buf.disk_mask;
    }
}

/// DiskIn (`bufnum, loop`): plays the buffer's frames in order, one output per channel.
pub struct DiskIn {
    framepos: u32,
    starved: bool,
}

impl Construct for DiskIn {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        DiskIn { framepos: 0, starved: false }
    }
}

impl Unit for DiskIn {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let Some(index) = resolve_buffer_index(cx.world, io.in0(0)) else {
            io.clear_outputs();
            return;
        };
        let block_size = cx.world.block_size;
        let Some(buf) = cx.world.buf(index) else {
            io.clear_outputs();
            return;
        };
        if !streamable(buf, block_size) {
            self.framepos = 0;
            io.clear_outputs();
            return;
        }
        let channels = buf.channels as usize;
        if io.num_outputs() != channels || channels > MAX_CHANNELS {
            io.clear_outputs();
            return;
        }
        let frames = buf.frames;
        if self.framepos >= frames {
            self.framepos = 0;
        }
        let half = frames >> 1;
        let starved = buf.disk_pending & bit_at(self.framepos, half) != 0;
        if starved {
            io.clear_outputs();
        } else {
            let start = self.framepos as usize * channels;
            let src = &buf.data[start..start + n * channels];
            for c in 0..channels {
                let out = io.out(c);
                for (j, o) in out.iter_mut().enumerate() {
                    *o = src[j * channels + c];
                }
            }
        }
        let end = buf.disk_mask1;
        note_starved(cx, &mut self.starved, starved);
        if end >= 0 && self.framepos >= end as u32 {
            cx.set_done(true);
        }
        self.framepos += n as u32;
        if self.framepos == frames {
            self.framepos = 0;
        } else if self.framepos != half {
            return;
        }
        let looping = io.in0(1) as i32 != 0;
        if let Some(buf) = cx.world.buf_mut(index) {
            arm_end(buf);
        }
        let op = if looping { DiskOp::ReadLoop } else { DiskOp::Read };
        let pos = half - self.framepos;
        queue(cx, DiskRequest { op, bufnum: index as u32, channels: channels as u32, pos, frames: half, rate: 1.0 });
    }
}

/// DiskOut (`bufnum, channels...`): records its inputs into the buffer and
/// outputs the number of frames recorded so far.
pub struct DiskOut {
    framepos: u32,
    written: u32,
    starved: bool,
    /// The buffer and its frame count, for the last partial half at the end.
    last: Option<(usize, u32, u32)>,
}

impl Construct for DiskOut {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        DiskOut { framepos: 0, written: 0, starved: false, last: None }
    }
}

impl Unit for DiskOut {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let n = io.n();
        let Some(index) = resolve_buffer_index(cx.world, io.in0(0)) else {
            return;
        };
        let block_size = cx.world.block_size;
        let Some(buf) = cx.world.buf_mut(index) else {
            return;
        };
        if !streamable(buf, block_size) {
            self.framepos = 0;
            return;
        }
        let channels = buf.channels as usize;
        if io.num_inputs() - 1 != channels {
            io.clear_outputs();
            return;
        }
        let frames = buf.frames;
        self.last = Some((index, frames, channels as u32));
        if self.framepos >= frames {
            self.framepos = 0;
        }
        let half = frames >> 1;
        // A half still being written to the file is not overwritten: this
        // block is lost from the recording instead.
        let starved = buf.disk_pending & bit_at(self.framepos, half) != 0;
        if !starved {
            let start = self.framepos as usize * channels;
            let dst = &mut buf.data[start..start + n * channels];
            for c in 0..channels {
                let input = io.inp(1 + c);
                let audio = io.in_rate(1 + c) == Rate::Audio;
                for j in 0..n {
                    dst[j * channels + c] = if audio { input[j] } else { input[0] };
                }
            }
        }
        note_starved(cx, &mut self.starved, starved);
        let mut written = self.written;
        for o in io.out(0).iter_mut() {
            *o = written as f32;
            written = written.wrapping_add(1);
        }
        self.written = written;
        self.framepos += n as u32;
        if self.framepos == frames {
            self.framepos = 0;
        } else if self.framepos != half {
            return;
        }
        let pos = half - self.framepos;
        let channels = channels as u32;
        queue(cx, DiskRequest { op: DiskOp::Write, bufnum: index as u32, channels, pos, frames: half, rate: 1.0 });
    }

    /// Writes the part of a half recorded since the last full one.
    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        let Some((index, frames, channels)) = self.last else {
            return;
        };
        let half = frames >> 1;
        let framepos = self.framepos;
        if framepos != 0 && framepos != half {
            let pos = if framepos > half { half } else { 0 };
            let frames = framepos - pos;
            let req = DiskRequest { op: DiskOp::Write, bufnum: index as u32, channels, pos, frames, rate: 1.0 };
            queue(cx, req);
        }
    }
}

/// How VDiskIn steps through the buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum VMode {
    /// Constant rate 1: whole frames, no interpolation.
    Rate1,
    /// The first block: its first sample is the buffer's first frame.
    First,
    Varying,
}

/// VDiskIn (`bufnum, rate, loop, sendID`): plays the buffer at a variable
/// rate with cubic interpolation; with a sendID, reports each refill to
/// clients as `/diskin node sendID frame`. Defs written before sendID
/// existed give it three inputs, and loop and sendID are read only when
/// given (0 otherwise: no loop, no reply).
pub struct VDiskIn {
    mode: VMode,
    pch_ratio: f32,
    r_buf_size: f32,
    frame_pos: f64,
    buf_pos: f64,
    count: u32,
    i_frame_pos: u32,
    i_buf_pos: u32,
    starved: bool,
}

impl Construct for VDiskIn {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let pch_ratio = io.in0(1).max(0.0);
        let mode = if io.in_rate(1) == Rate::Scalar && pch_ratio == 1.0 { VMode::Rate1 } else { VMode::First };
        io.clear_outputs();
        VDiskIn {
            mode,
            pch_ratio,
            r_buf_size: 0.0,
            frame_pos: 0.0,
            buf_pos: 0.0,
            count: 0,
            i_frame_pos: 0,
            i_buf_pos: 0,
            starved: false,
        }
    }
}

impl VDiskIn {
    /// Asks for the half the playhead left and tells clients where it is.
    fn request(&mut self, io: &Wires<'_>, cx: &mut UnitCtx<'_>, index: usize, half: u32, channels: u32, buf_pos: f64) {
        if let Some(buf) = cx.world.buf_mut(index) {
            arm_end(buf);
        }
        self.count = self.count.wrapping_add(1);
        let op = if in0(io, 2) as i32 != 0 { DiskOp::ReadLoop } else { DiskOp::Read };
        let pos = if buf_pos as u32 >= half { 0 } else { half };
        let rate = if self.mode == VMode::Rate1 { 1.0 } else { self.pch_ratio };
        queue(cx, DiskRequest { op, bufnum: index as u32, channels, pos, frames: half, rate });
        let send_id = in0(io, 3) as i32;
        // scsynth replies in real time only; nobody listens to a render.
        if send_id != 0 && cx.world.real_time {
            let value = (buf_pos + self.count.wrapping_mul(half) as f32 as f64) as f32;
            let node_id = cx.synth.node_id;
            cx.world.push_trigger(|| Trigger {
                node_id,
                id: send_id,
                cmd: Some("/diskin".to_string()),
                values: vec![value],
            });
        }
    }

    fn next_rate1(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, index: usize) {
        let n = io.n();
        let buf = match cx.world.buf(index) {
            Some(buf) if streamable(buf, cx.world.block_size) => buf,
            _ => {
                self.i_frame_pos = 0;
                self.count = 0;
                io.clear_outputs();
                return;
            }
        };
        let channels = buf.channels as usize;
        if io.num_outputs() != channels || channels > MAX_CHANNELS {
            io.clear_outputs();
            return;
        }
        let frames = buf.frames;
        let half = frames >> 1;
        let mut buf_pos = self.i_buf_pos;
        let mut test = false;
        let starved = buf.disk_pending & bit_at(buf_pos, half) != 0;
        for j in 0..n {
            let at = buf_pos as usize * channels;
            for c in 0..channels {
                let v = if starved { 0.0 } else { buf.data.get(at + c).copied().unwrap_or(0.0) };
                // SAFETY: c < num_outputs and j < n, the output's length.
                unsafe { *io.out_ptr(c).add(j) = v };
            }
            let old = buf_pos;
            buf_pos += 1;
            if old < half && buf_pos >= half {
                test = true;
            }
            if buf_pos >= frames {
                test = true;
                buf_pos -= frames;
            }
        }
        self.i_frame_pos = self.i_frame_pos.wrapping_add(n as u32);
        let end = buf.disk_mask1;
        note_starved(cx, &mut self.starved, starved);
        if end >= 0 && buf_pos >= end as u32 {
            cx.set_done(true);
        }
        if test {
            self.request(io, cx, index, half, channels as u32, buf_pos as f64);
        }
        self.i_buf_pos = buf_pos;
    }

    fn next_varying(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>, index: usize) {
        let n = io.n();
        let buf = match cx.world.buf(index) {
            Some(buf) if streamable(buf, cx.world.block_size) => buf,
            _ => {
                self.frame_pos = 0.0;
                self.count = 0;
                io.clear_outputs();
                return;
            }
        };
        let channels = buf.channels as usize;
        if io.num_outputs() != channels || channels > MAX_CHANNELS {
            io.clear_outputs();
            return;
        }
        let first = self.mode == VMode::First;
        let frames = buf.frames;
        if first {
            self.r_buf_size = (1.0 / frames as f64) as f32;
        }
        let new_ratio = io.in0(1).max(0.0);
        if new_ratio * n as f32 * self.r_buf_size >= 0.5 {
            io.clear_outputs();
            return;
        }
        let data = &buf.data[..];
        let samples = data.len() as i32;
        let mut pch_ratio = self.pch_ratio;
        let slope = (new_ratio - pch_ratio) * cx.rate.slope_factor as f32;
        let half = frames >> 1;
        let half_f = half as f64;
        let frames_f = frames as f64;
        let mut frame_pos = self.frame_pos;
        let mut buf_pos = self.buf_pos;
        let mut test = false;
        let starved = buf.disk_pending & bit_at(buf_pos as u32, half) != 0;
        if first {
            for c in 0..channels {
                let v = if starved { 0.0 } else { data[c] };
                // SAFETY: c < num_outputs; every output holds at least one sample.
                unsafe { *io.out_ptr(c) = v };
            }
        }
        let ch = channels as i32;
        for j in usize::from(first)..n {
            let ipos = buf_pos as i32;
            let frac = (buf_pos - ipos as f64) as f32;
            let mut t1 = ipos * ch;
            let mut t0 = t1 - ch;
            let mut t2 = t1 + ch;
            let mut t3 = t2 + ch;
            while t1 >= samples {
                t1 -= samples;
            }
            while t0 < 0 {
                t0 += samples;
            }
            while t2 >= samples {
                t2 -= samples;
            }
            while t3 >= samples {
                t3 -= samples;
            }
            for c in 0..channels {
                let at = |t: i32| data.get(t as usize + c).copied().unwrap_or(0.0);
                let v = if starved { 0.0 } else { cubicinterp(frac, at(t0), at(t1), at(t2), at(t3)) };
                // SAFETY: c < num_outputs and j < n, the output's length.
                unsafe { *io.out_ptr(c).add(j) = v };
            }
            pch_ratio += slope;
            frame_pos += pch_ratio as f64;
            let old = buf_pos;
            buf_pos += pch_ratio as f64;
            if old < half_f + 1.0 && buf_pos >= half_f + 1.0 {
                test = true;
            }
            if buf_pos >= frames_f + 1.0 {
                test = true;
                buf_pos -= frames_f;
            }
        }
        let end = buf.disk_mask1;
        note_starved(cx, &mut self.starved, starved);
        if end >= 0 && buf_pos >= end as f64 {
            cx.set_done(true);
        }
        if test {
            self.request(io, cx, index, half, channels as u32, buf_pos);
        }
        self.frame_pos = frame_pos;
        self.pch_ratio = pch_ratio;
        self.buf_pos = buf_pos;
        if first {
            self.mode = VMode::Varying;
        }
    }
}

impl Unit for VDiskIn {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(index) = resolve_buffer_index(cx.world, io.in0(0)) else {
            io.clear_outputs();
            return;
        };
        match self.mode {
            VMode::Rate1 => self.next_rate1(io, cx, index),
            VMode::First | VMode::Varying => self.next_varying(io, cx, index),
        }
    }
}


#[cfg(test)]
mod tests {
    use super::DiskOp;
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;
    use crate::world::SndBuf;

    /// VDiskIn given `inputs` of (bufnum 0, rate 1, loop 1, sendID 5) over a
    /// 256-frame ramp, four blocks in real time.
    fn vdisk_in(inputs: usize) -> crate::testing::HarnessRun {
        let all = [0.0, 1.0, 1.0, 5.0];
        let mut h = UnitHarness::new("VDiskIn", Rate::Audio).inputs(all[..inputs].iter().map(|&v| TestInput::Const(v)));
        let mut buf = SndBuf::new(256, 1, 48_000.0);
        for (i, x) in buf.data.iter_mut().enumerate() {
            *x = i as f32;
        }
        h.world.buffers[0] = buf;
        h.world.real_time = true;
        h.run_full(4)
    }

    #[test]
    fn vdisk_in_reads_loop_and_send_id_only_when_the_def_gives_them() {
        for inputs in [2, 3, 4] {
            let run = vdisk_in(inputs);
            let ramp: Vec<f32> = (0..256).map(|i| i as f32).collect();
            assert_eq!(run.outputs[0], ramp, "{inputs} inputs");
            let ops: Vec<DiskOp> = run.world.disk_requests.iter().map(|r| r.op).collect();
            let want = if inputs >= 3 { DiskOp::ReadLoop } else { DiskOp::Read };
            assert_eq!(ops, [want, want], "{inputs} inputs");
            // Only a def that gives a sendID hears about the refills.
            assert_eq!(run.world.triggers.len(), if inputs == 4 { 2 } else { 0 }, "{inputs} inputs");
        }
    }
}
