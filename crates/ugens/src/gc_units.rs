//! The garbage-collected heap for real-time code, and a UGen that lives on it.
//!
//! When the server gives the world a collector ([`World::gc`]), units may allocate small
//! objects on the audio thread in bounded time and never free them: the engine calls
//! [`between_blocks`] after every block, which snapshots the heap and lets
//! `magnetar_gc`'s collector threads find and reclaim what no root reaches any more
//! (K. S. Matheussen, "Realtime Audio with Garbage Collection", 2010, first collector).
//!
//! The rules for a unit:
//! * allocate with [`World::gc_alloc`] / [`World::gc_new`] (scanned for pointers) or
//!   [`World::gc_alloc_atomic`] (sample data, never scanned); both return `None` when there is
//!   no collector or the heap is full, and a unit must then carry on without the object;
//! * an object survives the next [`between_blocks`] only if, at that moment, a root slot
//!   ([`World::gc_claim_root`]) or an object that survives holds a pointer to it (or into it).
//!   The unit's own fields are not scanned, so keep GC pointers in a root slot or in GC objects;
//! * drop a reference by overwriting it; never free. Release the root slot in `dtor`.

use std::ptr::NonNull;
use std::time::{Duration, Instant};

pub use magnetar_gc as gc;
use magnetar_gc::{BlockReport, Collector, GcConfig, GcError, WORD};

use crate::unit::{Construct, Unit, UnitCtx, UnitSpec, Wires};
use crate::world::World;


/// A collector sized for the real-time server: a 4 MB pointer heap (its full snapshot is the
/// worst-case pause, well under a 64-sample block on current machines) and 16 MB for sample data.
/// Calibrates the copy bandwidth, so call it before the audio thread starts.
pub fn realtime_collector() -> Result<Collector, GcError> {
    Collector::new(GcConfig::default())
}

/// The engine's call after each block: give the collector the rest of the block period
/// (period minus the time since `block_started`) for its snapshot. `None` without a collector.
pub fn between_blocks(world: &mut World, block_started: Instant) -> Option<BlockReport> {
    let period = Duration::from_secs_f64(world.block_size as f64 / world.sample_rate);
    let gc = world.gc.as_mut()?;
    Some(gc.between_blocks(period.saturating_sub(block_started.elapsed())))
}

/// A claimed root slot; whatever its pointer reaches stays alive.
#[derive(Debug, PartialEq, Eq)]
pub struct GcRoot(usize);

impl World {
    /// `bytes` of zero-filled, word-aligned memory on the GC pointer heap, from the audio
    /// thread, in bounded time. `None` without a collector or when the heap is full.
    pub fn gc_alloc(&mut self, bytes: usize) -> Option<NonNull<u8>> {
        self.gc.as_mut()?.alloc(bytes.max(WORD))
    }

    /// Memory for data that holds no GC pointers (never scanned, contents unspecified).
    pub fn gc_alloc_atomic(&mut self, bytes: usize) -> Option<NonNull<u8>> {
        self.gc.as_mut()?.alloc_atomic(bytes.max(WORD))
    }

    /// Moves `value` onto the GC pointer heap. `T: Copy` because the collector never runs
    /// destructors; types aligned beyond a word are refused.
    pub fn gc_new<T: Copy>(&mut self, value: T) -> Option<NonNull<T>> {
        if std::mem::align_of::<T>() > WORD {
            return None;
        }
        let p = self.gc_alloc(std::mem::size_of::<T>())?.cast::<T>();
        // SAFETY: fresh block of at least size_of::<T>() bytes, word (hence T) aligned,
        // owned by this thread until it becomes garbage.
        unsafe { p.as_ptr().write(value) };
        Some(p)
    }

    /// Claims a root slot (cleared). `None` without a collector or when all slots are taken.
    pub fn gc_claim_root(&mut self) -> Option<GcRoot> {
        self.gc.as_mut()?.claim_root_slot().map(GcRoot)
    }

    /// The pointer held in a root slot (null when empty or without a collector).
    pub fn gc_root(&self, root: &GcRoot) -> *mut u8 {
        self.gc.as_ref().and_then(|g| g.roots().get(root.0).copied()).unwrap_or(std::ptr::null_mut())
    }

