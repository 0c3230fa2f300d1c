//! What crosses between the control thread and the audio thread, both
//! ways, and nothing else: the two threads share no other state.

use crate::net::ReplyAddr;
use magnetar_engine::{GraphDef, NodeEvent};
use magnetar_protocol::osc::{OscArg, OscMessage};
use magnetar_protocol::{Prepared, PreparedMessage, Reply};
use magnetar_ugens::world::{PollLine, Trigger};
use magnetar_ugens::convolution::PreparedResponse;
use magnetar_ugens::SndBuf;
use std::sync::Arc;

/// What the control thread sends the audio thread.
pub(super) enum ToAudio {
    /// A client's packet, decoded and its commands found.
    Packet { packet: Prepared, from: ReplyAddr },
    /// Stage 3 of `/d_recv` and friends.
    InstallDefs { defs: Vec<Arc<GraphDef>>, scratch: Option<(Vec<f32>, Vec<f32>)>, done: Done },
    /// Stage 3 of buffer commands that replace a buffer's contents.
    InstallBuffer { bufnum: usize, buf: SndBuf, done: Done },
    /// The convolution response remade from a buffer's contents after the
    /// audio thread's `/b_set`, `/b_setn` or `/b_fill` changed them (None:
    /// they no longer hold one).
    Response { bufnum: usize, prepared: Option<Arc<PreparedResponse>> },
    /// Stage 3 of commands with nothing to install (`/sync`, `/b_close`, failures).
    Finish { done: Done },
    SetSampleRate(f64),
    /// `/clearSched`: drop every bundle waiting for its time.
    ClearSchedule,
    /// A plugin's asynchronous command, for stage 3 or its cleanup.
    PluginAsync(PluginAsync),
    /// A message a plugin sent from the real-time side, performed: its
    /// free function runs on the audio thread.
    PluginMsgFree(magnetar_plugin::FifoMessage),
}

/// A plugin's asynchronous command between its stages, with the sender of
/// the message that started it: its completion message runs as theirs, and
/// `/done` goes there (when the plugin passed the reply address on).
pub(super) struct PluginAsync {
    pub(super) cmd: Box<magnetar_plugin::AsyncCommand>,
    pub(super) from: Option<ReplyAddr>,
    /// Its completion message, decoded on the control thread after stage 2
    /// (or the line to print when it does not decode), for the audio thread
    /// to perform if stage 3 succeeds.
    pub(super) completion: Option<Result<Prepared, String>>,
}

/// Replies owed once a prepared object is installed.
pub(super) struct Done {
    pub(super) from: ReplyAddr,
    /// `/done` (or `/synced`, `/fail`) replies, sent after the completion runs.
    pub(super) replies: Vec<Reply>,
    /// The completion message, decoded on the control thread (or the line
    /// to print when it does not decode).
    pub(super) completion: Option<Result<Prepared, String>>,
}

/// An asynchronous command on its way to the control thread.
pub(super) struct AsyncRequest {
    pub(super) cmd: PreparedMessage,
    pub(super) from: ReplyAddr,
    /// The header (sizes, sample rate; no samples) of the buffer the
    /// command works on as the audio thread had it, when it needs one.
    pub(super) header: Option<(usize, SndBuf)>,
    /// Buffer installs the audio thread had applied when it sent this: if
    /// the control thread has sent more, the header above is out of date.
    pub(super) installs_applied: u64,
    /// The disk thread and barrier to wait for first, when the buffer streamed.
    pub(super) disk_barrier: Option<(usize, u64)>,
}

/// What the audio thread sends the control thread.
pub(super) enum FromAudio {
    /// A reply, typed: the control thread encodes it.
    Reply { to: ReplyAddr, reply: Reply },
    /// A `/g_queryTree` answer as the audio thread took it: the control
    /// thread names the controls and encodes the reply.
    TreeQuery { to: ReplyAddr, query: magnetar_engine::queries::TreeQuery },
    /// A command the audio thread performed failed: a line on the console,
    /// then `/fail` to its sender.
    Failed { to: ReplyAddr, failure: Box<magnetar_engine::commands::CommandFailure> },
    /// A command the server does not know (its message, which holds the
    /// name): a line on the console, then `/fail` to its sender, both
    /// written here.
    NotFound { to: ReplyAddr, cmd: PreparedMessage },
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
    /// `/magnetar_rtStats`: what the audio thread measured, as it reached
    /// the command; the control thread builds the reply.
    RtStats { to: ReplyAddr, stats: Box<RtStats> },
    /// `/magnetar_diskStats`: what the disk side measured (likewise).
    DiskStats { to: ReplyAddr, values: Box<[i64; crate::disk::DISK_STATS_VALUES]> },
    Async(Box<AsyncRequest>),
    Log(String),
    /// A plugin's asynchronous command, for stage 2 or 4.
    PluginAsync(PluginAsync),
    /// A message a plugin sent from the real-time side (`SendMsgFromRT`),
    /// for its perform function.
    PluginMsgPerform(magnetar_plugin::FifoMessage),
    /// A message sent to the audio thread (`SendMsgToRT`), performed
    /// there: its free function runs on the control thread.
    PluginMsgFree(magnetar_plugin::FifoMessage),
    /// A buffer whose contents a command changed while they hold (or held)
    /// a prepared convolution response: it is to be remade here.
    StaleResponse(usize),
    /// Something the audio thread no longer needs, to be dropped here.
    Garbage(Garbage),
}

