//! The sine, cosecant and sine-wavetable tables that scsynth fills at start-up,
//! built once on first use with the same values.

use std::sync::OnceLock;

/// Points per cycle of the shared sine tables.
pub const SINE_SIZE: usize = 8192;
/// `SINE_SIZE - 1`: wraps a table index.
pub const SINE_MASK: u32 = SINE_SIZE as u32 - 1;
/// Cosecant entries too close to a zero of the sine hold this marker.
pub const BAD_VALUE: f32 = 1e20;

pub struct SineTables {
    /// One cycle of sin, plus a guard point equal to the first.
    pub sine: [f32; SINE_SIZE + 1],
    /// 1/sin, with `BAD_VALUE` around the zeros of sin.
    pub cosecant: [f32; SINE_SIZE + 1],
    /// `sine` in wavetable format: pairs (2a - b, b - a) for linear
    /// interpolation with one multiply-add.
    pub wavetable: [f32; 2 * SINE_SIZE],
    /// The first half cycle of `sine`, points 0 to `SINE_SIZE / 2`, for
    /// the vector kernels: they read the second half as the first negated,
    /// which is the same point for point (sin is odd, and the table's
    /// points keep that exactly), and interpolating negated points gives
    /// the negated value bit for bit (rounding to nearest is symmetric).
    /// The one exception is the point at `SINE_SIZE / 2` itself, sin(pi),
    /// which rounds to 1.2e-16 while the point it mirrors, sin(0), is 0:
    /// the kernels put it back. Half the table stays in the first-level
    /// cache where a whole one would not.
    pub sine_half: [f32; SINE_SIZE / 2 + 1],
    /// The first half cycle of `cosecant` in the same way, with NaN in
    /// place of `BAD_VALUE`, so that an interpolated value is NaN exactly
    /// where the scalar code finds a `BAD_VALUE` point.
    pub cosecant_half: [f32; SINE_SIZE / 2 + 1],
}

static TABLES: OnceLock<Box<SineTables>> = OnceLock::new();

/// The shared tables (built on the first call).
#[inline]
pub fn sine_tables() -> &'static SineTables {
    TABLES.get_or_init(build)
}

fn build() -> Box<SineTables> {
    let mut t = Box::new(SineTables {
        sine: [0.0; SINE_SIZE + 1],
        cosecant: [0.0; SINE_SIZE + 1],
        wavetable: [0.0; 2 * SINE_SIZE],
        sine_half: [0.0; SINE_SIZE / 2 + 1],
        cosecant_half: [0.0; SINE_SIZE / 2 + 1],
    });
    let twopi = std::f64::consts::PI * 2.0;
    let index_to_phase = twopi / SINE_SIZE as f64;
    for i in 0..=SINE_SIZE {
        let d = (i as f64 * index_to_phase).sin() as f32;
        t.sine[i] = d;
        t.cosecant[i] = (1.0 / d as f64) as f32;
    }
    signal_as_wavetable(&t.sine[..SINE_SIZE], &mut t.wavetable);

    // 1/sin is useless near its poles; units test for the marker instead.
    let sz = SINE_SIZE;
    let half = sz / 2;
    t.cosecant[0] = BAD_VALUE;
    t.cosecant[half] = BAD_VALUE;
    t.cosecant[sz] = BAD_VALUE;
    for i in 1..=8 {
        t.cosecant[i] = BAD_VALUE;
        t.cosecant[sz - i] = BAD_VALUE;
        t.cosecant[half - i] = BAD_VALUE;
        t.cosecant[half + i] = BAD_VALUE;
    }
    for i in 0..=half {
        t.sine_half[i] = t.sine[i];
        t.cosecant_half[i] = if t.cosecant[i] == BAD_VALUE { f32::NAN } else { t.cosecant[i] };
    }
    t
}

/// Converts one cycle of a signal into wavetable format (the cycle wraps).
pub fn signal_as_wavetable(signal: &[f32], wavetable: &mut [f32]) {
    let n = signal.len();
    for i in 0..n {
        let a = signal[i];
        let b = signal[(i + 1) % n];
        wavetable[2 * i] = 2.0 * a - b;
        wavetable[2 * i + 1] = b - a;
    }
}

/// The interpolation fraction of a 16.16 table phase, as 1 + frac (the
/// form the wavetable pairs expect).
#[inline(always)]
pub fn phase_frac1(phase: u32) -> f32 {
    f32::from_bits(0x3F80_0000 | (0x007F_FF80 & (phase << 7)))
}

