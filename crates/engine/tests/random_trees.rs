//! Random node trees render the same samples on one, two and four threads:
//! random mixes of defs (voices whose steps run in lane batches, sines,
//! bus readers), sequential and parallel groups nested in each other, buses
//! shared by many writers and buses of one writer, compared bus by bus, bit
//! for bit, every block. Each tree runs with the engine choosing between
//! threads and one thread block by block (the default) and with every group
//! that may spread spread.

mod common;

use common::{def_bytes, engine_with_defs, i, perform_alike, reader_def, run_block_alike, sine_def, PerformOsc, Rng};
use magnetar_engine::OfflineEngine;
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
    engine_with_defs(threads, true, AUDIO_BUSES, &[sine_def(), voice_def(), reader_def()], |o| {
        o.num_control_buses = 64;
        o.seed = Some(11);
        o.parallel_measured = measured;
        o.parallel_never = never;
    })
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
    perform_on_all(engines, &tree);
    let mut sound = false;
    for block in 0..BLOCKS {
        sound |= block_alike(&format!("tree {seed:#x}"), block, engines);
    }
    assert!(sound, "tree {seed:#x} makes no sound");
}

/// Performs the same messages on every engine; they must answer alike.
fn perform_on_all(engines: &mut [(String, OfflineEngine)], messages: &[OscMessage]) {
    for m in messages {
        perform_alike(engines, m);
    }
}

/// Runs one block on every engine and requires every audio bus to be
/// written alike, bit for bit; true if the first engine wrote a sound.
fn block_alike(what: &str, block: usize, engines: &mut [(String, OfflineEngine)]) -> bool {
    run_block_alike(&format!("{what}, block {block}"), engines, AUDIO_BUSES) > 0
}

