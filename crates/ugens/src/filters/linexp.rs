//! LinExp: maps a linear range onto an exponential one.

use crate::common::signal::{in0, in_rate, In};
use crate::common::math::sc_reciprocal;
use crate::simd::math;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Every range bound constant; audio blocks take scsynth's vector path.
    FixedVector,
    /// Every range bound constant, plain path (control rate, odd blocks).
    Fixed,
    /// Range bounds read once per block, vector path.
    BlockVector,
    /// Range bounds read once per block, plain path.
    Block,
    /// At least one bound at audio rate: everything per sample.
    Audio,
}

/// Inputs: in, srclo, srchi, dstlo, dsthi. Output:
/// `dstlo * (dsthi / dstlo) ^ ((in - srclo) / (srchi - srclo))`.
pub struct LinExp {
    dstlo: f32,
    dstratio: f32,
    rsrcrange: f32,
    rrminuslo: f32,
    mode: Mode,
}

/// The block sizes at which scsynth's audio-rate LinExp runs its vector
/// loop (two four-float vectors per step), whose power function is a
/// polynomial approximation rather than the C library's.
fn vector_block(buf_length: usize) -> bool {
    buf_length > 1 && buf_length.is_multiple_of(8)
}

/// One sample of the mapping from the input and the block's constants.
type MapFn = fn(f32, f32, f32, f32, f32) -> f32;

#[inline(always)]
fn libm_map(x: f32, dstlo: f32, dstratio: f32, rsrcrange: f32, rrminuslo: f32) -> f32 {
    dstlo * dstratio.powf(x * rsrcrange + rrminuslo)
}

#[inline(always)]
fn vector_map(x: f32, dstlo: f32, dstratio: f32, rsrcrange: f32, rrminuslo: f32) -> f32 {
    dstlo * math::pow(dstratio, x * rsrcrange + rrminuslo)
}

impl Construct for LinExp {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let rate = |i| in_rate(io, i);
        let audio_src = rate(1) == Rate::Audio || rate(2) == Rate::Audio;
        let audio_dst = rate(3) == Rate::Audio || rate(4) == Rate::Audio;
        let all_scalar = (1..5).all(|i| rate(i) == Rate::Scalar);
        let vector = vector_block(cx.rate.buf_length);
        let mode = if audio_src || audio_dst {
            Mode::Audio
        } else {
            match (all_scalar, vector) {
                (true, true) => Mode::FixedVector,
                (true, false) => Mode::Fixed,
                (false, true) => Mode::BlockVector,
                (false, false) => Mode::Block,
            }
        };
        let (srclo, srchi, dstlo, dsthi) = (in0(io, 1), in0(io, 2), in0(io, 3), in0(io, 4));
        let rsrcrange = (1.0 / (srchi - srclo) as f64) as f32;
        let u = LinExp { dstlo, dstratio: dsthi / dstlo, rsrcrange, rrminuslo: rsrcrange * -srclo, mode };
        // The first sample always goes through the plain path.
        io.out(0)[0] = libm_map(in0(io, 0), u.dstlo, u.dstratio, u.rsrcrange, u.rrminuslo);
        u
    }
}

impl Unit for LinExp {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let inp = In::new(io, 0);
        match self.mode {
            Mode::FixedVector | Mode::Fixed => {
                let (lo, ratio, rr, rml) = (self.dstlo, self.dstratio, self.rsrcrange, self.rrminuslo);
                let map = if self.mode == Mode::FixedVector { vector_map } else { libm_map };
                for (i, o) in io.out(0).iter_mut().enumerate() {
                    *o = map(inp.at(i), lo, ratio, rr, rml);
                }
            }
            Mode::BlockVector | Mode::Block => {
                let (srclo, srchi, dstlo, dsthi) = (in0(io, 1), in0(io, 2), in0(io, 3), in0(io, 4));
                let (ratio, map): (f32, MapFn) = if self.mode == Mode::BlockVector {
                    (dsthi / dstlo, vector_map)
                } else {
                    (dsthi * sc_reciprocal(dstlo), libm_map)
                };
                let rr = sc_reciprocal(srchi - srclo);
                let rml = rr * -srclo;
                for (i, o) in io.out(0).iter_mut().enumerate() {
                    *o = map(inp.at(i), dstlo, ratio, rr, rml);
                }
            }
            Mode::Audio => {
                let b: [In<'_>; 4] = std::array::from_fn(|k| In::new(io, k + 1));
                let src_audio = in_rate(io, 1) == Rate::Audio || in_rate(io, 2) == Rate::Audio;
                let dst_audio = in_rate(io, 3) == Rate::Audio || in_rate(io, 4) == Rate::Audio;
                // Bounds that are not at audio rate keep their first value
                // for the block; the constant ones are derived once.
                let fixed_ratio = b[3].first() / b[2].first();
                let fixed_rr = sc_reciprocal(b[1].first() - b[0].first());
                let fixed_rml = fixed_rr * -b[0].first();
                for (i, o) in io.out(0).iter_mut().enumerate() {
                    let (rr, rml) = if src_audio {
                        let rr = sc_reciprocal(b[1].at(i) - b[0].at(i));
                        (rr, rr * -b[0].at(i))
                    } else {
                        (fixed_rr, fixed_rml)
                    };
                    let (lo, ratio) = if dst_audio {
                        (b[2].at(i), b[3].at(i) / b[2].at(i))
                    } else {
                        (b[2].first(), fixed_ratio)
                    };
                    *o = libm_map(inp.at(i), lo, ratio, rr, rml);
                }
            }
        }
    }
}
