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


pub fn register(r: &mut Registry) {
    r.add::<frames::Fft>("FFT").inputs(6).outputs(1);
    r.add::<frames::Ifft>("IFFT").inputs(3).outputs(1);
    r.add::<frames::FftTrigger>("FFTTrigger").inputs(3).outputs(1);
    r.add::<Pv<single::MagAbove>>("PV_MagAbove").inputs(2).outputs(1);
    r.add::<Pv<single::MagBelow>>("PV_MagBelow").inputs(2).outputs(1);
    r.add::<Pv<single::MagClip>>("PV_MagClip").inputs(2).outputs(1);
    r.add::<Pv<single::LocalMax>>("PV_LocalMax").inputs(2).outputs(1);
    r.add::<Pv<single::MagSquared>>("PV_MagSquared").inputs(1).outputs(1);
    r.add::<Pv<single::PhaseShift>>("PV_PhaseShift").inputs(3).outputs(1);
    r.add::<Pv<single::PhaseShift90>>("PV_PhaseShift90").inputs(1).outputs(1);
    r.add::<Pv<single::PhaseShift270>>("PV_PhaseShift270").inputs(1).outputs(1);
    r.add::<Pv<single::Conj>>("PV_Conj").inputs(1).outputs(1);
    r.add::<Pv<single::BrickWall>>("PV_BrickWall").inputs(2).outputs(1);
    r.add::<Pv<single::RectComb>>("PV_RectComb").inputs(4).outputs(1);
    r.add::<Pv<single::MagSmear>>("PV_MagSmear").inputs(2).outputs(1);
    r.add::<Pv<single::BinShift>>("PV_BinShift").inputs(4).outputs(1);
    r.add::<Pv<single::MagShift>>("PV_MagShift").inputs(3).outputs(1);
    r.add::<Pv<single::MagFreeze>>("PV_MagFreeze").inputs(2).outputs(1);
    r.add::<Pv2<single::RectComb2>>("PV_RectComb2").inputs(5).outputs(1);
    r.add::<Pv2<pair::MagMul>>("PV_MagMul").inputs(2).outputs(1);
    r.add::<Pv2<pair::MagDiv>>("PV_MagDiv").inputs(3).outputs(1);
    r.add::<Pv2<pair::CopyPhase>>("PV_CopyPhase").inputs(2).outputs(1);
    r.add::<Pv2<pair::Max>>("PV_Max").inputs(2).outputs(1);
    r.add::<Pv2<pair::Min>>("PV_Min").inputs(2).outputs(1);
    r.add::<Pv2<pair::Mul>>("PV_Mul").inputs(2).outputs(1);
    r.add::<Pv2<pair::Div>>("PV_Div").inputs(2).outputs(1);
    r.add::<Pv2<pair::Add>>("PV_Add").inputs(2).outputs(1);
    r.add::<Pv2<pair::BinWipe>>("PV_BinWipe").inputs(3).outputs(1);
    r.add::<pv::PvCopy>("PV_Copy").inputs(2).outputs(1);
    r.add::<Pv<random::MagNoise>>("PV_MagNoise").random().inputs(1).outputs(1);
    r.add::<Pv<random::RandComb>>("PV_RandComb").random().inputs(3).outputs(1);
    r.add::<Pv2<random::RandWipe>>("PV_RandWipe").random().inputs(4).outputs(1);
    r.add::<Pv<random::Diffuser>>("PV_Diffuser").random().inputs(2).outputs(1);
    r.add::<Pv<random::BinScramble>>("PV_BinScramble").random().inputs(4).outputs(1);
}

#[cfg(test)]
mod tests;
