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

use crate::unit::{Construct, LaneKernel, Lanes, Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, WiresPlace, MAX_LANES};

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

/// A unit whose batches keep each member's wires resolved to addresses
/// (its `Lane`) from one block to the next (two-pole sections, SinOsc):
/// they change only when the synth's wires move (another scratch area,
/// when the synth takes another place in a lane batch or another thread),
/// which `Wires::place` tells. What a lane holds is fixed for the unit's life
/// besides its wires (its input rates, say), so it is kept with them.
pub trait KeptLaneUnit: Construct {
    /// One member: its unit and where its wires are.
    type Lane: Copy;
    /// No unit and no wires: a place to fill.
    const EMPTY: Self::Lane;

    /// Unit `unit`'s lane, its wires being `io`.
    ///
    /// # Safety
    /// `unit` points at a live unit used through nothing else meanwhile.
    unsafe fn resolve(io: &mut Wires<'_>, unit: *mut Self) -> Self::Lane;

    /// Runs `lanes` (at most [`MAX_LANES`], all of one step) through one
    /// block, each with exactly the arithmetic of its unit alone.
    ///
    /// # Safety
    /// The lanes' units are distinct, live and used through nothing else
    /// during the call; each lane was resolved for wires where this block's
    /// are, live for the call, the outputs written through nothing else.
    unsafe fn run_kept(lanes: &[Self::Lane], rate: &RateInfo);
}

/// Builds the batch of `spec.lanes` members of unit `U`, which keeps its
/// members' wires resolved across blocks.
pub(crate) fn new_kept_batch<U: KeptLaneUnit>(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    let (members, ni, no) = build_members::<U>(spec, io, cx);
    let lanes = vec![U::EMPTY; members.len()];
    Box::new(KeptBatch { members, ni, no, lanes, place: None })
}

/// The members of one batch step, with their lanes as resolved for wires
/// at `place`.
pub struct KeptBatch<U: KeptLaneUnit> {
    members: Vec<U>,
    ni: usize,
    no: usize,
    lanes: Vec<U::Lane>,
    place: Option<WiresPlace>,
}

// SAFETY: the kept lanes' addresses are followed only during a call whose
// wires are at the place they were resolved for (`KeptBatch::follow`), on
// the thread making that call, as the wires themselves would be.
unsafe impl<U: KeptLaneUnit> Send for KeptBatch<U> {}

impl<U: KeptLaneUnit> KeptBatch<U> {
    /// The members, in order.
    #[cfg(test)]
    pub(crate) fn members(&self) -> &[U] {
        &self.members
    }

    /// Resolves the members' wires again if `io` is not where they were
    /// resolved last.
    #[inline]
    fn follow(&mut self, io: &Wires<'_>) {
        let place = io.place();
        if self.place == Some(place) {
            return;
        }
        let (ni, no) = (self.ni, self.no);
        // The members never move (nothing is added to or taken from them
        // after the batch is built), so their addresses are kept too.
        let units = self.members.as_mut_ptr();
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            // SAFETY: member j's part of the wires; the view is only read
            // (its addresses taken), nothing is written through it.
            let mut part = unsafe { io.part(j * ni..(j + 1) * ni, j * no..(j + 1) * no) };
            // SAFETY: j < members.len(): one lane per member, live and
            // borrowed through `self`.
            *lane = unsafe { U::resolve(&mut part, units.add(j)) };
        }
        self.place = Some(place);
    }
}

/// Lanes gathered for `U::run_kept`, run whenever [`MAX_LANES`] are queued.
struct KeptQueue<U: KeptLaneUnit> {
    lanes: [U::Lane; MAX_LANES],
    len: usize,
}

impl<U: KeptLaneUnit> KeptQueue<U> {
    fn new() -> Self {
        KeptQueue { lanes: [U::EMPTY; MAX_LANES], len: 0 }
    }

    /// Queues the members of `batch`, whose wires are `io`.
    ///
    /// # Safety
    /// `batch`'s members and `io`'s outputs are reached through nothing
    /// else until the queue has run (`flush`), and belong to no batch
    /// queued before; `io` stays live until then.
    #[inline]
    unsafe fn add(&mut self, batch: &mut KeptBatch<U>, io: &Wires<'_>, rate: &RateInfo) {
        batch.follow(io);
        let mut from = &batch.lanes[..];
        while !from.is_empty() {
            let take = from.len().min(MAX_LANES - self.len);
            self.lanes[self.len..self.len + take].copy_from_slice(&from[..take]);
            self.len += take;
            from = &from[take..];
            if self.len == MAX_LANES {
                // SAFETY: forwarded contract.
                unsafe { self.flush(rate) };
            }
        }
    }

