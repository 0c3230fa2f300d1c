//! The /b_* commands as a client sees them: buffer contents, /done, replies
//! and /fail messages.

use std::path::{Path, PathBuf};

use magnetar_engine::buffer_cmds::{BufDone, BufFail, BufferCommands};
use magnetar_protocol::osc::{OscArg, OscMessage};
use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileReader, SoundFileWriter};
use magnetar_ugens::World;

use OscArg::{Float as F, Int as I};

/// Replies as they go on the wire.
fn messages(replies: &[magnetar_protocol::Reply]) -> Vec<OscMessage> {
    replies.iter().map(magnetar_protocol::Reply::to_message).collect()
}

fn world() -> World {
    World::new(48000.0, 64, 16, 16, 8, 2, 2, 1)
}

fn s(v: &str) -> OscArg {
    OscArg::Str(v.to_owned())
}

fn path_arg(p: &Path) -> OscArg {
    s(p.to_str().expect("temp paths are UTF-8"))
}

fn run(cmds: &mut BufferCommands, world: &mut World, name: &str, args: Vec<OscArg>) -> Result<BufDone, BufFail> {
    cmds.perform(&magnetar_protocol::parse_command(&OscMessage::new(name, args)), world)
}

fn ok(cmds: &mut BufferCommands, world: &mut World, name: &str, args: Vec<OscArg>) -> BufDone {
    match run(cmds, world, name, args.clone()) {
        Ok(done) => done,
        Err(fail) => panic!("{name} {args:?} failed: {}", fail.message),
    }
}

fn fail(cmds: &mut BufferCommands, world: &mut World, name: &str, args: Vec<OscArg>) -> BufFail {
    match run(cmds, world, name, args.clone()) {
        Ok(done) => panic!("{name} {args:?} succeeded: {done:?}"),
        Err(fail) => fail,
    }
}

/// A fresh directory for one test's files.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("magnetar-bufcmd-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// 50 stereo frames at 44100 Hz: frame i is (i/100, -i/100), as float WAV.
fn stereo_ramp(dir: &Path) -> PathBuf {
    let path = dir.join("ramp.wav");
    let mut w = SoundFileWriter::create(&path, HeaderFormat::Wav, SampleFormat::Float, 2, 44100.0).expect("create");
    let data: Vec<f32> = (0..50).flat_map(|i| [i as f32 / 100.0, -(i as f32) / 100.0]).collect();
    w.write_f32(&data).expect("write");
    w.close().expect("close");
    path
}

fn ramp(i: usize) -> (f32, f32) {
    (i as f32 / 100.0, -(i as f32) / 100.0)
}

fn read_file(path: &Path) -> (SoundFileReader, Vec<f32>) {
    let mut r = SoundFileReader::open(path).expect("open");
    let mut data = vec![0.0; r.frames() as usize * r.channels() as usize];
    let got = r.read_f32(&mut data).expect("read");
    assert_eq!(got as u64, r.frames());
    (r, data)
}

#[test]
fn alloc_makes_a_zeroed_interleaved_buffer_and_answers_done() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    let done = ok(&mut c, &mut w, "/b_alloc", vec![I(1), I(100), I(2)]);
    assert_eq!(done.done_buffer, Some(1));
    assert_eq!(done.completion, None);
    let b = &w.buffers[1];
    assert_eq!((b.frames, b.channels, b.data.len(), b.sample_rate), (100, 2, 200, 48000.0));
    assert!(b.data.iter().all(|&v| v == 0.0));

    ok(&mut c, &mut w, "/b_alloc", vec![I(2), I(10)]);
    assert_eq!(w.buffers[2].channels, 1, "channels default to 1");
}

