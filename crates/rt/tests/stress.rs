//! Multi-threaded stress tests: millions of items through each queue, with
//! order, loss and duplication checked. Each runs in a few seconds on two
//! shared cores.
#![cfg(not(loom))]

use magnetar_rt::ilock::InterruptibleLock;
use magnetar_rt::{event, mpsc, spsc, trylock_queue};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Backs off so that a spinning test thread does not starve its peer on a
/// machine with fewer free cores than test threads.
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[test]
fn spsc_moves_two_million_items_in_order() {
    const N: u64 = 2_000_000;
    let (mut tx, mut rx) = spsc::channel::<u64>(1024);
    let producer = std::thread::spawn(move || {
        for i in 0..N {
            let mut v = i;
            let mut spins = 0;
            while let Err(back) = tx.push(v) {
                v = back;
                backoff(&mut spins);
            }
        }
    });
    let mut expected = 0;
    let mut spins = 0;
    while expected < N {
        match rx.pop() {
            Some(v) => {
                assert_eq!(v, expected);
                expected += 1;
                spins = 0;
            }
            None => backoff(&mut spins),
        }
    }
    producer.join().unwrap();
    assert_eq!(rx.pop(), None);
}

#[test]
fn mpsc_from_three_producers_loses_and_duplicates_nothing() {
    const PRODUCERS: usize = 3;
    const PER: u64 = 700_000;
    let (tx, mut rx) = mpsc::channel::<(usize, u64)>(512);
    let handles: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..PER {
                    let mut spins = 0;
                    while tx.push((p, i)).is_err() {
                        backoff(&mut spins);
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let mut next = [0u64; PRODUCERS];
    let mut received = 0;
    let mut spins = 0;
    while received < PRODUCERS as u64 * PER {
        match rx.pop() {
            Some((p, i)) => {
                assert_eq!(
                    i, next[p],
                    "producer {p}: item out of order, lost or doubled"
                );
                next[p] += 1;
                received += 1;
                spins = 0;
            }
            None => backoff(&mut spins),
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(rx.pop(), None);
    assert!(next.iter().all(|&n| n == PER));
}

#[test]
fn mpsc_drops_every_item_once_when_torn_down_mid_stream() {
    let live = Arc::new(AtomicUsize::new(0));
    struct Tracked(Arc<AtomicUsize>);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::Relaxed);
        }
    }
    {
        let (tx, mut rx) = mpsc::channel::<Tracked>(64);
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let tx = tx.clone();
                let live = Arc::clone(&live);
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        live.fetch_add(1, Ordering::Relaxed);
                        if let Err(refused) = tx.push(Tracked(Arc::clone(&live))) {
                            drop(refused);
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        for _ in 0..10_000 {
            drop(rx.pop());
        }
        for h in handles {
            h.join().unwrap();
        }
    }
    assert_eq!(live.load(Ordering::Relaxed), 0);
}

#[test]
fn trylock_queue_delivers_everything_despite_contention() {
    const PRODUCERS: usize = 2;
    const PER: u64 = 200_000;
    let (tx, mut rx) = trylock_queue::to_realtime::<(usize, u64)>(4096);
    let handles: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..PER {
                    while tx.push((p, i)).is_err() {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let mut batch = Vec::with_capacity(256);
    let mut next = [0u64; PRODUCERS];
    let mut received = 0;
    while received < PRODUCERS as u64 * PER {
        batch.clear();
        if rx.try_drain_into(&mut batch).unwrap_or(0) == 0 {
            std::thread::yield_now();
        }
        for &(p, i) in &batch {
            assert_eq!(i, next[p]);
            next[p] += 1;
            received += 1;
        }
        assert_eq!(batch.capacity(), 256, "the real-time batch must never grow");
    }
    for h in handles {
        h.join().unwrap();
    }
    let stats = rx.stats();
    assert!(stats.attempts > 0 && stats.failures <= stats.attempts);
}

#[test]
fn event_ping_pong_survives_ten_thousand_rounds_with_spinning_and_sleeping() {
    const ROUNDS: u32 = 10_000;
    let (to_b, mut b_waits) = event::binary_event();
    let (to_a, mut a_waits) = event::binary_event();
    let b = std::thread::spawn(move || {
        for i in 0..ROUNDS {
            if i % 2 == 0 {
                b_waits.wait();
            } else {
                b_waits.wait_spin(200);
            }
            to_a.signal();
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    for _ in 0..ROUNDS {
        to_b.signal();
        assert!(
            a_waits.wait_timeout(Duration::from_secs(10)),
            "lost wake-up"
        );
        assert!(Instant::now() < deadline);
    }
    b.join().unwrap();
}

#[test]
fn a_storm_of_signals_never_releases_more_waits_than_were_signalled() {
    // Signallers count what they sent; the waiter counts what it consumed.
    // Coalescing may merge signals, but can never invent one.
    let sent = Arc::new(AtomicUsize::new(0));
    let (signal, mut waiter) = event::binary_event();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let signallers: Vec<_> = (0..2)
        .map(|_| {
            let (signal, sent, stop) = (signal.clone(), Arc::clone(&sent), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    sent.fetch_add(1, Ordering::SeqCst);
                    signal.signal();
                    std::thread::yield_now();
                }
            })
        })
        .collect();
    let mut consumed = 0usize;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        if waiter.wait_timeout(Duration::from_millis(50)) {
            consumed += 1;
            assert!(consumed <= sent.load(Ordering::SeqCst));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for s in signallers {
        s.join().unwrap();
    }
    assert!(consumed > 0);
    drop(signal);
}

/// The words a step zeroes in one go in the collector's free thread; a step
/// always writes them all to one value, so a snapshot that overlapped a step
/// would see them disagree.
const GUARDED_WORDS: usize = 64;

struct Guarded {
    lock: InterruptibleLock,
    words: std::cell::UnsafeCell<[u64; GUARDED_WORDS]>,
    /// Holders inside the lock right now (checked, not relied on).
    inside: AtomicUsize,
}

// SAFETY: `words` is only accessed while holding `lock`; the test checks
// that the lock indeed admits one holder at a time.
unsafe impl Sync for Guarded {}

impl Guarded {
    fn enter(&self) {
        assert_eq!(
            self.inside.fetch_add(1, Ordering::SeqCst),
            0,
            "two holders at once"
        );
    }

    fn leave(&self) {
        self.inside.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn ilock_steps_and_snapshots_exclude_each_other_and_both_progress() {
    const SNAPSHOTS: u64 = 1_000_000;
    // Steps the snapshots must have seen complete, so both sides moved on together.
    const MIN_STEPS: u64 = 1_000_000;
    // As the collector's audio side: a few hundred tries, then skip this round.
    const SPINS: u32 = 256;
    let g = Arc::new(Guarded {
        lock: InterruptibleLock::new(),
        words: std::cell::UnsafeCell::new([0; GUARDED_WORDS]),
        inside: AtomicUsize::new(0),
    });
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stepper = {
        let (g, stop) = (Arc::clone(&g), Arc::clone(&stop));
        std::thread::spawn(move || {
            let (mut steps, mut refused) = (0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                let Some(held) = g.lock.try_step() else {
                    // The background side may wait: let the snapshot finish.
                    refused += 1;
                    std::thread::yield_now();
                    continue;
                };
                steps += 1;
                g.enter();
                // SAFETY: the step holds the lock.
                let words = unsafe { &mut *g.words.get() };
                for w in words.iter_mut() {
                    *w = steps;
                }
                g.leave();
                drop(held);
            }
            (steps, refused)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut taken, mut skipped, mut last) = (0u64, 0u64, 0u64);
    while taken < SNAPSHOTS || last < MIN_STEPS {
        if stepper.is_finished() {
            break; // it panicked: the join below reports why
        }
        assert!(
            Instant::now() < deadline,
            "no progress: {taken} snapshots, {skipped} skipped, steps seen {last}"
        );
        let Some(held) = g.lock.try_lock_snapshot(SPINS) else {
            skipped += 1;
            continue;
        };
        g.enter();
        // SAFETY: the snapshot holds the lock.
        let words = unsafe { *g.words.get() };
        g.leave();
        drop(held);
        assert!(
            words.iter().all(|&w| w == words[0]),
            "a snapshot overlapped a step: {words:?}"
        );
        assert!(
            words[0] >= last,
            "a snapshot saw an older step than the one before"
        );
        last = words[0];
        taken += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let (steps, refused) = stepper.join().unwrap();
    assert_eq!(
        // SAFETY: the stepper has been joined; nobody else holds the lock.
        unsafe { *g.words.get() },
        [steps; GUARDED_WORDS],
        "a step's writes were lost"
    );
    assert!(g.lock.try_lock_snapshot(0).is_some(), "left locked");
    eprintln!("ilock: {taken} snapshots ({skipped} gave up), {steps} steps ({refused} refused)");
}

/// Many tasks in three classes, released every period by a fast "audio"
/// loop that never waits: each result that arrives in time is the exact
/// function of its release's input, releases run in order, and a slot is
/// never written while its thread works on it (the result would be torn).
#[test]
fn periodic_tasks_deliver_exact_results_or_count_a_miss() {
    use magnetar_rt::periodic::{PeriodicWork, TaskTable};
    struct Sum {
        last: usize,
    }
    impl PeriodicWork for Sum {
        type Io = (Vec<u64>, u64);
        fn run(&mut self, io: &mut (Vec<u64>, u64), seq: usize) {
            assert!(seq > self.last);
            self.last = seq;
            io.1 = io.0.iter().sum::<u64>() + seq as u64;
        }
    }
    let (table, waiters) = TaskTable::new(3, 8, false);
    let threads: Vec<_> = waiters
        .into_iter()
        .enumerate()
        .map(|(c, w)| {
            let t = std::sync::Arc::clone(&table);
            std::thread::spawn(move || t.run_class(c, w))
        })
        .collect();
    let mut tasks: Vec<_> = (0..12)
        .map(|i| {
            let period = 2 << (i % 3);
            let io = || (vec![0u64; 256], 0u64);
            (period, TaskTable::register(&table, period, Sum { last: 0 }, [io(), io()]).unwrap())
        })
        .collect();
    let (mut checked, mut missed) = (0usize, 0usize);
    // 20,000 blocks, and more while too few results came in time: on a
    // loaded machine the task threads may get little CPU beside this loop,
    // which never waits (a minute at most).
    let started = std::time::Instant::now();
    let mut block = 0usize;
    while block < 20_000 || (checked <= 1000 && started.elapsed() < std::time::Duration::from_secs(60)) {
        block += 1;
        for (period, task) in tasks.iter_mut() {
            if block % *period != 0 {
                continue;
            }
            let seq = block / *period;
            if seq > 1 {
                if task.is_done(seq - 1) {
                    let (ins, out) = task.io(seq - 1).expect("a done release keeps its slot");
                    assert_eq!(*out, ins.iter().sum::<u64>() + (seq - 1) as u64);
                    checked += 1;
                } else {
                    missed += 1;
                }
            }
            if let Some(io) = task.io_mut(seq) {
                io.0.iter_mut().enumerate().for_each(|(k, v)| *v = (seq * 7 + k) as u64);
                task.release(seq);
            }
        }
        if block % 64 == 0 {
            std::thread::yield_now();
        }
    }
    assert!(checked > 1000, "only {checked} results checked ({missed} late)");
    drop(tasks);
    table.shut_down();
    for t in threads {
        t.join().unwrap();
    }
}
