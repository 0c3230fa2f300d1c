//! The C structs of SuperCollider 3.13's plugin interface (API version 3,
//! scsynth builds), as plugins read them by offset, and the C++ shim's
//! entry points. `tests` checks every size and the offsets plugins lean on
//! against the figures the shim computes from the installed headers.

use std::os::raw::{c_char, c_int, c_long, c_void};

pub type UnitCtorFunc = unsafe extern "C" fn(*mut Unit);
pub type UnitDtorFunc = unsafe extern "C" fn(*mut Unit);
pub type UnitCalcFunc = unsafe extern "C" fn(*mut Unit, c_int);
pub type LoadFunc = unsafe extern "C" fn(*mut InterfaceTable);
pub type UnloadFunc = unsafe extern "C" fn();
pub type ApiVersionFunc = unsafe extern "C" fn() -> c_int;
pub type PlugInCmdFunc = unsafe extern "C" fn(*mut World, *mut c_void, *mut c_void, *mut c_void);
pub type UnitCmdFunc = unsafe extern "C" fn(*mut Unit, *mut c_void);
pub type AsyncStageFn = unsafe extern "C" fn(*mut World, *mut c_void) -> bool;
pub type AsyncFreeFn = unsafe extern "C" fn(*mut World, *mut c_void);
/// `BufGenFunc`: a `/b_gen` generator (the message iterator is opaque here).
pub type BufGenFunc = unsafe extern "C" fn(*mut World, *mut SndBuf, *mut c_void);

pub const CALC_SCALAR: i16 = 0;
pub const CALC_BUF: i16 = 1;
pub const CALC_FULL: i16 = 2;
pub const CALC_DEMAND: i16 = 3;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Rate {
    pub sample_rate: f64,
    pub sample_dur: f64,
    pub buf_duration: f64,
    pub buf_rate: f64,
    pub slope_factor: f64,
    pub radians_per_sample: f64,
    pub buf_length: c_int,
    pub filter_loops: c_int,
    pub filter_remain: c_int,
    pub filter_slope: f64,
}

#[repr(C)]
pub struct Wire {
    pub from_unit: *mut Unit,
    pub calc_rate: i32,
    pub buffer: *mut f32,
    pub scalar_value: f32,
}