/// Held only to be dropped on the control thread.
#[allow(dead_code)]
pub(super) enum Garbage {
    Packets(Vec<Prepared>),
    /// A performed message: its arguments and typed command are freed here.
    Message(PreparedMessage),
    Buffer(SndBuf),
    Defs(Vec<Arc<GraphDef>>),
    Def(Arc<GraphDef>),
    Scratch(Vec<f32>),
    Replies(Vec<Reply>),
    Completion(Option<Result<Prepared, String>>),
    Bytes(Vec<u8>),
    Response(Arc<PreparedResponse>),
}

/// The audio thread's figures for `/magnetar_rtStats.reply`, in its order
/// (README): numbers only, so that the audio thread builds no message.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RtStats {
    /// Periods without commands, and system-heap operations in them.
    pub(super) steady_periods: u64,
    pub(super) steady_heap_ops: u64,
    pub(super) thread_id: i32,
    pub(super) xruns: u64,
    pub(super) pool_used: u64,
    pub(super) pool_peak: u64,
    pub(super) pool_misses: u64,
    /// All periods, and system-heap operations in them.
    pub(super) all_periods: u64,
    pub(super) all_heap_ops: u64,
    pub(super) parallel_groups: u64,
    pub(super) disk_underruns: u64,
    pub(super) deadline_misses: u64,
    /// C and C++ code's (plugins') heap operations on the audio thread and DSP helpers.
    pub(super) c_heap_ops: u64,
    /// Triggers and `Poll` values left out to keep the queue's reserved
    /// share free, and messages the full queue refused (0 while the share
    /// holds).
    pub(super) dropped_triggers: u64,
    pub(super) dropped_messages: u64,
    /// Frames the clock driver's schedule skipped after late periods.
    pub(super) skipped_frames: u64,
    /// System calls the guard caught (`MAGNETAR_RT_GUARD=1`): always last.
    pub(super) guarded_syscalls: u64,
}

impl RtStats {
    pub(super) fn reply(&self) -> OscMessage {
        let long = |v: u64| OscArg::Long(v as i64);
        OscMessage::new(
            "/magnetar_rtStats.reply",
            vec![
                long(self.steady_periods),
                long(self.steady_heap_ops),
                OscArg::Int(self.thread_id),
                long(self.xruns),
                long(self.pool_used),
                long(self.pool_peak),
                long(self.pool_misses),
                long(self.all_periods),
                long(self.all_heap_ops),
                long(self.parallel_groups),
                long(self.disk_underruns),
                long(self.deadline_misses),
                long(self.c_heap_ops),
                long(self.dropped_triggers),
                long(self.dropped_messages),
                long(self.skipped_frames),
                long(self.guarded_syscalls),
            ],
        )
    }
}

/// `/magnetar_diskStats.reply` from the disk side's values.
pub(super) fn disk_stats_reply(values: &[i64]) -> OscMessage {
    OscMessage::new("/magnetar_diskStats.reply", values.iter().map(|&v| OscArg::Long(v)).collect())
}

/// A buffer's header without its samples or path: allocates nothing.
pub(super) fn header_of(buf: &SndBuf) -> SndBuf {
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
        prepared: None,
    }
}

/// A completion message decoded on the control thread, for the audio thread
/// to perform as it installs the result.
pub(super) fn prepare_completion(bytes: Option<Vec<u8>>) -> Option<Result<Prepared, String>> {
    let bytes = bytes?;
    Some(Prepared::decode(&bytes).map_err(|e| format!("bad completion message: {e}\n")))
}
