//! Fault containment on the audio thread and the DSP helpers: a unit that
//! panics while it is built or run ends its own synth (the engine reports it
//! and frees the synth), and the block goes on.
//!
//! The guard is `catch_unwind`, which costs nothing until something panics
//! (Rust unwinds through tables), plus a thread-local counter that keeps the
//! panic hook quiet inside it: printing from the audio thread would be I/O
//! there, and the failure is reported from the control thread instead.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Once};

use crate::graph_def::GraphDef;

thread_local! {
    /// How many contained sections this thread is inside.
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
}

/// Installs (once per process) a panic hook that stays silent for panics
/// inside [`contained`] and hands every other to the hook that was there.
pub(crate) fn install_quiet_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CONTAINED.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Why a contained section did not finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A unit panicked.
    Panicked,
    /// An allocation whose size a unit chose at run time was refused: the
    /// real-time pool could not hold it (`magnetar_rt::fallible`).
    OutOfMemory,
}

/// Runs `f`; a panic inside it comes back as `Err` instead of unwinding
/// further. Whatever `f` was changing may be left half done: the caller
/// restores what it must and discards the rest.
#[inline]
pub(crate) fn contained<R>(f: impl FnOnce() -> R) -> Result<R, Failure> {
    CONTAINED.with(|c| c.set(c.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(c.get() - 1));
    // The payload (the panic message) is dropped here, into the pool on an
    // audio thread.
    result.map_err(|payload| {
        if magnetar_rt::fallible::is_out_of_memory(payload.as_ref()) {
            Failure::OutOfMemory
        } else {
            Failure::Panicked
        }
    })
}

/// A synth that a failing unit ended, for the report to clients.
#[derive(Clone)]
pub struct UnitFailure {
    /// The synth's node id.
    pub node: i32,
    pub def: Arc<GraphDef>,
    /// The unit's index in the def.
    pub unit: usize,
    /// True when it failed while being built (its first block).
    pub constructing: bool,
    /// True when the pool could not hold what its units took (`unit` says
    /// nothing then).
    pub out_of_memory: bool,
}

impl UnitFailure {
    /// The `/fail` text: which def, which unit, which node.
    /// What `/fail` says: scsynth's words when the pool ran out.
    pub fn fail_text(&self) -> String {
        if self.out_of_memory {
            "out of real time memory".to_string()
        } else {
            self.message()
        }
    }

    /// The line for the log.
    pub fn message(&self) -> String {
        if self.out_of_memory {
            let doing = if self.constructing { "building" } else { "running" };
            return format!(
                "out of real time memory: {doing} node {} of SynthDef '{}' took more than the pool (-m) had; the node was freed",
                self.node, self.def.name
            );
        }
        let ugen = self.def.units.get(self.unit).map_or("?", |u| u.name.as_str());
        let when = if self.constructing { "while being built" } else { "while running" };
        format!(
            "unit {} ({ugen}) of SynthDef '{}' failed {when} in node {}; the node was freed",
            self.unit, self.def.name, self.node
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_comes_back_as_an_error_and_the_counter_unwinds() {
        install_quiet_hook();
        assert_eq!(contained(|| 7), Ok(7));
        let failed = contained(|| -> i32 { panic!("on purpose") });
        assert_eq!(failed, Err(Failure::Panicked));
        let refused = contained(|| magnetar_rt::fallible::filled(0.0f32, usize::MAX / 2).len());
        assert_eq!(refused, Err(Failure::OutOfMemory));
        assert_eq!(CONTAINED.with(Cell::get), 0);
    }
}
