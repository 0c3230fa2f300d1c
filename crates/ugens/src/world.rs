//! The shared state units read and write: buses, buffers, rates, the random
//! generator, and the synth a unit belongs to.

use crate::rgen::RGen;
use crate::unit::RateInfo;
use std::ptr::NonNull;
use std::sync::Arc;

/// What the spectral units last left in a buffer (scsynth's `coord`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpectrumForm {
    /// Not written by FFT: the conversions leave it as it is.
    #[default]
    None,
    Complex,
    Polar,
}

/// A sample buffer (SuperCollider's `SndBuf`): interleaved frames.
#[derive(Clone, Debug)]
pub struct SndBuf {
    pub data: Vec<f32>,
    pub channels: u32,
    pub frames: u32,
    pub sample_rate: f64,
    /// Path of the file this buffer was last read from or is open for
    /// writing, as `/b_query` and `/b_close` need it.
    pub path: Option<String>,
    /// The form of the spectrum FFT and the PV units keep in it.
    pub spectrum: SpectrumForm,
    /// Streaming (scsynth's `mask`): the buffer frame at which the open
    /// file ended during the last refill, or -1 if it has not ended.
    pub disk_mask: i32,
    /// Streaming (scsynth's `mask1`): the end of file that DiskIn and
    /// VDiskIn stop at (set done) once they reach it, or -1.
    pub disk_mask1: i32,
    /// Streaming in real time: halves (bit 0 the first, bit 1 the second)
    /// asked for from the disk and not delivered yet; units play silence
    /// rather than such a half's stale contents.
    pub disk_pending: u8,
    /// A buffer holding a response `/b_gen ... "MagnetarConvPrepare"`
    /// prepared: its layout and spectra again, shared read-only by every
    /// unit built on it (`convolution::nupc`), so that instances keep no
    /// copies. Remade off the audio thread after every command that changes
    /// the contents; None when they are not a prepared response.
    pub prepared: Option<Arc<crate::convolution::nupc::PreparedResponse>>,
}

impl Default for SndBuf {
    fn default() -> SndBuf {
        SndBuf {
            data: Vec::new(),
            channels: 0,
            frames: 0,
            sample_rate: 0.0,
            path: None,
            spectrum: SpectrumForm::None,
            disk_mask: -1,
            disk_mask1: -1,
            disk_pending: 0,
            prepared: None,
        }
    }
}

impl SndBuf {
    pub fn new(frames: u32, channels: u32, sample_rate: f64) -> SndBuf {
        SndBuf {
            data: vec![0.0; frames as usize * channels as usize],
            channels,
            frames,
            sample_rate,
            ..SndBuf::default()
        }
    }

    #[inline]
    pub fn samples(&self) -> usize {
        self.frames as usize * self.channels as usize
    }

    /// `samples - 1`: wraps indices when the size is a power of two.
    #[inline]
    pub fn mask(&self) -> i32 {
        self.samples() as i32 - 1
    }

    /// Wavetable mask: `samples/2 - 1` (a wavetable stores value pairs).
    #[inline]
    pub fn mask1(&self) -> i32 {
        (self.samples() / 2) as i32 - 1
    }

    #[inline]
    pub fn is_allocated(&self) -> bool {
        !self.data.is_empty()
    }
}

/// What a synth control reads from: its own value, or a bus (`/n_map*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ControlMap {
    #[default]
    Own,
    ControlBus(u32),
    AudioBus(u32),
}

/// Most `/tr` and SendReply messages (and Poll lines) queued in one block;
/// past that a unit drops its message rather than grow the queue on the
/// audio thread, and the drop is counted (`World::dropped_triggers`).
pub const MAX_TRIGGERS_PER_BLOCK: usize = 256;

/// A `/tr` or SendReply message that units queue for the engine to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    pub node_id: i32,
    pub id: i32,
    /// `None` for `/tr` (uses `values[0]`); the address for SendReply.
    pub cmd: Option<String>,
    pub values: Vec<f32>,
}

/// A value `Poll` reports: printed as `label: value` by the server.
#[derive(Clone, Debug)]
pub struct PollLine {
    pub label: std::sync::Arc<str>,
    pub value: f32,
    /// For `Dpoll`: the sample of the block at which the value was asked for, printed after it.
    pub block_offset: Option<u32>,
}

/// One bus write, as logged for replay: which bus, whether the write
/// replaced the bus's content or mixed into it, and where what it wrote
/// starts in `World::touch_data` (a block for an audio bus, one value for
/// a control bus).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusTouch {
    pub audio: bool,
    pub replace: bool,
    pub bus: u32,
    pub at: u32,
}

