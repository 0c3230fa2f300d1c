//! Many blocks on two threads over shapes that stress the ready stack and
//! the block hand-over: wide parallel groups, consecutive parallel groups,
//! long chains, and tiny plans where the block is over before a helper joins.

mod common;

use common::{constraints, expected_ids, Recorder};
use magnetar_dsp::executor::{Executor, ExecutorConfig};
use magnetar_dsp::queue::{ItemId, Plan, Tree, TreeNode};
use std::time::Duration;

fn par(ids: std::ops::Range<u32>) -> TreeNode {
    TreeNode::Par(ids.map(|i| TreeNode::Item(ItemId(i))).collect())
}

#[test]
fn twenty_thousand_blocks_on_two_threads_run_every_item_once_in_order() {
    let shapes = [
        Tree { root: par(0..256), satellites: vec![] },
        Tree { root: TreeNode::Seq(vec![par(0..64), par(64..128), par(128..192)]), satellites: vec![] },
        Tree {
            root: TreeNode::Seq((0..32).map(|i| TreeNode::Par(vec![TreeNode::Item(ItemId(2 * i)), TreeNode::Item(ItemId(2 * i + 1))])).collect()),
            satellites: vec![],
        },
        Tree { root: TreeNode::Item(ItemId(0)), satellites: vec![] },
    ];
    let config = ExecutorConfig { threads: 2, spin: Duration::from_micros(50), fifo_priority: None, pin: false, first_cpu: 0, patience: None };
    let mut executor = Executor::new(config).unwrap();
    let recorder = Recorder::new(256);
    let mut plan = Plan::new();
    for block in 0..20_000u32 {
        let tree = &shapes[(block / 500) as usize % shapes.len()];
        if block % 500 == 0 {
            plan.compile_into(tree).unwrap();
        }
        recorder.clear();
        executor.run_block(&plan, &recorder);
        // Checking is slower than running; sample the blocks.
        if block % 16 == 0 {
            recorder.check(&expected_ids(tree), &constraints(tree)).unwrap_or_else(|e| panic!("block {block}: {e}"));
        }
        if block % 1000 == 999 {
            // Let the helper fall asleep now and then, so wake-ups are exercised.
            std::thread::sleep(Duration::from_micros(300));
        }
    }
}
