//! The threads that serve units' periodic tasks (paper 003; the table and
//! its hand-over protocol are `magnetar_rt::periodic`).
//!
//! One thread per period class (2, 4, ... 1024 blocks) serves every task of
//! that class, as the paper pins by period rather than by channel. In real
//! time they run under SCHED_FIFO below the DSP helpers (which sit just
//! below the audio thread), shorter periods higher (rate-monotonic: 39 for
//! 2 blocks down to 30 for 1024), and are pinned over the CPUs `-T` gives
//! the engine: all on CPU 0 with `-T 1`, the shortest period on CPU 1 and
//! the rest in turn with `-T 2`. Without a real-time driver (NRT) there are
//! no threads: a release runs its task at once, so renders do not depend on
//! timing.

use magnetar_rt::periodic::TaskTable;
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
}

impl TaskThreads {
    /// In real time, starts the class threads over `cpus` CPUs; otherwise
    /// makes an inline table. `MAGNETAR_TASK_STALL_US` (tests) makes every
    /// task run wait that long first, to starve them on purpose.
    pub fn new(realtime: bool, cpus: usize) -> TaskThreads {
        let (table, waiters) = TaskTable::new(CLASSES, TASKS_PER_CLASS, !realtime);
        if let Some(us) = std::env::var("MAGNETAR_TASK_STALL_US").ok().and_then(|v| v.parse::<usize>().ok()) {
            table.set_stall_ns(us * 1000);
        }
        let mut threads = Vec::new();
        if realtime {
            let cpus = cpus.max(1);
            for (class, waiter) in waiters.into_iter().enumerate() {
                let t = Arc::clone(&table);
                let cpu = (1 + class) % cpus;
                let spawned = std::thread::Builder::new().name(format!("magnetar-task{}", 2 << class)).spawn(move || {
                    crate::flush_denormals_on_this_thread();
                    // Best effort: without the rights the threads run at
                    // normal priority (and deadline misses tell).
                    let _ = magnetar_rt::thread::pin_to_cpu(cpu);
                    let _ = magnetar_rt::thread::set_fifo_priority(TOP_PRIORITY - class as i32);
                    t.run_class(class, waiter);
                });
                match spawned {
                    Ok(h) => threads.push(h),
                    Err(e) => eprintln!("WARNING: could not start a task thread: {e}"),
                }
            }
        }
        TaskThreads { table, threads }
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
