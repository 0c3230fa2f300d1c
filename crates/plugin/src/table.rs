//! The interface table plugins call back through: the functions scsynth
//! fills into `InterfaceTable`, backed by magnetar.

use crate::ffi::{self, Graph, InterfaceTable, Node, Unit, World};
use crate::loader::LOADING;
use crate::unit::current_call;
use crate::{PluginCmd, UnitDef};
use magnetar_ugens::world::Trigger;
use std::alloc::Layout;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Builds the table once; it lives for the rest of the process, since
/// plugins keep its address.
pub(crate) fn build() -> &'static InterfaceTable {
    let sine = magnetar_ugens::common::wavetable::sine_tables();
    let mut t = Box::new(InterfaceTable {
        sine_size: magnetar_ugens::common::wavetable::SINE_SIZE as u32,
        // Plugins only read the tables; the interface declares them mutable.
        sine_wavetable: sine.wavetable.as_ptr() as *mut f32,
        sine: sine.sine.as_ptr() as *mut f32,
        cosecant: sine.cosecant.as_ptr() as *mut f32,
        f_print: std::ptr::null_mut(),
        f_ran_seed: Some(ran_seed),
        f_define_unit: Some(define_unit),
        f_define_plugin_cmd: Some(define_plugin_cmd),
        f_define_unit_cmd: Some(define_unit_cmd),
        f_define_buf_gen: Some(define_buf_gen),
        f_clear_unit_outputs: Some(clear_unit_outputs),
        f_nrt_alloc: Some(nrt_alloc),
        f_nrt_realloc: Some(nrt_realloc),
        f_nrt_free: Some(nrt_free),
        f_rt_alloc: Some(rt_alloc),
        f_rt_realloc: Some(rt_realloc),
        f_rt_free: Some(rt_free),
        f_node_run: Some(node_run),
        f_node_end: Some(node_end),
        f_send_trigger: Some(send_trigger),
        f_send_node_reply: Some(send_node_reply),
        f_send_msg_from_rt: Some(crate::fifo::send_msg_from_rt),
        f_send_msg_to_rt: Some(crate::fifo::send_msg_to_rt),
        f_snd_file_format_info_from_strings: Some(crate::sndfile_format::format_info_from_strings),
        f_get_node: Some(get_node),
        f_get_graph: Some(get_graph),
        f_nrt_lock: Some(nrt_lock),
        f_nrt_unlock: Some(nrt_unlock),
        unused0: false,
        f_group_delete_all: Some(group_delete_all),
        f_done_action: Some(done_action),
        f_do_asynchronous_command: Some(crate::async_cmds::do_asynchronous_command),
        f_buf_alloc: Some(crate::bufgen::buf_alloc),
        f_scfft_create: std::ptr::null_mut(),
        f_scfft_do_fft: std::ptr::null_mut(),
        f_scfft_do_ifft: std::ptr::null_mut(),
        f_scfft_destroy: std::ptr::null_mut(),
        f_get_scope_buffer: Some(get_scope_buffer),
        f_push_scope_buffer: Some(push_scope_buffer),
        f_release_scope_buffer: Some(release_scope_buffer),
    });
    // SAFETY: the table is fully initialised; the shim writes `Print` and
    // the FFT helpers into it before any plugin sees it. The FFT plans come
    // later (`crate::prepare_fft`).
    unsafe { ffi::mg_fill_table(&mut *t) };
    Box::leak(t)
}

/// A C string from a plugin, or "" for null or invalid text.
///
/// # Safety
/// `s` is null or NUL-terminated and lives for `'a`.
unsafe fn text<'a>(s: *const c_char) -> &'a str {
    if s.is_null() {
        return "";
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(s) }.to_str().unwrap_or("")
}

unsafe extern "C" fn ran_seed() -> i32 {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let k = COUNT.fetch_add(1, Ordering::Relaxed);
    magnetar_ugens::rgen::hash32((nanos ^ k.wrapping_mul(0x9e37_79b9)) as i32)
}

