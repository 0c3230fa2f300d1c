//! Parallel groups render exactly what the same tree renders on one thread:
//! random trees of sequential and parallel groups (nested, with satellites
//! and paused nodes), edited between blocks, compared bus by bus, bit for bit.

mod common;

use common::{def_bytes, engine_with_defs, i, reader_def, sine_def, Rng, PerformOsc};
use magnetar_engine::{EngineOptions, NodeEventKind, OfflineEngine};
use magnetar_protocol::{OscArg, OscMessage};

const BLOCKS: usize = 1500;
const BUSES: usize = 12;

fn engine(threads: usize) -> OfflineEngine {
    engine_with_buses(threads, 64)
}

fn engine_with_buses(threads: usize, audio_buses: usize) -> OfflineEngine {
    engine_with(threads, audio_buses, false)
}

fn engine_with(threads: usize, audio_buses: usize, rgen_per_synth: bool) -> OfflineEngine {
    engine_where(threads, audio_buses, |o| o.rgen_per_synth = rgen_per_synth)
}

fn engine_where(threads: usize, audio_buses: usize, tweak: impl FnOnce(&mut EngineOptions)) -> OfflineEngine {
    let defs = [sine_def(), reader_def(), player_def(), recorder_def()];
    // These tests are about the threaded path: every group that may spread
    // does (as `engine_with_defs` has it).
    let mut e = engine_with_defs(threads, true, audio_buses, &defs, |o| {
        o.num_control_buses = 64;
        o.num_buffers = 8;
        o.seed = Some(7);
        tweak(o);
    });
    // Buffers 0-3: a different ramp shape in each, for players.
    for (k, buf) in e.world.buffers.iter_mut().take(4).enumerate() {
        *buf = magnetar_ugens::SndBuf::new(1000 + 300 * k as u32, 1, 48_000.0);
        for (n, x) in buf.data.iter_mut().enumerate() {
            *x = ((n * (k + 3)) % 97) as f32 / 97.0 - 0.5;
        }
    }
    // Buffers 4-7: silent, of different lengths, for recorders.
    for (k, buf) in e.world.buffers.iter_mut().enumerate().skip(4) {
        *buf = magnetar_ugens::SndBuf::new(500 + 70 * k as u32, 1, 48_000.0);
    }
    e
}

/// One random edit, as the same message for both engines.
fn random_edit(r: &mut Rng, next_id: &mut i32, groups: &mut Vec<i32>, nodes: &mut Vec<i32>) -> OscMessage {
    let group = groups[r.below(groups.len() as u64) as usize];
    match r.below(10) {
        0 => {
            *next_id += 1;
            let cmd = if r.below(2) == 0 { "/p_new" } else { "/g_new" };
            groups.push(*next_id);
            nodes.push(*next_id);
            OscMessage::new(cmd, vec![i(*next_id), i(r.below(2) as i32), i(group)])
        }
        1..=5 => {
            *next_id += 1;
            nodes.push(*next_id);
            // Into a group, or as a satellite of an existing node now and then.
            let (action, target) = if r.below(8) == 0 && nodes.len() > 1 {
                (5 + r.below(2) as i32, nodes[r.below(nodes.len() as u64 - 1) as usize])
            } else {
                (r.below(2) as i32, group)
            };
            // Sines, and now and then a reader of one of the same buses.
            let mut args = vec![
                OscArg::Str(if r.below(3) == 0 { "reader" } else { "sine" }.into()),
                i(*next_id),
                i(action),
                i(target),
                OscArg::Str("freq".into()),
                OscArg::Float(100.0 + r.below(2000) as f32),
                OscArg::Str("amp".into()),
                OscArg::Float(0.01 * (1 + r.below(9)) as f32),
                OscArg::Str("out".into()),
                OscArg::Float(r.below(BUSES as u64 - 1) as f32),
            ];
            if args[0] == OscArg::Str("reader".into()) {
                args.extend([OscArg::Str("in".into()), OscArg::Float(r.below(BUSES as u64 - 1) as f32)]);
            }
            OscMessage::new("/s_new", args)
        }
        6 if !nodes.is_empty() => {
            let k = r.below(nodes.len() as u64) as usize;
            let id = nodes.swap_remove(k);
            groups.retain(|&g| g != id);
            OscMessage::new("/n_free", vec![i(id)])
        }
        7 if !nodes.is_empty() => {
            let id = nodes[r.below(nodes.len() as u64) as usize];
            OscMessage::new("/n_run", vec![i(id), i(r.below(3).min(1) as i32)])
        }
        8 if !nodes.is_empty() => {
            let id = nodes[r.below(nodes.len() as u64) as usize];
            // A new pitch, or a new bus to write or read (which may tie children to an order).
            let (name, value) = match r.below(3) {
                0 => ("freq", 50.0 + r.below(500) as f32),
                1 => ("out", r.below(BUSES as u64 - 1) as f32),
                _ => ("in", r.below(BUSES as u64 - 1) as f32),
            };
            OscMessage::new("/n_set", vec![i(id), OscArg::Str(name.into()), OscArg::Float(value)])
        }
        _ => {
            let id = nodes.get(r.below(nodes.len().max(1) as u64) as usize).copied().unwrap_or(0);
            OscMessage::new("/g_head", vec![i(group), i(id)])
        }
    }
}

/// Runs one block on both engines and requires the first `buses` audio
/// buses to be written alike, bit for bit.
fn block_on_both(one: &mut OfflineEngine, two: &mut OfflineEngine, block: usize, buses: usize) {
    block_on_both_within(one, two, block, buses, 0.0);
}

/// Like `block_on_both`, with samples allowed to differ by `tolerance`
/// relative to their size (at least 1).
fn block_on_both_within(one: &mut OfflineEngine, two: &mut OfflineEngine, block: usize, buses: usize, tolerance: f32) {
    let bs = one.world.block_size;
    one.run_block();
    two.run_block();
    for bus in 0..buses {
        let ta = one.world.audio_touched[bus] == one.world.buf_counter;
        let tb = two.world.audio_touched[bus] == two.world.buf_counter;
        assert_eq!(ta, tb, "block {block}: bus {bus} written by one engine only");
        if ta {
            let a = &one.world.audio_bus[bus * bs..(bus + 1) * bs];
            let b = &two.world.audio_bus[bus * bs..(bus + 1) * bs];
            assert!(
                a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || (x - y).abs() <= tolerance * x.abs().max(1.0)),
                "block {block}: bus {bus} differs between one and two threads"
            );
        }
    }
    for (k, (a, b)) in one.world.buffers.iter().zip(&two.world.buffers).enumerate() {
        assert!(
            a.data.iter().zip(&b.data).all(|(x, y)| x.to_bits() == y.to_bits() || (x - y).abs() <= tolerance * x.abs().max(1.0)),
            "block {block}: buffer {k} differs between one and two threads"
        );
    }
    one.advance_block_counter();
    two.advance_block_counter();
}

#[test]
fn parallel_groups_render_exactly_what_one_thread_renders() {
    let mut one = engine(1);
    let mut two = engine(2);
    assert_eq!(two.threads(), 2, "the test needs helper threads");
    let mut r = Rng(0x5EED_1234_ABCD_0001);
    let mut next_id = 999;
    let mut groups = vec![0];
    let mut nodes = Vec::new();
    // Start with a parallel group full of synths, so there is parallel work from the first block.
    let m = OscMessage::new("/p_new", vec![i(1), i(0), i(0)]);
    one.perform_message(&m).unwrap();
    two.perform_message(&m).unwrap();
    groups.push(1);
    nodes.push(1);
    for _ in 0..24 {
        next_id += 1;
        nodes.push(next_id);
        let m = OscMessage::new(
            "/s_new",
            vec![OscArg::Str("sine".into()), i(next_id), i(1), i(1), OscArg::Str("out".into()), OscArg::Float((next_id % 3) as f32)],
        );
        one.perform_message(&m).unwrap();
        two.perform_message(&m).unwrap();
    }
    for block in 0..BLOCKS {
        if block % 4 == 0 {
            for _ in 0..r.below(4) {
                let m = random_edit(&mut r, &mut next_id, &mut groups, &mut nodes);
                let a = one.perform_message(&m).map_err(|f| f.message());
                let b = two.perform_message(&m).map_err(|f| f.message());
                assert_eq!(a, b, "both engines answer {m:?} alike");
            }
        }
        block_on_both(&mut one, &mut two, block, BUSES);
    }
    assert!(two.parallel_groups_run() > BLOCKS as u64 / 2, "most blocks ran a group on two threads");
    assert_eq!(one.parallel_groups_run(), 0);
}

fn run_blocks(e: &mut OfflineEngine, blocks: usize) {
    for _ in 0..blocks {
        e.run_block();
        e.advance_block_counter();
    }
}

/// Parallel groups 1 and 2 at the root's tail, an empty sequential group
/// between them (consecutive parallel groups would run as one queue).
fn two_parallel_groups(e: &mut OfflineEngine) {
    e.perform_message(&OscMessage::new("/p_new", vec![i(1), i(1), i(0)])).unwrap();
    e.perform_message(&OscMessage::new("/g_new", vec![i(3), i(1), i(0)])).unwrap();
    e.perform_message(&OscMessage::new("/p_new", vec![i(2), i(1), i(0)])).unwrap();
}

#[test]
fn a_parallel_groups_queue_is_compiled_again_only_when_its_children_change() {
    let mut e = engine(2);
    let s_new = |id: i32, group: i32| {
        OscMessage::new("/s_new", vec![OscArg::Str("sine".into()), i(id), i(1), i(group), OscArg::Str("out".into()), OscArg::Float(0.0)])
    };
    // Two consecutive parallel groups of different sizes.
    two_parallel_groups(&mut e);
    for id in 100..106 {
        e.perform_message(&s_new(id, 1)).unwrap();
    }
    for id in 200..203 {
        e.perform_message(&s_new(id, 2)).unwrap();
    }
    run_blocks(&mut e, 2); // the synths' first blocks run them in order
    let compiled = e.parallel_queues_compiled();
    let groups = e.parallel_groups_run();
    run_blocks(&mut e, 200);
    assert_eq!(e.parallel_groups_run() - groups, 400, "both groups ran in parallel on every block");
    assert_eq!(compiled, 2, "one queue per group size");
    assert_eq!(e.parallel_queues_compiled(), compiled, "unchanged groups reuse their queues");

    // A new child changes one group: its queue is compiled once more.
    e.perform_message(&s_new(106, 1)).unwrap();
    run_blocks(&mut e, 200);
    assert_eq!(e.parallel_queues_compiled(), compiled + 1);
}