#[test]
fn buffer_memory_cap_refuses_an_alloc_past_it_and_keeps_the_buffer() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    c.set_memory_limit(Some(4000 * 4));
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(1000), I(2)]);
    w.buffers[0].data[5] = 0.5;
    let f = fail(&mut c, &mut w, "/b_alloc", vec![I(1), I(2001)]);
    assert!(f.message.contains("out of buffer memory"), "{}", f.message);
    // Replacing buffer 0 counts its new size, not old and new together.
    ok(&mut c, &mut w, "/b_alloc", vec![I(1), I(2000)]);
    let f = fail(&mut c, &mut w, "/b_alloc", vec![I(0), I(1000), I(3)]);
    assert!(f.message.contains("out of buffer memory"), "{}", f.message);
    assert_eq!((w.buffers[0].frames, w.buffers[0].channels, w.buffers[0].data[5]), (1000, 2, 0.5));
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(500), I(4)]);
    ok(&mut c, &mut w, "/b_free", vec![I(1)]);
    ok(&mut c, &mut w, "/b_alloc", vec![I(1), I(2000)]);
    // No cap: as scsynth.
    c.set_memory_limit(None);
    ok(&mut c, &mut w, "/b_alloc", vec![I(2), I(100_000)]);
}

#[test]
fn alloc_takes_a_completion_message_and_a_sample_rate() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    let completion = OscMessage::new("/b_query", vec![I(0)]).encode();
    let done = ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(8), I(1), OscArg::Blob(completion.clone()), F(44100.0)]);
    assert_eq!(done.completion, Some(completion));
    assert_eq!(w.buffers[0].sample_rate, 44100.0);

    // An integer 0 stands in for "no completion message".
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(8), I(1), I(0), F(22050.0)]);
    assert_eq!(w.buffers[0].sample_rate, 22050.0);

    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(8), I(1), I(0), F(0.0)]);
    assert_eq!(w.buffers[0].sample_rate, 48000.0, "a rate of 0 means the server's rate");
}

#[test]
fn alloc_of_nothing_fails_and_leaves_the_buffer_alone() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(4)]);
    let f = fail(&mut c, &mut w, "/b_alloc", vec![I(0), I(0), I(1)]);
    assert_eq!(f.buffer, Some(0));
    assert_eq!(w.buffers[0].frames, 4);
}

#[test]
fn buffer_numbers_out_of_range_fail() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    for bufnum in [8, -1] {
        let f = fail(&mut c, &mut w, "/b_alloc", vec![I(bufnum), I(4)]);
        assert!(f.message.contains("out of range"), "{}", f.message);
        assert_eq!(f.buffer, Some(bufnum));
        fail(&mut c, &mut w, "/b_set", vec![I(bufnum), I(0), F(1.0)]);
        fail(&mut c, &mut w, "/b_query", vec![I(bufnum)]);
    }
}

#[test]
fn set_writes_pairs_and_stops_at_an_index_past_the_end() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(4)]);
    let done = ok(&mut c, &mut w, "/b_set", vec![I(0), I(1), F(0.5), I(3), F(0.25)]);
    assert_eq!(done.done_buffer, None, "/b_set sends no /done");
    assert_eq!(w.buffers[0].data, vec![0.0, 0.5, 0.0, 0.25]);

    let f = fail(&mut c, &mut w, "/b_set", vec![I(0), I(0), F(1.0), I(4), F(2.0), I(2), F(3.0)]);
    assert!(f.message.contains("index out of range"), "{}", f.message);
    assert_eq!(w.buffers[0].data, vec![1.0, 0.5, 0.0, 0.25], "pairs before the bad one stay set");
}