unsafe extern "C" fn define_unit(
    name: *const c_char,
    alloc_size: usize,
    ctor: ffi::UnitCtorFunc,
    dtor: Option<ffi::UnitDtorFunc>,
    flags: u32,
) -> bool {
    // SAFETY: the plugin passes its unit's name, a C string.
    let name = unsafe { text(name) };
    let mut guard = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(loading) = guard.as_mut() else { return false };
    if name.is_empty() || alloc_size < std::mem::size_of::<Unit>() {
        return false;
    }
    if loading.units.contains_key(name) {
        // scsynth keeps the first definition of a name, without a word.
        return false;
    }
    let name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let library = loading.library;
    loading.units.insert(name, UnitDef { name, alloc_size, ctor, dtor, flags, library });
    true
}

unsafe extern "C" fn define_plugin_cmd(name: *const c_char, func: ffi::PlugInCmdFunc, user: *mut c_void) -> bool {
    // SAFETY: a C string from the plugin.
    let name = unsafe { text(name) };
    let mut guard = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(loading) = guard.as_mut() else { return false };
    if name.is_empty() || loading.commands.contains_key(name) {
        return false;
    }
    loading.commands.insert(name.to_string(), PluginCmd { func, user: user as usize });
    true
}

unsafe extern "C" fn define_unit_cmd(unit: *const c_char, cmd: *const c_char, func: ffi::UnitCmdFunc) -> bool {
    // SAFETY: C strings from the plugin.
    let (unit, cmd) = unsafe { (text(unit), text(cmd)) };
    crate::unit_cmds::define(unit, cmd, func)
}

unsafe extern "C" fn define_buf_gen(name: *const c_char, func: ffi::BufGenFunc) -> bool {
    // SAFETY: a C string from the plugin.
    let name = unsafe { text(name) };
    let mut guard = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(loading) = guard.as_mut() else { return false };
    if name.is_empty() || loading.buf_gens.contains_key(name) {
        return false;
    }
    loading.buf_gens.insert(name.to_string(), func);
    true
}

unsafe extern "C" fn clear_unit_outputs(unit: *mut Unit, n: c_int) {
    if unit.is_null() || n <= 0 {
        return;
    }
    // SAFETY: `unit` is a unit this host built (plugins pass their own);
    // each output buffer holds at least `n` samples for this call.
    unsafe {
        let u = &*unit;
        for i in 0..u.num_outputs as usize {
            let out = *u.out_buf.add(i);
            std::ptr::write_bytes(out, 0, n as usize);
        }
    }
}

unsafe extern "C" fn nrt_alloc(size: usize) -> *mut c_void {
    // SAFETY: plain malloc, as scsynth's NRTAlloc.
    unsafe { libc::malloc(size) }
}

unsafe extern "C" fn nrt_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `p` came from nrt_alloc (malloc) or is null.
    unsafe { libc::realloc(p, size) }
}

unsafe extern "C" fn nrt_free(p: *mut c_void) {
    // SAFETY: `p` came from nrt_alloc (malloc) or is null.
    unsafe { libc::free(p) }
}

/// RT memory carries its size in a header, since `RTFree` gets only the
/// pointer. On the audio thread the global allocator serves it from
/// magnetar's real-time pool.
const HEADER: usize = 16;

fn rt_layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
}

/// Memory for a unit; also what `ForeignUnit` allocates its struct with.
pub(crate) fn rt_alloc_bytes(size: usize, zeroed: bool) -> *mut u8 {
    let Some(layout) = rt_layout(size) else { return std::ptr::null_mut() };
    // SAFETY: the layout's size is at least HEADER, never zero.
    let base = unsafe { if zeroed { std::alloc::alloc_zeroed(layout) } else { std::alloc::alloc(layout) } };
    if base.is_null() {
        return base;
    }
    // SAFETY: the block holds HEADER bytes before the user's part.
    unsafe {
        (base as *mut usize).write(size);
        base.add(HEADER)
    }
}

