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

#[test]
fn a_helper_flushes_subnormals_when_the_caller_turned_flushing_on_after_the_pool_started() {
    let before = mxcsr();
    let config = ExecutorConfig { threads: 2, fifo_priority: None, pin: false, ..Default::default() };
    let mut pool = Executor::new(config).unwrap();
    // After the helper started: it did not inherit this.
    set_mxcsr(before | FTZ_DAZ);
    let tree = Tree { root: TreeNode::Par(vec![TreeNode::Item(ItemId(0)), TreeNode::Item(ItemId(1))]), satellites: vec![] };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let work = Halves { helper_ran: AtomicBool::new(false), bits: [AtomicU32::new(1), AtomicU32::new(1)], helper_came: AtomicBool::new(false) };
    pool.run_block(&plan, &work);
    set_mxcsr(before);
    assert!(work.helper_came.load(Ordering::Relaxed), "the helper never ran an item");
    let bits = [work.bits[0].load(Ordering::Relaxed), work.bits[1].load(Ordering::Relaxed)];
    // Flushed to +0.0 on both threads, as on the caller.
    assert_eq!(bits, [0, 0], "item results (caller's, helper's): {:?}", bits.map(f32::from_bits));
}

#[test]
fn a_helper_keeps_subnormals_when_the_caller_does_not_flush() {
    let before = mxcsr();
    set_mxcsr(before | FTZ_DAZ);
    // The helper starts with flushing on (inherited) ...
    let config = ExecutorConfig { threads: 2, fifo_priority: None, pin: false, ..Default::default() };
    let mut pool = Executor::new(config).unwrap();
    // ... and the caller turns it off.
    set_mxcsr(before & !FTZ_DAZ);
    let tree = Tree { root: TreeNode::Par(vec![TreeNode::Item(ItemId(0)), TreeNode::Item(ItemId(1))]), satellites: vec![] };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let work = Halves { helper_ran: AtomicBool::new(false), bits: [AtomicU32::new(1), AtomicU32::new(1)], helper_came: AtomicBool::new(false) };
    pool.run_block(&plan, &work);
    set_mxcsr(before);
    assert!(work.helper_came.load(Ordering::Relaxed), "the helper never ran an item");
    let subnormal = (f32::MIN_POSITIVE * 0.5).to_bits();
    let bits = [work.bits[0].load(Ordering::Relaxed), work.bits[1].load(Ordering::Relaxed)];
    assert_eq!(bits, [subnormal, subnormal]);
}