    pub fn gc_set_root(&mut self, root: &GcRoot, p: *mut u8) {
        if let Some(slot) = self.gc.as_mut().and_then(|g| g.roots_mut().get_mut(root.0)) {
            *slot = p;
        }
    }

    /// Gives a slot back; what only it reached becomes garbage.
    pub fn gc_release_root(&mut self, root: GcRoot) {
        if let Some(g) = self.gc.as_mut() {
            g.release_root_slot(root.0);
        }
    }
}

/// One sounding grain, on the GC pointer heap, linked from the unit's root slot.
#[derive(Clone, Copy)]
#[repr(C)]
struct Grain {
    next: *mut Grain,
    /// Sine phase in cycles, and its step per sample.
    phase: f64,
    incr: f64,
    /// Position in the Hann window (0..1) and its step per sample.
    win: f64,
    win_incr: f64,
    remaining: u64,
    amp: f64,
}

impl Grain {
    /// Adds up to `out.len()` samples of this grain into `out`; false once it has ended.
    fn render(&mut self, out: &mut [f32]) -> bool {
        let n = (self.remaining as usize).min(out.len());
        for o in &mut out[..n] {
            let w = 0.5 - 0.5 * (std::f64::consts::TAU * self.win).cos();
            *o += (self.amp * w * (std::f64::consts::TAU * self.phase).sin()) as f32;
            self.phase += self.incr;
            self.phase -= self.phase.floor();
            self.win += self.win_incr;
        }
        self.remaining -= n as u64;
        self.remaining > 0
    }
}

/// GrainCloud.ar(trig, freq, dur, amp): a Hann-windowed sine grain of `dur` seconds at each
/// positive-going `trig`, with the `freq` and `amp` of that sample; any number overlap.
///
/// Every grain is a new object on the GC heap, linked into a list whose head sits in the
/// unit's root slot; a grain that ends is unlinked and left to the collector. Without a
/// collector (or with the heap full) new grains are skipped and counted, so it is silent.
pub struct GrainCloud {
    root: Option<GcRoot>,
    prev_trig: f32,
    /// Grains that could not be allocated.
    pub dropped: u64,
}

impl Construct for GrainCloud {
    fn new(_spec: &UnitSpec<'_>, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) -> Self {
        let root = cx.world.gc_claim_root();
        io.out(0)[0] = 0.0;
        // prev_trig 0: a trigger already high on the first sample starts a grain.
        GrainCloud { root, prev_trig: 0.0, dropped: 0 }
    }
}

impl GrainCloud {
    fn head(&self, world: &World) -> *mut Grain {
        self.root.as_ref().map_or(std::ptr::null_mut(), |r| world.gc_root(r) as *mut Grain)
    }

    /// Renders every sounding grain into `out` and unlinks the ones that ended.
    fn render_all(&mut self, world: &mut World, out: &mut [f32]) {
        let mut head = self.head(world);
        let mut link: *mut *mut Grain = &mut head;
        // SAFETY: every grain on the list was allocated by this unit and is reachable from its
        // root slot (the head) through `next`, so the collector has not freed it; only the
        // audio thread touches grains.
        unsafe {
            while !(*link).is_null() {
                let g = &mut **link;
                if g.render(out) {
                    link = &mut g.next;
                } else {
                    *link = g.next; // unreachable from now on: garbage
                }
            }
        }
        if let Some(r) = &self.root {
            world.gc_set_root(r, head as *mut u8);
        }
    }

    /// Starts a grain at sample `at`, rendering its first part into `out[at..]`.
    fn start_grain(&mut self, world: &mut World, out: &mut [f32], at: usize, freq: f32, dur: f32, amp: f32) {
        let (Some(root), true) = (&self.root, world.gc.is_some()) else {
            self.dropped += 1;
            return;
        };
        let len = (dur as f64 * world.sample_rate).round().max(1.0);
        let mut grain = Grain {
            next: std::ptr::null_mut(),
            phase: 0.0,
            incr: freq as f64 / world.sample_rate,
            win: 0.0,
            win_incr: 1.0 / len,
            remaining: len as u64,
            amp: amp as f64,
        };
        if !grain.render(&mut out[at..]) {
            return; // over within this block: no object needed
        }
        grain.next = world.gc_root(root) as *mut Grain;
        match world.gc_new(grain) {
            Some(p) => world.gc_set_root(root, p.as_ptr() as *mut u8),
            None => self.dropped += 1,
        }
    }
}

