//! An interruptible lock between a background thread that works in short
//! steps and a real-time thread that only ever *tries* to take it.
//!
//! The background side (for the garbage collector, its free thread zeroing
//! dead blocks of the heap) takes the lock for one short step at a time with
//! [`InterruptibleLock::try_step`] and gives it up at the end of the step, so
//! it never holds it for long. The real-time side (the audio thread copying
//! that heap into a snapshot) calls [`InterruptibleLock::try_lock_snapshot`],
//! which spins a bounded number of times and then gives up; the caller skips
//! its work for now instead of waiting. A preempted background thread can
//! therefore never make the real-time thread wait, and no priority raising is
//! needed. The background side, being the one allowed to wait, simply retries
//! (yielding between tries) while a snapshot holds the lock.
//!
//! Either side holds the lock through a [`Guard`] that releases it on drop;
//! taking it is an Acquire and releasing it a Release, so whatever one holder
//! wrote is visible to the next.
//!
//! ```
//! use magnetar_rt::ilock::InterruptibleLock;
//!
//! let lock = InterruptibleLock::new();
//! let step = lock.try_step().expect("nobody holds it");
//! // While a step holds the lock, the real-time side gives up after its spins.
//! assert!(lock.try_lock_snapshot(100).is_none());
//! drop(step);
//! let snapshot = lock.try_lock_snapshot(0).expect("free again");
//! assert!(lock.try_step().is_none());
//! drop(snapshot);
//! ```

use crate::sync::{spin_hint, AtomicU32, Ordering};

const UNLOCKED: u32 = 0;
const STEP: u32 = 1;
const SNAPSHOT: u32 = 2;

/// A try-only lock shared by a stepping background thread and a real-time
/// thread. See the [module documentation](self).
#[derive(Debug)]
pub struct InterruptibleLock {
    /// `UNLOCKED`, or which side holds the lock (`STEP` or `SNAPSHOT`).
    state: AtomicU32,
}

/// Proof that one side holds an [`InterruptibleLock`]; dropping it releases the lock.
#[must_use = "the lock is released as soon as the guard is dropped"]
#[derive(Debug)]
pub struct Guard<'a> {
    lock: &'a InterruptibleLock,
}

impl InterruptibleLock {
    /// An unlocked lock.
    pub fn new() -> Self {
        Self {
            state: AtomicU32::new(UNLOCKED),
        }
    }

    /// Background side: takes the lock for one step, or returns `None` at
    /// once if the real-time side holds it. Never spins.
    #[inline]
    #[must_use = "the lock is released as soon as the guard is dropped"]
    pub fn try_step(&self) -> Option<Guard<'_>> {
        self.try_take(STEP)
    }

    /// Real-time side: takes the lock for a snapshot, trying once and then at
    /// most `spins` more times, or returns `None` if a step held it throughout.
    /// Bounded: it never waits for the other thread to be scheduled.
    #[inline]
    #[must_use = "the lock is released as soon as the guard is dropped"]
    pub fn try_lock_snapshot(&self, spins: u32) -> Option<Guard<'_>> {
        let mut left = spins;
        loop {
            if let Some(guard) = self.try_take(SNAPSHOT) {
                return Some(guard);
            }
            if left == 0 {
                return None;
            }
            left -= 1;
            spin_hint();
        }
    }

    #[inline]
    fn try_take(&self, holder: u32) -> Option<Guard<'_>> {
        self.state
            .compare_exchange(UNLOCKED, holder, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| Guard { lock: self })
    }
}

impl Default for InterruptibleLock {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Guard<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release: the holder's writes happen before the next holder's Acquire.
        self.lock.state.store(UNLOCKED, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn snapshot_and_step_exclude_each_other() {
        let l = InterruptibleLock::new();
        let step = l.try_step().expect("an unlocked lock is free");
        assert!(
            l.try_lock_snapshot(10).is_none(),
            "a snapshot must not enter a step"
        );
        drop(step);
        let snapshot = l
            .try_lock_snapshot(0)
            .expect("released by the end of the step");
        assert!(l.try_step().is_none(), "a step must not enter a snapshot");
        drop(snapshot);
        assert!(
            l.try_step().is_some(),
            "released by the end of the snapshot"
        );
    }

    #[test]
    fn a_held_step_refuses_a_second_step() {
        let l = InterruptibleLock::default();
        let _step = l.try_step().unwrap();
        assert!(l.try_step().is_none());
    }
}