#[test]
fn random_trees_render_the_same_samples_on_one_two_and_four_threads() {
    let mut spread = 0;
    for seed in 1..=8u64 {
        let seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut synth_by_synth = engine(1, true);
        synth_by_synth.lockstep = false;
        let mut engines = vec![
            ("-T 1".to_string(), engine(1, true)),
            ("-T 1, no lane batches".to_string(), synth_by_synth),
            ("-T 2".to_string(), engine(2, true)),
            ("-T 2, every group spread".to_string(), engine(2, false)),
            ("-T 2, every group on one thread".to_string(), engine_with(2, true, true)),
            ("-T 4".to_string(), engine(4, true)),
            ("-T 4, every group spread".to_string(), engine(4, false)),
        ];
        assert_eq!(engines[3].1.threads(), 2, "the test needs helper threads");
        render_alike(seed, &mut engines);
        assert_eq!(engines[4].1.parallel_groups_run(), 0, "tree {seed:#x}: a group spread with MAGNETAR_SPREAD=never");
        spread += engines[3].1.parallel_groups_run() + engines[6].1.parallel_groups_run();
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

/// Bus controls changed between blocks (`/n_set`, `/n_setn`, `/n_fill`, on
/// a synth or on a group) while the tree keeps its shape: each engine moves
/// the writes and reads with them from the next block on, and the buses a
/// work item writes in place follow. The same random trees as above, with
/// a few synths moved to another bus every few blocks: onto the shared
/// buses, onto a bus another synth writes, onto one of their own, and
/// readers onto any bus.
#[test]
fn bus_controls_changed_between_blocks_render_the_same_samples_on_one_two_and_four_threads() {
    let mut spread = 0;
    for seed in 1..=6u64 {
        let seed = seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
        let mut synth_by_synth = engine(1, true);
        synth_by_synth.lockstep = false;
        let mut engines = vec![
            ("-T 1".to_string(), engine(1, true)),
            ("-T 1, no lane batches".to_string(), synth_by_synth),
            ("-T 2".to_string(), engine(2, true)),
            ("-T 2, every group spread".to_string(), engine(2, false)),
            ("-T 4, every group spread".to_string(), engine(4, false)),
        ];
        assert_eq!(engines[4].1.threads(), 4, "the test needs helper threads");
        let tree = random_tree(seed);
        perform_on_all(&mut engines, &tree);
        // (id, def, bus it writes) of every synth, and the groups.
        let mut synths: Vec<(i32, String, f32)> = Vec::new();
        let mut groups = Vec::new();
        for m in &tree {
            match (m.address.as_name().unwrap_or(""), &m.args[..]) {
                ("/s_new", [OscArg::Str(def), OscArg::Int(id), _, _, _, _, _, OscArg::Float(out), ..]) => {
                    synths.push((*id, def.clone(), *out))
                }
                (_, [OscArg::Int(id), ..]) => groups.push(*id),
                _ => {}
            }
        }
        let mut r = Rng(seed ^ 0x5A5A);
        let what = format!("tree {seed:#x} with moves");
        for block in 0..BLOCKS {
            if block % 6 == 5 {
                let mut moves = Vec::new();
                for _ in 0..1 + r.below(3) {
                    let k = r.below(synths.len() as u64) as usize;
                    let (id, reader) = (synths[k].0, synths[k].1 == "reader");
                    let bus = match r.below(4) {
                        0 => r.below(4) as f32,
                        1 => synths[r.below(synths.len() as u64) as usize].2,
                        2 => (8 + r.below(80)) as f32,
                        _ => r.below(AUDIO_BUSES as u64) as f32,
                    };
                    let (target, control) = if r.below(12) == 0 {
                        (groups[r.below(groups.len() as u64) as usize], "out")
                    } else if reader && r.below(2) == 0 {
                        (id, "in")
                    } else {
                        synths[k].2 = bus;
                        (id, "out")
                    };
                    let control = OscArg::Str(control.into());
                    moves.push(match r.below(3) {
                        0 => OscMessage::new("/n_set", vec![i(target), control, OscArg::Float(bus)]),
                        1 => OscMessage::new("/n_setn", vec![i(target), control, i(1), OscArg::Float(bus)]),
                        // scsynth sets the range once more to the value after a fill (see `set` below).
                        _ => OscMessage::new("/n_fill", vec![i(target), control, i(1), OscArg::Float(bus), OscArg::Float(bus)]),
                    });
                }
                perform_on_all(&mut engines, &moves);
            }
            block_alike(&what, block, &mut engines);
        }
        spread += engines[3].1.parallel_groups_run() + engines[4].1.parallel_groups_run();
    }
    assert!(spread > BLOCKS as u64, "the trees' groups ran on several threads in only {spread} blocks");
}

/// Engines at -T 1, 2 and 4, the last two spreading every group that may.
fn spreading_engines() -> Vec<(String, OfflineEngine)> {
    let engines = vec![
        ("-T 1".to_string(), engine(1, false)),
        ("-T 2".to_string(), engine(2, false)),
        ("-T 4".to_string(), engine(4, false)),
    ];
    assert_eq!(engines[2].1.threads(), 4, "the test needs helper threads");
    engines
}

fn new_synth(def: &str, id: i32, target: i32, controls: &[(&str, f32)]) -> OscMessage {
    let mut args = vec![OscArg::Str(def.into()), i(id), i(1), i(target)];
    for (name, v) in controls {
        args.extend([OscArg::Str((*name).into()), OscArg::Float(*v)]);
    }
    OscMessage::new("/s_new", args)
}

/// Performs `messages` on every engine, then runs `blocks` blocks alike on
/// all; returns the fewest group runs a threaded engine spread meanwhile.
fn phase(engines: &mut [(String, OfflineEngine)], what: &str, messages: &[OscMessage], blocks: usize) -> u64 {
    perform_on_all(engines, messages);
    let before: Vec<u64> = engines.iter().map(|(_, e)| e.parallel_groups_run()).collect();
    for block in 0..blocks {
        block_alike(what, block, engines);
    }
    engines.iter().zip(&before).skip(1).map(|((_, e), b)| e.parallel_groups_run() - b).min().unwrap_or(0)
}

/// A parallel group of voices on buses of their own (each written in place
/// by its work item), a voice-into-reader chain, and a reader of a bus
/// nothing writes; bus controls changed between blocks move reads and
/// writes onto and off the buses written in place. Every engine renders
/// what one thread renders, the group spreading in every block: a child
/// that reads what an earlier one writes waits for it, one that writes
/// what an earlier one read is heard by no one before the group ends.
#[test]
fn reads_and_writes_moved_onto_and_off_buses_written_in_place_match_one_thread() {
    let mut engines = spreading_engines();
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(0), i(0)])];
    for k in 0..16 {
        setup.push(new_synth("voice", 100 + k, 1, &[("freq", 110.0 + 37.0 * k as f32), ("out", 20.0 + k as f32)]));
    }
    setup.push(OscMessage::new("/g_new", vec![i(2), i(1), i(1)]));
    setup.push(new_synth("voice", 200, 2, &[("freq", 70.0), ("out", 40.0)]));
    setup.push(new_synth("reader", 201, 2, &[("in", 40.0), ("out", 0.0)]));
    setup.push(new_synth("reader", 300, 1, &[("in", 60.0), ("out", 1.0)]));
    let (blocks, first) = (60, 5);
    let set = |cmd: &str, id: i32, control: &str, bus: f32| {
        let mut args = vec![i(id), OscArg::Str(control.into())];
        if cmd != "/n_set" {
            args.push(i(1));
        }
        args.push(OscArg::Float(bus));
        if cmd == "/n_fill" {
            // scsynth reads one more value after a fill and sets the range to it too.
            args.push(OscArg::Float(bus));
        }
        OscMessage::new(cmd, args)
    };
    let spread = phase(&mut engines, "voices on buses of their own", &setup, blocks);
    assert!(spread + first >= blocks as u64, "the group spreads ({spread} of {blocks} blocks)");

    let what = "a reader moved onto a bus a sibling writes in place";
    assert_eq!(phase(&mut engines, what, &[set("/n_set", 300, "in", 25.0)], blocks), blocks as u64, "{what}: the group spreads");
    let heard = &engines[0].1.world.audio_bus[64..128];
    assert!(heard.iter().any(|&x| x != 0.0), "the reader passes voice 105 on to output 1");
    let what = "the reader moved back";
    assert_eq!(phase(&mut engines, what, &[set("/n_setn", 300, "in", 61.0)], blocks), blocks as u64, "{what}: the group spreads");

    let what = "a voice moved onto the bus the chain's reader reads";
    assert_eq!(phase(&mut engines, what, &[set("/n_fill", 107, "out", 40.0)], blocks), blocks as u64, "{what}: the group spreads");
    let what = "the voice moved back";
    assert_eq!(phase(&mut engines, what, &[set("/n_set", 107, "out", 27.0)], blocks), blocks as u64, "{what}: the group spreads");

    let what = "two voices moved onto the bus another item writes in place";
    let moves = [set("/n_set", 110, "out", 20.0), set("/n_setn", 115, "out", 20.0)];
    assert_eq!(phase(&mut engines, what, &moves, blocks), blocks as u64, "{what}: the group spreads");
    let what = "a voice moved off its own bus onto the output the chain writes";
    assert_eq!(phase(&mut engines, what, &[set("/n_fill", 103, "out", 0.0)], blocks), blocks as u64, "{what}: the group spreads");
    let what = "the voice that had bus 20 to itself moved onto a bus of its own";
    assert_eq!(phase(&mut engines, what, &[set("/n_set", 100, "out", 50.0)], blocks), blocks as u64, "{what}: the group spreads");
    let what = "every synth moved onto one bus by a setting on the group";
    assert_eq!(phase(&mut engines, what, &[set("/n_set", 1, "out", 30.0)], blocks), blocks as u64, "{what}: the group spreads");
    let what = "each voice back on a bus of its own";
    let moves: Vec<_> = (0..16).map(|k| set("/n_set", 100 + k, "out", 20.0 + k as f32)).collect();
    assert_eq!(phase(&mut engines, what, &moves, blocks), blocks as u64, "{what}: the group spreads");
}

