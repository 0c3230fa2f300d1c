"""Demand-rate list patterns beyond Dseq and Dser: picking by index (Dswitch1, Dswitch), at
random (Drand, Dxrand, Dwrand, Dshuf) and transforming another pattern (Ddup, Dstutter, Dconst,
Dreset), read through Duty, TDuty and Demand and compared sample by sample against scsynth.
The cases nest patterns (a nested pattern is reset when its parent comes back to it), reset them
from the reader, and let finite ones run out. Random ones run after a RandSeed."""

import pytest
from supriya import ugens as U
from supriya.enums import CalculationRate

from extra_ugens import Dconst, Ddup, TDuty
from nrt import case, check_graph
from sources import asine, ksine, seeded

INF = float("inf")
NOTES = [220.0, 330.0, 275.0, 440.0, 247.5]


def seq(values, repeats=1):
    return U.Dseq.dr(sequence=list(values), repeats=repeats)


def ser(values, length):
    return U.Dser.dr(sequence=list(values), repeats=length)


def rand(values, repeats=INF):
    return U.Drand.dr(sequence=list(values), repeats=repeats)


def xrand(values, repeats=INF):
    return U.Dxrand.dr(sequence=list(values), repeats=repeats)


def wrand(values, weights, repeats=INF):
    # Built directly: supriya's Dwrand.dr turns every item into a float, and items may be patterns.
    values = list(values)
    weights = tuple(float(w) if isinstance(w, (int, float)) else w for w in weights)
    weights += (0.0,) * (len(values) - len(weights))
    return U.Dwrand._new_expanded(
        calculation_rate=CalculationRate.DEMAND,
        repeats=repeats,
        length=len(values),
        weights=weights[: len(values)],
        sequence=tuple(values),
    )


def shuf(values, repeats=INF):
    return U.Dshuf.dr(sequence=list(values), repeats=repeats)


def switch1(index, values):
    return U.Dswitch1.dr(index_=index, sequence=list(values))


def switch(index, values):
    return U.Dswitch.dr(index_=index, sequence=list(values))


def dup(n, source):
    return Ddup.dr(count=n, source=source)


def stutter(n, source):
    return U.Dstutter.dr(n=n, source=source)


def dconst(total, source, tolerance=0.001):
    return Dconst.dr(total=total, source=source, tolerance=tolerance)


def dreset(source, reset):
    return U.Dreset.dr(source=source, reset=reset)


def series(start=0.0, step=1.0, length=INF):
    return U.Dseries.dr(start=start, step=step, length=length)


def trig(freq):
    return U.Impulse.ar(frequency=freq)


