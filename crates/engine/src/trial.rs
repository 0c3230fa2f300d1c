//! A trial run of every def as it is loaded, off the audio thread.
//!
//! The SynthDef format lets a def give a UGen any number of inputs and
//! outputs. scsynth trusts the def (a SinOsc without inputs reads whatever
//! lies past its input array); our units index their inputs, so such a def
//! would panic on the audio thread when its first synth is built, and take
//! the server with it. Instead, a def is built and run for two blocks in a
//! world of its own when it is loaded (on the thread that compiles it), and
//! one whose units cannot run as given is refused with the unit named:
//! `/d_recv` fails and nothing else changes. A unit that fails anyway on
//! the audio thread (a path the trial did not reach) ends its own synth
//! (`contain`).

use crate::graph_def::{DefError, GraphDef};
use crate::synth::Synth;
use magnetar_ugens::{SndBuf, World};
use std::sync::{Arc, OnceLock};

/// Counts the bytes the calling thread has allocated so far (the server's
/// global allocator provides it); unset, nothing is measured.
static HEAP_COUNTER: OnceLock<fn() -> u64> = OnceLock::new();

/// Lets the trial measure what building a synth of each def allocates, so
/// that `/s_new` knows a def's real-time memory before its first synth.
pub fn set_heap_counter(counter: fn() -> u64) {
    let _ = HEAP_COUNTER.set(counter);
}

/// Blocks each trial runs after building the units.
const TRIAL_BLOCKS: usize = 2;
/// The trial world: any def's bus and buffer numbers stay valid or are
/// handled as out of range, as in the server's world.
const TRIAL_SAMPLE_RATE: f64 = 48_000.0;
const TRIAL_AUDIO_BUSES: usize = 128;
const TRIAL_CONTROL_BUSES: usize = 4096;
const TRIAL_BUFFERS: usize = 1024;
const TRIAL_CHANNELS: usize = 8;

/// Buffers the second trial fills (numbers 0 to this minus one): units that
/// read a buffer take other paths when it holds samples, and a def may
/// name any of these.
const TRIAL_FILLED_BUFFERS: usize = 16;
const TRIAL_BUFFER_FRAMES: u32 = 1024;

/// Builds a synth of `def` and runs it for a few blocks, once in a world
/// without buffers and once in one whose first buffers hold samples (one
/// channel for even numbers, two for odd); hands the def back if nothing
/// panicked, or names the unit that did.
pub(crate) fn try_run(def: GraphDef, block_size: usize) -> Result<GraphDef, DefError> {
    if def.foreign {
        // Plugin code runs only where scsynth would run it: a trial would
        // call its constructors (files opened, text printed) a second time,
        // on this thread, and a plugin trusts its def as scsynth does.
        return Ok(def);
    }
    crate::contain::install_quiet_hook();
    let def = Arc::new(def);
    // What building a synth allocates, from each trial: the smaller one
    // leaves out the tables units set up once per process on first use.
    let mut built = usize::MAX;
    let mut fixed = usize::MAX;
    for filled in [false, true] {
        let mut world = trial_world(block_size, filled);
        let trial = failed_step(&def, &mut world);
        built = built.min(trial.built);
        fixed = fixed.min(trial.fixed);
        if trial.out_of_memory {
            // A unit asked for more memory than there is (a constant that
            // large): the def is fine, its synths cannot be built, and
            // `/s_new` says so, as scsynth does.
            built = usize::MAX / 4;
            break;
        }
        if let Some(step) = trial.failed {
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
    }
    // Building the synth on the audio thread takes as much from the pool.
    def.construct_bytes.fetch_max(built, std::sync::atomic::Ordering::Relaxed);
    def.fixed_bytes.fetch_max(fixed.min(built), std::sync::atomic::Ordering::Relaxed);
    // The trial synths, the only other holders, are gone.
    Arc::try_unwrap(def).map_err(|def| DefError::CannotRun {
        def: def.name.clone(),
        unit: 0,
        ugen: String::new(),
        inputs: 0,
        outputs: 0,
    })
}

fn trial_world(block_size: usize, filled: bool) -> World {
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
    if filled {
        for (b, buf) in world.buffers.iter_mut().take(TRIAL_FILLED_BUFFERS).enumerate() {
            let channels = 1 + (b % 2) as u32;
            *buf = SndBuf::new(TRIAL_BUFFER_FRAMES, channels, TRIAL_SAMPLE_RATE);
            // A ramp from -1 to 1: table lookups and shapers see every range.
            let n = buf.data.len().max(2);
            for (i, x) in buf.data.iter_mut().enumerate() {
                *x = 2.0 * i as f32 / (n - 1) as f32 - 1.0;
            }
        }
    }
    world
}

/// What one trial synth showed.
struct Trial {
    /// The step whose unit panicked, if one did.
    failed: Option<usize>,
    /// A unit's allocation was refused: more than there is to give.
    out_of_memory: bool,
    /// The bytes building the synth allocated, and the part of them whose
    /// size no control chose (see `magnetar_rt::fallible`).
    built: usize,
    fixed: usize,
}

/// Runs one trial synth of `def` in `world`.
fn failed_step(def: &Arc<GraphDef>, world: &mut World) -> Trial {
    let mut scratch = vec![0.0f32; def.scratch_len.max(1)];
    let mut synth = Synth::new(Arc::clone(def), -1, 0, 0.0);
    // The step being built or run, for the report.
    let mut at = 0usize;
    // Its panics are expected and reported as a refused def, not printed.
    let counter = HEAP_COUNTER.get().copied();
    let mut built_bytes = 0;
    let mut fixed_bytes = 0;
    let outcome = crate::contain::contained(|| {
        let before = counter.map(|c| c());
        let chosen_before = magnetar_rt::fallible::bytes_allocated();
        synth.construct(world, &mut scratch);
        if let (Some(c), Some(b)) = (counter, before) {
            built_bytes = c().saturating_sub(b) as usize;
            let chosen = magnetar_rt::fallible::bytes_allocated().saturating_sub(chosen_before) as usize;
            fixed_bytes = built_bytes.saturating_sub(chosen);
        }
        for _ in 0..TRIAL_BLOCKS {
            for (k, &si) in def.calc_steps.iter().enumerate() {
                at = k;
                let step = &def.steps[si as usize];
                let rate = if step.audio { world.full_rate } else { world.buf_rate };
                // SAFETY: `scratch` holds the def's `scratch_len` samples and
                // is used by this synth alone; `step` is its def's step `si`.
                unsafe { synth.calc_step(si as usize, step, &rate, world, scratch.as_mut_ptr()) };
            }
            world.buf_counter = world.buf_counter.wrapping_add(1);
        }
    });
    let out_of_memory = outcome == Err(crate::contain::Failure::OutOfMemory);
    let failed = match outcome {
        Ok(()) => None,
        Err(crate::contain::Failure::OutOfMemory) => None,
        // A constructor failed: the steps before it were built.
        Err(_) if !synth.is_constructed() || synth.units_built() < def.steps.len() => Some(synth.units_built()),
        Err(_) => Some(def.calc_steps[at] as usize),
    };
    Trial { failed, out_of_memory, built: built_bytes, fixed: fixed_bytes }
}
