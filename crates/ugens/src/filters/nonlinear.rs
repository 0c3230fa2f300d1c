//! Flip (every other sample negated) and MantissaMask (mantissa bits dropped).

use crate::common::signal::at;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};

/// Flip: negates every other sample. With an even block length the first
/// sample of each block is the negated one; with an odd length (control
/// rate) the pattern carries across blocks, following the block counter.
pub struct Flip {
    odd: bool,
}

impl Flip {
    fn run(&self, io: &mut Wires<'_>, cx: &UnitCtx<'_>) {
        let input = io.inp(0);
        let n = io.n();
        // With an odd block length, odd blocks start with an unchanged sample.
        let first = if self.odd && cx.world.buf_counter & 1 != 0 { 1 } else { 0 };
        let out = io.out(0);
        for (i, o) in out.iter_mut().enumerate().take(n) {
            let x = at(input, i);
            *o = if (i + first) % 2 == 0 { -x } else { x };
        }
    }
}

impl Construct for Flip {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let unit = Flip { odd: cx.rate.buf_length & 1 != 0 };
        if unit.odd {
            unit.run(io, cx);
        } else {
            // The even form starts out passing its first sample unchanged.
            let x = io.in0(0);
            io.out(0)[0] = x;
        }
        unit
    }
}

impl Unit for Flip {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.run(io, cx);
    }
}

/// MantissaMask: keeps the sign, the exponent and the `bits` highest
/// mantissa bits of each sample, clearing the rest.
pub struct MantissaMask;

/// C's float-to-int conversion on x86: out-of-range values and NaN become
/// `i32::MIN`.
fn to_i32(x: f32) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

impl MantissaMask {
    fn run(io: &mut Wires<'_>) {
        let input = io.inp(0);
        let bits = to_i32(io.in0(1));
        // The shift count wraps at 32, as the processor's shift does.
        let mask = (-1i32).wrapping_shl(23i32.wrapping_sub(bits) as u32) as u32;
        let n = io.n();
        for (i, o) in io.out(0).iter_mut().enumerate().take(n) {
            *o = f32::from_bits(at(input, i).to_bits() & mask);
        }
    }
}

impl Construct for MantissaMask {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        Self::run(io);
        MantissaMask
    }
}

impl Unit for MantissaMask {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        Self::run(io);
    }
}
