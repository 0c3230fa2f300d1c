//! Applying finished work items in item order while later items still run.
//!
//! The items of a parallel group end in any order, on any thread, but some
//! of what they leave (their writes to shared buses) must be applied in item
//! order. [`InOrder`] lets whichever thread finishes an item apply every
//! finished item from the first not applied yet up to the first not
//! finished, so that little is left for the end of the group, without any
//! thread ever waiting:
//!
//! * A flag is held by the thread applying. A thread that finishes an item
//!   only tries it: if another thread holds it, that one is left the work.
//! * The holder applies items in order, lets go of the flag, and looks
//!   again whether the next item finished meanwhile: an item that ended
//!   while the flag was held found it taken, and nobody else would apply it
//!   (the lost wake-up). If it did, the holder tries the flag again.
//!
//! The finishing thread's "item done" then "try the flag" and the holder's
//! "let go of the flag" then "is the next item done" are the two halves of
//! a Dekker pair: each side's store is followed by a sequentially
//! consistent fence before its access of the other side's word, so at
//! least one side sees the other's store: either the finisher finds the
//! flag free, or the holder finds the item done.
//!
//! ```
//! use magnetar_dsp::in_order::InOrder;
//!
//! let mut order = InOrder::new(3);
//! order.reset(3);
//! let mut applied = Vec::new();
//! order.finish(1, |n| applied.push(n));
//! assert!(applied.is_empty()); // item 0 is not done: nothing may go yet
//! order.finish(0, |n| applied.push(n));
//! assert_eq!(applied, [0, 1]);
//! assert_eq!(order.committed(), 2);
//! ```

use crate::sync::{fence, AtomicBool, AtomicUsize, Ordering};

/// The in-order application of up to `capacity` items' results, reset
/// before each run of items (see the module documentation).
#[derive(Debug)]
pub struct InOrder {
    /// Held by the thread applying finished items.
    flag: AtomicBool,
    /// How many items, from the first, are applied.
    committed: AtomicUsize,
    /// Per item: finished, its results ready to be applied.
    done: Box<[AtomicBool]>,
    /// Items in this run.
    items: usize,
}

impl InOrder {
    /// Room for runs of up to `capacity` items; the only allocation.
    pub fn new(capacity: usize) -> Self {
        Self {
            flag: AtomicBool::new(false),
            committed: AtomicUsize::new(0),
            done: (0..capacity).map(|_| AtomicBool::new(false)).collect(),
            items: 0,
        }
    }

    /// The most items a run may have.
    pub fn capacity(&self) -> usize {
        self.done.len()
    }

    /// Starts a run of `items` items, none finished or applied. Between
    /// runs only (`&mut`: no thread is finishing items).
    ///
    /// # Panics
    /// If `items` exceeds the capacity.
    pub fn reset(&mut self, items: usize) {
        assert!(items <= self.done.len(), "{items} items for an in-order capacity of {}", self.done.len());
        for d in &self.done[..items] {
            d.store(false, Ordering::Relaxed);
        }
        self.committed.store(0, Ordering::Relaxed);
        self.items = items;
    }

    /// Items in this run.
    pub fn items(&self) -> usize {
        self.items
    }

    /// How many items, from the first, are applied. Acquire: the caller
    /// sees what applying them did. An item that finds itself next
    /// (`committed() == i`) stays next until it finishes: no later item is
    /// applied before it, so it may do at once what applying it would do.
    #[inline]
    pub fn committed(&self) -> usize {
        self.committed.load(Ordering::Acquire)
    }

    /// Marks item `item` finished, then applies what it can ([`commit`]).
    /// What the caller did before the call is visible to whichever thread
    /// applies the item.
    ///
    /// [`commit`]: InOrder::commit
    #[inline]
    pub fn finish(&self, item: usize, apply: impl FnMut(usize)) {
        debug_assert!(item < self.items);
        // Release: whoever sees the flag sees what the item left. The
        // fence is this side's half of the Dekker pair (module docs).
        self.done[item].store(true, Ordering::Release);
        fence(Ordering::SeqCst);
        self.commit(apply);
    }

    /// Unless another thread is at it, calls `apply(n)` for each finished
    /// item `n` not applied yet, in item order, up to the first item not
    /// finished. `apply` never runs on two threads at once, and sees what
    /// item `n`'s thread did before finishing it.
    #[inline]
    pub fn commit(&self, mut apply: impl FnMut(usize)) {
        loop {
            if self.flag.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
                return;
            }
            let n = self.commit_held(&mut apply);
            self.flag.store(false, Ordering::Release);
            // An item that finished while the flag was held found it
            // taken: look again, past the holder's half of the Dekker pair.
            fence(Ordering::SeqCst);
            if !(n < self.items && self.done[n].load(Ordering::Relaxed)) {
                return;
            }
        }
    }

    /// `commit` with the flag held; returns the items now applied.
    #[inline]
    fn commit_held(&self, apply: &mut impl FnMut(usize)) -> usize {
        // Relaxed: only the flag's holder stores it, and the flag orders
        // one holder's store before the next holder's load.
        let mut n = self.committed.load(Ordering::Relaxed);
        // Acquire: pairs with the store of the item's `done`.
        while n < self.items && self.done[n].load(Ordering::Acquire) {
            apply(n);
            n += 1;
            // Release: an item that starts in order sees what was applied.
            self.committed.store(n, Ordering::Release);
        }
        n
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn items_finished_out_of_order_are_applied_in_order_once_the_gap_closes() {
        let mut order = InOrder::new(4);
        order.reset(4);
        let mut applied = Vec::new();
        order.finish(2, |n| applied.push(n));
        order.finish(1, |n| applied.push(n));
        assert!(applied.is_empty());
        assert_eq!(order.committed(), 0);
        order.finish(0, |n| applied.push(n));
        assert_eq!(applied, [0, 1, 2]);
        order.finish(3, |n| applied.push(n));
        assert_eq!(applied, [0, 1, 2, 3]);
        assert_eq!(order.committed(), 4);
    }

    #[test]
    fn reset_starts_a_run_with_nothing_finished() {
        let mut order = InOrder::new(3);
        order.reset(3);
        order.finish(0, |_| {});
        order.finish(1, |_| {});
        order.reset(2);
        assert_eq!(order.committed(), 0);
        let mut applied = Vec::new();
        order.finish(1, |n| applied.push(n));
        assert!(applied.is_empty());
        order.commit(|n| applied.push(n));
        assert!(applied.is_empty());
        order.finish(0, |n| applied.push(n));
        assert_eq!(applied, [0, 1]);
    }
}
