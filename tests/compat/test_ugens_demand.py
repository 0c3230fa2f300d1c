"""Demand-rate units (patterns a synth steps through) and the units that read them: Duty,
TDuty and Demand, compared sample by sample against scsynth. The random patterns run after a
RandSeed so both servers draw the same numbers."""

import pytest
from supriya import ugens as U

from extra_ugens import TDuty
from nrt import case, check_graph
from sources import asine, ksine, seeded


def seq(values, repeats=1):
    return U.Dseq.dr(sequence=list(values), repeats=repeats)


INF = float("inf")
NOTES = [220.0, 330.0, 275.0, 440.0, 247.5]

CASES = [
    # Steps through a list, ending as the Dseq runs out (the last value holds).
    case("Duty.ar-Dseq", lambda b: U.Duty.ar(duration=0.01, level=seq(NOTES, 2))),
    case("Duty.kr-Dseq", lambda b: U.Duty.kr(duration=0.02, level=seq(NOTES, INF))),
    case("Duty.ar-Dseq-durations", lambda b: U.Duty.ar(duration=seq([0.003, 0.011, 0.0071], INF), level=seq(NOTES, INF))),
    case("Duty.ar-nested-Dseq", lambda b: U.Duty.ar(duration=0.004, level=seq([seq([1.0, 2.0], 2), 5.0, seq([7.0, 8.0, 9.0])], INF))),
    case("Duty.ar-Dser", lambda b: U.Duty.ar(duration=0.005, level=U.Dser.dr(sequence=[1.0, 2.0, 3.0], repeats=7))),
    case("Duty.ar-Dser-nested", lambda b: U.Duty.ar(duration=0.005, level=U.Dser.dr(sequence=[seq([1.0, 2.0]), 3.0], repeats=INF))),
    case("Duty.ar-Dseries", lambda b: U.Duty.ar(duration=0.002, level=U.Dseries.dr(start=0.5, step=0.25, length=40))),
    case("Duty.ar-Dgeom", lambda b: U.Duty.ar(duration=0.01, level=U.Dgeom.dr(start=0.01, grow=1.3, length=INF))),
    case("Duty.ar-Dseries-demanded-step", lambda b: U.Duty.ar(duration=0.003, level=U.Dseries.dr(start=1.0, step=seq([1.0, -2.0], INF), length=INF))),
    case("Duty.ar-kreset", lambda b: U.Duty.ar(duration=0.004, reset=U.Impulse.kr(frequency=13.0), level=seq(NOTES, INF))),
    case("Duty.ar-areset", lambda b: U.Duty.ar(duration=0.004, reset=U.Impulse.ar(frequency=17.0), level=seq(NOTES, INF))),
    case("Duty.ar-demand-reset", lambda b: U.Duty.ar(duration=0.003, reset=seq([0.02, 0.035], INF), level=U.Dseries.dr(start=0.0, step=0.1))),
    case("Duty.ar-audio-duration-input", lambda b: U.Duty.ar(duration=seq([0.002, 0.004], INF), level=U.Dseries.dr(start=1.0, step=seq([asine(0.5, 0.4, 30.0)], INF)))),
    case("Duty.kr-kmod-level", lambda b: U.Duty.kr(duration=0.015, level=seq([ksine(1.0, 0.5, 3.0), 0.25], INF))),
    case("Duty.ar-done-action", lambda b: U.Duty.ar(duration=0.02, level=seq(NOTES, 1), done_action=2) * U.SinOsc.ar(frequency=440.0)),
    case("TDuty.ar", lambda b: TDuty.ar(duration=seq([0.003, 0.0051], INF), level=seq([1.0, 0.5, 0.25], INF))),
    case("TDuty.ar-gap-first", lambda b: TDuty.ar(duration=0.004, level=1.0, gap_first=1)),
    case("TDuty.kr-areset", lambda b: TDuty.kr(duration=0.01, reset=U.Impulse.kr(frequency=9.0), level=seq([1.0, 2.0, 3.0], INF))),
    case("TDuty.ar-demand-reset-runs-out", lambda b: TDuty.ar(duration=0.002, reset=seq([0.03], INF), level=seq([1.0, 2.0, 3.0, 4.0], 2))),
    case("Demand.ar", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=120.0), reset=0, source=seq(NOTES, INF))),
    case("Demand.ar-multi", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=90.0), reset=0, source=[seq(NOTES, INF), U.Dseries.dr(start=0.0, step=0.5, length=9)])),
    case("Demand.kr-kreset", lambda b: U.Demand.kr(trigger=U.Impulse.kr(frequency=60.0), reset=U.Impulse.kr(frequency=7.0), source=seq(NOTES, INF))),
    case("Demand.ar-areset", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=200.0), reset=U.Impulse.ar(frequency=30.0), source=U.Dseries.dr(start=0.0, step=1.0))),
    case("Demand.ar-held-trigger", lambda b: U.Demand.ar(trigger=U.LFPulse.ar(frequency=150.0, width=0.3), reset=0, source=U.Dgeom.dr(start=1.0, grow=1.01))),
    case("Demand.ar-signal-item", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=300.0), reset=0, source=seq([asine(0.0, 1.0, 50.0), ksine(0.0, 0.5, 20.0)], INF))),
    case("Demand.ar-drives-SinOsc", lambda b: U.SinOsc.ar(frequency=U.Demand.ar(trigger=U.Impulse.ar(frequency=20.0), reset=0, source=seq(NOTES, INF)))),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_demand_ugens_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


