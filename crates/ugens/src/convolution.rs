//! Convolution: the FFT-based convolvers (Convolution, Convolution2,
//! Convolution2L, StereoConvolution2L, PartConv), the direct time-domain
//! one (Convolution3), and magnetar's zero-latency MagnetarConv /
//! MagnetarConvTD (paper 003).

pub(crate) mod direct;
pub(crate) mod fixed;
pub mod nupc;
pub mod nupc_tune;
pub(crate) mod nupc_unit;
pub(crate) mod partitioned;
mod spectral;
pub(crate) mod stereo;


pub use nupc::{may_hold_response, prepare_magnetar_conv, refresh_prepared, release_unused_spectra, PreparedResponse};
pub use partitioned::{prepare_part_conv, PreparePartConvError};


#[cfg(test)]
mod nupc_tests;
#[cfg(test)]
mod tests;
