//! With one thread, a parallel group of chains (groups of a voice and an
//! effect reading it) runs them place by place: the voices side by side,
//! then the effects. It must render what chain after chain renders, bit for
//! bit, block after block, while buses are set so that chains share them
//! (and then run chain after chain), synths are freed and paused and new
//! chains join; so must a parallel group that runs on one of two threads
//! (place by place too) and one spread on both.

mod common;

use common::{def_bytes, engine_with_defs, f, i, reader_def, s, PerformOsc, Rng};
use magnetar_engine::OfflineEngine;
use magnetar_protocol::OscMessage;

const AUDIO_BUSES: usize = 64;
const BLOCKS: usize = 300;

/// "voice": `Out.ar(bus, RLPF.ar(Saw.ar(freq), freq * 6, 0.3))`.
fn voice_def() -> Vec<u8> {
    def_bytes(
        "voice",
        &[0.3, 6.0],
        &[("freq", 100.0), ("bus", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("Saw", 2, &[(0, 0)], &[2], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 1)], &[1], 2),
            ("RLPF", 2, &[(1, 0), (2, 0), (-1, 0)], &[2], 0),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

/// An engine with lane batches (and chains place by place) or without, on
/// one thread or two: with `one_way`, parallel groups run on one thread
/// (as the chooser may have them), else on the threads every block.
fn engine(lockstep: bool, threads: usize, one_way: bool) -> OfflineEngine {
    engine_with_defs(threads, lockstep, AUDIO_BUSES, &[voice_def(), reader_def()], |o| {
        o.parallel_never = one_way
    })
}

/// Chain `k`: group `100 + k` in parallel group 1, a voice on bus `2 + k`
/// and an effect reading it into bus 0.
fn new_chain(r: &mut Rng, k: i32) -> Vec<OscMessage> {
    let m = OscMessage::new;
    vec![
        m("/g_new", vec![i(100 + k), i(1), i(1)]),
        m(
            "/s_new",
            vec![
                s("voice"),
                i(1000 + k),
                i(1),
                i(100 + k),
                s("freq"),
                f(60.0 + r.below(900) as f32),
                s("bus"),
                f((2 + k) as f32),
            ],
        ),
        m("/s_new", vec![s("reader"), i(2000 + k), i(1), i(100 + k), s("in"), f((2 + k) as f32), s("out"), f(0.0)]),
    ]
}

/// A change between blocks: buses that make chains share one, frees,
/// pauses, new chains.
fn edit(r: &mut Rng, chains: &mut i32) -> Vec<OscMessage> {
    let m = OscMessage::new;
    let k = r.below(*chains as u64) as i32;
    let other = 2 + r.below(*chains as u64) as i32;
    match r.below(10) {
        0 => vec![m("/n_set", vec![i(1000 + k), s("bus"), f(other as f32)])],
        1 => vec![m("/n_set", vec![i(2000 + k), s("in"), f(other as f32)])],
        2 => vec![m("/n_set", vec![i(2000 + k), s("out"), f(r.below(3) as f32)])],
        3 => vec![
            m("/n_set", vec![i(1000 + k), s("bus"), f((2 + k) as f32)]),
            m("/n_set", vec![i(2000 + k), s("in"), f((2 + k) as f32)]),
        ],
        4 => vec![m("/n_set", vec![i(1000 + k), s("freq"), f(60.0 + r.below(900) as f32)])],
        5 => vec![m("/n_run", vec![i(1000 + k), i(r.below(2) as i32)])],
        6 if r.below(4) == 0 => vec![m("/n_free", vec![i(2000 + k)])],
        7 if *chains < 40 => {
            *chains += 1;
            new_chain(r, *chains - 1)
        }
        _ => Vec::new(),
    }
}

#[test]
fn chains_place_by_place_render_as_chain_after_chain() {
    for seed in 1..=4u64 {
        let mut engines =
            [engine(false, 1, false), engine(true, 1, false), engine(true, 2, true), engine(true, 2, false)];
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut chains = 20;
        let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(0), i(0)])];
        for k in 0..chains {
            setup.extend(new_chain(&mut r, k));
        }
        let mut sound = 0;
        for block in 0..BLOCKS {
            // Quiet stretches let the place-by-place order run for a while.
            let messages = if block == 0 {
                std::mem::take(&mut setup)
            } else if block % 50 < 25 {
                (0..r.below(3)).flat_map(|_| edit(&mut r, &mut chains)).collect()
            } else {
                Vec::new()
            };
            for msg in &messages {
                let answers: Vec<_> =
                    engines.iter_mut().map(|e| e.perform_message(msg).map_err(|f| f.message())).collect();
                assert!(answers.windows(2).all(|w| w[0] == w[1]), "{msg:?}: {answers:?}");
            }
            for e in engines.iter_mut() {
                e.run_block();
            }
            sound += compare_buses(&engines, seed, block);
            for e in engines.iter_mut() {
                e.advance_block_counter();
            }
        }
        assert!(sound > BLOCKS, "seed {seed}: too little sound to compare ({sound})");
    }
}

