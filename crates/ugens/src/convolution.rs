//! Convolution: the FFT-based convolvers (Convolution, Convolution2,
//! Convolution2L, StereoConvolution2L, PartConv), the direct time-domain
//! one (Convolution3), and the units that build or read single spectrum
//! bins (PackFFT, Unpack1FFT) or map a whole spectrum (PV_ConformalMap);
//! and magnetar's zero-latency MagnetarConv / MagnetarConvTD (paper 003).

mod direct;
mod fixed;
pub mod nupc;
pub mod nupc_tune;
mod nupc_unit;
mod pack;
mod partitioned;
mod spectral;
mod stereo;

use crate::registry::Registry;

pub use nupc::prepare_magnetar_conv;
pub use partitioned::{prepare_part_conv, PreparePartConvError};

pub fn register(r: &mut Registry) {
    r.add::<fixed::Convolution>("Convolution").inputs(3).outputs(1);
    r.add::<fixed::Convolution2>("Convolution2").inputs(4).outputs(1);
    r.add::<fixed::Convolution2L>("Convolution2L").inputs(5).outputs(1);
    r.add::<stereo::StereoConvolution2L>("StereoConvolution2L").inputs(6).outputs(2);
    r.add::<direct::Convolution3>("Convolution3").inputs(4).outputs(1);
    r.add::<partitioned::PartConv>("PartConv").inputs(2).outputs(1);
    // Extensions (paper 003): zero-latency non-uniformly partitioned convolution.
    r.add::<nupc_unit::MagnetarConv>("MagnetarConv").inputs(2).outputs(1);
    r.add::<nupc_unit::MagnetarConvTd>("MagnetarConvTD").inputs(2).outputs(1);
    r.add::<pack::PackFft>("PackFFT").inputs(6).outputs(1);
    r.add::<pack::Unpack1Fft>("Unpack1FFT").inputs(4).outputs(1);
    r.add::<crate::fft::pv::Pv<pack::ConformalMap>>("PV_ConformalMap").inputs(3).outputs(1);
}

#[cfg(test)]
mod nupc_tests;
#[cfg(test)]
mod tests;
