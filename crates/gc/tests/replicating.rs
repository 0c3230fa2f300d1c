//! The second collector (heap replication) as a program using it sees it: pointer stores go
//! through `write_ptr`, the pause copies only the roots, reachable objects survive, garbage is
//! freed, a full barrier log segment is followed by a spare one, and a full log with no spare
//! left falls back to scanning the whole complementary block.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use magnetar_gc::{Collector, CollectorMode, GcConfig, GcStats, SnapshotKind, WORD};

mod common;
use common::{run_blocks_until, set_word, small_heap, word, RandomGraph, Rng, BUDGET, MAGIC, POISON};

fn config(log_entries: usize) -> GcConfig {
    GcConfig { mode: CollectorMode::Replicating, barrier_log_entries: log_entries, ..small_heap() }
}

/// A log of one segment and no spares: overflowing it means a whole-block scan.
fn no_spares(log_entries: usize) -> GcConfig {
    GcConfig { barrier_log_spare_segments: 0, barrier_log_max_segments: 0, ..config(log_entries) }
}

/// A pointer store, through the barrier.
fn set_ptr(gc: &mut Collector, addr: usize, k: usize, v: usize) {
    // SAFETY: as in `set_word`; the slot is word aligned and this thread owns the collector.
    unsafe { gc.write_ptr((addr as *mut *mut u8).add(k), v as *mut u8) }
}

/// A collector with its roots holding one two-word head block, after two
/// cycles (so that the collector has seen the head before the stores below).
fn settled_with_head(config: GcConfig) -> (Collector, usize) {
    let mut gc = Collector::new(config).unwrap();
    let head = gc.alloc(2 * WORD).unwrap().as_ptr() as usize;
    gc.roots_mut()[0] = head as *mut u8;
    settle(&mut gc);
    (gc, head)
}

/// Runs blocks until two more cycles have finished and none is under way.
fn settle(gc: &mut Collector) {
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(gc, |gc| gc.stats().cycles >= c0 + 2 && !gc.is_collecting()));
}

/// Links `n` new blocks into a chain from `head` through the barrier, all
/// within one block; each block's second word holds `MAGIC ^ i`.
fn store_chain(gc: &mut Collector, head: usize, n: usize) -> Vec<usize> {
    let mut prev = head;
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let b = gc.alloc(2 * WORD).unwrap().as_ptr() as usize;
        set_word(b, 1, MAGIC ^ i);
        set_ptr(gc, prev, 0, b);
        nodes.push(b);
        prev = b;
    }
    nodes
}

/// A chain of 100 blocks stored from `head` and one unlinked block, then
/// three collections; returns the chain and the unlinked block.
fn chain_and_garbage_collected(gc: &mut Collector, head: usize) -> (Vec<usize>, usize) {
    let nodes = store_chain(gc, head, 100);
    let garbage = gc.alloc(2 * WORD).unwrap().as_ptr() as usize;
    set_word(garbage, 1, MAGIC);
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(gc, |gc| gc.stats().cycles >= c0 + 3));
    (nodes, garbage)
}

fn assert_chain_alive(nodes: &[usize], label: &str) {
    for (i, &n) in nodes.iter().enumerate() {
        assert_eq!(word(n, 1), MAGIC ^ i, "{label}chain node {i} was freed");
    }
}

/// Mutate a random object graph through the barrier for `millis` while collections run, check
/// every reachable object after every block, then check every unreachable one was freed.
fn stress(config: GcConfig, millis: u64, seed: u64) -> GcStats {
    let mut gc = Collector::new(config).unwrap();
    let mut rng = Rng(seed);
    let mut graph = RandomGraph::new(64);
    let start = Instant::now();
    let mut blocks = 0;
    let mut replicated = 0;
    while start.elapsed() < Duration::from_millis(millis) {
        graph.mutate(&mut gc, &mut rng, set_ptr);
        let report = gc.between_blocks(BUDGET);
        assert!(
            matches!(report.snapshot, SnapshotKind::None | SnapshotKind::Replicated),
            "the heap is never copied between blocks"
        );
        replicated += (report.snapshot == SnapshotKind::Replicated) as usize;
        blocks += 1;
        graph.check_block();
        std::thread::sleep(Duration::from_micros(200));
    }
    assert!(blocks > 50 && replicated > 10, "blocks {blocks}, collections started {replicated}");
    graph.quiesce_and_check(&mut gc);
    let s = gc.stats();
    assert!(s.interior_pointers > 0, "interior pointers were exercised");
    assert_eq!((s.partial_snapshot.count, s.full_snapshot.count), (0, 0), "no heap snapshot was taken");
    s
}

