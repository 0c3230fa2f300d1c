//! Poolmem: a bump pointer plus one free list per block size class (thesis ch. 7).
//!
//! Owned by the audio thread alone: the collector never calls into it; freed blocks come
//! back through a ring and are pushed here by the audio thread. Every operation is O(1).

use crate::config::WORD;

/// Sizes up to this many words get an exact class, as in the thesis.
const EXACT_WORDS: usize = 512;
/// Larger sizes are rounded up to one of 8 classes per power of two (at most 12.5 % waste),
/// so that big atomic buffers do not need one list head per word of heap.
const SUB_BITS: u32 = 3;
const NUM_CLASSES: usize = EXACT_WORDS + 1 + (64 - 9) * (1 << SUB_BITS);

/// Class index and rounded block size in bytes for a request of `size` bytes.
pub(crate) fn size_class(size: usize) -> Option<(usize, usize)> {
    let words = size.max(1).checked_add(WORD - 1)? / WORD;
    if words <= EXACT_WORDS {
        return Some((words, words * WORD));
    }
    let b = usize::BITS - 1 - words.leading_zeros();
    let step = 1usize << (b - SUB_BITS);
    let rounded = words.checked_add(step - 1)? & !(step - 1);
    let b2 = usize::BITS - 1 - rounded.leading_zeros();
    let sub = (rounded - (1 << b2)) >> (b2 - SUB_BITS);
    let class = EXACT_WORDS + 1 + (b2 as usize - 9) * (1 << SUB_BITS) + sub;
    Some((class, rounded.checked_mul(WORD)?))
}

/// One heap's allocator state.
pub(crate) struct Poolmem {
    base: usize,
    size: usize,
    /// Offset of the bump pointer (`freemem` in the thesis); everything above it is fill.
    top: usize,
    /// Head address of each class's free list, 0 when empty; the link is a block's first word.
    heads: Box<[usize]>,
    /// Value every word of a free block holds, restored over the link word on reuse.
    fill: usize,
    live_bytes: usize,
}

impl Poolmem {
    pub(crate) fn new(base: usize, size: usize, fill: usize) -> Poolmem {
        Poolmem { base, size, top: 0, heads: vec![0; NUM_CLASSES].into_boxed_slice(), fill, live_bytes: 0 }
    }

    /// A block of at least `size` bytes: (address, block bytes). O(1).
    pub(crate) fn alloc(&mut self, size: usize) -> Option<(usize, usize)> {
        let (class, block) = size_class(size)?;
        let head = self.heads[class];
        if head != 0 {
            // SAFETY: `head` is a free block of this heap of at least one word, owned by this
            // allocator since it was freed (the collector handed it over), so nobody else
            // reads or writes it; its first word holds the list link.
            let next = unsafe { (head as *const usize).read() };
            // SAFETY: same block; restore the fill value over the link so the block is uniform.
            unsafe { (head as *mut usize).write(self.fill) };
            self.heads[class] = next;
            self.live_bytes += block;
            return Some((head, block));
        }
        if block > self.size - self.top {
            return None;
        }
        let addr = self.base + self.top;
        self.top += block;
        self.live_bytes += block;
        Some((addr, block))
    }

    /// Give back a block that `alloc` returned with this `block` size. O(1).
    pub(crate) fn free(&mut self, addr: usize, block: usize) {
        debug_assert!(addr >= self.base && addr + block <= self.base + self.top);
        self.live_bytes -= block;
        if addr + block == self.base + self.top {
            // The block is on top of the bump stack: lower the stack, keeping the snapshot small.
            self.top -= block;
            return;
        }
        let Some((class, _)) = size_class(block) else {
            // Unreachable: `alloc` hands out size-class blocks only. Were it
            // reached, the block stays unused rather than join a wrong list.
            debug_assert!(false, "block of {block} bytes has no size class");
            return;
        };
        // SAFETY: the block is free and owned by this allocator (see `alloc`); it spans at
        // least one word, into which the list link is written.
        unsafe { (addr as *mut usize).write(self.heads[class]) };
        self.heads[class] = addr;
    }

    pub(crate) fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr < self.base + self.size
    }

    /// Bytes below the bump pointer: what a partial snapshot must copy.
    pub(crate) fn used_bytes(&self) -> usize {
        self.top
    }

    /// Bytes in blocks handed out and not yet given back.
    pub(crate) fn live_bytes(&self) -> usize {
        self.live_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sizes_get_exact_word_classes() {
        assert_eq!(size_class(1), Some((1, 8)));
        assert_eq!(size_class(8), Some((1, 8)));
        assert_eq!(size_class(9), Some((2, 16)));
        assert_eq!(size_class(4096), Some((512, 4096)));
    }

    #[test]
    fn large_sizes_waste_at_most_one_eighth() {
        for size in [4097usize, 5000, 70_000, 1 << 20, (3 << 20) + 17] {
            let (_, block) = size_class(size).unwrap();
            assert!(block >= size && block - size <= size / 8 + WORD, "{size} -> {block}");
            // The rounded size maps to itself, so a freed block returns to the same list.
            assert_eq!(size_class(block).unwrap().1, block);
        }
    }

    #[test]
    fn freed_block_is_reused_for_same_size_and_top_block_lowers_the_stack() {
        let mut mem = vec![0usize; 1024];
        let base = mem.as_mut_ptr() as usize;
        let mut p = Poolmem::new(base, 1024 * WORD, 0);
        let (a, _) = p.alloc(24).unwrap();
        let (b, _) = p.alloc(24).unwrap();
        p.free(a, 24);
        assert_eq!(p.alloc(20).unwrap().0, a);
        p.free(b, 24);
        assert_eq!(p.used_bytes(), 24);
        assert!(p.alloc(1024 * WORD).is_none());
    }
}
