//! Periodic tasks that the host schedules (paper 003): work whose period is
//! several audio blocks, handed by the audio thread to lower-priority task
//! threads instead of being sliced by hand into every block.
//!
//! A task is registered in a *class* (its period: 2, 4, 8, ... blocks). One
//! thread per class serves every task of that class; shorter periods get
//! higher priorities (rate-monotonic), which the host sets up.
//!
//! # One task: two slots and two counters
//!
//! A task owns its work state `W` and two I/O slots (`W::Io`), a double
//! buffer. Releases are numbered 1, 2, 3, ... (gaps allowed); release `s`
//! uses slot `s % 2`. Two atomics say who owns what:
//!
//! * `seq[i]`: the release the slot `i` was last handed over with;
//! * `done`: the last release the task thread finished.
//!
//! The audio side owns slot `i` while `seq[i] <= done`: it writes the
//! slot's inputs and reads its outputs. It releases `s` by storing `seq[s %
//! 2] = s` (Release), which hands the slot over. The task thread finds slots
//! with `seq > done` (Acquire), runs the lower one first, and publishes
//! `done = s` (Release), which hands the slot back. So each side touches a
//! slot only while it owns it, and the work state only ever on the one
//! thread that serves the task. At most two releases are in flight; the
//! audio side checks [`TaskHandle::is_done`] at the deadline and never
//! waits: a late task is the caller's deadline miss ([`TaskTable::count_miss`]).
//!
//! # The table
//!
//! Storage for every task slot is reserved when the table is made; the audio
//! thread registers a task by claiming a free entry (no allocation besides
//! the task box itself, which the caller makes from its own memory), and a
//! dropped [`TaskHandle`] marks its entry retired: the class thread frees the
//! task when it next scans, so a task is never freed under its thread's feet.
//!
//! In *inline* mode (non-real-time rendering) there are no threads: a
//! release runs the task at once on the caller, so output does not depend
//! on timing, and retiring frees at once.
//!
//! ```
//! use magnetar_rt::periodic::{PeriodicWork, TaskTable};
//!
//! struct Doubler;
//! impl PeriodicWork for Doubler {
//!     type Io = (f32, f32);
//!     fn run(&mut self, io: &mut (f32, f32), _seq: usize) {
//!         io.1 = io.0 * 2.0;
//!     }
//! }
//!
//! let (table, _waiters) = TaskTable::new(4, 8, true);
//! let mut task = TaskTable::register(&table, 2, Doubler, [(0.0, 0.0), (0.0, 0.0)]).unwrap();
//! task.io_mut(1).unwrap().0 = 21.0;
//! task.release(1);
//! assert!(task.is_done(1));
//! assert_eq!(task.io(1).unwrap().1, 42.0);
//! ```

use crate::event::{self, Signaller, Waiter};
use crate::sync::{AtomicU32, AtomicUsize, Arc, Ordering, UnsafeCell};

/// The work of one periodic task.
pub trait PeriodicWork: Send + 'static {
    /// What the audio side and the task exchange through each slot.
    type Io: Send + 'static;
    /// Runs release `seq` on its slot (inputs in, outputs out). Releases come
    /// in increasing order; a gap means releases the audio side dropped.
    fn run(&mut self, io: &mut Self::Io, seq: usize);
}

/// One registered task, as its class thread sees it.
trait Served: Send {
    /// Runs every release handed over and not yet done; returns how many.
    fn serve(&self, stall: &dyn Fn()) -> usize;
}

struct Task<W: PeriodicWork> {
    seq: [AtomicUsize; 2],
    done: AtomicUsize,
    work: UnsafeCell<W>,
    io: [UnsafeCell<W::Io>; 2],
}

// SAFETY: the cells are reached only under the ownership protocol in the
// module docs: a slot by the side that owns it, the work by the one thread
// that serves the task.
unsafe impl<W: PeriodicWork> Sync for Task<W> {}
// SAFETY: W and W::Io are Send; the atomics are Send.
unsafe impl<W: PeriodicWork> Send for Task<W> {}

