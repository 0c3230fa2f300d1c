//! The audio side: a type that can only render blocks and apply what the
//! control thread prepared (commands, installs, schedule changes). It runs
//! in the driver's callback and never allocates from the system heap,
//! blocks, or prints; everything it lets go of and everything it has to say
//! goes back to the control thread through a wait-free ring.

use super::messages::{header_of, AsyncRequest, Done, FromAudio, Garbage, PluginAsync, RtStats, ToAudio};
use super::{EVENTS_PER_PERIOD, FROM_AUDIO_RESERVED, LOG_LINES_PER_PERIOD, PACKETS_PER_BLOCK, SCHEDULER_CAPACITY};
use crate::driver::{DriverStats, PeriodIo, Process};
use crate::net::ReplyAddr;
use magnetar_engine::{Engine, GraphDef};
use magnetar_protocol::{Command, CommandKind, Prepared, PreparedMessage};
use magnetar_rt::spsc;
use std::collections::BinaryHeap;
use std::sync::Arc;

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

/// A bundle waiting for its time.
struct Scheduled {
    time: u64,
    seq: u64,
    items: Vec<Prepared>,
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

pub(super) fn mono_to_unix_offset_ns() -> i128 {
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    unix as i128 - monotonic_ns() as i128
}

/// The audio thread's state: the engine and the queues around it.
pub(super) struct Audio {
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
    /// Messages the full queue to the control thread refused (leaked, not
    /// freed here); the reserved share keeps this at 0.
    dropped: u64,
    /// Triggers (`/tr`, `SendReply`) and `Poll` values left out because
    /// only the queue's reserved share was free, as scsynth drops them when
    /// its trigger queue is full.
    dropped_triggers: u64,
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
    /// Messages plugins sent from and to the real-time side.
    plugin_fifos: Option<magnetar_plugin::Fifos>,
}

impl Audio {
    /// The audio side of a server whose engine is ready, fed by
    /// `from_control` and answering through `to_control`.
    pub(super) fn new(
        engine: Engine,
        disk: crate::disk::DiskLink,
        from_control: spsc::Consumer<ToAudio>,
        to_control: spsc::Producer<FromAudio>,
        stats_slot: Arc<std::sync::OnceLock<Arc<DriverStats>>>,
    ) -> Audio {
        let num_inputs = engine.options.num_input_channels;
        let num_outputs = engine.options.num_output_channels;
        Audio {
            disk,
            sample_time: 0,
            engine,
            from_control,
            to_control,
            scheduler: BinaryHeap::with_capacity(SCHEDULER_CAPACITY),
            seq: 0,
            mono_to_unix_ns: mono_to_unix_offset_ns(),
            stats: None,
            stats_slot,
            dropped: 0,
            dropped_triggers: 0,
            refused_defs: Vec::with_capacity(64),
            events_sent: 0,
            log_sent: 0,
            replaced_defs: Vec::with_capacity(64),
            num_inputs,
            num_outputs,
            steady_periods: 0,
            steady_heap_ops: 0,
            all_periods: 0,
            all_heap_ops: 0,
            busy: false,
            thread_id: 0,
            installs_applied: 0,
            plugin_async: magnetar_plugin::start_async_commands(),
            plugin_fifos: magnetar_plugin::start_fifos(),
        }
    }

    fn send(&mut self, m: FromAudio) {
        if let Err(lost) = self.to_control.push(m) {
            // Full: freeing here would be a system-heap call on the audio
            // thread, so what it holds is leaked instead (and counted).
            std::mem::forget(lost);
            self.dropped += 1;
        }
    }

    /// How many messages that units produce at their own pace may still
    /// go to the control thread now: what is free beyond the reserved share.
    fn bulk_room(&self) -> usize {
        self.to_control.slots().saturating_sub(FROM_AUDIO_RESERVED)
    }

    /// Sends what units made this block (triggers, `Poll` values) as far
    /// as the room goes; the rest is dropped and counted (`droppedTriggers`)
    /// (it was made here, from the pool: dropping it is no system-heap
    /// call), as scsynth drops triggers when its queue is full. The list
    /// is left empty, its capacity kept.
    fn send_or_drop<T>(&mut self, list: &mut Vec<T>, wrap: fn(T) -> FromAudio) {
        if list.is_empty() {
            return;
        }
        let due = list.len().min(self.bulk_room());
        for x in list.drain(..due) {
            self.send(wrap(x));
        }
        self.dropped_triggers += list.len() as u64;
        list.clear();
    }