SEEDED = [
    case("Dwhite", lambda b: U.Duty.ar(duration=0.002, level=U.Dwhite.dr(minimum=-1.0, maximum=1.0))),
    case("Dwhite-length", lambda b: U.Duty.ar(duration=0.002, level=U.Dwhite.dr(minimum=100.0, maximum=200.0, length=30))),
    case("Dwhite-demanded-bounds", lambda b: U.Duty.ar(duration=0.002, level=U.Dwhite.dr(minimum=seq([0.0, 10.0], INF), maximum=seq([1.0, 20.0, 30.0], INF)))),
    case("Diwhite", lambda b: U.Duty.ar(duration=0.002, level=U.Diwhite.dr(minimum=-5, maximum=12))),
    case("Diwhite-demanded-bounds", lambda b: U.Duty.ar(duration=0.002, level=U.Diwhite.dr(minimum=seq([0.0, 3.0], INF), maximum=seq([10.0, 40.0, 7.0], INF), length=50))),
    case("Dseq-of-Dwhite", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=400.0), reset=U.Impulse.ar(frequency=25.0), source=seq([U.Dwhite.dr(minimum=0.0, maximum=1.0, length=3), 5.0], INF))),
]


@pytest.mark.parametrize("fn,kw", SEEDED)
def test_random_demand_ugens_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)


def test_audio_item_of_a_pattern_survives_later_audio_units(tmp_path):
    """An audio-rate signal read only by a Dseq must still hold its own samples when the Dseq
    runs, inside a reader that comes after other audio units (which could reuse its buffer)."""

    def body(b):
        item = U.SinOsc.ar(frequency=300.0)
        pattern = seq([item], INF)
        other = U.LPF.ar(source=U.Saw.ar(frequency=110.0), frequency=2000.0) * 0.25
        other = U.HPF.ar(source=other, frequency=200.0)
        return U.Demand.ar(trigger=U.Impulse.ar(frequency=1500.0), reset=0, source=pattern) + other

    check_graph(tmp_path, body)



def pat_a():
    return seq([60.0, 62.5, -3.25, 7.0, 0.0, 1.5, 9.0], INF)


def pat_b():
    return seq([2.0, -0.75, 7.0, 0.5], INF)


def finite():
    return seq([4.0, 5.0, 6.0], 1)


# Operators between two patterns, and between a pattern and a constant, at demand rate: a value
# from each side per value asked for; a pattern that ran out (NaN) passes through. A unary
# operator takes its input's first value when it is built (scsynth's constructor runs it once).
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "fdiv": lambda a, b: a / b,
    "idiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "min": lambda a, b: a.min(b),
    "max": lambda a, b: a.max(b),
    "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a.is_equal_to(b),
    "ne": lambda a, b: a.is_not_equal_to(b),
    "and": lambda a, b: a & b,
    "xor": lambda a, b: a ^ b,
    "shift-left": lambda a, b: a << b,
    "lcm": lambda a, b: a.lcm(b),
    "gcd": lambda a, b: a.gcd(b),
    "round": lambda a, b: a.round(b),
    "round-up": lambda a, b: a.round_up(b),
    "trunc": lambda a, b: a.truncate(b),
    "atan2": lambda a, b: a.atan2(b),
    "clip2": lambda a, b: a.clip2(b),
    "fold2": lambda a, b: a.fold2(b),
    "absdif": lambda a, b: a.absdiff(b),
    "pow": lambda a, b: a**b,
    "hypot": lambda a, b: a.hypot(b),
}
UNARY = {
    "neg": lambda a: -a,
    "abs": lambda a: abs(a),
    "squared": lambda a: a.squared(),
    "sqrt": lambda a: a.sqrt(),
    "midicps": lambda a: a.midi_to_hz(),
    "cpsmidi": lambda a: abs(a + 0.5).hz_to_midi(),
    "dbamp": lambda a: a.db_to_amplitude(),
    "sin": lambda a: a.sin(),
    "tanh": lambda a: a.tanh(),
    "reciprocal": lambda a: a.reciprocal(),
    "frac": lambda a: a.fractional_part(),
    "softclip": lambda a: a.softclip(),
}
OP_CASES = (
    [case(f"binary-{name}-patterns", lambda b, f=f: reader(f(pat_a(), pat_b()))) for name, f in BINARY.items()]
    + [case(f"binary-{name}-constant", lambda b, f=f: reader(f(pat_a(), 7.0))) for name, f in BINARY.items()]
    + [case(f"unary-{name}", lambda b, f=f: reader(f(pat_a() * 0.1))) for name, f in UNARY.items()]
    + [
        case("binary-runs-out", lambda b: reader(finite() * pat_b())),
        case("unary-runs-out", lambda b: reader(finite().midi_to_hz())),
        case("operator-inside-pattern", lambda b: reader(seq([pat_a() * 2.0, finite() + 0.5], INF))),
    ]
)


def reader(level):
    return U.Duty.ar(duration=0.002, level=level)


@pytest.mark.parametrize("fn,kw", OP_CASES)
def test_demand_rate_operators_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


RANDOM_OPS = [
    case("unary-rand", lambda b: reader(pat_b().rand())),
    case("unary-bilinrand", lambda b: reader(pat_b().bi_lin_rand())),
    case("binary-rrand", lambda b: reader(pat_a().rand_range(pat_b()))),
    case("binary-exprand", lambda b: reader((abs(pat_a()) + 1.0).exponential_rand_range(abs(pat_b()) + 0.5))),
]


@pytest.mark.parametrize("fn,kw", RANDOM_OPS)
def test_random_demand_rate_operators_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)