/// A view of another world's buffer list (see [`World::lend_buffers`]).
#[derive(Default, Clone, Copy)]
pub struct LentBuffers(Option<(*mut SndBuf, usize)>);

// SAFETY: the view is used only while its lender keeps the buffer list
// unchanged, and a buffer is written through it only by the one thread
// that alone touches that buffer (`World::lend_buffers`' contract); plain
// buffer data may be read from several threads at once.
unsafe impl Send for LentBuffers {}
// SAFETY: as for `Send`, just above.
unsafe impl Sync for LentBuffers {}

/// Another world's buses, written straight by `Out`/`ReplaceOut` in a
/// worker's private world for the bus channels that `owner` gives to the
/// work item running (see [`World::direct`]): no other item of the group
/// reads or writes such a channel and no synth of the group reads it, so
/// writing it in place, as the item goes, is what logging the write and
/// applying it after the item did, without the two copies.
#[derive(Clone, Copy)]
pub struct DirectBuses {
    pub audio: *mut f32,
    pub audio_touched: *mut i32,
    pub audio_count: usize,
    pub control: *mut f32,
    pub control_touched: *mut i32,
    pub control_count: usize,
    /// Per bus channel (audio buses, then control buses): the item whose
    /// writes go straight to it, `u32::MAX` for none, or
    /// [`DirectBuses::IN_ORDER`], complemented (`!item`): a table of zeros
    /// gives no channel to any item, and needs no filling.
    pub owner: *const u32,
    /// The item now running on this world's thread.
    pub item: u32,
    /// Whether every earlier item's writes are on the buses already: the
    /// running item then writes the `IN_ORDER` channels straight too.
    pub in_order: bool,
}

// SAFETY: set by the engine only while a parallel group runs, pointing at
// the main world's buses (alive and unmoved meanwhile) and at a table the
// group only reads; a channel is written only through the one world whose
// running item the table names (or, for `IN_ORDER` channels, whose item
// runs in order, of which there is one at a time), and read by no other
// thread meanwhile.
unsafe impl Send for DirectBuses {}
// SAFETY: as for `Send`, just above.
unsafe impl Sync for DirectBuses {}

impl DirectBuses {
    /// An `owner` entry for a channel that several items write and no
    /// synth of the group reads: whichever item runs when all the items
    /// before it have their writes on the buses writes it in place (it
    /// comes next in the order the writes must be made).
    pub const IN_ORDER: u32 = u32::MAX - 1;

    /// Whether the running item writes in place a channel whose `owner`
    /// entry is `entry` (complemented).
    #[inline]
    fn takes(&self, entry: u32) -> bool {
        let owner = !entry;
        owner == self.item || (self.in_order && owner == Self::IN_ORDER)
    }

    /// Audio bus `bus`'s block and touch stamp, if the running item owns it.
    ///
    /// # Safety
    /// The caller holds no other reference to that channel's memory.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn audio_bus(&self, bus: usize, block_size: usize) -> Option<(&mut [f32], &mut i32)> {
        if bus >= self.audio_count {
            return None;
        }
        // SAFETY: `bus` is inside the owner table, which has an entry per
        // audio and control bus; the channel is this item's alone while it
        // runs (the type's contract), so nothing else borrows its memory.
        unsafe {
            self.takes(*self.owner.add(bus)).then(|| {
                (std::slice::from_raw_parts_mut(self.audio.add(bus * block_size), block_size), &mut *self.audio_touched.add(bus))
            })
        }
    }

    /// Control bus `bus`'s value and touch stamp, if the running item owns it.
    ///
    /// # Safety
    /// As [`DirectBuses::audio_bus`].
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn control_bus(&self, bus: usize) -> Option<(&mut f32, &mut i32)> {
        if bus >= self.control_count {
            return None;
        }
        // SAFETY: as in `audio_bus`; control buses follow the audio buses
        // in the owner table.
        unsafe {
            self.takes(*self.owner.add(self.audio_count + bus))
                .then(|| (&mut *self.control.add(bus), &mut *self.control_touched.add(bus)))
        }
    }
}

/// The running synth's local buffers (`LocalBuf`), numbered after the
/// world's (see [`World::use_local_bufs`]).
#[derive(Default, Clone, Copy)]
pub struct LocalBufs(Option<*mut Vec<SndBuf>>);

