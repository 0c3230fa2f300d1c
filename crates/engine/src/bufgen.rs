//! `/b_gen`: fill or transform a buffer in place (sine1/2/3, cheby, copy,
//! normalize, wnormalize, cantorFill).
//!
//! The arithmetic follows scsynth's generators step for step (partials are
//! summed in `f64` and stored as `f32` after each one; normalising is done in
//! `f32`) so that the buffers come out bit for bit the same.

use std::f64::consts::PI;

use magnetar_protocol::Command;
use magnetar_ugens::SndBuf;

/// Rescale so the peak is 1 after filling.
const FLAG_NORMALIZE: i32 = 1;
/// Write the wavetable pair layout that Osc, Shaper and friends read.
const FLAG_WAVETABLE: i32 = 2;
/// Start from silence instead of adding to what the buffer holds.
const FLAG_CLEAR: i32 = 4;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BufGenError {
    #[error("/b_gen: unknown command '{0}'")]
    UnknownCommand(String),
    #[error("/b_gen: buffer number {bufnum} out of range (the server has {count} buffers)")]
    BadBufnum { bufnum: usize, count: usize },
    #[error("/b_gen: buffer {0} is not allocated")]
    NotAllocated(usize),
    #[error("/b_gen PreparePartConv: {0}")]
    PreparePartConv(String),
}

/// The generators [`buffer_gen`] knows (a plugin's generator of the same
/// name is not used).
pub const BUILTIN: [&str; 9] =
    ["sine1", "sine2", "sine3", "cheby", "normalize", "wnormalize", "copy", "cantorFill", "PreparePartConv"];

/// Runs the `/b_gen` command `command` on buffer `bufnum`.
///
/// `args` are the command's arguments after its name, as floats (flags
/// first where the command takes them). Missing arguments read as 0, as
/// scsynth reads them; fills on buffers with more than one channel do
/// nothing, as in scsynth.
pub fn buffer_gen(buffers: &mut [SndBuf], bufnum: usize, command: &str, args: &[f32]) -> Result<(), BufGenError> {
    let count = buffers.len();
    let Some(buf) = buffers.get(bufnum) else {
        return Err(BufGenError::BadBufnum { bufnum, count });
    };
    if !buf.is_allocated() {
        return Err(BufGenError::NotAllocated(bufnum));
    }
    let mut args = Args::new(args);
    match command {
        "sine1" => fill(&mut buffers[bufnum], &mut args, Fill::Sine1),
        "sine2" => fill(&mut buffers[bufnum], &mut args, Fill::Sine2),
        "sine3" => fill(&mut buffers[bufnum], &mut args, Fill::Sine3),
        "cheby" => fill(&mut buffers[bufnum], &mut args, Fill::Cheby),
        "normalize" => {
            let peak = args.peak();
            normalize(samples_mut(&mut buffers[bufnum]), peak);
        }
        "wnormalize" => {
            let peak = args.peak();
            normalize_wavetable(samples_mut(&mut buffers[bufnum]), peak);
        }
        "copy" => copy(buffers, bufnum, &mut args),
        "cantorFill" => cantor_fill(samples_mut(&mut buffers[bufnum])),
        "PreparePartConv" => magnetar_ugens::convolution::prepare_part_conv(buffers, bufnum, args.rest)
            .map_err(|e| BufGenError::PreparePartConv(e.to_string()))?,
        _ => return Err(BufGenError::UnknownCommand(command.to_owned())),
    }
    Ok(())
}

/// The buffer a `/b_gen` generator reads besides its own, as it reads it
/// from its arguments (`args` as `buffer_gen` takes them): `copy`'s source
/// (the second argument), `PreparePartConv`'s and `MagnetarConvPrepare`'s
/// impulse response (the first). The number is read as unsigned, and one
/// past the last buffer (a negative one too) means buffer 0, as in scsynth.
/// None for generators that read no other buffer.
pub fn source_buffer(command: &str, args: &[f32], num_buffers: usize) -> Option<usize> {
    let position = match command {
        "copy" => 1,
        "PreparePartConv" | "MagnetarConvPrepare" => 0,
        _ => return None,
    };
    let mut args = Args::new(args.get(position..).unwrap_or(&[]));
    let source = args.geti() as u32 as usize;
    Some(if source >= num_buffers { 0 } else { source })
}

