//! The "non-blocking mutex" queue of Carpentier (JIM 2018): a bounded queue
//! behind an ordinary mutex, where the real-time side only ever calls
//! `try_lock` and simply retries at its next block when the lock is taken,
//! while the non-real-time side locks normally and may block.
//!
//! It exists next to [`spsc`](crate::spsc) and [`mpsc`](crate::mpsc) so that
//! the two approaches can be measured against each other on the same
//! workload; the real-time side counts its failed attempts for that purpose.
//!
//! The side each thread holds is its own type, so a real-time thread cannot
//! call a blocking method by mistake:
//!
//! | constructor | non-real-time side (may block) | real-time side (never blocks) |
//! |---|---|---|
//! | [`to_realtime`] | [`BlockingSender`] (cloneable) | [`TryReceiver`] |
//! | [`from_realtime`] | [`BlockingReceiver`] | [`TrySender`] |
//!
//! Caveats (measured, not hidden): unlocking a mutex that another thread is
//! blocked on makes a `futex` wake system call from the real-time thread, and
//! a preempted non-real-time thread holding the lock starves the real-time
//! side for as long as it is preempted. Draining is bounded by the batch the
//! caller passes in, and values are moved out under the lock but handled after
//! it is released.
//!
//! ```
//! use magnetar_rt::trylock_queue;
//!
//! let (tx, mut rx) = trylock_queue::to_realtime::<u32>(16);
//! tx.push(7).unwrap();
//! tx.push(8).unwrap();
//! // On the real-time thread, at the start of a block:
//! let mut batch = Vec::with_capacity(8); // allocated once, up front
//! match rx.try_drain_into(&mut batch) {
//!     Ok(n) => assert_eq!(n, 2),
//!     Err(trylock_queue::Contended) => { /* retry next block */ }
//! }
//! assert_eq!(batch, [7, 8]);
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// The real-time side found the lock taken; nothing was transferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("queue lock is held by another thread; retry later")]
pub struct Contended;

/// Why a real-time `try_push` did not enqueue its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryPushError<T> {
    /// The queue holds `capacity` items.
    #[error("queue is full")]
    Full(T),
    /// The lock is held by the other side.
    #[error("queue lock is held by another thread")]
    Contended(T),
}

impl<T> TryPushError<T> {
    /// The value that was not enqueued.
    pub fn into_inner(self) -> T {
        match self {
            Self::Full(v) | Self::Contended(v) => v,
        }
    }
}

/// Counts of the real-time side's lock attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TryLockStats {
    /// Calls that tried the lock.
    pub attempts: u64,
    /// Calls that found it taken.
    pub failures: u64,
    /// Longest run of consecutive failures.
    pub longest_failure_run: u64,
    current_run: u64,
}

impl TryLockStats {
    fn record(&mut self, acquired: bool) {
        self.attempts += 1;
        if acquired {
            self.current_run = 0;
        } else {
            self.failures += 1;
            self.current_run += 1;
            self.longest_failure_run = self.longest_failure_run.max(self.current_run);
        }
    }

    /// Fraction of attempts that failed (0 when nothing was attempted).
    pub fn failure_rate(&self) -> f64 {
        if self.attempts == 0 {
            0.0
        } else {
            self.failures as f64 / self.attempts as f64
        }
    }
}

/// A ring whose storage is reserved up front and never grows.
#[derive(Debug)]
struct Ring<T> {
    items: VecDeque<T>,
    capacity: usize,
}

impl<T> Ring<T> {
    fn push(&mut self, value: T) -> Result<(), T> {
        if self.items.len() == self.capacity {
            return Err(value);
        }
        // len < capacity <= reserved storage, so this never reallocates.
        self.items.push_back(value);
        Ok(())
    }
}

type Shared<T> = Arc<Mutex<Ring<T>>>;

fn shared<T>(capacity: usize) -> Shared<T> {
    assert!(capacity > 0, "trylock queue capacity must be at least 1");
    Arc::new(Mutex::new(Ring {
        items: VecDeque::with_capacity(capacity),
        capacity,
    }))
}

/// Locks, ignoring poisoning: every operation leaves the ring consistent, so
/// a panic elsewhere while holding the lock does not corrupt it.
fn lock<T>(m: &Mutex<Ring<T>>) -> MutexGuard<'_, Ring<T>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn try_lock<T>(m: &Mutex<Ring<T>>) -> Option<MutexGuard<'_, Ring<T>>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Creates a queue of `capacity` items from non-real-time producers to one
/// real-time consumer.
///
/// # Panics
///
/// If `capacity` is 0.
pub fn to_realtime<T>(capacity: usize) -> (BlockingSender<T>, TryReceiver<T>) {
    let shared = shared(capacity);
    (
        BlockingSender {
            shared: Arc::clone(&shared),
        },
        TryReceiver {
            shared,
            stats: TryLockStats::default(),
        },
    )
}

/// Creates a queue of `capacity` items from one real-time producer to a
/// non-real-time consumer (meters, analysis results, replies).
///
/// # Panics
///
/// If `capacity` is 0.
pub fn from_realtime<T>(capacity: usize) -> (TrySender<T>, BlockingReceiver<T>) {
    let shared = shared(capacity);
    (
        TrySender {
            shared: Arc::clone(&shared),
            stats: TryLockStats::default(),
        },
        BlockingReceiver { shared },
    )
}

