//! The items a block is made of, and the one runner that computes them on
//! whichever thread holds them.
//!
//! An item is one of three kinds:
//! - a single synth, its units in step order (`Synth::calc_contained`);
//! - a lane batch: consecutive synths of one def that may share lanes
//!   ([`may_share_lanes`]) run step by step, step 1 of each, then step 2,
//!   ..., and a step whose unit has a lane kernel computes all of them at
//!   once ([`run_lanes`]);
//! - an ordered run: synths in the order a sequential run computes them,
//!   cut as they come into lane batches and single synths ([`run_ordered`]).
//!
//! The sequential walk (`engine`) runs single synths and the lane batches it
//! finds among a group's children; a parallel group's work items
//! (`parallel`) are ordered runs, on a helper thread or, when the group
//! runs on one thread, on the calling thread one after another. Which
//! synths share lanes, and how they are computed, is decided here for both.
//!
//! The runner knows synths and a world, not the node tree: what a synth's
//! units ask for (done actions, a failure) is carried out by the engine
//! after the item, in tree order.

use crate::synth::{LaneSlot, Synth};
use magnetar_rt::trace;
use magnetar_ugens::{ControlMap, Lanes, WireRef, World, MAX_LANES};
use std::sync::Arc;

/// Whether a synth may run in a lane batch with others of its def: its def
/// is lockstep-safe (or safe but for random numbers, which the synth then
/// draws from its own generator), and none of its controls is mapped to a
/// bus. Equivalent to running alone: the only shared effect of such a
/// synth, one bus write, still happens in synth order.
pub(crate) fn may_share_lanes(s: &Synth) -> bool {
    (s.def.lockstep || (s.def.lockstep_own_rng && s.rgen.is_some()))
        && s.ctx.control_map.iter().all(|m| *m == ControlMap::Own)
}

/// How many of `synths`, from the first, form one lane batch in a scratch
/// area of `scratch_len` samples: the first and the synths after it of the
/// same def that may share lanes, up to `MAX_LANES` and to what the scratch
/// holds (1: the first runs alone).
///
/// # Safety
/// The pointers are to live synths that nothing writes meanwhile.
unsafe fn lane_batch_len(synths: &[*mut Synth], scratch_len: usize) -> usize {
    // SAFETY: the caller vouches for the synths.
    let first = unsafe { &*synths[0] };
    if !may_share_lanes(first) {
        return 1;
    }
    let lanes = (scratch_len / first.def.scratch_len.max(1)).min(MAX_LANES).min(synths.len());
    let mut end = 1;
    while end < lanes {
        // SAFETY: as above.
        let s = unsafe { &*synths[end] };
        if !(Arc::ptr_eq(&s.def, &first.def) && may_share_lanes(s)) {
            break;
        }
        end += 1;
    }
    end
}

/// The order in which a lane batch visits its synths within a step.
///
/// Within a step the synths of a batch are independent (they share nothing
/// but the bus write), so only the step that writes a bus must take them in
/// synth order; the others may go either way. The way matters on a thread
/// whose synths lie in memory just below those of another thread (the first
/// share of a parallel group's items, with synths made one after another):
/// walking its synths upward, step after step, trains the processor's
/// prefetcher on the stride from one synth to the next, and the prefetcher
/// then reads the next synths' lines too, which belong to the other thread.
/// That thread then waits for each of those lines once more when it writes
/// it, to take it back. Walking downward, the prefetcher runs ahead into
/// memory that no other thread writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// In synth order.
    Up,
    /// From the last synth to the first, but for the step that writes a bus.
    Down,
}

/// Runs an ordered run of synths: in their order, consecutive synths of one
/// def that may share lanes as lane batches, the others one at a time. A
/// failing unit marks its synth failed (`Synth::has_failed`); the caller
/// ends it after the run.
///
/// # Safety
/// `synths` are distinct, live synths that nothing else touches meanwhile,
/// each with at most `scratch.len()` samples of wires, and `scratch` is
/// this thread's alone. `controls_known` and `walk` as for [`run_lanes`].
pub(crate) unsafe fn run_ordered(
    synths: &[*mut Synth],
    world: &mut World,
    scratch: &mut [f32],
    controls_known: bool,
    walk: Walk,
) {
    let mut k = 0;
    while k < synths.len() {
        // SAFETY: the caller vouches for the synths.
        let end = k + unsafe { lane_batch_len(&synths[k..], scratch.len()) };
        if end - k >= 2 {
            // SAFETY: as above, and the batch's synths use `end - k` slices
            // of their def's `scratch_len` samples, which the scratch holds
            // (`lane_batch_len`).
            unsafe { run_lanes(&synths[k..end], world, scratch.as_mut_ptr(), controls_known, walk) };
        } else {
            // SAFETY: as above.
            unsafe { &mut *synths[k] }.calc_contained(world, scratch);
        }
        k = end;
    }
}

