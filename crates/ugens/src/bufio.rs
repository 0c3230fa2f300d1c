//! Buffer playback and recording: PlayBuf, BufRd, BufWr, RecordBuf.
//!
//! Buffers are addressed as scsynth does it: a negative or out-of-range
//! number falls back to buffer 0, and a buffer with no data silences the
//! unit's outputs.

pub(crate) mod local;
mod play;
mod rdwr;

pub use play::PlayBuf;
pub use rdwr::{BufRd, BufWr, RecordBuf};

#[cfg(test)]
mod tests;
