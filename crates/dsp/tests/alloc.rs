//! Once warmed up, compiling and running a plan does not touch the heap.

mod common;

use common::{random_tree, Rng};
use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
use magnetar_dsp::queue::{FlatTree, ItemId, Plan};
use magnetar_rt::guard::{AllocGuard, CountingAlloc};
use std::sync::atomic::{AtomicU64, Ordering};

#[global_allocator]
static ALLOC: CountingAlloc<std::alloc::System> = CountingAlloc::new(std::alloc::System);

#[test]
fn recompiling_a_tree_no_larger_than_before_does_not_allocate() {
    let mut rng = Rng::new(7);
    let trees: Vec<_> = (0..50).map(|_| random_tree(&mut rng, 200, true).0).collect();
    let mut plan = Plan::with_capacity(1024, 4096);
    // Warm-up: the largest shapes set the capacities.
    for tree in &trees {
        plan.compile_into(tree).unwrap();
    }
    let guard = AllocGuard::arm();
    for tree in trees.iter().rev() {
        plan.compile_into(tree).unwrap();
    }
    assert_eq!(guard.count(), 0, "compile_into allocated after warm-up");
}

#[test]
fn a_flat_tree_can_be_rebuilt_and_compiled_without_allocating() {
    let mut flat = FlatTree::with_capacity(256, 16);
    let mut plan = Plan::with_capacity(256, 1024);
    let build = |flat: &mut FlatTree, plan: &mut Plan| {
        flat.clear();
        flat.begin_par();
        for g in 0..8 {
            flat.begin_seq();
            for i in 0..8 {
                flat.item(ItemId(g * 8 + i));
            }
            flat.end().unwrap();
        }
        flat.end().unwrap();
        plan.compile_flat(flat).unwrap();
    };
    build(&mut flat, &mut plan);
    let _strict = AllocGuard::arm_strict();
    build(&mut flat, &mut plan);
    assert_eq!(plan.len(), 8);
}

struct Sum(AtomicU64);

impl Work for Sum {
    fn run(&self, item: ItemId, _worker: usize) {
        self.0.fetch_add(item.0 as u64, Ordering::Relaxed);
    }
}

#[test]
fn running_blocks_does_not_allocate_on_the_audio_thread() {
    let mut rng = Rng::new(11);
    let (tree, _) = random_tree(&mut rng, 200, true);
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let config = ExecutorConfig { threads: 2, fifo_priority: None, pin: false, ..Default::default() };
    let mut executor = Executor::new(config).unwrap();
    let work = Sum(AtomicU64::new(0));
    executor.run_block(&plan, &work);
    let _strict = AllocGuard::arm_strict();
    for _ in 0..200 {
        executor.run_block(&plan, &work);
    }
}
