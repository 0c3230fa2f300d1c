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
//! - The control thread (network packets, every command's asynchronous
//!   stage, replies) runs under SCHED_FIFO at [`CONTROL_PRIORITY`], the
//!   lowest there is: below every real-time thread of the engine, above
//!   every normal one. scsynth runs its non-real-time thread under
//!   SCHED_FIFO too; at the normal policy, on a machine busy with other
//!   work, a `/b_alloc` of 8 GiB held every `/sync` behind it three times as
//!   long as on scsynth (docs/reliability.md). When the audio thread runs so
//!   low that the task threads would reach that priority, the control
//!   thread stays normal.
//! - A disk thread raises itself under SCHED_FIFO only while a stream is
//!   about to run dry (the server's need-based disk scheduling), and then
//!   ranks as a task whose period is that deadline, the critical watermark:
//!   below every task class of a shorter period, so disk I/O never delays
//!   a convolution partition due sooner ([`disk_priority`]). The priority
//!   it raises itself to is published here, before it first needs it.
//! - An audio thread without SCHED_FIFO gets neither above it: all of them
//!   run under the normal policy then.
//!
//! The moves are system calls, so the control thread makes them
//! ([`PriorityFollower::follow`]); the real-time threads make none.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// The SCHED_FIFO priority a disk thread whose jobs are due within
/// `deadline_blocks` blocks takes when the audio thread runs at `audio`:
/// that of the first task class whose period is as long (rate-monotonic),
/// at most `cap`, never below 1.
pub fn disk_priority(deadline_blocks: f64, audio: i32, cap: i32) -> i32 {
    let class = (0..crate::tasks::CLASSES)
        .find(|&c| (2usize << c) as f64 >= deadline_blocks)
        .unwrap_or(crate::tasks::CLASSES - 1);
    crate::tasks::class_priority(class, audio).min(cap).max(1)
}

/// The audio thread's priority has not been reported yet.
pub const UNKNOWN: i32 = -1;

/// The control thread's SCHED_FIFO priority (see the module's notes).
pub const CONTROL_PRIORITY: i32 = 1;

/// Whether the control thread may run under SCHED_FIFO at
/// [`CONTROL_PRIORITY`] beside an audio thread at `audio`: only while every
/// other real-time thread of the engine (task classes, disk threads, which
/// go up to `audio - 1`) stays strictly above it.
pub fn control_thread_has_room(audio: i32) -> bool {
    audio - 1 > CONTROL_PRIORITY && crate::tasks::class_priority(crate::tasks::CLASSES - 1, audio) > CONTROL_PRIORITY
}

/// Moves the engine's helper and task threads after the audio thread's
/// priority; owned by the control thread.
pub struct PriorityFollower {
    audio: Arc<AtomicI32>,
    helpers: Vec<i32>,
    tasks: Vec<(usize, i32)>,
    /// The control thread, once [`PriorityFollower::with_control_thread`] named it.
    control: Option<i32>,
    /// Where the disk threads read the priority they raise themselves to
    /// (0: none, they stay at normal priority), their deadline in blocks
    /// and their cap.
    disk: Option<(Arc<AtomicI32>, f64, i32)>,
    applied: i32,
}

impl PriorityFollower {
    pub(crate) fn new(audio: Arc<AtomicI32>, helpers: Vec<i32>, tasks: Vec<(usize, i32)>) -> PriorityFollower {
        PriorityFollower { audio, helpers, tasks, control: None, disk: None, applied: UNKNOWN }
    }

    /// Moves the control thread `tid` (the caller of [`Self::follow`]) too:
    /// to [`CONTROL_PRIORITY`] when the audio thread runs under SCHED_FIFO
    /// with room below it.
    pub fn with_control_thread(mut self, tid: i32) -> PriorityFollower {
        self.control = Some(tid);
        self
    }

    /// Publishes in `raise_to` the priority the disk threads raise themselves
    /// to, for jobs due within `deadline_blocks` blocks, at most `cap`.
    pub fn follow_disk(&mut self, raise_to: Arc<AtomicI32>, deadline_blocks: f64, cap: i32) {
        self.disk = Some((raise_to, deadline_blocks, cap));
        self.applied = UNKNOWN;
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
        if let Some(tid) = self.control {
            set(tid, fifo.filter(|&a| control_thread_has_room(a)).map(|_| CONTROL_PRIORITY));
        }
        if let Some((raise_to, deadline, cap)) = &self.disk {
            raise_to.store(fifo.map_or(0, |a| disk_priority(*deadline, a, *cap)), Ordering::Relaxed);
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{class_priority, CLASSES, TOP_PRIORITY};

    #[test]
    fn the_control_thread_stays_below_every_task_class_and_the_audio_thread() {
        // The clock driver's 50, JACK clients at jackd's default less one
        // (5), and the edges.
        for audio in 2..=99 {
            let lowest = class_priority(CLASSES - 1, audio);
            let highest = class_priority(0, audio);
            assert!(highest < audio && lowest >= 1, "audio {audio}: classes {highest}..{lowest}");
            if control_thread_has_room(audio) {
                assert!(lowest > CONTROL_PRIORITY, "audio {audio}: lowest class {lowest}");
            }
        }
        assert!(control_thread_has_room(50) && control_thread_has_room(5));
        assert_eq!(class_priority(CLASSES - 1, 5), CONTROL_PRIORITY + 1);
        assert!(!control_thread_has_room(2));
        assert_eq!(class_priority(0, 50), TOP_PRIORITY);
    }

    #[test]
    fn a_raised_disk_thread_ranks_with_the_first_task_class_as_long_as_its_deadline() {
        // 100 ms at 48 kHz: 75 blocks of 64 (class of 128 blocks), 18.75 of 256 (class of 32).
        assert_eq!(disk_priority(75.0, 50, 40), class_priority(6, 50));
        assert_eq!(disk_priority(18.75, 50, 40), class_priority(4, 50));
        assert!(disk_priority(75.0, 50, 40) < class_priority(5, 50));
        // Under a JACK client at 5 the classes crowd at their floor, still above the control thread.
        assert_eq!(disk_priority(75.0, 5, 40), class_priority(6, 5));
        assert!(disk_priority(75.0, 5, 40) > CONTROL_PRIORITY);
        // Never above the cap; deadlines longer than every class rank with the longest.
        assert_eq!(disk_priority(1.0, 99, 20), 20);
        assert_eq!(disk_priority(1e9, 50, 40), class_priority(CLASSES - 1, 50));
    }
}
