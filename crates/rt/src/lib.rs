//! Real-time building blocks for magnetar, with no audio knowledge.
//!
//! Everything here is meant for threads that must never surprise at run time:
//! storage is allocated when a structure is created and never afterwards, every
//! queue has a fixed bound, and the side of a structure that a real-time thread
//! holds exposes only operations that cannot block.
//!
//! | module | what lives there |
//! |---|---|
//! | [`spsc`] | wait-free bounded single-producer single-consumer ring buffer |
//! | [`mpsc`] | lock-free bounded multi-producer single-consumer queue |
//! | [`queue`] | one interface over the four ways to feed a real-time consumer, for benches |
//! | [`trylock_queue`] | the "non-blocking mutex" queue: real-time side only uses `try_lock` |
//! | [`periodic`] | periodic tasks: double-buffered hand-over to class threads, deadline misses counted |
//! | [`event`] | futex binary event (signal latches and coalesces; wait blocks) |
//! | [`ilock`] | interruptible lock: a background thread holds it for short steps, the real-time side only tries |
//! | [`thread`] | SCHED_FIFO priority, CPU pinning, `mlockall`, thread names |
//! | [`fallible`] | allocations a pool may refuse (sizes chosen at run time), unwinding with a payload of their own |
//! | [`guard`] | counting global allocator with a per-thread armed flag; per-thread kernel activity |
//! | [`sysguard`] | seccomp filter on real-time threads: allow-list, every other syscall counted by number |
//! | [`histogram`] | fixed-size log-linear latency histogram |
//! | [`trace`] | the threads' timeline in the Chrome / Perfetto trace format, recorded into per-thread rings and written by a thread of its own |
//!
//! # Model checking
//!
//! The lock-free structures ([`spsc`], [`mpsc`], [`event`], [`ilock`], [`periodic`]) reach
//! their atomics through a small shim so that the same code runs under the
//! `loom` model checker:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p magnetar-rt --release loom
//! ```

// The audio path does not panic: `expect` and `panic!` are errors outside
// tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic)]
// Unchecked indexing stays allowed: ring slots, task-table slots and histogram
// buckets are indexed (about 40 sites) by positions masked or checked just
// before.
#![allow(clippy::indexing_slicing)]

#![warn(missing_docs)]

mod sync;

pub mod event;
pub mod fallible;
pub mod guard;
pub mod histogram;
pub mod ilock;
pub mod mpsc;
pub mod periodic;
pub mod queue;
pub mod spsc;
pub mod sysguard;
pub mod thread;
pub mod trace;
pub mod trylock_queue;