impl<W: PeriodicWork> Served for Task<W> {
    fn serve(&self, stall: &dyn Fn()) -> usize {
        let mut ran = 0;
        // Only this thread writes `done`.
        let mut done = self.done.load(Ordering::Acquire);
        loop {
            let a = self.seq[0].load(Ordering::Acquire);
            let b = self.seq[1].load(Ordering::Acquire);
            let next = match (a > done, b > done) {
                (true, true) => a.min(b),
                (true, false) => a,
                (false, true) => b,
                (false, false) => return ran,
            };
            stall();
            let slot = next % 2;
            self.work.with_mut(|w| {
                self.io[slot].with_mut(|io| {
                    // SAFETY: `seq[slot] > done` hands the slot to this
                    // thread (Acquire above pairs with the release's store),
                    // and the work is only touched by the serving thread.
                    unsafe { (*w).run(&mut *io, next) }
                })
            });
            done = next;
            self.done.store(done, Ordering::Release);
            ran += 1;
        }
    }
}

const FREE: u32 = 0;
const CLAIMED: u32 = 1;
const LIVE: u32 = 2;
const RETIRED: u32 = 3;

struct Entry {
    state: AtomicU32,
    task: UnsafeCell<Option<Box<dyn Served>>>,
}

struct Class {
    period: usize,
    entries: Box<[Entry]>,
    wake: Signaller,
}

/// Every periodic task of a server, by class.
pub struct TaskTable {
    classes: Box<[Class]>,
    inline: bool,
    misses: AtomicUsize,
    releases: AtomicUsize,
    shutdown: AtomicU32,
    /// Test hook: time each run is held back first (ns), to starve the threads.
    stall_ns: AtomicUsize,
    /// CPUs the host spreads the class threads over (1 until it says).
    cpus: AtomicUsize,
}

// SAFETY: entries' cells are reached under the FREE/CLAIMED/LIVE/RETIRED
// protocol (`register`, `serve_class`, `TaskHandle::drop`).
unsafe impl Sync for TaskTable {}
// SAFETY: as above; the boxed tasks are Send.
unsafe impl Send for TaskTable {}

/// Why a task could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The period is not a power of two the table has a class for.
    #[error("no task class for a period of {0} blocks")]
    NoClass(usize),
    /// Every entry of the class is taken.
    #[error("all {0} task entries of the class are taken")]
    Full(usize),
}

impl TaskTable {
    /// A table for periods 2, 4, ... 2^`classes` blocks, `per_class` tasks
    /// each. Returns the waiters of the class threads (one per class, in
    /// period order); an inline table runs tasks on the releasing thread and
    /// its waiters are not needed.
    pub fn new(classes: usize, per_class: usize, inline: bool) -> (Arc<TaskTable>, Vec<Waiter>) {
        let mut waiters = Vec::with_capacity(classes);
        let classes = (0..classes)
            .map(|c| {
                let (wake, waiter) = event::binary_event();
                waiters.push(waiter);
                Class {
                    period: 2 << c,
                    entries: (0..per_class)
                        .map(|_| Entry { state: AtomicU32::new(FREE), task: UnsafeCell::new(None) })
                        .collect(),
                    wake,
                }
            })
            .collect();
        let table = TaskTable {
            classes,
            inline,
            misses: AtomicUsize::new(0),
            releases: AtomicUsize::new(0),
            shutdown: AtomicU32::new(0),
            stall_ns: AtomicUsize::new(0),
            cpus: AtomicUsize::new(1),
        };
        (Arc::new(table), waiters)
    }

    /// Whether releases run at once on the caller (non-real-time).
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// Records that the host runs the class threads over `cpus` CPUs (units
    /// that weigh work in tasks against work in their own block read it).
    pub fn set_cpus(&self, cpus: usize) {
        self.cpus.store(cpus.max(1), Ordering::Relaxed);
    }

    /// The CPUs the class threads run over: 1 for an inline table (its
    /// tasks run on the releasing thread) and until the host says more.
    pub fn cpus(&self) -> usize {
        if self.inline {
            1
        } else {
            self.cpus.load(Ordering::Relaxed)
        }
    }

