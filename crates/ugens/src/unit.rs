//! The contract between a unit generator and the engine that runs it.
//!
//! The engine lays every wire of a synth (constants, controls, unit outputs)
//! out in one `f32` array. A unit reads its inputs and writes its outputs
//! through [`Wires`]; it reaches buses, buffers, the random generator and its
//! synth through [`UnitCtx`]. Outputs never share memory with inputs, so a
//! unit may hold input slices while it writes its outputs.

use crate::world::{SynthCtx, World};
use std::marker::PhantomData;

/// Calculation rate, numbered as in the SynthDef file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Rate {
    Scalar = 0,
    Control = 1,
    Audio = 2,
    Demand = 3,
}

impl Rate {
    pub fn from_u8(v: u8) -> Option<Rate> {
        match v {
            0 => Some(Rate::Scalar),
            1 => Some(Rate::Control),
            2 => Some(Rate::Audio),
            3 => Some(Rate::Demand),
            _ => None,
        }
    }
}

/// Timing constants of one calculation rate (SuperCollider's `Rate`). Audio
/// units see the full rate; control and scalar units see the block rate, so
/// that for them `sample_rate` is the control rate and `buf_length` is 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateInfo {
    pub sample_rate: f64,
    pub sample_dur: f64,
    pub buf_duration: f64,
    pub buf_rate: f64,
    /// 1 / buf_length: turns a per-block change into a per-sample slope.
    pub slope_factor: f64,
    pub radians_per_sample: f64,
    pub buf_length: usize,
    /// Second-order filters unroll their loops by three.
    pub filter_loops: usize,
    pub filter_remain: usize,
    pub filter_slope: f64,
}

impl RateInfo {
    /// The audio rate for `sample_rate` and `block_size`.
    pub fn full(sample_rate: f64, block_size: usize) -> RateInfo {
        Self::make(sample_rate, block_size, sample_rate / block_size as f64)
    }

    /// The control (block) rate for `sample_rate` and `block_size`.
    pub fn block(sample_rate: f64, block_size: usize) -> RateInfo {
        Self::make(sample_rate / block_size as f64, 1, sample_rate / block_size as f64)
    }

    fn make(sample_rate: f64, buf_length: usize, buf_rate: f64) -> RateInfo {
        let filter_loops = buf_length / 3;
        RateInfo {
            sample_rate,
            sample_dur: 1.0 / sample_rate,
            buf_duration: 1.0 / buf_rate,
            buf_rate,
            slope_factor: 1.0 / buf_length as f64,
            radians_per_sample: std::f64::consts::TAU / sample_rate,
            buf_length,
            filter_loops,
            filter_remain: buf_length % 3,
            filter_slope: if filter_loops == 0 { 0.0 } else { 1.0 / filter_loops as f64 },
        }
    }
}

/// Where a wire lives in the synth's wire array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireRef {
    /// Index of the first sample in the wire array.
    pub offset: u32,
    /// Rate of the value: audio wires hold a block, the others one value.
    pub rate: Rate,
    /// The unit that writes this wire, or `NO_UNIT` for constants.
    pub from_unit: u32,
}

pub const NO_UNIT: u32 = u32::MAX;

/// The most samples one unit may size its memory to from an input (the
/// longest delay line, 512 MiB): a unit asking for more fails while its
/// synth is built (the def is refused at load when the size is a constant,
/// or the synth ends with `/fail`), instead of asking the allocator for
/// terabytes, which would end the process.
pub const MAX_UNIT_SAMPLES: usize = 1 << 27;

/// `n` zeroed samples for a unit's own memory. The size is one the synth
/// chose: on the audio thread the real-time pool refuses it when it cannot
/// hold it (`magnetar_rt::fallible`), as it is refused anywhere past
/// [`MAX_UNIT_SAMPLES`], and the unit unwinds, reported as "out of real
/// time memory".
pub fn unit_samples(n: usize) -> Vec<f32> {
    if n > MAX_UNIT_SAMPLES {
        magnetar_rt::fallible::unwind(magnetar_rt::fallible::OutOfMemory);
    }
    magnetar_rt::fallible::zeroed(n)
}

/// Set in [`WireRef::offset`] for wires in the shared scratch area (audio
/// wires) rather than in the synth's own array.
pub const SCRATCH: u32 = 1 << 31;

/// The two arrays wires live in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum WireArray {
    /// The synth's own array: constants and control-rate wires.
    Own = 0,
    /// The shared scratch area: audio wires.
    Scratch = 1,
}

