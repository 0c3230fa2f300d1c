//! Helpers that several families share, one topic per module, so that no
//! family reaches into another: the families import from here and from the
//! unit contract (`unit`, `world`, `decl`), never from each other.
//!
//! - [`signal`]: reading inputs that may be missing or not audio rate,
//!   denormal flushing, clipping and decay constants as scsynth computes them.
//! - [`math`]: scsynth's inline scalar operators and C's conversions, bit for
//!   bit (the `ops` family's arithmetic, used by many others).
//! - [`wavetable`]: the shared sine, cosecant and wavetable tables and their
//!   interpolating lookups.
//! - [`buffer`]: which buffer a unit's number names, and frame reads with
//!   scsynth's interpolation and looping.
//! - [`spectrum`] and [`real_fft`]: spectrum buffers (complex or polar form,
//!   conversions) and the transform, shared by `fft`, `listening` and
//!   `convolution`.
//! - [`median`]: the running median window of Median and Pitch.

pub mod buffer;
pub mod math;
pub(crate) mod median;
pub(crate) mod real_fft;
pub(crate) mod signal;
pub(crate) mod spectrum;
pub mod wavetable;