    /// The periods (in blocks) the table has classes for, shortest first.
    pub fn periods(&self) -> impl Iterator<Item = usize> + '_ {
        self.classes.iter().map(|c| c.period)
    }

    fn class_of(&self, period: usize) -> Option<usize> {
        self.classes.iter().position(|c| c.period == period)
    }

    /// Registers `work` with period `period` blocks and its two slots.
    /// Boxes the task (the caller's allocator: the real-time pool on the
    /// audio thread); takes a free entry without waiting.
    pub fn register<W: PeriodicWork>(
        table: &Arc<TaskTable>,
        period: usize,
        work: W,
        io: [W::Io; 2],
    ) -> Result<TaskHandle<W>, RegisterError> {
        let class = table.class_of(period).ok_or(RegisterError::NoClass(period))?;
        let entries = &table.classes[class].entries;
        let entry = entries
            .iter()
            .position(|e| e.state.compare_exchange(FREE, CLAIMED, Ordering::Acquire, Ordering::Relaxed).is_ok())
            .ok_or(RegisterError::Full(entries.len()))?;
        let [io0, io1] = io;
        let task = Box::new(Task {
            seq: [AtomicUsize::new(0), AtomicUsize::new(0)],
            done: AtomicUsize::new(0),
            work: UnsafeCell::new(work),
            io: [UnsafeCell::new(io0), UnsafeCell::new(io1)],
        });
        let ptr: *const Task<W> = &*task;
        let e = &entries[entry];
        e.task.with_mut(|t| {
            // SAFETY: CLAIMED makes this thread the entry's only user until
            // LIVE is published below.
            unsafe { *t = Some(task as Box<dyn Served>) }
        });
        e.state.store(LIVE, Ordering::Release);
        Ok(TaskHandle { table: Arc::clone(table), class, entry, task: ptr })
    }

    /// Counts a deadline miss (a task not done when its output was due).
    pub fn count_miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    /// Deadline misses counted so far.
    pub fn misses(&self) -> usize {
        self.misses.load(Ordering::Relaxed)
    }

    /// Releases handed to tasks so far.
    pub fn releases(&self) -> usize {
        self.releases.load(Ordering::Relaxed)
    }

    /// Makes each task run wait `ns` nanoseconds first (tests starve the
    /// task threads with it).
    pub fn set_stall_ns(&self, ns: usize) {
        self.stall_ns.store(ns, Ordering::Relaxed);
    }

    /// Asks the class threads to return from [`TaskTable::run_class`].
    pub fn shut_down(&self) {
        self.shutdown.store(1, Ordering::Release);
        for c in self.classes.iter() {
            c.wake.signal();
        }
    }

    /// Whether [`TaskTable::shut_down`] was called.
    pub fn is_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire) != 0
    }

    /// One pass of class `class`'s thread over its tasks: runs what was
    /// released, frees retired tasks. Returns how many runs it made.
    pub fn serve_class(&self, class: usize) -> usize {
        let stall_ns = self.stall_ns.load(Ordering::Relaxed);
        let stall = move || {
            if stall_ns > 0 {
                spin_for(stall_ns);
            }
        };
        let mut ran = 0;
        for e in self.classes[class].entries.iter() {
            match e.state.load(Ordering::Acquire) {
                LIVE => {
                    ran += e.task.with(|t| {
                        // SAFETY: LIVE: the box stays until this thread (the
                        // class's only server) frees it after RETIRED.
                        unsafe { (*t).as_ref().map_or(0, |t| t.serve(&stall)) }
                    })
                }
                RETIRED => {
                    let task = e.task.with_mut(|t| {
                        // SAFETY: RETIRED: the handle is gone, and only this
                        // thread reaches the entry until it is FREE again.
                        unsafe { (*t).take() }
                    });
                    e.state.store(FREE, Ordering::Release);
                    drop(task);
                }
                _ => {}
            }
        }
        ran
    }

    /// Serves class `class` until the table shuts down, sleeping on
    /// `waiter` between releases: the body of a class thread.
    pub fn run_class(&self, class: usize, mut waiter: Waiter) {
        while !self.is_shut_down() {
            waiter.wait();
            while self.serve_class(class) > 0 {}
        }
        // Leave nothing retired behind for the table's drop.
        self.serve_class(class);
    }
}

