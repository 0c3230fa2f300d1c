"""Assorted units compared with scsynth: tapped delay lines in a buffer (DelTapWr/DelTapRd), Flip,
MantissaMask, IEnvGen, PSinGrain and GrainTap sample by sample in NRT renders; Dpoll by the lines
both servers print and the values it passes on; SendPeakRMS by the replies a client receives from
a real-time server.

The buffer for the tapped delays is mono and 4096 samples long; DelTapWr writes its first sample
while it is built, so each block's write position is one past a multiple of 64."""

import os
import re
import sys
import time
from pathlib import Path

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from nrt import Score, case, check_graph, graph_def, msg, render_both
from sources import asine, ksine, ksrc, seeded, src


# ---------------------------------------------------------------------------------------------
# UGens supriya does not define (server-side names)
# ---------------------------------------------------------------------------------------------


@ugen(ar=True, kr=True)
class Flip(UGen):
    source = param()


@ugen(ar=True, kr=True)
class IEnvGen(UGen):
    index = param()
    envelope = param(unexpanded=True)


@ugen(ar=True)
class PSinGrain(UGen):
    frequency = param(440.0)
    duration = param(0.2)
    amplitude = param(1.0)


@ugen(ar=True)
class GrainTap(UGen):
    buffer_id = param()
    grain_duration = param(0.2)
    pitch_ratio = param(1.0)
    pitch_dispersion = param(0.0)
    time_dispersion = param(0.0)
    overlap = param(2.0)


@ugen(dr=True)
class Dpoll(UGen):
    source = param()
    trigger_id = param(-1.0)
    run = param(1.0)
    label = param(unexpanded=True)


def dpoll(source, label, run=1.0, trigger_id=-1.0):
    chars = [float(ord(c)) for c in label]
    return Dpoll.dr(source=source, trigger_id=trigger_id, run=run, label=[float(len(chars)), *chars])


# ---------------------------------------------------------------------------------------------
# DelTapWr / DelTapRd
# ---------------------------------------------------------------------------------------------

LINE = (msg("/b_alloc", 0, 4096),)
SR = 48000.0


def taps(delay, interp, source=None, rate="ar"):
    """A delay line written with `source` and read `delay` seconds behind the writer."""
    source = src() if source is None else source
    if rate == "kr":
        phase = U.DelTapWr.kr(buffer_id=0, source=source)
        return U.DelTapRd.kr(buffer_id=0, phase=phase, delay_time=delay, interpolation=interp)
    phase = U.DelTapWr.ar(buffer_id=0, source=source)
    return U.DelTapRd.ar(buffer_id=0, phase=phase, delay_time=delay, interpolation=interp)


# A fixed delay of 64k + 1 samples keeps each block's reads inside the line: scsynth's fixed-delay
# linear form does not wrap a position that runs past the end within a block, it reads past the
# buffer's memory.
FIXED = 641.0 / SR
kdelay = lambda: ksine(0.01, 0.004, 3.0)
adelay = lambda: asine(0.01, 0.004, 5.0)

DELTAP = [
    case(f"DelTapRd.ar-{name}-interp{i}", (lambda d, i: lambda b: taps(d(), i))(d, i), setup=LINE, dur=0.3)
    for i in (1, 2, 4)
    for name, d in (("fixed", lambda: FIXED), ("kdelay", kdelay), ("adelay", adelay))
] + [
    case("DelTapRd.ar-fixed-fraction-interp1", lambda b: taps(0.0123, 1), setup=LINE),
    case("DelTapRd.ar-several-taps", lambda b: [taps(FIXED, 2), U.DelTapRd.ar(buffer_id=0, phase=U.DelTapWr.ar(buffer_id=0, source=src()), delay_time=kdelay(), interpolation=4)], setup=LINE),
    case("DelTapRd.ar-sine-interp1", lambda b: taps(0.005, 1, source=asine(0.0, 0.5, 330.0)), setup=LINE),
    case("DelTapRd.ar-sine-interp4-kdelay", lambda b: taps(ksine(0.005, 0.002, 7.0), 4, source=asine(0.0, 0.5, 330.0)), setup=LINE),
    case("DelTapRd.kr-fixed", lambda b: taps(0.1, 1, source=ksrc(), rate="kr"), setup=LINE, dur=0.6),
    case("DelTapRd.kr-kdelay-interp4", lambda b: taps(ksine(0.3, 0.1, 1.0), 4, source=ksrc(), rate="kr"), setup=LINE, dur=0.6),
    case("DelTapRd.kr-kdelay-interp2", lambda b: taps(ksine(0.2, 0.05, 2.0), 2, source=ksrc(), rate="kr"), setup=LINE, dur=0.6),
    case("DelTapRd.ar-no-buffer-is-silent", lambda b: taps(0.01, 2), setup=(), allow_silent=True),
]


