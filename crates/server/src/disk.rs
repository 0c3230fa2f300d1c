//! The disk side of streaming in real time: threads that read and write the
//! halves DiskIn, VDiskIn and DiskOut finish, scheduled by need.
//!
//! ```text
//!  audio thread ── Job / Retire / Barrier ──▶ disk thread (one ring per thread)
//!       ▲                                         │ reads/writes the open file
//!       └──────────── Delivered ◀─────────────────┘ into/from the buffer's half
//! ```
//!
//! The audio thread never touches a file. After each block it turns the
//! units' requests into jobs stamped with a deadline, the sample time at
//! which the stream runs dry (the frames it still has over its rate), and
//! pushes them into a wait-free ring. With need-based scheduling it wakes
//! the disk thread (one futex wake-up) only when a job's time until empty is
//! below the low watermark; otherwise the disk thread finds the job on its
//! next poll. The disk thread serves the job with the earliest deadline
//! first, and runs under SCHED_FIFO while any job is below the critical
//! watermark, dropping back to normal scheduling once none is (Poduval's
//! need-based scheduling of a JACK client's disk thread, in user space).
//! The plain mode wakes the thread for every job and serves in arrival
//! order at normal priority, like scsynth's disk thread.
//!
//! A buffer's samples stay owned by the audio thread's world. A job carries
//! a pointer to them; a buffer that was streamed and is then replaced goes
//! to the disk thread that served it (`Retire`) and is dropped there after
//! the jobs that point into it are forgotten, so no job outlives its
//! buffer. Buffer commands on a streamed buffer first wait for a `Barrier`
//! through the same ring, so `/b_close` finalises a recording only after
//! DiskOut's last halves are written.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use magnetar_engine::buffer_cmds::{file_of, lock_file, OpenFiles};
use magnetar_engine::disk_io;
use magnetar_rt::event::{binary_event, Signaller, Waiter};
use magnetar_rt::spsc;
use magnetar_ugens::disk::{half_bit, DiskRequest};
use magnetar_ugens::{SndBuf, World};

/// Values in `/magnetar_diskStats.reply`.
pub const DISK_STATS_VALUES: usize = 11;

/// Jobs, retired buffers and barriers in flight to one disk thread.
const RING_CAPACITY: usize = 2048;
/// Pending jobs one disk thread holds (more than the ring can bring in one poll).
const PENDING_CAPACITY: usize = 2 * RING_CAPACITY;

/// How the disk threads choose their next job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskScheduling {
    /// Earliest time-until-empty first, woken at the low watermark,
    /// real-time priority below the critical watermark.
    NeedBased,
    /// Arrival order, woken for every job, normal priority (scsynth's way).
    FirstComeFirstServed,
}

impl DiskScheduling {
    pub fn from_name(name: &str) -> Option<DiskScheduling> {
        match name {
            "need" => Some(DiskScheduling::NeedBased),
            "fcfs" => Some(DiskScheduling::FirstComeFirstServed),
            _ => None,
        }
    }
}

/// The disk side's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskOptions {
    pub threads: usize,
    pub scheduling: DiskScheduling,
    /// A job whose stream runs dry sooner than this wakes a disk thread at once.
    pub low_watermark: Duration,
    /// While a job's stream runs dry sooner than this, the disk thread runs
    /// under SCHED_FIFO.
    pub critical_watermark: Duration,
    /// How long an idle disk thread sleeps before looking for jobs it was
    /// not woken for (below the low watermark, so they are still in time).
    pub poll: Duration,
    /// SCHED_FIFO priority while critical, at most: always below the audio
    /// thread's own.
    pub fifo_priority: i32,
    /// Delay before each read or write: slow storage, for tests
    /// (`MAGNETAR_DISK_DELAY_MS`).
    pub io_delay: Duration,
}

impl Default for DiskOptions {
    fn default() -> Self {
        DiskOptions {
            threads: 1,
            scheduling: DiskScheduling::NeedBased,
            low_watermark: Duration::from_millis(250),
            critical_watermark: Duration::from_millis(100),
            poll: Duration::from_millis(50),
            fifo_priority: 40,
            io_delay: Duration::ZERO,
        }
    }
}

impl DiskOptions {
    /// Reads the test-only slow-storage setting from the environment.
    pub fn with_env(mut self) -> Self {
        if let Some(ms) = std::env::var("MAGNETAR_DISK_DELAY_MS").ok().and_then(|v| v.trim().parse::<f64>().ok()) {
            self.io_delay = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
        }
        self
    }
}

