use crate::common::wavetable::{signal_as_wavetable, sine_tables, SINE_SIZE};
use crate::testing::{HarnessRun, TestInput, UnitHarness};
use crate::unit::Rate;
use crate::world::SndBuf;
use TestInput::{Audio, Const, Control};

const SR: f64 = 48_000.0;
const BS: usize = 64;
/// Blocks in one second at the harness's 48 kHz / 64.
const SECOND: usize = 750;

fn run(name: &str, rate: Rate, inputs: Vec<TestInput>, blocks: usize) -> HarnessRun {
    UnitHarness::new(name, rate).inputs(inputs).run_full(blocks)
}

fn ar(name: &str, inputs: Vec<TestInput>, blocks: usize) -> Vec<f32> {
    run(name, Rate::Audio, inputs, blocks).outputs.remove(0)
}

fn upward_crossings(sig: &[f32], level: f32) -> usize {
    sig.windows(2).filter(|w| w[0] < level && w[1] >= level).count()
}

fn range(sig: &[f32]) -> (f32, f32) {
    sig.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

fn mean(sig: &[f32]) -> f64 {
    sig.iter().map(|&x| x as f64).sum::<f64>() / sig.len() as f64
}

fn audio_const(v: f32, blocks: usize) -> TestInput {
    Audio(vec![v; blocks * BS])
}

// ----- SinOsc -----

#[test]
fn sinosc_runs_at_its_frequency_with_unit_amplitude() {
    let out = ar("SinOsc", vec![Const(440.0), Const(0.0)], SECOND);
    let n = upward_crossings(&out, 0.0);
    assert!((439..=441).contains(&n), "{n} crossings");
    let (lo, hi) = range(&out);
    assert!(hi > 0.9999 && hi <= 1.0001 && lo < -0.9999 && lo >= -1.0001, "{lo}..{hi}");
}

#[test]
fn sinosc_first_sample_follows_the_initial_phase() {
    let r = run("SinOsc", Rate::Audio, vec![Const(100.0), Const(std::f32::consts::FRAC_PI_2)], 1);
    assert!((r.initial[0] - 1.0).abs() < 1e-4, "{}", r.initial[0]);
    assert_eq!(r.initial[0], r.outputs[0][0], "constructor sample repeats as the first sample");
    let r = run("SinOsc", Rate::Audio, vec![Const(100.0), Const(0.0)], 1);
    assert!(r.initial[0].abs() < 1e-6);
}

#[test]
fn sinosc_audio_rate_inputs_give_the_same_tone_as_constants() {
    let blocks = 100;
    let k = ar("SinOsc", vec![Const(1000.0), Const(0.5)], blocks);
    let a = ar("SinOsc", vec![audio_const(1000.0, blocks), audio_const(0.5, blocks)], blocks);
    let ka = ar("SinOsc", vec![Const(1000.0), audio_const(0.5, blocks)], blocks);
    let ak = ar("SinOsc", vec![audio_const(1000.0, blocks), Const(0.5)], blocks);
    for sig in [&a, &ka, &ak] {
        let worst = k.iter().zip(sig.iter()).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
        assert!(worst < 1e-3, "differs by {worst}");
    }
}

#[test]
fn sinosc_control_rate_runs_at_block_rate() {
    // 7.5 Hz at a 750 Hz control rate: 7 or 8 upward crossings in a second.
    let r = run("SinOsc", Rate::Control, vec![Const(7.5), Const(0.0)], SECOND);
    let n = upward_crossings(&r.outputs[0], 0.0);
    assert!((7..=8).contains(&n), "{n}");
}

#[test]
fn sinosc_phase_modulation_by_a_control_input_moves_the_phase() {
    // Stepping the phase input by pi flips the sign of a 0 Hz oscillator.
    let r = run("SinOsc", Rate::Audio, vec![Const(0.0), Control(vec![std::f32::consts::FRAC_PI_2, -std::f32::consts::FRAC_PI_2])], 3);
    let out = &r.outputs[0];
    assert!((out[0] - 1.0).abs() < 1e-4);
    assert!((out[BS * 2] + 1.0).abs() < 1e-3, "{}", out[BS * 2]);
}

// ----- FSinOsc -----

#[test]
fn fsinosc_runs_at_its_frequency_with_unit_amplitude() {
    let out = ar("FSinOsc", vec![Const(440.0), Const(0.0)], SECOND);
    let n = upward_crossings(&out, 0.0);
    assert!((439..=441).contains(&n), "{n}");
    let (lo, hi) = range(&out);
    assert!((hi - 1.0).abs() < 1e-3 && (lo + 1.0).abs() < 1e-3, "{lo}..{hi}");
}

#[test]
fn fsinosc_starts_at_the_initial_phase_and_follows_frequency_changes() {
    let r = run("FSinOsc", Rate::Audio, vec![Const(1000.0), Const(std::f32::consts::FRAC_PI_2)], 1);
    assert!((r.initial[0] - 1.0).abs() < 1e-4, "{}", r.initial[0]);
    assert!((r.outputs[0][0] - 1.0).abs() < 1e-4);
    let blocks = SECOND;
    let freqs: Vec<f32> = (0..blocks).map(|b| if b < blocks / 2 { 200.0 } else { 800.0 }).collect();
    let out = ar("FSinOsc", vec![Control(freqs), Const(0.0)], blocks);
    let half = out.len() / 2;
    let n1 = upward_crossings(&out[..half], 0.0);
    let n2 = upward_crossings(&out[half..], 0.0);
    assert!((99..=101).contains(&n1) && (399..=401).contains(&n2), "{n1} {n2}");
}

// ----- Osc / OscN / COsc -----

fn sine_wavetable_buffer(size: usize) -> SndBuf {
    let signal: Vec<f32> = (0..size).map(|i| (i as f64 / size as f64 * std::f64::consts::TAU).sin() as f32).collect();
    let mut buf = SndBuf::new(2 * size as u32, 1, SR);
    signal_as_wavetable(&signal, &mut buf.data);
    buf
}

#[test]
fn osc_with_the_sine_wavetable_matches_sinosc_exactly() {
    let mut h = UnitHarness::new("Osc", Rate::Audio).inputs([Const(0.0), Const(330.0), Const(0.3)]);
    let mut buf = SndBuf::new(2 * SINE_SIZE as u32, 1, SR);
    buf.data.copy_from_slice(&sine_tables().wavetable);
    h.world.buffers[0] = buf;
    let r = h.run_full(50);
    let s = run("SinOsc", Rate::Audio, vec![Const(330.0), Const(0.3)], 50);
    assert_eq!(r.initial, s.initial);
    assert_eq!(r.outputs[0], s.outputs[0]);
}

#[test]
fn osc_plays_a_small_wavetable_at_its_frequency() {
    let mut h = UnitHarness::new("Osc", Rate::Audio).inputs([Const(3.0), Const(220.0), Const(0.0)]);
    h.world.buffers[3] = sine_wavetable_buffer(512);
    let out = h.run(SECOND).remove(0);
    let n = upward_crossings(&out, 0.0);
    assert!((219..=221).contains(&n), "{n}");
    assert!(range(&out).1 > 0.999);
}

#[test]
fn osc_outputs_silence_without_a_valid_wavetable() {
    // Buffer 0 is empty (not allocated).
    let r = run("Osc", Rate::Audio, vec![Const(0.0), Const(440.0), Const(0.0)], 4);
    assert_eq!(r.initial[0], 0.0);
    assert!(r.outputs[0].iter().all(|&x| x == 0.0));
    // A size that is not a power of two is refused too.
    let mut h = UnitHarness::new("Osc", Rate::Audio).inputs([Const(1.0), Const(440.0), Const(0.0)]);
    h.world.buffers[1] = SndBuf::new(1000, 1, SR);
    h.world.buffers[1].data.fill(0.5);
    assert!(h.run(4)[0].iter().all(|&x| x == 0.0));
}

#[test]
fn oscn_reads_table_values_without_interpolation() {
    let size = 256usize;
    let mut h = UnitHarness::new("OscN", Rate::Audio).inputs([Const(0.0), Const(375.0), Const(0.0)]);
    let mut buf = SndBuf::new(size as u32, 1, SR);
    for (i, x) in buf.data.iter_mut().enumerate() {
        *x = (i as f64 / size as f64 * std::f64::consts::TAU).sin() as f32;
    }
    let table = buf.data.clone();
    h.world.buffers[0] = buf;
    let out = h.run(SECOND).remove(0);
    assert!(out.iter().all(|x| table.contains(x)), "every sample is a table entry");
    let n = upward_crossings(&out, 0.0);
    assert!((374..=376).contains(&n), "{n}");
}

#[test]
fn cosc_sums_two_detuned_copies_that_beat() {
    let mut h = UnitHarness::new("COsc", Rate::Audio).inputs([Const(0.0), Const(500.0), Const(4.0)]);
    h.world.buffers[0] = sine_wavetable_buffer(1024);
    let out = h.run(SECOND).remove(0);
    let (lo, hi) = range(&out);
    assert!(hi > 1.99 && lo < -1.99, "{lo}..{hi}");
    let n = upward_crossings(&out, 0.0);
    assert!((495..=505).contains(&n), "{n}");
    // Beating at 4 Hz: the envelope nearly vanishes 4 times a second.
    let quiet = out.chunks(480).filter(|c| range(c).1 < 0.2).count();
    assert!((3..=12).contains(&quiet), "{quiet} quiet windows");
}

// ----- Saw / Pulse / Blip -----

#[test]
fn saw_repeats_at_its_frequency_as_falling_ramps() {
    let out = ar("Saw", vec![Const(200.0)], SECOND);
    let settled = &out[4800..];
    let n = upward_crossings(settled, 0.0);
    assert!((178..=182).contains(&n), "{n} crossings in 0.9 s");
    // The integrated impulse train jumps by 1 per cycle: about +-0.5.
    let (lo, hi) = range(settled);
    assert!(lo > -0.6 && lo < -0.4 && hi > 0.4 && hi < 0.6, "{lo}..{hi}");
    assert!(mean(settled).abs() < 0.1);
    let falling = settled.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(falling > settled.len() * 2 / 3, "{falling} falling of {}", settled.len());
}

#[test]
fn saw_constructor_writes_its_first_sample() {
    let r = run("Saw", Rate::Audio, vec![Const(200.0)], 1);
    assert_eq!(r.initial[0], r.outputs[0][0]);
}

#[test]
fn pulse_high_part_shrinks_as_width_grows() {
    // scsynth's Pulse rises at each cycle start and falls `width` of a
    // cycle before the next one, so it is high for 1 - width.
    for width in [0.25f32, 0.5, 0.75] {
        let r = run("Pulse", Rate::Audio, vec![Const(300.0), Const(width)], SECOND);
        assert_eq!(r.initial[0], 0.0);
        let out = &r.outputs[0][9600..];
        let (lo, hi) = range(out);
        let mid = (lo + hi) / 2.0;
        let high = out.iter().filter(|&&x| x > mid).count() as f64 / out.len() as f64;
        assert!((high - (1.0 - width as f64)).abs() < 0.05, "width {width}: high {high}");
        let n = upward_crossings(out, mid);
        assert!((238..=242).contains(&n), "{n}");
    }
}

#[test]
fn blip_has_one_peak_per_period_and_adapts_harmonics() {
    let out = ar("Blip", vec![Const(100.0), Const(20.0)], SECOND);
    let peaks = upward_crossings(&out, 0.5);
    assert!((99..=101).contains(&peaks), "{peaks}");
    assert!(range(&out).1 <= 1.0001);
    // Asking for more harmonics than fit below Nyquist stays finite.
    let out = ar("Blip", vec![Const(5000.0), Const(200.0)], 50);
    assert!(out.iter().all(|x| x.is_finite()));
    let r = run("Blip", Rate::Audio, vec![Const(100.0), Const(20.0)], 1);
    assert_eq!(r.initial[0], 1.0, "starts on the peak");
}

#[test]
fn formant_bursts_repeat_at_the_fundamental() {
    let out = ar("Formant", vec![Const(100.0), Const(1000.0), Const(200.0)], SECOND);
    let (lo, hi) = range(&out);
    assert!(hi <= 2.0 && lo >= -2.0 && hi > 1.0, "{lo}..{hi}");
    // Each 480-sample period holds one 1000 Hz burst of about 240 samples.
    let quiet = out.iter().filter(|&&x| x == 0.0).count() as f64 / out.len() as f64;
    assert!((0.4..0.6).contains(&quiet), "{quiet}");
}

// ----- LF oscillators -----

#[test]
fn lfsaw_ramps_from_the_initial_phase_and_wraps() {
    let r = run("LFSaw", Rate::Audio, vec![Const(100.0), Const(0.5)], SECOND);
    assert_eq!(r.initial[0], 0.5);
    let out = &r.outputs[0];
    let (lo, hi) = range(out);
    assert!(lo >= -1.0 && hi <= 1.0 && lo < -0.99 && hi > 0.99, "{lo}..{hi}");
    let drops = out.windows(2).filter(|w| w[1] < w[0]).count();
    assert!((99..=101).contains(&drops), "{drops}");
    // Negative frequencies ramp down.
    let out = ar("LFSaw", vec![Const(-100.0), Const(0.0)], 10);
    assert!(out.windows(2).filter(|w| w[1] > w[0]).count() <= 7);
}

#[test]
fn lfsaw_audio_rate_frequency_matches_control() {
    let k = ar("LFSaw", vec![Const(440.0), Const(0.0)], 20);
    let a = ar("LFSaw", vec![audio_const(440.0, 20), Const(0.0)], 20);
    assert_eq!(k, a);
}

#[test]
fn lfpulse_is_high_for_the_width_fraction() {
    let r = run("LFPulse", Rate::Audio, vec![Const(100.0), Const(0.0), Const(0.3)], SECOND);
    assert_eq!(r.initial[0], 1.0, "a cycle starts high");
    let out = &r.outputs[0];
    assert!(out.iter().all(|&x| x == 0.0 || x == 1.0));
    let high = out.iter().filter(|&&x| x == 1.0).count() as f64 / out.len() as f64;
    assert!((high - 0.3).abs() < 0.01, "{high}");
    assert!((99..=101).contains(&upward_crossings(out, 0.5)));
    let a = ar("LFPulse", vec![audio_const(100.0, 30), Const(0.0), Const(0.3)], 30);
    assert_eq!(&a[..], &out[..30 * BS]);
}

#[test]
fn lftri_lfpar_lfcub_span_minus_one_to_one_at_their_frequency() {
    for name in ["LFTri", "LFPar", "LFCub"] {
        let out = ar(name, vec![Const(50.0), Const(0.0)], SECOND);
        let (lo, hi) = range(&out);
        assert!(lo >= -1.0001 && hi <= 1.0001 && lo < -0.99 && hi > 0.99, "{name}: {lo}..{hi}");
        let n = upward_crossings(&out, 0.0);
        assert!((49..=51).contains(&n), "{name}: {n}");
        assert!(mean(&out).abs() < 0.01, "{name}");
        let a = ar(name, vec![audio_const(50.0, 40), Const(0.0)], 40);
        let worst = a.iter().zip(&out).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
        assert!(worst < 1e-4, "{name}: audio-rate frequency differs by {worst}");
    }
}

#[test]
fn lf_shapes_start_where_scsynth_starts_them() {
    // LFTri and LFPar start at 0 and 1; LFCub starts at its minimum... of
    // phase 0.5: z = 0.5 gives 0.
    let first = |name: &str| run(name, Rate::Audio, vec![Const(1.0), Const(0.0)], 1).initial[0];
    assert_eq!(first("LFTri"), 0.0);
    assert_eq!(first("LFPar"), 1.0);
    assert_eq!(first("LFCub"), 0.0);
}

#[test]
fn varsaw_starts_at_zero_and_bends_with_width() {
    let r = run("VarSaw", Rate::Audio, vec![Const(100.0), Const(0.0), Const(0.2)], SECOND);
    assert_eq!(r.initial[0], 0.0);
    let out = &r.outputs[0];
    let (lo, hi) = range(out);
    assert!(lo >= -1.0 && hi <= 1.0 && lo < -0.99 && hi > 0.99);
    let rising = out.windows(2).filter(|w| w[1] > w[0]).count() as f64 / out.len() as f64;
    assert!((rising - 0.2).abs() < 0.02, "{rising}");
    assert!((99..=101).contains(&upward_crossings(out, 0.0)));
}

#[test]
fn syncsaw_restarts_at_the_sync_frequency() {
    let out = ar("SyncSaw", vec![Const(100.0), Const(330.0)], SECOND);
    let (lo, hi) = range(&out);
    assert!(lo >= -1.0 && hi < 1.0);
    // Over each sync period the slave saw wraps 3 times, plus the sync reset.
    let drops = out.windows(2).filter(|w| w[1] < w[0] - 0.5).count();
    assert!((390..=410).contains(&drops), "{drops}");
}

// ----- Impulse -----

#[test]
fn impulse_fires_once_per_period_starting_immediately() {
    let r = run("Impulse", Rate::Audio, vec![Const(100.0), Const(0.0)], SECOND);
    assert_eq!(r.initial[0], 1.0);
    let out = &r.outputs[0];
    assert!(out.iter().all(|&x| x == 0.0 || x == 1.0));
    let count = out.iter().filter(|&&x| x == 1.0).count();
    assert!((99..=101).contains(&count), "{count}");
    assert_eq!(out[0], 1.0);
    let second = 1 + out[1..].iter().position(|&x| x == 1.0).unwrap();
    assert!((480..=481).contains(&second), "{second}");
}

#[test]
fn impulse_phase_offset_delays_the_first_impulse() {
    let r = run("Impulse", Rate::Audio, vec![Const(100.0), Const(0.5)], 20);
    let out = &r.outputs[0];
    let first = out.iter().position(|&x| x == 1.0).unwrap();
    assert!((239..=241).contains(&first), "{first}");
}

#[test]
fn impulse_variants_agree_on_steady_inputs() {
    let blocks = 60;
    let base = ar("Impulse", vec![Const(250.0), Const(0.0)], blocks);
    for inputs in [
        vec![Control(vec![250.0]), Const(0.0)],
        vec![Control(vec![250.0]), Control(vec![0.0])],
        vec![Const(250.0), Control(vec![0.0])],
        vec![audio_const(250.0, blocks), Const(0.0)],
        vec![audio_const(250.0, blocks), Control(vec![0.0])],
        vec![audio_const(250.0, blocks), audio_const(0.0, blocks)],
    ] {
        let out = ar("Impulse", inputs, blocks);
        let a: Vec<usize> = base.iter().enumerate().filter(|x| *x.1 == 1.0).map(|x| x.0).collect();
        let b: Vec<usize> = out.iter().enumerate().filter(|x| *x.1 == 1.0).map(|x| x.0).collect();
        assert_eq!(a, b);
    }
}

#[test]
fn impulse_at_control_rate_counts_blocks() {
    let r = run("Impulse", Rate::Control, vec![Const(75.0), Const(0.0)], SECOND);
    let count = r.outputs[0].iter().filter(|&&x| x == 1.0).count();
    assert!((74..=76).contains(&count), "{count}");
}
