//! Assorted units: tapped delay lines in buffers (DelTapWr, DelTapRd), Flip,
//! MantissaMask, IEnvGen, SendPeakRMS, PSinGrain, GrainTap and Dpoll.


pub(crate) mod deltap;
pub(crate) mod dpoll;
pub(crate) mod grains;
pub(crate) mod ienv_gen;
pub(crate) mod peak_rms;
pub(crate) mod simple;

#[cfg(test)]
mod tests;

