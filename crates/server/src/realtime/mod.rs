//! The real-time server: network threads feed a control thread, which feeds
//! the audio thread; replies flow back the same way.
//!
//! ```text
//!  UDP/TCP threads ──Incoming──▶ control thread ──ToAudio──▶ audio thread (driver callback)
//!                                 ▲   (stage 2: files,           │ performs commands at block
//!                                 │    SynthDef parsing,          │ start, schedules bundles,
//!                                 │    buffer allocation)         │ installs prepared objects
//!                                 └──────────── FromAudio ◀───────┘ (stage 3)
//!                                   replies, notifications, async requests, garbage
//!                                   (a wait-free ring the control thread polls every 1 ms)
//! ```
//!
//! As in scsynth, every packet goes to the audio thread, which runs
//! synchronous commands itself and hands asynchronous ones (stage 2) to the
//! control thread; the prepared result comes back to be installed at a
//! block start (stage 3), after which `/done` is sent (stage 4). Objects the
//! audio thread lets go of travel back to the control thread to be dropped.
//!
//! `control` is the control side (it holds the engine's control side,
//! `ControlEngine`: compiler, files, buffer preparation), `audio` the audio
//! side (a type that can only render blocks and apply what the control side
//! prepared, holding the engine's audio side, `Engine`), and `messages` what
//! crosses between them: prepared commands one way; replies, figures and
//! typed failures the other, encoded on the control side.

mod audio;
mod control;
mod messages;

use crate::cli::Cli;
use crate::driver::{self, DriverConfig, Process};
use crate::net::{Incoming, NetConfig, Network};
use audio::Audio;
use control::Control;
use magnetar_engine::buffer_cmds::BufferCommands;
use magnetar_engine::{ControlEngine, Engine};
use magnetar_protocol::osc::{OscArg, OscMessage};
use magnetar_rt::spsc;
use messages::{FromAudio, ToAudio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// Packets from the network waiting for the control thread; past that the
/// network threads drop them (and count them).
const NET_CAPACITY: usize = 4096;
/// Packets waiting for the audio thread; past that the control thread
/// waits (it is not real-time, the network threads drop instead).
const TO_AUDIO_CAPACITY: usize = 4096;
/// Messages from the audio thread the control thread has not taken yet
/// (it takes them every CONTROL_POLL); when full, a message is lost and
/// counted rather than blocking the audio thread.
const FROM_AUDIO_CAPACITY: usize = 16384;
/// How often the control thread empties the audio thread's ring. Polled, not
/// signalled, so that the audio thread makes no system call to send
/// (BENCHMARKS.md, audio-thread queues).
const CONTROL_POLL: std::time::Duration = std::time::Duration::from_millis(1);
/// Node notifications handed to the control thread per period, a quarter
/// of its queue: replies always find room.
const EVENTS_PER_PERIOD: usize = FROM_AUDIO_CAPACITY / 4;
/// Printed lines handed to the control thread per period (`/n_trace` of a
/// large group prints a line per child), another quarter of its queue.
const LOG_LINES_PER_PERIOD: usize = FROM_AUDIO_CAPACITY / 4;
/// Of the queue from the audio thread, the share that only messages a
/// client waits for or that must not be lost (replies, `/fail`, asynchronous
/// requests, garbage) may take: what units produce however fast they like
/// (`/tr` and `SendReply`, `Poll` values, node notifications, printed
/// lines, unit failures) is handed on only while more is free, so that a
/// flood of it cannot fill the queue and lose a `/synced` behind it.
const FROM_AUDIO_RESERVED: usize = FROM_AUDIO_CAPACITY / 2;
/// Timed bundles the audio thread holds at once.
const SCHEDULER_CAPACITY: usize = 8192;
/// Packets the audio thread takes from its queue per block, so that a flood
/// of commands cannot make one block arbitrarily long.
const PACKETS_PER_BLOCK: usize = 512;


/// Set by SIGINT/SIGTERM: the server then shuts down as on `/quit`, so the
/// audio driver (a JACK client, say) is closed properly.
static STOP_SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    // Only an atomic store: all a signal handler may safely do.
    STOP_SIGNALLED.store(true, Ordering::SeqCst);
}