pub(crate) fn rt_free_bytes(p: *mut u8) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` came from rt_alloc_bytes: its header holds the size it was made with.
    unsafe {
        let base = p.sub(HEADER);
        let size = (base as *const usize).read();
        if let Some(layout) = rt_layout(size) {
            std::alloc::dealloc(base, layout);
        }
    }
}

// A plugin's RTAlloc answers null, as scsynth's does, when the real-time
// pool cannot hold the request, rather than taking the system heap on the
// audio thread; plugins check for it (`ClearUnitIfMemFailed`).
unsafe extern "C" fn rt_alloc(_world: *mut World, size: usize) -> *mut c_void {
    magnetar_rt::fallible::refusable(|| rt_alloc_bytes(size, false)) as *mut c_void
}

unsafe extern "C" fn rt_realloc(_world: *mut World, p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() {
        return magnetar_rt::fallible::refusable(|| rt_alloc_bytes(size, false)) as *mut c_void;
    }
    let fresh = magnetar_rt::fallible::refusable(|| rt_alloc_bytes(size, false));
    if fresh.is_null() {
        return fresh as *mut c_void;
    }
    // SAFETY: `p` came from rt_alloc_bytes; its header holds its size.
    unsafe {
        let old = ((p as *mut u8).sub(HEADER) as *const usize).read();
        std::ptr::copy_nonoverlapping(p as *const u8, fresh, old.min(size));
    }
    rt_free_bytes(p as *mut u8);
    fresh as *mut c_void
}

unsafe extern "C" fn rt_free(_world: *mut World, p: *mut c_void) {
    rt_free_bytes(p as *mut u8)
}

/// The node id behind a node pointer from a plugin.
///
/// # Safety
/// `node` is null or a node this host gave the plugin.
unsafe fn node_id(node: *mut Node) -> Option<i32> {
    // SAFETY: the caller's contract.
    (!node.is_null()).then(|| unsafe { (*node).id })
}

unsafe extern "C" fn node_run(node: *mut Node, run: c_int) {
    // SAFETY: plugins pass nodes they got from this host.
    let Some(id) = (unsafe { node_id(node) }) else { return };
    current_call(|cx| {
        let reqs = &mut cx.synth.run_requests;
        if reqs.len() < reqs.capacity() {
            reqs.push((id, run != 0));
        }
    });
}

unsafe extern "C" fn node_end(node: *mut Node) {
    // SAFETY: plugins pass nodes they got from this host.
    let Some(id) = (unsafe { node_id(node) }) else { return };
    current_call(|cx| {
        if id == cx.synth.node_id {
            cx.synth.request_done_action(2);
        } else {
            let reqs = &mut cx.synth.free_requests;
            if reqs.len() < reqs.capacity() {
                reqs.push(id);
            }
        }
    });
}

fn push_trigger(trigger: impl FnOnce() -> Trigger) {
    current_call(|cx| cx.world.push_trigger(trigger));
}

unsafe extern "C" fn send_trigger(node: *mut Node, id: c_int, value: f32) {
    // SAFETY: plugins pass nodes they got from this host.
    let Some(node_id) = (unsafe { node_id(node) }) else { return };
    push_trigger(|| Trigger { node_id, id, cmd: None, values: vec![value] });
}

unsafe extern "C" fn send_node_reply(node: *mut Node, id: c_int, cmd: *const c_char, n: c_int, values: *const f32) {
    // SAFETY: plugins pass nodes they got from this host.
    let Some(node_id) = (unsafe { node_id(node) }) else { return };
    // SAFETY: `cmd` is a C string and `values` holds `n` floats (the interface's contract).
    let (cmd, values) = unsafe {
        let values = if values.is_null() || n <= 0 { &[][..] } else { std::slice::from_raw_parts(values, n as usize) };
        (text(cmd), values)
    };
    push_trigger(|| Trigger { node_id, id, cmd: Some(cmd.to_string()), values: values.to_vec() });
}

unsafe extern "C" fn get_node(_world: *mut World, id: c_int) -> *mut Node {
    current_graph(id).map_or(std::ptr::null_mut(), |g| g as *mut Node)
}

unsafe extern "C" fn get_graph(_world: *mut World, id: c_int) -> *mut Graph {
    current_graph(id).map_or(std::ptr::null_mut(), |g| g)
}

/// The running unit's synth, when it is node `id` (the only node a plugin
/// may reach: others may be running on other threads).
fn current_graph(id: c_int) -> Option<*mut Graph> {
    let mut found = None;
    crate::unit::current_graph(|g| {
        // SAFETY: the graph of the unit being called, alive for the call.
        if unsafe { (*g).node.id } == id {
            found = Some(g);
        }
    });
    found
}

static NRT_LOCKED: AtomicBool = AtomicBool::new(false);

unsafe extern "C" fn nrt_lock(_world: *mut World) {
    // Taken only on non-real-time threads (plugin command stages).
    while NRT_LOCKED.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        std::thread::yield_now();
    }
}

unsafe extern "C" fn nrt_unlock(_world: *mut World) {
    NRT_LOCKED.store(false, Ordering::Release);
}

unsafe extern "C" fn group_delete_all(_group: *mut c_void) {}

unsafe extern "C" fn done_action(action: c_int, _unit: *mut Unit) {
    current_call(|cx| cx.synth.request_done_action(action));
}

/// scsynth's `ScopeBufferHnd`: what `ScopeOut2` keeps of its scope buffer.
/// `internal` holds the buffer's index plus one (null: no buffer).
#[repr(C)]
struct ScopeBufferHnd {
    internal: *mut c_void,
    data: *mut f32,
    channels: u32,
    max_frames: u32,
}

// Scope buffers are the shared memory segment's, as magnetar's own
// ScopeOut2 uses them (sclang's scope reads them): bounded work without a
// system call or an allocation, on the thread running the unit.
unsafe extern "C" fn get_scope_buffer(_w: *mut World, index: c_int, channels: c_int, frames: c_int, hnd: *mut c_void) -> bool {
    if hnd.is_null() {
        return false;
    }
    // SAFETY: the plugin passes its own handle (a `ScopeBufferHnd`).
    let h = unsafe { &mut *(hnd as *mut ScopeBufferHnd) };
    h.internal = std::ptr::null_mut();
    let (Ok(index), Ok(channels), Ok(frames)) = (u32::try_from(index), u32::try_from(channels), u32::try_from(frames)) else {
        return false;
    };
    let mut region = None;
    current_call(|cx| {
        // A scope shorter than a block: scsynth's ScopeOut2 would write
        // past it, into the next buffer of the segment. Refused.
        if (frames as usize) < cx.world.block_size {
            return;
        }
        region = cx.world.scope_buffers.as_mut().and_then(|b| b.acquire(index, channels, frames));
    });
    let Some(region) = region else { return false };
    h.internal = (index as usize + 1) as *mut c_void;
    h.data = region.as_ptr();
    h.channels = channels;
    h.max_frames = frames;
    true
}

/// The index of the scope buffer behind a handle, if it holds one.
///
/// # Safety
/// `hnd` is null or a plugin's `ScopeBufferHnd`.
unsafe fn scope_index<'a>(hnd: *mut c_void) -> Option<(u32, &'a mut ScopeBufferHnd)> {
    if hnd.is_null() {
        return None;
    }
    // SAFETY: the caller's contract; the plugin's handle outlives the call.
    let h = unsafe { &mut *(hnd as *mut ScopeBufferHnd) };
    let index = (h.internal as usize).checked_sub(1)?;
    Some((index as u32, h))
}

unsafe extern "C" fn push_scope_buffer(_w: *mut World, hnd: *mut c_void, frames: c_int) {
    // SAFETY: plugins pass the handle `get_scope_buffer` filled.
    let Some((index, h)) = (unsafe { scope_index(hnd) }) else { return };
    let frames = u32::try_from(frames).unwrap_or(0).min(h.max_frames);
    current_call(|cx| {
        if let Some(next) = cx.world.scope_buffers.as_mut().and_then(|b| b.push(index, frames)) {
            h.data = next.as_ptr();
        }
    });
}

unsafe extern "C" fn release_scope_buffer(_w: *mut World, hnd: *mut c_void) {
    // SAFETY: plugins pass the handle `get_scope_buffer` filled.
    let Some((index, h)) = (unsafe { scope_index(hnd) }) else { return };
    h.internal = std::ptr::null_mut();
    current_call(|cx| {
        if let Some(b) = cx.world.scope_buffers.as_mut() {
            b.release(index);
        }
    });
}
