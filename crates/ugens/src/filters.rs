//! Filters: resonant and Butterworth second-order sections, one-pole and
//! one-zero filters, sections with coefficients as inputs (FOS, SOS, APF),
//! lags (all of them, up/down and VarLag included), slew limiters, decays,
//! DC blocking, a median filter, the sample-wise nonlinear Flip and
//! MantissaMask, dynamics (Amplitude, Compander, Limiter,
//! Normalizer) and loudness compensation (AmpComp, AmpCompA), following
//! scsynth 3.13 sample for sample.
//!
//! Parameters read at control rate are compared with the values of the
//! previous block; when they change, coefficients glide linearly across the
//! block (for second-order sections: in steps of three samples, as the
//! C++ loops are unrolled by three).

mod lanes4;
mod lags;
mod onepole;
pub(crate) mod twopole;
mod sections;
mod median;
pub(crate) mod nonlinear;
mod beq;
mod dynamics;
mod amp_comp;
mod moog;
mod fir;
mod silence;
mod linexp;
pub(crate) mod hilbert;


pub use lags::{Lag, Lag2, Lag2Ud, Lag3, Lag3Ud, LagUd, Ramp, Slew, VarLag};
pub use beq::{BAllPass, BBandPass, BBandStop, BDesign, BHiPass, BHiShelf, BLowPass, BLowShelf, BPeakEq, BSection};
pub use amp_comp::{AmpComp, AmpCompA};
pub use dynamics::{Amplitude, Compander, Limiter, LookAhead, Normalizer};
pub use fir::{Bpz2, Brz2, Fir, FirDesign, Hpz1, Hpz2, Lpz1, Lpz2, Slope};
pub use linexp::LinExp;
pub use moog::MoogFf;
pub use sections::{Apf, Fos, Sos};
pub use median::Median;
pub use silence::{DetectSilence, DETECT_SILENCE_DONE_ACTION};
pub use onepole::{Decay, Decay2, Integrator, LeakDc, OnePole, OneZero};
pub use twopole::{Bpf, Brf, Formlet, Hpf, Lpf, Resonz, Rhpf, MidEq, Ringz, Rlpf, TwoPoleFilter, TwoZeroFilter};


#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;
#[cfg(test)]
mod tests_section_batch;
#[cfg(test)]
mod tests_section_lanes;
