//! Many blocks on two threads over shapes that stress the ready stack and
//! the block hand-over: wide parallel groups, consecutive parallel groups,
//! long chains, and tiny plans where the block is over before a helper joins;
//! and the in-order commit of items that finish in random order on more
//! threads than cores.

mod common;

use common::{constraints, expected_ids, Recorder, Rng};
use magnetar_dsp::executor::{Executor, ExecutorConfig};
use magnetar_dsp::in_order::InOrder;
use magnetar_dsp::queue::{ItemId, Plan, Tree, TreeNode};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// What `InOrder` applies for the stress test below, with checks that do
/// not rely on the protocol being right: every apply is counted per item,
/// `next` must be the item applied (or written in place), and `applying`
/// catches two threads applying at once.
struct Applied {
    /// Per item: what its thread left to apply (item + 1), or 0 when it
    /// found itself next in order and applied itself at once.
    slots: Vec<AtomicUsize>,
    /// Per item: the thread that ran it.
    by: Vec<AtomicUsize>,
    counts: Vec<AtomicUsize>,
    next: AtomicUsize,
    applying: AtomicBool,
}

impl Applied {
    fn take(&self, n: usize, left: usize) {
        assert_eq!(left, n + 1, "item {n} applied without its result");
        assert_eq!(self.next.load(Ordering::Relaxed), n, "item {n} applied out of order");
        self.counts[n].fetch_add(1, Ordering::Relaxed);
        self.next.store(n + 1, Ordering::Relaxed);
    }

    /// Applies item `n` on thread `worker`, which while items run
    /// (`mine`) applies only the items it ran.
    fn apply(&self, n: usize, worker: usize, mine: bool) {
        assert!(!self.applying.swap(true, Ordering::Acquire), "two threads apply at once");
        if mine {
            let by = self.by[n].load(Ordering::Relaxed);
            assert_eq!(by, worker, "item {n} applied by another thread while items ran");
        }
        let left = self.slots[n].load(Ordering::Relaxed);
        if left != 0 {
            self.take(n, left);
        }
        // Hold the flag a while, as adding a block to a bus does: items
        // that end meanwhile find it taken.
        for _ in 0..64 {
            std::hint::spin_loop();
        }
        self.applying.store(false, Ordering::Release);
    }
}

#[test]
fn items_finished_in_random_order_on_four_threads_are_applied_once_each_in_order() {
    const ITEMS: usize = 48;
    let mut order = InOrder::new(ITEMS);
    let applied = Applied {
        slots: (0..ITEMS).map(|_| AtomicUsize::new(0)).collect(),
        by: (0..ITEMS).map(|_| AtomicUsize::new(0)).collect(),
        counts: (0..ITEMS).map(|_| AtomicUsize::new(0)).collect(),
        next: AtomicUsize::new(0),
        applying: AtomicBool::new(false),
    };
    let mut rng = Rng::new(7);
    let mut perm: Vec<usize> = (0..ITEMS).collect();
    for round in 0..20_000 {
        let items = 1 + rng.below(ITEMS as u64) as usize;
        order.reset(items);
        applied.next.store(0, Ordering::Relaxed);
        for c in &applied.counts {
            c.store(0, Ordering::Relaxed);
        }
        // A random finishing order, taken by whichever thread comes next.
        perm.truncate(0);
        perm.extend(0..items);
        for k in (1..items).rev() {
            perm.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let taken = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for w in 0..4 {
                let (order, applied, perm, taken) = (&order, &applied, &perm, &taken);
                scope.spawn(move || {
                    loop {
                        let k = taken.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = perm.get(k) else { break };
                        // As the engine's items do: the item next in order
                        // applies itself at once, the others leave a result.
                        if order.committed() == i {
                            applied.take(i, i + 1);
                            applied.slots[i].store(0, Ordering::Relaxed);
                        } else {
                            applied.slots[i].store(i + 1, Ordering::Relaxed);
                        }
                        applied.by[i].store(w, Ordering::Relaxed);
                        order.finish(i, w, |n| applied.apply(n, w, true));
                    }
                    // No look as an idle thread does, only the last one as
                    // a thread leaves: more would hide an item that the
                    // flag's holder left behind.
                    order.commit(None, |n| applied.apply(n, w, false));
                });
            }
        });
        assert_eq!(order.committed(), items, "round {round}: finished items left unapplied");
        assert_eq!(applied.next.load(Ordering::Relaxed), items, "round {round}");
        for (n, c) in applied.counts[..items].iter().enumerate() {
            assert_eq!(c.load(Ordering::Relaxed), 1, "round {round}: item {n} applied {} times", c.load(Ordering::Relaxed));
        }
    }
}
