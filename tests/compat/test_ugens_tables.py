"""Table units (Index, IndexL, WrapIndex, FoldIndex, IndexInBetween, DetectIndex, DegreeToKey,
Shaper, TWindex, VOsc, VOsc3) and the lags and filters Lag2UD, Lag3UD, VarLag, FOS and APF,
compared sample by sample against scsynth.

Each case fills its buffers in the time-0 bundle before the synth.  Indices sweep past both ends
of the tables, so clipping, wrapping and folding are all exercised; every unit is run with an
audio-rate, a control-rate and a constant input where it has calc functions for them, and as a
control-rate unit.  The whole set is run again at other block sizes and sample rates.
"""

import math

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from extra_ugens import SetBuf
from nrt import case, check_graph, msg
from sources import asine, ksine, ksrc, seeded, src


@ugen(ar=True, kr=True)
class IndexL(UGen):
    buffer_id = param()
    source = param(0.0)


@ugen(ar=True, kr=True)
class FoldIndex(UGen):
    buffer_id = param()
    source = param(0.0)


@ugen(ar=True, kr=True)
class IndexInBetween(UGen):
    buffer_id = param()
    source = param(0.0)


@ugen(ar=True, kr=True)
class DetectIndex(UGen):
    buffer_id = param()
    source = param(0.0)


@ugen(ar=True, kr=True)
class Shaper(UGen):
    buffer_id = param()
    source = param(0.0)


@ugen(ar=True, kr=True)
class VarLag(UGen):
    """The server-side unit (sclang's VarLag builds it only for linear curves)."""

    source = param(0.0)
    time = param(0.1)
    start = param(0.0)



def local_table(values):
    """A LocalBuf holding `values`."""
    buf = U.LocalBuf.ir(channel_count=1, frame_count=len(values))
    SetBuf.ir(buffer_id=buf, offset=0, count=len(values), values=list(values))
    return buf


def wavetable(harmonics, size=64):
    """One cycle of a sum of sines in wavetable format (value, slope pairs): `size` samples."""
    n = size // 2
    cyc = [sum(a * math.sin(2 * math.pi * (h + 1) * i / n) for h, a in enumerate(harmonics)) for i in range(n)]
    out = []
    for i in range(n):
        a, b = cyc[i], cyc[(i + 1) % n]
        out += [2 * a - b, b - a]
    return out


def local_wavetables():
    """Two consecutive local buffers holding wavetables; returns the first one's number."""
    first = local_table(wavetable([1.0]))
    local_table(wavetable([0.5, 0.0, 0.8]))
    return first


# Buffer 0: eight unordered values; 1: eight rising values; 2: a major scale (7 entries);
# 3: a transfer function in wavetable format; 10-13: four wavetables of rising brightness.
VALUES = [0.1, -0.4, 0.7, 0.25, -0.9, 0.5, 0.33, -0.2]
RISING = [-1.0, -0.5, -0.2, 0.0, 0.1, 0.4, 0.8, 1.0]
SCALE = [0.0, 2.0, 4.0, 5.0, 7.0, 9.0, 11.0]
TABLE = (msg("/b_alloc", 0, 8), msg("/b_setn", 0, 0, 8, *VALUES))
RISING_TABLE = (msg("/b_alloc", 1, 8), msg("/b_setn", 1, 0, 8, *RISING))
SCALE_TABLE = (msg("/b_alloc", 2, 7), msg("/b_setn", 2, 0, 7, *SCALE))
TRANSFER = (msg("/b_alloc", 3, 1024), msg("/b_gen", 3, "cheby", 7, 1.0, 0.5, 0.25, -0.3))
WAVETABLES = tuple(
    m
    for k, amps in enumerate([[1.0], [1.0, 0.5], [1.0, 0.0, 0.6, 0.3], [0.2, 0.5, 0.3, 0.8, 0.4, 0.6]])
    for m in (msg("/b_alloc", 10 + k, 1024), msg("/b_gen", 10 + k, "sine1", 7, *amps))
)
ALL = TABLE + RISING_TABLE + SCALE_TABLE + TRANSFER


def on(*setups, **kw):
    return dict(setup=tuple(m for s in setups for m in s), **kw)


def aindex(lo, hi, freq=37.0):
    """An audio-rate saw from lo to hi."""
    return U.LFSaw.ar(frequency=freq) * ((hi - lo) / 2) + (hi + lo) / 2


def kindex(lo, hi, freq=7.0):
    return U.LFSaw.kr(frequency=freq) * ((hi - lo) / 2) + (hi + lo) / 2


