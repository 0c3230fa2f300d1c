//! Trigger rate conversion (T2A, T2K) and bad-value checks
//! (CheckBadValues, Sanitize).

use crate::filters::sig::{in0, in_rate, In};
use crate::ops::math::c_int;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

// ---- T2A / T2K -------------------------------------------------------------------

/// T2A (`in, offset`): a control-rate trigger as a single-sample audio
/// impulse, `offset` samples into the block (as scsynth 3.13 does it).
pub struct T2A {
    level: f32,
}

impl T2A {
    fn run(&mut self, io: &mut Wires<'_>) {
        let level = in0(io, 0);
        let offset = c_int(in0(io, 1));
        let out = io.out(0);
        out.fill(0.0);
        if self.level <= 0.0 && level > 0.0 {
            // scsynth 3.13 writes at any offset, also outside the block; here
            // an offset outside the block (or, during construction, past the
            // first sample) writes nothing.
            if let Some(o) = usize::try_from(offset).ok().and_then(|k| out.get_mut(k)) {
                *o = level;
            }
        }
        self.level = level;
    }
}

impl Construct for T2A {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        // The level seen at construction counts as the previous one, so a
        // trigger already high then does not fire in the first block.
        let mut unit = T2A { level: 0.0 };
        unit.run(io);
        unit
    }
}

impl Unit for T2A {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.run(io);
    }
}

/// T2K (`in`): the largest value of an audio-rate trigger over the block
/// (0 if none is positive).
pub struct T2K;

impl Construct for T2K {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let v = in0(io, 0);
        io.out(0)[0] = v;
        T2K
    }
}

impl Unit for T2K {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let mut peak = 0.0f32;
        if io.num_inputs() > 0 {
            for &v in io.inp(0) {
                if v > peak {
                    peak = v;
                }
            }
        }
        io.out(0).fill(peak);
    }
}

// ---- CheckBadValues / Sanitize ------------------------------------------------------

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
    fn t2a_puts_one_impulse_per_rising_control_at_the_offset() {
        let out = UnitHarness::new("T2A", Rate::Audio)
            .inputs([TestInput::Control(vec![0.0, 0.7, 0.7, 0.0, 1.0]), TestInput::Const(5.0)])
            .run(5);
        let hits: Vec<(usize, f32)> =
            out[0].iter().enumerate().filter(|(_, &v)| v != 0.0).map(|(i, &v)| (i, v)).collect();
        assert_eq!(hits, vec![(64 + 5, 0.7), (4 * 64 + 5, 1.0)]);
    }

    #[test]
    fn t2k_keeps_the_largest_trigger_of_the_block() {
        let mut sig = vec![0.0; 128];
        sig[3] = 0.4;
        sig[40] = 0.9;
        let out = UnitHarness::new("T2K", Rate::Control).input(TestInput::Audio(sig)).run(2);
        assert_eq!(out[0], vec![0.9, 0.0]);
    }

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