#[test]
fn setn_clips_ranges_to_the_buffer_like_scsynth() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(10)]);
    ok(&mut c, &mut w, "/b_setn", vec![I(0), I(2), I(3), F(1.0), F(2.0), F(3.0)]);
    assert_eq!(&w.buffers[0].data[..6], &[0.0, 0.0, 1.0, 2.0, 3.0, 0.0]);

    // A range over the end is cut short; the values left over are read as
    // the next range's start and count.
    ok(&mut c, &mut w, "/b_setn", vec![I(0), I(8), I(4), F(8.0), F(9.0), F(5.0), F(1.0), F(7.0)]);
    assert_eq!(&w.buffers[0].data[8..], &[8.0, 9.0]);
    assert_eq!(w.buffers[0].data[5], 7.0);

    // A range starting before 0 is clipped at 0 and fills from there.
    let mut w2 = world();
    ok(&mut c, &mut w2, "/b_alloc", vec![I(0), I(10)]);
    ok(&mut c, &mut w2, "/b_setn", vec![I(0), I(-2), I(4), F(5.0), F(6.0)]);
    assert_eq!(&w2.buffers[0].data[..3], &[5.0, 6.0, 0.0]);
}

#[test]
fn fill_sets_clipped_ranges_and_skips_ranges_outside() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(5), I(2)]);
    let done = ok(
        &mut c,
        &mut w,
        "/b_fill",
        vec![I(0), I(-3), I(5), F(1.0), I(8), I(10), F(2.0), I(10), I(1), F(3.0), I(4), I(1), F(4.0)],
    );
    assert_eq!(done.done_buffer, None);
    assert_eq!(w.buffers[0].data, vec![1.0, 1.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 2.0, 2.0]);
}

#[test]
fn zero_clears_the_buffer_and_answers_done() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(3), I(4)]);
    ok(&mut c, &mut w, "/b_fill", vec![I(3), I(0), I(4), F(1.0)]);
    let done = ok(&mut c, &mut w, "/b_zero", vec![I(3)]);
    assert_eq!(done.done_buffer, Some(3));
    assert!(w.buffers[3].data.iter().all(|&v| v == 0.0));
    assert_eq!(w.buffers[3].frames, 4);
}

#[test]
fn get_and_getn_reply_with_set_and_setn_messages() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(2), I(4)]);
    ok(&mut c, &mut w, "/b_setn", vec![I(2), I(0), I(4), F(0.1), F(0.2), F(0.3), F(0.4)]);

    let done = ok(&mut c, &mut w, "/b_get", vec![I(2), I(3), I(0)]);
    assert_eq!(messages(&done.replies), vec![OscMessage::new("/b_set", vec![I(2), I(3), F(0.4), I(0), F(0.1)])]);

    let done = ok(&mut c, &mut w, "/b_getn", vec![I(2), I(1), I(2), I(3), I(1)]);
    assert_eq!(
        messages(&done.replies),
        vec![OscMessage::new("/b_setn", vec![I(2), I(1), I(2), F(0.2), F(0.3), I(3), I(1), F(0.4)])]
    );

    let f = fail(&mut c, &mut w, "/b_get", vec![I(2), I(4)]);
    assert!(f.message.contains("index out of range"), "{}", f.message);
    fail(&mut c, &mut w, "/b_getn", vec![I(2), I(2), I(3)]);
    fail(&mut c, &mut w, "/b_getn", vec![I(2), I(-1), I(2)]);
    fail(&mut c, &mut w, "/b_getn", vec![I(2), I(0), I(0)]);
}

#[test]
fn query_reports_frames_channels_and_rate_per_buffer() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(512), I(2)]);
    let done = ok(&mut c, &mut w, "/b_query", vec![I(0), I(5)]);
    assert_eq!(done.done_buffer, None);
    assert_eq!(
        messages(&done.replies),
        vec![OscMessage::new("/b_info", vec![I(0), I(512), I(2), F(48000.0), I(5), I(0), I(0), F(0.0)])]
    );
}

#[test]
fn free_empties_the_buffer_but_keeps_its_rate() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(16), I(1), I(0), F(44100.0)]);
    let done = ok(&mut c, &mut w, "/b_free", vec![I(0)]);
    assert_eq!(done.done_buffer, Some(0));
    let done = ok(&mut c, &mut w, "/b_query", vec![I(0)]);
    assert_eq!(done.replies[0].to_message().args, vec![I(0), I(0), I(0), F(44100.0)]);
    assert!(!w.buffers[0].is_allocated());
}

