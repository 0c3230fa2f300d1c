//! Deterministic summation for parallel groups: each child of a parallel
//! group writes its bus contributions into a private slot, and the slots are
//! replayed in child order afterwards, so that the shared buses receive the
//! same additions, in the same order, as if the group ran sequentially.
//! Parallel output then equals sequential output bit for bit.
//!
//! # Why replay, and not private sums
//!
//! Float addition is not associative: `(bus + a1) + a2` differs from
//! `bus + (a1 + a2)` in the last bit. A slot therefore keeps every
//! contribution separately (target and samples, in the order written) and
//! [`MergeBuffers::replay`] performs exactly the additions the sequential
//! schedule would have performed.
//!
//! # How the engine uses it
//!
//! * The engine gives every parallel group a range of slots, one per child
//!   in child order, and adds a *merge item* after the group in the tree it
//!   hands to the compiler: `Seq[Par[a, b, c], Item(merge)]`. The merge item
//!   runs after every child and before anything that follows the group (it
//!   also serves as the group's barrier).
//! * While a synth under child `k` runs, its `Out`/`OffsetOut` (and any
//!   write that accumulates into a shared bus) calls
//!   [`SlotWriter::add`] on slot `k` instead of adding to the bus; `In` of a
//!   bus adds [`SlotWriter::add_pending`] on top of the bus so that a child
//!   reads its own earlier writes. A `ReplaceOut` is logged the same way,
//!   its target marked as one that sets the bus: the replay applies every
//!   write in child order, so what it drops and keeps is one thread's.
//! * The merge item calls [`MergeBuffers::replay`] over the group's slots
//!   with a closure that adds the samples to the bus (and marks it touched).
//!   For a parallel group nested inside a child of another one, the merge
//!   item instead calls [`MergeBuffers::forward`] into the enclosing slot, so
//!   the outer replay keeps the sequential order across both levels.
//! * Exactness needs a child that reads a bus an earlier sibling writes to
//!   run after it (the engine orders the two in the queue), and to be given
//!   that sibling's logged writes first.
//!
//! ```
//! use magnetar_dsp::merge::MergeBuffers;
//!
//! let merge = MergeBuffers::new(2, 4, 16, 2);
//! // Children run in any order, each into its own slot.
//! merge.writer(1).unwrap().add(0, &[0.25; 4]).unwrap();
//! merge.writer(0).unwrap().add(0, &[0.5; 4]).unwrap();
//! let mut bus = [1.0f32; 4];
//! merge.replay(0..2, |target, samples| {
//!     assert_eq!(target, 0);
//!     for (b, s) in bus.iter_mut().zip(samples) {
//!         *b += s;
//!     }
//! }).unwrap();
//! assert_eq!(bus, [(1.0f32 + 0.5) + 0.25; 4]);
//! ```

use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Why a slot operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// The slot index is outside the buffers.
    #[error("merge slot {0} does not exist")]
    NoSuchSlot(usize),
    /// Another thread holds the slot (two items were given the same slot).
    #[error("merge slot {0} is already in use")]
    SlotBusy(usize),
    /// The slot's contribution list or sample storage is full.
    #[error("merge slot {0} is full")]
    SlotFull(usize),
}

#[derive(Clone, Copy, Debug)]
struct Contribution {
    target: u32,
    start: u32,
    len: u32,
}

/// One slot's log. Its room lies in the buffers' one block; its samples lie
/// there too, or in storage taken from a writer ([`SlotWriter::adopt`]).
#[derive(Debug)]
struct Log {
    /// Room for `max_entries` contributions in the block, the first `len`
    /// of them written.
    entries: *mut Contribution,
    len: usize,
    /// Room for `max_samples` samples in the block, the first `used` of
    /// them written while the samples lie here.
    room: *mut f32,
    used: usize,
    /// Storage given in exchange for a writer's (empty but for the time
    /// between `adopt` and the slot's next clearing, when it holds the
    /// samples): room for `max_samples` in the slots that exchange, none in
    /// the others.
    taken: Vec<f32>,
    /// Whether the samples lie in `taken`.
    adopted: bool,
}

