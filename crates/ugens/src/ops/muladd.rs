//! MulAdd, Sum3 and Sum4.
//!
//! Control-rate inputs are held as "current" values and walked to their new
//! value across a block whenever they change (SuperCollider's
//! `ControlRateInput`); constant inputs pick specialised loops at
//! construction, as scsynth does.

use crate::simd::ramp;
use crate::unit::{downcast_unit, Construct, Lanes, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, MAX_LANES};

/// A control input's value as the unit last used it.
#[derive(Clone, Copy)]
struct Held {
    value: f32,
}

impl Held {
    #[inline]
    fn changed(&self, now: f32) -> bool {
        self.value != now
    }
}

/// One operand of a block loop: audio, a held value, or a ramp.
#[derive(Clone, Copy)]
enum Arg<'a> {
    Audio(&'a [f32]),
    Value(f32),
    Ramp { start: f32, slope: f32 },
}

/// `out[i] = a[i] * m[i]`, with `m` audio or a value (ramps already written
/// out). Products and sums are formed in separate passes; each step rounds
/// exactly as the combined expression would, so results are unchanged.
#[inline]
fn mul_into(out: &mut [f32], a: &[f32], m: Arg<'_>) {
    match m {
        Arg::Audio(m) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(m) {
                *o = x * y;
            }
        }
        Arg::Value(v) | Arg::Ramp { start: v, .. } => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = x * v;
            }
        }
    }
}

/// `out[i] = a[i] + b[i]`.
#[inline]
fn add_to(out: &mut [f32], a: &[f32], b: Arg<'_>) {
    match b {
        Arg::Audio(b) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = x + y;
            }
        }
        Arg::Value(v) | Arg::Ramp { start: v, .. } => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = x + v;
            }
        }
    }
}

/// `out[i] += b[i]`.
#[inline]
fn add_into(out: &mut [f32], b: Arg<'_>) {
    match b {
        Arg::Audio(b) => {
            for (o, &y) in out.iter_mut().zip(b) {
                *o += y;
            }
        }
        Arg::Value(v) | Arg::Ramp { start: v, .. } => {
            for o in out.iter_mut() {
                *o += v;
            }
        }
    }
}

/// Writes the ramp values of a `Ramp` operand into scratch storage so the
/// loops can index it; the scratch lives in the unit (allocated once).
fn materialise<'a>(arg: Arg<'a>, simd: bool, scratch: &'a mut [f32]) -> Arg<'a> {
    match arg {
        Arg::Ramp { start, slope } => {
            ramp::fill(simd, scratch, start, slope);
            Arg::Audio(scratch)
        }
        other => other,
    }
}

/// Sample `i` of a materialised operand.
#[inline(always)]
fn at(a: Arg<'_>, i: usize) -> f32 {
    match a {
        Arg::Audio(s) => s[i],
        Arg::Value(v) | Arg::Ramp { start: v, .. } => v,
    }
}

/// `ControlRateInput::slope`: a ramp from the held value to `next`, after
/// which the held value is `next`.
#[inline]
fn take_slope(held: &mut Held, next: f32, sf: f64) -> Arg<'static> {
    let start = held.value;
    let slope = ramp::calc_slope(next, start, sf);
    held.value = next;
    Arg::Ramp { start, slope }
}

// ---- MulAdd ---------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum MulAddCalc {
    Scalar,
    Aa,
    Ak,
    Ai,
    A0,
    Ka,
    Kk,
    Ki,
    K0,
    Ia,
    Ik,
    Ii,
    I0,
    OneA,
    OneK,
    OneI,
    OneZero,
    ZeroA,
    ZeroK,
    ZeroI,
    ZeroZero,
}

/// `in * mul + add`.
pub struct MulAdd {
    mul: Held,
    add: Held,
    calc: MulAddCalc,
    simd: bool,
    scratch: [Vec<f32>; 2],
}

impl MulAdd {
    /// `out = in * mul + add`, with each operand audio, a value or a ramp.
    fn muladd(&mut self, out: &mut [f32], input: Arg<'_>, mul: Arg<'_>, add: Arg<'_>) {
        let n = out.len();
        let simd = self.simd;
        let [s0, s1] = &mut self.scratch;
        let Arg::Audio(a) = input else { return };
        mul_into(out, a, materialise(mul, simd, &mut s0[..n]));
        add_into(out, materialise(add, simd, &mut s1[..n]));
    }

