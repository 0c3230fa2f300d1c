//! Scope writers: `ScopeOut2` fills the shared memory scope buffers that
//! sclang's scope views read (`s.scope`, `Stethoscope`, `FreqScope`), and
//! `ScopeOut`, its buffer-based predecessor.

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use std::ptr::NonNull;

/// `ScopeOut2.ar(inputArray, scopeNum, maxFrames, scopeFrames)`; inputs are
/// scope number, capacity in frames, period in frames, then the channels.
/// Every `period` frames it publishes what it wrote to the scope buffer's
/// reader and goes on in the next region. Without scope buffers (NRT) or when
/// the buffer is unavailable it writes nothing.
pub struct ScopeOut2 {
    index: u32,
    max_frames: u32,
    /// Where the current region starts (channel planes `max_frames` apart).
    region: Option<NonNull<f32>>,
    phase: u32,
}

// SAFETY: `region` points into the scope buffer this unit acquired and alone
// writes; the unit (and so the pointer) is used by one thread at a time.
unsafe impl Send for ScopeOut2 {}

const INPUT_OFFSET: usize = 3;

impl Construct for ScopeOut2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let channels = io.num_inputs().saturating_sub(INPUT_OFFSET) as u32;
        let index = io.in0(0) as u32;
        let max_frames = io.in0(1) as u32;
        let region = cx.world.scope_buffers.as_mut().and_then(|b| b.acquire(index, channels, max_frames));
        ScopeOut2 { index, max_frames, region, phase: 0 }
    }
}

impl Unit for ScopeOut2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let Some(mut region) = self.region else { return };
        let n = io.n() as u32;
        let period = n.max(self.max_frames.min(io.in0(2) as u32));
        // scsynth writes past the buffer when a block is longer than it; here
        // such a scope stays empty.
        if period > self.max_frames {
            return;
        }
        let mut framepos = self.phase;
        if framepos >= period {
            framepos = 0;
        }
        let remain = (period - framepos).min(n);
        let wrap = n - remain;
        let channels = io.num_inputs() - INPUT_OFFSET;
        let plane = self.max_frames as usize;
        let copy = |region: NonNull<f32>, io: &Wires<'_>, from: usize, to: usize, len: usize| {
            for ch in 0..channels {
                let input = io.inp(INPUT_OFFSET + ch);
                let len = len.min(input.len().saturating_sub(from));
                // SAFETY: the region holds `channels` planes of `max_frames`
                // floats; `to + len <= period <= max_frames`.
                let dst = unsafe { std::slice::from_raw_parts_mut(region.as_ptr().add(ch * plane + to), len) };
                dst.copy_from_slice(&input[from..from + len]);
            }
        };
        copy(region, io, 0, framepos as usize, remain as usize);
        if framepos + n >= period {
            match cx.world.scope_buffers.as_mut().and_then(|b| b.push(self.index, period)) {
                Some(next) => region = next,
                None => {
                    self.region = None;
                    return;
                }
            }
            self.region = Some(region);
        }
        if wrap > 0 {
            copy(region, io, remain as usize, 0, wrap as usize);
        }
        framepos += n;
        if framepos >= period {
            framepos = wrap;
        }
        self.phase = framepos;
    }

    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        if self.region.take().is_some() {
            if let Some(b) = cx.world.scope_buffers.as_mut() {
                b.release(self.index);
            }
        }
    }
}

/// `ScopeOut.ar(inputArray, bufnum)`: in scsynth it writes into a buffer
/// only while the buffer's count of completed buffer commands equals its
/// count of reads, and nothing counts reads, so a buffer that a command ever
/// touched (every buffer holding memory) is never written. It computes
/// nothing and has no outputs; here it loads and does the same.
pub struct ScopeOut;

impl Construct for ScopeOut {
    fn new(_spec: &UnitSpec<'_>, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        ScopeOut
    }
}

impl Unit for ScopeOut {
    fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
}

