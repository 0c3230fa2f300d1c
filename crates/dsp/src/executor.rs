//! Runs a [`Plan`] once per block on N threads: the calling (audio) thread
//! plus N − 1 pinned helper threads.
//!
//! # One block
//!
//! 1. The caller signals every helper (a latched binary event: a helper that
//!    is still busy or spinning sees it later; one asleep is woken), then
//!    resets the activation counts and the ready stack, *opens* the block and
//!    signals once more, for a helper that went back to sleep meanwhile.
//! 2. Threads take the initially ready items from their own contiguous
//!    [shares](crate::shares), and from the back of another's when theirs is
//!    empty, so a thread runs the same items block after block while the
//!    threads keep pace; they pop items readied during the block from the
//!    ready stack, and run them. Running an item
//!    decrements each successor's count; the first successor that reaches
//!    zero is run next by the same thread, the others are pushed (Supernova's
//!    shortcut: it saves two compare-and-swaps and keeps data in cache).
//! 3. Only *sinks* (items nothing waits for) count towards the shared
//!    remaining counter: every item is an ancestor of some sink, so when all
//!    sinks ran, all items ran. A thread subtracts the sinks it ran when it
//!    runs out of work. The block is over when the counter reaches zero.
//!    A thread with nothing to run calls [`Work::idle`] between its polls.
//! 4. The caller *closes* the block and waits until no helper is still inside
//!    it, so that the plan and the work object, which helpers reach through
//!    raw pointers, are not touched after [`Executor::run_block`] returns.
//!
//! A helper runs a block's items under the caller's floating-point
//! controls (on x86-64, MXCSR: rounding and flushing subnormal numbers to
//! zero), taken as the block opens: a real-time server turns flushing on
//! for its audio thread after the pool started, and an item must compute
//! the same bits on every thread.
//!
//! Helpers join a block by incrementing `inside` and then checking that the
//! block is still open; the caller closes by clearing `open` and then reading
//! `inside`. With sequentially consistent operations on both sides, either
//! the caller sees the helper inside (and waits) or the helper sees the block
//! closed (and leaves without touching the plan).
//!
//! # Idle helpers: spin, then sleep
//!
//! Inside a block an idle thread spins on the ready stack (Supernova's
//! choice: a wake-up costs more than most items); threads that share their
//! CPUs with other work yield once they have spun for
//! [`ExecutorConfig::patience`]. Between blocks a helper
//! spins for [`ExecutorConfig::spin`] after its last block or last signal,
//! then sleeps on its binary event. A driver that knows when the next period
//! starts can call [`Executor::wake_helpers`] a little ahead of it, so that
//! helpers are already spinning when the block opens. A helper that joined
//! a few blocks in a row without finding anything to run (the caller ran
//! every item before it came) sleeps at once instead: spinning would only
//! take CPU time from the caller on a busy machine. So does every helper
//! while the user has turned lingering off ([`Executor::set_linger`]): it
//! knows that its next blocks do not come to the pool (it runs them on one
//! thread), and turns lingering on, which wakes the helpers, before one does.
//!
//! The caller measures how long it had nothing to run in each block
//! ([`Executor::last_wait`]): what the helpers cost it beyond the hand-over,
//! for a user that decides whether a block is worth the threads.

use crate::queue::{ItemId, Plan};
use crate::shares::Shares;
use crossbeam_utils::CachePadded;
use magnetar_rt::event::{self, Signaller, Waiter};
use magnetar_rt::thread;
use magnetar_rt::trace;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the executor calls for every work item; `worker` is the index of the
/// running thread (0 = the thread that called [`Executor::run_block`]).
///
/// `run` must not panic: a panic on a DSP thread aborts the process, since
/// the other threads would otherwise wait for an item that never finishes.
pub trait Work: Sync {
    /// Runs one work item.
    fn run(&self, item: ItemId, worker: usize);

    /// Called while thread `worker` has nothing to run and the block goes
    /// on (between polls of the ready items, so it should be short): room
    /// for work that may be done as soon as other items ended, such as
    /// applying their results in order, instead of after the block.
    #[inline]
    fn idle(&self, _worker: usize) {}

    /// Called once as thread `worker` leaves the block, every item having
    /// run: room for applying what `idle` left to other threads.
    #[inline]
    fn leave(&self, _worker: usize) {}
}

