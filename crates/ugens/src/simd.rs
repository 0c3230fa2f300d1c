//! What scsynth's SIMD build computes, one lane at a time.
//!
//! On x86-64, scsynth takes vectorised calc functions (nova-simd) whenever the
//! block size is a multiple of 16, and their rounding differs from its scalar
//! loops: control values are interpolated in four lanes ([`ramp`]), line and
//! curve segments are filled four lanes at a time ([`fill`]), and several
//! operators use polynomial approximations instead of the C library
//! ([`math`]). The units that must match those outputs sample for sample use
//! these helpers.

pub(crate) mod fill;
pub(crate) mod math;
pub(crate) mod ramp;
