"""More filters and dynamics, driven by deterministic sources: the zero filters (LPZ1 … BRZ2),
Slope, MidEQ, LinExp, DetectSilence (whose done action frees the synth), the BEQ suite,
MoogFF, Amplitude, Compander, Limiter and Normalizer."""

import pytest
from supriya import ugens as U

from extra_ugens import BLowPass, BPeakEQ
from nrt import case, check_graph
from sources import asine, ksine, modulator, ksrc, src


kfreq = modulator(ksine, 1200.0, 900.0, 3.0)
afreq = modulator(asine, 1200.0, 900.0, 5.0)
kq = modulator(ksine, 0.3, 0.2, 2.0)
kdb = modulator(ksine, 0.0, 12.0, 2.5)


aq = modulator(asine, 0.5, 0.3, 3.0)
adb = modulator(asine, 0.0, 12.0, 2.5)


def decaying():
    """The audio source fading to silence over 0.1 s."""
    return src() * U.Line.kr(start=1.0, stop=0.0, duration=0.1)


def kdecaying():
    return ksrc() * U.Line.kr(start=1.0, stop=0.0, duration=0.1)


ZEROS = ["LPZ1", "HPZ1", "LPZ2", "HPZ2", "BPZ2", "BRZ2", "Slope"]

CASES = []
for name in ZEROS:
    CASES.append(case(f"{name}.ar", lambda b, n=name: getattr(U, n).ar(source=src())))
    CASES.append(case(f"{name}.kr", lambda b, n=name: getattr(U, n).kr(source=ksrc())))

CASES += [
    case("MidEQ.ar", lambda b: U.MidEQ.ar(source=src(), frequency=1000.0, reciprocal_of_q=0.5, db=6.0)),
    case("MidEQ.ar-cut", lambda b: U.MidEQ.ar(source=src(), frequency=400.0, reciprocal_of_q=1.0, db=-12.0)),
    case(
        "MidEQ.ar-kmod",
        lambda b: U.MidEQ.ar(source=src(), frequency=kfreq(), reciprocal_of_q=kq(), db=kdb()),
    ),
    case("MidEQ.kr", lambda b: U.MidEQ.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.5, db=6.0)),
    case(
        "LinExp.ar",
        lambda b: U.LinExp.ar(source=src(), input_minimum=-1.0, input_maximum=1.0, output_minimum=20.0, output_maximum=2000.0),
    ),
    case(
        "LinExp.ar-kbounds",
        lambda b: U.LinExp.ar(
            source=src(), input_minimum=-1.0, input_maximum=ksine(1.0, 0.3, 2.0), output_minimum=20.0,
            output_maximum=ksine(2000.0, 500.0, 3.0),
        ),
    ),
    # scsynth steps through every range bound as a signal once one of a pair is at audio rate,
    # reading past the end of a constant's or control value's storage: only cases whose
    # paired bounds are both at audio rate are defined.
    case(
        "LinExp.ar-asrc",
        lambda b: U.LinExp.ar(
            source=src(), input_minimum=asine(-1.0, 0.1, 3.0), input_maximum=asine(1.0, 0.3, 2.0), output_minimum=20.0,
            output_maximum=2000.0,
        ),
    ),
    case(
        "LinExp.ar-adst",
        lambda b: U.LinExp.ar(
            source=src(), input_minimum=-1.0, input_maximum=1.0, output_minimum=asine(20.0, 5.0, 2.0),
            output_maximum=asine(2000.0, 300.0, 1.0),
        ),
    ),
    case(
        "LinExp.ar-aall",
        lambda b: U.LinExp.ar(
            source=src(), input_minimum=asine(-1.0, 0.1, 3.0), input_maximum=asine(1.0, 0.2, 4.0),
            output_minimum=asine(20.0, 5.0, 2.0), output_maximum=asine(2000.0, 300.0, 1.0),
        ),
    ),
    case(
        "LinExp.kr",
        lambda b: U.LinExp.kr(source=ksrc(), input_minimum=-1.0, input_maximum=1.0, output_minimum=0.1, output_maximum=10.0),
    ),
    case(
        "LinExp.kr-kbounds",
        lambda b: U.LinExp.kr(
            source=ksrc(), input_minimum=-1.0, input_maximum=1.0, output_minimum=0.1, output_maximum=ksine(10.0, 3.0, 2.0)
        ),
    ),
    # The synth frees itself 0.05 s after its source falls silent: the render matches
    # including the silence that follows.
    case(
        "DetectSilence.ar-frees",
        lambda b: [decaying(), U.DetectSilence.ar(source=decaying(), threshold=1e-3, time=0.05, done_action=2)],
        dur=0.4,
    ),
    case(
        "DetectSilence.ar-output",
        lambda b: [decaying(), U.DetectSilence.ar(source=decaying(), threshold=1e-3, time=0.05, done_action=0)],
        dur=0.3,
    ),
    case(
        "DetectSilence.ar-kthresh",
        lambda b: [
            decaying(),
            U.DetectSilence.ar(source=decaying(), threshold=ksine(0.01, 0.005, 4.0), time=0.03, done_action=2),
        ],
        dur=0.4,
    ),
    case(
        "DetectSilence.kr-frees",
        lambda b: [kdecaying(), U.DetectSilence.kr(source=kdecaying(), threshold=1e-3, time=0.05, done_action=2)],
        dur=0.4,
    ),
]

# The BEQ suite: constant, control-rate and audio-rate parameters (all of a unit's parameters at
# audio rate select scsynth's per-sample form).
BEQ2 = {"BLowPass": "reciprocal_of_q", "BHiPass": "reciprocal_of_q", "BAllPass": "reciprocal_of_q",
        "BBandPass": "bandwidth", "BBandStop": "bandwidth"}