def lookups(name, cls):
    """Cases for a stateless lookup: audio, control and constant index, and a control-rate unit."""
    return [
        case(f"{name}.ar-aindex", lambda b: cls.ar(buffer_id=0, source=aindex(-3.5, 11.5)), **on(TABLE)),
        case(f"{name}.ar-kindex", lambda b: cls.ar(buffer_id=0, source=kindex(-3.5, 11.5)), **on(TABLE)),
        case(f"{name}.ar-const", lambda b: cls.ar(buffer_id=0, source=5.6) + src() * 0.1, **on(TABLE)),
        case(f"{name}.ar-negative-const", lambda b: cls.ar(buffer_id=0, source=-2.3) + src() * 0.1, **on(TABLE)),
        case(f"{name}.kr", lambda b: cls.kr(buffer_id=0, source=kindex(-3.5, 11.5)), **on(TABLE)),
        case(f"{name}.kr-aindex", lambda b: cls.kr(buffer_id=0, source=aindex(-3.5, 11.5, 3.0)), **on(TABLE)),
    ]


def stepped():
    """A control-rate staircase: two pulse waves."""
    return U.LFPulse.kr(frequency=7.0) * 0.5 + U.LFPulse.kr(frequency=3.0, width=0.3) * 0.3


def astepped():
    return U.LFPulse.ar(frequency=9.0) * 0.5 + U.LFPulse.ar(frequency=4.0, width=0.3) * 0.3


def exact_values(rate, offset):
    """Values read from table 0 (found by DetectIndex), nudged off the table by `offset` on
    alternate stretches (not found)."""
    if rate == "ar":
        return U.Index.ar(buffer_id=0, source=aindex(0.0, 8.0, 23.0)) + U.LFPulse.ar(frequency=5.0) * offset
    return U.Index.kr(buffer_id=0, source=kindex(0.0, 8.0, 9.0)) + U.LFPulse.kr(frequency=5.0) * offset


def wobble():
    """A buffer position swinging across the four wavetables, never reaching the last one."""
    return ksine(11.5, 1.4, 0.7)


def jumps():
    """A buffer position jumping by whole tables between blocks, up and down."""
    return U.LFPulse.kr(frequency=11.0) * 2.5 + 10.2 + U.LFSaw.kr(frequency=3.0) * 0.1


