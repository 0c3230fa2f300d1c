//! The framework of the phase-vocoder (`PV_`) units: finding the buffer a
//! chain names, putting its spectrum in the form a unit works on, and
//! passing the chain on.
//!
//! A PV unit runs once per block. On blocks where its chain input is -1 it
//! outputs -1 and does nothing; otherwise it outputs the chain's buffer
//! number and transforms that buffer in place.

use crate::common::signal::trunc_i32;
use crate::common::spectrum::{self as coord, num_bins};
use crate::common::buffer::resolve_buffer_index;
use crate::rgen::RGen;
use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::{SndBuf, World};
use std::cell::Cell;

/// The form a unit wants the spectrum in before it runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Whatever the buffer holds (the unit converts, if at all, itself).
    Raw,
    Polar,
    Complex,
}

fn convert(buf: &mut SndBuf, form: Form) {
    match form {
        Form::Raw => {}
        Form::Polar => coord::to_polar(buf),
        Form::Complex => coord::to_complex(buf),
    }
}

/// The buffer a chain value names (numbers past the last buffer mean
/// buffer 0), if it holds a spectrum's worth of data.
fn chain_buffer(world: &World, fbufnum: f32) -> Option<usize> {
    let index = resolve_buffer_index(world, fbufnum)?;
    world.buf(index).filter(|b| b.samples() >= 2).map(|_| index)
}

/// Samples of the buffer input 0 names when the unit is built: the size
/// that units needing room of their own prepare for.
fn ctor_samples(io: &Wires<'_>, cx: &UnitCtx<'_>) -> usize {
    let fbufnum = io.in0(0);
    if fbufnum < 0.0 {
        return 0;
    }
    chain_buffer(cx.world, fbufnum).and_then(|i| cx.world.buf(i)).map_or(0, |b| b.samples())
}

/// A PV unit on one buffer.
pub(crate) trait OneBuffer: Send + 'static {
    const FORM: Form;
    /// `samples`: the size of the chain's buffer when the unit is built.
    fn new(io: &Wires<'_>, samples: usize) -> Self;
    /// Runs every block, frame or not (trigger inputs).
    fn watch(&mut self, _io: &Wires<'_>) {}
    /// Transforms the spectrum in `buf`, already in [`Self::FORM`].
    fn frame(&mut self, buf: &mut SndBuf, io: &Wires<'_>, rgen: &mut RGen);
}

/// Runs a [`OneBuffer`] unit on its chain.
pub struct Pv<T>(T);

impl<T: OneBuffer> Construct for Pv<T> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let op = T::new(io, ctor_samples(io, cx));
        let first = io.in0(0);
        io.out(0)[0] = first;
        Pv(op)
    }
}

impl<T: OneBuffer> Unit for Pv<T> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.0.watch(io);
        let fbufnum = io.in0(0);
        if fbufnum < 0.0 {
            io.out(0)[0] = -1.0;
            return;
        }
        io.out(0)[0] = fbufnum;
        let Some(index) = chain_buffer(cx.world, fbufnum) else { return };
        let mut rgen = cx.world.rgen;
        let Some(buf) = cx.world.buf_mut(index) else { return };
        convert(buf, T::FORM);
        self.0.frame(buf, io, &mut rgen);
        cx.world.rgen = rgen;
    }
}

/// A PV unit that changes its first buffer using a second one. The two may
/// be the same buffer, so both are seen as cells and read and written in the
/// order scsynth's code does it.
pub(crate) trait TwoBuffers: Send + 'static {
    const FORM: Form;
    fn new(io: &Wires<'_>, samples: usize) -> Self;
    fn watch(&mut self, _io: &Wires<'_>) {}
    /// Changes `p` using `q`; both are whole buffers of the same length.
    fn frame(&mut self, p: &[Cell<f32>], q: &[Cell<f32>], io: &Wires<'_>, rgen: &mut RGen);
}

/// Runs a [`TwoBuffers`] unit on its two chains.
pub struct Pv2<T>(T);

impl<T: TwoBuffers> Construct for Pv2<T> {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        coord::tables();
        let op = T::new(io, ctor_samples(io, cx));
        let first = io.in0(0);
        io.out(0)[0] = first;
        Pv2(op)
    }
}

/// Both buffers, or `None` when they differ in size (the unit then skips
/// the frame). The same index gives one buffer.
fn with_pair<R>(
    world: &mut World,
    a: usize,
    b: usize,
    form: Form,
    f: impl FnOnce(&[Cell<f32>], &[Cell<f32>]) -> R,
) -> Option<R> {
    if a == b {
        let buf = world.buf_mut(a)?;
        convert(buf, form);
        let cells = Cell::from_mut(&mut buf.data[..]).as_slice_of_cells();
        return Some(f(cells, cells));
    }
    let pa: *mut SndBuf = world.buf_mut(a)?;
    let pb: *mut SndBuf = world.buf_mut(b)?;
    // SAFETY: `a != b`, so the two pointers name different buffers (each an
    // element of the world's or the synth's buffer list); `buf_mut` neither
    // moves nor frees buffers, so both stay valid, and nothing else reaches
    // them while `world` is borrowed here.
    let (ba, bb) = unsafe { (&mut *pa, &mut *pb) };
    if ba.samples() != bb.samples() {
        return None;
    }
    convert(ba, form);
    convert(bb, form);
    let p = Cell::from_mut(&mut ba.data[..]).as_slice_of_cells();
    let q = Cell::from_mut(&mut bb.data[..]).as_slice_of_cells();
    Some(f(p, q))
}

impl<T: TwoBuffers> Unit for Pv2<T> {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        self.0.watch(io);
        let (fa, fb) = (io.in0(0), io.in0(1));
        if fa < 0.0 || fb < 0.0 {
            io.out(0)[0] = -1.0;
            return;
        }
        io.out(0)[0] = fa;
        let (Some(a), Some(b)) = (chain_buffer(cx.world, fa), chain_buffer(cx.world, fb)) else { return };
        let mut rgen = cx.world.rgen;
        let op = &mut self.0;
        let io_ref: &Wires<'_> = io;
        with_pair(cx.world, a, b, T::FORM, |p, q| op.frame(p, q, io_ref, &mut rgen));
        cx.world.rgen = rgen;
    }
}

