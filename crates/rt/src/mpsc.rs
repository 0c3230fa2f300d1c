//! A bounded, lock-free multi-producer single-consumer queue.
//!
//! The network and non-real-time threads hold cloned [`Sender`]s; the audio
//! thread holds the one [`Receiver`]. The algorithm is D. Vyukov's bounded
//! array queue: every slot carries a sequence number that says whose turn it
//! is, producers claim a position with one compare-and-swap, and the consumer
//! needs no atomic read-modify-write at all. Storage is allocated once in
//! [`channel`]; the capacity is rounded up to a power of two (at least 2).
//!
//! Progress: `push` is lock-free (a failed compare-and-swap means another
//! producer succeeded). `pop` never waits, but a producer preempted between
//! claiming a slot and filling it hides the items behind it until it runs
//! again: `pop` then returns `None` although later pushes have completed.
//!
//! ```
//! use magnetar_rt::mpsc;
//!
//! let (tx, mut rx) = mpsc::channel::<&str>(4);
//! let tx2 = tx.clone();
//! std::thread::spawn(move || tx2.push("from a thread").unwrap())
//!     .join()
//!     .unwrap();
//! tx.push("from here").unwrap();
//! assert_eq!(rx.pop(), Some("from a thread"));
//! assert_eq!(rx.pop(), Some("from here"));
//! assert_eq!(rx.pop(), None);
//! ```

use crate::sync::{spin_hint, Arc, AtomicUsize, Ordering, UnsafeCell};
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;

struct Slot<T> {
    /// `pos` when the slot is free for the producer that claims position
    /// `pos`; `pos + 1` once that producer has filled it.
    seq: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

struct Shared<T> {
    /// Next position producers claim.
    enqueue: CachePadded<AtomicUsize>,
    /// Next position the consumer reads (published for `len` only).
    dequeue: CachePadded<AtomicUsize>,
    slots: Box<[Slot<T>]>,
    mask: usize,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Last Arc: every claimed position was filled before its `push`
        // returned, so exactly the positions dequeue..enqueue hold values.
        let mut pos = self.dequeue.load(Ordering::Acquire);
        let end = self.enqueue.load(Ordering::Acquire);
        while pos != end {
            let slot = &self.slots[pos & self.mask];
            // SAFETY: see above; the slot at `pos` is initialised and was not
            // read by the consumer, so it is dropped exactly once here.
            slot.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
            pos = pos.wrapping_add(1);
        }
    }
}

/// Creates a queue holding up to `capacity` items (rounded up to a power of
/// two, at least 2) and returns a cloneable sender and the single receiver.
///
/// # Panics
///
/// If `capacity` is 0 or larger than `usize::MAX / 4`.
pub fn channel<T: Send>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "mpsc capacity must be at least 1");
    assert!(capacity <= usize::MAX / 4, "mpsc capacity too large");
    // One slot would make "filled for position p" (seq p + 1) and "free for
    // position p + 1" (seq p + capacity) the same number.
    let capacity = capacity.max(2).next_power_of_two();
    let slots = (0..capacity)
        .map(|i| Slot {
            seq: AtomicUsize::new(i),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        })
        .collect();
    let shared = Arc::new(Shared {
        enqueue: CachePadded::new(AtomicUsize::new(0)),
        dequeue: CachePadded::new(AtomicUsize::new(0)),
        slots,
        mask: capacity - 1,
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared, head: 0 },
    )
}

// SAFETY: a value moves from a producer thread to the consumer thread (T: Send);
// the slot protocol gives each slot to one thread at a time, so sharing a
// Sender between threads (Sync) is fine too.
unsafe impl<T: Send> Send for Sender<T> {}
// SAFETY: as above: `push(&self)` is safe to call from many threads at once.
unsafe impl<T: Send> Sync for Sender<T> {}
// SAFETY: the receiver only takes values out (T: Send).
unsafe impl<T: Send> Send for Receiver<T> {}

