//! Chaotic maps (the Chaos plugin's N/L/C families and LorenzL), Xenakis'
//! dynamic stochastic synthesis (Gendy1-3) and cartoon physical models
//! (Spring, Ball, TBall).

mod clock;
pub mod gendy;
pub mod maps;
pub mod physical;

#[cfg(test)]
mod tests;


pub use gendy::{Gendy1, Gendy2, Gendy3};
pub use maps::{
    CuspL, CuspN, FBSineC, FBSineL, FBSineN, GbmanL, GbmanN, HenonC, HenonL, HenonN, LatoocarfianC, LatoocarfianL,
    LatoocarfianN, LinCongC, LinCongL, LinCongN, LorenzL, QuadC, QuadL, QuadN, StandardL, StandardN,
};
pub use physical::{Ball, Spring, TBall};

