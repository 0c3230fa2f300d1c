//! Parallel groups render exactly what the same tree renders on one thread:
//! random trees of sequential and parallel groups (nested, with satellites
//! and paused nodes), edited between blocks, compared bus by bus, bit for bit.

use magnetar_engine::{Engine, EngineOptions};
use magnetar_protocol::osc::{OscArg, OscMessage};

const BLOCKS: usize = 1500;
const BUSES: usize = 12;

fn engine(threads: usize) -> Engine {
    let opts = EngineOptions {
        sample_rate: 48_000.0,
        block_size: 64,
        num_audio_buses: 64,
        num_control_buses: 64,
        num_buffers: 8,
        num_input_channels: 2,
        num_output_channels: 2,
        threads,
        seed: Some(7),
        ..Default::default()
    };
    let mut e = Engine::new(opts);
    let def = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../synthdef/tests/fixtures/sine.scsyndef")).unwrap();
    let installed = e.add_synthdefs(&def).unwrap();
    assert!(installed.iter().all(|r| r.is_ok()));
    e
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn i(v: i32) -> OscArg {
    OscArg::Int(v)
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
            OscMessage::new(
                "/s_new",
                vec![
                    OscArg::Str("sine".into()),
                    i(*next_id),
                    i(action),
                    i(target),
                    OscArg::Str("freq".into()),
                    OscArg::Float(100.0 + r.below(2000) as f32),
                    OscArg::Str("amp".into()),
                    OscArg::Float(0.01 * (1 + r.below(9)) as f32),
                    OscArg::Str("out".into()),
                    OscArg::Float(r.below(BUSES as u64 - 1) as f32),
                ],
            )
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
            OscMessage::new("/n_set", vec![i(id), OscArg::Str("freq".into()), OscArg::Float(50.0 + r.below(500) as f32)])
        }
        _ => {
            let id = nodes.get(r.below(nodes.len().max(1) as u64) as usize).copied().unwrap_or(0);
            OscMessage::new("/g_head", vec![i(group), i(id)])
        }
    }
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
    for m in [OscMessage::new("/p_new", vec![i(1), i(0), i(0)])] {
        one.perform_message(&m).unwrap();
        two.perform_message(&m).unwrap();
        groups.push(1);
        nodes.push(1);
    }
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
    let bs = 64;
    for block in 0..BLOCKS {
        if block % 4 == 0 {
            for _ in 0..r.below(4) {
                let m = random_edit(&mut r, &mut next_id, &mut groups, &mut nodes);
                let a = one.perform_message(&m).map_err(|f| f.message);
                let b = two.perform_message(&m).map_err(|f| f.message);
                assert_eq!(a, b, "both engines answer {m:?} alike");
            }
        }
        one.run_block();
        two.run_block();
        for bus in 0..BUSES {
            let ta = one.world.audio_touched[bus] == one.world.buf_counter;
            let tb = two.world.audio_touched[bus] == two.world.buf_counter;
            assert_eq!(ta, tb, "block {block}: bus {bus} written by one engine only");
            if ta {
                let a = &one.world.audio_bus[bus * bs..(bus + 1) * bs];
                let b = &two.world.audio_bus[bus * bs..(bus + 1) * bs];
                assert!(
                    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "block {block}: bus {bus} differs between one and two threads"
                );
            }
        }
        one.advance_block_counter();
        two.advance_block_counter();
    }
    assert!(two.parallel_groups_run() > BLOCKS as u64 / 2, "most blocks ran a group on two threads");
    assert_eq!(one.parallel_groups_run(), 0);
}

#[test]
fn a_parallel_groups_queue_is_compiled_again_only_when_its_children_change() {
    let mut e = engine(2);
    let s_new = |id: i32, group: i32| {
        OscMessage::new("/s_new", vec![OscArg::Str("sine".into()), i(id), i(1), i(group), OscArg::Str("out".into()), OscArg::Float(0.0)])
    };
    let run = |e: &mut Engine, blocks: usize| {
        for _ in 0..blocks {
            e.run_block();
            e.advance_block_counter();
        }
    };
    // Two consecutive parallel groups of different sizes.
    e.perform_message(&OscMessage::new("/p_new", vec![i(1), i(1), i(0)])).unwrap();
    e.perform_message(&OscMessage::new("/p_new", vec![i(2), i(1), i(0)])).unwrap();
    for id in 100..106 {
        e.perform_message(&s_new(id, 1)).unwrap();
    }
    for id in 200..203 {
        e.perform_message(&s_new(id, 2)).unwrap();
    }
    run(&mut e, 2); // the synths' first blocks run them in order
    let compiled = e.parallel_queues_compiled();
    let groups = e.parallel_groups_run();
    run(&mut e, 200);
    assert_eq!(e.parallel_groups_run() - groups, 400, "both groups ran in parallel on every block");
    assert_eq!(compiled, 2, "one queue per group size");
    assert_eq!(e.parallel_queues_compiled(), compiled, "unchanged groups reuse their queues");

    // A new child changes one group: its queue is compiled once more.
    e.perform_message(&s_new(106, 1)).unwrap();
    run(&mut e, 200);
    assert_eq!(e.parallel_queues_compiled(), compiled + 1);
}
