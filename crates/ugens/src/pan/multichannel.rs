//! Multichannel and ambisonic panners: PanAz, PanB, PanB2, BiPanB2,
//! DecodeB2 and Rotate2.
//!
//! They read the same 8192-point sine table as the stereo panners, at
//! positions truncated to a table index (a full cycle of azimuth spans
//! 8192 points), and glide their gains across a block when a control
//! changes. Where scsynth's SIMD build takes its vector path (blocks of a
//! multiple of 16 samples) the glide accumulates in four lanes, as it does.

use crate::common::signal::{in0, In};
use crate::common::math::{c_int, c_long};
use crate::simd::ramp;
use crate::pan::sine_table;
use crate::unit::{Construct, Rate, Unit, UnitCtx, UnitSpec, Wires};

/// Index mask of the sine table (8192 points per cycle).
const SINE_MASK: i64 = 8191;
/// A quarter cycle of the sine table: turns a sine index into a cosine index.
const QUARTER: i64 = 2048;

/// Implements `Construct` (build with `$init`, then compute the first
/// sample) and `Unit` for a panner whose `run` takes the slope factor.
macro_rules! gliding_unit {
    ($t:ident, |$io:ident| $init:expr) => {
        impl Construct for $t {
            fn new(_spec: &UnitSpec<'_>, $io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
                let mut unit: $t = $init;
                unit.run($io, cx.rate.slope_factor);
                unit
            }
        }

        impl Unit for $t {
            fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
                self.run(io, cx.rate.slope_factor);
            }
        }
    };
}

/// `1/sqrt(2)` in single precision, the W channel's gain.
#[inline(always)]
fn rsqrt2() -> f32 {
    1.0 / 2.0f32.sqrt()
}

/// Sine and cosine of an azimuth given in half cycles (1 = 180 degrees):
/// scsynth negates the sine so that positive azimuths turn to the left.
#[inline]
fn azimuth_sin_cos(azimuth: f32) -> (f32, f32, i64) {
    let sine = sine_table();
    let isin = SINE_MASK & c_long(azimuth * 4096.0);
    let icos = SINE_MASK & (isin + QUARTER);
    (-sine[isin as usize], sine[icos as usize], isin)
}

/// Gains that glide from their current values to new ones over a block.
/// `keep_ramped` keeps the values the glide reached rather than the targets
/// (scsynth's scalar loops do, its vector loops store the targets).
#[inline(always)]
fn glide<const N: usize>(
    amps: &mut [f32; N],
    next: [f32; N],
    n: usize,
    sf: f64,
    simd: bool,
    mut f: impl FnMut(usize, usize, f32),
) {
    for k in 0..N {
        let slope = ramp::calc_slope(next[k], amps[k], sf);
        let end = ramp::ramp(simd, n, amps[k], slope, |j, a| f(k, j, a));
        amps[k] = if simd { next[k] } else { end };
    }
}

// ---- PanB2 / BiPanB2 ---------------------------------------------------------

/// PanB2 (`in, azimuth, gain`): a mono signal encoded as horizontal
/// B-format W, X, Y.
pub struct PanB2 {
    azimuth: f32,
    level: f32,
    amps: [f32; 3],
    simd: bool,
}

fn b2_gains(azimuth: f32, level: f32) -> [f32; 3] {
    let (sina, cosa, _) = azimuth_sin_cos(azimuth);
    [rsqrt2() * level, cosa * level, sina * level]
}

impl PanB2 {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64, simd: bool) {
        let n = io.n();
        let input = In::new(io, 0);
        let azimuth = in0(io, 1);
        let level = in0(io, 2);
        let [w, x, y] = io.outs::<3>();
        let mut outs = [w, x, y];
        if azimuth != self.azimuth || level != self.level {
            self.azimuth = azimuth;
            self.level = level;
            let next = b2_gains(azimuth, level);
            // The scalar loop interleaves the channels, the vector one runs
            // them one after another; each channel's values are the same.
            glide(&mut self.amps, next, n, sf, simd, |k, j, a| outs[k][j] = input.at(j) * a);
        } else {
            for (k, out) in outs.iter_mut().enumerate() {
                let a = self.amps[k];
                for (j, o) in out.iter_mut().enumerate() {
                    *o = input.at(j) * a;
                }
            }
        }
    }
}

