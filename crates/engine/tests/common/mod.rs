//! Helpers shared by the engine's integration tests.
//!
//! Each test binary includes this module and uses part of it.
#![allow(dead_code)]

use magnetar_engine::commands::CommandFailure;
use magnetar_engine::{EngineOptions, OfflineEngine};
use magnetar_protocol::{OscArg, OscMessage, PreparedMessage};

/// Performs an OSC message as the server does: prepared (decoded into its
/// command) first, then performed. The engine itself takes only prepared
/// commands.
pub trait PerformOsc {
    fn perform_message(&mut self, msg: &OscMessage) -> Result<(), CommandFailure>;
}

impl PerformOsc for OfflineEngine {
    fn perform_message(&mut self, msg: &OscMessage) -> Result<(), CommandFailure> {
        self.perform(&PreparedMessage::new(msg))
    }
}

/// (class, rate, inputs as (unit, output) with unit -1 for a constant, output rates, special index)
pub type UGenSpec<'a> = (&'a str, u8, &'a [(i32, i32)], &'a [u8], i16);

/// A def in the SynthDef file format, version 2, from its parts.
pub fn def_bytes(name: &str, constants: &[f32], controls: &[(&str, f32)], ugens: &[UGenSpec<'_>]) -> Vec<u8> {
    fn pstr(b: &mut Vec<u8>, s: &str) {
        b.push(s.len() as u8);
        b.extend_from_slice(s.as_bytes());
    }
    let i32s = |b: &mut Vec<u8>, v: i32| b.extend_from_slice(&v.to_be_bytes());
    let mut b = b"SCgf".to_vec();
    i32s(&mut b, 2);
    b.extend_from_slice(&1i16.to_be_bytes());
    pstr(&mut b, name);
    i32s(&mut b, constants.len() as i32);
    for v in constants {
        b.extend_from_slice(&v.to_be_bytes());
    }
    i32s(&mut b, controls.len() as i32);
    for (_, v) in controls {
        b.extend_from_slice(&v.to_be_bytes());
    }
    i32s(&mut b, controls.len() as i32);
    for (k, (name, _)) in controls.iter().enumerate() {
        pstr(&mut b, name);
        i32s(&mut b, k as i32);
    }
    i32s(&mut b, ugens.len() as i32);
    for &(class, rate, inputs, outputs, special) in ugens {
        pstr(&mut b, class);
        b.push(rate);
        i32s(&mut b, inputs.len() as i32);
        i32s(&mut b, outputs.len() as i32);
        b.extend_from_slice(&special.to_be_bytes());
        for &(u, o) in inputs {
            i32s(&mut b, u);
            i32s(&mut b, o);
        }
        b.extend_from_slice(outputs);
    }
    b.extend_from_slice(&0i16.to_be_bytes()); // variants
    b
}

/// A small xorshift generator: the random tests' trees and edits, the same on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// An integer OSC argument.
pub fn i(v: i32) -> OscArg {
    OscArg::Int(v)
}

/// A float OSC argument.
pub fn f(v: f32) -> OscArg {
    OscArg::Float(v)
}

/// A string OSC argument.
pub fn s(v: &str) -> OscArg {
    OscArg::Str(v.into())
}

/// An engine at 48 kHz with 64-sample blocks, 2 inputs and 2 outputs, 4
/// buffers, `audio_buses` audio and 16 control buses, `threads` threads and
/// random seed 3, where every parallel group that may spread does (rather
/// than as the chooser's measurements say), with side-by-side runs on or
/// off, `tweak` changing any of that, and `defs` added.
pub fn engine_with_defs(
    threads: usize,
    lockstep: bool,
    audio_buses: usize,
    defs: &[Vec<u8>],
    tweak: impl FnOnce(&mut EngineOptions),
) -> OfflineEngine {
    let mut opts = EngineOptions {
        sample_rate: 48_000.0,
        block_size: 64,
        num_audio_buses: audio_buses,
        num_control_buses: 16,
        num_buffers: 4,
        num_input_channels: 2,
        num_output_channels: 2,
        threads,
        seed: Some(3),
        parallel_measured: false,
        ..Default::default()
    };
    tweak(&mut opts);
    let mut e = OfflineEngine::new(opts);
    e.lockstep = lockstep;
    for def in defs {
        assert!(e.add_synthdefs(def).unwrap().iter().all(|r| r.is_ok()));
    }
    e
}

/// The synthdef crate's "sine" fixture, as bytes.
pub fn sine_def() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../synthdef/tests/fixtures/sine.scsyndef")).unwrap()
}