impl Unit for GrainCloud {
    fn next(&mut self, io: &mut Wires<'_>, cx: &mut UnitCtx<'_>) {
        if self.root.is_none() {
            // The collector may have been installed after this unit was built.
            self.root = cx.world.gc_claim_root();
        }
        let (trig, freq, dur, amp) = (io.inp(0), io.inp(1), io.inp(2), io.inp(3));
        let at = |s: &[f32], i: usize| s[if s.len() > 1 { i } else { 0 }];
        let out = io.out(0);
        out.fill(0.0);
        self.render_all(cx.world, out);
        let mut prev = self.prev_trig;
        for i in 0..out.len() {
            let t = at(trig, i);
            if t > 0.0 && prev <= 0.0 {
                self.start_grain(cx.world, out, i, at(freq, i), at(dur, i), at(amp, i));
            }
            prev = t;
        }
        self.prev_trig = prev;
    }

    fn dtor(&mut self, cx: &mut UnitCtx<'_>) {
        if let Some(r) = self.root.take() {
            cx.world.gc_release_root(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestInput, UnitHarness};
    use crate::unit::{Rate, WireRef, NO_UNIT};
    use crate::world::SynthCtx;

    const SR: f64 = 48_000.0;
    const POISON: u64 = 0x7FF8_DEAD_DEAD_DEAD;

    fn collector() -> Collector {
        Collector::new(GcConfig {
            pointer_heap_bytes: 64 << 10,
            atomic_heap_bytes: 64 << 10,
            root_slots: 16,
            snapshot_bandwidth: Some(1e9),
            full_snapshot_period: Duration::from_millis(20),
            full_snapshot_window: Duration::from_millis(20),
            // A grain freed while still sounding would be read back as NaN.
            poison: Some(POISON),
            ..GcConfig::default()
        })
        .unwrap()
    }

    /// Trigger signal with single-sample impulses at `at`.
    fn impulses(len: usize, at: &[usize]) -> Vec<f32> {
        let mut t = vec![0.0; len];
        for &i in at {
            t[i] = 1.0;
        }
        t
    }

    /// What a listener expects: a Hann-windowed sine of `len` samples starting at each onset.
    fn expected(total: usize, onsets: &[usize], freq: f64, len: usize, amp: f64) -> Vec<f64> {
        let mut y = vec![0.0; total];
        for &s in onsets {
            for k in 0..len.min(total - s) {
                let w = 0.5 - 0.5 * (std::f64::consts::TAU * k as f64 / len as f64).cos();
                y[s + k] += amp * w * (std::f64::consts::TAU * freq * k as f64 / SR).sin();
            }
        }
        y
    }

    #[test]
    fn grains_are_windowed_sines_at_each_trigger_and_overlap() {
        let onsets = [10, 100, 300, 302, 700];
        let total = 64 * 20;
        let mut h = UnitHarness::new("GrainCloud", Rate::Audio).inputs([
            TestInput::Audio(impulses(total, &onsets)),
            TestInput::Const(1000.0),
            TestInput::Const(0.01), // 480 samples: grains overlap and cross blocks
            TestInput::Const(0.5),
        ]);
        h.world.gc = Some(collector());
        let run = h.run_full(20);
        let want = expected(total, &onsets, 1000.0, 480, 0.5);
        for (i, (&y, &w)) in run.outputs[0].iter().zip(&want).enumerate() {
            assert!((y as f64 - w).abs() < 1e-4, "sample {i}: {y} vs {w}");
        }
        assert!(run.outputs[0].iter().any(|&y| y.abs() > 0.5), "overlapping grains add up");
        let mut world = run.world;
        // Statistics are published by between_blocks.
        between_blocks(&mut world, Instant::now());
        assert_eq!(world.gc.as_ref().unwrap().stats().allocations, onsets.len() as u64, "one object per grain");
    }

    #[test]
    fn without_a_collector_grain_cloud_is_silent_and_keeps_running() {
        let run = UnitHarness::new("GrainCloud", Rate::Audio)
            .inputs([
                TestInput::Audio(impulses(256, &[5, 90])),
                TestInput::Const(440.0),
                TestInput::Const(0.005),
                TestInput::Const(1.0),
            ])
            .run_full(4);
        assert!(run.outputs[0].iter().all(|&x| x == 0.0));
    }

    /// Drives one GrainCloud the way the engine does: block, then `between_blocks`.
    #[test]
    fn finished_grains_are_collected_while_sounding_ones_survive_collection() {
        let mut world = World::new(SR, 64, 8, 8, 1, 0, 1, 1);
        world.gc = Some(collector());
        let mut synth = SynthCtx::default();
        let blocks = 400;
        let total = blocks * 64;
        // A grain every 30 ms, each 20 ms long; the last one starts at block 190.
        let onsets: Vec<usize> = (0..9).map(|k| 40 + k * 1440).collect();
        let trig = impulses(total, &onsets);
        let mut wires = vec![0f32; 64 + 3 + 64];
        let ins = [
            WireRef { offset: 0, rate: Rate::Audio, from_unit: NO_UNIT },
            WireRef { offset: 64, rate: Rate::Scalar, from_unit: NO_UNIT },
            WireRef { offset: 65, rate: Rate::Scalar, from_unit: NO_UNIT },
            WireRef { offset: 66, rate: Rate::Scalar, from_unit: NO_UNIT },
        ];
        let outs = [WireRef { offset: 67, rate: Rate::Audio, from_unit: 0 }];
        wires[64..67].copy_from_slice(&[700.0, 0.02, 0.25]);
        let rate = world.full_rate;
        let mut done = [false];
        let spec = UnitSpec { name: "GrainCloud", rate: Rate::Audio, special_index: 0, num_inputs: 4, num_outputs: 1, lanes: 1 };
        let ctor = crate::registry::Registry::with_all().get("GrainCloud").unwrap();
        // SAFETY: `wires` holds every wire named above, without overlap between outputs and inputs.
        let mut io = unsafe { Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &ins, &outs, 64, 1) };
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        let mut unit = ctor(&spec, &mut io, &mut cx);
        let mut out = Vec::with_capacity(total);
        let mut max_live = 0;
        for b in 0..blocks {
            wires[..64].copy_from_slice(&trig[b * 64..(b + 1) * 64]);
            let t0 = Instant::now();
            // SAFETY: as above.
            let mut io = unsafe { Wires::new(wires.as_mut_ptr(), std::ptr::null_mut(), &ins, &outs, 64, 64) };
            let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
            unit.next(&mut io, &mut cx);
            out.extend_from_slice(&wires[67..131]);
            between_blocks(&mut world, t0);
            max_live = max_live.max(world.gc.as_ref().unwrap().stats().live_blocks);
            // Give the collector threads a moment, as an audio period would.
            std::thread::sleep(Duration::from_micros(150));
        }
        let want = expected(total, &onsets, 700.0, 960, 0.25);
        for i in 0..total {
            assert!((out[i] as f64 - want[i]).abs() < 1e-4, "sample {i}: {} vs {}", out[i], want[i]);
        }
        // Keep running silent blocks until every grain object has been reclaimed.
        let deadline = Instant::now() + Duration::from_secs(5);
        while world.gc.as_ref().unwrap().stats().pointer_live_bytes > 0 && Instant::now() < deadline {
            between_blocks(&mut world, Instant::now());
            std::thread::sleep(Duration::from_micros(300));
        }
        let s = world.gc.as_ref().unwrap().stats();
        assert_eq!(s.allocations, onsets.len() as u64, "one object per grain");
        assert_eq!(s.blocks_freed, onsets.len() as u64, "every ended grain was collected");
        assert_eq!(s.pointer_live_bytes, 0);
        assert!(max_live >= 1, "a sounding grain was alive across collections");
        let mut cx = UnitCtx::new(&mut world, &mut synth, &rate, &mut done, 0);
        unit.dtor(&mut cx);
        assert!(world.gc_claim_root().is_some());
    }
}