// SAFETY: set only for the length of one synth's run on the thread running
// it, pointing at that synth's own list, which nothing else touches meanwhile.
unsafe impl Send for LocalBufs {}
// SAFETY: as for `Send`, just above.
unsafe impl Sync for LocalBufs {}

/// The control buses' storage. A world owns its buses, except the real-time
/// server's, whose buses live in the shared memory segment that clients read
/// and write directly (`Bus.getSynchronous`), as scsynth's do. Either way it
/// reads as a slice.
pub struct ControlBuses {
    ptr: NonNull<f32>,
    len: usize,
    /// The owned storage (empty for external buses); only reached through `ptr`.
    _own: Vec<f32>,
    /// Keeps external storage alive.
    _keep: Option<Arc<dyn Send + Sync>>,
}

// SAFETY: `ControlBuses` is an exclusively owned buffer of floats (like a
// `Vec<f32>`): shared references only read it, writes need `&mut`.
unsafe impl Send for ControlBuses {}
// SAFETY: as for `Send`, just above.
unsafe impl Sync for ControlBuses {}

impl ControlBuses {
    /// `len` zeroed buses in the world's own memory.
    pub fn owned(len: usize) -> ControlBuses {
        let mut own = vec![0.0f32; len];
        let ptr = NonNull::from(own.as_mut_slice()).cast::<f32>();
        ControlBuses { ptr, len, _own: own, _keep: None }
    }

    /// Buses in memory the world does not own (the server's shared memory).
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised floats, aligned, that stay valid
    /// while `keep` lives, and that nothing else in this process accesses
    /// while these buses exist.
    pub unsafe fn external(ptr: NonNull<f32>, len: usize, keep: Arc<dyn Send + Sync>) -> ControlBuses {
        ControlBuses { ptr, len, _own: Vec::new(), _keep: Some(keep) }
    }
}

