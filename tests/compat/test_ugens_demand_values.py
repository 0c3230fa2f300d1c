"""Demand-rate random walks (Dbrown, Dibrown), buffer access on demand (Dbufrd, Dbufwr) and
DemandEnvGen, whose segments come from demand-rate units, compared sample by sample against
scsynth. The random walks run after a RandSeed so both servers draw the same numbers."""

import pytest
from supriya import ugens as U

from nrt import case, check_graph, msg
from sources import asine, ksine, seeded


def seq(values, repeats=1):
    return U.Dseq.dr(sequence=list(values), repeats=repeats)


INF = float("inf")


def series(start=0.0, step=1.0, length=INF):
    return U.Dseries.dr(start=start, step=step, length=length)

# ---------------------------------------------------------------------------------------------
# Dbrown, Dibrown
# ---------------------------------------------------------------------------------------------

BROWN = [
    case("Dbrown", lambda b: U.Duty.ar(duration=0.002, level=U.Dbrown.dr(minimum=-1.0, maximum=1.0, step=0.2))),
    case("Dbrown.kr", lambda b: U.Duty.kr(duration=0.01, level=U.Dbrown.dr(minimum=0.0, maximum=1.0, step=0.05))),
    # A step wider than the range folds back from both ends.
    case("Dbrown-wide-step-folds", lambda b: U.Duty.ar(duration=0.001, level=U.Dbrown.dr(minimum=2.0, maximum=3.0, step=2.5))),
    case("Dbrown-length-runs-out", lambda b: U.Duty.ar(duration=0.003, level=U.Dbrown.dr(minimum=0.0, maximum=10.0, step=1.0, length=25))),
    case("Dbrown-demanded-bounds", lambda b: U.Duty.ar(duration=0.002, level=U.Dbrown.dr(minimum=seq([0.0, -1.0], INF), maximum=seq([1.0, 2.0, 0.5], INF), step=seq([0.1, 0.3], INF)))),
    # Bounds that run out keep their last values.
    case("Dbrown-bounds-run-out", lambda b: U.Duty.ar(duration=0.002, level=U.Dbrown.dr(minimum=seq([0.0, 0.5, -0.5]), maximum=seq([1.0, 0.75]), step=0.3))),
    case("Dbrown-signal-step", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=700.0), reset=0, source=U.Dbrown.dr(minimum=-1.0, maximum=1.0, step=asine(0.2, 0.15, 9.0)))),
    # Each reset starts the walk over from a fresh random point.
    case("Dbrown-reset", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=500.0), reset=U.Impulse.ar(frequency=30.0), source=U.Dbrown.dr(minimum=0.0, maximum=1.0, step=0.1, length=12))),
    case("Dibrown", lambda b: U.Duty.ar(duration=0.002, level=U.Dibrown.dr(minimum=-5, maximum=12, step=2))),
    case("Dibrown.kr", lambda b: U.Duty.kr(duration=0.01, level=U.Dibrown.dr(minimum=0, maximum=100, step=7))),
    case("Dibrown-fractional-bounds-truncate", lambda b: U.Duty.ar(duration=0.0015, level=U.Dibrown.dr(minimum=-3.7, maximum=4.9, step=3.9))),
    case("Dibrown-wide-step-folds", lambda b: U.Duty.ar(duration=0.001, level=U.Dibrown.dr(minimum=0, maximum=3, step=9))),
    case("Dibrown-demanded-bounds-reset", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=400.0), reset=U.Impulse.ar(frequency=20.0), source=U.Dibrown.dr(minimum=seq([0.0, 10.0], INF), maximum=seq([20.0, 30.0, 15.0], INF), step=seq([1.0, 4.0], INF), length=30))),
    case("DemandEnvGen-Dbrown-levels-Dibrown-shapes", lambda b: U.DemandEnvGen.ar(level=U.Dbrown.dr(minimum=-1.0, maximum=1.0, step=0.4), duration=U.Dwhite.dr(minimum=0.001, maximum=0.01), shape=U.Dibrown.dr(minimum=3, maximum=5, step=1), curve=U.Dbrown.dr(minimum=-5.0, maximum=5.0, step=2.0))),
    case("Dseq-of-Dibrown", lambda b: U.Duty.ar(duration=0.002, level=seq([U.Dibrown.dr(minimum=0, maximum=8, step=1, length=5), -1.0], INF))),
]


