//! `SndFileFormatInfoFromStrings`: the libsndfile format code for a
//! header name and a sample format name, as `/b_write` names them.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// libsndfile's major formats (`sndfile.h`) by the names scsynth accepts.
const HEADERS: &[(&str, c_int)] = &[
    ("AIFF", 0x02_0000),
    ("AIFC", 0x02_0000),
    ("RIFF", 0x01_0000),
    ("WAVEX", 0x13_0000),
    ("WAVE", 0x01_0000),
    ("WAV", 0x01_0000),
    ("Sun", 0x03_0000),
    ("IRCAM", 0x0A_0000),
    ("NeXT", 0x03_0000),
    ("raw", 0x04_0000),
    ("MAT4", 0x0C_0000),
    ("MAT5", 0x0D_0000),
    ("PAF", 0x05_0000),
    ("SVX", 0x06_0000),
    ("NIST", 0x07_0000),
    ("VOC", 0x08_0000),
    ("W64", 0x0B_0000),
    ("PVF", 0x0E_0000),
    ("XI", 0x0F_0000),
    ("HTK", 0x10_0000),
    ("SDS", 0x11_0000),
    ("AVR", 0x12_0000),
    ("SD2", 0x16_0000),
    ("FLAC", 0x17_0000),
    ("OGG", 0x20_0000),
    ("CAF", 0x18_0000),
    ("RF64", 0x22_0000),
    ("MPEG", 0x23_0000),
];

/// libsndfile's sample encodings by scsynth's names.
const SAMPLES: &[(&str, c_int)] = &[
    ("uint8", 0x05),
    ("int8", 0x01),
    ("int16", 0x02),
    ("int24", 0x03),
    ("int32", 0x04),
    ("float", 0x06),
    ("double", 0x07),
    ("mulaw", 0x10),
    ("ulaw", 0x10),
    ("alaw", 0x11),
    ("vorbis", 0x60),
    ("opus", 0x64),
    ("mp1", 0x80),
    ("mp2", 0x81),
    ("mp3", 0x82),
];

/// The byte offset of `format` in libsndfile's `SF_INFO` (after the
/// 64-bit frame count, the sample rate and the channel count).
const FORMAT_OFFSET: usize = 16;

fn lookup(table: &[(&str, c_int)], name: &[u8]) -> c_int {
    table.iter().find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name)).map_or(0, |&(_, code)| code)
}

/// The format code of a header and a sample format name; a missing (null)
/// name means AIFF or 16-bit integers, an unknown one fails (`None`).
pub(crate) fn format_code(header: Option<&[u8]>, sample: Option<&[u8]>) -> Option<c_int> {
    let h = header.map_or(0x02_0000, |h| lookup(HEADERS, h));
    let s = sample.map_or(0x02, |s| lookup(SAMPLES, s));
    (h != 0 && s != 0).then_some(h | s)
}

/// `fSndFileFormatInfoFromStrings`: writes the format code into the
/// plugin's `SF_INFO`; 0 on success, scsynth's `kSCErr_Failed` (1) for a
/// name it does not know.
pub(crate) unsafe extern "C" fn format_info_from_strings(info: *mut c_void, header: *const c_char, sample: *const c_char) -> c_int {
    // SAFETY: the plugin passes C strings or null.
    let (header, sample) = unsafe {
        (
            (!header.is_null()).then(|| CStr::from_ptr(header).to_bytes()),
            (!sample.is_null()).then(|| CStr::from_ptr(sample).to_bytes()),
        )
    };
    let Some(code) = format_code(header, sample) else { return 1 };
    if info.is_null() {
        return 1;
    }
    // SAFETY: `info` is the plugin's libsndfile `SF_INFO`, whose `format`
    // field is an int at FORMAT_OFFSET on every 64-bit target.
    unsafe { (info as *mut u8).add(FORMAT_OFFSET).cast::<c_int>().write_unaligned(code) };
    0
}

#[cfg(test)]
mod tests {
    use super::format_code;

    #[test]
    fn names_map_to_libsndfiles_codes_ignoring_case() {
        assert_eq!(format_code(Some(b"wav"), Some(b"float")), Some(0x01_0006));
        assert_eq!(format_code(Some(b"AIFF"), Some(b"INT24")), Some(0x02_0003));
        assert_eq!(format_code(None, None), Some(0x02_0002));
        assert_eq!(format_code(Some(b"next"), Some(b"ulaw")), Some(0x03_0010));
        assert_eq!(format_code(Some(b"mp4"), Some(b"float")), None);
        assert_eq!(format_code(Some(b"wav"), Some(b"")), None);
    }
}
