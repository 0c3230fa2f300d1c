//! Behaviour of the collector as a program using it sees it: what stays alive, what is
//! freed, and that the audio-side calls never fail unexpectedly while collection runs.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use magnetar_gc::{Collector, CollectorMode, GcConfig, SnapshotKind, WORD, WARN_ALLOCATION_FAILED, WARN_SAFETY_BUFFER};

mod common;
use common::{run_blocks_until, set_word, small_heap, word, Rng, BUDGET, MAGIC, POISON};

fn config() -> GcConfig {
    small_heap()
}

/// Object layout: [canary, id, atomic buffer ptr, child slots...].
const HEADER: usize = 3;

struct Obj {
    addr: usize,
    words: usize,
    /// Child slot -> (child id, byte offset into the child the stored pointer has).
    children: Vec<Option<(u64, usize)>>,
    buffer: Option<(usize, usize)>,
}

struct Model {
    objs: HashMap<u64, Obj>,
    roots: Vec<Option<(u64, usize)>>,
    next_id: u64,
}

impl Model {
    fn reachable(&self) -> HashSet<u64> {
        let mut seen = HashSet::new();
        let mut stack: Vec<u64> = self.roots.iter().flatten().map(|r| r.0).collect();
        while let Some(id) = stack.pop() {
            if seen.insert(id) {
                stack.extend(self.objs[&id].children.iter().flatten().map(|c| c.0));
            }
        }
        seen
    }

    fn pick_reachable(&self, rng: &mut Rng, live: &[u64]) -> Option<u64> {
        (!live.is_empty()).then(|| live[rng.below(live.len())])
    }
}

#[test]
fn random_graph_mutated_during_collection_never_loses_a_reachable_object() {
    let mut gc = Collector::new(config()).unwrap();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut m = Model { objs: HashMap::new(), roots: vec![None; 64], next_id: 1 };
    let mut dead: Vec<(usize, u64)> = Vec::new();
    let mut live: Vec<u64> = Vec::new();
    let mut snapshots = [0usize; 4];
    let start = Instant::now();
    let mut blocks = 0;
    while start.elapsed() < Duration::from_millis(2500) {
        for _ in 0..24 {
            match rng.below(10) {
                // allocate a new object, optionally with an atomic buffer, and link it somewhere
                0..=3 => {
                    let words = HEADER + 1 + rng.below(8);
                    let Some(p) = gc.alloc(words * WORD) else { continue };
                    let addr = p.as_ptr() as usize;
                    let id = m.next_id;
                    m.next_id += 1;
                    let fresh = word(addr, words - 1);
                    assert!(fresh == 0 || fresh == POISON as usize, "fresh memory holds no stale data");
                    set_word(addr, 0, MAGIC ^ id as usize);
                    set_word(addr, 1, id as usize);
                    let mut buffer = None;
                    if rng.below(4) == 0 {
                        if let Some(b) = gc.alloc_atomic(64 + rng.below(200)) {
                            let b = b.as_ptr() as usize;
                            set_word(b, 0, MAGIC ^ id as usize);
                            // A heap pointer inside atomic memory must not keep anything alive.
                            set_word(b, 1, addr);
                            set_word(addr, 2, b);
                            buffer = Some((b, id as usize));
                        }
                    }
                    m.objs.insert(id, Obj { addr, words, children: vec![None; words - HEADER], buffer });
                    // Store a start or an interior pointer to the new object.
                    let off = if rng.below(3) == 0 { WORD * rng.below(words) } else { 0 };
                    if rng.below(2) == 0 || live.is_empty() {
                        let r = rng.below(m.roots.len());
                        m.roots[r] = Some((id, off));
                        gc.roots_mut()[r] = (addr + off) as *mut u8;
                    } else {
                        let parent = m.pick_reachable(&mut rng, &live).unwrap();
                        let po = &mut m.objs.get_mut(&parent).unwrap();
                        let slot = rng.below(po.children.len());
                        po.children[slot] = Some((id, off));
                        set_word(po.addr, HEADER + slot, addr + off);
                    }
                    live.push(id);
                }
                // drop a root
                4..=5 => {
                    let r = rng.below(m.roots.len());
                    m.roots[r] = None;
                    gc.roots_mut()[r] = std::ptr::null_mut();
                }
                // drop or overwrite a child slot
                6..=7 => {
                    if let Some(p) = m.pick_reachable(&mut rng, &live) {
                        let po = m.objs.get_mut(&p).unwrap();
                        let slot = rng.below(po.children.len());
                        po.children[slot] = None;
                        set_word(po.addr, HEADER + slot, 0);
                    }
                }
                // link two reachable objects (creates sharing and cycles)
                _ => {
                    if let (Some(a), Some(b)) = (m.pick_reachable(&mut rng, &live), m.pick_reachable(&mut rng, &live)) {
                        let (baddr, bwords) = (m.objs[&b].addr, m.objs[&b].words);
                        let off = WORD * rng.below(bwords);
                        let ao = m.objs.get_mut(&a).unwrap();
                        let slot = rng.below(ao.children.len());
                        ao.children[slot] = Some((b, off));
                        set_word(ao.addr, HEADER + slot, baddr + off);
                    }
                }
            }
        }
        let report = gc.between_blocks(BUDGET);
        snapshots[report.snapshot as usize] += 1;
        blocks += 1;
        // Forget unreachable objects, checking every reachable one is intact.
        let reach = m.reachable();
        for id in &reach {
            let o = &m.objs[id];
            assert_eq!(word(o.addr, 0), MAGIC ^ *id as usize, "reachable object {id} was freed or overwritten");
            assert_eq!(word(o.addr, 1), *id as usize);
            if let Some((b, _)) = o.buffer {
                assert_eq!(word(b, 0), MAGIC ^ *id as usize, "atomic buffer of reachable object {id} was freed");
            }
        }
        m.objs.retain(|id, o| {
            if !reach.contains(id) {
                dead.push((o.addr, *id));
                if let Some((b, _)) = o.buffer {
                    dead.push((b, *id));
                }
            }
            reach.contains(id)
        });
        live = reach.into_iter().collect();
        live.sort_unstable();
        std::thread::sleep(Duration::from_micros(200));
    }
    let s = gc.stats();
    eprintln!("blocks {blocks}, snapshots none/partial/full/failed {snapshots:?}, dead {}, stats {s:#?}", dead.len());
    assert!(s.cycles > 20, "collections ran concurrently: {s:?}");
    assert!(s.full_snapshot.count >= 2, "the worst case was simulated periodically");
    assert!(s.interior_pointers > 0, "interior pointers were exercised");
    assert!(blocks > 100);

    // Quiesce: every unreachable object must be freed within a few cycles.
    let c0 = gc.stats().cycles;
    assert!(run_blocks_until(&mut gc, |gc| gc.stats().cycles >= c0 + 4));
    for _ in 0..20 {
        gc.between_blocks(BUDGET);
        std::thread::sleep(Duration::from_millis(1));
    }
    let still_there = dead.iter().filter(|&&(a, id)| word(a, 0) == MAGIC ^ id as usize).count();
    assert_eq!(still_there, 0, "{still_there} of {} unreachable blocks were not freed", dead.len());
    let s = gc.stats();
    let expect_ptr: usize = m.objs.values().map(|o| o.words * WORD).sum();
    assert_eq!(s.pointer_live_bytes, expect_ptr, "live bytes equal the reachable objects");
    assert_eq!(s.alloc_failures, 0);
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