@pytest.mark.parametrize("fn,kw", BROWN)
def test_random_walks_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)


# ---------------------------------------------------------------------------------------------
# Dbufrd, Dbufwr
# ---------------------------------------------------------------------------------------------

TABLE = [0.5, -0.25, 1.0, 0.75, -1.0, 0.125, 0.3, -0.6, 0.9, 0.05, -0.45, 0.66, -0.8, 0.2, 0.4, -0.1]
STEREO = [float(i) * 0.1 - 0.8 for i in range(16)]
BUFFERS = (
    msg("/b_alloc", 0, 16),
    msg("/b_setn", 0, 0, len(TABLE), *TABLE),
    msg("/b_alloc", 1, 8, 2),
    msg("/b_setn", 1, 0, len(STEREO), *STEREO),
)
EMPTY = (msg("/b_alloc", 0, 32),)


def rd(phase, loop=1, buf=0):
    return U.Dbufrd.dr(buffer_id=buf, phase=phase, loop=loop)


def wr(source, phase, loop=1, buf=0):
    return U.Dbufwr.dr(buffer_id=buf, phase=phase, source=source, loop=loop)


BUFS = [
    case("Dbufrd-loop", lambda b: U.Duty.ar(duration=0.002, level=rd(series(0.0, 1.0))), setup=BUFFERS),
    # Without loop the phase clamps to the last frame.
    case("Dbufrd-no-loop-clamps", lambda b: U.Duty.ar(duration=0.002, level=rd(series(0.0, 1.0), loop=0)), setup=BUFFERS),
    case("Dbufrd-negative-and-fractional-phases", lambda b: U.Duty.ar(duration=0.002, level=rd(seq([-1.0, -17.5, 2.7, 15.99, 16.0, 33.2, -0.2], INF))), setup=BUFFERS),
    case("Dbufrd-no-loop-negative", lambda b: U.Duty.ar(duration=0.002, level=rd(seq([-3.0, 4.5, 40.0, 7.0], INF), loop=0)), setup=BUFFERS),
    case("Dbufrd.kr", lambda b: U.Duty.kr(duration=0.01, level=rd(series(3.0, 3.0))), setup=BUFFERS),
    case("Dbufrd-demanded-loop", lambda b: U.Duty.ar(duration=0.002, level=rd(series(10.0, 1.0), loop=seq([1.0, 0.0], INF))), setup=BUFFERS),
    # Reads the first channel of a two-channel buffer.
    case("Dbufrd-stereo-buffer", lambda b: U.Duty.ar(duration=0.002, level=rd(series(0.0, 1.0), buf=1)), setup=BUFFERS),
    case("Dbufrd-demanded-buffer", lambda b: U.Duty.ar(duration=0.002, level=rd(series(0.0, 1.0), buf=seq([0.0, 1.0, 0.0, 1.0, 1.0], INF))), setup=BUFFERS),
    case("Dbufrd-runs-out-with-phases", lambda b: U.Duty.ar(duration=0.003, level=rd(U.Dseries.dr(start=2.0, step=1.0, length=20)), done_action=2) + U.SinOsc.ar(frequency=300.0) * 0.1, setup=BUFFERS),
    case("Dbufrd-reset-restarts-phases", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=600.0), reset=U.Impulse.ar(frequency=45.0), source=rd(series(0.0, 1.0))), setup=BUFFERS),
    case("Dbufrd-unallocated-buffer", lambda b: U.Duty.ar(duration=0.002, level=rd(series(0.0, 1.0), buf=5)) + U.SinOsc.ar(frequency=200.0) * 0.2, setup=BUFFERS),
    case("Demand.ar-Dbufrd-phases-from-signal", lambda b: U.Demand.ar(trigger=U.Impulse.ar(frequency=900.0), reset=0, source=rd(seq([asine(8.0, 8.0, 11.0)], INF))), setup=BUFFERS),
    # What Dbufwr wrote shows in its own output and in a BufRd of the same buffer.
    case("Dbufwr-then-BufRd", lambda b: [
        U.Duty.ar(duration=0.001, level=wr(series(0.0, 0.05), series(0.0, 1.0))),
        U.BufRd.ar(buffer_id=0, phase=U.Phasor.ar(rate=1.0, start=0.0, stop=32.0), loop=1, interpolation=1),
    ], setup=EMPTY),
    case("Dbufwr-then-PlayBuf", lambda b: [
        U.Duty.ar(duration=0.0007, level=wr(seq([0.1, -0.2, 0.3, 0.9, -0.7], INF), series(5.0, 3.0))),
        U.PlayBuf.ar(buffer_id=0, rate=0.5, loop=1),
    ], setup=EMPTY),
    case("Dbufwr-no-loop-clamps", lambda b: [
        U.Duty.ar(duration=0.001, level=wr(series(1.0, 1.0), series(20.0, 1.0), loop=0)),
        U.BufRd.ar(buffer_id=0, phase=U.Phasor.ar(rate=0.25, start=0.0, stop=32.0), loop=1, interpolation=1),
    ], setup=EMPTY),
    # A Dseq alternates writing three frames and reading five (two never written) back.
    case("Dbufwr-Dbufrd-interleaved", lambda b: U.Duty.ar(duration=0.002, level=seq([
        wr(U.Dwhite.dr(minimum=-1.0, maximum=1.0, length=3), seq([3.0, 7.0, 11.0])),
        rd(seq([3.0, 6.0, 7.0, 11.0, 12.0])),
    ], INF)), setup=EMPTY),
    case("Dbufwr-stereo-buffer-demanded-loop", lambda b: [
        U.Duty.ar(duration=0.001, level=wr(series(0.5, 0.25), series(4.0, 1.0), loop=seq([1.0, 1.0, 0.0], INF), buf=1)),
        U.BufRd.ar(channel_count=2, buffer_id=1, phase=U.Phasor.ar(rate=0.1, start=0.0, stop=8.0), loop=1, interpolation=1),
    ], setup=BUFFERS),
    case("Dbufwr-values-run-out", lambda b: U.Duty.ar(duration=0.002, level=wr(seq([0.5, 0.25, 0.125]), series(0.0, 1.0)), done_action=2) + U.SinOsc.ar(frequency=300.0) * 0.1, setup=EMPTY),
    case("Dbufwr-reset", lambda b: [
        U.Demand.ar(trigger=U.Impulse.ar(frequency=1000.0), reset=U.Impulse.ar(frequency=60.0), source=wr(series(0.0, 0.1), series(0.0, 1.0))),
        U.BufRd.ar(buffer_id=0, phase=U.Phasor.ar(rate=0.5, start=0.0, stop=32.0), loop=1, interpolation=1),
    ], setup=EMPTY),
]


