//! Machine listening: pitch following, spectral statistics of FFT chains,
//! onset detection, loudness, MFCCs, key and beat tracking, following scsynth's
//! ML_UGens and Pitch.

mod beat_tables;
mod beattrack;
mod beattrack2;
mod eql_tables;
mod feature;
mod key_tables;
mod keytrack;
mod loudness;
mod mfcc_tables;
mod onsets;
mod pitch;
mod spectral;

use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.add::<pitch::Pitch>("Pitch");
    r.add::<spectral::SpecCentroid>("SpecCentroid");
    r.add::<spectral::SpecFlatness>("SpecFlatness");
    r.add::<spectral::SpecPcile>("SpecPcile");
    r.add::<onsets::Onsets>("Onsets");
    r.add::<loudness::Loudness>("Loudness");
    r.add::<loudness::Mfcc>("MFCC");
    r.add::<keytrack::KeyTrack>("KeyTrack");
    r.add::<beattrack::BeatTrack>("BeatTrack");
    r.add::<beattrack2::BeatTrack2>("BeatTrack2");
    r.add::<feature::PvHainsworthFoote>("PV_HainsworthFoote");
    r.add::<feature::PvJensenAndersen>("PV_JensenAndersen");
}
