//! Proof that a real-time thread keeps the rules: an allocation counter that
//! can be armed per thread, and a snapshot of the kernel's per-thread
//! counters (context switches, read/write system calls, page faults).
//!
//! # Allocations
//!
//! A binary or test opts in by installing [`CountingAlloc`] as its global
//! allocator; then any allocation, reallocation or deallocation made by a
//! thread while an [`AllocGuard`] is armed on it is counted.
//!
//! ```
//! use magnetar_rt::guard::{AllocGuard, CountingAlloc};
//!
//! #[global_allocator]
//! static ALLOC: CountingAlloc<std::alloc::System> = CountingAlloc::new(std::alloc::System);
//!
//! fn main() {
//!     let mut scratch = Vec::<u32>::with_capacity(16); // before arming: fine
//!     let guard = AllocGuard::arm();
//!     scratch.push(1); // within capacity: no allocation
//!     assert_eq!(guard.count(), 0);
//!     let boxed = std::hint::black_box(Box::new(5u8)); // counted
//!     drop(boxed); // counted too
//!     assert_eq!(guard.count(), 2);
//! }
//! ```
//!
//! [`AllocGuard::arm_strict`] panics when the guard is dropped if anything
//! was counted, which is the form tests use. (The allocator itself never
//! panics: unwinding out of an allocator is undefined behaviour.)
//!
//! # System calls
//!
//! Counting every system call of one thread needs tracing (`perf trace`,
//! `strace`), which containers usually forbid. What the kernel does expose
//! per thread, without privileges, is enough to catch the failures that
//! matter: a thread that blocks shows *voluntary context switches*, one that
//! reads or writes files or sockets shows `syscr`/`syscw`, and one that touches
//! unlocked memory shows *page faults*. [`ThreadActivity`] samples those for a
//! thread id; take one sample before and one after a steady-state run and
//! [`diff`](ThreadActivity::since) them. A futex wake made by the thread (for
//! example to wake a helper) is not visible there; for a full count run the
//! binary under `strace -f -c -e trace=all -p <pid>` and read the line of
//! the thread's id, or `perf trace -s --tid <tid>` where perf is allowed.
//! [`sysguard`](crate::sysguard) counts every call of a real-time thread
//! by number, without tracing, with a seccomp filter.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

thread_local! {
    // const-initialised and without destructors, so reading them from inside
    // the allocator never allocates or registers anything.
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
    // The part of COUNT that C code made through `malloc` and friends.
    static C_COUNT: Cell<u64> = const { Cell::new(0) };
}

static TOTAL_ARMED: AtomicU64 = AtomicU64::new(0);
static TOTAL_C_ARMED: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A global allocator wrapper that counts what threads do while armed.
#[derive(Debug, Default)]
pub struct CountingAlloc<A> {
    inner: A,
}

impl<A> CountingAlloc<A> {
    /// Wraps `inner` (usually `std::alloc::System`).
    pub const fn new(inner: A) -> Self {
        Self { inner }
    }
}

#[inline]
fn note() {
    INSTALLED.store(true, Ordering::Relaxed);
    // try_with: during thread teardown the slots may be gone; not counting
    // there is fine, since no guard can be alive then.
    let armed = ARMED.try_with(Cell::get).unwrap_or(false);
    if armed {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        TOTAL_ARMED.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to the wrapped allocator with the same
// arguments and returns its result unchanged; the bookkeeping touches only
// const thread-locals and a static atomic, never the heap.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.realloc(ptr, layout, new_size) }
    }
}

/// While alive, counts this thread's heap operations. Not `Send`: it arms
/// the thread that created it.
#[derive(Debug)]
pub struct AllocGuard {
    was_armed: bool,
    start: u64,
    c_start: u64,
    strict: bool,
    _not_send: PhantomData<*const ()>,
}

impl AllocGuard {
    /// Arms counting on the current thread.
    pub fn arm() -> Self {
        Self::new(false)
    }

    /// Arms counting; dropping the guard panics if anything was counted
    /// (unless the thread is already panicking).
    pub fn arm_strict() -> Self {
        Self::new(true)
    }

    fn new(strict: bool) -> Self {
        let was_armed = ARMED.with(|a| a.replace(true));
        Self {
            was_armed,
            start: allocations_while_armed(),
            c_start: C_COUNT.with(Cell::get),
            strict,
            _not_send: PhantomData,
        }
    }

    /// Heap operations on this thread since this guard was armed.
    pub fn count(&self) -> u64 {
        allocations_while_armed() - self.start
    }

    /// The part of [`count`](Self::count) that C code made (see [`note_c_heap_op`]).
    pub fn c_count(&self) -> u64 {
        C_COUNT.with(Cell::get) - self.c_start
    }
}

