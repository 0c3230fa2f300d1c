//! Fixed blocks of raw memory reserved at start-up (heaps, snapshot, record stacks).

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::error::GcError;

/// Cache-line alignment keeps the heaps off each other's lines.
const ALIGN: usize = 64;
const PAGE: usize = 4096;

/// An owned, aligned, zero-filled byte range whose address never changes.
pub(crate) struct Region {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a Region is plain memory; who may touch which bytes when is decided by the
// collector's hand-over protocol (documented where the bytes are accessed).
unsafe impl Send for Region {}
// SAFETY: as above; the Region itself offers only raw pointers, no references.
unsafe impl Sync for Region {}

impl Region {
    /// Reserve `len` bytes (at least one word), zero them, and if `prefault` touch every
    /// page now so the audio thread never takes a page fault on them.
    pub(crate) fn new(len: usize, prefault: bool, what: &'static str) -> Result<Region, GcError> {
        let alloc_len = len.max(ALIGN);
        let layout = Layout::from_size_align(alloc_len, ALIGN)
            .map_err(|_| GcError::OutOfMemory { what, bytes: len })?;
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(GcError::OutOfMemory { what, bytes: len })?;
        if prefault {
            let mut off = 0;
            while off < alloc_len {
                // SAFETY: off < alloc_len, inside the allocation just made; a volatile write
                // of the zero already there cannot be optimised away and faults the page in.
                unsafe { ptr.as_ptr().add(off).write_volatile(0) };
                off += PAGE;
            }
        }
        Ok(Region { ptr, len })
    }

    pub(crate) fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(ALIGN), ALIGN).expect("layout was valid at creation");
        // SAFETY: allocated in `new` with exactly this layout and not freed since.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) };
    }
}