#[test]
fn a_parallel_groups_work_is_worked_out_again_only_after_an_edit_of_its_synths() {
    let mut e = engine(2);
    // Two consecutive parallel groups: each keeps its own work.
    two_parallel_groups(&mut e);
    for k in 0..6 {
        e.perform_message(&new_synth("sine", 100 + k, 1, 1, &[("freq", 200.0 + 50.0 * k as f32), ("out", k as f32)]))
            .unwrap();
    }
    for k in 0..3 {
        e.perform_message(&new_synth("sine", 200 + k, 1, 2, &[("out", 10.0 + k as f32)])).unwrap();
    }
    run_blocks(&mut e, 3); // the synths' first blocks run them in order
    let (worked, groups) = (e.parallel_groups_worked_out(), e.parallel_groups_run());
    run_blocks(&mut e, 200);
    assert_eq!(e.parallel_groups_run() - groups, 400, "both groups ran in parallel on every block");
    assert_eq!(e.parallel_groups_worked_out(), worked, "unedited groups reuse their work");

    // A control set (or a pause) makes its group work its work out once
    // more; the other group finds its synths unchanged and keeps its work.
    let in_place = e.parallel_groups_in_place();
    e.perform_message(&OscMessage::new("/n_set", vec![i(101), OscArg::Str("freq".into()), OscArg::Float(330.0)])).unwrap();
    run_blocks(&mut e, 50);
    assert_eq!(e.parallel_groups_worked_out(), worked + 1);
    assert_eq!(e.parallel_groups_in_place(), in_place + 1);
    e.perform_message(&OscMessage::new("/n_run", vec![i(200), i(0)])).unwrap();
    run_blocks(&mut e, 50);
    assert_eq!(e.parallel_groups_worked_out(), worked + 2);
    assert_eq!(e.parallel_groups_in_place(), in_place + 2);
}

/// A group that may not spread (a reader with a control mapped to a bus)
/// runs in order without its children being looked at again in every
/// block: only an edit has the engine work it out once more.
#[test]
fn a_group_that_may_not_spread_is_worked_out_again_only_after_an_edit() {
    let mut e = engine(2);
    let setup = [
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("sine", 100, 1, 1, &[("out", 20.0)]),
        new_synth("sine", 101, 1, 1, &[("out", 21.0), ("freq", 330.0)]),
        new_synth("reader", 200, 1, 1, &[("in", 30.0), ("out", 1.0)]),
        OscMessage::new("/n_map", vec![i(200), OscArg::Str("amp".into()), i(3)]),
    ];
    for m in &setup {
        e.perform_message(m).unwrap();
    }
    run_blocks(&mut e, 3);
    let (worked, groups) = (e.parallel_groups_worked_out(), e.parallel_groups_run());
    run_blocks(&mut e, 200);
    assert_eq!(e.parallel_groups_run(), groups, "the group runs in order");
    assert!(e.parallel_groups_worked_out() <= worked + 1, "worked out {} times in 200 blocks", e.parallel_groups_worked_out() - worked);
    let worked = e.parallel_groups_worked_out();
    e.perform_message(&OscMessage::new("/n_set", vec![i(101), OscArg::Str("freq".into()), OscArg::Float(330.0)])).unwrap();
    run_blocks(&mut e, 50);
    assert_eq!(e.parallel_groups_worked_out(), worked + 1, "an edit: worked out once more");
    // Unmapped, the reader lets the group spread.
    e.perform_message(&OscMessage::new("/n_map", vec![i(200), OscArg::Str("amp".into()), i(-1)])).unwrap();
    run_blocks(&mut e, 50);
    assert!(e.parallel_groups_run() >= groups + 45, "the group spreads once the reader's control is its own");
}

#[test]
fn a_bus_changed_between_blocks_orders_the_reader_after_its_writer_from_the_next_block() {
    let mut one = engine(1);
    let mut two = engine(2);
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..4 {
        setup.push(new_synth("sine", 10 + k, 1, 1, &[("freq", 300.0 + 70.0 * k as f32), ("out", 20.0 + k as f32)]));
    }
    // Two readers of buses no sibling writes: nothing ties the children to an order.
    setup.push(new_synth("reader", 100, 1, 1, &[("in", 30.0), ("out", 0.0)]));
    setup.push(new_synth("reader", 101, 1, 1, &[("in", 31.0), ("out", 1.0), ("amp", 0.3)]));
    for e in [&mut one, &mut two] {
        for m in &setup {
            e.perform_message(m).unwrap();
        }
    }
    let mut block = 0;
    let mut phase = |one: &mut OfflineEngine, two: &mut OfflineEngine, blocks: usize| {
        let before = two.parallel_groups_run();
        for _ in 0..blocks {
            block_on_both(one, two, block, 64);
            block += 1;
        }
        two.parallel_groups_run() - before
    };
    assert!(phase(&mut one, &mut two, 100) >= 95, "readers of buses no sibling writes spread");
    // Reader 100 now hears sine 12 (which comes before it): from the next
    // block on it waits for the sine, and the group still spreads.
    let to_sine = OscMessage::new("/n_set", vec![i(100), OscArg::Str("in".into()), OscArg::Float(22.0)]);
    one.perform_message(&to_sine).unwrap();
    two.perform_message(&to_sine).unwrap();
    assert!(phase(&mut one, &mut two, 100) >= 95, "a reader of a sibling's bus waits for it on the threads");
    assert!(one.world.audio_bus[..64].iter().any(|&x| x != 0.0), "the reader passes the sine on");
    // And back.
    let away = OscMessage::new("/n_set", vec![i(100), OscArg::Str("in".into()), OscArg::Float(30.0)]);
    one.perform_message(&away).unwrap();
    two.perform_message(&away).unwrap();
    assert_eq!(phase(&mut one, &mut two, 100), 100, "the group spreads again");
}

/// A def "player": `Out.ar(out, PlayBuf.ar(1, buf, rate, loop: 1) * amp)`.
fn player_def() -> Vec<u8> {
    def_bytes(
        "player",
        &[0.0, 1.0],
        &[("buf", 0.0), ("out", 0.0), ("rate", 1.0), ("amp", 0.5)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            // bufnum, rate, trigger, start, loop, done action
            ("PlayBuf", 2, &[(0, 0), (0, 2), (-1, 1), (-1, 0), (-1, 1), (-1, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (0, 3)], &[2], 2),
            ("Out", 2, &[(0, 1), (2, 0)], &[], 0),
        ],
    )
}

/// A def "recorder": records a sine into its buffer over half of what is
/// there, and plays the buffer back:
/// `RecordBuf.ar(SinOsc.ar(freq), buf, preLevel: 0.5, loop: 1); Out.ar(out, PlayBuf.ar(1, buf, loop: 1) * amp)`.
fn recorder_def() -> Vec<u8> {
    def_bytes(
        "recorder",
        &[0.0, 1.0, 0.5],
        &[("buf", 4.0), ("out", 0.0), ("freq", 300.0), ("amp", 0.5)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 2), (-1, 0)], &[2], 0),
            // bufnum, offset, rec level, pre level, run, loop, trigger, done action, input
            (
                "RecordBuf",
                2,
                &[(0, 0), (-1, 0), (-1, 1), (-1, 2), (-1, 1), (-1, 1), (-1, 1), (-1, 0), (1, 0)],
                &[2],
                0,
            ),
            ("PlayBuf", 2, &[(0, 0), (-1, 1), (-1, 1), (-1, 0), (-1, 1), (-1, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(3, 0), (0, 3)], &[2], 2),
            ("Out", 2, &[(0, 1), (4, 0)], &[], 0),
        ],
    )
}

#[test]
fn recorders_on_buffers_of_their_own_spread_and_leave_every_buffer_as_one_thread_does() {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..4 {
        let controls = [("buf", 4.0 + k as f32), ("out", (k % 2) as f32), ("freq", 200.0 + 110.0 * k as f32)];
        setup.push(new_synth("recorder", 100 + k, 1, 1, &controls));
        // Players of the other buffers, which nothing writes.
        setup.push(new_synth("player", 200 + k, 1, 1, &[("buf", k as f32), ("out", (k % 2) as f32), ("amp", 0.1)]));
    }
    assert_spreads(&setup, 300, "the recorders");
}

#[test]
fn recorders_sharing_a_buffer_take_turns_and_the_group_spreads() {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..4 {
        // The last two both record into buffer 6: each mixes over what the
        // other left, so the second waits for the first.
        let buf = 4.0 + k.min(2) as f32;
        setup.push(new_synth("recorder", 100 + k, 1, 1, &[("buf", buf), ("out", (k % 2) as f32), ("freq", 200.0 + 110.0 * k as f32)]));
    }
    assert_spreads(&setup, 100, "the recorders taking turns on a buffer");
}

/// A def "echo": a comb running its line in its buffer:
/// `Out.ar(out, BufCombN.ar(buf, SinOsc.ar(freq), 0.005, 0.2) * amp)`.
fn echo_def() -> Vec<u8> {
    def_bytes(
        "echo",
        &[0.0, 0.005, 0.2],
        &[("buf", 4.0), ("out", 0.0), ("freq", 300.0), ("amp", 0.5)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 2), (-1, 0)], &[2], 0),
            // bufnum, in, delay time, decay time
            ("BufCombN", 2, &[(0, 0), (1, 0), (-1, 1), (-1, 2)], &[2], 0),
            ("BinaryOpUGen", 2, &[(2, 0), (0, 3)], &[2], 2),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

#[test]
fn buffer_combs_on_buffers_of_their_own_spread_and_match_one_thread() {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..4 {
        let controls = [("buf", 4.0 + k as f32), ("out", (k % 2) as f32), ("freq", 200.0 + 110.0 * k as f32)];
        setup.push(new_synth("echo", 100 + k, 1, 1, &controls));
    }
    assert_spread(one_vs_two_threads_with_defs(&setup, 300, &[echo_def()]), 300, "the buffer combs");
}

