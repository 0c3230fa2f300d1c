//! The paper-004 comparison: the four [`queue::Kind`]s on the audio thread's
//! side, one JSON line per row (read by `bench/queue_bench.py`).
//!
//! ```text
//! cargo run -p magnetar-rt --release --example queue_compare -- [seconds_per_row]
//! ```
//!
//! The consumer is the "audio thread": pinned to CPU 0, SCHED_FIFO 50 when
//! allowed, woken every 64-sample block at 48 kHz (1333 µs, absolute
//! `clock_nanosleep`); each block it drains at most 256 items. Recorded per
//! block: the drain call's cost; per item: how many blocks later than the
//! first block that could have taken it it was taken (0 unless a try-lock
//! miss or a full drain held it back).
//!
//! - `hammer`: 1, 2 or 4 SCHED_OTHER producers push timestamps, together
//!   60 000 a second (45 a block: far above any real command stream, below
//!   what the consumer drains, so that a delay is the queue's, not a
//!   backlog), retrying when full.
//! - `inversion`: one SCHED_OTHER producer on CPU 1 pushes at the same rate while
//!   a SCHED_FIFO 40 hog on CPU 1 runs 3 ms of every 12 ms, preempting the
//!   producer wherever it is, inside the try-lock queue's lock included; the
//!   consumer (higher priority, other CPU) must not wait.
//! - `to_control`: the other direction (replies, notifications, garbage):
//!   the audio thread sends 32 items a block to one control thread, which
//!   either blocks in std's `recv`, polls an SPSC ring every 1 ms, or
//!   sleeps on a binary event the audio thread signals once per block
//!   (a futex wake only when the control thread sleeps). Recorded: the audio
//!   thread's cost per block (the sends and the signal) and each item's
//!   delivery delay in µs.