/// The producing side; clone it for each producer thread.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Sender<T> {
    /// Appends `value`, or gives it back if the queue is full.
    pub fn push(&self, value: T) -> Result<(), T> {
        let shared = &*self.shared;
        let mut pos = shared.enqueue.load(Ordering::Relaxed);
        loop {
            let slot = &shared.slots[pos & shared.mask];
            let seq = slot.seq.load(Ordering::Acquire);
            let lag = seq.wrapping_sub(pos) as isize;
            if lag == 0 {
                match shared.enqueue.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the compare-and-swap made us the only owner
                        // of position `pos`; seq == pos (read with Acquire)
                        // means the consumer has finished with the slot's
                        // previous value.
                        slot.value.with_mut(|p| unsafe { (*p).write(value) });
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(current) => pos = current,
                }
            } else if lag < 0 {
                // The slot still holds the value from one lap ago: full.
                return Err(value);
            } else {
                // Another producer claimed `pos` meanwhile; catch up.
                spin_hint();
                pos = shared.enqueue.load(Ordering::Relaxed);
            }
        }
    }

    /// Approximate number of items queued (claimed but not yet popped).
    pub fn len(&self) -> usize {
        let tail = self.shared.enqueue.load(Ordering::Relaxed);
        let head = self.shared.dequeue.load(Ordering::Relaxed);
        tail.wrapping_sub(head).min(self.capacity())
    }

    /// True if [`len`](Self::len) is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most items the queue holds (a power of two).
    pub fn capacity(&self) -> usize {
        self.shared.slots.len()
    }
}

/// The single consuming side, held by the real-time thread.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// Our own copy of `shared.dequeue`.
    head: usize,
}

impl<T> Receiver<T> {
    /// Removes the oldest completed item, or returns `None` if there is none.
    /// Never blocks, loops or allocates.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let shared = &*self.shared;
        let slot = &shared.slots[self.head & shared.mask];
        let seq = slot.seq.load(Ordering::Acquire);
        if seq != self.head.wrapping_add(1) {
            return None;
        }
        // SAFETY: seq == head + 1 (Acquire) means the producer that claimed
        // `head` has written the value and released it; we are the only
        // consumer, and no producer touches the slot until we bump seq.
        let value = slot.value.with(|p| unsafe { (*p).assume_init_read() });
        slot.seq
            .store(self.head.wrapping_add(shared.mask + 1), Ordering::Release);
        self.head = self.head.wrapping_add(1);
        shared.dequeue.store(self.head, Ordering::Release);
        Some(value)
    }

    /// Approximate number of items queued.
    pub fn len(&self) -> usize {
        let tail = self.shared.enqueue.load(Ordering::Relaxed);
        tail.wrapping_sub(self.head).min(self.capacity())
    }

    /// True if [`len`](Self::len) is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most items the queue holds (a power of two).
    pub fn capacity(&self) -> usize {
        self.shared.slots.len()
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as StdCounter;

    #[test]
    fn capacity_is_rounded_up_to_a_power_of_two_and_enforced() {
        let (tx, mut rx) = channel(3);
        assert_eq!(tx.capacity(), 4);
        for i in 0..4 {
            assert_eq!(tx.push(i), Ok(()));
        }
        assert_eq!(tx.push(99), Err(99));
        assert_eq!(rx.len(), 4);
        assert_eq!(rx.pop(), Some(0));
        assert_eq!(tx.push(4), Ok(()));
        let drained: Vec<_> = std::iter::from_fn(|| rx.pop()).collect();
        assert_eq!(drained, vec![1, 2, 3, 4]);
    }

    #[test]
    fn a_queue_asked_for_one_slot_gets_two() {
        let (tx, _rx) = channel::<u8>(1);
        assert_eq!(tx.capacity(), 2);
    }

    #[test]
    fn order_is_kept_over_many_laps() {
        let (tx, mut rx) = channel(2);
        for i in 0..1000u32 {
            tx.push(i).unwrap();
            assert_eq!(rx.pop(), Some(i));
        }
        assert!(rx.is_empty());
    }

    struct CountsDrops<'a>(&'a StdCounter);
    impl Drop for CountsDrops<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn queued_items_are_dropped_when_the_queue_goes_away() {
        let drops = StdCounter::new(0);
        {
            let (tx, mut rx) = channel(8);
            for _ in 0..5 {
                assert!(tx.push(CountsDrops(&drops)).is_ok());
            }
            drop(rx.pop());
            drop(rx);
            assert_eq!(drops.load(Ordering::Relaxed), 1);
        }
        assert_eq!(drops.load(Ordering::Relaxed), 5);
    }
}
