//! Broken files give errors naming the def and the byte offset, never panics.

mod common;

use common::{fixture, Bytes};
use magnetar_synthdef::{parse, Input, SynthDef, SynthDefError};

/// A version 2 file holding def "foo" whose units are written by `units`
/// (which returns the unit count it wrote). Constants are [0.0, 1.0], one control "gain".
fn foo(units: impl FnOnce(&mut Bytes) -> i32) -> Vec<u8> {
    let mut b = Bytes::file(2, 1);
    b.pstring("foo")
        .floats(&[0.0, 1.0])
        .floats(&[0.5])
        .int(1)
        .pstring("gain")
        .int(0);
    let count_at = b.data.len();
    b.int(0);
    let count = units(&mut b);
    b.data[count_at..count_at + 4].copy_from_slice(&count.to_be_bytes());
    b.i16(0);
    b.data
}

fn error_of(bytes: &[u8]) -> SynthDefError {
    match parse(bytes) {
        Ok(defs) => panic!("expected an error, parsed {} defs", defs.len()),
        Err(e) => e,
    }
}

#[test]
fn well_formed_base_file_parses() {
    let bytes = foo(|b| {
        b.unit("Control", 1, 0, 1, 0).u8(1);
        b.unit("SinOsc", 2, 2, 1, 0)
            .unit_input(0, 0)
            .constant_input(0)
            .u8(2);
        2
    });
    let def = parse(&bytes).unwrap().remove(0);
    assert_eq!(
        def.ugens[1].inputs,
        vec![Input::Unit { unit: 0, output: 0 }, Input::Constant(0)]
    );
}

#[test]
fn wrong_magic_is_not_a_synthdef_file() {
    let mut bytes = fixture("sine.scsyndef");
    bytes[3] = b'x';
    let err = error_of(&bytes);
    assert!(matches!(err, SynthDefError::BadMagic { .. }));
    assert_eq!(
        err.to_string(),
        "not a SynthDef file: it starts with \"SCgx\" instead of \"SCgf\" (byte 0)"
    );
}

#[test]
fn unknown_version_is_rejected() {
    let mut bytes = fixture("sine.scsyndef");
    bytes[7] = 3;
    let err = error_of(&bytes);
    assert_eq!(
        err,
        SynthDefError::UnsupportedVersion {
            version: 3,
            offset: 4
        }
    );
    assert!(err.to_string().contains("version 3 is not supported"));
}

#[test]
fn empty_input_is_an_error() {
    assert!(matches!(
        error_of(&[]),
        SynthDefError::Truncated { offset: 0, .. }
    ));
}

#[test]
fn input_from_a_later_unit_names_def_unit_and_offset() {
    let mut offset = 0;
    let bytes = foo(|b| {
        b.unit("Control", 1, 0, 1, 0).u8(1);
        b.unit("SinOsc", 2, 2, 1, 0).unit_input(0, 0);
        offset = b.data.len();
        b.unit_input(2, 0).u8(2);
        b.unit("Out", 2, 2, 0, 0).constant_input(0).unit_input(1, 0);
        3
    });
    let err = error_of(&bytes);
    assert_eq!(
        err.to_string(),
        format!("synthdef \"foo\": input 1 of unit 1 (SinOsc) refers to unit 2, which does not come before it (byte {offset})")
    );
    assert_eq!(err.def_name(), Some("foo"));
    assert_eq!(err.offset(), offset);
}

#[test]
fn input_from_its_own_unit_is_rejected() {
    let bytes = foo(|b| {
        b.unit("LocalIn", 2, 1, 1, 0).unit_input(0, 0).u8(2);
        1
    });
    assert!(matches!(
        error_of(&bytes),
        SynthDefError::UnitNotBefore {
            unit: 0,
            from: 0,
            ..
        }
    ));
}

#[test]
fn input_from_a_missing_constant_is_rejected() {
    let mut offset = 0;
    let bytes = foo(|b| {
        b.unit("SinOsc", 2, 2, 1, 0).constant_input(0);
        offset = b.data.len();
        b.constant_input(2).u8(2);
        1
    });
    let err = error_of(&bytes);
    assert_eq!(
        err.to_string(),
        format!("synthdef \"foo\": input 1 of unit 0 (SinOsc) refers to constant 2, but the def has 2 constants (byte {offset})")
    );
}

#[test]
fn input_from_a_missing_output_is_rejected() {
    let mut offset = 0;
    let bytes = foo(|b| {
        b.unit("Pan2", 2, 1, 2, 0).constant_input(0).u8(2).u8(2);
        b.unit("Out", 2, 3, 0, 0).constant_input(0).unit_input(0, 1);
        offset = b.data.len();
        b.unit_input(0, 2);
        2
    });
    let err = error_of(&bytes);
    assert_eq!(
        err.to_string(),
        format!("synthdef \"foo\": input 2 of unit 1 (Out) refers to output 2 of unit 0 (Pan2), which has 2 outputs (byte {offset})")
    );
}

#[test]
fn unknown_unit_rate_is_rejected() {
    let bytes = foo(|b| {
        b.unit("SinOsc", 4, 0, 1, 0).u8(2);
        1
    });
    let err = error_of(&bytes);
    assert!(matches!(err, SynthDefError::UnknownRate { rate: 4, .. }));
    assert!(
        err.to_string()
            .starts_with("synthdef \"foo\": unit 0 (SinOsc) has unknown rate 4"),
        "{err}"
    );
}

#[test]
fn unknown_output_rate_is_rejected() {
    let bytes = foo(|b| {
        b.unit("Pan2", 2, 0, 2, 0).u8(2).u8(9);
        1
    });
    let err = error_of(&bytes);
    assert!(
        err.to_string()
            .contains("output 1 of unit 0 (Pan2) has unknown rate 9"),
        "{err}"
    );
}

