//! One interface over the ways a real-time consumer can receive from several
//! producers, so that they can be measured side by side on one workload
//! (`examples/queue_compare.rs`, `bench/queue_bench.py`):
//!
//! | [`Kind`] | producers | real-time side |
//! |---|---|---|
//! | [`Kind::TryLock`] | lock a mutex, push | `try_lock`; on failure skip this block's messages |
//! | [`Kind::Mpsc`] | lock-free bounded MPSC ([`mpsc`](crate::mpsc)) | pop |
//! | [`Kind::SpscPerProducer`] | one wait-free ring each ([`spsc`](crate::spsc)) | pop from each ring in turn |
//! | [`Kind::StdSync`] | `std::sync::mpsc::sync_channel` | `try_recv` |
//!
//! Only the try-lock kind can fail to deliver ([`Contended`]); the others
//! return what is there.

use crate::trylock_queue::{self, Contended};
use crate::{mpsc, spsc};

/// A queue's producing side, one per producer thread.
pub trait QueueSender<T>: Send {
    /// Pushes `value`, or gives it back when the queue is full. May block
    /// ([`Kind::TryLock`] takes a mutex).
    fn push(&mut self, value: T) -> Result<(), T>;
}

/// A queue's consuming side, held by the real-time thread; never blocks.
pub trait QueueReceiver<T>: Send {
    /// Hands up to `max` items to `f`, oldest of each producer first.
    /// `Err(Contended)`: the try-lock failed and nothing was taken (the
    /// items wait for the next call).
    fn drain(&mut self, max: usize, f: &mut dyn FnMut(T)) -> Result<usize, Contended>;
}

/// The alternatives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Carpentier's "non-blocking mutex" ([`trylock_queue`]).
    TryLock,
    /// The lock-free bounded MPSC queue.
    Mpsc,
    /// A wait-free SPSC ring per producer, merged by the consumer.
    SpscPerProducer,
    /// std's bounded channel.
    StdSync,
}

impl Kind {
    /// All kinds, in the order benches print them.
    pub const ALL: [Kind; 4] = [Kind::TryLock, Kind::Mpsc, Kind::SpscPerProducer, Kind::StdSync];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::TryLock => "try-lock",
            Kind::Mpsc => "lock-free MPSC",
            Kind::SpscPerProducer => "SPSC per producer",
            Kind::StdSync => "std sync_channel",
        }
    }
}

/// Senders and senders' shared receiver type.
pub type Pair<T> = (Vec<Box<dyn QueueSender<T>>>, Box<dyn QueueReceiver<T>>);

/// A queue of `kind` for `producers` producers holding `capacity` items (per
/// producer for [`Kind::SpscPerProducer`], in all for the others).
pub fn make<T: Send + 'static>(kind: Kind, producers: usize, capacity: usize) -> Pair<T> {
    match kind {
        Kind::TryLock => {
            let (tx, rx) = trylock_queue::to_realtime(capacity);
            let senders = (0..producers).map(|_| Box::new(tx.clone()) as Box<dyn QueueSender<T>>).collect();
            (senders, Box::new(TryLockReceiver { rx, batch: Vec::with_capacity(capacity) }))
        }
        Kind::Mpsc => {
            let (tx, rx) = mpsc::channel(capacity);
            let senders = (0..producers).map(|_| Box::new(tx.clone()) as Box<dyn QueueSender<T>>).collect();
            (senders, Box::new(rx))
        }
        Kind::SpscPerProducer => {
            let mut senders: Vec<Box<dyn QueueSender<T>>> = Vec::new();
            let mut rings = Vec::new();
            for _ in 0..producers {
                let (tx, rx) = spsc::channel(capacity);
                senders.push(Box::new(tx));
                rings.push(rx);
            }
            (senders, Box::new(MergedRings { rings, next: 0 }))
        }
        Kind::StdSync => {
            let (tx, rx) = std::sync::mpsc::sync_channel(capacity);
            let senders = (0..producers).map(|_| Box::new(tx.clone()) as Box<dyn QueueSender<T>>).collect();
            (senders, Box::new(rx))
        }
    }
}