/// Compares every bus the first engine wrote this block with the others',
/// bit for bit; how many of them hold sound.
fn compare_buses(engines: &[OfflineEngine], seed: u64, block: usize) -> usize {
    let mut sound = 0;
    let bs = engines[0].world.block_size;
    let a = &engines[0].world;
    for bus in 0..AUDIO_BUSES {
        let touched = a.audio_touched[bus] == a.buf_counter;
        let x = &a.audio_bus[bus * bs..(bus + 1) * bs];
        if touched && x.iter().any(|&v| v != 0.0) {
            sound += 1;
        }
        for (e, other) in engines[1..].iter().enumerate() {
            let b = &other.world;
            assert_eq!(
                touched,
                b.audio_touched[bus] == b.buf_counter,
                "seed {seed}, block {block}: bus {bus}, engine {}",
                e + 1
            );
            let y = &b.audio_bus[bus * bs..(bus + 1) * bs];
            assert!(
                !touched || x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
                "seed {seed}, block {block}: bus {bus} differs in engine {}",
                e + 1
            );
        }
    }
    sound
}

/// On two threads a group of 32 chains runs as four items of eight chains,
/// each place by place, and renders what chain after chain renders; when
/// a voice writes the bus the effects sum into (which no synth reads, so
/// the group still spreads), the place-by-place order would add it ahead
/// of the earlier chains' effects: the items then hold a chain each.
#[test]
fn chains_in_items_of_several_render_as_chain_after_chain() {
    const CHAINS: i32 = 32;
    let mut engines = [engine(false, 1, false), engine(true, 2, false), engine(true, 2, true)];
    let mut r = Rng(0x5EED_0C4A_1235);
    let mut messages = vec![OscMessage::new("/p_new", vec![i(1), i(0), i(0)])];
    for k in 0..CHAINS {
        messages.extend(new_chain(&mut r, k));
    }
    let mut sound = 0;
    for block in 0..120 {
        if block == 40 {
            // Voice 10 into bus 0, beside every effect; effect 10 hears
            // its own bus, now silent.
            messages.push(OscMessage::new("/n_set", vec![i(1010), s("bus"), f(0.0)]));
        } else if block == 80 {
            messages.push(OscMessage::new("/n_set", vec![i(1010), s("bus"), f(12.0)]));
        }
        for msg in messages.drain(..) {
            for e in engines.iter_mut() {
                e.perform_message(&msg).unwrap();
            }
        }
        for e in engines.iter_mut() {
            e.run_block();
        }
        sound += compare_buses(&engines, 0, block);
        // The first block builds the synths, on one thread.
        if block > 0 {
            let expected = if (40..80).contains(&block) { CHAINS as usize } else { 4 };
            assert_eq!(engines[1].parallel_items_last(), expected, "block {block}: items");
        }
        for e in engines.iter_mut() {
            e.advance_block_counter();
        }
    }
    assert!(sound > 120, "too little sound to compare ({sound})");
}
