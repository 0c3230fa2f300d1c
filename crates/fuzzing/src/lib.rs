//! The entry points of magnetar's fuzz targets (`fuzz/`, cargo-fuzz and
//! libFuzzer), one per decoder a client or a file can reach. Each takes
//! arbitrary bytes and drives the same code the server runs on them; the
//! only thing it may not do is panic, abort, hang or leak. The corpora the
//! fuzzer keeps in `fuzz/corpus/<target>/` are replayed through these same
//! functions by this crate's tests, so `cargo test` checks every input the
//! fuzzer ever kept without a nightly toolchain.
//!
//! ```
//! magnetar_fuzzing::osc_packet(b"/status\0,\0\0\0");
//! magnetar_fuzzing::synthdef(b"SCgf\0\0\0\x02\0\x01");
//! ```

use magnetar_engine::buffer_cmds::BufferCommands;
use magnetar_engine::{OfflineEngine, EngineOptions};
use magnetar_protocol::framing::read_frame;
use magnetar_protocol::osc::{self, DecodeError, OscArg, OscMessage, OscPacket, PacketBuilder};
use magnetar_protocol::{CommandKind, Prepared};
use magnetar_protocol::score::ScoreReader;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A fuzz target: the name of its corpus directory and fuzz target, and its entry point.
pub type Target = (&'static str, fn(&[u8]));

/// The targets, by the name of their corpus directory and fuzz target.
pub const TARGETS: &[Target] = &[
    ("osc_packet", osc_packet),
    ("tcp_stream", tcp_stream),
    ("commands", commands),
    ("synthdef", synthdef),
    ("score", score),
    ("sound_file", sound_file),
];

/// Largest packet a fuzzed TCP stream may carry (the server allows 64 MiB;
/// a fuzz input is far smaller anyway).
const MAX_FRAME: usize = 1 << 20;
/// Blocks a target runs at most, so that one input stays fast.
const MAX_BLOCKS: usize = 64;
/// The largest buffer the targets' engines make.
const MAX_BUFFER_SAMPLES: i64 = 1 << 18;
/// Packets of one input performed at most.
const MAX_PACKETS: usize = 256;

/// An OSC packet as UDP delivers it: decoded, and when it decodes, encoded
/// again (the same packet must come back) and printed as `/dumpOSC` prints it;
/// each message read straight from its bytes as the server reads the common
/// commands must read as its decoding does.
pub fn osc_packet(data: &[u8]) {
    let by_bytes = osc::decode_into(data, &mut WireAgrees).is_ok();
    let Ok(packet) = osc::decode(data) else {
        assert!(!by_bytes, "a packet decoded message by message but not whole");
        return;
    };
    assert!(by_bytes, "a packet decoded whole but not message by message");
    let encoded = packet.encode();
    let again = osc::decode(&encoded).expect("an encoded packet decodes");
    assert!(again.encode() == encoded, "a packet encoded, decoded and encoded again changed");
    let _ = magnetar_protocol::printed::dump_osc_text(&packet);
    walk_messages(&packet, &mut typed_decode);
}

/// Checks that a message the server reads straight from its bytes
/// (`magnetar_protocol::wire`) reads as its decoding through an
/// `OscMessage` does.
struct WireAgrees;

impl PacketBuilder for WireAgrees {
    type Packet = ();

    fn message(&mut self, bytes: &[u8], base: usize) -> Result<(), DecodeError> {
        let general = osc::decode_message_at(bytes, base);
        if let Some((kind, cmd)) = magnetar_protocol::decode_command(bytes) {
            let m = general.as_ref().expect("a message read from its bytes decodes");
            // Compared as text, which NaN values pass.
            let by_bytes = format!("{:?}", (Some(kind), cmd));
            let decoded = format!("{:?}", (CommandKind::of(&m.address), magnetar_protocol::parse_command(m)));
            assert!(by_bytes == decoded, "read from the bytes: {by_bytes}\ndecoded: {decoded}");
        }
        general.map(|_| ())
    }

    fn bundle(&mut self, _time: u64, _items: Vec<()>) {}
}

/// The typed decoding of a message (protocol's `parse_command`, what the
/// server performs), and of each completion message it carries.
pub fn typed_decode(m: &OscMessage) {
    let typed = magnetar_protocol::parse_command(m);
    if let Some(packet) = typed.ok().as_ref().and_then(|c| c.completion()).and_then(|b| osc::decode(b).ok()) {
        walk_messages(&packet, &mut typed_decode);
    }
}

/// Bytes as a TCP connection delivers them: length-prefixed frames, each
/// decoded as a packet.
pub fn tcp_stream(data: &[u8]) {
    let mut stream = data;
    for _ in 0..MAX_PACKETS {
        match read_frame(&mut stream, MAX_FRAME) {
            Ok(Some(frame)) => osc_packet(&frame),
            Ok(None) | Err(_) => return,
        }
    }
}

/// A session: length-prefixed packets performed in order by an engine (as
/// the server performs what a client sends, buffer and def commands
/// included, file paths kept inside a scratch directory by `-P`), one block
/// run after each.
pub fn commands(data: &[u8]) {
    let mut engine = fuzz_engine();
    let mut stream = data;
    let mut blocks = 0;
    for _ in 0..MAX_PACKETS {
        let frame = match read_frame(&mut stream, MAX_FRAME) {
            Ok(Some(frame)) => frame,
            Ok(None) | Err(_) => break,
        };
        if let Ok(packet) = osc::decode(&frame) {
            walk_messages(&packet, &mut typed_decode);
            perform(&mut engine, &packet);
        }
        if blocks < MAX_BLOCKS {
            run_block(&mut engine);
            blocks += 1;
        }
    }
    run_block(&mut engine);
}

/// A SynthDef file as `/d_recv` takes it: parsed and compiled
/// (`compile_synthdefs`), then each def that loads is played for two blocks,
/// once with no buffers and once with buffer 0 holding a sine.
pub fn synthdef(data: &[u8]) {
    if magnetar_synthdef::parse(data).is_err() {
        return;
    }
    let mut engine = fuzz_engine();
    let Ok(loaded) = engine.add_synthdefs(data) else { return };
    let names: Vec<String> = loaded.into_iter().filter_map(Result::ok).collect();
    for with_buffer in [false, true] {
        if with_buffer {
            perform_message(&mut engine, "/b_alloc", vec![OscArg::Int(0), OscArg::Int(1024), OscArg::Int(1)]);
            let sine = vec![OscArg::Int(0), OscArg::Str("sine1".into()), OscArg::Int(7), OscArg::Float(1.0)];
            perform_message(&mut engine, "/b_gen", sine);
        }
        for name in &names {
            let args = vec![OscArg::Str(name.clone()), OscArg::Int(-1), OscArg::Int(1), OscArg::Int(0)];
            perform_message(&mut engine, "/s_new", args);
        }
        run_block(&mut engine);
        run_block(&mut engine);
        perform_message(&mut engine, "/g_freeAll", vec![OscArg::Int(0)]);
        run_block(&mut engine);
    }
}

/// A non-real-time score: read bundle by bundle, each performed at its
/// block, blocks run in between (at most `MAX_BLOCKS`: a score may ask for
/// hours of audio, which is its right, not a fault).
pub fn score(data: &[u8]) {
    let mut engine = fuzz_engine();
    let mut blocks = 0;
    let block_tags = (engine.world.block_size as f64 / engine.world.sample_rate * 4_294_967_296.0) as u64;
    let mut now: u64 = 0;
    for item in ScoreReader::from_bytes(data).take(MAX_PACKETS) {
        let Ok((time, bundle, _)) = item else { break };
        while now.saturating_add(block_tags) <= time && blocks < MAX_BLOCKS {
            run_block(&mut engine);
            now += block_tags;
            blocks += 1;
        }
        let offset = time.saturating_sub(now) as f64 * engine.world.sample_rate / 4_294_967_296.0;
        engine.sample_offset = (offset as i32).clamp(0, engine.world.block_size as i32 - 1);
        bundle.packets.iter().for_each(|p| walk_messages(p, &mut typed_decode));
        let mut failures = Vec::new();
        engine.perform_prepared(&Prepared::bundle(&bundle), &mut failures);
        for f in failures {
            let _ = f.to_string();
        }
        drain(&mut engine);
    }
    run_block(&mut engine);
}

/// A sound file as the buffer commands read it: its header and samples
/// through `/b_allocRead`, `/b_read`, `/b_readChannel`,
/// `/b_allocReadChannel`, and a cue (`/b_read` leaving the file open, as
/// `cueSoundFile` does) then `/b_close`.
pub fn sound_file(data: &[u8]) {
    let dir = sandbox();
    let name = format!("in-{:?}.snd", std::thread::current().id()).replace(['(', ')'], "");
    let path = dir.join(name);
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let p = || OscArg::Str(path.display().to_string());
    let mut engine = fuzz_engine();
    let i = OscArg::Int;
    perform_message(&mut engine, "/b_allocRead", vec![i(0), p(), i(0), i(-1)]);
    perform_message(&mut engine, "/b_alloc", vec![i(1), i(256), i(2)]);
    perform_message(&mut engine, "/b_read", vec![i(1), p(), i(0), i(-1), i(0), i(0)]);
    perform_message(&mut engine, "/b_readChannel", vec![i(1), p(), i(0), i(-1), i(0), i(0), i(1), i(0)]);
    perform_message(&mut engine, "/b_allocReadChannel", vec![i(2), p(), i(0), i(-1), i(0)]);
    perform_message(&mut engine, "/b_alloc", vec![i(3), i(8192), i(1)]);
    perform_message(&mut engine, "/b_read", vec![i(3), p(), i(0), i(8192), i(0), i(1)]);
    run_block(&mut engine);
    perform_message(&mut engine, "/b_close", vec![i(3)]);
    if let Ok(mut reader) = magnetar_soundfile::SoundFileReader::open(&path) {
        let _ = (reader.header_format(), reader.sample_format(), reader.frames(), reader.sample_rate());
        let channels = reader.channels().clamp(1, 64) as usize;
        let mut samples = vec![0f32; 64 * channels];
        let _ = reader.read_f32(&mut samples);
    }
    let _ = std::fs::remove_file(&path);
}

/// A small world, so that each input is quick: few buses, buffers and
/// nodes, one thread, file commands kept inside the scratch directory.
fn fuzz_engine() -> OfflineEngine {
    let options = EngineOptions {
        sample_rate: 48_000.0,
        block_size: 64,
        num_audio_buses: 64,
        num_control_buses: 256,
        num_buffers: 16,
        num_input_channels: 2,
        num_output_channels: 2,
        max_nodes: 128,
        max_synthdefs: 32,
        rt_memory_kb: 8192,
        num_wire_bufs: 64,
        random_seeds: 8,
        seed: Some(1),
        threads: 1,
        realtime: false,
        rgen_per_synth: false,
        ..EngineOptions::default()
    };
    let mut engine = OfflineEngine::new(options);
    // Buffers up to 256 K samples (1 MiB): the server allows 2^31 (8 GiB),
    // which libFuzzer would report as running out of memory, and generating
    // a huge buffer would only be slow.
    engine.control.buffers = BufferCommands::new(Some(sandbox().to_path_buf())).with_max_samples(MAX_BUFFER_SAMPLES);
    engine
}

/// The directory file commands may use (`-P`), made once per process with
/// a sound file and a SynthDef file in it for the paths seeds name.
pub fn sandbox() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("magnetar-fuzz-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        if let Ok(mut w) = magnetar_soundfile::SoundFileWriter::create(
            dir.join("a.wav"),
            magnetar_soundfile::HeaderFormat::Wav,
            magnetar_soundfile::SampleFormat::Float,
            1,
            48_000.0,
        ) {
            let ramp: Vec<f32> = (0..512).map(|k| k as f32 / 512.0).collect();
            let _ = w.write_f32(&ramp);
            let _ = w.close();
        }
        let _ = std::fs::write(dir.join("tone.scsyndef"), sine_def());
        dir
    })
}

