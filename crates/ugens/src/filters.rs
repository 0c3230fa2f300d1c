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
    r.add::<Lpf>("LPF").pure().outputs(1);
    r.add::<hilbert::Hilbert>("Hilbert").pure().inputs(1).outputs(2);
    r.add::<hilbert::FreqShift>("FreqShift").pure().inputs(3).outputs(1);
    r.add_lanes("LPF", twopole::section_lanes::<twopole::LpfDesign>);
    r.add_lanes("HPF", twopole::section_lanes::<twopole::HpfDesign>);
    r.add_lanes("BPF", twopole::section_lanes::<twopole::BpfDesign>);
    r.add_lanes("BRF", twopole::section_lanes::<twopole::BrfDesign>);
    r.add_lanes("RLPF", twopole::section_lanes::<twopole::RlpfDesign>);
    r.add_lanes("RHPF", twopole::section_lanes::<twopole::RhpfDesign>);
    r.add_lanes("Resonz", twopole::section_lanes::<twopole::ResonzDesign>);
    r.add_lanes("Ringz", twopole::section_lanes::<twopole::RingzDesign>);
    r.add::<Hpf>("HPF").pure().outputs(1);
    r.add::<Bpf>("BPF").pure().outputs(1);
    r.add::<Brf>("BRF").pure().outputs(1);
    r.add::<Rlpf>("RLPF").pure().outputs(1);
    r.add::<Rhpf>("RHPF").pure().outputs(1);
    r.add::<Resonz>("Resonz").pure().outputs(1);
    r.add::<Ringz>("Ringz").pure().outputs(1);
    r.add::<Formlet>("Formlet").pure().outputs(1);
    r.add::<TwoPoleFilter>("TwoPole").pure().outputs(1);
    r.add::<TwoZeroFilter>("TwoZero").pure().outputs(1);
    r.add::<OnePole>("OnePole").pure().outputs(1);
    r.add::<OneZero>("OneZero").pure().outputs(1);
    r.add::<Integrator>("Integrator").pure().outputs(1);
    r.add::<Decay>("Decay").pure().outputs(1);
    r.add::<Decay2>("Decay2").pure().outputs(1);
    r.add::<LeakDc>("LeakDC").pure().outputs(1);
    r.add::<Lag>("Lag").pure().outputs(1);
    r.add::<Lag2>("Lag2").pure().outputs(1);
    r.add::<Lag3>("Lag3").pure().outputs(1);
    r.add::<LagUd>("LagUD").pure().outputs(1);
    r.add::<Ramp>("Ramp").pure().outputs(1);
    r.add::<Slew>("Slew").pure().outputs(1);
    r.add::<Sos>("SOS").pure().outputs(1);
    r.add::<Median>("Median").pure().outputs(1);
    r.add::<Lpz1>("LPZ1").pure().outputs(1);
    r.add::<Hpz1>("HPZ1").pure().outputs(1);
    r.add::<Lpz2>("LPZ2").pure().outputs(1);
    r.add::<Hpz2>("HPZ2").pure().outputs(1);
    r.add::<Bpz2>("BPZ2").pure().outputs(1);
    r.add::<Brz2>("BRZ2").pure().outputs(1);
    r.add::<Slope>("Slope").pure().outputs(1);
    r.add::<MidEq>("MidEQ").pure().outputs(1);
    r.add::<LinExp>("LinExp").pure().outputs(1);
    r.add::<DetectSilence>("DetectSilence").done_action(3).outputs(1);
    r.add::<BLowPass>("BLowPass").pure().outputs(1);
    r.add::<BHiPass>("BHiPass").pure().outputs(1);
    r.add::<BBandPass>("BBandPass").pure().outputs(1);
    r.add::<BBandStop>("BBandStop").pure().outputs(1);
    r.add::<BPeakEq>("BPeakEQ").pure().outputs(1);
    r.add::<BAllPass>("BAllPass").pure().outputs(1);
    r.add::<BLowShelf>("BLowShelf").pure().outputs(1);
    r.add::<BHiShelf>("BHiShelf").pure().outputs(1);
    r.add::<MoogFf>("MoogFF").pure().outputs(1);
    r.add::<Amplitude>("Amplitude").pure().outputs(1);
    r.add::<Compander>("Compander").pure().outputs(1);
    r.add::<Limiter>("Limiter").pure().outputs(1);
    r.add::<Normalizer>("Normalizer").pure().outputs(1);
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;
