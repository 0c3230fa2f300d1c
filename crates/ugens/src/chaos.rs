//! Chaotic maps (the Chaos plugin's N/L/C families and LorenzL), Xenakis'
//! dynamic stochastic synthesis (Gendy1-3), cartoon physical models (Spring,
//! Ball, TBall) and a few shapers (LFGauss, Vibrato, AmpComp, AmpCompA).

mod clock;
pub mod gendy;
pub mod maps;
pub mod physical;
pub mod shapes;

#[cfg(test)]
mod tests;

use crate::registry::Registry;

pub use gendy::{Gendy1, Gendy2, Gendy3};
pub use maps::{
    CuspL, CuspN, FBSineC, FBSineL, FBSineN, GbmanL, GbmanN, HenonC, HenonL, HenonN, LatoocarfianC, LatoocarfianL,
    LatoocarfianN, LinCongC, LinCongL, LinCongN, LorenzL, QuadC, QuadL, QuadN, StandardL, StandardN,
};
pub use physical::{Ball, Spring, TBall};
pub use shapes::{AmpComp, AmpCompA, LFGauss, Vibrato};

/// The units registered here that draw from the synth's random generator.
pub const RANDOM_UNITS: &[&str] = &["Gendy1", "Gendy2", "Gendy3", "Vibrato", "Ball", "TBall"];

pub fn register(r: &mut Registry) {
    r.add::<CuspN>("CuspN");
    r.add::<CuspL>("CuspL");
    r.add::<FBSineN>("FBSineN");
    r.add::<FBSineL>("FBSineL");
    r.add::<FBSineC>("FBSineC");
    r.add::<GbmanN>("GbmanN");
    r.add::<GbmanL>("GbmanL");
    r.add::<HenonN>("HenonN");
    r.add::<HenonL>("HenonL");
    r.add::<HenonC>("HenonC");
    r.add::<LatoocarfianN>("LatoocarfianN");
    r.add::<LatoocarfianL>("LatoocarfianL");
    r.add::<LatoocarfianC>("LatoocarfianC");
    r.add::<LinCongN>("LinCongN");
    r.add::<LinCongL>("LinCongL");
    r.add::<LinCongC>("LinCongC");
    r.add::<LorenzL>("LorenzL");
    r.add::<QuadN>("QuadN");
    r.add::<QuadL>("QuadL");
    r.add::<QuadC>("QuadC");
    r.add::<StandardN>("StandardN");
    r.add::<StandardL>("StandardL");
    r.add::<Gendy1>("Gendy1");
    r.add::<Gendy2>("Gendy2");
    r.add::<Gendy3>("Gendy3");
    r.add::<Spring>("Spring");
    r.add::<Ball>("Ball");
    r.add::<TBall>("TBall");
    r.add::<LFGauss>("LFGauss");
    r.add::<Vibrato>("Vibrato");
    r.add::<AmpComp>("AmpComp");
    r.add::<AmpCompA>("AmpCompA");
}
