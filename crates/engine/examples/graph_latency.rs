//! The graph's latency hot spots on the Supernova thesis's Listing 5.2 tree
//! (§5.3.3): synth creation, graph edits and the parallel group's DSP queue,
//! timed inside the engine, as the audio thread pays them.
//!
//! ```text
//! cargo run --release -p magnetar-engine --example graph_latency -- DEFS [--rounds 200] [--threads 2]
//! ```
//!
//! `DEFS` is a SynthDef file holding `small` and `big` (bench/graph_latency.py
//! writes one: 4 and 128 FSinOsc). Each round builds the tree of Listing 5.2
//! under a parallel group: section 1 (a group of a parallel group of 32 small
//! synths and one of 4 big), section 2 (a group of a group of 4 small and one
//! of 2 big), adding the 42 synths one by one in the listing's order with two
//! blocks after each (the first builds the new synth, the second compiles
//! the queue of the new tree); then moves synths between sections (a block
//! after each move), plays 50 blocks, and frees everything.
//!
//! As in the real-time server, the thread that runs the blocks allocates
//! from the real-time pool (64 MB here), not from the process heap.

use magnetar_engine::{OfflineEngine, EngineOptions};
use magnetar_protocol::{OscArg, OscMessage, PreparedMessage};
use magnetar_rt::histogram::Histogram;
use std::time::Instant;

#[global_allocator]
static ALLOC: magnetar_mem::RoutingAlloc<std::alloc::System> = magnetar_mem::RoutingAlloc::new(std::alloc::System);

fn msg(path: &str, args: &[OscArg]) -> OscMessage {
    OscMessage::new(path, args.to_vec())
}

fn i(v: i32) -> OscArg {
    OscArg::Int(v)
}

fn s(v: &str) -> OscArg {
    OscArg::Str(v.into())
}

/// Performs a message as the server does: prepared, then performed.
fn perform(e: &mut OfflineEngine, m: &OscMessage) -> Result<(), magnetar_engine::commands::CommandFailure> {
    e.perform(&PreparedMessage::new(m))
}

fn timed(e: &mut OfflineEngine, m: &OscMessage, h: &mut Histogram) {
    let t = Instant::now();
    perform(e, m).unwrap_or_else(|f| panic!("{}: {}", m.address, f.message()));
    h.record_duration(t.elapsed());
}

fn block(e: &mut OfflineEngine, h: &mut Histogram) {
    let t = Instant::now();
    e.run_block();
    h.record_duration(t.elapsed());
    e.advance_block_counter();
}

/// The machine's own share of the figures: a region that only spins for
/// `ns`, timed as the hot spots are, `count` times. Whatever interrupts or
/// pre-empts the thread lands in its maximum as it lands in theirs.
fn null_region(ns: u64, count: u64) -> Histogram {
    let mut h = Histogram::new();
    for _ in 0..count {
        let t = Instant::now();
        while (t.elapsed().as_nanos() as u64) < ns {
            std::hint::spin_loop();
        }
        h.record_duration(t.elapsed());
    }
    h
}

fn line(name: &str, h: &Histogram) {
    let us = |ns: u64| ns as f64 / 1000.0;
    println!(
        "{name}: count {} mean {:.3} p50 {:.3} p99 {:.3} p99.9 {:.3} max {:.3} us",
        h.count(),
        h.mean() / 1000.0,
        us(h.p50()),
        us(h.p99()),
        us(h.p999()),
        us(h.max())
    );
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let defs = argv.first().expect("usage: graph_latency DEFS [--rounds N] [--threads T]");
    let opt = |name: &str, default: usize| {
        argv.iter().position(|a| a == name).and_then(|k| argv.get(k + 1)).map_or(default, |v| v.parse().expect(name))
    };
    let (rounds, threads) = (opt("--rounds", 200), opt("--threads", 2));
    // Every group that may spread does: the threaded path's preparation is what is timed.
    let mut e = OfflineEngine::new(EngineOptions {
        sample_rate: 48_000.0,
        threads,
        seed: Some(1),
        parallel_measured: false,
        ..Default::default()
    });
    let bytes = std::fs::read(defs).expect("reading the SynthDef file");
    for r in e.add_synthdefs(&bytes).expect("a SynthDef file") {
        r.expect("a def the engine runs");
    }
    magnetar_mem::install_pool(64 << 20).expect("the real-time pool");
    // SAFETY: this is the only thread that enters the pool.
    unsafe { magnetar_mem::enter_pool() };
    let (mut s_new, mut edit, mut blocks, mut free) =
        (Histogram::new(), Histogram::new(), Histogram::new(), Histogram::new());
    // Section 1: group 10 holding parallel groups 11 (small) and 12 (big);
    // section 2: group 20 holding groups 21 (small) and 22 (big).
    let layout = [(11, "small", 32), (12, "big", 4), (21, "small", 4), (22, "big", 2)];
    for _ in 0..rounds {
        for m in [
            msg("/p_new", &[i(1), i(0), i(0)]),
            msg("/g_new", &[i(20), i(0), i(1)]),
            msg("/g_new", &[i(10), i(0), i(1)]),
            msg("/p_new", &[i(11), i(1), i(10)]),
            msg("/p_new", &[i(12), i(1), i(10)]),
            msg("/g_new", &[i(21), i(1), i(20)]),
            msg("/g_new", &[i(22), i(1), i(20)]),
        ] {
            perform(&mut e, &m).unwrap();
        }
        let mut id = 1000;
        for (group, def, count) in layout {
            // Small synths go to their group's head, big ones to its tail.
            let action = if def == "small" { 0 } else { 1 };
            for k in 0..count {
                id += 1;
                let m = msg("/s_new", &[s(def), i(id), i(action), i(group), s("freq"), OscArg::Float(100.0 + k as f32)]);
                timed(&mut e, &m, &mut s_new);
                // The first block builds the synth (its group runs in order
                // then); the second compiles the group's new queue.
                block(&mut e, &mut blocks);
                block(&mut e, &mut blocks);
            }
        }
        // Graph edits: small synths move between the sections and back.
        for k in 0..8 {
            let n = 1001 + k;
            for m in [msg("/g_tail", &[i(21), i(n)]), msg("/n_before", &[i(n), i(1001 + 16 + k)])] {
                timed(&mut e, &m, &mut edit);
                block(&mut e, &mut blocks);
            }
        }
        for _ in 0..50 {
            block(&mut e, &mut blocks);
        }
        timed(&mut e, &msg("/n_free", &[i(1)]), &mut free);
        block(&mut e, &mut blocks);
    }
    println!("threads {}; rounds {rounds}; parallel group runs spread {}", e.threads(), e.parallel_groups_run());
    line("s_new (command)", &s_new);
    line("synth construction (first block)", &e.latency.construct);
    line("graph edit (command)", &edit);
    line("parallel group preparation (every block)", &e.latency.parallel_prepare);
    if let Some(h) = e.queue_compile_times() {
        line("queue compilation", h);
        // As many regions, each as long as the mean compilation: the same
        // exposure to the machine.
        line("control: spin as long as a compilation", &null_region(h.mean() as u64, h.count()));
    }
    line("whole block", &blocks);
    line("n_free of the tree (command)", &free);
}
