//! Behaviour of the operator units, run through the unit harness.

use super::binary::op as bop;
use super::unary::op as uop;
use crate::testing::{TestInput, UnitHarness, ar};
use crate::unit::Rate;

const BS: usize = 64;

fn binop(index: i16, rate: Rate, a: TestInput, b: TestInput, blocks: usize) -> Vec<f32> {
    UnitHarness::new("BinaryOpUGen", rate).special(index).inputs([a, b]).run(blocks).remove(0)
}

/// The control-rate result of `a op b` for constants.
fn bin1(index: i16, a: f32, b: f32) -> f32 {
    binop(index, Rate::Control, TestInput::Const(a), TestInput::Const(b), 1)[0]
}

fn un1(index: i16, x: f32) -> f32 {
    UnitHarness::new("UnaryOpUGen", Rate::Control).special(index).input(TestInput::Const(x)).run(1)[0][0]
}

fn close(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn arithmetic_identities_hold() {
    assert_eq!(bin1(bop::ADD, 2.0, 3.0), 5.0);
    assert_eq!(bin1(bop::SUB, 2.0, 3.0), -1.0);
    assert_eq!(bin1(bop::MUL, 2.0, 3.0), 6.0);
    assert_eq!(bin1(bop::FDIV, 3.0, 2.0), 1.5);
    assert_eq!(bin1(bop::IDIV, 7.0, 2.0), 3.0);
    assert_eq!(bin1(bop::IDIV, -7.0, 2.0), -4.0);
}

#[test]
fn modulo_of_negatives_wraps_into_range() {
    assert_eq!(bin1(bop::MOD, -1.0, 4.0), 3.0);
    assert_eq!(bin1(bop::MOD, 9.0, 4.0), 1.0);
    assert_eq!(bin1(bop::MOD, -9.5, 4.0), 2.5);
}

#[test]
fn comparisons_give_zero_or_one() {
    assert_eq!(bin1(bop::LT, 1.0, 2.0), 1.0);
    assert_eq!(bin1(bop::LT, 2.0, 1.0), 0.0);
    assert_eq!(bin1(bop::GT, 2.0, 1.0), 1.0);
    assert_eq!(bin1(bop::LE, 2.0, 2.0), 1.0);
    assert_eq!(bin1(bop::GE, 1.0, 2.0), 0.0);
    assert_eq!(bin1(bop::EQ, 2.0, 2.0), 1.0);
    assert_eq!(bin1(bop::NE, 2.0, 2.0), 0.0);
}

#[test]
fn every_binary_operator_matches_its_formula() {
    let cases: &[(i16, f32, f32, f32)] = &[
        (bop::MIN, 2.0, -1.0, -1.0),
        (bop::MAX, 2.0, -1.0, 2.0),
        (bop::BIT_AND, 6.0, 3.0, 2.0),
        (bop::BIT_OR, 6.0, 3.0, 7.0),
        (bop::BIT_XOR, 6.0, 3.0, 5.0),
        (bop::LCM, 4.0, 6.0, 12.0),
        (bop::GCD, 12.0, 18.0, 6.0),
        (bop::ROUND, 7.4, 2.0, 8.0),
        (bop::ROUND_UP, 7.1, 2.0, 8.0),
        (bop::TRUNC, 7.9, 2.0, 6.0),
        (bop::ATAN2, 1.0, 1.0, std::f32::consts::FRAC_PI_4),
        (bop::HYPOT, 3.0, 4.0, 5.0),
        (bop::HYPOTX, 3.0, 4.0, 7.0 - 3.0 * (std::f32::consts::SQRT_2 - 1.0)),
        (bop::POW, 2.0, 10.0, 1024.0),
        (bop::POW, -2.0, 2.0, -4.0),
        (bop::SHIFT_LEFT, 3.0, 2.0, 12.0),
        (bop::SHIFT_RIGHT, -8.0, 1.0, -4.0),
        (bop::RING1, 2.0, 3.0, 8.0),
        (bop::RING2, 2.0, 3.0, 11.0),
        (bop::RING3, 2.0, 3.0, 12.0),
        (bop::RING4, 2.0, 3.0, -6.0),
        (bop::DIF_SQR, 3.0, 2.0, 5.0),
        (bop::SUM_SQR, 3.0, 2.0, 13.0),
        (bop::SQR_SUM, 3.0, 2.0, 25.0),
        (bop::SQR_DIF, 3.0, 2.0, 1.0),
        (bop::ABS_DIF, 2.0, 5.0, 3.0),
        (bop::THRESH, 0.5, 1.0, 0.0),
        (bop::THRESH, 1.5, 1.0, 1.5),
        (bop::AM_CLIP, 2.0, -1.0, 0.0),
        (bop::AM_CLIP, 2.0, 0.5, 1.0),
        (bop::SCALE_NEG, -2.0, 0.5, -1.0),
        (bop::SCALE_NEG, 2.0, 0.5, 2.0),
        (bop::CLIP2, 3.0, 1.0, 1.0),
        (bop::CLIP2, -3.0, 1.0, -1.0),
        (bop::EXCESS, 3.0, 1.0, 2.0),
        (bop::EXCESS, 0.5, 1.0, 0.0),
        (bop::FOLD2, 1.5, 1.0, 0.5),
        (bop::WRAP2, 1.5, 1.0, -0.5),
        (bop::FIRST_ARG, 4.0, 9.0, 4.0),
        (99, 4.0, 9.0, 13.0),
    ];
    for &(index, a, b, want) in cases {
        let got = bin1(index, a, b);
        assert!(close(got, want, 1e-6), "op {index}: {a}, {b} gave {got}, expected {want}");
    }
}

#[test]
fn rrand_stays_within_its_bounds_at_control_rate() {
    let out = binop(bop::RAND_RANGE, Rate::Control, TestInput::Const(2.0), TestInput::Const(3.0), 50);
    assert!(out.iter().all(|&x| (2.0..3.0).contains(&x)));
    let out = binop(bop::EXP_RAND_RANGE, Rate::Control, TestInput::Const(100.0), TestInput::Const(1000.0), 50);
    assert!(out.iter().all(|&x| (100.0..=1000.0).contains(&x)));
}

#[test]
fn rate_combinations_agree_for_constant_inputs() {
    let ops = [
        bop::ADD, bop::SUB, bop::MUL, bop::FDIV, bop::MOD, bop::LT, bop::MIN, bop::MAX, bop::ROUND,
        bop::RING1, bop::RING4, bop::SUM_SQR, bop::CLIP2, bop::FOLD2, bop::ABS_DIF, bop::AM_CLIP,
    ];
    let (a, b) = (0.7f32, 0.3f32);
    for index in ops {
        let want = bin1(index, a, b);
        let audio = |v: f32| TestInput::Audio(vec![v; 2 * BS]);
        let combos = [
            (audio(a), audio(b)),
            (audio(a), TestInput::Control(vec![b])),
            (audio(a), TestInput::Const(b)),
            (TestInput::Control(vec![a]), audio(b)),
            (TestInput::Const(a), audio(b)),
        ];
        for (x, y) in combos {
            let out = binop(index, Rate::Audio, x, y, 2);
            assert!(out.iter().all(|&v| close(v, want, 1e-6)), "op {index}: {:?} vs {want}", &out[..4]);
        }
    }
}

#[test]
fn control_input_is_interpolated_across_the_block() {
    // a * b with b jumping from 0 to 1 between blocks: a linear ramp.
    let out = binop(
        bop::MUL,
        Rate::Audio,
        TestInput::Audio(vec![1.0; 2 * BS]),
        TestInput::Control(vec![0.0, 1.0]),
        2,
    );
    assert!(out[..BS].iter().all(|&x| x == 0.0));
    let ramp = &out[BS..];
    assert_eq!(ramp[0], 0.0);
    assert!(ramp.windows(2).all(|w| w[1] > w[0]));
    assert!(close(ramp[BS - 1], (BS - 1) as f32 / BS as f32, 1e-5));
}

#[test]
fn unary_operators_match_their_formulas() {
    let cases: &[(i16, f32, f32)] = &[
        (uop::NEG, 2.0, -2.0),
        (uop::NOT, 0.0, 1.0),
        (uop::NOT, 2.0, 0.0),
        (uop::BIT_NOT, 5.0, -6.0),
        (uop::ABS, -2.5, 2.5),
        (uop::CEIL, 1.2, 2.0),
        (uop::FLOOR, -1.2, -2.0),
        (uop::FRAC, -1.25, 0.75),
        (uop::SIGN, -3.0, -1.0),
        (uop::SQUARED, 3.0, 9.0),
        (uop::CUBED, -2.0, -8.0),
        (uop::SQRT, -4.0, -2.0),
        (uop::EXP, 1.0, std::f32::consts::E),
        (uop::RECIP, 4.0, 0.25),
        (uop::MIDICPS, 69.0, 440.0),
        (uop::MIDICPS, 81.0, 880.0),
        (uop::CPSMIDI, 440.0, 69.0),
        (uop::MIDIRATIO, 12.0, 2.0),
        (uop::RATIOMIDI, 2.0, 12.0),
        (uop::DBAMP, -20.0, 0.1),
        (uop::AMPDB, 0.1, -20.0),
        (uop::OCTCPS, 4.75, 440.0),
        (uop::CPSOCT, 880.0, 5.75),
        (uop::LOG, std::f32::consts::E, 1.0),
        (uop::LOG2, 8.0, 3.0),
        (uop::LOG10, 1000.0, 3.0),
        (uop::SIN, std::f32::consts::FRAC_PI_2, 1.0),
        (uop::COS, 0.0, 1.0),
        (uop::TAN, std::f32::consts::FRAC_PI_4, 1.0),
        (uop::ASIN, 1.0, std::f32::consts::FRAC_PI_2),
        (uop::ACOS, 1.0, 0.0),
        (uop::ATAN, 1.0, std::f32::consts::FRAC_PI_4),
        (uop::SINH, 1.0, 1.175_201_2),
        (uop::COSH, 1.0, 1.543_080_6),
        (uop::TANH, 1.0, 0.761_594_2),
        (uop::DISTORT, 1.0, 0.5),
        (uop::SOFTCLIP, 0.25, 0.25),
        (uop::SOFTCLIP, 1.0, 0.75),
        (uop::RECT_WINDOW, 0.5, 1.0),
        (uop::HAN_WINDOW, 0.5, 1.0),
        (uop::WELCH_WINDOW, 0.5, 1.0),
        (uop::TRI_WINDOW, 0.25, 0.5),
        (uop::RAMP, 1.5, 1.0),
        (uop::SCURVE, 0.5, 0.5),
        (uop::SILENCE, 3.0, 0.0),
        (uop::THRU, 3.0, 3.0),
        (uop::AS_FLOAT, 3.0, 3.0),
    ];
    for &(index, x, want) in cases {
        let got = un1(index, x);
        assert!(close(got, want, 2e-6), "unary op {index}({x}) gave {got}, expected {want}");
    }
}

#[test]
fn unary_audio_path_agrees_with_control_path() {
    let xs: Vec<f32> = (0..BS).map(|i| (i as f32 - 32.0) / 8.0).collect();
    for index in [
        uop::NEG, uop::ABS, uop::FLOOR, uop::CEIL, uop::FRAC, uop::SQRT, uop::EXP, uop::RECIP, uop::LOG,
        uop::DISTORT, uop::SCURVE, uop::RAMP, uop::SIGN, uop::SQUARED,
    ] {
        let out = UnitHarness::new("UnaryOpUGen", Rate::Audio).special(index).input(TestInput::Audio(xs.clone())).run(1);
        for (i, &x) in xs.iter().enumerate() {
            // Outside their domains the SIMD approximations return other garbage.
            if (index == uop::LOG && x <= 0.0) || (index == uop::RECIP && x == 0.0) {
                continue;
            }
            let want = un1(index, x);
            let got = out[0][i];
            assert!(
                (got.is_nan() && want.is_nan()) || close(got, want, 3e-6),
                "unary op {index}({x}): audio {got}, control {want}"
            );
        }
    }
}

#[test]
fn random_unary_operators_scale_a_draw() {
    let out = UnitHarness::new("UnaryOpUGen", Rate::Audio).special(uop::RAND).input(TestInput::Const(2.0)).run(4);
    assert!(out[0].iter().all(|&x| (0.0..2.0).contains(&x)));
    let coin = UnitHarness::new("UnaryOpUGen", Rate::Audio).special(uop::COIN).input(TestInput::Const(0.5)).run(4);
    assert!(coin[0].iter().all(|&x| x == 0.0 || x == 1.0));
    assert!(coin[0].contains(&1.0) && coin[0].contains(&0.0));
}

fn muladd(inputs: [TestInput; 3], blocks: usize) -> Vec<f32> {
    UnitHarness::new("MulAdd", Rate::Audio).inputs(inputs).run(blocks).remove(0)
}

#[test]
fn muladd_scales_and_offsets_in_every_rate_combination() {
    let sig: Vec<f32> = (0..2 * BS).map(|i| (i as f32 * 0.1).sin()).collect();
    let want: Vec<f32> = sig.iter().map(|&x| x * 0.5 + 0.25).collect();
    let audio = |v: f32| TestInput::Audio(vec![v; 2 * BS]);
    let rates = |v: f32| [audio(v), TestInput::Control(vec![v]), TestInput::Const(v)];
    for mul in rates(0.5) {
        for add in rates(0.25) {
            let out = muladd([TestInput::Audio(sig.clone()), mul.clone(), add], 2);
            for (g, w) in out.iter().zip(&want) {
                assert!(close(*g, *w, 1e-6), "{g} vs {w}");
            }
        }
    }
    // Special constants: mul 0 and 1, add 0.
    for (m, a) in [(0.0f32, 0.0f32), (1.0, 0.0), (0.0, 0.3), (1.0, 0.3), (2.0, 0.0)] {
        let out = muladd([TestInput::Audio(sig.clone()), TestInput::Const(m), TestInput::Const(a)], 2);
        for (g, x) in out.iter().zip(&sig) {
            assert!(close(*g, x * m + a, 1e-6));
        }
    }
}

#[test]
fn muladd_ramps_a_changing_control_multiplier() {
    let out = muladd(
        [TestInput::Audio(vec![1.0; 2 * BS]), TestInput::Control(vec![0.0, 1.0]), TestInput::Const(0.0)],
        2,
    );
    assert!(out[..BS].iter().all(|&x| x == 0.0));
    assert!(out[BS..].windows(2).all(|w| w[1] > w[0]));
}

#[test]
fn sum3_and_sum4_add_their_inputs() {
    let a: Vec<f32> = (0..BS).map(|i| i as f32).collect();
    let out = UnitHarness::new("Sum3", Rate::Audio)
        .inputs([TestInput::Audio(a.clone()), TestInput::Control(vec![1.0]), TestInput::Const(2.0)])
        .run(1);
    assert!(out[0].iter().zip(&a).all(|(o, x)| *o == x + 3.0));
    let out = UnitHarness::new("Sum4", Rate::Audio)
        .inputs([
            TestInput::Audio(a.clone()),
            TestInput::Audio(a.clone()),
            TestInput::Control(vec![1.0]),
            TestInput::Const(2.0),
        ])
        .run(1);
    assert!(out[0].iter().zip(&a).all(|(o, x)| *o == 2.0 * x + 3.0));
    let k = UnitHarness::new("Sum4", Rate::Control)
        .inputs([TestInput::Const(1.0), TestInput::Const(2.0), TestInput::Const(3.0), TestInput::Const(4.0)])
        .run(1);
    assert_eq!(k[0][0], 10.0);
}

#[test]
fn clip_fold_and_wrap_keep_values_in_range() {
    let sig: Vec<f32> = (0..640).map(|i| (i as f32 * 0.05).sin() * 3.0).collect();
    let bounds = |name: &str| {
        ar(name, vec![TestInput::Audio(sig.clone()), TestInput::Const(-0.5), TestInput::Const(1.0)], 10)
    };
    let clip = bounds("Clip");
    assert!(clip.iter().all(|&v| (-0.5..=1.0).contains(&v)));
    assert!(clip.contains(&1.0) && clip.iter().any(|&v| v == -0.5));
    let fold = bounds("Fold");
    assert!(fold.iter().all(|&v| (-0.5..=1.0).contains(&v)));
    // 1.25 folds back to 0.75; 1.75 wraps to 0.25.
    let one = |name: &str, x: f32| ar(name, vec![TestInput::Const(x), TestInput::Const(-0.5), TestInput::Const(1.0)], 1)[0];
    assert_eq!(one("Fold", 1.25), 0.75);
    assert_eq!(one("Wrap", 1.75), 0.25);
    let wrap = bounds("Wrap");
    assert!(wrap.iter().all(|&v| (-0.5..1.0).contains(&v)));
}