impl Construct for PanB2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let azimuth = in0(io, 1);
        let level = in0(io, 2);
        let mut unit =
            PanB2 { azimuth, level, amps: b2_gains(azimuth, level), simd: ramp::simd_block(cx.rate.buf_length) };
        unit.run(io, cx.rate.slope_factor, false);
        unit
    }
}

impl Unit for PanB2 {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let simd = self.simd;
        self.run(io, cx.rate.slope_factor, simd);
    }
}

/// BiPanB2 (`inA, inB, azimuth, gain`): two signals panned to opposite
/// sides of a horizontal B-format field.
pub struct BiPanB2 {
    azimuth: f32,
    level: f32,
    amps: [f32; 3],
}

impl BiPanB2 {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64) {
        let a_in = In::new(io, 0);
        let b_in = In::new(io, 1);
        let azimuth = in0(io, 2);
        let level = in0(io, 3);
        let [wo, xo, yo] = io.outs::<3>();
        let [mut w, mut x, mut y] = self.amps;
        if azimuth != self.azimuth || level != self.level {
            self.azimuth = azimuth;
            self.level = level;
            let next = b2_gains(azimuth, level);
            let ws = ramp::calc_slope(next[0], w, sf);
            let xs = ramp::calc_slope(next[1], x, sf);
            let ys = ramp::calc_slope(next[2], y, sf);
            // A W gain that does not move is left as it was.
            let w_moves = ws != 0.0;
            for j in 0..wo.len() {
                let (a, b) = (a_in.at(j), b_in.at(j));
                let diff = a - b;
                wo[j] = (a + b) * w;
                xo[j] = diff * x;
                yo[j] = diff * y;
                if w_moves {
                    w += ws;
                }
                x += xs;
                y += ys;
            }
            self.amps = [w, x, y];
        } else {
            for j in 0..wo.len() {
                let (a, b) = (a_in.at(j), b_in.at(j));
                let diff = a - b;
                wo[j] = (a + b) * w;
                xo[j] = diff * x;
                yo[j] = diff * y;
            }
        }
    }
}

gliding_unit!(BiPanB2, |io| {
    let (azimuth, level) = (in0(io, 2), in0(io, 3));
    BiPanB2 { azimuth, level, amps: b2_gains(azimuth, level) }
});

// ---- PanB -------------------------------------------------------------------

/// PanB (`in, azimuth, elevation, gain`): first-order B-format W, X, Y, Z.
pub struct PanB {
    azimuth: f32,
    elevation: f32,
    level: f32,
    amps: [f32; 4],
}

fn b_gains(azimuth: f32, elevation: f32, level: f32) -> [f32; 4] {
    let sine = sine_table();
    let (sina, cosa, _) = azimuth_sin_cos(azimuth);
    // Elevation is given in quarter cycles (1 = straight up).
    let isin = SINE_MASK & c_long(elevation * 2048.0);
    let icos = SINE_MASK & (isin + QUARTER);
    let (sinb, cosb) = (sine[isin as usize], sine[icos as usize]);
    [rsqrt2() * level, cosa * cosb * level, sina * cosb * level, sinb * level]
}

impl PanB {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64) {
        let input = In::new(io, 0);
        let (azimuth, elevation, level) = (in0(io, 1), in0(io, 2), in0(io, 3));
        let outs = io.outs::<4>();
        let mut amps = self.amps;
        let n = outs[0].len();
        if azimuth != self.azimuth || elevation != self.elevation || level != self.level {
            self.azimuth = azimuth;
            self.elevation = elevation;
            self.level = level;
            let next = b_gains(azimuth, elevation, level);
            let slopes: [f32; 4] = std::array::from_fn(|k| ramp::calc_slope(next[k], amps[k], sf));
            for j in 0..n {
                let z = input.at(j);
                for k in 0..4 {
                    outs[k][j] = z * amps[k];
                    amps[k] += slopes[k];
                }
            }
            self.amps = amps;
        } else {
            for j in 0..n {
                let z = input.at(j);
                for k in 0..4 {
                    outs[k][j] = z * amps[k];
                }
            }
        }
    }
}

