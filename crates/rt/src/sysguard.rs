//! Syscall guard: a seccomp filter on the real-time threads that lets through
//! only an explicit allow-list while the thread does real-time work, and
//! counts every other system call by number.
//!
//! # How it works
//!
//! [`configure`] (once, at start, from an ordinary thread) installs a
//! process-wide `SIGSYS` handler. Each real-time thread then calls
//! [`install_on_this_thread`] (a no-op while the guard is off), which loads a
//! classic-BPF seccomp filter on that thread only (filters are per thread;
//! without `TSYNC` no other thread is affected). The filter answers
//! `SECCOMP_RET_TRAP` for every system call except:
//!
//! - `rt_sigreturn`, which the handler itself needs to return;
//! - `exit` and `exit_group`, so that a thread or process can always end;
//! - calls made from the guard's own trampoline (matched by instruction
//!   pointer), through which the handler executes calls it lets pass;
//! - in [`Mode::Enforce`], the allow-list: `futex` with `FUTEX_WAKE` (the
//!   non-blocking wake the audio thread uses to signal DSP helpers and disk
//!   threads, which the lock-free event makes), and, on helper threads only, `FUTEX_WAIT` (how a
//!   DSP helper parks between blocks when its spin budget ran out; parking is
//!   its idle state, not a wait inside a block); `gettid` (reads the
//!   caller's id, cannot block; the audio thread asks once, at its first
//!   period, to report its id).
//!
//! A real-time thread marks the span of its real-time work with [`enter`]
//! (the audio thread: one driver callback; a helper: its whole serving loop).
//! The handler, on a trapped call:
//!
//! - outside such a span (the driver's own waiting between callbacks, JACK's
//!   FIFO reads and writes, the clock driver's sleep, thread teardown):
//!   executes the call through the trampoline and returns its result, so the
//!   driver keeps working unchanged;
//! - inside, in [`Mode::Enforce`]: counts it by number and does *not*
//!   execute it; the call returns `-ENOSYS`;
//! - inside, in [`Mode::Count`]: counts it (in the allowed table if the
//!   allow-list admits it, else as caught) and executes it. This is the mode
//!   to list what a thread really calls.
//!
//! [`caught_total`] is the number of calls outside the allow-list made
//! inside real-time spans; [`report`] lists them by number.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// What the guard does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No filter is installed.
    Off,
    /// Allow-listed calls run; every other call inside a real-time span is
    /// counted and refused with `-ENOSYS`.
    Enforce,
    /// Every call inside a real-time span is counted and executed.
    Count,
}

/// Which allow-list a thread gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Role {
    /// The driver's audio thread: futex wakes only.
    Audio = 0,
    /// A DSP helper: futex wakes, and futex waits to park.
    Helper = 1,
}

/// Highest syscall number counted individually; higher ones share the last slot.
const SLOTS: usize = 512;

static MODE: AtomicU8 = AtomicU8::new(0);
static PROBE: AtomicBool = AtomicBool::new(false);
static CAUGHT_TOTAL: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const TABLE: [AtomicU64; SLOTS] = [ZERO; SLOTS];
/// Per role (audio thread, helpers): calls caught, and allow-listed calls
/// seen (count mode), by number.
static CAUGHT: [[AtomicU64; SLOTS]; 2] = [TABLE; 2];
static ALLOWED: [[AtomicU64; SLOTS]; 2] = [TABLE; 2];
/// Per role: futex calls inside spans by operation (`FUTEX_CMD_MASK` bits),
/// whether allowed or caught, so that wakes and waits are told apart.
#[allow(clippy::declare_interior_mutable_const)]
const OPS: [AtomicU64; 16] = [ZERO; 16];
static FUTEX_OPS: [[AtomicU64; 16]; 2] = [OPS; 2];
static INSTALL_FAILURES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // const-initialised, no destructor: safe to read from the signal handler.
    static INSIDE: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
    static INSTALLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Enforce,
        2 => Mode::Count,
        _ => Mode::Off,
    }
}

/// The mode `MAGNETAR_RT_GUARD` asks for: `1` enforce, `count` count only,
/// anything else (or unset) off.
pub fn mode_from_env() -> Mode {
    match std::env::var("MAGNETAR_RT_GUARD").as_deref() {
        Ok("1") => Mode::Enforce,
        Ok("count") => Mode::Count,
        _ => Mode::Off,
    }
}

