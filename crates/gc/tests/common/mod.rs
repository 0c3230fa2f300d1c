//! Helpers both collectors' behaviour tests use: a small heap, blocks run
//! like audio periods, raw word access, a deterministic generator, and a
//! random object graph mutated while the collector runs.

#![allow(dead_code)]

use magnetar_gc::{Collector, GcConfig, WORD};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

pub const POISON: u64 = 0xDEAD_BEEF_DEAD_BEEF;
pub const MAGIC: usize = 0x5AFE_C0DE_0000_0000;
pub const BUDGET: Duration = Duration::from_millis(3);

/// A 1 MB pointer heap and 1 MB atomic heap, full snapshots every 40 ms,
/// freed memory poisoned.
pub fn small_heap() -> GcConfig {
    GcConfig {
        pointer_heap_bytes: 1 << 20,
        atomic_heap_bytes: 1 << 20,
        root_slots: 64,
        snapshot_bandwidth: Some(2e9),
        full_snapshot_period: Duration::from_millis(40),
        full_snapshot_window: Duration::from_millis(40),
        poison: Some(POISON),
        ..GcConfig::default()
    }
}

/// Run blocks (with a short pause, like an audio period) until `done` or a timeout.
pub fn run_blocks_until(gc: &mut Collector, mut done: impl FnMut(&mut Collector) -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        gc.between_blocks(BUDGET);
        if done(gc) {
            return true;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    false
}

pub fn word(addr: usize, k: usize) -> usize {
    // SAFETY: callers pass addresses of blocks they allocated with at least k+1 words, inside
    // the collector's heap, which lives as long as the collector.
    unsafe { ((addr as *const usize).add(k)).read() }
}

/// A non-pointer store (needs no barrier in either collector).
pub fn set_word(addr: usize, k: usize, v: usize) {
    // SAFETY: as in `word`, and the block is reachable (so not being zeroed by the collector).
    unsafe { ((addr as *mut usize).add(k)).write(v) }
}

/// xorshift: the same object graphs on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.next() % n
    }
}

/// Object layout in the random-graph tests: [canary, id, atomic buffer ptr, child slots...].
pub const HEADER: usize = 3;

/// Writes pointer slot `k` of the block at `addr`: a plain store for the snapshot collector,
/// through the write barrier for the replicating one.
pub type PtrStore = fn(&mut Collector, usize, usize, usize);

struct Obj {
    addr: usize,
    words: usize,
    /// Child slot -> (child id, byte offset into the child the stored pointer has).
    children: Vec<Option<(u64, usize)>>,
    /// The object's atomic buffer, if it has one.
    buffer: Option<usize>,
}

/// A random object graph the test mutates while the collector runs, with a model of it that
/// says which objects are reachable.
pub struct RandomGraph {
    objs: HashMap<u64, Obj>,
    roots: Vec<Option<(u64, usize)>>,
    next_id: u64,
    /// Objects reachable at the last check, plus those allocated since.
    live: Vec<u64>,
    /// (address, id) of every block that became unreachable: each must end up freed.
    dead: Vec<(usize, u64)>,
}

impl RandomGraph {
    pub fn new(root_slots: usize) -> RandomGraph {
        RandomGraph { objs: HashMap::new(), roots: vec![None; root_slots], next_id: 1, live: Vec::new(), dead: Vec::new() }
    }

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

    fn pick(&self, rng: &mut Rng) -> Option<u64> {
        (!self.live.is_empty()).then(|| self.live[rng.below(self.live.len())])
    }

