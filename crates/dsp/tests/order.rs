//! The executor keeps every order the tree asks for, on every block, while
//! the tree changes between blocks; and parallel sums equal sequential ones.

mod common;

use common::{constraints, expected_ids, leaves, random_tree, Recorder, Rng};
use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
use magnetar_dsp::merge::MergeBuffers;
use magnetar_dsp::queue::{FlatTree, ItemId, Plan, Tree, TreeNode};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

fn pool(threads: usize) -> Executor {
    Executor::new(ExecutorConfig {
        threads,
        spin: Duration::from_micros(200),
        fifo_priority: None,
        pin: false,
        first_cpu: 0,
        patience: None,
    })
    .unwrap()
}

fn order_holds_over_random_trees(threads: usize, trees: u64, blocks_per_tree: u32) {
    let mut rng = Rng::new(threads as u64 * 7919 + 1);
    let mut executor = pool(threads);
    let mut plan = Plan::new();
    let recorder = Recorder::new(512);
    let mut blocks = 0;
    for t in 0..trees {
        let (tree, _) = random_tree(&mut rng, 300, true);
        plan.compile_into(&tree).unwrap();
        let cons = constraints(&tree);
        let expected = expected_ids(&tree);
        for b in 0..blocks_per_tree {
            recorder.clear();
            executor.run_block(&plan, &recorder);
            if let Err(e) = recorder.check(&expected, &cons) {
                panic!("tree {t}, block {b}: {e}\ntree: {tree:?}");
            }
            blocks += 1;
        }
    }
    assert!(blocks >= 1000);
}

/// Random trees (with satellites) and random orders between their leaves,
/// each from an earlier leaf to a later one: every order holds, with the
/// tree's own, on every block.
fn orders_hold_over_random_trees(threads: usize, trees: u64, blocks_per_tree: u32) {
    let mut rng = Rng::new(threads as u64 * 104_729 + 3);
    let mut executor = pool(threads);
    let mut plan = Plan::new();
    let recorder = Recorder::new(512);
    let mut flat = FlatTree::new();
    let mut ordered = 0;
    for t in 0..trees {
        let (tree, _) = random_tree(&mut rng, 300, true);
        flat.set_tree(&tree).unwrap();
        let mut cons = constraints(&tree);
        let mut leaves_in_order = Vec::new();
        leaves(&tree.root, &mut leaves_in_order);
        if leaves_in_order.len() >= 2 {
            for _ in 0..1 + rng.below(8) {
                let a = rng.below(leaves_in_order.len() as u64 - 1) as usize;
                let b = a + 1 + rng.below((leaves_in_order.len() - a - 1) as u64) as usize;
                let (a, b) = (leaves_in_order[a], leaves_in_order[b]);
                flat.order(ItemId(a), ItemId(b));
                cons.push((vec![a], vec![b]));
                ordered += 1;
            }
        }
        plan.compile_flat(&flat).unwrap();
        let expected = expected_ids(&tree);
        for b in 0..blocks_per_tree {
            recorder.clear();
            executor.run_block(&plan, &recorder);
            if let Err(e) = recorder.check(&expected, &cons) {
                panic!("tree {t}, block {b}: {e}\ntree: {tree:?}\norders: {:?}", flat.orders());
            }
        }
    }
    assert!(ordered >= trees);
}

#[test]
fn orders_between_leaves_hold_on_every_block_with_two_threads() {
    orders_hold_over_random_trees(2, 150, 10);
}

/// Each of two parallel items waits (boundedly) for the other to start.
struct Rendezvous {
    started: [AtomicU32; 2],
    worker: [AtomicU32; 2],
    met: AtomicU32,
}

