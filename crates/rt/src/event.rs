//! A binary event: one thread sleeps in [`Waiter::wait`] until another calls
//! [`Signaller::signal`]. This is the wake-up used between the driver and the
//! DSP helper threads; it is a futex, so a signal that finds nobody asleep
//! costs one atomic swap and no system call.
//!
//! # The state machine
//!
//! The design follows the second version of the "Synchro" scheduler in
//! Poduval's HGS thesis. Its lesson is that a single "runnable" flag loses
//! wake-ups: if the signal arrives while the target is still running and the
//! target then waits, the flag that the signal set is cleared by the wait and
//! both threads end up asleep. The fix is to keep *whether a signal is pending*
//! apart from *whether the waiter is asleep*. The thesis does this with two
//! variables (signal: delivered / undelivered; run: runnable / blocked /
//! to-be-scheduled) updated under a scheduler lock. Here the reachable
//! combinations are packed into one atomic word, so every transition is a
//! single atomic operation and no lock is needed:
//!
//! | state | signal | waiter | thesis name |
//! |---|---|---|---|
//! | `IDLE` | none pending | running | undelivered, runnable |
//! | `SIGNALLED` | pending | running, or woken and about to run | delivered, runnable / to-be-scheduled |
//! | `SLEEPING` | none pending | asleep in the kernel | undelivered, blocked |
//!
//! * `signal` swaps in `SIGNALLED`. From `IDLE` that is all: the signal is
//!   latched, so a signal sent before the wait is not lost. From `SIGNALLED`
//!   nothing changes: several signals before one wait count as one. From
//!   `SLEEPING` it also wakes the waiter (the thesis's to-be-scheduled step).
//! * `wait` takes `SIGNALLED` to `IDLE` and returns at once (the signal is
//!   consumed). Otherwise it moves `IDLE` to `SLEEPING` and sleeps on the word
//!   while it reads `SLEEPING`; the kernel checks the value and goes to sleep
//!   atomically, so a `signal` landing between the two steps makes the sleep
//!   return immediately. On waking it consumes the signal (`SIGNALLED` to
//!   `IDLE`); a spurious wake-up finds `SLEEPING` and sleeps again.
//! * A timed-out wait moves `SLEEPING` back to `IDLE`; if a signal won that
//!   race, the wait consumes it and reports success instead.
//!
//! Only one thread may wait on an event (the [`Waiter`] is not `Clone` and
//! waits through `&mut self`), which is what makes waking a single thread
//! enough. Any number of threads may signal.
//!
//! ```
//! use magnetar_rt::event;
//!
//! let (signal, mut waiter) = event::binary_event();
//! signal.signal();
//! signal.signal(); // coalesced with the first
//! waiter.wait(); // returns at once: the signal was latched
//! assert!(!waiter.try_wait()); // and consumed: only one wait is released
//!
//! let worker = std::thread::spawn(move || {
//!     waiter.wait();
//!     "woken"
//! });
//! signal.signal();
//! assert_eq!(worker.join().unwrap(), "woken");
//! ```

use crate::sync::futex::Futex;
use crate::sync::{spin_hint, Arc, Ordering};
use std::time::{Duration, Instant};

const IDLE: u32 = 0;
const SIGNALLED: u32 = 1;
const SLEEPING: u32 = 2;

/// Creates a binary event, initially not signalled.
pub fn binary_event() -> (Signaller, Waiter) {
    let futex = Arc::new(Futex::new(IDLE));
    (
        Signaller {
            futex: Arc::clone(&futex),
        },
        Waiter { futex },
    )
}

/// The signalling side of a binary event; cloneable, usable from any thread.
#[derive(Clone, Debug)]
pub struct Signaller {
    futex: Arc<Futex>,
}

impl Signaller {
    /// Latches the event and wakes the waiter if it is asleep.
    ///
    /// Makes a system call only when the waiter is asleep in the kernel.
    #[inline]
    pub fn signal(&self) {
        // Release: what we wrote before signalling is visible to the waiter
        // once it has consumed the signal (Acquire).
        if self.futex.word.swap(SIGNALLED, Ordering::Release) == SLEEPING {
            self.futex.wake(1);
        }
    }

    /// Whether a signal is latched and not yet consumed.
    pub fn is_pending(&self) -> bool {
        self.futex.word.load(Ordering::Relaxed) == SIGNALLED
    }
}

