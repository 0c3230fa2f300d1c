//! Sound file reading and writing through libsndfile, set up the way scsynth
//! sets it up so that files written here match the ones scsynth writes.
//!
//! Samples are exchanged as interleaved `f32`. Reading uses libsndfile's
//! defaults, as scsynth does: integer encodings are scaled to [-1, 1) and
//! float files come back unscaled and unclipped. Writing turns on
//! libsndfile's clipping, as scsynth does, so out-of-range samples saturate
//! in integer files instead of wrapping around.
//!
//! ```
//! use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileReader, SoundFileWriter};
//!
//! let path = std::env::temp_dir().join(format!("magnetar-doc-{}.aiff", std::process::id()));
//! let header = HeaderFormat::from_sc_name("aiff")?;
//! let sample = SampleFormat::from_sc_name("float")?;
//! let mut w = SoundFileWriter::create(&path, header, sample, 2, 44100.0)?;
//! w.write_f32(&[0.5, -0.5, 1.5, -1.5])?;
//! w.close()?;
//!
//! let mut r = SoundFileReader::open(&path)?;
//! assert_eq!((r.frames(), r.channels(), r.sample_rate()), (2, 2, 44100.0));
//! let mut frames = [0.0; 4];
//! assert_eq!(r.read_f32(&mut frames)?, 2);
//! assert_eq!(frames, [0.5, -0.5, 1.5, -1.5]); // float files are not clipped
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), magnetar_soundfile::SoundFileError>(())
//! ```

mod format;
mod reader;
mod sys;
mod writer;

pub use format::{HeaderFormat, SampleFormat};
pub use reader::SoundFileReader;
pub use writer::SoundFileWriter;

use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::Mutex;

/// What went wrong with a sound file; messages name the file and the step.
#[derive(Debug, thiserror::Error)]
pub enum SoundFileError {
    /// The wording matches scsynth's `/fail` message for the same failure.
    #[error("File '{path}' could not be opened: {reason}")]
    Open { path: String, reason: String },
    #[error("unknown header format '{0}'")]
    UnknownHeaderFormat(String),
    #[error("unknown sample format '{0}'")]
    UnknownSampleFormat(String),
    #[error("File '{path}': seek to frame {frame} failed: {reason}")]
    Seek { path: String, frame: u64, reason: String },
    #[error("File '{path}': read failed: {reason}")]
    Read { path: String, reason: String },
    #[error("File '{path}': write failed: {reason}")]
    Write { path: String, reason: String },
    #[error("File '{path}': close failed: {reason}")]
    Close { path: String, reason: String },
    #[error("File '{path}': {len} samples are not whole frames of {channels} channels")]
    PartialFrame { path: String, len: usize, channels: u32 },
    #[error("File '{path}': {what}")]
    InvalidArgument { path: String, what: String },
}

pub type Result<T, E = SoundFileError> = std::result::Result<T, E>;

/// libsndfile keeps the error of a failed open in a process-wide slot, so an
/// open and the read-back of its error must not interleave across threads.
static OPEN_LOCK: Mutex<()> = Mutex::new(());

/// Opens `path`, returning the handle and the file's description.
fn open_raw(
    path: &Path,
    mode: std::ffi::c_int,
    info: &mut sys::SF_INFO,
) -> Result<std::ptr::NonNull<sys::SNDFILE>> {
    let display = path.display().to_string();
    let cpath = path_to_cstring(path).ok_or_else(|| SoundFileError::Open {
        path: display.clone(),
        reason: "path contains a NUL byte".to_owned(),
    })?;
    // A poisoned lock only means another open panicked; the slot is still usable.
    let _guard = OPEN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: `cpath` is a valid NUL-terminated string and `info` a valid,
    // exclusively borrowed SF_INFO for the duration of the call.
    let handle = unsafe { sys::sf_open(cpath.as_ptr(), mode, info) };
    match std::ptr::NonNull::new(handle) {
        Some(h) => Ok(h),
        None => Err(SoundFileError::Open {
            path: display,
            // SAFETY: a null handle asks for the error of the last failed
            // open, which the lock keeps ours.
            reason: unsafe { error_string(std::ptr::null_mut()) },
        }),
    }
}

#[cfg(unix)]
fn path_to_cstring(path: &Path) -> Option<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).ok()
}

#[cfg(not(unix))]
fn path_to_cstring(path: &Path) -> Option<CString> {
    CString::new(path.to_str()?).ok()
}

/// libsndfile's message for `handle`'s last error (or the last failed open
/// when `handle` is null).
///
/// # Safety
/// `handle` must be null or a live handle from `sf_open`.
unsafe fn error_string(handle: *mut sys::SNDFILE) -> String {
    // SAFETY: per this function's contract; libsndfile returns a static string.
    let msg = unsafe { sys::sf_strerror(handle) };
    c_message(msg)
}

/// libsndfile's message for an error number (as `sf_close` returns).
fn error_number_string(code: std::ffi::c_int) -> String {
    // SAFETY: any int is accepted; the result is a static string.
    let msg = unsafe { sys::sf_error_number(code) };
    c_message(msg)
}

fn c_message(msg: *const std::ffi::c_char) -> String {
    if msg.is_null() {
        return "unknown libsndfile error".to_owned();
    }
    // SAFETY: non-null pointers from libsndfile's error functions point to
    // NUL-terminated strings that live for the whole program.
    unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
}
