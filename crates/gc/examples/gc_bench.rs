//! Benchmark in the spirit of the thesis's appendix A.1: a block-driven synth whose voices
//! allocate their state from the collector on every note, over four overlapping parts (MIDI
//! synth, grain cloud, FM insects, plucked strings with random delay-line lengths).
//!
//! Reports per-block blocking time, GC CPU shares, full-snapshot time of the pointer heap,
//! the blocks in which the kernel preempted the audio thread (and the worst blocking of the
//! others), and (with `--curve`) the memcpy bandwidth curve for heap sizes 0.5-100 MB.
//!
//! `--collector` picks the memory manager the same workload runs on: `concurrent` (the
//! first collector), `stw` (the same collector marking and sweeping inside `between_blocks`),
//! `replicating` (the second collector: write barrier, roots-only pause), or `boehm`
//! (Boehm-Demers-Weiser GC from libgc, build with `--features boehm`). Every pointer store
//! into the heap goes through `Heap::write_ptr`, the barrier, whatever the collector.
//!
//! `cargo run --release -p magnetar-gc --example gc_bench -- [--seconds 10] [--heap-mb 4]
//!  [--block 256] [--collector concurrent|stw|replicating|boehm] [--live-kb 64] [--curve] [--curve-secs 0.25]
//!  [--load] [--fifo PRIORITY] [--full-period 1.0] [--max-frees N]`
//!
//! `--full-period` sets how often (seconds) the full, worst-case snapshot is forced; a short
//! period gives many samples of its time in a short run.
//!
//! `--max-frees` bounds how many freed blocks the audio thread takes back per block.
//!
//! `--fifo` runs the audio loop (only it: the collector threads keep the normal policy, as in
//! the thesis) under SCHED_FIFO at that priority.
//!
//! `--live-kb` keeps that much long-lived state (the instruments' tables and score, as a
//! chain of 64-byte objects) reachable for the whole run; the thesis's run used at most about
//! 70 kB of its 4 MB pointer heap.

use std::ptr::NonNull;
use std::time::{Duration, Instant};

use magnetar_gc::{measure_memcpy_bandwidth, Collector, CollectorMode, GcConfig, SnapshotKind, WORD};

/// Boehm GC through its C API (Debian's libgc-dev).
#[cfg(feature = "boehm")]
mod boehm {
    #[link(name = "gc")]
    extern "C" {
        pub fn GC_init();
        pub fn GC_malloc(n: usize) -> *mut u8;
        pub fn GC_malloc_atomic(n: usize) -> *mut u8;
        pub fn GC_malloc_uncollectable(n: usize) -> *mut u8;
        pub fn GC_get_gc_no() -> usize;
        pub fn GC_get_heap_size() -> usize;
    }
}

/// The memory manager under test, with one interface for the workload.
// One value for the whole run: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Heap {
    Ours(Collector),
    /// Root slots (uncollectable, so Boehm scans them), time spent in allocation calls this
    /// block (where Boehm collects), and the longest single call.
    #[cfg_attr(not(feature = "boehm"), allow(dead_code))]
    Boehm { roots: &'static mut [*mut u8], in_alloc: Duration, worst_call: Duration, allocs: u64 },
}

impl Heap {
    fn alloc(&mut self, n: usize) -> Option<NonNull<u8>> {
        self.alloc_in(n, false)
    }

    fn alloc_atomic(&mut self, n: usize) -> Option<NonNull<u8>> {
        self.alloc_in(n, true)
    }

