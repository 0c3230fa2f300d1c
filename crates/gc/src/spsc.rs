//! Bounded single-producer single-consumer ring of small `Copy` records.
//!
//! The halves are separate types so that "one producer, one consumer" is enforced by
//! ownership. Neither side ever blocks or allocates after creation.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[repr(align(64))]
struct Padded(AtomicUsize);

struct Ring<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// Next slot the consumer reads (only the consumer writes it).
    head: Padded,
    /// Next slot the producer writes (only the producer writes it).
    tail: Padded,
}

// SAFETY: a slot is written only by the producer before it publishes `tail` (Release) and
// read only by the consumer after it observes that `tail` (Acquire), so no slot is accessed
// by both sides at once; T: Send lets the values cross threads.
unsafe impl<T: Send> Sync for Ring<T> {}
// SAFETY: see above.
unsafe impl<T: Send> Send for Ring<T> {}

/// Writing half.
pub(crate) struct Producer<T> {
    ring: Arc<Ring<T>>,
}

/// Reading half.
pub(crate) struct Consumer<T> {
    ring: Arc<Ring<T>>,
}

/// A ring holding up to `capacity` records.
pub(crate) fn channel<T: Copy + Send>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let cap = capacity.max(1) + 1; // one slot stays empty to tell full from empty
    let slots = (0..cap).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect();
    let ring = Arc::new(Ring { slots, head: Padded(AtomicUsize::new(0)), tail: Padded(AtomicUsize::new(0)) });
    (Producer { ring: ring.clone() }, Consumer { ring })
}

impl<T: Copy + Send> Producer<T> {
    /// Append `value`; gives it back if the ring is full.
    pub(crate) fn push(&mut self, value: T) -> Result<(), T> {
        let r = &*self.ring;
        let tail = r.tail.0.load(Ordering::Relaxed);
        let next = if tail + 1 == r.slots.len() { 0 } else { tail + 1 };
        if next == r.head.0.load(Ordering::Acquire) {
            return Err(value);
        }
        // SAFETY: slot `tail` is outside [head, tail) so the consumer does not read it until
        // the Release store below publishes it; only this (unique) producer writes slots.
        unsafe { (*r.slots[tail].get()).write(value) };
        r.tail.0.store(next, Ordering::Release);
        Ok(())
    }
}

impl<T: Copy + Send> Consumer<T> {
    /// Take the oldest record, if any.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let r = &*self.ring;
        let head = r.head.0.load(Ordering::Relaxed);
        if head == r.tail.0.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: head != tail, so the producer wrote this slot and published it with the
        // Release store that the Acquire load above observed; it will not rewrite it until
        // the head store below hands the slot back.
        let value = unsafe { (*r.slots[head].get()).assume_init() };
        let next = if head + 1 == r.slots.len() { 0 } else { head + 1 };
        r.head.0.store(next, Ordering::Release);
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_refuses_when_full_and_keeps_fifo_order() {
        let (mut p, mut c) = channel::<u32>(3);
        assert!(p.push(1).is_ok() && p.push(2).is_ok() && p.push(3).is_ok());
        assert_eq!(p.push(4), Err(4));
        assert_eq!(c.pop(), Some(1));
        assert!(p.push(4).is_ok());
        assert_eq!((c.pop(), c.pop(), c.pop(), c.pop()), (Some(2), Some(3), Some(4), None));
    }
}