use magnetar_rt::histogram::Histogram;
use magnetar_rt::queue::{self, Kind};
use magnetar_rt::thread;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BLOCK_NS: u64 = 1_333_333;
const MAX_PER_BLOCK: usize = 256;
const CAPACITY: usize = 4096;
/// Items a second, all producers together, in the `hammer` rows.
const RATE: u64 = 60_000;

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(ns: u64) {
    let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
    // SAFETY: clock_nanosleep reads the timespec; a null remainder is allowed with TIMER_ABSTIME.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

fn spin_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

struct Row {
    cost: Histogram,
    delay: Histogram,
    items: u64,
    blocks: u64,
    misses: u64,
    longest_miss_run: u64,
    full: u64,
    fifo: bool,
}

fn run(kind: Kind, producers: usize, secs: f64, inversion: bool) -> Row {
    let (senders, mut rx) = queue::make::<u64>(kind, producers, CAPACITY);
    let stop = Arc::new(AtomicBool::new(false));
    let full = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for mut tx in senders {
        let stop = Arc::clone(&stop);
        let full = Arc::clone(&full);
        threads.push(std::thread::spawn(move || {
            if inversion {
                let _ = thread::pin_to_cpu(1 % thread::available_cpus());
            }
            while !stop.load(Ordering::Relaxed) {
                let mut v = now_ns();
                while let Err(back) = tx.push(v) {
                    full.fetch_add(1, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    spin_for(Duration::from_micros(5));
                    v = back;
                }
                spin_for(Duration::from_nanos(producers as u64 * 1_000_000_000 / RATE));
            }
        }));
    }
    if inversion {
        let stop = Arc::clone(&stop);
        threads.push(std::thread::spawn(move || {
            let _ = thread::pin_to_cpu(1 % thread::available_cpus());
            let _ = thread::set_fifo_priority(40);
            while !stop.load(Ordering::Relaxed) {
                spin_for(Duration::from_millis(3));
                std::thread::sleep(Duration::from_millis(9));
            }
        }));
    }
    let consumer = std::thread::spawn(move || {
        let _ = thread::pin_to_cpu(0);
        let fifo = thread::set_fifo_priority(50).is_ok();
        let mut row = Row {
            cost: Histogram::new(),
            delay: Histogram::new(),
            items: 0,
            blocks: 0,
            misses: 0,
            longest_miss_run: 0,
            full: 0,
            fifo,
        };
        let start = now_ns() + BLOCK_NS;
        let blocks = (secs * 1e9 / BLOCK_NS as f64) as u64;
        let mut run = 0;
        for k in 0..blocks {
            let block_start = start + k * BLOCK_NS;
            sleep_until(block_start);
            let t0 = now_ns();
            let mut items = 0u64;
            let delay = &mut row.delay;
            let result = rx.drain(MAX_PER_BLOCK, &mut |stamp: u64| {
                // The first block that starts at or after the push.
                let first = stamp.saturating_sub(start).div_ceil(BLOCK_NS);
                delay.record(k.saturating_sub(first));
                items += 1;
            });
            row.cost.record(now_ns() - t0);
            row.items += items;
            row.blocks += 1;
            if result.is_err() {
                row.misses += 1;
                run += 1;
                row.longest_miss_run = row.longest_miss_run.max(run);
            } else {
                run = 0;
            }
        }
        row
    });
    let mut row = consumer.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    row.full = full.load(Ordering::Relaxed);
    row
}

#[derive(Clone, Copy, PartialEq)]
enum Back {
    Std,
    Poll,
    Event,
}

fn to_control(back: Back, secs: f64) -> (Histogram, Histogram) {
    use magnetar_rt::{event, spsc};
    const PER_BLOCK: usize = 32;
    let stop = Arc::new(AtomicBool::new(false));
    let (std_tx, std_rx) = std::sync::mpsc::sync_channel::<u64>(CAPACITY);
    let (mut ring_tx, mut ring_rx) = spsc::channel::<u64>(CAPACITY);
    let (signal, mut waiter) = event::binary_event();
    let control = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut delay = Histogram::new();
            loop {
                match back {
                    Back::Std => match std_rx.recv_timeout(Duration::from_millis(50)) {
                        Ok(stamp) => delay.record((now_ns() - stamp) / 1000),
                        Err(_) => {
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                        }
                    },
                    Back::Poll | Back::Event => {
                        if back == Back::Poll {
                            std::thread::sleep(Duration::from_millis(1));
                        } else {
                            waiter.wait_timeout(Duration::from_millis(50));
                        }
                        while let Some(stamp) = ring_rx.pop() {
                            delay.record((now_ns() - stamp) / 1000);
                        }
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                }
            }
            delay
        })
    };
    let audio = std::thread::spawn(move || {
        let _ = thread::pin_to_cpu(0);
        let _ = thread::set_fifo_priority(50);
        let mut cost = Histogram::new();
        let start = now_ns() + BLOCK_NS;
        let blocks = (secs * 1e9 / BLOCK_NS as f64) as u64;
        for k in 0..blocks {
            sleep_until(start + k * BLOCK_NS);
            let t0 = now_ns();
            for _ in 0..PER_BLOCK {
                let stamp = now_ns();
                let _ = match back {
                    Back::Std => std_tx.try_send(stamp).is_ok(),
                    Back::Poll | Back::Event => ring_tx.push(stamp).is_ok(),
                };
            }
            if back == Back::Event {
                signal.signal();
            }
            cost.record(now_ns() - t0);
        }
        cost
    });
    let cost = audio.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let delay = control.join().unwrap();
    (cost, delay)
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let mut rows = Vec::new();
    for producers in [1, 2, 4] {
        for kind in Kind::ALL {
            rows.push(("hammer", producers, kind, run(kind, producers, secs, false)));
        }
    }
    for kind in Kind::ALL {
        rows.push(("inversion", 1, kind, run(kind, 1, secs, true)));
    }
    for (scenario, producers, kind, r) in rows {
        println!(
            "{{\"scenario\":\"{scenario}\",\"producers\":{producers},\"kind\":\"{}\",\"fifo\":{},\
             \"blocks\":{},\"items\":{},\"cost_mean_ns\":{:.0},\"cost_p999_ns\":{},\"cost_max_ns\":{},\
             \"delay_mean_blocks\":{:.4},\"delay_p999_blocks\":{},\"delay_max_blocks\":{},\
             \"misses\":{},\"longest_miss_run\":{},\"full\":{}}}",
            kind.name(),
            r.fifo,
            r.blocks,
            r.items,
            r.cost.mean(),
            r.cost.p999(),
            r.cost.max(),
            r.delay.mean(),
            r.delay.p999(),
            r.delay.max(),
            r.misses,
            r.longest_miss_run,
            r.full,
        );
    }
    for (back, name) in [(Back::Std, "std sync_channel, blocking recv"), (Back::Poll, "SPSC ring, polled every 1 ms"), (Back::Event, "SPSC ring, one event signal per block")] {
        let (cost, delay) = to_control(back, secs);
        println!(
            "{{\"scenario\":\"to_control\",\"kind\":\"{name}\",\"blocks\":{},\"cost_mean_ns\":{:.0},\"cost_p999_ns\":{},\"cost_max_ns\":{},\
             \"delivery_mean_us\":{:.1},\"delivery_p999_us\":{},\"delivery_max_us\":{}}}",
            cost.count(),
            cost.mean(),
            cost.p999(),
            cost.max(),
            delay.mean(),
            delay.p999(),
            delay.max(),
        );
    }
}