    fn times(&mut self, out: &mut [f32], input: Arg<'_>, mul: Arg<'_>) {
        let n = out.len();
        let Arg::Audio(a) = input else { return };
        mul_into(out, a, materialise(mul, self.simd, &mut self.scratch[0][..n]));
    }

    fn plus(&mut self, out: &mut [f32], input: Arg<'_>, add: Arg<'_>) {
        let n = out.len();
        let Arg::Audio(a) = input else { return };
        add_to(out, a, materialise(add, self.simd, &mut self.scratch[1][..n]));
    }

    fn slope(&mut self, out: &mut [f32], add: Arg<'_>) {
        match add {
            Arg::Ramp { start, slope } => ramp::fill(self.simd, out, start, slope),
            Arg::Value(v) => out.fill(v),
            Arg::Audio(a) => out.copy_from_slice(&a[..out.len()]),
        }
    }

    fn run(&mut self, calc: MulAddCalc, io: &mut Wires<'_>, sf: f64) {
        use MulAddCalc::*;
        let out_ptr = io.out_ptr(0);
        let n = io.n();
        // SAFETY: the output wire holds `n` samples and does not overlap any
        // input (the `Wires` contract); nothing else views it during `run`.
        let out = unsafe { std::slice::from_raw_parts_mut(out_ptr, n) };
        let a = Arg::Audio(io.inp(0));
        let next_mul = io.in0(1);
        let next_add = io.in0(2);
        match calc {
            Scalar => out[0] = io.in0(0) * next_mul + next_add,
            Aa => self.muladd(out, a, Arg::Audio(io.inp(1)), Arg::Audio(io.inp(2))),
            Ak => {
                if self.add.changed(next_add) {
                    let add = take_slope(&mut self.add, next_add, sf);
                    self.muladd(out, a, Arg::Audio(io.inp(1)), add);
                } else if self.add.value == 0.0 {
                    self.times(out, a, Arg::Audio(io.inp(1)));
                } else {
                    self.run(Ai, io, sf);
                }
            }
            Ai => {
                let add = Arg::Value(self.add.value);
                self.muladd(out, a, Arg::Audio(io.inp(1)), add);
            }
            A0 => self.times(out, a, Arg::Audio(io.inp(1))),
            Ka => {
                if self.mul.changed(next_mul) {
                    let mul = take_slope(&mut self.mul, next_mul, sf);
                    self.muladd(out, a, mul, Arg::Audio(io.inp(2)));
                } else {
                    self.run(Ia, io, sf);
                }
            }
            Kk => {
                if self.add.changed(next_add) {
                    if self.mul.changed(next_mul) {
                        let mul = take_slope(&mut self.mul, next_mul, sf);
                        let add = take_slope(&mut self.add, next_add, sf);
                        self.muladd(out, a, mul, add);
                    } else {
                        let add = take_slope(&mut self.add, next_add, sf);
                        let m = self.mul.value;
                        if m == 0.0 {
                            self.slope(out, add);
                        } else if m == 1.0 {
                            self.plus(out, a, add);
                        } else {
                            self.muladd(out, a, Arg::Value(m), add);
                        }
                    }
                } else {
                    self.run(Ki, io, sf);
                }
            }
            Ki => {
                if self.mul.changed(next_mul) {
                    let mul = take_slope(&mut self.mul, next_mul, sf);
                    let add = Arg::Value(self.add.value);
                    self.muladd(out, a, mul, add);
                } else {
                    self.run(Ii, io, sf);
                }
            }
            K0 => {
                if self.mul.changed(next_mul) {
                    let mul = take_slope(&mut self.mul, next_mul, sf);
                    self.times(out, a, mul);
                } else {
                    self.run(Ik, io, sf);
                }
            }
            Ia => {
                let m = self.mul.value;
                if m == 0.0 {
                    self.run(ZeroA, io, sf);
                } else if m == 1.0 {
                    self.run(OneA, io, sf);
                } else {
                    self.muladd(out, a, Arg::Value(m), Arg::Audio(io.inp(2)));
                }
            }
            Ik => {
                if self.add.changed(next_add) {
                    let add = take_slope(&mut self.add, next_add, sf);
                    let m = self.mul.value;
                    if m == 0.0 {
                        self.slope(out, add);
                    } else if m == 1.0 {
                        self.plus(out, a, add);
                    } else {
                        self.muladd(out, a, Arg::Value(m), add);
                    }
                } else {
                    self.run(Ii, io, sf);
                }
            }
            Ii => {
                let (m, ad) = (self.mul.value, self.add.value);
                if m == 0.0 {
                    self.run(ZeroI, io, sf);
                } else if m == 1.0 {
                    self.run(OneI, io, sf);
                } else if ad == 0.0 {
                    self.times(out, a, Arg::Value(m));
                } else {
                    self.muladd(out, a, Arg::Value(m), Arg::Value(ad));
                }
            }
            I0 => {
                let m = self.mul.value;
                if m == 0.0 {
                    self.run(ZeroZero, io, sf);
                } else if m == 1.0 {
                    self.run(OneZero, io, sf);
                } else {
                    self.times(out, a, Arg::Value(m));
                }
            }
            OneA => self.plus(out, a, Arg::Audio(io.inp(2))),
            OneK => {
                if self.add.changed(next_add) {
                    let add = take_slope(&mut self.add, next_add, sf);
                    self.plus(out, a, add);
                } else {
                    self.run(OneI, io, sf);
                }
            }
            OneI => {
                let ad = self.add.value;
                if ad == 0.0 {
                    out.copy_from_slice(&io.inp(0)[..n]);
                } else {
                    self.plus(out, a, Arg::Value(ad));
                }
            }
            OneZero => out.copy_from_slice(&io.inp(0)[..n]),
            ZeroA => out.copy_from_slice(&io.inp(2)[..n]),
            ZeroK => {
                if self.add.changed(next_add) {
                    let add = take_slope(&mut self.add, next_add, sf);
                    self.slope(out, add);
                } else {
                    self.run(ZeroI, io, sf);
                }
            }
            ZeroI => out.fill(self.add.value),
            ZeroZero => out.fill(0.0),
        }
    }
}