/// How long an idle helper spins between blocks before it sleeps.
///
/// Measured on our 2-core VMs with `cargo run -p magnetar-rt --release
/// --example wakeup_latency -- 300 2000`: a SCHED_FIFO helper asleep on the
/// other core runs 23 µs (median) / 88 µs (p99) after the signal on a quiet
/// day, 64 / 126 µs in DESIGN.md's earlier run; a spinning one in 0.2 / 0.9 µs.
/// Spinning for as long as one wake-up costs is the classic 2-competitive
/// choice (never worse than twice the better of "always spin" and "always
/// sleep"), so the budget is the p99 wake-up latency, rounded: blocks that
/// follow closely (NRT rendering, small periods) keep helpers awake, and an
/// idle server stops burning a core 0.12 ms after its last block.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(120);

/// How the pool is set up.
#[derive(Clone, Debug)]
pub struct ExecutorConfig {
    /// Threads that run a block, including the caller; 1 means no helpers.
    pub threads: usize,
    /// Spin budget of an idle helper between blocks (see [`DEFAULT_SPIN`]).
    pub spin: Duration,
    /// SCHED_FIFO priority for helpers, if the system allows it.
    pub fifo_priority: Option<i32>,
    /// Pin helper `i` (1-based) to CPU `(first_cpu + i) % cpus`.
    pub pin: bool,
    /// The CPU the caller runs on; helpers take the following ones.
    pub first_cpu: usize,
    /// How long a thread waiting inside a block (for items another thread
    /// holds, or for the helpers to leave), or a helper between blocks,
    /// spins before it yields the CPU at every further round: for threads that share their CPUs with other
    /// work (non-real-time rendering), where the thread waited for may be
    /// waiting for this very CPU. `None`: spin, yielding only after many
    /// rounds, a safeguard (real-time threads, which make no system call
    /// while they serve a block).
    pub patience: Option<Duration>,
}

/// A patience for threads that share their CPUs (see
/// [`ExecutorConfig::patience`]): a few work items' time, and about what a
/// yield and the switch back cost, so that a wait the other thread ends
/// soon is still spun through, and a wait on a thread the system put aside
/// gives it the CPU instead of burning it.
pub const SHARED_CPU_PATIENCE: Duration = Duration::from_micros(20);

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            threads: thread::available_cpus(),
            spin: DEFAULT_SPIN,
            fifo_priority: Some(70),
            pin: true,
            first_cpu: 0,
            patience: None,
        }
    }
}

/// Why the pool could not start.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    /// `threads` was 0.
    #[error("the DSP pool needs at least one thread")]
    NoThreads,
    /// More SCHED_FIFO threads than CPUs: a spinning thread could starve
    /// one of the same priority that shares its CPU.
    #[error("{threads} real-time DSP threads need at least as many CPUs, but {cpus} are online")]
    TooManyThreads {
        /// Requested threads.
        threads: usize,
        /// CPUs online.
        cpus: usize,
    },
    /// The OS refused a new thread.
    #[error("could not start a DSP helper thread: {0}")]
    Spawn(#[from] std::io::Error),
}

/// What a helper thread got of what was asked for it.
#[derive(Clone, Debug)]
pub struct HelperSetup {
    /// The CPU it is pinned to, if pinning worked.
    pub cpu: Option<usize>,
    /// Whether it runs under SCHED_FIFO.
    pub fifo: bool,
    /// Why a requested setting was refused (for a startup warning).
    pub warnings: Vec<String>,
    /// Its kernel thread id (`/proc/self/task/<tid>`), so that another
    /// thread can change its priority.
    pub tid: i32,
}

/// The current block's plan and work, type-erased for the helpers.
struct Job {
    plan: *const Plan,
    work: *const (),
    run: unsafe fn(*const (), ItemId, usize),
    idle: unsafe fn(*const (), usize),
    leave: unsafe fn(*const (), usize),
    /// The caller's floating-point controls, which helpers adopt.
    fp: u32,
}

impl Job {
    /// Whether `other` runs the same work on the same plan. Functions are
    /// compared by address: one function seen at two addresses only makes
    /// a job look new (and written again), and two functions at one
    /// address are one code.
    fn is(&self, other: &Job) -> bool {
        std::ptr::eq(self.plan, other.plan)
            && std::ptr::eq(self.work, other.work)
            && self.run as usize == other.run as usize
            && self.idle as usize == other.idle as usize
            && self.leave as usize == other.leave as usize
            && self.fp == other.fp
    }
}