impl Log {
    fn entries(&self) -> &[Contribution] {
        // SAFETY: the slot's room in the block, of which the first `len`
        // entries are written; whoever reaches the log holds the slot or
        // reads it under `visit`'s contract.
        unsafe { std::slice::from_raw_parts(self.entries, self.len) }
    }

    fn samples(&self) -> &[f32] {
        if self.adopted {
            &self.taken
        } else {
            // SAFETY: as in `entries`, the first `used` samples of the room.
            unsafe { std::slice::from_raw_parts(self.room, self.used) }
        }
    }

    fn sample_count(&self) -> usize {
        if self.adopted {
            self.taken.len()
        } else {
            self.used
        }
    }

    /// Appends a contribution; the caller checked the room.
    fn push(&mut self, c: Contribution, max_entries: usize) {
        assert!(self.len < max_entries, "merge slot entries past their room");
        // SAFETY: within the slot's room (checked), which only the writer
        // holding the slot writes.
        unsafe { self.entries.add(self.len).write(c) };
        self.len += 1;
    }

    /// Appends samples; the caller checked the room.
    fn extend(&mut self, samples: &[f32], max_samples: usize) {
        if self.adopted {
            // Within the capacity (at least `max_samples`, checked): it never grows.
            self.taken.extend_from_slice(samples);
        } else {
            assert!(self.used + samples.len() <= max_samples, "merge slot samples past their room");
            // SAFETY: as in `push`; the room and `samples` (the caller's) are apart.
            unsafe { std::ptr::copy_nonoverlapping(samples.as_ptr(), self.room.add(self.used), samples.len()) };
            self.used += samples.len();
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.used = 0;
        self.taken.clear();
        self.adopted = false;
    }
}

/// The room of every slot's log, allocated at once (separate allocations
/// would each touch a page at start-up, a fault apiece, where this one is
/// touched only where written).
#[derive(Debug)]
struct Block {
    base: *mut u8,
    layout: std::alloc::Layout,
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.layout.size() > 0 {
            // SAFETY: allocated in `MergeBuffers::new` with this layout.
            unsafe { std::alloc::dealloc(self.base, self.layout) };
        }
    }
}

#[derive(Debug)]
struct Slot {
    busy: AtomicBool,
    /// What the slot's writer noted for the reader after the run
    /// ([`MergeBuffers::set_note`]).
    note: AtomicU8,
    log: UnsafeCell<Log>,
}

/// Per-child contribution logs with fixed capacity, allocated up front.
#[derive(Debug)]
pub struct MergeBuffers {
    // A cache line (or two) each: threads write neighbouring slots at the
    // same time (a log entry moves the length fields at the slot's start),
    // and slots sharing a line would make each write a transfer between cores.
    slots: Box<[CachePadded<Slot>]>,
    max_entries: usize,
    max_samples: usize,
    /// Holds every log's room; the logs point into it.
    _block: Block,
}

// SAFETY: a slot's log is written only through a `SlotWriter` (or replay /
// forward, which claim the slot the same way), and claiming is an atomic
// swap of `busy`, so at most one thread writes a log at a time; `visit`
// only reads, under a contract that no writer is active meanwhile. The
// logs' pointers lead only into the block, which the buffers own.
unsafe impl Sync for MergeBuffers {}
// SAFETY: as above; the block moves with the buffers (it is not on a stack).
unsafe impl Send for MergeBuffers {}