/// Non-real-time producer: locks (may block) to push.
#[derive(Debug)]
pub struct BlockingSender<T> {
    shared: Shared<T>,
}

impl<T> Clone for BlockingSender<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> BlockingSender<T> {
    /// Appends `value`, or gives it back if the queue is full. May block
    /// while the real-time side holds the lock (a few instructions).
    pub fn push(&self, value: T) -> Result<(), T> {
        lock(&self.shared).push(value)
    }

    /// Number of queued items.
    pub fn len(&self) -> usize {
        lock(&self.shared).items.len()
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Real-time consumer: only ever `try_lock`s.
#[derive(Debug)]
pub struct TryReceiver<T> {
    shared: Shared<T>,
    stats: TryLockStats,
}

impl<T> TryReceiver<T> {
    /// Pops one item if the lock is free; `Ok(None)` if the queue is empty.
    pub fn try_pop(&mut self) -> Result<Option<T>, Contended> {
        let guard = try_lock(&self.shared);
        self.stats.record(guard.is_some());
        Ok(guard.ok_or(Contended)?.items.pop_front())
    }

    /// Moves as many items as fit in `batch`'s spare capacity (it never
    /// grows) out of the queue, under one `try_lock`. Returns how many moved.
    pub fn try_drain_into(&mut self, batch: &mut Vec<T>) -> Result<usize, Contended> {
        self.try_drain_at_most(batch, usize::MAX)
    }

    /// As [`try_drain_into`](Self::try_drain_into), moving at most `max` items.
    pub fn try_drain_at_most(&mut self, batch: &mut Vec<T>, max: usize) -> Result<usize, Contended> {
        let guard = try_lock(&self.shared);
        self.stats.record(guard.is_some());
        let mut ring = guard.ok_or(Contended)?;
        let room = (batch.capacity() - batch.len()).min(max);
        let n = room.min(ring.items.len());
        batch.extend(ring.items.drain(..n));
        Ok(n)
    }

    /// Lock attempt counters since creation.
    pub fn stats(&self) -> TryLockStats {
        self.stats
    }
}

/// Real-time producer: only ever `try_lock`s.
#[derive(Debug)]
pub struct TrySender<T> {
    shared: Shared<T>,
    stats: TryLockStats,
}

impl<T> TrySender<T> {
    /// Appends `value` if the lock is free and the queue has room.
    pub fn try_push(&mut self, value: T) -> Result<(), TryPushError<T>> {
        let guard = try_lock(&self.shared);
        self.stats.record(guard.is_some());
        match guard {
            Some(mut ring) => ring.push(value).map_err(TryPushError::Full),
            None => Err(TryPushError::Contended(value)),
        }
    }

    /// Lock attempt counters since creation.
    pub fn stats(&self) -> TryLockStats {
        self.stats
    }
}

/// Non-real-time consumer: locks (may block) to pop.
#[derive(Debug)]
pub struct BlockingReceiver<T> {
    shared: Shared<T>,
}

impl<T> BlockingReceiver<T> {
    /// Pops the oldest item, or `None` if the queue is empty.
    pub fn pop(&mut self) -> Option<T> {
        lock(&self.shared).items.pop_front()
    }

    /// Moves every queued item into `out` (which may grow: this side is not
    /// real-time).
    pub fn drain_into(&mut self, out: &mut Vec<T>) -> usize {
        let mut ring = lock(&self.shared);
        let n = ring.items.len();
        out.extend(ring.items.drain(..));
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_realtime_side_fails_instead_of_blocking_while_the_lock_is_held() {
        let (tx, mut rx) = to_realtime::<u8>(4);
        tx.push(1).unwrap();
        let held = lock(&tx.shared);
        assert_eq!(rx.try_pop(), Err(Contended));
        drop(held);
        assert_eq!(rx.try_pop(), Ok(Some(1)));
        assert_eq!(rx.try_pop(), Ok(None));
        let stats = rx.stats();
        assert_eq!((stats.attempts, stats.failures), (3, 1));
        assert_eq!(stats.longest_failure_run, 1);
    }

    #[test]
    fn a_drain_never_takes_more_than_the_batch_can_hold() {
        let (tx, mut rx) = to_realtime::<u32>(16);
        for i in 0..10 {
            tx.push(i).unwrap();
        }
        let mut batch = Vec::with_capacity(4);
        assert_eq!(rx.try_drain_into(&mut batch), Ok(4));
        assert_eq!(batch, [0, 1, 2, 3]);
        assert_eq!(batch.capacity(), 4);
        assert_eq!(tx.len(), 6);
        batch.clear();
        assert_eq!(rx.try_drain_into(&mut batch), Ok(4));
        assert_eq!(batch, [4, 5, 6, 7]);
    }

    #[test]
    fn pushes_beyond_capacity_are_refused() {
        let (tx, _rx) = to_realtime::<u32>(2);
        tx.push(1).unwrap();
        tx.push(2).unwrap();
        assert_eq!(tx.push(3), Err(3));
        let (mut rt, mut nrt) = from_realtime::<u32>(1);
        rt.try_push(1).unwrap();
        assert_eq!(rt.try_push(2), Err(TryPushError::Full(2)));
        assert_eq!(nrt.pop(), Some(1));
        let mut out = Vec::new();
        assert_eq!(nrt.drain_into(&mut out), 0);
    }
}
