//! Version 0 and 1 files (16-bit counts and indices) written by hand.

mod common;

use common::Bytes;
use magnetar_synthdef::{parse, Input, Rate, SynthDefError};

/// `SynthDef(\v1def, { |amp = 0.2| Out.ar(0, SinOsc.ar(440) * amp) })`, in `version`'s layout.
fn v1_file(version: i32, variants: &[(&str, f32)]) -> Vec<u8> {
    let mut b = Bytes::file(version, 1);
    b.pstring("v1def");
    b.floats(&[440.0, 0.0]);
    b.floats(&[0.2]);
    b.int(1).pstring("amp").int(0);
    b.int(4);
    b.unit("Control", 1, 0, 1, 0).u8(1);
    b.unit("SinOsc", 2, 2, 1, 0)
        .constant_input(0)
        .constant_input(1)
        .u8(2);
    b.unit("BinaryOpUGen", 2, 2, 1, 2)
        .unit_input(1, 0)
        .unit_input(0, 0)
        .u8(2);
    b.unit("Out", 2, 2, 0, 0).constant_input(1).unit_input(2, 0);
    if version >= 1 {
        b.i16(variants.len() as i16);
        for (name, amp) in variants {
            b.pstring(name).f32(*amp);
        }
    }
    b.data
}

#[test]
fn version_1_file_reads_with_16_bit_counts() {
    let defs = parse(&v1_file(1, &[])).unwrap();
    assert_eq!(defs.len(), 1);
    let def = &defs[0];
    assert_eq!(def.name, "v1def");
    assert_eq!(def.constants, vec![440.0, 0.0]);
    assert_eq!(def.params, vec![0.2]);
    assert_eq!(def.param_index("amp"), Some(0));
    let names: Vec<&str> = def.ugens.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["Control", "SinOsc", "BinaryOpUGen", "Out"]);
    // A 16-bit -1 marks a constant input just as the 32-bit one does.
    assert_eq!(
        def.ugens[1].inputs,
        vec![Input::Constant(0), Input::Constant(1)]
    );
    assert_eq!(
        def.ugens[2].inputs,
        vec![
            Input::Unit { unit: 1, output: 0 },
            Input::Unit { unit: 0, output: 0 }
        ]
    );
    assert_eq!(def.ugens[2].special_index, 2);
    assert_eq!(def.ugens[3].rate, Rate::Audio);
    assert!(def.ugens[3].outputs.is_empty());
}

#[test]
fn version_1_variants_are_read() {
    let def = parse(&v1_file(1, &[("v1def.quiet", 0.05), ("v1def.loud", 0.9)]))
        .unwrap()
        .remove(0);
    let defs = def.with_variants();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["v1def", "v1def.quiet", "v1def.loud"]);
    assert_eq!(defs[0].params, vec![0.2]);
    assert_eq!(defs[1].params, vec![0.05]);
    assert_eq!(defs[2].params, vec![0.9]);
}

#[test]
fn version_0_file_has_no_variant_section() {
    let mut bytes = v1_file(0, &[]);
    // A second def right after the first proves no variant count was expected in between.
    bytes[9] = 2;
    let mut second = v1_file(0, &[]);
    second[15] = b'2'; // "v1def" -> "v1de2": the name starts after the 10-byte header and its length byte
    bytes.extend_from_slice(&second[10..]);
    let defs = parse(&bytes).unwrap();
    assert_eq!(defs.len(), 2);
    assert_eq!(defs[1].name, "v1de2");
    assert!(defs.iter().all(|d| d.variants.is_empty()));
}

#[test]
fn version_1_negative_count_is_rejected() {
    let mut b = Bytes::file(1, 1);
    b.pstring("neg").int(-3);
    let err = parse(&b.data).unwrap_err();
    assert!(
        matches!(err, SynthDefError::NegativeCount { value: -3, .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "synthdef \"neg\": the number of constants is negative (-3) (byte 14)"
    );
}

#[test]
fn version_1_unit_input_past_16_bit_minus_one_is_rejected() {
    // -2 is neither a constant marker nor a unit.
    let mut b = Bytes::file(1, 1);
    b.pstring("bad").floats(&[]).floats(&[]).int(0).int(1);
    b.unit("Out", 2, 1, 0, 0);
    let offset = b.data.len();
    b.int(-2).int(0);
    b.i16(0);
    let err = parse(&b.data).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("synthdef \"bad\": input 0 of unit 0 (Out) refers to unit -2, which does not come before it (byte {offset})")
    );
}
