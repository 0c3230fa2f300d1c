//! Random node trees render the same samples on one, two and four threads:
//! random mixes of defs (voices whose steps run in lane batches, sines,
//! bus readers), sequential and parallel groups nested in each other, buses
//! shared by many writers and buses of one writer, compared bus by bus, bit
//! for bit, every block. Each tree runs with the engine choosing between
//! threads and one thread block by block (the default) and with every group
//! that may spread spread.

mod common;

use common::{def_bytes, i, reader_def, Rng, PerformOsc};
use magnetar_engine::{OfflineEngine, EngineOptions};
use magnetar_protocol::{OscArg, OscMessage};

const AUDIO_BUSES: usize = 96;
const BLOCKS: usize = 240;

/// "voice": `Out.ar(out, RLPF.ar(Saw.ar(freq) + Pulse.ar(freq * 1.01, 0.3), cutoff, 0.5) * amp)`:
/// Saw, Pulse and RLPF have lane kernels, so voices of it run side by side.
fn voice_def() -> Vec<u8> {
    def_bytes(
        "voice",
        &[1.01, 0.3, 0.5],
        &[("freq", 200.0), ("out", 0.0), ("amp", 0.1), ("cutoff", 1500.0)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("Saw", 2, &[(0, 0)], &[2], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 0)], &[1], 2),
            ("Pulse", 2, &[(2, 0), (-1, 1)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (3, 0)], &[2], 0),
            ("RLPF", 2, &[(4, 0), (0, 3), (-1, 2)], &[2], 0),
            ("BinaryOpUGen", 2, &[(5, 0), (0, 2)], &[2], 2),
            ("Out", 2, &[(0, 1), (6, 0)], &[], 0),
        ],
    )
}

fn engine(threads: usize, measured: bool) -> OfflineEngine {
    engine_with(threads, measured, false)
}

/// `never`: every parallel group on one thread, with the helpers started.
fn engine_with(threads: usize, measured: bool, never: bool) -> OfflineEngine {
    let mut e = OfflineEngine::new(EngineOptions {
        sample_rate: 48_000.0,
        block_size: 64,
        num_audio_buses: AUDIO_BUSES,
        num_control_buses: 64,
        num_buffers: 4,
        num_input_channels: 2,
        num_output_channels: 2,
        threads,
        seed: Some(11),
        parallel_measured: measured,
        parallel_never: never,
        ..Default::default()
    });
    let sine = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../synthdef/tests/fixtures/sine.scsyndef")).unwrap();
    for def in [sine, voice_def(), reader_def()] {
        assert!(e.add_synthdefs(&def).unwrap().iter().all(|r| r.is_ok()));
    }
    e
}

/// A bus to write: one of a few shared by many writers, or one of its own.
fn out_bus(r: &mut Rng, id: i32) -> f32 {
    if r.below(2) == 0 {
        r.below(4) as f32
    } else {
        (8 + id % 80) as f32
    }
}

/// One synth of a random def in `group`.
fn synth(r: &mut Rng, id: i32, group: i32, def: Option<&str>) -> OscMessage {
    let def = def.unwrap_or(match r.below(6) {
        0..=2 => "voice",
        3 | 4 => "sine",
        _ => "reader",
    });
    let mut args = vec![
        OscArg::Str(def.into()),
        i(id),
        i(1),
        i(group),
        OscArg::Str("freq".into()),
        OscArg::Float(60.0 + r.below(1500) as f32),
        OscArg::Str("out".into()),
        OscArg::Float(out_bus(r, id)),
        OscArg::Str("amp".into()),
        OscArg::Float(0.01 * (1 + r.below(9)) as f32),
    ];
    if def == "reader" {
        // Mostly a bus some other synth may write.
        args.extend([OscArg::Str("in".into()), OscArg::Float(r.below(AUDIO_BUSES as u64) as f32)]);
    }
    if def == "voice" {
        args.extend([OscArg::Str("cutoff".into()), OscArg::Float(300.0 + r.below(4000) as f32)]);
    }
    OscMessage::new("/s_new", args)
}

/// Fills `group` with random children: synths, runs of identical voices
/// (lane batches), and groups of either kind holding more of the same.
fn fill(r: &mut Rng, next_id: &mut i32, group: i32, depth: usize, out: &mut Vec<OscMessage>) {
    for _ in 0..1 + r.below(6) {
        *next_id += 1;
        let id = *next_id;
        match r.below(8) {
            0 | 1 if depth < 3 => {
                let cmd = if r.below(2) == 0 { "/p_new" } else { "/g_new" };
                out.push(OscMessage::new(cmd, vec![i(id), i(1), i(group)]));
                fill(r, next_id, id, depth + 1, out);
            }
            2 | 3 => {
                // A run of identical voices, on one shared bus or each on its own.
                let shared = r.below(2) == 0;
                let bus = r.below(4) as f32;
                for _ in 0..4 + r.below(40) {
                    *next_id += 1;
                    let mut m = synth(r, *next_id, group, Some("voice"));
                    if shared {
                        m.args[7] = OscArg::Float(bus);
                    }
                    out.push(m);
                }
            }
            _ => out.push(synth(r, id, group, None)),
        }
    }
}

