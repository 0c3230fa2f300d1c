//! Model checks of the ready stack, the threads' shares of the initially
//! ready items and the in-order commit of finished items, under every
//! interleaving loom explores:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p magnetar-dsp --release --test loom
//! ```
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use magnetar_dsp::in_order::InOrder;
use magnetar_dsp::ready::ReadyStack;
use magnetar_dsp::shares::Shares;

#[test]
fn loom_concurrent_pushes_and_pops_hand_out_each_item_once() {
    loom::model(|| {
        let stack = Arc::new(ReadyStack::new(3));
        stack.push(0);
        let s = Arc::clone(&stack);
        let t = thread::spawn(move || {
            s.push(1);
            s.pop()
        });
        stack.push(2);
        let mine = stack.pop();
        let theirs = t.join().unwrap();
        let mut got: Vec<u32> = [mine, theirs].into_iter().flatten().collect();
        while let Some(v) = stack.pop() {
            got.push(v);
        }
        got.sort();
        assert_eq!(got, vec![0, 1, 2]);
    });
}

#[test]
fn loom_a_stalled_pop_does_not_return_an_item_pushed_again_meanwhile() {
    // The ABA case: one thread pops while the other pops the same top,
    // pops the next, and pushes the first again (as a later block would).
    loom::model(|| {
        let stack = Arc::new(ReadyStack::new(2));
        stack.push(1);
        stack.push(0);
        let s = Arc::clone(&stack);
        let t = thread::spawn(move || s.pop());
        let a = stack.pop();
        let b = stack.pop();
        if let Some(a) = a {
            stack.push(a);
        }
        let theirs = t.join().unwrap();
        let mut got: Vec<u32> = [theirs, b].into_iter().flatten().collect();
        while let Some(v) = stack.pop() {
            got.push(v);
        }
        got.sort();
        // Each item leaves the stack exactly once in the end.
        assert_eq!(got, vec![0, 1]);
    });
}

#[test]
fn loom_two_poppers_never_take_the_same_item() {
    loom::model(|| {
        let stack = Arc::new(ReadyStack::new(2));
        stack.push(0);
        stack.push(1);
        let s = Arc::clone(&stack);
        let t = thread::spawn(move || s.pop());
        let mine = stack.pop();
        let theirs = t.join().unwrap();
        assert!(mine.is_some() && theirs.is_some());
        assert_ne!(mine, theirs);
        assert_eq!(stack.pop(), None);
    });
}

/// Every thread takes until nothing is left; returns what each took.
fn drain_in_threads(shares: Arc<Shares>, threads: usize) -> Vec<Vec<u32>> {
    let others: Vec<_> = (1..threads)
        .map(|w| {
            let s = Arc::clone(&shares);
            thread::spawn(move || std::iter::from_fn(|| s.take(w)).collect::<Vec<u32>>())
        })
        .collect();
    let mut all = vec![std::iter::from_fn(|| shares.take(0)).collect::<Vec<u32>>()];
    all.extend(others.into_iter().map(|t| t.join().unwrap()));
    all
}

#[test]
fn loom_an_owner_and_a_thief_never_claim_the_same_item_and_miss_none() {
    // Two threads, three items: thread 0 owns 0, thread 1 owns 1..3; whoever
    // is done first takes from the other's back while the other takes from
    // its front.
    loom::model(|| {
        let shares = Arc::new(Shares::new(2));
        shares.reset(3);
        let took = drain_in_threads(shares, 2);
        let mut all: Vec<u32> = took.concat();
        all.sort();
        assert_eq!(all, vec![0, 1, 2]);
        // Each thread starts at its own share's front (a thief takes from the
        // back): if the other left it anything, thread 0 began at 0, thread 1 at 1.
        for (w, t) in took.iter().enumerate() {
            assert!(t.first().map_or(true, |&i| i == w as u32), "thread {w} took {t:?}");
        }
    });
}

#[test]
fn loom_three_threads_racing_for_one_share_claim_each_item_once() {
    // Two items for three threads: thread 0's share is empty, so it takes
    // from the back of the others' while they take from their fronts.
    loom::model(|| {
        let shares = Arc::new(Shares::new(3));
        shares.reset(2);
        let mut all: Vec<u32> = drain_in_threads(shares, 3).concat();
        all.sort();
        assert_eq!(all, vec![0, 1]);
    });
}

/// A parallel group in small, as the engine runs one: each item leaves a
/// result in its slot, and applying an item adds its result to one shared
/// "bus", which must end up holding every item once, in item order. An
/// item that finds itself next in order (`committed() == i`) writes the
/// bus itself and leaves nothing to apply, as the engine's items do.
struct Group {
    order: InOrder,
    slots: Vec<UnsafeCell<Option<usize>>>,
    /// Per item: the thread that finished it.
    by: Vec<UnsafeCell<usize>>,
    bus: UnsafeCell<Vec<usize>>,
    /// Set while `apply` runs, to catch two threads in it at once (loom's
    /// cells would also report the bus touched without happens-before).
    applying: AtomicBool,
}