kcoef = ksine
CASES = (
    lookups("Index", U.Index)
    + lookups("IndexL", IndexL)
    + lookups("WrapIndex", U.WrapIndex)
    + lookups("FoldIndex", FoldIndex)
    + [
        case("IndexL.ar-fractions-of-one-cell", lambda b: IndexL.ar(buffer_id=0, source=aindex(2.0, 3.0, 100.0)), **on(TABLE)),
        case("Index.ar-buffer-past-the-last-is-buffer-0", lambda b: U.Index.ar(buffer_id=5000, source=aindex(0.0, 8.0)), **on(TABLE)),
        case("Index.ar-unallocated-buffer", lambda b: U.Index.ar(buffer_id=7, source=aindex(0.0, 8.0)) + src() * 0.1, **on(TABLE)),
        case("WrapIndex.ar-other-buffers", lambda b: [U.WrapIndex.ar(buffer_id=k, source=aindex(-9.0, 17.0)) for k in range(3)], **on(ALL)),
        case("Index.ar-local-buffer", lambda b: U.Index.ar(buffer_id=local_table(VALUES), source=aindex(-3.5, 11.5))),
        case("IndexL.kr-local-buffer", lambda b: IndexL.kr(buffer_id=local_table(VALUES), source=kindex(-3.5, 11.5))),
        # -- searches
        case("IndexInBetween.ar", lambda b: IndexInBetween.ar(buffer_id=1, source=src() * 1.2), **on(RISING_TABLE)),
        case("IndexInBetween.ar-kin", lambda b: IndexInBetween.ar(buffer_id=1, source=ksrc() * 1.5), **on(RISING_TABLE)),
        case("IndexInBetween.ar-const", lambda b: IndexInBetween.ar(buffer_id=1, source=0.3) + src() * 0.1, **on(RISING_TABLE)),
        case("IndexInBetween.kr", lambda b: IndexInBetween.kr(buffer_id=1, source=ksine(0.0, 1.3, 2.0)), **on(RISING_TABLE)),
        case("IndexInBetween.ar-unordered", lambda b: IndexInBetween.ar(buffer_id=0, source=src()), **on(TABLE)),
        case("DetectIndex.ar", lambda b: DetectIndex.ar(buffer_id=0, source=exact_values("ar", 0.01)), **on(TABLE)),
        case("DetectIndex.ar-kin", lambda b: DetectIndex.ar(buffer_id=0, source=exact_values("kr", 0.01)), **on(TABLE)),
        case("DetectIndex.ar-const", lambda b: DetectIndex.ar(buffer_id=0, source=0.25) + src() * 0.1, **on(TABLE)),
        case("DetectIndex.kr", lambda b: DetectIndex.kr(buffer_id=0, source=exact_values("kr", 0.02)), **on(TABLE)),
        case(
            "DetectIndex.ar-kin-table-changes",
            lambda b: DetectIndex.ar(buffer_id=0, source=exact_values("kr", 0.01)),
            **on(TABLE, events=[(0.1, [msg("/b_set", 0, 2, 0.95, 5, -0.4)])]),
        ),
        # -- scales
        case("DegreeToKey.ar", lambda b: U.DegreeToKey.ar(buffer_id=2, source=aindex(-6.0, 18.0), octave=12.0), **on(SCALE_TABLE)),
        case("DegreeToKey.ar-kin", lambda b: U.DegreeToKey.ar(buffer_id=2, source=kindex(-6.0, 18.0), octave=12.0), **on(SCALE_TABLE)),
        case("DegreeToKey.ar-octave-7.5", lambda b: U.DegreeToKey.ar(buffer_id=2, source=aindex(-5.5, 25.0), octave=7.5), **on(SCALE_TABLE)),
        case("DegreeToKey.ar-const", lambda b: U.DegreeToKey.ar(buffer_id=2, source=-3.2, octave=12.0) + src() * 0.1, **on(SCALE_TABLE)),
        case("DegreeToKey.ar-local-buffer", lambda b: U.DegreeToKey.ar(buffer_id=local_table(SCALE), source=aindex(-6.0, 18.0), octave=12.0)),
        case("DegreeToKey.kr", lambda b: U.DegreeToKey.kr(buffer_id=2, source=kindex(-6.0, 18.0), octave=12.0), **on(SCALE_TABLE)),
        case("DegreeToKey.kr-octave-7.5", lambda b: U.DegreeToKey.kr(buffer_id=2, source=kindex(-5.5, 25.0), octave=7.5), **on(SCALE_TABLE)),
        # -- wave shaping
        case("Shaper.ar", lambda b: Shaper.ar(buffer_id=3, source=U.SinOsc.ar(frequency=220.0) * 0.9), **on(TRANSFER)),
        case("Shaper.ar-overdriven", lambda b: Shaper.ar(buffer_id=3, source=src() * 1.7), **on(TRANSFER)),
        case("Shaper.ar-kin", lambda b: Shaper.ar(buffer_id=3, source=ksine(0.0, 0.004, 3.0)), **on(TRANSFER)),
        case("Shaper.ar-kin-steps", lambda b: Shaper.ar(buffer_id=3, source=stepped() - 0.4), **on(TRANSFER)),
        case("Shaper.ar-const", lambda b: Shaper.ar(buffer_id=3, source=0.37) + src() * 0.1, **on(TRANSFER)),
        case("Shaper.kr", lambda b: Shaper.kr(buffer_id=3, source=ksine(0.0, 0.95, 3.0)), **on(TRANSFER)),
        case("Shaper.ar-small-table", lambda b: Shaper.ar(buffer_id=0, source=src()), **on(TABLE)),
        # -- wavetable crossfades
        case("VOsc.ar-const", lambda b: U.VOsc.ar(buffer_id=11.3, frequency=220.0, phase=0.0), **on(WAVETABLES)),
        case("VOsc.ar-kpos", lambda b: U.VOsc.ar(buffer_id=wobble(), frequency=330.0, phase=0.5), **on(WAVETABLES)),
        case("VOsc.ar-jumps", lambda b: U.VOsc.ar(buffer_id=jumps(), frequency=150.0), **on(WAVETABLES)),
        case("VOsc.ar-kfreq-kphase", lambda b: U.VOsc.ar(buffer_id=wobble(), frequency=ksine(300.0, 200.0, 2.0), phase=ksine(0.0, 3.0, 1.5)), **on(WAVETABLES)),
        case("VOsc.ar-aphase", lambda b: U.VOsc.ar(buffer_id=wobble(), frequency=200.0, phase=asine(0.0, 2.0, 50.0)), **on(WAVETABLES)),
        case("VOsc.ar-aphase-jumps", lambda b: U.VOsc.ar(buffer_id=jumps(), frequency=97.0, phase=asine(1.0, 4.0, 30.0)), **on(WAVETABLES)),
        case("VOsc.ar-falling", lambda b: U.VOsc.ar(buffer_id=U.Line.kr(start=12.9, stop=10.0, duration=0.25), frequency=440.0), **on(WAVETABLES)),
        case("VOsc.kr", lambda b: U.VOsc.kr(buffer_id=wobble(), frequency=30.0, phase=0.3), **on(WAVETABLES)),
        case("VOsc.ar-missing-table", lambda b: U.VOsc.ar(buffer_id=ksine(12.0, 1.9, 3.0), frequency=220.0) + src() * 0.1, **on(WAVETABLES[:6])),
        case("VOsc.ar-local-buffers", lambda b: U.VOsc.ar(buffer_id=local_wavetables() + ksine(0.5, 0.45, 2.0), frequency=220.0)),
        case("VOsc3.ar-local-buffers", lambda b: U.VOsc3.ar(buffer_id=local_wavetables() + ksine(0.5, 0.45, 2.0), freq_1=110.0, freq_2=220.5, freq_3=331.0)),
        case("VOsc3.ar-const", lambda b: U.VOsc3.ar(buffer_id=10.6, freq_1=110.0, freq_2=220.5, freq_3=331.0), **on(WAVETABLES)),
        case("VOsc3.ar-kpos", lambda b: U.VOsc3.ar(buffer_id=wobble(), freq_1=ksine(110.0, 20.0, 2.0), freq_2=165.0, freq_3=221.0), **on(WAVETABLES)),
        case("VOsc3.ar-jumps", lambda b: U.VOsc3.ar(buffer_id=jumps(), freq_1=100.0, freq_2=150.0, freq_3=200.5), **on(WAVETABLES)),
        case("VOsc3.ar-falling", lambda b: U.VOsc3.ar(buffer_id=U.Line.kr(start=12.9, stop=10.0, duration=0.25), freq_1=440.0, freq_2=441.0, freq_3=442.0), **on(WAVETABLES)),
        case("VOsc3.kr", lambda b: U.VOsc3.kr(buffer_id=wobble(), freq_1=10.0, freq_2=21.0, freq_3=33.0), **on(WAVETABLES)),
        # -- lags with rise and fall times
        case("Lag2UD.ar", lambda b: U.Lag2UD.ar(source=src(), lag_time_up=0.002, lag_time_down=0.01)),
        case("Lag2UD.ar-zero-times", lambda b: U.Lag2UD.ar(source=src(), lag_time_up=0.0, lag_time_down=0.0)),
        case("Lag2UD.ar-ktimes", lambda b: U.Lag2UD.ar(source=src(), lag_time_up=ksine(0.003, 0.002, 3.0), lag_time_down=ksine(0.02, 0.01, 2.0))),
        case("Lag2UD.kr", lambda b: U.Lag2UD.kr(source=ksrc(), lag_time_up=0.01, lag_time_down=0.05)),
        case("Lag3UD.ar", lambda b: U.Lag3UD.ar(source=src(), lag_time_up=0.002, lag_time_down=0.01)),
        case("Lag3UD.ar-ktimes", lambda b: U.Lag3UD.ar(source=src(), lag_time_up=ksine(0.003, 0.002, 3.0), lag_time_down=ksine(0.02, 0.01, 2.0))),
        case("Lag3UD.ar-zero-times", lambda b: U.Lag3UD.ar(source=src(), lag_time_up=0.0, lag_time_down=0.0)),
        case("Lag3UD.kr", lambda b: U.Lag3UD.kr(source=ksrc(), lag_time_up=0.01, lag_time_down=0.05)),
        # -- linear lag
        case("VarLag.ar", lambda b: VarLag.ar(source=stepped(), time=0.02, start=0.0)),
        case("VarLag.ar-start", lambda b: VarLag.ar(source=stepped(), time=0.031, start=-1.0)),
        case("VarLag.ar-ktime", lambda b: VarLag.ar(source=stepped(), time=ksine(0.04, 0.03, 5.0), start=0.2)),
        case("VarLag.ar-ain", lambda b: VarLag.ar(source=astepped(), time=0.013, start=0.0)),
        case("VarLag.ar-block-time", lambda b: VarLag.ar(source=stepped(), time=64 / 48000 * 3, start=0.0)),
        case("VarLag.kr", lambda b: VarLag.kr(source=stepped(), time=0.03, start=0.5)),
        case("VarLag.kr-ktime", lambda b: VarLag.kr(source=stepped(), time=ksine(0.04, 0.03, 5.0), start=0.0)),
        # -- first-order section
        case("FOS.ar-const", lambda b: U.FOS.ar(source=src(), a_0=0.2, a_1=0.1, b_1=0.7)),
        case("FOS.ar-kcoefs", lambda b: U.FOS.ar(source=src(), a_0=kcoef(0.3, 0.2, 2.0), a_1=kcoef(0.0, 0.2, 3.0), b_1=kcoef(0.5, 0.4, 1.0))),
        case("FOS.ar-acoefs", lambda b: U.FOS.ar(source=src(), a_0=asine(0.3, 0.2, 20.0), a_1=asine(0.0, 0.2, 30.0), b_1=asine(0.5, 0.4, 10.0))),
        case("FOS.ar-mixed-coefs", lambda b: U.FOS.ar(source=src(), a_0=asine(0.3, 0.2, 20.0), a_1=kcoef(0.0, 0.2, 3.0), b_1=0.6)),
        case("FOS.kr", lambda b: U.FOS.kr(source=ksrc(), a_0=0.5, a_1=kcoef(0.2, 0.1, 2.0), b_1=0.4)),
        # -- allpass
        case("APF.ar", lambda b: U.APF.ar(source=src(), frequency=1200.0, radius=0.8)),
        case("APF.ar-kmod", lambda b: U.APF.ar(source=src(), frequency=ksine(1200.0, 900.0, 3.0), radius=ksine(0.7, 0.25, 2.0))),
        case("APF.ar-afreq", lambda b: U.APF.ar(source=src(), frequency=asine(1200.0, 900.0, 5.0), radius=0.9)),
        case("APF.kr", lambda b: U.APF.kr(source=ksrc(), frequency=30.0, radius=0.6)),
    ]
)