impl MergeBuffers {
    /// `slots` slots, each holding up to `max_entries` contributions and
    /// `max_samples` samples in total; the first `exchanging` of them may
    /// take a writer's storage in exchange for their own
    /// ([`SlotWriter::adopt`]), the others copy what they are given. The
    /// slots' room is one allocation, touched only where written; each
    /// exchanging slot's storage is one more.
    ///
    /// # Panics
    /// If the room does not fit the address space.
    pub fn new(slots: usize, max_entries: usize, max_samples: usize, exchanging: usize) -> Self {
        // Each slot's room on lines of its own: threads write neighbouring
        // slots at the same time.
        let line = 128;
        let round = |bytes: usize| bytes.div_ceil(line) * line;
        let entry_bytes = round(max_entries * std::mem::size_of::<Contribution>());
        let stride = entry_bytes + round(max_samples * std::mem::size_of::<f32>());
        let size = slots.checked_mul(stride).and_then(|b| b.checked_add(line));
        #[allow(clippy::expect_used)]
        let layout = std::alloc::Layout::from_size_align(size.filter(|_| stride > 0).unwrap_or(0), 16)
            .expect("merge buffers larger than the address space");
        let base = if layout.size() == 0 {
            std::ptr::NonNull::<u8>::dangling().as_ptr()
        } else {
            // SAFETY: a layout of non-zero size. Not zeroed: nothing is read
            // that was not written, and memory never written is never touched.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            p
        };
        let block = Block { base, layout };
        // The first whole line (the allocation is 16-byte aligned).
        let start = (line - base as usize % line) % line;
        let slots = (0..slots)
            .map(|k| {
                let (entries, room) = if layout.size() == 0 {
                    (std::ptr::NonNull::dangling().as_ptr(), std::ptr::NonNull::dangling().as_ptr())
                } else {
                    // SAFETY: `start + k * stride` plus the slot's room lies
                    // in the allocation (`line` bytes more than `slots * stride`).
                    unsafe {
                        let at = base.add(start + k * stride);
                        (at.cast::<Contribution>(), at.add(entry_bytes).cast::<f32>())
                    }
                };
                CachePadded::new(Slot {
                    busy: AtomicBool::new(false),
                    note: AtomicU8::new(0),
                    log: UnsafeCell::new(Log {
                        entries,
                        len: 0,
                        room,
                        used: 0,
                        taken: if k < exchanging { Vec::with_capacity(max_samples) } else { Vec::new() },
                        adopted: false,
                    }),
                })
            })
            .collect();
        Self { slots, max_entries, max_samples, _block: block }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Claims slot `slot` for writing until the writer is dropped.
    pub fn writer(&self, slot: usize) -> Result<SlotWriter<'_>, MergeError> {
        let s = self.slots.get(slot).ok_or(MergeError::NoSuchSlot(slot))?;
        // Acquire: see the previous holder's writes (and a replay's clear).
        if s.busy.swap(true, Ordering::Acquire) {
            return Err(MergeError::SlotBusy(slot));
        }
        Ok(SlotWriter { buffers: self, slot })
    }

    /// Leaves `note` with slot `slot` (if there is one), for whoever reads
    /// the slot after the run: a summary of what it holds, say. It lies on
    /// the slot's own cache lines, which the thread that writes the slot
    /// holds anyway, where a table of notes would be written by every thread
    /// at once. Relaxed: what orders the run's end before the reader orders
    /// this store too.
    pub fn set_note(&self, slot: usize, note: u8) {
        if let Some(s) = self.slots.get(slot) {
            s.note.store(note, Ordering::Relaxed);
        }
    }

    /// The last note left with slot `slot` (0 until one is), or `None`
    /// if there is no such slot.
    pub fn note(&self, slot: usize) -> Option<u8> {
        self.slots.get(slot).map(|s| s.note.load(Ordering::Relaxed))
    }

    /// Hands every contribution of `slots`, slot by slot in index order and
    /// in write order within a slot, to `sink(target, samples)`, then empties
    /// those slots.
    pub fn replay(&self, slots: Range<usize>, mut sink: impl FnMut(u32, &[f32])) -> Result<(), MergeError> {
        for slot in slots {
            let mut w = self.writer(slot)?;
            let log = w.log();
            let samples = log.samples();
            for c in log.entries() {
                sink(c.target, &samples[c.start as usize..(c.start + c.len) as usize]);
            }
            log.clear();
        }
        Ok(())
    }

