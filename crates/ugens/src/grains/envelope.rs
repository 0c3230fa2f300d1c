//! Grain envelopes: the built-in sine-squared bump, or a buffer stretched
//! over the grain's length.

use crate::common::buffer::sample;
use crate::world::{SndBuf, World};

/// What a grain's envelope number names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EnvChoice {
    /// A negative number: the built-in envelope.
    Builtin,
    /// A buffer with data.
    Buffer(usize),
}

/// The envelope an envelope number names, or `None` when no grain may
/// start with it (a number past the last buffer, or an empty buffer).
/// Only the world's buffers hold envelopes.
pub(super) fn choose(world: &World, win_type: f32) -> Option<EnvChoice> {
    if win_type >= world.num_bufs() as f32 || win_type.is_nan() {
        return None;
    }
    if win_type < 0.0 {
        return Some(EnvChoice::Builtin);
    }
    let index = win_type as usize;
    world.buf(index).filter(|b| b.is_allocated()).map(|_| EnvChoice::Buffer(index))
}

/// The envelope buffer a running grain reads, fetched anew each block;
/// `None` if it lost its data (the caller then stops for this block).
pub(super) fn window(world: &World, win_type: f32) -> Option<&SndBuf> {
    let index = crate::common::math::f2i(win_type);
    if index < 0 {
        return None;
    }
    world.buf(index as usize).filter(|b| b.is_allocated())
}

/// The envelope buffer a grain needs this block: `Err` if it has lost its
/// data (the unit then stops playing grains for the block).
#[inline]
pub(super) fn active_window<'w>(world: &'w World, env: &Envelope) -> Result<Option<&'w SndBuf>, ()> {
    if env.is_custom() {
        window(world, env.win_type).map(Some).ok_or(())
    } else {
        Ok(None)
    }
}

/// The envelope buffer a new grain starts with.
#[inline]
pub(super) fn start_window(world: &World, choice: EnvChoice) -> Option<&SndBuf> {
    match choice {
        EnvChoice::Builtin => None,
        EnvChoice::Buffer(i) => world.buf(i),
    }
}

/// Where a grain is in its envelope, and the amplitude for its next sample.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Envelope {
    /// The envelope number: negative for the built-in envelope.
    pub win_type: f32,
    b1: f64,
    y1: f64,
    y2: f64,
    win_pos: f64,
    win_inc: f64,
    /// Amplitude of the grain's next sample.
    pub amp: f32,
}

impl Envelope {
    /// Starts the envelope of a grain `counter` samples long.
    pub fn start(win_type: f32, counter: f64, window: Option<&SndBuf>) -> Envelope {
        let mut env = Envelope { win_type, ..Default::default() };
        env.restart(counter, window);
        env
    }

    /// Sets up the envelope for a new grain, keeping `win_type`.
    pub fn restart(&mut self, counter: f64, window: Option<&SndBuf>) {
        match window {
            Some(w) if self.win_type >= 0.0 => {
                self.amp = sample(&w.data, 0);
                self.win_pos = 0.0;
                self.win_inc = w.samples() as f64 / counter;
            }
            _ => {
                let w = std::f64::consts::PI / counter;
                self.b1 = 2.0 * w.cos();
                self.y1 = w.sin();
                self.y2 = 0.0;
                self.amp = (self.y1 * self.y1) as f32;
            }
        }
    }

    /// Whether the grain reads an envelope buffer.
    #[inline(always)]
    pub fn is_custom(&self) -> bool {
        self.win_type >= 0.0
    }

    /// Moves on one sample. `window` is the envelope buffer for custom
    /// envelopes (ignored by the built-in one).
    #[inline(always)]
    pub fn step(&mut self, window: Option<&SndBuf>) {
        match window {
            Some(w) if self.win_type >= 0.0 => {
                self.win_pos += self.win_inc;
                let i = self.win_pos as i32;
                let frac = (self.win_pos - i as f64) as f32;
                let mut i2 = i as isize + 1;
                // Past the last frame the next point wraps to the start.
                if self.win_pos > (w.frames as i32 - 1) as f64 {
                    i2 -= w.samples() as isize;
                }
                let a = sample(&w.data, i as isize);
                let b = sample(&w.data, i2);
                self.amp = a + frac * (b - a);
            }
            _ => {
                let y0 = self.b1 * self.y1 - self.y2;
                self.y2 = self.y1;
                self.y1 = y0;
                self.amp = (self.y1 * self.y1) as f32;
            }
        }
    }
}
