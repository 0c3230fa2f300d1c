//! Utility units: multichannel and ambisonic panners, trigger rate
//! conversion, control-bus readers, bad-value checks and signal trackers.

mod bus_read;
mod convert;
mod panners;
mod trackers;

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

pub use bus_read::{InTrig, LagIn};
pub use convert::{CheckBadValues, Sanitize, T2A, T2K};
pub use panners::{BiPanB2, DecodeB2, PanAz, PanB, PanB2, Rotate2};
pub use trackers::{LastValue, LeastChange, ModDif, MostChange, PeakFollower, RunningSum, ZeroCrossing};

/// Stands in for a unit whose SynthDef gave it fewer outputs than it
/// writes: outputs silence rather than writing past its wires.
struct Silent;

impl Unit for Silent {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        io.clear_outputs();
    }
}

/// Builds `T`, which writes `N` outputs, if the SynthDef gave it that many.
pub(crate) fn with_outputs<T: Construct, const N: usize>(
    spec: &UnitSpec<'_>,
    io: &mut Wires<'_>,
    cx: &mut UnitCtx<'_>,
) -> Box<dyn Unit> {
    if io.num_outputs() < N {
        io.clear_outputs();
        Box::new(Silent)
    } else {
        Box::new(T::new(spec, io, cx))
    }
}


#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    #[test]
    fn a_panner_given_too_few_outputs_is_silent_instead_of_failing() {
        let out = UnitHarness::new("PanB", Rate::Audio)
            .outputs(3)
            .inputs([TestInput::Const(1.0), TestInput::Const(0.0), TestInput::Const(0.0), TestInput::Const(1.0)])
            .run(2);
        assert!(out.iter().all(|ch| ch.iter().all(|&x| x == 0.0)));
    }
}
