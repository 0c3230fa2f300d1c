//! The interruptible lock between the free thread and the snapshot.
//!
//! The free thread zeroes dead blocks of the pointer heap while the audio thread may be
//! copying that heap. The free thread holds the lock for one short step (64 words) at a
//! time; the audio side only ever *tries* the lock, spinning at most a few hundred times
//! (one step is tens of nanoseconds) and otherwise skipping the snapshot for this block.
//! So, unlike the thesis's `ilock2_lock`, the audio thread can never wait for a preempted
//! low-priority thread, and no priority raising is needed.

use std::sync::atomic::{AtomicU32, Ordering};

const UNLOCKED: u32 = 0;
const FREE_STEP: u32 = 1;
const SNAPSHOT: u32 = 2;

#[derive(Default)]
pub(crate) struct InterruptibleLock {
    state: AtomicU32,
}

impl InterruptibleLock {
    /// Free thread: take the lock for one step; false while a snapshot is being copied.
    pub(crate) fn try_step(&self) -> bool {
        self.state.compare_exchange(UNLOCKED, FREE_STEP, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Free thread: end of one step.
    pub(crate) fn end_step(&self) {
        self.state.store(UNLOCKED, Ordering::Release);
    }

    /// Audio thread: take the lock for a snapshot, spinning at most `spins` times.
    pub(crate) fn try_lock_snapshot(&self, spins: u32) -> bool {
        for _ in 0..=spins {
            if self.state.compare_exchange(UNLOCKED, SNAPSHOT, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }

    /// Audio thread: snapshot done.
    pub(crate) fn unlock_snapshot(&self) {
        self.state.store(UNLOCKED, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_and_free_step_exclude_each_other() {
        let l = InterruptibleLock::default();
        assert!(l.try_step());
        assert!(!l.try_lock_snapshot(10));
        l.end_step();
        assert!(l.try_lock_snapshot(0));
        assert!(!l.try_step());
        l.unlock_snapshot();
        assert!(l.try_step());
    }
}