#[inline]
fn place(w: WireRef) -> (WireArray, usize) {
    let array = if w.offset & SCRATCH != 0 { WireArray::Scratch } else { WireArray::Own };
    (array, (w.offset & !SCRATCH) as usize)
}

/// What a constructor knows about the unit it builds, from the SynthDef.
#[derive(Clone, Copy, Debug)]
pub struct UnitSpec<'a> {
    pub name: &'a str,
    pub rate: Rate,
    pub special_index: i16,
    pub num_inputs: usize,
    pub num_outputs: usize,
    /// How many instances of the UGen one batched unit computes (1 for
    /// ordinary units). A batch's inputs and outputs are its members', one
    /// member after another.
    pub lanes: usize,
}

/// A unit's inputs and outputs for one call.
// In declaration order, the fields are laid out as `place` lists them,
// which makes taking a place a copy of consecutive words.
#[repr(C)]
pub struct Wires<'a> {
    /// The synth's own array and the scratch area, indexed by a wire's
    /// [`SCRATCH`] bit: picking one is then a load, not a branch.
    arrays: [*mut f32; 2],
    inputs: &'a [WireRef],
    outputs: &'a [WireRef],
    block_size: usize,
    n: usize,
    _wires: PhantomData<&'a mut [f32]>,
}

impl<'a> Wires<'a> {
    /// # Safety
    /// `base` (for wires without the [`SCRATCH`] flag) and `scratch` (for
    /// wires with it) must point at wire arrays that hold every wire named
    /// in `inputs` and `outputs` (audio wires `block_size` long, the others
    /// one value), live and unaliased for `'a` except through this value; no
    /// output may overlap another output or any input.
    pub unsafe fn new(
        base: *mut f32,
        scratch: *mut f32,
        inputs: &'a [WireRef],
        outputs: &'a [WireRef],
        block_size: usize,
        n: usize,
    ) -> Self {
        Wires { arrays: [base, scratch], inputs, outputs, block_size, n, _wires: PhantomData }
    }

    /// Points the wires' [`SCRATCH`] wires at another scratch area, for
    /// wires set up once and used again block after block.
    ///
    /// # Safety
    /// As for [`Wires::new`], with `scratch` in place of its scratch.
    #[inline]
    pub unsafe fn set_scratch(&mut self, scratch: *mut f32) {
        self.arrays[1] = scratch;
    }

    #[inline(always)]
    fn ptr(&self, w: WireRef) -> *mut f32 {
        // SAFETY: `new`'s contract puts the wire inside the array its flag names.
        unsafe { self.arrays[(w.offset / SCRATCH) as usize].add((w.offset & !SCRATCH) as usize) }
    }

    /// Samples to compute in this call: the block size for audio units, 1
    /// for control units (and during construction).
    #[inline(always)]
    pub fn n(&self) -> usize {
        self.n
    }

    #[inline(always)]
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    #[inline(always)]
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    #[inline(always)]
    pub fn in_rate(&self, i: usize) -> Rate {
        self.inputs[i].rate
    }

    /// The unit that feeds input `i`, if it is not a constant.
    #[inline]
    pub fn in_source(&self, i: usize) -> Option<usize> {
        let u = self.inputs[i].from_unit;
        (u != NO_UNIT).then_some(u as usize)
    }