/// Turns the guard on for threads that call [`install_on_this_thread`] from
/// now on, and installs the `SIGSYS` handler. Call once, from an ordinary
/// thread, before the real-time threads start. `probe` makes [`probe`] issue
/// a forbidden call (for tests that show the guard works).
pub fn configure(mode: Mode, probe: bool) -> std::io::Result<()> {
    if mode == Mode::Off {
        return Ok(());
    }
    imp::install_handler()?;
    PROBE.store(probe, Ordering::Relaxed);
    MODE.store(if mode == Mode::Enforce { 1 } else { 2 }, Ordering::Release);
    Ok(())
}

/// Loads the filter on the calling thread, once; returns whether the guard is
/// active on it. Makes two system calls the first time (before the filter
/// exists), none afterwards.
pub fn install_on_this_thread(role: Role) -> bool {
    let mode = mode();
    if mode == Mode::Off {
        return false;
    }
    if INSTALLED.with(|i| i.get()) {
        return true;
    }
    match imp::install_filter(role, mode == Mode::Enforce) {
        Ok(()) => {
            INSTALLED.with(|i| i.set(true));
            true
        }
        Err(_) => {
            INSTALL_FAILURES.fetch_add(1, Ordering::Relaxed);
            false
        }
    }
}

/// A real-time span on this thread; ends when dropped.
pub struct Inside {
    previous: u8,
}

/// Marks the start of real-time work on this thread (the calls it makes are
/// judged against `role`'s allow-list until the returned value is dropped).
/// Costs a thread-local write.
pub fn enter(role: Role) -> Inside {
    let code = match role {
        Role::Audio => 1,
        Role::Helper => 2,
    };
    let previous = INSIDE.with(|i| i.replace(code));
    Inside { previous }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|i| i.set(self.previous));
    }
}

/// If the probe was asked for in [`configure`], makes one `write` system call
/// (to fd -1, so that it does nothing even when executed): lets a test see
/// the count rise.
pub fn probe() {
    if PROBE.load(Ordering::Relaxed) {
        // SAFETY: write with a null buffer of length 0 to an invalid fd reads
        // nothing; it fails with EBADF (or ENOSYS under the guard).
        unsafe { libc::write(-1, std::ptr::null(), 0) };
    }
}

/// Whether the guard is on.
pub fn active() -> bool {
    mode() != Mode::Off
}

/// System calls outside the allow-list made inside real-time spans.
pub fn caught_total() -> u64 {
    CAUGHT_TOTAL.load(Ordering::Relaxed)
}

/// What one role's threads called inside real-time spans: caught calls and
/// allow-listed calls seen ([`Mode::Count`] only) as `(syscall number,
/// count)`, and futex calls as `(operation, count)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Calls outside the allow-list.
    pub caught: Vec<(usize, u64)>,
    /// Allow-listed calls (counted in [`Mode::Count`] only).
    pub allowed: Vec<(usize, u64)>,
    /// futex calls by operation (`FUTEX_WAIT` 0, `FUTEX_WAKE` 1, ...), caught or seen.
    pub futex_ops: Vec<(usize, u64)>,
}

fn nonzero(t: &[AtomicU64]) -> Vec<(usize, u64)> {
    t.iter().enumerate().map(|(n, c)| (n, c.load(Ordering::Relaxed))).filter(|(_, c)| *c > 0).collect()
}

/// What `role`'s threads called so far.
pub fn seen(role: Role) -> Seen {
    let r = role as usize;
    Seen { caught: nonzero(&CAUGHT[r]), allowed: nonzero(&ALLOWED[r]), futex_ops: nonzero(&FUTEX_OPS[r]) }
}

