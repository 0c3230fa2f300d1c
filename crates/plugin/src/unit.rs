//! A plugin's unit inside magnetar's engine.
//!
//! [`ForeignUnit`] holds the C `Unit` the plugin reads and writes (with the
//! plugin's own state after it), the wires and buffer pointer arrays it
//! reads through, a `Graph` for its synth and, for each input fed by
//! another unit, a proxy `Unit` with that unit's rate, block length, done
//! flag and (for demand-rate sources) a calc function that runs it through
//! magnetar's demand runner. Before each call the pointers are set to the
//! wires magnetar gives the unit for this block, so nothing is copied.
//!
//! The thread running the unit keeps one C `World` ([`HostWorld`]) whose
//! bus pointers are magnetar's own buses and whose buffer array mirrors
//! magnetar's buffers (data pointers shared, re-read when a buffer changes).

use crate::ffi::{self, Graph, SndBuf, Unit as CUnit, Wire};
use crate::table::{rt_alloc_bytes, rt_free_bytes};
use crate::async_cmds::InPlaceOutcome;
use crate::{host, print, UnitDef};
use magnetar_ugens::world::SpectrumForm;
use magnetar_ugens::{Rate, RateInfo, Unit, UnitCtx, UnitSpec, Wires, World};
use std::cell::Cell;
use std::os::raw::c_int;
use std::ptr::null_mut;

/// The C world of the thread running plugin units.
struct HostWorld {
    world: ffi::World,
    bufs: Vec<SndBuf>,
    /// The magnetar world and block last mirrored.
    stamp: (usize, i32),
}

/// What a running call into plugin code can reach (see `current_call`).
struct Call {
    cx: *mut UnitCtx<'static>,
    graph: *mut Graph,
}

thread_local! {
    static HOST_WORLD: Cell<*mut HostWorld> = const { Cell::new(null_mut()) };
    static CALL: Cell<*mut Call> = const { Cell::new(null_mut()) };
}

