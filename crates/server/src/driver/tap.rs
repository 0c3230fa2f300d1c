//! The output tap: a copy of what the audio work writes, carried to a
//! non-real-time reader through a lock-free single-producer ring.
//!
//! The tap wraps any [`Process`], so it works the same on every driver. The
//! audio thread only does atomic loads and stores on it: when the reader falls
//! behind, whole periods are dropped and counted rather than waited for.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{PeriodIo, Process};

/// Interleaved f32 samples in a power-of-two ring; positions count samples
/// since creation and wrap with the mask.
struct Ring {
    // f32 bits in atomics keep the ring free of `unsafe` at no cost on x86/ARM.
    buf: Box<[AtomicU32]>,
    mask: usize,
    write: AtomicUsize,
    read: AtomicUsize,
    dropped_frames: AtomicU64,
}

impl Ring {
    fn new(samples: usize) -> Self {
        let cap = samples.max(1).next_power_of_two();
        Ring {
            buf: (0..cap).map(|_| AtomicU32::new(0)).collect(),
            mask: cap - 1,
            write: AtomicUsize::new(0),
            read: AtomicUsize::new(0),
            dropped_frames: AtomicU64::new(0),
        }
    }

    fn capacity(&self) -> usize {
        self.mask + 1
    }
}

/// Wraps `inner` so that after each `process()` call its first `num_channels`
/// outputs (silence for channels it lacks) are mirrored into a ring of at least
/// `capacity_frames` frames, read through the returned [`OutputTap`].
pub fn tap_outputs(
    inner: Box<dyn Process>,
    num_channels: usize,
    capacity_frames: usize,
) -> (Box<dyn Process>, OutputTap) {
    let channels = num_channels.max(1);
    let ring = Arc::new(Ring::new(capacity_frames.saturating_mul(channels)));
    let tap = OutputTap { ring: Arc::clone(&ring), channels };
    (Box::new(TapProcess { inner, ring, channels }), tap)
}

struct TapProcess {
    inner: Box<dyn Process>,
    ring: Arc<Ring>,
    channels: usize,
}

impl Process for TapProcess {
    fn process(&mut self, io: &mut PeriodIo<'_>) {
        self.inner.process(io);
        let ring = &*self.ring;
        let need = io.nframes * self.channels;
        // Only this thread moves `write`; `read` is acquired so that the slots the
        // reader released are really free.
        let w = ring.write.load(Ordering::Relaxed);
        let r = ring.read.load(Ordering::Acquire);
        let free = ring.capacity() - w.wrapping_sub(r);
        if need > free {
            ring.dropped_frames.fetch_add(io.nframes as u64, Ordering::Relaxed);
            return;
        }
        let mut pos = w;
        for frame in 0..io.nframes {
            for ch in 0..self.channels {
                let v = io.outputs.get(ch).and_then(|s| s.get(frame)).copied().unwrap_or(0.0);
                ring.buf[pos & ring.mask].store(v.to_bits(), Ordering::Relaxed);
                pos = pos.wrapping_add(1);
            }
        }
        ring.write.store(pos, Ordering::Release);
    }
}

/// The reading end of [`tap_outputs`]: interleaved frames, oldest first.
pub struct OutputTap {
    ring: Arc<Ring>,
    channels: usize,
}

impl OutputTap {
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Frames the audio thread had to drop because the ring was full.
    pub fn dropped_frames(&self) -> u64 {
        self.ring.dropped_frames.load(Ordering::Relaxed)
    }

    /// Whole frames waiting to be read.
    pub fn available_frames(&self) -> usize {
        let w = self.ring.write.load(Ordering::Acquire);
        let r = self.ring.read.load(Ordering::Relaxed);
        w.wrapping_sub(r) / self.channels
    }

    /// Moves as many whole frames as fit into `dst` (interleaved); returns the
    /// number of frames moved. Never blocks.
    pub fn read(&mut self, dst: &mut [f32]) -> usize {
        let ring = &*self.ring;
        let frames = self.available_frames().min(dst.len() / self.channels);
        let r = ring.read.load(Ordering::Relaxed);
        for (i, d) in dst[..frames * self.channels].iter_mut().enumerate() {
            *d = f32::from_bits(ring.buf[r.wrapping_add(i) & ring.mask].load(Ordering::Relaxed));
        }
        // Release so the writer sees our loads done before it reuses the slots.
        ring.read.store(r.wrapping_add(frames * self.channels), Ordering::Release);
        frames
    }

    /// Appends everything available to `dst`; returns the number of frames.
    pub fn read_into_vec(&mut self, dst: &mut Vec<f32>) -> usize {
        let start = dst.len();
        dst.resize(start + self.available_frames() * self.channels, 0.0);
        let frames = self.read(&mut dst[start..]);
        dst.truncate(start + frames * self.channels);
        frames
    }

    /// Starts a normal-priority thread that wakes every `poll` and passes the
    /// new interleaved frames to `sink` (for example a sound file writer).
    pub fn spawn<F>(self, poll: Duration, sink: F) -> std::io::Result<TapThread>
    where
        F: FnMut(&[f32]) + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new().name("magnetar-tap".into()).spawn(move || {
            let mut tap = self;
            let mut sink = sink;
            let mut chunk = vec![0.0f32; tap.ring.capacity()];
            loop {
                // Read the flag first so the final drain sees everything written before stop.
                let stopping = stop_flag.load(Ordering::Acquire);
                let frames = tap.read(&mut chunk);
                if frames > 0 {
                    sink(&chunk[..frames * tap.channels]);
                }
                if stopping && tap.available_frames() == 0 {
                    return tap;
                }
                if frames == 0 {
                    std::thread::sleep(poll);
                }
            }
        })?;
        Ok(TapThread { stop, handle })
    }
}

/// A running [`OutputTap::spawn`] reader.
pub struct TapThread {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<OutputTap>,
}

impl TapThread {
    /// Delivers what is left in the ring, stops the thread and gives the tap back.
    /// Stop the driver first to capture everything it produced.
    pub fn stop(self) -> Option<OutputTap> {
        self.stop.store(true, Ordering::Release);
        self.handle.join().ok()
    }
}
