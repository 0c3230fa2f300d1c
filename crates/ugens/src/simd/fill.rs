//! Block fills as scsynth's SIMD build computes them: four f32 lanes, each
//! stepping by four times the per-sample increment. The rounding differs
//! from a scalar loop, and scsynth on x86-64 uses these paths whenever the
//! block size is a multiple of 16.

/// True when scsynth picks its vectorised calc function for this buffer
/// length (only audio-rate units qualify; control units have length 1).
#[inline]
pub(crate) fn simd_block(buf_length: usize) -> bool {
    buf_length % 16 == 0
}

/// A ramp `start, start + slope, ...` with the four-lane float rounding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ramp {
    lanes: [f32; 4],
    step: f32,
    i: usize,
}

impl Ramp {
    pub(crate) fn new(start: f32, slope: f32) -> Ramp {
        let slope2 = slope + slope;
        let lanes = [start, start + slope, start + slope2, start + slope2 + slope];
        Ramp { lanes, step: slope2 + slope2, i: 0 }
    }
}

impl Iterator for Ramp {
    type Item = f32;

    #[inline]
    fn next(&mut self) -> Option<f32> {
        let lane = self.i & 3;
        let v = self.lanes[lane];
        self.lanes[lane] = v + self.step;
        self.i += 1;
        Some(v)
    }
}

/// Fills `out` with a linear ramp as the vector code does.
pub(crate) fn slope_fill(out: &mut [f32], start: f32, slope: f32) {
    for (o, v) in out.iter_mut().zip(Ramp::new(start, slope)) {
        *o = v;
    }
}

/// Fills `out` with a geometric series `start * curve^i` as the vector code
/// does: lanes seeded by repeated multiplication, then stepped by curve^4.
pub(crate) fn exp_fill(out: &mut [f32], start: f32, curve: f32) {
    let v1 = start * curve;
    let v2 = v1 * curve;
    let v3 = v2 * curve;
    let mut lanes = [start, v1, v2, v3];
    let step = curve * (curve * (curve * curve));
    for chunk in out.chunks_mut(4) {
        for (o, l) in chunk.iter_mut().zip(lanes.iter_mut()) {
            *o = *l;
            *l *= step;
        }
    }
}

/// Integer power by squaring, as scsynth's `sc_powi`.
pub(crate) fn powi(mut x: f64, mut n: u32) -> f64 {
    let mut z = 1.0;
    while n != 0 {
        if n & 1 != 0 {
            z *= x;
        }
        n >>= 1;
        x *= x;
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_matches_exact_values_when_steps_are_representable() {
        let mut out = [0.0f32; 32];
        slope_fill(&mut out, 1.0, 0.25);
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, 1.0 + 0.25 * i as f32);
        }
    }

    #[test]
    fn exp_fill_doubles_each_sample_for_curve_two() {
        let mut out = [0.0f32; 16];
        exp_fill(&mut out, 1.0, 2.0);
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, 2f32.powi(i as i32));
        }
    }

    #[test]
    fn powi_agrees_with_repeated_multiplication_for_small_exponents() {
        assert_eq!(powi(3.0, 0), 1.0);
        assert_eq!(powi(3.0, 5), 243.0);
    }
}
