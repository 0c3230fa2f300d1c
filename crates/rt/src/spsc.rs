//! A bounded, wait-free single-producer single-consumer ring buffer.
//!
//! The two thread roles are two owned types: [`Producer`] pushes, [`Consumer`]
//! pops, and neither is `Clone`, so "single producer, single consumer" is
//! enforced by the compiler. Each operation is a bounded number of steps with
//! no loop and no lock (wait-free), and the storage is allocated once in
//! [`channel`].
//!
//! ```
//! use magnetar_rt::spsc;
//!
//! let (mut tx, mut rx) = spsc::channel::<u32>(2);
//! assert_eq!(tx.push(1), Ok(()));
//! assert_eq!(tx.push(2), Ok(()));
//! assert_eq!(tx.push(3), Err(3)); // full: the value comes back
//! assert_eq!(rx.pop(), Some(1));
//! assert_eq!(rx.pop(), Some(2));
//! assert_eq!(rx.pop(), None);
//! ```
//!
//! Across threads:
//!
//! ```
//! use magnetar_rt::spsc;
//!
//! let (mut tx, mut rx) = spsc::channel::<u64>(64);
//! let producer = std::thread::spawn(move || {
//!     for i in 0..1000 {
//!         let mut v = i;
//!         while let Err(back) = tx.push(v) {
//!             v = back;
//!             std::thread::yield_now();
//!         }
//!     }
//! });
//! let mut expected = 0;
//! while expected < 1000 {
//!     if let Some(v) = rx.pop() {
//!         assert_eq!(v, expected);
//!         expected += 1;
//!     }
//! }
//! producer.join().unwrap();
//! ```

use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell};
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;

/// Positions run over `0..2 * capacity`, so that a full buffer (distance
/// `capacity`) and an empty one (distance 0) have different encodings.
struct Shared<T> {
    /// Next position to read; written by the consumer only.
    head: CachePadded<AtomicUsize>,
    /// Next position to write; written by the producer only.
    tail: CachePadded<AtomicUsize>,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

impl<T> Shared<T> {
    #[inline]
    fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Number of items between two positions.
    #[inline]
    fn distance(&self, head: usize, tail: usize) -> usize {
        if tail >= head {
            tail - head
        } else {
            tail + 2 * self.capacity() - head
        }
    }

    #[inline]
    fn next(&self, pos: usize) -> usize {
        if pos + 1 == 2 * self.capacity() {
            0
        } else {
            pos + 1
        }
    }

    #[inline]
    fn slot(&self, pos: usize) -> &UnsafeCell<MaybeUninit<T>> {
        let cap = self.capacity();
        &self.slots[if pos >= cap { pos - cap } else { pos }]
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Both halves are gone (this is the last Arc), so no one else touches
        // the slots; the Arc's release/acquire makes their writes visible.
        let mut head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        while head != tail {
            // SAFETY: positions in head..tail hold values that were written by
            // the producer and not yet read by the consumer, so each is
            // initialised and dropped exactly once here.
            self.slot(head)
                .with_mut(|p| unsafe { (*p).assume_init_drop() });
            head = self.next(head);
        }
    }
}

// SAFETY: values of T move from the producer's thread to the consumer's thread,
// which needs T: Send; the slots are never accessed by both threads at once
// (the head/tail protocol hands each slot to exactly one side).
unsafe impl<T: Send> Send for Producer<T> {}
// SAFETY: as for the producer.
unsafe impl<T: Send> Send for Consumer<T> {}

/// Creates a ring buffer holding up to `capacity` items and returns its two
/// halves. All storage is allocated here.
///
/// # Panics
///
/// If `capacity` is 0 or larger than `usize::MAX / 4`.
pub fn channel<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    assert!(capacity > 0, "spsc capacity must be at least 1");
    assert!(capacity <= usize::MAX / 4, "spsc capacity too large");
    let slots = (0..capacity)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let shared = Arc::new(Shared {
        head: CachePadded::new(AtomicUsize::new(0)),
        tail: CachePadded::new(AtomicUsize::new(0)),
        slots,
    });
    (
        Producer {
            shared: Arc::clone(&shared),
            tail: 0,
            cached_head: 0,
        },
        Consumer {
            shared,
            head: 0,
            cached_tail: 0,
        },
    )
}

/// The writing half of an [`spsc::channel`](channel).
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
    /// Our own copy of `shared.tail` (only we write it).
    tail: usize,
    /// Last head we read; the real head is never behind it, so "not full"
    /// judged from it is always true.
    cached_head: usize,
}