impl Drop for AllocGuard {
    // A strict guard exists to fail the test that armed it.
    #[allow(clippy::panic)]
    fn drop(&mut self) {
        let count = self.count();
        ARMED.with(|a| a.set(self.was_armed));
        if self.strict && count > 0 && !std::thread::panicking() {
            panic!("{count} heap allocation(s)/deallocation(s) on a thread that must not allocate");
        }
    }
}

/// Counts one heap operation made by C or C++ code (`malloc`, `free`,
/// `operator new` ...), which a binary that interposes the C allocator
/// calls from its `malloc` and friends: while this thread is armed it
/// counts as any other heap operation, and also as a C one. Touches only
/// const thread-locals and static atomics, never the heap. Kept out of
/// line, so that the counters it adds to are the ones `AllocGuard` reads
/// whichever crate calls it.
#[inline(never)]
pub fn note_c_heap_op() {
    let armed = ARMED.try_with(Cell::get).unwrap_or(false);
    if armed {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        let _ = C_COUNT.try_with(|c| c.set(c.get() + 1));
        TOTAL_ARMED.fetch_add(1, Ordering::Relaxed);
        TOTAL_C_ARMED.fetch_add(1, Ordering::Relaxed);
    }
}

/// C heap operations (see [`note_c_heap_op`]) made while armed, over all threads.
pub fn total_c_allocations_while_armed() -> u64 {
    TOTAL_C_ARMED.load(Ordering::Relaxed)
}

/// Heap operations this thread has made while armed, since it started.
pub fn allocations_while_armed() -> u64 {
    COUNT.with(Cell::get)
}

/// Heap operations made while armed, over all threads.
pub fn total_allocations_while_armed() -> u64 {
    TOTAL_ARMED.load(Ordering::Relaxed)
}

/// Whether [`CountingAlloc`] is the global allocator (it has seen at least
/// one allocation). A test that relies on counts should assert this first:
/// without it every count is silently zero.
pub fn counting_allocator_installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// A snapshot of the kernel's counters for one thread of this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadActivity {
    /// Times the thread gave up the CPU by blocking (sleeping in a syscall).
    pub voluntary_switches: u64,
    /// Times the thread was preempted.
    pub involuntary_switches: u64,
    /// read-family system calls (`read`, `recvmsg`, ...).
    pub read_syscalls: u64,
    /// write-family system calls (`write`, `sendmsg`, ...).
    pub write_syscalls: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// CPU time consumed, in nanoseconds.
    pub cpu_time_ns: u64,
}

impl ThreadActivity {
    /// Samples the calling thread. Reading the counters is itself a few
    /// `read` calls on this thread; to watch a real-time thread, sample it
    /// from another thread with [`of_thread`](Self::of_thread).
    pub fn current() -> io::Result<Self> {
        Self::of_thread(crate::thread::current_tid())
    }

    /// Samples thread `tid` of this process.
    pub fn of_thread(tid: i32) -> io::Result<Self> {
        let dir = format!("/proc/self/task/{tid}");
        let status = std::fs::read_to_string(format!("{dir}/status"))?;
        let field = |name: &str| -> io::Result<u64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| bad(&format!("no {name} in {dir}/status")))
        };
        let mut activity = Self {
            voluntary_switches: field("voluntary_ctxt_switches")?,
            involuntary_switches: field("nonvoluntary_ctxt_switches")?,
            ..Self::default()
        };
        // io accounting may be compiled out of the kernel: leave zeros then.
        if let Ok(io) = std::fs::read_to_string(format!("{dir}/io")) {
            for line in io.lines() {
                let mut parts = line.split(':');
                let (Some(k), Some(v)) = (parts.next(), parts.next()) else {
                    continue;
                };
                let v = v.trim().parse().unwrap_or(0);
                match k {
                    "syscr" => activity.read_syscalls = v,
                    "syscw" => activity.write_syscalls = v,
                    _ => {}
                }
            }
        }
        // stat: the command name is in parentheses and may hold spaces, so
        // count fields from the last ')'. minflt, majflt, utime, stime are
        // fields 10, 12, 14, 15 of the full line.
        let stat = std::fs::read_to_string(format!("{dir}/stat"))?;
        let rest = stat
            .rsplit_once(')')
            .map(|(_, r)| r)
            .ok_or_else(|| bad("malformed stat"))?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        // After ')', field 3 (state) is index 0, so field n is index n - 3.
        activity.minor_faults = num(7).ok_or_else(|| bad("no minflt"))?;
        activity.major_faults = num(9).ok_or_else(|| bad("no majflt"))?;
        activity.cpu_time_ns = thread_cpu_time_ns(tid).unwrap_or(0);
        Ok(activity)
    }

    /// The change from `earlier` to `self`.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            read_syscalls: self.read_syscalls.saturating_sub(earlier.read_syscalls),
            write_syscalls: self.write_syscalls.saturating_sub(earlier.write_syscalls),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            cpu_time_ns: self.cpu_time_ns.saturating_sub(earlier.cpu_time_ns),
        }
    }

    /// True if the thread neither blocked nor did read/write-family I/O.
    pub fn is_quiet(&self) -> bool {
        self.voluntary_switches == 0 && self.read_syscalls == 0 && self.write_syscalls == 0
    }
}