/// `PV_Copy(chainA, chainB)`: copies A's spectrum (and its form) into B and
/// passes B on.
pub struct PvCopy;

impl Construct for PvCopy {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> Self {
        let first = io.in0(1);
        io.out(0)[0] = first;
        PvCopy
    }
}

impl Unit for PvCopy {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        let (fa, fb) = (io.in0(0), io.in0(1));
        if fa < 0.0 || fb < 0.0 {
            io.out(0)[0] = -1.0;
            return;
        }
        io.out(0)[0] = fb;
        let (Some(a), Some(b)) = (chain_buffer(cx.world, fa), chain_buffer(cx.world, fb)) else { return };
        let form = cx.world.buf(a).map(coord::coord);
        with_pair(cx.world, a, b, Form::Raw, |p, q| {
            for (dst, src) in q.iter().zip(p) {
                dst.set(src.get());
            }
        });
        if let (Some(form), Some(buf)) = (form, cx.world.buf_mut(b)) {
            coord::set_coord(buf, form);
        }
    }
}

// ---- access to the packed layout --------------------------------------------

/// A spectrum as cells: `dc`, `nyq`, then bins of two values each.
#[derive(Clone, Copy)]
pub(crate) struct Spec<'a>(pub &'a [Cell<f32>]);

impl<'a> Spec<'a> {
    #[inline(always)]
    pub(crate) fn bins(self) -> usize {
        num_bins(self.0.len())
    }
    #[inline(always)]
    pub(crate) fn dc(self) -> &'a Cell<f32> {
        &self.0[0]
    }
    #[inline(always)]
    pub(crate) fn nyq(self) -> &'a Cell<f32> {
        &self.0[1]
    }
    /// Real part or magnitude of bin `i`.
    #[inline(always)]
    pub(crate) fn a(self, i: usize) -> &'a Cell<f32> {
        &self.0[2 + 2 * i]
    }
    /// Imaginary part or phase of bin `i`.
    #[inline(always)]
    pub(crate) fn b(self, i: usize) -> &'a Cell<f32> {
        &self.0[3 + 2 * i]
    }
    /// Copies bin `j` of `from` into bin `i`.
    #[inline(always)]
    pub(crate) fn set_bin(self, i: usize, from: Spec<'_>, j: usize) {
        self.a(i).set(from.a(j).get());
        self.b(i).set(from.b(j).get());
    }
    #[inline(always)]
    pub(crate) fn zero_bin(self, i: usize) {
        self.a(i).set(0.0);
        self.b(i).set(0.0);
    }
}

/// `(int)(x * numbins)` as scsynth computes a bin count from a fraction.
#[inline]
pub(crate) fn bins_of(fraction: f32, numbins: usize) -> i32 {
    trunc_i32((fraction * numbins as f32) as f64)
}

/// scsynth's `sc_clip` for ints: never panics, even when `lo > hi`.
#[inline]
pub(crate) fn clip_i32(x: i32, lo: i32, hi: i32) -> i32 {
    let x = if x > hi { hi } else { x };
    if x < lo {
        lo
    } else {
        x
    }
}

/// A rising edge on a trigger input, remembered until a frame uses it.
#[derive(Default)]
pub(crate) struct Trigger {
    prev: f32,
    pending: bool,
}

impl Trigger {
    pub(crate) fn watch(&mut self, trig: f32) {
        if trig > 0.0 && self.prev <= 0.0 {
            self.pending = true;
        }
        self.prev = trig;
    }

    pub(crate) fn take(&mut self) -> bool {
        std::mem::take(&mut self.pending)
    }
}

/// Room a unit claims on its first frame, sized when the unit is built.
/// Later frames of another size are skipped, as in scsynth.
pub(crate) struct Room<T> {
    pub data: Vec<T>,
    pub bins: Option<usize>,
}

impl<T: Clone + Default> Room<T> {
    pub(crate) fn new(len: usize) -> Room<T> {
        Room { data: vec![T::default(); len], bins: None }
    }

    /// `Some(first)` when a frame of `bins` bins may be processed: `first`
    /// tells whether this is the first frame, which fills the room.
    pub(crate) fn claim(&mut self, bins: usize, needed: usize) -> Option<bool> {
        match self.bins {
            Some(b) if b == bins => Some(false),
            Some(_) => None,
            None if needed <= self.data.len() => {
                self.bins = Some(bins);
                Some(true)
            }
            None => None,
        }
    }
}
