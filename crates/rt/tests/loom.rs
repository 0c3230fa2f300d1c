//! Model checks of the lock-free structures under every interleaving loom
//! explores. Run with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p magnetar-rt --release loom
//! ```
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use magnetar_rt::ilock::InterruptibleLock;
use magnetar_rt::{event, mpsc, spsc};

fn push_retrying<T>(tx: &mut spsc::Producer<T>, mut v: T) {
    while let Err(back) = tx.push(v) {
        v = back;
        thread::yield_now();
    }
}

#[test]
fn loom_spsc_delivers_every_item_in_order_across_a_full_buffer() {
    loom::model(|| {
        let (mut tx, mut rx) = spsc::channel::<u32>(2);
        let producer = thread::spawn(move || {
            for i in 0..3 {
                push_retrying(&mut tx, i);
            }
        });
        let mut next = 0;
        while next < 3 {
            match rx.pop() {
                Some(v) => {
                    assert_eq!(v, next);
                    next += 1;
                }
                None => thread::yield_now(),
            }
        }
        producer.join().unwrap();
        assert_eq!(rx.pop(), None);
    });
}

#[test]
fn loom_spsc_drops_items_left_behind_exactly_once() {
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        struct D(Arc<AtomicUsize>);
        impl Drop for D {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let (mut tx, mut rx) = spsc::channel::<D>(2);
        let d = Arc::clone(&drops);
        let producer = thread::spawn(move || {
            let _ = tx.push(D(Arc::clone(&d)));
            let _ = tx.push(D(d));
        });
        let popped = rx.pop();
        producer.join().unwrap();
        drop(popped);
        drop(rx);
        assert_eq!(drops.load(Ordering::Relaxed), 2);
    });
}

// The multi-producer models avoid retry loops: with three threads spinning
// on each other the model does not finish. Full queues and slot reuse under
// contention are covered by pushing into a queue that is already partly full.

#[test]
fn loom_mpsc_concurrent_producers_keep_order_and_lose_nothing() {
    loom::model(|| {
        let (tx, mut rx) = mpsc::channel::<u8>(4);
        // Producer 0 sends items 0 and 1 (in that order), producer 1 sends 2.
        let producers: Vec<_> = [vec![0u8, 1], vec![2]]
            .into_iter()
            .map(|items| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for item in items {
                        assert!(tx.push(item).is_ok(), "room for every item");
                    }
                })
            })
            .collect();
        drop(tx);
        let mut got = Vec::new();
        got.extend(rx.pop()); // concurrently with the producers
        for p in producers {
            p.join().unwrap();
        }
        while let Some(v) = rx.pop() {
            got.push(v);
        }
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2], "lost or duplicated: {got:?}");
        let first = got.iter().position(|&v| v == 0).unwrap();
        let second = got.iter().position(|&v| v == 1).unwrap();
        assert!(first < second, "producer 0 out of order: {got:?}");
    });
}

#[test]
fn loom_mpsc_full_queue_refuses_without_losing_accepted_items() {
    loom::model(|| {
        let (tx, mut rx) = mpsc::channel::<u8>(2);
        tx.push(10).unwrap(); // one of the two slots taken before the race
        let producers: Vec<_> = (0..2u8)
            .map(|p| {
                let tx = tx.clone();
                thread::spawn(move || tx.push(p).is_ok())
            })
            .collect();
        drop(tx);
        let early = rx.pop(); // may free slot 0 for a push one lap later
        let accepted: Vec<u8> = producers
            .into_iter()
            .enumerate()
            .filter_map(|(p, h)| h.join().unwrap().then_some(p as u8))
            .collect();
        assert!(!accepted.is_empty(), "a free slot was refused");
        let mut got: Vec<u8> = early.into_iter().collect();
        while let Some(v) = rx.pop() {
            got.push(v);
        }
        assert_eq!(got[0], 10, "the first item must come out first");
        let mut rest = got[1..].to_vec();
        rest.sort();
        assert_eq!(
            rest, accepted,
            "accepted items must be delivered exactly once"
        );
    });
}

#[test]
fn loom_mpsc_one_producer_keeps_order_through_a_full_queue() {
    loom::model(|| {
        let (tx, mut rx) = mpsc::channel::<u8>(2);
        let producer = thread::spawn(move || {
            for i in 0..3 {
                while tx.push(i).is_err() {
                    thread::yield_now();
                }
            }
        });
        let mut next = 0;
        while next < 3 {
            match rx.pop() {
                Some(v) => {
                    assert_eq!(v, next);
                    next += 1;
                }
                None => thread::yield_now(),
            }
        }
        producer.join().unwrap();
    });
}

