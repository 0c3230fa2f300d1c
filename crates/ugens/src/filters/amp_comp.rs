//! The loudness compensations AmpComp (a power law of frequency) and
//! AmpCompA (the inverse A-weighting curve).

use crate::common::signal::{in0, in_rate, In};
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// AmpComp: `(root / freq) ^ exp`, sign kept for negative ratios.
pub struct AmpComp {
    /// With constant root and exponent: `root ^ exp` and `-exp`.
    fixed: Option<(f32, f32)>,
}

#[inline(always)]
fn signed_pow(x: f32, e: f32) -> f32 {
    if x >= 0.0 {
        x.powf(e)
    } else {
        -(-x).powf(e)
    }
}

impl AmpComp {
    fn run_varying(io: &mut Wires<'_>) {
        let freq = In::new(io, 0);
        let root = in0(io, 1);
        let xb = in0(io, 2);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            *o = signed_pow(root / freq.at(i), xb);
        }
    }
}

impl Construct for AmpComp {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        if in_rate(io, 1) != Rate::Scalar || in_rate(io, 2) != Rate::Scalar {
            // scsynth 3.13 computes this first sample with constants it
            // never set; the value of the running formula stands in.
            Self::run_varying(io);
            return AmpComp { fixed: None };
        }
        let exp = in0(io, 2);
        let mut u = AmpComp { fixed: Some((in0(io, 1).powf(exp), -1.0 * exp)) };
        u.next(io, cx);
        u
    }
}

impl Unit for AmpComp {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let Some((rootmul, xb)) = self.fixed else {
            Self::run_varying(io);
            return;
        };
        let freq = In::new(io, 0);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            let xa = freq.at(i);
            *o = if xa >= 0.0 { xa.powf(xb) * rootmul } else { -(-xa).powf(xb) * rootmul };
        }
    }
}

const AMPCOMP_K: f64 = 3.5041384 * 10e15;
const AMPCOMP_C1: f64 = 20.598997 * 20.598997;
const AMPCOMP_C2: f64 = 107.65265 * 107.65265;
const AMPCOMP_C3: f64 = 737.86223 * 737.86223;
const AMPCOMP_C4: f64 = 12194.217 * 12194.217;
const AMPCOMP_MIN_LEVEL: f64 = -0.1575371167435;

/// One minus the square root of the A-weighting gain at `freq`.
fn a_weight_level(freq: f64) -> f64 {
    let r = freq * freq;
    let level = AMPCOMP_K * r * r * r * r;
    let n1 = AMPCOMP_C1 + r;
    let n2 = AMPCOMP_C4 + r;
    let level = level / (n1 * n1 * (AMPCOMP_C2 + r) * (AMPCOMP_C3 + r) * n2 * n2);
    1.0 - level.sqrt()
}

/// AmpCompA: the inverse A-weighting curve, scaled so that `root` gives
/// `rootAmp` and the curve's minimum gives `minAmp`.
pub struct AmpCompA {
    scale: f64,
    offset: f64,
}

impl AmpCompA {
    fn run(&self, io: &mut Wires<'_>) {
        let freq = In::new(io, 0);
        for (i, o) in io.out(0).iter_mut().enumerate() {
            *o = (a_weight_level(freq.at(i) as f64) * self.scale + self.offset) as f32;
        }
    }
}

impl Construct for AmpCompA {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let root_level = a_weight_level(in0(io, 1) as f64);
        let min_level = in0(io, 2);
        let scale = (in0(io, 3) - min_level) as f64 / (root_level - AMPCOMP_MIN_LEVEL);
        let offset = min_level as f64 - scale * AMPCOMP_MIN_LEVEL;
        let u = AmpCompA { scale, offset };
        u.run(io);
        u
    }
}

impl Unit for AmpCompA {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.run(io);
    }
}