/// Runs `f` with the context of the unit whose plugin code is running on
/// this thread; does nothing outside a unit call.
pub(crate) fn current_call(f: impl FnOnce(&mut UnitCtx<'static>)) {
    let call = CALL.with(Cell::get);
    if call.is_null() {
        return;
    }
    // SAFETY: `CALL` is set only for the length of a call into plugin code
    // (`with_call`), pointing at a context that outlives it and that the
    // caller does not touch until the call returns.
    unsafe { f(&mut *(*call).cx) }
}

pub(crate) fn current_graph(f: impl FnOnce(*mut Graph)) {
    let call = CALL.with(Cell::get);
    if !call.is_null() {
        // SAFETY: as in `current_call`.
        f(unsafe { (*call).graph })
    }
}

fn c_rate(r: &RateInfo) -> ffi::Rate {
    ffi::Rate {
        sample_rate: r.sample_rate,
        sample_dur: r.sample_dur,
        buf_duration: r.buf_duration,
        buf_rate: r.buf_rate,
        slope_factor: r.slope_factor,
        radians_per_sample: r.radians_per_sample,
        buf_length: r.buf_length as c_int,
        filter_loops: r.filter_loops as c_int,
        filter_remain: r.filter_remain as c_int,
        filter_slope: r.filter_slope,
    }
}

/// scsynth's buffer mask (`BUFMASK`): the largest power of two not above
/// `samples`, minus one.
pub(crate) fn buf_mask(samples: usize) -> c_int {
    if samples == 0 {
        return -1;
    }
    let floor = 1usize << (usize::BITS - 1 - samples.leading_zeros());
    (floor as c_int).wrapping_sub(1)
}

fn coord(form: SpectrumForm) -> c_int {
    match form {
        SpectrumForm::None => 0,
        SpectrumForm::Complex => 1,
        SpectrumForm::Polar => 2,
    }
}

fn mirror(m: &mut SndBuf, b: &mut magnetar_ugens::SndBuf) {
    let data = if b.data.is_empty() { null_mut() } else { b.data.as_mut_ptr() };
    let channels = b.channels as c_int;
    let frames = b.frames as c_int;
    if m.data == data && m.frames == frames && m.channels == channels && m.samplerate == b.sample_rate {
        // Same buffer: keep what units wrote into the mirror (the FFT form).
        return;
    }
    let samples = b.samples();
    *m = SndBuf {
        samplerate: b.sample_rate,
        sampledur: if b.sample_rate > 0.0 { 1.0 / b.sample_rate } else { 0.0 },
        data,
        channels,
        samples: samples as c_int,
        frames,
        mask: buf_mask(samples),
        mask1: buf_mask(samples).wrapping_sub(1),
        coord: coord(b.spectrum),
        sndfile: null_mut(),
    };
}

/// Brings this thread's C world up to date with `world` and returns it.
/// `full` re-reads every buffer even within the same block.
pub(crate) fn sync_world(world: &mut World, full: bool) -> *mut ffi::World {
    let mut hw = HOST_WORLD.with(Cell::get);
    let table = host().map_or(null_mut(), |h| h.table as *const ffi::InterfaceTable as *mut ffi::InterfaceTable);
    if hw.is_null() || {
        // SAFETY: a non-null `HOST_WORLD` is this thread's, leaked below.
        unsafe { (*hw).bufs.len() != world.buffers.len() }
    } {
        // Once per thread (per buffer count): on the audio thread this
        // comes from the real-time pool. It stays for the thread's life,
        // since plugins keep pointers into the buffer array.
        let mut bufs = Vec::with_capacity(world.buffers.len());
        bufs.resize(world.buffers.len(), SndBuf::EMPTY);
        let fresh = Box::new(HostWorld {
            // SAFETY: the C world is plain data (numbers and pointers); all-zero is a valid value.
            world: unsafe { std::mem::zeroed() },
            bufs,
            stamp: (0, 0),
        });
        hw = Box::into_raw(fresh);
        HOST_WORLD.with(|c| c.set(hw));
    }
    // SAFETY: `hw` is this thread's own world; no plugin code runs now.
    let hw = unsafe { &mut *hw };
    let stamp = (world as *const World as usize, world.buf_counter);
    if full || hw.stamp != stamp {
        hw.stamp = stamp;
        for (m, b) in hw.bufs.iter_mut().zip(world.buffers.iter_mut()) {
            mirror(m, b);
        }
    }
    let bs = world.block_size.max(1);
    let w = &mut hw.world;
    w.ft = table;
    w.sample_rate = world.sample_rate;
    w.buf_length = world.block_size as c_int;
    w.buf_counter = world.buf_counter;
    w.num_audio_bus_channels = (world.audio_bus.len() / bs) as u32;
    w.num_control_bus_channels = world.control_bus.len() as u32;
    w.num_inputs = world.num_input_channels as u32;
    w.num_outputs = world.num_output_channels as u32;
    w.audio_bus = world.audio_bus.as_mut_ptr();
    w.control_bus = world.control_bus.as_mut_ptr();
    w.audio_bus_touched = world.audio_touched.as_mut_ptr();
    w.control_bus_touched = world.control_touched.as_mut_ptr();
    w.num_snd_bufs = hw.bufs.len() as u32;
    w.snd_bufs = hw.bufs.as_mut_ptr();
    w.snd_bufs_non_real_time_mirror = hw.bufs.as_mut_ptr();
    w.full_rate = c_rate(&world.full_rate);
    w.buf_rate = c_rate(&world.buf_rate);
    w.num_rgens = 1;
    // magnetar's generator has the C layout (three u32, `repr(C)`).
    w.rgen = &mut world.rgen as *mut magnetar_ugens::RGen as *mut ffi::RGen;
    w.num_graphs = world.num_synths;
    w.real_time = world.real_time;
    w.running = true;
    w.error_notification = 1;
    w.local_error_notification = 0;
    w
}

/// A proxy for the unit that feeds an input: what a plugin reads through
/// `mInput[i]->mFromUnit`.
#[repr(C)]
struct Proxy {
    unit: CUnit,
    /// The feeding unit's index in the synth.
    source: u32,
}

/// Runs the demand-rate unit a proxy stands for (a plugin's `DEMANDINPUT`).
unsafe extern "C" fn demand_trampoline(unit: *mut CUnit, n: c_int) {
    // SAFETY: only proxies get this calc function; a proxy starts with its `Unit`.
    let proxy = unsafe { &mut *(unit as *mut Proxy) };
    let source = proxy.source as usize;
    let mut done = false;
    current_call(|cx| {
        if let Some(runner) = cx.demand.as_deref_mut() {
            runner.run(source, n.max(0) as usize, cx.world, cx.synth, cx.done_flags);
        }
        done = cx.unit_done(source);
    });
    proxy.unit.done = done as i16;
}

/// A unit of a plugin library, run where a native unit would be.
pub struct ForeignUnit {
    def: &'static UnitDef,
    /// The plugin's struct: a C `Unit` followed by the plugin's state,
    /// from the real-time pool (the global allocator's, on the audio thread).
    unit: *mut CUnit,
    graph: Box<Graph>,
    in_bufs: Vec<*mut f32>,
    out_bufs: Vec<*mut f32>,
    in_wires: Vec<Wire>,
    out_wires: Vec<Wire>,
    in_wire_ptrs: Vec<*mut Wire>,
    out_wire_ptrs: Vec<*mut Wire>,
    proxies: Vec<Proxy>,
    local_bufs: Vec<SndBuf>,
    demand: bool,
    /// The plugin threw; the unit writes silence from then on.
    failed: bool,
}

// SAFETY: the raw pointers all point into memory this unit owns (or the
// running thread's C world, re-set before each call); the unit is used by
// one thread at a time, as every unit is.
unsafe impl Send for ForeignUnit {}

fn rate_code(r: Rate) -> i16 {
    match r {
        Rate::Scalar => ffi::CALC_SCALAR,
        Rate::Control => ffi::CALC_BUF,
        Rate::Audio => ffi::CALC_FULL,
        Rate::Demand => ffi::CALC_DEMAND,
    }
}

/// The registry's constructor for every plugin unit: finds the plugin's
/// definition by name and builds the unit.
pub(crate) fn construct(spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Box<dyn Unit> {
    let def = host().and_then(|h| h.units.get(spec.name));
    let Some(def) = def else {
        // Registered only for names the host has, so this is unreachable in
        // practice; a silent unit is the safe answer.
        io.clear_outputs();
        return Box::new(Silent);
    };
    Box::new(ForeignUnit::new(def, spec, io, cx))
}

struct Silent;

impl Unit for Silent {
    fn next(&mut self, io: &mut Wires<'_>, _cx: &mut UnitCtx<'_>) {
        io.clear_outputs();
    }
}

impl ForeignUnit {
    fn new(def: &'static UnitDef, spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> ForeignUnit {
        let ni = io.num_inputs();
        let no = io.num_outputs();
        let bs = cx.world.block_size;
        let unit = rt_alloc_bytes(def.alloc_size, true) as *mut CUnit;
        let empty_wire = || Wire { from_unit: null_mut(), calc_rate: 0, buffer: null_mut(), scalar_value: 0.0 };
        let mut u = ForeignUnit {
            def,
            unit,
            // SAFETY: the C graph is plain data; all-zero is a valid value.
            graph: Box::new(unsafe { std::mem::zeroed() }),
            in_bufs: vec![null_mut(); ni],
            out_bufs: vec![null_mut(); no],
            in_wires: (0..ni).map(|_| empty_wire()).collect(),
            out_wires: (0..no).map(|_| empty_wire()).collect(),
            in_wire_ptrs: vec![null_mut(); ni],
            out_wire_ptrs: vec![null_mut(); no],
            // SAFETY: as for the graph.
            proxies: (0..ni).map(|_| Proxy { unit: unsafe { std::mem::zeroed() }, source: 0 }).collect(),
            local_bufs: vec![SndBuf::EMPTY; cx.synth.max_local_bufs.max(1)],
            demand: spec.rate == Rate::Demand,
            failed: unit.is_null(),
        };
        if u.failed {
            eprintln!("plugins: no real-time memory for {} (increase -m)", def.name);
            io.clear_outputs();
            return u;
        }
        for i in 0..ni {
            u.in_wire_ptrs[i] = &mut u.in_wires[i];
            let rate = io.in_rate(i);
            u.in_wires[i].calc_rate = rate_code(rate) as i32;
            if let Some(src) = io.in_source(i) {
                let p = &mut u.proxies[i];
                p.source = src as u32;
                p.unit.calc_rate = rate_code(rate);
                p.unit.buf_length = if rate == Rate::Audio { bs as c_int } else { 1 };
                if rate == Rate::Demand {
                    p.unit.calc_func = Some(demand_trampoline);
                }
                u.in_wires[i].from_unit = &mut p.unit;
            }
        }
        for j in 0..no {
            u.out_wire_ptrs[j] = &mut u.out_wires[j];
            u.out_wires[j].calc_rate = rate_code(spec.rate) as i32;
            u.out_wires[j].from_unit = unit;
        }
        // SAFETY: `unit` holds `alloc_size` >= size_of::<CUnit>() zeroed
        // bytes (checked in DefineUnit), and the arrays it points at live
        // as long as `u` (their heap buffers never move: they never grow).
        unsafe {
            let c = &mut *unit;
            c.num_inputs = ni as u32;
            c.num_outputs = no as u32;
            c.calc_rate = rate_code(spec.rate);
            c.special_index = spec.special_index;
            c.parent_index = cx.unit_index as i16;
            c.input = u.in_wire_ptrs.as_mut_ptr();
            c.output = u.out_wire_ptrs.as_mut_ptr();
            c.in_buf = u.in_bufs.as_mut_ptr();
            c.out_buf = u.out_bufs.as_mut_ptr();
            c.buf_length = if spec.rate == Rate::Audio { bs as c_int } else { 1 };
        }
        let world = sync_world(cx.world, true);
        // SAFETY: as above; `world` is this thread's C world.
        unsafe {
            (*world).sample_offset = cx.synth.sample_offset;
            (*world).subsample_offset = cx.synth.subsample_offset;
        }
        u.graph.sample_offset = cx.synth.sample_offset;
        u.graph.subsample_offset = cx.synth.subsample_offset;
        let ctor = def.ctor;
        let threw = u.call(io, cx, world, |unit| {
            // SAFETY: the plugin's constructor with the unit it defined;
            // the shim stops an exception.
            unsafe { ffi::mg_call_ctor(ctor, unit) }
        });
        // SAFETY: as above.
        unsafe {
            (*world).sample_offset = 0;
            (*world).subsample_offset = 0.0;
        }
        if threw {
            u.fail(io, "constructor");
        }
        u
    }

    fn fail(&mut self, io: &mut Wires<'_>, what: &str) {
        self.failed = true;
        io.clear_outputs();
        // Printed from the audio thread's queue, as Poll lines are.
        let was = print::set_in_unit(true);
        let msg = format!("plugins: {} ({}) threw an exception in its {what}; it outputs silence\n", self.def.name, self.def.library);
        // SAFETY: passes a buffer and its length.
        unsafe { crate::print::magnetar_plugin_print(msg.as_ptr(), msg.len()) };
        print::set_in_unit(was);
    }

    /// Points the C unit at this call's wires, world and synth, runs `f`
    /// with `CALL` set, and carries the done flag back. Returns whether
    /// the plugin threw.
    fn call(
        &mut self,
        io: &mut Wires<'_>,
        cx: &mut UnitCtx<'_>,
        world: *mut ffi::World,
        f: impl FnOnce(*mut CUnit) -> c_int,
    ) -> bool {
        let unit = self.unit;
        for i in 0..self.in_bufs.len() {
            let p = io.inp(i).as_ptr() as *mut f32;
            self.in_bufs[i] = p;
            self.in_wires[i].buffer = p;
            if let Some(src) = io.in_source(i) {
                self.proxies[i].unit.done = cx.unit_done(src) as i16;
                self.proxies[i].unit.world = world;
            }
        }
        for j in 0..self.out_bufs.len() {
            let p = io.out_ptr(j);
            self.out_bufs[j] = p;
            self.out_wires[j].buffer = p;
        }
        let nlocal = cx.synth.local_bufs.len().min(self.local_bufs.len());
        for (m, b) in self.local_bufs.iter_mut().zip(cx.synth.local_bufs.iter_mut()) {
            mirror(m, b);
            // Each unit has its own copy of the synth's local buffers: the
            // spectrum form travels through magnetar's buffer.
            m.coord = coord(b.spectrum);
        }
        let g = &mut *self.graph;
        g.node.id = cx.synth.node_id;
        g.node.world = world;
        g.num_controls = cx.synth.controls.len() as u32;
        g.controls = cx.synth.controls.as_mut_ptr();
        g.rgen = &mut cx.world.rgen as *mut magnetar_ugens::RGen as *mut ffi::RGen;
        g.local_snd_bufs = self.local_bufs.as_mut_ptr();
        g.local_buf_num = nlocal as c_int;
        g.local_max_buf_num = self.local_bufs.len() as c_int;
        let graph: *mut Graph = g;
        // SAFETY: `unit` is this unit's live C struct (see `new`).
        unsafe {
            let c = &mut *unit;
            c.world = world;
            c.parent = graph;
            c.rate = if c.calc_rate == ffi::CALC_FULL { &mut (*world).full_rate } else { &mut (*world).buf_rate };
            c.done = cx.is_done() as i16;
        }
        let mut call = Call { cx: (cx as *mut UnitCtx<'_>).cast(), graph };
        let previous = CALL.with(|c| c.replace(&mut call));
        let was = print::set_in_unit(true);
        let threw = f(unit) != 0;
        print::set_in_unit(was);
        CALL.with(|c| c.set(previous));
        for (m, b) in self.local_bufs.iter().zip(cx.synth.local_bufs.iter_mut()) {
            b.spectrum = match m.coord {
                1 => SpectrumForm::Complex,
                2 => SpectrumForm::Polar,
                _ => SpectrumForm::None,
            };
        }
        // SAFETY: as above; the plugin call has returned.
        let done = unsafe { (*unit).done != 0 };
        cx.set_done(done);
        threw
    }

    /// Runs a `/u_cmd` the plugin defined for this unit. False when the
    /// unit has no such command.
    pub fn command(&mut self, name: &str, args: &[u8], io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> bool {
        let Some(func) = crate::unit_cmds::find(self.def.name, name) else { return false };
        if self.failed {
            return true;
        }
        let world = sync_world(cx.world, false);
        let threw = self.call(io, cx, world, |unit| {
            // SAFETY: the plugin's own command with its unit and an OSC
            // argument block that lives for the call.
            unsafe { ffi::mg_call_unit_cmd(func, unit, args.as_ptr() as *const _, args.len() as c_int) }
        });
        if threw {
            self.fail(io, "unit command");
        }
        true
    }
}

impl Unit for ForeignUnit {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.failed {
            io.clear_outputs();
            return;
        }
        // SAFETY: `unit` is live (see `new`); reading its calc function.
        let Some(calc) = (unsafe { (*self.unit).calc_func }) else {
            io.clear_outputs();
            return;
        };
        let n = if self.demand { cx.demanded } else { io.n() } as c_int;
        let world = sync_world(cx.world, false);
        let threw = self.call(io, cx, world, |unit| {
            // SAFETY: the calc function the plugin set, with its own unit.
            unsafe { ffi::mg_call_calc(calc, unit, n) }
        });
        if threw {
            self.fail(io, "calc function");
        }
    }

    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        let Some(dtor) = self.def.dtor else { return };
        if self.unit.is_null() {
            return;
        }
        let world = sync_world(cx.world, false);
        // SAFETY: the unit is live; its wires still point at memory of the
        // synth being freed, which outlives this call.
        unsafe { (*self.unit).world = world };
        let mut call = Call { cx: (cx as *mut UnitCtx<'_>).cast(), graph: &mut *self.graph };
        let previous = CALL.with(|c| c.replace(&mut call));
        let was = print::set_in_unit(true);
        // SAFETY: the plugin's destructor with its own unit, once.
        let threw = unsafe { ffi::mg_call_dtor(dtor, self.unit) };
        print::set_in_unit(was);
        CALL.with(|c| c.set(previous));
        if threw != 0 {
            eprintln!("plugins: {} threw an exception in its destructor", self.def.name);
        }
    }

    fn command(&mut self, name: &str, args: &[u8], io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> bool {
        ForeignUnit::command(self, name, args, io, cx)
    }
}

impl Drop for ForeignUnit {
    fn drop(&mut self) {
        rt_free_bytes(self.unit as *mut u8);
    }
}

/// Why a `/cmd` could not run.
#[derive(Debug, thiserror::Error)]
pub enum PluginCommandError {
    #[error("no plugin command named {0}")]
    Unknown(String),
    #[error("plugin command {0} threw an exception")]
    Threw(String),
}

/// Runs `/cmd name args...` (`args` the OSC block from the type tags on).
/// Returns what the asynchronous commands it started and ran in place
/// (when no server stages them, see [`crate::async_cmds`]) leave: for each,
/// its completion message to perform and its name to answer `/done` with.
pub fn run_plugin_command(name: &str, args: &[u8], world: &mut World) -> Result<Vec<InPlaceOutcome>, PluginCommandError> {
    let cmd = host().and_then(|h| h.commands.get(name)).ok_or_else(|| PluginCommandError::Unknown(name.into()))?;
    let cworld = sync_world(world, true);
    let mut outcomes = Vec::new();
    let reply = crate::async_cmds::REPLY_TOKEN.as_ptr() as *mut std::os::raw::c_void;
    let threw = crate::async_cmds::collecting(&mut outcomes, || {
        // SAFETY: the plugin's command with its user data, an argument
        // block that lives for the call and a reply address it may copy;
        // the shim stops an exception.
        unsafe { ffi::mg_call_plugin_cmd(cmd.func, cworld, cmd.user as *mut _, args.as_ptr() as *const _, args.len() as c_int, reply) }
    });
    if threw != 0 {
        return Err(PluginCommandError::Threw(name.into()));
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::buf_mask;

    #[test]
    fn buffer_masks_are_scsynths_bufmask() {
        // The largest power of two not above the sample count, minus one.
        assert_eq!(buf_mask(1), 0);
        assert_eq!(buf_mask(16), 15);
        assert_eq!(buf_mask(24), 15);
        assert_eq!(buf_mask(44_100), 32_767);
        assert_eq!(buf_mask(0), -1);
    }
}
