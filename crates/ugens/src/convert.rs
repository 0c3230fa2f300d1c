//! Rate conversion: control to audio (K2A), audio to control (A2K), and
//! triggers either way (T2A, T2K).

use crate::common::signal::in0;
use crate::common::math::c_int;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// K2A: a control signal as audio, ramped linearly across a block whenever
/// it changes (a constant input is simply held).
pub struct K2A {
    level: f32,
    interpolate: bool,
    simd: bool,
}

impl K2A {
    fn run(&mut self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let next = io.in0(0);
        let simd = self.simd;
        let out = io.out(0);
        if self.interpolate && self.level != next {
            let slope = crate::simd::ramp::calc_slope(next, self.level, cx.rate.slope_factor);
            crate::simd::ramp::fill(simd, out, self.level, slope);
            self.level = next;
        } else {
            out.fill(self.level);
        }
    }
}

impl Construct for K2A {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let interpolate = io.num_inputs() > 0 && io.in_rate(0) != Rate::Scalar;
        let mut unit = K2A { level: io.in0(0), interpolate, simd: false };
        unit.run(io, cx);
        unit.simd = crate::simd::ramp::simd_block(cx.rate.buf_length);
        unit
    }
}

impl Unit for K2A {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// A2K: the first sample of each audio block.
pub struct A2K;

impl Construct for A2K {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let v = io.in0(0);
        io.out(0)[0] = v;
        A2K
    }
}

impl Unit for A2K {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let v = io.in0(0);
        io.out(0)[0] = v;
    }
}

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

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    #[test]
    fn k2a_ramps_between_control_values() {
        let out = UnitHarness::new("K2A", Rate::Audio).input(TestInput::Control(vec![0.0, 1.0, 1.0])).run(3);
        assert!(out[0][..64].iter().all(|&x| x == 0.0));
        assert_eq!(out[0][64], 0.0);
        assert!((out[0][127] - 63.0 / 64.0).abs() < 1e-6);
        assert!(out[0][128..].iter().all(|&x| x == 1.0));
    }

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

}
