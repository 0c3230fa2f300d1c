//! Measures how long a thread sleeping in `Waiter::wait` takes to run after
//! another thread calls `signal`, on the same core and across cores, under
//! SCHED_FIFO when the system allows it.
//!
//! ```text
//! cargo run -p magnetar-rt --release --example wakeup_latency -- [iterations] [gap_us]
//! ```
//!
//! The waker sleeps `gap_us` (default 2000 µs, so the sleeper is really
//! asleep), takes a timestamp, and signals; the sleeper takes a timestamp as
//! soon as `wait` returns. The "spin" rows let the sleeper poll for the whole
//! gap instead (what a helper woken ahead of the period would see).

use magnetar_rt::event::{self, Signaller, Waiter};
use magnetar_rt::histogram::Histogram;
use magnetar_rt::thread;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
enum Wait {
    Sleep,
    Spin,
}

struct Config {
    name: &'static str,
    waker_cpu: usize,
    sleeper_cpu: usize,
    fifo: bool,
    wait: Wait,
}

fn setup(name: &str, cpu: usize, fifo: bool, prio: i32) -> bool {
    let _ = thread::set_name(name);
    let _ = thread::pin_to_cpu(cpu);
    fifo && thread::set_fifo_priority(prio).is_ok()
}

fn run(cfg: &Config, iterations: u32, gap: Duration) -> (Histogram, bool) {
    let base = Instant::now();
    let stamp = Arc::new(AtomicU64::new(0));
    let (wake, mut sleeper_wait): (Signaller, Waiter) = event::binary_event();
    let (ack, mut waker_wait) = event::binary_event();
    let (sleeper_cpu, fifo, wait) = (cfg.sleeper_cpu, cfg.fifo, cfg.wait);
    let sleeper = {
        let stamp = Arc::clone(&stamp);
        std::thread::spawn(move || {
            let rt = setup("mg-sleeper", sleeper_cpu, fifo, 80);
            let mut h = Histogram::new();
            ack.signal();
            for _ in 0..iterations {
                match wait {
                    Wait::Sleep => sleeper_wait.wait(),
                    Wait::Spin => sleeper_wait.wait_spin(u32::MAX),
                }
                let now = base.elapsed().as_nanos() as u64;
                h.record(now.saturating_sub(stamp.load(Ordering::Acquire)));
                ack.signal();
            }
            (h, rt)
        })
    };
    let waker_rt = setup("mg-waker", cfg.waker_cpu, fifo, 70);
    waker_wait.wait(); // sleeper is set up
    for _ in 0..iterations {
        std::thread::sleep(gap);
        stamp.store(base.elapsed().as_nanos() as u64, Ordering::Release);
        wake.signal();
        waker_wait.wait();
    }
    let (h, sleeper_rt) = sleeper.join().unwrap();
    (h, waker_rt && sleeper_rt)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iterations: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let gap = Duration::from_micros(args.next().and_then(|a| a.parse().ok()).unwrap_or(2000));
    let cross = thread::available_cpus().min(2) - 1; // 0 on a single CPU
    let fifo_ok = std::thread::spawn(|| thread::set_fifo_priority(1))
        .join()
        .unwrap();
    if let Err(e) = &fifo_ok {
        eprintln!("warning: {e}; measuring under SCHED_OTHER only");
    }
    let mut configs = vec![
        Config {
            name: "same core, SCHED_OTHER",
            waker_cpu: 0,
            sleeper_cpu: 0,
            fifo: false,
            wait: Wait::Sleep,
        },
        Config {
            name: "cross core, SCHED_OTHER",
            waker_cpu: 0,
            sleeper_cpu: cross,
            fifo: false,
            wait: Wait::Sleep,
        },
    ];
    if fifo_ok.is_ok() {
        configs.push(Config {
            name: "same core, SCHED_FIFO",
            waker_cpu: 0,
            sleeper_cpu: 0,
            fifo: true,
            wait: Wait::Sleep,
        });
        configs.push(Config {
            name: "cross core, SCHED_FIFO",
            waker_cpu: 0,
            sleeper_cpu: cross,
            fifo: true,
            wait: Wait::Sleep,
        });
    }
    configs.push(Config {
        name: "cross core, spinning waiter",
        waker_cpu: 0,
        sleeper_cpu: cross,
        fifo: false,
        wait: Wait::Spin,
    });
    println!(
        "futex wake-up latency, {iterations} wake-ups per row, {} µs between wake-ups",
        gap.as_micros()
    );
    println!(
        "{:<30} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "mean µs", "p50 µs", "p99 µs", "p99.9 µs", "max µs"
    );
    for cfg in &configs {
        let (h, rt) = run(cfg, iterations, gap);
        let us = |ns: u64| ns as f64 / 1000.0;
        println!(
            "{:<30} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}{}",
            cfg.name,
            h.mean() / 1000.0,
            us(h.p50()),
            us(h.p99()),
            us(h.p999()),
            us(h.max()),
            if cfg.fifo && !rt {
                "  (SCHED_FIFO refused)"
            } else {
                ""
            }
        );
    }
}
