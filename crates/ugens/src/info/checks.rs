//! Bad-value checks: CheckBadValues and Sanitize.

use crate::common::signal::{in_rate, In};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// NaN, infinities and denormals: the values these units catch.
#[inline(always)]
fn is_bad(x: f32) -> bool {
    !x.is_finite() || x.is_subnormal()
}

/// The code CheckBadValues outputs for a sample: 0 fine, 1 NaN,
/// 2 infinite, 3 denormal.
#[inline(always)]
fn bad_code(x: f32) -> f32 {
    if x.is_nan() {
        1.0
    } else if x.is_infinite() {
        2.0
    } else if x.is_subnormal() {
        3.0
    } else {
        0.0
    }
}

/// CheckBadValues (`in, id, post`): outputs a code for each sample saying
/// whether it is a bad number. scsynth also prints a line on the console
/// for bad values (depending on `post`); here the codes alone report them.
pub struct CheckBadValues;

impl CheckBadValues {
    fn run(io: &mut Wires<'_>) {
        let input = In::new(io, 0);
        for (j, o) in io.out(0).iter_mut().enumerate() {
            *o = bad_code(input.at(j));
        }
    }
}

impl Construct for CheckBadValues {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        Self::run(io);
        CheckBadValues
    }
}

impl Unit for CheckBadValues {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        Self::run(io);
    }
}

/// Sanitize (`in, replace`): passes the input, with bad numbers replaced.
pub struct Sanitize {
    /// The input is not audio rate: one value per block.
    per_block: bool,
}

impl Sanitize {
    fn run(io: &mut Wires<'_>, per_block: bool) {
        let input = In::new(io, 0);
        let replace = In::new(io, 1);
        let out = io.out(0);
        if per_block {
            let v = input.first();
            out.fill(if is_bad(v) { replace.first() } else { v });
        } else {
            for (j, o) in out.iter_mut().enumerate() {
                let v = input.at(j);
                *o = if is_bad(v) { replace.at(j) } else { v };
            }
        }
    }
}

impl Construct for Sanitize {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        Self::run(io, true);
        Sanitize { per_block: in_rate(io, 0) != Rate::Audio }
    }
}

impl Unit for Sanitize {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        Self::run(io, self.per_block);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    #[test]
    fn sanitize_replaces_nan_and_infinity_only() {
        let sig = vec![0.5, f32::NAN, f32::INFINITY, -1.0, f32::MIN_POSITIVE / 4.0, 0.0];
        let out = UnitHarness::new("Sanitize", Rate::Audio)
            .inputs([TestInput::Audio(sig.clone()), TestInput::Const(9.0)])
            .run(1);
        assert_eq!(&out[0][..6], &[0.5, 9.0, 9.0, -1.0, 9.0, 0.0]);
        let codes = UnitHarness::new("CheckBadValues", Rate::Audio)
            .inputs([TestInput::Audio(sig), TestInput::Const(0.0), TestInput::Const(0.0)])
            .run(1);
        assert_eq!(&codes[0][..6], &[0.0, 1.0, 2.0, 0.0, 3.0, 0.0]);
    }
}
