//! The few libsndfile declarations this crate uses (see `sndfile.h`).

#![allow(non_camel_case_types, clippy::upper_case_acronyms)]

use std::ffi::{c_char, c_int, c_void};

pub type sf_count_t = i64;

/// Opaque libsndfile handle.
#[repr(C)]
pub struct SNDFILE {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SF_INFO {
    pub frames: sf_count_t,
    pub samplerate: c_int,
    pub channels: c_int,
    pub format: c_int,
    pub sections: c_int,
    pub seekable: c_int,
}

pub const SFM_READ: c_int = 0x10;
pub const SFM_WRITE: c_int = 0x20;

pub const SF_TRUE: c_int = 1;

pub const SFC_SET_CLIPPING: c_int = 0x10C0;

pub const SEEK_SET: c_int = 0;

// Major (container) formats.
pub const SF_FORMAT_WAV: c_int = 0x01_0000;
pub const SF_FORMAT_AIFF: c_int = 0x02_0000;
pub const SF_FORMAT_AU: c_int = 0x03_0000;
pub const SF_FORMAT_RAW: c_int = 0x04_0000;
pub const SF_FORMAT_PAF: c_int = 0x05_0000;
pub const SF_FORMAT_SVX: c_int = 0x06_0000;
pub const SF_FORMAT_NIST: c_int = 0x07_0000;
pub const SF_FORMAT_VOC: c_int = 0x08_0000;
pub const SF_FORMAT_IRCAM: c_int = 0x0A_0000;
pub const SF_FORMAT_W64: c_int = 0x0B_0000;
pub const SF_FORMAT_MAT4: c_int = 0x0C_0000;
pub const SF_FORMAT_MAT5: c_int = 0x0D_0000;
pub const SF_FORMAT_PVF: c_int = 0x0E_0000;
pub const SF_FORMAT_XI: c_int = 0x0F_0000;
pub const SF_FORMAT_HTK: c_int = 0x10_0000;
pub const SF_FORMAT_SDS: c_int = 0x11_0000;
pub const SF_FORMAT_AVR: c_int = 0x12_0000;
pub const SF_FORMAT_WAVEX: c_int = 0x13_0000;
pub const SF_FORMAT_SD2: c_int = 0x16_0000;
pub const SF_FORMAT_FLAC: c_int = 0x17_0000;
pub const SF_FORMAT_CAF: c_int = 0x18_0000;
pub const SF_FORMAT_OGG: c_int = 0x20_0000;
pub const SF_FORMAT_RF64: c_int = 0x22_0000;
pub const SF_FORMAT_MPEG: c_int = 0x23_0000;

// Sample encodings.
pub const SF_FORMAT_PCM_S8: c_int = 0x0001;
pub const SF_FORMAT_PCM_16: c_int = 0x0002;
pub const SF_FORMAT_PCM_24: c_int = 0x0003;
pub const SF_FORMAT_PCM_32: c_int = 0x0004;
pub const SF_FORMAT_PCM_U8: c_int = 0x0005;
pub const SF_FORMAT_FLOAT: c_int = 0x0006;
pub const SF_FORMAT_DOUBLE: c_int = 0x0007;
pub const SF_FORMAT_ULAW: c_int = 0x0010;
pub const SF_FORMAT_ALAW: c_int = 0x0011;
pub const SF_FORMAT_VORBIS: c_int = 0x0060;
pub const SF_FORMAT_OPUS: c_int = 0x0064;
pub const SF_FORMAT_MPEG_LAYER_I: c_int = 0x0080;
pub const SF_FORMAT_MPEG_LAYER_II: c_int = 0x0081;
pub const SF_FORMAT_MPEG_LAYER_III: c_int = 0x0082;

pub const SF_FORMAT_SUBMASK: c_int = 0x0000_FFFF;
pub const SF_FORMAT_TYPEMASK: c_int = 0x0FFF_0000;

extern "C" {
    pub fn sf_open(path: *const c_char, mode: c_int, sfinfo: *mut SF_INFO) -> *mut SNDFILE;
    pub fn sf_close(sndfile: *mut SNDFILE) -> c_int;
    pub fn sf_strerror(sndfile: *mut SNDFILE) -> *const c_char;
    pub fn sf_error(sndfile: *mut SNDFILE) -> c_int;
    pub fn sf_error_number(errnum: c_int) -> *const c_char;
    pub fn sf_command(sndfile: *mut SNDFILE, command: c_int, data: *mut c_void, datasize: c_int) -> c_int;
    pub fn sf_seek(sndfile: *mut SNDFILE, frames: sf_count_t, whence: c_int) -> sf_count_t;
    pub fn sf_readf_float(sndfile: *mut SNDFILE, ptr: *mut f32, frames: sf_count_t) -> sf_count_t;
    pub fn sf_writef_float(sndfile: *mut SNDFILE, ptr: *const f32, frames: sf_count_t) -> sf_count_t;
}
