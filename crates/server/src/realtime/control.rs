//! The control side: decodes what clients send, answers what needs no
//! audio thread, does every command's stage 2 (files, SynthDef parsing,
//! buffer preparation: whatever may allocate or block), hands prepared work
//! to the audio thread, and sends replies and notifications.

use super::messages::{disk_stats_reply, header_of, prepare_completion, AsyncRequest, Done, FromAudio, PluginAsync, ToAudio};
use crate::net::{Incoming, ReplyAddr};
use magnetar_engine::commands::{CommandFailure, FailReason};
use magnetar_engine::{ControlEngine, NodeEvent, NodeEventKind};
use magnetar_protocol::osc::{self, OscArg, OscMessage};
use magnetar_protocol::{Command, CommandKind, Prepared};
use magnetar_protocol::printed;
use magnetar_protocol::replies::Reply;
use std::borrow::Cow;
use magnetar_rt::spsc;
use magnetar_ugens::world::Trigger;
use magnetar_ugens::{SndBuf, World};
use std::collections::HashSet;

fn event_reply(e: &NodeEvent) -> Reply {
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

/// The control thread's state: stage-2 work and client bookkeeping.
pub(super) struct Control {
    to_audio: spsc::Producer<ToAudio>,
    /// The engine's control side: compiler, files, buffer preparation.
    engine: ControlEngine,
    /// What the audio thread's buffers look like (sizes; contents only while
    /// a command works on them).
    mirror: World,
    notified: HashSet<ReplyAddr>,
    dump_osc: i32,
    error_mode: i32,
    pub(super) quit: Option<ReplyAddr>,
    max_logins: usize,
    verbosity: i32,
    disk_barriers: crate::disk::DiskBarriers,
    /// Per buffer, the samples the audio thread has, or will have once the
    /// installs already sent are taken (scsynth's NRT view of a buffer).
    storage: Vec<SharedSamples>,
    /// `ToAudio::InstallBuffer`s sent so far.
    installs_sent: u64,
    /// Buffers whose convolution response the audio thread's commands left
    /// stale, to remake (`remake_stale_responses`).
    stale_responses: Vec<usize>,
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


impl Control {
    /// The control side of a server booted with `opts`, whose audio side
    /// reads `to_audio`; `engine` is the engine's control side (it keeps the
    /// open files), `sample_rate` is the driver's.
    pub(super) fn new(
        to_audio: spsc::Producer<ToAudio>,
        opts: &magnetar_engine::EngineOptions,
        sample_rate: f64,
        engine: ControlEngine,
        disk_barriers: crate::disk::DiskBarriers,
        max_logins: usize,
        verbosity: i32,
    ) -> Control {
        let mut mirror = World::new(sample_rate, opts.block_size, 0, 0, opts.num_buffers, 0, 0, 0);
        mirror.sample_rate = sample_rate;
        Control {
            to_audio,
            engine,
            mirror,
            notified: HashSet::new(),
            dump_osc: 0,
            error_mode: 1,
            quit: None,
            max_logins,
            verbosity,
            disk_barriers,
            storage: vec![SharedSamples::EMPTY; opts.num_buffers],
            installs_sent: 0,
            stale_responses: Vec::new(),
        }
    }

    fn send_reply(&self, to: &ReplyAddr, reply: &Reply) {
        // `/error 0` silences failure replies (the console still shows them).
        if self.error_mode == 0 && reply.is_fail() {
            return;
        }
        self.send_message(to, &reply.to_message());
    }

    /// Sends a message that is no [`Reply`] (the server's own statistics).
    fn send_message(&self, to: &ReplyAddr, msg: &OscMessage) {
        let _ = to.send(&msg.encode());
    }

    pub(super) fn broadcast(&self, msg: &OscMessage) {
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

    pub(super) fn handle_net(&mut self, inc: Incoming) {
        if self.dump_osc & 2 != 0 {
            crate::printer::outln!("{}", printed::hex_dump_text(&inc.data));
        }
        // The one place a packet's commands are found and decoded (the
        // common ones straight from the bytes).
        let packet = match Prepared::decode(&inc.data) {
            Ok(p) => p,
            Err(e) => {
                if self.verbosity >= -1 {
                    crate::printer::errln!("ERROR: could not decode OSC packet from {}: {e}", inc.from.peer());
                }
                let reply = Reply::fail(undecodable_command_name(&inc.data), e.to_string());
                return self.send_reply(&inc.from, &reply);
            }
        };
        if self.dump_osc & 1 != 0 {
            // The packet decoded above, so it decodes here too.
            if let Some(text) = osc::decode(&inc.data).ok().and_then(|p| printed::dump_osc_text(&p)) {
                crate::printer::outln!("{text}");
            }
        }
        // An unknown number is answered here; an unknown name fails on the
        // audio thread, in order with the replies before it. (A message
        // whose first byte is 0 has a number for its address.)
        if let Prepared::Message(m) = &packet {
            if inc.data.first() == Some(&0) && m.kind.is_none() {
                let address = m.name().to_owned();
                crate::printer::errln!("FAILURE IN SERVER: {} Command not found", printed::terminal_safe(&address));
                return self.send_reply(&inc.from, &Reply::fail(address, "Command not found"));
            }
        }
        // Commands about the connection itself are answered here at once.
        if let Prepared::Message(m) = &packet {
            match &m.cmd {
                Ok(Command::Notify { on, .. }) => return self.notify(*on, &inc.from),
                Ok(Command::Quit) => {
                    self.send_reply(&inc.from, &Reply::done("/quit"));
                    self.quit = Some(inc.from);
                    return;
                }
                Ok(Command::Version) => return self.send_reply(&inc.from, &version_reply()),
                Ok(Command::DumpOsc { mode }) => {
                    self.dump_osc = *mode;
                    return;
                }
                Ok(Command::Error { mode }) => {
                    // 0 and 1 switch failure replies off and on (no mode
                    // reads as 0, as in scsynth); the bundle-local modes
                    // (-1, -2) are accepted and ignored.
                    if *mode >= 0 {
                        self.error_mode = *mode;
                    }
                    return;
                }
                Ok(Command::ClearSched) => return self.to_audio(ToAudio::ClearSchedule),
                _ => {}
            }
        }
        self.to_audio(ToAudio::Packet { packet, from: inc.from });
    }

    fn notify(&mut self, on: bool, from: &ReplyAddr) {
        if on {
            if !self.notified.contains(from) && self.notified.len() >= self.max_logins {
                return self.send_reply(from, &Reply::fail("/notify", "too many users"));
            }
            self.notified.insert(from.clone());
            let id = self.notified.len() as i32 - 1;
            let reply = Reply::Done { command: "/notify".into(), args: vec![id, self.max_logins as i32] };
            self.send_reply(from, &reply);
        } else {
            self.notified.remove(from);
            self.send_reply(from, &Reply::done("/notify"));
        }
    }

    /// The console line and the `/fail` of a command the audio thread
    /// performed: the failure's text is made here, off the audio thread.
    fn command_failed(&mut self, to: &ReplyAddr, failure: &CommandFailure) {
        if self.verbosity >= -1 {
            crate::printer::out(format!("{failure}\n"));
        }
        self.send_reply(to, &failure.to_reply());
    }

    pub(super) fn handle_audio(&mut self, m: FromAudio) {
        match m {
            FromAudio::Reply { to, reply } => self.send_reply(&to, &reply),
            FromAudio::TreeQuery { to, query } => self.send_reply(&to, &query.to_reply()),
            FromAudio::Failed { to, failure } => self.command_failed(&to, &failure),
            FromAudio::NotFound { to, cmd } => {
                let failure = CommandFailure::new(cmd.name().to_string(), FailReason::CommandNotFound);
                self.command_failed(&to, &failure);
            }
            FromAudio::RtStats { to, stats } => self.send_message(&to, &stats.reply()),
            FromAudio::DiskStats { to, values } => self.send_message(&to, &disk_stats_reply(&values[..])),
            FromAudio::Event(e) => self.broadcast(&event_reply(&e).to_message()),
            FromAudio::UnitFailed(f) => {
                crate::printer::errln!("FAILURE IN SERVER /s_new {}", f.message());
                self.broadcast(&Reply::fail("/s_new", f.fail_text()).to_message());
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
                self.send_reply(&to, &Reply::Late { bundle_time, executed_time: executed });
            }
            FromAudio::DefRefused { to, def } => {
                let message = magnetar_engine::graph_def::DefError::TooManyDefs { def: def.name.clone() }.to_string();
                crate::printer::errln!("ERROR: {message}");
                self.send_reply(&to, &Reply::fail("/d_recv", message));
            }
            FromAudio::DefRemoved(def) => self.broadcast(&Reply::DefRemoved { name: def.name.clone() }.to_message()),
            FromAudio::StaleResponse(b) => {
                if !self.stale_responses.contains(&b) {
                    self.stale_responses.push(b);
                }
            }
            FromAudio::Async(req) => {
                // A command after a `/b_setn` (`/sync`, say) finds its response remade.
                self.remake_stale_responses();
                // Last line of defence: a command that panics (a bug, not
                // bad input, which gets a `/fail` from the command itself)
                // is answered with `/fail` and the server goes on; the
                // hand-over keeps its order, so `/sync` still completes.
                let from = req.from.clone();
                let command = req.cmd.name().to_string();
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.stage2(*req)));
                if run.is_err() {
                    let message = "internal error, the command was abandoned".to_string();
                    crate::printer::errln!("FAILURE IN SERVER {command} {}", printed::terminal_safe(&message));
                    let reply = Reply::fail(command, message);
                    self.to_audio(ToAudio::Finish { done: Done { from, replies: vec![reply], completion: None } });
                }
            }
            FromAudio::Log(text) => {
                if self.verbosity >= -1 {
                    crate::printer::out(text);
                }
            }
            FromAudio::PluginAsync(PluginAsync { mut cmd, from, .. }) => {
                // Stage 2 or 4 (may block, as scsynth's non-real-time stages may).
                let done = cmd.run_nrt();
                let cmd_replies = cmd.replies();
                // The completion message (there is one only until stage 2 is
                // over) is decoded here, for stage 3 to perform.
                let completion = prepare_completion(cmd.take_completion());
                // Back first: a client that answers `/done` finds the cleanup done.
                self.to_audio(ToAudio::PluginAsync(PluginAsync { cmd, from: from.clone(), completion }));
                if let (Some(name), Some(to), true) = (done, &from, cmd_replies) {
                    self.send_reply(to, &Reply::done(name));
                }
            }
            FromAudio::PluginMsgPerform(mut msg) => {
                // scsynth performs these on its non-real-time thread.
                msg.perform(false);
                self.to_audio(ToAudio::PluginMsgFree(msg));
            }
            FromAudio::PluginMsgFree(msg) => msg.free(false),
            FromAudio::Garbage(g) => drop(g),
        }
    }

    /// Remakes, from the audio thread's contents, the convolution responses
    /// of the buffers `/b_set`, `/b_setn` or `/b_fill` changed since the
    /// last call (each once, however many commands changed it), and sends
    /// them to be swapped in at a block start.
    pub(super) fn remake_stale_responses(&mut self) {
        for b in std::mem::take(&mut self.stale_responses) {
            let data = self.storage.get(b).copied().unwrap_or(SharedSamples::EMPTY).to_vec();
            let prepared = magnetar_ugens::convolution::PreparedResponse::of(&data);
            self.to_audio(ToAudio::Response { bufnum: b, prepared });
        }
    }

    /// Stage 2 of an asynchronous command: the work that may block or
    /// allocate, then the hand-over to the audio thread.
    fn stage2(&mut self, req: AsyncRequest) {
        // Only stage-2 kinds come here.
        let Some(kind) = req.cmd.kind else { return };
        let name = kind.name();
        let from = req.from.clone();
        let fail = |command: &'static str, message: String, buffer: Option<i32>| {
            crate::printer::errln!("FAILURE IN SERVER {command} {}", printed::terminal_safe(&message));
            Reply::Fail { command: Cow::Borrowed(command), message, args: buffer.into_iter().collect() }
        };
        // The buffer a buffer command works on, as its decoding read it.
        let bufnum = req.cmd.cmd.as_ref().ok().and_then(magnetar_protocol::prepared::stage2_buffer).unwrap_or(-1);
        match kind {
            CommandKind::Sync => {
                let id = match req.cmd.cmd {
                    Ok(Command::Sync { id }) => id,
                    _ => 0,
                };
                let done = Done { from, replies: vec![Reply::Synced { id }], completion: None };
                self.to_audio(ToAudio::Finish { done });
            }
            CommandKind::DRecv | CommandKind::DLoad | CommandKind::DLoadDir => {
                let loaded = self.engine.load_defs(kind, &req.cmd.cmd);
                let replies = match loaded.result {
                    Ok(()) => vec![Reply::done(name)],
                    Err(e) => vec![fail(name, e.to_string(), None)],
                };
                let completion = prepare_completion(loaded.completion);
                let done = Done { from, replies, completion };
                self.to_audio(ToAudio::InstallDefs { defs: loaded.defs, scratch: loaded.scratch, done });
            }
            _ => {
                if let Some((lane, seq)) = req.disk_barrier {
                    if !self.disk_barriers.wait(lane, seq, std::time::Duration::from_secs(5)) {
                        crate::printer::errln!("magnetar: the disk thread did not finish buffer {bufnum} in time");
                    }
                }
                // Buffer commands run on the mirror, which gets the current
                // contents of the buffer they touch when they need them,
                // copied here: the samples the audio thread has or the ones
                // an install sent before this command brings it (so that
                // `/b_alloc` then `/b_write` writes the new buffer, in order).
                // `/b_gen copy`, `PreparePartConv` and `MagnetarConvPrepare` read another buffer.
                let source = req
                    .cmd
                    .cmd
                    .as_ref()
                    .ok()
                    .and_then(|c| magnetar_engine::bufgen::gen_source_buffer(c, self.mirror.buffers.len()))
                    .filter(|&b| b as i32 != bufnum);
                if let Some(b) = source {
                    let data = self.storage[b].to_vec();
                    let slot = &mut self.mirror.buffers[b];
                    slot.data = data;
                    slot.data.resize(slot.channels as usize * slot.frames as usize, 0.0);
                }
                if kind.reads_buffer_contents() {
                    if let Some(b) = usize::try_from(bufnum).ok().filter(|&b| b < self.mirror.buffers.len()) {
                        // `/b_zero` needs no copy: fresh zeros.
                        let shared = match kind {
                            CommandKind::BZero => SharedSamples::EMPTY,
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
                match self.engine.perform_buffer(&req.cmd.cmd, &mut self.mirror) {
                    Ok(done) => {
                        let done_reply = done.done_reply(name);
                        let mut replies = done.replies;
                        replies.extend(done_reply);
                        let done = Done { from, replies, completion: prepare_completion(done.completion) };
                        let installs = kind != CommandKind::BWrite && kind != CommandKind::BClose;
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
                        let done = Done { from, replies: vec![fail(name, f.message, f.buffer)], completion: None };
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
}

/// `/version.reply`: the version numbers are those of the SuperCollider
/// protocol magnetar speaks (clients compare them to pick features); the
/// commit field carries magnetar's own version.
fn version_reply() -> Reply {
    Reply::Version {
        program: "magnetar".into(),
        major: 3,
        minor: 13,
        patch: ".0".into(),
        branch: String::new(),
        commit: concat!("magnetar-", env!("CARGO_PKG_VERSION")).into(),
    }
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

