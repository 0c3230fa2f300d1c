//! Unit generators. Each family lives in its own module; every UGen is
//! registered by name, with what it declares ([`decl`]), in one list
//! (`catalog.rs`) that [`registry`] runs. Adding a UGen is one struct and
//! one line there.
//!
//! A unit sees the world through [`UnitCtx`]: its input and output wires,
//! the rate it runs at, the shared buses and buffers ([`World`]) and the
//! synth it belongs to ([`SynthCtx`]).

// The audio path does not panic: `expect` and `panic!` are errors outside
// tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic)]
// Unchecked indexing stays allowed: the sample loops index wires, tables and
// delay lines (over 1,500 sites) within bounds set when the unit is built, as
// scsynth's do.
#![allow(clippy::indexing_slicing)]

// Lints allowed in this crate, each for a reason:
// - The constants are scsynth's literals, digit for digit, so that each can
//   be checked against its source; the std constants (PI, FRAC_1_SQRT_2,
//   LOG2_E ...) differ from some of them in the last bit, and the compat
//   suite compares output with scsynth's bit for bit.
#![allow(clippy::excessive_precision, clippy::approx_constant)]
// - Comparisons are written so that NaN goes where scsynth's C++ sends it:
//   `!(x > y)`, `x < lo || x > hi` and `x.max(lo).min(hi)` are not the same
//   as `partial_cmp`, `contains` and `clamp` for NaN (and `clamp` panics on
//   a NaN bound).
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::manual_range_contains, clippy::manual_clamp)]
// - Sample loops index several wires and state arrays in lockstep by one
//   counter, in the shape of the sources they follow.
#![allow(clippy::needless_range_loop)]
// - Calc helpers take the state they update as separate arguments, so that
//   each rate variant borrows only what it touches.
#![allow(clippy::too_many_arguments)]
// - Arithmetic and branches read as in the SuperCollider sources they follow
//   (`y = y + k * sin(x)`, `-1 * x`, `n % 16 == 0`, a test inside a case),
//   so that the two can be compared line by line.
#![allow(
    clippy::assign_op_pattern,
    clippy::neg_multiply,
    clippy::manual_is_multiple_of,
    clippy::collapsible_if,
    clippy::collapsible_match
)]
// - A unit's state is built in one piece, in the pool; boxing its larger
//   variants would take the system heap instead.
#![allow(clippy::large_enum_variant)]

pub mod rgen;
pub mod unit;
pub mod decl;
pub mod world;
pub mod registry;
pub mod common;
mod batch;
mod simd;
mod catalog;
pub mod testing;

pub mod osc;
pub mod noise;
pub mod filters;
pub mod delays;
pub mod reverb;
pub mod envelopes;
pub mod triggers;
pub mod ops;
pub mod io;
pub mod pan;
pub mod bufio;
pub mod info;
pub mod convert;
pub mod reply;
pub mod gc_units;
pub mod vector;
pub mod demand;
pub mod tables;
pub mod chaos;
pub mod fft;
pub mod grains;
pub mod listening;
pub mod convolution;
pub mod scope;
pub mod ui;
pub mod disk;
pub mod fault_test;

pub use decl::{BufferUse, BusUse, Decl, Effects, Mismatch, Random, Rates};
pub use registry::{LaneKernel, Lanes, Registry, UnitCtor, MAX_LANES};
pub use rgen::RGen;
pub use unit::{Construct, DemandRunner, Rate, RateInfo, Unit, UnitCtx, UnitSpec, WireRef, Wires};
pub use world::{BusTouch, ControlMap, DirectBuses, PollLine, SndBuf, SynthCtx, World};