SEEDED = [
    case("TWindex.ar-ktrig-normalized", lambda b: U.TWindex.ar(trigger=U.Impulse.kr(frequency=40.0), normalize=1, array=[1.0, 2.0, 3.0, 0.5])),
    case("TWindex.ar-atrig", lambda b: U.TWindex.ar(trigger=U.Impulse.ar(frequency=300.0), normalize=1, array=[0.1, 0.6, 0.3])),
    case("TWindex.ar-atrig-unnormalized", lambda b: U.TWindex.ar(trigger=U.Impulse.ar(frequency=450.0), normalize=0, array=[0.2, 0.2, 0.3])),
    case("TWindex.ar-kweights", lambda b: U.TWindex.ar(trigger=U.Impulse.ar(frequency=200.0), normalize=1, array=[ksine(1.0, 0.9, 3.0), 0.5, ksine(0.5, 0.4, 1.0)])),
    case("TWindex.kr", lambda b: U.TWindex.kr(trigger=U.Impulse.kr(frequency=60.0), normalize=1, array=[1.0, 1.0, 2.0, 4.0])),
    case("TWindex.kr-atrig", lambda b: U.TWindex.kr(trigger=U.Impulse.ar(frequency=900.0), normalize=1, array=[3.0, 1.0, 2.0])),
    case("TWindex.kr-first-trigger", lambda b: U.TWindex.kr(trigger=1.0 - U.Impulse.kr(frequency=0.0), normalize=0, array=[0.5, 0.5])),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_table_units_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


@pytest.mark.parametrize("fn,kw", SEEDED)
def test_twindex_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)


# The same cases with one-sample blocks (every unit's one-sample path), blocks that are not a
# power of two (slopes that float cannot hold exactly, filter loops with remainders), and other
# sample rates.
VARIANTS = {"z1": (["-z", "1"], 48000), "z10": (["-z", "10"], 48000), "sr44100": ([], 44100), "sr96000-z32": (["-z", "32"], 96000)}
ALL_CASES = [(p.id, *p.values, False) for p in CASES] + [(p.id, *p.values, True) for p in SEEDED]


@pytest.mark.parametrize(
    "fn,kw,reseed,options,sr",
    [
        pytest.param(fn, kw, reseed, options, sr, id=f"{case_id}@{tag}")
        for tag, (options, sr) in VARIANTS.items()
        for case_id, fn, kw, reseed in ALL_CASES
    ],
)
def test_table_units_match_scsynth_at_other_block_sizes_and_rates(tmp_path, fn, kw, reseed, options, sr):
    check_graph(tmp_path, seeded(fn) if reseed else fn, options=options, sr=sr, **kw)
