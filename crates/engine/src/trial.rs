//! A trial run of every def as it is loaded, off the audio thread.
//!
//! The SynthDef format lets a def give a UGen any number of inputs and
//! outputs. scsynth trusts the def (a SinOsc without inputs reads whatever
//! lies past its input array); our units index their inputs, so such a def
//! would panic on the audio thread when its first synth is built, and take
//! the server with it. Instead, a def is built and run for two blocks in a
//! world of its own when it is loaded (on the thread that compiles it), and
//! one whose units cannot run as given is refused with the unit named:
//! `/d_recv` fails and nothing else changes.

use crate::graph_def::{DefError, GraphDef};
use crate::synth::Synth;
use magnetar_ugens::World;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Once};

/// Blocks each trial runs after building the units.
const TRIAL_BLOCKS: usize = 2;
/// The trial world: any def's bus and buffer numbers stay valid or are
/// handled as out of range, as in the server's world.
const TRIAL_SAMPLE_RATE: f64 = 48_000.0;
const TRIAL_AUDIO_BUSES: usize = 128;
const TRIAL_CONTROL_BUSES: usize = 4096;
const TRIAL_BUFFERS: usize = 1024;
const TRIAL_CHANNELS: usize = 8;

thread_local! {
    /// Set while this thread runs a trial: its panics are expected and
    /// reported as a refused def, not printed.
    static IN_TRIAL: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the panic message of a failed trial off stderr; every other panic
/// still goes to the hook that was there before.
fn quiet_trial_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_TRIAL.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Builds a synth of `def` and runs it for a few blocks; hands the def back
/// if nothing panicked, or names the unit that did.
pub(crate) fn try_run(def: GraphDef, block_size: usize) -> Result<GraphDef, DefError> {
    quiet_trial_panics();
    let def = Arc::new(def);
    let mut world = World::new(
        TRIAL_SAMPLE_RATE,
        block_size,
        TRIAL_AUDIO_BUSES,
        TRIAL_CONTROL_BUSES,
        TRIAL_BUFFERS,
        TRIAL_CHANNELS,
        TRIAL_CHANNELS,
        0,
    );
    let mut scratch = vec![0.0f32; def.scratch_len.max(1)];
    let mut synth = Synth::new(Arc::clone(&def), -1, 0, 0.0);
    // The step being built or run, for the report.
    let mut at = 0usize;
    IN_TRIAL.with(|t| t.set(true));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        synth.construct(&mut world, &mut scratch);
        for _ in 0..TRIAL_BLOCKS {
            for (k, &si) in def.calc_steps.iter().enumerate() {
                at = k;
                let step = &def.steps[si as usize];
                let rate = if step.audio { world.full_rate } else { world.buf_rate };
                // SAFETY: `scratch` holds the def's `scratch_len` samples and
                // is used by this synth alone; `step` is its def's step `si`.
                unsafe { synth.calc_step(si as usize, step, &rate, &mut world, scratch.as_mut_ptr()) };
            }
            world.buf_counter = world.buf_counter.wrapping_add(1);
        }
    }));
    IN_TRIAL.with(|t| t.set(false));
    let failed_step = match outcome {
        Ok(()) => None,
        // A constructor failed: the steps before it were built.
        Err(_) if !synth.is_constructed() || synth.units_built() < def.steps.len() => Some(synth.units_built()),
        Err(_) => Some(def.calc_steps[at] as usize),
    };
    drop(synth);
    if let Some(step) = failed_step {
        let unit = def.steps.get(step).map_or(0, |s| s.unit as usize);
        let ud = &def.units[unit];
        return Err(DefError::CannotRun {
            def: def.name.clone(),
            unit,
            ugen: ud.name.clone(),
            inputs: ud.inputs.len(),
            outputs: ud.outputs.len(),
        });
    }
    // The trial synth, the only other holder, is gone.
    Arc::try_unwrap(def).map_err(|def| DefError::CannotRun {
        def: def.name.clone(),
        unit: 0,
        ugen: String::new(),
        inputs: 0,
        outputs: 0,
    })
}