#[repr(C)]
pub struct Unit {
    pub world: *mut World,
    pub unit_def: *mut c_void,
    pub parent: *mut Graph,
    pub num_inputs: u32,
    pub num_outputs: u32,
    pub calc_rate: i16,
    pub special_index: i16,
    pub parent_index: i16,
    pub done: i16,
    pub input: *mut *mut Wire,
    pub output: *mut *mut Wire,
    pub rate: *mut Rate,
    pub extensions: *mut c_void,
    pub in_buf: *mut *mut f32,
    pub out_buf: *mut *mut f32,
    pub calc_func: Option<UnitCalcFunc>,
    pub buf_length: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct SndBuf {
    pub samplerate: f64,
    pub sampledur: f64,
    pub data: *mut f32,
    pub channels: c_int,
    pub samples: c_int,
    pub frames: c_int,
    pub mask: c_int,
    pub mask1: c_int,
    pub coord: c_int,
    pub sndfile: *mut c_void,
}

impl SndBuf {
    pub const EMPTY: SndBuf = SndBuf {
        samplerate: 0.0,
        sampledur: 0.0,
        data: std::ptr::null_mut(),
        channels: 0,
        samples: 0,
        frames: 0,
        mask: 0,
        mask1: 0,
        coord: 0,
        sndfile: std::ptr::null_mut(),
    };
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RGen {
    pub s1: u32,
    pub s2: u32,
    pub s3: u32,
}

#[repr(C)]
pub struct Node {
    pub id: i32,
    pub hash: i32,
    pub world: *mut World,
    pub def: *mut c_void,
    pub calc_func: *mut c_void,
    pub prev: *mut Node,
    pub next: *mut Node,
    pub parent: *mut c_void,
    pub is_group: i32,
}

#[repr(C)]
pub struct Graph {
    pub node: Node,
    pub num_wires: u32,
    pub wire: *mut Wire,
    pub num_controls: u32,
    pub controls: *mut f32,
    pub map_controls: *mut *mut f32,
    pub audio_bus_offsets: *mut i32,
    pub control_rates: *mut c_int,
    pub num_units: u32,
    pub units: *mut *mut Unit,
    pub num_calc_units: u32,
    pub calc_units: *mut *mut Unit,
    pub sample_offset: c_int,
    pub rgen: *mut RGen,
    pub local_audio_bus_unit: *mut Unit,
    pub local_control_bus_unit: *mut Unit,
    pub subsample_offset: f32,
    pub local_snd_bufs: *mut SndBuf,
    pub local_buf_num: c_int,
    pub local_max_buf_num: c_int,
    pub private: *mut c_void,
}

#[repr(C)]
pub struct World {
    pub hw: *mut c_void,
    pub ft: *mut InterfaceTable,
    pub sample_rate: f64,
    pub buf_length: c_int,
    pub buf_counter: c_int,
    pub num_audio_bus_channels: u32,
    pub num_control_bus_channels: u32,
    pub num_inputs: u32,
    pub num_outputs: u32,
    pub audio_bus: *mut f32,
    pub control_bus: *mut f32,
    pub audio_bus_touched: *mut i32,
    pub control_bus_touched: *mut i32,
    pub num_snd_bufs: u32,
    pub snd_bufs: *mut SndBuf,
    pub snd_bufs_non_real_time_mirror: *mut SndBuf,
    pub snd_buf_updates: *mut c_void,
    pub top_group: *mut c_void,
    pub full_rate: Rate,
    pub buf_rate: Rate,
    pub num_rgens: u32,
    pub rgen: *mut RGen,
    pub num_units: u32,
    pub num_graphs: u32,
    pub num_groups: u32,
    pub sample_offset: c_int,
    pub nrt_lock: *mut c_void,
    pub num_shared_controls: u32,
    pub shared_controls: *mut f32,
    pub real_time: bool,
    pub running: bool,
    pub dump_osc: c_int,
    pub driver_lock: *mut c_void,
    pub subsample_offset: f32,
    pub verbosity: c_int,
    pub error_notification: c_int,
    pub local_error_notification: c_int,
    pub rendezvous: bool,
    pub restricted_path: *const c_char,
}

type Opaque = *mut c_void;

/// Filled by `table::build`; field order is the header's.
#[repr(C)]
pub struct InterfaceTable {
    pub sine_size: u32,
    pub sine_wavetable: *mut f32,
    pub sine: *mut f32,
    pub cosecant: *mut f32,
    pub f_print: Opaque,
    pub f_ran_seed: Option<unsafe extern "C" fn() -> i32>,
    pub f_define_unit: Option<unsafe extern "C" fn(*const c_char, usize, UnitCtorFunc, Option<UnitDtorFunc>, u32) -> bool>,
    pub f_define_plugin_cmd: Option<unsafe extern "C" fn(*const c_char, PlugInCmdFunc, *mut c_void) -> bool>,
    pub f_define_unit_cmd: Option<unsafe extern "C" fn(*const c_char, *const c_char, UnitCmdFunc) -> bool>,
    pub f_define_buf_gen: Option<unsafe extern "C" fn(*const c_char, BufGenFunc) -> bool>,
    pub f_clear_unit_outputs: Option<unsafe extern "C" fn(*mut Unit, c_int)>,
    pub f_nrt_alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    pub f_nrt_realloc: Option<unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void>,
    pub f_nrt_free: Option<unsafe extern "C" fn(*mut c_void)>,
    pub f_rt_alloc: Option<unsafe extern "C" fn(*mut World, usize) -> *mut c_void>,
    pub f_rt_realloc: Option<unsafe extern "C" fn(*mut World, *mut c_void, usize) -> *mut c_void>,
    pub f_rt_free: Option<unsafe extern "C" fn(*mut World, *mut c_void)>,
    pub f_node_run: Option<unsafe extern "C" fn(*mut Node, c_int)>,
    pub f_node_end: Option<unsafe extern "C" fn(*mut Node)>,
    pub f_send_trigger: Option<unsafe extern "C" fn(*mut Node, c_int, f32)>,
    pub f_send_node_reply: Option<unsafe extern "C" fn(*mut Node, c_int, *const c_char, c_int, *const f32)>,
    pub f_send_msg_from_rt: Option<unsafe extern "C" fn(*mut World, *mut c_void) -> bool>,
    pub f_send_msg_to_rt: Option<unsafe extern "C" fn(*mut World, *mut c_void) -> bool>,
    pub f_snd_file_format_info_from_strings: Option<unsafe extern "C" fn(Opaque, *const c_char, *const c_char) -> c_int>,
    pub f_get_node: Option<unsafe extern "C" fn(*mut World, c_int) -> *mut Node>,
    pub f_get_graph: Option<unsafe extern "C" fn(*mut World, c_int) -> *mut Graph>,
    pub f_nrt_lock: Option<unsafe extern "C" fn(*mut World)>,
    pub f_nrt_unlock: Option<unsafe extern "C" fn(*mut World)>,
    pub unused0: bool,
    pub f_group_delete_all: Option<unsafe extern "C" fn(Opaque)>,
    pub f_done_action: Option<unsafe extern "C" fn(c_int, *mut Unit)>,
    #[allow(clippy::type_complexity)]
    pub f_do_asynchronous_command: Option<
        unsafe extern "C" fn(
            *mut World,
            *mut c_void,
            *const c_char,
            *mut c_void,
            Option<AsyncStageFn>,
            Option<AsyncStageFn>,
            Option<AsyncStageFn>,
            Option<AsyncFreeFn>,
            c_int,
            *mut c_void,
        ) -> c_int,
    >,
    pub f_buf_alloc: Option<unsafe extern "C" fn(*mut SndBuf, c_int, c_int, f64) -> c_int>,
    pub f_scfft_create: Opaque,
    pub f_scfft_do_fft: Opaque,
    pub f_scfft_do_ifft: Opaque,
    pub f_scfft_destroy: Opaque,
    pub f_get_scope_buffer: Option<unsafe extern "C" fn(*mut World, c_int, c_int, c_int, Opaque) -> bool>,
    pub f_push_scope_buffer: Option<unsafe extern "C" fn(*mut World, Opaque, c_int)>,
    pub f_release_scope_buffer: Option<unsafe extern "C" fn(*mut World, Opaque)>,
}

// SAFETY: the table is filled once, before any plugin sees it, and only
// read afterwards; its pointers lead to immutable tables and functions.
unsafe impl Sync for InterfaceTable {}
// SAFETY: as for `Sync`, just above.
unsafe impl Send for InterfaceTable {}

extern "C" {
    pub fn mg_call_load(f: LoadFunc, table: *mut InterfaceTable) -> c_int;
    pub fn mg_call_unload(f: UnloadFunc) -> c_int;
    pub fn mg_call_ctor(f: UnitCtorFunc, unit: *mut Unit) -> c_int;
    pub fn mg_call_dtor(f: UnitDtorFunc, unit: *mut Unit) -> c_int;
    pub fn mg_call_calc(f: UnitCalcFunc, unit: *mut Unit, n: c_int) -> c_int;
    pub fn mg_call_plugin_cmd(
        f: PlugInCmdFunc,
        world: *mut World,
        user: *mut c_void,
        args: *const c_char,
        size: c_int,
        reply: *mut c_void,
    ) -> c_int;
    pub fn mg_call_unit_cmd(f: UnitCmdFunc, unit: *mut Unit, args: *const c_char, size: c_int) -> c_int;
    pub fn mg_call_async_stage(f: Option<AsyncStageFn>, world: *mut World, data: *mut c_void, result: *mut c_int) -> c_int;
    pub fn mg_call_async_free(f: Option<AsyncFreeFn>, world: *mut World, data: *mut c_void) -> c_int;
    pub fn mg_call_buf_gen(f: BufGenFunc, world: *mut World, buf: *mut SndBuf, args: *const c_char, size: c_int) -> c_int;
    pub fn mg_call_fifo(f: crate::fifo::FifoMsgFunc, msg: *mut crate::fifo::FifoMsg) -> c_int;
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn mg_layout(what: c_int) -> c_long;
    pub fn mg_fft_prepare();
    pub fn mg_fill_table(table: *mut InterfaceTable);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    fn c(what: c_int) -> usize {
        // SAFETY: `mg_layout` only returns constants.
        let v = unsafe { mg_layout(what) };
        assert!(v >= 0, "figure {what} unknown to the shim");
        v as usize
    }

    #[test]
    fn struct_sizes_match_the_installed_headers() {
        assert_eq!(size_of::<InterfaceTable>(), c(0));
        assert_eq!(size_of::<World>(), c(1));
        assert_eq!(size_of::<Unit>(), c(2));
        assert_eq!(size_of::<Wire>(), c(3));
        assert_eq!(size_of::<Rate>(), c(4));
        assert_eq!(size_of::<SndBuf>(), c(5));
        assert_eq!(size_of::<Graph>(), c(6));
        assert_eq!(size_of::<RGen>(), c(7));
        assert_eq!(size_of::<Node>(), c(8));
        assert_eq!(size_of::<crate::fifo::FifoMsg>(), c(9));
        // The figures of SuperCollider 3.13 on x86-64.
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(size_of::<InterfaceTable>(), 320);
            assert_eq!(size_of::<World>(), 368);
            assert_eq!(size_of::<Unit>(), 104);
            assert_eq!(size_of::<Graph>(), 216);
            assert_eq!(size_of::<SndBuf>(), 56);
        }
    }