@pytest.mark.parametrize("fn,kw", BUFS)
def test_buffer_demand_ugens_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)


# ---------------------------------------------------------------------------------------------
# DemandEnvGen
# ---------------------------------------------------------------------------------------------

LEVELS = [0.0, 1.0, 0.3, 0.8, 0.1]
POSITIVE = [0.05, 1.0, 0.3, 0.8, 0.1]
DURS = [0.01, 0.005, 0.02, 0.013]


def env_ar(**kw):
    kw.setdefault("level", seq(LEVELS, INF))
    kw.setdefault("duration", seq(DURS, INF))
    return U.DemandEnvGen.ar(**kw)


def env_kr(**kw):
    kw.setdefault("level", seq(LEVELS, INF))
    kw.setdefault("duration", seq([0.03, 0.05, 0.02], INF))
    return U.DemandEnvGen.kr(**kw)


def k2a(x):
    return U.K2A.ar(source=x)


SHAPES = {"step": 0, "linear": 1, "exponential": 2, "sine": 3, "welch": 4, "curve": 5, "squared": 6, "cubed": 7}

ENV = []
for name, num in SHAPES.items():
    # Exponential, squared and cubed segments need levels above 0 (else NaN from then on).
    levels = POSITIVE if name in ("exponential", "squared", "cubed") else LEVELS
    ENV.append(case(f"DemandEnvGen.ar-{name}", lambda b, num=num, levels=levels: env_ar(level=seq(levels, INF), shape=num, curve=-3.0)))
    ENV.append(case(f"DemandEnvGen.kr-{name}", lambda b, num=num, levels=levels: env_kr(level=seq(levels, INF), shape=num, curve=2.5)))

