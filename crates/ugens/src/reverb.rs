//! Reverbs: FreeVerb and FreeVerb2 (Schroeder-Moorer combs and allpasses)
//! and GVerb (a feedback delay network), following scsynth's ReverbUGens
//! (3.13) sample for sample.

mod freeverb;
mod gverb;

pub use freeverb::{FreeVerb, FreeVerb2};
pub use gverb::GVerb;

#[cfg(test)]
mod tests;