/// Hands the control thread what the audio thread's ring held on arrival,
/// no more: an audio thread that refills it as fast as it empties (a flood
/// of `/tr`) must not keep the control thread from the network, or the
/// `/sync` it is to answer would never reach the audio thread.
fn take_from_audio(control: &mut Control, from_audio: &mut spsc::Consumer<FromAudio>) {
    for _ in 0..from_audio.len() {
        let Some(m) = from_audio.pop() else { break };
        control.handle_audio(m);
    }
}

fn install_stop_signals() {
    let handler: extern "C" fn(libc::c_int) = on_stop_signal;
    // SAFETY: the handler only performs an atomic store, which is
    // async-signal-safe; installing it has no other preconditions.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
}

/// Boots the real-time server and runs until `/quit`. Returns the exit code.
pub fn run(cli: &Cli) -> i32 {
    let mut engine_opts = cli.engine.clone();
    let drv_cfg = DriverConfig {
        sample_rate: cli.preferred_sample_rate,
        block_size: engine_opts.block_size,
        hardware_buffer_size: cli.hardware_buffer_size,
        num_inputs: engine_opts.num_input_channels,
        num_outputs: engine_opts.num_output_channels,
        device_name: cli.device_name.clone(),
        client_name: driver::DEFAULT_CLIENT_NAME.to_string(),
    };
    engine_opts.sample_rate = cli.preferred_sample_rate.unwrap_or(driver::CLOCK_DEFAULT_SAMPLE_RATE);
    if cli.memory_locking {
        // -L: keep every page in memory; warn and go on where not allowed.
        if let Err(e) = magnetar_rt::thread::lock_memory() {
            eprintln!("WARNING: could not lock memory (-L): {e}");
        }
    }
    if let Err(e) = magnetar_mem::install_pool(engine_opts.rt_memory_kb * 1024) {
        eprintln!("ERROR: {e}");
        return 1;
    }
    engine_opts.realtime = true;
    let mut engine = Engine::new(engine_opts.clone());
    engine.record_events = true;
    // The shared memory segment clients connect to for this port, as
    // scsynth's: the control buses live in it, and the scope buffers.
    let shm_port = cli.udp_port.filter(|&p| p > 0).or(cli.tcp_port);
    let mut _shm_name = ShmName(None);
    if let Some(port) = shm_port {
        match magnetar_shm::ServerShm::create(port, engine_opts.num_control_buses) {
            Ok(shm) => {
                _shm_name = ShmName(Some(port));
                let (buses, scopes) = shm.into_world_parts();
                engine.world.control_bus = buses;
                engine.world.scope_buffers = Some(scopes);
            }
            Err(e) => eprintln!("WARNING: {e}; control buses stay private"),
        }
    }
    engine.world.real_time = true;
    // The control thread's buffer commands keep the open files; the disk
    // threads stream through them.
    let mut buffer_commands = BufferCommands::new(cli.restricted_path.as_ref().map(Into::into));
    buffer_commands.set_memory_limit(cli.buffer_memory_limit());
    let (disk, disk_barriers) = match crate::disk::start(
        &cli.disk,
        buffer_commands.shared_files(),
        engine_opts.num_buffers,
        engine_opts.sample_rate,
    ) {
        Ok((link, barriers, _stats)) => (link, barriers),
        Err(e) => {
            eprintln!("ERROR: could not start the disk thread: {e}");
            return 1;
        }
    };
    // The garbage-collected heap UGens such as GrainCloud allocate from; the
    // engine runs its collector between blocks (paper 000).
    match magnetar_ugens::gc_units::realtime_collector() {
        Ok(gc) => engine.world.gc = Some(gc),
        Err(e) => eprintln!("WARNING: no garbage-collected heap for UGens: {e}"),
    }
    engine.memory_probe = Some(|| {
        let s = magnetar_mem::status();
        (s.free(), s.used)
    });
    engine.largest_free_probe = Some(magnetar_mem::largest_free_block);
    engine.pool_misses_probe = Some(|| magnetar_mem::status().misses);
    engine.pool_reserve = Some(magnetar_mem::set_reserve);
    engine.pool_headroom = magnetar_mem::FALLIBLE_HEADROOM;
    // The engine's two sides: the control thread's owns the compiler and
    // the files, the audio thread's only renders and installs.
    let control_engine = ControlEngine::new(&engine_opts, buffer_commands);
    // The audio thread's `/b_set`, `/b_setn` and `/b_fill` leave convolution
    // responses to be remade on the control thread.
    engine.responses = magnetar_engine::buffer_cmds::ResponseRefresh::deferred(engine.world.buffers.len());

    let (mut to_audio_tx, to_audio_rx) = spsc::channel::<ToAudio>(TO_AUDIO_CAPACITY);
    let (from_audio_tx, mut from_audio_rx) = spsc::channel::<FromAudio>(FROM_AUDIO_CAPACITY);
    let stats_slot = Arc::new(std::sync::OnceLock::new());
    // This thread becomes the control thread: it follows the audio thread's
    // priority too, below it (see `priorities`).
    let mut priorities = engine.priority_follower().with_control_thread(magnetar_rt::thread::current_tid());
    // A disk thread raised for a stream about to run dry ranks as a task of
    // that deadline (the critical watermark) in blocks.
    let critical_blocks = cli.disk.critical_watermark.as_secs_f64() * engine.world.sample_rate / engine.world.block_size as f64;
    priorities.follow_disk(disk.raise_priority(), critical_blocks, cli.disk.fifo_priority);
    let audio = Audio::new(engine, disk, to_audio_rx, from_audio_tx, Arc::clone(&stats_slot));
    let record = std::env::var_os("MAGNETAR_RECORD").map(std::path::PathBuf::from);
    let rate_cell = Arc::new(std::sync::OnceLock::<f64>::new());
    let (process, recorder) = match &record {
        Some(path) => {
            let (p, tap) = driver::tap_outputs(Box::new(audio), engine_opts.num_output_channels, 1 << 18);
            match start_recorder(tap, path.clone(), engine_opts.num_output_channels, Arc::clone(&rate_cell)) {
                Ok(r) => (p, Some(r)),
                Err(e) => {
                    eprintln!("ERROR: could not start recording to {}: {e}", path.display());
                    return 1;
                }
            }
        }
        None => (Box::new(audio) as Box<dyn Process>, None),
    };

    let running = match driver::start_default(&drv_cfg, process) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("ERROR: could not start the audio driver: {e}");
            return 1;
        }
    };
    let _ = stats_slot.set(running.stats());
    let sample_rate = running.sample_rate();
    let _ = rate_cell.set(sample_rate);
    if sample_rate != engine_opts.sample_rate {
        let _ = to_audio_tx.push(ToAudio::SetSampleRate(sample_rate));
    }

    // The network threads' packets; the control thread waits on this queue
    // at most CONTROL_POLL, then empties the audio thread's ring.
    let (net_tx, net_rx) = mpsc::sync_channel::<Incoming>(NET_CAPACITY);
    let bind = cli.bind_address.parse().unwrap_or(std::net::IpAddr::from([127, 0, 0, 1]));
    let net_cfg = NetConfig {
        udp_port: cli.udp_port,
        tcp_port: cli.tcp_port,
        bind,
        password: cli.password.clone(),
        max_logins: cli.max_logins,
        login_timeout: crate::net::LOGIN_TIMEOUT,
    };
    let network = match Network::start(net_cfg, net_tx) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("ERROR: could not open the server's ports: {e}");
            running.stop();
            return 1;
        }
    };

    if cli.verbosity >= 0 {
        eprintln!(
            "magnetar: {} driver, {} Hz, {} frames per period, {} outputs",
            running.backend_name(),
            sample_rate,
            running.period_frames(),
            engine_opts.num_output_channels
        );
    }
    println!("SuperCollider 3 server ready.");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // From now on the control thread's printing goes through the printer.
    crate::printer::start();

    let mut control = Control::new(
        to_audio_tx,
        &engine_opts,
        sample_rate,
        control_engine,
        disk_barriers,
        cli.max_logins,
        cli.verbosity,
    );
    install_stop_signals();
    let stats = running.stats();
    let mut reported_xruns = 0;
    let mut next_xrun_check = std::time::Instant::now();
    let mut watchdog = crate::watchdog::Watchdog::new(std::time::Instant::now());
    while control.quit.is_none() && !STOP_SIGNALLED.load(Ordering::SeqCst) {
        match net_rx.recv_timeout(CONTROL_POLL) {
            Ok(inc) => {
                // What the audio thread printed for the packets of earlier
                // rounds comes before the `/dumpOSC` lines of this round's,
                // as in scsynth, whose audio thread prints at once. Once a
                // round, not once a packet: a burst of packets while the
                // audio thread floods the ring (`/tr`) would otherwise wait
                // for the ring to be emptied before each of them.
                take_from_audio(&mut control, &mut from_audio_rx);
                control.handle_net(inc);
                // And every packet that came meanwhile (as many as the
                // channel holds at most): while the audio thread's ring
                // keeps this thread busy, a burst of packets is not taken
                // one per round.
                for _ in 0..NET_CAPACITY {
                    let Ok(inc) = net_rx.try_recv() else { break };
                    control.handle_net(inc);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        take_from_audio(&mut control, &mut from_audio_rx);
        control.remake_stale_responses();
        // Helpers and task threads follow the audio thread's priority.
        for w in priorities.follow() {
            crate::printer::errln!("WARNING: {w}");
        }
        // The log hears about xruns, at most once a second.
        if std::time::Instant::now() >= next_xrun_check {
            next_xrun_check += std::time::Duration::from_secs(1);
            let xruns = stats.snapshot().xruns;
            if xruns > reported_xruns && cli.verbosity >= 0 {
                crate::printer::errln!("magnetar: {} xrun(s), {xruns} in all", xruns - reported_xruns);
            }
            reported_xruns = xruns;
            // Convolution spectra no buffer or unit holds any more.
            magnetar_ugens::convolution::release_unused_spectra();
        }
        // An audio thread that stopped finishing periods is reported, on
        // stderr and to every client that asked for notifications.
        match watchdog.check(stats.snapshot().periods, std::time::Instant::now()) {
            Some(crate::watchdog::Change::Stalled(quiet)) => {
                let message = format!(
                    "the audio thread has finished no period for {:.1} s; nothing is rendered and commands wait",
                    quiet.as_secs_f64()
                );
                crate::printer::errln!("magnetar: {message}");
                control.broadcast(&OscMessage::new("/fail", vec![OscArg::Str("/watchdog".into()), OscArg::Str(message)]));
            }
            Some(crate::watchdog::Change::Resumed) => crate::printer::errln!("magnetar: the audio thread finishes periods again"),
            None => {}
        }
    }
    crate::printer::flush();
    network.shutdown();
    running.stop();
    if let Some(r) = recorder {
        r.stop();
    }
    0
}

/// Removes the segment's name when the server function returns, on every
/// path: the engine may outlive it on a driver thread, and its mapping goes
/// when the engine does.
struct ShmName(Option<u16>);

impl Drop for ShmName {
    fn drop(&mut self) {
        if let Some(port) = self.0 {
            magnetar_shm::ServerShm::remove(port);
        }
    }
}

/// `MAGNETAR_RECORD=file.wav` (an extension): writes what the driver plays
/// to a float WAV file, from a non-real-time thread fed by the output tap.
fn start_recorder(
    tap: driver::OutputTap,
    path: std::path::PathBuf,
    channels: usize,
    rate: Arc<std::sync::OnceLock<f64>>,
) -> std::io::Result<driver::TapThread> {
    use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileWriter};
    let mut writer: Option<SoundFileWriter> = None;
    let mut failed = false;
    tap.spawn(std::time::Duration::from_millis(20), move |chunk| {
        if failed {
            return;
        }
        if writer.is_none() {
            let sr = rate.get().copied().unwrap_or(driver::CLOCK_DEFAULT_SAMPLE_RATE);
            match SoundFileWriter::create(&path, HeaderFormat::Wav, SampleFormat::Float, channels.max(1) as u32, sr) {
                Ok(w) => writer = Some(w),
                Err(e) => {
                    eprintln!("ERROR: recording: {e}");
                    failed = true;
                    return;
                }
            }
        }
        if let Some(w) = writer.as_mut() {
            if let Err(e) = w.write_f32(chunk) {
                eprintln!("ERROR: recording: {e}");
                failed = true;
            }
        }
    })
}