@pytest.mark.parametrize("fn,kw", DELTAP)
def test_tapped_delay_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


# ---------------------------------------------------------------------------------------------
# Flip, MantissaMask
# ---------------------------------------------------------------------------------------------

SIMPLE = [
    case("Flip.ar", lambda b: Flip.ar(source=src())),
    case("Flip.ar-sine", lambda b: Flip.ar(source=asine(0.2, 0.5, 200.0))),
    case("Flip.kr", lambda b: Flip.kr(source=ksrc())),
    case("Flip.kr-sine", lambda b: Flip.kr(source=ksine(0.5, 0.3, 5.0))),
    case("MantissaMask.ar-3bits", lambda b: U.MantissaMask.ar(source=src(), bits=3)),
    case("MantissaMask.ar-0bits", lambda b: U.MantissaMask.ar(source=asine(0.0, 0.9, 330.0), bits=0)),
    case("MantissaMask.ar-kbits", lambda b: U.MantissaMask.ar(source=src(), bits=ksine(10.0, 9.0, 4.0))),
    case("MantissaMask.ar-all-bits", lambda b: U.MantissaMask.ar(source=src(), bits=23)),
    case("MantissaMask.kr", lambda b: U.MantissaMask.kr(source=ksrc(), bits=5)),
    case("MantissaMask.kr-kbits", lambda b: U.MantissaMask.kr(source=ksine(100.0, 90.0, 2.0), bits=ksine(4.0, 4.0, 3.0))),
]


@pytest.mark.parametrize("fn,kw", SIMPLE)
def test_flip_and_mantissa_mask_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


# ---------------------------------------------------------------------------------------------
# IEnvGen
# ---------------------------------------------------------------------------------------------

# Env shape numbers.
STEP, LIN, EXP, SIN, WEL, CURVE, SQR, CUB, HOLD = range(9)


def env(levels, times, shapes, curves=None, offset=0.0):
    """The envelope as IEnvGen takes it: offset, first level, stages, total time, then per stage
    time, shape, curve, level."""
    curves = curves or [0.0] * len(times)
    spec = [offset, levels[0], float(len(times)), float(sum(times))]
    for t, s, c, l in zip(times, shapes, curves, levels[1:]):
        spec += [t, float(s), c, l]
    return spec


def ienv(index, spec, rate="ar"):
    return (IEnvGen.ar if rate == "ar" else IEnvGen.kr)(index=index, envelope=spec)


def sweep_a(lo, hi, freq=3.0):
    return U.LFSaw.ar(frequency=freq) * ((hi - lo) / 2) + (hi + lo) / 2


def sweep_k(lo, hi, freq=3.0):
    return U.LFSaw.kr(frequency=freq) * ((hi - lo) / 2) + (hi + lo) / 2


SHAPES = env([0.1, 1.0, 0.3, 0.8, 0.2, 0.9, 0.4, 0.6, 0.5, 0.7],
             [0.1, 0.2, 0.1, 0.15, 0.1, 0.1, 0.05, 0.1, 0.1],
             [LIN, EXP, SIN, WEL, CURVE, SQR, CUB, STEP, HOLD], [0, 0, 0, 0, -3.7, 0, 0, 0, 0])
CURVES = env([0.0, 1.0, -0.5, 0.5], [0.3, 0.2, 0.5], [CURVE] * 3, [4.0, -2.0, 0.0])
WELCH_DOWN = env([1.0, 0.2, 0.9], [0.4, 0.6], [WEL, SIN])
OFFSET = env([0.0, 1.0, 0.0], [0.5, 0.5], [LIN, EXP], offset=0.25)

IENVGEN = [
    case("IEnvGen.ar-shapes", lambda b: ienv(sweep_a(-0.1, 1.2), SHAPES)),
    case("IEnvGen.kr-shapes", lambda b: ienv(sweep_k(-0.1, 1.2, 1.5), SHAPES, "kr"), dur=0.7),
    case("IEnvGen.ar-kindex", lambda b: ienv(sweep_k(0.0, 1.0), CURVES)),
    case("IEnvGen.ar-curves", lambda b: ienv(sweep_a(-0.2, 1.2, 4.0), CURVES)),
    case("IEnvGen.ar-welch-down", lambda b: ienv(asine(0.5, 0.6, 3.0), WELCH_DOWN)),
    case("IEnvGen.kr-offset", lambda b: ienv(ksine(0.6, 0.6, 2.0), OFFSET, "kr"), dur=0.6),
    case("IEnvGen.ar-offset", lambda b: ienv(asine(0.6, 0.6, 5.0), OFFSET)),
    case("IEnvGen.ar-held-index", lambda b: ienv(U.Latch.ar(source=sweep_a(0.0, 1.1), trigger=U.Impulse.ar(frequency=50.0)), SHAPES)),
    case("IEnvGen.ar-fixed-index", lambda b: ienv(0.37, SHAPES) + U.DC.ar(source=0.0)),
]


