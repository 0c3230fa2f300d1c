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

/// Units that draw from their synth's random generator.
pub const RANDOM_UNITS: &[&str] = &["GrainTap"];

pub fn register(r: &mut Registry) {
    r.add::<deltap::DelTapWr>("DelTapWr");
    r.add_ctor("DelTapRd", deltap::new_deltaprd);
    r.add::<simple::Flip>("Flip");
    r.add::<simple::MantissaMask>("MantissaMask");
    r.add::<ienv_gen::IEnvGen>("IEnvGen");
    r.add::<peak_rms::SendPeakRMS>("SendPeakRMS");
    r.add::<grains::PSinGrain>("PSinGrain");
    r.add::<grains::GrainTap>("GrainTap");
    r.add::<dpoll::Dpoll>("Dpoll");
}