#[test]
fn loom_event_wakes_the_waiter_and_publishes_prior_writes() {
    loom::model(|| {
        let data = Arc::new(AtomicUsize::new(0));
        let (signal, mut waiter) = event::binary_event();
        let d = Arc::clone(&data);
        let t = thread::spawn(move || {
            waiter.wait();
            // Relaxed on purpose: visibility must come from the event.
            assert_eq!(d.load(Ordering::Relaxed), 42);
        });
        data.store(42, Ordering::Relaxed);
        signal.signal();
        t.join().unwrap();
    });
}

#[test]
fn loom_event_ping_pong_never_loses_a_wakeup() {
    loom::model(|| {
        let (to_b, mut b_waits) = event::binary_event();
        let (to_a, mut a_waits) = event::binary_event();
        let b = thread::spawn(move || {
            for _ in 0..2 {
                b_waits.wait();
                to_a.signal();
            }
        });
        for _ in 0..2 {
            to_b.signal();
            a_waits.wait();
        }
        b.join().unwrap();
    });
}

#[test]
fn loom_event_signals_from_two_threads_release_at_least_one_wait() {
    loom::model(|| {
        let (signal, mut waiter) = event::binary_event();
        let s2 = signal.clone();
        let t1 = thread::spawn(move || signal.signal());
        let t2 = thread::spawn(move || s2.signal());
        waiter.wait();
        t1.join().unwrap();
        t2.join().unwrap();
        // The second signal either coalesced with the first or is pending.
        let _ = waiter.try_wait();
        assert!(!waiter.try_wait());
    });
}

#[test]
fn loom_event_a_timed_out_wait_never_swallows_a_racing_signal() {
    loom::model(|| {
        let (signal, mut waiter) = event::binary_event();
        let t = thread::spawn(move || signal.signal());
        let consumed = waiter.wait_timeout(std::time::Duration::from_millis(1));
        t.join().unwrap();
        let still_pending = waiter.try_wait();
        assert!(
            consumed != still_pending,
            "the signal must be seen exactly once"
        );
    });
}

/// Data guarded by an interruptible lock. loom's cell records every access,
/// so a step and a snapshot touching it without the lock ordering them fails
/// the model.
struct Guarded {
    lock: InterruptibleLock,
    value: loom::cell::UnsafeCell<u32>,
}

// SAFETY: `value` is only accessed while holding `lock`, which lets one
// holder in at a time; the tests check exactly that claim.
unsafe impl Sync for Guarded {}

impl Guarded {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            lock: InterruptibleLock::new(),
            value: loom::cell::UnsafeCell::new(0),
        })
    }

    /// The background side's way in: retry until the snapshot is over.
    fn step(&self, f: impl FnOnce(&mut u32)) {
        let held = loop {
            if let Some(held) = self.lock.try_step() {
                break held;
            }
            thread::yield_now();
        };
        // SAFETY: the step holds the lock.
        self.value.with_mut(|p| f(unsafe { &mut *p }));
        drop(held);
    }
}

#[test]
fn loom_ilock_a_step_and_a_snapshot_never_overlap() {
    loom::model(|| {
        let g = Guarded::new();
        let g2 = Arc::clone(&g);
        let stepper = thread::spawn(move || {
            for _ in 0..2 {
                g2.step(|v| *v += 1);
            }
        });
        if let Some(held) = g.lock.try_lock_snapshot(1) {
            // SAFETY: the snapshot holds the lock.
            let seen = g.value.with(|p| unsafe { *p });
            assert!(seen <= 2);
            drop(held);
        }
        stepper.join().unwrap();
    });
}

#[test]
fn loom_ilock_a_snapshot_fails_only_while_a_step_holds_the_lock() {
    loom::model(|| {
        let g = Guarded::new();
        let g2 = Arc::clone(&g);
        // One try on each side, no retries: whoever fails must have met the other holding it.
        let stepper = thread::spawn(move || match g2.lock.try_step() {
            Some(held) => {
                // SAFETY: the step holds the lock.
                g2.value.with_mut(|p| unsafe { *p = 7 });
                drop(held);
                true
            }
            None => false,
        });
        let snapshot = g.lock.try_lock_snapshot(0);
        let snapshot_got_it = snapshot.is_some();
        drop(snapshot);
        let step_got_it = stepper.join().unwrap();
        assert!(
            snapshot_got_it || step_got_it,
            "both sides refused with nobody holding the lock"
        );
        // Both holders are gone: the lock is free for either side again.
        let again = g.lock.try_lock_snapshot(0);
        assert!(
            again.is_some(),
            "a snapshot was refused with no step running"
        );
        drop(again);
        assert!(
            g.lock.try_step().is_some(),
            "a step was refused with no snapshot running"
        );
    });
}