    fn alloc_in(&mut self, n: usize, atomic: bool) -> Option<NonNull<u8>> {
        match self {
            Heap::Ours(gc) if atomic => gc.alloc_atomic(n),
            Heap::Ours(gc) => gc.alloc(n),
            #[cfg(feature = "boehm")]
            Heap::Boehm { in_alloc, worst_call, allocs, .. } => {
                let t = Instant::now();
                // SAFETY: plain C allocation calls after GC_init; the result is checked for null.
                let p = unsafe { if atomic { boehm::GC_malloc_atomic(n) } else { boehm::GC_malloc(n) } };
                let d = t.elapsed();
                *in_alloc += d;
                *worst_call = (*worst_call).max(d);
                *allocs += 1;
                NonNull::new(p)
            }
            #[cfg(not(feature = "boehm"))]
            Heap::Boehm { .. } => None,
        }
    }

    /// A pointer store into a heap object: the write barrier for the replicating collector,
    /// a plain store for the others.
    ///
    /// # Safety
    /// `slot` must be valid for an aligned pointer write.
    unsafe fn write_ptr<T>(&mut self, slot: *mut *mut T, value: *mut T) {
        match self {
            // SAFETY: forwarded from this function's contract; this thread owns the collector.
            Heap::Ours(gc) => unsafe { gc.write_ptr(slot as *mut *mut u8, value as *mut u8) },
            // SAFETY: as above.
            Heap::Boehm { .. } => unsafe { slot.write(value) },
        }
    }

    fn roots_mut(&mut self) -> &mut [*mut u8] {
        match self {
            Heap::Ours(gc) => gc.roots_mut(),
            Heap::Boehm { roots, .. } => roots,
        }
    }

    /// The between-blocks call: returns the block's GC blocking time and whether a full
    /// (worst-case) snapshot was taken.
    fn between_blocks(&mut self, budget: Duration) -> (Duration, bool) {
        match self {
            Heap::Ours(gc) => {
                let r = gc.between_blocks(budget);
                (r.blocked, r.snapshot == SnapshotKind::Full)
            }
            Heap::Boehm { in_alloc, .. } => (std::mem::take(in_alloc), false),
        }
    }
}

#[cfg(feature = "boehm")]
fn boehm_heap() -> Heap {
    // SAFETY: GC_init is called once, before any other GC call; the uncollectable block is
    // scanned as a root and never freed, so the 'static slice stays valid.
    let roots = unsafe {
        boehm::GC_init();
        let p = boehm::GC_malloc_uncollectable(8 * WORD) as *mut *mut u8;
        assert!(!p.is_null(), "GC_malloc_uncollectable failed");
        std::slice::from_raw_parts_mut(p, 8)
    };
    roots.fill(std::ptr::null_mut());
    Heap::Boehm { roots, in_alloc: Duration::ZERO, worst_call: Duration::ZERO, allocs: 0 }
}

#[cfg(not(feature = "boehm"))]
fn boehm_heap() -> Heap {
    eprintln!("this build has no Boehm GC: rebuild with --features boehm (needs libgc-dev)");
    std::process::exit(2);
}

const SR: f64 = 44_100.0;

/// Pointer-heap layout of a voice: header words, then pointers to its parts.
#[repr(C)]
struct Voice {
    next: *mut Voice,
    osc: *mut Osc,
    osc2: *mut Osc,
    env: *mut Env,
    pan: *mut Pan,
    delay: *mut f32,
    delay_len: usize,
    delay_pos: usize,
    remaining: usize,
    kind: usize,
    /// Replaced every block, like the continuation a CPS sound generator allocates.
    frame: *mut Frame,
}

#[repr(C)]
struct Frame {
    voice: *mut Voice,
    block: usize,
    gain: f64,
}

#[repr(C)]
struct Osc {
    phase: f64,
    incr: f64,
}

#[repr(C)]
struct Env {
    level: f64,
    attack: f64,
    release_at: usize,
    decay: f64,
}

