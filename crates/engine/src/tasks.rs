//! The threads that serve units' periodic tasks (paper 003; the table and
//! its hand-over protocol are `magnetar_rt::periodic`).
//!
//! One thread per period class (2, 4, ... 1024 blocks) serves every task of
//! that class, as the paper pins by period rather than by channel. In real
//! time they run under SCHED_FIFO below the DSP helpers and the audio
//! thread, shorter periods higher (rate-monotonic: 39 for 2 blocks down to
//! 30 for 1024, lower when the audio thread itself runs lower, as JACK's
//! clients do by default; `priorities` moves them). With `-T 1` they are
//! pinned to CPU 0, the engine's one CPU. With more they may run on any of
//! the CPUs `-T` gives the engine and the kernel's real-time scheduler
//! places them: below the audio thread and the DSP helpers, a class thread
//! runs on whichever of those CPUs is not busy with them at the moment. A
//! class pinned to one CPU waits there whenever that CPU's audio work runs
//! long (the audio thread, which is not pinned, mostly keeps the CPU it
//! last ran on; a helper spins there between blocks), while the other CPU
//! idles; with the synths in sequential groups the audio thread keeps its
//! CPU busy for most of each block near capacity, so every class pinned
//! beside it would miss deadlines first. Without a real-time driver (NRT)
//! there are no threads: a release runs its task at once, so renders do not
//! depend on timing.

use magnetar_rt::periodic::TaskTable;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Period classes: 2^1 ..= 2^CLASSES blocks.
pub const CLASSES: usize = 10;
/// Tasks each class can hold (a convolution instance uses one per level).
pub const TASKS_PER_CLASS: usize = 1024;
/// SCHED_FIFO priority of the 2-block class; each longer class is one lower.
pub const TOP_PRIORITY: i32 = 39;

/// The task table and, in real time, its class threads.
pub struct TaskThreads {
    pub table: Arc<TaskTable>,
    threads: Vec<JoinHandle<()>>,
    /// (class, kernel thread id) of each class thread.
    pub(crate) tids: Vec<(usize, i32)>,
    /// The audio thread's SCHED_FIFO priority once it is known (0: it has
    /// none; `priorities::UNKNOWN` before).
    pub(crate) audio_priority: Arc<AtomicI32>,
}

/// The priority of class `class` when the audio thread runs at `audio`
/// (0 or less: unknown): rate-monotonic, always below the audio thread (JACK's
/// clients run at jackd's priority less one, 5 by default, so the classes
/// then crowd at the bottom), and above the control thread's
/// (`priorities::CONTROL_PRIORITY`) while the audio thread leaves room.
pub fn class_priority(class: usize, audio: i32) -> i32 {
    let top = if audio > 1 { TOP_PRIORITY.min(audio - 1) } else { TOP_PRIORITY };
    let floor = (crate::priorities::CONTROL_PRIORITY + 1).min(top).max(1);
    (top - class as i32).max(floor)
}

impl TaskThreads {
    /// In real time, starts the class threads over `cpus` CPUs (and tells
    /// the table, whose units weigh their work by it); otherwise
    /// makes an inline table. `MAGNETAR_TASK_STALL_US` (tests) makes every
    /// task run wait that long first, to starve them on purpose.
    pub fn new(realtime: bool, cpus: usize) -> TaskThreads {
        let (table, waiters) = TaskTable::new(CLASSES, TASKS_PER_CLASS, !realtime);
        if let Some(us) = std::env::var("MAGNETAR_TASK_STALL_US").ok().and_then(|v| v.parse::<usize>().ok()) {
            table.set_stall_ns(us * 1000);
        }
        let mut threads = Vec::new();
        let mut tids = Vec::new();
        let audio_priority = Arc::new(AtomicI32::new(crate::priorities::UNKNOWN));
        if realtime {
            // `-T` may ask for more threads than the machine has CPUs.
            let cpus = cpus.clamp(1, magnetar_rt::thread::available_cpus().max(1));
            table.set_cpus(cpus);
            let (report, reports) = std::sync::mpsc::channel();
            for (class, waiter) in waiters.into_iter().enumerate() {
                let t = Arc::clone(&table);
                let report = report.clone();
                let spawned = std::thread::Builder::new().name(format!("magnetar-task{}", 2 << class)).spawn(move || {
                    crate::flush_denormals_on_this_thread();
                    // Best effort: without the rights the threads run at
                    // normal priority (and deadline misses tell). The
                    // control thread moves them below the audio thread
                    // once that one's priority is known (`priorities`).
                    let _ = if cpus == 1 {
                        magnetar_rt::thread::pin_to_cpu(0)
                    } else {
                        magnetar_rt::thread::pin_to_cpus(0..cpus)
                    };
                    let _ = magnetar_rt::thread::set_fifo_priority(class_priority(class, crate::priorities::UNKNOWN));
                    let _ = report.send((class, magnetar_rt::thread::current_tid()));
                    drop(report);
                    let mut waiter = waiter;
                    while !t.is_shut_down() {
                        waiter.wait();
                        while t.serve_class(class) > 0 {}
                    }
                    t.serve_class(class);
                });
                match spawned {
                    Ok(h) => threads.push(h),
                    Err(e) => eprintln!("WARNING: could not start a task thread: {e}"),
                }
            }
            drop(report);
            tids = reports.iter().collect();
        }
        TaskThreads { table, threads, tids, audio_priority }
    }

    /// Tells the class threads the audio thread's SCHED_FIFO priority, if
    /// it has one (`None`: it runs at normal priority); the control thread
    /// moves them below it (`priorities::PriorityFollower`). No system call.
    pub fn set_audio_priority(&self, priority: Option<i32>) {
        self.audio_priority.store(priority.unwrap_or(0), Ordering::Relaxed);
    }

    /// Deadline misses counted so far.
    pub fn deadline_misses(&self) -> u64 {
        self.table.misses() as u64
    }
}

impl Drop for TaskThreads {
    fn drop(&mut self) {
        self.table.shut_down();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