/// One random tree under a parallel group at the root.
fn random_tree(seed: u64) -> Vec<OscMessage> {
    let mut r = Rng(seed);
    let mut next_id = 1;
    let mut out = vec![OscMessage::new("/p_new", vec![i(1), i(0), i(0)])];
    fill(&mut r, &mut next_id, 1, 0, &mut out);
    // Now and then a second top-level group after it, reading what the first wrote.
    if r.below(2) == 0 {
        next_id += 1;
        out.push(OscMessage::new("/p_new", vec![i(next_id), i(1), i(0)]));
        let g = next_id;
        fill(&mut r, &mut next_id, g, 1, &mut out);
    }
    out
}

/// Renders the tree on every engine and requires every audio bus to hold
/// the same samples in every block.
fn render_alike(seed: u64, engines: &mut [(String, OfflineEngine)]) {
    let tree = random_tree(seed);
    for (_, e) in engines.iter_mut() {
        for m in &tree {
            e.perform_message(m).unwrap();
        }
    }
    let bs = engines[0].1.world.block_size;
    let mut sound = false;
    for block in 0..BLOCKS {
        for (_, e) in engines.iter_mut() {
            e.run_block();
        }
        let (first, rest) = engines.split_first().unwrap();
        let a = &first.1.world;
        for bus in 0..AUDIO_BUSES {
            let touched = a.audio_touched[bus] == a.buf_counter;
            let x = &a.audio_bus[bus * bs..(bus + 1) * bs];
            sound |= touched && x.iter().any(|&v| v != 0.0);
            for (name, e) in rest {
                let b = &e.world;
                assert_eq!(touched, b.audio_touched[bus] == b.buf_counter, "tree {seed:#x}, block {block}: bus {bus} written by {} or {name} only", first.0);
                if touched {
                    let y = &b.audio_bus[bus * bs..(bus + 1) * bs];
                    assert!(
                        x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
                        "tree {seed:#x}, block {block}: bus {bus} differs between {} and {name}",
                        first.0
                    );
                }
            }
        }
        for (_, e) in engines.iter_mut() {
            e.advance_block_counter();
        }
    }
    assert!(sound, "tree {seed:#x} makes no sound");
}

#[test]
fn random_trees_render_the_same_samples_on_one_two_and_four_threads() {
    let mut spread = 0;
    for seed in 1..=8u64 {
        let seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut engines = vec![
            ("-T 1".to_string(), engine(1, true)),
            ("-T 2".to_string(), engine(2, true)),
            ("-T 2, every group spread".to_string(), engine(2, false)),
            ("-T 2, every group on one thread".to_string(), engine_with(2, true, true)),
            ("-T 4".to_string(), engine(4, true)),
            ("-T 4, every group spread".to_string(), engine(4, false)),
        ];
        assert_eq!(engines[2].1.threads(), 2, "the test needs helper threads");
        render_alike(seed, &mut engines);
        assert_eq!(engines[3].1.parallel_groups_run(), 0, "tree {seed:#x}: a group spread with MAGNETAR_SPREAD=never");
        spread += engines[2].1.parallel_groups_run() + engines[5].1.parallel_groups_run();
    }
    assert!(spread > BLOCKS as u64, "the trees' groups ran on several threads in only {spread} blocks");
}

/// A parallel group's voices of one def go to the threads in items of whole
/// lane batches: a lane kernel computes eight lanes in the time of one, so
/// seventeen voices on two threads are three items (eight, eight and one),
/// not five of four, which would compute twice the kernels' work. Fewer
/// voices than eight per thread still give every thread an item.
#[test]
fn voices_of_one_def_go_to_the_threads_in_items_of_eight_lanes() {
    for (voices, items) in [(17, 3), (32, 4), (40, 5), (4, 4)] {
        let mut e = engine(2, false);
        e.perform_message(&OscMessage::new("/p_new", vec![i(1), i(0), i(0)])).unwrap();
        let mut r = Rng(5);
        for k in 0..voices {
            e.perform_message(&synth(&mut r, 100 + k, 1, Some("voice"))).unwrap();
        }
        // The first block builds the synths, in order; the group is
        // prepared for the threads from the second on.
        e.run_block();
        e.advance_block_counter();
        let group = e.tree.lookup(1).unwrap();
        let mut jobs = magnetar_engine::parallel::GroupJobs::new(AUDIO_BUSES, 64, 4);
        assert!(jobs.prepare(&mut e.tree, group, 1 << 16, 2), "{voices} voices may spread");
        assert_eq!(jobs.items(), items, "{voices} voices");
    }
}
