//! Several instances of one unit inside one synth, run by the unit's lane
//! kernel: the per-synth form of the kernels that compute the same step of
//! several synths side by side.
//!
//! A synth with six `Ringz` on one source, or a `Mix` of eight `Saw`s, has
//! independent units of one kind that are ready at the same time. The def's
//! scheduler puts them in one step (see [`crate::registry::Registry::add_batch`]);
//! this unit builds one ordinary unit per member and hands the members to
//! the lane kernel, up to [`MAX_LANES`] at a time. Each member does exactly
//! the arithmetic it would do alone (the lane kernels' contract), so the
//! output is the same bit for bit; the lanes hide the latency of each
//! member's recurrence behind the others'.

use crate::unit::{Construct, LaneKernel, Lanes, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, MAX_LANES};

/// A unit with a lane kernel that may also batch within a synth.
pub trait LaneUnit: Construct {
    /// The unit's lane kernel.
    const KERNEL: LaneKernel;

    /// The lane kernel on units already known to be `Self`: batches hold
    /// their members by type, so they need not find each one's type again
    /// through `Lanes::units` (which this leaves to the kernel to fill if
    /// it wants it).
    ///
    /// # Safety
    /// `units[l]` for `l < lanes.len` point at distinct live units, each
    /// used through nothing else during the call, and `lanes.ios[l]` holds
    /// unit l's wires.
    unsafe fn typed_kernel(units: &[*mut Self; MAX_LANES], lanes: &mut Lanes<'_>, rate: &RateInfo) {
        for l in 0..lanes.len {
            // SAFETY: the caller's contract: distinct, live, unaliased units.
            lanes.units[l] = Some(unsafe { &mut *units[l] });
        }
        (Self::KERNEL)(lanes, rate);
        // Drop the references made here: the caller may fill the lanes
        // again with other units.
        lanes.units = std::array::from_fn(|_| None);
    }
}

/// Whether a unit may join a batch of its kind: an audio-rate unit with one
/// output. (The scheduler only batches units whose inputs have the same
/// rates, so every member has as many inputs as the first.)
pub(crate) fn lane_batchable(spec: &UnitSpec<'_>, _input_rates: &[Rate]) -> bool {
    spec.rate == Rate::Audio && spec.num_outputs == 1 && spec.num_inputs >= 1
}

/// The `spec.lanes` members of a batch step, each unit `M` built on its own
/// part of the step's wires, and how many inputs and outputs each has.
pub(crate) fn build_members<M: Construct>(
    spec: &UnitSpec<'_>,
    io: &mut Wires<'_>,
    cx: &mut UnitCtx<'_>,
) -> (Vec<M>, usize, usize) {
    let lanes = spec.lanes.max(1);
    let ni = io.num_inputs() / lanes;
    let no = io.num_outputs() / lanes;
    let member = UnitSpec { num_inputs: ni, num_outputs: no, lanes: 1, ..*spec };
    let mut members: Vec<M> = Vec::with_capacity(lanes);
    for l in 0..lanes {
        // SAFETY: member l's outputs are its own (the def gives every output
        // of a step its own span), and only this view is used meanwhile.
        let mut part = unsafe { io.part(l * ni..(l + 1) * ni, l * no..(l + 1) * no) };
        members.push(M::new(&member, &mut part, cx));
    }
    (members, ni, no)
}

/// Builds the batch of `spec.lanes` members of unit `U`.
pub(crate) fn new_lane_batch<U: LaneUnit>(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    let (members, ni, no) = build_members::<U>(spec, io, cx);
    Box::new(LaneBatch { members, ni, no })
}

/// The members of one batch step.
pub struct LaneBatch<U: LaneUnit> {
    members: Vec<U>,
    ni: usize,
    no: usize,
}

impl<U: LaneUnit> Unit for LaneBatch<U> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (ni, no) = (self.ni, self.no);
        let mut units: [*mut U; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
        for (c, chunk) in self.members.chunks_mut(MAX_LANES).enumerate() {
            let mut lanes = Lanes::new();
            for (j, unit) in chunk.iter_mut().enumerate() {
                let l = c * MAX_LANES + j;
                // SAFETY: as in `new_lane_batch`: the members' output spans
                // are disjoint, and `io` itself is not used while `lanes` lives.
                let part = unsafe { io.part(l * ni..(l + 1) * ni, l * no..(l + 1) * no) };
                lanes.ios[j] = Some(part);
                units[j] = unit;
            }
            lanes.len = chunk.len();
            // SAFETY: distinct members of this batch, borrowed mutably
            // through `self` for the call; lane j's wires are member j's.
            unsafe { U::typed_kernel(&units, &mut lanes, cx.rate) };
        }
    }

    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        for m in &mut self.members {
            m.dtor(cx);
        }
    }
}

/// The batch step of several synths of one def (`Registry::add_batch_lanes`):
/// the members of every synth's batch go through the unit's lane kernel
/// together, [`MAX_LANES`] at a time, so that a synth with a few members
/// (six `Ringz` on one source) fills whole vectors with other synths'
/// members. Each member does exactly what it does in its own synth's batch.
pub(crate) fn batch_lanes<U: LaneUnit>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let k = lanes.len;
    let Some(batches) = crate::unit::lane_units::<LaneBatch<U>>(lanes) else { return };
    // One set of lanes for every chunk: a kernel reads lanes below `len`
    // only, and each chunk fills those afresh.
    let mut chunk = Lanes::new();
    let mut units: [*mut U; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_ref() else { return };
        // SAFETY: distinct units, borrowed mutably through `lanes` for the
        // whole call; nothing else reaches this batch meanwhile.
        let batch = unsafe { &mut *batches[l] };
        let (ni, no) = (batch.ni, batch.no);
        for (j, unit) in batch.members.iter_mut().enumerate() {
            // SAFETY: as in `LaneBatch::next`: the members' output spans are
            // disjoint, and `io` itself is not used while `chunk` lives.
            let part = unsafe { io.part(j * ni..(j + 1) * ni, j * no..(j + 1) * no) };
            chunk.ios[chunk.len] = Some(part);
            units[chunk.len] = unit;
            chunk.len += 1;
            if chunk.len == MAX_LANES {
                // SAFETY: distinct members of distinct batches, each borrowed
                // only here; lane j's wires are unit j's.
                unsafe { U::typed_kernel(&units, &mut chunk, rate) };
                chunk.len = 0;
            }
        }
    }
    if chunk.len > 0 {
        // SAFETY: as above.
        unsafe { U::typed_kernel(&units, &mut chunk, rate) };
    }
}