impl Group {
    fn new(items: usize) -> Arc<Group> {
        let mut order = InOrder::new(items);
        order.reset(items);
        Arc::new(Group {
            order,
            slots: (0..items).map(|_| UnsafeCell::new(None)).collect(),
            by: (0..items).map(|_| UnsafeCell::new(usize::MAX)).collect(),
            bus: UnsafeCell::new(Vec::with_capacity(items)),
            applying: AtomicBool::new(false),
        })
    }

    /// Thread `worker` finishes item `i`.
    fn finish(&self, i: usize, worker: usize) {
        let next = self.order.committed() == i;
        if next {
            // SAFETY: no one applies an item past `i` until `i` is done,
            // and what was applied before is visible (Acquire).
            self.bus.with_mut(|b| unsafe { (*b).push(i) });
        }
        // SAFETY: item `i`'s slot is its own until it is done.
        self.slots[i].with_mut(|s| unsafe { *s = (!next).then_some(i) });
        // SAFETY: as the slot.
        self.by[i].with_mut(|b| unsafe { *b = worker });
        self.order.finish(i, worker, |n| self.apply(n, worker, true));
    }

    /// Thread `worker` leaves, having finished its items.
    fn leave(&self, worker: usize) {
        self.order.commit(None, |n| self.apply(n, worker, false));
    }

    /// Thread `worker` applies item `n`: while items run (`mine`), only
    /// one it finished itself.
    fn apply(&self, n: usize, worker: usize, mine: bool) {
        assert!(!self.applying.swap(true, Ordering::Relaxed), "apply({n}) while another thread applies");
        // SAFETY: item `n` is done, its finisher seen (Acquire).
        let by = self.by[n].with(|b| unsafe { *b });
        assert!(!mine || by == worker, "item {n} of thread {by} applied by thread {worker} while items ran");
        // SAFETY: item `n` is done; only the applying thread reads its slot.
        if let Some(v) = self.slots[n].with(|s| unsafe { *s }) {
            // SAFETY: only the applying thread writes the bus now.
            self.bus.with_mut(|b| unsafe { (*b).push(v) });
        }
        self.applying.store(false, Ordering::Relaxed);
    }

    /// After every item finished and every thread left and is joined:
    /// nothing left to apply, everything applied once, in order.
    fn check(&self, items: usize) {
        assert_eq!(self.order.committed(), items, "finished items left unapplied");
        // SAFETY: every thread is joined.
        let bus = self.bus.with(|b| unsafe { (*b).clone() });
        assert_eq!(bus, (0..items).collect::<Vec<_>>());
    }
}

#[test]
fn loom_two_threads_finishing_two_items_apply_both_once_in_order() {
    loom::model(|| {
        let group = Group::new(2);
        let g = Arc::clone(&group);
        let t = thread::spawn(move || {
            g.finish(1, 1);
            g.leave(1);
        });
        group.finish(0, 0);
        group.leave(0);
        t.join().unwrap();
        group.check(2);
    });
}

#[test]
fn loom_an_item_finished_while_another_thread_applies_is_not_left_behind() {
    // One thread finishes items 2 and then 0, the other item 1: whichever
    // order they end in, the last to end may find the flag held.
    loom::model(|| {
        let group = Group::new(3);
        let g = Arc::clone(&group);
        let t = thread::spawn(move || {
            g.finish(2, 1);
            g.finish(0, 1);
            g.leave(1);
        });
        group.finish(1, 0);
        group.leave(0);
        t.join().unwrap();
        group.check(3);
    });
}

#[test]
fn loom_three_threads_finishing_three_items_apply_each_once_in_order() {
    let mut model = loom::model::Builder::new();
    // Three threads: bound the preemptions so the model ends in seconds.
    model.preemption_bound = Some(3);
    model.check(|| {
        let group = Group::new(3);
        let others: Vec<_> = [2, 0]
            .into_iter()
            .enumerate()
            .map(|(k, i)| {
                let g = Arc::clone(&group);
                thread::spawn(move || {
                    g.finish(i, k + 1);
                    g.leave(k + 1);
                })
            })
            .collect();
        group.finish(1, 0);
        group.leave(0);
        for t in others {
            t.join().unwrap();
        }
        group.check(3);
    });
}

#[test]
fn loom_items_a_thread_left_to_their_own_threads_are_applied_once_all_leave() {
    // Thread 0 finishes items 0 and 2, thread 1 item 1 and then looks
    // again as an idle thread: while items run each applies only its own,
    // so items 1 and 2 may wait for each other's thread; leaving applies them.
    loom::model(|| {
        let group = Group::new(3);
        let g = Arc::clone(&group);
        let t = thread::spawn(move || {
            g.finish(1, 1);
            g.order.commit(Some(1), |n| g.apply(n, 1, true));
            g.leave(1);
        });
        group.finish(0, 0);
        group.finish(2, 0);
        group.leave(0);
        t.join().unwrap();
        group.check(3);
    });
}
