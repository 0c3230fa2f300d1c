//! The real-time server's shared memory segment, as scsynth creates it for
//! its port: `SuperColliderServer_<port>`, a boost.interprocess managed
//! segment holding the control buses and 128 scope buffers. sclang connects
//! to it at boot (`ServerShmInterface`) to read and write control buses
//! without messages (`Bus.getSynchronous`) and to draw scopes.
//!
//! The layout is boost's, so the segment itself is made by a small C++ part
//! (`cpp/server_shm.cpp`) built against the system's boost headers; this
//! crate wraps its narrow C interface:
//!
//! - [`ServerShm::create`] makes the segment (removing a stale one left by a
//!   server that died on the same port) and hands out the world's parts:
//!   [`ControlBuses`] backed by the segment, and the scope buffers
//!   ([`ScopeBuffers`]) for `ScopeOut2`. The segment is removed when both
//!   parts are gone.
//! - [`Client`] opens a segment the way sclang does (find the root object by
//!   name); tests use it on magnetar's segment and on scsynth's.

use magnetar_ugens::world::{ControlBuses, ScopeBuffers};
use std::ffi::{c_char, CStr};
use std::ptr::NonNull;
use std::sync::Arc;

mod ffi {
    use std::ffi::c_char;

    #[repr(C)]
    pub struct Shm {
        _private: [u8; 0],
    }
    #[repr(C)]
    pub struct ShmClient {
        _private: [u8; 0],
    }

    extern "C" {
        pub fn magnetar_shm_remove(port: u32) -> i32;
        pub fn magnetar_shm_create(port: u32, control_buses: u32, err: *mut c_char, err_len: usize) -> *mut Shm;
        pub fn magnetar_shm_destroy(shm: *mut Shm);
        pub fn magnetar_shm_control_buses(shm: *mut Shm) -> *mut f32;
        pub fn magnetar_shm_scope_acquire(shm: *mut Shm, index: u32, channels: u32, frames: u32) -> *mut f32;
        pub fn magnetar_shm_scope_push(shm: *mut Shm, index: u32, frames: u32) -> *mut f32;
        pub fn magnetar_shm_scope_release(shm: *mut Shm, index: u32);
        pub fn magnetar_shm_client_open(port: u32, err: *mut c_char, err_len: usize) -> *mut ShmClient;
        pub fn magnetar_shm_client_close(c: *mut ShmClient);
        pub fn magnetar_shm_client_control_buses(c: *mut ShmClient, first: usize, count: usize, out: *mut f32) -> usize;
        pub fn magnetar_shm_client_scope_pull(
            c: *mut ShmClient,
            index: u32,
            channels: *mut u32,
            max_frames: *mut u32,
            out: *mut f32,
            out_len: usize,
        ) -> u32;
    }
}

/// How many scope buffers the segment holds (as in scsynth).
pub const SCOPE_BUFFERS: u32 = 128;

#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("could not create the shared memory segment SuperColliderServer_{port}: {reason}")]
    Create { port: u16, reason: String },
    #[error("could not open the shared memory segment SuperColliderServer_{port}: {reason}")]
    Open { port: u16, reason: String },
    #[error("{0} control buses do not fit the shared memory segment")]
    TooManyBuses(usize),
}

fn message(buf: &[c_char]) -> String {
    // SAFETY: the C side writes a NUL-terminated string into the buffer, or
    // leaves it as it was: zeroed, which reads as the empty string.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// The segment, owned by the server process; destroyed (and its name
/// removed) when dropped.
struct Segment {
    raw: NonNull<ffi::Shm>,
}

// SAFETY: the segment is process-wide memory; the only per-process state on
// the C side (which scope memory is in use) is touched only through
// `SegmentScopes`, which exists once and takes `&mut self`.
unsafe impl Send for Segment {}
// SAFETY: as for `Send`, just above.
unsafe impl Sync for Segment {}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: `raw` came from magnetar_shm_create and is destroyed once,
        // here, after every part that points into it (they hold this Arc).
        unsafe { ffi::magnetar_shm_destroy(self.raw.as_ptr()) }
    }
}

/// The shared memory segment of a real-time server.
pub struct ServerShm {
    segment: Arc<Segment>,
    control_buses: usize,
}

impl ServerShm {
    /// Creates the segment for `port` with `control_buses` control buses
    /// (zeroed), replacing a stale segment of the same name as scsynth does.
    pub fn create(port: u16, control_buses: usize) -> Result<ServerShm, ShmError> {
        let count = u32::try_from(control_buses).map_err(|_| ShmError::TooManyBuses(control_buses))?;
        let mut err = [0 as c_char; 256];
        // SAFETY: `err` is writable for its length; the call has no other
        // preconditions.
        let raw = unsafe { ffi::magnetar_shm_create(port as u32, count, err.as_mut_ptr(), err.len()) };
        match NonNull::new(raw) {
            Some(raw) => Ok(ServerShm { segment: Arc::new(Segment { raw }), control_buses }),
            None => Err(ShmError::Create { port, reason: message(&err) }),
        }
    }

