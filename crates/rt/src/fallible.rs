//! Allocations that may be refused.
//!
//! A real-time thread gets its memory from a fixed pool (the `mem` crate's
//! global allocator). Most of what it allocates has a size known before the
//! work starts, and callers check the pool up front; a size a client chooses
//! at run time (a delay line's maximum, a window, a buffer of a synth's own)
//! is known only when the allocation happens. Such an allocation goes
//! through [`filled`]: while it runs the calling thread is marked, and a
//! global allocator that honours the mark ([`active`]) answers "no" when its
//! pool cannot serve the request, instead of taking the system heap. The
//! caller then unwinds with an [`OutOfMemory`] payload, which code that
//! contains unit failures recognises and reports as scsynth does ("out of
//! real time memory").
//!
//! ```
//! let line = magnetar_rt::fallible::try_filled(0.0f32, 1024).unwrap();
//! assert_eq!(line.len(), 1024);
//! assert!(magnetar_rt::fallible::try_filled(0u64, usize::MAX / 4).is_err());
//! ```

use std::cell::Cell;

thread_local! {
    // const-initialised without a destructor: safe to read inside an allocator.
    static FALLIBLE: Cell<bool> = const { Cell::new(false) };
    static FALLIBLE_BYTES: Cell<u64> = const { Cell::new(0) };
}

/// The payload a refused allocation unwinds with (see [`unwind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory;

/// Whether the calling thread is inside an allocation that may be refused:
/// a global allocator returns null then rather than fall back elsewhere.
#[inline]
pub fn active() -> bool {
    FALLIBLE.with(Cell::get)
}

/// Bytes the calling thread has had through [`try_filled`] so far (never
/// decreasing): the part of a piece of work's memory whose size the work
/// chose at run time.
pub fn bytes_allocated() -> u64 {
    FALLIBLE_BYTES.with(Cell::get)
}

/// `len` copies of `value`, or `OutOfMemory` when the allocator refuses
/// (or the size overflows). Never takes memory the allocator would only
/// give by falling back.
pub fn try_filled<T: Clone>(value: T, len: usize) -> Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::new();
    FALLIBLE.with(|f| f.set(true));
    let reserved = v.try_reserve_exact(len);
    FALLIBLE.with(|f| f.set(false));
    reserved.map_err(|_| OutOfMemory)?;
    let bytes = (len * std::mem::size_of::<T>()) as u64;
    FALLIBLE_BYTES.with(|b| b.set(b.get() + bytes));
    // Within the capacity just reserved: no further allocation.
    v.resize(len, value);
    Ok(v)
}

/// Types for which all-zero bytes are a valid value.
///
/// # Safety
/// Implement only for types whose every field accepts all-zero bits.
pub unsafe trait Zeroed: Copy {}

// SAFETY: zero bits are 0 (or 0.0) for every primitive number.
unsafe impl Zeroed for f32 {}
// SAFETY: as above.
unsafe impl Zeroed for f64 {}
// SAFETY: as above.
unsafe impl Zeroed for u8 {}
// SAFETY: as above.
unsafe impl Zeroed for i32 {}
// SAFETY: as above.
unsafe impl Zeroed for u32 {}
// SAFETY: as above.
unsafe impl Zeroed for i64 {}
// SAFETY: as above.
unsafe impl Zeroed for usize {}

/// `len` zeros, or `OutOfMemory` when the allocator refuses. Memory from the
/// system heap comes zeroed by the kernel (nothing is written, so a large
/// line costs no time until it is used).
pub fn try_zeroed<T: Zeroed>(len: usize) -> Result<Vec<T>, OutOfMemory> {
    if len == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| OutOfMemory)?;
    FALLIBLE.with(|f| f.set(true));
    // SAFETY: the layout has a non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    FALLIBLE.with(|f| f.set(false));
    if ptr.is_null() {
        return Err(OutOfMemory);
    }
    FALLIBLE_BYTES.with(|b| b.set(b.get() + layout.size() as u64));
    // SAFETY: `ptr` came from the global allocator with the layout a
    // `Vec<T>` of capacity `len` uses, and holds `len` zeroed values, which
    // are valid `T`s (`Zeroed`).
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, len) })
}

/// [`try_zeroed`], unwinding with [`OutOfMemory`] when refused.
pub fn zeroed<T: Zeroed>(len: usize) -> Vec<T> {
    match try_zeroed(len) {
        Ok(v) => v,
        Err(e) => unwind(e),
    }
}

/// An empty vector with room for `len` values, unwinding with
/// [`OutOfMemory`] when refused.
pub fn with_capacity<T>(len: usize) -> Vec<T> {
    let mut v = Vec::new();
    FALLIBLE.with(|f| f.set(true));
    let reserved = v.try_reserve_exact(len);
    FALLIBLE.with(|f| f.set(false));
    if reserved.is_err() {
        unwind(OutOfMemory);
    }
    let bytes = (len * std::mem::size_of::<T>()) as u64;
    FALLIBLE_BYTES.with(|b| b.set(b.get() + bytes));
    v
}

/// Runs `f`, one allocation whose result the caller checks for null (a
/// plugin's `RTAlloc`), as an allocation that may be refused.
pub fn refusable<R>(f: impl FnOnce() -> R) -> R {
    FALLIBLE.with(|m| m.set(true));
    let r = f();
    FALLIBLE.with(|m| m.set(false));
    r
}

/// [`try_filled`], unwinding with [`OutOfMemory`] when refused: for
/// constructors whose caller contains failures.
pub fn filled<T: Clone>(value: T, len: usize) -> Vec<T> {
    match try_filled(value, len) {
        Ok(v) => v,
        Err(e) => unwind(e),
    }
}

/// Unwinds with the [`OutOfMemory`] payload. No panic hook runs and nothing
/// is formatted or printed (the payload is a zero-sized box, which takes no
/// memory): the failure is reported by whoever catches it.
pub fn unwind(e: OutOfMemory) -> ! {
    std::panic::resume_unwind(Box::new(e))
}

/// Whether a caught panic payload is a refused allocation.
pub fn is_out_of_memory(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<OutOfMemory>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_allocation_unwinds_with_its_own_payload() {
        let caught = std::panic::catch_unwind(|| filled(0.0f32, usize::MAX / 2)).unwrap_err();
        assert!(is_out_of_memory(caught.as_ref()));
        assert!(!active(), "the mark is cleared after a refusal");
        let before = bytes_allocated();
        assert_eq!(filled(1u8, 10), vec![1u8; 10]);
        assert_eq!(zeroed::<f32>(10), vec![0.0f32; 10]);
        assert_eq!(bytes_allocated() - before, 50);
        let caught = std::panic::catch_unwind(|| zeroed::<f64>(usize::MAX / 4)).unwrap_err();
        assert!(is_out_of_memory(caught.as_ref()));
    }
}