/// Bits of x86-64's MXCSR that hold no control, only sticky status flags.
#[cfg(target_arch = "x86_64")]
const FP_STATUS: u32 = 0x3f;

/// The calling thread's floating-point controls: on x86-64 its MXCSR
/// (rounding, flushing denormals to zero, exception masks); 0 elsewhere.
#[inline]
fn fp_controls() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(deprecated)]
        // SAFETY: reads only this thread's MXCSR; every x86-64 CPU has it.
        let csr = unsafe { std::arch::x86_64::_mm_getcsr() };
        csr & !FP_STATUS
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// Gives the calling thread the floating-point controls `fp` (from
/// [`fp_controls`] on another thread), keeping its own status flags.
#[inline]
fn adopt_fp_controls(fp: u32) {
    #[cfg(target_arch = "x86_64")]
    if fp_controls() != fp {
        #[allow(deprecated)]
        // SAFETY: `fp` was read from a valid MXCSR (reserved bits clear), so
        // loading it cannot fault; it changes only this thread's rounding
        // and flushing of subnormal numbers.
        unsafe {
            let status = std::arch::x86_64::_mm_getcsr() & FP_STATUS;
            std::arch::x86_64::_mm_setcsr(fp | status);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = fp;
}

/// Calls `W::run` on an erased `&W`.
///
/// # Safety
/// `work` must point at a live `W`.
unsafe fn run_erased<W: Work>(work: *const (), item: ItemId, worker: usize) {
    // SAFETY: the caller passes the pointer made from a `&W` in run_block,
    // which is alive for the whole block.
    unsafe { (*work.cast::<W>()).run(item, worker) }
}

/// Calls `W::idle` on an erased `&W`.
///
/// # Safety
/// As [`run_erased`].
unsafe fn idle_erased<W: Work>(work: *const (), worker: usize) {
    // SAFETY: as in run_erased.
    unsafe { (*work.cast::<W>()).idle(worker) }
}

/// Calls `W::leave` on an erased `&W`.
///
/// # Safety
/// As [`run_erased`].
unsafe fn leave_erased<W: Work>(work: *const (), worker: usize) {
    // SAFETY: as in run_erased.
    unsafe { (*work.cast::<W>()).leave(worker) }
}

unsafe fn run_nothing(_: *const (), _: ItemId, _: usize) {}

unsafe fn idle_nothing(_: *const (), _: usize) {}

struct Shared {
    open: CachePadded<AtomicBool>,
    block: CachePadded<AtomicU64>,
    inside: CachePadded<AtomicUsize>,
    remaining: CachePadded<AtomicU32>,
    /// The current block's initially ready items, one share per thread.
    shares: Shares,
    shutdown: AtomicBool,
    /// Whether idle helpers spin between blocks (for their budget) or go
    /// to sleep as soon as they leave one (`Executor::set_linger`).
    linger: AtomicBool,
    job: UnsafeCell<Job>,
    spin: Duration,
    patience: Option<Duration>,
}

// SAFETY: `job` is written only by the thread in run_block while the block is
// closed and no helper is inside (see the protocol in the module docs), and
// read only by helpers that are inside an open block; the raw pointers in it
// point at a Plan (Sync) and a W: Work (Sync) that outlive the block.
unsafe impl Sync for Shared {}
// SAFETY: as above; the pointers are only dereferenced under that protocol.
unsafe impl Send for Shared {}

/// Aborts if dropped during unwinding: a DSP thread that dies mid-block
/// would leave the others waiting forever, or reading freed memory.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("magnetar-dsp: a work item panicked on a DSP thread; aborting");
            std::process::abort();
        }
    }
}

/// The DSP thread pool. [`run_block`](Self::run_block) takes `&mut self`, so
/// one block runs at a time.
pub struct Executor {
    shared: Arc<Shared>,
    wake: Vec<Signaller>,
    helpers: Vec<std::thread::JoinHandle<()>>,
    setups: Vec<HelperSetup>,
    config: ExecutorConfig,
    last_wait: Duration,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor").field("threads", &self.threads()).field("helpers", &self.setups).finish()
    }
}