impl Construct for MulAdd {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        use MulAddCalc::*;
        let mul = Held { value: io.in0(1) };
        let add = Held { value: io.in0(2) };
        let (m, ad) = (mul.value, add.value);
        let calc = if spec.rate != Rate::Audio {
            Scalar
        } else {
            match (io.in_rate(1), io.in_rate(2)) {
                (Rate::Audio, Rate::Audio) => Aa,
                (Rate::Audio, Rate::Control) => Ak,
                (Rate::Audio, _) if ad == 0.0 => A0,
                (Rate::Audio, _) => Ai,
                (Rate::Control, Rate::Audio) => Ka,
                (Rate::Control, Rate::Control) => Kk,
                (Rate::Control, _) if ad == 0.0 => K0,
                (Rate::Control, _) => Ki,
                (_, Rate::Audio) if m == 1.0 => OneA,
                (_, Rate::Audio) if m == 0.0 => ZeroA,
                (_, Rate::Audio) => Ia,
                (_, Rate::Control) if m == 1.0 => OneK,
                (_, Rate::Control) if m == 0.0 => ZeroK,
                (_, Rate::Control) => Ik,
                _ if m == 1.0 && ad == 0.0 => OneZero,
                _ if m == 1.0 => OneI,
                _ if m == 0.0 && ad == 0.0 => ZeroZero,
                _ if m == 0.0 => ZeroI,
                _ if ad == 0.0 => I0,
                _ => Ii,
            }
        };
        let bs = cx.world.block_size.max(cx.rate.buf_length);
        let mut unit = MulAdd {
            mul,
            add,
            calc,
            simd: false,
            scratch: [vec![0.0; bs], vec![0.0; bs]],
        };
        // The first sample comes from the plain (non-SIMD) loop.
        let sf = cx.rate.slope_factor;
        unit.run(calc, io, sf);
        unit.simd = calc != Scalar && ramp::simd_block(cx.rate.buf_length);
        unit
    }
}

impl Unit for MulAdd {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let calc = self.calc;
        self.run(calc, io, cx.rate.slope_factor);
    }
}

