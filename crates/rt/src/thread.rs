//! Setting up the current thread for real-time work: SCHED_FIFO priority,
//! CPU pinning, locking memory, naming.
//!
//! Every function returns a [`Result`]: a process without `CAP_SYS_NICE` or an
//! `rtprio` limit cannot get SCHED_FIFO, a container may forbid some CPUs.
//! Callers are expected to warn once and carry on without the feature.
//!
//! ```
//! use magnetar_rt::thread;
//!
//! std::thread::spawn(|| {
//!     thread::set_name("mg-example").unwrap();
//!     if let Err(e) = thread::set_fifo_priority(10) {
//!         eprintln!("warning: {e}"); // e.g. not permitted; keep running
//!     }
//!     let _ = thread::pin_to_cpu(0);
//! })
//! .join()
//! .unwrap();
//! ```

use std::io;

/// Why a thread setting was refused.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    /// The priority is outside what SCHED_FIFO accepts.
    #[error("SCHED_FIFO priority {priority} is outside {min}..={max}")]
    PriorityOutOfRange {
        /// Requested priority.
        priority: i32,
        /// Lowest accepted.
        min: i32,
        /// Highest accepted.
        max: i32,
    },
    /// The kernel refused the scheduling change.
    #[error(
        "could not set SCHED_FIFO priority {priority}: {source} \
         (needs CAP_SYS_NICE or an rtprio limit, e.g. in /etc/security/limits.conf)"
    )]
    Scheduling {
        /// Requested priority.
        priority: i32,
        /// The OS error.
        source: io::Error,
    },
    /// The CPU number cannot be expressed in a CPU set.
    #[error("CPU {cpu} is beyond the largest CPU set ({max} CPUs)")]
    CpuOutOfRange {
        /// Requested CPU.
        cpu: usize,
        /// Size of the CPU set.
        max: usize,
    },
    /// The kernel refused the affinity change (CPU offline or not allowed).
    #[error("could not pin the thread to CPU {cpu}: {source}")]
    Affinity {
        /// Requested CPU.
        cpu: usize,
        /// The OS error.
        source: io::Error,
    },
    /// `mlockall` failed.
    #[error("could not lock memory: {0} (needs CAP_IPC_LOCK or a memlock limit)")]
    LockMemory(io::Error),
    /// The name has a NUL byte or is longer than Linux's 15 bytes.
    #[error("thread name {0:?} must be at most 15 bytes without NUL")]
    BadName(String),
    /// Setting the name failed.
    #[error("could not set thread name: {0}")]
    Name(io::Error),
}

/// The range of SCHED_FIFO priorities (1..=99 on Linux).
pub fn fifo_priority_range() -> (i32, i32) {
    // SAFETY: plain queries without pointers.
    unsafe {
        (
            libc::sched_get_priority_min(libc::SCHED_FIFO),
            libc::sched_get_priority_max(libc::SCHED_FIFO),
        )
    }
}

/// Puts the calling thread under SCHED_FIFO at `priority`.
pub fn set_fifo_priority(priority: i32) -> Result<(), ThreadError> {
    let (min, max) = fifo_priority_range();
    if !(min..=max).contains(&priority) {
        return Err(ThreadError::PriorityOutOfRange { priority, min, max });
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pthread_self() is the calling thread, and `param` is a valid
    // sched_param that outlives the call.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc != 0 {
        return Err(ThreadError::Scheduling {
            priority,
            source: io::Error::from_raw_os_error(rc),
        });
    }
    Ok(())
}

/// Returns the calling thread to the normal time-sharing policy.
pub fn set_normal_priority() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in set_fifo_priority.
    let rc =
        unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &param) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Puts thread `tid` of this process under SCHED_FIFO at `priority`, or