ENV += [
    case("DemandEnvGen.ar-demanded-shapes-and-curves", lambda b: env_ar(level=seq(POSITIVE, INF), shape=seq([1, 3, 4, 5, 6, 7, 0, 5], INF), curve=seq([-4.0, 0.0005, 3.0], INF))),
    case("DemandEnvGen.kr-demanded-shapes-and-curves", lambda b: env_kr(shape=seq([5, 3, 4, 1, 6], INF), curve=seq([6.0, -2.0], INF))),
    # Shapes and curves that run out fall back to those the block started with.
    case("DemandEnvGen.ar-shapes-run-out-mid-block", lambda b: env_ar(level=seq(POSITIVE, INF), duration=seq([0.0005, 0.0007, 0.0003, 0.0011], INF), shape=seq([3, 4, 5, 7, 2], 2), curve=seq([2.0, -5.0, 1.0]))),
    case("DemandEnvGen.kr-shapes-run-out", lambda b: env_kr(duration=seq([0.004, 0.007, 0.01], INF), shape=seq([5, 4, 3, 5]), curve=seq([2.0, -5.0]))),
    # Below 0.001 a curve is a straight line.
    case("DemandEnvGen.ar-flat-curve", lambda b: env_ar(shape=5, curve=0.0005)),
    case("DemandEnvGen.ar-scale-bias-timescale", lambda b: env_ar(shape=3, level_scale=2.0, level_bias=-0.5, time_scale=1.7)),
    # Segments shorter than two samples (or than a control period) go straight.
    case("DemandEnvGen.ar-tiny-durations", lambda b: env_ar(duration=seq([0.00001, 0.0004, 0.00003, 0.002], INF), shape=3)),
    case("DemandEnvGen.kr-short-durations", lambda b: env_kr(duration=seq([0.001, 0.004, 0.0015, 0.03], INF), shape=4)),
    case("DemandEnvGen.ar-signal-levels", lambda b: env_ar(level=seq([ksine(0.5, 0.4, 3.0), asine(0.0, 0.3, 40.0), 1.0], INF), shape=1)),
    # Running out of levels ends the envelope and, with doneAction 2, the synth.
    case("DemandEnvGen.ar-levels-run-out", lambda b: [env_ar(level=seq(LEVELS, 1), shape=1, done_action=2), U.SinOsc.ar(frequency=220.0) * 0.2]),
    case("DemandEnvGen.kr-levels-run-out", lambda b: [env_kr(level=seq(LEVELS, 2), shape=3, done_action=2), U.SinOsc.ar(frequency=220.0) * 0.2]),
    case("DemandEnvGen.ar-durations-run-out", lambda b: [env_ar(duration=seq(DURS, 1), shape=4, done_action=2), U.SinOsc.ar(frequency=220.0) * 0.2]),
    case("DemandEnvGen.ar-levels-run-out-no-action", lambda b: env_ar(level=seq([0.2, 0.9, -0.4]), shape=5, curve=-2.0)),
    # A constant reset above 1 jumps to the first level when the synth starts.
    case("DemandEnvGen.ar-start-jump", lambda b: env_ar(level=seq([0.7, -0.3, 0.4], INF), reset=2.0)),
    # Control-rate reset on an audio-rate envelope: a rise restarts it at each sample of that block.
    case("DemandEnvGen.ar-kreset", lambda b: env_ar(shape=1, reset=U.Impulse.kr(frequency=11.0))),
    case("DemandEnvGen.ar-kreset-jump", lambda b: env_ar(shape=3, reset=U.Impulse.kr(frequency=11.0) * 2)),
    case("DemandEnvGen.kr-reset", lambda b: env_kr(shape=1, reset=U.Impulse.kr(frequency=7.0))),
    case("DemandEnvGen.kr-reset-jump", lambda b: env_kr(shape=5, curve=-4.0, reset=U.Impulse.kr(frequency=7.0) * 1.5)),
    # Audio-rate reset (the gate then goes to audio rate too, as sclang does).
    case("DemandEnvGen.ar-areset", lambda b: env_ar(shape=1, gate=k2a(1.0), reset=U.Impulse.ar(frequency=37.0))),
    case("DemandEnvGen.ar-areset-jump", lambda b: env_ar(shape=4, gate=k2a(1.0), reset=U.Impulse.ar(frequency=37.0) * 3)),
    case("DemandEnvGen.ar-areset-demanded-curves", lambda b: env_ar(shape=5, curve=seq([-4.0, 2.0, 7.0], INF), gate=k2a(1.0), reset=U.Impulse.ar(frequency=29.0))),
    case("DemandEnvGen.ar-areset-signal-levels", lambda b: env_ar(level=seq([asine(0.5, 0.4, 30.0), 1.0, asine(0.0, 0.3, 70.0)], INF), duration=seq([0.0009, 0.002, 0.0013], INF), shape=1, gate=k2a(1.0), reset=U.Impulse.ar(frequency=23.0))),
    case("DemandEnvGen.ar-agate-pulse", lambda b: env_ar(shape=3, gate=U.LFPulse.ar(frequency=13.0, width=0.6), reset=k2a(0.0))),
]