CASES = [
    # Dswitch1: one value from the indexed item per demand, indices wrapped into the list.
    case("Dswitch1-Duty", lambda b: U.Duty.ar(duration=0.003, level=switch1(seq([0, 1, 2, 1, 3, -1, 5, 2.6], INF), [1.0, 2.0, seq([10.0, 20.0, 30.0], INF)]))),
    case("Dswitch1-index-runs-out", lambda b: U.Demand.ar(trigger=trig(250.0), reset=0, source=switch1(seq([2, 0, 1, 2, 2], 3), [seq(NOTES, INF), 5.0, series(0.0, 0.5)]))),
    case("Dswitch1-audio-item", lambda b: U.Demand.ar(trigger=trig(410.0), reset=0, source=switch1(seq([0, 1], INF), [asine(0.0, 1.0, 70.0), ksine(2.0, 0.5, 9.0)]))),
    case("Dswitch1-areset", lambda b: U.Demand.ar(trigger=trig(300.0), reset=trig(23.0), source=switch1(series(0.0, 1.0), [series(100.0, 1.0), series(200.0, -1.0), seq([7.0, 8.0], INF)]))),
    case("Dswitch1-item-runs-out", lambda b: U.Duty.ar(duration=0.002, level=switch1(seq([0, 1], INF), [seq([1.0, 2.0, 3.0], 2), 9.0]))),
    case("Dswitch1-audio-index", lambda b: U.Demand.ar(trigger=trig(370.0), reset=0, source=switch1(asine(1.0, 1.4, 40.0), [seq([1.0, 2.0, 3.0], INF), 10.0, asine(20.0, 1.0, 90.0)]))),
    case("Dswitch1-TDuty", lambda b: TDuty.ar(duration=switch1(seq([0, 1, 1], INF), [0.002, 0.0037]), level=switch1(seq([1, 0], INF), [0.25, seq([1.0, 0.5], INF)]))),
    # Dswitch: the indexed item gives all its values, then the next index is read.
    case("Dswitch-Duty", lambda b: U.Duty.ar(duration=0.002, level=switch(seq([0, 1, 2, 1, -2], INF), [seq([1.0, 2.0, 3.0]), seq([10.0, 20.0]), ser([5.0, 6.0], 3)]))),
    case("Dswitch-same-item-twice", lambda b: U.Demand.ar(trigger=trig(350.0), reset=0, source=switch(seq([0, 0, 1, 1, 0], INF), [seq([1.0, 2.0, 3.0]), seq([40.0, 50.0])]))),
    case("Dswitch-index-runs-out", lambda b: U.Duty.ar(duration=0.003, level=switch(seq([1, 0, 1], 1), [seq([1.0, 2.0]), seq([7.0, 8.0, 9.0])]))),
    case("Dswitch-areset", lambda b: U.Demand.ar(trigger=trig(280.0), reset=trig(19.0), source=switch(seq([1, 0, 2], INF), [series(0.0, 1.0, 4), series(100.0, 10.0, 3), seq([-1.0, -2.0])]))),
    case("Dswitch-Duty-kreset", lambda b: U.Duty.ar(duration=0.0025, reset=U.Impulse.kr(frequency=11.0), level=switch(seq([2, 1, 0], INF), [seq([1.0, 2.0]), series(10.0, 1.0, 5), seq(NOTES)]))),
    # Ddup and Dstutter: each value repeated n times, n demanded with each value.
    case("Ddup-Duty", lambda b: U.Duty.ar(duration=0.002, level=dup(seq([1, 2, 3, 0], INF), seq(NOTES, INF)))),
    case("Ddup-source-runs-out", lambda b: U.Duty.ar(duration=0.003, level=dup(3, seq([1.0, 2.0, 3.0], 2)))),
    case("Ddup-count-runs-out", lambda b: U.Demand.ar(trigger=trig(320.0), reset=0, source=dup(seq([2.4, 3.5, 1.0]), series(0.0, 1.0)))),
    case("Ddup-areset", lambda b: U.Demand.ar(trigger=trig(260.0), reset=trig(21.0), source=dup(seq([1, 3], INF), series(0.0, 1.0)))),
    case("Ddup-in-Dseq", lambda b: U.Duty.ar(duration=0.002, level=seq([dup(2, seq([1.0, 2.0])), 9.0, dup(seq([3, 1], INF), series(10.0, 1.0, 3))], INF))),
    case("Dstutter-Duty-areset", lambda b: U.Duty.ar(duration=0.0031, reset=U.Impulse.ar(frequency=15.0), level=stutter(seq([2, 1], INF), seq(NOTES, INF)))),
    case("Dstutter-TDuty", lambda b: TDuty.ar(duration=stutter(3, seq([0.002, 0.005], INF)), level=stutter(2, seq([1.0, 0.5, 0.25], INF)))),
    # Dconst: values until they add up to the total; the last one is cut to land on it.
    case("Dconst-durations-run-out", lambda b: U.Duty.ar(duration=dconst(0.1, seq([0.013, 0.021, 0.008], INF)), level=seq(NOTES, INF))),
    case("Dconst-in-Dseq", lambda b: U.Duty.ar(duration=seq([dconst(0.03, seq([0.004, 0.007], INF))], INF), level=series(0.0, 1.0))),
    case("Dconst-level-areset", lambda b: U.Demand.ar(trigger=trig(330.0), reset=trig(17.0), source=dconst(10.0, seq([1.5, 2.25, 0.5], INF), 0.3))),
    case("Dconst-source-runs-out", lambda b: U.Demand.ar(trigger=trig(300.0), reset=0, source=dconst(100.0, seq([3.0, 4.0, 5.0])))),
    case("Dconst-tolerance", lambda b: U.Duty.ar(duration=0.002, level=seq([dconst(1.0, seq([0.3], INF), 0.15), -1.0], INF))),
    case("Dconst-TDuty", lambda b: TDuty.ar(duration=dconst(0.2, seq([0.011, 0.0065], INF)), level=seq([1.0, 0.5], INF))),
    # Dreset: passes its source through, resetting it on a rising reset value.
    case("Dreset-Demand", lambda b: U.Demand.ar(trigger=trig(300.0), reset=0, source=dreset(series(0.0, 1.0), seq([0, 0, 0, 1, 0, 1, 1, 0, -1, 2], INF)))),
    case("Dreset-source-runs-out", lambda b: U.Duty.ar(duration=0.002, level=dreset(seq([1.0, 2.0, 3.0, 4.0], 3), seq([0, 0, 1, 1, 0, 0, 0], INF)))),
    case("Dreset-areset", lambda b: U.Demand.ar(trigger=trig(270.0), reset=trig(29.0), source=dreset(seq(NOTES, INF), seq([0, 0, 0, 0, 0, 0, 1], INF)))),
    case("Dreset-reset-runs-out", lambda b: U.Demand.ar(trigger=trig(290.0), reset=0, source=dreset(series(0.0, 1.0), seq([0, 1, 0, 1], 1)))),
    case("Dreset-constant-reset", lambda b: U.Duty.ar(duration=0.003, level=dreset(series(5.0, -0.5), 1.0))),
    # Patterns of patterns.
    case("nested-Dswitch1-Ddup-Dconst", lambda b: U.Duty.ar(duration=0.002, level=switch1(dup(2, seq([0, 1, 2], INF)), [dconst(6.0, series(1.0, 1.0)), dreset(series(0.0, 0.25), seq([0, 1, 0, 0], INF)), seq([seq([-1.0, -2.0]), -3.0], INF)]))),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_demand_patterns_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


SEEDED = [
    # Drand: items picked at random, a pattern item gives all its values.
    case("Drand-Duty", lambda b: U.Duty.ar(duration=0.002, level=rand(NOTES))),
    case("Drand-runs-out", lambda b: U.Duty.ar(duration=0.003, level=rand([1.0, 2.0, 3.0], 17))),
    case("Drand-nested-areset", lambda b: U.Demand.ar(trigger=trig(350.0), reset=trig(24.0), source=rand([seq([1.0, 2.0, 3.0]), 5.0, rand([10.0, 20.0], 2), series(100.0, 1.0, 2)]))),
    case("Drand-empty-item", lambda b: U.Duty.ar(duration=0.002, level=rand([seq([1.0, 2.0], 0), 3.0, seq([4.0, 5.0])], 60))),
    case("Drand-Duty.kr", lambda b: U.Duty.kr(duration=0.004, level=rand([seq([1.0, 2.0]), 3.0, 4.0]))),
    case("Drand-audio-item", lambda b: U.Demand.ar(trigger=trig(420.0), reset=0, source=rand([asine(0.0, 1.0, 60.0), 3.0]))),
    # Dxrand: never the same item twice in a row.
    case("Dxrand-Duty", lambda b: U.Duty.ar(duration=0.002, level=xrand(NOTES))),
    case("Dxrand-runs-out", lambda b: U.Demand.ar(trigger=trig(300.0), reset=0, source=xrand([1.0, 2.0, 3.0], 20))),
    case("Dxrand-nested-Duty-reset", lambda b: U.Duty.ar(duration=0.0021, reset=U.Impulse.ar(frequency=13.0), level=xrand([seq([1.0, 2.0]), 7.0, xrand([30.0, 40.0, 50.0], 3)]))),
    case("Dxrand-two-items", lambda b: TDuty.ar(duration=xrand([0.002, 0.0035]), level=xrand([1.0, 0.5]))),
    # Dwrand: items picked with weights.
    case("Dwrand-Duty", lambda b: U.Duty.ar(duration=0.002, level=wrand(NOTES, [0.1, 0.4, 0.2, 0.05, 0.25]))),
    case("Dwrand-runs-out", lambda b: U.Duty.ar(duration=0.003, level=wrand([1.0, 2.0, 3.0], [0.5, 0.25, 0.25], 15))),
    case("Dwrand-nested-areset", lambda b: U.Demand.ar(trigger=trig(310.0), reset=trig(27.0), source=wrand([seq([1.0, 2.0, 3.0]), 9.0, series(50.0, 1.0, 3)], [0.25, 0.5, 0.25]))),
    case("Dwrand-kr-weights", lambda b: U.Duty.ar(duration=0.002, level=wrand([1.0, 2.0, 3.0], [ksine(0.4, 0.35, 6.0), 0.3, 0.5]))),
    case("Dwrand-weights-fall-short", lambda b: U.Duty.ar(duration=0.002, level=wrand([1.0, 2.0, 3.0], [0.2, 0.3, 0.1], 40))),
    case("Dwrand-zero-weight", lambda b: U.Duty.ar(duration=0.002, level=wrand([1.0, 2.0, 3.0], [0.5, 0.0, 0.5]))),
    # Dshuf: the list in a shuffled order, reshuffled on reset.
    case("Dshuf-Duty", lambda b: U.Duty.ar(duration=0.002, level=shuf(NOTES))),
    case("Dshuf-runs-out", lambda b: U.Duty.ar(duration=0.003, level=shuf([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3))),
    case("Dshuf-areset", lambda b: U.Demand.ar(trigger=trig(400.0), reset=trig(31.0), source=shuf(list(range(1, 10))))),
    case("Dshuf-in-Dseq", lambda b: U.Duty.ar(duration=0.002, level=seq([shuf([1.0, 2.0, 3.0, 4.0], 1), 0.0], INF))),
    case("Dshuf-nested", lambda b: U.Demand.ar(trigger=trig(330.0), reset=0, source=shuf([seq([1.0, 2.0]), 5.0, shuf([10.0, 20.0, 30.0], 2), 7.0]))),
    case("Dshuf-empty-item", lambda b: U.Demand.ar(trigger=trig(300.0), reset=trig(30.0), source=shuf([seq([1.0], 0), 2.0, seq([3.0, 4.0]), 5.0], 4))),
    case("Dshuf-Duty.kr", lambda b: U.Duty.kr(duration=0.003, reset=U.Impulse.kr(frequency=9.0), level=shuf([1.0, 2.0, 3.0, 4.0, 5.0]))),
    case("Dshuf-TDuty", lambda b: TDuty.ar(duration=shuf([0.002, 0.003, 0.0045]), level=shuf([1.0, 0.5, 0.75, 0.25]))),
    # Random sources inside the other patterns.
    case("Dswitch1-random-index", lambda b: U.Duty.ar(duration=0.002, level=switch1(U.Diwhite.dr(minimum=0, maximum=5), [1.0, seq([10.0, 20.0], INF), rand([100.0, 200.0])]))),
    case("Dswitch-random-index", lambda b: U.Demand.ar(trigger=trig(300.0), reset=trig(20.0), source=switch(U.Diwhite.dr(minimum=0, maximum=2), [seq([1.0, 2.0]), shuf([10.0, 20.0, 30.0], 1), rand([7.0, 8.0], 2)]))),
    case("Ddup-random", lambda b: U.Duty.ar(duration=0.002, level=dup(U.Diwhite.dr(minimum=1, maximum=4), U.Dwhite.dr(minimum=0.0, maximum=1.0)))),
    case("Dconst-random-durations", lambda b: U.Duty.ar(duration=seq([dconst(0.025, U.Dwhite.dr(minimum=0.001, maximum=0.004))], INF), level=xrand(NOTES))),
    case("Dreset-random", lambda b: U.Demand.ar(trigger=trig(300.0), reset=0, source=dreset(shuf([1.0, 2.0, 3.0, 4.0, 5.0]), U.Diwhite.dr(minimum=0, maximum=1)))),
    case("Dseq-of-random-patterns", lambda b: U.Duty.ar(duration=0.002, level=seq([rand([1.0, 2.0], 2), xrand([3.0, 4.0, 5.0], 3), wrand([6.0, 7.0], [0.3, 0.7], 2), shuf([8.0, 9.0, 10.0], 1)], INF))),
]


@pytest.mark.parametrize("fn,kw", SEEDED)
def test_random_demand_patterns_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)
