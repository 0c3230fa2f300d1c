//! A block that changes nothing is kept as the plan of the next one
//! (`engine/plan.rs`), which replays the walk's moves without deciding them
//! again. Engines with and without plans, on one thread and on two, render
//! random trees the same, bus by bus, bit for bit, and send the same node
//! notifications in the same order, block after block, while synths end
//! themselves and their neighbours in the middle of a block (done actions
//! 2 to 15 of `Line`), notes come and go, controls change and nodes pause.
//! And a block after a block that changed nothing takes the controls of
//! the synths in lane batches as computed, but not after a block in which
//! a synth resumed a voice the walk had passed.

mod common;

use common::{def_bytes, engine_with_defs, f, i, perform_alike, run_block_alike, s, Rng};
use magnetar_engine::{CalcState, NodeEvent, OfflineEngine};
use magnetar_protocol::OscMessage;

const AUDIO_BUSES: usize = 32;
const BLOCKS: usize = 300;

/// "voice": `Out.ar(out, RLPF.ar(Saw.ar(freq) + Pulse.ar(freq * 1.01, 0.3), 1500, 0.5) * 0.1)`:
/// its synths run in lane batches, across group borders too.
fn voice_def() -> Vec<u8> {
    def_bytes(
        "voice",
        &[1.01, 0.3, 0.5, 1500.0, 0.1],
        &[("freq", 200.0), ("out", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("Saw", 2, &[(0, 0)], &[2], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 0)], &[1], 2),
            ("Pulse", 2, &[(2, 0), (-1, 1)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (3, 0)], &[2], 0),
            ("RLPF", 2, &[(4, 0), (-1, 3), (-1, 2)], &[2], 0),
            ("BinaryOpUGen", 2, &[(5, 0), (-1, 4)], &[2], 2),
            ("Out", 2, &[(0, 1), (6, 0)], &[], 0),
        ],
    )
}

/// "ender": `Out.ar(out, FSinOsc.ar(freq) * Line.kr(1, 0, dur, da))`: it
/// ends after `dur` seconds with done action `da`, which may end, pause,
/// resume or free its neighbours, its group or its group's other children.
fn ender_def() -> Vec<u8> {
    def_bytes(
        "ender",
        &[1.0, 0.0],
        &[("freq", 300.0), ("out", 0.0), ("dur", 0.1), ("da", 2.0)],
        &[
            ("Control", 1, &[], &[1, 1, 1, 1], 0),
            ("Line", 1, &[(-1, 0), (-1, 1), (0, 2), (0, 3)], &[1], 0),
            ("FSinOsc", 2, &[(0, 0), (-1, 1)], &[2], 0),
            ("BinaryOpUGen", 2, &[(2, 0), (1, 0)], &[2], 2),
            ("Out", 2, &[(0, 1), (3, 0)], &[], 0),
        ],
    )
}

fn engine(threads: usize, plans: bool) -> OfflineEngine {
    let mut e = engine_with_defs(threads, true, AUDIO_BUSES, &[voice_def(), ender_def(), toggler_def()], |_| {});
    e.plans = plans;
    e.record_events = true;
    e
}

