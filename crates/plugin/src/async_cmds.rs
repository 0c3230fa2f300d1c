//! Plugin commands' asynchronous stages (`DoAsynchronousCommand`).
//!
//! A plugin command (run on the audio thread in real time) hands work that
//! may block to stages, as scsynth's commands do: stage 2 on the
//! non-real-time side, stage 3 on the audio thread (then the completion
//! message, if stage 3 succeeded), stage 4 on the non-real-time side (then
//! `/done` with the command's name, if stage 4 succeeded), and the cleanup
//! on the audio thread. A stage that answers false ends the command there
//! (the cleanup still runs).
//!
//! In real time the server takes each command from [`AsyncQueue`] right
//! after the command that started it and moves it between its threads
//! ([`AsyncCommand::run_nrt`], [`AsyncCommand::run_rt`]) on the queues its
//! own asynchronous commands take, so stages keep their order with theirs
//! (`/sync` answers after the plugin's `/done`). Without a server doing that
//! (non-real-time rendering), every stage runs at once, in place, as
//! scsynth's NRT mode runs them.

use crate::ffi::{self, AsyncFreeFn, AsyncStageFn};
use crate::print;
use magnetar_rt::mpsc;
use std::cell::Cell;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::null_mut;
use std::sync::OnceLock;

/// Commands waiting for the server to take them; past that a command is
/// refused (the plugin sees an error, as when scsynth's memory runs out).
const PENDING: usize = 256;

/// What the server reads the commands from; see [`start`].
pub struct AsyncQueue {
    rx: mpsc::Receiver<Box<AsyncCommand>>,
}

impl AsyncQueue {
    /// The next command a plugin started on this thread's side, if any.
    pub fn pop(&mut self) -> Option<Box<AsyncCommand>> {
        self.rx.pop()
    }
}

static QUEUE: OnceLock<mpsc::Sender<Box<AsyncCommand>>> = OnceLock::new();

/// Switches plugin commands to staged execution (a real-time server calls
/// this once, at boot, and then moves every command it pops between its
/// threads). None if it was called already.
pub fn start() -> Option<AsyncQueue> {
    let (tx, rx) = mpsc::channel(PENDING);
    QUEUE.set(tx).ok()?;
    Some(AsyncQueue { rx })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Stage2,
    Stage3,
    Stage4,
    Cleanup,
    Finished,
}

/// One plugin command on its way through its stages.
pub struct AsyncCommand {
    world: *mut ffi::World,
    /// The name `/done` carries (the plugin's string, copied).
    name: Option<Box<CStr>>,
    data: *mut c_void,
    stage2: Option<AsyncStageFn>,
    stage3: Option<AsyncStageFn>,
    stage4: Option<AsyncStageFn>,
    cleanup: Option<AsyncFreeFn>,
    completion: Option<Vec<u8>>,
    /// The plugin passed the reply address of the message that started it
    /// (units pass none): then `/done` goes to that message's sender.
    replies: bool,
    next: Next,
}

// SAFETY: the pointers are the plugin's command data and the C world,
// which scsynth too hands from thread to thread with the command; one
// thread at a time works on a command.
unsafe impl Send for AsyncCommand {}

/// What the audio thread does with a command after its turn.
pub enum RtStep {
    /// Perform this completion message (stage 3 succeeded), then hand the
    /// command to the non-real-time side.
    ToNrt(Option<Vec<u8>>),
    /// The cleanup ran: the command is over.
    Finished,
}

impl AsyncCommand {
    /// Whether `/done` goes to the sender of the message that started it.
    pub fn replies(&self) -> bool {
        self.replies
    }

    /// Takes the completion message out, for a server that decodes it off
    /// the audio thread before stage 3; stage 3 then hands none back.
    pub fn take_completion(&mut self) -> Option<Vec<u8>> {
        self.completion.take()
    }

    /// Runs stage function `f`; `rt` says the audio thread runs it (what
    /// the plugin prints then goes through the printing queue).
    fn stage(&mut self, f: Option<AsyncStageFn>, what: &str, rt: bool) -> bool {
        let mut ok: c_int = 1;
        let was = print::set_in_unit(rt);
        // SAFETY: the plugin's own stage function with its own data and
        // world; the shim stops an exception.
        let threw = unsafe { ffi::mg_call_async_stage(f, self.world, self.data, &mut ok) };
        if threw != 0 {
            print::line(&format!("plugins: an asynchronous command threw an exception in its {what}\n"));
        }
        print::set_in_unit(was);
        threw == 0 && ok != 0
    }

