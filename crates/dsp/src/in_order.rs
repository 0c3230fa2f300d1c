//! Applying finished work items in item order while later items still run.
//!
//! The items of a parallel group end in any order, on any thread, but some
//! of what they leave (their writes to shared buses) must be applied in item
//! order. [`InOrder`] lets a thread that finishes an item apply the
//! finished items from the first not applied yet on, so that little is
//! left for the end of the group, without any thread ever waiting:
//!
//! * A flag is held by the thread applying. A thread that finishes an item
//!   only tries it: if another thread holds it, that one is left the work.
//! * While items are still running, a thread applies only the items it
//!   finished itself ([`finish`], [`commit`] with `Some(worker)`), and
//!   stops at the first one that another thread finished, or that is not
//!   finished: what an item leaves is in its own thread's cache, and
//!   applying it there moves only the bus, not the item's logged samples,
//!   between cores (and the storage they are logged in does not move back
//!   when the thread logs into it again). The item's thread applies it at
//!   its next look.
//! * A thread leaving the run ([`commit`] with `None`) applies whatever is
//!   finished, whoever finished it.
//! * A thread looks before it tries the flag: while the next item is not
//!   one it may apply, it leaves the flag alone, so that threads polling
//!   between their items do not hold it when the one finishing the next
//!   item tries it (that one would then leave its item, and the next item
//!   its thread runs would not be next in order).
//! * The holder applies items in order, lets go of the flag, and looks
//!   again whether the next item finished meanwhile, one it may apply: an
//!   item that ended while the flag was held found it taken, and nobody else
//!   would apply it (the lost wake-up). If it did, the holder tries the
//!   flag again.
//!
//! The finishing thread's "item done" then "try the flag" and the holder's
//! "let go of the flag" then "is the next item done" are the two halves of
//! a Dekker pair: each side's store is followed by a sequentially
//! consistent fence before its access of the other side's word, so at
//! least one side sees the other's store: either the finisher finds the
//! flag free, or the holder finds the item done. A holder that applies only
//! its own items may leave an item that another thread finished meanwhile;
//! that holder itself leaves the run later, applying anything, so once
//! every thread has left, every finished item is applied.
//!
//! [`finish`]: InOrder::finish
//! [`commit`]: InOrder::commit
//!
//! ```
//! use magnetar_dsp::in_order::InOrder;
//!
//! let mut order = InOrder::new(3);
//! order.reset(3);
//! let mut applied = Vec::new();
//! order.finish(1, 0, |n| applied.push(n));
//! assert!(applied.is_empty()); // item 0 is not done: nothing may go yet
//! order.finish(0, 0, |n| applied.push(n));
//! assert_eq!(applied, [0, 1]);
//! order.finish(2, 1, |n| applied.push(n));
//! assert_eq!(order.committed(), 3);
//! ```

