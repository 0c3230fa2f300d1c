//! Behaviour of the convolvers on simple kernels.

use super::prepare_part_conv;
use crate::testing::{TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;

fn impulse_at(len: usize, at: usize) -> Vec<f32> {
    let mut v = vec![0.0; len];
    v[at] = 1.0;
    v
}

fn ramp(len: usize) -> Vec<f32> {
    (0..len).map(|i| ((i * 13 % 29) as f32 - 14.0) / 20.0).collect()
}

fn with_kernel(h: UnitHarness, bufnum: usize, kernel: &[f32]) -> UnitHarness {
    let mut h = h;
    let mut buf = SndBuf::new(kernel.len() as u32, 1, 48_000.0);
    buf.data.copy_from_slice(kernel);
    h.world.buffers[bufnum] = buf;
    h
}

/// Output sample `t` of a convolver with latency `delay`, against the
/// plain convolution of `x` with `k`.
fn assert_convolves(out: &[f32], x: &[f32], k: &[f32], delay: usize) {
    for t in delay..out.len() {
        let n = t - delay;
        let want: f32 = (0..k.len()).filter(|&j| j <= n && n - j < x.len()).map(|j| k[j] * x[n - j]).sum();
        assert!((out[t] - want).abs() < 1e-4, "sample {t}: {} vs {want}", out[t]);
    }
}

#[test]
fn convolution2_convolves_with_the_kernel_a_frame_less_a_block_late() {
    let x = ramp(64 * 12);
    let k = [0.5, 0.0, -0.25, 0.125];
    let h = UnitHarness::new("Convolution2", Rate::Audio).inputs([
        TestInput::Audio(x.clone()),
        TestInput::Const(0.0),
        TestInput::Const(0.0),
        TestInput::Const(128.0),
    ]);
    let out = with_kernel(h, 0, &k).run(12);
    assert_convolves(&out[0], &x, &k, 128 - 64);
}

#[test]
fn convolution_of_a_signal_with_a_shifted_impulse_shifts_it() {
    // The kernel signal is an impulse 5 samples into every frame.
    let frame = 256;
    let kernel: Vec<f32> = (0..frame * 6).map(|i| if i % frame == 5 { 1.0 } else { 0.0 }).collect();
    let x = ramp(frame * 6);
    let out = UnitHarness::new("Convolution", Rate::Audio)
        .inputs([TestInput::Audio(x.clone()), TestInput::Audio(kernel), TestInput::Const(frame as f32)])
        .run(24);
    assert_convolves(&out[0], &x, &impulse_at(6, 5), frame - 64);
}

#[test]
fn convolution2l_crossfades_to_a_new_kernel_on_a_trigger() {
    // DC through a unit impulse (buffer 0); the trigger at block 10 swaps in
    // half an impulse (buffer 1), faded in over two frames of two blocks.
    let h = UnitHarness::new("Convolution2L", Rate::Audio).inputs([
        TestInput::Audio(vec![1.0; 64 * 40]),
        TestInput::Control([vec![0.0; 10], vec![1.0; 30]].concat()),
        TestInput::Control([vec![0.0; 10], vec![1.0; 30]].concat()),
        TestInput::Const(128.0),
        TestInput::Const(2.0),
    ]);
    let h = with_kernel(h, 0, &impulse_at(128, 0));
    let mut half = impulse_at(128, 0);
    half[0] = 0.5;
    let out = &with_kernel(h, 1, &half).run(40)[0];
    assert!((out[64 * 8] - 1.0).abs() < 1e-5);
    let fading = &out[64 * 11..64 * 15];
    assert!(fading.iter().any(|&v| v < 0.99 && v > 0.51), "no crossfade");
    assert!(fading.windows(2).all(|w| w[1] <= w[0] + 1e-5), "the fade does not fall steadily");
    assert!(out[64 * 20..].iter().all(|&v| (v - 0.5).abs() < 1e-5));
}

#[test]
fn convolution3_adds_every_scaled_kernel_into_its_ring() {
    let k = [1.0, 0.5];
    let x = impulse_at(64 * 2, 0);
    let h = UnitHarness::new("Convolution3", Rate::Audio).inputs([
        TestInput::Audio(x),
        TestInput::Const(0.0),
        TestInput::Const(0.0),
        TestInput::Const(4.0),
    ]);
    let out = &with_kernel(h, 0, &k).run(1)[0];
    // The ring of 4 sums is never cleared: the impulse's response comes back every 4 samples.
    for (i, v) in out.iter().enumerate() {
        let want = [1.0, 0.5, 0.0, 0.0][i % 4];
        assert_eq!(*v, want, "sample {i}");
    }
}

#[test]
fn prepared_spectra_of_an_impulse_are_flat_in_every_partition() {
    let mut bufs = vec![SndBuf::new(3 * 64, 1, 48_000.0), SndBuf::new(100, 1, 48_000.0)];
    bufs[1].data[0] = 1.0;
    bufs[1].data[70] = 2.0;
    prepare_part_conv(&mut bufs, 0, &[1.0, 64.0]).unwrap();
    // 100 frames in halves of 32: 4 partitions would be needed; 3 fit.
    let p0 = &bufs[0].data[..64];
    assert_eq!((p0[0], p0[1]), (1.0, 1.0));
    assert!(p0[2..].chunks(2).all(|c| (c[0] - 1.0).abs() < 1e-6 && c[1].abs() < 1e-6));
    assert!(bufs[0].data[64..128].iter().all(|v| v.abs() < 1e-6));
    // The partition holding sample 70 (= 64 + 6): magnitude 2 in every bin.
    let p2 = &bufs[0].data[128..];
    assert!(p2[2..].chunks(2).all(|c| ((c[0] * c[0] + c[1] * c[1]).sqrt() - 2.0).abs() < 1e-5));
    assert!(prepare_part_conv(&mut bufs, 0, &[1.0, 48.0]).is_err());
}

#[test]
fn partconv_convolves_with_a_prepared_response_half_a_frame_less_a_block_late() {
    let ir = [0.5, 0.0, 0.0, 0.25];
    let mut ir_long = vec![0.0; 300];
    ir_long[..4].copy_from_slice(&ir);
    ir_long[299] = 0.125;
    let mut bufs = vec![SndBuf::new(3 * 256, 1, 48_000.0), SndBuf::new(300, 1, 48_000.0)];
    bufs[1].data.copy_from_slice(&ir_long);
    prepare_part_conv(&mut bufs, 0, &[1.0, 256.0]).unwrap();
    let x = ramp(64 * 20);
    let mut h = UnitHarness::new("PartConv", Rate::Audio).inputs([
        TestInput::Audio(x.clone()),
        TestInput::Const(256.0),
        TestInput::Const(0.0),
    ]);
    h.world.buffers[0] = bufs.swap_remove(0);
    let out = &h.run(20)[0];
    assert_convolves(out, &x, &ir_long, 128 - 64);
}

#[test]
fn a_missing_kernel_buffer_gives_silence() {
    let out = UnitHarness::new("Convolution2", Rate::Audio)
        .inputs([TestInput::Audio(ramp(256)), TestInput::Const(3.0), TestInput::Const(0.0), TestInput::Const(128.0)])
        .run(4);
    assert!(out[0].iter().all(|&v| v == 0.0));
}
