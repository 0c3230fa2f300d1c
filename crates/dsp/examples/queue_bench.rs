//! Queue build time for the Supernova thesis's Listing 5.2 graph, and the
//! executor's overhead per block for 256 tiny items on 1 and 2 threads.
//!
//! ```text
//! cargo run -p magnetar-dsp --release --example queue_bench -- [blocks]
//! NO_RT=1 cargo run ...   # without pinning and SCHED_FIFO
//! ```
//!
//! The thesis reports 4 µs mean and 13 µs worst case for building the queue
//! of Listing 5.2 while its synths are added one by one (§5.3.3).

use magnetar_dsp::executor::{Executor, ExecutorConfig, Work};
use magnetar_dsp::queue::{ItemId, Plan, Tree, TreeNode};
use magnetar_rt::histogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Listing 5.2 after `n` of its 42 synths were created (in the listing's order:
/// 32 small into section 1's head, 4 big into its tail, 4 small into section
/// 2's head, 2 big into its tail).
fn listing_5_2(n: u32) -> Tree {
    let counts = [32u32, 4, 4, 2];
    let mut next = 0;
    let mut left = n;
    let mut groups = counts.iter().map(|&c| {
        let k = c.min(left);
        left -= k;
        let items: Vec<TreeNode> = (0..k).map(|_| {
            next += 1;
            TreeNode::Item(ItemId(next - 1))
        }).collect();
        items
    });
    let (s1h, s1t, s2h, s2t) = (groups.next().unwrap(), groups.next().unwrap(), groups.next().unwrap(), groups.next().unwrap());
    let section1 = TreeNode::Seq(vec![TreeNode::Par(s1h), TreeNode::Par(s1t)]);
    let section2 = TreeNode::Seq(vec![TreeNode::Seq(s2h), TreeNode::Seq(s2t)]);
    // Both sections were added at the root ParGroup's head: section 2 first.
    Tree { root: TreeNode::Par(vec![section2, section1]), satellites: vec![] }
}

fn queue_build(rounds: u32) {
    let layouts: Vec<Tree> = (1..=42).map(listing_5_2).collect();
    let mut plan = Plan::with_capacity(64, 256);
    let mut h = Histogram::new();
    for tree in &layouts {
        plan.compile_into(tree).unwrap(); // warm-up
    }
    for _ in 0..rounds {
        for tree in &layouts {
            let t = Instant::now();
            plan.compile_into(tree).unwrap();
            h.record_duration(t.elapsed());
        }
    }
    let full = layouts.last().unwrap();
    plan.compile_into(full).unwrap();
    println!(
        "queue build, Listing 5.2 (all 42 layouts, {} builds): {}",
        h.count(),
        h.summary_micros()
    );
    println!(
        "  full graph: {} queue items, {} edges, {} barrier(s)",
        plan.len(),
        plan.edge_count(),
        plan.barrier_count()
    );
}

/// Counts items per worker; one counter per cache line so that counting
/// adds no contention of its own.
struct Tiny([crossbeam_utils::CachePadded<AtomicU64>; 4]);

impl Work for Tiny {
    fn run(&self, item: ItemId, worker: usize) {
        // A few ns of work, so the measurement is the scheduling.
        std::hint::black_box(item);
        self.0[worker.min(3)].fetch_add(1, Ordering::Relaxed);
    }
}

fn executor_overhead(threads: usize, blocks: u32, gap: Option<Duration>) {
    let tree = Tree { root: TreeNode::Par((0..256).map(|i| TreeNode::Item(ItemId(i))).collect()), satellites: vec![] };
    let mut plan = Plan::new();
    plan.compile_into(&tree).unwrap();
    let rt = std::env::var_os("NO_RT").is_none();
    let config = ExecutorConfig { threads, pin: rt, fifo_priority: rt.then_some(70), ..Default::default() };
    let mut executor = Executor::new(config).unwrap();
    for setup in executor.helper_setups() {
        for w in &setup.warnings {
            eprintln!("warning: {w}");
        }
    }
    let caller = executor.prepare_caller();
    let fifo = caller.fifo && executor.helper_setups().iter().all(|s| s.fifo);
    let work = Tiny(Default::default());
    let mut h = Histogram::new();
    for _ in 0..200 {
        executor.run_block(&plan, &work);
    }
    for _ in 0..blocks {
        if let Some(gap) = gap {
            std::thread::sleep(gap);
        }
        let t = Instant::now();
        executor.run_block(&plan, &work);
        h.record_duration(t.elapsed());
    }
    let total: u64 = work.0.iter().map(|c| c.load(Ordering::Relaxed)).sum();
    let helpers = total - work.0[0].load(Ordering::Relaxed);
    let gap = gap.map_or("back to back".to_string(), |g| format!("{} µs apart", g.as_micros()));
    println!(
        "256 tiny items, {threads} thread(s), {gap} (fifo: {fifo}, helpers ran {:.1}% of items): per block {}",
        100.0 * helpers as f64 / total as f64,
        h.summary_micros()
    );
}

fn main() {
    let blocks: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    queue_build(500);
    executor_overhead(1, blocks, None);
    executor_overhead(2, blocks, None);
    executor_overhead(2, 500, Some(Duration::from_micros(1333)));
}
