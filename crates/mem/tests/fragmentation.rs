//! The pool reports its largest free block, not its free total, once
//! frees have left it full of holes. Own test binary: the pool is
//! process-wide and only one thread may ever enter it.

use magnetar_mem::{drain_deferred_frees, enter_pool, install_pool, largest_free_block, status, RoutingAlloc};

#[global_allocator]
static A: RoutingAlloc<std::alloc::System> = RoutingAlloc::new(std::alloc::System);

const POOL_BYTES: usize = 1 << 20;
const BLOCK: usize = 4000;

#[test]
fn largest_free_block_is_the_biggest_hole_after_fragmentation() {
    install_pool(POOL_BYTES).unwrap();
    std::thread::spawn(|| {
        // SAFETY: this is the only thread that enters the pool.
        unsafe { enter_pool() };
        let fresh = largest_free_block();
        assert!(fresh > POOL_BYTES * 15 / 16, "an untouched pool is one block ({fresh} of {POOL_BYTES})");

        // Fill the pool with equal blocks until it spills to the system heap.
        let mut blocks: Vec<Box<[u8]>> = Vec::with_capacity(POOL_BYTES / BLOCK + 16);
        let misses_before = status().misses;
        loop {
            let b = vec![1u8; BLOCK].into_boxed_slice();
            if status().misses > misses_before {
                drop(b);
                break;
            }
            blocks.push(b);
        }
        assert!(largest_free_block() < BLOCK, "a full pool has no room for another block");

        // Free every other block, and three neighbours in a row in the
        // middle: that run is the biggest hole.
        let mid = (blocks.len() / 2) & !1;
        let addr = |b: &[u8]| b.as_ptr() as usize;
        let stride = addr(&blocks[mid + 1]) - addr(&blocks[mid]);
        assert_eq!(addr(&blocks[mid + 3]) - addr(&blocks[mid]), 3 * stride, "blocks were carved in address order");
        let hole = 3 * stride;
        let mut kept = Vec::new();
        for (i, b) in blocks.into_iter().enumerate() {
            let free_it = i % 2 == 0 || (mid..mid + 3).contains(&i);
            if free_it {
                drop(b);
            } else {
                kept.push(b);
            }
        }

        let s = status();
        let largest = largest_free_block();
        assert!(s.free() > POOL_BYTES / 3, "about half the pool is free again ({} bytes)", s.free());
        assert!(largest < s.free(), "largest {largest} must be below the free total {}", s.free());
        assert!(largest <= hole, "largest {largest} cannot exceed the biggest hole {hole}");
        // TLSF serves a request only from a size class that surely fits it,
        // which costs at most one second-level class (1/16) and a header.
        assert!(largest >= hole - hole / 16 - 64, "largest {largest} should be close to the biggest hole {hole}");
        assert!(largest > 2 * stride, "a hole of three blocks beats the single ones");

        // The reported size can really be allocated, from the pool.
        let misses = status().misses;
        let big = vec![2u8; largest].into_boxed_slice();
        assert_eq!(status().misses, misses, "a request of the reported size is served by the pool");
        assert!(largest_free_block() < largest, "that took the biggest hole");
        drop(big);
        assert_eq!(largest_free_block(), largest, "freeing it restores the hole");

        // Other threads see the value last measured on the pool's thread.
        let seen = std::thread::spawn(largest_free_block).join().unwrap();
        assert_eq!(seen, largest);
        drop(kept);
        // The helper thread's bookkeeping was partly freed over there.
        drain_deferred_frees(1024);
        let merged = largest_free_block();
        assert!(merged > POOL_BYTES * 15 / 16, "freeing everything merges the pool back into one block ({merged} bytes)");
    })
    .join()
    .unwrap();
}