#[test]
fn set_sample_rate_changes_the_rate_and_zero_means_the_servers() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(16)]);
    let done = ok(&mut c, &mut w, "/b_setSampleRate", vec![I(0), F(96000.0)]);
    assert_eq!(done.done_buffer, None);
    assert_eq!(w.buffers[0].sample_rate, 96000.0);
    ok(&mut c, &mut w, "/b_setSampleRate", vec![I(0), F(0.0)]);
    assert_eq!(w.buffers[0].sample_rate, 48000.0);
}

#[test]
fn gen_runs_the_generator_and_fails_for_unknown_ones() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(64)]);
    let done = ok(&mut c, &mut w, "/b_gen", vec![I(0), s("sine1"), I(5), F(1.0)]);
    assert_eq!(done.done_buffer, Some(0));
    let peak = w.buffers[0].data.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!((peak - 1.0).abs() < 1e-3, "normalised sine, peak {peak}");

    let f = fail(&mut c, &mut w, "/b_gen", vec![I(0), s("nonesuch")]);
    assert!(f.message.contains("nonesuch"), "{}", f.message);
    fail(&mut c, &mut w, "/b_gen", vec![I(0), I(3)]);
}

#[test]
fn alloc_read_reads_the_requested_frames_at_the_files_rate() {
    let dir = temp_dir("allocread");
    let file = stereo_ramp(&dir);
    let (mut c, mut w) = (BufferCommands::new(None), world());

    let done = ok(&mut c, &mut w, "/b_allocRead", vec![I(1), path_arg(&file), I(10), I(5)]);
    assert_eq!(done.done_buffer, Some(1));
    let b = &w.buffers[1];
    assert_eq!((b.frames, b.channels, b.sample_rate), (5, 2, 44100.0));
    assert_eq!((b.data[0], b.data[1]), ramp(10));
    assert_eq!((b.data[8], b.data[9]), ramp(14));
    assert_eq!(b.path.as_deref(), file.to_str());

    // 0 frames, or more than there are, read to the end of the file.
    ok(&mut c, &mut w, "/b_allocRead", vec![I(1), path_arg(&file), I(40)]);
    assert_eq!(w.buffers[1].frames, 10);
    ok(&mut c, &mut w, "/b_allocRead", vec![I(1), path_arg(&file), I(45), I(1000)]);
    assert_eq!(w.buffers[1].frames, 5);
    // A negative offset starts at the beginning.
    ok(&mut c, &mut w, "/b_allocRead", vec![I(1), path_arg(&file), I(-5), I(-1)]);
    assert_eq!(w.buffers[1].frames, 50);
    assert_eq!((w.buffers[1].data[2], w.buffers[1].data[3]), ramp(1));
}

#[test]
fn alloc_read_channel_picks_and_orders_channels() {
    let dir = temp_dir("allocreadchannel");
    let file = stereo_ramp(&dir);
    let (mut c, mut w) = (BufferCommands::new(None), world());

    ok(&mut c, &mut w, "/b_allocReadChannel", vec![I(0), path_arg(&file), I(3), I(2), I(1)]);
    let b = &w.buffers[0];
    assert_eq!((b.frames, b.channels), (2, 1));
    assert_eq!(b.data, vec![ramp(3).1, ramp(4).1]);

    ok(&mut c, &mut w, "/b_allocReadChannel", vec![I(0), path_arg(&file), I(3), I(1), I(1), I(0)]);
    assert_eq!(w.buffers[0].data, vec![ramp(3).1, ramp(3).0]);

    // No channels listed: all of them.
    ok(&mut c, &mut w, "/b_allocReadChannel", vec![I(0), path_arg(&file), I(0), I(0)]);
    assert_eq!((w.buffers[0].frames, w.buffers[0].channels), (50, 2));

    let f = fail(&mut c, &mut w, "/b_allocReadChannel", vec![I(0), path_arg(&file), I(0), I(0), I(2)]);
    assert!(f.message.contains("Channel index out of range"), "{}", f.message);
    assert_eq!(f.buffer, Some(0));
}