/// `SinOsc.ar(440) -> Out.ar(0)` as a version 2 SynthDef file named "tone".
pub fn sine_def() -> Vec<u8> {
    let mut b = b"SCgf".to_vec();
    b.extend(2i32.to_be_bytes());
    b.extend(1i16.to_be_bytes());
    b.push(4);
    b.extend(b"tone");
    b.extend(2i32.to_be_bytes()); // constants: 440, 0
    b.extend(440f32.to_be_bytes());
    b.extend(0f32.to_be_bytes());
    b.extend(0i32.to_be_bytes()); // parameters
    b.extend(0i32.to_be_bytes()); // parameter names
    b.extend(2i32.to_be_bytes()); // units
    let unit = |b: &mut Vec<u8>, name: &[u8], inputs: &[(i32, i32)], outputs: usize| {
        b.push(name.len() as u8);
        b.extend(name);
        b.push(2); // audio rate
        b.extend((inputs.len() as i32).to_be_bytes());
        b.extend((outputs as i32).to_be_bytes());
        b.extend(0i16.to_be_bytes());
        for &(u, k) in inputs {
            b.extend(u.to_be_bytes());
            b.extend(k.to_be_bytes());
        }
        b.extend(std::iter::repeat_n(2u8, outputs));
    };
    unit(&mut b, b"SinOsc", &[(-1, 0), (-1, 1)], 1);
    unit(&mut b, b"Out", &[(-1, 1), (0, 0)], 0);
    b.extend(0i16.to_be_bytes()); // variants
    b
}

