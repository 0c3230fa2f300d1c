//! Unit generators. Each family lives in its own module and registers its
//! UGens by name in [`registry`]; adding a UGen is one struct and one line.
//!
//! A unit sees the world through [`UnitCtx`]: its input and output wires,
//! the rate it runs at, the shared buses and buffers ([`World`]) and the
//! synth it belongs to ([`SynthCtx`]).

pub mod rgen;
pub mod unit;
pub mod world;
pub mod registry;
pub mod testing;

pub mod osc;
pub mod noise;
pub mod filters;
pub mod delays;
pub mod envelopes;
pub mod triggers;
pub mod ops;
pub mod io;
pub mod pan;
pub mod bufio;
pub mod info;
pub mod reply;
pub mod gc_units;
pub mod vector;
pub mod demand;
pub mod tables;
pub mod utility;
pub mod chaos;
pub mod fft;
pub mod grains;
pub mod listening;
pub mod convolution;
pub mod assorted;
pub mod scope;
pub mod ui;
pub mod disk;
pub mod fault_test;

pub use registry::{LaneKernel, Lanes, Registry, UnitCtor, MAX_LANES};
pub use rgen::RGen;
pub use unit::{Construct, DemandRunner, Rate, RateInfo, Unit, UnitCtx, UnitSpec, WireRef, Wires};
pub use world::{BusTouch, ControlMap, PollLine, SndBuf, SynthCtx, World};
