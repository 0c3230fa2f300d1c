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

pub fn register(r: &mut Registry) {
    r.add::<CuspN>("CuspN").pure().outputs(1);
    r.add::<CuspL>("CuspL").pure().outputs(1);
    r.add::<FBSineN>("FBSineN").pure().outputs(1);
    r.add::<FBSineL>("FBSineL").pure().outputs(1);
    r.add::<FBSineC>("FBSineC").pure().outputs(1);
    r.add::<GbmanN>("GbmanN").pure().outputs(1);
    r.add::<GbmanL>("GbmanL").pure().outputs(1);
    r.add::<HenonN>("HenonN").pure().outputs(1);
    r.add::<HenonL>("HenonL").pure().outputs(1);
    r.add::<HenonC>("HenonC").pure().outputs(1);
    r.add::<LatoocarfianN>("LatoocarfianN").pure().outputs(1);
    r.add::<LatoocarfianL>("LatoocarfianL").pure().outputs(1);
    r.add::<LatoocarfianC>("LatoocarfianC").pure().outputs(1);
    r.add::<LinCongN>("LinCongN").pure().outputs(1);
    r.add::<LinCongL>("LinCongL").pure().outputs(1);
    r.add::<LinCongC>("LinCongC").pure().outputs(1);
    r.add::<LorenzL>("LorenzL").pure().outputs(1);
    r.add::<QuadN>("QuadN").pure().outputs(1);
    r.add::<QuadL>("QuadL").pure().outputs(1);
    r.add::<QuadC>("QuadC").pure().outputs(1);
    r.add::<StandardN>("StandardN").pure().outputs(1);
    r.add::<StandardL>("StandardL").pure().outputs(1);
    r.add::<Gendy1>("Gendy1").random().outputs(1);
    r.add::<Gendy2>("Gendy2").random().outputs(1);
    r.add::<Gendy3>("Gendy3").random().outputs(1);
    r.add::<Spring>("Spring").pure().outputs(1);
    r.add::<Ball>("Ball").random().outputs(1);
    r.add::<TBall>("TBall").random().outputs(1);
    r.add::<LFGauss>("LFGauss").outputs(1);
    r.add::<Vibrato>("Vibrato").random().outputs(1);
    r.add::<AmpComp>("AmpComp").pure().outputs(1);
    r.add::<AmpCompA>("AmpCompA").pure().outputs(1);
}