    /// The non-real-time side's turn: stage 2 or stage 4. Returns the name
    /// to answer `/done` with when stage 4 asks for it. The command goes
    /// back to the audio thread afterwards in every case.
    pub fn run_nrt(&mut self) -> Option<String> {
        match self.next {
            Next::Stage2 => {
                self.next = if self.stage(self.stage2, "stage 2", false) { Next::Stage3 } else { Next::Cleanup };
                None
            }
            Next::Stage4 => {
                let ok = self.stage(self.stage4, "stage 4", false);
                self.next = Next::Cleanup;
                if ok {
                    self.name.as_ref().map(|n| n.to_string_lossy().into_owned())
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// The audio thread's turn: stage 3, or the cleanup. `world` is the
    /// engine's world, for the plugin's C world to be brought up to date.
    pub fn run_rt(&mut self, world: &mut magnetar_ugens::World) -> RtStep {
        match self.next {
            Next::Stage3 => {
                self.world = crate::unit::sync_world(world, true);
                if self.stage(self.stage3, "stage 3", true) {
                    self.next = Next::Stage4;
                    RtStep::ToNrt(self.completion.take())
                } else {
                    self.finish(true);
                    RtStep::Finished
                }
            }
            Next::Stage2 | Next::Stage4 => RtStep::ToNrt(None),
            Next::Cleanup | Next::Finished => {
                self.finish(true);
                RtStep::Finished
            }
        }
    }

    /// The cleanup, once; `rt` as for [`stage`](Self::stage).
    fn finish(&mut self, rt: bool) {
        if self.next == Next::Finished {
            return;
        }
        self.next = Next::Finished;
        let was = print::set_in_unit(rt);
        // SAFETY: the plugin's cleanup with its own data, once.
        if unsafe { ffi::mg_call_async_free(self.cleanup, self.world, self.data) } != 0 {
            print::line("plugins: an asynchronous command threw an exception in its cleanup\n");
        }
        print::set_in_unit(was);
    }

    /// Every stage at once, in place (non-real-time rendering): what the
    /// caller owes, the completion message and the `/done` name.
    fn run_in_place(&mut self) -> (Option<Vec<u8>>, Option<String>) {
        let mut out = (None, None);
        if self.stage(self.stage2, "stage 2", false) && self.stage(self.stage3, "stage 3", false) {
            out.0 = self.completion.take();
            if self.stage(self.stage4, "stage 4", false) {
                out.1 = self.name.as_ref().map(|n| n.to_string_lossy().into_owned());
            }
        }
        self.finish(false);
        out
    }
}

/// What in-place commands leave for the caller of a plugin command: for
/// each, its completion message and its `/done` name, in order.
pub type InPlaceOutcome = (Option<Vec<u8>>, Option<String>);

thread_local! {
    static IN_PLACE: Cell<*mut Vec<InPlaceOutcome>> = const { Cell::new(null_mut()) };
}

/// Runs `f` collecting what commands run in place leave.
pub(crate) fn collecting<R>(out: &mut Vec<InPlaceOutcome>, f: impl FnOnce() -> R) -> R {
    let previous = IN_PLACE.with(|c| c.replace(out));
    let r = f();
    IN_PLACE.with(|c| c.set(previous));
    r
}

/// A reply address plugins may copy (scsynth's `ReplyAddress` is smaller):
/// what a plugin command gets, so that `DoAsynchronousCommand` knows the
/// command came from a message.
pub(crate) static REPLY_TOKEN: [u64; 32] = [0; 32];

/// `fDoAsynchronousCommand`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn do_asynchronous_command(
    world: *mut ffi::World,
    reply: *mut c_void,
    cmd_name: *const c_char,
    data: *mut c_void,
    stage2: Option<AsyncStageFn>,
    stage3: Option<AsyncStageFn>,
    stage4: Option<AsyncStageFn>,
    cleanup: Option<AsyncFreeFn>,
    completion_size: c_int,
    completion: *mut c_void,
) -> c_int {
    let completion = (completion_size > 0 && !completion.is_null()).then(|| {
        // SAFETY: the plugin passes `completion_size` readable bytes.
        unsafe { std::slice::from_raw_parts(completion as *const u8, completion_size as usize) }.to_vec()
    });
    // SAFETY: a C string from the plugin (or null).
    let name = (!cmd_name.is_null()).then(|| Box::<CStr>::from(unsafe { CStr::from_ptr(cmd_name) }));
    let mut cmd = AsyncCommand {
        world,
        name,
        data,
        stage2,
        stage3,
        stage4,
        cleanup,
        completion,
        replies: !reply.is_null(),
        next: Next::Stage2,
    };
    if let Some(queue) = QUEUE.get() {
        // On the audio thread this box comes from the real-time pool.
        // A full queue refuses the command: it never started, and (as when
        // scsynth has no memory for it) its cleanup does not run.
        return if queue.push(Box::new(cmd)).is_ok() { 0 } else { 1 };
    }
    let outcome = cmd.run_in_place();
    let sink = IN_PLACE.with(Cell::get);
    if !sink.is_null() {
        // SAFETY: set by `collecting` for the length of the plugin command.
        unsafe { (*sink).push(outcome) };
    } else if let Some(completion) = outcome.0 {
        // A unit started it (offline rendering: no audio thread to keep
        // from blocking): its completion message waits for the block's end.
        UNIT_STARTED.lock().unwrap_or_else(|e| e.into_inner()).push(completion);
    }
    0
}

/// Completion messages of commands units started while rendering offline,
/// for [`take_unit_completions`].
static UNIT_STARTED: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// The completion messages of the asynchronous commands plugin units
/// started (offline rendering) since the last call, in order: the renderer
/// performs them after each block. A unit has no reply address, so there
/// is no `/done` to send (as in scsynth).
pub fn take_unit_completions() -> Vec<Vec<u8>> {
    std::mem::take(&mut *UNIT_STARTED.lock().unwrap_or_else(|e| e.into_inner()))
}
