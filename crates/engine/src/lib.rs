//! magnetar's engine: the world of buses and buffers, the node tree, the
//! SynthDef library and the commands that edit them. One call renders one
//! block.

// The audio path does not panic: `expect` and `panic!` are errors outside
// tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic)]
// Unchecked indexing stays allowed: the node slab, wire spans and lane arrays
// are indexed (about 200 sites) by positions fixed when a def is compiled or
// the tree is sized.
#![allow(clippy::indexing_slicing)]

pub mod bufgen;
pub mod buffer_cmds;
pub mod commands;
pub mod disk_io;
pub mod contain;
pub mod control;
pub mod engine;
pub mod failure;
pub mod graph_def;
pub mod limits;
pub mod node_tree;
pub mod offline;
pub mod parallel;
pub mod parallel_groups;
pub mod plugin_hooks;
pub mod priorities;
pub mod queries;
mod schedule;
pub mod spread;
pub mod synth;
pub mod tasks;
mod tree_print;
pub mod wire_bufs;

pub use control::{compile_synthdefs, compile_synthdefs_limited};
pub use engine::{flush_denormals_on_this_thread, Engine, EngineOptions, NodeEvent, NodeEventKind};
pub use control::ControlEngine;
pub use graph_def::{DefError, GraphDef};
pub use offline::OfflineEngine;
pub use node_tree::{CalcState, NodeIdx, NodeTree, Position, ROOT};
pub use synth::Synth;
