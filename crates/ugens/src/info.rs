//! Constant and informational units (DC, Silent, SampleRate, BufFrames ...)
//! and bad-value checks (CheckBadValues, Sanitize: [`checks`]).
//!
//! The server-information units (SampleRate, NumBuffers, ...) write their
//! value once at construction and never run again, as in scsynth. The buffer
//! information units re-read their buffer every block.

mod checks;

pub use checks::{CheckBadValues, Sanitize};

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::common::buffer::{buf_sample_dur, resolve_buffer};

/// DC: outputs its input's value, fixed at construction.
pub struct Dc {
    value: f32,
}

impl Construct for Dc {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let value = io.in0(0);
        io.out(0).fill(value);
        Dc { value }
    }
}

impl Unit for Dc {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        let v = self.value;
        io.out(0).fill(v);
    }
}

/// A unit whose single output is fixed at construction.
pub struct Fixed;

impl Unit for Fixed {
    fn next(&mut self, _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {}
}

/// Writes `value` as the unit's output value.
fn fixed(io: &mut Wires<'_>, value: f32) -> Box<dyn Unit> {
    io.out(0)[0] = value;
    Box::new(Fixed)
}

macro_rules! info_unit {
    ($fn_name:ident, |$cx:ident| $value:expr) => {
        pub(crate) fn $fn_name(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, $cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
            fixed(io, $value)
        }
    };
}

info_unit!(sample_rate, |cx| cx.world.sample_rate as f32);
info_unit!(sample_dur, |cx| cx.world.full_rate.sample_dur as f32);
info_unit!(control_rate, |cx| cx.world.buf_rate.sample_rate as f32);
info_unit!(control_dur, |cx| cx.world.full_rate.buf_duration as f32);
info_unit!(radians_per_sample, |cx| cx.world.full_rate.radians_per_sample as f32);
info_unit!(block_size, |cx| cx.world.full_rate.buf_length as f32);
info_unit!(subsample_offset, |cx| cx.synth.subsample_offset);
info_unit!(num_input_buses, |cx| cx.world.num_input_channels as f32);
info_unit!(num_output_buses, |cx| cx.world.num_output_channels as f32);
info_unit!(num_audio_buses, |cx| cx.world.num_audio_buses() as f32);
info_unit!(num_control_buses, |cx| cx.world.num_control_buses() as f32);
info_unit!(num_buffers, |cx| cx.world.num_bufs() as f32);
info_unit!(node_id, |cx| cx.synth.node_id as f32);

/// NumRunningSynths: how many synths the server has, read once (scalar rate) or every block.
struct NumRunningSynths;

impl Unit for NumRunningSynths {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        io.out(0)[0] = cx.world.num_synths as f32;
    }
}

pub(crate) fn num_running_synths(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    if spec.rate == crate::unit::Rate::Scalar {
        return fixed(io, cx.world.num_synths as f32);
    }
    let mut unit = NumRunningSynths;
    unit.next(io, cx);
    Box::new(unit)
}

/// What a buffer information unit reports.
#[derive(Clone, Copy)]
enum BufInfoKind {
    SampleRate,
    RateScale,
    Samples,
    Frames,
    Channels,
    Dur,
}

pub struct BufInfo {
    kind: BufInfoKind,
}

impl BufInfo {
    fn value(&self, io: &Wires<'_>, cx: &UnitCtx<'_>) -> f32 {
        let Some(buf) = resolve_buffer(cx.world, io.in0(0)) else {
            return 0.0;
        };
        match self.kind {
            BufInfoKind::SampleRate => buf.sample_rate as f32,
            BufInfoKind::RateScale => (buf.sample_rate * cx.world.full_rate.sample_dur) as f32,
            BufInfoKind::Samples => buf.samples() as f32,
            BufInfoKind::Frames => buf.frames as f32,
            BufInfoKind::Channels => buf.channels as f32,
            BufInfoKind::Dur => (buf.frames as f64 * buf_sample_dur(buf)) as f32,
        }
    }

    fn build(kind: BufInfoKind, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
        let unit = BufInfo { kind };
        let v = unit.value(io, cx);
        io.out(0)[0] = v;
        Box::new(unit)
    }
}

impl Unit for BufInfo {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let v = self.value(io, cx);
        io.out(0)[0] = v;
    }
}

macro_rules! buf_info_unit {
    ($fn_name:ident, $kind:ident) => {
        pub(crate) fn $fn_name(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
            BufInfo::build(BufInfoKind::$kind, io, cx)
        }
    };
}

buf_info_unit!(buf_sample_rate, SampleRate);
buf_info_unit!(buf_rate_scale, RateScale);
buf_info_unit!(buf_samples, Samples);
buf_info_unit!(buf_frames, Frames);
buf_info_unit!(buf_channels, Channels);
buf_info_unit!(buf_dur, Dur);

// ---- Silent -----------------------------------------------------

/// Silent: every output is zero.
pub struct Silent;

impl Construct for Silent {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        io.clear_outputs();
        Silent
    }
}

impl Unit for Silent {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        io.clear_outputs();
    }
}


#[cfg(test)]
mod tests {
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::Rate;
    use crate::world::SndBuf;

    fn info(name: &str) -> f32 {
        UnitHarness::new(name, Rate::Scalar).run_full(0).initial[0]
    }

    #[test]
    fn server_information_reflects_the_world() {
        assert_eq!(info("SampleRate"), 48_000.0);
        assert_eq!(info("SampleDur"), 1.0 / 48_000.0);
        assert_eq!(info("ControlRate"), 750.0);
        assert_eq!(info("ControlDur"), 64.0 / 48_000.0);
        assert_eq!(info("BlockSize"), 64.0);
        assert_eq!(info("RadiansPerSample"), (std::f64::consts::TAU / 48_000.0) as f32);
        assert_eq!(info("NumOutputBuses"), 2.0);
        assert_eq!(info("NumInputBuses"), 2.0);
        assert_eq!(info("NumAudioBuses"), 128.0);
        assert_eq!(info("NumControlBuses"), 4096.0);
        assert_eq!(info("NumBuffers"), 16.0);
    }

    #[test]
    fn subsample_offset_comes_from_the_synth() {
        let mut h = UnitHarness::new("SubsampleOffset", Rate::Scalar);
        h.synth.subsample_offset = 0.25;
        assert_eq!(h.run_full(0).initial[0], 0.25);
    }

    #[test]
    fn buffer_information_describes_the_buffer() {
        let mk = |name: &str| {
            let mut h = UnitHarness::new(name, Rate::Control).input(TestInput::Const(3.0));
            h.world.buffers[3] = SndBuf::new(24_000, 2, 24_000.0);
            h.run(1)[0][0]
        };
        assert_eq!(mk("BufFrames"), 24_000.0);
        assert_eq!(mk("BufSamples"), 48_000.0);
        assert_eq!(mk("BufChannels"), 2.0);
        assert_eq!(mk("BufSampleRate"), 24_000.0);
        assert_eq!(mk("BufDur"), 1.0);
        assert_eq!(mk("BufRateScale"), 0.5);
    }

    #[test]
    fn a2k_takes_the_first_sample_and_silent_is_silent() {
        let sig: Vec<f32> = (0..128).map(|i| i as f32).collect();
        let out = UnitHarness::new("A2K", Rate::Control).input(TestInput::Audio(sig)).run(2);
        assert_eq!(out[0], vec![0.0, 64.0]);
        let s = UnitHarness::new("Silent", Rate::Audio).run(1);
        assert!(s[0].iter().all(|&x| x == 0.0));
    }
}
