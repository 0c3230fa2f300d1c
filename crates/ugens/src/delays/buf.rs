//! The delays that run their line in a buffer: BufDelayN/L/C (audio and
//! control rate), BufCombN/L/C and BufAllpassN/L/C. Inputs: bufnum, in,
//! delaytime[, decaytime].
//!
//! The line is the buffer's first samples (channels interleaved), as many
//! as the largest power of two that fits; the longest delay is one sample
//! less. The buffer is not cleared first: until the unit has written as
//! many samples as the buffer holds, history it has not written reads as
//! silence. The buffer is looked up every block, as scsynth does; without
//! one holding data the unit outputs silence and marks itself done.

use super::{DelayCore, Line, Signals, ALLPASS, COMB, CUBIC, DELAY, LINEAR, NEAREST};
use crate::common::signal::{in0, in_rate, In};
use crate::common::buffer::{resolve_buffer, resolve_buffer_index};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// A buffer-backed delay of kind `KIND` (plain, comb, allpass) reading
/// with interpolation `INTERP`.
pub struct BufDelayUnit<const KIND: u8, const INTERP: u8> {
    core: DelayCore<KIND>,
}

pub type BufDelayN = BufDelayUnit<DELAY, NEAREST>;
pub type BufDelayL = BufDelayUnit<DELAY, LINEAR>;
pub type BufDelayC = BufDelayUnit<DELAY, CUBIC>;
pub type BufCombN = BufDelayUnit<COMB, NEAREST>;
pub type BufCombL = BufDelayUnit<COMB, LINEAR>;
pub type BufCombC = BufDelayUnit<COMB, CUBIC>;
pub type BufAllpassN = BufDelayUnit<ALLPASS, NEAREST>;
pub type BufAllpassL = BufDelayUnit<ALLPASS, LINEAR>;
pub type BufAllpassC = BufDelayUnit<ALLPASS, CUBIC>;

/// Samples of a buffer of `samples` the line uses: the largest power of
/// two not above it (0 for an empty buffer).
fn line_len(samples: usize) -> i64 {
    match samples {
        0 => 0,
        s => 1i64 << (usize::BITS - 1 - s.leading_zeros()),
    }
}

/// The longest delay, in samples, a buffer of `samples` serves.
fn max_delay(samples: usize) -> f32 {
    line_len(samples) as f32 - 1.0
}

impl<const KIND: u8, const INTERP: u8> BufDelayUnit<KIND, INTERP> {
    /// Every cubic form, the plain delay included, keeps two samples of
    /// history behind the read point.
    const MIN_DELAY: f32 = if INTERP == CUBIC { 2.0 } else { 1.0 };
}

impl<const KIND: u8, const INTERP: u8> Construct for BufDelayUnit<KIND, INTERP> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let delaytime = in0(io, 2);
        let decaytime = if KIND == DELAY { 0.0 } else { in0(io, 3) };
        // With no buffer yet the delay starts at its shortest, as in scsynth.
        let samples = resolve_buffer(cx.world, in0(io, 0)).map_or(0, |b| b.data.len());
        let audio_delay = in_rate(io, 2) == Rate::Audio;
        let core =
            DelayCore::new(delaytime, decaytime, audio_delay, Self::MIN_DELAY, max_delay(samples), cx.rate.sample_rate);
        io.out(0)[0] = 0.0;
        BufDelayUnit { core }
    }
}

impl<const KIND: u8, const INTERP: u8> Unit for BufDelayUnit<KIND, INTERP> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let rate = cx.rate;
        let found = resolve_buffer_index(cx.world, in0(io, 0))
            .and_then(|i| cx.world.buf_mut(i))
            .filter(|b| b.is_allocated());
        let Some(buf) = found else {
            cx.set_done(true);
            io.clear_outputs();
            return;
        };
        let samples = buf.data.len();
        let len = line_len(samples);
        let line = Line { data: &mut buf.data, mask: len - 1, len, max_delay: max_delay(samples), fill: samples as i64 };
        let sig = Signals { inp: In::new(io, 1), delay: In::new(io, 2), decaytime: in0(io, 3) };
        let out = io.out(0);
        if KIND == DELAY && INTERP == CUBIC && self.core.audio_delay() && !self.core.filling() {
            // Once its buffer is full, scsynth runs BufDelayC with an
            // audio-rate delay time through BufDelayL's loop.
            self.core.set_min_delay(1.0);
            self.core.run::<LINEAR>(line, sig, out, rate);
        } else {
            self.core.run::<INTERP>(line, sig, out, rate);
        }
    }
}


#[cfg(test)]
mod tests;