impl<T: Send> QueueSender<T> for trylock_queue::BlockingSender<T> {
    fn push(&mut self, value: T) -> Result<(), T> {
        trylock_queue::BlockingSender::push(self, value)
    }
}

struct TryLockReceiver<T> {
    rx: trylock_queue::TryReceiver<T>,
    /// Moved out under the lock, handed to `f` after it is released.
    batch: Vec<T>,
}

impl<T: Send> QueueReceiver<T> for TryLockReceiver<T> {
    fn drain(&mut self, max: usize, f: &mut dyn FnMut(T)) -> Result<usize, Contended> {
        self.batch.clear();
        let n = self.rx.try_drain_at_most(&mut self.batch, max)?;
        for v in self.batch.drain(..) {
            f(v);
        }
        Ok(n)
    }
}

impl<T: Send> QueueSender<T> for mpsc::Sender<T> {
    fn push(&mut self, value: T) -> Result<(), T> {
        mpsc::Sender::push(self, value)
    }
}

impl<T: Send> QueueReceiver<T> for mpsc::Receiver<T> {
    fn drain(&mut self, max: usize, f: &mut dyn FnMut(T)) -> Result<usize, Contended> {
        let mut n = 0;
        while n < max {
            let Some(v) = self.pop() else { break };
            f(v);
            n += 1;
        }
        Ok(n)
    }
}

impl<T: Send> QueueSender<T> for spsc::Producer<T> {
    fn push(&mut self, value: T) -> Result<(), T> {
        spsc::Producer::push(self, value)
    }
}

struct MergedRings<T> {
    rings: Vec<spsc::Consumer<T>>,
    /// The ring served first next time, so that no producer is always last.
    next: usize,
}

impl<T: Send> QueueReceiver<T> for MergedRings<T> {
    fn drain(&mut self, max: usize, f: &mut dyn FnMut(T)) -> Result<usize, Contended> {
        let rings = self.rings.len();
        let mut n = 0;
        // Round robin, one item per ring per turn, until `max` or all empty.
        let mut empty_in_a_row = 0;
        let mut i = self.next;
        while n < max && empty_in_a_row < rings {
            match self.rings[i].pop() {
                Some(v) => {
                    f(v);
                    n += 1;
                    empty_in_a_row = 0;
                }
                None => empty_in_a_row += 1,
            }
            i = (i + 1) % rings;
        }
        self.next = (self.next + 1) % rings.max(1);
        Ok(n)
    }
}

impl<T: Send> QueueSender<T> for std::sync::mpsc::SyncSender<T> {
    fn push(&mut self, value: T) -> Result<(), T> {
        self.try_send(value).map_err(|e| match e {
            std::sync::mpsc::TrySendError::Full(v) | std::sync::mpsc::TrySendError::Disconnected(v) => v,
        })
    }
}

impl<T: Send> QueueReceiver<T> for std::sync::mpsc::Receiver<T> {
    fn drain(&mut self, max: usize, f: &mut dyn FnMut(T)) -> Result<usize, Contended> {
        let mut n = 0;
        while n < max {
            let Ok(v) = self.try_recv() else { break };
            f(v);
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_delivers_each_producers_items_in_order() {
        for kind in Kind::ALL {
            let (mut senders, mut rx) = make::<(usize, u32)>(kind, 3, 64);
            for (p, s) in senders.iter_mut().enumerate() {
                for i in 0..10 {
                    s.push((p, i)).unwrap();
                }
            }
            let mut got = Vec::new();
            while got.len() < 30 {
                if let Ok(0) = rx.drain(7, &mut |v| got.push(v)) {
                    break;
                }
            }
            assert_eq!(got.len(), 30, "{}", kind.name());
            for p in 0..3 {
                let mine: Vec<u32> = got.iter().filter(|(q, _)| *q == p).map(|(_, i)| *i).collect();
                assert_eq!(mine, (0..10).collect::<Vec<_>>(), "{}", kind.name());
            }
        }
    }
}
