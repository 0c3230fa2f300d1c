//! Hosts SuperCollider's scsynth UGen plugins (plugin interface API
//! version 3, SuperCollider 3.10 to 3.13) inside magnetar.
//!
//! [`load`] finds plugin libraries where scsynth looks for them, refuses
//! those that do not fit (no `load`, another API version, supernova
//! builds) with a message naming the file, and calls each one's `load`
//! with an interface table ([`table`]) whose functions reach magnetar's
//! real-time pool, buffers, replies and random generators. [`install`]
//! then registers a [`ForeignUnit`](unit::ForeignUnit) constructor for
//! each unit name a plugin defines and magnetar lacks (or, with
//! [`Prefer`], for names the plugins should take over).
//!
//! This crate is the whole unsafe boundary to plugin code: the C structs
//! plugins read (`ffi`), the table, and the unit that calls a plugin's
//! constructor, calc functions and destructor. Calls into plugin code go
//! through a C++ shim that stops C++ exceptions there.

// The audio path does not panic: `expect` and `panic!` are errors outside
// tests (clippy.toml lets tests use them).
#![warn(clippy::expect_used, clippy::panic)]
// Unchecked indexing stays allowed: a plugin unit's wire arrays are indexed
// (about 20 sites) by input and output numbers below the counts they were
// sized with when the unit was built.
#![allow(clippy::indexing_slicing)]

mod async_cmds;
mod bufgen;
mod ffi;
mod fifo;
mod loader;
mod print;
mod sndfile_format;
mod table;
mod unit;
mod unit_cmds;

pub use async_cmds::{
    start as start_async_commands, take_unit_completions, AsyncCommand, AsyncQueue, InPlaceOutcome, RtStep,
};
pub use bufgen::{run as run_buf_gen, BufGenError};
pub use fifo::{start as start_fifos, Fifos, Message as FifoMessage};
pub use loader::{default_search_paths, unload_all, LoadReport, Options, Prefer, CORE_LIBRARIES};
pub use print::flush as flush_prints;

use magnetar_ugens::Registry;
use std::collections::HashMap;
use std::sync::{Once, OnceLock};

/// A unit a plugin defined with `DefineUnit`.
pub(crate) struct UnitDef {
    pub name: &'static str,
    /// Bytes of the plugin's unit struct (it starts with the C `Unit`).
    pub alloc_size: usize,
    pub ctor: ffi::UnitCtorFunc,
    pub dtor: Option<ffi::UnitDtorFunc>,
    /// `kUnitDef_CantAliasInputsToOutputs` and friends; magnetar never
    /// aliases, so the flags change nothing.
    #[allow(dead_code)]
    pub flags: u32,
    /// The file that defined it, for messages.
    pub library: &'static str,
}

/// A `/cmd` command a plugin defined.
pub(crate) struct PluginCmd {
    pub func: ffi::PlugInCmdFunc,
    pub user: usize,
}

/// Everything the plugins registered; fixed once loading is over.
pub(crate) struct Host {
    pub units: HashMap<&'static str, UnitDef>,
    pub commands: HashMap<String, PluginCmd>,
    /// `/b_gen` generators plugins defined (`DefineBufGen`).
    pub buf_gens: HashMap<String, ffi::BufGenFunc>,
    pub prefer: Prefer,
    pub table: &'static ffi::InterfaceTable,
}

static HOST: OnceLock<Host> = OnceLock::new();

pub(crate) fn host() -> Option<&'static Host> {
    HOST.get()
}

/// Finds and loads the plugins `options` names (see [`Options`]). Every
/// library refused is reported on stderr with its file name; loading goes
/// on with the next. Call once, at boot, before any registry is built.
pub fn load(options: &Options) -> LoadReport {
    let (host, report) = loader::load_all(options);
    if !host.commands.is_empty() {
        // A plugin's `/cmd` runs on the audio thread, which cannot plan.
        prepare_fft();
    }
    if HOST.set(host).is_err() {
        eprintln!("plugins: already loaded; the second load is ignored");
    }
    report
}

/// Makes the windows and FFTW plans of the interface's FFT helpers
/// (`scfft_create` and the rest), once; a transform asked for before then
/// is refused. Planning every size up to 2^15 costs about 300 million
/// instructions (some 30 ms), so it waits for the first plugin code that
/// may ask for one: a def with a plugin unit being compiled (see
/// `magnetar_ugens::registry::set_foreign_prepare`), a buffer generator,
/// or, at load, any plugin command. Never on the audio thread: FFTW's
/// planner allocates and is not thread-safe (the `Once` keeps a second
/// caller waiting until the plans are made).
pub fn prepare_fft() {
    static PLANS: Once = Once::new();
    // SAFETY: the shim's planning, off the audio thread, once.
    PLANS.call_once(|| unsafe { ffi::mg_fft_prepare() });
}

/// Registers the loaded plugin units in `registry`: each name magnetar
/// lacks, and each name the [`Prefer`] option hands to the plugins.
pub fn install(registry: &mut Registry) {
    let Some(host) = host() else { return };
    for name in host.units.keys() {
        let preferred = host.prefer.takes(name);
        if registry.contains(name) && !preferred {
            continue;
        }
        registry.add_foreign(name, unit::construct, preferred);
    }
}

/// Whether a plugin defined `/cmd` command `name`.
pub fn has_plugin_command(name: &str) -> bool {
    host().is_some_and(|h| h.commands.contains_key(name))
}

pub use unit::{run_plugin_command, PluginCommandError};
