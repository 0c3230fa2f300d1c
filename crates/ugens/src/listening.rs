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
    r.add::<spectral::SpecCentroid>("SpecCentroid").inputs(1).outputs(1);
    r.add::<spectral::SpecFlatness>("SpecFlatness").inputs(1).outputs(1);
    r.add::<spectral::SpecPcile>("SpecPcile").inputs(2).outputs(1);
    r.add::<onsets::Onsets>("Onsets").inputs(9).outputs(1);
    r.add::<loudness::Loudness>("Loudness").inputs(3).outputs(1);
    r.add::<loudness::Mfcc>("MFCC").inputs(2);
    r.add::<keytrack::KeyTrack>("KeyTrack").inputs(3).outputs(1);
    r.add::<beattrack::BeatTrack>("BeatTrack").inputs(2).outputs(4);
    r.add::<beattrack2::BeatTrack2>("BeatTrack2").inputs(6).outputs(6);
    r.add::<feature::PvHainsworthFoote>("PV_HainsworthFoote").inputs(5).outputs(1);
    r.add::<feature::PvJensenAndersen>("PV_JensenAndersen").inputs(7).outputs(1);
}
