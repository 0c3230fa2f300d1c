use crate::common::spectrum::{self as coord, Coord};
use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;

fn sine(freq: f32, len: usize) -> Vec<f32> {
    (0..len).map(|i| (std::f32::consts::TAU * freq * i as f32 / 48_000.0).sin()).collect()
}

/// FFT on buffer 2 (512 frames) of `input`, with `hop` and `active`.
fn fft_harness(input: Vec<f32>, hop: f32, active: TestInput, wintype: f32) -> UnitHarness {
    let mut h = UnitHarness::new("FFT", Rate::Control).inputs([
        TestInput::Const(2.0),
        TestInput::Audio(input),
        TestInput::Const(hop),
        TestInput::Const(wintype),
        active,
        TestInput::Const(0.0),
    ]);
    h.world.buffers[2] = SndBuf::new(512, 1, 48_000.0);
    h
}

#[test]
fn fft_names_its_buffer_once_per_hop_and_minus_one_in_between() {
    let run = fft_harness(sine(1500.0, 64 * 16), 0.5, TestInput::Const(1.0), 1.0).run_full(16);
    assert_eq!(run.initial[0], 2.0);
    // 256-sample hops are four blocks: the frame is ready on every fourth block.
    let want: Vec<f32> = (0..16).map(|b| if b % 4 == 3 { 2.0 } else { -1.0 }).collect();
    assert_eq!(run.outputs[0], want);
}

#[test]
fn an_inactive_fft_keeps_its_chain_at_minus_one() {
    let out = fft_harness(sine(1500.0, 64 * 16), 0.25, TestInput::Control(vec![0.0]), 1.0).run(16);
    assert!(out[0].iter().all(|&v| v == -1.0));
}

#[test]
fn fft_spectrum_peaks_at_the_sines_bin() {
    // 1500 Hz is bin 16 of a 512-point transform at 48 kHz.
    let run = fft_harness(sine(1500.0, 64 * 8), 1.0, TestInput::Const(1.0), 1.0).run_full(8);
    assert_eq!(run.outputs[0][7], 2.0);
    let buf = &run.world.buffers[2];
    assert_eq!(coord::coord(buf), Coord::Complex);
    let mags: Vec<f32> = (1..256).map(|k| buf.data[2 * k].hypot(buf.data[2 * k + 1])).collect();
    let peak = mags.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, _)| i + 1);
    assert_eq!(peak, Some(16));
    // A Hann-windowed unit sine peaks at a quarter of the length.
    assert!((mags[15] - 128.0).abs() < 1.0, "peak magnitude {}", mags[15]);
}

#[test]
fn ifft_plays_a_frame_once_then_silence() {
    let mut h = UnitHarness::new("IFFT", Rate::Audio).inputs([
        TestInput::Control(vec![3.0, -1.0]),
        TestInput::Const(-1.0),
        TestInput::Const(0.0),
    ]);
    // A DC spectrum of 512 is a constant 1 after the 1/N scaling.
    let mut buf = SndBuf::new(512, 1, 48_000.0);
    buf.data[0] = 512.0;
    h.world.buffers[3] = buf;
    let out = h.run(10);
    assert!(out[0][..512].iter().all(|&x| (x - 1.0).abs() < 1e-6));
    assert!(out[0][512..].iter().all(|&x| x == 0.0));
}

#[test]
fn mag_above_zeroes_quiet_bins_and_leaves_the_buffer_polar() {
    let mut h = UnitHarness::new("PV_MagAbove", Rate::Control)
        .inputs([TestInput::Control(vec![1.0, -1.0]), TestInput::Const(0.5)]);
    let mut buf = SndBuf::new(8, 1, 48_000.0);
    buf.data.copy_from_slice(&[0.25, 2.0, 0.0, 1.0, 0.1, 0.1, -3.0, 0.0]);
    coord::set_coord(&mut buf, Coord::Complex);
    h.world.buffers[1] = buf;
    let run = h.run_full(2);
    assert_eq!(run.initial[0], 1.0);
    assert_eq!(run.outputs[0], vec![1.0, -1.0]);
    let buf = &run.world.buffers[1];
    assert_eq!(coord::coord(buf), Coord::Polar);
    assert_eq!(buf.data[0], 0.0, "quiet DC is removed");
    assert_eq!(buf.data[1], 2.0, "loud Nyquist stays");
    assert!((buf.data[2] - 1.0).abs() < 1e-3, "loud bin keeps its magnitude");
    assert_eq!(buf.data[4], 0.0, "quiet bin is removed");
    assert!((buf.data[6] - 3.0).abs() < 1e-2 && (buf.data[7] - std::f32::consts::PI).abs() < 1e-2);
}

#[test]
fn pv_units_with_two_chains_accept_the_same_buffer_twice() {
    let mut h = UnitHarness::new("PV_Mul", Rate::Control).inputs([TestInput::Const(0.0), TestInput::Const(0.0)]);
    let mut buf = SndBuf::new(8, 1, 48_000.0);
    buf.data.copy_from_slice(&[2.0, 3.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
    coord::set_coord(&mut buf, Coord::Complex);
    h.world.buffers[0] = buf;
    let run = h.run_full(1);
    let d = &run.world.buffers[0].data;
    assert_eq!(&d[..2], &[4.0, 9.0]);
    // The product is computed in scsynth's order, reading the first bin's
    // real part back after it was replaced: i*i comes out as (-1, -1).
    assert_eq!(&d[2..4], &[-1.0, -1.0]);
}

#[test]
fn mag_noise_scales_only_magnitudes_of_a_polar_spectrum() {
    let mut h = UnitHarness::new("PV_MagNoise", Rate::Control).input(TestInput::Const(0.0));
    let mut buf = SndBuf::new(8, 1, 48_000.0);
    buf.data.fill(1.0);
    coord::set_coord(&mut buf, Coord::Polar);
    h.world.buffers[0] = buf;
    let before = h.world.rgen;
    let run = h.run_full(1);
    assert_ne!(run.world.rgen, before);
    let d = &run.world.buffers[0].data;
    let mags = [d[0], d[1], d[2], d[4], d[6]];
    assert!(mags.iter().all(|&x| (-1.0..1.0).contains(&x)));
    assert_eq!([d[3], d[5], d[7]], [1.0; 3], "phases stay");
}