#[test]
fn buffer_combs_sharing_a_buffer_or_read_by_a_player_take_turns_with_them() {
    let shared = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("echo", 100, 1, 1, &[("buf", 5.0)]),
        new_synth("echo", 101, 1, 1, &[("buf", 5.0), ("out", 1.0), ("freq", 410.0)]),
    ];
    assert_spread(one_vs_two_threads_with_defs(&shared, 100, &[echo_def()]), 100, "combs sharing a buffer");
    let played = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("echo", 100, 1, 1, &[("buf", 6.0)]),
        new_synth("player", 200, 1, 1, &[("buf", 6.0), ("out", 1.0)]),
    ];
    assert_spread(one_vs_two_threads_with_defs(&played, 100, &[echo_def()]), 100, "a comb and its player");
    // The player first: it plays what the comb left in the last block,
    // before the comb runs.
    let ahead = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("player", 200, 1, 1, &[("buf", 6.0), ("out", 1.0)]),
        new_synth("echo", 100, 1, 1, &[("buf", 6.0)]),
        new_synth("echo", 101, 1, 1, &[("buf", 7.0), ("freq", 510.0)]),
    ];
    assert_spread(one_vs_two_threads_with_defs(&ahead, 100, &[echo_def()]), 100, "a player ahead of its comb");
}

/// Group runs spread over two threads for a parallel group of a recorder
/// given buffer number `recorded`, one recording into buffer 6, and a
/// player of buffer `played`.
fn recorder_and_player(recorded: f32, played: f32) -> u64 {
    let setup = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("recorder", 100, 1, 1, &[("buf", recorded)]),
        new_synth("recorder", 101, 1, 1, &[("buf", 6.0), ("out", 1.0)]),
        new_synth("player", 200, 1, 1, &[("buf", played), ("out", 1.0)]),
    ];
    one_vs_two_threads(&setup, 100)
}

#[test]
fn a_player_of_a_buffer_a_sibling_records_waits_for_it_and_the_group_spreads() {
    assert_spread(recorder_and_player(5.0, 5.0), 100, "a recorder and its player");
}

#[test]
fn a_recorder_given_a_buffer_past_the_last_one_records_into_buffer_0_and_is_ordered_with_its_players() {
    // As in scsynth, buffer 100 of 8 means buffer 0.
    assert_spread(recorder_and_player(100.0, 0.0), 100, "a recorder of buffer 100 and a player of buffer 0");
}

/// Runs `blocks` blocks on engines with one and two threads after the same
/// messages; asserts every bus matches bit for bit, and returns how many
/// group runs the two-thread engine spread over its threads.
fn one_vs_two_threads(setup: &[OscMessage], blocks: usize) -> u64 {
    one_vs_two_threads_with_buses(setup, blocks, 64)
}

fn one_vs_two_threads_with_defs(setup: &[OscMessage], blocks: usize, defs: &[Vec<u8>]) -> u64 {
    one_vs_two_threads_on(setup, blocks, 64, defs, false)
}

fn one_vs_two_threads_with_buses(setup: &[OscMessage], blocks: usize, audio_buses: usize) -> u64 {
    one_vs_two_threads_on(setup, blocks, audio_buses, &[], false)
}

fn one_vs_two_threads_on(
    setup: &[OscMessage],
    blocks: usize,
    audio_buses: usize,
    defs: &[Vec<u8>],
    rgen_per_synth: bool,
) -> u64 {
    let mut one = engine_with(1, audio_buses, rgen_per_synth);
    let mut two = engine_with(2, audio_buses, rgen_per_synth);
    for e in [&mut one, &mut two] {
        for def in defs {
            assert!(e.add_synthdefs(def).unwrap().iter().all(|r| r.is_ok()));
        }
        for m in setup {
            e.perform_message(m).unwrap();
        }
    }
    let before = two.parallel_groups_run();
    for block in 0..blocks {
        block_on_both(&mut one, &mut two, block, 64);
    }
    assert!(one.world.audio_bus[..64].iter().any(|&x| x != 0.0), "the first output carries sound");
    two.parallel_groups_run() - before
}

/// Like `one_vs_two_threads`, and requires the two-thread engine to have
/// spread a group over its threads in all but (at most) ten blocks: the
/// first blocks build the synths, in order.
fn assert_spreads(setup: &[OscMessage], blocks: usize, what: &str) {
    assert_spread(one_vs_two_threads(setup, blocks), blocks, what);
}

/// `spread` group runs on two threads in `blocks` blocks: all but (at most)
/// the first ten, which build the synths in order.
fn assert_spread(spread: u64, blocks: usize, what: &str) {
    assert!(spread + 10 >= blocks as u64, "{what} ran on two threads in only {spread} of {blocks} blocks");
}

fn new_synth(def: &str, id: i32, action: i32, target: i32, controls: &[(&str, f32)]) -> OscMessage {
    let mut args = vec![OscArg::Str(def.into()), i(id), i(action), i(target)];
    for (name, v) in controls {
        args.push(OscArg::Str((*name).into()));
        args.push(OscArg::Float(*v));
    }
    OscMessage::new("/s_new", args)
}

