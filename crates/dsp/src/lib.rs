//! The parallel DSP core of magnetar, independent of what a work item is.
//!
//! | module | what lives there |
//! |---|---|
//! | [`queue`] | the tree description and the compiler that turns it into a [`queue::Plan`] |
//! | [`executor`] | the pinned thread pool that runs a plan once per block |
//! | [`ready`] | the bounded lock-free stack of ready queue items |
//! | [`merge`] | per-child contribution logs replayed in child order, for bit-exact bus sums |
//! | [`in_order`] | finished items applied in item order by whichever thread is free, while later items run |
//! | [`pages`] | storage reserved up front on pages of its own, faulted in only where written |
//!
//! The engine walks its node tree (skipping paused nodes), describes it as a
//! [`queue::FlatTree`] or [`queue::Tree`], compiles it into a plan when the
//! tree changed, and calls [`executor::Executor::run_block`] with a
//! [`executor::Work`] that runs one synth per [`queue::ItemId`].
//!
//! ```
//! use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
//! use magnetar_dsp::queue::{ItemId, Plan, Tree, TreeNode};
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! struct Count(AtomicU32);
//! impl Work for Count {
//!     fn run(&self, _item: ItemId, _worker: usize) {
//!         self.0.fetch_add(1, Ordering::Relaxed);
//!     }
//! }
//!
//! let tree = Tree {
//!     root: TreeNode::Par((0..4).map(|i| TreeNode::Item(ItemId(i))).collect()),
//!     satellites: vec![],
//! };
//! let mut plan = Plan::new();
//! plan.compile_into(&tree).unwrap();
//! let config = ExecutorConfig { threads: 2, fifo_priority: None, pin: false, ..Default::default() };
//! let mut pool = Executor::new(config).unwrap();
//! let work = Count(AtomicU32::new(0));
//! pool.run_block(&plan, &work);
//! assert_eq!(work.0.load(Ordering::Relaxed), 4);
//! ```
//!
//! # Model checking
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p magnetar-dsp --release --test loom
//! ```

// The audio path does not panic: `expect` and `panic!` are errors outside
// tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic)]
// Unchecked indexing stays allowed: the plan's arrays are indexed (about 40
// sites) by item numbers that the plan compiler itself produced.
#![allow(clippy::indexing_slicing)]

#![warn(missing_docs)]

mod sync;

pub mod executor;
pub mod in_order;
pub mod merge;
pub mod pages;
pub mod queue;
pub mod ready;
pub mod shares;