#[test]
fn random_graph_mutated_through_the_barrier_keeps_reachable_and_frees_unreachable_objects() {
    let s = stress(config(1 << 14), 1200, 0x1234_5678_9abc_def1);
    assert_eq!(s.barrier_overflows, 0, "a roomy log never overflows: {s:?}");
    assert!(s.barrier_logged > 100 && s.merge.count >= s.cycles.saturating_sub(1));
}

#[test]
fn random_graph_with_an_overflowing_barrier_log_falls_back_to_the_whole_block() {
    // 8 distinct slots per collection: most collections overflow, some do not.
    let s = stress(no_spares(8), 1200, 0x0bad_cafe_f00d_d00d);
    assert!(s.barrier_overflows > 5, "the fallback ran: {s:?}");
}

#[test]
fn random_graph_outgrowing_one_log_segment_chains_spares_instead_of_scanning_the_block() {
    // 8 distinct slots per segment, as above, but with spare segments to chain.
    let cfg = GcConfig { barrier_log_spare_segments: 32, barrier_log_max_segments: 32, ..config(8) };
    let s = stress(cfg, 1200, 0x0bad_cafe_f00d_d00d);
    assert!(s.barrier_segments_taken > 5, "stores outgrew one segment: {s:?}");
    // Without spares most collections fall back (the test above). With them a collection falls
    // back only if the collector thread is kept from running for so long that the stores of one
    // cycle outgrow all 32 segments, which a busy machine does now and then: at most 1 in 100.
    assert!(
        s.barrier_overflows * 100 <= s.cycles,
        "collections fell back to scanning the whole block only when all spares were used: {s:?}"
    );
}

#[test]
fn many_stores_in_one_cycle_fill_several_segments_without_a_fallback() {
    let (mut gc, head) = settled_with_head(GcConfig { barrier_log_spare_segments: 8, ..config(16) });
    // 100 distinct pointer slots written within one block: six segments and a bit.
    let (nodes, garbage) = chain_and_garbage_collected(&mut gc, head);
    let s = gc.stats();
    assert_eq!(s.barrier_overflows, 0, "spare segments absorbed the stores: {s:?}");
    assert!(s.barrier_segments_taken >= 6, "100 slots need at least six more 16-entry segments: {s:?}");
    assert!(s.barrier_logged >= 100, "every store was logged: {s:?}");
    assert_chain_alive(&nodes, "");
    assert_ne!(word(garbage, 1), MAGIC, "the unlinked block was freed");
}

#[test]
fn running_out_of_spares_falls_back_until_the_collector_has_reserved_enough() {
    let (mut gc, head) =
        settled_with_head(GcConfig { barrier_log_spare_segments: 1, barrier_log_max_segments: 16, ..config(16) });
    let mut last_round_fallbacks = 0;
    for round in 0..5 {
        let before = gc.stats().barrier_overflows;
        // Each round rewrites 100 distinct slots within one block.
        settle(&mut gc);
        let nodes = store_chain(&mut gc, head, 100);
        let c0 = gc.stats().cycles;
        assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 2), "round {round}");
        assert_chain_alive(&nodes, &format!("round {round}: "));
        last_round_fallbacks = gc.stats().barrier_overflows - before;
    }
    let s = gc.stats();
    assert!(s.barrier_overflows >= 1, "one spare was not enough at first: {s:?}");
    assert_eq!(last_round_fallbacks, 0, "by the last round there were enough spares: {s:?}");
    assert!(s.barrier_spare_segments >= 6, "the collector reserved more spares: {s:?}");
}

#[test]
fn objects_reachable_only_through_overflowed_stores_survive() {
    // The collector sees the head first, so the chain below reaches it only via stores.
    let (mut gc, head) = settled_with_head(no_spares(4));
    let (nodes, garbage) = chain_and_garbage_collected(&mut gc, head);
    let s = gc.stats();
    assert!(s.barrier_overflows >= 1, "100 stores overflowed a 4-entry log");
    assert_chain_alive(&nodes, "");
    assert_ne!(word(garbage, 1), MAGIC, "the unlinked block was freed");
}

