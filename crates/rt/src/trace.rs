//! A timeline of what the real-time threads do, in the Chrome / Perfetto
//! trace-event format (`MAGNETAR_TRACE=file.json`).
//!
//! Off unless [`start`] was called: every recording call first loads one
//! flag ([`on`]) and returns when it is clear, so the cost when off is that
//! branch. When on, a thread records into a ring of its own, claimed on its
//! first event from rings allocated by `start` (no allocation on the
//! recording thread, no lock, no system call: a clock read through the vDSO
//! and a few stores), and a writer thread drains the rings every few
//! milliseconds into the file. A ring that is full drops the event and
//! counts it, unless the trace was started lossless (non-real-time
//! rendering), when the recording thread waits for the writer instead.
//! A thread stops recording after `max_events` events, so a long run
//! leaves a file of bounded size.
//!
//! Events are either spans (a start and a duration) or instants, each with
//! a kind and two numbers whose meaning the kind gives ([`Kind`]).

use std::cell::{Cell, UnsafeCell};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What an event records; `a` and `b` are its two numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A block of the engine (`a`: its number).
    Block,
    /// Commands performed before a block (`a`: how many).
    Commands,
    /// A parallel group on the threads (`a`: its node id, `b`: work items).
    GroupSpread,
    /// A parallel group run on one thread (`a`: its node id, `b`: work items).
    GroupOne,
    /// A work item of the DSP queue (`a`: item).
    Item,
    /// Synths run side by side (`a`: how many).
    LaneBatch,
    /// A thread with nothing to run inside a block, waiting for the others.
    Wait,
    /// An initially ready item taken from another thread's share (instant;
    /// `a`: the item's index among them, `b`: the thread it was taken from).
    Steal,
    /// Helpers signalled at the start of a block (instant).
    Signal,
    /// A helper asleep between blocks, up to its wake-up.
    Sleep,
    /// Bus writes replayed in order after a parallel group.
    Merge,
    /// The garbage collector's snapshot between blocks.
    Gc,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Block => "block",
            Kind::Commands => "commands",
            Kind::GroupSpread => "group on threads",
            Kind::GroupOne => "group on one thread",
            Kind::Item => "item",
            Kind::LaneBatch => "lane batch",
            Kind::Wait => "wait",
            Kind::Steal => "steal",
            Kind::Signal => "wake helpers",
            Kind::Sleep => "asleep",
            Kind::Merge => "merge",
            Kind::Gc => "gc",
        }
    }

    fn args(self, a: u32, b: u32) -> String {
        match self {
            Kind::Block => format!("{{\"block\":{a}}}"),
            Kind::Commands => format!("{{\"commands\":{a}}}"),
            Kind::GroupSpread | Kind::GroupOne => format!("{{\"group\":{a},\"items\":{b}}}"),
            Kind::Item => format!("{{\"item\":{a}}}"),
            Kind::LaneBatch => format!("{{\"synths\":{a}}}"),
            Kind::Steal => format!("{{\"item\":{a},\"from\":{b}}}"),
            _ => "{}".into(),
        }
    }
}

#[derive(Clone, Copy)]
struct Event {
    start_ns: u64,
    /// `u64::MAX` for an instant.
    dur_ns: u64,
    kind: Kind,
    a: u32,
    b: u32,
}

const INSTANT: u64 = u64::MAX;
/// Threads that may record (more are left out of the trace).
const SLOTS: usize = 16;
/// Events a thread's ring holds between two drains.
const RING: usize = 1 << 15;

/// One thread's events: written by that thread alone, read by the writer.
struct Ring {
    events: Box<[UnsafeCell<Event>]>,
    /// Events written (by the owner) and read (by the writer), counted
    /// from the start.
    head: AtomicUsize,
    tail: AtomicUsize,
    role: AtomicUsize,
    index: AtomicUsize,
}

// SAFETY: a slot's events are written only by the one thread that claimed
// it (`SLOT` holds the claim), each before `head` is published with
// Release, and read by the writer only below that `head` (Acquire) and
// above `tail`, which it publishes after reading; the owner never writes a
// slot the writer has not released.
unsafe impl Sync for Ring {}

struct Tracer {
    epoch: Instant,
    rings: Box<[Ring]>,
    claimed: AtomicUsize,
    lossless: bool,
    /// The most events one thread records.
    max_events: u64,
    dropped: AtomicU64,
    stop: AtomicBool,
    writer: Mutex<Option<std::thread::JoinHandle<std::io::Result<u64>>>>,
}