/// back to the normal policy (`None`). Lets an ordinary thread move
/// real-time threads, so that they make no system call for it themselves.
pub fn set_thread_priority(tid: i32, priority: Option<i32>) -> io::Result<()> {
    let (policy, value) = match priority {
        Some(p) => (libc::SCHED_FIFO, p),
        None => (libc::SCHED_OTHER, 0),
    };
    let param = libc::sched_param { sched_priority: value };
    // SAFETY: `param` is a valid sched_param that outlives the call; an
    // unknown tid makes the call fail with ESRCH, nothing else.
    let rc = unsafe { libc::sched_setscheduler(tid, policy, &param) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the calling thread runs under SCHED_FIFO, and at which priority.
pub fn current_fifo_priority() -> Option<i32> {
    let mut policy = 0;
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: both out-pointers point at live locals.
    let rc = unsafe { libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param) };
    (rc == 0 && policy == libc::SCHED_FIFO).then_some(param.sched_priority)
}

/// Restricts the calling thread to run on `cpu` only.
pub fn pin_to_cpu(cpu: usize) -> Result<(), ThreadError> {
    let max = libc::CPU_SETSIZE as usize;
    if cpu >= max {
        return Err(ThreadError::CpuOutOfRange { cpu, max });
    }
    // SAFETY: cpu_set_t is a plain bit array for which all-zero is valid
    // (the empty set); CPU_SET is given an index checked against its size;
    // sched_setaffinity(0, ..) applies to the calling thread and reads
    // exactly size_of::<cpu_set_t>() bytes from a live local.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(ThreadError::Affinity {
            cpu,
            source: io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Lets the calling thread run on CPUs `cpus` only (the kernel picks
/// among them, and moves it between them).
pub fn pin_to_cpus(cpus: std::ops::Range<usize>) -> Result<(), ThreadError> {
    let max = libc::CPU_SETSIZE as usize;
    if cpus.is_empty() || cpus.end > max {
        return Err(ThreadError::CpuOutOfRange { cpu: cpus.end.saturating_sub(1), max });
    }
    // SAFETY: as in `pin_to_cpu`: an all-zero cpu_set_t is the empty set,
    // every index given to CPU_SET is below its size (checked above), and
    // sched_setaffinity reads exactly the size of the live local.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in cpus.clone() {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(ThreadError::Affinity { cpu: cpus.start, source: io::Error::last_os_error() });
    }
    Ok(())
}

/// The CPU the calling thread is running on right now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no arguments; returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// Number of CPUs the calling thread may run on.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Locks the process's current and future pages in RAM, so that the audio
/// thread never takes a page fault to disk.
pub fn lock_memory() -> Result<(), ThreadError> {
    // SAFETY: flag-only call.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc != 0 {
        return Err(ThreadError::LockMemory(io::Error::last_os_error()));
    }
    Ok(())
}

/// Names the calling thread (visible in `top -H`, `ps -L`, debuggers).
pub fn set_name(name: &str) -> Result<(), ThreadError> {
    if name.len() > 15 || name.as_bytes().contains(&0) {
        return Err(ThreadError::BadName(name.to_owned()));
    }
    let mut buf = [0u8; 16];
    buf[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: buf is NUL-terminated (at most 15 name bytes in 16) and lives
    // for the call; the target is the calling thread.
    let rc = unsafe { libc::pthread_setname_np(libc::pthread_self(), buf.as_ptr().cast()) };
    if rc != 0 {
        return Err(ThreadError::Name(io::Error::from_raw_os_error(rc)));
    }
    Ok(())
}

/// The kernel thread id of the calling thread (as in `/proc/self/task/<tid>`).
pub fn current_tid() -> i32 {
    // SAFETY: gettid cannot fail.
    unsafe { libc::gettid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_longer_than_linux_allows_are_refused_not_truncated() {
        assert!(matches!(
            set_name("a-name-that-is-too-long"),
            Err(ThreadError::BadName(_))
        ));
    }

    #[test]
    fn a_named_thread_shows_its_name_in_proc() {
        std::thread::spawn(|| {
            set_name("mg-test-name").unwrap();
            let comm =
                std::fs::read_to_string(format!("/proc/self/task/{}/comm", current_tid())).unwrap();
            assert_eq!(comm.trim(), "mg-test-name");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn out_of_range_priorities_and_cpus_are_errors() {
        assert!(matches!(
            set_fifo_priority(1000),
            Err(ThreadError::PriorityOutOfRange { .. })
        ));
        assert!(matches!(
            pin_to_cpu(1 << 20),
            Err(ThreadError::CpuOutOfRange { .. })
        ));
    }

    #[test]
    fn a_pinned_thread_runs_on_its_cpu() {
        std::thread::spawn(|| {
            if pin_to_cpu(0).is_ok() {
                assert_eq!(current_cpu(), Some(0));
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn fifo_priority_is_applied_or_explained() {
        std::thread::spawn(|| match set_fifo_priority(5) {
            Ok(()) => assert_eq!(current_fifo_priority(), Some(5)),
            Err(e) => assert!(e.to_string().contains("SCHED_FIFO")),
        })
        .join()
        .unwrap();
    }
}