#[repr(C)]
struct Pan {
    left: f32,
    right: f32,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Args {
    seconds: f64,
    heap_mb: f64,
    block: usize,
    curve: bool,
    curve_secs: f64,
    load: bool,
    collector: String,
    live_kb: f64,
    fifo: Option<i32>,
    full_period: f64,
    max_frees: Option<usize>,
}

fn parse_args() -> Args {
    let mut a = Args {
        seconds: 10.0,
        heap_mb: 4.0,
        block: 256,
        curve: false,
        curve_secs: 0.25,
        load: false,
        collector: "concurrent".into(),
        live_kb: 64.0,
        fifo: None,
        full_period: 1.0,
        max_frees: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let val = |i: usize| argv.get(i + 1).and_then(|v| v.parse::<f64>().ok());
        match argv[i].as_str() {
            "--seconds" => a.seconds = val(i).unwrap_or(a.seconds),
            "--heap-mb" => a.heap_mb = val(i).unwrap_or(a.heap_mb),
            "--block" => a.block = val(i).map(|v| v as usize).unwrap_or(a.block),
            "--curve-secs" => a.curve_secs = val(i).unwrap_or(a.curve_secs),
            "--fifo" => a.fifo = val(i).map(|v| v as i32),
            "--live-kb" => a.live_kb = val(i).unwrap_or(a.live_kb),
            "--full-period" => a.full_period = val(i).filter(|v| *v > 0.0).unwrap_or(a.full_period),
            "--max-frees" => a.max_frees = val(i).map(|v| v as usize),
            "--collector" => a.collector = argv.get(i + 1).cloned().unwrap_or_default(),
            "--curve" => {
                a.curve = true;
                i += 1;
                continue;
            }
            "--load" => {
                a.load = true;
                i += 1;
                continue;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    a
}

/// Allocate a typed pointer-heap object (zero filled).
fn new<T>(gc: &mut Heap) -> *mut T {
    gc.alloc(std::mem::size_of::<T>()).map_or(std::ptr::null_mut(), |p| p.as_ptr() as *mut T)
}

/// Start a voice of `kind` (0 synth note, 1 grain, 2 insect, 3 pluck) and push it on the list.
fn spawn(gc: &mut Heap, rng: &mut Rng, kind: usize) {
    let v: *mut Voice = new(gc);
    let osc: *mut Osc = new(gc);
    let env: *mut Env = new(gc);
    let pan: *mut Pan = new(gc);
    if v.is_null() || osc.is_null() || env.is_null() || pan.is_null() {
        return;
    }
    let (freq, dur) = match kind {
        0 => (110.0 * 2f64.powf((rng.next() % 36) as f64 / 12.0), 0.2 + rng.unit() * 0.6),
        1 => (200.0 + rng.unit() * 2000.0, 0.02 + rng.unit() * 0.08),
        2 => (2000.0 + rng.unit() * 3000.0, 0.3 + rng.unit() * 0.5),
        _ => (80.0 + rng.unit() * 800.0, 0.5 + rng.unit() * 1.5),
    };
    let remaining = (dur * SR) as usize;
    let angle = rng.unit() * std::f64::consts::FRAC_PI_2;
    // SAFETY: all four pointers are fresh, word-aligned, zeroed blocks of their type's size,
    // owned by this (audio) thread.
    unsafe {
        (*osc).incr = freq / SR;
        (*env).attack = 1.0 / (0.005 * SR);
        (*env).release_at = remaining / 2;
        (*env).decay = 0.9995;
        (*pan).left = angle.cos() as f32;
        (*pan).right = angle.sin() as f32;
        gc.write_ptr(&raw mut (*v).osc, osc);
        gc.write_ptr(&raw mut (*v).env, env);
        gc.write_ptr(&raw mut (*v).pan, pan);
        (*v).remaining = remaining;
        (*v).kind = kind;
    }
    if kind == 2 {
        let m: *mut Osc = new(gc);
        if !m.is_null() {
            // SAFETY: fresh block as above.
            unsafe {
                (*m).incr = (20.0 + rng.unit() * 40.0) / SR;
                gc.write_ptr(&raw mut (*v).osc2, m);
            }
        }
    }
    if kind == 3 {
        // Karplus-Strong delay line of random length: atomic memory, fragments that heap.
        let len = (SR / freq) as usize + 1;
        if let Some(d) = gc.alloc_atomic(len * 4) {
            let d = d.as_ptr() as *mut f32;
            for k in 0..len {
                // SAFETY: d holds len f32s.
                unsafe { d.add(k).write((rng.unit() * 2.0 - 1.0) as f32) };
            }
            // SAFETY: v is a fresh Voice.
            unsafe {
                gc.write_ptr(&raw mut (*v).delay, d);
                (*v).delay_len = len;
            }
        }
    }
    let head = gc.roots_mut()[0] as *mut Voice;
    // SAFETY: v is a fresh Voice; roots[0] is the list head.
    unsafe { gc.write_ptr(&raw mut (*v).next, head) };
    gc.roots_mut()[0] = v as *mut u8;
}

fn new_frame(gc: &mut Heap, v: &mut Voice) -> *mut Frame {
    let f: *mut Frame = new(gc);
    if !f.is_null() {
        // SAFETY: fresh zeroed Frame block owned by this thread.
        unsafe {
            gc.write_ptr(&raw mut (*f).voice, v as *mut Voice);
            (*f).block = v.remaining;
            (*f).gain = 1.0;
        }
    }
    f
}

/// Render one block of all voices; unlink finished ones (they become garbage).
fn render(gc: &mut Heap, out: &mut [f32], reverb: *mut f32, reverb_len: usize, reverb_pos: &mut usize) {
    out.fill(0.0);
    let frames = out.len() / 2;
    // The list head lives in root slot 0; work on a local copy and store it back at the end.
    let mut head = gc.roots_mut()[0] as *mut Voice;
    let gc_alloc = &mut *gc;
    let mut link: *mut *mut Voice = &mut head;
    // SAFETY: every pointer followed is a live voice or one of its parts, reachable from
    // roots[0], allocated by this thread; the collector never frees reachable blocks.
    unsafe {
        while !(*link).is_null() {
            let v = &mut **link;
            let (osc, env, pan) = (&mut *v.osc, &mut *v.env, &*v.pan);
            for f in 0..frames {
                let mut s = match v.kind {
                    0 => if osc.phase < 0.5 { 0.2 } else { -0.2 },
                    1 => (2.0 * (osc.phase - 0.5).abs() - 0.5) as f32,
                    2 => {
                        let m = &mut *v.osc2;
                        m.phase = (m.phase + m.incr).fract();
                        ((osc.phase * std::f64::consts::TAU + 3.0 * (m.phase * std::f64::consts::TAU).sin()).sin() * 0.1) as f32
                    }
                    _ if !v.delay.is_null() => {
                        let a = *v.delay.add(v.delay_pos);
                        let b = *v.delay.add((v.delay_pos + 1) % v.delay_len);
                        *v.delay.add(v.delay_pos) = 0.498 * (a + b);
                        v.delay_pos = (v.delay_pos + 1) % v.delay_len;
                        a * 0.3
                    }
                    _ => 0.0,
                };
                osc.phase = (osc.phase + osc.incr).fract();
                env.level = if v.remaining > env.release_at { (env.level + env.attack).min(1.0) } else { env.level * env.decay };
                s *= env.level as f32;
                out[2 * f] += s * pan.left;
                out[2 * f + 1] += s * pan.right;
                v.remaining = v.remaining.saturating_sub(1);
            }
            let frame: *mut Frame = new_frame(gc_alloc, v);
            if !frame.is_null() {
                gc_alloc.write_ptr(&raw mut v.frame, frame); // the previous frame becomes garbage
            }
            if v.remaining == 0 {
                gc_alloc.write_ptr(link, v.next); // unlinked: garbage from now on
            } else {
                link = &mut v.next;
            }
        }
        for f in 0..frames {
            let wet = *reverb.add(*reverb_pos);
            *reverb.add(*reverb_pos) = 0.7 * wet + 0.3 * out[2 * f];
            *reverb_pos = (*reverb_pos + 1) % reverb_len;
            out[2 * f] += 0.3 * wet;
            out[2 * f + 1] += 0.3 * wet;
        }
    }
    gc.roots_mut()[0] = head as *mut u8;
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The calling thread's involuntary context switches so far (the OS took the CPU from it).
fn involuntary_switches() -> i64 {
    // SAFETY: getrusage fills the struct it is given; RUSAGE_THREAD asks about this thread.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut u);
        u.ru_nivcsw
    }
}

fn main() {
    let args = parse_args();
    let heap = (args.heap_mb * 1024.0 * 1024.0) as usize / WORD * WORD;
    let mut loader = args.load.then(|| {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let h = std::thread::spawn(move || {
            let a = vec![1u8; 20 << 20];
            let mut b = vec![0u8; 20 << 20];
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                b.copy_from_slice(&a);
                std::hint::black_box(&mut b);
            }
        });
        (stop, h)
    });
    let pm = measure_memcpy_bandwidth(64 << 20, Duration::from_millis(300));
    println!("p(M) best memcpy bandwidth (64 MB): {:.3} MB/ms", pm.best / 1e9);
    let mode = match args.collector.as_str() {
        "concurrent" => Some(CollectorMode::Concurrent),
        "stw" => Some(CollectorMode::StopTheWorld),
        "replicating" => Some(CollectorMode::Replicating),
        "boehm" => None,
        other => {
            eprintln!("unknown collector {other} (concurrent, stw, replicating, boehm)");
            std::process::exit(2);
        }
    };
    let mut gc = match mode {
        Some(mode) => Heap::Ours(
            Collector::new(GcConfig {
                pointer_heap_bytes: heap,
                atomic_heap_bytes: 128 << 20,
                snapshot_bandwidth: Some(pm.best),
                mode,
                full_snapshot_period: Duration::from_secs_f64(args.full_period),
                max_frees_per_block: args.max_frees.unwrap_or(GcConfig::default().max_frees_per_block),
                ..GcConfig::default()
            })
            .expect("collector"),
        ),
        None => boehm_heap(),
    };
    println!("collector: {}", args.collector);
    if let Some(prio) = args.fifo {
        let param = libc::sched_param { sched_priority: prio };
        // SAFETY: plain system call on the calling thread with a valid parameter block.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        println!("audio thread SCHED_FIFO {prio}: {}", if rc == 0 { "yes" } else { "refused" });
    }

    // Reverb delay line: atomic memory kept alive from root slot 1.
    let reverb_len = 9601;
    let reverb = gc.alloc_atomic(reverb_len * 4).expect("reverb").as_ptr() as *mut f32;
    // SAFETY: reverb holds reverb_len f32s of unspecified content; clear them.
    unsafe { std::ptr::write_bytes(reverb, 0, reverb_len) };
    gc.roots_mut()[1] = reverb as *mut u8;
    let mut reverb_pos = 0;
    // Long-lived state: a chain of 64-byte objects from root slot 2.
    for _ in 0..(args.live_kb * 1024.0 / 64.0) as usize {
        let node = gc.alloc(64).expect("live state").as_ptr() as *mut *mut u8;
        let head = gc.roots_mut()[2];
        // SAFETY: fresh 64-byte, word-aligned block; its first word links to the previous head.
        unsafe { gc.write_ptr(node, head) };
        gc.roots_mut()[2] = node as *mut u8;
    }

    let period = Duration::from_secs_f64(args.block as f64 / SR);
    let blocks = (args.seconds / period.as_secs_f64()) as usize;
    let mut out = vec![0f32; args.block * 2];
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut dsp, mut blocking, mut blocking_nf) = (Vec::with_capacity(blocks), Vec::with_capacity(blocks), Vec::new());
    // Worst blocking of blocks in which the OS did not take the CPU from the audio thread: what
    // the collector itself costs, without the scheduler's share (a hypervisor's is not seen).
    let mut kept_max: Option<Duration> = None;
    // Blocking of the blocks that took the forced full snapshot, for its distribution.
    let mut blocking_full = Vec::new();
    let mut preempted = 0usize;
    let mut kinds = [0usize; 4];
    let (mut late, mut overrun) = (0, 0);
    let scale = args.seconds / 60.0;
    let per_block = |count: f64, secs: f64| count * scale / (secs * scale / period.as_secs_f64());
    let mut acc = [0f64; 4];
    let start = Instant::now();
    let mut deadline = start;
    for b in 0..blocks {
        let t = b as f64 * period.as_secs_f64() / args.seconds * 60.0; // position in the 60 s piece
        // Event rates of the four parts, as voices per block.
        let rates = [
            if t < 55.0 { per_block(8.0 * 55.0, 55.0) } else { 0.0 },
            if (5.0..15.0).contains(&t) { per_block(500.0, 10.0) } else { 0.0 },
            if (20.0..32.0).contains(&t) { per_block(400.0, 12.0) } else { 0.0 },
            if (40.0..50.0).contains(&t) { per_block(2000.0, 10.0) } else { 0.0 },
        ];
        let switches_before = involuntary_switches();
        let t0 = Instant::now();
        for (kind, r) in rates.iter().enumerate() {
            acc[kind] += r;
            while acc[kind] >= 1.0 {
                acc[kind] -= 1.0;
                spawn(&mut gc, &mut rng, kind);
                kinds[kind] += 1;
            }
        }
        render(&mut gc, &mut out, reverb, reverb_len, &mut reverb_pos);
        let dsp_t = t0.elapsed();
        let tb = Instant::now();
        let (blocked, full) = gc.between_blocks(period.saturating_sub(dsp_t));
        let block_time = dsp_t + tb.elapsed();
        // Boehm's blocking happened inside the block's allocation calls: take it out of DSP.
        dsp.push(if matches!(gc, Heap::Boehm { .. }) { dsp_t.saturating_sub(blocked) } else { dsp_t });
        blocking.push(blocked);
        if full {
            blocking_full.push(blocked);
        } else {
            blocking_nf.push(blocked);
        }
        if involuntary_switches() == switches_before {
            kept_max = kept_max.max(Some(blocked));
        } else {
            preempted += 1;
        }
        if block_time > period {
            overrun += 1;
        }
        deadline += period;
        let now = Instant::now();
        if now > deadline {
            late += 1;
        } else {
            std::thread::sleep(deadline - now);
        }
    }
    let wall = start.elapsed();
    std::hint::black_box(&out);
    // Let the last collections finish before reading the concurrent work.
    for _ in 0..20 {
        gc.between_blocks(period);
        std::thread::sleep(period);
    }
    if let Some((stop, h)) = loader.take() {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        h.join().unwrap();
    }

    let audio: Duration = dsp.iter().sum();
    let block_total: Duration = blocking.iter().sum();
    blocking.sort();
    blocking_nf.sort();
    blocking_full.sort();
    dsp.sort();
    let kept_max = kept_max.map_or(f64::NAN, ms);
    println!("long-lived state: {} kB", args.live_kb);
    println!("workload: {} blocks of {} frames ({:.3} ms) in {:.1} s; voices synth/grain/insect/pluck {:?}",
        blocks, args.block, ms(period), wall.as_secs_f64(), kinds);
    println!("deadlines: {overrun} blocks whose DSP + GC time exceeded the period; {late} wake-ups late (OS scheduling included)");
    println!("audio (dsp) per block ms: min {:.4} mean {:.4} max {:.4}", ms(dsp[0]), ms(audio) / blocks as f64, ms(dsp[dsp.len() - 1]));
    println!("blocking per block ms (all): min {:.4} mean {:.4} p99 {:.4} p99.9 {:.4} max {:.4}",
        ms(blocking[0]), ms(block_total) / blocks as f64, ms(pct(&blocking, 0.99)), ms(pct(&blocking, 0.999)), ms(blocking[blocking.len() - 1]));
    println!("blocks in which the audio thread was preempted: {preempted}; blocking max in the others {kept_max:.4} ms");
    let (mut full_p50, mut full_p99) = (f64::NAN, f64::NAN);
    if let Some(&worst) = blocking_full.last() {
        (full_p50, full_p99) = (ms(pct(&blocking_full, 0.5)), ms(pct(&blocking_full, 0.99)));
        println!("blocks with the forced full snapshot: {}; blocking p50 {full_p50:.4} p99 {full_p99:.4} max {:.4} ms",
            blocking_full.len(), ms(worst));
    }
    if !blocking_nf.is_empty() && blocking_nf.len() != blocking.len() {
        let tot: Duration = blocking_nf.iter().sum();
        println!("blocking per block ms (without full snapshots): min {:.4} mean {:.4} p99 {:.4} p99.9 {:.4} max {:.4}",
            ms(blocking_nf[0]), ms(tot) / blocking_nf.len() as f64, ms(pct(&blocking_nf, 0.99)), ms(pct(&blocking_nf, 0.999)), ms(blocking_nf[blocking_nf.len() - 1]));
    }
    let busy = (audio + block_total).as_secs_f64();
    match &gc {
        Heap::Ours(c) => {
            let s = c.stats();
            let conc = s.merge.total + s.mark.total + s.sweep.total + s.free_busy;
            let mark_sweep_in_block = if mode == Some(CollectorMode::StopTheWorld) { Duration::ZERO } else { conc };
            println!("pointer heap {:.1} MB: used {} B, live {} B; atomic used {} B; allocations {}, failures {}",
                heap as f64 / 1048576.0, s.pointer_heap_used, s.pointer_live_bytes, s.atomic_heap_used, s.allocations, s.alloc_failures);
            let line = |name: &str, t: magnetar_gc::TimeSummary| {
                println!("{name:>17}: count {:6} total {:9.3} ms min {:.4} mean {:.4} max {:.4} ms",
                    t.count, ms(t.total), ms(t.min), ms(t.mean()), ms(t.max));
            };
            line("roots snapshot", s.roots_snapshot);
            line("partial snapshot", s.partial_snapshot);
            line("full snapshot", s.full_snapshot);
            line("merge (replica)", s.merge);
            line("mark", s.mark);
            line("sweep", s.sweep);
            println!("free thread busy {:.3} ms; cycles {}; snapshot failures {}; warnings {:#x}; full-snapshot target {:.4} ms",
                ms(s.free_busy), s.cycles, s.snapshot_failures, s.warnings, ms(s.full_snapshot_duration));
            if mode == Some(CollectorMode::Replicating) {
                println!("write barrier: {} distinct slots logged, {} spare log segments chained ({} reserved), {} collections fell back to the whole complementary block",
                    s.barrier_logged, s.barrier_segments_taken, s.barrier_spare_segments, s.barrier_overflows);
            }
            println!("GC share of CPU (audio + gc): on the audio thread {:.2} %, on other threads {:.2} %",
                100.0 * block_total.as_secs_f64() / (busy + mark_sweep_in_block.as_secs_f64()),
                100.0 * mark_sweep_in_block.as_secs_f64() / (busy + mark_sweep_in_block.as_secs_f64()));
            println!("GC share of wall time: on the audio thread {:.3} %, on other threads {:.3} %",
                100.0 * block_total.as_secs_f64() / wall.as_secs_f64(), 100.0 * mark_sweep_in_block.as_secs_f64() / wall.as_secs_f64());
            println!("SUMMARY collector={} blk_min_ms={:.4} blk_mean_ms={:.4} blk_p99_ms={:.4} blk_max_ms={:.4} gc_audio_pct={:.2} gc_other_pct={:.2} full_snap_max_ms={:.4} full_snap_count={} overruns={} late={} blocks={} nf_mean_ms={:.4} nf_p99_ms={:.4} nf_max_ms={:.4} preempted={} kept_max_ms={:.4} full_p50_ms={:.4} full_p99_ms={:.4}",
                args.collector, ms(blocking[0]), ms(block_total) / blocks as f64, ms(pct(&blocking, 0.99)), ms(blocking[blocking.len() - 1]),
                100.0 * block_total.as_secs_f64() / wall.as_secs_f64(),
                100.0 * mark_sweep_in_block.as_secs_f64() / wall.as_secs_f64(),
                ms(s.full_snapshot.max), s.full_snapshot.count, overrun, late, blocks,
                ms(blocking_nf.iter().sum::<Duration>()) / blocking_nf.len().max(1) as f64,
                ms(pct(&blocking_nf, 0.99)), ms(blocking_nf[blocking_nf.len() - 1]), preempted, kept_max, full_p50, full_p99);
        }
        Heap::Boehm { worst_call, allocs, .. } => {
            #[cfg(feature = "boehm")]
            // SAFETY: plain queries after GC_init.
            let (gcs, heap_size) = unsafe { (boehm::GC_get_gc_no(), boehm::GC_get_heap_size()) };
            #[cfg(not(feature = "boehm"))]
            let (gcs, heap_size) = (0usize, 0usize);
            println!("boehm: {gcs} collections, heap {heap_size} B, {allocs} allocations, longest allocation call {:.4} ms", ms(*worst_call));
            println!("GC share of CPU (audio + gc): on the audio thread {:.2} % (time inside GC_malloc)", 100.0 * block_total.as_secs_f64() / busy);
            println!("GC share of wall time: {:.3} % on the audio thread", 100.0 * block_total.as_secs_f64() / wall.as_secs_f64());
            println!("SUMMARY collector=boehm blk_min_ms={:.4} blk_mean_ms={:.4} blk_p99_ms={:.4} blk_max_ms={:.4} gc_audio_pct={:.2} gc_other_pct=0 full_snap_max_ms=nan full_snap_count=0 overruns={} late={} blocks={} preempted={} kept_max_ms={:.4}",
                ms(blocking[0]), ms(block_total) / blocks as f64, ms(pct(&blocking, 0.99)), ms(blocking[blocking.len() - 1]),
                100.0 * block_total.as_secs_f64() / wall.as_secs_f64(), overrun, late, blocks, preempted, kept_max);
        }
    }
    drop(gc);

    if args.curve {
        let sizes: Vec<f64> = (1..=20).map(|k| k as f64 * 0.5).chain((3..=20).map(|k| k as f64 * 5.0)).collect();
        let c = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as f64;
        println!("\nmemcpy snapshot curve ({} s per size{}): MB, copies, best/median/worst ms, best and worst MB/ms (MB = 1e6 B), best >= p(M)/c?",
            args.curve_secs, if args.load { ", with a memcpy load thread" } else { "" });
        // p(M) is the best case for a copy much larger than the caches (the 64 MB one above).
        let pm = pm.best;
        for mb in sizes {
            let bw = measure_memcpy_bandwidth((mb * 1048576.0) as usize, Duration::from_secs_f64(args.curve_secs));
            println!("{mb:6.1} {:6} {:9.4} {:9.4} {:9.4} {:8.3} {:7.3} {}",
                bw.copies, ms(bw.best_time), ms(bw.median_time), ms(bw.worst_time), bw.best / 1e9, bw.worst / 1e9,
                if bw.best >= pm / c { "yes" } else { "NO" });
        }
        println!("p(M) = {:.3} MB/ms, p(M)/c = {:.3} MB/ms (c = {c})", pm / 1e9, pm / c / 1e9);
    }
}
