//! Fixed blocks of raw memory reserved at start-up (heaps, snapshot, record stacks).

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::error::GcError;

/// Cache-line alignment keeps the heaps off each other's lines.
const ALIGN: usize = 64;
const PAGE: usize = 4096;
/// Transparent huge page size (x86-64, aarch64 with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// An owned, aligned, zero-filled byte range whose address never changes.
pub(crate) struct Region {
    ptr: NonNull<u8>,
    len: usize,
    /// What was allocated (huge-page regions are rounded up to whole huge pages).
    layout: Layout,
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
        Self::with_align(len, prefault, ALIGN, what)
    }

    /// Like `new`, but asks the kernel to back the region with transparent huge pages: a
    /// copy of the whole pointer heap into the snapshot then walks 2 MiB pages instead of
    /// 4 KiB ones (hundreds of TLB misses fewer per copy). Regions under one huge page, and
    /// systems without the feature, get ordinary pages.
    pub(crate) fn new_huge(len: usize, prefault: bool, what: &'static str) -> Result<Region, GcError> {
        if len < HUGE_PAGE {
            return Self::new(len, prefault, what);
        }
        Self::with_align(len.div_ceil(HUGE_PAGE) * HUGE_PAGE, prefault, HUGE_PAGE, what).map(|mut r| {
            r.len = len;
            r
        })
    }

    fn with_align(len: usize, prefault: bool, align: usize, what: &'static str) -> Result<Region, GcError> {
        let alloc_len = len.max(ALIGN);
        let layout =
            Layout::from_size_align(alloc_len, align).map_err(|_| GcError::OutOfMemory { what, bytes: len })?;
        // Huge-page regions are advised before anything touches them, so that the first
        // touch below faults in whole huge pages; the zeroing is then the kernel's.
        let raw = if align >= HUGE_PAGE {
            // SAFETY: layout has a non-zero size.
            let raw = unsafe { alloc::alloc(layout) };
            if !raw.is_null() {
                // SAFETY: raw..raw+alloc_len is the allocation just made, huge-page aligned;
                // the advice only changes how the kernel backs it. Failure (no THP) is harmless.
                unsafe { libc::madvise(raw.cast(), alloc_len, libc::MADV_HUGEPAGE) };
                // SAFETY: inside the allocation; the allocator may hand back reused memory, so
                // it is zeroed here, which also faults it in.
                unsafe { raw.write_bytes(0, alloc_len) };
            }
            raw
        } else {
            // SAFETY: layout has a non-zero size.
            unsafe { alloc::alloc_zeroed(layout) }
        };
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
        Ok(Region { ptr, len, layout })
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
        // SAFETY: allocated in `new` with exactly this layout and not freed since.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_page_region_is_zeroed_aligned_and_writable_to_its_end() {
        let len = (4 << 20) + 4096;
        let r = Region::new_huge(len, true, "test").unwrap();
        assert_eq!(r.len(), len);
        assert_eq!(r.addr() % HUGE_PAGE, 0);
        // SAFETY: the region is len bytes, owned by this test.
        let bytes = unsafe { std::slice::from_raw_parts_mut(r.base(), len) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[len - 1] = 1;
        let small = Region::new_huge(4096, true, "test").unwrap();
        assert_eq!(small.len(), 4096);
    }
}
