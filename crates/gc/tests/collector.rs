//! Behaviour of the collector as a program using it sees it: what stays alive, what is
//! freed, and that the audio-side calls never fail unexpectedly while collection runs.

use std::time::{Duration, Instant};

use magnetar_gc::{Collector, CollectorMode, GcConfig, SnapshotKind, WORD, WARN_ALLOCATION_FAILED, WARN_SAFETY_BUFFER};

mod common;
use common::{run_blocks_until, set_word, small_heap, word, RandomGraph, Rng, BUDGET, MAGIC, POISON};

fn config() -> GcConfig {
    small_heap()
}

#[test]
fn random_graph_mutated_during_collection_never_loses_a_reachable_object() {
    let mut gc = Collector::new(config()).unwrap();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut graph = RandomGraph::new(64);
    let mut snapshots = [0usize; 4];
    let start = Instant::now();
    let mut blocks = 0;
    while start.elapsed() < Duration::from_millis(2500) {
        // The snapshot collector needs no barrier: pointers are plain stores.
        graph.mutate(&mut gc, &mut rng, |_, addr, k, v| set_word(addr, k, v));
        let report = gc.between_blocks(BUDGET);
        snapshots[report.snapshot as usize] += 1;
        blocks += 1;
        graph.check_block();
        std::thread::sleep(Duration::from_micros(200));
    }
    let s = gc.stats();
    eprintln!("blocks {blocks}, snapshots none/partial/full/failed {snapshots:?}, dead {}, stats {s:#?}", graph.dead_blocks());
    assert!(s.cycles > 20, "collections ran concurrently: {s:?}");
    assert!(s.full_snapshot.count >= 2, "the worst case was simulated periodically");
    assert!(s.interior_pointers > 0, "interior pointers were exercised");
    assert!(blocks > 100);
    graph.quiesce_and_check(&mut gc);
}

#[test]
fn interior_pointer_alone_keeps_its_block_alive() {
    let mut gc = Collector::new(config()).unwrap();
    let p = gc.alloc(10 * WORD).unwrap().as_ptr() as usize;
    set_word(p, 0, MAGIC);
    let garbage = gc.alloc(10 * WORD).unwrap().as_ptr() as usize;
    set_word(garbage, 0, MAGIC);
    gc.roots_mut()[3] = (p + 7 * WORD) as *mut u8;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 3 && gc.stats().blocks_freed >= 1));
    assert_eq!(word(p, 0), MAGIC);
    assert_ne!(word(garbage, 0), MAGIC, "the unrooted block was freed");
    assert_eq!(word(garbage, 1), POISON as usize, "freed memory is poisoned");
}

#[test]
fn garbage_is_freed_even_when_nothing_new_is_allocated() {
    let mut gc = Collector::new(config()).unwrap();
    let p = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    gc.roots_mut()[0] = p as *mut u8;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= 2));
    gc.roots_mut()[0] = std::ptr::null_mut();
    // No allocation from here on: the periodic full snapshot still starts collections.
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().pointer_live_bytes == 0));
}

#[test]
fn registered_root_region_keeps_blocks_alive_until_removed() {
    let mut gc = Collector::new(config()).unwrap();
    let mut globals = Box::new([0usize; 8]);
    // SAFETY: `globals` outlives the registration (removed below, dropped after gc).
    let id = unsafe { gc.add_roots(globals.as_ptr() as *const u8, 8 * WORD) }.unwrap();
    let p = gc.alloc(3 * WORD).unwrap().as_ptr() as usize;
    set_word(p, 0, MAGIC);
    globals[5] = p;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 3));
    assert_eq!(word(p, 0), MAGIC);
    gc.remove_roots(id);
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().pointer_live_bytes == 0));
    drop(gc);
    drop(globals);
}

#[test]
fn full_heap_makes_alloc_return_none_and_warns() {
    let mut gc = Collector::new(GcConfig { pointer_heap_bytes: 64 << 10, ..config() }).unwrap();
    let mut n = 0;
    while gc.alloc(1024).is_some() {
        n += 1;
        assert!(n <= 64);
    }
    assert_eq!(n, 64);
    gc.between_blocks(BUDGET);
    let s = gc.stats();
    assert_eq!(s.alloc_failures, 1);
    assert!(s.warnings & WARN_ALLOCATION_FAILED != 0);
    assert!(s.warnings & WARN_SAFETY_BUFFER != 0, "usage above the safe limit is reported");
    // Nothing is rooted: the memory comes back.
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().pointer_live_bytes == 0));
    assert!(gc.alloc(1024).is_some(), "freed blocks are reused");
}

#[test]
fn snapshots_are_never_taken_two_blocks_in_a_row() {
    let mut gc = Collector::new(config()).unwrap();
    let mut prev = SnapshotKind::None;
    for _ in 0..400 {
        let _ = gc.alloc(WORD);
        let r = gc.between_blocks(BUDGET);
        assert!(!(matches!(prev, SnapshotKind::Partial | SnapshotKind::Full) && r.snapshot != SnapshotKind::None));
        prev = r.snapshot;
        std::thread::sleep(Duration::from_micros(100));
    }
}