/// One line saying what the guard saw, e.g. `rt guard (enforce): 3 caught;
/// audio thread: caught write(1)x3; allowed futex(202)x10; futex wake x10`.
pub fn report() -> String {
    let mut s = format!(
        "rt guard ({}): {} caught",
        if mode() == Mode::Enforce { "enforce" } else { "count" },
        caught_total()
    );
    let list = |s: &mut String, what: &str, t: &[(usize, u64)]| {
        if !t.is_empty() {
            let _ = write!(s, " {what}");
            for (i, (n, c)) in t.iter().enumerate() {
                let _ = write!(s, "{}{}({n})x{c}", if i == 0 { " " } else { ", " }, imp::name(*n));
            }
        }
    };
    for (role, label) in [(Role::Audio, "audio thread"), (Role::Helper, "helpers")] {
        let seen = seen(role);
        if seen == Seen::default() {
            continue;
        }
        let _ = write!(s, "; {label}:");
        list(&mut s, "caught", &seen.caught);
        list(&mut s, "allowed", &seen.allowed);
        for (op, c) in &seen.futex_ops {
            let name = match *op as i32 {
                libc::FUTEX_WAIT => "wait",
                libc::FUTEX_WAKE => "wake",
                libc::FUTEX_WAIT_BITSET => "wait_bitset",
                libc::FUTEX_WAKE_BITSET => "wake_bitset",
                _ => "op",
            };
            let _ = write!(s, " futex {name}({op})x{c}");
        }
    }
    let failures = INSTALL_FAILURES.load(Ordering::Relaxed);
    if failures > 0 {
        let _ = write!(s, "; the filter could not be installed on {failures} thread(s)");
    }
    s
}

/// Counts syscall `nr` (first argument `a1` after the address) for the
/// thread role `code` (1 audio, 2 helper) in `table`.
fn count(table: &[[AtomicU64; SLOTS]; 2], code: u8, nr: i64, a1: u64) {
    let r = usize::from(code.clamp(1, 2) - 1);
    let slot = usize::try_from(nr).unwrap_or(SLOTS - 1).min(SLOTS - 1);
    table[r][slot].fetch_add(1, Ordering::Relaxed);
    if nr == libc::SYS_futex {
        let op = ((a1 as i32) & libc::FUTEX_CMD_MASK) as usize;
        FUTEX_OPS[r][op.min(15)].fetch_add(1, Ordering::Relaxed);
    }
}