// ---- Sum3 / Sum4 ----------------------------------------------------------

/// Sum of three (`N == 3`) or four (`N == 4`) signals. The first input is
/// audio; the others are audio, control or constant, in non-increasing rate
/// order (as sclang sorts them).
pub struct Sum<const N: usize> {
    held: [Held; 4],
    scalar: bool,
    simd: bool,
    /// Whether `next` runs the AVX2 build of `run`.
    wide: bool,
    scratch: [Vec<f32>; 3],
}

impl<const N: usize> Sum<N> {
    /// `run` compiled for AVX2: the sums take eight samples a step instead
    /// of four, each sample's additions unchanged.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&mut self, io: &mut Wires<'_>, sf: f64) {
        self.run(io, sf);
    }

    #[inline(always)]
    fn run(&mut self, io: &mut Wires<'_>, sf: f64) {
        if self.scalar {
            let mut s = io.in0(0);
            for k in 1..N {
                s += io.in0(k);
            }
            io.out(0)[0] = s;
            return;
        }
        let n = io.n();
        // Read per call, not kept from construction: knowing here that every
        // input is a block spares the loop a length check per input.
        if (0..N).all(|k| io.in_rate(k) == Rate::Audio) {
            // Every input a block (a Mix of audio signals, the common case):
            // no held values to follow and no ramps to fill.
            let (a, b, c) = (io.inp(0), io.inp(1), io.inp(2));
            let d = if N == 4 { io.inp(3) } else { c };
            sum_blocks::<N>(io.out(0), a, b, c, d);
            return;
        }
        let simd = self.simd;
        let mut args: [Arg<'_>; 4] = [Arg::Value(0.0); 4];
        args[0] = Arg::Audio(io.inp(0));
        for k in 1..N {
            args[k] = match io.in_rate(k) {
                Rate::Audio => Arg::Audio(io.inp(k)),
                Rate::Control => {
                    let next = io.in0(k);
                    if self.held[k].changed(next) {
                        take_slope(&mut self.held[k], next, sf)
                    } else {
                        Arg::Value(self.held[k].value)
                    }
                }
                _ => Arg::Value(self.held[k].value),
            };
        }
        let [s1, s2, s3] = &mut self.scratch;
        let l1 = materialise(args[1], simd, &mut s1[..n]);
        let l2 = materialise(args[2], simd, &mut s2[..n]);
        let l3 = materialise(args[3], simd, &mut s3[..n]);
        let Arg::Audio(a0) = args[0] else { return };
        let out = io.out(0);
        if a0.len() < out.len() {
            // A first input below audio rate (sclang puts an audio-rate one
            // first): its value held over the block.
            let v = a0.first().copied().unwrap_or(0.0);
            for (i, o) in out.iter_mut().enumerate() {
                *o = if N == 4 { (v + at(l1, i)) + (at(l2, i) + at(l3, i)) } else { (v + at(l1, i)) + at(l2, i) };
            }
            return;
        }
        // scsynth's vector sum groups three terms as (a + b) + c and four
        // as (a + b) + (c + d); rounding depends on it.
        match (N, l1, l2, l3) {
            (4, Arg::Audio(b), Arg::Audio(c), Arg::Audio(d)) => sum_blocks::<N>(out, a0, b, c, d),
            (4, ..) => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = (a0[i] + at(l1, i)) + (at(l2, i) + at(l3, i));
                }
            }
            (_, Arg::Audio(b), Arg::Audio(c), _) => sum_blocks::<N>(out, a0, b, c, c),
            _ => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = (a0[i] + at(l1, i)) + at(l2, i);
                }
            }
        }
    }
}