    #[test]
    fn field_offsets_match_the_installed_headers() {
        assert_eq!(offset_of!(InterfaceTable, f_print), c(10));
        assert_eq!(offset_of!(InterfaceTable, f_define_unit), c(11));
        assert_eq!(offset_of!(InterfaceTable, f_rt_alloc), c(12));
        assert_eq!(offset_of!(InterfaceTable, f_send_node_reply), c(13));
        assert_eq!(offset_of!(InterfaceTable, f_nrt_lock), c(14));
        assert_eq!(offset_of!(InterfaceTable, unused0), c(15));
        assert_eq!(offset_of!(InterfaceTable, f_done_action), c(16));
        assert_eq!(offset_of!(InterfaceTable, f_scfft_create), c(17));
        assert_eq!(offset_of!(InterfaceTable, f_release_scope_buffer), c(18));
        assert_eq!(offset_of!(World, sample_rate), c(20));
        assert_eq!(offset_of!(World, audio_bus), c(21));
        assert_eq!(offset_of!(World, snd_bufs), c(22));
        assert_eq!(offset_of!(World, full_rate), c(23));
        assert_eq!(offset_of!(World, buf_rate), c(24));
        assert_eq!(offset_of!(World, rgen), c(25));
        assert_eq!(offset_of!(World, sample_offset), c(26));
        assert_eq!(offset_of!(World, real_time), c(27));
        assert_eq!(offset_of!(World, subsample_offset), c(28));
        assert_eq!(offset_of!(World, restricted_path), c(29));
        assert_eq!(offset_of!(Unit, calc_rate), c(30));
        assert_eq!(offset_of!(Unit, done), c(31));
        assert_eq!(offset_of!(Unit, input), c(32));
        assert_eq!(offset_of!(Unit, in_buf), c(33));
        assert_eq!(offset_of!(Unit, calc_func), c(34));
        assert_eq!(offset_of!(Unit, buf_length), c(35));
        assert_eq!(offset_of!(Graph, num_wires), c(40));
        assert_eq!(offset_of!(Graph, controls), c(41));
        assert_eq!(offset_of!(Graph, rgen), c(42));
        assert_eq!(offset_of!(Graph, local_snd_bufs), c(43));
        assert_eq!(offset_of!(Graph, local_max_buf_num), c(44));
        assert_eq!(offset_of!(Graph, subsample_offset), c(45));
        assert_eq!(offset_of!(SndBuf, data), c(50));
        assert_eq!(offset_of!(SndBuf, coord), c(51));
        assert_eq!(offset_of!(SndBuf, sndfile), c(52));
        assert_eq!(offset_of!(Rate, buf_length), c(53));
        assert_eq!(offset_of!(Rate, filter_slope), c(54));
        assert_eq!(offset_of!(Wire, buffer), c(55));
        assert_eq!(offset_of!(Wire, scalar_value), c(56));
    }
}
