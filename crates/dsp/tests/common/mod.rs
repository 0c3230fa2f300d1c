//! Random trees and an order-recording work item, shared by the tests.
#![allow(dead_code)]

use magnetar_dsp::executor::Work;
use magnetar_dsp::queue::{ItemId, Satellite, Side, Tree, TreeNode};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// xorshift64*: small, seedable, good enough to shape trees.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random tree over ids `0..` (returned count), nesting up to `depth`.
pub fn random_node(rng: &mut Rng, depth: u32, next_id: &mut u32, budget: u32) -> TreeNode {
    let kind = if depth == 0 || *next_id >= budget { 0 } else { rng.below(4) };
    match kind {
        0 | 1 => {
            let id = *next_id;
            *next_id += 1;
            TreeNode::Item(ItemId(id))
        }
        k => {
            let n = rng.below(6) as usize;
            let children = (0..n).map(|_| random_node(rng, depth - 1, next_id, budget)).collect();
            if k == 2 {
                TreeNode::Seq(children)
            } else {
                TreeNode::Par(children)
            }
        }
    }
}

pub fn leaves(node: &TreeNode, out: &mut Vec<u32>) {
    match node {
        TreeNode::Item(id) => out.push(id.0),
        TreeNode::Seq(c) | TreeNode::Par(c) => c.iter().for_each(|c| leaves(c, out)),
    }
}

/// A random tree with satellites (some of them on satellites) and the
/// number of ids it uses.
pub fn random_tree(rng: &mut Rng, budget: u32, with_satellites: bool) -> (Tree, u32) {
    let mut next = 0;
    let root = TreeNode::Seq((0..1 + rng.below(4)).map(|_| random_node(rng, 4, &mut next, budget)).collect());
    let mut satellites = Vec::new();
    if with_satellites && next > 0 {
        let mut refs = Vec::new();
        leaves(&root, &mut refs);
        for _ in 0..rng.below(6) {
            let reference = refs[rng.below(refs.len() as u64) as usize];
            let side = if rng.below(2) == 0 { Side::Before } else { Side::After };
            let item = next;
            next += 1;
            satellites.push(Satellite { item: ItemId(item), reference: ItemId(reference), side });
            refs.push(item);
        }
    }
    (Tree { root, satellites }, next)
}

/// Every order the tree's semantics require, as (earlier, later) groups of
/// ids: all of `earlier` must end before any of `later` starts.
pub fn constraints(tree: &Tree) -> Vec<(Vec<u32>, Vec<u32>)> {
    fn walk(node: &TreeNode, out: &mut Vec<(Vec<u32>, Vec<u32>)>) {
        match node {
            TreeNode::Item(_) => {}
            TreeNode::Seq(children) => {
                for pair in children.windows(2) {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    leaves(&pair[0], &mut a);
                    leaves(&pair[1], &mut b);
                    out.push((a, b));
                }
                children.iter().for_each(|c| walk(c, out));
            }
            TreeNode::Par(children) => children.iter().for_each(|c| walk(c, out)),
        }
    }
    let mut out = Vec::new();
    walk(&tree.root, &mut out);
    for s in &tree.satellites {
        match s.side {
            Side::Before => out.push((vec![s.item.0], vec![s.reference.0])),
            Side::After => out.push((vec![s.reference.0], vec![s.item.0])),
        }
    }
    out
}

/// Records, per id, a global start and end tick and how often it ran.
pub struct Recorder {
    clock: AtomicU64,
    pub start: Vec<AtomicU64>,
    pub end: Vec<AtomicU64>,
    pub runs: Vec<AtomicU32>,
    pub by_worker: Vec<AtomicU64>,
}

impl Recorder {
    pub fn new(ids: usize) -> Self {
        Self {
            clock: AtomicU64::new(1),
            start: (0..ids).map(|_| AtomicU64::new(0)).collect(),
            end: (0..ids).map(|_| AtomicU64::new(0)).collect(),
            runs: (0..ids).map(|_| AtomicU32::new(0)).collect(),
            by_worker: (0..8).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub fn clear(&self) {
        for v in self.start.iter().chain(&self.end) {
            v.store(0, Ordering::Relaxed);
        }
        for r in &self.runs {
            r.store(0, Ordering::Relaxed);
        }
    }

    /// Checks one block: every id in `expected` ran once, others never, and
    /// every constraint held. Returns a description of the first violation.
    pub fn check(&self, expected: &[u32], constraints: &[(Vec<u32>, Vec<u32>)]) -> Result<(), String> {
        let mut want = vec![0u32; self.runs.len()];
        for &id in expected {
            want[id as usize] += 1;
        }
        for (id, (r, w)) in self.runs.iter().zip(&want).enumerate() {
            let r = r.load(Ordering::Relaxed);
            if r != *w {
                return Err(format!("item {id} ran {r} times, expected {w}"));
            }
        }
        for (before, after) in constraints {
            let last_end = before.iter().map(|&i| self.end[i as usize].load(Ordering::Relaxed)).max();
            let first_start = after.iter().map(|&i| self.start[i as usize].load(Ordering::Relaxed)).min();
            if let (Some(e), Some(s)) = (last_end, first_start) {
                if e >= s {
                    return Err(format!("{before:?} must end before {after:?} starts ({e} >= {s})"));
                }
            }
        }
        Ok(())
    }
}

impl Work for Recorder {
    fn run(&self, item: ItemId, worker: usize) {
        let i = item.0 as usize;
        self.start[i].store(self.clock.fetch_add(1, Ordering::SeqCst), Ordering::Relaxed);
        // A little work, so that items overlap when they may.
        let mut x = item.0 as u64 + 1;
        for _ in 0..(x % 7) * 20 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        self.runs[i].fetch_add(1, Ordering::Relaxed);
        self.by_worker[worker.min(7)].fetch_add(1, Ordering::Relaxed);
        self.end[i].store(self.clock.fetch_add(1, Ordering::SeqCst), Ordering::Relaxed);
    }
}

/// Ids that must run: tree leaves, plus satellites whose reference runs.
pub fn expected_ids(tree: &Tree) -> Vec<u32> {
    let mut ids = Vec::new();
    leaves(&tree.root, &mut ids);
    loop {
        let before = ids.len();
        for s in &tree.satellites {
            if ids.contains(&s.reference.0) && !ids.contains(&s.item.0) {
                ids.push(s.item.0);
            }
        }
        if ids.len() == before {
            return ids;
        }
    }
}
