//! Helpers both collectors' behaviour tests use: a small heap, blocks run
//! like audio periods, raw word access, and a deterministic generator.

#![allow(dead_code)]

use magnetar_gc::{Collector, GcConfig};
use std::time::{Duration, Instant};

pub const POISON: u64 = 0xDEAD_BEEF_DEAD_BEEF;
pub const MAGIC: usize = 0x5AFE_C0DE_0000_0000;
pub const BUDGET: Duration = Duration::from_millis(3);

/// A 1 MB pointer heap and 1 MB atomic heap, full snapshots every 40 ms,
/// freed memory poisoned.
pub fn small_heap() -> GcConfig {
    GcConfig {
        pointer_heap_bytes: 1 << 20,
        atomic_heap_bytes: 1 << 20,
        root_slots: 64,
        snapshot_bandwidth: Some(2e9),
        full_snapshot_period: Duration::from_millis(40),
        full_snapshot_window: Duration::from_millis(40),
        poison: Some(POISON),
        ..GcConfig::default()
    }
}

/// Run blocks (with a short pause, like an audio period) until `done` or a timeout.
pub fn run_blocks_until(gc: &mut Collector, mut done: impl FnMut(&mut Collector) -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        gc.between_blocks(BUDGET);
        if done(gc) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    false
}

pub fn word(addr: usize, k: usize) -> usize {
    // SAFETY: callers pass addresses of blocks they allocated with at least k+1 words, inside
    // the collector's heap, which lives as long as the collector.
    unsafe { ((addr as *const usize).add(k)).read() }
}

/// A non-pointer store (needs no barrier in either collector).
pub fn set_word(addr: usize, k: usize, v: usize) {
    // SAFETY: as in `word`, and the block is reachable (so not being zeroed by the collector).
    unsafe { ((addr as *mut usize).add(k)).write(v) }
}

/// xorshift: the same object graphs on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.next() % n
    }
}
