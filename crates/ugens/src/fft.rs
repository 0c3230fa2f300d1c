//! The FFT family: FFT and IFFT, which move a signal into a spectrum buffer
//! and back, and the phase-vocoder (`PV_`) units that transform the spectrum
//! in between, following scsynth's FFT_UGens; and the units that build or
//! read single bins (PackFFT, Unpack1FFT) or map a whole spectrum
//! (PV_ConformalMap).
//!
//! A chain is a control-rate signal: the spectrum buffer's number on the
//! blocks where a new frame is ready, -1 on all others. Every unit of a
//! chain works in place on that one buffer, so a chain runs in the synth's
//! unit order within the block FFT fires in.

pub(crate) mod frames;
pub(crate) mod pack;
pub(crate) mod pair;
pub(crate) mod pv;
pub(crate) mod random;
pub(crate) mod single;

pub(crate) use pv::{Pv, Pv2};



#[cfg(test)]
mod tests;