use crate::sync::{fence, AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;

/// The in-order application of up to `capacity` items' results, reset
/// before each run of items (see the module documentation).
///
/// What the threads write while items run lies on cache lines of its own
/// (128 bytes, a pair of lines that x86 fetches together): the flag with
/// the count (written together, by the applying thread), and each item's
/// word (written once, by its finisher). Had they shared lines with one
/// another or with the fields only read, every write would take the line
/// from the threads polling between their items, and their next look would
/// take it back, a transfer between cores each way.
#[derive(Debug)]
pub struct InOrder {
    /// The applying thread's words.
    head: CachePadded<Head>,
    /// Per item: 0 while it runs, else 1 + the thread that finished it, its
    /// results ready to be applied.
    finished: Box<[CachePadded<AtomicUsize>]>,
    /// Items in this run.
    items: usize,
}

#[derive(Debug)]
struct Head {
    /// Held by the thread applying finished items.
    flag: AtomicBool,
    /// How many items, from the first, are applied.
    committed: AtomicUsize,
}

impl InOrder {
    /// Room for runs of up to `capacity` items; the only allocation.
    pub fn new(capacity: usize) -> Self {
        Self {
            head: CachePadded::new(Head { flag: AtomicBool::new(false), committed: AtomicUsize::new(0) }),
            finished: (0..capacity).map(|_| CachePadded::new(AtomicUsize::new(0))).collect(),
            items: 0,
        }
    }

    /// The most items a run may have.
    pub fn capacity(&self) -> usize {
        self.finished.len()
    }

    /// Starts a run of `items` items, none finished or applied. Between
    /// runs only (`&mut`: no thread is finishing items).
    ///
    /// # Panics
    /// If `items` exceeds the capacity.
    pub fn reset(&mut self, items: usize) {
        assert!(items <= self.finished.len(), "{items} items for an in-order capacity of {}", self.finished.len());
        for f in &self.finished[..items] {
            f.store(0, Ordering::Relaxed);
        }
        self.head.committed.store(0, Ordering::Relaxed);
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
        self.head.committed.load(Ordering::Acquire)
    }

    /// Marks item `item` finished by thread `worker`, then applies what
    /// that thread may ([`commit`] with `Some(worker)`). What the caller
    /// did before the call is visible to whichever thread applies the item.
    ///
    /// [`commit`]: InOrder::commit
    #[inline]
    pub fn finish(&self, item: usize, worker: usize, apply: impl FnMut(usize)) {
        debug_assert!(item < self.items);
        // Release: whoever sees the item finished sees what it left, and
        // by whom. The fence is this side's half of the Dekker pair
        // (module docs).
        self.finished[item].store(worker + 1, Ordering::Release);
        fence(Ordering::SeqCst);
        self.commit(Some(worker), apply);
    }

    /// Unless another thread is at it, calls `apply(n)` for each finished
    /// item `n` not applied yet, in item order, up to the first item not
    /// finished, or with `mine == Some(worker)` the first one that a thread
    /// other than `worker` finished. `apply` never runs on two threads at
    /// once, and sees what item `n`'s thread did before finishing it.
    #[inline]
    pub fn commit(&self, mine: Option<usize>, mut apply: impl FnMut(usize)) {
        loop {
            // A look first, and the flag only when the next item is one
            // this thread may apply: a thread polling between its items,
            // or leaving with everything applied, then neither takes the
            // flag's line from the thread that finishes the next item nor
            // holds the flag when that thread tries it. Relaxed: a stale
            // count only defers an item to its thread's next look, or to
            // the threads leaving (module docs).
            let n = self.head.committed.load(Ordering::Relaxed);
            if !(n < self.items && self.ready(n, mine)) {
                return;
            }
            if self.head.flag.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
                return;
            }
            self.commit_held(mine, &mut apply);
            self.head.flag.store(false, Ordering::Release);
            // An item that finished while the flag was held found it
            // taken: look again (the loop's look), past the holder's half
            // of the Dekker pair.
            fence(Ordering::SeqCst);
        }
    }

    /// Whether item `n` is finished, and by `mine` if given. Acquire:
    /// pairs with the store of the item's word, so that what it left is
    /// seen too.
    #[inline]
    fn ready(&self, n: usize, mine: Option<usize>) -> bool {
        let by = self.finished[n].load(Ordering::Acquire);
        by != 0 && mine.map_or(true, |w| by == w + 1)
    }

    /// `commit` with the flag held.
    #[inline]
    fn commit_held(&self, mine: Option<usize>, apply: &mut impl FnMut(usize)) {
        // Relaxed: only the flag's holder stores it, and the flag orders
        // one holder's store before the next holder's load.
        let mut n = self.head.committed.load(Ordering::Relaxed);
        while n < self.items && self.ready(n, mine) {
            apply(n);
            n += 1;
            // Release: an item that starts in order sees what was applied.
            self.head.committed.store(n, Ordering::Release);
        }
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
        order.finish(2, 0, |n| applied.push(n));
        order.finish(1, 0, |n| applied.push(n));
        assert!(applied.is_empty());
        assert_eq!(order.committed(), 0);
        order.finish(0, 0, |n| applied.push(n));
        assert_eq!(applied, [0, 1, 2]);
        order.finish(3, 0, |n| applied.push(n));
        assert_eq!(applied, [0, 1, 2, 3]);
        assert_eq!(order.committed(), 4);
    }

    #[test]
    fn a_thread_applies_only_its_own_items_until_it_leaves() {
        let mut order = InOrder::new(4);
        order.reset(4);
        let mut applied = Vec::new();
        order.finish(1, 1, |n| applied.push((n, 1)));
        order.finish(2, 0, |n| applied.push((n, 0)));
        order.finish(0, 0, |n| applied.push((n, 0)));
        // Item 1 is thread 1's: thread 0 stops there.
        assert_eq!(applied, [(0, 0)]);
        order.commit(Some(0), |n| applied.push((n, 0)));
        assert_eq!(applied, [(0, 0)]);
        // Thread 1 applies its own, then stops at thread 0's.
        order.commit(Some(1), |n| applied.push((n, 1)));
        assert_eq!(applied, [(0, 0), (1, 1)]);
        order.finish(3, 1, |n| applied.push((n, 1)));
        assert_eq!(applied, [(0, 0), (1, 1)]);
        // Leaving, thread 1 applies what is left, whoever finished it.
        order.commit(None, |n| applied.push((n, 1)));
        assert_eq!(applied, [(0, 0), (1, 1), (2, 1), (3, 1)]);
        assert_eq!(order.committed(), 4);
    }

    #[test]
    fn reset_starts_a_run_with_nothing_finished() {
        let mut order = InOrder::new(3);
        order.reset(3);
        order.finish(0, 0, |_| {});
        order.finish(1, 0, |_| {});
        order.reset(2);
        assert_eq!(order.committed(), 0);
        let mut applied = Vec::new();
        order.finish(1, 0, |n| applied.push(n));
        assert!(applied.is_empty());
        order.commit(None, |n| applied.push(n));
        assert!(applied.is_empty());
        order.finish(0, 0, |n| applied.push(n));
        assert_eq!(applied, [0, 1]);
    }
}
