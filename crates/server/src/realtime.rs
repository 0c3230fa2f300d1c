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

use crate::cli::Cli;
use crate::driver::{self, DriverConfig, DriverStats, PeriodIo, Process};
use crate::net::{Incoming, NetConfig, Network, ReplyAddr};
use magnetar_engine::buffer_cmds::BufferCommands;
use magnetar_engine::commands::command_name;
use magnetar_engine::{compile_synthdefs_limited, Engine, GraphDef, NodeEvent, NodeEventKind};
use magnetar_protocol::osc::{self, OscArg, OscBundle, OscMessage, OscPacket};
use magnetar_protocol::replies::Reply;
use magnetar_protocol::printed;
use magnetar_ugens::world::{PollLine, Trigger};
use magnetar_ugens::{Registry, SndBuf, World};
use std::collections::{BinaryHeap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use magnetar_rt::spsc;
use std::sync::mpsc;
use std::sync::Arc;

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
/// Timed bundles the audio thread holds at once.
const SCHEDULER_CAPACITY: usize = 8192;
/// Packets the audio thread takes from its queue per block, so that a flood
/// of commands cannot make one block arbitrarily long.
const PACKETS_PER_BLOCK: usize = 512;

/// Commands whose work is done off the audio thread (stage 2).
const ASYNC_COMMANDS: &[&str] = &[
    "/d_recv", "/d_load", "/d_loadDir", "/b_alloc", "/b_allocRead", "/b_allocReadChannel", "/b_read",
    "/b_readChannel", "/b_write", "/b_free", "/b_close", "/b_gen", "/b_zero", "/sync",
];

/// Asynchronous buffer commands that work on the contents a buffer has.
const READS_CONTENTS: &[&str] = &["/b_read", "/b_readChannel", "/b_write", "/b_gen", "/b_zero"];

/// Hands `f` every def of `defs` that no synth holds any more (the list's
/// reference is the last), so that the last reference is never dropped here.
fn take_unused(defs: &mut Vec<Arc<GraphDef>>, mut f: impl FnMut(Arc<GraphDef>)) {
    let mut i = 0;
    while i < defs.len() {
        if Arc::strong_count(&defs[i]) == 1 {
            f(defs.swap_remove(i));
        } else {
            i += 1;
        }
    }
}

/// Seconds from 1900 (OSC/NTP epoch) to 1970 (Unix epoch).
const NTP_UNIX_OFFSET: u64 = 2_208_988_800;

/// What the control thread sends the audio thread.
enum ToAudio {
    Packet { packet: OscPacket, from: ReplyAddr },
    /// Stage 3 of `/d_recv` and friends.
    InstallDefs { defs: Vec<Arc<GraphDef>>, scratch: Option<(Vec<f32>, Vec<f32>)>, done: Done },
    /// Stage 3 of buffer commands that replace a buffer's contents.
    InstallBuffer { bufnum: usize, buf: SndBuf, done: Done },
    /// Stage 3 of commands with nothing to install (`/sync`, `/b_close`, failures).
    Finish { done: Done },
    SetSampleRate(f64),
    /// `/clearSched`: drop every bundle waiting for its time.
    ClearSchedule,
    /// A plugin's asynchronous command, for stage 3 or its cleanup.
    PluginAsync(PluginAsync),
}

/// A plugin's asynchronous command between its stages, with the sender of
/// the message that started it: its completion message runs as theirs, and
/// `/done` goes there (when the plugin passed the reply address on).
struct PluginAsync {
    cmd: Box<magnetar_plugin::AsyncCommand>,
    from: Option<ReplyAddr>,
}

/// Replies owed once a prepared object is installed.
struct Done {
    from: ReplyAddr,
    /// `/done` (or `/synced`, `/fail`) messages, sent after the completion runs.
    replies: Vec<OscMessage>,
    completion: Option<Vec<u8>>,
}

/// An asynchronous command on its way to the control thread.
struct AsyncRequest {
    msg: OscMessage,
    from: ReplyAddr,
    /// The header (sizes, sample rate; no samples) of the buffer the
    /// command works on as the audio thread had it, when it needs one.
    header: Option<(usize, SndBuf)>,
    /// Buffer installs the audio thread had applied when it sent this: if
    /// the control thread has sent more, the header above is out of date.
    installs_applied: u64,
    /// The disk thread and barrier to wait for first, when the buffer streamed.
    disk_barrier: Option<(usize, u64)>,
}

/// What the audio thread sends the control thread.
enum FromAudio {
    Reply { to: ReplyAddr, msg: OscMessage },
    /// A node notification for every client that asked for them.
    Event(NodeEvent),
    /// A synth that a failing unit ended: `/fail` to every client that asked
    /// for notifications, and a line on stderr.
    UnitFailed(magnetar_engine::contain::UnitFailure),
    /// `/tr` or a SendReply message for every client that asked.
    Trigger(Trigger),
    /// A value `Poll` reported, to print.
    Poll(PollLine),
    /// A def removed by `/d_free` that no synth uses any more.
    DefRemoved(Arc<GraphDef>),
    /// A def left out because `-d` defs are loaded: `/fail` to its sender.
    DefRefused { to: ReplyAddr, def: Arc<GraphDef> },
    Late { to: ReplyAddr, bundle_time: u64, executed: u64 },
    Async(Box<AsyncRequest>),
    Log(String),
    /// A plugin's asynchronous command, for stage 2 or 4.
    PluginAsync(PluginAsync),
    /// Something the audio thread no longer needs, to be dropped here.
    Garbage(Garbage),
}

/// Held only to be dropped on the control thread.
#[allow(dead_code)]
enum Garbage {
    Packet(OscPacket),
    Packets(Vec<OscPacket>),
    Message(OscMessage),
    Buffer(SndBuf),
    Defs(Vec<Arc<GraphDef>>),
    Def(Arc<GraphDef>),
    Scratch(Vec<f32>),
    Messages(Vec<OscMessage>),
    Bytes(Vec<u8>),
}

enum ControlMsg {
    Net(Incoming),
}

/// A bundle waiting for its time.
struct Scheduled {
    time: u64,
    seq: u64,
    bundle: OscBundle,
    from: ReplyAddr,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    // Earliest time first; equal times in arrival order.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// OSC time (NTP 32.32) of a monotonic instant, given the offset measured at boot.
fn osc_time_of(mono_ns: u64, mono_to_unix_ns: i128) -> u64 {
    let unix_ns = mono_ns as i128 + mono_to_unix_ns;
    let secs = (unix_ns / 1_000_000_000) as u64 + NTP_UNIX_OFFSET;
    let frac = ((unix_ns % 1_000_000_000) as u128 * (1u128 << 32) / 1_000_000_000) as u64;
    (secs << 32) | frac
}

fn mono_to_unix_offset_ns() -> i128 {
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    unix as i128 - monotonic_ns() as i128
}

/// The audio thread's state: the engine and the queues around it.
struct Audio {
    /// Declared before the engine so that it is dropped first: its disk
    /// threads finish with the buffers before the buffers go.
    disk: crate::disk::DiskLink,
    /// Samples computed so far (the disk side's clock).
    sample_time: u64,
    engine: Engine,
    /// Lock-free, not try-lock: measured on this machine (crates/rt,
    /// `examples/queue_latency`), a try-lock queue under a flood of commands
    /// failed in 20 % of blocks, up to 18 blocks in a row, while the ring
    /// never makes the audio thread wait; one producer (the control thread)
    /// lets it be the wait-free single-producer ring.
    from_control: spsc::Consumer<ToAudio>,
    /// Wait-free ring to the control thread, which polls it.
    to_control: spsc::Producer<FromAudio>,
    scheduler: BinaryHeap<Scheduled>,
    seq: u64,
    mono_to_unix_ns: i128,
    stats: Option<Arc<DriverStats>>,
    stats_slot: Arc<std::sync::OnceLock<Arc<DriverStats>>>,
    dropped: u64,
    /// Defs `-d` left out, on their way back to the control thread (room
    /// for 64 per install is reserved).
    refused_defs: Vec<Arc<GraphDef>>,
    /// Node notifications already handed to the control thread (the rest
    /// follow in later periods).
    events_sent: usize,
    /// Printed lines already handed to the control thread (likewise).
    log_sent: usize,
    replaced_defs: Vec<Arc<GraphDef>>,
    num_inputs: usize,
    num_outputs: usize,
    /// Periods in which no command arrived, and heap operations counted in
    /// them (reported by the `/magnetar_rtStats` extension).
    steady_periods: u64,
    steady_heap_ops: u64,
    /// All periods, and system-heap operations in them (commands allocate
    /// from the real-time pool, so this should stay 0 too).
    all_periods: u64,
    all_heap_ops: u64,
    /// Whether the current period handled anything from the control thread.
    busy: bool,
    thread_id: i32,
    /// `ToAudio::InstallBuffer`s taken so far.
    installs_applied: u64,
    /// Asynchronous commands plugins started, to be staged.
    plugin_async: Option<magnetar_plugin::AsyncQueue>,
}

impl Audio {
    fn send(&mut self, m: FromAudio) {
        if let Err(lost) = self.to_control.push(m) {
            // Full: freeing here would be a system-heap call on the audio
            // thread, so what it holds is leaked instead (and counted).
            std::mem::forget(lost);
            self.dropped += 1;
        }
    }

    fn flush_replies(&mut self, to: &ReplyAddr) {
        if self.engine.replies.is_empty() {
            return;
        }
        // Drained rather than taken, so the list keeps its capacity.
        let mut replies = std::mem::take(&mut self.engine.replies);
        for msg in replies.drain(..) {
            self.send(FromAudio::Reply { to: to.clone(), msg });
        }
        self.engine.replies = replies;
    }

    fn perform_message(&mut self, msg: OscMessage, from: &ReplyAddr) {
        let name = command_name(&msg.address).unwrap_or("");
        if name == "/magnetar_rtStats" {
            // Extension: what the audio thread measured about itself.
            let xruns = self.stats.as_ref().map(|s| s.snapshot().xruns).unwrap_or(0);
            let pool = magnetar_mem::status();
            let reply = OscMessage::new(
                "/magnetar_rtStats.reply",
                vec![
                    OscArg::Long(self.steady_periods as i64),
                    OscArg::Long(self.steady_heap_ops as i64),
                    OscArg::Int(self.thread_id),
                    OscArg::Long(xruns as i64),
                    OscArg::Long(pool.used as i64),
                    OscArg::Long(pool.peak as i64),
                    OscArg::Long(pool.misses as i64),
                    OscArg::Long(self.all_periods as i64),
                    OscArg::Long(self.all_heap_ops as i64),
                    OscArg::Long(self.engine.parallel_groups_run() as i64),
                    OscArg::Long(self.engine.world.disk_underruns as i64),
                    OscArg::Long(self.engine.tasks.deadline_misses() as i64),
                    // C and C++ code's (plugins') heap operations on the audio thread and DSP helpers.
                    OscArg::Long(magnetar_rt::guard::total_c_allocations_while_armed() as i64),
                    OscArg::Long(magnetar_rt::sysguard::caught_total() as i64),
                ],
            );
            self.send(FromAudio::Reply { to: from.clone(), msg: reply });
            self.send(FromAudio::Garbage(Garbage::Message(msg)));
            return;
        }
        if name == "/magnetar_diskStats" {
            // Extension: what the disk threads measured (see README).
            let reset = msg.args.first().and_then(OscArg::as_i32) == Some(1);
            let reply = OscMessage::new("/magnetar_diskStats.reply", self.disk.stats_args(reset));
            self.send(FromAudio::Reply { to: from.clone(), msg: reply });
            self.send(FromAudio::Garbage(Garbage::Message(msg)));
            return;
        }
        let is_async = ASYNC_COMMANDS.contains(&name);
        // Commands that edit an existing buffer's contents read them on the
        // control thread (`Control::storage`); the audio thread copies
        // nothing and only sends the buffer's header.
        let needs_contents = READS_CONTENTS.contains(&name);
        if is_async {
            // The buffer the command itself will work on (a value that is
            // not a number reads as 0, as in scsynth).
            let bufnum = if name.starts_with("/b_") {
                usize::try_from(magnetar_engine::args::first_i32(&msg.args, 0)).ok()
            } else {
                None
            };
            // A buffer that streams: what the disk side has queued for it is
            // done before the command touches the buffer or its file.
            let disk_barrier =
                bufnum.and_then(|b| self.disk.barrier(&mut self.engine.world, self.sample_time, b));
            let mut request = Box::new(AsyncRequest {
                msg,
                from: from.clone(),
                header: None,
                installs_applied: self.installs_applied,
                disk_barrier,
            });
            if needs_contents {
                if let Some(b) = bufnum {
                    if let Some(buf) = self.engine.world.buffers.get(b) {
                        request.header = Some((b, header_of(buf)));
                    }
                }
            }
            self.send(FromAudio::Async(request));
            return;
        }
        if let Err(f) = self.engine.perform_message(&msg) {
            // What the command printed comes before its failure line.
            self.flush_log();
            let mut args = vec![OscArg::Str(f.command.clone()), OscArg::Str(f.message.clone())];
            args.extend(f.extra.iter().cloned());
            self.send(FromAudio::Log(format!("{f}\n")));
            self.send(FromAudio::Reply { to: from.clone(), msg: OscMessage::new("/fail", args) });
        }
        self.flush_replies(from);
        self.forward_plugin_async(Some(from));
        self.send(FromAudio::Garbage(Garbage::Message(msg)));
    }

    /// Hands the asynchronous commands plugins started to the control
    /// thread for their stage 2; `from` sent the message that ran the plugin.
    fn forward_plugin_async(&mut self, from: Option<&ReplyAddr>) {
        while let Some(cmd) = self.plugin_async.as_mut().and_then(magnetar_plugin::AsyncQueue::pop) {
            self.send(FromAudio::PluginAsync(PluginAsync { cmd, from: from.cloned() }));
        }
    }

    fn perform_bundle(&mut self, bundle: OscBundle, from: &ReplyAddr) {
        let mut packets = bundle.packets;
        for p in packets.drain(..) {
            match p {
                OscPacket::Message(m) => self.perform_message(m, from),
                OscPacket::Bundle(b) => self.perform_bundle(b, from),
            }
        }
        self.send(FromAudio::Garbage(Garbage::Packets(packets)));
    }

    fn take_packet(&mut self, packet: OscPacket, from: ReplyAddr, block_start: u64, block_end: u64, sr: f64) {
        match packet {
            OscPacket::Message(m) => {
                self.engine.sample_offset = 0;
                self.engine.subsample_offset = 0.0;
                self.perform_message(m, &from);
            }
            OscPacket::Bundle(b) => {
                // Time tag 1 (and 0) means "now".
                if b.time <= 1 || b.time < block_end {
                    if b.time > 1 && b.time < block_start {
                        // Late: runs now; the sender hears `/late` (bundle
                        // time and the time it ran), and the console a line.
                        self.send(FromAudio::Late { to: from.clone(), bundle_time: b.time, executed: block_start });
                    }
                    self.set_offset(b.time, block_start, sr);
                    self.perform_bundle(b, &from);
                } else if self.scheduler.len() < SCHEDULER_CAPACITY {
                    self.seq += 1;
                    self.scheduler.push(Scheduled { time: b.time, seq: self.seq, bundle: b, from });
                } else {
                    self.send(FromAudio::Log("scheduler full: bundle dropped\n".into()));
                    self.send(FromAudio::Garbage(Garbage::Packet(OscPacket::Bundle(b))));
                }
            }
        }
    }

    fn set_offset(&mut self, time: u64, block_start: u64, sr: f64) {
        let bs = self.engine.world.block_size as i64;
        if time <= 1 || time <= block_start {
            self.engine.sample_offset = 0;
            self.engine.subsample_offset = 0.0;
            return;
        }
        let samples = (time - block_start) as f64 * sr / 4_294_967_296.0;
        let floor = samples.floor();
        self.engine.sample_offset = (floor as i64).clamp(0, bs - 1) as i32;
        self.engine.subsample_offset = (samples - floor) as f32;
    }

    fn take_control(&mut self, m: ToAudio, block_start: u64, block_end: u64, sr: f64) {
        match m {
            ToAudio::Packet { packet, from } => self.take_packet(packet, from, block_start, block_end, sr),
            ToAudio::InstallDefs { mut defs, scratch, done } => {
                if let Some((s, lanes)) = scratch {
                    let old = self.engine.swap_scratch(s);
                    self.send(FromAudio::Garbage(Garbage::Scratch(old)));
                    let old = self.engine.swap_lane_scratch(lanes);
                    self.send(FromAudio::Garbage(Garbage::Scratch(old)));
                }
                let mut replaced = std::mem::take(&mut self.replaced_defs);
                let mut refused = std::mem::take(&mut self.refused_defs);
                self.engine.install_defs(&mut defs, &mut replaced, &mut refused);
                for def in refused.drain(..) {
                    self.send(FromAudio::DefRefused { to: done.from.clone(), def });
                }
                self.refused_defs = refused;
                // The list came from the control thread: it goes back there.
                self.send(FromAudio::Garbage(Garbage::Defs(defs)));
                // A replaced def that synths still use is freed when the
                // last of them goes: kept here until then, it goes to the
                // control thread to be dropped (as `/d_freeAll`'s defs do).
                let freed = &mut self.engine.freed_defs;
                let keep = replaced.len().min(freed.capacity() - freed.len());
                freed.extend(replaced.drain(..keep));
                if !replaced.is_empty() {
                    self.send(FromAudio::Garbage(Garbage::Defs(replaced)));
                } else {
                    self.replaced_defs = replaced;
                }
                self.finish(done);
            }
            ToAudio::InstallBuffer { bufnum, buf, done } => {
                self.installs_applied += 1;
                if let Some(slot) = self.engine.world.buffers.get_mut(bufnum) {
                    let old = std::mem::replace(slot, buf);
                    // Fresh contents: no half is waiting for the disk.
                    slot.disk_pending = 0;
                    if let Some(old) = self.disk.retire(bufnum, old) {
                        self.send(FromAudio::Garbage(Garbage::Buffer(old)));
                    }
                }
                self.finish(done);
            }
            ToAudio::Finish { done } => self.finish(done),
            ToAudio::SetSampleRate(sr) => {
                self.engine.set_sample_rate(sr);
                self.disk.set_sample_rate(sr);
            }
            ToAudio::ClearSchedule => {
                while let Some(s) = self.scheduler.pop() {
                    self.send(FromAudio::Garbage(Garbage::Packet(OscPacket::Bundle(s.bundle))));
                }
            }
            ToAudio::PluginAsync(PluginAsync { mut cmd, from }) => match cmd.run_rt(&mut self.engine.world) {
                magnetar_plugin::RtStep::ToNrt(completion) => {
                    if let Some(from) = &from {
                        // Stage 3 succeeded: its completion message runs now.
                        self.finish(Done { from: from.clone(), replies: Vec::new(), completion });
                    }
                    self.send(FromAudio::PluginAsync(PluginAsync { cmd, from }));
                }
                // The box came from the pool on this thread's side: freed here.
                magnetar_plugin::RtStep::Finished => drop(cmd),
            },
        }
    }

    /// Stage 3's end: run the completion message, then owe the replies.
    /// Everything `done` holds was allocated on the control thread and goes
    /// back there to be freed.
    fn finish(&mut self, done: Done) {
        let Done { from, mut replies, completion } = done;
        if let Some(c) = completion {
            match osc::decode(&c) {
                Ok(OscPacket::Message(m)) => self.perform_message(m, &from),
                Ok(OscPacket::Bundle(b)) => self.perform_bundle(b, &from),
                Err(e) => self.send(FromAudio::Log(format!("bad completion message: {e}\n"))),
            }
            self.send(FromAudio::Garbage(Garbage::Bytes(c)));
        }
        for msg in replies.drain(..) {
            self.send(FromAudio::Reply { to: from.clone(), msg });
        }
        self.send(FromAudio::Garbage(Garbage::Messages(replies)));
    }

    /// Hands node notifications, triggers and printed text to the control
    /// thread, which encodes and sends them (encoding allocates).
    fn notify_events(&mut self) {
        if !self.engine.unit_failures.is_empty() {
            let mut failures = std::mem::take(&mut self.engine.unit_failures);
            for f in failures.drain(..) {
                self.send(FromAudio::UnitFailed(f));
            }
            self.engine.unit_failures = failures;
        }
        // A few thousand notifications per period at most, so that a tree
        // freed at once cannot fill the queue to the control thread and
        // crowd out the replies (`/synced`, `/done`) behind them.
        let pending = self.engine.events.len();
        if pending > self.events_sent {
            let end = pending.min(self.events_sent + EVENTS_PER_PERIOD);
            for i in self.events_sent..end {
                let e = self.engine.events[i];
                self.send(FromAudio::Event(e));
            }
            self.events_sent = end;
        }
        if self.events_sent == self.engine.events.len() {
            self.engine.events.clear();
            self.events_sent = 0;
        }
        if !self.engine.world.triggers.is_empty() {
            let mut triggers = std::mem::take(&mut self.engine.world.triggers);
            for t in triggers.drain(..) {
                self.send(FromAudio::Trigger(t));
            }
            self.engine.world.triggers = triggers;
        }
        if !self.engine.world.polls.is_empty() {
            let mut polls = std::mem::take(&mut self.engine.world.polls);
            for p in polls.drain(..) {
                self.send(FromAudio::Poll(p));
            }
            self.engine.world.polls = polls;
        }
        // Defs `/d_freeAll` let go of go to the control thread to be dropped
        // once no synth here uses them (the last reference is never the
        // audio thread's).
        let mut freed = std::mem::take(&mut self.engine.freed_defs);
        take_unused(&mut freed, |def| self.send(FromAudio::Garbage(Garbage::Def(def))));
        self.engine.freed_defs = freed;
        let mut removed = std::mem::take(&mut self.engine.removed_defs);
        take_unused(&mut removed, |def| self.send(FromAudio::DefRemoved(def)));
        self.engine.removed_defs = removed;
        self.flush_log();
    }

    /// Hands the engine's printed text to the control thread.
    /// A few thousand lines per period at most, in order, and only while
    /// the queue is less than half full: a trace of a large group cannot
    /// fill the queue and lose lines or crowd out the replies behind them.
    fn flush_log(&mut self) {
        let pending = self.engine.log.len();
        // Half the queue stays free for replies, whatever the control
        // thread has not taken yet.
        let room = self.to_control.slots().saturating_sub(FROM_AUDIO_CAPACITY / 2);
        if pending > self.log_sent && room > 0 {
            let end = pending.min(self.log_sent + LOG_LINES_PER_PERIOD.min(room));
            for i in self.log_sent..end {
                // An empty string takes no memory: nothing is freed here.
                let line = std::mem::take(&mut self.engine.log[i]);
                self.send(FromAudio::Log(line));
            }
            self.log_sent = end;
        }
        if self.log_sent == self.engine.log.len() {
            self.engine.log.clear();
            self.log_sent = 0;
        }
    }
}

fn event_message(e: &NodeEvent) -> OscMessage {
    let state = magnetar_protocol::replies::NodeState {
        node: e.id,
        parent: e.parent,
        prev: e.prev,
        next: e.next,
        group: e.is_group.then_some((e.head, e.tail)),
    };
    match e.kind {
        NodeEventKind::Go => Reply::NodeGo(state),
        NodeEventKind::End => Reply::NodeEnd(state),
        NodeEventKind::On => Reply::NodeOn(state),
        NodeEventKind::Off => Reply::NodeOff(state),
        NodeEventKind::Move => Reply::NodeMove(state),
        NodeEventKind::Info => Reply::NodeInfo(state),
    }
    .to_message()
}

fn trigger_message(t: &Trigger) -> OscMessage {
    match &t.cmd {
        None => Reply::Trigger { node: t.node_id, id: t.id, value: t.values.first().copied().unwrap_or(0.0) }.to_message(),
        Some(cmd) => {
            let mut args = vec![OscArg::Int(t.node_id), OscArg::Int(t.id)];
            args.extend(t.values.iter().map(|v| OscArg::Float(*v)));
            OscMessage::new(cmd.as_str(), args)
        }
    }
}

impl Process for Audio {
    fn process(&mut self, io: &mut PeriodIo<'_>) {
        if self.stats.is_none() {
            // First periods on this thread.
            magnetar_engine::flush_denormals_on_this_thread();
            // SAFETY: the audio thread is the only thread that enters the pool.
            unsafe { magnetar_mem::enter_pool() };
            self.stats = self.stats_slot.get().cloned();
            // SAFETY: gettid has no preconditions.
            self.thread_id = unsafe { libc::gettid() };
            let priority = magnetar_rt::thread::current_fifo_priority();
            self.disk.set_audio_priority(priority);
            self.engine.tasks.set_audio_priority(priority);
            magnetar_rt::trace::set_role(magnetar_rt::trace::Role::Audio, 0);
        }
        let guard = magnetar_rt::guard::AllocGuard::arm();
        self.busy = false;
        // What other threads freed of the pool's memory goes back to it here.
        magnetar_mem::drain_deferred_frees(4096);
        self.run_period(io);
        // Periods that handled commands may allocate (until commands use the
        // real-time pool); steady periods must not.
        let ops = guard.count();
        self.all_periods += 1;
        self.all_heap_ops += ops;
        if !self.busy {
            self.steady_periods += 1;
            self.steady_heap_ops += ops;
        }
    }
}

impl Audio {
    fn run_period(&mut self, io: &mut PeriodIo<'_>) {
        if let Some(stats) = &self.stats {
            let s = stats.snapshot();
            self.engine.driver_load.avg_cpu = s.avg_load;
            self.engine.driver_load.peak_cpu = s.peak_load;
            self.engine.driver_load.xruns = s.xruns;
        }
        let bs = self.engine.world.block_size;
        let sr = self.engine.world.sample_rate;
        let blocks = io.nframes / bs;
        let period_osc = osc_time_of(io.period_start_ns, self.mono_to_unix_ns);
        let block_osc = ((bs as f64 / sr) * 4_294_967_296.0) as u64;
        let n_out = self.num_outputs.min(io.outputs.len());
        let n_in = self.num_inputs.min(io.inputs.len());
        for b in 0..blocks {
            let block_start = period_osc + b as u64 * block_osc;
            let block_end = block_start + block_osc;
            let counter = self.engine.world.buf_counter;
            for ch in 0..n_in {
                let bus = self.engine.world.num_output_channels + ch;
                if let Some(dst) = self.engine.world.audio_bus_mut(bus) {
                    dst.copy_from_slice(&io.inputs[ch][b * bs..(b + 1) * bs]);
                    self.engine.world.audio_touched[bus] = counter;
                }
            }
            self.disk.deliver(&mut self.engine.world);
            let commands_started = magnetar_rt::trace::now();
            let mut commands = 0;
            for _ in 0..PACKETS_PER_BLOCK {
                match self.from_control.pop() {
                    Some(m) => {
                        self.busy = true;
                        commands += 1;
                        self.take_control(m, block_start, block_end, sr);
                    }
                    None => break,
                }
            }
            while self.scheduler.peek().is_some_and(|s| s.time < block_end) {
                self.busy = true;
                let Some(s) = self.scheduler.pop() else { break };
                commands += 1;
                self.set_offset(s.time, block_start, sr);
                self.perform_bundle(s.bundle, &s.from);
            }
            if commands > 0 {
                magnetar_rt::trace::span(magnetar_rt::trace::Kind::Commands, commands_started, commands, 0);
            }
            self.engine.run_block();
            self.forward_plugin_async(None);
            self.sample_time += bs as u64;
            self.disk.forward(&mut self.engine.world, self.sample_time);
            self.notify_events();
            let w = &self.engine.world;
            for (ch, out) in io.outputs.iter_mut().enumerate().take(n_out) {
                let dst = &mut out[b * bs..(b + 1) * bs];
                match w.audio_bus(ch) {
                    Some(src) if w.audio_touched[ch] == counter => dst.copy_from_slice(src),
                    _ => dst.fill(0.0),
                }
            }
            self.engine.advance_block_counter();
        }
        for out in io.outputs.iter_mut().skip(n_out) {
            out.fill(0.0);
        }
    }
}

/// The control thread's state: stage-2 work and client bookkeeping.
struct Control {
    to_audio: spsc::Producer<ToAudio>,
    registry: Registry,
    block_size: usize,
    /// `-w`: defs needing more interconnect buffers are refused.
    max_wire_bufs: usize,
    /// What the audio thread's buffers look like (sizes; contents only while
    /// a command works on them).
    mirror: World,
    buffers: BufferCommands,
    notified: HashSet<ReplyAddr>,
    scratch_len: usize,
    /// Threads that run synths side by side at once (`-T`): each has its
    /// own share of the lane scratch.
    lane_threads: usize,
    dump_osc: i32,
    error_mode: i32,
    quit: Option<ReplyAddr>,
    max_logins: usize,
    verbosity: i32,
    /// Defs compiled by the current `/d_*` command.
    pending_defs: Vec<Arc<GraphDef>>,
    disk_barriers: crate::disk::DiskBarriers,
    /// Per buffer, the samples the audio thread has, or will have once the
    /// installs already sent are taken (scsynth's NRT view of a buffer).
    storage: Vec<SharedSamples>,
    /// `ToAudio::InstallBuffer`s sent so far.
    installs_sent: u64,
}

/// Where a buffer's samples live, as the control thread reads them for
/// `/b_read` (the part the file leaves), `/b_gen` and `/b_write`.
///
/// The storage is owned by the audio thread's buffer table or by an install
/// on its way there. It is freed only once the audio thread has replaced it
/// with a newer install, and every install goes from the control thread,
/// which updates this entry when it sends it: the control thread never reads
/// an entry whose storage may be gone. The audio thread may change samples
/// while they are read (a unit recording into the buffer during `/b_write`),
/// as in scsynth; any bit pattern is a valid `f32`.
#[derive(Clone, Copy)]
struct SharedSamples {
    ptr: *const f32,
    len: usize,
}

// SAFETY: only the control thread dereferences the pointer (see above); the
// value itself is a plain address.
unsafe impl Send for SharedSamples {}

impl SharedSamples {
    const EMPTY: SharedSamples = SharedSamples { ptr: std::ptr::null(), len: 0 };

    fn of(data: &[f32]) -> SharedSamples {
        SharedSamples { ptr: data.as_ptr(), len: data.len() }
    }

    /// A copy made on the control thread, in fresh memory.
    fn to_vec(self) -> Vec<f32> {
        if self.ptr.is_null() || self.len == 0 {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.len);
        // SAFETY: the storage is alive and `len` samples long (the type's
        // invariant above); the volatile reads make no assumption that the
        // audio thread leaves the values alone meanwhile.
        unsafe {
            for i in 0..self.len {
                out.push(std::ptr::read_volatile(self.ptr.add(i)));
            }
        }
        out
    }
}

/// A buffer's header without its samples or path: allocates nothing.
fn header_of(buf: &SndBuf) -> SndBuf {
    SndBuf {
        data: Vec::new(),
        channels: buf.channels,
        frames: buf.frames,
        sample_rate: buf.sample_rate,
        path: None,
        spectrum: buf.spectrum,
        disk_mask: buf.disk_mask,
        disk_mask1: buf.disk_mask1,
        disk_pending: buf.disk_pending,
    }
}

impl Control {
    fn send_reply(&self, to: &ReplyAddr, msg: &OscMessage) {
        // `/error 0` silences failure replies (the console still shows them).
        if self.error_mode == 0 && msg.address.as_name() == Some("/fail") {
            return;
        }
        let _ = to.send(&msg.encode());
    }

    fn broadcast(&self, msg: &OscMessage) {
        let bytes = msg.encode();
        for c in &self.notified {
            let _ = c.send(&bytes);
        }
    }

    // Sends to the audio thread; not a conversion.
    #[allow(clippy::wrong_self_convention)]
    fn to_audio(&mut self, m: ToAudio) {
        // The control thread may wait for room: it is not real-time.
        let mut m = m;
        loop {
            match self.to_audio.push(m) {
                Ok(()) => return,
                Err(back) => {
                    m = back;
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        }
    }

    fn handle_net(&mut self, inc: Incoming) {
        if self.dump_osc & 2 != 0 {
            crate::printer::outln!("{}", printed::hex_dump_text(&inc.data));
        }
        let packet = match osc::decode(&inc.data) {
            Ok(p) => p,
            Err(e) => {
                if self.verbosity >= -1 {
                    crate::printer::errln!("ERROR: could not decode OSC packet from {}: {e}", inc.from.peer());
                }
                let msg = OscMessage::new(
                    "/fail",
                    vec![OscArg::Str(undecodable_command_name(&inc.data)), OscArg::Str(e.to_string())],
                );
                return self.send_reply(&inc.from, &msg);
            }
        };
        if self.dump_osc & 1 != 0 {
            if let Some(text) = printed::dump_osc_text(&packet) {
                crate::printer::outln!("{text}");
            }
        }
        // Commands about the connection itself are answered here at once.
        if let OscPacket::Message(m) = &packet {
            match command_name(&m.address) {
                Some("/notify") => return self.notify(m, &inc.from),
                Some("/quit") => {
                    self.send_reply(&inc.from, &Reply::done("/quit").to_message());
                    self.quit = Some(inc.from);
                    return;
                }
                Some("/version") => return self.send_reply(&inc.from, &version_reply()),
                Some("/dumpOSC") => {
                    self.dump_osc = m.args.first().and_then(OscArg::as_i32).unwrap_or(0);
                    return;
                }
                Some("/error") => {
                    // 0 and 1 switch failure replies off and on; the
                    // bundle-local modes (-1, -2) are accepted and ignored.
                    let mode = m.args.first().and_then(OscArg::as_i32).unwrap_or(1);
                    if mode >= 0 {
                        self.error_mode = mode;
                    }
                    return;
                }
                Some("/clearSched") => return self.to_audio(ToAudio::ClearSchedule),
                None => {
                    let msg = OscMessage::new(
                        "/fail",
                        vec![OscArg::Str(m.address.to_string()), OscArg::Str("Command not found".into())],
                    );
                    let address = m.address.to_string();
                    crate::printer::errln!("FAILURE IN SERVER: {} Command not found", printed::terminal_safe(&address));
                    return self.send_reply(&inc.from, &msg);
                }
                _ => {}
            }
        }
        self.to_audio(ToAudio::Packet { packet, from: inc.from });
    }

    fn notify(&mut self, m: &OscMessage, from: &ReplyAddr) {
        let on = m.args.first().and_then(OscArg::as_i32).unwrap_or(0) != 0;
        if on {
            if !self.notified.contains(from) && self.notified.len() >= self.max_logins {
                let msg = OscMessage::new(
                    "/fail",
                    vec![OscArg::Str("/notify".into()), OscArg::Str("too many users".into())],
                );
                return self.send_reply(from, &msg);
            }
            self.notified.insert(from.clone());
            let id = self.notified.len() as i32 - 1;
            let msg = OscMessage::new(
                "/done",
                vec![OscArg::Str("/notify".into()), OscArg::Int(id), OscArg::Int(self.max_logins as i32)],
            );
            self.send_reply(from, &msg);
        } else {
            self.notified.remove(from);
            self.send_reply(from, &OscMessage::new("/done", vec![OscArg::Str("/notify".into())]));
        }
    }

    fn handle_audio(&mut self, m: FromAudio) {
        match m {
            FromAudio::Reply { to, msg } => self.send_reply(&to, &msg),
            FromAudio::Event(e) => self.broadcast(&event_message(&e)),
            FromAudio::UnitFailed(f) => {
                crate::printer::errln!("FAILURE IN SERVER /s_new {}", f.message());
                self.broadcast(&OscMessage::new("/fail", vec![OscArg::Str("/s_new".into()), OscArg::Str(f.fail_text())]));
            }
            FromAudio::Trigger(t) => self.broadcast(&trigger_message(&t)),
            FromAudio::Poll(p) => {
                if self.verbosity >= -1 {
                    crate::printer::outln!("{}", crate::post::poll_line(&p));
                }
            }
            FromAudio::Late { to, bundle_time, executed } => {
                let late = executed.saturating_sub(bundle_time) as f64 / 4_294_967_296.0;
                if self.verbosity >= 0 {
                    crate::printer::outln!("late {late:.9}");
                }
                self.send_reply(&to, &Reply::Late { bundle_time, executed_time: executed }.to_message());
            }
            FromAudio::DefRefused { to, def } => {
                let message = magnetar_engine::graph_def::DefError::TooManyDefs { def: def.name.clone() }.to_string();
                crate::printer::errln!("ERROR: {message}");
                self.send_reply(&to, &OscMessage::new("/fail", vec![OscArg::Str("/d_recv".into()), OscArg::Str(message)]));
            }
            FromAudio::DefRemoved(def) => {
                self.broadcast(&OscMessage::new("/d_removed", vec![OscArg::Str(def.name.clone())]))
            }
            FromAudio::Async(req) => {
                // Last line of defence: a command that panics (a bug, not
                // bad input, which gets a `/fail` from the command itself)
                // is answered with `/fail` and the server goes on; the
                // hand-over keeps its order, so `/sync` still completes.
                let from = req.from.clone();
                let command = command_name(&req.msg.address).unwrap_or("").to_string();
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.stage2(*req)));
                if run.is_err() {
                    let message = "internal error, the command was abandoned".to_string();
                    crate::printer::errln!("FAILURE IN SERVER {command} {}", printed::terminal_safe(&message));
                    let reply = OscMessage::new("/fail", vec![OscArg::Str(command), OscArg::Str(message)]);
                    self.to_audio(ToAudio::Finish { done: Done { from, replies: vec![reply], completion: None } });
                }
            }
            FromAudio::Log(text) => {
                if self.verbosity >= -1 {
                    crate::printer::out(text);
                }
            }
            FromAudio::PluginAsync(PluginAsync { mut cmd, from }) => {
                // Stage 2 or 4 (may block, as scsynth's non-real-time stages may).
                let done = cmd.run_nrt();
                let cmd_replies = cmd.replies();
                // Back first: a client that answers `/done` finds the cleanup done.
                self.to_audio(ToAudio::PluginAsync(PluginAsync { cmd, from: from.clone() }));
                if let (Some(name), Some(to), true) = (done, &from, cmd_replies) {
                    self.send_reply(to, &OscMessage::new("/done", vec![OscArg::Str(name)]));
                }
            }
            FromAudio::Garbage(g) => drop(g),
        }
    }

    /// Stage 2 of an asynchronous command: the work that may block or
    /// allocate, then the hand-over to the audio thread.
    fn stage2(&mut self, req: AsyncRequest) {
        let name = command_name(&req.msg.address).unwrap_or("").to_string();
        let from = req.from.clone();
        let fail = |command: &str, message: String, extra: Vec<OscArg>| {
            let mut args = vec![OscArg::Str(command.into()), OscArg::Str(message.clone())];
            args.extend(extra);
            crate::printer::errln!("FAILURE IN SERVER {command} {}", printed::terminal_safe(&message));
            OscMessage::new("/fail", args)
        };
        let mut args = magnetar_engine::args::Args::new(&req.msg.args);
        match name.as_str() {
            "/sync" => {
                let id = args.geti(0);
                let done = Done { from, replies: vec![Reply::Synced { id }.to_message()], completion: None };
                self.to_audio(ToAudio::Finish { done });
            }
            "/d_recv" | "/d_load" | "/d_loadDir" => {
                let (result, completion) = self.load_defs(&name, &mut args);
                let replies = match result {
                    Ok(()) => vec![Reply::done(&name).to_message()],
                    Err(message) => vec![fail(&name, message, vec![])],
                };
                let defs = std::mem::take(&mut self.pending_defs);
                let scratch = self.grow_scratch(&defs);
                self.to_audio(ToAudio::InstallDefs { defs, scratch, done: Done { from, replies, completion } });
            }
            _ => {
                if let Some((lane, seq)) = req.disk_barrier {
                    if !self.disk_barriers.wait(lane, seq, std::time::Duration::from_secs(5)) {
                        crate::printer::errln!("magnetar: the disk thread did not finish buffer {} in time", args.geti(-1));
                    }
                    args = magnetar_engine::args::Args::new(&req.msg.args);
                }
                // Buffer commands run on the mirror, which gets the current
                // contents of the buffer they touch when they need them,
                // copied here: the samples the audio thread has or the ones
                // an install sent before this command brings it (so that
                // `/b_alloc` then `/b_write` writes the new buffer, in order).
                // The buffer the command touches: read as the command reads it.
                let bufnum = args.geti(0);
                // `/b_gen copy`, `PreparePartConv` and `MagnetarConvPrepare` read another buffer.
                let source = (name == "/b_gen")
                    .then(|| {
                        let generator = req.msg.args.get(1).and_then(OscArg::as_str)?;
                        let mut numbers = req.msg.args.iter().skip(2).filter_map(OscArg::as_i32);
                        match generator {
                            "copy" => numbers.nth(1),
                            "PreparePartConv" | "MagnetarConvPrepare" => numbers.next(),
                            _ => None,
                        }
                    })
                    .flatten()
                    .and_then(|b| usize::try_from(b).ok())
                    .filter(|&b| b < self.mirror.buffers.len() && b as i32 != bufnum);
                if let Some(b) = source {
                    let data = self.storage[b].to_vec();
                    let slot = &mut self.mirror.buffers[b];
                    slot.data = data;
                    slot.data.resize(slot.channels as usize * slot.frames as usize, 0.0);
                }
                if READS_CONTENTS.contains(&name.as_str()) {
                    if let Some(b) = usize::try_from(bufnum).ok().filter(|&b| b < self.mirror.buffers.len()) {
                        // `/b_zero` needs no copy: fresh zeros.
                        let shared = match name.as_str() {
                            "/b_zero" => SharedSamples::EMPTY,
                            _ => self.storage.get(b).copied().unwrap_or(SharedSamples::EMPTY),
                        };
                        let slot = &mut self.mirror.buffers[b];
                        // What the audio thread changed in the header itself
                        // (`/b_setSampleRate`), unless an install it has not
                        // taken yet supersedes it.
                        if let Some((hb, h)) = req.header.as_ref().filter(|_| req.installs_applied == self.installs_sent) {
                            if *hb == b {
                                let path = slot.path.take();
                                *slot = header_of(h);
                                slot.path = path;
                            }
                        }
                        let mut data = shared.to_vec();
                        data.resize(slot.channels as usize * slot.frames as usize, 0.0);
                        slot.data = data;
                    }
                }
                let mut args = magnetar_engine::args::Args::new(&req.msg.args);
                match self.buffers.perform(&name, &mut self.mirror, &mut args) {
                    Ok(done) => {
                        let mut replies = done.replies;
                        if let Some(done_args) = done.done_args {
                            let mut a = vec![OscArg::Str(name.clone())];
                            a.extend(done_args);
                            replies.push(OscMessage::new("/done", a));
                        }
                        let done = Done { from, replies, completion: done.completion };
                        let installs = name != "/b_write" && name != "/b_close";
                        match usize::try_from(bufnum).ok().filter(|&b| installs && b < self.mirror.buffers.len()) {
                            Some(b) => {
                                // The audio thread gets the contents; the mirror
                                // keeps the shape (sizes) for later commands.
                                let buf = &mut self.mirror.buffers[b];
                                let shape = SndBuf {
                                    data: Vec::new(),
                                    channels: buf.channels,
                                    frames: buf.frames,
                                    sample_rate: buf.sample_rate,
                                    path: buf.path.clone(),
                                    ..SndBuf::default()
                                };
                                let full = std::mem::replace(buf, shape);
                                if let Some(s) = self.storage.get_mut(b) {
                                    *s = SharedSamples::of(&full.data);
                                }
                                self.installs_sent += 1;
                                self.to_audio(ToAudio::InstallBuffer { bufnum: b, buf: full, done });
                            }
                            None => self.to_audio(ToAudio::Finish { done }),
                        }
                    }
                    Err(f) => {
                        let done = Done { from, replies: vec![fail(&name, f.message, f.extra)], completion: None };
                        self.to_audio(ToAudio::Finish { done });
                    }
                }
                // A copy read for the command and not installed goes here.
                for b in usize::try_from(bufnum).ok().into_iter().chain(source) {
                    if let Some(slot) = self.mirror.buffers.get_mut(b) {
                        slot.data = Vec::new();
                    }
                }
            }
        }
    }

    /// New scratch areas (one synth's, and one per lane for synths run side
    /// by side) when a def needs more than the audio thread has.
    fn grow_scratch(&mut self, defs: &[Arc<GraphDef>]) -> Option<(Vec<f32>, Vec<f32>)> {
        let need = defs.iter().map(|d| d.scratch_len).max().unwrap_or(0);
        (need > self.scratch_len).then(|| {
            self.scratch_len = need;
            (vec![0.0; need], vec![0.0; need * magnetar_ugens::MAX_LANES * self.lane_threads])
        })
    }

    fn load_defs(&mut self, name: &str, args: &mut magnetar_engine::args::Args<'_>) -> (Result<(), String>, Option<Vec<u8>>) {
        let mut sources: Vec<(String, Vec<u8>)> = Vec::new();
        let mut errors = Vec::new();
        match name {
            "/d_recv" => match args.getb() {
                Some(b) => sources.push(("/d_recv".into(), b.to_vec())),
                None => errors.push("wrong argument type: /d_recv needs a blob of SynthDef data".to_string()),
            },
            _ => match args.gets() {
                Some(path) => {
                    let (files, refused) = magnetar_engine::commands::def_files(&self.buffers, path, name == "/d_loadDir");
                    errors.extend(refused);
                    for f in files {
                        match std::fs::read(&f) {
                            Ok(bytes) => sources.push((f.display().to_string(), bytes)),
                            Err(e) => errors.push(format!("{}: {e}", f.display())),
                        }
                    }
                }
                None => errors.push("wrong argument type: the path must be a string".to_string()),
            },
        }
        let completion = args.completion().map(<[u8]>::to_vec);
        for (origin, bytes) in sources {
            match compile_synthdefs_limited(&bytes, &self.registry, self.block_size, self.max_wire_bufs) {
                Ok(list) => {
                    for r in list {
                        match r {
                            Ok(g) => self.pending_defs.push(Arc::new(g)),
                            Err(e) => errors.push(e.to_string()),
                        }
                    }
                }
                Err(e) => errors.push(format!("{origin}: {e}")),
            }
        }
        let r = if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) };
        (r, completion)
    }
}