/// A def "reader": `Out.ar(out, In.ar(in) * amp)`.
pub fn reader_def() -> Vec<u8> {
    def_bytes(
        "reader",
        &[],
        &[("in", 20.0), ("out", 0.0), ("amp", 0.5)],
        &[
            ("Control", 1, &[], &[1, 1, 1], 0),
            ("In", 2, &[(0, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (0, 2)], &[2], 2),
            ("Out", 2, &[(0, 1), (2, 0)], &[], 0),
        ],
    )
}

/// "bank": `Out.ar(bus, Mix(FSinOsc.ar(freq * [1, 2, 3, 4])) * 0.025)`,
/// the frequency's products a run of control-rate operators: the def of
/// the parallel-group benchmark's FSinOsc scores.
pub fn fsin_bank_def() -> Vec<u8> {
    def_bytes(
        "bank",
        &[2.0, 3.0, 4.0, 0.0, 0.025],
        &[("freq", 100.0), ("bus", 0.0)],
        &[
            ("Control", 1, &[], &[1, 1], 0),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 0)], &[1], 2),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 1)], &[1], 2),
            ("BinaryOpUGen", 1, &[(0, 0), (-1, 2)], &[1], 2),
            ("FSinOsc", 2, &[(0, 0), (-1, 3)], &[2], 0),
            ("FSinOsc", 2, &[(1, 0), (-1, 3)], &[2], 0),
            ("FSinOsc", 2, &[(2, 0), (-1, 3)], &[2], 0),
            ("FSinOsc", 2, &[(3, 0), (-1, 3)], &[2], 0),
            ("Sum4", 2, &[(4, 0), (5, 0), (6, 0), (7, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(8, 0), (-1, 4)], &[2], 2),
            ("Out", 2, &[(0, 1), (9, 0)], &[], 0),
        ],
    )
}

/// Performs `msg` on every engine: they must answer alike (done or the same
/// failure).
pub fn perform_alike<N: std::fmt::Display>(engines: &mut [(N, OfflineEngine)], msg: &OscMessage) {
    let answers: Vec<_> = engines.iter_mut().map(|(_, e)| e.perform_message(msg).map_err(|f| f.message())).collect();
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{msg:?}: {answers:?}");
}

/// Runs one block on every engine and compares their first `buses` audio
/// buses with the first engine's, bit for bit: which were written in the
/// block and what (`what` names the case in a failure); then moves every
/// engine on to the next block. Returns how many of them the first engine
/// wrote with sound.
pub fn run_block_alike<N: std::fmt::Display>(what: &str, engines: &mut [(N, OfflineEngine)], buses: usize) -> usize {
    for (_, e) in engines.iter_mut() {
        e.run_block();
    }
    let bs = engines[0].1.world.block_size;
    let (first, rest) = engines.split_first().unwrap();
    let a = &first.1.world;
    let mut sound = 0;
    for bus in 0..buses {
        let touched = a.audio_touched[bus] == a.buf_counter;
        let x = &a.audio_bus[bus * bs..(bus + 1) * bs];
        sound += usize::from(touched && x.iter().any(|&v| v != 0.0));
        for (name, e) in rest {
            let b = &e.world;
            let other = b.audio_touched[bus] == b.buf_counter;
            assert_eq!(touched, other, "{what}: bus {bus} written by one of {} and {name}", first.0);
            let y = &b.audio_bus[bus * bs..(bus + 1) * bs];
            assert!(
                !touched || x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{what}: bus {bus} differs between {} and {name}",
                first.0
            );
        }
    }
    for (_, e) in engines.iter_mut() {
        e.advance_block_counter();
    }
    sound
}