@pytest.mark.parametrize("fn,kw", IENVGEN)
def test_ienvgen_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


# ---------------------------------------------------------------------------------------------
# PSinGrain, GrainTap
# ---------------------------------------------------------------------------------------------

# scsynth's GrainTap does not look up buffer 0 when it is built (and crashes), so the lines
# here are buffers 3 and 1.
GRAIN_LINE = (msg("/b_alloc", 3, 4096), msg("/b_alloc", 1, 8192), msg("/b_gen", 1, "sine1", 4, 1.0, 0.3, 0.2))
NOT_POWER_OF_TWO = (msg("/b_alloc", 2, 3000), msg("/b_gen", 2, "sine1", 4, 1.0))


def written_taps(**kw):
    """GrainTap over a line that RecordBuf keeps writing."""
    U.RecordBuf.ar(buffer_id=3, source=src(), loop=1)
    return GrainTap.ar(buffer_id=3, **kw)


GRAINS = [
    case("PSinGrain.ar", lambda b: PSinGrain.ar(frequency=440.0, duration=0.1, amplitude=0.5)),
    case("PSinGrain.ar-short-loud", lambda b: PSinGrain.ar(frequency=1234.5, duration=0.0503, amplitude=1.0)),
    case("PSinGrain.ar-long", lambda b: PSinGrain.ar(frequency=3000.0, duration=0.25, amplitude=0.3)),
    case("GrainTap.ar-unison", seeded(lambda b: written_taps(grain_duration=0.05, pitch_ratio=1.0)), setup=GRAIN_LINE),
    case("GrainTap.ar-down", seeded(lambda b: written_taps(grain_duration=0.03, pitch_ratio=0.5, pitch_dispersion=0.1, overlap=3.0)), setup=GRAIN_LINE),
    case("GrainTap.ar-up-time-dispersion", seeded(lambda b: written_taps(grain_duration=0.02, pitch_ratio=1.5, pitch_dispersion=0.2, time_dispersion=0.01)), setup=GRAIN_LINE),
    case("GrainTap.ar-kmod", seeded(lambda b: written_taps(grain_duration=ksine(0.03, 0.02, 2.0), pitch_ratio=ksine(1.0, 0.8, 1.0), overlap=ksine(2.0, 1.5, 3.0))), setup=GRAIN_LINE),
    case("GrainTap.ar-reverse", seeded(lambda b: written_taps(grain_duration=0.04, pitch_ratio=-1.0, pitch_dispersion=0.5, time_dispersion=0.02, overlap=8.0)), setup=GRAIN_LINE),
    case("GrainTap.ar-fixed-table", seeded(lambda b: GrainTap.ar(buffer_id=1, grain_duration=0.01, pitch_ratio=0.7, pitch_dispersion=0.05, overlap=4.0)), setup=GRAIN_LINE),
    case("GrainTap.ar-buffer-not-power-of-two", seeded(lambda b: GrainTap.ar(buffer_id=2) + src() * 0.1), setup=NOT_POWER_OF_TWO),
]


@pytest.mark.parametrize("fn,kw", GRAINS)
def test_grains_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


# ---------------------------------------------------------------------------------------------
# Dpoll: what it prints, and what it passes on
# ---------------------------------------------------------------------------------------------

NOTES = [1.0, 2.5, -3.25, 1e-5, 123456789.0, 0.1]


def dpoll_graph(b):
    a = dpoll(U.Dseq.dr(sequence=NOTES, repeats=3), "notes")
    k = dpoll(U.Dseries.dr(start=0.5, step=0.25, length=20), "steps", trigger_id=7)
    quiet = dpoll(U.Dseq.dr(sequence=NOTES, repeats=10), "quiet", run=0.0)
    gated = dpoll(U.Dseq.dr(sequence=NOTES, repeats=10), "gated", run=U.Dseq.dr(sequence=[1.0, 0.0], repeats=100))
    sine = dpoll(U.SinOsc.ar(frequency=3.0) * 100.0, "sine")
    return [
        U.Demand.ar(trigger=U.Impulse.ar(frequency=37.0), reset=0.0, source=sine),
        U.Duty.ar(duration=0.0107, level=a),
        U.Demand.kr(trigger=U.Impulse.kr(frequency=30.0), reset=0.0, source=k),
        U.Duty.kr(duration=0.02, level=quiet),
        U.Demand.ar(trigger=U.Impulse.ar(frequency=45.0), reset=0.0, source=gated),
    ]