/// Runs a lane batch: synths of one def that may share lanes, step by step
/// (step 1 of each, then step 2, ...); steps with a lane kernel compute all
/// of them at once, each lane with its synth's exact arithmetic. The steps
/// between two kernels run a synth at a time (all of them for synth 1, then
/// for synth 2, ...), which sets each synth up once for the whole run of
/// steps and computes the same: the synths share nothing but their one bus
/// write, which still happens in synth order. Within each other step they
/// are visited as `walk` says (a lane kernel's lanes then hold them in
/// that order); with [`Walk::Down`] a step that writes a bus runs alone,
/// between the runs of steps before and after it.
///
/// # Safety
/// `synths` are at most `MAX_LANES` distinct, live, built synths of one def
/// that nothing else touches meanwhile, and `scratch` holds `synths.len()`
/// times the def's `scratch_len` samples that nothing else uses. With
/// `controls_known`, every synth ran the whole of its last block and its
/// controls did not change since: its leading control steps hold what they
/// would compute, without looking (`Synth::controls_as_computed`).
pub(crate) unsafe fn run_lanes(
    synths: &[*mut Synth],
    world: &mut World,
    scratch: *mut f32,
    controls_known: bool,
    walk: Walk,
) {
    // SAFETY: the caller vouches for all of it.
    unsafe {
        match walk {
            Walk::Up => run_lanes_walking::<false>(synths, world, scratch, controls_known),
            Walk::Down => run_lanes_walking::<true>(synths, world, scratch, controls_known),
        }
    }
}

/// Fills the lanes of step `si` with the synths of `slots`, in that order.
///
/// # Safety
/// As for the lanes in `run_lanes_walking`.
#[inline(always)]
unsafe fn fill_lanes<'s, 'a>(
    slots: impl Iterator<Item = &'s LaneSlot>,
    lanes: &mut Lanes<'a>,
    si: usize,
    (inputs, outputs): (&'a [WireRef], &'a [WireRef]),
    n: usize,
    bs: usize,
) {
    for ((&slot, unit), io) in slots.zip(&mut lanes.units).zip(&mut lanes.ios) {
        // SAFETY: the caller vouches for the synths, which joined the batch
        // and are reached through the lanes alone until the kernel returns;
        // these are step `si`'s wires in the synth's def, and `si` is one of
        // its steps.
        *unit = Some(unsafe { slot.unit(si) });
        // SAFETY: as above.
        *io = Some(unsafe { slot.wires(inputs, outputs, n, bs) });
    }
}

