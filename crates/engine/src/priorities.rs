//! The engine's real-time threads keep their SCHED_FIFO priorities relative
//! to the audio thread's, which is known only once it runs its first period
//! (a JACK client gets jackd's priority less some, 5 by default; the clock
//! driver's thread asks for 50).
//!
//! - DSP helpers run *at* the audio thread's priority. Below it, a helper
//!   preempted in the middle of a work item by the audio thread on the
//!   helper's pinned CPU would never run again while the audio thread spins
//!   for that item (it yields only to its equals); at the same priority the
//!   audio thread's yield lets the helper finish, and a helper spinning
//!   between blocks holds a CPU the audio thread wakes on for at most its
//!   spin budget (`magnetar_dsp::DEFAULT_SPIN`).
//! - Task threads run below it, shorter periods higher (rate-monotonic,
//!   `tasks::class_priority`).
//! - An audio thread without SCHED_FIFO gets neither above it: all of them
//!   run under the normal policy then.
//!
//! The moves are system calls, so the control thread makes them
//! ([`PriorityFollower::follow`]); the real-time threads make none.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// The audio thread's priority has not been reported yet.
pub const UNKNOWN: i32 = -1;

/// Moves the engine's helper and task threads after the audio thread's
/// priority; owned by the control thread.
pub struct PriorityFollower {
    audio: Arc<AtomicI32>,
    helpers: Vec<i32>,
    tasks: Vec<(usize, i32)>,
    applied: i32,
}

impl PriorityFollower {
    pub(crate) fn new(audio: Arc<AtomicI32>, helpers: Vec<i32>, tasks: Vec<(usize, i32)>) -> PriorityFollower {
        PriorityFollower { audio, helpers, tasks, applied: UNKNOWN }
    }

    /// If the audio thread reported a priority other than the one applied,
    /// moves every thread after it; returns the warnings of refused moves.
    /// Cheap when nothing changed (one atomic load).
    pub fn follow(&mut self) -> Vec<String> {
        let audio = self.audio.load(Ordering::Relaxed);
        if audio == UNKNOWN || audio == self.applied {
            return Vec::new();
        }
        self.applied = audio;
        let fifo = (audio > 0).then_some(audio);
        let mut warnings = Vec::new();
        let mut set = |tid: i32, priority: Option<i32>| {
            if let Err(e) = magnetar_rt::thread::set_thread_priority(tid, priority) {
                warnings.push(format!("could not set the priority of thread {tid} to {priority:?}: {e}"));
            }
        };
        // Helpers at the audio thread's own priority (see the module's notes).
        for &tid in &self.helpers {
            set(tid, fifo);
        }
        for &(class, tid) in &self.tasks {
            set(tid, fifo.map(|a| crate::tasks::class_priority(class, a)));
        }
        warnings
    }
}