impl Executor {
    /// Starts `config.threads - 1` helper threads.
    pub fn new(config: ExecutorConfig) -> Result<Self, ExecutorError> {
        if config.threads == 0 {
            return Err(ExecutorError::NoThreads);
        }
        let shared = Arc::new(Shared {
            open: CachePadded::new(AtomicBool::new(false)),
            block: CachePadded::new(AtomicU64::new(0)),
            inside: CachePadded::new(AtomicUsize::new(0)),
            remaining: CachePadded::new(AtomicU32::new(0)),
            shares: Shares::new(config.threads),
            shutdown: AtomicBool::new(false),
            linger: AtomicBool::new(true),
            job: UnsafeCell::new(Job {
                plan: std::ptr::null(),
                work: std::ptr::null(),
                run: run_nothing,
                idle: idle_nothing,
                leave: idle_nothing,
                fp: 0,
            }),
            spin: config.spin,
            patience: config.patience,
        });
        let mut executor = Self {
            shared,
            wake: Vec::new(),
            helpers: Vec::new(),
            setups: Vec::new(),
            config: config.clone(),
            last_wait: Duration::ZERO,
        };
        let cpus = online_cpus();
        if config.fifo_priority.is_some() && config.threads > cpus {
            return Err(ExecutorError::TooManyThreads { threads: config.threads, cpus });
        }
        let (report, reports) = std::sync::mpsc::channel();
        for worker in 1..config.threads {
            let (signal, waiter) = event::binary_event();
            let shared = Arc::clone(&executor.shared);
            let report = report.clone();
            let cpu = config.pin.then_some((config.first_cpu + worker) % cpus);
            let fifo = config.fifo_priority;
            let handle = std::thread::Builder::new().name(format!("mg-dsp-{worker}")).spawn(move || {
                let setup = setup_helper(cpu, fifo);
                let _ = report.send(setup);
                // The syscall guard (off unless the server turned it on):
                // the whole serving loop is real-time work; teardown is not.
                magnetar_rt::sysguard::install_on_this_thread(magnetar_rt::sysguard::Role::Helper);
                let inside = magnetar_rt::sysguard::enter(magnetar_rt::sysguard::Role::Helper);
                // Heap operations while serving are counted (C code's
                // show in the server's `/magnetar_rtStats`).
                let heap = magnetar_rt::guard::AllocGuard::arm();
                helper_main(&shared, waiter, worker);
                drop(heap);
                drop(inside);
            })?;
            executor.wake.push(signal);
            executor.helpers.push(handle);
        }
        drop(report);
        executor.setups = reports.iter().take(config.threads - 1).collect();
        Ok(executor)
    }

    /// Gives the calling thread (the one that will call
    /// [`run_block`](Self::run_block)) the setup its helpers got: pinned to
    /// `first_cpu`, SCHED_FIFO at the helpers' priority. Without this a
    /// SCHED_FIFO helper spinning on the caller's CPU would starve it.
    pub fn prepare_caller(&self) -> HelperSetup {
        setup_helper(self.config.pin.then_some(self.config.first_cpu % online_cpus()), self.config.fifo_priority)
    }

    /// Threads that run a block, the caller included.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// What each helper got of pinning and SCHED_FIFO.
    pub fn helper_setups(&self) -> &[HelperSetup] {
        &self.setups
    }

    /// Wakes sleeping helpers so that they spin, ready for the next block.
    /// Costs one atomic swap per helper, plus a futex wake for each helper
    /// that is asleep. [`run_block`](Self::run_block) does this itself; a
    /// driver may call it ahead of the period to hide the wake-up latency.
    pub fn wake_helpers(&self) {
        trace::instant(trace::Kind::Signal, 0, 0);
        for signal in &self.wake {
            signal.signal();
        }
    }

    /// Whether idle helpers spin between blocks, ready for the next one
    /// (the default), or sleep as soon as they leave a block: a user that
    /// knows no block is coming soon (its next blocks run on one thread)
    /// keeps them from burning a core meanwhile. Turning it back on wakes
    /// sleeping helpers, so that they spin when the next block opens;
    /// [`run_block`](Self::run_block) turns it on for its block.
    pub fn set_linger(&self, linger: bool) {
        let was = self.shared.linger.swap(linger, Ordering::Relaxed);
        if linger && !was {
            self.wake_helpers();
        }
    }