/// A synth of `def` at the tail of `group`.
fn synth(r: &mut Rng, def: &str, id: i32, group: i32) -> OscMessage {
    let mut args =
        vec![s(def), i(id), i(1), i(group), s("freq"), f(60.0 + r.below(1500) as f32), s("out"), f(r.below(6) as f32)];
    if def == "ender" {
        // Most end within the render, some a block or two after they start.
        const ACTIONS: [i32; 15] = [2, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
        let dur = if r.below(4) == 0 { 0.002 } else { 0.02 + r.below(300) as f32 * 0.001 };
        args.extend([s("dur"), f(dur), s("da"), f(ACTIONS[r.below(15) as usize] as f32)]);
    }
    OscMessage::new("/s_new", args)
}

/// Fills `group` with runs of voices, enders and groups of either kind
/// holding more of the same.
fn fill(r: &mut Rng, next_id: &mut i32, group: i32, depth: usize, out: &mut Vec<OscMessage>) {
    for _ in 0..2 + r.below(5) {
        *next_id += 1;
        match r.below(7) {
            0 | 1 if depth < 3 => {
                let cmd = if r.below(3) == 0 { "/p_new" } else { "/g_new" };
                out.push(OscMessage::new(cmd, vec![i(*next_id), i(1), i(group)]));
                let g = *next_id;
                fill(r, next_id, g, depth + 1, out);
            }
            2 | 3 => {
                // A run of voices, mostly after an ender, which may end or
                // pause some of them as it ends (done actions 4, 8, 10, 13).
                if r.below(3) != 0 {
                    out.push(synth(r, "ender", *next_id, group));
                }
                for _ in 0..1 + r.below(12) {
                    *next_id += 1;
                    out.push(synth(r, "voice", *next_id, group));
                }
            }
            4 => {
                // An ender before a group of voices, which it may empty
                // (done actions 6 and 12).
                out.push(synth(r, "ender", *next_id, group));
                *next_id += 1;
                out.push(OscMessage::new("/g_new", vec![i(*next_id), i(1), i(group)]));
                let g = *next_id;
                for _ in 0..2 + r.below(8) {
                    *next_id += 1;
                    out.push(synth(r, "voice", *next_id, g));
                }
            }
            _ => out.push(synth(r, "ender", *next_id, group)),
        }
    }
}

/// An edit between blocks: a control set, a pause or resume, a node freed,
/// a new voice or ender.
fn edit(r: &mut Rng, next_id: &mut i32) -> OscMessage {
    let id = 2 + r.below(*next_id as u64) as i32;
    match r.below(5) {
        0 => OscMessage::new("/n_set", vec![i(id), s("freq"), f(100.0 + r.below(900) as f32)]),
        1 => OscMessage::new("/n_run", vec![i(id), i(r.below(2) as i32)]),
        2 => OscMessage::new("/n_free", vec![i(id)]),
        k => {
            *next_id += 1;
            let def = if k == 3 { "voice" } else { "ender" };
            OscMessage::new("/s_new", vec![s(def), i(*next_id), i(3), i(id), s("out"), f(r.below(6) as f32)])
        }
    }
}

#[test]
fn blocks_replayed_from_a_plan_render_and_notify_as_the_walk_does() {
    let (mut replays, mut resumed, mut replays_threads, mut sound) = (0, 0, 0, 0);
    for seed in 1..=6u64 {
        let mut engines = [
            ("plans", engine(1, true)),
            ("no plans", engine(1, false)),
            ("plans on two threads", engine(2, true)),
            ("no plans on two threads", engine(2, false)),
        ];
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut next_id = 1;
        let mut setup = vec![OscMessage::new("/g_new", vec![i(1), i(0), i(0)])];
        fill(&mut r, &mut next_id, 1, 0, &mut setup);
        for block in 0..BLOCKS {
            // Mostly blocks without edits, which replay the plan.
            let messages = match block {
                0 => std::mem::take(&mut setup),
                _ if r.below(6) == 0 => (0..1 + r.below(3)).map(|_| edit(&mut r, &mut next_id)).collect(),
                _ => Vec::new(),
            };
            for msg in &messages {
                perform_alike(&mut engines, msg);
            }
            sound += run_block_alike(&format!("seed {seed}, block {block}"), &mut engines, AUDIO_BUSES);
            let (first, rest) = engines.split_first_mut().unwrap();
            let events: Vec<NodeEvent> = std::mem::take(&mut first.1.events);
            for (name, e) in rest.iter_mut() {
                assert_eq!(
                    events,
                    std::mem::take(&mut e.events),
                    "seed {seed}, block {block}: notifications of plans and {name}"
                );
            }
            assert_eq!(first.1.tree.num_synths, rest[0].1.tree.num_synths, "seed {seed}, block {block}");
        }
        let (r1, m1) = engines[0].1.plan_replays();
        replays += r1;
        resumed += m1;
        replays_threads += engines[2].1.plan_replays().0;
        assert_eq!(engines[1].1.plan_replays(), (0, 0), "an engine without plans replayed one");
    }
    assert!(sound > 6 * BLOCKS, "too little sound to compare ({sound} bus blocks)");
    eprintln!("{sound} bus blocks of sound, {replays} blocks replayed ({resumed} went on from the middle), {replays_threads} on two threads");
    // The comparison covered replayed blocks, and blocks where a synth
    // changed the tree in the middle of a replay.
    assert!(replays > (6 * BLOCKS / 2) as u64, "{replays} blocks replayed of {}", 6 * BLOCKS);
    assert!(resumed >= 10, "{resumed} replays went on from the middle");
    assert!(replays_threads > (6 * BLOCKS / 4) as u64, "{replays_threads} blocks replayed on two threads");
}

/// "toggler": `Pause.kr(LFPulse.kr(rate), id)`: pauses node `id` and
/// resumes it every half period of the pulse, in the middle of a block,
/// with no command.
fn toggler_def() -> Vec<u8> {
    def_bytes(
        "toggler",
        &[0.0, 0.5],
        &[("id", 0.0), ("rate", 10.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("LFPulse", 1, &[(0, 1), (-1, 0), (-1, 1)], &[1], 0),
            ("Pause", 1, &[(1, 0), (0, 0)], &[1], 0),
        ],
    )
}

#[test]
fn a_voice_resumed_after_the_walk_passed_it_computes_the_controls_it_was_given_while_paused() {
    // A voice in the middle of a lane batch is paused and resumed by a
    // synth after it, and its frequency set now and then, also while it is
    // paused. The block that resumes it changed the tree as it ran, so the
    // next block may not take the voice's controls as computed: its
    // Control did not run while it was paused and holds the old frequency.
    let mut engines = [("lanes", engine(1, true)), ("no lanes", engine(1, true))];
    engines[1].1.lockstep = false;
    let mut setup = vec![OscMessage::new("/g_new", vec![i(1), i(0), i(0)])];
    for id in 10..14 {
        setup.push(OscMessage::new("/s_new", vec![s("voice"), i(id), i(1), i(1), s("freq"), f(110.0 * id as f32)]));
    }
    // A period of 20 blocks: paused for 10, running for 10.
    setup.push(OscMessage::new("/s_new", vec![s("toggler"), i(20), i(1), i(1), s("id"), f(11.0), s("rate"), f(37.5)]));
    let mut r = Rng(5);
    let mut set_while_paused = 0;
    for block in 0..400 {
        let messages = match block {
            0 => std::mem::take(&mut setup),
            _ if block % 7 == 0 => {
                vec![OscMessage::new("/n_set", vec![i(11), s("freq"), f(200.0 + r.below(800) as f32)])]
            }
            _ => Vec::new(),
        };
        for msg in &messages {
            perform_alike(&mut engines, msg);
        }
        let paused = engines[0].1.tree.lookup(11).is_some_and(|n| engines[0].1.tree.node(n).state == CalcState::Paused);
        set_while_paused += usize::from(block % 7 == 0 && paused);
        run_block_alike(&format!("block {block}"), &mut engines, 6);
    }
    assert!(set_while_paused >= 5, "the frequency was set {set_while_paused} times while the voice was paused");
}