/// Whether `role`'s allow-list admits syscall `nr` with first two arguments
/// `a0`, `a1` (mirrors the filter's checks).
fn admitted(role: u8, nr: i64, a1: u64) -> bool {
    if nr == libc::SYS_gettid {
        return true;
    }
    if nr != libc::SYS_futex {
        return false;
    }
    let op = (a1 as i32) & libc::FUTEX_CMD_MASK;
    op == libc::FUTEX_WAKE || (role == 2 && op == libc::FUTEX_WAIT)
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    use super::*;
    use std::io;

    // The trampoline: `syscall(nr, a1..a6)` in the System V calling
    // convention. The filter lets through calls whose instruction pointer is
    // `magnetar_sysguard_after` (the address right after its `syscall`).
    std::arch::global_asm!(
        ".pushsection .text.magnetar_sysguard,\"ax\",@progbits",
        ".globl magnetar_sysguard_syscall",
        ".type magnetar_sysguard_syscall,@function",
        "magnetar_sysguard_syscall:",
        "mov rax, rdi",
        "mov rdi, rsi",
        "mov rsi, rdx",
        "mov rdx, rcx",
        "mov r10, r8",
        "mov r8, r9",
        "mov r9, [rsp + 8]",
        "syscall",
        ".globl magnetar_sysguard_after",
        "magnetar_sysguard_after:",
        "ret",
        ".size magnetar_sysguard_syscall, . - magnetar_sysguard_syscall",
        ".popsection",
    );

    extern "C" {
        fn magnetar_sysguard_syscall(nr: i64, a1: i64, a2: i64, a3: i64, a4: i64, a5: i64, a6: i64) -> i64;
        static magnetar_sysguard_after: u8;
    }

    const SYS_SECCOMP_CODE: i32 = 1;

    pub(super) fn install_handler() -> io::Result<()> {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler
        // has the SA_SIGINFO signature and only touches atomics, a
        // const-initialised thread-local and the interrupted context.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigsys as *const () as usize;
            // SA_NODEFER: a trap while SIGSYS is blocked kills the process,
            // and a thread can be cancelled (JACK's client thread is, on
            // close) while the handler waits in a call it executes for the
            // driver; the thread's exit then traps again, inside the handler.
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    extern "C" fn on_sigsys(_sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo and ucontext to an
        // SA_SIGINFO handler. For SIGSYS the siginfo union holds
        // { void *call_addr; int syscall; unsigned arch; } at offset 16
        // (after si_signo, si_errno, si_code and padding), so the syscall
        // number is the i32 at offset 24.
        unsafe {
            if (*info).si_code != SYS_SECCOMP_CODE {
                return;
            }
            let nr = *(info as *const u8).add(24).cast::<i32>() as i64;
            let uc = &mut *(ctx as *mut libc::ucontext_t);
            let g = &mut uc.uc_mcontext.gregs;
            let role = INSIDE.with(|i| i.get());
            let a = [
                g[libc::REG_RDI as usize],
                g[libc::REG_RSI as usize],
                g[libc::REG_RDX as usize],
                g[libc::REG_R10 as usize],
                g[libc::REG_R8 as usize],
                g[libc::REG_R9 as usize],
            ];
            let run = if role == 0 {
                true
            } else if admitted(role, nr, a[1] as u64) {
                // Only reached in count mode (enforce lets these through in the filter).
                count(&ALLOWED, role, nr, a[1] as u64);
                true
            } else {
                count(&CAUGHT, role, nr, a[1] as u64);
                CAUGHT_TOTAL.fetch_add(1, Ordering::Relaxed);
                MODE.load(Ordering::Relaxed) == 2
            };
            g[libc::REG_RAX as usize] = if run {
                magnetar_sysguard_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5])
            } else {
                -(libc::ENOSYS as i64)
            };
        }
    }

    fn stmt(code: u16, k: u32) -> libc::sock_filter {
        libc::sock_filter { code, jt: 0, jf: 0, k }
    }

    fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
        libc::sock_filter { code, jt, jf, k }
    }

    /// The filter, as classic BPF over `struct seccomp_data`
    /// (`nr` at 0, `arch` at 4, `instruction_pointer` at 8, `args` at 16).
    pub(super) fn program(role: Role, enforce: bool) -> Vec<libc::sock_filter> {
        // EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE (linux/audit.h).
        const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
        use libc::*;
        const LD_W_ABS: u16 = (BPF_LD | BPF_W | BPF_ABS) as u16;
        const JEQ: u16 = (BPF_JMP | BPF_JEQ | BPF_K) as u16;
        const AND: u16 = (BPF_ALU | BPF_AND | BPF_K) as u16;
        const RET: u16 = (BPF_RET | BPF_K) as u16;
        // Only the address of the label is taken, never read through.
        let after = std::ptr::addr_of!(magnetar_sysguard_after) as u64;
        let mut p = vec![
            // Another ABI (x32, int 0x80): let it be, it is not ours.
            stmt(LD_W_ABS, 4),
            jump(JEQ, AUDIT_ARCH_X86_64, 1, 0),
            stmt(RET, SECCOMP_RET_ALLOW),
            // The trampoline's own call: the handler executes it on purpose.
            stmt(LD_W_ABS, 12),
            jump(JEQ, (after >> 32) as u32, 0, 3),
            stmt(LD_W_ABS, 8),
            jump(JEQ, after as u32, 0, 1),
            stmt(RET, SECCOMP_RET_ALLOW),
            stmt(LD_W_ABS, 0),
            jump(JEQ, SYS_rt_sigreturn as u32, 2, 0),
            jump(JEQ, SYS_exit as u32, 1, 0),
            jump(JEQ, SYS_exit_group as u32, 0, 1),
            stmt(RET, SECCOMP_RET_ALLOW),
        ];
        if enforce {
            // futex: the operation is the low word of args[1] (offset 24).
            p.extend([
                jump(JEQ, SYS_gettid as u32, 0, 1),
                stmt(RET, SECCOMP_RET_ALLOW),
                jump(JEQ, SYS_futex as u32, 0, 5),
                stmt(LD_W_ABS, 24),
                stmt(AND, FUTEX_CMD_MASK as u32),
                jump(JEQ, FUTEX_WAKE as u32, 1, 0),
                jump(JEQ, if role == Role::Helper { FUTEX_WAIT as u32 } else { u32::MAX }, 0, 1),
                stmt(RET, SECCOMP_RET_ALLOW),
            ]);
        }
        p.push(stmt(RET, SECCOMP_RET_TRAP));
        p
    }

    pub(super) fn install_filter(role: Role, enforce: bool) -> io::Result<()> {
        let prog = program(role, enforce);
        let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
        // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) takes integer arguments only;
        // seccomp reads `fprog` and the program it points to, both alive
        // for the call; the kernel copies the program.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// A name for the numbers a real-time thread is likely to call.
    pub(super) fn name(nr: usize) -> &'static str {
        use libc::*;
        let n = nr as i64;
        match n {
            _ if n == SYS_read => "read",
            _ if n == SYS_write => "write",
            _ if n == SYS_futex => "futex",
            _ if n == SYS_mmap => "mmap",
            _ if n == SYS_munmap => "munmap",
            _ if n == SYS_mprotect => "mprotect",
            _ if n == SYS_madvise => "madvise",
            _ if n == SYS_brk => "brk",
            _ if n == SYS_poll => "poll",
            _ if n == SYS_ppoll => "ppoll",
            _ if n == SYS_clock_gettime => "clock_gettime",
            _ if n == SYS_clock_nanosleep => "clock_nanosleep",
            _ if n == SYS_nanosleep => "nanosleep",
            _ if n == SYS_sched_yield => "sched_yield",
            _ if n == SYS_gettid => "gettid",
            _ if n == SYS_getpid => "getpid",
            _ if n == SYS_sendto => "sendto",
            _ if n == SYS_recvfrom => "recvfrom",
            _ if n == SYS_openat => "openat",
            _ if n == SYS_close => "close",
            _ if n == SYS_lseek => "lseek",
            _ if n == SYS_rt_sigprocmask => "rt_sigprocmask",
            _ if n == SYS_sched_setscheduler => "sched_setscheduler",
            _ if n == SYS_sched_getaffinity => "sched_getaffinity",
            _ if n == SYS_sched_setaffinity => "sched_setaffinity",
            _ => "?",
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
mod imp {
    use super::*;
    use std::io;

    pub(super) fn install_handler() -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "the syscall guard exists on x86_64 Linux only"))
    }

    pub(super) fn install_filter(_: Role, _: bool) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "the syscall guard exists on x86_64 Linux only"))
    }

    pub(super) fn name(_: usize) -> &'static str {
        "?"
    }
}

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::*;

    // One test (the guard's state is process-wide): the filter is installed
    // on a thread of its own so that the test harness's threads are not
    // affected.
    #[test]
    fn refuses_and_counts_calls_inside_a_span_only() {
        configure(Mode::Enforce, true).unwrap();
        std::thread::spawn(|| {
            assert!(install_on_this_thread(Role::Audio));
            // Outside a span: executed (EBADF, not ENOSYS).
            // SAFETY: write of zero bytes to an invalid fd.
            let r = unsafe { libc::write(-1, std::ptr::null(), 0) };
            assert_eq!((r, std::io::Error::last_os_error().raw_os_error()), (-1, Some(libc::EBADF)));
            assert_eq!(caught_total(), 0);
            {
                let _inside = enter(Role::Audio);
                probe();
                // SAFETY: as above.
                let r = unsafe { libc::write(-1, std::ptr::null(), 0) };
                assert_eq!((r, std::io::Error::last_os_error().raw_os_error()), (-1, Some(libc::ENOSYS)));
                // A futex wake on a private word nobody waits on: allowed.
                let word = std::sync::atomic::AtomicU32::new(0);
                // SAFETY: FUTEX_WAKE does not access memory through the pointer beyond hashing it.
                let r = unsafe {
                    libc::syscall(libc::SYS_futex, &word, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1, 0, 0, 0)
                };
                assert_eq!(r, 0);
            }
            assert_eq!(caught_total(), 2);
            assert_eq!(seen(Role::Audio).caught, vec![(libc::SYS_write as usize, 2)]);
            assert!(report().contains("write(1)x2"), "{}", report());
        })
        .join()
        .unwrap();
    }
}
