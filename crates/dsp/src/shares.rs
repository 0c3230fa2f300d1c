//! How the threads divide a block's initially ready queue items: each thread
//! owns a contiguous share and takes from its front; a thread whose share is
//! empty takes from the back of another's.
//!
//! # Why shares, and not one cursor
//!
//! With one shared cursor the first thread to arrive takes the first items,
//! and which thread runs a given synth changes from block to block, so its
//! state and its wires move between cores every block. On two cores, 16
//! synths of 128 oscillators each ran 5–9 % longer per synth that way than
//! when each thread kept its half, and 256 small synths rendered 5–14 %
//! slower (scores of `bench/parallel_bench.py`, interleaved renders). With
//! shares, a thread runs the same items block after block as
//! long as the threads keep pace; when one falls behind (or never joins the
//! block), the others take its last items, one at a time, so the tail still
//! balances and the items that move are the same few.
//!
//! # The word
//!
//! A share is one 64-bit word holding `front` (low half) and `back` (high
//! half): the items `front..back` are unclaimed. The owner moves `front` up
//! and a thief moves `back` down, each with one compare-and-swap on the
//! whole word, so an item is claimed by exactly one of them. Claims order
//! nothing else (the plan and the work were published before the block
//! opened), so the operations are relaxed.

use crate::sync::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

#[inline]
fn pack(front: u32, back: u32) -> u64 {
    ((back as u64) << 32) | front as u64
}

#[inline]
fn unpack(word: u64) -> (u32, u32) {
    (word as u32, (word >> 32) as u32)
}

/// Which end of a share a claim takes.
#[derive(Clone, Copy)]
enum End {
    Front,
    Back,
}

/// One share per thread of the indices `0..n`, refilled every block.
#[derive(Debug)]
pub struct Shares {
    // One cache line each: a thread's own claims touch only its line until
    // it runs out and starts taking from others.
    slots: Box<[CachePadded<AtomicU64>]>,
}

impl Shares {
    /// Shares for `threads` threads (at least one), all empty.
    pub fn new(threads: usize) -> Self {
        let slots = (0..threads.max(1)).map(|_| CachePadded::new(AtomicU64::new(0))).collect();
        Self { slots }
    }

    /// How many threads share.
    pub fn threads(&self) -> usize {
        self.slots.len()
    }

    /// Divides `0..n` into contiguous shares in thread order, as even as
    /// can be (thread `w` gets `w·n/T .. (w+1)·n/T`). Must not run while a
    /// thread may [`take`](Self::take) from the previous division.
    pub fn reset(&self, n: u32) {
        let threads = self.slots.len() as u64;
        for (w, slot) in self.slots.iter().enumerate() {
            let w = w as u64;
            let (front, back) = (w * n as u64 / threads, (w + 1) * n as u64 / threads);
            slot.store(pack(front as u32, back as u32), Ordering::Relaxed);
        }
    }

    /// The next index for thread `worker` (taken modulo the thread count):
    /// the front of its own share, or else the back of the next non-empty
    /// share after it. `None` once every share is empty.
    #[inline]
    pub fn take(&self, worker: usize) -> Option<u32> {
        self.take_noting(worker).map(|(i, _)| i)
    }

    /// Like [`take`](Self::take), and tells whose share the index came
    /// from (`worker`'s own, or the thread it was taken from).
    #[inline]
    pub fn take_noting(&self, worker: usize) -> Option<(u32, usize)> {
        let threads = self.slots.len();
        let own = worker % threads;
        if let Some(i) = claim(&self.slots[own], End::Front) {
            return Some((i, own));
        }
        (1..threads).find_map(|k| {
            let from = (own + k) % threads;
            claim(&self.slots[from], End::Back).map(|i| (i, from))
        })
    }
}

/// Claims one index from `end` of the share in `slot`.
#[inline]
fn claim(slot: &AtomicU64, end: End) -> Option<u32> {
    let mut word = slot.load(Ordering::Relaxed);
    loop {
        let (front, back) = unpack(word);
        if front >= back {
            return None;
        }
        let (next, got) = match end {
            End::Front => (pack(front + 1, back), front),
            End::Back => (pack(front, back - 1), back - 1),
        };
        match slot.compare_exchange_weak(word, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Some(got),
            Err(now) => word = now,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn drain(shares: &Shares, worker: usize) -> Vec<u32> {
        std::iter::from_fn(|| shares.take(worker)).collect()
    }

    #[test]
    fn each_thread_runs_its_own_contiguous_share_block_after_block() {
        let shares = Shares::new(2);
        for _ in 0..3 {
            shares.reset(16);
            // Taking in turns, as two threads keeping pace would.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..8 {
                a.push(shares.take(0).unwrap());
                b.push(shares.take(1).unwrap());
            }
            assert_eq!(a, (0..8).collect::<Vec<_>>());
            assert_eq!(b, (8..16).collect::<Vec<_>>());
            assert_eq!(shares.take(0), None);
        }
    }

    #[test]
    fn a_thread_that_never_comes_leaves_its_share_to_the_others_from_its_back() {
        let shares = Shares::new(3);
        shares.reset(9);
        // Thread 1 never takes anything: thread 0 runs its own share, then
        // thread 1's last items first, then thread 2's.
        assert_eq!(drain(&shares, 0), vec![0, 1, 2, 5, 4, 3, 8, 7, 6]);
    }

    #[test]
    fn uneven_and_tiny_divisions_hand_out_every_index_once() {
        for threads in 1..6 {
            for n in 0..20 {
                let shares = Shares::new(threads);
                shares.reset(n);
                let mut got: Vec<u32> = (0..).map(|k| shares.take(k % threads)).take_while(Option::is_some).flatten().collect();
                got.sort_unstable();
                assert_eq!(got, (0..n).collect::<Vec<_>>(), "{threads} threads, {n} items");
            }
        }
    }

    #[test]
    fn threads_racing_for_the_same_shares_claim_each_index_exactly_once() {
        use std::sync::atomic::AtomicU32 as Count;
        let shares = Shares::new(4);
        let n = 4096u32;
        let seen: Vec<Count> = (0..n).map(|_| Count::new(0)).collect();
        for round in 0..50 {
            shares.reset(n);
            std::thread::scope(|s| {
                // Four threads on the machine's cores, one of them late: the
                // others take its share from the back while it takes from the front.
                for w in 0..4usize {
                    let (shares, seen) = (&shares, &seen);
                    s.spawn(move || {
                        if w == 3 {
                            std::thread::yield_now();
                        }
                        while let Some(i) = shares.take(w) {
                            seen[i as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    });
                }
            });
            for (i, c) in seen.iter().enumerate() {
                assert_eq!(c.swap(0, std::sync::atomic::Ordering::Relaxed), 1, "round {round}: index {i}");
            }
        }
    }
}
