//! The ready stack: queue items whose activation count reached zero and that
//! no thread has picked up yet.
//!
//! # Why a Treiber stack with intrusive links, and not `magnetar_rt::mpsc`
//!
//! Every DSP thread both pushes (when it readies a successor) and pops (when
//! it looks for work), so the structure must be multi-producer *and*
//! multi-consumer; the rt crate's queue has a single consumer. A stack fits
//! the problem exactly:
//!
//! * It is bounded by construction: a queue item is pushed at most once per
//!   block, so one link word per queue item (`next[i]`) is all the storage
//!   ever needed, sized when the plan is compiled. No slot array can fill up.
//! * Push and pop are one compare-and-swap each on one word.
//! * LIFO order keeps recently readied items, whose inputs were just
//!   written, near the top, which is friendlier to caches than FIFO.
//!
//! The head word holds the index of the top item and a tag that grows on every
//! change. The tag defeats ABA: a thread that read head = `i` and stalled could
//! otherwise succeed in its compare-and-swap after `i` had been popped and
//! pushed again (in a later block) with a different `next`.

use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

/// "No item" in a link or in the head.
const NONE: u32 = u32::MAX;

#[inline]
fn pack(tag: u32, index: u32) -> u64 {
    ((tag as u64) << 32) | index as u64
}

#[inline]
fn unpack(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

/// A bounded lock-free stack of queue item indices `0..capacity`, each of
/// which may be on the stack at most once at a time.
#[derive(Debug)]
pub struct ReadyStack {
    head: CachePadded<AtomicU64>,
    next: Vec<AtomicU32>,
}

impl ReadyStack {
    /// An empty stack for item indices `0..capacity`.
    pub fn new(capacity: usize) -> Self {
        let mut stack = Self {
            head: CachePadded::new(AtomicU64::new(pack(0, NONE))),
            next: Vec::new(),
        };
        stack.resize(capacity);
        stack
    }

    /// Makes room for indices `0..capacity`; allocates only if that exceeds
    /// every capacity this stack had before.
    pub fn resize(&mut self, capacity: usize) {
        assert!(capacity < NONE as usize, "ready stack capacity {capacity} too large");
        if capacity > self.next.len() {
            self.next.reserve(capacity - self.next.len());
            while self.next.len() < capacity {
                self.next.push(AtomicU32::new(NONE));
            }
        } else {
            self.next.truncate(capacity);
        }
    }

    /// The largest index + 1 that may be pushed.
    pub fn capacity(&self) -> usize {
        self.next.len()
    }

    /// Empties the stack. Only between blocks: no other thread may be
    /// pushing or popping. The tag keeps growing across resets.
    pub fn reset(&self) {
        let (tag, _) = unpack(self.head.load(Ordering::Relaxed));
        self.head.store(pack(tag.wrapping_add(1), NONE), Ordering::Relaxed);
    }

    /// Pushes item `index`, which must not be on the stack already.
    #[inline]
    pub fn push(&self, index: u32) {
        debug_assert!((index as usize) < self.next.len());
        let link = &self.next[index as usize];
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let (tag, top) = unpack(head);
            link.store(top, Ordering::Relaxed);
            // Release: the link above, and everything the pusher did before
            // (the item's inputs), is visible to whoever pops `index`.
            match self.head.compare_exchange_weak(
                head,
                pack(tag.wrapping_add(1), index),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Pops the most recently pushed item, if any.
    #[inline]
    pub fn pop(&self) -> Option<u32> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let (tag, top) = unpack(head);
            if top == NONE {
                return None;
            }
            // May read a link rewritten by a later push of `top`; the tag
            // then differs and the compare-and-swap below fails.
            let below = self.next[top as usize].load(Ordering::Relaxed);
            match self.head.compare_exchange_weak(
                head,
                pack(tag.wrapping_add(1), below),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(top),
                Err(now) => {
                    head = now;
                    crate::sync::spin_hint();
                }
            }
        }
    }

    /// Whether the stack looked empty at the moment of the call.
    pub fn is_empty(&self) -> bool {
        unpack(self.head.load(Ordering::Relaxed)).1 == NONE
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn pops_return_the_pushed_items_last_in_first_out() {
        let s = ReadyStack::new(4);
        assert_eq!(s.pop(), None);
        s.push(2);
        s.push(0);
        s.push(3);
        assert_eq!(s.pop(), Some(3));
        assert_eq!(s.pop(), Some(0));
        assert_eq!(s.pop(), Some(2));
        assert_eq!(s.pop(), None);
    }

    #[test]
    fn reset_forgets_everything_that_was_pushed() {
        let s = ReadyStack::new(3);
        s.push(1);
        s.push(2);
        s.reset();
        assert!(s.is_empty());
        s.push(1);
        assert_eq!(s.pop(), Some(1));
        assert_eq!(s.pop(), None);
    }

    #[test]
    fn two_threads_pushing_and_popping_see_every_item_exactly_once() {
        const N: u32 = 20_000;
        let s = ReadyStack::new(N as usize);
        let seen: Vec<AtomicUsize> = (0..N).map(|_| AtomicUsize::new(0)).collect();
        let popped = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for half in 0..2u32 {
                let (s, seen, popped) = (&s, &seen, &popped);
                scope.spawn(move || {
                    // Each thread pushes its half, and pops concurrently.
                    for i in (half..N).step_by(2) {
                        s.push(i);
                        if i % 3 == 0 {
                            if let Some(v) = s.pop() {
                                seen[v as usize].fetch_add(1, Ordering::Relaxed);
                                popped.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    while popped.load(Ordering::Relaxed) < N as usize {
                        if let Some(v) = s.pop() {
                            seen[v as usize].fetch_add(1, Ordering::Relaxed);
                            popped.fetch_add(1, Ordering::Relaxed);
                        } else {
                            std::hint::spin_loop();
                        }
                    }
                });
            }
        });
        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }
}
