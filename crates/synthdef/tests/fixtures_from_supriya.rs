//! Files compiled by supriya (see tests/fixtures/make_fixtures.py) parse into
//! the graphs their source code describes.

mod common;

use common::fixture;
use magnetar_synthdef::{parse, Input, ParamName, Rate, SynthDef};

fn unit(unit: u32, output: u32) -> Input {
    Input::Unit { unit, output }
}

fn names(def: &SynthDef) -> Vec<&str> {
    def.ugens.iter().map(|u| u.name.as_str()).collect()
}

fn check_sine(def: &SynthDef) {
    assert_eq!(def.name, "sine");
    assert_eq!(def.constants, vec![0.0, 1.0]);
    // supriya orders controls by name: amp, freq, levels (two values), out.
    assert_eq!(def.params, vec![0.1, 440.0, 0.5, 0.25, 0.0]);
    assert_eq!(
        def.param_names,
        vec![
            ParamName {
                name: "amp".into(),
                index: 0
            },
            ParamName {
                name: "freq".into(),
                index: 1
            },
            ParamName {
                name: "levels".into(),
                index: 2
            },
            ParamName {
                name: "out".into(),
                index: 4
            },
        ]
    );
    assert_eq!(
        names(def),
        [
            "Control",
            "SinOsc",
            "BinaryOpUGen",
            "Pan2",
            "BinaryOpUGen",
            "BinaryOpUGen",
            "Out"
        ]
    );

    let control = &def.ugens[0];
    assert_eq!(control.rate, Rate::Control);
    assert!(control.inputs.is_empty());
    assert_eq!(control.outputs, vec![Rate::Control; 5]);

    // SinOsc.ar(freq): frequency from the "freq" control, phase the constant 0.
    let sine = &def.ugens[1];
    assert_eq!(sine.rate, Rate::Audio);
    assert_eq!(sine.inputs, vec![unit(0, 1), Input::Constant(0)]);
    assert_eq!(sine.outputs, vec![Rate::Audio]);

    // `* amp` is a BinaryOpUGen whose special index 2 selects multiplication.
    let times_amp = &def.ugens[2];
    assert_eq!(times_amp.special_index, 2);
    assert_eq!(times_amp.inputs, vec![unit(1, 0), unit(0, 0)]);

    // Pan2 has two outputs, consumed separately by the two level multiplies.
    let pan = &def.ugens[3];
    assert_eq!(
        pan.inputs,
        vec![unit(2, 0), Input::Constant(0), Input::Constant(1)]
    );
    assert_eq!(pan.outputs, vec![Rate::Audio, Rate::Audio]);
    assert_eq!(def.ugens[4].inputs, vec![unit(3, 0), unit(0, 2)]);
    assert_eq!(def.ugens[5].inputs, vec![unit(3, 1), unit(0, 3)]);

    let out = &def.ugens[6];
    assert_eq!(out.inputs, vec![unit(0, 4), unit(4, 0), unit(5, 0)]);
    assert!(out.outputs.is_empty());
    assert!(def.variants.is_empty());
}

#[test]
fn single_def_file_gives_the_graph_as_written() {
    let defs = parse(&fixture("sine.scsyndef")).unwrap();
    assert_eq!(defs.len(), 1);
    check_sine(&defs[0]);
}

#[test]
fn file_with_two_defs_gives_both_in_order() {
    let defs = parse(&fixture("two_defs.scsyndef")).unwrap();
    assert_eq!(defs.len(), 2);
    check_sine(&defs[0]);

    let ticker = &defs[1];
    assert_eq!(ticker.name, "ticker");
    assert_eq!(ticker.constants, vec![0.0, 4.0, 1.0, 2.0, 3.0]);
    assert_eq!(ticker.params, vec![3.0, 0.0, 2.0]);
    assert_eq!(
        names(ticker),
        [
            "Control",
            "TrigControl",
            "Control",
            "Impulse",
            "Dseq",
            "Demand",
            "Out"
        ]
    );
    let rates: Vec<Rate> = ticker.ugens.iter().map(|u| u.rate).collect();
    assert_eq!(
        rates,
        [
            Rate::Scalar,
            Rate::Control,
            Rate::Control,
            Rate::Control,
            Rate::Demand,
            Rate::Control,
            Rate::Control
        ]
    );
    // Control units carry the index of their first parameter as special index.
    assert_eq!(ticker.ugens[1].special_index, 1);
    assert_eq!(ticker.ugens[2].special_index, 2);
    // Dseq([1, 2, 3], 4): repeats first, then the sequence.
    assert_eq!(
        ticker.ugens[4].inputs,
        vec![
            Input::Constant(1),
            Input::Constant(2),
            Input::Constant(3),
            Input::Constant(4)
        ]
    );
    // Demand.kr(Impulse, t_reset, Dseq)
    assert_eq!(
        ticker.ugens[5].inputs,
        vec![unit(3, 0), unit(1, 0), unit(4, 0)]
    );
    assert_eq!(ticker.ugens[6].inputs, vec![unit(0, 0), unit(5, 0)]);
}

#[test]
fn controls_are_found_by_name_with_their_width() {
    let def = parse(&fixture("sine.scsyndef")).unwrap().remove(0);
    assert_eq!(def.param_index("freq"), Some(1));
    assert_eq!(def.param_len("freq"), Some(1));
    assert_eq!(def.param_index("levels"), Some(2));
    assert_eq!(def.param_len("levels"), Some(2));
    // The last control spans to the end of the parameters.
    assert_eq!(def.param_index("out"), Some(4));
    assert_eq!(def.param_len("out"), Some(1));
    assert_eq!(def.param_index("pan"), None);
    assert_eq!(def.param_len("pan"), None);
}

#[test]
fn variants_become_defs_of_their_own_with_their_values() {
    let def = parse(&fixture("variants.scsyndef")).unwrap().remove(0);
    assert_eq!(def.variants.len(), 2);
    assert_eq!(def.variants[0].name, "sine.low");

    let defs = def.with_variants();
    let def_names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(def_names, ["sine", "sine.low", "sine.loud"]);

    // The base def keeps its own values and drops the variant list.
    check_sine(&defs[0]);

    let low = &defs[1];
    assert_eq!(low.params[low.param_index("freq").unwrap() as usize], 110.0);
    assert_eq!(low.params[low.param_index("amp").unwrap() as usize], 0.2);
    let loud = &defs[2];
    assert_eq!(loud.params[loud.param_index("out").unwrap() as usize], 2.0);
    // Same graph, no nested variants.
    assert_eq!(loud.ugens, defs[0].ugens);
    assert!(loud.variants.is_empty());
}
