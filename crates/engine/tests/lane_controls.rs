//! A synth in a lane batch leaves out its def's leading control steps
//! while its controls are as they were computed: the engine must notice
//! every way a control changes between blocks. Engines with and without
//! lane batches, on one thread and on two, render the same samples bit for
//! bit, block after block, while controls are set (`/n_set`, `/n_setn`,
//! `/n_fill`, to the same value, to another, to -0 and back, to NaN),
//! mapped to control and audio buses and unmapped, synths are paused,
//! freed in the middle of a batch and new ones join it.

mod common;

use common::{def_bytes, engine_with_defs, f, fsin_bank_def, i, perform_alike, run_block_alike, s, PerformOsc, Rng};
use magnetar_engine::{GraphDef, OfflineEngine};
use magnetar_protocol::{OscArg, OscMessage};
use magnetar_ugens::Registry;

const AUDIO_BUSES: usize = 64;
const BLOCKS: usize = 200;

/// "wobble": as "bank", but one product reads a control-rate LFSaw, which
/// is not a control step: only the Control leads the def.
fn wobble_def() -> Vec<u8> {
    def_bytes(
        "wobble",
        &[2.0, 3.0, 4.0, 0.0, 0.025, 1.5],
        &[("freq", 100.0), ("bus", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("LFSaw", 1, &[(-1, 5), (-1, 3)], &[1], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 0)], &[1], 2),
            ("BinaryOpUGen", 1, &[(0, 0), (1, 0)], &[1], 2),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 2)], &[1], 2),
            ("FSinOsc", 2, &[(0, 0), (-1, 3)], &[2], 0),
            ("FSinOsc", 2, &[(2, 0), (-1, 3)], &[2], 0),
            ("FSinOsc", 2, &[(3, 0), (-1, 3)], &[2], 0),
            ("FSinOsc", 2, &[(4, 0), (-1, 3)], &[2], 0),
            ("Sum4", 2, &[(5, 0), (6, 0), (7, 0), (8, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(9, 0), (-1, 4)], &[2], 2),
            ("Out", 2, &[(0, 1), (10, 0)], &[], 0),
        ],
    )
}

/// "lone": one control-rate product of a control, alone in its step (no
/// run of operators), beside the audio units that read the control.
fn lone_def() -> Vec<u8> {
    def_bytes(
        "lone",
        &[1.01, 0.3, 0.01],
        &[("freq", 100.0), ("bus", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("Saw", 2, &[(0, 0)], &[2], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 0)], &[1], 2),
            ("Pulse", 2, &[(2, 0), (-1, 1)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (3, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(4, 0), (-1, 2)], &[2], 2),
            ("Out", 2, &[(0, 1), (5, 0)], &[], 0),
        ],
    )
}

#[test]
fn the_leading_control_steps_are_the_controls_and_the_operators_reading_them() {
    let compile = |bytes: &[u8]| {
        let defs = magnetar_synthdef::parse(bytes).expect("a def");
        GraphDef::compile(&defs[0], &Registry::with_all(), 64).expect("compiles")
    };
    let bank = compile(&fsin_bank_def());
    assert!(bank.lockstep);
    assert_eq!(bank.control_prefix, 2, "the Control and the run of products");
    assert_eq!(bank.prefix_controls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1]);
    let wobble = compile(&wobble_def());
    assert!(wobble.control_prefix <= 1, "a product reads the LFSaw: {}", wobble.control_prefix);
    assert_eq!(wobble.prefix_controls.len(), 2 * wobble.control_prefix);
    let lone = compile(&lone_def());
    assert!(lone.lockstep);
    assert_eq!(lone.control_prefix, 2, "the Control and the product alone in its step");
}

fn engine(threads: usize, lockstep: bool) -> OfflineEngine {
    engine_with_defs(threads, lockstep, AUDIO_BUSES, &[fsin_bank_def(), wobble_def(), lone_def()], |_| {})
}

