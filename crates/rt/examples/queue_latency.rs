//! Compares the lock-free queues with the try-lock ("non-blocking mutex")
//! queue on the paths the audio thread cares about.
//!
//! ```text
//! cargo run -p magnetar-rt --release --example queue_latency -- [seconds_per_row]
//! ```
//!
//! 1. Push→pop latency: one producer pushes a timestamp every ~20 µs; the
//!    consumer (pinned, SCHED_FIFO when allowed) busy-polls and records
//!    `now - timestamp` per item.
//! 2. and 3. Contention: the consumer (the "audio thread", pinned to CPU 0,
//!    SCHED_FIFO when allowed) drains up to 64 items once per 64-sample
//!    block at 48 kHz while two producers push, paced or flooding. Reported
//!    per consumer call: its cost, and for the try-lock queue how often
//!    `try_lock` failed and the longest run of consecutive failures (in
//!    blocks).

use magnetar_rt::histogram::Histogram;
use magnetar_rt::{mpsc, spsc, thread, trylock_queue};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The consumer's side of each queue kind: drain up to `max` items into
/// `out` without blocking; `Err` means try_lock failed.
trait Drain: Send {
    fn drain(&mut self, out: &mut Vec<u64>, max: usize) -> Result<usize, ()>;
    fn stats(&self) -> Option<trylock_queue::TryLockStats> {
        None
    }
}

/// Moves up to `max` items from a lock-free queue's `pop` into `out`.
fn drain_popping(mut pop: impl FnMut() -> Option<u64>, out: &mut Vec<u64>, max: usize) -> usize {
    let before = out.len();
    while out.len() - before < max {
        let Some(v) = pop() else { break };
        out.push(v);
    }
    out.len() - before
}

impl Drain for spsc::Consumer<u64> {
    fn drain(&mut self, out: &mut Vec<u64>, max: usize) -> Result<usize, ()> {
        Ok(drain_popping(|| self.pop(), out, max))
    }
}

impl Drain for mpsc::Receiver<u64> {
    fn drain(&mut self, out: &mut Vec<u64>, max: usize) -> Result<usize, ()> {
        Ok(drain_popping(|| self.pop(), out, max))
    }
}

impl Drain for trylock_queue::TryReceiver<u64> {
    fn drain(&mut self, out: &mut Vec<u64>, _max: usize) -> Result<usize, ()> {
        self.try_drain_into(out).map_err(|_| ())
    }
    fn stats(&self) -> Option<trylock_queue::TryLockStats> {
        Some(TryReceiver::stats(self))
    }
}

use trylock_queue::TryReceiver;

/// A producer closure: pushes one value, returns false if refused.
type Push = Box<dyn FnMut(u64) -> bool + Send>;

fn spin_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Row 1: latency of single items through an otherwise idle queue.
fn latency(mut push: Push, mut rx: Box<dyn Drain>, secs: f64) -> Histogram {
    let base = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let producer = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let _ = thread::pin_to_cpu(1 % thread::available_cpus());
            while !stop.load(Ordering::Relaxed) {
                let _ = push(base.elapsed().as_nanos() as u64);
                spin_for(Duration::from_micros(20));
            }
        })
    };
    let consumer = std::thread::spawn(move || {
        // SCHED_FIFO so that the measurement is the queue's, not the time
        // slices of whatever else runs on a shared machine.
        let _ = thread::pin_to_cpu(0);
        let _ = thread::set_fifo_priority(50);
        let mut h = Histogram::new();
        let mut batch = Vec::with_capacity(64);
        let end = Instant::now() + Duration::from_secs_f64(secs);
        while Instant::now() < end {
            batch.clear();
            if let Ok(n) = rx.drain(&mut batch, 64) {
                if n > 0 {
                    let now = base.elapsed().as_nanos() as u64;
                    for &t in &batch {
                        h.record(now.saturating_sub(t));
                    }
                }
            }
        }
        h
    });
    let h = consumer.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    h
}

