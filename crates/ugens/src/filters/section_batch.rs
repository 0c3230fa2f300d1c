//! A bank of one second-order section inside one synth (six `Ringz` on one
//! source) as one batch step, and the batch steps of several synths run
//! together through the section kernel, sixteen members at a time.
//!
//! Unlike the generic batch (`crate::batch`), a section batch keeps its
//! members' wires resolved (`SecLane`) from one block to the next: they
//! change only when the synth's wires move (another scratch area, when the
//! synth takes another place in a lane batch or another thread), which
//! `Wires::place` tells. Each member still does exactly the arithmetic it
//! would do alone, so the output is the same bit for bit.

use super::twopole::{section_run, Design, SecLane, Section};
use crate::unit::{Construct, Lanes, RateInfo, Unit, UnitCtx, UnitSpec, Wires, WiresPlace, MAX_LANES};

/// The members of one batch step of section `D`.
pub struct SectionBatch<D: Design> {
    members: Vec<Section<D>>,
    /// Inputs and outputs per member.
    ni: usize,
    no: usize,
    /// Each member's lane as resolved for wires at `place`.
    lanes: Vec<SecLane<D>>,
    place: Option<WiresPlace>,
}

// SAFETY: the kept lanes' addresses are followed only during a call whose
// wires are at the place they were resolved for (`SectionBatch::follow`),
// on the thread making that call, as the wires themselves would be.
unsafe impl<D: Design> Send for SectionBatch<D> {}

/// Builds the batch of `spec.lanes` members of section `D`.
pub(crate) fn new_section_batch<D: Design>(
    spec: &UnitSpec<'_>,
    io: &mut Wires<'_>,
    cx: &mut UnitCtx<'_>,
) -> Box<dyn Unit> {
    let lanes = spec.lanes.max(1);
    let ni = io.num_inputs() / lanes;
    let no = io.num_outputs() / lanes;
    let member = UnitSpec { num_inputs: ni, num_outputs: no, lanes: 1, ..*spec };
    let mut members: Vec<Section<D>> = Vec::with_capacity(lanes);
    for l in 0..lanes {
        // SAFETY: member l's outputs are its own (the def gives every output
        // of a step its own span), and only this view is used meanwhile.
        let mut part = unsafe { io.part(l * ni..(l + 1) * ni, l * no..(l + 1) * no) };
        members.push(Section::<D>::new(&member, &mut part, cx));
    }
    Box::new(SectionBatch { members, ni, no, lanes: vec![SecLane::EMPTY; lanes], place: None })
}

impl<D: Design> SectionBatch<D> {
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
            // SAFETY: j < members.len(): one lane per member.
            *lane = SecLane::resolve(&mut part, unsafe { units.add(j) });
        }
        self.place = Some(place);
    }
}

/// Lanes gathered for the section kernel, run whenever sixteen are queued.
struct Queue<D: Design> {
    lanes: [SecLane<D>; MAX_LANES],
    len: usize,
}

impl<D: Design> Queue<D> {
    fn new() -> Self {
        Queue { lanes: [SecLane::EMPTY; MAX_LANES], len: 0 }
    }

    /// Queues the members of `batch`, whose wires are `io`.
    ///
    /// # Safety
    /// `batch`'s members and `io`'s outputs are reached through nothing
    /// else until the queue has run (`flush`), and belong to no batch
    /// queued before; `io` stays live until then.
    #[inline]
    unsafe fn add(&mut self, batch: &mut SectionBatch<D>, io: &Wires<'_>, rate: &RateInfo) {
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
            unsafe { section_run(&self.lanes[..self.len], rate) };
            self.len = 0;
        }
    }
}

impl<D: Design> Unit for SectionBatch<D> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let mut queue = Queue::<D>::new();
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

/// The batch step of several synths of one def (`Registry::add_batch_lanes`):
/// the members of every synth's section batch go through the kernel
/// together, sixteen at a time, so that a synth with a few members fills
/// whole vectors with other synths' members.
pub(crate) fn section_batch_lanes<D: Design>(lanes: &mut Lanes<'_>, rate: &RateInfo) {
    let k = lanes.len;
    let mut batches: [*mut SectionBatch<D>; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    for l in 0..k {
        // A lane that is not filled or not this unit's batch leaves the step
        // uncomputed rather than panic (as the other lane kernels do).
        if lanes.ios[l].is_none() {
            return;
        }
        match lanes.units[l].as_mut().and_then(|u| u.as_any_mut().downcast_mut::<SectionBatch<D>>()) {
            Some(b) => batches[l] = b,
            None => return,
        }
    }
    let mut queue = Queue::<D>::new();
    for l in 0..k {
        let Some(io) = lanes.ios[l].as_ref() else { return };
        // SAFETY: distinct batches borrowed mutably through `lanes` for the
        // whole call, and their wires; nothing else reaches them meanwhile.
        unsafe { queue.add(&mut *batches[l], io, rate) };
    }
    // SAFETY: as above.
    unsafe { queue.flush(rate) };
}