fn new_synth(r: &mut Rng, id: i32) -> OscMessage {
    let def = match r.below(5) {
        0 => "wobble",
        1 => "lone",
        _ => "bank",
    };
    let bus = if r.below(3) == 0 { r.below(4) } else { 8 + (id as u64 % 40) };
    OscMessage::new("/s_new", vec![s(def), i(id), i(1), i(1), s("freq"), f(50.0 + r.below(2000) as f32), s("bus"), f(bus as f32)])
}

/// A change of one synth's controls, mapping or place, between blocks.
fn edit(r: &mut Rng, ids: &mut Vec<i32>, next_id: &mut i32) -> Vec<OscMessage> {
    let Some(&id) = ids.get(r.below(ids.len().max(1) as u64) as usize) else { return Vec::new() };
    let m = |a: &str, args: Vec<OscArg>| OscMessage::new(a, args);
    match r.below(14) {
        0 | 1 => vec![m("/n_set", vec![i(id), s("freq"), f(50.0 + r.below(2000) as f32)])],
        2 => vec![m("/n_set", vec![i(id), i(0), f(0.0)]), m("/n_set", vec![i(id), i(0), f(-0.0)])],
        3 => vec![m("/n_set", vec![i(id), s("freq"), f(f32::NAN)])],
        4 => vec![m("/n_setn", vec![i(id), i(0), i(2), f(300.0 + r.below(900) as f32), f((8 + r.below(40)) as f32)])],
        5 => vec![m("/n_fill", vec![i(id), i(0), i(1), f(440.0)])],
        6 => {
            let bus = r.below(16) as i32;
            vec![m("/c_set", vec![i(bus), f(100.0 + r.below(500) as f32)]), m("/n_map", vec![i(id), s("freq"), i(bus)])]
        }
        7 => vec![m("/n_map", vec![i(id), s("freq"), i(-1)])],
        8 => vec![m("/n_mapa", vec![i(id), s("freq"), i(r.below(AUDIO_BUSES as u64) as i32)])],
        9 => vec![m("/n_mapa", vec![i(id), s("freq"), i(-1)])],
        10 => vec![m("/n_run", vec![i(id), i(r.below(2) as i32)])],
        11 => {
            ids.retain(|&x| x != id);
            vec![m("/n_free", vec![i(id)])]
        }
        12 => {
            *next_id += 1;
            ids.push(*next_id);
            vec![new_synth(r, *next_id)]
        }
        // The same value again: nothing changes.
        _ => vec![m("/n_set", vec![i(id), s("freq"), f(440.0)]), m("/n_set", vec![i(id), s("freq"), f(440.0)])],
    }
}

#[test]
fn controls_changed_between_blocks_render_the_same_with_and_without_lanes() {
    for seed in 1..=4u64 {
        // A sequential group with and without lane batches, and a parallel
        // group (whose items are lane batches) spread on two threads.
        let mut engines = [("lanes", engine(1, true)), ("no lanes", engine(1, false)), ("a parallel group on two threads", engine(2, true))];
        for ((_, e), group) in engines.iter_mut().zip(["/g_new", "/g_new", "/p_new"]) {
            e.perform_message(&OscMessage::new(group, vec![i(1), i(0), i(0)])).unwrap();
        }
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut ids: Vec<i32> = (1000..1040).collect();
        let mut next_id = 1039;
        let mut setup: Vec<OscMessage> = ids.iter().map(|&id| new_synth(&mut r, id)).collect();
        let mut sound = 0;
        for block in 0..BLOCKS {
            let messages = if block == 0 {
                std::mem::take(&mut setup)
            } else {
                (0..r.below(4)).flat_map(|_| edit(&mut r, &mut ids, &mut next_id)).collect()
            };
            for msg in &messages {
                perform_alike(&mut engines, msg);
            }
            sound += run_block_alike(&format!("seed {seed}, block {block}"), &mut engines, AUDIO_BUSES);
        }
        assert!(sound > BLOCKS, "seed {seed}: too little sound to compare ({sound})");
    }
}
