//! A def whose units cannot run with the rate, inputs and outputs it gives
//! them (as the units declare) is refused when it is loaded, with the def,
//! the unit's index and its name, and the engine goes on.

mod common;

use common::{def_bytes, PerformOsc};
use magnetar_engine::{DefError, OfflineEngine, EngineOptions};
use magnetar_ugens::Mismatch;
use magnetar_protocol::{OscArg, OscMessage};

fn engine() -> OfflineEngine {
    OfflineEngine::new(EngineOptions { sample_rate: 48_000.0, seed: Some(7), ..Default::default() })
}

/// `Out.ar(0, SinOsc.ar(freq) * 0.1)`, with SinOsc given `sin_inputs` of its two inputs.
fn sine_def(name: &str, sin_inputs: usize) -> Vec<u8> {
    let inputs: &[(i32, i32)] = &[(0, 0), (-1, 0)][..sin_inputs];
    def_bytes(
        name,
        &[0.0, 0.1],
        &[("freq", 440.0)],
        &[
            ("Control", 1, &[], &[1], 0),
            ("SinOsc", 2, inputs, &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (-1, 1)], &[2], 2),
            ("Out", 2, &[(-1, 0), (2, 0)], &[], 0),
        ],
    )
}

#[test]
fn a_unit_given_too_few_inputs_is_refused_with_its_name_and_the_others_load() {
    let mut e = engine();
    let mut bytes = sine_def("bad", 0);
    // One file, two defs: the good one still loads.
    let good = sine_def("good", 2);
    bytes.extend_from_slice(&good[10..]); // past the header: "SCgf", version, count
    bytes[9] = 2;
    let results = e.add_synthdefs(&bytes).unwrap();
    assert_eq!(results.len(), 2);
    let err = results[0].as_ref().unwrap_err();
    assert!(
        matches!(err, DefError::Mismatch { unit: 1, ugen, mismatch: Mismatch::Inputs { given: 0, needed: 2 }, .. } if ugen == "SinOsc"),
        "{err:?}"
    );
    let text = err.to_string();
    assert_eq!(text, "synthdef \"bad\": UGen 1 (SinOsc) needs 2 inputs, the def gives it 0");
    assert_eq!(results[1].as_deref(), Ok("good"));
    // The refused def is not there; the good one plays.
    let s_new = |def: &str, id: i32| {
        OscMessage::new("/s_new", vec![OscArg::Str(def.into()), OscArg::Int(id), OscArg::Int(0), OscArg::Int(0)])
    };
    assert!(e.perform_message(&s_new("bad", 1000)).is_err());
    e.perform_message(&s_new("good", 1001)).unwrap();
    for _ in 0..4 {
        e.run_block();
    }
    assert!(e.world.audio_bus[..64].iter().any(|&x| x != 0.0), "the good def sounds");
}

#[test]
fn a_unit_given_too_few_outputs_is_refused() {
    // Pan2 with one output wire instead of two.
    let bytes = def_bytes(
        "pan",
        &[0.0, 0.5],
        &[],
        &[
            ("SinOsc", 2, &[(-1, 1), (-1, 0)], &[2], 0),
            ("Pan2", 2, &[(0, 0), (-1, 0), (-1, 1)], &[2], 0),
            ("Out", 2, &[(-1, 0), (1, 0)], &[], 0),
        ],
    );
    let results = engine().add_synthdefs(&bytes).unwrap();
    assert!(
        matches!(&results[0], Err(DefError::Mismatch { unit: 1, ugen, mismatch: Mismatch::Outputs { given: 1, needed: 2 }, .. }) if ugen == "Pan2"),
        "{results:?}"
    );
    let text = results[0].as_ref().unwrap_err().to_string();
    assert_eq!(text, "synthdef \"pan\": UGen 1 (Pan2) needs 2 outputs, the def gives it 1");
}

#[test]
fn a_unit_given_a_rate_it_cannot_run_at_is_refused() {
    // OffsetOut writes audio buses a block at a time: at control rate it
    // would read blocks from one-value wires.
    let bytes = def_bytes("offset_kr", &[0.0, 0.5], &[], &[("OffsetOut", 1, &[(-1, 0), (-1, 1)], &[], 0)]);
    let results = engine().add_synthdefs(&bytes).unwrap();
    let text = results[0].as_ref().unwrap_err().to_string();
    assert_eq!(text, "synthdef \"offset_kr\": UGen 0 (OffsetOut) does not run at control rate");
}

#[test]
fn extra_inputs_and_outputs_are_left_alone_as_scsynth_does() {
    // SinOsc given a third input and a second output: it reads two inputs
    // and writes one output; the def loads and sounds.
    let bytes = def_bytes(
        "roomy",
        &[440.0, 0.0, 0.1],
        &[],
        &[
            ("SinOsc", 2, &[(-1, 0), (-1, 1), (-1, 1)], &[2, 2], 0),
            ("BinaryOpUGen", 2, &[(0, 0), (-1, 2)], &[2], 2),
            ("Out", 2, &[(-1, 1), (1, 0)], &[], 0),
        ],
    );
    let mut e = engine();
    assert_eq!(e.add_synthdefs(&bytes).unwrap()[0].as_deref(), Ok("roomy"));
    let s_new = OscMessage::new("/s_new", vec![OscArg::Str("roomy".into()), OscArg::Int(1000), OscArg::Int(0), OscArg::Int(0)]);
    e.perform_message(&s_new).unwrap();
    for _ in 0..4 {
        e.run_block();
    }
    assert!(e.world.audio_bus[..64].iter().any(|&x| x != 0.0), "the def sounds");
}

#[test]
fn a_well_formed_def_loads_whatever_its_units_do_in_their_first_blocks() {
    // A def that frees itself at once and draws random numbers still loads,
    // and loading it leaves the world's generator alone: two engines, one
    // of which loaded the def first, draw the same numbers.
    let noisy = def_bytes(
        "noisy",
        &[0.0, 2.0],
        &[],
        &[
            ("WhiteNoise", 2, &[], &[2], 0),
            ("Line", 1, &[(-1, 0), (-1, 0), (-1, 0), (-1, 1)], &[1], 0),
            ("Out", 2, &[(-1, 0), (0, 0)], &[], 0),
        ],
    );
    let (mut a, mut b) = (engine(), engine());
    assert!(a.add_synthdefs(&noisy).unwrap()[0].is_ok());
    assert_eq!(a.world.rgen.frand(), b.world.rgen.frand());
    assert!(b.add_synthdefs(&noisy).unwrap()[0].is_ok());
}