    /// Input `i`: a whole block for audio-rate inputs, one value otherwise.
    #[inline(always)]
    pub fn inp(&self, i: usize) -> &'a [f32] {
        let w = self.inputs[i];
        let len = if w.rate == Rate::Audio { self.block_size } else { 1 };
        // SAFETY: `new`'s contract: the wire is inside its array, and no
        // output overlaps it, so nothing writes it while this slice lives.
        unsafe { std::slice::from_raw_parts(self.ptr(w), len) }
    }

    /// The first (for control inputs: the only) value of input `i`.
    #[inline(always)]
    pub fn in0(&self, i: usize) -> f32 {
        let w = self.inputs[i];
        // SAFETY: as in `inp`.
        unsafe { *self.ptr(w) }
    }

    /// Output `i`, `n()` samples long.
    #[inline(always)]
    pub fn out(&mut self, i: usize) -> &mut [f32] {
        let w = self.outputs[i];
        // SAFETY: `new`'s contract: outputs are disjoint from each other and
        // from the inputs; `&mut self` keeps this the only live output view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(w), self.n) }
    }

    /// The first (for control outputs: the only) sample of output `i`.
    /// Every wire holds at least one value, so this needs no check of `n()`.
    #[inline(always)]
    pub fn out0(&mut self, i: usize) -> &mut f32 {
        let w = self.outputs[i];
        // SAFETY: `new`'s contract: the wire is inside its array and holds
        // at least one value; outputs are disjoint from each other and from
        // the inputs, and `&mut self` keeps this the only live output view.
        unsafe { &mut *self.ptr(w) }
    }

    /// All of the first `N` outputs at once, for multi-output units.
    #[inline]
    pub fn outs<const N: usize>(&mut self) -> [&mut [f32]; N] {
        assert!(N <= self.outputs.len(), "unit asked for more outputs than it has");
        let n = self.n;
        let ptrs: [*mut f32; N] = std::array::from_fn(|i| self.ptr(self.outputs[i]));
        std::array::from_fn(|i| {
            // SAFETY: outputs are pairwise disjoint (`new`'s contract), so
            // the N slices never alias; `&mut self` covers their lifetime.
            unsafe { std::slice::from_raw_parts_mut(ptrs[i], n) }
        })
    }

    /// Output `i` as a raw pointer, for units whose output count is only
    /// known at run time. The pointer is valid for `n()` samples.
    #[inline]
    pub fn out_ptr(&mut self, i: usize) -> *mut f32 {
        self.ptr(self.outputs[i])
    }

    /// Where input `i` lives: its array and its index there. Units that
    /// run many small operations look their wires up once, at
    /// construction, and reach them through [`Wires::array_ptr`] after.
    #[inline]
    pub fn in_place(&self, i: usize) -> (WireArray, usize) {
        place(self.inputs[i])
    }

    /// Where output `i` lives (see [`Wires::in_place`]).
    #[inline]
    pub fn out_place(&self, i: usize) -> (WireArray, usize) {
        place(self.outputs[i])
    }

    /// The start of wire array `array`: a wire whose place is
    /// `(array, k)` starts `k` samples on, as long as these wires are set
    /// up as the ones the place was read from (the same def's step).
    #[inline(always)]
    pub fn array_ptr(&self, array: WireArray) -> *mut f32 {
        self.arrays[array as usize]
    }

    /// Inputs `inputs` and outputs `outputs` of these wires as wires of
    /// their own: one member of a batch, as the member's unit would see
    /// them if it ran alone.
    ///
    /// # Safety
    /// Views taken at the same time, and these wires, must not be used to
    /// write the same output (members' output ranges are disjoint).
    #[inline]
    pub unsafe fn part(&self, inputs: std::ops::Range<usize>, outputs: std::ops::Range<usize>) -> Wires<'a> {
        Wires {
            arrays: self.arrays,
            inputs: &self.inputs[inputs],
            outputs: &self.outputs[outputs],
            block_size: self.block_size,
            n: self.n,
            _wires: PhantomData,
        }
    }

    /// Where these wires lead: two calls whose wires have the same place
    /// find every input and output at the same address, so that a unit
    /// may keep the addresses it found for the next block.
    #[inline]
    pub fn place(&self) -> WiresPlace {
        WiresPlace([
            self.arrays[0] as usize,
            self.arrays[1] as usize,
            self.inputs.as_ptr() as usize,
            self.inputs.len(),
            self.outputs.as_ptr() as usize,
            self.outputs.len(),
            self.block_size,
            self.n,
        ])
    }

    /// Sets every output to zero for this call.
    pub fn clear_outputs(&mut self) {
        for i in 0..self.outputs.len() {
            self.out(i).fill(0.0);
        }
    }
}

/// What [`Wires::place`] compares: the wire arrays, the wire lists and
/// the sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WiresPlace([usize; 8]);

/// Everything else a unit may touch while it runs.
pub struct UnitCtx<'a> {
    pub world: &'a mut World,
    pub synth: &'a mut SynthCtx,
    /// The unit's own rate: full rate for audio units, block rate otherwise.
    pub rate: &'a RateInfo,
    /// Done flags of every unit of this synth (SuperCollider's `mDone`).
    pub done_flags: &'a mut [bool],
    pub unit_index: usize,
    /// Runs the synth's demand-rate units for a unit that reads them (None
    /// when the synth has none).
    pub demand: Option<&'a mut dyn DemandRunner>,
    /// For a demand-rate unit being run: 0 asks it to reset, k >= 1 for its
    /// next value, asked for at sample k of the caller's block (scsynth's
    /// `inNumSamples` in a demand unit).
    pub demanded: usize,
}

/// Runs a demand-rate unit of the current synth when another unit asks it for
/// a value (SuperCollider's `DEMANDINPUT`): demand-rate units compute nothing
/// per block, only when read.
pub trait DemandRunner {
    /// Runs `unit` with `demanded` = 0 (reset) or k >= 1 (next value, for
    /// sample k); its value is then in its output wire.
    fn run(
        &mut self,
        unit: usize,
        demanded: usize,
        world: &mut World,
        synth: &mut SynthCtx,
        done_flags: &mut [bool],
    );
}

