//! Storage reserved up front that costs nothing until it is written: each
//! [`Pages`] is a mapping of its own, the kernel's zero pages, so a page is
//! only faulted in (and counted as memory) when first written.
//!
//! The parallel groups reserve room for the largest group the limits allow
//! (thousands of synths, every bus), most of which a render never uses.
//! Taken from the heap, every reservation writes the allocator's notes
//! beside it and a zeroed one may be cleared byte by byte, so each costs
//! page faults at start-up whether used or not; from mappings of their own
//! they cost none until a block writes them. A real-time server locks and
//! touches its memory up front (`mlockall`) either way.
//!
//! [`FixedVec`] is a vector of fixed capacity on such pages (it never
//! grows, so never allocates once made), [`ZeroTable`] a table that starts
//! all zeros.

use std::marker::PhantomData;
use std::ptr::NonNull;

/// Zeroed memory of a mapping of its own, unmapped when dropped.
struct Pages {
    ptr: NonNull<u8>,
    len: usize,
    /// False for memory from the heap, should the system refuse a mapping.
    mapped: bool,
}

// SAFETY: plain memory, owned by the value; access goes through `&`/`&mut`
// of the types below.
unsafe impl Send for Pages {}
// SAFETY: as for `Send`, just above.
unsafe impl Sync for Pages {}

impl Pages {
    /// `bytes` zeroed bytes (at least one), aligned to a page; from the
    /// heap (zeroed, aligned to 64) if the system refuses the mapping.
    fn new(bytes: usize) -> Pages {
        let len = bytes.max(1);
        // SAFETY: an anonymous private mapping, no address asked for; the
        // result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if let Some(ptr) = NonNull::new(p.cast::<u8>()).filter(|_| p != libc::MAP_FAILED) {
            return Pages { ptr, len, mapped: true };
        }
        let Some(layout) = Self::heap_layout(len) else { std::process::abort() };
        // SAFETY: a layout of non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(p) else { std::alloc::handle_alloc_error(layout) };
        Pages { ptr, len, mapped: false }
    }

    fn heap_layout(len: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(len, 64).ok()
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: the mapping made in `new`, of `len` bytes, no longer
            // referenced (the types below borrow it through `self`).
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        } else if let Some(layout) = Self::heap_layout(self.len) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// A vector of at most `capacity` `T`s on pages of its own (see the
/// module's text): pushing past its capacity is refused, never grows it.
pub struct FixedVec<T: Copy> {
    pages: Pages,
    len: usize,
    cap: usize,
    _t: PhantomData<T>,
}

impl<T: Copy> FixedVec<T> {
    /// An empty vector with room for `capacity` elements.
    pub fn with_capacity(capacity: usize) -> FixedVec<T> {
        assert!(std::mem::align_of::<T>() <= 64, "FixedVec: alignment past 64");
        let bytes = capacity.checked_mul(std::mem::size_of::<T>()).unwrap_or(usize::MAX / 2);
        FixedVec { pages: Pages::new(bytes), len: 0, cap: capacity, _t: PhantomData }
    }

    /// The most elements it holds.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Appends `x`; false, having done nothing, when full.
    #[inline]
    pub fn try_push(&mut self, x: T) -> bool {
        if self.len == self.cap {
            return false;
        }
        // SAFETY: `len < cap`, inside the pages, aligned (see `as_ptr`).
        unsafe { self.as_mut_ptr().add(self.len).write(x) };
        self.len += 1;
        true
    }

    /// Appends `x`. The callers keep within the capacity (as they did with
    /// a `Vec` reserved up front); past it, `x` is dropped (and debug
    /// builds stop).
    #[inline]
    pub fn push(&mut self, x: T) {
        let pushed = self.try_push(x);
        debug_assert!(pushed, "FixedVec: push past its capacity of {}", self.cap);
    }