GATED = [
    # A gate between 0 and 1 lets the current segment finish, then the done action.
    case("DemandEnvGen.ar-gate-release", lambda b: [env_ar(shape=1, gate=b["gate"], done_action=2), U.SinOsc.ar(frequency=330.0) * 0.2],
         params=dict(gate=1.0), events=[(0.061, [msg("/n_set", 1000, "gate", 0.5)])]),
    case("DemandEnvGen.kr-gate-release", lambda b: [env_kr(shape=3, gate=b["gate"], done_action=2), U.SinOsc.ar(frequency=330.0) * 0.2],
         params=dict(gate=1.0), events=[(0.1, [msg("/n_set", 1000, "gate", 0.3)])]),
    # A gate of 0 holds the envelope where it is; opening it again goes on.
    case("DemandEnvGen.ar-gate-hold", lambda b: env_ar(shape=4, gate=b["gate"]),
         params=dict(gate=1.0), events=[(0.05, [msg("/n_set", 1000, "gate", 0.0)]), (0.15, [msg("/n_set", 1000, "gate", 1.0)])]),
    case("DemandEnvGen.kr-gate-hold-then-release", lambda b: [env_kr(shape=1, gate=b["gate"], done_action=2), U.SinOsc.ar(frequency=330.0) * 0.2],
         params=dict(gate=1.0), events=[(0.04, [msg("/n_set", 1000, "gate", 0.0)]), (0.12, [msg("/n_set", 1000, "gate", 1.0)]), (0.2, [msg("/n_set", 1000, "gate", 0.5)])]),
    case("DemandEnvGen.ar-audio-gate-release", lambda b: [env_ar(shape=5, curve=-2.0, gate=k2a(b["gate"]), reset=k2a(0.0), done_action=2), U.SinOsc.ar(frequency=330.0) * 0.2],
         params=dict(gate=1.0), events=[(0.07, [msg("/n_set", 1000, "gate", 0.5)])]),
    case("DemandEnvGen.ar-audio-gate-hold", lambda b: env_ar(shape=1, gate=k2a(b["gate"]), reset=k2a(0.0)),
         params=dict(gate=1.0), events=[(0.05, [msg("/n_set", 1000, "gate", 0.0)]), (0.14, [msg("/n_set", 1000, "gate", 1.0)])]),
    # Resetting after a release starts the envelope again.
    case("DemandEnvGen.kr-release-then-reset", lambda b: env_kr(shape=1, gate=b["gate"], reset=b["reset"]),
         params=dict(gate=1.0, reset=0.0), events=[(0.05, [msg("/n_set", 1000, "gate", 0.5)]), (0.15, [msg("/n_set", 1000, "gate", 1.0, "reset", 1.0)]), (0.2, [msg("/n_set", 1000, "reset", 0.0)]), (0.23, [msg("/n_set", 1000, "reset", 2.0)])]),
    case("DemandEnvGen.ar-release-then-reset", lambda b: env_ar(shape=3, gate=b["gate"], reset=b["reset"]),
         params=dict(gate=1.0, reset=0.0), events=[(0.05, [msg("/n_set", 1000, "gate", 0.5)]), (0.15, [msg("/n_set", 1000, "gate", 1.0, "reset", 2.0)]), (0.2, [msg("/n_set", 1000, "reset", 0.0)]), (0.23, [msg("/n_set", 1000, "reset", 1.0)])]),
]


@pytest.mark.parametrize("fn,kw", ENV + GATED)
def test_DemandEnvGen_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