impl<'a> UnitCtx<'a> {
    /// The context of unit `unit_index` of a synth, with no demand-rate units to run.
    pub fn new(
        world: &'a mut World,
        synth: &'a mut SynthCtx,
        rate: &'a RateInfo,
        done_flags: &'a mut [bool],
        unit_index: usize,
    ) -> Self {
        UnitCtx { world, synth, rate, done_flags, unit_index, demand: None, demanded: 0 }
    }

    /// Marks this unit as done (read by `Done`, `FreeSelfWhenDone`, ...).
    #[inline]
    pub fn set_done(&mut self, done: bool) {
        self.done_flags[self.unit_index] = done;
    }

    #[inline]
    pub fn is_done(&self) -> bool {
        self.done_flags[self.unit_index]
    }

    /// The done flag of another unit of the same synth.
    #[inline]
    pub fn unit_done(&self, unit: usize) -> bool {
        self.done_flags.get(unit).copied().unwrap_or(false)
    }

    /// Runs the demand-rate unit behind input `i`, if there is one.
    fn run_demand(&mut self, io: &Wires<'_>, i: usize, demanded: usize) {
        if io.in_rate(i) != Rate::Demand {
            return;
        }
        if let (Some(src), Some(runner)) = (io.in_source(i), self.demand.as_deref_mut()) {
            runner.run(src, demanded, self.world, self.synth, self.done_flags);
        }
    }

    /// Whether input `i` comes from a demand-rate unit.
    #[inline]
    pub fn is_demand_input(&self, io: &Wires<'_>, i: usize) -> bool {
        io.in_rate(i) == Rate::Demand
    }

    /// Input `i`, asking its demand-rate unit (if any) for the next value.
    pub fn demand_input(&mut self, io: &Wires<'_>, i: usize) -> f32 {
        self.run_demand(io, i, 1);
        io.in0(i)
    }

    /// Input `i` at sample `k` (1-based) of this block: the next value of a
    /// demand-rate unit (asked for at sample k), sample k of an audio-rate
    /// input, or the value of any other input.
    pub fn demand_input_at(&mut self, io: &Wires<'_>, i: usize, k: usize) -> f32 {
        match io.in_rate(i) {
            Rate::Demand => {
                self.run_demand(io, i, k);
                io.in0(i)
            }
            Rate::Audio => io.inp(i)[k - 1],
            _ => io.in0(i),
        }
    }

    /// Resets the demand-rate unit behind input `i`, if there is one.
    pub fn reset_input(&mut self, io: &Wires<'_>, i: usize) {
        self.run_demand(io, i, 0);
    }

    /// Asks the engine to carry out a done action (0–14) for this synth
    /// once the synth's block is computed. Action 0 does nothing.
    #[inline]
    pub fn done_action(&mut self, action: i32) {
        self.synth.request_done_action(action);
    }
}

/// Lets the engine reach a unit's concrete type (for lane kernels that
/// compute the same step of several synths together).
pub trait AsAny: std::any::Any {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;

    /// The concrete type's id (see [`downcast_unit`]).
    fn unit_type(&self) -> std::any::TypeId;
}

impl<T: std::any::Any> AsAny for T {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    #[inline]
    fn unit_type(&self) -> std::any::TypeId {
        std::any::TypeId::of::<T>()
    }
}

/// `unit` as its concrete type `T`, if that is its type: one call through
/// the unit's table, where `as_any_mut().downcast_mut()` makes two (lane
/// kernels do it for every lane of every call).
#[inline(always)]
pub fn downcast_unit<T: Unit>(unit: &mut dyn Unit) -> Option<&mut T> {
    // Through the object (`*unit`), not the reference, whose own type
    // would answer.
    if (*unit).unit_type() == std::any::TypeId::of::<T>() {
        // SAFETY: the unit's concrete type is `T` (it has T's type id), so
        // the object's data pointer is a live `T`, borrowed mutably here.
        Some(unsafe { &mut *(unit as *mut dyn Unit).cast::<T>() })
    } else {
        None
    }
}

