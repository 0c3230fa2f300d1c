//! The collector's private block table and the conservative mark and sweep over a snapshot.
//!
//! Nothing here is shared with the audio thread: the table is fed from allocation records,
//! marks by reading the snapshot (never the live heap) and reports dead blocks to a callback.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::config::WORD;

const NIL: u32 = u32::MAX;

/// One allocation the collector knows of (`meminfo` in the thesis).
struct MemInfo {
    start: usize,
    end: usize,
    marked: bool,
    /// Atomic blocks are kept alive by pointers but never scanned.
    atomic: bool,
    /// Head of this block's list of interior addresses cached in the lookup table.
    interiors: u32,
}

/// What a looked-up address resolved to.
#[derive(Clone, Copy)]
enum Entry {
    Start(u32),
    Interior(u32),
    /// Points into a heap but at no block; forgotten after each cycle.
    False,
}

struct AddrNode {
    addr: usize,
    next: u32,
}

/// Multiplicative hash: addresses are already well spread except in their low bits.
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = ((n as u64) ^ (n as u64 >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Heap bounds and snapshot position of one collection (`mark_variables` in the thesis).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HeapView {
    pub ptr_base: usize,
    /// Used bytes of the pointer heap at snapshot time; higher addresses hold no block.
    pub ptr_used: usize,
    pub atomic_base: usize,
    pub atomic_used: usize,
    /// Address of the snapshot's first byte; block `start` is found at `start - ptr_base + snapshot`.
    pub snapshot: usize,
}

impl HeapView {
    fn may_point_to_block(&self, v: usize) -> bool {
        v.wrapping_sub(self.ptr_base) < self.ptr_used || v.wrapping_sub(self.atomic_base) < self.atomic_used
    }
}

/// Blocks, the address lookup table, and the mark stack.
pub(crate) struct Tracer {
    infos: Vec<MemInfo>,
    free_infos: Vec<u32>,
    /// Indices of all blocks the collector tracks (`all_meminfos`).
    live: Vec<u32>,
    lookup: HashMap<usize, Entry, BuildHasherDefault<AddrHasher>>,
    /// Block starts in address order, for resolving interior pointers in O(log n).
    by_start: BTreeMap<usize, u32>,
    nodes: Vec<AddrNode>,
    free_nodes: Vec<u32>,
    false_addrs: Vec<usize>,
    /// Explicit mark stack: the thesis's recursive `run_mark` could overflow the thread stack.
    stack: Vec<u32>,
    pub(crate) interior_found: u64,
    pub(crate) false_found: u64,
}

impl Tracer {
    pub(crate) fn new(expected_blocks: usize) -> Tracer {
        Tracer {
            infos: Vec::with_capacity(expected_blocks),
            free_infos: Vec::new(),
            live: Vec::with_capacity(expected_blocks),
            lookup: HashMap::with_capacity_and_hasher(expected_blocks * 2, Default::default()),
            by_start: BTreeMap::new(),
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            false_addrs: Vec::new(),
            stack: Vec::with_capacity(1024),
            interior_found: 0,
            false_found: 0,
        }
    }

    pub(crate) fn live_blocks(&self) -> usize {
        self.live.len()
    }

    /// Take in one allocation record (`get_new_meminfos`).
    pub(crate) fn add_block(&mut self, start: usize, size: usize, atomic: bool) {
        let info = MemInfo { start, end: start + size, marked: false, atomic, interiors: NIL };
        let idx = match self.free_infos.pop() {
            Some(i) => {
                self.infos[i as usize] = info;
                i
            }
            None => {
                self.infos.push(info);
                (self.infos.len() - 1) as u32
            }
        };
        self.live.push(idx);
        self.lookup.insert(start, Entry::Start(idx));
        self.by_start.insert(start, idx);
    }

    /// The block containing `addr`, caching interior and false addresses (`find_mem`).
    fn find_mem(&mut self, addr: usize) -> Option<u32> {
        match self.lookup.get(&addr) {
            Some(Entry::Start(i)) | Some(Entry::Interior(i)) => return Some(*i),
            Some(Entry::False) => return None,
            None => {}
        }
        let hit = self
            .by_start
            .range(..=addr)
            .next_back()
            .map(|(_, &i)| i)
            .filter(|&i| addr < self.infos[i as usize].end);
        match hit {
            Some(i) => {
                self.interior_found += 1;
                self.lookup.insert(addr, Entry::Interior(i));
                let node = AddrNode { addr, next: self.infos[i as usize].interiors };
                let n = match self.free_nodes.pop() {
                    Some(n) => {
                        self.nodes[n as usize] = node;
                        n
                    }
                    None => {
                        self.nodes.push(node);
                        (self.nodes.len() - 1) as u32
                    }
                };
                self.infos[i as usize].interiors = n;
                Some(i)
            }
            None => {
                self.false_found += 1;
                self.lookup.insert(addr, Entry::False);
                self.false_addrs.push(addr);
                None
            }
        }
    }

    /// Mark everything reachable from `roots`, scanning block contents in the snapshot.
    ///
    /// # Safety
    /// `roots` must be readable for `nroots` words, and the snapshot described by `view`
    /// must hold `view.ptr_used` readable bytes that nobody writes during the call.
    pub(crate) unsafe fn mark(&mut self, roots: *const usize, nroots: usize, view: &HeapView) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.scan(roots, nroots, view) };
        while let Some(i) = self.stack.pop() {
            let info = &self.infos[i as usize];
            let offset = info.start - view.ptr_base;
            let words = (info.end - info.start) / WORD;
            let at = (view.snapshot + offset) as *const usize;
            // SAFETY: only pointer-heap blocks are pushed; a block recorded before the
            // snapshot ends at or below `ptr_used`, so [offset, offset + size) is in the snapshot.
            unsafe { self.scan(at, words, view) };
        }
    }

    /// # Safety
    /// `from` must be readable for `words` words.
    unsafe fn scan(&mut self, from: *const usize, words: usize, view: &HeapView) {
        for k in 0..words {
            // SAFETY: k < words, within the range promised by the caller.
            let v = unsafe { from.add(k).read() };
            if !view.may_point_to_block(v) {
                continue;
            }
            if let Some(i) = self.find_mem(v) {
                let info = &mut self.infos[i as usize];
                if !info.marked {
                    info.marked = true;
                    if !info.atomic {
                        self.stack.push(i);
                    }
                }
            }
        }
    }

    /// Forget every unmarked block, reporting it to `dead(start, size)`; clear marks and the
    /// false addresses of this cycle. Returns the number of blocks freed.
    pub(crate) fn sweep(&mut self, mut dead: impl FnMut(usize, usize)) -> usize {
        let mut freed = 0;
        let mut k = 0;
        while k < self.live.len() {
            let i = self.live[k];
            let info = &mut self.infos[i as usize];
            if info.marked {
                info.marked = false;
                k += 1;
                continue;
            }
            let (start, end) = (info.start, info.end);
            let mut n = info.interiors;
            self.lookup.remove(&start);
            self.by_start.remove(&start);
            while n != NIL {
                let node = &self.nodes[n as usize];
                self.lookup.remove(&node.addr);
                let next = node.next;
                self.free_nodes.push(n);
                n = next;
            }
            self.free_infos.push(i);
            self.live.swap_remove(k);
            dead(start, end - start);
            freed += 1;
        }
        for addr in self.false_addrs.drain(..) {
            self.lookup.remove(&addr);
        }
        freed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake heap that is its own snapshot (offset 0).
    fn view(heap: &[usize]) -> HeapView {
        let base = heap.as_ptr() as usize;
        HeapView { ptr_base: base, ptr_used: heap.len() * WORD, atomic_base: 0, atomic_used: 0, snapshot: base }
    }

    #[test]
    fn interior_pointer_keeps_block_and_false_pointer_keeps_nothing() {
        let mut heap = vec![0usize; 16];
        let base = heap.as_ptr() as usize;
        let mut t = Tracer::new(8);
        t.add_block(base, 4 * WORD, false); // A: words 0..4
        t.add_block(base + 4 * WORD, 2 * WORD, false); // B: words 4..6
        t.add_block(base + 8 * WORD, 2 * WORD, false); // C: words 8..10, unreachable
        heap[1] = base + 5 * WORD; // A -> interior of B
        let v = view(&heap);
        let roots = [base + 2 * WORD, base + 7 * WORD]; // interior of A; a gap (false)
        // SAFETY: roots has 2 words; heap is the snapshot and outlives the call.
        unsafe { t.mark(roots.as_ptr(), 2, &v) };
        let mut dead = Vec::new();
        assert_eq!(t.sweep(|s, n| dead.push((s, n))), 1);
        assert_eq!(dead, vec![(base + 8 * WORD, 2 * WORD)]);
        assert_eq!((t.interior_found, t.false_found), (2, 1));
        assert_eq!(t.live_blocks(), 2);
    }

    #[test]
    fn cycles_through_a_long_chain_without_recursion() {
        let n = 100_000;
        let mut heap = vec![0usize; n];
        let base = heap.as_ptr() as usize;
        let mut t = Tracer::new(n);
        for (k, slot) in heap.iter_mut().enumerate() {
            t.add_block(base + k * WORD, WORD, false);
            if k + 1 < n {
                *slot = base + (k + 1) * WORD;
            }
        }
        let v = view(&heap);
        let roots = [base];
        // SAFETY: as above.
        unsafe { t.mark(roots.as_ptr(), 1, &v) };
        assert_eq!(t.sweep(|_, _| {}), 0);
        // Second cycle without roots frees everything.
        // SAFETY: zero roots are read.
        unsafe { t.mark(roots.as_ptr(), 0, &v) };
        assert_eq!(t.sweep(|_, _| {}), n);
    }
}
