//! The synchronisation primitives the lock-free code is built on, taken from
//! `std` normally and from `loom` when model checking (`--cfg loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

/// Busy-wait hint; under loom it lets the model run another thread instead.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with loom's closure-based access API, so that the
/// queue code is written once for both.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// A 32-bit word that threads can sleep on until it changes: the Linux futex,
/// or under loom a model with the same contract (a waiter sleeps only if the
/// word still holds the expected value, checked atomically with going to sleep).
pub(crate) mod futex {
    use super::AtomicU32;
    #[cfg(loom)]
    use super::Ordering;
    use std::time::Duration;

    #[derive(Debug)]
    pub(crate) struct Futex {
        pub(crate) word: AtomicU32,
        #[cfg(loom)]
        lock: loom::sync::Mutex<()>,
        #[cfg(loom)]
        cond: loom::sync::Condvar,
    }

    impl Futex {
        pub(crate) fn new(value: u32) -> Self {
            Self {
                word: AtomicU32::new(value),
                #[cfg(loom)]
                lock: loom::sync::Mutex::new(()),
                #[cfg(loom)]
                cond: loom::sync::Condvar::new(),
            }
        }

        /// Sleeps while the word equals `expected`, or until `timeout` passes.
        /// May return early for any reason; callers re-check the word.
        #[cfg(not(loom))]
        pub(crate) fn wait(&self, expected: u32, timeout: Option<Duration>) {
            let ts;
            let ts_ptr = match timeout {
                Some(d) => {
                    ts = libc::timespec {
                        tv_sec: d.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
                        tv_nsec: d.subsec_nanos() as libc::c_long,
                    };
                    &ts as *const libc::timespec
                }
                None => std::ptr::null(),
            };
            // SAFETY: the word pointer is valid for the duration of the call
            // (borrowed from &self), FUTEX_WAIT_PRIVATE only reads it, and the
            // timeout pointer is null or points at a live timespec. EINTR,
            // EAGAIN and ETIMEDOUT are all treated as "re-check the word".
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    expected,
                    ts_ptr,
                );
            }
        }

        /// Wakes at most `count` threads sleeping on the word.
        #[cfg(not(loom))]
        pub(crate) fn wake(&self, count: u32) {
            // SAFETY: FUTEX_WAKE_PRIVATE does not access memory through the
            // pointer beyond using its address as a key; the pointer is valid.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word.as_ptr(),
                    libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                    count.min(i32::MAX as u32) as libc::c_int,
                );
            }
        }

        #[cfg(loom)]
        pub(crate) fn wait(&self, expected: u32, timeout: Option<Duration>) {
            // loom has no clock: a timed wait is modelled as an immediate timeout.
            if timeout.is_some() {
                loom::thread::yield_now();
                return;
            }
            let guard = self.lock.lock().unwrap();
            if self.word.load(Ordering::SeqCst) != expected {
                return;
            }
            let _guard = self.cond.wait(guard).unwrap();
        }

        #[cfg(loom)]
        pub(crate) fn wake(&self, _count: u32) {
            let _guard = self.lock.lock().unwrap();
            self.cond.notify_all();
        }
    }
}
