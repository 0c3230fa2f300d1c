//! Writing a sound file from interleaved `f32` frames.

use std::ffi::c_int;
use std::path::Path;
use std::ptr::NonNull;

use crate::format::{HeaderFormat, SampleFormat};
use crate::{error_number_string, error_string, open_raw, sys, Result, SoundFileError};

/// A sound file being written; closed (header finalised) by `close` or drop.
pub struct SoundFileWriter {
    handle: Option<NonNull<sys::SNDFILE>>,
    channels: u32,
    path: String,
}

// SAFETY: a libsndfile handle has no thread affinity; the writer owns it and
// `&mut self` on every call keeps uses of it from overlapping.
unsafe impl Send for SoundFileWriter {}

impl SoundFileWriter {
    /// Creates (or truncates) `path`. The rate is truncated to whole Hz as
    /// scsynth does (`(int)samplerate`).
    pub fn create(
        path: impl AsRef<Path>,
        header: HeaderFormat,
        sample: SampleFormat,
        channels: u32,
        sample_rate: f64,
    ) -> Result<SoundFileWriter> {
        let path = path.as_ref();
        let display = path.display().to_string();
        let channels_c = c_int::try_from(channels).map_err(|_| SoundFileError::InvalidArgument {
            path: display.clone(),
            what: format!("{channels} channels is too many"),
        })?;
        let mut info = sys::SF_INFO {
            samplerate: sample_rate as c_int,
            channels: channels_c,
            format: header.to_sf() | sample.to_sf(),
            ..sys::SF_INFO::default()
        };
        let handle = open_raw(path, sys::SFM_WRITE, &mut info)?;
        // Saturate rather than wrap out-of-range samples in integer files.
        // SAFETY: `handle` was just opened; this command takes no data pointer.
        unsafe {
            sys::sf_command(handle.as_ptr(), sys::SFC_SET_CLIPPING, std::ptr::null_mut(), sys::SF_TRUE)
        };
        Ok(SoundFileWriter { handle: Some(handle), channels, path: display })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn channels(&self) -> u32 {
        self.channels
    }

    /// Appends whole interleaved frames.
    // `is_multiple_of` is newer than the workspace's minimum Rust.
    #[allow(clippy::manual_is_multiple_of)]
    pub fn write_f32(&mut self, samples: &[f32]) -> Result<()> {
        let channels = self.channels as usize;
        if channels == 0 || samples.len() % channels != 0 {
            return Err(SoundFileError::PartialFrame {
                path: self.path.clone(),
                len: samples.len(),
                channels: self.channels,
            });
        }
        let Some(handle) = self.handle else {
            return Err(SoundFileError::Write { path: self.path.clone(), reason: "file is closed".to_owned() });
        };
        let frames = (samples.len() / channels) as i64;
        if frames == 0 {
            return Ok(());
        }
        // SAFETY: `samples` holds `frames * channels` floats and `handle` is
        // live until close.
        let written = unsafe { sys::sf_writef_float(handle.as_ptr(), samples.as_ptr(), frames) };
        if written != frames {
            // SAFETY: `handle` is live until close.
            let reason = unsafe { error_string(handle.as_ptr()) };
            return Err(SoundFileError::Write { path: self.path.clone(), reason });
        }
        Ok(())
    }

    /// Finishes the header and closes the file.
    pub fn close(mut self) -> Result<()> {
        self.close_handle()
    }

    fn close_handle(&mut self) -> Result<()> {
        let Some(handle) = self.handle.take() else { return Ok(()) };
        // SAFETY: the handle is live and, taken out of `self`, never used again.
        let code = unsafe { sys::sf_close(handle.as_ptr()) };
        if code != 0 {
            return Err(SoundFileError::Close { path: self.path.clone(), reason: error_number_string(code) });
        }
        Ok(())
    }
}

impl Drop for SoundFileWriter {
    fn drop(&mut self) {
        // Nobody is left to tell about a failure here; `close` reports it.
        let _ = self.close_handle();
    }
}

impl std::fmt::Debug for SoundFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoundFileWriter")
            .field("path", &self.path)
            .field("channels", &self.channels)
            .field("open", &self.handle.is_some())
            .finish()
    }
}