gliding_unit!(PanB, |io| {
    let (azimuth, elevation, level) = (in0(io, 1), in0(io, 2), in0(io, 3));
    PanB { azimuth, elevation, level, amps: b_gains(azimuth, elevation, level) }
});

// ---- PanAz --------------------------------------------------------------------

/// PanAz (`in, pos, level, width, orientation`): equal-power panning over
/// a ring of any number of speakers.
pub struct PanAz {
    /// Per-channel gains at the end of the last block (control-rate pos).
    chanamp: Vec<f32>,
    audio_pos: bool,
    simd: bool,
}

/// What a block's gains depend on besides the position.
struct Ring {
    level: f32,
    width: f32,
    orientation: f32,
    rwidth: f32,
    range: f32,
    rrange: f32,
}

impl Ring {
    fn read(io: &Wires<'_>, channels: usize) -> Ring {
        let level = in0(io, 2);
        // scsynth 3.13 takes the width as given (later versions use its
        // magnitude).
        let width = in0(io, 3);
        let orientation = in0(io, 4);
        let rwidth = (1.0 / width as f64) as f32;
        let range = channels as f32 * rwidth;
        let rrange = (1.0 / range as f64) as f32;
        Ring { level, width, orientation, rwidth, range, rrange }
    }

    /// The gain of a channel whose (width-scaled) distance from the source
    /// is `chanpos`: half a sine lobe, zero outside it.
    #[inline(always)]
    fn gain(&self, chanpos: f32) -> f32 {
        let chanpos = chanpos - self.range * (self.rrange * chanpos).floor();
        if chanpos >= 1.0 {
            0.0
        } else {
            let idx = c_long(4096.0 * chanpos);
            let s = usize::try_from(idx).ok().and_then(|i| sine_table().get(i)).copied().unwrap_or(0.0);
            self.level * s
        }
    }
}

impl PanAz {
    fn next_ak(&mut self, io: &mut Wires<'_>, sf: f64, simd: bool) {
        let channels = self.chanamp.len();
        let ring = Ring::read(io, channels);
        let input = In::new(io, 0);
        let pos = in0(io, 1) * 0.5 * channels as f32 + ring.width * 0.5 + ring.orientation;
        for i in 0..channels {
            let chanpos = (pos - i as f32) * ring.rwidth;
            let next = ring.gain(chanpos);
            let amp = self.chanamp[i];
            let out = io.out(i);
            if next == amp {
                if next == 0.0 {
                    out.fill(0.0);
                } else {
                    for (j, o) in out.iter_mut().enumerate() {
                        *o = input.at(j) * amp;
                    }
                }
            } else {
                let slope = ramp::calc_slope(next, amp, sf);
                ramp::ramp(simd, out.len(), amp, slope, |j, a| out[j] = input.at(j) * a);
                self.chanamp[i] = next;
            }
        }
    }

    fn next_aa(&mut self, io: &mut Wires<'_>) {
        let channels = self.chanamp.len();
        let ring = Ring::read(io, channels);
        let fac = 0.5 * channels as f32;
        let offset = ring.width * 0.5 + ring.orientation;
        let input = In::new(io, 0);
        let pos = In::new(io, 1);
        for i in 0..channels {
            let out = io.out(i);
            for (j, o) in out.iter_mut().enumerate() {
                let chanpos = ((pos.at(j) * fac + offset) - i as f32) * ring.rwidth;
                *o = input.at(j) * ring.gain(chanpos);
            }
        }
    }
}