#[test]
fn between_blocks_copies_only_the_roots_whatever_the_heap_holds() {
    let mut gc = Collector::new(GcConfig { pointer_heap_bytes: 8 << 20, ..config(1 << 14) }).unwrap();
    // Fill most of the heap with live objects in a chain.
    let mut head = 0usize;
    for _ in 0..(6 << 20) / (64 * WORD) {
        let n = gc.alloc(64 * WORD).unwrap().as_ptr() as usize;
        set_ptr(&mut gc, n, 0, head);
        head = n;
    }
    gc.roots_mut()[0] = head as *mut u8;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 3));
    let mut pauses = Vec::new();
    for _ in 0..51 {
        let _ = gc.alloc(WORD);
        pauses.push(gc.between_blocks(BUDGET).blocked);
        std::thread::sleep(Duration::from_micros(300));
    }
    pauses.sort();
    let s = gc.stats();
    assert_eq!((s.partial_snapshot.count, s.full_snapshot.count), (0, 0));
    assert!(s.pointer_live_bytes >= 6 << 20, "the chain stayed alive");
    // Copying 6 MB takes a millisecond or more; the roots (64 words) take microseconds.
    assert!(pauses[25] < Duration::from_micros(200), "median pause {:?} does not grow with the heap", pauses[25]);
}

#[test]
fn freed_block_reused_does_not_keep_its_old_targets_alive() {
    let mut gc = Collector::new(config(1 << 14)).unwrap();
    let a = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    let b = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    set_word(b, 1, MAGIC);
    set_ptr(&mut gc, a, 0, b);
    set_ptr(&mut gc, b, 0, a);
    gc.roots_mut()[0] = a as *mut u8;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 2));
    assert_eq!(word(b, 1), MAGIC);
    // Drop the pair; once their memory is reused, the pointers they held must not come back.
    gc.roots_mut()[0] = std::ptr::null_mut();
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().pointer_live_bytes == 0));
    let kept = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    let other = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    assert_eq!(HashSet::from([kept, other]), HashSet::from([a, b]), "the same memory was reused");
    assert_eq!(word(kept, 0), POISON as usize, "reused memory was poisoned");
    gc.roots_mut()[0] = kept as *mut u8;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 3 && gc.stats().pointer_live_bytes == 4 * WORD),
        "only the rooted block stays live: {:?}", gc.stats());
}

#[test]
fn barrier_on_roots_and_atomic_memory_is_a_plain_store() {
    let mut gc = Collector::new(config(2)).unwrap();
    let p = gc.alloc(WORD).unwrap().as_ptr();
    let buf = gc.alloc_atomic(4 * WORD).unwrap().as_ptr() as usize;
    let slot = &mut gc.roots_mut()[5] as *mut *mut u8;
    // SAFETY: the root slot and the atomic block are valid, aligned and owned by this thread.
    unsafe {
        gc.write_ptr(slot, p);
        gc.write_ptr((buf as *mut *mut u8).add(1), p);
    }
    assert_eq!(gc.roots()[5], p);
    assert_eq!(word(buf, 1), p as usize);
    gc.between_blocks(BUDGET);
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles > c0));
    let s = gc.stats();
    assert_eq!((s.barrier_logged, s.barrier_overflows), (0, 0), "nothing outside the pointer heap was logged");
}

#[test]
fn barrier_is_a_plain_store_in_the_other_modes() {
    let mut gc = Collector::new(GcConfig { mode: CollectorMode::Concurrent, ..config(1) }).unwrap();
    let a = gc.alloc(2 * WORD).unwrap().as_ptr() as usize;
    let b = gc.alloc(2 * WORD).unwrap().as_ptr() as usize;
    set_word(b, 1, MAGIC);
    set_ptr(&mut gc, a, 0, b);
    gc.roots_mut()[0] = a as *mut u8;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 3));
    assert_eq!(word(a, 0), b);
    assert_eq!(word(b, 1), MAGIC);
    assert_eq!(gc.stats().barrier_logged, 0);
}