impl<T> Producer<T> {
    /// Appends `value`, or gives it back if the buffer is full.
    #[inline]
    pub fn push(&mut self, value: T) -> Result<(), T> {
        let shared = &*self.shared;
        if shared.distance(self.cached_head, self.tail) == shared.capacity() {
            self.cached_head = shared.head.load(Ordering::Acquire);
            if shared.distance(self.cached_head, self.tail) == shared.capacity() {
                return Err(value);
            }
        }
        // SAFETY: the slot at `tail` is outside head..tail, so the consumer
        // does not read it until we publish the new tail below; the Acquire
        // load of head ordered the consumer's read of its old value before
        // this write.
        shared
            .slot(self.tail)
            .with_mut(|p| unsafe { (*p).write(value) });
        self.tail = shared.next(self.tail);
        shared.tail.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Number of items in the buffer now (the consumer may be popping).
    pub fn len(&self) -> usize {
        let head = self.shared.head.load(Ordering::Acquire);
        self.shared.distance(head, self.tail)
    }

    /// True if no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of free slots now; at least this many pushes will succeed.
    pub fn slots(&self) -> usize {
        self.capacity() - self.len()
    }

    /// The most items the buffer holds.
    pub fn capacity(&self) -> usize {
        self.shared.capacity()
    }
}

/// The reading half of an [`spsc::channel`](channel).
pub struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// Our own copy of `shared.head` (only we write it).
    head: usize,
    /// Last tail we read; the real tail is never behind it.
    cached_tail: usize,
}

impl<T> Consumer<T> {
    /// Removes the oldest item, or returns `None` if the buffer is empty.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let shared = &*self.shared;
        if self.head == self.cached_tail {
            self.cached_tail = shared.tail.load(Ordering::Acquire);
            if self.head == self.cached_tail {
                return None;
            }
        }
        // SAFETY: `head` is inside head..tail, so the producer wrote this slot
        // and published it with the Release store of tail that our Acquire
        // load saw; it will not write it again until we publish the new head.
        let value = shared
            .slot(self.head)
            .with(|p| unsafe { (*p).assume_init_read() });
        self.head = shared.next(self.head);
        shared.head.store(self.head, Ordering::Release);
        Some(value)
    }

    /// Number of items ready to pop now (the producer may be pushing).
    pub fn len(&self) -> usize {
        let tail = self.shared.tail.load(Ordering::Acquire);
        self.shared.distance(self.head, tail)
    }

    /// True if nothing is ready to pop.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most items the buffer holds.
    pub fn capacity(&self) -> usize {
        self.shared.capacity()
    }
}

impl<T> std::fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as StdCounter;

    #[test]
    fn items_come_out_in_the_order_they_went_in_across_wraparound() {
        let (mut tx, mut rx) = channel(3);
        for round in 0..10u32 {
            assert_eq!(tx.push(round * 2), Ok(()));
            assert_eq!(tx.push(round * 2 + 1), Ok(()));
            assert_eq!(rx.len(), 2);
            assert_eq!(rx.pop(), Some(round * 2));
            assert_eq!(rx.pop(), Some(round * 2 + 1));
            assert!(rx.is_empty());
        }
    }

    #[test]
    fn a_full_buffer_refuses_and_returns_the_value() {
        let (mut tx, mut rx) = channel(2);
        tx.push("a").unwrap();
        tx.push("b").unwrap();
        assert_eq!(tx.slots(), 0);
        assert_eq!(tx.push("c"), Err("c"));
        assert_eq!(rx.pop(), Some("a"));
        assert_eq!(tx.push("c"), Ok(()));
        assert_eq!(tx.len(), 2);
        assert_eq!(tx.capacity(), 2);
    }

    struct CountsDrops<'a>(&'a StdCounter);
    impl Drop for CountsDrops<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn items_left_in_the_buffer_are_dropped_exactly_once() {
        let drops = StdCounter::new(0);
        {
            let (mut tx, mut rx) = channel(4);
            for _ in 0..4 {
                assert!(tx.push(CountsDrops(&drops)).is_ok());
            }
            drop(rx.pop());
            assert_eq!(drops.load(Ordering::Relaxed), 1);
            assert!(tx.push(CountsDrops(&drops)).is_ok());
            drop(tx);
            assert_eq!(drops.load(Ordering::Relaxed), 1);
        }
        assert_eq!(drops.load(Ordering::Relaxed), 5);
    }
}