impl Construct for PanAz {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let channels = io.num_outputs();
        let audio_pos = io.num_inputs() > 1 && io.in_rate(1) == Rate::Audio;
        let mut unit =
            PanAz { chanamp: vec![0.0; channels], audio_pos, simd: ramp::simd_block(cx.rate.buf_length) };
        if audio_pos {
            unit.next_aa(io);
        } else {
            // Gains start at zero and reach their values over the first sample.
            unit.next_ak(io, cx.rate.slope_factor, false);
        }
        unit
    }
}

impl Unit for PanAz {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.audio_pos {
            self.next_aa(io);
        } else {
            let simd = self.simd;
            self.next_ak(io, cx.rate.slope_factor, simd);
        }
    }
}

// ---- DecodeB2 -------------------------------------------------------------------

/// DecodeB2 (`w, x, y, orientation`): horizontal B-format decoded to a ring
/// of speakers.
pub struct DecodeB2 {
    cosa: f32,
    sina: f32,
    w_amp: f32,
    x_amp: f32,
    y_amp: f32,
}

impl DecodeB2 {
    fn run(&self, io: &mut Wires<'_>) {
        let (w_in, x_in, y_in) = (In::new(io, 0), In::new(io, 1), In::new(io, 2));
        let (w_amp, mut x_amp, mut y_amp) = (self.w_amp, self.x_amp, self.y_amp);
        for i in 0..io.num_outputs() {
            let out = io.out(i);
            for (j, o) in out.iter_mut().enumerate() {
                *o = w_in.at(j) * w_amp + x_in.at(j) * x_amp + y_in.at(j) * y_amp;
            }
            // Each next speaker is one step further round the ring.
            let x_next = x_amp * self.cosa + y_amp * self.sina;
            y_amp = y_amp * self.cosa - x_amp * self.sina;
            x_amp = x_next;
        }
    }
}

impl Construct for DecodeB2 {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        // scsynth computes the first sample before it sets the gains, from a
        // freshly allocated unit whose gains are still zero.
        let silent = DecodeB2 { cosa: 0.0, sina: 0.0, w_amp: 0.0, x_amp: 0.0, y_amp: 0.0 };
        silent.run(io);
        let orientation = in0(io, 3);
        let angle = std::f32::consts::TAU / io.num_outputs().max(1) as f32;
        DecodeB2 {
            cosa: angle.cos(),
            sina: angle.sin(),
            w_amp: std::f32::consts::FRAC_1_SQRT_2,
            x_amp: 0.5 * (orientation * angle).cos(),
            y_amp: 0.5 * (orientation * angle).sin(),
        }
    }
}

impl Unit for DecodeB2 {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        self.run(io);
    }
}

// ---- Rotate2 ----------------------------------------------------------------------

/// Rotate2 (`x, y, pos`): rotates a sound field (or an XY pair) by `pos`
/// half cycles.
pub struct Rotate2 {
    pos: f32,
    sint: f32,
    cost: f32,
}

fn rotation(pos: f32) -> (f32, f32) {
    let sine = sine_table();
    let isin = (SINE_MASK as i32) & c_int(pos * 4096.0);
    let icos = (SINE_MASK as i32) & (QUARTER as i32 + isin);
    (sine[isin as usize], sine[icos as usize])
}

impl Rotate2 {
    fn run(&mut self, io: &mut Wires<'_>, sf: f64) {
        let (x_in, y_in) = (In::new(io, 0), In::new(io, 1));
        let pos = in0(io, 2);
        let [xo, yo] = io.outs::<2>();
        let (mut sint, mut cost) = (self.sint, self.cost);
        if pos != self.pos {
            let (next_sin, next_cos) = rotation(pos);
            self.sint = next_sin;
            self.cost = next_cos;
            let sf = sf as f32;
            let sin_slope = (next_sin - sint) * sf;
            let cos_slope = (next_cos - cost) * sf;
            for j in 0..xo.len() {
                let (x, y) = (x_in.at(j), y_in.at(j));
                xo[j] = cost * x + sint * y;
                yo[j] = cost * y - sint * x;
                sint += sin_slope;
                cost += cos_slope;
            }
            self.pos = pos;
        } else {
            for j in 0..xo.len() {
                let (x, y) = (x_in.at(j), y_in.at(j));
                xo[j] = cost * x + sint * y;
                yo[j] = cost * y - sint * x;
            }
        }
    }
}