#[test]
fn control_name_past_the_parameters_is_rejected() {
    let mut b = Bytes::file(2, 1);
    b.pstring("foo")
        .floats(&[])
        .floats(&[0.5, 0.5])
        .int(1)
        .pstring("pan");
    let offset = b.data.len();
    b.int(2).int(0).i16(0);
    let err = error_of(&b.data);
    assert_eq!(
        err.to_string(),
        format!("synthdef \"foo\": control \"pan\" points at parameter 2, but the def has 2 parameters (byte {offset})")
    );
}

#[test]
fn non_utf8_name_is_rejected() {
    let bytes = foo(|b| {
        b.data.extend([2, 0xff, 0xfe]);
        b.u8(0).int(0).int(0).i16(0);
        1
    });
    let err = error_of(&bytes);
    assert!(matches!(err, SynthDefError::NameNotUtf8 { .. }));
    assert!(
        err.to_string()
            .contains("the name of unit 0 is not valid UTF-8"),
        "{err}"
    );
}

#[test]
fn unit_name_longer_than_scsynth_accepts_is_rejected() {
    let long = "A".repeat(32);
    let bytes = foo(|b| {
        b.unit(&long, 0, 0, 0, 0);
        1
    });
    assert!(matches!(
        error_of(&bytes),
        SynthDefError::NameTooLong {
            len: 32,
            max: 31,
            ..
        }
    ));
}

#[test]
fn error_in_second_def_names_that_def() {
    let mut bytes = fixture("two_defs.scsyndef");
    // The file ends with ticker's Out.kr (two 8-byte inputs, no outputs) and a
    // 2-byte variant count; point Out's first input at unit 6, Out itself.
    let input_at = bytes.len() - 2 - 16;
    bytes[input_at..input_at + 4].copy_from_slice(&6i32.to_be_bytes());
    let err = error_of(&bytes);
    assert_eq!(err.def_name(), Some("ticker"));
    assert!(
        err.to_string()
            .contains("input 0 of unit 6 (Out) refers to unit 6"),
        "{err}"
    );
    assert_eq!(err.offset(), input_at);
}

#[test]
fn unknown_ugen_names_are_left_to_the_engine() {
    let bytes = foo(|b| {
        b.unit("NoSuchUGen", 2, 0, 1, 0).u8(2);
        1
    });
    assert_eq!(parse(&bytes).unwrap()[0].ugens[0].name, "NoSuchUGen");
}

#[test]
fn trailing_bytes_after_the_last_def_are_ignored() {
    let mut bytes = fixture("sine.scsyndef");
    bytes.extend([1, 2, 3]);
    assert_eq!(parse(&bytes).unwrap().len(), 1);
}

fn all_inputs() -> Vec<Vec<u8>> {
    let mut files: Vec<Vec<u8>> = ["sine.scsyndef", "two_defs.scsyndef", "variants.scsyndef"]
        .iter()
        .map(|f| fixture(f))
        .collect();
    // A small version 1 file with a variant.
    let mut b = Bytes::file(1, 1);
    b.pstring("v1")
        .floats(&[1.0])
        .floats(&[0.5])
        .int(1)
        .pstring("x")
        .int(0)
        .int(2);
    b.unit("Control", 1, 0, 1, 0).u8(1);
    b.unit("Out", 2, 2, 0, 0).constant_input(0).unit_input(0, 0);
    b.i16(1).pstring("v1.a").f32(0.25);
    assert!(parse(&b.data).is_ok());
    files.push(b.data);
    files
}

#[test]
fn every_truncation_of_a_valid_file_is_an_error() {
    for file in all_inputs() {
        for len in 0..file.len() {
            let err = parse(&file[..len]).expect_err("a truncated file must not parse");
            assert!(
                err.offset() <= len,
                "offset {} past the data ({len} bytes): {err}",
                err.offset()
            );
        }
    }
}

/// Checks what the parser promises about a def it accepted.
fn assert_consistent(def: &SynthDef) {
    for (index, ugen) in def.ugens.iter().enumerate() {
        for input in &ugen.inputs {
            match *input {
                Input::Constant(c) => assert!((c as usize) < def.constants.len()),
                Input::Unit { unit, output } => {
                    assert!((unit as usize) < index);
                    assert!((output as usize) < def.ugens[unit as usize].outputs.len());
                }
            }
        }
    }
    for name in &def.param_names {
        assert!((name.index as usize) < def.params.len());
        let len = def.param_len(&name.name).unwrap();
        assert!(def.param_index(&name.name).unwrap() + len <= def.params.len() as u32);
    }
    for variant in &def.variants {
        assert_eq!(variant.params.len(), def.params.len());
    }
}

/// xorshift64*: a fixed, dependency-free stream of test mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn random_byte_changes_never_panic_and_accepted_defs_stay_consistent() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut accepted = 0;
    for file in all_inputs() {
        for _ in 0..3000 {
            let mut bytes = file.clone();
            let flips = 1 + rng.next() % 4;
            for _ in 0..flips {
                let at = (rng.next() % bytes.len() as u64) as usize;
                let r = rng.next();
                // Mix single-bit flips with whole bytes, which reach the 0xff.. of -1 and huge counts.
                bytes[at] = if r & 1 == 0 {
                    bytes[at] ^ (1 << ((r >> 1) % 8))
                } else {
                    (r >> 8) as u8
                };
            }
            if let Ok(defs) = parse(&bytes) {
                accepted += 1;
                defs.iter().for_each(assert_consistent);
                for def in defs {
                    def.with_variants().iter().for_each(assert_consistent);
                }
            }
        }
    }
    // Flipping float bytes leaves a file valid, so some must pass.
    assert!(accepted > 0);
}
