//! A realtime garbage collector for audio threads: the first collector of K. S. Matheussen,
//! "Realtime Audio with Garbage Collection" (2010), "Rollendurchmesserzeitsammler".
//!
//! * The audio thread allocates from a fixed, pre-faulted pointer heap (scanned) or atomic
//!   heap (never scanned) with Poolmem: O(1), no system allocator, no lock.
//! * After each DSP block the engine calls [`Collector::between_blocks`]: it copies the roots
//!   and the used part of the pointer heap into a snapshot within the given budget (once per
//!   second the whole heap, padded to the worst case so that it is heard in rehearsal), then
//!   hands the snapshot to a collector thread.
//! * The collector thread marks conservatively over the snapshot (explicit stack, hash table
//!   of block starts, cached interior and false addresses) and sweeps; a free thread zeroes
//!   dead blocks and hands them back to the audio thread's allocator through a ring.
//! * Root slots can be handed out one per user ([`Collector::claim_root_slot`]); magnetar's
//!   UGens reach the heap this way through `magnetar_ugens::gc_units`.
//! * [`CollectorMode::StopTheWorld`] runs the same mark and sweep inside `between_blocks`
//!   instead (the thesis's `NO_SNAPSHOT` baseline), for benchmarks.
//! * [`CollectorMode::Replicating`] is the thesis's second collector (heap replication, ch. 12):
//!   mutator code stores pointers into the heap with [`Collector::write_ptr`], which also
//!   writes them into a complementary block and logs the slot; `between_blocks` only swaps
//!   the two complementary blocks and copies the roots, so its pause no longer depends on the
//!   heap. The collector thread merges the complementary block into a persistent snapshot
//!   and marks and sweeps it with the same code. A full log chains spare segments the
//!   collector thread hands over; only when none is left is the whole block merged.
//!
//! ```
//! use std::time::Duration;
//! use magnetar_gc::{Collector, GcConfig};
//!
//! let mut gc = Collector::new(GcConfig { pointer_heap_bytes: 1 << 16, atomic_heap_bytes: 1 << 16,
//!     snapshot_bandwidth: Some(1e9), ..GcConfig::default() }).unwrap();
//! let node = gc.alloc(32).unwrap();
//! gc.roots_mut()[0] = node.as_ptr(); // keep it alive
//! gc.between_blocks(Duration::from_millis(1));
//! assert_eq!(gc.stats().allocations, 1);
//! ```

// The audio path does not panic: `expect` and `panic!` are errors outside
// tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic)]
// Unchecked indexing stays allowed: heap words, size classes and snapshot
// pages are indexed (about 30 sites) by offsets and classes computed from the
// heap's own bounds.
#![allow(clippy::indexing_slicing)]

mod collector;
mod config;
mod error;
pub mod ffi;
mod mark;
mod poolmem;
mod region;
mod snapshot;
mod stats;

pub use collector::{BlockReport, Collector, Monitor, RootRegionId, SnapshotKind, MAX_ROOT_REGIONS};
pub use config::{CollectorMode, GcConfig, MAX_LOG_SEGMENTS, WORD};
pub use error::GcError;
pub use snapshot::{measure_memcpy_bandwidth, Bandwidth, CHUNK_BYTES};
pub use stats::{
    GcStats, TimeSummary, WARN_ALLOCATION_FAILED, WARN_BUDGET_BELOW_WORST_CASE, WARN_FULL_SNAPSHOT_MISSED,
    WARN_SAFETY_BUFFER,
};
