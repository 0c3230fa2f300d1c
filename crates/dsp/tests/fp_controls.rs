//! Items on a helper compute under the floating-point controls of the
//! thread that runs the block, even when that thread changed them after the
//! pool started (a real-time audio thread turns on flushing denormals to
//! zero in its first period): otherwise an item would render different bits
//! on a helper than on the caller, and crawl through subnormal arithmetic.
#![cfg(target_arch = "x86_64")]

use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
use magnetar_dsp::queue::{ItemId, Plan, Tree, TreeNode};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// MXCSR bits 15 (flush to zero) and 6 (denormals are zero).
const FTZ_DAZ: u32 = 0x8040;

#[allow(deprecated)]
fn mxcsr() -> u32 {
    // SAFETY: reads this thread's MXCSR.
    unsafe { std::arch::x86_64::_mm_getcsr() }
}

#[allow(deprecated)]
fn set_mxcsr(v: u32) {
    // SAFETY: `v` comes from `mxcsr()` with only FTZ/DAZ changed.
    unsafe { std::arch::x86_64::_mm_setcsr(v) }
}

/// Item 0 (the caller's) waits until a helper has run item 1, so that both
/// threads compute; each records half the smallest normal float's bits.
struct Halves {
    helper_ran: AtomicBool,
    bits: [AtomicU32; 2],
    helper_came: AtomicBool,
}

impl Work for Halves {
    fn run(&self, item: ItemId, worker: usize) {
        if worker == 0 {
            let until = Instant::now() + Duration::from_secs(10);
            while !self.helper_ran.load(Ordering::Acquire) && Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        let half = std::hint::black_box(f32::MIN_POSITIVE) * std::hint::black_box(0.5f32);
        self.bits[item.0 as usize].store(half.to_bits(), Ordering::Relaxed);
        if worker != 0 {
            self.helper_came.store(true, Ordering::Relaxed);
            self.helper_ran.store(true, Ordering::Release);
        }
    }
}

/// Runs item 0 on the caller and item 1 on a helper of a pool started while
/// this thread's MXCSR was `at_start`, with the caller's MXCSR `at_run` for
/// the block; restores the MXCSR and returns the items' bits (caller's, helper's).
fn halves_under(at_start: u32, at_run: u32) -> [u32; 2] {
    let before = mxcsr();
    set_mxcsr(at_start);
    let config = ExecutorConfig { threads: 2, fifo_priority: None, pin: false, ..Default::default() };
    let mut pool = Executor::new(config).unwrap();
    // After the helper started: it did not inherit this.
    set_mxcsr(at_run);
    let tree = Tree { root: TreeNode::Par(vec![TreeNode::Item(ItemId(0)), TreeNode::Item(ItemId(1))]), satellites: vec![] };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let work = Halves { helper_ran: AtomicBool::new(false), bits: [AtomicU32::new(1), AtomicU32::new(1)], helper_came: AtomicBool::new(false) };
    pool.run_block(&plan, &work);
    set_mxcsr(before);
    assert!(work.helper_came.load(Ordering::Relaxed), "the helper never ran an item");
    [work.bits[0].load(Ordering::Relaxed), work.bits[1].load(Ordering::Relaxed)]
}

#[test]
fn a_helper_flushes_subnormals_when_the_caller_turned_flushing_on_after_the_pool_started() {
    let now = mxcsr();
    let bits = halves_under(now, now | FTZ_DAZ);
    // Flushed to +0.0 on both threads, as on the caller.
    assert_eq!(bits, [0, 0], "item results (caller's, helper's): {:?}", bits.map(f32::from_bits));
}

#[test]
fn a_helper_keeps_subnormals_when_the_caller_does_not_flush() {
    let now = mxcsr();
    // The helper starts with flushing on (inherited), and the caller turns it off.
    let bits = halves_under(now | FTZ_DAZ, now & !FTZ_DAZ);
    let subnormal = (f32::MIN_POSITIVE * 0.5).to_bits();
    assert_eq!(bits, [subnormal, subnormal]);
}