#[test]
fn a_heap_nobody_allocated_from_costs_nothing_between_blocks_until_it_is_used() {
    for mode in [CollectorMode::Concurrent, CollectorMode::StopTheWorld, CollectorMode::Replicating] {
        // A forced full snapshot is due at once and every 10 ms.
        let config = GcConfig { full_snapshot_period: Duration::from_millis(10), mode, ..config() };
        let mut gc = Collector::new(config).unwrap();
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(50) {
            assert_eq!(gc.between_blocks(BUDGET).snapshot, SnapshotKind::None, "{mode:?}: nothing to collect");
            std::thread::sleep(Duration::from_micros(500));
        }
        assert_eq!(gc.stats().full_snapshot.count, 0, "{mode:?}");
        // The first allocation starts the collector's schedule.
        let _ = gc.alloc(WORD);
        let started = (0..100).any(|_| {
            std::thread::sleep(Duration::from_micros(500));
            gc.between_blocks(BUDGET).snapshot != SnapshotKind::None
        });
        assert!(started, "{mode:?}: a used heap is collected");
    }
}

#[test]
fn too_many_allocations_between_snapshots_fail_instead_of_growing() {
    let mut gc = Collector::new(GcConfig { max_allocations_per_cycle: 100, ..config() }).unwrap();
    let ok = (0..150).filter(|_| gc.alloc(WORD).is_some()).count();
    assert_eq!(ok, 100);
    gc.between_blocks(BUDGET);
    assert!(gc.alloc(WORD).is_some(), "the transport stack is switched at the snapshot");
}

#[test]
fn stop_the_world_mode_frees_garbage_inside_the_call_and_keeps_reachable_blocks() {
    let mut gc = Collector::new(GcConfig { mode: CollectorMode::StopTheWorld, ..config() }).unwrap();
    let kept = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    let child = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    set_word(kept, 2, child);
    set_word(child, 0, MAGIC);
    gc.roots_mut()[0] = kept as *mut u8;
    let garbage = gc.alloc(4 * WORD).unwrap().as_ptr() as usize;
    set_word(garbage, 0, MAGIC);
    // No waiting on other threads: the first call after allocating collects.
    let r = gc.between_blocks(BUDGET);
    assert_eq!(r.snapshot, SnapshotKind::Collected);
    let s = gc.stats();
    assert_eq!((s.cycles, s.blocks_freed, s.live_blocks), (1, 1, 2));
    assert_eq!(word(child, 0), MAGIC, "a block reachable through another stays intact");
    assert_eq!(word(garbage, 0), POISON as usize, "the dead block was poisoned at once");
    assert_eq!(gc.between_blocks(BUDGET).snapshot, SnapshotKind::None, "never two blocks in a row");
}

#[test]
fn claimed_root_slots_are_distinct_and_releasing_one_lets_its_objects_go() {
    let mut gc = Collector::new(GcConfig { root_slots: 3, ..config() }).unwrap();
    let slots: Vec<usize> = std::iter::from_fn(|| gc.claim_root_slot()).collect();
    assert_eq!(slots, vec![2, 1, 0], "every slot once, from the top");
    let p = gc.alloc(2 * WORD).unwrap().as_ptr();
    gc.roots_mut()[slots[0]] = p;
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 2));
    assert_eq!(gc.stats().pointer_live_bytes, 2 * WORD);
    gc.release_root_slot(slots[0]);
    gc.release_root_slot(slots[0]);
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().pointer_live_bytes == 0));
    assert_eq!(gc.claim_root_slot(), Some(slots[0]), "a released slot can be claimed again");
    assert_eq!(gc.claim_root_slot(), None, "a double release did not create a second free slot");
}

#[test]
fn a_collector_asleep_after_a_quiet_spell_is_woken_for_the_next_cycle() {
    let mut gc = Collector::new(config()).unwrap();
    assert!(gc.alloc(4 * WORD).is_some());
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= 1));
    // No block for a while: the collector stops polling and parks.
    std::thread::sleep(Duration::from_millis(200));
    let c0 = gc.stats().cycles;
    assert!(gc.alloc(4 * WORD).is_some());
    assert!(
        run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 2),
        "cycles after the quiet spell: {}",
        gc.stats().cycles - c0
    );
}

#[test]
fn a_configuration_the_collector_cannot_honour_is_refused_with_a_reason() {
    use magnetar_gc::{GcError, MAX_LOG_SEGMENTS};
    let refused = |c: GcConfig| match Collector::new(c) {
        Err(GcError::InvalidConfig(why)) => why,
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("accepted"),
    };
    // A spare-segment ring of absurd size would take the whole address space.
    let why = refused(GcConfig { barrier_log_max_segments: usize::MAX / 2, ..config() });
    assert!(why.contains("barrier_log_max_segments"), "{why}");
    let why = refused(GcConfig { max_frees_per_block: 0, ..config() });
    assert!(why.contains("max_frees_per_block"), "{why}");
    // The largest ring allowed is still accepted.
    let c = GcConfig { barrier_log_max_segments: MAX_LOG_SEGMENTS, mode: CollectorMode::Replicating, ..config() };
    assert!(Collector::new(c).is_ok());
}
