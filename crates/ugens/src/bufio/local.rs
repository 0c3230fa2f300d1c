//! Buffers of a synth's own (`LocalBuf`, declared by `MaxLocalBufs`) and the
//! units that fill them when the synth is built (`SetBuf`, `ClearBuf`).
//! They live as long as the synth, and units reach them by the numbers
//! after the world's buffers.

use crate::common::buffer::resolve_buffer_index;
use crate::unit::{unit_samples, Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::SndBuf;

/// `MaxLocalBufs(count)`: how many `LocalBuf`s the synth may make (the
/// language adds it to every def that has one). The first one counts.
pub struct MaxLocalBufs;

impl Construct for MaxLocalBufs {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        if cx.synth.max_local_bufs == 0 && io.num_inputs() > 0 {
            let count = (io.in0(0) + 0.5).max(0.0) as usize;
            cx.synth.max_local_bufs = count;
            // Room for as many as a def can plausibly make; a larger count
            // (a def may say anything) grows the list as LocalBufs come.
            cx.synth.local_bufs.reserve_exact(count.min(MAX_RESERVED_LOCAL_BUFS));
        }
        MaxLocalBufs
    }
}

impl Unit for MaxLocalBufs {
    fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
}

/// Local buffers `MaxLocalBufs` makes room for at most, ahead of time.
const MAX_RESERVED_LOCAL_BUFS: usize = 1024;

/// `LocalBuf(channels, frames)`: a zeroed buffer of the synth's own; its
/// output is the buffer's number, or -1 once the synth has as many as
/// `MaxLocalBufs` allows. A buffer larger than a unit may take
/// (`MAX_UNIT_SAMPLES`) fails the synth as it is built.
pub struct LocalBuf;

impl Construct for LocalBuf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let index = cx.synth.local_bufs.len();
        let number = if index < cx.synth.max_local_bufs && io.num_inputs() >= 2 {
            let channels = io.in0(0).max(0.0) as u32;
            let frames = io.in0(1).max(0.0) as u32;
            let samples = frames as usize * channels as usize;
            let buf = SndBuf { data: unit_samples(samples), channels, frames, sample_rate: cx.world.sample_rate, ..SndBuf::default() };
            cx.synth.local_bufs.push(buf);
            (cx.world.num_bufs() + index) as f32
        } else {
            -1.0
        };
        if io.num_outputs() > 0 {
            io.out(0)[0] = number;
        }
        LocalBuf
    }
}

impl Unit for LocalBuf {
    fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
}

/// The buffer a constructor's first input names, with data to fill.
fn ctor_buffer<'w>(io: &Wires<'_>, cx: &'w mut UnitCtx<'_>) -> Option<&'w mut SndBuf> {
    let index = resolve_buffer_index(cx.world, io.in0(0))?;
    cx.world.buf_mut(index).filter(|b| b.is_allocated())
}

/// `SetBuf(buf, offset, count, values...)`: writes the values from sample `offset` on.
pub struct SetBuf;

impl Construct for SetBuf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        if io.num_outputs() > 0 {
            io.out(0)[0] = 0.0;
        }
        if io.num_inputs() >= 3 {
            let offset = io.in0(1) as i32;
            let count = (io.in0(2) as i32).min(io.num_inputs() as i32 - 3);
            if let Some(buf) = ctor_buffer(io, cx) {
                let end = (buf.data.len() as i64).min(count as i64 + offset as i64);
                for (j, i) in (offset.max(0) as i64..end).enumerate() {
                    let skipped = (offset.max(0) - offset) as usize;
                    buf.data[i as usize] = io.in0(3 + skipped + j);
                }
            }
        }
        SetBuf
    }
}

impl Unit for SetBuf {
    fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
}

/// `ClearBuf(buf)`: sets every sample to 0.
pub struct ClearBuf;

impl Construct for ClearBuf {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        if io.num_outputs() > 0 {
            io.out(0)[0] = 0.0;
        }
        if io.num_inputs() > 0 {
            if let Some(buf) = ctor_buffer(io, cx) {
                buf.data.fill(0.0);
            }
        }
        ClearBuf
    }
}

impl Unit for ClearBuf {
    fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
}