impl Drop for TaskTable {
    fn drop(&mut self) {
        for c in self.classes.iter() {
            for e in c.entries.iter() {
                e.task.with_mut(|t| {
                    // SAFETY: `&mut self`: no handle and no thread is left.
                    unsafe { (*t).take() }
                });
            }
        }
    }
}

/// The starvation hook sleeps rather than spins: a starved thread is one
/// that does not get the CPU, and a spinning real-time thread would eat
/// the kernel's real-time budget, which the audio thread shares.
#[cfg(not(loom))]
fn spin_for(ns: usize) {
    std::thread::sleep(std::time::Duration::from_nanos(ns as u64));
}

#[cfg(loom)]
fn spin_for(_ns: usize) {}

/// The audio side of one registered task. Dropping it retires the task.
pub struct TaskHandle<W: PeriodicWork> {
    table: Arc<TaskTable>,
    class: usize,
    entry: usize,
    task: *const Task<W>,
}

// SAFETY: the handle is the audio side of the protocol; moving it to another
// thread moves that side with it.
unsafe impl<W: PeriodicWork> Send for TaskHandle<W> {}

impl<W: PeriodicWork> TaskHandle<W> {
    fn task(&self) -> &Task<W> {
        // SAFETY: the box lives until the entry is retired, which only this
        // handle's drop does.
        unsafe { &*self.task }
    }

    /// The period of the task's class, in blocks.
    pub fn period(&self) -> usize {
        self.table.classes[self.class].period
    }

    /// The table the task belongs to.
    pub fn table(&self) -> &TaskTable {
        &self.table
    }

    /// Whether the slot release `seq` would use is the audio side's.
    pub fn slot_free(&self, seq: usize) -> bool {
        let t = self.task();
        t.seq[seq % 2].load(Ordering::Relaxed) <= t.done.load(Ordering::Acquire)
    }

    /// The slot release `seq` would use, if the audio side owns it.
    pub fn io_mut(&mut self, seq: usize) -> Option<&mut W::Io> {
        if !self.slot_free(seq) {
            return None;
        }
        let t = self.task();
        // SAFETY: the slot is the audio side's (`slot_free`), and `&mut
        // self` makes this the only view of it on this side.
        Some(t.io[seq % 2].with_mut(|io| unsafe { &mut *io }))
    }

    /// Hands release `seq` (greater than every earlier one) to the task
    /// thread, or runs it at once in inline mode. Returns false, handing
    /// nothing over, if its slot is still the task thread's.
    pub fn release(&mut self, seq: usize) -> bool {
        if !self.slot_free(seq) {
            return false;
        }
        let t = self.task();
        debug_assert!(seq > t.seq[0].load(Ordering::Relaxed).max(t.seq[1].load(Ordering::Relaxed)));
        t.seq[seq % 2].store(seq, Ordering::Release);
        self.table.releases.fetch_add(1, Ordering::Relaxed);
        if self.table.inline {
            t.serve(&|| {});
        } else {
            self.table.classes[self.class].wake.signal();
        }
        true
    }

    /// Whether release `seq` is done (never waits).
    pub fn is_done(&self, seq: usize) -> bool {
        self.task().done.load(Ordering::Acquire) >= seq
    }

    /// The slot of release `seq` once it is done and still holds it.
    pub fn io(&self, seq: usize) -> Option<&W::Io> {
        let t = self.task();
        (t.seq[seq % 2].load(Ordering::Relaxed) == seq && self.is_done(seq))
            // SAFETY: done: the slot is the audio side's again.
            .then(|| t.io[seq % 2].with(|io| unsafe { &*io }))
    }
}

impl<W: PeriodicWork> Drop for TaskHandle<W> {
    fn drop(&mut self) {
        let e = &self.table.classes[self.class].entries[self.entry];
        if self.table.inline {
            let task = e.task.with_mut(|t| {
                // SAFETY: inline: no class thread; this handle is the
                // entry's only user.
                unsafe { (*t).take() }
            });
            e.state.store(FREE, Ordering::Release);
            drop(task);
        } else {
            e.state.store(RETIRED, Ordering::Release);
            self.table.classes[self.class].wake.signal();
        }
    }
}