/// CPU time of thread `tid` of this process, from its per-thread CPU clock
/// (Linux encodes the clock id as `(!tid << 3) | CPUCLOCK_SCHED | PERTHREAD`).
fn thread_cpu_time_ns(tid: i32) -> Option<u64> {
    let clock: libc::clockid_t = ((!tid) << 3) | 6;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a live local the call writes into; an invalid clock id
    // makes the call fail with EINVAL, which we report as None.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static ALLOC: CountingAlloc<std::alloc::System> = CountingAlloc::new(std::alloc::System);

    #[test]
    fn allocations_are_counted_only_on_the_armed_thread_and_only_while_armed() {
        let _warm = std::hint::black_box(vec![1u8; 8]);
        assert!(counting_allocator_installed());
        let guard = AllocGuard::arm();
        let other = std::thread::spawn(|| {
            let v = std::hint::black_box(vec![0u64; 100]);
            v.len()
        });
        // Spawning allocates here too; measure from after it.
        let joined = other.join().unwrap();
        let base = guard.count();
        let v = std::hint::black_box(Vec::<u8>::with_capacity(joined));
        drop(v);
        assert_eq!(guard.count() - base, 2);
        drop(guard);
        let after = allocations_while_armed();
        drop(std::hint::black_box(Box::new(1u32)));
        assert_eq!(allocations_while_armed(), after);
    }

    #[test]
    fn nested_guards_restore_the_outer_state() {
        let outer = AllocGuard::arm();
        {
            let _inner = AllocGuard::arm();
        }
        drop(std::hint::black_box(Box::new(1u32)));
        assert_eq!(outer.count(), 2);
    }

    #[test]
    fn c_heap_operations_count_only_while_armed_and_as_c_ones() {
        let before = total_c_allocations_while_armed();
        note_c_heap_op();
        let guard = AllocGuard::arm();
        note_c_heap_op();
        note_c_heap_op();
        // An allocation and its free: two Rust heap operations.
        drop(std::hint::black_box(Box::new(1u32)));
        assert_eq!(guard.count(), 4);
        assert_eq!(guard.c_count(), 2);
        drop(guard);
        note_c_heap_op();
        // Other tests may run armed threads at the same time: at least ours.
        assert!(total_c_allocations_while_armed() - before >= 2);
    }

    #[test]
    #[should_panic(expected = "must not allocate")]
    fn a_strict_guard_panics_when_the_thread_allocated() {
        let _g = AllocGuard::arm_strict();
        drop(std::hint::black_box(Box::new(1u32)));
    }

    #[test]
    fn a_strict_guard_is_silent_when_nothing_was_allocated() {
        let mut buf = Vec::with_capacity(4);
        let _g = AllocGuard::arm_strict();
        buf.push(1u8);
        buf.clear();
    }

    /// Runs `work` on a new thread and samples that thread from this one
    /// around a window in which it runs `work` repeatedly.
    fn activity_of(work: fn()) -> ThreadActivity {
        use std::sync::atomic::AtomicI32;
        use std::sync::Arc;
        let tid = Arc::new(AtomicI32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (tid, stop) = (Arc::clone(&tid), Arc::clone(&stop));
            std::thread::spawn(move || {
                tid.store(crate::thread::current_tid(), Ordering::Release);
                while !stop.load(Ordering::Acquire) {
                    work();
                }
            })
        };
        while tid.load(Ordering::Acquire) == 0 {
            std::thread::yield_now();
        }
        let tid = tid.load(Ordering::Acquire);
        let before = ThreadActivity::of_thread(tid).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let after = ThreadActivity::of_thread(tid).unwrap();
        stop.store(true, Ordering::Release);
        worker.join().unwrap();
        after.since(&before)
    }

    #[test]
    fn a_spinning_thread_is_quiet_and_a_sleeping_one_is_not() {
        let spun = activity_of(|| {
            std::hint::black_box(0u64);
        });
        assert!(spun.is_quiet(), "{spun:?}");
        assert!(spun.cpu_time_ns > 0, "{spun:?}");

        let slept = activity_of(|| std::thread::sleep(std::time::Duration::from_millis(1)));
        assert!(slept.voluntary_switches >= 1, "{slept:?}");
        assert!(!slept.is_quiet());
    }

    #[test]
    fn reading_a_file_shows_up_as_read_syscalls() {
        let before = ThreadActivity::current().unwrap();
        let _ = std::fs::read("/proc/self/comm").unwrap();
        let after = ThreadActivity::current().unwrap().since(&before);
        // Sampling itself reads files; what matters is that reads are seen.
        assert!(after.read_syscalls >= 1, "{after:?}");
    }
}