BEQ3 = {"BPeakEQ": "reciprocal_of_q", "BLowShelf": "reciprocal_of_s", "BHiShelf": "reciprocal_of_s"}

for name, q in BEQ2.items():
    CASES += [
        case(f"{name}.ar", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=900.0, **{q: 0.4})),
        case(f"{name}.ar-kmod", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=kfreq(), **{q: kq()})),
        case(f"{name}.ar-kfreq", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=kfreq(), **{q: 0.7})),
        case(f"{name}.ar-amod", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=afreq(), **{q: aq()})),
        case(f"{name}.ar-afreq-kq", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=afreq(), **{q: kq()})),
    ]
for name, q in BEQ3.items():
    CASES += [
        case(f"{name}.ar", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=900.0, gain=6.0, **{q: 0.5})),
        case(f"{name}.ar-cut", lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=300.0, gain=-12.0, **{q: 1.0})),
        case(
            f"{name}.ar-kmod",
            lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=kfreq(), gain=kdb(), **{q: kq(0.6, 0.3)}),
        ),
        case(
            f"{name}.ar-amod",
            lambda b, n=name, q=q: getattr(U, n).ar(source=src(), frequency=afreq(), gain=adb(), **{q: aq(0.6, 0.3)}),
        ),
    ]
CASES += [
    case("BLowPass.kr", lambda b: BLowPass.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.5)),
    case("BLowPass.kr-kmod", lambda b: BLowPass.kr(source=ksrc(), frequency=ksine(40.0, 20.0, 1.0), reciprocal_of_q=kq())),
    case("BPeakEQ.kr", lambda b: BPeakEQ.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.5, gain=6.0)),
]


def swell():
    """The audio source under a slow swell, for the dynamics units."""
    return src() * (U.SinOsc.ar(frequency=3.0) * 0.9 + 1.0)


CASES += [
    case("MoogFF.ar", lambda b: U.MoogFF.ar(source=src(), frequency=1000.0, gain=2.0)),
    case("MoogFF.ar-kmod", lambda b: U.MoogFF.ar(source=src(), frequency=kfreq(), gain=ksine(2.0, 1.9, 2.0))),
    case("MoogFF.ar-selfosc", lambda b: U.MoogFF.ar(source=src() * 0.1, frequency=800.0, gain=4.0)),
    case("MoogFF.ar-overgain", lambda b: U.MoogFF.ar(source=src(), frequency=800.0, gain=5.0)),
    case(
        "MoogFF.ar-reset",
        lambda b: U.MoogFF.ar(source=src(), frequency=600.0, gain=3.5, reset=U.LFPulse.kr(frequency=7.0, width=0.2)),
    ),
    case("MoogFF.kr", lambda b: U.MoogFF.kr(source=ksrc(), frequency=20.0, gain=2.0)),
    case("Amplitude.ar", lambda b: U.Amplitude.ar(source=swell(), attack_time=0.01, release_time=0.1)),
    case("Amplitude.ar-zero", lambda b: U.Amplitude.ar(source=swell(), attack_time=0.0, release_time=0.05)),
    case(
        "Amplitude.ar-kmod",
        lambda b: U.Amplitude.ar(source=swell(), attack_time=kq(0.01, 0.008), release_time=kq(0.1, 0.05, 3.0)),
    ),
    case("Amplitude.kr", lambda b: U.Amplitude.kr(source=ksrc(), attack_time=0.05, release_time=0.2)),
    case("Amplitude.kr-of-ar", lambda b: U.Amplitude.kr(source=swell(), attack_time=0.01, release_time=0.1)),
    case(
        "Amplitude.kr-of-ar-kmod",
        lambda b: U.Amplitude.kr(source=swell(), attack_time=kq(0.01, 0.008), release_time=kq(0.1, 0.05, 3.0)),
    ),
    case(
        "Compander.ar-compress",
        lambda b: U.Compander.ar(source=swell(), control=swell(), threshold=0.4, slope_below=1.0, slope_above=0.3),
    ),
    case(
        "Compander.ar-expand",
        lambda b: U.Compander.ar(source=swell(), control=swell(), threshold=0.5, slope_below=3.0, slope_above=1.0),
    ),
    case(
        "Compander.ar-sidechain",
        lambda b: U.Compander.ar(
            source=src(), control=U.SinOsc.ar(frequency=4.0) * 0.8, threshold=0.3, slope_below=2.0, slope_above=0.5,
            clamp_time=0.002, relax_time=0.05,
        ),
    ),
    case(
        "Compander.ar-kmod",
        lambda b: U.Compander.ar(
            source=swell(), control=swell(), threshold=kq(0.4, 0.2), slope_below=1.0, slope_above=kq(0.5, 0.3, 3.0),
            clamp_time=kq(0.01, 0.005), relax_time=0.1,
        ),
    ),
    case("Limiter.ar", lambda b: U.Limiter.ar(source=swell(), level=0.5, duration=0.01)),
    case("Limiter.ar-odd", lambda b: U.Limiter.ar(source=swell() * 2.0, level=0.8, duration=0.0031)),
    case("Limiter.ar-klevel", lambda b: U.Limiter.ar(source=swell(), level=kq(0.5, 0.3), duration=0.005)),
    case("Normalizer.ar", lambda b: U.Normalizer.ar(source=swell() * 0.2, level=0.9, duration=0.01)),
    case("Normalizer.ar-decay", lambda b: U.Normalizer.ar(source=decaying(), level=0.5, duration=0.0047)),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_filter_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