def printed(log: str, labels=("notes", "steps", "quiet", "gated", "sine")) -> list[str]:
    return [line for line in log.splitlines() if re.match(r"^(%s): " % "|".join(labels), line)]


def test_dpoll_passes_its_values_on(tmp_path):
    check_graph(tmp_path, dpoll_graph, dur=0.5)


def test_dpoll_prints_what_scsynth_prints(tmp_path):
    sd, n = graph_def("dpolls", dpoll_graph)
    score = Score([sd])
    score.add(0.0, msg("/s_new", sd.effective_name, 1000, 0, 0))
    score.end(0.5)
    pair = render_both(score, tmp_path, options=["-o", str(n)])
    ref, dut = printed(pair.ref.log), printed(pair.dut.log)
    assert len(ref) > 40 and not any(line.startswith("quiet") for line in ref), ref
    # Each value is followed by the sample of the block it was asked for at.
    assert any(" block offset: " in line for line in ref), ref
    assert dut == ref


# ---------------------------------------------------------------------------------------------
# SendPeakRMS: the replies a client receives (real time)
# ---------------------------------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))


def peak_rms_graph(b):
    U.SendPeakRMS.kr(source=[src(), ksine(0.2, 0.5, 3.0)], reply_rate=20, peak_lag=3, reply_id=5, command_name="/levels")
    U.SendPeakRMS.ar(source=[asine(0.1, 0.7, 210.0)], reply_rate=33, peak_lag=0.5, reply_id=6, command_name="/alevels")
    U.SendPeakRMS.ar(source=[src() * U.LFPulse.kr(frequency=4.0), ksrc()], reply_rate=750.0 / 7, peak_lag=0, reply_id=7, command_name="/fast")
    U.SendPeakRMS.kr(source=[asine(0.0, 0.3, 50.0)], reply_rate=11, peak_lag=1.0, command_name="/slow")
    # Dpoll sends its values as /tr with its trigger id.
    U.Demand.kr(trigger=U.Impulse.kr(frequency=40.0), reset=0.0, source=dpoll(U.Dseries.dr(start=1.0, step=0.5, length=1000), "tr", trigger_id=9))
    U.Out.ar(bus=0, source=U.DC.ar(source=0.0))


REPLIES = {"/levels": 12, "/alevels": 20, "/fast": 60, "/slow": 6, "/tr": 12}


@pytest.fixture(scope="module")
def jack():
    from rtserver import JackDummy

    j = JackDummy()
    # A name of its own: the end-to-end tests' JACK server may run in this process too.
    j.name = f"magnetar-compat-{os.getpid()}"
    j.start()
    yield j
    j.stop()


def peak_rms_replies(exe: str, jack) -> dict[str, list[tuple]]:
    from rtserver import OscClient, ServerProcess

    from supriya.ugens import compile_synthdefs

    from nrt import build

    sd = build("peakrms", peak_rms_graph)
    server = ServerProcess(exe, env=jack.env())
    server.start()
    try:
        with OscClient(server.port) as c:
            c.request(("/notify", 1), "/done", timeout=3)
            c.send(("/d_recv", compile_synthdefs(sd)))
            c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=3)
            c.send(("/s_new", "peakrms", 1000, 0, 0))
            deadline = time.monotonic() + 10
            while any(len(c.messages(a)) < n for a, n in REPLIES.items()):
                assert time.monotonic() < deadline, {a: len(c.messages(a)) for a in REPLIES}
                time.sleep(0.05)
            return {a: [m.contents for m in c.messages(a)[:n]] for a, n in REPLIES.items()}
    finally:
        server.stop()


def test_send_peak_rms_and_dpoll_replies_match_scsynth(jack):
    from rtserver import executables

    exes = executables()
    ref = peak_rms_replies(exes["scsynth"], jack)
    dut = peak_rms_replies(exes["magnetar"], jack)
    assert ref["/levels"][0][:2] == (1000, 5) and len(ref["/levels"][0]) == 6, ref["/levels"][0]
    assert ref["/slow"][0][:2] == (1000, -1)
    assert ref["/tr"][:2] == [(1000, 9, 1.0), (1000, 9, 1.5)], ref["/tr"]
    for address in REPLIES:
        assert dut[address] == ref[address], address
