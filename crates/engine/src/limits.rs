//! Every bound the server keeps, in one place.
//!
//! Two kinds: the sizes a server is started with (scsynth's command-line
//! options, with scsynth's defaults; [`EngineOptions`](crate::EngineOptions)
//! holds the values in force), and fixed bounds that keep a request, a file
//! or a def from taking unbounded time or memory. Each says where it is
//! enforced and what a client sees when it is reached. The bounds that the
//! lower crates keep (OSC nesting, def names, unit sizes, lanes) are
//! re-exported here under the names this module gives them.
//!
//! The memory a running server needs is taken at start-up from these
//! numbers: the audio thread never grows a table past them.

// ---- Set on the command line (scsynth's defaults) ----

/// `-z`: samples in a control block.
pub const DEFAULT_BLOCK_SIZE: usize = 64;
/// `-z` at most (the command line refuses more).
pub const MAX_BLOCK_SIZE: usize = 4096;
/// `-a`: audio bus channels, hardware inputs and outputs included.
pub const DEFAULT_AUDIO_BUSES: usize = 1024;
/// `-c`: control bus channels.
pub const DEFAULT_CONTROL_BUSES: usize = 16384;
/// `-b`: buffers. A command naming a buffer past it answers `/fail`.
pub const DEFAULT_BUFFERS: usize = 1024;
/// `-i`: hardware input channels.
pub const DEFAULT_INPUT_CHANNELS: usize = 8;
/// `-o`: hardware output channels.
pub const DEFAULT_OUTPUT_CHANNELS: usize = 8;
/// `-n`: nodes, groups and synths together. A new node past it answers
/// `/fail` and is not made.
pub const DEFAULT_MAX_NODES: usize = 1024;
/// `-d`: SynthDefs loaded at once. A new def past it is left out, as
/// scsynth leaves it out (`Could not add SynthDef`), and its sender gets a
/// `/fail`; a def replacing one of the same name, or loaded after a
/// `/d_free`, still goes in.
pub const DEFAULT_MAX_SYNTHDEFS: usize = 1024;
/// `-m`: kilobytes of real-time memory, the pool units allocate from. A
/// unit that finds it full fails its synth with `/fail`.
pub const DEFAULT_RT_MEMORY_KB: usize = 8192;
/// `-w`: interconnect (wire) buffers a def may need. A def needing more is
/// left out of `/d_recv` with `/fail` (`wire_bufs`).
pub const DEFAULT_WIRE_BUFS: usize = 64;
/// `-r`: the world's shared random generators (`RandID`, `RandSeed`).
pub const DEFAULT_RANDOM_SEEDS: usize = 64;

// ---- Fixed: commands and messages ----

/// The largest TCP packet; a longer (or negative) length prefix closes that
/// connection, as scsynth does for a packet it cannot buffer.
pub const MAX_TCP_PACKET: usize = 64 << 20;
/// The largest UDP datagram read; the socket's own limit is 65,507 bytes.
pub const MAX_UDP_PACKET: usize = 65536;
/// Bundles nested in bundles at most (deeper is a decode error).
pub use magnetar_protocol::MAX_OSC_NESTING;
/// The largest packet a non-real-time score may hold.
pub use magnetar_protocol::score::MAX_PACKET_LEN as MAX_SCORE_PACKET;
/// The most values one `/s_getn` answers: with a type tag each, they still
/// fit one datagram (scsynth answers a little more, up to its 64 KiB reply
/// packet, and nothing beyond).
pub const MAX_S_GETN_VALUES: i32 = 12_000;
/// No def has more controls than this; longer ranges in `/n_fill`,
/// `/n_mapn` and friends stop here instead of looping for billions of
/// indices that cannot exist.
pub const MAX_CONTROL_RANGE: i32 = 1 << 16;
/// How deep satellites of satellites may nest (each level runs nested on
/// the audio thread's stack); deeper answers `/fail`.
pub const MAX_SATELLITE_NESTING: usize = 64;
/// Deepest indentation `/g_dumpTree` prints (three spaces a level).
pub const MAX_DUMP_INDENT: usize = 64;

// ---- Fixed: defs and units ----

/// Longest name of a control or unit in a def file.
pub use magnetar_synthdef::MAX_NAME_LEN;
/// Longest def name.
pub use magnetar_synthdef::MAX_DEF_NAME_LEN;
/// The most samples one unit may ask the pool for (delay lines, windows).
pub use magnetar_ugens::unit::MAX_UNIT_SAMPLES;
/// `--buffer-memory` (magnetar's own, in MB): all buffers together. 0, the
/// default, is no bound, as scsynth has none; with one, a `/b_alloc*` that
/// would pass it answers `/fail` and leaves its buffer as it was
/// (`BufferCommands::set_memory_limit`).
pub const DEFAULT_BUFFER_MEMORY_MB: u64 = 0;
/// Synths of one def computed side by side by a lane kernel.
pub use magnetar_ugens::MAX_LANES;
/// Disk streaming requests waiting at once (`DiskIn`, `DiskOut`).
pub use magnetar_ugens::disk::MAX_DISK_REQUESTS;

// ---- Fixed: buffers and files ----

/// The largest buffer, in samples, that is allocated (unit code indexes
/// samples with `i32`); a larger `/b_alloc` answers `/fail`.
pub const MAX_BUFFER_SAMPLES: i64 = i32::MAX as i64;
/// scsynth reads at most this many channel indices in the `*Channel` commands.
pub const MAX_CHANNEL_SELECTION: usize = 32;
/// Symlinks followed at most when resolving a path under `-P` (as the
/// kernel's limit).
pub const MAX_SYMLINKS: usize = 40;

// ---- Fixed: parallel groups ----
//
// A parallel group past one of these runs on one thread, in order, with the
// same output: nothing a client sees.

/// Most work items (and merge slots) a parallel group may be cut into.
pub const MAX_PARALLEL_ITEMS: usize = 1024;
/// Most synths a parallel group's subtree may hold to run in parallel.
pub const MAX_PARALLEL_SYNTHS: usize = 4096;
/// Most groups in a parallel group's subtree, itself included.
pub const MAX_PARALLEL_GROUPS: usize = 1024;
/// How deep groups may nest in a parallel group's subtree (the queue's
/// description has room for so many).
pub const MAX_PARALLEL_NESTING: usize = 48;
/// Bus writes (channels) one work item may make per block.
pub const MAX_WRITES_PER_ITEM: usize = 64;
/// Most bus channels the subtree's synths may read and write in a block.
pub const MAX_ACCESSES: usize = 4 * MAX_PARALLEL_SYNTHS;
/// Most buffer writers in a parallel group's subtree.
pub const MAX_BUFFER_WRITES: usize = MAX_PARALLEL_SYNTHS;
/// Most (reader item, earlier writer item) pairs.
pub const MAX_INITS: usize = 2 * MAX_PARALLEL_ITEMS;
/// Most reader-writer pairs checked before giving up on spreading a group.
pub const MAX_CHECKS: usize = 1 << 16;
/// Deepest tree the DSP queue compiles.
pub use magnetar_dsp::queue::MAX_DEPTH as MAX_QUEUE_DEPTH;