/// The units of a lane kernel's filled lanes as type `U`, or `None` where a
/// lane is unfilled or holds another unit (the kernel then leaves the step
/// uncomputed rather than panic, as the others do).
#[inline]
pub(crate) fn lane_units<U: Unit>(lanes: &mut Lanes<'_>) -> Option<[*mut U; MAX_LANES]> {
    let mut units: [*mut U; MAX_LANES] = [std::ptr::null_mut(); MAX_LANES];
    // A unit found to be a `U`: a lane whose unit has its table is a `U`
    // too (the table holds `unit_type`, which differs from type to type),
    // found without a call through the table per lane. A lane whose table
    // is another copy (tables may be duplicated) asks its unit. (A plain
    // count up to a bound the arrays hold: a chain of iterators over the
    // three arrays cost the kernels three times the instructions per lane.)
    let mut known: Option<*mut dyn Unit> = None;
    for l in 0..lanes.len.min(MAX_LANES) {
        lanes.ios[l].as_ref()?;
        let unit: &mut dyn Unit = lanes.units[l].as_deref_mut()?;
        let p: *mut dyn Unit = unit;
        // `known`'s table with this unit's address: equal to `p` exactly
        // when the two tables are one.
        if known.is_some_and(|u| std::ptr::eq(u.with_addr(p.addr()), p)) {
            units[l] = p.cast::<U>();
        } else {
            units[l] = downcast_unit::<U>(unit)?;
            known = Some(p);
        }
    }
    Some(units)
}

/// A running unit generator.
pub trait Unit: AsAny + Send + 'static {
    /// Computes `io.n()` samples of every output.
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>);

    /// Called once when the synth is freed, for units that still owe the
    /// world something (OffsetOut writes the samples it held back).
    fn dtor(&mut self, _cx: &mut UnitCtx<'_>) {}

    /// Runs unit command `name` (`/u_cmd`), `args` being the command's OSC
    /// arguments from their type tag string on. False when the unit has no
    /// such command (only plugin units have any).
    fn command(&mut self, _name: &str, _args: &[u8], _io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) -> bool {
        false
    }
}

/// A unit generator the registry can build from a SynthDef entry. The
/// constructor picks its calculation mode from the input rates and writes the
/// initial value of each output (its first sample, as SuperCollider's
/// constructors do), so that units built after it see that value.
pub trait Construct: Unit + Sized {
    fn new(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self;
}

pub type UnitCtor = fn(&UnitSpec<'_>, &mut Wires<'_>, &mut UnitCtx<'_>) -> Box<dyn Unit>;

/// Says whether a unit with this spec and these input rates may join a
/// batch: several independent instances computed together, lane by lane,
/// with exactly the arithmetic each would do alone.
pub type Batchable = fn(&UnitSpec<'_>, &[Rate]) -> bool;

#[derive(Clone, Copy)]
pub struct BatchEntry {
    pub batchable: Batchable,
    /// Builds one unit for `spec.lanes` members.
    pub ctor: UnitCtor,
}

/// Most synths whose same step one lane kernel computes at once.
pub const MAX_LANES: usize = 16;

/// The same step of up to [`MAX_LANES`] synths: unit `l` and its wires.
pub struct Lanes<'a> {
    pub units: [Option<&'a mut dyn Unit>; MAX_LANES],
    pub ios: [Option<Wires<'a>>; MAX_LANES],
    /// Lane `l`'s synth's own random generator, for the kernels of units
    /// that draw (given only to synths that have one, see `LaneKernel`).
    pub rgens: [Option<&'a mut crate::rgen::RGen>; MAX_LANES],
    pub len: usize,
    /// The world, for the kernels of units that write a bus
    /// (`Registry::add_ordered_lanes`); null for the others. Whoever sets
    /// it vouches that the world is live and reached through nothing else
    /// while the kernel runs.
    pub world: *mut World,
}

impl<'a> Lanes<'a> {
    pub fn new() -> Lanes<'a> {
        Lanes {
            units: std::array::from_fn(|_| None),
            ios: std::array::from_fn(|_| None),
            rgens: std::array::from_fn(|_| None),
            len: 0,
            world: std::ptr::null_mut(),
        }
    }

    pub fn push(&mut self, unit: &'a mut dyn Unit, io: Wires<'a>) {
        assert!(self.len < MAX_LANES, "more lanes than a kernel takes");
        self.units[self.len] = Some(unit);
        self.ios[self.len] = Some(io);
        self.len += 1;
    }
}

impl Default for Lanes<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Computes the same step of several synths together, lane by lane, with
/// exactly the arithmetic each unit would do alone. All units are of the
/// UGen the kernel is registered for. Only for pure units, whose kernel
/// sees nothing of the world but the rate, and for units that draw random
/// numbers, whose kernel draws from each lane's synth's own generator
/// (`Lanes::rgens`, which the engine fills for them), and for units whose
/// one effect is a bus write, whose kernel reaches the world through
/// `Lanes::world` and writes lane after lane, in order.
pub type LaneKernel = fn(lanes: &mut Lanes<'_>, rate: &RateInfo);
