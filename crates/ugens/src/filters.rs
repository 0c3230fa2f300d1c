//! Filters: resonant and Butterworth second-order sections, one-pole and
//! one-zero filters, lags, slew limiters, decays, DC blocking and a median
//! filter, following scsynth's FilterUGens (3.13) sample for sample.
//!
//! Parameters read at control rate are compared with the values of the
//! previous block; when they change, coefficients glide linearly across the
//! block (for second-order sections: in steps of three samples, as the
//! C++ loops are unrolled by three).

pub(crate) mod sig;
mod lanes4;
mod lags;
mod onepole;
mod twopole;
mod misc;
mod beq;
mod dynamics;
mod moog;
mod fir;
mod silence;
mod linexp;
mod hilbert;

use crate::registry::Registry;

pub use lags::{Lag, Lag2, Lag3, LagUd, Ramp, Slew};
pub use beq::{BAllPass, BBandPass, BBandStop, BDesign, BHiPass, BHiShelf, BLowPass, BLowShelf, BPeakEq, BSection};
pub use dynamics::{Amplitude, Compander, Limiter, LookAhead, Normalizer};
pub use fir::{Bpz2, Brz2, Fir, FirDesign, Hpz1, Hpz2, Lpz1, Lpz2, Slope};
pub use linexp::LinExp;
pub use moog::MoogFf;
pub use misc::{Median, Sos};
pub(crate) use misc::MedianWindow;
pub use silence::{DetectSilence, DETECT_SILENCE_DONE_ACTION};
pub use onepole::{Decay, Decay2, Integrator, LeakDc, OnePole, OneZero};
pub use twopole::{Bpf, Brf, Formlet, Hpf, Lpf, Resonz, Rhpf, MidEq, Ringz, Rlpf, TwoPoleFilter, TwoZeroFilter};

pub fn register(r: &mut Registry) {
    r.add::<Lpf>("LPF");
    r.add::<hilbert::Hilbert>("Hilbert");
    r.add::<hilbert::FreqShift>("FreqShift");
    r.add_lanes("LPF", twopole::section_lanes::<twopole::LpfDesign>);
    r.add_lanes("HPF", twopole::section_lanes::<twopole::HpfDesign>);
    r.add_lanes("BPF", twopole::section_lanes::<twopole::BpfDesign>);
    r.add_lanes("BRF", twopole::section_lanes::<twopole::BrfDesign>);
    r.add_lanes("RLPF", twopole::section_lanes::<twopole::RlpfDesign>);
    r.add_lanes("RHPF", twopole::section_lanes::<twopole::RhpfDesign>);
    r.add_lanes("Resonz", twopole::section_lanes::<twopole::ResonzDesign>);
    r.add_lanes("Ringz", twopole::section_lanes::<twopole::RingzDesign>);
    r.add::<Hpf>("HPF");
    r.add::<Bpf>("BPF");
    r.add::<Brf>("BRF");
    r.add::<Rlpf>("RLPF");
    r.add::<Rhpf>("RHPF");
    r.add::<Resonz>("Resonz");
    r.add::<Ringz>("Ringz");
    r.add::<Formlet>("Formlet");
    r.add::<TwoPoleFilter>("TwoPole");
    r.add::<TwoZeroFilter>("TwoZero");
    r.add::<OnePole>("OnePole");
    r.add::<OneZero>("OneZero");
    r.add::<Integrator>("Integrator");
    r.add::<Decay>("Decay");
    r.add::<Decay2>("Decay2");
    r.add::<LeakDc>("LeakDC");
    r.add::<Lag>("Lag");
    r.add::<Lag2>("Lag2");
    r.add::<Lag3>("Lag3");
    r.add::<LagUd>("LagUD");
    r.add::<Ramp>("Ramp");
    r.add::<Slew>("Slew");
    r.add::<Sos>("SOS");
    r.add::<Median>("Median");
    r.add::<Lpz1>("LPZ1");
    r.add::<Hpz1>("HPZ1");
    r.add::<Lpz2>("LPZ2");
    r.add::<Hpz2>("HPZ2");
    r.add::<Bpz2>("BPZ2");
    r.add::<Brz2>("BRZ2");
    r.add::<Slope>("Slope");
    r.add::<MidEq>("MidEQ");
    r.add::<LinExp>("LinExp");
    r.add::<DetectSilence>("DetectSilence");
    r.add::<BLowPass>("BLowPass");
    r.add::<BHiPass>("BHiPass");
    r.add::<BBandPass>("BBandPass");
    r.add::<BBandStop>("BBandStop");
    r.add::<BPeakEq>("BPeakEQ");
    r.add::<BAllPass>("BAllPass");
    r.add::<BLowShelf>("BLowShelf");
    r.add::<BHiShelf>("BHiShelf");
    r.add::<MoogFf>("MoogFF");
    r.add::<Amplitude>("Amplitude");
    r.add::<Compander>("Compander");
    r.add::<Limiter>("Limiter");
    r.add::<Normalizer>("Normalizer");
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;