#[test]
fn read_fills_an_allocated_buffer_from_its_start_frame_and_stops_at_its_end() {
    let dir = temp_dir("read");
    let file = stereo_ramp(&dir);
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(20), I(2)]);

    let done = ok(&mut c, &mut w, "/b_read", vec![I(0), path_arg(&file), I(5), I(-1), I(15)]);
    assert_eq!(done.done_buffer, Some(0));
    let b = &w.buffers[0];
    assert_eq!((b.frames, b.sample_rate), (20, 44100.0), "the buffer keeps its size and takes the file's rate");
    assert!(b.data[..30].iter().all(|&v| v == 0.0));
    assert_eq!((b.data[30], b.data[31]), ramp(5));
    assert_eq!((b.data[38], b.data[39]), ramp(9));

    // Frame count 0 reads nothing.
    ok(&mut c, &mut w, "/b_zero", vec![I(0)]);
    ok(&mut c, &mut w, "/b_read", vec![I(0), path_arg(&file), I(5), I(0)]);
    assert!(w.buffers[0].data.iter().all(|&v| v == 0.0));
}

#[test]
fn read_into_a_buffer_with_other_channels_fails_with_a_mismatch() {
    let dir = temp_dir("readmismatch");
    let file = stereo_ramp(&dir);
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(20), I(1)]);
    let f = fail(&mut c, &mut w, "/b_read", vec![I(0), path_arg(&file)]);
    assert!(f.message.starts_with("Channel mismatch."), "{}", f.message);
    assert!(f.message.contains("has 2 channels") && f.message.contains("Buffer has 1 channels"), "{}", f.message);
    assert_eq!(f.buffer, Some(0));
}

#[test]
fn read_channel_reads_the_selected_channel_into_a_mono_buffer() {
    let dir = temp_dir("readchannel");
    let file = stereo_ramp(&dir);
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(4), I(1)]);
    let done = ok(&mut c, &mut w, "/b_readChannel", vec![I(0), path_arg(&file), I(10), I(2), I(1), I(0), I(1)]);
    assert_eq!(done.done_buffer, Some(0));
    assert_eq!(w.buffers[0].data, vec![0.0, ramp(10).1, ramp(11).1, 0.0]);

    let f = fail(&mut c, &mut w, "/b_readChannel", vec![I(0), path_arg(&file), I(0), I(-1), I(0), I(0), I(5)]);
    assert!(f.message.contains("Channel index out of range"), "{}", f.message);
}

#[test]
fn read_into_an_unallocated_buffer_does_nothing_and_answers_done() {
    let (mut c, mut w) = (BufferCommands::new(None), world());
    let done = ok(&mut c, &mut w, "/b_read", vec![I(0), s("/no/such/file.wav")]);
    assert_eq!(done.done_buffer, Some(0));
    assert!(!w.buffers[0].is_allocated());
}

#[test]
fn missing_files_fail_with_the_file_name() {
    let dir = temp_dir("missing");
    let missing = dir.join("absent.wav");
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(2), I(8)]);
    for cmd in ["/b_allocRead", "/b_allocReadChannel", "/b_read", "/b_readChannel"] {
        let f = fail(&mut c, &mut w, cmd, vec![I(2), path_arg(&missing)]);
        let expected = format!("File '{}' could not be opened: ", missing.display());
        assert!(f.message.starts_with(&expected), "{cmd}: {}", f.message);
        assert_eq!(f.buffer, Some(2));
    }
    assert_eq!(w.buffers[2].frames, 8, "a failed read leaves the buffer as it was");
    let f = fail(&mut c, &mut w, "/b_allocRead", vec![I(2), I(0)]);
    assert!(f.message.contains("wrong argument type"), "{}", f.message);
}