/// Rows 2 and 3: cost of each consumer call, made once per 64-sample block
/// at 48 kHz, while producers push (every `gap`, or as fast as they can).
fn contention(
    pushes: Vec<Push>,
    mut rx: Box<dyn Drain>,
    secs: f64,
    gap: Option<Duration>,
) -> (Histogram, u64, Box<dyn Drain>) {
    let stop = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = pushes
        .into_iter()
        .map(|mut push| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let accepted = push(i);
                    i += 1;
                    match gap {
                        Some(g) => spin_for(g),
                        None if !accepted => std::hint::spin_loop(),
                        None => {}
                    }
                }
            })
        })
        .collect();
    let consumer = std::thread::spawn(move || {
        let _ = thread::pin_to_cpu(0);
        let _ = thread::set_fifo_priority(50);
        let block = Duration::from_nanos(1_333_333);
        let mut cost = Histogram::new();
        let mut items = 0;
        let mut batch = Vec::with_capacity(64);
        let start = Instant::now();
        let mut next = start;
        while next < start + Duration::from_secs_f64(secs) {
            next += block;
            if let Some(d) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(d);
            }
            batch.clear();
            let t0 = Instant::now();
            let r = rx.drain(&mut batch, 64);
            cost.record_duration(t0.elapsed());
            items += r.unwrap_or(0) as u64;
        }
        (cost, items, rx)
    });
    let result = consumer.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    for p in producers {
        p.join().unwrap();
    }
    result
}

fn row(name: &str, h: &Histogram, extra: &str) {
    let us = |ns: u64| ns as f64 / 1000.0;
    println!(
        "{:<22} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}  {}",
        name,
        h.mean() / 1000.0,
        us(h.p50()),
        us(h.p99()),
        us(h.p999()),
        us(h.max()),
        extra
    );
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2.0);
    const CAP: usize = 4096;
    let header = || {
        println!(
            "{:<22} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "", "mean µs", "p50 µs", "p99 µs", "p99.9 µs", "max µs"
        );
    };

    println!("1. push→pop latency, one producer (item every ~20 µs), busy-polling consumer, {secs} s each");
    header();
    {
        let (mut tx, rx) = spsc::channel::<u64>(CAP);
        let h = latency(Box::new(move |v| tx.push(v).is_ok()), Box::new(rx), secs);
        row("spsc", &h, "");
    }
    {
        let (tx, rx) = mpsc::channel::<u64>(CAP);
        let h = latency(Box::new(move |v| tx.push(v).is_ok()), Box::new(rx), secs);
        row("mpsc", &h, "");
    }
    {
        let (tx, rx) = trylock_queue::to_realtime::<u64>(CAP);
        let h = latency(Box::new(move |v| tx.push(v).is_ok()), Box::new(rx), secs);
        row("try-lock", &h, "");
    }

    for (title, gap) in [
        ("2. consumer call cost, once per 1.33 ms block (drain ≤ 64), 2 producers each pushing every ~100 µs", Some(Duration::from_micros(100))),
        ("3. the same with 2 producers flooding (queue full, lock hammered)", None),
    ] {
        println!();
        println!("{title}, {secs} s each");
        header();
        {
            // spsc has one producer by construction.
            let (mut tx, rx) = spsc::channel::<u64>(CAP);
            let (h, items, _) =
                contention(vec![Box::new(move |v| tx.push(v).is_ok())], Box::new(rx), secs, gap);
            row("spsc (1 producer)", &h, &format!("items={items}"));
        }
        {
            let (tx, rx) = mpsc::channel::<u64>(CAP);
            let tx2 = tx.clone();
            let (h, items, _) = contention(
                vec![Box::new(move |v| tx.push(v).is_ok()), Box::new(move |v| tx2.push(v).is_ok())],
                Box::new(rx),
                secs,
                gap,
            );
            row("mpsc", &h, &format!("items={items}"));
        }
        {
            let (tx, rx) = trylock_queue::to_realtime::<u64>(CAP);
            let tx2 = tx.clone();
            let (h, items, rx) = contention(
                vec![Box::new(move |v| tx.push(v).is_ok()), Box::new(move |v| tx2.push(v).is_ok())],
                Box::new(rx),
                secs,
                gap,
            );
            let s = rx.stats().unwrap_or_default();
            row(
                "try-lock",
                &h,
                &format!(
                    "items={items} try_lock failed {}/{} ({:.2} %), longest failure run {}",
                    s.failures,
                    s.attempts,
                    100.0 * s.failure_rate(),
                    s.longest_failure_run
                ),
            );
        }
    }
}