fn perform(engine: &mut OfflineEngine, packet: &OscPacket) {
    let mut failures = Vec::new();
    engine.sample_offset = 0;
    engine.perform_prepared(&Prepared::new(packet), &mut failures);
    for f in failures {
        let _ = f.to_string();
    }
    drain(engine);
}

fn perform_message(engine: &mut OfflineEngine, address: &str, args: Vec<OscArg>) {
    perform(engine, &OscPacket::Message(OscMessage::new(address, args)));
}

/// One block, then what it produced is dropped, as the NRT renderer does.
fn run_block(engine: &mut OfflineEngine) {
    engine.run_block();
    engine.serve_disk();
    engine.world.polls.clear();
    engine.world.triggers.clear();
    engine.unit_failures.clear();
    engine.advance_block_counter();
    drain(engine);
}

fn drain(engine: &mut OfflineEngine) {
    engine.serve_disk();
    engine.replies.clear();
    engine.tree_queries.clear();
    engine.events.clear();
    engine.removed_defs.clear();
    engine.freed_defs.clear();
    engine.log.clear();
}

fn walk_messages(p: &OscPacket, f: &mut impl FnMut(&OscMessage)) {
    match p {
        OscPacket::Message(m) => f(m),
        OscPacket::Bundle(b) => b.packets.iter().for_each(|p| walk_messages(p, f)),
    }
}

/// Every file of a corpus directory, in name order.
pub fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}