    /// Hands slot `slot`'s contributions to `sink(target, samples)` in write
    /// order, leaving them in place: how an item that runs after the slot's
    /// writer reads what it wrote. Several readers may visit a slot at once.
    ///
    /// # Safety
    /// The slot's writer must be done, with its writes made visible to this
    /// thread (the queue's order between the two items does both), and no one
    /// may claim the slot until every visit has returned.
    pub unsafe fn visit(&self, slot: usize, mut sink: impl FnMut(u32, &[f32])) -> Result<(), MergeError> {
        let s = self.slots.get(slot).ok_or(MergeError::NoSuchSlot(slot))?;
        if s.busy.load(Ordering::Acquire) {
            return Err(MergeError::SlotBusy(slot));
        }
        // SAFETY: the caller guarantees no writer holds or claims the slot
        // meanwhile, so the log is only read.
        let log = unsafe { &*s.log.get() };
        let samples = log.samples();
        for c in log.entries() {
            sink(c.target, &samples[c.start as usize..(c.start + c.len) as usize]);
        }
        Ok(())
    }

    /// [`visit`](Self::visit), handing consecutive contributions to one
    /// target that lie one after another in the slot's storage and have
    /// one length together, as `sink(target, len, samples)` with `samples`
    /// holding them in write order (`len` samples each): so that a sink can
    /// add many writes to one bus in one pass, the same sums in the same
    /// order.
    ///
    /// # Safety
    /// As [`visit`](Self::visit).
    pub unsafe fn visit_runs(&self, slot: usize, sink: impl FnMut(u32, usize, &[f32])) -> Result<(), MergeError> {
        let s = self.slots.get(slot).ok_or(MergeError::NoSuchSlot(slot))?;
        if s.busy.load(Ordering::Acquire) {
            return Err(MergeError::SlotBusy(slot));
        }
        // SAFETY: as in `visit`.
        let log = unsafe { &*s.log.get() };
        runs(log, sink);
        Ok(())
    }

    /// [`replay`](Self::replay) by runs, as [`visit_runs`](Self::visit_runs)
    /// hands them.
    pub fn replay_runs(&self, slots: Range<usize>, mut sink: impl FnMut(u32, usize, &[f32])) -> Result<(), MergeError> {
        for slot in slots {
            let mut w = self.writer(slot)?;
            let log = w.log();
            runs(log, &mut sink);
            log.clear();
        }
        Ok(())
    }

    /// Appends the contributions of `slots` (in order) to slot `into`, then
    /// empties them: the merge of a parallel group nested in a child of an
    /// outer one.
    pub fn forward(&self, slots: Range<usize>, into: usize) -> Result<(), MergeError> {
        let mut dest = self.writer(into)?;
        let mut result = Ok(());
        self.replay(slots, |target, samples| {
            if result.is_ok() {
                result = dest.add(target, samples);
            }
        })?;
        result
    }
}

/// Hands `log`'s contributions to `sink` by runs (see
/// `MergeBuffers::visit_runs`).
fn runs(log: &Log, mut sink: impl FnMut(u32, usize, &[f32])) {
    let all = log.samples();
    let mut entries = log.entries().iter().peekable();
    while let Some(first) = entries.next() {
        let (start, len) = (first.start as usize, first.len as usize);
        let mut end = start + len;
        let follows =
            |c: &&Contribution, end: usize| c.target == first.target && c.len == first.len && c.start as usize == end;
        while let Some(c) = entries.next_if(|c| follows(c, end)) {
            end += c.len as usize;
        }
        sink(first.target, len, &all[start..end]);
    }
}

/// Exclusive access to one slot; releases it when dropped.
#[derive(Debug)]
pub struct SlotWriter<'a> {
    buffers: &'a MergeBuffers,
    slot: usize,
}