#[test]
fn write_defaults_to_16_bit_aiff_of_the_whole_buffer() {
    let dir = temp_dir("writedefault");
    let out = dir.join("out.aiff");
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(8), I(2), I(0), F(44100.0)]);
    ok(&mut c, &mut w, "/b_fill", vec![I(0), I(0), I(16), F(0.5)]);
    let done = ok(&mut c, &mut w, "/b_write", vec![I(0), path_arg(&out)]);
    assert_eq!(done.done_buffer, Some(0));
    let (r, data) = read_file(&out);
    assert_eq!(r.header_format(), Some(HeaderFormat::Aiff));
    assert_eq!(r.sample_format(), Some(SampleFormat::Int16));
    assert_eq!((r.frames(), r.channels(), r.sample_rate()), (8, 2, 44100.0));
    assert!(data.iter().all(|&v| (v - 0.5).abs() < 1e-4));
}

#[test]
fn write_takes_formats_frame_count_and_start_frame() {
    let dir = temp_dir("writeformats");
    let out = dir.join("out.wav");
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(10)]);
    let ramp: Vec<OscArg> = (0..10).map(|i| F(i as f32 * 1.5)).collect();
    ok(&mut c, &mut w, "/b_setn", [vec![I(0), I(0), I(10)], ramp].concat());

    ok(&mut c, &mut w, "/b_write", vec![I(0), path_arg(&out), s("wav"), s("float"), I(4), I(3)]);
    let (r, data) = read_file(&out);
    assert_eq!((r.header_format(), r.sample_format()), (Some(HeaderFormat::Wav), Some(SampleFormat::Float)));
    assert_eq!(data, vec![4.5, 6.0, 7.5, 9.0], "float files keep values above 1");

    // More frames than remain after the start frame: up to the end.
    ok(&mut c, &mut w, "/b_write", vec![I(0), path_arg(&out), s("WAV"), s("int24"), I(100), I(7)]);
    let (r, data) = read_file(&out);
    assert_eq!(r.sample_format(), Some(SampleFormat::Int24));
    assert_eq!(data.len(), 3);
    assert!(data.iter().all(|&v| v > 0.99), "integer files clip instead of wrapping: {data:?}");

    // Read the float file back into a buffer through /b_allocRead.
    ok(&mut c, &mut w, "/b_write", vec![I(0), path_arg(&out), s("wav"), s("float")]);
    ok(&mut c, &mut w, "/b_allocRead", vec![I(1), path_arg(&out)]);
    assert_eq!(w.buffers[1].data, w.buffers[0].data);
}

#[test]
fn write_with_unknown_formats_fails() {
    let dir = temp_dir("writebadformat");
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(10)]);
    let f = fail(&mut c, &mut w, "/b_write", vec![I(0), path_arg(&dir.join("x")), s("mp5")]);
    assert!(f.message.contains("mp5"), "{}", f.message);
    let f = fail(&mut c, &mut w, "/b_write", vec![I(0), path_arg(&dir.join("x")), s("wav"), s("int12")]);
    assert!(f.message.contains("int12"), "{}", f.message);
}

#[test]
fn write_left_open_keeps_the_file_until_close() {
    let dir = temp_dir("writeopen");
    let out = dir.join("stream.wav");
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(4), I(32), I(1)]);
    ok(&mut c, &mut w, "/b_write", vec![I(4), path_arg(&out), s("wav"), s("float"), I(0), I(0), I(1)]);
    assert!(c.has_open_file(4));
    let done = ok(&mut c, &mut w, "/b_close", vec![I(4)]);
    assert_eq!(done.done_buffer, Some(4));
    assert!(!c.has_open_file(4));
    let r = SoundFileReader::open(&out).expect("closed file opens");
    assert_eq!((r.frames(), r.channels()), (0, 1));
    // Closing again is harmless.
    ok(&mut c, &mut w, "/b_close", vec![I(4)]);
}