impl Work for Rendezvous {
    fn run(&self, item: ItemId, worker: usize) {
        let (me, other) = (item.0 as usize, 1 - item.0 as usize);
        self.worker[me].store(worker as u32, Ordering::Relaxed);
        self.started[me].store(1, Ordering::SeqCst);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.started[other].load(Ordering::SeqCst) == 0 {
            if std::time::Instant::now() > deadline {
                return;
            }
            std::hint::spin_loop();
        }
        self.met.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn children_of_a_parallel_group_really_run_at_the_same_time_on_two_threads() {
    let tree = Tree { root: TreeNode::Par(vec![TreeNode::Item(ItemId(0)), TreeNode::Item(ItemId(1))]), satellites: vec![] };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let mut executor = pool(2);
    let work = Rendezvous { started: Default::default(), worker: Default::default(), met: AtomicU32::new(0) };
    executor.run_block(&plan, &work);
    assert_eq!(work.met.load(Ordering::Relaxed), 2, "the two items never overlapped");
    assert_ne!(work.worker[0].load(Ordering::Relaxed), work.worker[1].load(Ordering::Relaxed));
}

#[test]
fn every_order_constraint_holds_on_every_block_with_two_threads() {
    order_holds_over_random_trees(2, 400, 8);
}

#[test]
fn every_order_constraint_holds_on_one_thread() {
    order_holds_over_random_trees(1, 200, 5);
}

#[test]
fn activation_counts_are_reset_every_block() {
    // A chain and a join: if counts were not reset, the second block would
    // find them at zero and run nothing after the first item (or underflow).
    let tree = Tree {
        root: TreeNode::Seq(vec![
            TreeNode::Par((0..6).map(|i| TreeNode::Item(ItemId(i))).collect()),
            TreeNode::Par((6..12).map(|i| TreeNode::Item(ItemId(i))).collect()),
            TreeNode::Item(ItemId(12)),
        ]),
        satellites: vec![],
    };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let recorder = Recorder::new(13);
    let mut executor = pool(2);
    let cons = constraints(&tree);
    let expected = expected_ids(&tree);
    for _ in 0..500 {
        recorder.clear();
        executor.run_block(&plan, &recorder);
        recorder.check(&expected, &cons).unwrap();
    }
}

/// Deterministic bus output per leaf, with magnitudes far apart so that the
/// order of additions shows in the result bits.
fn contribution(id: u32, block: u32, bus: u32, out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        let h = (id.wrapping_mul(2654435761) ^ block.wrapping_mul(40503) ^ (bus * 977 + i as u32)).wrapping_mul(2246822519);
        let exp = (h >> 28) as i32 - 8;
        *o = ((h & 0xffff) as f32 / 65536.0 - 0.5) * 10f32.powi(exp);
    }
}

const BUSES: u32 = 3;
const LEN: usize = 8;

fn buses_of(id: u32) -> impl Iterator<Item = u32> {
    (0..BUSES).filter(move |b| (id + b) % 2 == 0 || *b == 0)
}

/// Reference: depth-first, in tree order, adding straight into the buses.
fn sequential(node: &TreeNode, block: u32, bus: &mut [[f32; LEN]]) {
    match node {
        TreeNode::Item(id) => {
            for b in buses_of(id.0) {
                let mut c = [0.0; LEN];
                contribution(id.0, block, b, &mut c);
                for (x, y) in bus[b as usize].iter_mut().zip(c) {
                    *x += y;
                }
            }
        }
        TreeNode::Seq(c) | TreeNode::Par(c) => c.iter().for_each(|c| sequential(c, block, bus)),
    }
}

enum Role {
    /// A synth; writes into this slot, or straight into the bus outside
    /// any parallel group.
    Leaf(Option<usize>),
    /// The merge item after a parallel group.
    Merge { slots: std::ops::Range<usize>, into: Option<usize> },
}

/// Rewrites `Par[..]` as `Seq[Par[..], Item(merge)]` and assigns slots.
fn with_merges(node: &TreeNode, slot: Option<usize>, roles: &mut Vec<Role>, slots: &mut usize, ids: &mut u32) -> TreeNode {
    match node {
        TreeNode::Item(id) => {
            if roles.len() <= id.0 as usize {
                roles.resize_with(id.0 as usize + 1, || Role::Leaf(None));
            }
            roles[id.0 as usize] = Role::Leaf(slot);
            node.clone()
        }
        TreeNode::Seq(c) => TreeNode::Seq(c.iter().map(|c| with_merges(c, slot, roles, slots, ids)).collect()),
        TreeNode::Par(c) => {
            let base = *slots;
            *slots += c.len();
            let children = c.iter().enumerate().map(|(k, c)| with_merges(c, Some(base + k), roles, slots, ids)).collect();
            let merge = *ids;
            *ids += 1;
            if roles.len() <= merge as usize {
                roles.resize_with(merge as usize + 1, || Role::Leaf(None));
            }
            roles[merge as usize] = Role::Merge { slots: base..base + c.len(), into: slot };
            TreeNode::Seq(vec![TreeNode::Par(children), TreeNode::Item(ItemId(merge))])
        }
    }
}

struct Mixer {
    roles: Vec<Role>,
    merge: MergeBuffers,
    bus: Vec<[AtomicU32; LEN]>,
    block: u32,
}

impl Mixer {
    fn add_to_bus(&self, b: u32, samples: &[f32]) {
        // Plain load + store: the plan orders every writer of a bus.
        for (x, s) in self.bus[b as usize].iter().zip(samples) {
            x.store((f32::from_bits(x.load(Ordering::Relaxed)) + s).to_bits(), Ordering::Relaxed);
        }
    }
}

impl Work for Mixer {
    fn run(&self, item: ItemId, _worker: usize) {
        match &self.roles[item.0 as usize] {
            Role::Leaf(slot) => {
                for b in buses_of(item.0) {
                    let mut c = [0.0; LEN];
                    contribution(item.0, self.block, b, &mut c);
                    match slot {
                        Some(s) => self.merge.writer(*s).unwrap().add(b, &c).unwrap(),
                        None => self.add_to_bus(b, &c),
                    }
                }
            }
            Role::Merge { slots, into: Some(into) } => self.merge.forward(slots.clone(), *into).unwrap(),
            Role::Merge { slots, into: None } => self.merge.replay(slots.clone(), |b, s| self.add_to_bus(b, s)).unwrap(),
        }
    }
}

#[test]
fn parallel_sums_equal_sequential_sums_bit_for_bit() {
    let mut rng = Rng::new(42);
    let mut executor = pool(2);
    let mut plan = Plan::new();
    for t in 0..150 {
        let (tree, ids) = random_tree(&mut rng, 120, false);
        let (mut roles, mut slots, mut next) = (Vec::new(), 0, ids);
        let rewritten = Tree { root: with_merges(&tree.root, None, &mut roles, &mut slots, &mut next), satellites: vec![] };
        plan.compile_into(&rewritten).unwrap();
        let mut mixer = Mixer {
            roles,
            merge: MergeBuffers::new(slots, 256, 256 * LEN, slots),
            bus: (0..BUSES).map(|_| std::array::from_fn(|_| AtomicU32::new(0))).collect(),
            block: 0,
        };
        for block in 0..6 {
            mixer.block = block;
            for bus in &mixer.bus {
                bus.iter().for_each(|x| x.store(0f32.to_bits(), Ordering::Relaxed));
            }
            executor.run_block(&plan, &mixer);
            let mut reference = vec![[0.0f32; LEN]; BUSES as usize];
            sequential(&tree.root, block, &mut reference);
            for (b, (got, want)) in mixer.bus.iter().zip(&reference).enumerate() {
                let got: Vec<u32> = got.iter().map(|x| x.load(Ordering::Relaxed)).collect();
                let want: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
                assert_eq!(got, want, "tree {t} block {block} bus {b}: {tree:?}");
            }
        }
    }
}
