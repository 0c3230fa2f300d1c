"""Lines and envelopes: Line, XLine, EnvGen (every shape, gate, scale/bias, release/loop nodes),
Linen, K2A, A2K, DC and Silent."""

import pytest
import supriya
from supriya import ugens as U

from nrt import case, check_graph, msg

LEVELS = [0.1, 1.0, 0.2, 0.8, 0.05]
TIMES = [0.05, 0.04, 0.06, 0.05]
SHAPES = {
    "step": "step",
    "lin": "linear",
    "exp": "exponential",
    "sin": "sine",
    "welch": "welch",
    "curve-4": -4.0,
    "curve+3": 3.0,
    "squared": "squared",
    "cubed": "cubed",
    "hold": "hold",
}


def env(shape):
    return supriya.Envelope(amplitudes=LEVELS, durations=TIMES, curves=[shape] * len(TIMES))


def set_gate(t, value):
    return (t, [msg("/n_set", 1000, "gate", float(value))])


CASES = [
    case("Line.ar", lambda b: U.Line.ar(start=-0.5, stop=0.9, duration=0.2)),
    case("Line.kr", lambda b: U.Line.kr(start=-0.5, stop=0.9, duration=0.2)),
    case("XLine.ar", lambda b: U.XLine.ar(start=0.01, stop=0.9, duration=0.2)),
    case("XLine.ar-negative", lambda b: U.XLine.ar(start=-1.0, stop=-0.001, duration=0.15)),
    case("XLine.kr", lambda b: U.XLine.kr(start=0.01, stop=0.9, duration=0.2)),
    case("K2A.ar", lambda b: U.K2A.ar(source=U.LFSaw.kr(frequency=10.0))),
    case("A2K.kr", lambda b: U.A2K.kr(source=U.SinOsc.ar(frequency=440.0))),
    case("DC.ar", lambda b: [U.DC.ar(source=0.25), U.DC.ar(source=-0.75)]),
    case("DC.kr", lambda b: U.DC.kr(source=0.5)),
    case("Silent.ar", lambda b: U.Silence.ar(channel_count=2), allow_silent=True),
    case(
        "Linen.kr-gate",
        lambda b: U.Linen.kr(gate=b["gate"], attack_time=0.05, sustain_level=0.7, release_time=0.08),
        params=dict(gate=1.0),
        events=[set_gate(0.15, 0)],
    ),
    case(
        "Linen.kr-retrigger",
        lambda b: U.Linen.kr(gate=b["gate"], attack_time=0.03, sustain_level=0.7, release_time=0.05),
        params=dict(gate=1.0),
        events=[set_gate(0.1, 0), set_gate(0.2, 1)],
    ),
]
for name, shape in SHAPES.items():
    CASES.append(case(f"EnvGen.ar-{name}", lambda b, s=shape: U.EnvGen.ar(envelope=env(s))))
    CASES.append(case(f"EnvGen.kr-{name}", lambda b, s=shape: U.EnvGen.kr(envelope=env(s))))

ADSR = supriya.Envelope.adsr(attack_time=0.02, decay_time=0.05, sustain=0.5, release_time=0.06)

CASES += [
    case(
        "EnvGen.kr-adsr-gate-release",
        lambda b: U.EnvGen.kr(envelope=ADSR, gate=b["gate"]),
        params=dict(gate=1.0),
        events=[set_gate(0.17, 0)],
    ),
    case(
        "EnvGen.ar-adsr-gate-release",
        lambda b: U.EnvGen.ar(envelope=ADSR, gate=b["gate"]),
        params=dict(gate=1.0),
        events=[set_gate(0.17, 0)],
    ),
    case(
        "EnvGen.kr-retrigger",
        lambda b: U.EnvGen.kr(envelope=ADSR, gate=b["gate"]),
        params=dict(gate=1.0),
        events=[set_gate(0.1, 0), set_gate(0.14, 1), set_gate(0.22, 0)],
    ),
    case(
        "EnvGen.kr-forced-release",
        lambda b: U.EnvGen.kr(envelope=ADSR, gate=b["gate"]),
        params=dict(gate=1.0),
        events=[set_gate(0.12, -1.05)],
    ),
    case(
        "EnvGen.ar-audio-gate",
        lambda b: U.EnvGen.ar(envelope=ADSR, gate=U.LFPulse.ar(frequency=8.0, width=0.6)),
    ),
    case(
        "EnvGen.kr-scale-bias-timescale",
        lambda b: U.EnvGen.kr(envelope=env("linear"), level_scale=0.5, level_bias=0.2, time_scale=1.5),
    ),
    case(
        "EnvGen.kr-scale-bias-timescale-controls",
        lambda b: U.EnvGen.kr(envelope=env(-2.0), level_scale=b["ls"], level_bias=b["lb"], time_scale=b["ts"]),
        params=dict(ls=0.5, lb=0.2, ts=1.5),
        events=[(0.06, [msg("/n_set", 1000, "ls", -1.0, "lb", 0.3, "ts", 0.5)])],
    ),
    case(
        "EnvGen.kr-release-node",
        lambda b: U.EnvGen.kr(
            envelope=supriya.Envelope(amplitudes=[0, 1, 0.3, 0.6, 0], durations=[0.03, 0.03, 0.04, 0.05], curves=[-3.0], release_node=2),
            gate=b["gate"],
        ),
        params=dict(gate=1.0),
        events=[set_gate(0.2, 0)],
    ),
    case(
        "EnvGen.kr-loop-node",
        lambda b: U.EnvGen.kr(
            envelope=supriya.Envelope(amplitudes=[0, 1, 0.2, 0.7, 0], durations=[0.02, 0.03, 0.02, 0.05], curves=["sine"], release_node=3, loop_node=1),
            gate=b["gate"],
        ),
        params=dict(gate=1.0),
        events=[set_gate(0.22, 0)],
    ),
    case(
        "EnvGen.ar-loop-node",
        lambda b: U.EnvGen.ar(
            envelope=supriya.Envelope(amplitudes=[0, 1, 0.2, 0.7, 0], durations=[0.011, 0.013, 0.017, 0.05], curves=["linear"], release_node=3, loop_node=1),
            gate=b["gate"],
        ),
        params=dict(gate=1.0),
        events=[set_gate(0.21, 0)],
    ),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_line_or_envelope_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