    /// Removes the segment name for `port` (a server's leftover after a
    /// crash); a segment still mapped stays valid for whoever maps it.
    pub fn remove(port: u16) -> bool {
        // SAFETY: no preconditions; only unlinks a name.
        unsafe { ffi::magnetar_shm_remove(port as u32) != 0 }
    }

    /// The world's parts: its control buses, living in the segment, and the
    /// scope buffers. The segment lives as long as either.
    pub fn into_world_parts(self) -> (ControlBuses, Box<dyn ScopeBuffers>) {
        // SAFETY: the segment is alive (we hold it).
        let ptr = unsafe { ffi::magnetar_shm_control_buses(self.segment.raw.as_ptr()) };
        let ptr = NonNull::new(ptr).expect("the segment always holds the control buses");
        let keep: Arc<dyn Send + Sync> = self.segment.clone();
        // SAFETY: the C side allocated `control_buses` floats at `ptr` in the
        // segment, which `keep` keeps mapped as long as the buses exist;
        // nothing else in this process writes them (clients in other
        // processes do, as with scsynth).
        let buses = unsafe { ControlBuses::external(ptr, self.control_buses, keep) };
        (buses, Box::new(SegmentScopes { segment: self.segment }))
    }
}

/// The scope buffers of the segment, for the audio thread.
struct SegmentScopes {
    segment: Arc<Segment>,
}

impl ScopeBuffers for SegmentScopes {
    fn acquire(&mut self, index: u32, channels: u32, frames: u32) -> Option<NonNull<f32>> {
        // SAFETY: the segment is alive; `&mut self` makes this the only
        // caller touching the scope bookkeeping. Bounded work, no system call.
        NonNull::new(unsafe { ffi::magnetar_shm_scope_acquire(self.segment.raw.as_ptr(), index, channels, frames) })
    }

    fn push(&mut self, index: u32, frames: u32) -> Option<NonNull<f32>> {
        // SAFETY: as in `acquire`; the caller acquired `index` (checked by
        // the trait's contract), so its slot holds regions to swap.
        NonNull::new(unsafe { ffi::magnetar_shm_scope_push(self.segment.raw.as_ptr(), index, frames) })
    }

    fn release(&mut self, index: u32) {
        // SAFETY: as in `acquire`; releasing a free or out-of-range index is a no-op.
        unsafe { ffi::magnetar_shm_scope_release(self.segment.raw.as_ptr(), index) }
    }
}

/// A client of a server's segment, opened the way sclang opens it.
pub struct Client {
    raw: NonNull<ffi::ShmClient>,
}

/// What a client read from a scope buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeFrames {
    pub channels: u32,
    pub max_frames: u32,
    /// Frames in the region last published (0: nothing yet).
    pub frames: u32,
    /// `channels` planes of `max_frames` samples each.
    pub data: Vec<f32>,
}

impl Client {
    pub fn open(port: u16) -> Result<Client, ShmError> {
        let mut err = [0 as c_char; 256];
        // SAFETY: `err` is writable for its length.
        let raw = unsafe { ffi::magnetar_shm_client_open(port as u32, err.as_mut_ptr(), err.len()) };
        NonNull::new(raw).map(|raw| Client { raw }).ok_or_else(|| ShmError::Open { port, reason: message(&err) })
    }

    /// Control buses `first..first + count` (fewer if the segment ends first).
    pub fn control_buses(&self, first: usize, count: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; count];
        // SAFETY: `out` has room for `count` floats; the C side copies at
        // most that many and only from inside the segment.
        let n = unsafe { ffi::magnetar_shm_client_control_buses(self.raw.as_ptr(), first, count, out.as_mut_ptr()) };
        out.truncate(n);
        out
    }

    /// Takes scope buffer `index`'s latest region, if it is in use.
    pub fn scope(&self, index: u32) -> Option<ScopeFrames> {
        let (mut channels, mut max_frames) = (0u32, 0u32);
        let mut data = vec![0.0f32; 64 * 8192];
        // SAFETY: the out-pointers are valid; `data` has room for its length,
        // which the C side does not exceed.
        let frames = unsafe {
            ffi::magnetar_shm_client_scope_pull(
                self.raw.as_ptr(),
                index,
                &mut channels,
                &mut max_frames,
                data.as_mut_ptr(),
                data.len(),
            )
        };
        if channels == 0 {
            return None;
        }
        data.truncate(channels as usize * max_frames as usize);
        Some(ScopeFrames { channels, max_frames, frames, data })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: opened by magnetar_shm_client_open, closed once.
        unsafe { ffi::magnetar_shm_client_close(self.raw.as_ptr()) }
    }
}