gliding_unit!(Rotate2, |io| {
    let pos = in0(io, 2);
    let (sint, cost) = rotation(pos);
    Rotate2 { pos, sint, cost }
});

#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;

    fn panaz(channels: usize, pos: TestInput) -> Vec<Vec<f32>> {
        UnitHarness::new("PanAz", Rate::Audio)
            .outputs(channels)
            .inputs([TestInput::Const(1.0), pos, TestInput::Const(1.0), TestInput::Const(2.0), TestInput::Const(0.0)])
            .run(2)
    }

    #[test]
    fn panaz_at_a_speaker_sends_everything_there() {
        // With orientation 0 speaker 0 is at the front; of four, each is half a unit further.
        for (pos, speaker) in [(0.0f32, 0usize), (0.5, 1), (1.0, 2), (-0.5, 3)] {
            for input in [TestInput::Control(vec![pos]), TestInput::Audio(vec![pos; 128])] {
                let out = panaz(4, input);
                for (k, ch) in out.iter().enumerate() {
                    let want = if k == speaker { 1.0 } else { 0.0 };
                    assert!((ch[100] - want).abs() < 1e-6, "pos {pos} ch {k}: {}", ch[100]);
                }
            }
        }
    }

    #[test]
    fn panaz_between_two_speakers_keeps_power() {
        let out = panaz(4, TestInput::Control(vec![0.25]));
        let power: f32 = out.iter().map(|ch| ch[100] * ch[100]).sum();
        assert!((power - 1.0).abs() < 1e-3, "{power}");
        assert!((out[0][100] - out[1][100]).abs() < 1e-3);
    }

    #[test]
    fn panb2_front_is_all_x_and_left_is_all_y() {
        let run = |az: f32| {
            UnitHarness::new("PanB2", Rate::Audio)
                .outputs(3)
                .inputs([TestInput::Const(1.0), TestInput::Control(vec![az]), TestInput::Const(1.0)])
                .run(1)
                .iter()
                .map(|o| o[10])
                .collect::<Vec<f32>>()
        };
        let front = run(0.0);
        assert!((front[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!((front[1], front[2].abs()), (1.0, 0.0));
        // Azimuth 0.5 is a quarter turn to the left: scsynth's Y is negated there.
        let side = run(0.5);
        assert!(side[1].abs() < 1e-6 && (side[2].abs() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn decodeb2_recovers_a_panned_source_loudest_at_its_speaker() {
        // A source straight ahead (W = 1/sqrt2, X = 1, Y = 0) into four speakers
        // with orientation 0: speaker 0 faces front.
        let out = UnitHarness::new("DecodeB2", Rate::Audio)
            .outputs(4)
            .inputs([
                TestInput::Const(std::f32::consts::FRAC_1_SQRT_2),
                TestInput::Const(1.0),
                TestInput::Const(0.0),
                TestInput::Const(0.0),
            ])
            .run(1);
        let levels: Vec<f32> = out.iter().map(|o| o[5]).collect();
        let loudest = levels.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i);
        assert_eq!(loudest, Some(0), "{levels:?}");
        assert!((levels[1] - levels[3]).abs() < 1e-6);
    }

    #[test]
    fn rotate2_by_a_half_turn_swaps_sign() {
        let out = UnitHarness::new("Rotate2", Rate::Audio)
            .outputs(2)
            .inputs([TestInput::Const(0.3), TestInput::Const(-0.2), TestInput::Const(1.0)])
            .run(1);
        assert!((out[0][7] + 0.3).abs() < 1e-6 && (out[1][7] - 0.2).abs() < 1e-6);
    }
}