#[test]
fn loom_ilock_writes_under_one_holder_are_seen_by_the_next() {
    loom::model(|| {
        let g = Guarded::new();
        let g2 = Arc::clone(&g);
        let stepper = thread::spawn(move || g2.step(|v| *v += 1));
        // The real-time side retries here only so that both increments happen.
        let held = loop {
            if let Some(held) = g.lock.try_lock_snapshot(0) {
                break held;
            }
            thread::yield_now();
        };
        // SAFETY: the snapshot holds the lock.
        g.value.with_mut(|p| unsafe { *p += 10 });
        drop(held);
        stepper.join().unwrap();
        // SAFETY: the stepper has been joined; no other holder is left.
        let total = g.value.with(|p| unsafe { *p });
        assert_eq!(total, 11, "an update made under the lock was lost");
    });
}

mod periodic_model {
    use super::*;
    use magnetar_rt::event::Waiter;
    use magnetar_rt::periodic::{PeriodicWork, TaskHandle, TaskTable};

    /// Adds the release number to its input, and checks the releases come in order.
    struct AddSeq {
        last: usize,
    }

    impl PeriodicWork for AddSeq {
        type Io = (usize, usize);
        fn run(&mut self, io: &mut (usize, usize), seq: usize) {
            assert!(seq > self.last, "release {seq} after {}", self.last);
            self.last = seq;
            io.1 = io.0 * 10 + seq;
        }
    }

    /// A table of one class with one thread, its waiter, and an `AddSeq` task of
    /// period 2 registered in it.
    fn one_task_of_period_two() -> (Arc<TaskTable>, Waiter, TaskHandle<AddSeq>) {
        let (table, mut waiters) = TaskTable::new(1, 1, false);
        let waiter = waiters.remove(0);
        let task = TaskTable::register(&table, 2, AddSeq { last: 0 }, [(0, 0), (0, 0)]).unwrap();
        (table, waiter, task)
    }

    #[test]
    fn loom_periodic_slots_change_hands_without_overlap_and_results_arrive() {
        loom::model(|| {
            let (table, waiter, mut task) = one_task_of_period_two();
            let server = Arc::clone(&table);
            // Releases 1 and 2 go out back to back (both slots in flight);
            // release 3 reuses slot 1 only once the thread gave it back.
            task.io_mut(1).unwrap().0 = 1;
            assert!(task.release(1));
            task.io_mut(2).unwrap().0 = 2;
            assert!(task.release(2));
            let worker = thread::spawn(move || {
                let mut w = waiter;
                let mut ran = 0;
                while ran < 3 {
                    w.wait();
                    ran += server.serve_class(0);
                }
            });
            // The audio side never waits on the thread: it polls, as it
            // would at later blocks.
            let mut first = None;
            while task.io_mut(3).is_none() {
                if first.is_none() && task.is_done(1) {
                    first = task.io(1).map(|io| io.1);
                }
                thread::yield_now();
            }
            // Slot 1 is back: it holds release 1's result, untorn.
            assert_eq!(task.io(1).map(|io| io.1), Some(11));
            assert!(first.is_none() || first == Some(11));
            task.io_mut(3).unwrap().0 = 3;
            assert!(task.release(3));
            worker.join().unwrap();
            assert_eq!(task.io(2).map(|io| io.1), Some(22));
            assert_eq!(task.io(3).map(|io| io.1), Some(33));
        });
    }

    #[test]
    fn loom_periodic_retired_task_is_freed_once_by_its_class_thread() {
        loom::model(|| {
            let (table, waiter, mut task) = one_task_of_period_two();
            let server = Arc::clone(&table);
            task.io_mut(1).unwrap().0 = 1;
            task.release(1);
            let worker = thread::spawn(move || {
                let mut w = waiter;
                w.wait();
                server.serve_class(0);
                // A retire signalled after the first pass is seen by the next.
                while server.serve_class(0) > 0 {}
                if w.try_wait() {
                    server.serve_class(0);
                }
            });
            drop(task);
            worker.join().unwrap();
            // Whatever is left retired, one more pass frees; then the entry
            // takes a new task.
            table.serve_class(0);
            assert!(TaskTable::register(&table, 2, AddSeq { last: 0 }, [(0, 0), (0, 0)]).is_ok());
        });
    }
}
