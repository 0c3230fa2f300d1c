//! A forged count is rejected before anything is allocated for it.
//!
//! This binary installs an allocator that records the largest single request,
//! so it holds only this one test.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::Bytes;
use magnetar_synthdef::{parse, SynthDefError};

struct LargestRequest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the only
// extra work is an atomic store, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for LargestRequest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract, which we pass on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout (see `alloc`).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: LargestRequest = LargestRequest;

/// A version 2 file with every kind of counted section, and where each count sits.
fn file_with_count_positions() -> (Vec<u8>, Vec<(&'static str, usize, usize)>) {
    let mut at = Vec::new();
    let mut b = Bytes::file(2, 1);
    at.push(("defs", 8, 2));
    b.pstring("big");
    at.push(("constants", b.data.len(), 4));
    b.floats(&[0.0, 1.0]);
    at.push(("params", b.data.len(), 4));
    b.floats(&[0.5]);
    at.push(("names", b.data.len(), 4));
    b.int(1).pstring("gain").int(0);
    at.push(("units", b.data.len(), 4));
    b.int(2);
    b.pstring("Pan2").u8(2);
    at.push(("inputs", b.data.len(), 4));
    b.int(1);
    at.push(("outputs", b.data.len(), 4));
    b.int(2).i16(0).constant_input(0).u8(2).u8(2);
    b.unit("Out", 2, 2, 0, 0).constant_input(0).unit_input(0, 1);
    at.push(("variants", b.data.len(), 2));
    b.i16(1).pstring("big.v").f32(0.25);
    (b.data, at)
}

#[test]
fn huge_counts_error_without_a_large_allocation() {
    let (file, positions) = file_with_count_positions();
    assert!(parse(&file).is_ok());
    for (what, at, width) in positions {
        let mut bytes = file.clone();
        if width == 4 {
            bytes[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        } else {
            bytes[at..at + 2].copy_from_slice(&i16::MAX.to_be_bytes());
        }
        LARGEST.store(0, Ordering::Relaxed);
        let result = parse(&bytes);
        let largest = LARGEST.load(Ordering::Relaxed);
        let err = result.expect_err(what);
        assert!(
            matches!(err, SynthDefError::Truncated { .. }),
            "{what}: {err}"
        );
        assert!(
            largest < 64 * 1024,
            "{what}: allocated {largest} bytes for a {} byte file",
            bytes.len()
        );
    }
}
