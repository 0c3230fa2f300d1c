//! What fault containment costs a synth that does not fail: the same synths
//! run block after block through `Synth::calc` (no guard) and
//! `Synth::calc_contained` (`catch_unwind` around the synth), interleaved
//! in rounds so that both see the same machine.
//!
//! ```text
//! cargo run --release -p magnetar-engine --example contain_cost -- [rounds]
//! ```
//!
//! The synth is the cheapest the guard surrounds in practice (one SinOsc
//! into Out, 64-sample blocks), so the guard's share is as large as it gets.

use magnetar_engine::compile_synthdefs;
use magnetar_engine::synth::Synth;
use magnetar_ugens::{Registry, World};
use std::sync::Arc;
use std::time::Instant;

fn def_bytes() -> Vec<u8> {
    let mut b = b"SCgf".to_vec();
    b.extend_from_slice(&2i32.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.push(4);
    b.extend_from_slice(b"sine");
    b.extend_from_slice(&2i32.to_be_bytes()); // constants
    b.extend_from_slice(&440f32.to_be_bytes());
    b.extend_from_slice(&0f32.to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes()); // controls
    b.extend_from_slice(&0i32.to_be_bytes()); // names
    b.extend_from_slice(&2i32.to_be_bytes()); // units
    // SinOsc.ar(440, 0)
    b.push(6);
    b.extend_from_slice(b"SinOsc");
    b.push(2);
    b.extend_from_slice(&2i32.to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    for (u, o) in [(-1, 0), (-1, 1)] {
        b.extend_from_slice(&i32::to_be_bytes(u));
        b.extend_from_slice(&i32::to_be_bytes(o));
    }
    b.push(2);
    // Out.ar(0, sine)
    b.push(3);
    b.extend_from_slice(b"Out");
    b.push(2);
    b.extend_from_slice(&2i32.to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    for (u, o) in [(-1, 1), (0, 0)] {
        b.extend_from_slice(&i32::to_be_bytes(u));
        b.extend_from_slice(&i32::to_be_bytes(o));
    }
    b.extend_from_slice(&0i16.to_be_bytes());
    b
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    const SYNTHS: usize = 256;
    const BLOCKS: usize = 200;
    let block = 64;
    let registry = Registry::with_all();
    let def = compile_synthdefs(&def_bytes(), &registry, block).expect("a valid file").remove(0).expect("a valid def");
    let def = Arc::new(def);
    let mut world = World::new(48_000.0, block, 128, 4096, 16, 2, 2, 0);
    let mut scratch = vec![0.0f32; def.scratch_len.max(1)];
    let mut synths: Vec<Synth> = (0..SYNTHS).map(|k| Synth::new(Arc::clone(&def), k as i32, 0, 0.0)).collect();
    for s in &mut synths {
        s.construct(&mut world, &mut scratch);
    }
    let mut plain = Vec::new();
    let mut guarded = Vec::new();
    for _ in 0..rounds {
        for guard in [false, true] {
            let t = Instant::now();
            for _ in 0..BLOCKS {
                for s in &mut synths {
                    if guard {
                        assert!(s.calc_contained(&mut world, &mut scratch));
                    } else {
                        s.calc(&mut world, &mut scratch);
                    }
                }
                world.buf_counter = world.buf_counter.wrapping_add(1);
            }
            let ns = t.elapsed().as_nanos() as f64 / (BLOCKS * SYNTHS) as f64;
            if guard { guarded.push(ns) } else { plain.push(ns) }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let (p, g) = (median(&mut plain), median(&mut guarded));
    println!("ns per synth block, median of {rounds} rounds of {BLOCKS} blocks x {SYNTHS} synths:");
    println!("  calc           {p:.1}");
    println!("  calc_contained {g:.1}  ({:+.1} %)", 100.0 * (g - p) / p);
}
