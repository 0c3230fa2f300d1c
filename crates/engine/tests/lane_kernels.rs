//! Which steps of a def run through lane kernels: the light kernels
//! (operators, sums, bus writes) only beside another kernel, so that they
//! never split a lane batch's run of plain steps.

mod common;

use common::{def_bytes, fsin_bank_def};
use magnetar_engine::GraphDef;
use magnetar_ugens::Registry;

fn compile(bytes: &[u8]) -> GraphDef {
    let defs = magnetar_synthdef::parse(bytes).expect("a def");
    GraphDef::compile(&defs[0], &Registry::with_all(), 64).expect("compiles")
}

/// For each calc step in order, its unit's name and whether it has a kernel.
fn lanes(def: &GraphDef) -> Vec<(String, bool)> {
    def.calc_steps
        .iter()
        .map(|&s| {
            let st = &def.steps[s as usize];
            (def.units[st.unit as usize].name.clone(), st.lane.is_some())
        })
        .collect()
}

#[test]
fn a_bank_of_oscillators_runs_its_mix_scale_and_output_in_lanes() {
    // Out.ar(bus, Mix(FSinOsc.ar(freq * [1, 2, 3, 4])) * 0.025)
    let def = compile(&fsin_bank_def());
    assert!(def.lockstep);
    let got = lanes(&def);
    let kernels: Vec<&str> = got.iter().filter(|(_, k)| *k).map(|(n, _)| n.as_str()).collect();
    assert_eq!(kernels, ["FSinOsc", "Sum4", "BinaryOpUGen", "Out"], "{got:?}");
}

#[test]
fn light_kernels_alone_or_between_plain_steps_are_not_taken() {
    // Out.ar(0, (K2A.ar(freq) * 0.5).tanh * 0.5): operators and Out, no other kernel.
    let def = compile(&def_bytes(
        "plain",
        &[0.5, 0.0],
        &[("freq", 100.0)],
        &[
            ("Control", 1, &[], &[1], 0),
            ("K2A", 2, &[(0, 0)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (-1, 0)], &[2], 2),
            ("UnaryOpUGen", 2, &[(2, 0)], &[2], 36),
            ("BinaryOpUGen", 2, &[(3, 0), (-1, 0)], &[2], 2),
            ("Out", 2, &[(-1, 1), (4, 0)], &[], 0),
        ],
    ));
    assert!(lanes(&def).iter().all(|(_, k)| !k), "{:?}", lanes(&def));
    assert!(!def.lockstep);
    // SinOsc.ar(freq) * 0.5, then a plain step, then * 0.5 and Out: the
    // first product joins SinOsc's kernel; the second and Out stay plain
    // behind the plain step (Out ends the def, but beside a plain step).
    let def = compile(&def_bytes(
        "split",
        &[0.5, 0.0],
        &[("freq", 100.0)],
        &[
            ("Control", 1, &[], &[1], 0),
            ("SinOsc", 2, &[(0, 0), (-1, 1)], &[2], 0),
            ("BinaryOpUGen", 2, &[(1, 0), (-1, 0)], &[2], 2),
            ("UnaryOpUGen", 2, &[(2, 0)], &[2], 36),
            ("BinaryOpUGen", 2, &[(3, 0), (-1, 0)], &[2], 2),
            ("Out", 2, &[(-1, 1), (4, 0)], &[], 0),
        ],
    ));
    let got = lanes(&def);
    let kernels: Vec<bool> = got.iter().map(|(_, k)| *k).collect();
    assert_eq!(kernels, [false, true, true, false, false, false], "{got:?}");
}