static ON: AtomicBool = AtomicBool::new(false);
static TRACER: OnceLock<Tracer> = OnceLock::new();

/// Roles a thread may be given for the trace's thread names.
const ROLES: [&str; 4] = ["engine", "DSP helper", "NRT", "audio"];

/// The role of a thread, for its name in the trace.
#[derive(Clone, Copy, Debug)]
pub enum Role {
    /// Whatever thread runs the engine's blocks, unnamed.
    Engine = 0,
    /// A DSP helper of the executor (with its worker index).
    Helper = 1,
    /// The thread rendering a score.
    Nrt = 2,
    /// The real-time audio thread.
    Audio = 3,
}

thread_local! {
    // Const-initialised and without a destructor: reading these never allocates.
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
    static ROLE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// Whether a trace is being recorded.
#[inline(always)]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Names the calling thread in the trace (cheap; call it once at start).
pub fn set_role(role: Role, index: usize) {
    ROLE.with(|r| r.set((role as usize, index)));
}

/// Time since the trace started, in ns (0 when off).
#[inline]
pub fn now() -> u64 {
    match TRACER.get() {
        Some(t) if on() => t.epoch.elapsed().as_nanos() as u64,
        _ => 0,
    }
}

/// Records a span that started at `start` (from [`now`]) and ends now.
#[inline]
pub fn span(kind: Kind, start: u64, a: u32, b: u32) {
    if on() {
        let end = now();
        record(Event { start_ns: start, dur_ns: end.saturating_sub(start), kind, a, b });
    }
}

/// Records an instant event.
#[inline]
pub fn instant(kind: Kind, a: u32, b: u32) {
    if on() {
        record(Event { start_ns: now(), dur_ns: INSTANT, kind, a, b });
    }
}

#[cold]
fn record(e: Event) {
    let Some(t) = TRACER.get() else { return };
    let slot = SLOT.with(|s| {
        if s.get() == usize::MAX {
            let k = t.claimed.fetch_add(1, Ordering::Relaxed);
            if k < SLOTS {
                let (role, index) = ROLE.with(|r| r.get());
                t.rings[k].role.store(role, Ordering::Relaxed);
                t.rings[k].index.store(index, Ordering::Relaxed);
            }
            s.set(k);
        }
        s.get()
    });
    let Some(ring) = t.rings.get(slot) else {
        t.dropped.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let head = ring.head.load(Ordering::Relaxed);
    if head as u64 >= t.max_events {
        // This thread has recorded its share: the trace ends here for it.
        return;
    }
    while head - ring.tail.load(Ordering::Acquire) >= RING {
        if !t.lossless || t.stop.load(Ordering::Relaxed) {
            t.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // Not real time: wait for the writer rather than lose the event.
        std::thread::yield_now();
    }
    // SAFETY: this thread owns the slot, and the writer has released this
    // position (checked against `tail` above).
    unsafe { *ring.events[head % RING].get() = e };
    ring.head.store(head + 1, Ordering::Release);
}

/// Starts recording into `path`: allocates the rings and starts the
/// writer thread. `lossless`: recording threads wait for room instead of
/// dropping events (for non-real-time rendering). Each thread records at
/// most `max_events`.
pub fn start(path: &std::path::Path, lossless: bool, max_events: u64) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let rings = (0..SLOTS)
        .map(|_| Ring {
            events: (0..RING)
                .map(|_| UnsafeCell::new(Event { start_ns: 0, dur_ns: 0, kind: Kind::Block, a: 0, b: 0 }))
                .collect(),
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            role: AtomicUsize::new(0),
            index: AtomicUsize::new(0),
        })
        .collect();
    let tracer = Tracer {
        epoch: Instant::now(),
        rings,
        claimed: AtomicUsize::new(0),
        lossless,
        max_events,
        dropped: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        writer: Mutex::new(None),
    };
    if TRACER.set(tracer).is_err() {
        return Err(std::io::Error::other("a trace is already being recorded"));
    }
    let Some(t) = TRACER.get() else {
        return Err(std::io::Error::other("the trace could not be recorded"));
    };
    let handle = std::thread::Builder::new().name("mg-trace".into()).spawn(move || write_trace(t, file))?;
    *t.writer.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    ON.store(true, Ordering::Release);
    Ok(())
}

/// Stops recording, writes what is left and closes the file. Returns the
/// events written and those dropped (ring full or too many threads).
pub fn finish() -> Option<std::io::Result<(u64, u64)>> {
    let t = TRACER.get()?;
    ON.store(false, Ordering::Release);
    t.stop.store(true, Ordering::Release);
    let handle = t.writer.lock().unwrap_or_else(|p| p.into_inner()).take()?;
    let written = match handle.join() {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::other("the trace writer failed")),
    };
    Some(written.map(|n| (n, t.dropped.load(Ordering::Relaxed))))
}

fn write_trace(t: &Tracer, file: std::fs::File) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    out.write_all(b"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"magnetar\"}}")?;
    let mut named = [false; SLOTS];
    let mut written = 0u64;
    loop {
        let stopping = t.stop.load(Ordering::Acquire);
        let claimed = t.claimed.load(Ordering::Acquire).min(SLOTS);
        for (k, ring) in t.rings[..claimed].iter().enumerate() {
            let head = ring.head.load(Ordering::Acquire);
            let mut tail = ring.tail.load(Ordering::Relaxed);
            if head == tail {
                continue;
            }
            if !named[k] {
                named[k] = true;
                let role = ROLES.get(ring.role.load(Ordering::Relaxed)).copied().unwrap_or("engine");
                let index = ring.index.load(Ordering::Relaxed);
                let name = if role == "DSP helper" { format!("{role} {index}") } else { role.to_string() };
                write!(
                    out,
                    ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{k},\"args\":{{\"name\":\"{name}\"}}}}\
                     ,\n{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":{k},\"args\":{{\"sort_index\":{k}}}}}"
                )?;
            }
            while tail != head {
                // SAFETY: below `head` (Acquire above): written and published by the owner.
                let e = unsafe { *ring.events[tail % RING].get() };
                tail += 1;
                let ts = e.start_ns as f64 / 1000.0;
                if e.dur_ns == INSTANT {
                    write!(
                        out,
                        ",\n{{\"name\":\"{}\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{ts:.3},\"pid\":1,\"tid\":{k},\"args\":{}}}",
                        e.kind.name(),
                        e.kind.args(e.a, e.b)
                    )?;
                } else {
                    write!(
                        out,
                        ",\n{{\"name\":\"{}\",\"ph\":\"X\",\"ts\":{ts:.3},\"dur\":{:.3},\"pid\":1,\"tid\":{k},\"args\":{}}}",
                        e.kind.name(),
                        e.dur_ns as f64 / 1000.0,
                        e.kind.args(e.a, e.b)
                    )?;
                }
                written += 1;
            }
            ring.tail.store(tail, Ordering::Release);
        }
        if stopping {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    write!(
        out,
        ",\n{{\"name\":\"dropped events\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{{\"dropped\":{}}}}}\n]}}\n",
        t.dropped.load(Ordering::Relaxed)
    )?;
    out.flush()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_holds_every_threads_spans_and_instants_as_json() {
        let path = std::env::temp_dir().join(format!("magnetar-trace-test-{}.json", std::process::id()));
        assert!(!on());
        span(Kind::Block, 0, 1, 0); // off: nothing recorded, nothing to fail
        start(&path, true, 1_000_000).unwrap();
        set_role(Role::Nrt, 0);
        for b in 0..3 {
            let t0 = now();
            instant(Kind::Signal, 0, 0);
            span(Kind::Block, t0, b, 0);
        }
        std::thread::spawn(|| {
            set_role(Role::Helper, 1);
            for k in 0..RING as u32 * 2 {
                span(Kind::Item, now(), k, 1);
            }
        })
        .join()
        .unwrap();
        let (written, dropped) = finish().unwrap().unwrap();
        assert_eq!((written, dropped), (6 + 2 * RING as u64, 0));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(text.starts_with('{') && text.trim_end().ends_with("]}"));
        assert_eq!(text.matches("\"name\":\"block\"").count(), 3);
        assert_eq!(text.matches("\"name\":\"item\"").count(), 2 * RING);
        assert!(text.contains("\"args\":{\"name\":\"DSP helper 1\"}"));
        assert!(text.contains("\"args\":{\"name\":\"NRT\"}"));
    }
}