/// `/version.reply`: the version numbers are those of the SuperCollider
/// protocol magnetar speaks (clients compare them to pick features); the
/// commit field carries magnetar's own version.
fn version_reply() -> OscMessage {
    Reply::Version {
        program: "magnetar".into(),
        major: 3,
        minor: 13,
        patch: ".0".into(),
        branch: String::new(),
        commit: concat!("magnetar-", env!("CARGO_PKG_VERSION")).into(),
    }
    .to_message()
}

/// Set by SIGINT/SIGTERM: the server then shuts down as on `/quit`, so the
/// audio driver (a JACK client, say) is closed properly.
static STOP_SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    // Only an atomic store: all a signal handler may safely do.
    STOP_SIGNALLED.store(true, Ordering::SeqCst);
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
    let buffer_commands = BufferCommands::new(cli.restricted_path.as_ref().map(Into::into));
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
    magnetar_engine::set_heap_counter(magnetar_mem::heap_bytes_allocated);
    if let Some(dir) = &cli.restricted_path {
        engine.buffer_commands = BufferCommands::new(Some(dir.into()));
    }

    let (mut to_audio_tx, to_audio_rx) = spsc::channel::<ToAudio>(TO_AUDIO_CAPACITY);
    let (from_audio_tx, mut from_audio_rx) = spsc::channel::<FromAudio>(FROM_AUDIO_CAPACITY);
    let (control_tx, control_rx) = mpsc::sync_channel::<ControlMsg>(4096);
    let stats_slot = Arc::new(std::sync::OnceLock::new());
    let audio = Audio {
        disk,
        sample_time: 0,
        engine,
        from_control: to_audio_rx,
        to_control: from_audio_tx,
        scheduler: BinaryHeap::with_capacity(SCHEDULER_CAPACITY),
        seq: 0,
        mono_to_unix_ns: mono_to_unix_offset_ns(),
        stats: None,
        stats_slot: Arc::clone(&stats_slot),
        dropped: 0,
        refused_defs: Vec::with_capacity(64),
        events_sent: 0,
        log_sent: 0,
        replaced_defs: Vec::with_capacity(64),
        num_inputs: engine_opts.num_input_channels,
        num_outputs: engine_opts.num_output_channels,
        steady_periods: 0,
        steady_heap_ops: 0,
        all_periods: 0,
        all_heap_ops: 0,
        busy: false,
        thread_id: 0,
        installs_applied: 0,
        plugin_async: magnetar_plugin::start_async_commands(),
    };
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

    // The network threads send into the same queue as the audio thread.
    let (net_tx, net_rx) = mpsc::sync_channel::<Incoming>(4096);
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
    let forward_stop = Arc::new(AtomicBool::new(false));
    let forwarder = {
        let tx = control_tx.clone();
        let stop = Arc::clone(&forward_stop);
        std::thread::Builder::new()
            .name("magnetar-net-fwd".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match net_rx.recv_timeout(std::time::Duration::from_millis(50)) {
                        Ok(inc) => {
                            if tx.send(ControlMsg::Net(inc)).is_err() {
                                break;
                            }
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .expect("spawn network forwarder")
    };
    drop(control_tx);

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

    let mut mirror = World::new(sample_rate, engine_opts.block_size, 0, 0, engine_opts.num_buffers, 0, 0, 0);
    mirror.sample_rate = sample_rate;
    let mut control = Control {
        to_audio: to_audio_tx,
        registry: Registry::with_all(),
        block_size: engine_opts.block_size,
        max_wire_bufs: engine_opts.num_wire_bufs,
        mirror,
        buffers: buffer_commands,
        notified: HashSet::new(),
        scratch_len: 0,
        lane_threads: engine_opts.threads.max(1),
        dump_osc: 0,
        error_mode: 1,
        quit: None,
        max_logins: cli.max_logins,
        verbosity: cli.verbosity,
        pending_defs: Vec::new(),
        disk_barriers,
        storage: vec![SharedSamples::EMPTY; engine_opts.num_buffers],
        installs_sent: 0,
    };
    install_stop_signals();
    let stats = running.stats();
    let mut reported_xruns = 0;
    let mut next_xrun_check = std::time::Instant::now();
    let mut watchdog = crate::watchdog::Watchdog::new(std::time::Instant::now());
    while control.quit.is_none() && !STOP_SIGNALLED.load(Ordering::SeqCst) {
        match control_rx.recv_timeout(CONTROL_POLL) {
            Ok(ControlMsg::Net(inc)) => control.handle_net(inc),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        while let Some(m) = from_audio_rx.pop() {
            control.handle_audio(m);
        }
        // The log hears about xruns, at most once a second.
        if std::time::Instant::now() >= next_xrun_check {
            next_xrun_check += std::time::Duration::from_secs(1);
            let xruns = stats.snapshot().xruns;
            if xruns > reported_xruns && cli.verbosity >= 0 {
                crate::printer::errln!("magnetar: {} xrun(s), {xruns} in all", xruns - reported_xruns);
            }
            reported_xruns = xruns;
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
    forward_stop.store(true, Ordering::Relaxed);
    network.shutdown();
    running.stop();
    if let Some(r) = recorder {
        r.stop();
    }
    let _ = forwarder.join();
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

/// What a `/fail` for a packet that does not decode names as its command:
/// the address when one can be read, `#bundle` for a bundle.
fn undecodable_command_name(data: &[u8]) -> String {
    if osc::is_bundle(data) {
        return "#bundle".into();
    }
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    match std::str::from_utf8(&data[..end]) {
        Ok(name) if name.starts_with('/') => name.to_string(),
        _ => String::new(),
    }
}