/// A half to move between a buffer and its file.
struct Job {
    req: DiskRequest,
    /// The buffer's first sample; the job touches only its half.
    data: *mut f32,
    /// Which installation of the buffer the job belongs to.
    generation: u32,
    /// Sample time at which the stream runs dry if the job is not done.
    deadline: u64,
}

// SAFETY: the pointer is used only by the disk thread the job is sent to,
// and only while the buffer it points into is alive (see the module docs:
// a streamed buffer is dropped by that same thread, after its jobs).
unsafe impl Send for Job {}

enum ToDisk {
    Job(Job),
    /// A streamed buffer the audio thread let go of, to drop after its jobs.
    Retire(SndBuf),
    /// Serve what is pending for the buffer, then publish the number.
    Barrier { seq: u64, bufnum: u32 },
}

/// A job done, reported back to the audio thread.
struct Delivered {
    bufnum: u32,
    generation: u32,
    bit: u8,
    /// Where the file ended during a plain read (scsynth's `mask`).
    end: Option<i32>,
}

/// What the disk threads measured, for `/magnetar_diskStats` and the benchmark.
#[derive(Debug)]
pub struct DiskStats {
    /// Returns from sleep because the audio thread signalled.
    pub signalled_wakeups: AtomicU64,
    /// Returns from sleep at the end of a poll period.
    pub polled_wakeups: AtomicU64,
    pub served: AtomicU64,
    /// Jobs finished after their stream had run dry.
    pub late: AtomicU64,
    /// The smallest time until empty, in microseconds, left when a job was
    /// finished (negative: it was late).
    pub min_slack_us: AtomicI64,
    /// Times a disk thread raised itself to SCHED_FIFO.
    pub raises: AtomicU64,
    /// Jobs the ring had no room for (the half plays stale, as in scsynth).
    pub dropped: AtomicU64,
}