/// On one thread, a lane batch of voices runs on where a sequential run
/// goes next: into the first child of a sequential group after them, and
/// out of a group after its last child. What it renders is what synth after
/// synth renders, bit for bit, block after block, while a group is paused
/// and resumed, its first voices freed (a reader then comes first) and
/// replaced by a new one. A reader, a paused group and a parallel group
/// stop a run.
#[test]
fn a_lane_batch_runs_on_into_and_out_of_sequential_groups() {
    let mut synth_by_synth = engine(1, true);
    synth_by_synth.lockstep = false;
    let mut engines = vec![("lane batches".to_string(), engine(1, true)), ("synth by synth".to_string(), synth_by_synth)];
    let voice = |id: i32, target: i32, out: f32| new_synth("voice", id, target, &[("freq", 50.0 + 13.0 * id as f32), ("out", out)]);
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(0), i(0)])];
    // Batch A: voices on buses of their own and on a shared one, on into
    // group 2, whose reader then hears its first voice.
    for k in 0..5 {
        setup.push(voice(100 + k, 1, if k % 2 == 0 { 0.0 } else { 10.0 + k as f32 }));
    }
    setup.push(OscMessage::new("/g_new", vec![i(2), i(1), i(1)]));
    setup.push(voice(200, 2, 40.0));
    setup.push(voice(201, 2, 0.0));
    setup.push(new_synth("reader", 202, 2, &[("in", 40.0), ("out", 1.0)]));
    // Voices 300..302 stop at group 3's reader. Batch B: group 3's last
    // voice, out of it into group 6, into group 8 in that, out of both to
    // the voices after group 6, up to parallel group 5.
    for k in 0..3 {
        setup.push(voice(300 + k, 1, 20.0 + k as f32));
    }
    setup.push(OscMessage::new("/g_new", vec![i(3), i(1), i(1)]));
    setup.push(new_synth("reader", 400, 3, &[("in", 22.0), ("out", 0.0)]));
    setup.push(voice(401, 3, 1.0));
    setup.push(OscMessage::new("/g_new", vec![i(6), i(1), i(1)]));
    setup.push(voice(700, 6, 0.0));
    setup.push(OscMessage::new("/g_new", vec![i(8), i(1), i(6)]));
    setup.push(voice(701, 8, 41.0));
    setup.push(voice(702, 1, 1.0));
    setup.push(voice(703, 1, 42.0));
    setup.push(OscMessage::new("/p_new", vec![i(5), i(1), i(1)]));
    setup.push(voice(600, 5, 0.0));
    setup.push(new_synth("reader", 601, 1, &[("in", 41.0), ("out", 1.0)]));
    let blocks = 40u64;
    let run = |engines: &mut Vec<(String, OfflineEngine)>, what: &str, messages: &[OscMessage]| {
        perform_on_all(engines, messages);
        let before = engines[0].1.lane_group_crossings();
        for block in 0..blocks as usize {
            block_alike(what, block, engines);
        }
        assert_eq!(engines[1].1.lane_group_crossings(), 0, "{what}: no batches synth by synth");
        engines[0].1.lane_group_crossings() - before
    };
    // Batch A enters one group, B leaves one, enters two and leaves both.
    // In its first block a synth is built alone: no batches then.
    assert_eq!(run(&mut engines, "batches A and B", &setup), 6 * (blocks - 1));
    let pause = OscMessage::new("/n_run", vec![i(2), i(0)]);
    assert_eq!(run(&mut engines, "group 2 paused", &[pause]), 5 * blocks, "a paused group is not entered");
    let resume = OscMessage::new("/n_run", vec![i(2), i(1)]);
    assert_eq!(run(&mut engines, "group 2 resumed", &[resume]), 6 * blocks);
    let free = [OscMessage::new("/n_free", vec![i(200)]), OscMessage::new("/n_free", vec![i(201)])];
    assert_eq!(run(&mut engines, "group 2 starting with its reader", &free), 5 * blocks, "a reader stops batch A");
    let at_head = |def: &str, id: i32, group: i32, out: f32| {
        let args = vec![s_arg(def), i(id), i(0), i(group), s_arg("freq"), OscArg::Float(345.0), s_arg("out"), OscArg::Float(out)];
        OscMessage::new("/s_new", args)
    };
    let head = [at_head("voice", 210, 2, 40.0), at_head("sine", 211, 3, 5.0)];
    let what = "a new voice at the head of group 2, a sine at the head of group 3";
    assert_eq!(run(&mut engines, what, &head), 6 * blocks - 1, "the new voice joins from its second block");
}

fn s_arg(v: &str) -> OscArg {
    OscArg::Str(v.into())
}