#[test]
fn read_left_open_stays_open_until_free() {
    let dir = temp_dir("readopen");
    let file = stereo_ramp(&dir);
    let (mut c, mut w) = (BufferCommands::new(None), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(8), I(2)]);
    ok(&mut c, &mut w, "/b_read", vec![I(0), path_arg(&file), I(0), I(8), I(0), I(1)]);
    assert!(c.has_open_file(0));
    ok(&mut c, &mut w, "/b_free", vec![I(0)]);
    assert!(!c.has_open_file(0));
}

#[test]
fn restricted_path_keeps_files_inside_its_directory() {
    let root = temp_dir("restricted");
    let inside = root.join("inside");
    std::fs::create_dir_all(&inside).expect("dir");
    let outside = stereo_ramp(&root);
    let (mut c, mut w) = (BufferCommands::new(Some(inside.clone())), world());
    ok(&mut c, &mut w, "/b_alloc", vec![I(0), I(4)]);

    // Relative paths are taken inside the directory.
    ok(&mut c, &mut w, "/b_write", vec![I(0), s("a.wav"), s("wav")]);
    assert!(inside.join("a.wav").exists());
    ok(&mut c, &mut w, "/b_allocRead", vec![I(1), s("a.wav")]);
    ok(&mut c, &mut w, "/b_allocRead", vec![I(1), path_arg(&inside.join("a.wav"))]);

    for escape in ["../ramp.wav", "sub/../../ramp.wav", outside.to_str().unwrap_or_default()] {
        let f = fail(&mut c, &mut w, "/b_allocRead", vec![I(1), s(escape)]);
        assert!(f.message.contains("outside the restricted path"), "{escape}: {}", f.message);
        assert_eq!(f.buffer, Some(1));
        fail(&mut c, &mut w, "/b_write", vec![I(0), s(escape)]);
    }

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&root, inside.join("link")).expect("symlink");
        let f = fail(&mut c, &mut w, "/b_allocRead", vec![I(1), s("link/ramp.wav")]);
        assert!(f.message.contains("outside the restricted path"), "{}", f.message);
        // A dangling symlink: writing through it would create a file outside.
        std::os::unix::fs::symlink(root.join("made.wav"), inside.join("dangling.wav")).expect("symlink");
        let f = fail(&mut c, &mut w, "/b_write", vec![I(0), s("dangling.wav"), s("wav")]);
        assert!(f.message.contains("outside the restricted path"), "{}", f.message);
        assert!(!root.join("made.wav").exists());
        // Dangling links chained, and one inside that points inside, which is fine.
        std::os::unix::fs::symlink(inside.join("dangling.wav"), inside.join("chain.wav")).expect("symlink");
        fail(&mut c, &mut w, "/b_write", vec![I(0), s("chain.wav"), s("wav")]);
        assert!(!root.join("made.wav").exists());
        std::os::unix::fs::symlink(inside.join("new.wav"), inside.join("ok.wav")).expect("symlink");
        ok(&mut c, &mut w, "/b_write", vec![I(0), s("ok.wav"), s("wav")]);
        assert!(inside.join("new.wav").exists());
    }
}

#[test]
fn file_commands_on_a_buffer_without_its_samples_fail_instead_of_panicking() {
    let dir = temp_dir("shape-only");
    let file = stereo_ramp(&dir);
    let mut cmds = BufferCommands::new(None);
    let mut w = world();
    // The shape of a 2-channel, 16-frame buffer whose samples live elsewhere.
    w.buffers[0] = magnetar_ugens::SndBuf { channels: 2, frames: 16, ..Default::default() };
    let write = fail(&mut cmds, &mut w, "/b_write", vec![s("0"), path_arg(&dir.join("out.wav"))]);
    assert!(write.message.contains("not available"), "{}", write.message);
    let read = fail(&mut cmds, &mut w, "/b_read", vec![OscArg::Blob(vec![1]), path_arg(&file)]);
    assert!(read.message.contains("not available"), "{}", read.message);
}
