//! Reading a sound file as interleaved `f32` frames.

use std::path::Path;
use std::ptr::NonNull;

use crate::format::{HeaderFormat, SampleFormat};
use crate::{error_string, open_raw, sys, Result, SoundFileError};

/// An open sound file to read from, positioned at a frame.
pub struct SoundFileReader {
    handle: NonNull<sys::SNDFILE>,
    info: sys::SF_INFO,
    path: String,
}

// SAFETY: a libsndfile handle has no thread affinity; the reader owns it and
// `&mut self` on every call keeps uses of it from overlapping.
unsafe impl Send for SoundFileReader {}

impl SoundFileReader {
    /// Opens an existing file; its header tells the format.
    pub fn open(path: impl AsRef<Path>) -> Result<SoundFileReader> {
        let path = path.as_ref();
        // scsynth zeroes the description before opening for reading.
        let mut info = sys::SF_INFO::default();
        let handle = open_raw(path, sys::SFM_READ, &mut info)?;
        Ok(SoundFileReader { handle, info, path: path.display().to_string() })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Frames in the file, as its header tells.
    pub fn frames(&self) -> u64 {
        self.info.frames.max(0) as u64
    }

    pub fn channels(&self) -> u32 {
        self.info.channels.max(0) as u32
    }

    /// The file's rate; libsndfile stores whole numbers of Hz.
    pub fn sample_rate(&self) -> f64 {
        f64::from(self.info.samplerate)
    }

    pub fn header_format(&self) -> Option<HeaderFormat> {
        HeaderFormat::from_sf(self.info.format)
    }

    pub fn sample_format(&self) -> Option<SampleFormat> {
        SampleFormat::from_sf(self.info.format)
    }

    /// Moves the read position to `frame` from the file's start.
    pub fn seek(&mut self, frame: u64) -> Result<()> {
        let target = i64::try_from(frame).map_err(|_| self.seek_error(frame, "frame out of range"))?;
        // SAFETY: `handle` is live until drop.
        let pos = unsafe { sys::sf_seek(self.handle.as_ptr(), target, sys::SEEK_SET) };
        if pos < 0 {
            // SAFETY: `handle` is live until drop.
            let reason = unsafe { error_string(self.handle.as_ptr()) };
            return Err(self.seek_error(frame, &reason));
        }
        Ok(())
    }

    fn seek_error(&self, frame: u64, reason: &str) -> SoundFileError {
        SoundFileError::Seek { path: self.path.clone(), frame, reason: reason.to_owned() }
    }

    /// Reads up to `out.len() / channels` frames into `out` (interleaved)
    /// and returns how many were read; 0 at the end of the file. Samples
    /// past the frames read are left as they were.
    pub fn read_f32(&mut self, out: &mut [f32]) -> Result<usize> {
        let channels = self.channels() as usize;
        if channels == 0 {
            return Ok(0);
        }
        let want = out.len() / channels;
        if want == 0 {
            return Ok(0);
        }
        // SAFETY: `out` holds at least `want * channels` writable floats and
        // `handle` is live until drop.
        let got = unsafe { sys::sf_readf_float(self.handle.as_ptr(), out.as_mut_ptr(), want as i64) };
        // SAFETY: `handle` is live until drop.
        let err = unsafe { sys::sf_error(self.handle.as_ptr()) };
        if got < 0 || (err != 0 && got == 0) {
            // SAFETY: `handle` is live until drop.
            let reason = unsafe { error_string(self.handle.as_ptr()) };
            return Err(SoundFileError::Read { path: self.path.clone(), reason });
        }
        Ok((got as usize).min(want))
    }
}

impl Drop for SoundFileReader {
    fn drop(&mut self) {
        // SAFETY: the handle is live and is not used after this.
        unsafe { sys::sf_close(self.handle.as_ptr()) };
    }
}

impl std::fmt::Debug for SoundFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoundFileReader")
            .field("path", &self.path)
            .field("frames", &self.frames())
            .field("channels", &self.channels())
            .field("sample_rate", &self.sample_rate())
            .finish()
    }
}