/// The buffer a `/b_gen` reads besides its own, as the generator reads it
/// ([`source_buffer`]): the real-time server's control side brings its
/// contents to the command.
pub fn gen_source_buffer(cmd: &Command, num_buffers: usize) -> Option<usize> {
    let Command::BGen { command, args, .. } = cmd else { return None };
    source_buffer(command, args, num_buffers)
}

/// Reads arguments in order; past the end every read is 0, like scsynth's
/// message iterator.
struct Args<'a> {
    rest: &'a [f32],
}

impl<'a> Args<'a> {
    fn new(rest: &'a [f32]) -> Args<'a> {
        Args { rest }
    }

    fn remain(&self) -> bool {
        !self.rest.is_empty()
    }

    fn getf(&mut self) -> f32 {
        match self.rest.split_first() {
            Some((&v, rest)) => {
                self.rest = rest;
                v
            }
            None => 0.0,
        }
    }

    /// An integer argument sent as a float truncates toward zero.
    fn geti(&mut self) -> i32 {
        self.getf() as i32
    }

    /// The optional target peak of normalize/wnormalize.
    fn peak(&mut self) -> f32 {
        if self.remain() {
            self.getf()
        } else {
            1.0
        }
    }
}

/// The buffer's samples, limited to its declared size.
fn samples_mut(buf: &mut SndBuf) -> &mut [f32] {
    let n = buf.samples().min(buf.data.len());
    &mut buf.data[..n]
}

#[derive(Clone, Copy)]
enum Fill {
    /// Amplitudes of harmonics 1, 2, 3...
    Sine1,
    /// (partial, amplitude) pairs.
    Sine2,
    /// (partial, amplitude, phase) triples.
    Sine3,
    /// Amplitudes of Chebyshev polynomials 1, 2, 3...
    Cheby,
}

fn fill(buf: &mut SndBuf, args: &mut Args<'_>, kind: Fill) {
    if buf.channels != 1 {
        return;
    }
    let flags = args.geti();
    let wavetable = flags & FLAG_WAVETABLE != 0;
    let data = samples_mut(buf);
    if flags & FLAG_CLEAR != 0 {
        data.fill(0.0);
    }

    let mut harmonic = 1.0f64;
    while args.remain() {
        match kind {
            Fill::Sine1 | Fill::Cheby => {
                let amp = f64::from(args.getf());
                match (kind, wavetable) {
                    (Fill::Cheby, false) => add_chebyshev(data, harmonic, amp),
                    (Fill::Cheby, true) => add_chebyshev_wavetable(data, harmonic, amp),
                    (_, false) => add_partial(data, harmonic, amp, 0.0),
                    (_, true) => add_partial_wavetable(data, harmonic, amp, 0.0),
                }
                harmonic += 1.0;
            }
            Fill::Sine2 | Fill::Sine3 => {
                let partial = f64::from(args.getf());
                let amp = f64::from(args.getf());
                let phase = if matches!(kind, Fill::Sine3) { f64::from(args.getf()) } else { 0.0 };
                if wavetable {
                    add_partial_wavetable(data, partial, amp, phase);
                } else {
                    add_partial(data, partial, amp, phase);
                }
            }
        }
    }

    if flags & FLAG_NORMALIZE != 0 {
        if wavetable {
            normalize_wavetable(data, 1.0);
        } else {
            normalize(data, 1.0);
        }
    }
}

/// Adds `amp * sin(phase + 2π·partial·i/size)`; the phase is accumulated,
/// not recomputed, to round the same way scsynth does.
fn add_partial(data: &mut [f32], partial: f64, amp: f64, mut phase: f64) {
    if amp == 0.0 {
        return;
    }
    let w = (partial * 2.0 * PI) / data.len() as f64;
    for x in data.iter_mut() {
        *x = (f64::from(*x) + amp * phase.sin()) as f32;
        phase += w;
    }
}

/// Like `add_partial`, over `size/2` points stored as wavetable pairs
/// `(2·cur − next, next − cur)`, so that `a + b·(1 + frac)` interpolates
/// linearly from `cur` to `next`.
fn add_partial_wavetable(data: &mut [f32], partial: f64, amp: f64, mut phase: f64) {
    if amp == 0.0 {
        return;
    }
    let points = data.len() >> 1;
    let w = (partial * 2.0 * PI) / points as f64;
    let mut cur = amp * phase.sin();
    phase += w;
    // An odd-sized buffer ends in half a pair: scsynth writes its first
    // half (the second falls past the end).
    for pair in data.chunks_mut(2) {
        let next = amp * phase.sin();
        pair[0] = (f64::from(pair[0]) + (2.0 * cur - next)) as f32;
        if let Some(b) = pair.get_mut(1) {
            *b = (f64::from(*b) + (next - cur)) as f32;
        }
        cur = next;
        phase += w;
    }
}

/// Adds `amp · T_n(x)` over x in [-1, 1), shifted so that T_n(0) maps to 0
/// (the offset keeps a waveshaper silent on silent input).
fn add_chebyshev(data: &mut [f32], order: f64, amp: f64) {
    if amp == 0.0 {
        return;
    }
    let w = 2.0 / data.len() as f64;
    let mut x = -1.0f64;
    let offset = -amp * (order * (PI * 0.5)).cos();
    for v in data.iter_mut() {
        *v = (f64::from(*v) + (amp * (order * x.acos()).cos() + offset)) as f32;
        x += w;
    }
}

/// `add_chebyshev` over `size/2` points in wavetable pair layout.
fn add_chebyshev_wavetable(data: &mut [f32], order: f64, amp: f64) {
    if amp == 0.0 {
        return;
    }
    let points = data.len() >> 1;
    let w = 2.0 / points as f64;
    let mut x = -1.0f64;
    let offset = -amp * (order * (PI * 0.5)).cos();
    let mut cur = amp * (order * x.acos()).cos() + offset;
    x += w;
    // As in add_partial_wavetable, a trailing half pair gets its first half.
    for pair in data.chunks_mut(2) {
        let next = amp * (order * x.acos()).cos() + offset;
        pair[0] = (f64::from(pair[0]) + (2.0 * cur - next)) as f32;
        if let Some(b) = pair.get_mut(1) {
            *b = (f64::from(*b) + (next - cur)) as f32;
        }
        cur = next;
        x += w;
    }
}

/// Scales so the largest magnitude becomes `peak` (silence stays silent).
fn normalize(data: &mut [f32], peak: f32) {
    let max = data.iter().fold(0.0f32, |m, &x| if x.abs() > m { x.abs() } else { m });
    scale_to_peak(data, max, peak);
}

/// Scales a wavetable so its largest reconstructed sample (`a + b` of each
/// pair) becomes `peak`.
fn normalize_wavetable(data: &mut [f32], peak: f32) {
    let max = data.chunks_exact(2).fold(0.0f32, |m, p| {
        let v = (p[0] + p[1]).abs();
        if v > m {
            v
        } else {
            m
        }
    });
    scale_to_peak(data, max, peak);
}

fn scale_to_peak(data: &mut [f32], max: f32, peak: f32) {
    if max != 0.0 && max != peak {
        let factor = peak / max;
        for x in data.iter_mut() {
            *x *= factor;
        }
    }
}

/// `copy dest_frame source_bufnum source_frame frames`: copies whole frames
/// from another buffer (or this one) with the same channel count. Positions
/// are clamped into the buffers; `frames < 0` copies as much as fits.
fn copy(buffers: &mut [SndBuf], dest: usize, args: &mut Args<'_>) {
    let source = source_buffer("copy", args.rest, buffers.len()).unwrap_or(0);
    let to_pos = args.geti();
    let _source = args.geti();
    let from_pos = args.geti();
    let length = args.geti();

    let (dest_frames, channels) = (buffers[dest].frames as i64, buffers[dest].channels);
    let (source_frames, source_channels) = (buffers[source].frames as i64, buffers[source].channels);
    if channels != source_channels {
        return;
    }

    let from_pos = i64::from(from_pos).min(source_frames - 1).max(0);
    let to_pos = i64::from(to_pos).min(dest_frames - 1).max(0);
    let max_length = (source_frames - from_pos).min(dest_frames - to_pos);
    let length = if length < 0 { max_length } else { i64::from(length).min(max_length) };
    if length <= 0 {
        return;
    }

    let ch = channels as usize;
    let n = length as usize * ch;
    let from = from_pos as usize * ch;
    let to = to_pos as usize * ch;
    if source == dest {
        let data = samples_mut(&mut buffers[dest]);
        if from + n <= data.len() && to + n <= data.len() {
            data.copy_within(from..from + n, to);
        }
        return;
    }
    let (src, dst) = if source < dest {
        let (lo, hi) = buffers.split_at_mut(dest);
        (&lo[source], &mut hi[0])
    } else {
        let (lo, hi) = buffers.split_at_mut(source);
        (&hi[0], &mut lo[dest])
    };
    if let (Some(from_slice), Some(to_slice)) = (src.data.get(from..from + n), dst.data.get_mut(to..to + n)) {
        to_slice.copy_from_slice(from_slice);
    }
}

/// Adds 1 at every index whose base-3 digits contain no 1 (the Cantor set).
fn cantor_fill(data: &mut [f32]) {
    for (i, x) in data.iter_mut().enumerate() {
        let mut j = i;
        let mut in_set = true;
        while j > 0 && in_set {
            if j % 3 == 1 {
                in_set = false;
            }
            j /= 3;
        }
        if in_set {
            *x += 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;


    #[test]
    fn b_gen_reads_its_source_buffer_as_the_generator_does() {
        let s = |command: &str, args: &[f32]| {
            let cmd = Command::BGen { buffer: 0, command: command.into(), args: args.to_vec(), rest: Vec::new() };
            gen_source_buffer(&cmd, 8)
        };
        // copy: destination start, source, source start, frames.
        assert_eq!(s("copy", &[0.0, 3.0, 0.0, -1.0]), Some(3));
        assert_eq!(s("copy", &[0.0, 2.7]), Some(2));
        // Out of range: buffer 0, as the generator reads it.
        assert_eq!(s("copy", &[0.0, 99.0]), Some(0));
        assert_eq!(s("copy", &[0.0, -2.0]), Some(0));
        assert_eq!(s("PreparePartConv", &[4.0, 2048.0]), Some(4));
        // Out of range: buffer 0, which the generator then reads.
        assert_eq!(s("PreparePartConv", &[40.0, 2048.0]), Some(0));
        assert_eq!(s("MagnetarConvPrepare", &[-3.0]), Some(0));
        assert_eq!(s("sine1", &[7.0, 1.0]), None);
        // Not a `/b_gen`: no source.
        assert_eq!(gen_source_buffer(&Command::BZero { buffer: 1, completion: None }, 8), None);
    }

    fn mono(frames: u32) -> Vec<SndBuf> {
        vec![SndBuf::new(frames, 1, 44100.0)]
    }

    fn peak(data: &[f32]) -> f32 {
        data.iter().fold(0.0f32, |m, x| m.max(x.abs()))
    }

    #[test]
    fn sine1_with_one_harmonic_is_one_cycle_of_a_sine_at_the_given_amplitude() {
        let mut bufs = mono(512);
        buffer_gen(&mut bufs, 0, "sine1", &[4.0, 0.5]).unwrap();
        let d = &bufs[0].data;
        assert!((peak(d) - 0.5).abs() < 1e-6);
        assert!((d[128] - 0.5).abs() < 1e-6, "quarter cycle is the positive peak");
        assert!((d[384] + 0.5).abs() < 1e-6, "three-quarter cycle is the negative peak");
        assert_eq!(d[0], 0.0);
        for (i, &x) in d.iter().enumerate() {
            let want = 0.5 * (2.0 * std::f64::consts::PI * i as f64 / 512.0).sin();
            assert!((f64::from(x) - want).abs() < 1e-6, "sample {i}");
        }
    }

    #[test]
    fn sine1_without_clear_adds_to_what_is_there() {
        let mut bufs = mono(64);
        bufs[0].data.fill(0.25);
        buffer_gen(&mut bufs, 0, "sine1", &[0.0, 1.0]).unwrap();
        assert!((bufs[0].data[16] - 1.25).abs() < 1e-6);
        buffer_gen(&mut bufs, 0, "sine1", &[4.0, 1.0]).unwrap();
        assert!((bufs[0].data[16] - 1.0).abs() < 1e-6, "clear flag starts from silence");
    }

    #[test]
    fn normalize_flag_makes_the_peak_one() {
        let mut bufs = mono(1024);
        buffer_gen(&mut bufs, 0, "sine1", &[5.0, 1.0, 0.5, 0.33]).unwrap();
        assert_eq!(peak(&bufs[0].data), 1.0);
    }

    #[test]
    fn normalize_command_scales_to_the_requested_peak() {
        let mut bufs = mono(8);
        bufs[0].data.copy_from_slice(&[0.1, -0.4, 0.2, 0.0, 0.3, -0.1, 0.05, 0.2]);
        buffer_gen(&mut bufs, 0, "normalize", &[]).unwrap();
        assert_eq!(peak(&bufs[0].data), 1.0);
        assert!((bufs[0].data[0] - 0.25).abs() < 1e-6, "shape is kept");
        buffer_gen(&mut bufs, 0, "normalize", &[0.5]).unwrap();
        assert_eq!(peak(&bufs[0].data), 0.5);
    }

    #[test]
    fn wavetable_flag_writes_pairs_that_reconstruct_the_sine() {
        let mut bufs = mono(1024);
        buffer_gen(&mut bufs, 0, "sine1", &[6.0, 1.0]).unwrap();
        let d = &bufs[0].data;
        let points = 512;
        for k in 0..points {
            let (a, b) = (d[2 * k], d[2 * k + 1]);
            let want = (2.0 * std::f64::consts::PI * k as f64 / points as f64).sin();
            // The value at point k is a + b; halfway to k+1 it is a + 1.5 b.
            assert!((f64::from(a + b) - want).abs() < 1e-5, "point {k}");
            let next = (2.0 * std::f64::consts::PI * (k + 1) as f64 / points as f64).sin();
            assert!((f64::from(a + 1.5 * b) - (want + next) / 2.0).abs() < 1e-5, "midpoint {k}");
        }
    }

    #[test]
    fn wnormalize_uses_the_reconstructed_samples() {
        let mut bufs = mono(512);
        buffer_gen(&mut bufs, 0, "sine1", &[6.0, 0.25]).unwrap();
        buffer_gen(&mut bufs, 0, "wnormalize", &[]).unwrap();
        let max = bufs[0].data.chunks(2).fold(0.0f32, |m, p| m.max((p[0] + p[1]).abs()));
        // Each half of a pair is scaled separately, so the sum may be off by an ulp.
        assert!((max - 1.0).abs() < 1e-6, "{max}");
    }

    #[test]
    fn sine2_and_sine3_place_partials_and_phases() {
        let mut bufs = mono(400);
        buffer_gen(&mut bufs, 0, "sine2", &[4.0, 3.0, 0.5]).unwrap();
        assert!((bufs[0].data[100 / 3] - 0.5 * (2.0 * std::f32::consts::PI * 3.0 * 33.0 / 400.0).sin()).abs() < 1e-5);
        buffer_gen(&mut bufs, 0, "sine3", &[4.0, 1.0, 1.0, std::f32::consts::FRAC_PI_2]).unwrap();
        assert!((bufs[0].data[0] - 1.0).abs() < 1e-6, "a quarter-cycle phase starts at the peak");
    }

    #[test]
    fn cheby_first_order_maps_input_to_itself() {
        let mut bufs = mono(256);
        buffer_gen(&mut bufs, 0, "cheby", &[4.0, 1.0]).unwrap();
        for (i, &y) in bufs[0].data.iter().enumerate() {
            let x = -1.0 + 2.0 * i as f64 / 256.0;
            assert!((f64::from(y) - x).abs() < 1e-6, "index {i}");
        }
    }

    #[test]
    fn cheby_second_order_is_shifted_to_pass_through_zero() {
        let mut bufs = mono(256);
        buffer_gen(&mut bufs, 0, "cheby", &[4.0, 0.0, 1.0]).unwrap();
        // T2(x) = 2x² − 1, offset by +1 so that x = 0 gives 0.
        assert!(bufs[0].data[128].abs() < 1e-6);
        assert!((bufs[0].data[0] - 2.0).abs() < 1e-6);
    }

    #[test]
    fn copy_moves_the_requested_frames_between_buffers() {
        let mut bufs = vec![SndBuf::new(10, 2, 44100.0), SndBuf::new(6, 2, 44100.0)];
        for (i, x) in bufs[1].data.iter_mut().enumerate() {
            *x = i as f32 + 1.0;
        }
        buffer_gen(&mut bufs, 0, "copy", &[3.0, 1.0, 2.0, 2.0]).unwrap();
        assert_eq!(&bufs[0].data[..6], &[0.0; 6]);
        assert_eq!(&bufs[0].data[6..10], &[5.0, 6.0, 7.0, 8.0]);
        assert_eq!(&bufs[0].data[10..], &[0.0; 10]);
    }

    #[test]
    fn copy_with_negative_count_copies_as_much_as_fits() {
        let mut bufs = vec![SndBuf::new(4, 1, 44100.0), SndBuf::new(8, 1, 44100.0)];
        bufs[1].data.copy_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        buffer_gen(&mut bufs, 0, "copy", &[1.0, 1.0, 2.0, -1.0]).unwrap();
        assert_eq!(bufs[0].data, [0.0, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn copy_within_one_buffer_handles_overlap() {
        let mut bufs = mono(6);
        bufs[0].data.copy_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        buffer_gen(&mut bufs, 0, "copy", &[2.0, 0.0, 0.0, 3.0]).unwrap();
        assert_eq!(bufs[0].data, [1.0, 2.0, 1.0, 2.0, 3.0, 6.0]);
    }

    #[test]
    fn copy_between_different_channel_counts_changes_nothing() {
        let mut bufs = vec![SndBuf::new(4, 1, 44100.0), SndBuf::new(4, 2, 44100.0)];
        bufs[1].data.fill(1.0);
        buffer_gen(&mut bufs, 0, "copy", &[0.0, 1.0, 0.0, -1.0]).unwrap();
        assert_eq!(bufs[0].data, [0.0; 4]);
    }

    #[test]
    fn fills_leave_multichannel_buffers_alone() {
        let mut bufs = vec![SndBuf::new(8, 2, 44100.0)];
        buffer_gen(&mut bufs, 0, "sine1", &[4.0, 1.0]).unwrap();
        assert_eq!(bufs[0].data, [0.0; 16]);
    }

    #[test]
    fn cantor_fill_marks_the_cantor_set() {
        let mut bufs = mono(9);
        buffer_gen(&mut bufs, 0, "cantorFill", &[]).unwrap();
        assert_eq!(bufs[0].data, [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn unknown_command_is_reported_by_name() {
        let mut bufs = mono(8);
        let err = buffer_gen(&mut bufs, 0, "foo", &[]).unwrap_err();
        assert_eq!(err.to_string(), "/b_gen: unknown command 'foo'");
    }

    #[test]
    fn bad_or_unallocated_buffers_are_errors() {
        let mut bufs = vec![SndBuf::default(), SndBuf::new(8, 1, 44100.0)];
        assert_eq!(
            buffer_gen(&mut bufs, 5, "sine1", &[4.0, 1.0]),
            Err(BufGenError::BadBufnum { bufnum: 5, count: 2 })
        );
        assert_eq!(buffer_gen(&mut bufs, 0, "sine1", &[4.0, 1.0]), Err(BufGenError::NotAllocated(0)));
    }
}
