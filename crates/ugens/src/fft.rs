//! The FFT family: FFT and IFFT, which move a signal into a spectrum buffer
//! and back, and the phase-vocoder (`PV_`) units that transform the spectrum
//! in between, following scsynth's FFT_UGens.
//!
//! A chain is a control-rate signal: the spectrum buffer's number on the
//! blocks where a new frame is ready, -1 on all others. Every unit of a
//! chain works in place on that one buffer, so a chain runs in the synth's
//! unit order within the block FFT fires in.

pub(crate) mod coord;
mod frames;
mod pair;
pub(crate) mod pv;
mod random;
mod single;
pub(crate) mod transform;

use crate::registry::Registry;
use pv::{Pv, Pv2};

pub use random::RANDOM_UNITS;

pub fn register(r: &mut Registry) {
    r.add::<frames::Fft>("FFT");
    r.add::<frames::Ifft>("IFFT");
    r.add::<frames::FftTrigger>("FFTTrigger");

    r.add::<Pv<single::MagAbove>>("PV_MagAbove");
    r.add::<Pv<single::MagBelow>>("PV_MagBelow");
    r.add::<Pv<single::MagClip>>("PV_MagClip");
    r.add::<Pv<single::LocalMax>>("PV_LocalMax");
    r.add::<Pv<single::MagSquared>>("PV_MagSquared");
    r.add::<Pv<single::PhaseShift>>("PV_PhaseShift");
    r.add::<Pv<single::PhaseShift90>>("PV_PhaseShift90");
    r.add::<Pv<single::PhaseShift270>>("PV_PhaseShift270");
    r.add::<Pv<single::Conj>>("PV_Conj");
    r.add::<Pv<single::BrickWall>>("PV_BrickWall");
    r.add::<Pv<single::RectComb>>("PV_RectComb");
    r.add::<Pv<single::MagSmear>>("PV_MagSmear");
    r.add::<Pv<single::BinShift>>("PV_BinShift");
    r.add::<Pv<single::MagShift>>("PV_MagShift");
    r.add::<Pv<single::MagFreeze>>("PV_MagFreeze");
    r.add::<Pv2<single::RectComb2>>("PV_RectComb2");

    r.add::<Pv2<pair::MagMul>>("PV_MagMul");
    r.add::<Pv2<pair::MagDiv>>("PV_MagDiv");
    r.add::<Pv2<pair::CopyPhase>>("PV_CopyPhase");
    r.add::<Pv2<pair::Max>>("PV_Max");
    r.add::<Pv2<pair::Min>>("PV_Min");
    r.add::<Pv2<pair::Mul>>("PV_Mul");
    r.add::<Pv2<pair::Div>>("PV_Div");
    r.add::<Pv2<pair::Add>>("PV_Add");
    r.add::<Pv2<pair::BinWipe>>("PV_BinWipe");
    r.add::<pv::PvCopy>("PV_Copy");

    r.add::<Pv<random::MagNoise>>("PV_MagNoise");
    r.add::<Pv<random::RandComb>>("PV_RandComb");
    r.add::<Pv2<random::RandWipe>>("PV_RandWipe");
    r.add::<Pv<random::Diffuser>>("PV_Diffuser");
    r.add::<Pv<random::BinScramble>>("PV_BinScramble");
}

#[cfg(test)]
mod tests;