    /// Removes and returns the last element.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let last = self.last().copied()?;
        self.len -= 1;
        Some(last)
    }

    /// Removes every element.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps the first `len` elements.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Grows (with `x`, within the capacity) or shrinks to `len` elements.
    pub fn resize(&mut self, len: usize, x: T) {
        self.truncate(len);
        while self.len < len && self.try_push(x) {}
    }

    /// Appends what `items` yields, as far as the capacity goes.
    pub fn extend(&mut self, items: impl IntoIterator<Item = T>) {
        for x in items {
            self.push(x);
        }
    }

    /// Removes element `at`, the last taking its place.
    pub fn swap_remove(&mut self, at: usize) -> T {
        let x = self[at];
        let last = self.len - 1;
        self[at] = self[last];
        self.len = last;
        x
    }

    #[inline]
    fn as_ptr(&self) -> *const T {
        self.pages.ptr.as_ptr().cast::<T>()
    }

    #[inline]
    fn as_mut_ptr(&mut self) -> *mut T {
        self.pages.ptr.as_ptr().cast::<T>()
    }
}

impl<T: Copy + PartialEq> FixedVec<T> {
    /// Removes consecutive repeated elements.
    pub fn dedup(&mut self) {
        let mut kept = 0;
        for i in 0..self.len {
            if kept == 0 || self[i] != self[kept - 1] {
                self[kept] = self[i];
                kept += 1;
            }
        }
        self.len = kept;
    }
}

impl<T: Copy> std::ops::Deref for FixedVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` elements were written (`try_push`,
        // `resize`), in pages aligned to at least 64 bytes.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for FixedVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` is the only way in.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), self.len) }
    }
}

impl<'a, T: Copy> IntoIterator for &'a FixedVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Copy + PartialEq> PartialEq for FixedVec<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for FixedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Types for which all-zero bytes are a value.
///
/// # Safety
/// Every bit of the type's zeroed bytes must make a valid value.
pub unsafe trait Zeroed: Copy {}
// SAFETY: integers, and tuples of integers and `bool`, are valid as zeros.
unsafe impl Zeroed for u32 {}
// SAFETY: as above.
unsafe impl Zeroed for i32 {}
// SAFETY: as above.
unsafe impl Zeroed for (u32, u32) {}
// SAFETY: as above.
unsafe impl Zeroed for (u32, u32, bool) {}
// SAFETY: zero bits are 0.0.
unsafe impl Zeroed for f32 {}

/// A table of `len` `T`s that starts all zeros, on pages of its own (see
/// the module's text).
pub struct ZeroTable<T: Zeroed>(FixedVec<T>);

impl<T: Zeroed> ZeroTable<T> {
    /// `len` zeros.
    pub fn new(len: usize) -> ZeroTable<T> {
        let mut v = FixedVec::with_capacity(len);
        // The pages are zeros already (`Zeroed`): nothing is written.
        v.len = len;
        ZeroTable(v)
    }
}

impl<T: Zeroed> ZeroTable<T> {
    /// The table's first element, for writes through a pointer: it stays
    /// where it is while the table lives, wherever the table moves.
    pub fn as_non_null(&mut self) -> NonNull<T> {
        self.0.pages.ptr.cast::<T>()
    }
}

impl<T: Zeroed> std::ops::Deref for ZeroTable<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T: Zeroed> std::ops::DerefMut for ZeroTable<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_vec_keeps_within_its_capacity() {
        let mut v = FixedVec::<u32>::with_capacity(3);
        assert!(v.is_empty());
        v.extend([1, 1, 2]);
        assert!(!v.try_push(9));
        assert_eq!(&v[..], &[1, 1, 2]);
        v.dedup();
        assert_eq!(&v[..], &[1, 2]);
        v.resize(3, 7);
        assert_eq!(&v[..], &[1, 2, 7]);
        assert_eq!(v.swap_remove(0), 1);
        assert_eq!(&v[..], &[7, 2]);
        assert_eq!(v.pop(), Some(2));
        v.truncate(0);
        assert_eq!(v.pop(), None);
        let mut w = FixedVec::<u32>::with_capacity(100_000);
        w.push(7);
        v.push(7);
        assert!(v == w);
        std::mem::swap(&mut v, &mut w);
        assert_eq!(v.capacity(), 100_000);
    }

    #[test]
    fn zero_table_starts_zeroed() {
        let mut t = ZeroTable::<(u32, u32, bool)>::new(70_000);
        assert!(t.iter().all(|&e| e == (0, 0, false)));
        t[69_999] = (1, 2, true);
        assert_eq!(t.len(), 70_000);
        assert_eq!(t[69_999], (1, 2, true));
        let empty = ZeroTable::<u32>::new(0);
        assert!(empty.is_empty());
    }
}