    fn flush_replies(&mut self, to: &ReplyAddr) {
        if !self.engine.replies.is_empty() {
            // Drained rather than taken, so the list keeps its capacity.
            let mut replies = std::mem::take(&mut self.engine.replies);
            for reply in replies.drain(..) {
                self.send(FromAudio::Reply { to: to.clone(), reply });
            }
            self.engine.replies = replies;
        }
        if !self.engine.tree_queries.is_empty() {
            let mut queries = std::mem::take(&mut self.engine.tree_queries);
            for query in queries.drain(..) {
                self.send(FromAudio::TreeQuery { to: to.clone(), query });
            }
            self.engine.tree_queries = queries;
        }
    }

    fn perform_message(&mut self, cmd: PreparedMessage, from: &ReplyAddr) {
        let Some(kind) = cmd.kind else { return self.perform_engine(cmd, from) };
        if kind == CommandKind::MagnetarRtStats {
            // Extension: what the audio thread measured about itself; the
            // control thread builds the reply (pool memory, from here).
            let stats = Box::new(self.rt_stats());
            self.send(FromAudio::RtStats { to: from.clone(), stats });
            self.send(FromAudio::Garbage(Garbage::Message(cmd)));
            return;
        }
        if kind == CommandKind::MagnetarDiskStats {
            // Extension: what the disk threads measured (see README).
            let reset = matches!(cmd.cmd, Ok(Command::MagnetarDiskStats { reset: true }));
            let values = Box::new(self.disk.stats_values(reset));
            self.send(FromAudio::DiskStats { to: from.clone(), values });
            self.send(FromAudio::Garbage(Garbage::Message(cmd)));
            return;
        }
        // Commands that edit an existing buffer's contents read them on the
        // control thread (`Control::storage`); the audio thread copies
        // nothing and only sends the buffer's header.
        let needs_contents = kind.reads_buffer_contents();
        if kind.runs_in_stage2() {
            // The buffer the command itself will work on, read when the
            // message was prepared on the control thread.
            let bufnum = cmd.operand.buffer();
            // A buffer that streams: what the disk side has queued for it is
            // done before the command touches the buffer or its file.
            let disk_barrier =
                bufnum.and_then(|b| self.disk.barrier(&mut self.engine.world, self.sample_time, b));
            let mut request = Box::new(AsyncRequest {
                cmd,
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
        self.perform_engine(cmd, from);
    }

    /// A command the engine performs here and now.
    fn perform_engine(&mut self, cmd: PreparedMessage, from: &ReplyAddr) {
        if cmd.kind.is_none() {
            // A command the server does not know: its name is in the
            // message, which goes back to the control thread anyway, and
            // the failure is written there (nothing is formatted here).
            self.flush_log();
            self.send(FromAudio::NotFound { to: from.clone(), cmd });
            return;
        }
        let result = self.engine.perform(&cmd);
        // Responses the command left stale are remade on the control thread.
        while let Some(b) = self.engine.responses.pop() {
            self.send(FromAudio::StaleResponse(b));
        }
        if let Err(f) = result {
            // What the command printed comes before its failure line.
            self.flush_log();
            // The control thread writes the line and the `/fail`.
            self.send(FromAudio::Failed { to: from.clone(), failure: Box::new(f) });
        }
        self.flush_replies(from);
        self.forward_plugin_async(Some(from));
        self.send(FromAudio::Garbage(Garbage::Message(cmd)));
    }

    /// Hands the asynchronous commands plugins started to the control
    /// thread for their stage 2; `from` sent the message that ran the plugin.
    fn forward_plugin_async(&mut self, from: Option<&ReplyAddr>) {
        while let Some(cmd) = self.plugin_async.as_mut().and_then(magnetar_plugin::AsyncQueue::pop) {
            self.send(FromAudio::PluginAsync(PluginAsync { cmd, from: from.cloned(), completion: None }));
        }
    }

    /// Performs the messages plugins sent to the audio thread
    /// (`SendMsgToRT`); their free functions run on the control thread.
    fn perform_plugin_messages(&mut self) {
        while let Some(mut msg) = self.plugin_fifos.as_mut().and_then(magnetar_plugin::Fifos::pop_to_rt) {
            self.busy = true;
            msg.perform(true);
            self.send(FromAudio::PluginMsgFree(msg));
        }
    }

    /// Hands the messages plugin units sent from the real-time side
    /// (`SendMsgFromRT`) to the control thread, which performs them.
    fn forward_plugin_messages(&mut self) {
        while let Some(msg) = self.plugin_fifos.as_mut().and_then(magnetar_plugin::Fifos::pop_from_rt) {
            self.busy = true;
            self.send(FromAudio::PluginMsgPerform(msg));
        }
    }

    /// Performs a prepared packet: a message, or a bundle's elements in order.
    fn perform_packet(&mut self, packet: Prepared, from: &ReplyAddr) {
        match packet {
            Prepared::Message(m) => self.perform_message(m, from),
            Prepared::Bundle { items, .. } => self.perform_items(items, from),
        }
    }

    fn perform_items(&mut self, mut items: Vec<Prepared>, from: &ReplyAddr) {
        for p in items.drain(..) {
            self.perform_packet(p, from);
        }
        self.send(FromAudio::Garbage(Garbage::Packets(items)));
    }

    fn take_packet(&mut self, packet: Prepared, from: ReplyAddr, block_start: u64, block_end: u64, sr: f64) {
        match packet {
            Prepared::Message(m) => {
                self.engine.sample_offset = 0;
                self.engine.subsample_offset = 0.0;
                self.perform_message(m, &from);
            }
            Prepared::Bundle { time, items } => {
                // Time tag 1 (and 0) means "now".
                if time <= 1 || time < block_end {
                    if time > 1 && time < block_start {
                        // Late: runs now; the sender hears `/late` (bundle
                        // time and the time it ran), and the console a line.
                        self.send(FromAudio::Late { to: from.clone(), bundle_time: time, executed: block_start });
                    }
                    self.set_offset(time, block_start, sr);
                    self.perform_items(items, &from);
                } else if self.scheduler.len() < SCHEDULER_CAPACITY {
                    self.seq += 1;
                    self.scheduler.push(Scheduled { time, seq: self.seq, items, from });
                } else {
                    self.send(FromAudio::Log("scheduler full: bundle dropped\n".into()));
                    self.send(FromAudio::Garbage(Garbage::Packets(items)));
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
            ToAudio::Response { bufnum, prepared } => {
                let old = match self.engine.world.buffers.get_mut(bufnum) {
                    Some(slot) => std::mem::replace(&mut slot.prepared, prepared),
                    None => prepared,
                };
                if let Some(old) = old {
                    self.send(FromAudio::Garbage(Garbage::Response(old)));
                }
            }
            ToAudio::Finish { done } => self.finish(done),
            ToAudio::SetSampleRate(sr) => {
                self.engine.set_sample_rate(sr);
                self.disk.set_sample_rate(sr);
            }
            ToAudio::ClearSchedule => {
                while let Some(s) = self.scheduler.pop() {
                    self.send(FromAudio::Garbage(Garbage::Packets(s.items)));
                }
            }
            // Performed on the control thread: freed here, where it was sent.
            ToAudio::PluginMsgFree(msg) => msg.free(true),
            ToAudio::PluginAsync(PluginAsync { mut cmd, from, completion }) => match cmd.run_rt(&mut self.engine.world) {
                magnetar_plugin::RtStep::ToNrt(bytes) => {
                    // The control thread took the bytes out and decoded them
                    // after stage 2; none are left to decode here.
                    if let Some(bytes) = bytes {
                        self.send(FromAudio::Garbage(Garbage::Bytes(bytes)));
                    }
                    if completion.is_some() {
                        // Stage 3 succeeded: its completion message runs now.
                        // A command a unit started has no reply address
                        // (scsynth's null one): its completion message still
                        // runs, and what that answers goes nowhere.
                        let to = match (&from, cmd.replies()) {
                            (Some(from), true) => from.clone(),
                            _ => ReplyAddr::nowhere(),
                        };
                        self.finish(Done { from: to, replies: Vec::new(), completion });
                    }
                    self.send(FromAudio::PluginAsync(PluginAsync { cmd, from, completion: None }));
                }
                magnetar_plugin::RtStep::Finished => {
                    self.send(FromAudio::Garbage(Garbage::Completion(completion)));
                    // The box came from the pool on this thread's side: freed here.
                    drop(cmd)
                }
            },
        }
    }

    /// Stage 3's end: run the completion message, then owe the replies.
    /// Everything `done` holds was allocated on the control thread and goes
    /// back there to be freed.
    fn finish(&mut self, done: Done) {
        let Done { from, mut replies, completion } = done;
        match completion {
            Some(Ok(packet)) => self.perform_packet(packet, &from),
            // Made on the control thread: the line only travels back.
            Some(Err(line)) => self.send(FromAudio::Log(line)),
            None => {}
        }
        for reply in replies.drain(..) {
            self.send(FromAudio::Reply { to: from.clone(), reply });
        }
        self.send(FromAudio::Garbage(Garbage::Replies(replies)));
    }

    /// What `/magnetar_rtStats` reports, as of now.
    fn rt_stats(&self) -> RtStats {
        let pool = magnetar_mem::status();
        // One copy of the driver's counters, so that its two fields below are of one moment.
        let driver = self.stats.as_ref().map(|s| s.snapshot()).unwrap_or_default();
        RtStats {
            steady_periods: self.steady_periods,
            steady_heap_ops: self.steady_heap_ops,
            thread_id: self.thread_id,
            xruns: driver.xruns,
            pool_used: pool.used as u64,
            pool_peak: pool.peak as u64,
            pool_misses: pool.misses,
            all_periods: self.all_periods,
            all_heap_ops: self.all_heap_ops,
            parallel_groups: self.engine.parallel_groups_run(),
            disk_underruns: self.engine.world.disk_underruns,
            deadline_misses: self.engine.tasks.deadline_misses(),
            c_heap_ops: magnetar_rt::guard::total_c_allocations_while_armed(),
            dropped_triggers: self.dropped_triggers,
            dropped_messages: self.dropped,
            skipped_frames: driver.skipped_frames,
            guarded_syscalls: magnetar_rt::sysguard::caught_total(),
        }
    }

    /// Hands node notifications, triggers and printed text to the control
    /// thread, which encodes and sends them (encoding allocates).
    fn notify_events(&mut self) {
        // Unit failures wait (their list is bounded) while only the
        // reserved share of the queue is free.
        let failures_due = self.engine.unit_failures.len().min(self.bulk_room());
        if failures_due > 0 {
            let mut failures = std::mem::take(&mut self.engine.unit_failures);
            for f in failures.drain(..failures_due) {
                self.send(FromAudio::UnitFailed(f));
            }
            self.engine.unit_failures = failures;
        }
        // A few thousand notifications per period at most, and only while
        // more than the reserved share of the queue is free, so that a tree
        // freed at once cannot fill the queue to the control thread and
        // crowd out the replies (`/synced`, `/done`) behind them, however
        // long the control thread takes to catch up.
        let pending = self.engine.events.len();
        let room = self.bulk_room();
        if pending > self.events_sent && room > 0 {
            let end = pending.min(self.events_sent + EVENTS_PER_PERIOD.min(room));
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
        // Those units made while the block's lists were full were dropped
        // there, and are counted here.
        self.dropped_triggers += std::mem::take(&mut self.engine.world.dropped_triggers);
        let mut triggers = std::mem::take(&mut self.engine.world.triggers);
        self.send_or_drop(&mut triggers, FromAudio::Trigger);
        self.engine.world.triggers = triggers;
        let mut polls = std::mem::take(&mut self.engine.world.polls);
        self.send_or_drop(&mut polls, FromAudio::Poll);
        self.engine.world.polls = polls;
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
        // The reserved share stays free for replies, whatever the control
        // thread has not taken yet.
        let room = self.bulk_room();
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
                self.perform_items(s.items, &s.from);
            }
            if commands > 0 {
                magnetar_rt::trace::span(magnetar_rt::trace::Kind::Commands, commands_started, commands, 0);
            }
            self.perform_plugin_messages();
            self.engine.run_block();
            self.forward_plugin_async(None);
            self.forward_plugin_messages();
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