impl Default for DiskStats {
    fn default() -> Self {
        DiskStats {
            signalled_wakeups: AtomicU64::new(0),
            polled_wakeups: AtomicU64::new(0),
            served: AtomicU64::new(0),
            late: AtomicU64::new(0),
            min_slack_us: AtomicI64::new(i64::MAX),
            raises: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }
}

/// The audio thread's end of one disk thread.
struct AudioLane {
    tx: spsc::Producer<ToDisk>,
    rx: spsc::Consumer<Delivered>,
    wake: Signaller,
}

/// The audio thread's end of the disk side.
pub struct DiskLink {
    lanes: Vec<AudioLane>,
    /// The sample time of the block being computed, for the disk threads.
    clock: Arc<AtomicU64>,
    /// The sample rate (f64 bits), for the disk threads' watermarks.
    rate: Arc<AtomicU64>,
    /// The SCHED_FIFO priority a disk thread raises itself to (0: none),
    /// published by the control thread (`priorities::PriorityFollower`).
    raise_to: Arc<AtomicI32>,
    sample_rate: f64,
    low_watermark: Duration,
    /// Per buffer: bumped each time the buffer is replaced.
    generation: Vec<u32>,
    /// Per buffer: whether jobs may point into its current samples.
    streamed: Vec<bool>,
    scheduling: DiskScheduling,
    low_frames: f64,
    seq: u64,
    stats: Arc<DiskStats>,
    /// Set to stop the disk threads (when the link is dropped).
    stop: Arc<AtomicBool>,
    threads: Vec<(Signaller, JoinHandle<()>)>,
    /// Audio-thread time per block spent on the disk side (taking
    /// deliveries, handing over requests), in ns.
    audio_time: Box<magnetar_rt::histogram::Histogram>,
    /// This block's share so far.
    block_ns: u64,
}

/// The control thread's end: waits for barriers.
#[derive(Clone)]
pub struct DiskBarriers {
    done: Vec<Arc<AtomicU64>>,
}

impl DiskBarriers {
    /// Waits (at most `limit`) until disk thread `lane` has passed barrier `seq`.
    pub fn wait(&self, lane: usize, seq: u64, limit: Duration) -> bool {
        let Some(done) = self.done.get(lane) else {
            return true;
        };
        let start = Instant::now();
        while done.load(Ordering::Acquire) < seq {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        true
    }
}

/// Starts the disk threads for a world of `num_buffers` buffers.
pub fn start(
    options: &DiskOptions,
    files: OpenFiles,
    num_buffers: usize,
    sample_rate: f64,
) -> std::io::Result<(DiskLink, DiskBarriers, Arc<DiskStats>)> {
    let clock = Arc::new(AtomicU64::new(0));
    let rate = Arc::new(AtomicU64::new(sample_rate.to_bits()));
    let raise_to = Arc::new(AtomicI32::new(0));
    let stats = Arc::new(DiskStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut lanes = Vec::new();
    let mut threads = Vec::new();
    let mut done = Vec::new();
    for i in 0..options.threads.max(1) {
        let (tx, jobs) = spsc::channel(RING_CAPACITY);
        let (delivered, rx) = spsc::channel(RING_CAPACITY);
        let (wake, waiter) = binary_event();
        let stop_wake = wake.clone();
        let barrier_done = Arc::new(AtomicU64::new(0));
        let worker = Worker {
            jobs,
            delivered,
            waiter,
            files: Arc::clone(&files),
            clock: Arc::clone(&clock),
            rate: Arc::clone(&rate),
            raise_to: Arc::clone(&raise_to),
            stats: Arc::clone(&stats),
            stop: Arc::clone(&stop),
            barrier_done: Arc::clone(&barrier_done),
            options: options.clone(),
            pending: Vec::with_capacity(PENDING_CAPACITY),
            raised: false,
        };
        let handle = std::thread::Builder::new().name(format!("magnetar-disk{i}")).spawn(move || worker.run())?;
        lanes.push(AudioLane { tx, rx, wake });
        threads.push((stop_wake, handle));
        done.push(barrier_done);
    }
    let link = DiskLink {
        lanes,
        clock,
        rate,
        raise_to,
        sample_rate,
        low_watermark: options.low_watermark,
        generation: vec![0; num_buffers],
        streamed: vec![false; num_buffers],
        scheduling: options.scheduling,
        low_frames: options.low_watermark.as_secs_f64() * sample_rate,
        seq: 0,
        stats: Arc::clone(&stats),
        stop,
        threads,
        audio_time: Box::new(magnetar_rt::histogram::Histogram::new()),
        block_ns: 0,
    };
    Ok((link, DiskBarriers { done }, stats))
}

impl DiskLink {
    /// The driver's sample rate, once known (audio thread).
    pub fn set_sample_rate(&mut self, sample_rate: f64) {
        self.sample_rate = sample_rate;
        self.low_frames = self.low_watermark.as_secs_f64() * sample_rate;
        self.rate.store(sample_rate.to_bits(), Ordering::Relaxed);
    }

    /// Where the disk threads read the SCHED_FIFO priority they raise
    /// themselves to (0, the start: they stay at normal priority), for the
    /// control thread to publish once the audio thread's is known.
    pub fn raise_priority(&self) -> Arc<AtomicI32> {
        Arc::clone(&self.raise_to)
    }

    /// The disk thread that serves a buffer: spread by a hash, so that
    /// buffers numbered in a pattern (every fourth a short one) do not all
    /// land on one thread.
    fn lane_of(&self, bufnum: usize) -> usize {
        let hashed = (bufnum as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        (hashed % self.lanes.len() as u64) as usize
    }

    /// Takes what the disk threads delivered (audio thread, block start):
    /// the halves become playable, and plain reads report where the file ended.
    pub fn deliver(&mut self, world: &mut World) {
        let t0 = Instant::now();
        for lane in &mut self.lanes {
            while let Some(d) = lane.rx.pop() {
                let b = d.bufnum as usize;
                if self.generation.get(b) != Some(&d.generation) {
                    continue;
                }
                if let Some(buf) = world.buffers.get_mut(b) {
                    buf.disk_pending &= !d.bit;
                    if let Some(end) = d.end {
                        buf.disk_mask = end;
                    }
                }
            }
        }
        self.block_ns = t0.elapsed().as_nanos() as u64;
    }

    /// Hands the requests the units queued to the disk threads (audio
    /// thread, after the block computed at sample time `now`).
    pub fn forward(&mut self, world: &mut World, now: u64) {
        let t0 = Instant::now();
        self.forward_requests(world, now);
        let ns = self.block_ns + t0.elapsed().as_nanos() as u64;
        self.audio_time.record(ns);
        self.block_ns = 0;
    }

    fn forward_requests(&mut self, world: &mut World, now: u64) {
        self.clock.store(now, Ordering::Release);
        if world.disk_requests.is_empty() {
            return;
        }
        let mut requests = std::mem::take(&mut world.disk_requests);
        for req in requests.drain(..) {
            let b = req.bufnum as usize;
            let Some(buf) = world.buffers.get_mut(b) else {
                continue;
            };
            let bit = half_bit(req.pos);
            if disk_io::span(buf, &req).is_none() || b >= self.generation.len() {
                buf.disk_pending &= !bit;
                continue;
            }
            let rate = if req.rate > 1e-6 { f64::from(req.rate) } else { 1e-6 };
            // The stream has the other half left: it runs dry after that many
            // buffer frames at its rate (DiskOut fills its other half as fast).
            let left = (f64::from(req.frames) / rate).min(1e15);
            let job = Job { req, data: buf.data.as_mut_ptr(), generation: self.generation[b], deadline: now + left as u64 };
            let lane = self.lane_of(b);
            let lane = &mut self.lanes[lane];
            match lane.tx.push(ToDisk::Job(job)) {
                Ok(()) => {
                    self.streamed[b] = true;
                    let urgent = left < self.low_frames || lane.tx.len() * 2 > lane.tx.capacity();
                    if self.scheduling == DiskScheduling::FirstComeFirstServed || urgent {
                        lane.wake.signal();
                    }
                }
                Err(_) => {
                    // No room: like scsynth, the half keeps its old contents.
                    buf.disk_pending &= !bit;
                    self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        world.disk_requests = requests;
    }

    /// Takes a buffer the audio thread replaced (audio thread). Returns it
    /// if nothing streamed from it, to be dropped as usual; otherwise it goes
    /// to its disk thread, which drops it after the jobs that point into it.
    pub fn retire(&mut self, bufnum: usize, old: SndBuf) -> Option<SndBuf> {
        if let Some(g) = self.generation.get_mut(bufnum) {
            *g = g.wrapping_add(1);
        }
        if !self.streamed.get(bufnum).copied().unwrap_or(false) {
            return Some(old);
        }
        self.streamed[bufnum] = false;
        let lane = self.lane_of(bufnum);
        if let Err(ToDisk::Retire(old)) = self.lanes[lane].tx.push(ToDisk::Retire(old)) {
            // Dropping it here could free samples a job still writes:
            // leaking one buffer is the safe failure.
            std::mem::forget(old);
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
        None
    }

    /// `/magnetar_diskStats.reply`'s values (audio thread; the control
    /// thread builds the reply): signalled and polled wake-ups, jobs served,
    /// jobs late, the smallest time until empty at a job's end (µs),
    /// priority raises, dropped jobs, and the audio thread's time per block
    /// on the disk side (blocks, mean, p99.9 and max, ns). With `reset`, the
    /// smallest time until empty and the audio thread's times start again
    /// afterwards.
    pub fn stats_values(&mut self, reset: bool) -> [i64; DISK_STATS_VALUES] {
        let s = &self.stats;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as i64;
        let min = s.min_slack_us.load(Ordering::Relaxed);
        let values = [
            load(&s.signalled_wakeups),
            load(&s.polled_wakeups),
            load(&s.served),
            load(&s.late),
            if min == i64::MAX { 0 } else { min },
            load(&s.raises),
            load(&s.dropped),
            self.audio_time.count() as i64,
            self.audio_time.mean() as i64,
            self.audio_time.p999() as i64,
            self.audio_time.max() as i64,
        ];
        if reset {
            s.min_slack_us.store(i64::MAX, Ordering::Relaxed);
            self.audio_time.reset();
        }
        values
    }

    /// Before a buffer command on `bufnum` (audio thread): the disk thread
    /// finishes what is queued for it first. Returns the barrier the control
    /// thread waits for, if the buffer streamed.
    pub fn barrier(&mut self, world: &mut World, now: u64, bufnum: usize) -> Option<(usize, u64)> {
        self.forward_requests(world, now);
        if !self.streamed.get(bufnum).copied().unwrap_or(false) {
            return None;
        }
        self.seq += 1;
        let lane = self.lane_of(bufnum);
        let l = &mut self.lanes[lane];
        l.tx.push(ToDisk::Barrier { seq: self.seq, bufnum: bufnum as u32 }).ok()?;
        l.wake.signal();
        Some((lane, self.seq))
    }
}

impl Drop for DiskLink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for (wake, handle) in self.threads.drain(..) {
            wake.signal();
            let _ = handle.join();
        }
    }
}

/// One disk thread.
struct Worker {
    jobs: spsc::Consumer<ToDisk>,
    delivered: spsc::Producer<Delivered>,
    waiter: Waiter,
    files: OpenFiles,
    clock: Arc<AtomicU64>,
    rate: Arc<AtomicU64>,
    raise_to: Arc<AtomicI32>,
    stats: Arc<DiskStats>,
    stop: Arc<AtomicBool>,
    barrier_done: Arc<AtomicU64>,
    options: DiskOptions,
    pending: Vec<Job>,
    raised: bool,
}

impl Worker {
    fn sample_rate(&self) -> f64 {
        f64::from_bits(self.rate.load(Ordering::Relaxed))
    }

    fn run(mut self) {
        loop {
            self.take_messages();
            if self.pending.is_empty() {
                self.set_raised(false);
                if self.stop.load(Ordering::Acquire) {
                    break;
                }
                if self.waiter.wait_timeout(self.options.poll) {
                    self.stats.signalled_wakeups.fetch_add(1, Ordering::Relaxed);
                } else {
                    self.stats.polled_wakeups.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            let next = self.pick();
            let job = self.pending.remove(next);
            self.serve(job);
        }
    }

    fn take_messages(&mut self) {
        while let Some(m) = self.jobs.pop() {
            match m {
                ToDisk::Job(job) => {
                    if self.pending.len() == self.pending.capacity() {
                        // Never expected (the ring is smaller); serve one to make room.
                        let next = self.pick();
                        let oldest = self.pending.remove(next);
                        self.serve(oldest);
                    }
                    self.pending.push(job);
                }
                ToDisk::Retire(buf) => {
                    let data = buf.data.as_ptr() as *mut f32;
                    self.pending.retain(|j| j.data != data);
                    drop(buf);
                }
                ToDisk::Barrier { seq, bufnum } => {
                    // Everything queued for the buffer came through the ring
                    // before the barrier, so it is pending now.
                    while let Some(next) = self.pending.iter().position(|j| j.req.bufnum == bufnum) {
                        let job = self.pending.remove(next);
                        self.serve(job);
                    }
                    self.barrier_done.store(seq, Ordering::Release);
                }
            }
        }
    }

    /// The job to serve next, and the priority to serve it at.
    fn pick(&mut self) -> usize {
        match self.options.scheduling {
            DiskScheduling::FirstComeFirstServed => 0,
            DiskScheduling::NeedBased => {
                let now = self.clock.load(Ordering::Acquire);
                let critical = now + (self.options.critical_watermark.as_secs_f64() * self.sample_rate()) as u64;
                let mut best = 0;
                for (i, j) in self.pending.iter().enumerate() {
                    if j.deadline < self.pending[best].deadline {
                        best = i;
                    }
                }
                self.set_raised(self.pending[best].deadline < critical);
                best
            }
        }
    }

    fn set_raised(&mut self, raise: bool) {
        if raise == self.raised || self.options.scheduling != DiskScheduling::NeedBased {
            return;
        }
        if raise {
            // The priority the control thread published (below the audio
            // thread and every task class of a shorter period); none while
            // the audio thread's is unknown or not real-time: the disk
            // thread then stays as it is, as it does without the right to
            // real-time scheduling.
            let priority = self.raise_to.load(Ordering::Relaxed);
            if priority >= 1 && magnetar_rt::thread::set_fifo_priority(priority).is_ok() {
                self.raised = true;
                self.stats.raises.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            let _ = magnetar_rt::thread::set_normal_priority();
            self.raised = false;
        }
    }

    fn serve(&mut self, job: Job) {
        let req = job.req;
        let ch = req.channels as usize;
        let start = req.pos as usize * ch;
        let len = req.frames as usize * ch;
        // SAFETY: the audio thread checked that the half lies inside the
        // buffer (`disk_io::span`) when it made the job; the buffer is alive
        // (a replaced one is dropped by this thread, after its jobs), and
        // while the half is pending the units neither read nor write it, so
        // this is the only live view of these samples.
        let half = unsafe { std::slice::from_raw_parts_mut(job.data.add(start), len) };
        // The table is locked only to find the file; the read or write holds
        // that file's own lock, so disk threads serving other buffers go on
        // meanwhile, and the command thread waits (for this file only) just
        // when it closes or replaces this very file.
        let file = file_of(&self.files, req.bufnum as usize);
        let end = {
            let mut file = file.as_ref().map(|f| lock_file(f));
            if !self.options.io_delay.is_zero() {
                // Slow storage: the delay is part of the I/O.
                std::thread::sleep(self.options.io_delay);
            }
            disk_io::serve(file.as_mut().and_then(|f| f.as_mut()), half, &req)
        };
        let now = self.clock.load(Ordering::Acquire);
        let slack = job.deadline as i64 - now as i64;
        let slack_us = (slack as f64 / self.sample_rate() * 1e6) as i64;
        self.stats.min_slack_us.fetch_min(slack_us, Ordering::Relaxed);
        if slack < 0 {
            self.stats.late.fetch_add(1, Ordering::Relaxed);
        }
        self.stats.served.fetch_add(1, Ordering::Relaxed);
        let mut d = Delivered { bufnum: req.bufnum, generation: job.generation, bit: half_bit(req.pos), end };
        // The audio thread empties the ring every block; wait for room.
        loop {
            match self.delivered.push(d) {
                Ok(()) => break,
                Err(back) => {
                    if self.stop.load(Ordering::Acquire) {
                        break;
                    }
                    d = back;
                    std::thread::sleep(Duration::from_micros(500));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use magnetar_engine::buffer_cmds::{lock_files, share_file, BufferCommands, OpenSoundFile};
    use magnetar_soundfile::{HeaderFormat, SampleFormat, SoundFileReader, SoundFileWriter};
    use magnetar_ugens::disk::DiskOp;

    const SR: f64 = 48000.0;

    fn source_file(name: &str, frames: usize) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("magnetar-disk-{}-{name}.wav", std::process::id()));
        let mut w = SoundFileWriter::create(&path, HeaderFormat::Wav, SampleFormat::Float, 1, SR).unwrap();
        let data: Vec<f32> = (0..frames).map(|i| 1.0 + i as f32).collect();
        w.write_f32(&data).unwrap();
        w.close().unwrap();
        path
    }

    /// Two streams on one disk thread: one cued with a long buffer (its
    /// half lasts a second), one with a short one (43 ms), the long one
    /// asking first. Returns which was delivered first.
    fn first_served(scheduling: DiskScheduling) -> usize {
        let commands = BufferCommands::new(None);
        let files = commands.shared_files();
        let mut world = World::new(SR, 64, 16, 16, 2, 0, 2, 1);
        world.real_time = true;
        let halves = [48000u32, 2048];
        for (b, &half) in halves.iter().enumerate() {
            let path = source_file(&format!("{scheduling:?}-{b}"), 200_000);
            lock_files(&files).insert(b, share_file(OpenSoundFile::Reading(SoundFileReader::open(&path).unwrap())));
            world.buffers[b] = SndBuf::new(2 * half, 1, SR);
            let _ = std::fs::remove_file(path);
        }
        let options = DiskOptions { scheduling, io_delay: Duration::from_millis(150), ..DiskOptions::default() };
        let (mut link, _barriers, stats) = start(&options, files, 2, SR).unwrap();
        for (b, &half) in halves.iter().enumerate() {
            let req = DiskRequest { op: DiskOp::Read, bufnum: b as u32, channels: 1, pos: 0, frames: half, rate: 1.0 };
            world.disk_requests.push(req);
            world.buffers[b].disk_pending |= 1;
        }
        link.forward(&mut world, 0);
        // Both jobs wait through one delay: the first one served is back after about 150 ms.
        let start = Instant::now();
        loop {
            link.deliver(&mut world);
            let done: Vec<usize> = (0..2).filter(|&b| world.buffers[b].disk_pending == 0).collect();
            if let Some(&b) = done.first() {
                assert_eq!(done.len(), 1, "both halves delivered together: the order cannot be told");
                assert_eq!(world.buffers[b].data[0], 1.0, "the delivered half does not hold the file's first frame");
                drop(link);
                assert_eq!(stats.served.load(Ordering::Relaxed), 2);
                return b;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "nothing delivered");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn need_based_scheduling_serves_the_stream_closest_to_running_dry_first() {
        assert_eq!(first_served(DiskScheduling::NeedBased), 1);
    }

    #[test]
    fn plain_scheduling_serves_in_arrival_order() {
        assert_eq!(first_served(DiskScheduling::FirstComeFirstServed), 0);
    }

    #[test]
    fn a_replaced_buffer_is_not_written_after_it_is_retired() {
        let commands = BufferCommands::new(None);
        let files = commands.shared_files();
        let path = source_file("retire", 10_000);
        lock_files(&files).insert(0, share_file(OpenSoundFile::Reading(SoundFileReader::open(&path).unwrap())));
        let _ = std::fs::remove_file(&path);
        let mut world = World::new(SR, 64, 16, 16, 1, 0, 2, 1);
        world.real_time = true;
        world.buffers[0] = SndBuf::new(4096, 1, SR);
        let options = DiskOptions { io_delay: Duration::from_millis(50), ..DiskOptions::default() };
        let (mut link, _barriers, stats) = start(&options, files, 1, SR).unwrap();
        for pos in [0, 2048] {
            world.disk_requests.push(DiskRequest { op: DiskOp::Read, bufnum: 0, channels: 1, pos, frames: 2048, rate: 1.0 });
        }
        link.forward(&mut world, 0);
        let old = std::mem::replace(&mut world.buffers[0], SndBuf::new(4096, 1, SR));
        assert!(link.retire(0, old).is_none(), "a streamed buffer must go to its disk thread");
        drop(link);
        // The first job may have started before the retirement arrived; the second never runs.
        assert!(stats.served.load(Ordering::Relaxed) <= 1);
        assert!(world.buffers[0].data.iter().all(|&v| v == 0.0), "the new buffer was written");
    }

    /// Buffers whose jobs go to different disk threads, of `threads`.
    fn buffers_on_separate_threads(link: &DiskLink) -> (usize, usize) {
        let a = 0;
        let b = (1..64).find(|&b| link.lane_of(b) != link.lane_of(a)).expect("every buffer on one thread");
        (a, b)
    }

    #[test]
    fn two_disk_threads_read_two_slow_files_at_once() {
        const DELAY: Duration = Duration::from_millis(150);
        let commands = BufferCommands::new(None);
        let files = commands.shared_files();
        let options = DiskOptions { threads: 2, io_delay: DELAY, ..DiskOptions::default() };
        let mut world = World::new(SR, 64, 16, 16, 64, 0, 2, 1);
        world.real_time = true;
        let (mut link, _barriers, stats) = start(&options, Arc::clone(&files), 64, SR).unwrap();
        let (a, b) = buffers_on_separate_threads(&link);
        for bufnum in [a, b] {
            let path = source_file(&format!("concurrent-{bufnum}"), 10_000);
            lock_files(&files).insert(bufnum, share_file(OpenSoundFile::Reading(SoundFileReader::open(&path).unwrap())));
            let _ = std::fs::remove_file(path);
            world.buffers[bufnum] = SndBuf::new(4096, 1, SR);
            for pos in [0, 2048] {
                world.disk_requests.push(DiskRequest { op: DiskOp::Read, bufnum: bufnum as u32, channels: 1, pos, frames: 2048, rate: 1.0 });
            }
            world.buffers[bufnum].disk_pending = 3;
        }
        let start = Instant::now();
        link.forward(&mut world, 0);
        // Each thread has two slow reads to do: 2 x 150 ms side by side,
        // 4 x 150 ms one after the other.
        while world.buffers[a].disk_pending != 0 || world.buffers[b].disk_pending != 0 {
            assert!(start.elapsed() < Duration::from_secs(5), "not delivered");
            std::thread::sleep(Duration::from_millis(2));
            link.deliver(&mut world);
        }
        let elapsed = start.elapsed();
        drop(link);
        assert_eq!(stats.served.load(Ordering::Relaxed), 4);
        for bufnum in [a, b] {
            assert_eq!(world.buffers[bufnum].data[0], 1.0);
            assert_eq!(world.buffers[bufnum].data[4095], 4096.0);
        }
        assert!(elapsed < 4 * DELAY - DELAY / 2, "the reads took {elapsed:?}: one after the other, not side by side");
    }

    #[test]
    fn the_table_of_files_is_free_while_a_disk_thread_reads_a_slow_file() {
        const DELAY: Duration = Duration::from_millis(400);
        let commands = BufferCommands::new(None);
        let files = commands.shared_files();
        let path = source_file("busy", 10_000);
        lock_files(&files).insert(0, share_file(OpenSoundFile::Reading(SoundFileReader::open(&path).unwrap())));
        let mut world = World::new(SR, 64, 16, 16, 2, 0, 2, 1);
        world.real_time = true;
        world.buffers[0] = SndBuf::new(4096, 1, SR);
        let options = DiskOptions { io_delay: DELAY, ..DiskOptions::default() };
        let (mut link, _barriers, _stats) = start(&options, Arc::clone(&files), 2, SR).unwrap();
        world.disk_requests.push(DiskRequest { op: DiskOp::Read, bufnum: 0, channels: 1, pos: 0, frames: 2048, rate: 1.0 });
        link.forward(&mut world, 0);
        std::thread::sleep(Duration::from_millis(100));
        // Cueing another buffer's file (what /b_read with leave-open does
        // to the table) does not wait for the read in flight.
        let t0 = Instant::now();
        lock_files(&files).insert(1, share_file(OpenSoundFile::Reading(SoundFileReader::open(&path).unwrap())));
        assert!(t0.elapsed() < DELAY / 4, "the table was held across the read: {:?}", t0.elapsed());
        let _ = std::fs::remove_file(path);
        drop(link);
    }

    #[test]
    fn a_file_recued_during_a_read_of_the_old_one_is_neither_read_nor_its_buffer_written() {
        use magnetar_protocol::osc::{OscArg, OscMessage};
        const DELAY: Duration = Duration::from_millis(300);
        let mut commands = BufferCommands::new(None);
        let files = commands.shared_files();
        let old_path = source_file("recue-old", 10_000);
        lock_files(&files).insert(0, share_file(OpenSoundFile::Reading(SoundFileReader::open(&old_path).unwrap())));
        let _ = std::fs::remove_file(old_path);
        let new_path = std::env::temp_dir().join(format!("magnetar-disk-{}-recue-new.wav", std::process::id()));
        let mut w = SoundFileWriter::create(&new_path, HeaderFormat::Wav, SampleFormat::Float, 1, SR).unwrap();
        w.write_f32(&(0..10_000).map(|i| -1.0 - i as f32).collect::<Vec<f32>>()).unwrap();
        w.close().unwrap();
        let mut world = World::new(SR, 64, 16, 16, 1, 0, 2, 1);
        world.real_time = true;
        world.buffers[0] = SndBuf::new(4096, 1, SR);
        let mut mirror = World::new(SR, 64, 16, 16, 1, 0, 2, 1);
        mirror.buffers[0] = SndBuf::new(4096, 1, SR);
        let options = DiskOptions { io_delay: DELAY, ..DiskOptions::default() };
        let (mut link, _barriers, stats) = start(&options, Arc::clone(&files), 1, SR).unwrap();
        world.disk_requests.push(DiskRequest { op: DiskOp::Read, bufnum: 0, channels: 1, pos: 0, frames: 2048, rate: 1.0 });
        world.buffers[0].disk_pending = 1;
        link.forward(&mut world, 0);
        std::thread::sleep(Duration::from_millis(50));
        // Meanwhile the command thread cues the new file into the buffer
        // (`/b_read 0 path 0 -1 0 1`) and the audio thread installs it.
        let args = [OscArg::Int(0), OscArg::Str(new_path.to_string_lossy().into_owned()), OscArg::Int(0), OscArg::Int(-1), OscArg::Int(0), OscArg::Int(1)];
        let cmd = magnetar_protocol::parse_command(&OscMessage::new("/b_read", args.to_vec()));
        commands.perform(&cmd, &mut mirror).unwrap();
        let _ = std::fs::remove_file(&new_path);
        let fresh = std::mem::take(&mut mirror.buffers[0]);
        let old = std::mem::replace(&mut world.buffers[0], fresh);
        assert!(link.retire(0, old).is_none());
        // The old read ends and is dropped; the stream of the new file goes on.
        world.disk_requests.push(DiskRequest { op: DiskOp::Read, bufnum: 0, channels: 1, pos: 0, frames: 2048, rate: 1.0 });
        world.buffers[0].disk_pending = 1;
        link.forward(&mut world, 1);
        let start = Instant::now();
        while world.buffers[0].disk_pending != 0 {
            assert!(start.elapsed() < Duration::from_secs(5), "not delivered");
            std::thread::sleep(Duration::from_millis(2));
            link.deliver(&mut world);
        }
        drop(link);
        assert_eq!(stats.served.load(Ordering::Relaxed), 2);
        let data = &world.buffers[0].data;
        // The cue read the new file's first 4096 frames; the refill of the
        // first half continues right after them, and the second half keeps
        // the cue's frames: the old read touched neither the new file nor the new buffer.
        assert_eq!(data[0], -4097.0, "the new file was read from the wrong place");
        assert_eq!(data[2047], -6144.0);
        assert_eq!(data[2048], -2049.0, "the second half was overwritten");
        assert!(data.iter().all(|&v| v < 0.0), "the old file's samples reached the new buffer");
    }
}