    /// Runs the queued lanes and empties the queue.
    ///
    /// # Safety
    /// As for `add`.
    #[inline]
    unsafe fn flush(&mut self, rate: &RateInfo) {
        if self.len > 0 {
            // SAFETY: distinct members of distinct batches, their lanes
            // resolved for this block's wires (`follow`).
            unsafe { U::run_kept(&self.lanes[..self.len], rate) };
            self.len = 0;
        }
    }
}

impl<U: KeptLaneUnit> Unit for KeptBatch<U> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let mut queue = KeptQueue::<U>::new();
        // SAFETY: the members are borrowed through `self` and the outputs
        // through `io` for the call; nothing else uses either meanwhile.
        unsafe {
            queue.add(self, io, cx.rate);
            queue.flush(cx.rate);
        }
    }

    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        for m in &mut self.members {
            m.dtor(cx);
        }
    }
}

/// The batch step of several synths of one def, for batches that keep
/// their lanes: as [`batch_lanes`], each member doing exactly what it does
/// in its own synth's batch.
pub(crate) fn kept_batch_lanes<U: KeptLaneUnit>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let k = lanes.len;
    let Some(batches) = crate::unit::lane_units::<KeptBatch<U>>(lanes) else { return };
    let mut queue = KeptQueue::<U>::new();
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_ref() else { return };
        // SAFETY: distinct batches borrowed mutably through `lanes` for the
        // whole call, and their wires; nothing else reaches them meanwhile.
        unsafe { queue.add(&mut *batches[l], io, rate) };
    }
    // SAFETY: as above.
    unsafe { queue.flush(rate) };
}

/// What the kept batches' tests (`filters::tests_section_batch`,
/// `osc::tests_kept`) share: synths whose batches join and leave a lane
/// batch and change places from block to block.
#[cfg(test)]
pub(crate) mod tests_kept_support {
    use super::{kept_batch_lanes, KeptLaneUnit};
    use crate::unit::{Lanes, Unit, UnitCtx, WireRef, Wires};

    /// Each of `synths` synths' place (its scratch slice) at block `b`:
    /// the lane batch's synths (`order`) first, in order, then the others,
    /// one slice further on on odd blocks.
    pub(crate) fn places(order: &[usize], synths: usize, b: usize) -> Vec<usize> {
        let mut places = vec![usize::MAX; synths];
        for (p, &s) in order.iter().enumerate() {
            places[s] = p;
        }
        let rest = places.iter_mut().filter(|p| **p == usize::MAX);
        for (at, place) in (order.len() + 1 + b % 2..).zip(rest) {
            *place = at;
        }
        places
    }

    /// The synths' wires: synth s's own array `own[s]`, its scratch the
    /// slice of `slice` samples at its place, its wire lists `ins[s]` and
    /// `outs[s]`.
    pub(crate) struct SynthWires<'a> {
        pub(crate) own: &'a mut [Vec<f32>],
        pub(crate) scratch: &'a mut [f32],
        pub(crate) slice: usize,
        pub(crate) ins: &'a [Vec<WireRef>],
        pub(crate) outs: &'a [Vec<WireRef>],
    }

    /// One block: the batches of the synths in `order` through
    /// `kept_batch_lanes`, in that order, then the others alone, each
    /// synth's scratch at slice `places[s]`.
    pub(crate) fn run_block<U: KeptLaneUnit>(
        batches: &mut [Box<dyn Unit>],
        order: &[usize],
        places: &[usize],
        w: SynthWires<'_>,
        cx: &mut UnitCtx<'_>,
    ) {
        let n = cx.rate.buf_length;
        let (own, scratch) = (w.own.as_mut_ptr(), w.scratch.as_mut_ptr());
        let wires = |s: usize| {
            assert!((places[s] + 1) * w.slice <= w.scratch.len(), "a place outside the scratch");
            // SAFETY: the test's arrays hold every wire named, each synth's
            // scratch slice is its own, and one view per synth is used.
            unsafe { Wires::new((*own.add(s)).as_mut_ptr(), scratch.add(places[s] * w.slice), &w.ins[s], &w.outs[s], n, n) }
        };
        {
            let mut units: Vec<Option<&mut Box<dyn Unit>>> = batches.iter_mut().map(Some).collect();
            let mut lanes = Lanes::new();
            for &s in order {
                lanes.push(units[s].take().unwrap().as_mut(), wires(s));
            }
            kept_batch_lanes::<U>(&mut lanes, cx.rate);
        }
        for s in (0..batches.len()).filter(|s| !order.contains(s)) {
            batches[s].next(&mut wires(s), cx);
        }
    }
}