    /// Runs every item of `plan` once, in an order that respects the plan's
    /// dependencies, on all threads; returns when all items ran.
    ///
    /// Does not allocate. The plan must not be run by two executors at once
    /// (its activation counts live in it); `&Plan` keeps it from being
    /// recompiled meanwhile.
    pub fn run_block<W: Work>(&mut self, plan: &Plan, work: &W) {
        if plan.is_empty() {
            return;
        }
        let sh = &*self.shared;
        let helpers = !self.wake.is_empty();
        if helpers {
            // The block's helpers spin until it opens. Stored only when it
            // changes (this thread alone stores it): spinning helpers read
            // its line, and a store would take it from them.
            if !sh.linger.load(Ordering::Relaxed) {
                sh.linger.store(true, Ordering::Relaxed);
            }
            // First, so that the wake-up overlaps with the resets below.
            self.wake_helpers();
        }
        plan.reset_block();
        // No helper takes from the shares now: the last block closed and
        // emptied `inside`; those joining later see them through `open`.
        sh.shares.reset(plan.initially_ready().len() as u32);
        sh.remaining.store(plan.sinks(), Ordering::Relaxed);
        let guard = AbortOnUnwind;
        if helpers {
            // SAFETY: the block is closed and run_block (on &mut self) waited
            // for `inside` to reach 0 at the end of the previous block, so no
            // helper reads `job` now; those that check in later see `open`
            // set below (SeqCst, after this write) before reading it.
            unsafe {
                let job = Job {
                    plan,
                    work: (work as *const W).cast(),
                    run: run_erased::<W>,
                    idle: idle_erased::<W>,
                    leave: leave_erased::<W>,
                    fp: fp_controls(),
                };
                // Written only when it changed: a block of the same plan
                // and work as the last one (a group run block after block)
                // leaves the line, which spinning helpers read, with them.
                if !(*sh.job.get()).is(&job) {
                    *sh.job.get() = job;
                }
            }
            sh.block.fetch_add(1, Ordering::Relaxed);
            sh.open.store(true, Ordering::SeqCst);
            // Again, now that the block is open: a helper woken by the first
            // signal whose spin budget ran out before the store above (this
            // thread preempted in between) has gone back to sleep and would
            // sleep through the whole block. A helper still spinning only
            // finds the event set (one swap, no system call) and spins one
            // budget longer after the block.
            self.wake_helpers();
        }
        let mut waited = Duration::ZERO;
        work_loop(
            plan,
            &sh.shares,
            0,
            &sh.remaining,
            sh.patience,
            Some(&mut waited),
            |item, worker| work.run(item, worker),
            |worker| work.idle(worker),
            |worker| work.leave(worker),
        );
        if helpers {
            sh.open.store(false, Ordering::SeqCst);
            if sh.inside.load(Ordering::SeqCst) != 0 {
                let since = Instant::now();
                let mut backoff = Backoff::new(sh.patience);
                while sh.inside.load(Ordering::SeqCst) != 0 {
                    backoff.snooze();
                }
                waited += since.elapsed();
            }
        }
        self.last_wait = waited;
        std::mem::forget(guard);
    }

    /// How long the caller of the last [`run_block`](Self::run_block) had
    /// nothing to run: waiting for items that other threads held, and for
    /// the helpers to leave the block. What the helpers cost the block
    /// beyond their hand-over, including a helper that the system
    /// pre-empted in the middle of an item.
    pub fn last_wait(&self) -> Duration {
        self.last_wait
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.wake_helpers();
        for handle in self.helpers.drain(..) {
            let _ = handle.join();
        }
    }
}

/// CPUs online in the system; unlike `available_parallelism`, not narrowed
/// by the calling thread's own pinning.
fn online_cpus() -> usize {
    // SAFETY: a query without pointers; returns -1 on failure.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or_else(thread::available_cpus)
}

/// One wait's spinning. Without patience, after many rounds it yields the
/// CPU, so that a thread of the same real-time priority sharing this CPU (a
/// misconfiguration) can still make progress instead of being starved
/// forever; with it, it yields at every round once it has spun that long.
struct Backoff {
    spins: u32,
    patience: Option<Duration>,
    since: Option<Instant>,
}

impl Backoff {
    fn new(patience: Option<Duration>) -> Backoff {
        Backoff { spins: 0, patience, since: None }
    }

    /// The wait is over: the next one starts spinning afresh.
    #[inline]
    fn reset(&mut self) {
        self.since = None;
    }

