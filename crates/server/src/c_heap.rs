//! The C heap, counted.
//!
//! `malloc`, `free` and the rest of the C allocator are defined here, in
//! the executable, so every library the process uses (UGen plugins and
//! their C++ `operator new`, libsndfile, JACK, glibc itself) calls these
//! instead of glibc's: the dynamic linker binds a symbol to the executable's
//! definition first. Each forwards to glibc's own allocator (`__libc_malloc`
//! and friends, exported for exactly this) and counts the call when the
//! thread has armed an allocation guard (the audio thread each period, the
//! DSP helpers while they serve blocks): code that is not Rust, and so not
//! seen by the counting global allocator, shows in `/magnetar_rtStats` too.
//!
//! Rust's own allocations go to glibc directly ([`GlibcHeap`]), so each is
//! counted once, by the counting allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::os::raw::{c_int, c_void};

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(p: *mut c_void);
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_valloc(size: usize) -> *mut c_void;
    fn __libc_pvalloc(size: usize) -> *mut c_void;
}

use magnetar_rt::guard::note_c_heap_op as note;

/// Keeps glibc's threshold for serving a block by its own mapping at its
/// starting value (128 KiB) instead of letting it rise to the size of the
/// largest mapped block freed so far (plugin loading and wavetable set-up
/// free a few). Above the threshold `calloc` hands out the kernel's fresh
/// pages, untouched until used; below it, from memory the heap already
/// touched, it clears every byte. The tables sized by the bus and buffer
/// counts (the threads' private worlds' buses, the parallel groups' per-bus
/// tables), most of which a render never uses, then cost no page faults
/// at start-up. Only for non-real-time rendering: a real-time server locks
/// and touches its memory up front (`mlockall`), and there a mapping per
/// block would add system calls for threads that free large blocks.
pub fn fixed_mmap_threshold() {
    // glibc's default (`DEFAULT_MMAP_THRESHOLD_MIN`); setting it, whatever
    // the value, stops the dynamic adjustment.
    const THRESHOLD: c_int = 128 * 1024;
    // SAFETY: a plain setting of glibc's allocator, made before any thread
    // but this one runs; a refusal (0) leaves the default, which is fine.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD) };
}

/// glibc's `malloc` guarantees this alignment (x86-64: 16).
const MIN_ALIGN: usize = 16;

/// # Safety
/// As C's `malloc`.
#[no_mangle]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    note();
    // SAFETY: forwarded unchanged to glibc's implementation.
    unsafe { __libc_malloc(size) }
}

/// # Safety
/// As C's `calloc`.
#[no_mangle]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    note();
    // SAFETY: forwarded unchanged to glibc's implementation.
    unsafe { __libc_calloc(n, size) }
}

/// # Safety
/// As C's `realloc`.
#[no_mangle]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    note();
    // SAFETY: forwarded unchanged to glibc's implementation.
    unsafe { __libc_realloc(p, size) }
}

/// # Safety
/// As C's `reallocarray`.
#[no_mangle]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    let Some(bytes) = n.checked_mul(size) else {
        // SAFETY: errno is this thread's.
        unsafe { *libc::__errno_location() = libc::ENOMEM };
        return std::ptr::null_mut();
    };
    // SAFETY: as C's `realloc`, the caller's contract.
    unsafe { realloc(p, bytes) }
}

/// # Safety
/// As C's `free`.
#[no_mangle]
pub unsafe extern "C" fn free(p: *mut c_void) {
    // free(NULL) does nothing: not a heap operation.
    if !p.is_null() {
        note();
    }
    // SAFETY: forwarded unchanged to glibc's implementation, which made `p`.
    unsafe { __libc_free(p) }
}

/// # Safety
/// As C's `cfree` (an old name of `free`).
#[no_mangle]
pub unsafe extern "C" fn cfree(p: *mut c_void) {
    // SAFETY: the caller's contract, as `free`'s.
    unsafe { free(p) }
}

