//! Machine listening: pitch following, spectral statistics of FFT chains,
//! onset detection, loudness, MFCCs, key and beat tracking, following scsynth's
//! ML_UGens and Pitch.

mod beat_tables;
pub(crate) mod beattrack;
pub(crate) mod beattrack2;
mod eql_tables;
pub(crate) mod feature;
mod key_tables;
pub(crate) mod keytrack;
pub(crate) mod loudness;
mod mfcc_tables;
pub(crate) mod onsets;
pub(crate) mod pitch;
pub(crate) mod spectral;


