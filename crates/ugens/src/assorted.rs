//! Assorted units: tapped delay lines in buffers (DelTapWr, DelTapRd), Flip,
//! MantissaMask, IEnvGen, SendPeakRMS, PSinGrain, GrainTap and Dpoll.

use crate::registry::Registry;

mod deltap;
mod dpoll;
mod grains;
mod ienv_gen;
mod peak_rms;
mod simple;

#[cfg(test)]
mod tests;

pub fn register(r: &mut Registry) {
    r.add::<deltap::DelTapWr>("DelTapWr").inputs(2).outputs(1);
    r.add_ctor("DelTapRd", deltap::new_deltaprd).inputs(4).outputs(1);
    r.add::<simple::Flip>("Flip").inputs(1).outputs(1);
    r.add::<simple::MantissaMask>("MantissaMask").inputs(2).outputs(1);
    r.add::<ienv_gen::IEnvGen>("IEnvGen").inputs(5).outputs(1);
    r.add::<peak_rms::SendPeakRMS>("SendPeakRMS").inputs(4);
    r.add::<grains::PSinGrain>("PSinGrain").inputs(3).outputs(1);
    r.add::<grains::GrainTap>("GrainTap").random().inputs(6).outputs(1);
    r.add::<dpoll::Dpoll>("Dpoll").inputs(1);
}