/// `run_lanes`, walking down (`DOWN`) or up.
///
/// # Safety
/// As for `run_lanes`.
#[inline(always)]
unsafe fn run_lanes_walking<const DOWN: bool>(
    synths: &[*mut Synth],
    world: &mut World,
    scratch: *mut f32,
    controls_known: bool,
) {
    let traced = trace::now();
    assert!(synths.len() <= MAX_LANES, "a lane batch of more synths than a kernel takes");
    // Borrowed, not cloned: the synths of a parallel group share one def,
    // and a clone per lane batch would make its reference count a cache
    // line that the threads take from each other twice per batch, with
    // the def's first fields on it.
    // SAFETY: the caller vouches for the synths; synth 0 holds the def
    // (never replaced while it runs) for the whole call.
    let def: &crate::graph_def::GraphDef = unsafe { &*Arc::as_ptr(&(*synths[0]).def) };
    let sl = def.scratch_len;
    let bs = world.block_size;
    let full = world.full_rate;
    let block = world.buf_rate;
    let rates = [&block, &full];
    // The synths that take further steps, in order: a synth whose unit
    // failed takes no further steps, and the others finish their block.
    // Each is pointed once at its slice of the scratch, its place in the
    // batch.
    let mut live: [*mut Synth; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    // What each live synth's lanes are made of, beside it.
    let mut slots = [LaneSlot::EMPTY; MAX_LANES];
    let mut n_live = 0;
    // A drawing step's kernel needs every synth's own generator.
    let mut own_rngs = true;
    // The synths join in the walk's order and are kept in synth order: bit
    // `l` of `joined` says that synth `l` joined, into `slots[l]`.
    const _: () = assert!(MAX_LANES <= u32::BITS as usize);
    let mut joined = 0u32;
    let mut join = |(l, &sp): (usize, &*mut Synth)| {
        // SAFETY: the caller vouches for the synths; synth `l` uses its own
        // slice of the scratch.
        let s = unsafe { &mut *sp };
        own_rngs &= s.rgen.is_some();
        // SAFETY: as above.
        if !s.has_failed() {
            // SAFETY: as above.
            if let Some(slot) = unsafe { s.join_lanes(scratch.add(l * sl)) } {
                slots[l] = slot;
                joined |= 1 << l;
            }
        }
    };
    if DOWN {
        synths.iter().enumerate().rev().for_each(&mut join);
    } else {
        synths.iter().enumerate().for_each(&mut join);
    }
    for (l, &sp) in synths.iter().enumerate() {
        if joined & (1 << l) != 0 {
            // `n_live <= l`: a slot moves down, or stays.
            live[n_live] = sp;
            slots[n_live] = slots[l];
            n_live += 1;
        }
    }
    let kernel_of = |si: u32| {
        let step = &def.steps[si as usize];
        step.lane.filter(|_| !step.draws || own_rngs)
    };
    // One set of lanes for every kernel step: each fills it from lane 0 and
    // kernels read lanes below `len` only.
    let mut lanes = Lanes::new();
    let calc = &def.calc_steps;
    let mut k = 0;
    while k < calc.len() && n_live > 0 {
        let si = calc[k] as usize;
        let step = &def.steps[si];
        if let Some(kernel) = kernel_of(calc[k]) {
            let rate = if step.audio { &full } else { &block };
            let n = if step.audio { bs } else { 1 };
            let wires = (step.inputs.as_slice(), step.outputs.as_slice());
            // Lane `j` holds the synth visited `j`th: the lanes compute
            // alike, and a kernel that writes a bus writes in lane order.
            let reversed = DOWN && !step.writes_bus;
            // SAFETY: the synths joined the batch above.
            unsafe {
                if reversed {
                    fill_lanes(slots[..n_live].iter().rev(), &mut lanes, si, wires, n, bs);
                } else {
                    fill_lanes(slots[..n_live].iter(), &mut lanes, si, wires, n, bs);
                }
            }
            lanes.len = n_live;
            if step.draws {
                let mut draw = |(&sp, rgen): (&*mut Synth, &mut Option<&mut magnetar_ugens::RGen>)| {
                    // SAFETY: the generator is a field of the synth that
                    // the lanes' parts do not reach; nothing else uses it
                    // during the step.
                    *rgen = unsafe { (*sp).rgen.as_mut() };
                };
                if reversed {
                    live[..n_live].iter().rev().zip(&mut lanes.rgens).for_each(&mut draw);
                } else {
                    live[..n_live].iter().zip(&mut lanes.rgens).for_each(&mut draw);
                }
            }
            // For the kernels of units that write a bus; nothing else
            // reaches the world while the kernel runs.
            lanes.world = &mut *world;
            let failed = crate::contain::contained(|| kernel(&mut lanes, rate)).is_err();
            lanes.world = std::ptr::null_mut();
            if step.draws {
                lanes.rgens = Default::default();
            }
            if failed {
                // The kernel computed every lane at once: all of them failed.
                for &sp in &live[..n_live] {
                    // SAFETY: as above.
                    let s = unsafe { &mut *sp };
                    s.set_step(si);
                    s.recover(world);
                }
                n_live = 0;
            }
            k += 1;
        } else {
            // The steps up to the next one with a kernel, a synth at a time;
            // walking down, a step that writes a bus is a run of its own, in
            // synth order.
            let writes = |si: u32| DOWN && def.steps[si as usize].writes_bus;
            let mut end = k + 1;
            if !writes(calc[k]) {
                while end < calc.len() && kernel_of(calc[end]).is_none() && !writes(calc[end]) {
                    end += 1;
                }
            }
            let reversed = DOWN && !writes(calc[k]);
            // Only steps that draw need a synth's own generator in place.
            let swap_rng = !def.lockstep && calc[k..end].iter().any(|&si| def.steps[si as usize].draws);
            // The def's leading control steps, which a synth whose controls
            // are as they were computed leaves out (they would write what
            // their wires hold).
            let prefix = if k == 0 { def.control_prefix.min(end) } else { 0 };
            // One guard for the run: a synth that fails leaves the others
            // to go on from the one after it.
            let mut from = 0;
            let mut failures = false;
            while from < n_live {
                let mut at = from;
                let ran = crate::contain::contained(|| {
                    // Visit `i` of the run: synth `sp`.
                    let mut calc = |(i, &sp): (usize, &*mut Synth)| {
                        at = i;
                        // SAFETY: as above.
                        let kept = prefix > 0 && (controls_known || unsafe { &*sp }.controls_as_computed());
                        let first = if kept { prefix } else { k };
                        if first < end {
                            // SAFETY: as above; every synth of the batch has this def.
                            // `first..end` are calc steps of that def.
                            unsafe { (*sp).calc_steps(first..end, swap_rng, &rates, world) };
                        }
                    };
                    if reversed {
                        live[..n_live].iter().rev().enumerate().skip(from).for_each(&mut calc);
                    } else {
                        live[..n_live].iter().enumerate().skip(from).for_each(&mut calc);
                    }
                });
                if ran.is_ok() {
                    break;
                }
                let failed = if reversed { n_live - 1 - at } else { at };
                // SAFETY: as above.
                unsafe { &mut *live[failed] }.recover(world);
                failures = true;
                from = at + 1;
            }
            if failures {
                let mut kept = 0;
                for l in 0..n_live {
                    // SAFETY: as above.
                    if !unsafe { &*live[l] }.has_failed() {
                        live[kept] = live[l];
                        slots[kept] = slots[l];
                        kept += 1;
                    }
                }
                n_live = kept;
            }
            k = end;
        }
    }
    trace::span(trace::Kind::LaneBatch, traced, synths.len() as u32, 0);
}