    #[inline]
    fn snooze(&mut self) {
        self.spins = self.spins.wrapping_add(1);
        let give_way = match self.patience {
            None => self.spins % 8192 == 0,
            // The clock is read once every 64 rounds (no system call).
            Some(patience) if self.spins % 64 == 0 => self.since.get_or_insert_with(Instant::now).elapsed() >= patience,
            Some(_) => false,
        };
        if give_way {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

fn setup_helper(cpu: Option<usize>, fifo: Option<i32>) -> HelperSetup {
    let mut setup = HelperSetup { cpu: None, fifo: false, warnings: Vec::new(), tid: thread::current_tid() };
    if let Some(cpu) = cpu {
        match thread::pin_to_cpu(cpu) {
            Ok(()) => setup.cpu = Some(cpu),
            Err(e) => setup.warnings.push(e.to_string()),
        }
    }
    if let Some(priority) = fifo {
        match thread::set_fifo_priority(priority) {
            Ok(()) => setup.fifo = true,
            Err(e) => setup.warnings.push(e.to_string()),
        }
    }
    setup
}

/// Runs ready items until the block's sinks have all run; returns how many
/// items this thread ran. With `waited`, adds to it the time this thread
/// had nothing to run while the block went on.
#[inline]
#[allow(clippy::too_many_arguments)]
fn work_loop(
    plan: &Plan,
    shares: &Shares,
    worker: usize,
    remaining: &AtomicU32,
    patience: Option<Duration>,
    mut waited: Option<&mut Duration>,
    run: impl Fn(ItemId, usize),
    idle: impl Fn(usize),
    leave: impl Fn(usize),
) -> u32 {
    let mut ran = 0u32;
    // When this thread last ran out of work, if it is measuring its waits.
    let mut idle_at: Option<Instant> = None;
    let mut backoff = Backoff::new(patience);
    // Sinks this thread ran and has not yet subtracted from `remaining`:
    // flushed only when it runs out of work, so the shared counter sees one
    // decrement per idle moment instead of one per sink.
    let mut sinks_done = 0u32;
    // When this thread ran out of work (for the trace), if it did.
    let mut idle_since: Option<u64> = None;
    loop {
        let next = plan.ready.pop().or_else(|| {
            shares.take_noting(worker).map(|(i, from)| {
                if from != worker % shares.threads() {
                    trace::instant(trace::Kind::Steal, i, from as u32);
                }
                plan.initially_ready()[i as usize]
            })
        });
        let Some(mut q) = next else {
            if sinks_done > 0 {
                // AcqRel: the last flush carries every item's effects
                // (through the chain of count decrements) to the threads
                // that see zero.
                let before = remaining.fetch_sub(sinks_done, Ordering::AcqRel);
                sinks_done = 0;
                if before == 0 {
                    unreachable!("more sinks ran than the plan has");
                }
            }
            if trace::on() && idle_since.is_none() {
                idle_since = Some(trace::now());
            }
            if waited.is_some() && idle_at.is_none() {
                idle_at = Some(Instant::now());
            }
            if remaining.load(Ordering::Acquire) == 0 {
                if let Some(t) = idle_since {
                    trace::span(trace::Kind::Wait, t, 0, 0);
                }
                if let (Some(w), Some(at)) = (waited.as_deref_mut(), idle_at) {
                    *w += at.elapsed();
                }
                leave(worker);
                return ran;
            }
            idle(worker);
            backoff.snooze();
            continue;
        };
        backoff.reset();
        if let Some(t) = idle_since.take() {
            trace::span(trace::Kind::Wait, t, 0, 0);
        }
        if let (Some(w), Some(at)) = (waited.as_deref_mut(), idle_at.take()) {
            *w += at.elapsed();
        }
        loop {
            for &item in plan.run(q) {
                let t = trace::now();
                run(item, worker);
                trace::span(trace::Kind::Item, t, item.0, 0);
                ran += 1;
            }
            let successors = plan.successors(q);
            if successors.is_empty() {
                sinks_done += 1;
                break;
            }
            let mut next = None;
            for &s in successors {
                if plan.counts[s as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                    if next.is_none() {
                        next = Some(s);
                    } else {
                        plan.ready.push(s);
                    }
                }
            }
            match next {
                Some(n) => q = n,
                None => break,
            }
        }
    }
}

/// Blocks in a row that a helper joined without finding an item to run,
/// after which it sleeps at once instead of spinning for the next block:
/// the caller ran the items before it came (the blocks are too short for
/// it, or the system gives it the CPU too late), so its spinning would only
/// take CPU time from other threads, the caller's among them on a busy
/// machine. The next block's signal wakes it again.
const FRUITLESS_BLOCKS: u32 = 3;

fn helper_main(sh: &Shared, mut waiter: Waiter, worker: usize) {
    let mut served = 0u64;
    let mut fruitless = 0u32;
    trace::set_role(trace::Role::Helper, worker);
    loop {
        let asleep = trace::now();
        waiter.wait();
        trace::span(trace::Kind::Sleep, asleep, 0, 0);
        let mut since = Instant::now();
        let mut spins = 0u32;
        loop {
            if sh.shutdown.load(Ordering::Acquire) {
                return;
            }
            if sh.open.load(Ordering::Acquire) && sh.block.load(Ordering::Relaxed) != served {
                if let Some((block, ran)) = join_block(sh, worker, served) {
                    served = block;
                    since = Instant::now();
                    fruitless = if ran == 0 { fruitless + 1 } else { 0 };
                    // Nothing to spin for (`Executor::set_linger`), or nothing
                    // found to run several blocks in a row: sleep now.
                    let linger = sh.linger.load(Ordering::Relaxed);
                    if fruitless >= FRUITLESS_BLOCKS || !linger {
                        fruitless = 0;
                        // The signals of the block just served may still be
                        // latched: take them, unless the next block opened
                        // meanwhile (then its signal is the one taken, and
                        // the helper joins it).
                        // A signal taken here may be the one that asks the
                        // helper to end: look at that first.
                        waiter.try_wait();
                        if sh.shutdown.load(Ordering::Acquire) {
                            return;
                        }
                        if !(sh.open.load(Ordering::SeqCst) && sh.block.load(Ordering::Relaxed) != served) {
                            break;
                        }
                        continue;
                    }
                }
            }
            spins = spins.wrapping_add(1);
            if spins % 64 == 0 {
                // A new signal (the next block, or an early wake) restarts the budget.
                if waiter.try_wait() {
                    since = Instant::now();
                } else if !sh.linger.load(Ordering::Relaxed) || since.elapsed() >= sh.spin {
                    break;
                } else if sh.patience.is_some_and(|p| since.elapsed() >= p) {
                    // Sharing the CPU: the thread that opens the next block
                    // may be waiting for this one.
                    std::thread::yield_now();
                    continue;
                }
            }
            std::hint::spin_loop();
        }
    }
}

/// Checks in to the open block and works in it; returns its number and the
/// items this helper ran in it, or `None` if it closed first or was already
/// served.
fn join_block(sh: &Shared, worker: usize, served: u64) -> Option<(u64, u32)> {
    sh.inside.fetch_add(1, Ordering::SeqCst);
    let mut joined = None;
    if sh.open.load(Ordering::SeqCst) {
        let block = sh.block.load(Ordering::Relaxed);
        if block != served {
            // SAFETY: we are inside an open block, so the caller of run_block
            // wrote `job` before opening (SeqCst store seen by our SeqCst
            // load) and will not return, nor write `job`, before we leave.
            let job = unsafe { &*sh.job.get() };
            // SAFETY: `job.plan` comes from the `&Plan` of the running block.
            let plan = unsafe { &*job.plan };
            // The items compute as they would on the caller's thread: the
            // same rounding, the same flushing of subnormal numbers (which
            // the audio thread turns on after the pool started), so that
            // every thread count renders the same samples, and no item
            // crawls through subnormal arithmetic on a helper alone.
            adopt_fp_controls(job.fp);
            let guard = AbortOnUnwind;
            let ran = work_loop(
                plan,
                &sh.shares,
                worker,
                &sh.remaining,
                sh.patience,
                None,
                |item, w| {
                    // SAFETY: `job.work` and `job.run` were made together
                    // from the block's `&W`, alive until the block ends.
                    unsafe { (job.run)(job.work, item, w) }
                },
                |w| {
                    // SAFETY: as above.
                    unsafe { (job.idle)(job.work, w) }
                },
                |w| {
                    // SAFETY: as above.
                    unsafe { (job.leave)(job.work, w) }
                },
            );
            std::mem::forget(guard);
            joined = Some((block, ran));
        }
    }
    // Release: everything this helper did in the block happens before the
    // caller's SeqCst load that sees `inside` back at zero.
    sh.inside.fetch_sub(1, Ordering::Release);
    joined
}