/// The waiting side of a binary event; exactly one exists per event.
#[derive(Debug)]
pub struct Waiter {
    futex: Arc<Futex>,
}

impl Waiter {
    /// Consumes a pending signal without blocking; returns whether there was
    /// one. Never makes a system call.
    #[inline]
    pub fn try_wait(&mut self) -> bool {
        self.futex
            .word
            .compare_exchange(SIGNALLED, IDLE, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Blocks until the event is signalled, then consumes the signal.
    pub fn wait(&mut self) {
        while !self.wait_once(None) {}
    }

    /// Like [`wait`](Self::wait), but gives up after `timeout`. Returns
    /// whether a signal was consumed.
    pub fn wait_timeout(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return self.cancel_sleep();
            }
            if self.wait_once(Some(left)) {
                return true;
            }
            if cfg!(loom) {
                // loom has no clock: one timed sleep stands for the whole timeout.
                return self.cancel_sleep();
            }
        }
    }

    /// Polls for up to `spins` iterations before falling back to sleeping in
    /// [`wait`](Self::wait). For a thread that expects the signal within a
    /// few microseconds, this avoids the kernel's wake-up latency.
    pub fn wait_spin(&mut self, spins: u32) {
        for _ in 0..spins {
            if self.try_wait() {
                return;
            }
            spin_hint();
        }
        self.wait();
    }

    /// One round of waiting: returns true if a signal was consumed, false on
    /// a spurious or timed-out wake-up (the state is then `SLEEPING`).
    fn wait_once(&mut self, timeout: Option<Duration>) -> bool {
        let word = &self.futex.word;
        match word.load(Ordering::Relaxed) {
            SIGNALLED => return self.try_wait(),
            IDLE => {
                if let Err(SIGNALLED) =
                    word.compare_exchange(IDLE, SLEEPING, Ordering::Relaxed, Ordering::Relaxed)
                {
                    return self.try_wait();
                }
            }
            _ => {} // already SLEEPING after an earlier round
        }
        self.futex.wait(SLEEPING, timeout);
        self.try_wait()
    }

    /// Leaves `SLEEPING` after a timeout; a signal that arrived meanwhile is
    /// consumed and reported.
    fn cancel_sleep(&mut self) -> bool {
        match self
            .futex
            .word
            .compare_exchange(SLEEPING, IDLE, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => false,
            Err(_) => self.try_wait(),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_signal_sent_before_the_wait_is_not_lost() {
        let (s, mut w) = binary_event();
        s.signal();
        assert!(s.is_pending());
        assert!(w.wait_timeout(Duration::from_secs(5)));
        assert!(!s.is_pending());
    }

    #[test]
    fn several_signals_release_one_wait() {
        let (s, mut w) = binary_event();
        s.signal();
        s.signal();
        s.signal();
        assert!(w.try_wait());
        assert!(!w.try_wait());
        assert!(!w.wait_timeout(Duration::from_millis(5)));
    }

    #[test]
    fn wait_timeout_gives_up_after_roughly_the_timeout() {
        let (_s, mut w) = binary_event();
        let start = Instant::now();
        assert!(!w.wait_timeout(Duration::from_millis(20)));
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(20), "{took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    #[test]
    fn a_signal_after_a_timed_out_wait_still_wakes_the_next_wait() {
        let (s, mut w) = binary_event();
        assert!(!w.wait_timeout(Duration::from_millis(1)));
        s.signal();
        w.wait();
    }

    #[test]
    fn a_sleeping_waiter_is_woken_from_another_thread() {
        let (s, mut w) = binary_event();
        let t = std::thread::spawn(move || {
            w.wait_spin(100);
            w
        });
        std::thread::sleep(Duration::from_millis(20));
        s.signal();
        let mut w = t.join().unwrap();
        assert!(!w.try_wait());
    }

    #[test]
    fn ping_pong_between_two_threads_never_deadlocks() {
        let (to_b, mut b_wait) = binary_event();
        let (to_a, mut a_wait) = binary_event();
        let rounds = 2000;
        let b = std::thread::spawn(move || {
            for _ in 0..rounds {
                b_wait.wait();
                to_a.signal();
            }
        });
        for _ in 0..rounds {
            to_b.signal();
            assert!(a_wait.wait_timeout(Duration::from_secs(10)));
        }
        b.join().unwrap();
    }
}
