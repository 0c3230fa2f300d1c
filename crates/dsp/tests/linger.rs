//! Idle helpers between blocks: with lingering off they sleep as soon as
//! they leave a block instead of spinning for their budget, and blocks run
//! every item once in order however lingering is switched.

mod common;

use common::{constraints, expected_ids, Recorder};
use magnetar_dsp::executor::{Executor, ExecutorConfig};
use magnetar_dsp::queue::{ItemId, Plan, Tree, TreeNode};
use std::time::{Duration, Instant};

fn par(ids: std::ops::Range<u32>) -> TreeNode {
    TreeNode::Par(ids.map(|i| TreeNode::Item(ItemId(i))).collect())
}

/// Nanoseconds thread `tid` of this process has run on a CPU.
fn cpu_ns(tid: i32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).expect("schedstat");
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .expect("run time in schedstat")
}

/// An executor whose helper would spin for ten seconds after a block.
fn long_spinner() -> Executor {
    let config = ExecutorConfig {
        threads: 2,
        spin: Duration::from_secs(10),
        fifo_priority: None,
        pin: false,
        first_cpu: 0,
        patience: None,
    };
    Executor::new(config).unwrap()
}

#[test]
fn without_lingering_a_helper_sleeps_after_its_block() {
    let mut executor = long_spinner();
    let tid = executor.helper_setups()[0].tid;
    let tree = Tree {
        root: par(0..64),
        satellites: vec![],
    };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let recorder = Recorder::new(64);
    executor.set_linger(false);
    executor.run_block(&plan, &recorder);
    recorder
        .check(&expected_ids(&tree), &constraints(&tree))
        .unwrap();
    // The block turned lingering on for itself; off again, as an engine
    // whose next blocks run on one thread does.
    executor.set_linger(false);
    std::thread::sleep(Duration::from_millis(50));
    let before = cpu_ns(tid);
    std::thread::sleep(Duration::from_millis(300));
    let ran = cpu_ns(tid) - before;
    assert!(
        ran < 20_000_000,
        "the helper ran {} ms of 300 ms after its block, lingering off",
        ran / 1_000_000
    );

    // Lingering on wakes it to spin for its budget (the budget is ten
    // seconds): it takes CPU time again, as much as the machine gives it.
    executor.set_linger(true);
    let before = cpu_ns(tid);
    let started = Instant::now();
    while cpu_ns(tid) - before < 5_000_000 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the helper did not spin again with lingering on"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn blocks_run_every_item_in_order_however_lingering_is_switched() {
    let mut executor = long_spinner();
    let shapes = [
        Tree {
            root: par(0..128),
            satellites: vec![],
        },
        Tree {
            root: TreeNode::Seq(vec![par(0..32), par(32..64), TreeNode::Item(ItemId(64))]),
            satellites: vec![],
        },
    ];
    let recorder = Recorder::new(128);
    let mut plan = Plan::new();
    for block in 0..4000u32 {
        let tree = &shapes[(block / 200) as usize % shapes.len()];
        if block % 200 == 0 {
            plan.compile_into(tree).unwrap();
        }
        // Off for a few blocks, on for a few, as the engine's groups choose.
        executor.set_linger(block % 7 < 3);
        recorder.clear();
        executor.run_block(&plan, &recorder);
        if block % 8 == 0 {
            recorder
                .check(&expected_ids(tree), &constraints(tree))
                .unwrap_or_else(|e| panic!("block {block}: {e}"));
        }
        if block % 500 == 499 {
            std::thread::sleep(Duration::from_micros(300));
        }
    }
    // Dropping the executor with the helper spinning or asleep ends it.
}