impl SlotWriter<'_> {
    fn log(&mut self) -> &mut Log {
        // SAFETY: this writer claimed the slot (busy swapped false -> true),
        // so no other reference to the log exists until it is dropped.
        unsafe { &mut *self.buffers.slots[self.slot].log.get() }
    }

    /// Empties the slot, for a writer that starts it afresh whether or not
    /// the last replay emptied it.
    pub fn clear(&mut self) {
        self.log().clear();
    }

    /// Records that `samples` are to be added to bus `target`.
    pub fn add(&mut self, target: u32, samples: &[f32]) -> Result<(), MergeError> {
        let (max_entries, max_samples, slot) = (self.buffers.max_entries, self.buffers.max_samples, self.slot);
        let log = self.log();
        if log.len >= max_entries || log.sample_count() + samples.len() > max_samples {
            return Err(MergeError::SlotFull(slot));
        }
        let start = log.sample_count() as u32;
        log.extend(samples, max_samples);
        log.push(Contribution { target, start, len: samples.len() as u32 }, max_entries);
        Ok(())
    }

    /// Takes `samples` as this slot's sample storage, handing the slot's
    /// own (empty) storage back in exchange, so that samples a writer
    /// logged there need not be copied: [`add_in_place`](Self::add_in_place)
    /// then names where each contribution lies in them. Refused (false,
    /// nothing exchanged) when the slot holds contributions already, or
    /// when `samples` has room for fewer than the slot's bound or holds
    /// more (the storage must never grow, here or where it goes).
    pub fn adopt(&mut self, samples: &mut Vec<f32>) -> bool {
        let max_samples = self.buffers.max_samples;
        let log = self.log();
        let fits = log.len == 0
            && log.sample_count() == 0
            && samples.capacity() >= max_samples
            && samples.len() <= max_samples
            && log.taken.capacity() >= samples.capacity();
        if fits {
            std::mem::swap(&mut log.taken, samples);
            log.adopted = true;
        }
        fits
    }

    /// Records that the `len` samples from `start` of this slot's storage
    /// (taken with [`adopt`](Self::adopt)) are to be added to bus `target`.
    pub fn add_in_place(&mut self, target: u32, start: usize, len: usize) -> Result<(), MergeError> {
        if self.add_all_in_place(std::iter::once((target, start, len))) {
            Ok(())
        } else {
            Err(MergeError::SlotFull(self.slot))
        }
    }

    /// [`add_in_place`](Self::add_in_place) for several contributions,
    /// `(target, start, len)` each, in order; false if some did not fit
    /// (those are left out).
    pub fn add_all_in_place(&mut self, contributions: impl Iterator<Item = (u32, usize, usize)>) -> bool {
        let max_entries = self.buffers.max_entries;
        let log = self.log();
        let mut kept = true;
        for (target, start, len) in contributions {
            if log.len >= max_entries || start + len > log.sample_count() {
                kept = false;
                continue;
            }
            log.push(Contribution { target, start: start as u32, len: len as u32 }, max_entries);
        }
        kept
    }

    /// Adds this slot's pending contributions to `target` onto `out`, in
    /// write order, as the bus would hold them in a sequential run.
    pub fn add_pending(&mut self, target: u32, out: &mut [f32]) {
        let log = self.log();
        let all = log.samples();
        for c in log.entries().iter().filter(|c| c.target == target) {
            let samples = &all[c.start as usize..(c.start + c.len) as usize];
            for (o, s) in out.iter_mut().zip(samples) {
                *o += s;
            }
        }
    }
}