/// A def "feedback": a sine fed back through the synth's own bus, which
/// frees itself once a line reaches its end after `life` seconds:
/// `x = SinOsc.ar(freq) + (LocalIn.ar(1) * 0.5); LocalOut.ar(x);
/// FreeSelf.kr(Line.kr(0, 1, life) > 0.99); Out.ar(out, x * amp)`.
fn feedback_def() -> Vec<u8> {
    def_bytes(
        "feedback",
        &[0.0, 1.0, 0.5, 0.99],
        &[("freq", 300.0), ("out", 0.0), ("amp", 0.2), ("life", 10.0)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("LocalIn", 2, &[(-1, 0)], &[2], 0),
            ("SinOsc", 2, &[(0, 0), (-1, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (-1, 2)], &[2], 2),
            ("BinaryOpUGen", 2, &[(2, 0), (3, 0)], &[2], 0),
            ("LocalOut", 2, &[(4, 0)], &[], 0),
            // start, end, duration, done action
            ("Line", 1, &[(-1, 0), (-1, 1), (0, 3), (-1, 0)], &[1], 0),
            ("BinaryOpUGen", 1, &[(6, 0), (-1, 3)], &[1], 9),
            ("FreeSelf", 1, &[(7, 0)], &[1], 0),
            ("BinaryOpUGen", 2, &[(4, 0), (0, 2)], &[2], 2),
            ("Out", 2, &[(0, 1), (9, 0)], &[], 0),
        ],
    )
}

#[test]
fn feedback_voices_that_free_themselves_spread_and_match_one_thread() {
    assert_ending_voices_spread("feedback", &feedback_def(), "the feedback voices");
}

/// Eight synths of `def` in a parallel group on one and on two threads, the
/// first four given a `life` of 0.1–0.25 s, the rest 10 s: the group
/// spreads, both engines render the same, and after 0.4 s exactly the first
/// four have ended themselves in both.
fn assert_ending_voices_spread(def: &str, bytes: &[u8], what: &str) {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..8 {
        let t = if k < 4 { 0.1 + 0.05 * k as f32 } else { 10.0 };
        setup.push(new_synth(def, 100 + k, 1, 1, &[("freq", 200.0 + 70.0 * k as f32), ("out", (k % 2) as f32), ("life", t)]));
    }
    let (mut one, mut two) = (engine_with(1, 64, false), engine_with(2, 64, false));
    for e in [&mut one, &mut two] {
        assert!(e.add_synthdefs(bytes).unwrap().iter().all(|r| r.is_ok()));
        for m in &setup {
            e.perform_message(m).unwrap();
        }
    }
    let blocks = 300; // 0.4 s at 48 kHz
    let before = two.parallel_groups_run();
    for block in 0..blocks {
        block_on_both(&mut one, &mut two, block, 64);
    }
    assert_spread(two.parallel_groups_run() - before, blocks, what);
    for e in [&one, &two] {
        let left: Vec<i32> = (100..108).filter(|&id| e.tree.contains_id(id)).collect();
        assert_eq!(left, vec![104, 105, 106, 107], "{what}: those whose time ran out ended");
    }
}

/// A def "fading": a sine fading out over `life` seconds, ended by
/// `DetectSilence` (done action 2) once it has been quiet for 10 ms:
/// `x = SinOsc.ar(freq) * Line.kr(0.2, 0, life); DetectSilence.ar(x, 0.0001, 0.01, 2); Out.ar(out, x)`.
fn fading_def() -> Vec<u8> {
    def_bytes(
        "fading",
        &[0.0, 0.2, 0.0001, 0.01, 2.0],
        &[("freq", 300.0), ("out", 0.0), ("life", 10.0)],
        &[
            ("Control", 1, &[], &[1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 0), (-1, 0)], &[2], 0),
            ("Line", 1, &[(-1, 1), (-1, 0), (0, 2), (-1, 0)], &[1], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (2, 0)], &[2], 2),
            // in, amp, time, done action
            ("DetectSilence", 2, &[(3, 0), (-1, 2), (-1, 3), (-1, 4)], &[2], 0),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

#[test]
fn voices_ended_by_detect_silence_spread_and_end_where_one_thread_ends_them() {
    assert_ending_voices_spread("fading", &fading_def(), "the fading voices");
}

#[test]
fn children_reading_buses_written_before_the_group_run_in_parallel_and_match_one_thread() {
    let mut setup = vec![
        // Sources ahead of the group, then the group of readers.
        new_synth("sine", 10, 1, 0, &[("freq", 300.0), ("out", 20.0)]),
        new_synth("sine", 11, 1, 0, &[("freq", 450.0), ("out", 21.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
    ];
    for k in 0..8 {
        let (input, out) = (20 + k % 2, k % 3);
        setup.push(new_synth("reader", 100 + k, 1, 1, &[("in", input as f32), ("out", out as f32), ("amp", 0.1 + 0.05 * k as f32)]));
    }
    assert_spreads(&setup, 300, "the readers");
}

#[test]
fn children_reading_what_an_earlier_sibling_writes_wait_for_it_and_the_group_spreads() {
    let mut setup = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        // Inside the group: a sine writes bus 30, later siblings read it.
        new_synth("sine", 10, 1, 1, &[("freq", 300.0), ("out", 30.0)]),
        new_synth("reader", 100, 1, 1, &[("in", 30.0), ("out", 0.0)]),
        new_synth("reader", 101, 1, 1, &[("in", 30.0), ("out", 1.0), ("amp", 0.2)]),
    ];
    // A second sine adds to bus 30 after the first readers: they must not
    // hear it (one thread runs it after them), the last reader must.
    setup.push(new_synth("sine", 11, 1, 1, &[("freq", 470.0), ("out", 30.0)]));
    setup.push(new_synth("reader", 102, 1, 1, &[("in", 30.0), ("out", 2.0), ("amp", 0.3)]));
    // What the readers hear depends on the order: each waits for the
    // writers before it, and the rest runs side by side.
    assert_spreads(&setup, 100, "the readers of their siblings' bus");
}

#[test]
fn paused_children_and_empty_groups_do_not_keep_a_group_from_spreading() {
    let mut setup = vec![
        new_synth("sine", 10, 1, 0, &[("freq", 300.0), ("out", 20.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        OscMessage::new("/g_new", vec![i(2), i(1), i(1)]),
    ];
    for k in 0..6 {
        setup.push(new_synth("reader", 100 + k, 1, 1, &[("in", 20.0), ("out", (k % 2) as f32), ("amp", 0.1 * (k + 1) as f32)]));
    }
    // Two children paused: their sound must stay out of the outputs on both engines.
    setup.push(OscMessage::new("/n_run", vec![i(101), i(0), i(104), i(0)]));
    assert_spreads(&setup, 200, "the group");
}

#[test]
fn a_reader_given_a_bus_past_the_last_one_runs_the_group_in_order() {
    // 70 buses: a number of buses that is not a whole number of 64-bit words.
    let setup = vec![
        new_synth("sine", 10, 1, 0, &[("freq", 300.0), ("out", 20.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("reader", 100, 1, 1, &[("in", 20.0), ("out", 0.0)]),
        new_synth("reader", 101, 1, 1, &[("in", 100.0), ("out", 1.0)]),
    ];
    // Which bus the second reader uses cannot be told in advance, so the group runs in order.
    assert_eq!(one_vs_two_threads_with_buses(&setup, 50, 70), 0);
}

#[test]
fn a_group_writing_buses_an_earlier_group_read_in_the_same_block_matches_one_thread() {
    let mut setup = vec![
        new_synth("sine", 10, 1, 0, &[("freq", 300.0), ("out", 20.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        OscMessage::new("/p_new", vec![i(2), i(1), i(0)]),
    ];
    for k in 0..4 {
        setup.push(new_synth("reader", 100 + k, 1, 1, &[("in", 20.0), ("out", (k % 2) as f32)]));
        // The second group adds to the bus the first one read.
        setup.push(new_synth("sine", 200 + k, 1, 2, &[("freq", 500.0 + 100.0 * k as f32), ("out", 20.0)]));
    }
    // As one queue (the second group's sines logged for after the first
    // group's readers), or apart: on two threads in every block.
    let spread = one_vs_two_threads(&setup, 100);
    assert!(spread >= 95, "the groups ran on two threads in only {spread} of 100 blocks");
}

/// Setup for `chains` voice → effect chains in one parallel group: each
/// chain a group holding a sine that writes `bus(k)` and a reader of it
/// that writes one of the outputs.
fn chains(chains: i32, bus: impl Fn(i32) -> f32) -> Vec<OscMessage> {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..chains {
        let g = 10 + k;
        setup.push(OscMessage::new("/g_new", vec![i(g), i(1), i(1)]));
        setup.push(new_synth("sine", 100 + k, 1, g, &[("freq", 200.0 + 70.0 * k as f32), ("out", bus(k))]));
        setup.push(new_synth("reader", 200 + k, 1, g, &[("in", bus(k)), ("out", (k % 2) as f32), ("amp", 0.1 + 0.05 * k as f32)]));
    }
    setup
}

#[test]
fn voice_to_effect_chains_in_a_parallel_group_run_in_parallel_and_match_one_thread() {
    // Each chain's effect reads the bus its own (stereo) voice wrote.
    assert_spreads(&chains(8, |k| 20.0 + 2.0 * k as f32), 300, "the chains");
}

#[test]
fn chains_sharing_their_inner_bus_wait_for_the_voices_before_them() {
    // Every effect reads bus 20, which every voice writes: what an effect
    // hears depends on the order of the chains, which the queue keeps.
    assert_spreads(&chains(4, |_| 20.0), 100, "the chains sharing a bus");
}

#[test]
fn effects_replacing_their_own_bus_in_a_chain_match_one_thread() {
    assert_spreads(&effect_chains(), 300, "the chains");
}

/// Chains in a parallel group: a voice writes its bus, an effect reads it
/// and adds to it (reading and writing the same bus), a second reader sends
/// the result out.
fn effect_chains() -> Vec<OscMessage> {
    let mut setup = vec![
        new_synth("sine", 5, 1, 0, &[("freq", 90.0), ("out", 40.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
    ];
    for k in 0..6 {
        let (g, bus) = (10 + k, 20.0 + 2.0 * k as f32);
        setup.push(OscMessage::new("/g_new", vec![i(g), i(1), i(1)]));
        setup.push(new_synth("sine", 100 + k, 1, g, &[("freq", 200.0 + 70.0 * k as f32), ("out", bus)]));
        setup.push(new_synth("reader", 200 + k, 1, g, &[("in", bus), ("out", bus), ("amp", 0.7)]));
        // Another source's bus, read by every chain and written by none.
        setup.push(new_synth("reader", 300 + k, 1, g, &[("in", 40.0), ("out", bus), ("amp", 0.25)]));
        setup.push(new_synth("reader", 400 + k, 1, g, &[("in", bus), ("out", (k % 2) as f32), ("amp", 0.3)]));
    }
    // A lone effect child reading and adding to a bus a source before the group
    // wrote, and a paused chain.
    setup.push(new_synth("sine", 500, 0, 0, &[("freq", 700.0), ("out", 50.0)]));
    setup.push(new_synth("reader", 501, 1, 1, &[("in", 50.0), ("out", 50.0), ("amp", 0.5)]));
    setup.push(OscMessage::new("/n_run", vec![i(12), i(0)]));
    setup
}

#[test]
fn buffer_players_in_a_parallel_group_run_in_parallel_and_match_one_thread() {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..8 {
        // Several players share a buffer; rates make them read it at different places.
        let controls = [("buf", (k % 4) as f32), ("out", (k % 2) as f32), ("rate", 0.5 + 0.37 * k as f32), ("amp", 0.2)];
        setup.push(new_synth("player", 100 + k, 1, 1, &controls));
    }
    // A chain: a player feeding a reader.
    setup.push(OscMessage::new("/g_new", vec![i(2), i(1), i(1)]));
    setup.push(new_synth("player", 200, 1, 2, &[("buf", 3.0), ("out", 30.0)]));
    setup.push(new_synth("reader", 201, 1, 2, &[("in", 30.0), ("out", 1.0)]));
    assert_spreads(&setup, 300, "the players");
}

#[test]
fn a_parallel_group_nested_in_a_chain_spreads_and_its_effect_hears_every_voice() {
    // One chain: a parallel group of voices summing into bus 20, then an
    // effect reading it. The outer group has a single child, so only the
    // inner group's voices can share the work.
    let mut setup = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        OscMessage::new("/g_new", vec![i(2), i(1), i(1)]),
        OscMessage::new("/p_new", vec![i(3), i(1), i(2)]),
    ];
    for k in 0..6 {
        setup.push(new_synth("sine", 100 + k, 1, 3, &[("freq", 200.0 + 90.0 * k as f32), ("out", 20.0), ("amp", 0.05)]));
    }
    setup.push(new_synth("reader", 200, 1, 2, &[("in", 20.0), ("out", 0.0), ("amp", 0.5)]));
    setup.push(new_synth("reader", 201, 1, 2, &[("in", 21.0), ("out", 1.0), ("amp", 0.5)]));
    assert_spreads(&setup, 300, "the voices");
}

#[test]
fn the_listing_5_2_tree_spreads_with_its_sections_and_matches_one_thread() {
    assert_spreads(&listing_5_2(), 300, "the tree");
}

/// The Supernova thesis's Listing 5.2 under a parallel group: section 1
/// holds a parallel group of small synths and one of big ones, section 2 a
/// group of each; effects after each section read what it wrote.
fn listing_5_2() -> Vec<OscMessage> {
    let mut setup = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        OscMessage::new("/g_new", vec![i(10), i(1), i(1)]),
        OscMessage::new("/p_new", vec![i(11), i(1), i(10)]),
        OscMessage::new("/p_new", vec![i(12), i(1), i(10)]),
        OscMessage::new("/g_new", vec![i(20), i(1), i(1)]),
        OscMessage::new("/g_new", vec![i(21), i(1), i(20)]),
        OscMessage::new("/g_new", vec![i(22), i(1), i(20)]),
    ];
    let mut id = 100;
    for (group, count, bus) in [(11, 16, 30.0), (12, 4, 32.0), (21, 4, 34.0), (22, 2, 36.0)] {
        for k in 0..count {
            id += 1;
            setup.push(new_synth("sine", id, 1, group, &[("freq", 100.0 + 37.0 * id as f32), ("out", bus), ("amp", 0.02 * (k + 1) as f32)]));
        }
    }
    // Section effects: read their section's buses (and the big group's
    // reader in section 1 reads what the small group wrote before it).
    setup.push(new_synth("reader", 300, 1, 12, &[("in", 30.0), ("out", 32.0), ("amp", 0.25)]));
    setup.push(new_synth("reader", 301, 1, 10, &[("in", 32.0), ("out", 0.0)]));
    setup.push(new_synth("reader", 302, 1, 20, &[("in", 34.0), ("out", 1.0)]));
    setup.push(new_synth("reader", 303, 1, 20, &[("in", 36.0), ("out", 1.0)]));
    setup
}

/// Runs `blocks` blocks on one thread and on two threads adding shared-bus
/// writes in whatever order the threads finish (`-x 0`); every bus must
/// match to within float rounding (`tolerance`, 0 for bit for bit).
/// Returns how many group runs the two threads shared.
fn one_vs_any_order(setup: &[OscMessage], blocks: usize, tolerance: f32) -> u64 {
    let mut one = engine(1);
    let mut two = engine_where(2, 64, |o| o.parallel_exact = false);
    for e in [&mut one, &mut two] {
        for m in setup {
            e.perform_message(m).unwrap();
        }
    }
    for block in 0..blocks {
        block_on_both_within(&mut one, &mut two, block, 64, tolerance);
    }
    assert!(one.world.audio_bus[..64].iter().any(|&x| x != 0.0), "the first output carries sound");
    two.parallel_groups_run()
}

#[test]
fn in_any_order_the_listing_5_2_tree_spreads_and_its_effects_hear_every_section() {
    // Effects read sums of voices that ran on either thread.
    assert_spread(one_vs_any_order(&listing_5_2(), 300, 1e-5), 300, "the tree");
}

#[test]
fn in_any_order_effects_adding_to_their_own_bus_keep_their_place_in_the_chain() {
    assert_spread(one_vs_any_order(&effect_chains(), 300, 1e-5), 300, "the chains");
}

#[test]
fn in_any_order_voices_on_buses_of_their_own_are_still_exact() {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    // Stereo voices, two buses each.
    for k in 0..16 {
        setup.push(new_synth("sine", 100 + k, 1, 1, &[("freq", 150.0 + 40.0 * k as f32), ("out", (2 * k) as f32)]));
    }
    assert_spread(one_vs_any_order(&setup, 300, 0.0), 300, "the voices");
}

/// A def "detuned": `Out.ar(out, SinOsc.ar(freq * Rand(0.9, 1.1)) * 0.1)`.
fn detuned_def() -> Vec<u8> {
    def_bytes(
        "detuned",
        &[0.9, 1.1, 0.0, 0.1],
        &[("freq", 300.0), ("out", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("Rand", 0, &[(-1, 0), (-1, 1)], &[0], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (1, 0)], &[1], 2),
            ("SinOsc", 2, &[(2, 0), (-1, 2)], &[2], 0),
            ("BinaryOpUGen", 2, &[(3, 0), (-1, 3)], &[2], 2),
            ("Out", 2, &[(0, 1), (4, 0)], &[], 0),
        ],
    )
}

#[test]
fn synths_drawing_random_numbers_only_when_built_run_in_parallel() {
    // Rand.ir draws once, in the synth's first block, which runs in order:
    // every engine draws the same numbers for the same synths.
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..8 {
        setup.push(new_synth("detuned", 100 + k, 1, 1, &[("freq", 200.0 + 50.0 * k as f32), ("out", (k % 2) as f32)]));
    }
    assert_spread(one_vs_two_threads_with_defs(&setup, 300, &[detuned_def()]), 300, "the synths");
}

#[test]
fn a_long_chain_is_cut_into_several_items_and_still_spreads() {
    // Two chains of 40 stereo sines (80 bus writes each, more than one work
    // item keeps) and a reader of their bus at the end.
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for (g, bus) in [(2, 20.0), (3, 24.0)] {
        setup.push(OscMessage::new("/g_new", vec![i(g), i(1), i(1)]));
        for k in 0..40 {
            setup.push(new_synth("sine", 100 * g + k, 1, g, &[("freq", 100.0 + 23.0 * k as f32), ("out", bus), ("amp", 0.01)]));
        }
        setup.push(new_synth("reader", 100 * g + 99, 1, g, &[("in", bus + 1.0), ("out", (g % 2) as f32)]));
    }
    assert_spreads(&setup, 200, "the chains");
}

/// A def "noisy": `Out.ar(out, WhiteNoise.ar * LFNoise1.kr(freq) * 0.1)`.
fn noisy_def() -> Vec<u8> {
    def_bytes(
        "noisy",
        &[0.1],
        &[("out", 0.0), ("freq", 30.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("WhiteNoise", 2, &[], &[2], 0),
            ("LFNoise1", 1, &[(0, 1)], &[1], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (2, 0)], &[2], 2),
            ("BinaryOpUGen", 2, &[(3, 0), (-1, 0)], &[2], 2),
            ("Out", 2, &[(0, 0), (4, 0)], &[], 0),
        ],
    )
}

/// A def "seeded": `RandSeed.ir(1, seed); Out.ar(out, WhiteNoise.ar * 0.1)`.
fn seeded_def() -> Vec<u8> {
    def_bytes(
        "seeded",
        &[1.0, 0.1],
        &[("out", 0.0), ("seed", 5.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("RandSeed", 0, &[(-1, 0), (0, 1)], &[0], 0),
            ("WhiteNoise", 2, &[], &[2], 0),
            ("BinaryOpUGen", 2, &[(2, 0), (-1, 1)], &[2], 2),
            ("Out", 2, &[(0, 0), (3, 0)], &[], 0),
        ],
    )
}

fn noise_group() -> Vec<OscMessage> {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..12 {
        setup.push(new_synth("noisy", 100 + k, 1, 1, &[("out", (k % 3) as f32), ("freq", 10.0 + 7.0 * k as f32)]));
    }
    setup
}

#[test]
fn noise_synths_sharing_the_world_generator_run_their_group_in_order() {
    // Their draws must follow the synth order, as scsynth's do.
    let spread = one_vs_two_threads_on(&noise_group(), 200, 64, &[noisy_def()], false);
    assert_eq!(spread, 0, "a group of synths sharing the generator ran on two threads");
}

#[test]
fn noise_synths_with_a_generator_each_spread_and_match_one_thread() {
    let blocks = 300;
    let spread = one_vs_two_threads_on(&noise_group(), blocks, 64, &[noisy_def()], true);
    assert_spread(spread, blocks, "the noise synths");
}

#[test]
fn with_a_generator_per_synth_a_seeded_synth_repeats_its_noise_whatever_plays_before_it() {
    // The same seeded synth, alone and behind noise synths that draw first.
    let render = |rgen_per_synth: bool, crowd: bool| {
        let mut e = engine_with(2, 64, rgen_per_synth);
        for def in [noisy_def(), seeded_def()] {
            assert!(e.add_synthdefs(&def).unwrap().iter().all(|r| r.is_ok()));
        }
        let mut setup = if crowd { noise_group() } else { vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])] };
        setup.push(new_synth("seeded", 999, 1, 1, &[("out", 5.0), ("seed", 42.0)]));
        for m in &setup {
            e.perform_message(m).unwrap();
        }
        let bs = e.world.block_size;
        let mut out = Vec::new();
        for _ in 0..20 {
            e.run_block();
            out.extend_from_slice(&e.world.audio_bus[5 * bs..6 * bs]);
            e.advance_block_counter();
        }
        out
    };
    let alone = render(true, false);
    assert!(alone.iter().any(|&x| x != 0.0), "the seeded synth plays");
    assert_eq!(alone, render(true, true), "its own generator is not disturbed by other synths");
    // Sharing the world's generator, the others' draws shift its sequence (scsynth's behaviour).
    assert_ne!(render(false, false), render(false, true));
}

/// A def "ksource": a control-rate sine written to a control bus:
/// `Out.kr(out, SinOsc.kr(freq))`.
fn ksource_def() -> Vec<u8> {
    def_bytes(
        "ksource",
        &[0.0],
        &[("freq", 3.0), ("out", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("SinOsc", 1, &[(0, 0), (-1, 0)], &[1], 0),
            ("Out", 1, &[(0, 1), (1, 0)], &[], 0),
        ],
    )
}

/// A def "kreader": a sine whose pitch follows a control bus through
/// `LagIn`, plus the bus's value in blocks where it was written (`InTrig`):
/// `Out.ar(out, SinOsc.ar(LagIn.kr(in, 0.05) * 100 + 300) * amp + K2A.ar(InTrig.kr(in) * 0.01))`.
fn kreader_def() -> Vec<u8> {
    def_bytes(
        "kreader",
        &[0.05, 100.0, 300.0, 0.0, 0.01],
        &[("in", 0.0), ("out", 0.0), ("amp", 0.1)],
        &[
            ("Control", 1, &[], &[1, 1, 1], 0),
            ("LagIn", 1, &[(0, 0), (-1, 0)], &[1], 0),
            // LagIn * 100 + 300
            ("MulAdd", 1, &[(1, 0), (-1, 1), (-1, 2)], &[1], 0),
            ("SinOsc", 2, &[(2, 0), (-1, 3)], &[2], 0),
            ("BinaryOpUGen", 2, &[(3, 0), (0, 2)], &[2], 2),
            ("InTrig", 1, &[(0, 0)], &[1], 0),
            ("BinaryOpUGen", 1, &[(5, 0), (-1, 4)], &[1], 2),
            ("K2A", 2, &[(6, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(4, 0), (7, 0)], &[2], 0),
            ("Out", 2, &[(0, 1), (8, 0)], &[], 0),
        ],
    )
}

#[test]
fn control_bus_readers_lagin_and_intrig_run_in_parallel_and_match_one_thread() {
    // Two control sines ahead of the group write control buses 5 and 6;
    // the readers in the group follow them through LagIn and InTrig.
    let mut setup = vec![
        new_synth("ksource", 10, 1, 0, &[("freq", 3.0), ("out", 5.0)]),
        new_synth("ksource", 11, 1, 0, &[("freq", 5.0), ("out", 6.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
    ];
    for k in 0..8 {
        setup.push(new_synth("kreader", 100 + k, 1, 1, &[("in", (5 + k % 2) as f32), ("out", (k % 2) as f32), ("amp", 0.05 + 0.02 * k as f32)]));
    }
    let blocks = 300;
    let spread = one_vs_two_threads_with_defs(&setup, blocks, &[ksource_def(), kreader_def()]);
    assert_spread(spread, blocks, "the control-bus readers");
}

#[test]
fn control_bus_readers_whose_bus_a_sibling_writes_wait_for_it_and_the_group_spreads() {
    let setup = vec![
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        // Inside the group: a control sine writes bus 5, a later sibling reads it.
        new_synth("ksource", 10, 1, 1, &[("freq", 3.0), ("out", 5.0)]),
        new_synth("kreader", 100, 1, 1, &[("in", 5.0), ("out", 0.0)]),
        new_synth("kreader", 101, 1, 1, &[("in", 5.0), ("out", 1.0)]),
    ];
    // What the readers hear (InTrig: whether the bus was written yet this
    // block) depends on the order: they wait for the source.
    let spread = one_vs_two_threads_with_defs(&setup, 100, &[ksource_def(), kreader_def()]);
    assert_spread(spread, 100, "the control-bus readers of their sibling's bus");
}

/// A def "convolver": `Out.ar(out, MagnetarConv.ar(SinOsc.ar(freq), buf) * amp)`.
fn convolver_def() -> Vec<u8> {
    def_bytes(
        "convolver",
        &[0.0],
        &[("buf", 5.0), ("out", 0.0), ("freq", 300.0), ("amp", 0.5)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 2), (-1, 0)], &[2], 0),
            // input, bufnum
            ("MagnetarConv", 2, &[(1, 0), (0, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(2, 0), (0, 3)], &[2], 2),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

#[test]
fn convolvers_spread_over_a_parallel_groups_threads_and_match_one_thread() {
    use magnetar_protocol::osc::OscArg::{Float, Str};
    // Buffer 5: buffer 2's ramps prepared with a head of 3 blocks and two task levels.
    let mut setup = vec![
        OscMessage::new("/b_gen", vec![i(5), Str("MagnetarConvPrepare".into()), Float(2.0), Float(128.0), Float(512.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
    ];
    for k in 0..6 {
        let controls = [("out", (k % 2) as f32), ("freq", 200.0 + 70.0 * k as f32), ("amp", 0.1 * (k + 1) as f32)];
        setup.push(new_synth("convolver", 100 + k, 1, 1, &controls));
    }
    // Bit for bit: every level's task runs in step on whichever thread released it.
    assert_spread(one_vs_two_threads_with_defs(&setup, 300, &[convolver_def()]), 300, "the convolvers");
}

/// A def "partconv": `Out.ar(out, PartConv.ar(SinOsc.ar(freq), 512, buf) * amp)`.
fn partconv_def() -> Vec<u8> {
    def_bytes(
        "partconv",
        &[0.0, 512.0],
        &[("buf", 5.0), ("out", 0.0), ("freq", 300.0), ("amp", 0.5)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 2), (-1, 0)], &[2], 0),
            // in, fftsize, irbufnum
            ("PartConv", 2, &[(1, 0), (-1, 1), (0, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(2, 0), (0, 3)], &[2], 2),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

#[test]
fn partconvs_spread_over_a_parallel_groups_threads_and_match_one_thread() {
    use magnetar_protocol::osc::OscArg::{Float, Str};
    // Buffer 5: buffer 2's 1600 ramp frames as 7 partitions of 256, spectra of 512.
    let mut setup = vec![
        OscMessage::new("/b_alloc", vec![i(5), i(7 * 512), i(1)]),
        OscMessage::new("/b_gen", vec![i(5), Str("PreparePartConv".into()), Float(2.0), Float(512.0)]),
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
    ];
    for k in 0..6 {
        let controls = [("out", (k % 2) as f32), ("freq", 200.0 + 70.0 * k as f32), ("amp", 0.1 * (k + 1) as f32)];
        setup.push(new_synth("partconv", 100 + k, 1, 1, &controls));
    }
    assert_spread(one_vs_two_threads_with_defs(&setup, 300, &[partconv_def()]), 300, "the PartConvs");
}

/// A parallel group edited on every block, as a pattern plays into it: a
/// new voice on most blocks (each ending itself after its own short life),
/// now and then a voice freed or paused by a command, renders every bus
/// alike on one, two and four threads, bit for bit; and the group still
/// spreads on the blocks that add no voice.
#[test]
fn a_group_that_gains_and_loses_voices_every_block_matches_one_thread_on_two_and_four() {
    let setup = [OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    let (mut next_id, mut live, mut played) = (1000, Vec::new(), false);
    let blocks = 900;
    let spread = play_edited_every_block(&setup, blocks, |block, r, first| {
        let bs = first.world.block_size;
        played |= first.world.audio_bus[..4 * bs].iter().any(|&x| x != 0.0);
        // Voices that ended themselves are gone (from every engine alike:
        // the buses are compared after every block).
        live.retain(|&id| first.tree.contains_id(id));
        let mut edits = Vec::new();
        if block % 3 != 2 {
            next_id += 1;
            live.push(next_id);
            // Lives of 20 to 100 blocks, so that voices end on every kind of block.
            let life = (20 + r.below(80)) as f32 * bs as f32 / 48_000.0;
            let controls = [("freq", 100.0 + r.below(1500) as f32), ("out", r.below(4) as f32), ("amp", 0.05), ("life", life)];
            edits.push(new_synth("feedback", next_id, r.below(2) as i32, 1, &controls));
        }
        if block % 7 == 3 && !live.is_empty() {
            let id = live.swap_remove(r.below(live.len() as u64) as usize);
            edits.push(OscMessage::new("/n_free", vec![i(id)]));
        }
        if block % 11 == 5 && !live.is_empty() {
            let id = live[r.below(live.len() as u64) as usize];
            edits.push(OscMessage::new("/n_run", vec![i(id), i(r.below(2) as i32)]));
        }
        edits
    });
    assert!(played, "the group plays");
    for s in spread {
        // A third of the blocks add no voice; most of those spread.
        assert!(s >= blocks as u64 / 6, "the group spread in only {s} of {blocks} blocks");
    }
}

/// After a block: every audio bus below 64 that the first engine (one
/// thread) wrote, the others wrote too, bit for bit, and no other.
fn assert_buses_match(engines: &[OfflineEngine], block: usize) {
    let (first, rest) = engines.split_first().unwrap();
    let bs = first.world.block_size;
    for (k, e) in rest.iter().enumerate() {
        for bus in 0..64 {
            let ta = first.world.audio_touched[bus] == first.world.buf_counter;
            let tb = e.world.audio_touched[bus] == e.world.buf_counter;
            assert_eq!(ta, tb, "block {block}: bus {bus} written by one engine only (engine {})", k + 1);
            let a = &first.world.audio_bus[bus * bs..(bus + 1) * bs];
            let b = &e.world.audio_bus[bus * bs..(bus + 1) * bs];
            assert!(
                !ta || a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "block {block}: bus {bus} differs between one thread and engine {}",
                k + 1
            );
        }
    }
}

/// After a block: the synth counts the defs write to control buses 0 and 1,
/// and the notifications, are those of the first engine (one thread).
fn assert_counts_and_notes_match(engines: &[OfflineEngine], block: usize) {
    let (first, rest) = engines.split_first().unwrap();
    for (k, e) in rest.iter().enumerate() {
        let bits = |e: &OfflineEngine| [e.world.control_bus[0].to_bits(), e.world.control_bus[1].to_bits()];
        assert_eq!(bits(e), bits(first), "block {block}: the synth counts differ on engine {}", k + 1);
        assert_eq!(e.events, first.events, "block {block}: the notifications differ on engine {}", k + 1);
    }
}

/// Plays `setup`, then `blocks` blocks with the edits `edits` makes before
/// each, on one, two and four threads, comparing every audio bus bit for
/// bit after each block; returns how many blocks the parallel group spread
/// in on two and on four threads.
fn play_edited_every_block(
    setup: &[OscMessage],
    blocks: usize,
    mut edits: impl FnMut(usize, &mut Rng, &OfflineEngine) -> Vec<OscMessage>,
) -> Vec<u64> {
    let mut engines: Vec<OfflineEngine> = [1, 2, 4].iter().map(|&t| engine_with(t, 64, false)).collect();
    for e in &mut engines {
        assert!(e.add_synthdefs(&feedback_def()).unwrap().iter().all(|r| r.is_ok()));
        for m in setup {
            e.perform_message(m).unwrap();
        }
    }
    let mut r = Rng(0x0F12_57B1_0C4E);
    let spread_before: Vec<u64> = engines.iter().map(|e| e.parallel_groups_run()).collect();
    for block in 0..blocks {
        for m in &edits(block, &mut r, &engines[0]) {
            let answers: Vec<_> = engines.iter_mut().map(|e| e.perform_message(m).map_err(|f| f.message())).collect();
            assert!(answers.iter().all(|a| *a == answers[0]), "all engines answer {m:?} alike");
        }
        for e in &mut engines {
            e.run_block();
        }
        assert_buses_match(&engines, block);
        for e in &mut engines {
            e.advance_block_counter();
        }
    }
    assert_eq!(engines[0].parallel_groups_run(), 0);
    engines.iter().zip(&spread_before).skip(1).map(|(e, before)| e.parallel_groups_run() - before).collect()
}

/// A note every block, and a reader of a bus written before the group
/// (`In.ar`, which reads it when built too) every other block, each freed
/// some blocks later: the new synths are built before the group runs, which
/// then spreads.
#[test]
fn a_group_gaining_a_note_every_block_spreads_and_matches_one_thread() {
    let setup = [
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        // Before the group, writing the bus the readers in it read.
        new_synth("feedback", 900, 0, 0, &[("freq", 220.0), ("out", 10.0), ("amp", 0.3), ("life", 1e4)]),
    ];
    let (mut next_id, mut frees) = (1000, Vec::new());
    let blocks = 600;
    let spread = play_edited_every_block(&setup, blocks, |block, r, _| {
        let mut edits = Vec::new();
        next_id += 1;
        let controls = [("freq", 100.0 + r.below(1500) as f32), ("out", r.below(4) as f32), ("amp", 0.05), ("life", 1e4)];
        edits.push(new_synth("feedback", next_id, r.below(2) as i32, 1, &controls));
        frees.push((block + 20 + r.below(80) as usize, next_id));
        if block % 2 == 0 {
            next_id += 1;
            let controls = [("in", 10.0), ("out", 20.0 + r.below(4) as f32), ("amp", 0.5)];
            edits.push(new_synth("reader", next_id, r.below(2) as i32, 1, &controls));
            frees.push((block + 30, next_id));
        }
        free_due(&mut frees, block, &mut edits);
        edits
    });
    for s in spread {
        assert!(s as usize >= blocks * 9 / 10, "the group spread in only {s} of {blocks} blocks");
    }
}

/// Readers of a bus that a long-lived sibling writes arrive every block,
/// after it: the group runs on one thread (its synths' order matters),
/// and the readers are built at their turn, after the writer ran.
#[test]
fn a_group_gaining_readers_of_a_siblings_bus_every_block_spreads_and_matches_one_thread() {
    let setup = [
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("feedback", 900, 0, 1, &[("freq", 220.0), ("out", 30.0), ("amp", 0.3), ("life", 1e4)]),
    ];
    let (mut next_id, mut readers) = (1000, std::collections::VecDeque::new());
    let blocks = 300;
    let spread = play_edited_every_block(&setup, blocks, |block, r, e| {
        let bs = e.world.block_size as f32;
        let mut edits = Vec::new();
        next_id += 1;
        let controls = [("in", 30.0), ("out", r.below(4) as f32), ("amp", 0.5)];
        edits.push(new_synth("reader", next_id, 1, 1, &controls));
        readers.push_back((block + 20, next_id));
        if block % 3 == 0 {
            next_id += 1;
            let life = (20 + r.below(80)) as f32 * bs / 48_000.0;
            let controls = [("freq", 100.0 + r.below(1500) as f32), ("out", 4.0 + r.below(4) as f32), ("amp", 0.05), ("life", life)];
            edits.push(new_synth("feedback", next_id, 1, 1, &controls));
        }
        while readers.front().is_some_and(|&(at, _)| at <= block) {
            let (_, id) = readers.pop_front().unwrap();
            edits.push(OscMessage::new("/n_free", vec![i(id)]));
        }
        edits
    });
    // Each new reader waits for the feedback synth ahead of it; the rest
    // of the group runs side by side, from the block after the reader's
    // first, which builds it in order.
    for s in spread {
        assert!(s as usize >= blocks * 4 / 5, "the group spread in only {s} of {blocks} blocks");
    }
}

/// A def ending (done action 2) or pausing (done action 1) itself once a
/// line falls from `amp` to 0 over `life` seconds:
/// `Out.ar(out, SinOsc.ar(freq) * Line.kr(amp, 0, life, done_action))`.
fn line_voice_def(name: &str, done_action: f32) -> Vec<u8> {
    def_bytes(
        name,
        &[0.0, done_action],
        &[("freq", 300.0), ("out", 0.0), ("amp", 0.1), ("life", 1.0)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 0), (-1, 0)], &[2], 0),
            // start, end, duration, done action
            ("Line", 1, &[(0, 2), (-1, 0), (0, 3), (-1, 1)], &[1], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (2, 0)], &[2], 2),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

/// A def "counter": `Out.kr(bus, NumRunningSynths.kr)`.
fn counter_def() -> Vec<u8> {
    def_bytes(
        "counter",
        &[],
        &[("bus", 0.0)],
        &[
            ("Control", 1, &[], &[1], 0),
            ("NumRunningSynths", 1, &[], &[1], 0),
            ("Out", 1, &[(0, 0), (1, 0)], &[], 0),
        ],
    )
}

/// A note every block, each ending itself (done action 2) after 10 to 70
/// blocks, every eighth one pausing itself instead (done action 1) and
/// freed later; one in eight goes to a sequential group inside the
/// parallel one (where a note in its first block keeps the group on one
/// thread for that block).
/// An ended note stays in the tree until the next block, as in scsynth,
/// and is deleted then after the group has run, at its place in tree
/// order: the group still spreads in most blocks, and on two and four
/// threads every bus, the count of synths read before and after the group
/// (`NumRunningSynths`), and each block's node notifications (`/n_go`,
/// `/n_off`, `/n_end`, in order and with their neighbours) are one
/// thread's.
#[test]
fn a_group_whose_notes_end_themselves_spreads_and_notifies_as_one_thread_does() {
    let setup = [
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        OscMessage::new("/g_new", vec![i(2), i(1), i(1)]),
        new_synth("counter", 50, 0, 0, &[("bus", 0.0)]),
        new_synth("counter", 51, 1, 0, &[("bus", 1.0)]),
    ];
    let mut engines: Vec<OfflineEngine> = [1, 2, 4].iter().map(|&t| engine_with(t, 64, false)).collect();
    for e in &mut engines {
        for def in [line_voice_def("ending", 2.0), line_voice_def("pausing", 1.0), counter_def()] {
            assert!(e.add_synthdefs(&def).unwrap().iter().all(|r| r.is_ok()));
        }
        e.record_events = true;
        for m in &setup {
            e.perform_message(m).unwrap();
        }
    }
    let mut r = Rng(0x5E_ED0F_E4D5);
    let (mut next_id, mut frees) = (1000, Vec::new());
    let (mut ends, mut offs, mut counts) = (0, 0, std::collections::BTreeSet::new());
    let blocks = 600;
    let spread_before: Vec<u64> = engines.iter().map(|e| e.parallel_groups_run()).collect();
    for block in 0..blocks {
        let mut edits = Vec::new();
        next_id += 1;
        let life = (10 + r.below(60)) as f32 * 64.0 / 48_000.0;
        let controls = [("freq", 100.0 + r.below(1500) as f32), ("out", r.below(4) as f32), ("amp", 0.05), ("life", life)];
        let def = if next_id % 8 == 0 { "pausing" } else { "ending" };
        if def == "pausing" {
            frees.push((block + 100, next_id));
        }
        let target = if r.below(8) == 0 { 2 } else { 1 };
        edits.push(new_synth(def, next_id, r.below(2) as i32, target, &controls));
        free_due(&mut frees, block, &mut edits);
        perform_and_run(&mut engines, &edits);
        assert_buses_match(&engines, block);
        assert_counts_and_notes_match(&engines, block);
        let first = &engines[0];
        ends += first.events.iter().filter(|n| n.kind == NodeEventKind::End).count();
        offs += first.events.iter().filter(|n| n.kind == NodeEventKind::Off).count();
        counts.insert(first.world.control_bus[1] as i32 - first.world.control_bus[0] as i32);
        for e in &mut engines {
            e.events.clear();
            e.advance_block_counter();
        }
    }
    assert!(ends > 200 && offs > 20, "notes ended ({ends}) and paused ({offs}) themselves");
    assert!(counts.contains(&-1), "the synth after the group counts a note fewer when one ended: {counts:?}");
    assert_eq!(engines[0].parallel_groups_run(), 0);
    for (e, before) in engines.iter().zip(&spread_before).skip(1) {
        let spread = e.parallel_groups_run() - before;
        // On main before ended notes were deleted after the group: 226.
        assert!(spread as usize >= blocks * 3 / 4, "the group spread in only {spread} of {blocks} blocks");
    }
}

/// A voice ending itself whose bus writer is `OffsetOut`, whose destructor
/// writes the samples it held back: deleted after the group, it would add
/// them after its later siblings' writes rather than before. It keeps its
/// group on one thread in the block it is deleted in too (as while it
/// runs), and the group spreads again from the next block; a voice ending
/// itself through `Out` does not keep it on one thread.
#[test]
fn a_voice_whose_destructor_writes_a_bus_is_deleted_in_order_and_the_group_spreads_after() {
    let offset_voice = def_bytes(
        "offset_ending",
        &[0.0, 2.0],
        &[("freq", 300.0), ("out", 0.0), ("amp", 0.1), ("life", 1.0)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("SinOsc", 2, &[(0, 0), (-1, 0)], &[2], 0),
            ("Line", 1, &[(0, 2), (-1, 0), (0, 3), (-1, 1)], &[1], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (2, 0)], &[2], 2),
            ("OffsetOut", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    );
    let life = 20.0 * 64.0 / 48_000.0;
    for (def, ends_in_order) in [("offset_ending", true), ("ending", false)] {
        let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
        for k in 0..4 {
            setup.push(new_synth("sine", 100 + k, 1, 1, &[("freq", 200.0 + 70.0 * k as f32), ("out", (k % 2) as f32)]));
        }
        setup.push(new_synth(def, 200, 1, 1, &[("freq", 500.0), ("out", 1.0), ("amp", 0.1), ("life", life)]));
        let (mut one, mut two) = (engine(1), engine(2));
        for e in [&mut one, &mut two] {
            assert!(e.add_synthdefs(&offset_voice).unwrap().iter().all(|r| r.is_ok()));
            assert!(e.add_synthdefs(&line_voice_def("ending", 2.0)).unwrap().iter().all(|r| r.is_ok()));
            for m in &setup {
                e.perform_message(m).unwrap();
            }
        }
        let mut deleted_in = None;
        for block in 0..60 {
            let before = two.parallel_groups_run();
            let there = two.tree.contains_id(200);
            block_on_both(&mut one, &mut two, block, 64);
            let spread = two.parallel_groups_run() > before;
            if there && !two.tree.contains_id(200) {
                deleted_in = Some(block);
                assert_eq!(spread, !ends_in_order, "{def}: the block that deletes it");
            } else if deleted_in.is_some() {
                assert!(spread, "{def}: block {block}, after it is gone");
            }
        }
        assert!(deleted_in.is_some_and(|b| b > 15), "{def} ended itself");
    }
}

/// Notes arriving and ending in many patterns: mostly one at the group's
/// tail per block, sometimes a burst of them, none, or one at its head;
/// notes ending themselves after 5 to 120 blocks (so anywhere in the
/// group), one in sixteen pausing itself instead; now and then a held
/// note moved to another bus (`/n_set`) or freed. Notes write six buses,
/// some shared by many items, some by one. The group's work is changed in
/// place after most edits (new notes at the tail, notes that ended), and
/// each change is checked against the work worked out from the tree;
/// every bus, the synth counts around the group and every notification
/// are one thread's, on two and four threads.
#[test]
fn a_group_changed_in_place_as_notes_come_and_go_matches_one_thread_and_its_full_walk() {
    let setup = [
        OscMessage::new("/p_new", vec![i(1), i(1), i(0)]),
        new_synth("counter", 50, 0, 0, &[("bus", 0.0)]),
        new_synth("counter", 51, 1, 0, &[("bus", 1.0)]),
    ];
    let mut engines: Vec<OfflineEngine> = [1, 2, 4].iter().map(|&t| engine_with(t, 64, false)).collect();
    for e in &mut engines {
        for def in [line_voice_def("ending", 2.0), line_voice_def("pausing", 1.0), counter_def()] {
            assert!(e.add_synthdefs(&def).unwrap().iter().all(|r| r.is_ok()));
        }
        e.record_events = true;
        e.verify_parallel_in_place();
        for m in &setup {
            e.perform_message(m).unwrap();
        }
    }
    let mut r = Rng(0x1_2345_6789);
    let (mut next_id, mut frees, mut held) = (1000, Vec::new(), Vec::new());
    let blocks = 800;
    let before: Vec<(u64, u64)> = engines.iter().map(|e| (e.parallel_groups_run(), e.parallel_groups_in_place())).collect();
    for block in 0..blocks {
        let mut edits = Vec::new();
        let mut note = |r: &mut Rng, action: i32, edits: &mut Vec<OscMessage>| {
            next_id += 1;
            let hold = r.below(12) == 0;
            let life = if hold { 1e4 } else { (5 + r.below(115)) as f32 * 64.0 / 48_000.0 };
            let controls = [("freq", 100.0 + r.below(1500) as f32), ("out", r.below(6) as f32), ("amp", 0.05), ("life", life)];
            let def = if next_id % 16 == 0 { "pausing" } else { "ending" };
            if def == "pausing" {
                frees.push((block + 150, next_id));
            } else if hold {
                held.push(next_id);
            }
            edits.push(new_synth(def, next_id, action, 1, &controls));
        };
        match r.below(20) {
            0..=12 => note(&mut r, 1, &mut edits),
            13 | 14 => {
                for _ in 0..1 + r.below(5) {
                    note(&mut r, 1, &mut edits);
                }
            }
            15 | 16 => {}
            17 => note(&mut r, 0, &mut edits),
            18 if !held.is_empty() => {
                let id = held[r.below(held.len() as u64) as usize];
                edits.push(OscMessage::new("/n_set", vec![i(id), OscArg::Str("out".into()), OscArg::Float(r.below(6) as f32)]));
            }
            _ if !held.is_empty() => {
                let id = held.swap_remove(r.below(held.len() as u64) as usize);
                edits.push(OscMessage::new("/n_free", vec![i(id)]));
            }
            _ => {}
        }
        free_due(&mut frees, block, &mut edits);
        perform_and_run(&mut engines, &edits);
        for e in &engines {
            assert_eq!(e.parallel_in_place_mismatches(), 0, "block {block}: a change in place differs from the full walk");
        }
        assert_buses_match(&engines, block);
        assert_counts_and_notes_match(&engines, block);
        for e in &mut engines {
            e.events.clear();
            e.advance_block_counter();
        }
    }
    assert_eq!(engines[0].parallel_groups_run(), 0);
    for (e, &(spread, in_place)) in engines.iter().zip(&before).skip(1) {
        let (spread, in_place) = (e.parallel_groups_run() - spread, e.parallel_groups_in_place() - in_place);
        assert!(spread as usize >= blocks * 3 / 4, "the group spread in only {spread} of {blocks} blocks");
        assert!(in_place as usize >= blocks / 2, "the work was changed in place only {in_place} times in {blocks} blocks");
    }
}

/// Frees the synths whose time has come by `block` (`/n_free` in `edits`), keeping the others.
fn free_due(frees: &mut Vec<(usize, i32)>, block: usize, edits: &mut Vec<OscMessage>) {
    frees.retain(|&(at, id)| {
        if at <= block {
            edits.push(OscMessage::new("/n_free", vec![i(id)]));
        }
        at > block
    });
}

/// Performs `edits` on every engine, then runs a block on each.
fn perform_and_run(engines: &mut [OfflineEngine], edits: &[OscMessage]) {
    for m in edits {
        for e in engines.iter_mut() {
            e.perform_message(m).unwrap();
        }
    }
    for e in engines.iter_mut() {
        e.run_block();
    }
}

/// Runs `blocks` blocks of `setup` on one, two and four threads with the
/// edits `edits` makes before each (the same messages for every engine),
/// comparing after each block every audio bus, the synth counts a
/// "counter" writes to control buses 0 and 1, and the node notifications,
/// bit for bit and in order; returns, for two and four threads, how many
/// group runs spread and how many of them ran several groups as one queue.
fn play_fused(
    setup: &[OscMessage],
    blocks: usize,
    mut edits: impl FnMut(usize, &mut Rng) -> Vec<OscMessage>,
) -> Vec<(u64, u64)> {
    let mut engines: Vec<OfflineEngine> = [1, 2, 4].iter().map(|&t| engine_with(t, 64, false)).collect();
    for e in &mut engines {
        for def in [line_voice_def("ending", 2.0), line_voice_def("pausing", 1.0), counter_def(), feedback_def()] {
            assert!(e.add_synthdefs(&def).unwrap().iter().all(|r| r.is_ok()));
        }
        e.record_events = true;
        for m in setup {
            e.perform_message(m).unwrap();
        }
    }
    let mut r = Rng(0x0F05_ED6A_00F5);
    let before: Vec<(u64, u64)> = engines.iter().map(|e| (e.parallel_groups_run(), e.parallel_groups_fused())).collect();
    for block in 0..blocks {
        for m in &edits(block, &mut r) {
            let answers: Vec<_> = engines.iter_mut().map(|e| e.perform_message(m).map_err(|f| f.message())).collect();
            assert!(answers.iter().all(|a| *a == answers[0]), "all engines answer {m:?} alike");
        }
        for e in &mut engines {
            e.run_block();
        }
        assert_buses_match(&engines, block);
        assert_counts_and_notes_match(&engines, block);
        for e in &mut engines {
            e.events.clear();
            e.advance_block_counter();
        }
    }
    assert_eq!(engines[0].parallel_groups_run(), 0);
    engines
        .iter()
        .zip(&before)
        .skip(1)
        .map(|(e, b)| (e.parallel_groups_run() - b.0, e.parallel_groups_fused() - b.1))
        .collect()
}

/// Three parallel groups one after another at the root's tail, between a
/// counter and a source of buses 20 and 21 before them and a counter after
/// them: (stereo) sines on the shared outputs and on buses of their own,
/// readers of bus 20 in the second; with `feed`, the third group reads bus
/// 22, which a sine of the first writes, else bus 40, which none writes.
fn three_parallel_groups(feed: bool) -> Vec<OscMessage> {
    let mut setup = vec![
        new_synth("counter", 50, 0, 0, &[("bus", 0.0)]),
        new_synth("sine", 51, 1, 0, &[("freq", 330.0), ("out", 20.0)]),
    ];
    for g in 1..=3 {
        setup.push(OscMessage::new("/p_new", vec![i(g), i(1), i(0)]));
    }
    setup.push(new_synth("counter", 52, 1, 0, &[("bus", 1.0)]));
    for k in 0..6 {
        let out = if k < 3 { (k % 2) as f32 } else { 2.0 * k as f32 };
        setup.push(new_synth("sine", 100 + k, 1, 1, &[("freq", 200.0 + 50.0 * k as f32), ("out", out)]));
    }
    setup.push(new_synth("sine", 106, 1, 1, &[("freq", 710.0), ("out", 21.0)]));
    for k in 0..4 {
        setup.push(new_synth("reader", 200 + k, 1, 2, &[("in", 20.0), ("out", (k % 2) as f32), ("amp", 0.1 + 0.1 * k as f32)]));
    }
    setup.push(new_synth("sine", 204, 1, 2, &[("freq", 900.0), ("out", 30.0)]));
    for k in 0..3 {
        setup.push(new_synth("sine", 300 + k, 1, 3, &[("freq", 120.0 + 30.0 * k as f32), ("out", 0.0)]));
    }
    let input = if feed { 22.0 } else { 40.0 };
    setup.push(new_synth("reader", 303, 1, 3, &[("in", input), ("out", 1.0)]));
    setup
}

#[test]
fn consecutive_parallel_groups_run_as_one_queue_and_match_one_thread() {
    let blocks = 300;
    for (spread, fused) in play_fused(&three_parallel_groups(false), blocks, |_, _| Vec::new()) {
        // The first block builds the synths, in order; from the next one
        // on the three groups run as one queue.
        assert!(fused + 2 >= blocks as u64, "the groups ran as one queue in only {fused} of {blocks} blocks");
        assert!(spread <= blocks as u64 + 3, "one run for the three groups: {spread} runs in {blocks} blocks");
    }
}

#[test]
fn a_parallel_group_reading_what_an_earlier_sibling_writes_joins_its_queue_and_matches_one_thread() {
    let blocks = 300;
    for (spread, fused) in play_fused(&three_parallel_groups(true), blocks, |_, _| Vec::new()) {
        // Reader 303 of the third group hears sine 106 of the first: in the
        // one queue of the three groups it waits for that sine.
        assert!(fused + 2 >= blocks as u64, "the groups ran as one queue in only {fused} of {blocks} blocks");
        assert!(spread <= blocks as u64 + 3, "one run for the three groups: {spread} runs in {blocks} blocks");
    }
}

/// Notes come and go in all three groups every block (ending and pausing
/// themselves, freed), the third group's reader now and then hears the
/// first group's bus and then again not, a group's children are freed, a
/// group is moved ahead of the others, one is freed and made anew: every
/// bus, the synth counts and the notifications stay one thread's, and the
/// groups run as one queue in many blocks.
#[test]
fn consecutive_parallel_groups_edited_every_block_match_one_thread() {
    let (mut next_id, mut frees) = (1000, Vec::new());
    let blocks = 600;
    let runs = play_fused(&three_parallel_groups(false), blocks, |block, r| {
        let mut edits = Vec::new();
        if block % 2 == 0 {
            next_id += 1;
            let life = (10 + r.below(60)) as f32 * 64.0 / 48_000.0;
            let controls = [("freq", 100.0 + r.below(1500) as f32), ("out", r.below(4) as f32), ("amp", 0.05), ("life", life)];
            let def = if next_id % 8 == 0 { "pausing" } else { "ending" };
            if def == "pausing" {
                frees.push((block + 100, next_id));
            }
            let group = 1 + r.below(3) as i32;
            edits.push(new_synth(def, next_id, r.below(2) as i32, group, &controls));
        }
        free_due(&mut frees, block, &mut edits);
        match block {
            // The reader hears the first group's sine, then no longer.
            100 | 400 => edits.push(OscMessage::new("/n_set", vec![i(303), OscArg::Str("in".into()), OscArg::Float(22.0)])),
            150 | 450 => edits.push(OscMessage::new("/n_set", vec![i(303), OscArg::Str("in".into()), OscArg::Float(40.0)])),
            200 => edits.push(OscMessage::new("/g_freeAll", vec![i(2)])),
            250 => edits.push(OscMessage::new("/g_head", vec![i(0), i(3)])),
            300 => edits.push(OscMessage::new("/n_free", vec![i(2)])),
            350 => {
                edits.push(OscMessage::new("/p_new", vec![i(2), i(3), i(1)]));
                edits.push(new_synth("feedback", 250, 1, 2, &[("freq", 500.0), ("out", 22.0), ("life", 1e4)]));
            }
            _ => {}
        }
        edits
    });
    for (spread, fused) in runs {
        assert!(fused as usize >= blocks / 4, "the groups ran as one queue in only {fused} of {blocks} blocks");
        assert!(spread as usize >= blocks / 2, "groups spread in only {spread} of {blocks} blocks");
    }
}

/// A def "replacer": `ReplaceOut.ar(out, SinOsc.ar(freq) * 0.25)`.
fn replacer_def() -> Vec<u8> {
    def_bytes(
        "replacer",
        &[0.0, 0.25],
        &[("freq", 700.0), ("out", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("SinOsc", 2, &[(0, 0), (-1, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (-1, 1)], &[2], 2),
            ("ReplaceOut", 2, &[(0, 1), (2, 0)], &[], 0),
        ],
    )
}

/// A `ReplaceOut` among the `Out`s of a spread group's children: on bus 0
/// it throws away what the children before it wrote and keeps what the
/// ones after it add, so the writes of the item that holds it must be
/// applied in the children's order, whichever thread ran it.
#[test]
fn a_replace_out_among_siblings_outs_keeps_what_follows_it_and_drops_what_came_before() {
    let mut setup = vec![OscMessage::new("/p_new", vec![i(1), i(1), i(0)])];
    for k in 0..33 {
        let id = 100 + k;
        if k == 19 {
            setup.push(new_synth("replacer", id, 1, 1, &[("out", 0.0)]));
        } else {
            let controls = [("freq", 150.0 + 37.0 * k as f32), ("amp", 0.02), ("out", (k % 3 / 2) as f32)];
            setup.push(new_synth("sine", id, 1, 1, &controls));
        }
    }
    let spread = one_vs_two_threads_with_defs(&setup, 200, &[replacer_def()]);
    assert_spread(spread, 200, "the sines around a ReplaceOut");
}