    /// One block's worth of random mutations: allocations (some with an atomic buffer) linked
    /// from a root or an object by a start or interior pointer, dropped roots and child slots,
    /// and links between objects (sharing and cycles).
    pub fn mutate(&mut self, gc: &mut Collector, rng: &mut Rng, store: PtrStore) {
        for _ in 0..24 {
            match rng.below(10) {
                0..=3 => {
                    let words = HEADER + 1 + rng.below(8);
                    let Some(p) = gc.alloc(words * WORD) else { continue };
                    let addr = p.as_ptr() as usize;
                    let id = self.next_id;
                    self.next_id += 1;
                    let fresh = word(addr, words - 1);
                    assert!(fresh == 0 || fresh == POISON as usize, "fresh memory holds no stale data");
                    set_word(addr, 0, MAGIC ^ id as usize);
                    set_word(addr, 1, id as usize);
                    let mut buffer = None;
                    if rng.below(4) == 0 {
                        if let Some(b) = gc.alloc_atomic(64 + rng.below(200)) {
                            let b = b.as_ptr() as usize;
                            set_word(b, 0, MAGIC ^ id as usize);
                            // A heap pointer inside atomic memory must not keep anything alive
                            // (atomic memory is never scanned, so a plain store is enough).
                            set_word(b, 1, addr);
                            store(gc, addr, 2, b);
                            buffer = Some(b);
                        }
                    }
                    self.objs.insert(id, Obj { addr, words, children: vec![None; words - HEADER], buffer });
                    // Store a start or an interior pointer to the new object.
                    let off = if rng.below(3) == 0 { WORD * rng.below(words) } else { 0 };
                    if rng.below(2) == 0 || self.live.is_empty() {
                        let r = rng.below(self.roots.len());
                        self.roots[r] = Some((id, off));
                        gc.roots_mut()[r] = (addr + off) as *mut u8;
                    } else {
                        let parent = self.pick(rng).expect("live is not empty");
                        let po = self.objs.get_mut(&parent).unwrap();
                        let slot = rng.below(po.children.len());
                        po.children[slot] = Some((id, off));
                        let paddr = po.addr;
                        store(gc, paddr, HEADER + slot, addr + off);
                    }
                    self.live.push(id);
                }
                // drop a root
                4..=5 => {
                    let r = rng.below(self.roots.len());
                    self.roots[r] = None;
                    gc.roots_mut()[r] = std::ptr::null_mut();
                }
                // clear a child slot (overwriting a pointer is a pointer store too)
                6..=7 => {
                    if let Some(p) = self.pick(rng) {
                        let po = self.objs.get_mut(&p).unwrap();
                        let slot = rng.below(po.children.len());
                        po.children[slot] = None;
                        let paddr = po.addr;
                        store(gc, paddr, HEADER + slot, 0);
                    }
                }
                // link two objects (creates sharing and cycles)
                _ => {
                    if let (Some(a), Some(b)) = (self.pick(rng), self.pick(rng)) {
                        let (baddr, bwords) = (self.objs[&b].addr, self.objs[&b].words);
                        let off = WORD * rng.below(bwords);
                        let ao = self.objs.get_mut(&a).unwrap();
                        let slot = rng.below(ao.children.len());
                        ao.children[slot] = Some((b, off));
                        let aaddr = ao.addr;
                        store(gc, aaddr, HEADER + slot, baddr + off);
                    }
                }
            }
        }
    }

    /// After a block: every reachable object (and its atomic buffer) is intact; unreachable
    /// ones are forgotten, to be checked as freed by `quiesce_and_check`.
    pub fn check_block(&mut self) {
        let reach = self.reachable();
        for id in &reach {
            let o = &self.objs[id];
            assert_eq!(word(o.addr, 0), MAGIC ^ *id as usize, "reachable object {id} was freed or overwritten");
            assert_eq!(word(o.addr, 1), *id as usize);
            if let Some(b) = o.buffer {
                assert_eq!(word(b, 0), MAGIC ^ *id as usize, "atomic buffer of reachable object {id} was freed");
            }
        }
        let dead = &mut self.dead;
        self.objs.retain(|id, o| {
            if !reach.contains(id) {
                dead.push((o.addr, *id));
                if let Some(b) = o.buffer {
                    dead.push((b, *id));
                }
            }
            reach.contains(id)
        });
        self.live = reach.into_iter().collect();
        self.live.sort_unstable();
    }

    pub fn dead_blocks(&self) -> usize {
        self.dead.len()
    }

    /// Stops mutating and lets the collector catch up: every unreachable block is freed
    /// within a few cycles, every reachable one survives, and the collector's live byte count
    /// is exactly the reachable objects'.
    pub fn quiesce_and_check(&self, gc: &mut Collector) {
        let c0 = gc.stats().cycles;
        assert!(run_blocks_until(gc, |gc| gc.stats().cycles >= c0 + 4));
        for _ in 0..20 {
            gc.between_blocks(BUDGET);
            std::thread::sleep(Duration::from_millis(1));
        }
        let still_there = self.dead.iter().filter(|&&(a, id)| word(a, 0) == MAGIC ^ id as usize).count();
        assert_eq!(still_there, 0, "{still_there} of {} unreachable blocks were not freed", self.dead.len());
        for (id, o) in &self.objs {
            assert_eq!(word(o.addr, 0), MAGIC ^ *id as usize, "reachable object {id} survived quiescence");
        }
        let s = gc.stats();
        let expect_ptr: usize = self.objs.values().map(|o| o.words * WORD).sum();
        assert_eq!(s.pointer_live_bytes, expect_ptr, "live bytes equal the reachable objects");
        assert_eq!(s.alloc_failures, 0);
    }
}