/// `out` = (a + b) + c for three blocks (`d` unused), (a + b) + (c + d)
/// for four: scsynth's grouping. The slices are cut to the output's length
/// first, so that the zipped loop has no bounds checks and runs on vectors.
#[inline(always)]
fn sum_blocks<const N: usize>(out: &mut [f32], a: &[f32], b: &[f32], c: &[f32], d: &[f32]) {
    if let (Ok(o), Some(a), Some(b), Some(c), Some(d)) = (
        <&mut [f32; COMMON_BLOCK]>::try_from(&mut *out),
        a.first_chunk::<COMMON_BLOCK>(),
        b.first_chunk::<COMMON_BLOCK>(),
        c.first_chunk::<COMMON_BLOCK>(),
        d.first_chunk::<COMMON_BLOCK>(),
    ) {
        sum_fixed::<N, COMMON_BLOCK>(o, a, b, c, d);
        return;
    }
    let n = out.len();
    let (a, b, c, d) = (&a[..n], &b[..n], &c[..n], &d[..n]);
    if N == 4 {
        for ((((o, &a), &b), &c), &d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
            *o = (a + b) + (c + d);
        }
    } else {
        for (((o, &a), &b), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
            *o = (a + b) + c;
        }
    }
}

/// The block size most servers run at: a block of it is summed as
/// fixed-length arrays, in straight vector operations with no test of the
/// lengths.
const COMMON_BLOCK: usize = 64;

/// `sum_blocks` on arrays of `L`: the same grouping, sample by sample.
#[inline(always)]
fn sum_fixed<const N: usize, const L: usize>(out: &mut [f32; L], a: &[f32; L], b: &[f32; L], c: &[f32; L], d: &[f32; L]) {
    for i in 0..L {
        out[i] = if N == 4 { (a[i] + b[i]) + (c[i] + d[i]) } else { (a[i] + b[i]) + c[i] };
    }
}

/// Whether lane `io`'s inputs are all blocks (a Mix of audio signals):
/// the sum then needs nothing of the unit.
#[inline(always)]
fn all_audio<const N: usize>(io: &Wires<'_>) -> bool {
    io.num_inputs() >= N && (0..N).all(|k| io.in_rate(k) == Rate::Audio)
}

/// The Sum3 (`N == 3`) or Sum4 step of several synths together: lane by
/// lane, each with the additions its unit makes alone, in one call for
/// all of them. Lanes whose inputs are all blocks sum them here; the
/// others run their unit's own loops (held control values, ramps).
pub(crate) fn sum_lanes<const N: usize>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    #[cfg(target_arch = "x86_64")]
    if crate::vector::avx2() {
        // SAFETY: the CPU has AVX2 (checked just now).
        unsafe { sum_lanes_avx2::<N>(lanes, rate) };
        return;
    }
    sum_lanes_in::<N>(lanes, rate);
}

/// `sum_lanes_in` compiled for AVX2: eight samples a step, each sum unchanged.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_lanes_avx2<const N: usize>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    sum_lanes_in::<N>(lanes, rate);
}

#[inline(always)]
fn sum_lanes_in<const N: usize>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    for l in 0..lanes.len.min(MAX_LANES) {
        // A lane that is not filled or not this unit leaves the step
        // uncomputed rather than panic (as the other lane kernels do).
        let Some(io) = lanes.ios[l].as_mut() else { return };
        if all_audio::<N>(io) {
            let (a, b, c) = (io.inp(0), io.inp(1), io.inp(2));
            let d = if N == 4 { io.inp(3) } else { c };
            sum_blocks::<N>(io.out(0), a, b, c, d);
            continue;
        }
        let Some(u) = lanes.units[l].as_deref_mut().and_then(downcast_unit::<Sum<N>>) else { return };
        u.run(io, rate.slope_factor);
    }
}

impl<const N: usize> Construct for Sum<N> {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let mut held = [Held { value: 0.0 }; 4];
        for (k, h) in held.iter_mut().enumerate().take(N.min(io.num_inputs())) {
            h.value = io.in0(k);
        }
        let bs = cx.world.block_size.max(cx.rate.buf_length);
        let mut unit = Sum {
            held,
            scalar: spec.rate != Rate::Audio,
            simd: false,
            wide: false,
            scratch: [vec![0.0; bs], vec![0.0; bs], vec![0.0; bs]],
        };
        unit.run(io, cx.rate.slope_factor);
        unit.simd = !unit.scalar && ramp::simd_block(cx.rate.buf_length);
        unit.wide = !unit.scalar && cx.rate.buf_length > 1 && crate::vector::avx2();
        unit
    }
}

impl<const N: usize> Unit for Sum<N> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only where the CPU has AVX2.
            unsafe { self.run_avx2(io, cx.rate.slope_factor) };
            return;
        }
        self.run(io, cx.rate.slope_factor);
    }
}