/// The interpolation fraction of a 16.16 table phase, in [0, 1).
#[inline(always)]
pub fn phase_frac(phase: u32) -> f32 {
    phase_frac1(phase) - 1.0
}

/// Reads a wavetable (value pairs) at a 16.16 phase; `mask` is the number
/// of pairs minus one.
///
/// # Safety
/// `table` must hold at least `2 * (mask + 1)` values.
#[inline(always)]
pub unsafe fn lookupi1(table: &[f32], phase: u32, mask: u32) -> f32 {
    let i = (((phase >> 16) & mask) as usize) << 1;
    // SAFETY: i + 1 <= 2 * mask + 1 < table.len() by the caller's contract.
    let (a, b) = unsafe { (*table.get_unchecked(i), *table.get_unchecked(i + 1)) };
    a + b * phase_frac1(phase)
}

/// Reads `sine` or `cosecant` at a 16.16 phase without interpolation,
/// returning the entry and its successor.
#[inline(always)]
pub fn pair13(table: &[f32; SINE_SIZE + 1], phase: i32) -> (f32, f32) {
    let i = ((phase as u32 >> 16) & SINE_MASK) as usize;
    (table[i], table[i + 1])
}

/// Linear interpolation of `sine` at a 16.16 phase.
#[inline(always)]
pub fn lookup13(table: &[f32; SINE_SIZE + 1], phase: i32) -> f32 {
    let (a, b) = pair13(table, phase);
    a + phase_frac(phase as u32) * (b - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sine_table_holds_one_cycle_with_guard_point() {
        let t = sine_tables();
        assert_eq!(t.sine[0], 0.0);
        assert!((t.sine[SINE_SIZE / 4] - 1.0).abs() < 1e-7);
        assert!((t.sine[3 * SINE_SIZE / 4] + 1.0).abs() < 1e-7);
        assert!(t.sine[SINE_SIZE].abs() < 1e-6);
    }

    #[test]
    fn cosecant_marks_the_poles_of_sine() {
        let t = sine_tables();
        for i in [0, 1, 8, SINE_SIZE / 2 - 8, SINE_SIZE / 2, SINE_SIZE / 2 + 8, SINE_SIZE - 8, SINE_SIZE] {
            assert_eq!(t.cosecant[i], BAD_VALUE, "index {i}");
        }
        assert!((t.cosecant[SINE_SIZE / 4] - 1.0).abs() < 1e-6);
    }

    /// What the vector kernels' half tables rely on: the second half of
    /// each table is the first negated, point for point, but sin(pi).
    #[test]
    fn second_half_cycle_is_the_first_negated_but_sin_pi() {
        let t = sine_tables();
        let half = SINE_SIZE / 2;
        for i in 0..=half {
            let (s, c) = (t.sine[i + half], t.cosecant[i + half]);
            if i == 0 {
                assert!(s > 0.0 && s < 1e-15 && t.sine[0] == 0.0, "sin(pi) {s:e}");
            } else if i == half {
                // The guard point, sin(2 pi), is only read as the far end of
                // an interpolation, where it differs by less than the
                // rounding of the step (the step tests check that).
                assert!(s < 0.0 && s > -1e-15, "sin(2 pi) {s:e}");
            } else {
                assert_eq!(s.to_bits(), (-t.sine[i]).to_bits(), "sine index {}", i + half);
            }
            assert!(
                c == -t.cosecant[i] || (c == BAD_VALUE && t.cosecant[i] == BAD_VALUE),
                "cosecant index {}",
                i + half
            );
            assert_eq!(t.sine_half[i].to_bits(), t.sine[i].to_bits());
            assert_eq!(t.cosecant_half[i].is_nan(), t.cosecant[i] == BAD_VALUE);
        }
    }

    #[test]
    fn wavetable_interpolates_the_sine() {
        let t = sine_tables();
        for k in 0..1000u32 {
            let phase = k.wrapping_mul(2_654_435_761);
            // SAFETY: the wavetable holds 2 * SINE_SIZE values.
            let v = unsafe { lookupi1(&t.wavetable, phase, SINE_MASK) };
            let cycle = ((phase >> 16) & SINE_MASK) as f64 + (phase & 0xFFFF) as f64 / 65536.0;
            let want = (cycle / SINE_SIZE as f64 * std::f64::consts::TAU).sin();
            assert!((v as f64 - want).abs() < 1e-5, "{v} vs {want}");
        }
    }
}