/// # Safety
/// As C's `memalign`.
#[no_mangle]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    note();
    // SAFETY: forwarded unchanged to glibc's implementation.
    unsafe { __libc_memalign(align, size) }
}

/// # Safety
/// As C's `aligned_alloc`.
#[no_mangle]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    if !align.is_power_of_two() {
        // SAFETY: errno is this thread's.
        unsafe { *libc::__errno_location() = libc::EINVAL };
        return std::ptr::null_mut();
    }
    // SAFETY: a power-of-two alignment, as memalign wants.
    unsafe { memalign(align, size) }
}

/// # Safety
/// As C's `posix_memalign`: `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    if !align.is_power_of_two() || !align.is_multiple_of(std::mem::size_of::<*mut c_void>()) {
        return libc::EINVAL;
    }
    // SAFETY: a valid alignment, as memalign wants.
    let p = unsafe { memalign(align, size) };
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller passes a writable pointer.
    unsafe { *out = p };
    0
}

/// # Safety
/// As C's `valloc`.
#[no_mangle]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    note();
    // SAFETY: forwarded unchanged to glibc's implementation.
    unsafe { __libc_valloc(size) }
}

/// # Safety
/// As C's `pvalloc`.
#[no_mangle]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    note();
    // SAFETY: forwarded unchanged to glibc's implementation.
    unsafe { __libc_pvalloc(size) }
}

/// Rust's system allocator, reaching glibc without the counted entry
/// points above (std's `System` calls `malloc`, which would count a Rust
/// allocation twice: here and in the counting allocator around this one).
pub struct GlibcHeap;

// SAFETY: each method returns memory from glibc's allocator that fits the
// layout (malloc's own alignment when it suffices, memalign otherwise) and
// gives back only memory it made.
unsafe impl GlobalAlloc for GlibcHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: glibc's allocator with a valid size and alignment.
        unsafe {
            if layout.align() <= MIN_ALIGN && layout.align() <= layout.size() {
                __libc_malloc(layout.size()) as *mut u8
            } else {
                __libc_memalign(layout.align(), layout.size()) as *mut u8
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MIN_ALIGN && layout.align() <= layout.size() {
            // SAFETY: glibc's calloc with a valid size.
            return unsafe { __libc_calloc(layout.size(), 1) as *mut u8 };
        }
        // SAFETY: as `alloc`; the block holds `size` bytes to clear.
        unsafe {
            let p = self.alloc(layout);
            if !p.is_null() {
                std::ptr::write_bytes(p, 0, layout.size());
            }
            p
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from glibc.
        unsafe { __libc_free(ptr as *mut c_void) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MIN_ALIGN && layout.align() <= new_size {
            // SAFETY: `ptr` came from glibc; realloc keeps malloc's alignment.
            return unsafe { __libc_realloc(ptr as *mut c_void, new_size) as *mut u8 };
        }
        // SAFETY: a new block of the same alignment, the old contents
        // copied (as far as both hold), the old block given back.
        unsafe {
            let fresh = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !fresh.is_null() {
                std::ptr::copy_nonoverlapping(ptr, fresh, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            fresh
        }
    }
}

#[cfg(test)]
mod tests {
    use magnetar_rt::guard::AllocGuard;

    extern "C" {
        fn strdup(s: *const std::os::raw::c_char) -> *mut std::os::raw::c_char;
    }

    #[test]
    fn c_code_that_allocates_on_an_armed_thread_is_counted() {
        let guard = AllocGuard::arm();
        // SAFETY: a C string in, memory from malloc out, given back with
        // free; black_box keeps the compiler from removing the pair.
        unsafe {
            let copy = std::hint::black_box(strdup(c"counted".as_ptr()));
            assert!(!copy.is_null());
            libc::free(std::hint::black_box(copy) as *mut libc::c_void);
        }
        // glibc's strdup calls the process's malloc: this module's.
        assert_eq!(guard.c_count(), 2, "strdup's malloc and the free");
        drop(guard);
    }
}
