"""Every unary and binary operator supriya knows, at audio and control rate (and mixed rates,
since scsynth picks a different inner loop for each combination), plus MulAdd, Sum3 and Sum4."""

import pytest
from supriya import ugens as U
from supriya.enums import BinaryOperator, CalculationRate, UnaryOperator

from nrt import case, check_graph

AR, KR = CalculationRate.AUDIO, CalculationRate.CONTROL

# Random operators are compared statistically.
RANDOM_UNARY = {"RAND", "RAND2", "LINRAND", "BILINRAND", "SUM3RAND", "COIN"}
RANDOM_BINARY = {"RANDRANGE", "EXPRANDRANGE"}
# Operators whose domain is limited get a positive (or [-1, 1]) input.
POSITIVE_UNARY = {"LOG", "LOG2", "LOG10", "SQUARE_ROOT", "AMPLITUDE_TO_DB", "HZ_TO_MIDI", "HZ_TO_OCTAVE", "RATIO_TO_SEMITONES", "RECIPROCAL"}
UNIT_UNARY = {"ARCCOS", "ARCSIN"}


def unary_input(op, rate):
    osc = U.SinOsc.ar if rate == AR else U.SinOsc.kr
    saw = U.LFSaw.ar if rate == AR else U.LFSaw.kr
    if op in POSITIVE_UNARY:
        return osc(frequency=5.0) * 0.45 + 0.55
    if op in UNIT_UNARY:
        return osc(frequency=5.0) * 0.999
    if op in {"MIDI_TO_HZ"}:
        return osc(frequency=5.0) * 24 + 60
    if op in {"DB_TO_AMPLITUDE", "SEMITONES_TO_RATIO", "OCTAVE_TO_HZ", "EXPONENTIAL", "SINH", "COSH"}:
        return osc(frequency=5.0) * 3
    if op == "COIN":
        return osc(frequency=5.0) * 0.5 + 0.5
    return saw(frequency=7.0) * 2.7


def unary(op, rate):
    def fn(b):
        return U.UnaryOpUGen(calculation_rate=rate, source=unary_input(op, rate), special_index=UnaryOperator[op])[0]

    return fn


def left_in(rate):
    return (U.SinOsc.ar if rate == AR else U.SinOsc.kr)(frequency=3.0) * 5.3


def right_in(rate, op):
    if rate is None:
        return 2.5 if op not in {"SHIFT_LEFT", "SHIFT_RIGHT", "UNSIGNED_SHIFT"} else 2.0
    tri = (U.LFTri.ar if rate == AR else U.LFTri.kr)(frequency=2.0)
    if op in {"EXPRANDRANGE"}:
        return tri * 0.5 + 2.0
    return tri * 1.7 + 2.0  # 0.3 .. 3.7: never zero, so division stays finite


def binary(op, lrate, rrate):
    def fn(b):
        left = left_in(lrate)
        if op == "EXPRANDRANGE":
            left = left * 0.1 + 1.0  # both ends positive
        right = right_in(rrate, op)
        return U.BinaryOpUGen(
            calculation_rate=max(lrate, rrate or CalculationRate.SCALAR),
            left=left,
            right=right,
            special_index=BinaryOperator[op],
        )[0]

    return fn


NOISE_STATS = dict(slope_tol_db=None, quantile_tol=0.15, range_tol=0.15, rms_rel_tol=0.2)
# a control-rate second holds 750 values: the extremes of a tapering distribution (LINRAND,
# SUM3RAND) wander further from one run to the next than over 14400 audio samples
NOISE_STATS_KR = dict(NOISE_STATS, range_tol=0.3, decimate=64)

CASES = []
for op in UnaryOperator.__members__:
    for rate, token in ((AR, "ar"), (KR, "kr")):
        kw = dict(allow_silent=True)
        if op in RANDOM_UNARY:
            st = dict(NOISE_STATS_KR if rate == KR else NOISE_STATS)
            if op == "COIN":
                # a stream of 0s and 1s: its quantiles jump between the two values when the odds
                # are near even, so the mean (the odds themselves) carries the comparison
                st["quantile_tol"] = None
            kw = dict(statistical=st, dur=1.0 if rate == KR else 0.3)
        CASES.append(case(f"UnaryOpUGen-{op}.{token}", unary(op, rate), **kw))

for op in BinaryOperator.__members__:
    for lrate, rrate, token in ((AR, AR, "aa"), (AR, KR, "ak"), (KR, AR, "ka"), (AR, None, "ai"), (KR, KR, "kk")):
        kw = dict(allow_silent=True)
        if op in RANDOM_BINARY:
            krate = lrate == KR and rrate != AR
            kw = dict(statistical=dict(NOISE_STATS_KR if krate else NOISE_STATS), dur=1.0 if krate else 0.3)
        CASES.append(case(f"BinaryOpUGen-{op}.{token}", binary(op, lrate, rrate), **kw))


def muladd(rate, mrate, arate):
    def fn(b):
        src = (U.SinOsc.ar if rate == AR else U.SinOsc.kr)(frequency=5.0)
        mul = 0.5 if mrate is None else (U.LFSaw.ar if mrate == AR else U.LFSaw.kr)(frequency=3.0)
        add = 0.25 if arate is None else (U.LFTri.ar if arate == AR else U.LFTri.kr)(frequency=2.0)
        return U.MulAdd(calculation_rate=rate, source=src, multiplier=mul, addend=add)[0]

    return fn


for rate, mrate, arate, token in (
    (AR, AR, AR, "ar-aa"), (AR, AR, KR, "ar-ak"), (AR, KR, AR, "ar-ka"), (AR, KR, KR, "ar-kk"),
    (AR, None, None, "ar-ii"), (AR, AR, None, "ar-ai"), (AR, None, AR, "ar-ia"), (AR, KR, None, "ar-ki"),
    (AR, None, KR, "ar-ik"), (KR, KR, KR, "kr-kk"), (KR, None, None, "kr-ii"),
):
    CASES.append(case(f"MulAdd.{token}", muladd(rate, mrate, arate)))


def sig(i, rate):
    f = (U.SinOsc.ar, U.LFSaw.ar, U.LFTri.ar, U.LFPar.ar) if rate == AR else (U.SinOsc.kr, U.LFSaw.kr, U.LFTri.kr, U.LFPar.kr)
    return f[i](frequency=2.0 + 3 * i) * (0.2 + 0.1 * i)


CASES += [
    case("Sum3.ar", lambda b: U.Sum3(calculation_rate=AR, input_one=sig(0, AR), input_two=sig(1, AR), input_three=sig(2, AR))[0]),
    case("Sum3.ar-mixed", lambda b: U.Sum3(calculation_rate=AR, input_one=sig(0, AR), input_two=sig(1, KR), input_three=0.1)[0]),
    case("Sum3.kr", lambda b: U.Sum3(calculation_rate=KR, input_one=sig(0, KR), input_two=sig(1, KR), input_three=sig(2, KR))[0]),
    case("Sum4.ar", lambda b: U.Sum4(calculation_rate=AR, input_one=sig(0, AR), input_two=sig(1, AR), input_three=sig(2, AR), input_four=sig(3, AR))[0]),
    case("Sum4.ar-mixed", lambda b: U.Sum4(calculation_rate=AR, input_one=sig(0, AR), input_two=sig(1, KR), input_three=sig(2, AR), input_four=0.2)[0]),
    case("Sum4.kr", lambda b: U.Sum4(calculation_rate=KR, input_one=sig(0, KR), input_two=sig(1, KR), input_three=sig(2, KR), input_four=sig(3, KR))[0]),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_operator_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **{"dur": 0.2, **kw})