impl Drop for SlotWriter<'_> {
    fn drop(&mut self) {
        // Release: the next holder sees what we wrote.
        self.buffers.slots[self.slot].busy.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn replay_adds_contributions_in_slot_order_whatever_order_they_were_written() {
        let merge = MergeBuffers::new(3, 4, 64, 3);
        let values = [1.0e8f32, 1.0, -1.0e8];
        for slot in [2, 0, 1] {
            merge.writer(slot).unwrap().add(7, &[values[slot]]).unwrap();
        }
        let mut bus = 0.0f32;
        merge.replay(0..3, |t, s| {
            assert_eq!(t, 7);
            bus += s[0];
        })
        .unwrap();
        let sequential = ((0.0f32 + 1.0e8) + 1.0) + -1.0e8;
        assert_eq!(bus.to_bits(), sequential.to_bits());
    }

    #[test]
    fn a_slot_cannot_be_claimed_twice_at_once() {
        let merge = MergeBuffers::new(1, 1, 1, 1);
        let w = merge.writer(0).unwrap();
        assert_eq!(merge.writer(0).unwrap_err(), MergeError::SlotBusy(0));
        drop(w);
        assert!(merge.writer(0).is_ok());
        assert_eq!(merge.writer(5).unwrap_err(), MergeError::NoSuchSlot(5));
    }

    #[test]
    fn a_slot_keeps_the_last_note_left_with_it() {
        let merge = MergeBuffers::new(2, 1, 1, 2);
        assert_eq!(merge.note(1), Some(0));
        merge.set_note(1, 2);
        merge.set_note(1, 1);
        merge.set_note(5, 1);
        assert_eq!((merge.note(0), merge.note(1), merge.note(5)), (Some(0), Some(1), None));
    }

    #[test]
    fn a_full_slot_refuses_more_instead_of_growing() {
        let merge = MergeBuffers::new(1, 2, 4, 1);
        let mut w = merge.writer(0).unwrap();
        w.add(0, &[1.0; 3]).unwrap();
        assert_eq!(w.add(0, &[1.0; 2]), Err(MergeError::SlotFull(0)));
        w.add(1, &[1.0]).unwrap();
        assert_eq!(w.add(2, &[]), Err(MergeError::SlotFull(0)));
    }

    #[test]
    fn adopted_samples_replay_in_place_and_the_slot_gives_back_storage_that_never_grows() {
        let merge = MergeBuffers::new(1, 4, 8, 1);
        let mut logged = Vec::with_capacity(8);
        logged.extend_from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
        let mut w = merge.writer(0).unwrap();
        assert!(w.adopt(&mut logged));
        assert!(logged.is_empty() && logged.capacity() >= 8);
        w.add_in_place(9, 2, 2).unwrap();
        w.add_in_place(8, 0, 1).unwrap();
        assert_eq!(w.add_in_place(8, 3, 2), Err(MergeError::SlotFull(0)));
        // Holding contributions now: a second exchange is refused.
        let mut more = Vec::with_capacity(8);
        assert!(!w.adopt(&mut more));
        drop(w);
        let mut seen = Vec::new();
        merge.replay(0..1, |t, s| seen.push((t, s.to_vec()))).unwrap();
        assert_eq!(seen, [(9, vec![3.0, 4.0]), (8, vec![1.0])]);
        // Storage with less room than the slot's bound is refused.
        let mut small = Vec::with_capacity(4);
        assert!(!merge.writer(0).unwrap().adopt(&mut small));
    }

    #[test]
    fn a_slot_that_does_not_exchange_copies_instead_and_replays_the_same() {
        // Slot 0 exchanges, slot 1 does not.
        let merge = MergeBuffers::new(2, 4, 8, 1);
        let mut logged = Vec::with_capacity(8);
        logged.extend_from_slice(&[1.0f32, 2.0]);
        let mut w = merge.writer(1).unwrap();
        assert!(!w.adopt(&mut logged));
        assert_eq!(logged, [1.0, 2.0]);
        w.add(3, &logged).unwrap();
        w.add(4, &[5.0; 6]).unwrap();
        assert_eq!(w.add(4, &[5.0]), Err(MergeError::SlotFull(1)));
        let mut bus = [0.5f32, 0.5];
        w.add_pending(3, &mut bus);
        assert_eq!(bus, [1.5, 2.5]);
        drop(w);
        let mut w = merge.writer(0).unwrap();
        assert!(w.adopt(&mut logged));
        w.add_in_place(3, 0, 2).unwrap();
        drop(w);
        let mut seen = Vec::new();
        merge.replay(0..2, |t, s| seen.push((t, s.to_vec()))).unwrap();
        assert_eq!(seen, [(3, vec![1.0, 2.0]), (3, vec![1.0, 2.0]), (4, vec![5.0; 6])]);
        merge.replay(0..2, |_, _| panic!("the replay emptied the slots")).unwrap();
    }

    #[test]
    fn a_cleared_slot_holds_nothing_and_adopts_again() {
        let merge = MergeBuffers::new(1, 4, 8, 1);
        merge.writer(0).unwrap().add(3, &[1.0, 2.0]).unwrap();
        let mut w = merge.writer(0).unwrap();
        w.clear();
        let mut logged = Vec::with_capacity(8);
        assert!(w.adopt(&mut logged));
        drop(w);
        merge.replay(0..1, |_, _| panic!("a cleared slot replayed")).unwrap();
    }

    #[test]
    fn a_child_reads_its_own_pending_writes() {
        let merge = MergeBuffers::new(1, 4, 8, 1);
        let mut w = merge.writer(0).unwrap();
        w.add(3, &[0.5, 0.5]).unwrap();
        w.add(4, &[9.0, 9.0]).unwrap();
        w.add(3, &[0.25, 0.25]).unwrap();
        let mut bus = [1.0f32, 2.0];
        w.add_pending(3, &mut bus);
        assert_eq!(bus, [1.75, 2.75]);
    }

    #[test]
    fn a_finished_slot_can_be_visited_without_emptying_it() {
        let merge = MergeBuffers::new(2, 4, 8, 2);
        merge.writer(1).unwrap().add(5, &[1.0, 2.0]).unwrap();
        merge.writer(1).unwrap().add(6, &[3.0]).unwrap();
        let mut seen = Vec::new();
        for _ in 0..2 {
            // SAFETY: the writers above are dropped; this thread wrote them.
            unsafe { merge.visit(1, |t, s| seen.push((t, s.to_vec()))) }.unwrap();
        }
        assert_eq!(seen, [(5, vec![1.0, 2.0]), (6, vec![3.0]), (5, vec![1.0, 2.0]), (6, vec![3.0])]);
        let held = merge.writer(0).unwrap();
        // SAFETY: as above; slot 0 is held, which visit reports.
        assert_eq!(unsafe { merge.visit(0, |_, _| ()) }, Err(MergeError::SlotBusy(0)));
        drop(held);
    }

    #[test]
    fn runs_gather_consecutive_writes_to_one_target_that_lie_together() {
        let merge = MergeBuffers::new(2, 8, 16, 2);
        let mut logged = Vec::with_capacity(16);
        logged.extend_from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let mut w = merge.writer(0).unwrap();
        assert!(w.adopt(&mut logged));
        // Two of bus 3 together, one of bus 4, one of bus 3 again, one of
        // bus 3 of another length, one of bus 3 out of place.
        let writes = [(3, 0, 2), (3, 2, 2), (4, 4, 2), (3, 6, 2), (3, 8, 1), (3, 0, 1)];
        assert!(w.add_all_in_place(writes.into_iter()));
        drop(w);
        let mut seen = Vec::new();
        // SAFETY: the writer is dropped; this thread wrote the slot.
        unsafe { merge.visit_runs(0, |t, n, s| seen.push((t, n, s.to_vec()))) }.unwrap();
        let expected = [
            (3, 2, vec![1.0, 2.0, 3.0, 4.0]),
            (4, 2, vec![5.0, 6.0]),
            (3, 2, vec![7.0, 8.0]),
            (3, 1, vec![9.0]),
            (3, 1, vec![1.0]),
        ];
        assert_eq!(seen, expected);
        let mut replayed = Vec::new();
        merge.replay_runs(0..2, |t, n, s| replayed.push((t, n, s.to_vec()))).unwrap();
        assert_eq!(replayed, expected);
        // SAFETY: as above.
        unsafe { merge.visit_runs(0, |_, _, _| panic!("the replay emptied the slot")) }.unwrap();
    }

    #[test]
    fn forward_keeps_the_sequential_order_across_nested_groups() {
        // Outer child 0 = Seq[x, Par[y, z]]: slot 0; inner slots 1, 2.
        let merge = MergeBuffers::new(3, 8, 8, 3);
        merge.writer(2).unwrap().add(0, &[3.0]).unwrap();
        merge.writer(0).unwrap().add(0, &[1.0]).unwrap();
        merge.writer(1).unwrap().add(0, &[2.0]).unwrap();
        merge.forward(1..3, 0).unwrap();
        let mut order = Vec::new();
        merge.replay(0..1, |_, s| order.push(s[0])).unwrap();
        assert_eq!(order, [1.0, 2.0, 3.0]);
    }
}
