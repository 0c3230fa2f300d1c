//! Plugins' messages between the audio thread and the non-real-time side
//! (`SendMsgFromRT`, `SendMsgToRT`).
//!
//! A message is a `FifoMsg`: a perform function, a free function, the
//! plugin's data and the world. As in scsynth, the message is copied by
//! value into a bounded queue; its perform function runs on the other side
//! and its free function then runs back on the sending side, both given
//! the same copy (so the free function sees what the perform function
//! changed in it):
//!
//! - from the audio thread (or a DSP helper running units): perform on the
//!   control thread (scsynth's non-real-time thread), free on the audio
//!   thread;
//! - to the audio thread (from any other thread): perform on the audio
//!   thread at the start of a block, free on the control thread.
//!
//! Sending never allocates or blocks: each direction is a lock-free
//! bounded queue made at boot ([`start`]), and a full queue refuses the
//! message (the plugin sees false, as with scsynth's full FIFO). The server
//! moves the messages between its threads on its own queues ([`Fifos`]).
//! Without a real-time server (offline rendering) sending is refused:
//! scsynth has no audio driver to hand the message to then.

use crate::ffi;
use crate::print;
use magnetar_rt::mpsc;
use std::os::raw::c_void;
use std::sync::OnceLock;

/// Messages waiting in each direction; scsynth's FIFOs hold 65,535.
const CAPACITY: usize = 4096;

/// scsynth's `FifoMsgFunc`.
pub(crate) type FifoMsgFunc = unsafe extern "C" fn(*mut FifoMsg);

/// scsynth's `FifoMsg` (SC_FifoMsg.h), field for field.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FifoMsg {
    perform: Option<FifoMsgFunc>,
    free: Option<FifoMsgFunc>,
    data: *mut c_void,
    world: *mut ffi::World,
}

/// One plugin message on its way; the server carries it by value.
pub struct Message(FifoMsg);

// SAFETY: the pointers are the plugin's data and the C world, which
// scsynth too hands between its threads in the message; one thread at a
// time works on a message.
unsafe impl Send for Message {}

impl Message {
    fn call(&mut self, f: Option<FifoMsgFunc>, what: &str, rt: bool) {
        let Some(f) = f else { return };
        let was = print::set_in_unit(rt);
        // SAFETY: the plugin's own function, given the copy of its message
        // this host holds; the shim stops an exception.
        if unsafe { ffi::mg_call_fifo(f, &mut self.0) } != 0 {
            print::line(&format!("plugins: a message's {what} function threw an exception\n"));
        }
        print::set_in_unit(was);
    }

    /// Runs the perform function; `rt` says the audio thread runs it.
    pub fn perform(&mut self, rt: bool) {
        self.call(self.0.perform, "perform", rt);
    }

    /// Runs the free function (once the perform function has run).
    pub fn free(mut self, rt: bool) {
        self.call(self.0.free, "free", rt);
    }
}

static FROM_RT: OnceLock<mpsc::Sender<Message>> = OnceLock::new();
static TO_RT: OnceLock<mpsc::Sender<Message>> = OnceLock::new();

/// What the server reads plugins' messages from; see [`start`].
pub struct Fifos {
    from_rt: mpsc::Receiver<Message>,
    to_rt: mpsc::Receiver<Message>,
}

impl Fifos {
    /// The next message sent from the real-time side, for the control
    /// thread to perform. Called on the audio thread.
    pub fn pop_from_rt(&mut self) -> Option<Message> {
        self.from_rt.pop()
    }

    /// The next message sent to the audio thread, for it to perform.
    pub fn pop_to_rt(&mut self) -> Option<Message> {
        self.to_rt.pop()
    }
}

/// Makes the two queues (a real-time server calls it once, at boot, off
/// the audio thread, and then moves every message it pops). None if it was
/// called already.
pub fn start() -> Option<Fifos> {
    let (from_tx, from_rt) = mpsc::channel(CAPACITY);
    let (to_tx, to_rt) = mpsc::channel(CAPACITY);
    FROM_RT.set(from_tx).ok()?;
    TO_RT.set(to_tx).ok()?;
    Some(Fifos { from_rt, to_rt })
}

fn send(queue: &OnceLock<mpsc::Sender<Message>>, msg: *mut c_void) -> bool {
    let Some(queue) = queue.get() else { return false };
    if msg.is_null() {
        return false;
    }
    // SAFETY: the plugin passes a reference to its FifoMsg; it is copied
    // here, as scsynth's FIFO copies it.
    let copy = unsafe { *(msg as *const FifoMsg) };
    queue.push(Message(copy)).is_ok()
}

/// `fSendMsgFromRT`.
pub(crate) unsafe extern "C" fn send_msg_from_rt(_world: *mut ffi::World, msg: *mut c_void) -> bool {
    send(&FROM_RT, msg)
}

/// `fSendMsgToRT`.
pub(crate) unsafe extern "C" fn send_msg_to_rt(_world: *mut ffi::World, msg: *mut c_void) -> bool {
    send(&TO_RT, msg)
}