impl std::ops::Deref for ControlBuses {
    type Target = [f32];
    #[inline]
    fn deref(&self) -> &[f32] {
        // SAFETY: `ptr` holds `len` floats for as long as `self` (see the
        // constructors); `&self` excludes writers in this process.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for ControlBuses {
    #[inline]
    fn deref_mut(&mut self) -> &mut [f32] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// Scope buffers a scope writer (`ScopeOut2`) fills: the segment's, in the
/// real-time server. Each buffer holds three regions of `channels` planes of
/// `frames` samples; the writer fills one, pushes it to the reader and gets
/// the next. Called only from the thread running the world, without
/// allocating or making system calls.
pub trait ScopeBuffers: Send + Sync {
    /// Takes buffer `index` for `channels` x `frames`; returns the region to
    /// write, or None when the index is out of range, taken, or no room is left.
    fn acquire(&mut self, index: u32, channels: u32, frames: u32) -> Option<NonNull<f32>>;
    /// Publishes the region written (`frames` frames) and returns the next
    /// one. Only for a buffer this writer acquired.
    fn push(&mut self, index: u32, frames: u32) -> Option<NonNull<f32>>;
    /// Gives buffer `index` back.
    fn release(&mut self, index: u32);
}

/// The part of the server's world that units see.
pub struct World {
    pub full_rate: RateInfo,
    pub buf_rate: RateInfo,
    pub sample_rate: f64,
    pub block_size: usize,
    pub num_output_channels: usize,
    pub num_input_channels: usize,
    /// Audio buses, `block_size` samples each; the hardware outputs come
    /// first, then the hardware inputs, then the private buses.
    pub audio_bus: Vec<f32>,
    /// Per audio bus: the block counter of the last block that wrote it.
    pub audio_touched: Vec<i32>,
    /// Control buses: the world's own memory, or the real-time server's
    /// shared memory segment (see [`ControlBuses`]).
    pub control_bus: ControlBuses,
    pub control_touched: Vec<i32>,
    /// Counts blocks; a bus whose touched value differs was not written
    /// in this block and reads as silence.
    pub buf_counter: i32,
    pub buffers: Vec<SndBuf>,
    /// Another world's buffers, lent to a worker's private world while a
    /// parallel group runs (see [`World::lend_buffers`]).
    pub lent_buffers: LentBuffers,
    /// The local buffers of the synth whose units are running.
    pub local_bufs: LocalBufs,
    /// The generator the running units draw from: the world's shared
    /// generator number `rgen_slot` (or a synth's own, swapped in while it runs).
    pub rgen: RGen,
    /// The shared generators (scsynth's `-r`, 64 by default) that `RandID`
    /// picks from. Entry `rgen_slot` is stale: that generator is in `rgen`.
    /// Empty when synths have generators of their own (`-g 1`).
    pub rgens: Vec<RGen>,
    pub rgen_slot: u32,
    /// `/tr` and SendReply messages produced during this block.
    pub triggers: Vec<Trigger>,
    /// Values `Poll` reported during this block, printed off the audio thread.
    pub polls: Vec<PollLine>,
    /// Triggers and `Poll` values units made while this block's lists
    /// were full ([`MAX_TRIGGERS_PER_BLOCK`]): dropped, and counted here for
    /// the server's `droppedTriggers` figure, which takes them.
    pub dropped_triggers: u64,
    /// Halves of streaming buffers that disk units finished, for the
    /// server to read or write (see `disk`); never grown past its capacity.
    pub disk_requests: Vec<crate::disk::DiskRequest>,
    /// Whether the server runs in real time (VDiskIn replies only then).
    pub real_time: bool,
    /// Halves that disk units found still waiting for the disk when they
    /// were due (played as silence, or for DiskOut not recorded).
    pub disk_underruns: u64,
    /// How many synths exist (scsynth's `mNumGraphs`), kept current by the engine.
    pub num_synths: u32,
    /// When set, bus writers log what they wrote (a worker's private world
    /// in a parallel group, whose writes are replayed in child order).
    pub log_touches: bool,
    pub touch_log: Vec<BusTouch>,
    pub touch_data: Vec<f32>,
    /// With `log_touches`: bus writers only log, and leave this world's
    /// buses as they are (no unit that runs meanwhile reads a bus, so what
    /// they would hold is never used, and the log is what is replayed).
    pub touch_only: bool,
    /// A write did not fit the log's reserved room.
    pub touch_overflow: bool,
    /// With `log_touches`: bus channels whose writes go straight to
    /// another world's buses instead of the log (see [`DirectBuses`]).
    pub direct: Option<DirectBuses>,
    /// The garbage-collected heap units may allocate from (see `gc_units`); none unless the
    /// server installs one.
    pub gc: Option<magnetar_gc::Collector>,
    /// The scope buffers `ScopeOut2` writes to (the real-time server's shared
    /// memory); none in NRT and in a parallel worker's private world.
    pub scope_buffers: Option<Box<dyn ScopeBuffers>>,
    /// Periodic tasks units may register (paper 003; see `magnetar_rt::periodic`):
    /// served by the engine's task threads in real time, run in step
    /// otherwise. None in a parallel worker's private world.
    pub tasks: Option<Arc<magnetar_rt::periodic::TaskTable>>,
    /// Units built so far that spread their periodic work over its period
    /// (`MagnetarConv`): each takes the next phase.
    pub staggered_units: usize,
}

/// Pushes what `make` makes onto a per-block list while it holds fewer than
/// [`MAX_TRIGGERS_PER_BLOCK`]; otherwise makes nothing and counts the drop.
#[inline]
fn push_within_block_bound<T>(list: &mut Vec<T>, dropped: &mut u64, make: impl FnOnce() -> T) {
    if list.len() < MAX_TRIGGERS_PER_BLOCK {
        list.push(make());
    } else {
        *dropped += 1;
    }
}

impl World {
    /// Queues a `/tr` or SendReply message, made only if this block's list
    /// has room; otherwise it is dropped and counted.
    #[inline]
    pub fn push_trigger(&mut self, make: impl FnOnce() -> Trigger) {
        push_within_block_bound(&mut self.triggers, &mut self.dropped_triggers, make);
    }

    /// Queues a `Poll` value, as [`Self::push_trigger`] queues a trigger.
    #[inline]
    pub fn push_poll(&mut self, make: impl FnOnce() -> PollLine) {
        push_within_block_bound(&mut self.polls, &mut self.dropped_triggers, make);
    }

    pub fn new(
        sample_rate: f64,
        block_size: usize,
        num_audio_buses: usize,
        num_control_buses: usize,
        num_buffers: usize,
        num_input_channels: usize,
        num_output_channels: usize,
        seed: u32,
    ) -> World {
        World {
            full_rate: RateInfo::full(sample_rate, block_size),
            buf_rate: RateInfo::block(sample_rate, block_size),
            sample_rate,
            block_size,
            num_output_channels,
            num_input_channels,
            audio_bus: vec![0.0; num_audio_buses * block_size],
            audio_touched: vec![-1; num_audio_buses],
            control_bus: ControlBuses::owned(num_control_buses),
            control_touched: vec![-1; num_control_buses],
            buf_counter: 0,
            buffers: vec![SndBuf::default(); num_buffers],
            lent_buffers: LentBuffers::default(),
            local_bufs: LocalBufs::default(),
            rgen: RGen::new(seed),
            rgens: Vec::new(),
            rgen_slot: 0,
            // Room for the most a block may queue (see `reply`), so pushing never grows them.
            triggers: Vec::with_capacity(MAX_TRIGGERS_PER_BLOCK),
            polls: Vec::with_capacity(MAX_TRIGGERS_PER_BLOCK),
            dropped_triggers: 0,
            disk_requests: Vec::with_capacity(crate::disk::MAX_DISK_REQUESTS),
            real_time: false,
            disk_underruns: 0,
            num_synths: 0,
            log_touches: false,
            touch_log: Vec::new(),
            touch_data: Vec::new(),
            touch_only: false,
            touch_overflow: false,
            direct: None,
            gc: None,
            scope_buffers: None,
            tasks: None,
            staggered_units: 0,
        }
    }

    /// Makes shared generator `id` the one units draw from, putting the
    /// current one back in its place; false (and no change) when there is
    /// no such generator.
    #[inline]
    pub fn select_rgen(&mut self, id: u32) -> bool {
        if id == self.rgen_slot {
            return true;
        }
        let (slot, want) = (self.rgen_slot as usize, id as usize);
        if want >= self.rgens.len() || slot >= self.rgens.len() {
            return false;
        }
        std::mem::swap(&mut self.rgen, &mut self.rgens[slot]);
        std::mem::swap(&mut self.rgen, &mut self.rgens[want]);
        self.rgen_slot = id;
        true
    }

    #[inline]
    pub fn num_audio_buses(&self) -> usize {
        self.audio_touched.len()
    }

    #[inline]
    pub fn num_control_buses(&self) -> usize {
        self.control_bus.len()
    }

    /// Audio bus `bus` as a block; `None` past the last bus.
    #[inline]
    pub fn audio_bus(&self, bus: usize) -> Option<&[f32]> {
        let bs = self.block_size;
        self.audio_bus.get(bus * bs..(bus + 1) * bs)
    }

    #[inline]
    pub fn audio_bus_mut(&mut self, bus: usize) -> Option<&mut [f32]> {
        let bs = self.block_size;
        self.audio_bus.get_mut(bus * bs..(bus + 1) * bs)
    }

    /// How many buffers units see: this world's own, or those lent to it.
    #[inline]
    pub fn num_bufs(&self) -> usize {
        match self.lent_buffers.0 {
            Some((_, len)) => len,
            None => self.buffers.len(),
        }
    }

    /// Buffer `index` as units see it (see `num_bufs`); past those, the
    /// running synth's local buffers. One buffer at a time, never the whole
    /// list: while a loan lasts, another thread may be writing a buffer it
    /// alone uses.
    #[inline]
    pub fn buf(&self, index: usize) -> Option<&SndBuf> {
        match self.lent_buffers.0 {
            // SAFETY: in range; `lend_buffers`' contract: the lender's list
            // outlives the loan unchanged, and no one writes this buffer
            // while units here read it.
            Some((ptr, len)) if index < len => Some(unsafe { &*ptr.add(index) }),
            Some((_, len)) => self.local_buf(index - len),
            None if index < self.buffers.len() => self.buffers.get(index),
            None => self.local_buf(index - self.buffers.len()),
        }
    }

    /// Buffer `index` for a unit that writes it.
    #[inline]
    pub fn buf_mut(&mut self, index: usize) -> Option<&mut SndBuf> {
        match self.lent_buffers.0 {
            // SAFETY: in range; `lend_buffers`' contract: a buffer units
            // here write is touched by no other thread during the loan.
            Some((ptr, len)) if index < len => Some(unsafe { &mut *ptr.add(index) }),
            Some((_, len)) => self.local_buf_mut(index - len),
            None if index < self.buffers.len() => self.buffers.get_mut(index),
            None => {
                let local = index - self.buffers.len();
                self.local_buf_mut(local)
            }
        }
    }

    /// How many local buffers the running synth has.
    #[inline]
    pub fn num_local_bufs(&self) -> usize {
        // SAFETY: `use_local_bufs`' contract: the list outlives its use here.
        self.local_bufs.0.map_or(0, |list| unsafe { (&*list).len() })
    }

    #[inline]
    fn local_buf(&self, local: usize) -> Option<&SndBuf> {
        // SAFETY: as in `num_local_bufs`; no unit holds a mutable reference to the list meanwhile.
        self.local_bufs.0.and_then(|list| unsafe { (&*list).get(local) })
    }

    #[inline]
    fn local_buf_mut(&mut self, local: usize) -> Option<&mut SndBuf> {
        // SAFETY: as in `local_buf`.
        self.local_bufs.0.and_then(|list| unsafe { (&mut *list).get_mut(local) })
    }

    /// Lets units reach `list` as the buffers numbered after the world's.
    ///
    /// # Safety
    /// `list` must stay valid, and be reached by nothing else, until
    /// [`World::end_local_bufs`] is called.
    #[inline]
    pub unsafe fn use_local_bufs(&mut self, list: *mut Vec<SndBuf>) {
        self.local_bufs = LocalBufs(Some(list));
    }

    #[inline]
    pub fn end_local_bufs(&mut self) {
        self.local_bufs = LocalBufs(None);
    }

    /// Lets this world's units use `from`'s buffers instead of its own.
    ///
    /// # Safety
    /// `from`'s buffer list must neither change nor be dropped until
    /// [`World::end_loan`] is called, nothing else may use `from`'s
    /// buffers meanwhile, and a buffer that units of one borrowing world
    /// write must not be read or written through any other world.
    pub unsafe fn lend_buffers(&mut self, from: &mut World) {
        self.lent_buffers = LentBuffers(Some((from.buffers.as_mut_ptr(), from.buffers.len())));
    }

    /// Returns to this world's own buffers.
    pub fn end_loan(&mut self) {
        self.lent_buffers = LentBuffers(None);
    }

    /// The buffer a unit addresses by number; `None` if out of range.
    #[inline]
    pub fn buffer(&self, bufnum: f32) -> Option<&SndBuf> {
        if bufnum < 0.0 {
            return None;
        }
        self.buf(bufnum as usize)
    }

    #[inline]
    pub fn buffer_mut(&mut self, bufnum: f32) -> Option<&mut SndBuf> {
        if bufnum < 0.0 {
            return None;
        }
        self.buf_mut(bufnum as usize)
    }
}

/// Per-synth state that units share: controls, their bus mappings, local
/// buses, and the done actions requested during this block.
#[derive(Debug, Default)]
pub struct SynthCtx {
    pub node_id: i32,
    /// Current control values, in the def's parameter order.
    pub controls: Vec<f32>,
    pub control_map: Vec<ControlMap>,
    /// Sample offset within the first block, from the bundle that created
    /// the synth (read by OffsetOut).
    pub sample_offset: i32,
    /// Fraction of a sample by which the creating bundle's time was
    /// rounded (read by SubsampleOffset).
    pub subsample_offset: f32,
    /// LocalIn/LocalOut storage: `channels` audio blocks (or values, for
    /// control rate) owned by the synth's LocalIn.
    pub local_audio: Vec<f32>,
    pub local_audio_channels: usize,
    pub local_audio_touched: Vec<i32>,
    pub local_control: Vec<f32>,
    pub local_control_channels: usize,
    pub local_control_touched: Vec<i32>,
    /// Done actions requested during this block, carried out afterwards.
    pub done_actions: Vec<i32>,
    /// Nodes that units of this synth asked to free (the `Free` UGen).
    pub free_requests: Vec<i32>,
    /// Nodes that units of this synth asked to run (true) or pause (the `Pause` UGen).
    pub run_requests: Vec<(i32, bool)>,
    /// The synth's own buffers (`LocalBuf`), at most `max_local_bufs` of them
    /// (`MaxLocalBufs`); units number them after the world's buffers.
    pub local_bufs: Vec<SndBuf>,
    pub max_local_bufs: usize,
    /// The shared generator this synth draws from (`RandID`; 0 unless set).
    pub rgen_id: u32,
}

impl SynthCtx {
    #[inline]
    pub fn request_done_action(&mut self, action: i32) {
        if action != 0 && self.done_actions.len() < self.done_actions.capacity().max(16) {
            self.done_actions.push(action);
        }
    }

    #[inline]
    pub fn request_run_node(&mut self, id: i32, run: bool) {
        if self.run_requests.len() < self.run_requests.capacity().max(16) {
            self.run_requests.push((id, run));
        }
    }

    #[inline]
    pub fn request_free_node(&mut self, id: i32) {
        if self.free_requests.len() < self.free_requests.capacity().max(16) {
            self.free_requests.push(id);
        }
    }
}
