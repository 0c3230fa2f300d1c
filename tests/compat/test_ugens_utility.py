"""Utility units compared sample by sample with scsynth: multichannel and ambisonic panners, trigger
rate conversion, control-bus readers, bad-value checks and signal trackers, at every rate
combination their calculation functions distinguish, and at other block sizes and sample rates
(scsynth's SIMD paths run at blocks of a multiple of 16 samples)."""

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from nrt import case, check_graph, msg
from sources import asine, ksine, ksrc, src


# UGens scsynth ships that supriya does not define (class names are the server-side names).


@ugen(ar=True, kr=True, channel_count=4, fixed_channel_count=True)
class PanB(UGen):
    """supriya's PanB declares three outputs; scsynth's writes four (W, X, Y, Z)."""

    source = param()
    azimuth = param(0.0)
    elevation = param(0.0)
    gain = param(1.0)


@ugen(ar=True)
class T2A(UGen):
    source = param(0.0)
    offset = param(0.0)


@ugen(kr=True)
class T2K(UGen):
    source = param(0.0)


@ugen(ar=True, kr=True, is_input=True, is_multichannel=True)
class InTrig(UGen):
    bus = param(0.0)


@ugen(kr=True, is_input=True, is_multichannel=True)
class LagIn(UGen):
    bus = param(0.0)
    lag = param(0.1)


@ugen(ar=True, kr=True)
class LastValue(UGen):
    source = param(0.0)
    diff = param(0.01)


@ugen(ar=True, kr=True)
class ModDif(UGen):
    x = param(0.0)
    y = param(0.0)
    mod = param(1.0)


def bad_values():
    """An audio signal with NaN (log of the saw's negative half) and infinities (a pulse
    scaled past the float range) besides ordinary values."""
    return U.Saw.ar(frequency=211.0).log() + U.Pulse.ar(frequency=61.0, width=0.2) * 1e38 * 1e38


def kbad_values():
    return U.LFSaw.kr(frequency=9.0).log() + U.LFPulse.kr(frequency=4.0, width=0.2) * 1e38 * 1e38


def atrig(freq=40.0):
    return U.Impulse.ar(frequency=freq)


def ktrig(freq=20.0):
    return U.Impulse.kr(frequency=freq)


def bus_events(bus=5, channels=1):
    """/c_set writes at irregular times, some in consecutive blocks, some repeating a value."""
    times = [0.011, 0.012, 0.013, 0.05, 0.0507, 0.09, 0.1501, 0.2, 0.2013, 0.26]
    values = [0.8, -0.3, 0.3, 1.0, 1.0, -2.0, 0.5, 0.0, 0.25, 0.7]
    out = []
    for k, (t, v) in enumerate(zip(times, values)):
        args = []
        for c in range(channels):
            args += [bus + c, v * (c + 1)]
        out.append((t, [msg("/c_set", *args)]))
    return out


# Not compared: PanAz with a negative width (scsynth 3.13 then indexes its sine table before its
# start, reading unrelated memory), and audio-rate units fed control-rate signals where scsynth reads
# a whole block from a one-value wire.
PANNERS = [
    case("PanAz.ar-const", lambda b: U.PanAz.ar(source=src(), position=0.3, amplitude=0.8, width=4.0, channel_count=4)),
    case("PanAz.ar-kpos", lambda b: U.PanAz.ar(source=src(), position=ksine(0.0, 1.2, 0.7), channel_count=4)),
    case("PanAz.ar-kpos-width-orientation", lambda b: U.PanAz.ar(source=src(), position=ksine(0.2, 0.9, 1.3), width=3.0, orientation=0.0, channel_count=5)),
    case("PanAz.ar-klevel-kwidth", lambda b: U.PanAz.ar(source=src(), position=ksine(-0.5, 0.5, 2.0), amplitude=ksine(0.6, 0.3, 3.0), width=ksine(2.5, 1.0, 1.0), channel_count=6)),
    case("PanAz.ar-apos", lambda b: U.PanAz.ar(source=src(), position=U.LFSaw.ar(frequency=3.0), channel_count=4)),
    case("PanAz.ar-apos-klevel", lambda b: U.PanAz.ar(source=src(), position=asine(0.0, 1.5, 4.0), amplitude=ksine(0.5, 0.4, 2.0), width=1.5, orientation=0.25, channel_count=3)),
    case("PanAz.ar-two", lambda b: U.PanAz.ar(source=src(), position=ksine(0.0, 1.0, 1.0), channel_count=2)),
    case("PanAz.kr", lambda b: U.PanAz.kr(source=ksrc(), position=ksine(0.0, 1.0, 1.5), channel_count=4)),
    case("PanB.ar-const", lambda b: PanB.ar(source=src(), azimuth=0.3, elevation=0.2, gain=0.9)),
    case("PanB.ar-kaz-kel", lambda b: PanB.ar(source=src(), azimuth=ksine(0.0, 1.5, 0.8), elevation=ksine(0.0, 0.8, 1.3))),
    case("PanB.ar-kgain", lambda b: PanB.ar(source=src(), azimuth=-0.4, elevation=0.6, gain=ksine(0.5, 0.4, 3.0))),
    case("PanB.kr", lambda b: PanB.kr(source=ksrc(), azimuth=ksine(0.0, 1.0, 1.0), elevation=ksine(0.0, 0.5, 2.0))),
    case("PanB2.ar-const", lambda b: U.PanB2.ar(source=src(), azimuth=-0.3, gain=0.7)),
    case("PanB2.ar-kaz", lambda b: U.PanB2.ar(source=src(), azimuth=ksine(0.0, 1.5, 0.9))),
    case("PanB2.ar-kgain", lambda b: U.PanB2.ar(source=src(), azimuth=0.25, gain=ksine(0.5, 0.45, 2.5))),
    case("PanB2.kr", lambda b: U.PanB2.kr(source=ksrc(), azimuth=ksine(0.0, 1.0, 2.0))),
    case("BiPanB2.ar-const", lambda b: U.BiPanB2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), azimuth=0.4, gain=0.8)),
    case("BiPanB2.ar-kaz", lambda b: U.BiPanB2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), azimuth=ksine(0.0, 1.2, 1.1))),
    case("BiPanB2.ar-kgain", lambda b: U.BiPanB2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), azimuth=-0.3, gain=ksine(0.5, 0.3, 2.0))),
    case("BiPanB2.kr", lambda b: U.BiPanB2.kr(in_a=ksrc(), in_b=U.SinOsc.kr(frequency=2.0), azimuth=ksine(0.0, 1.0, 1.0))),
    case("DecodeB2.ar-four", lambda b: decode(U.PanB2.ar(source=src(), azimuth=ksine(0.0, 1.0, 1.0)), channel_count=4)),
    case("DecodeB2.ar-five-orient0", lambda b: decode(U.PanB2.ar(source=src(), azimuth=0.3), channel_count=5, orientation=0.0)),
    case("DecodeB2.ar-korient", lambda b: U.DecodeB2.ar(w=src(), x=U.SinOsc.ar(frequency=300.0), y=U.SinOsc.ar(frequency=170.0), orientation=ksine(0.5, 0.5, 2.0), channel_count=3)),
    case("DecodeB2.kr", lambda b: U.DecodeB2.kr(w=ksrc(), x=U.SinOsc.kr(frequency=3.0), y=U.SinOsc.kr(frequency=2.0), channel_count=4)),
    case("Rotate2.ar-const", lambda b: U.Rotate2.ar(x=src(), y=U.SinOsc.ar(frequency=200.0), position=0.3)),
    case("Rotate2.ar-kpos", lambda b: U.Rotate2.ar(x=src(), y=U.SinOsc.ar(frequency=200.0), position=U.LFSaw.kr(frequency=1.5))),
    case("Rotate2.ar-apos", lambda b: U.Rotate2.ar(x=src(), y=U.SinOsc.ar(frequency=200.0), position=U.LFSaw.ar(frequency=2.0))),
    case("Rotate2.kr", lambda b: U.Rotate2.kr(x=ksrc(), y=U.SinOsc.kr(frequency=2.0), position=ksine(0.0, 1.0, 1.0))),
]


def decode(bformat, **kw):
    """DecodeB2 of a PanB2's W, X, Y."""
    return U.DecodeB2.ar(w=bformat[0], x=bformat[1], y=bformat[2], **kw)


CONVERSION = [
    case("T2A.ar", lambda b: T2A.ar(source=ktrig())),
    # scsynth 3.13 writes T2A's impulse at any offset, past the block too (into whatever memory
    # follows), so offsets stay inside the smallest block they run at (see VARIANTS).
    case("T2A.ar-offset", lambda b: T2A.ar(source=ktrig(30.0) * 0.7, offset=5.0)),
    case("T2A.ar-koffset", lambda b: T2A.ar(source=U.LFPulse.kr(frequency=15.0, width=0.3) * ksine(1.0, 0.5, 2.0), offset=ksine(4.0, 3.5, 3.0))),
    case("T2A.ar-high-at-start", lambda b: T2A.ar(source=U.LFPulse.kr(frequency=10.0, width=0.5))),
    case("T2A.ar-rising-from-negative", lambda b: T2A.ar(source=ksine(0.0, 1.0, 7.0))),
    case("T2K.kr", lambda b: T2K.kr(source=atrig(300.0))),
    case("T2K.kr-signal", lambda b: T2K.kr(source=src())),
    case("T2K.kr-negative", lambda b: T2K.kr(source=src() - 2.0)),
    case("CheckBadValues.ar", lambda b: U.CheckBadValues.ar(source=bad_values(), post_mode=0)),
    case("CheckBadValues.ar-post", lambda b: U.CheckBadValues.ar(source=bad_values(), ugen_id=3, post_mode=2), dur=0.05),
    case("CheckBadValues.kr", lambda b: U.CheckBadValues.kr(source=kbad_values(), post_mode=0)),
    case("Sanitize.ar-const", lambda b: U.Sanitize.ar(source=bad_values(), replace=0.25)),
    case("Sanitize.ar-kreplace", lambda b: U.Sanitize.ar(source=bad_values(), replace=ksine(0.0, 1.0, 3.0))),
    case("Sanitize.ar-areplace", lambda b: U.Sanitize.ar(source=bad_values(), replace=asine(0.0, 1.0, 300.0))),
    case("Sanitize.kr", lambda b: U.Sanitize.kr(source=kbad_values(), replace=ksine(0.0, 1.0, 2.0))),
]

TRACKERS = [
    case("LastValue.ar", lambda b: LastValue.ar(source=src(), diff=0.3)),
    case("LastValue.ar-kdiff", lambda b: LastValue.ar(source=src(), diff=ksine(0.3, 0.25, 2.0))),
    case("LastValue.ar-kin", lambda b: LastValue.ar(source=ksrc(), diff=0.2)),
    case("LastValue.kr", lambda b: LastValue.kr(source=ksrc(), diff=0.1)),
    case("RunningSum.ar", lambda b: U.RunningSum.ar(source=src(), sample_count=40)),
    case("RunningSum.ar-long", lambda b: U.RunningSum.ar(source=src(), sample_count=1000)),
    case("RunningSum.ar-block", lambda b: U.RunningSum.ar(source=src(), sample_count=64)),
    case("RunningSum.ar-one", lambda b: U.RunningSum.ar(source=src(), sample_count=1)),
    case("RunningSum.kr", lambda b: U.RunningSum.kr(source=ksrc(), sample_count=10)),
    case("ZeroCrossing.ar-sine", lambda b: U.ZeroCrossing.ar(source=U.SinOsc.ar(frequency=440.0))),
    case("ZeroCrossing.ar", lambda b: U.ZeroCrossing.ar(source=src())),
    case("ZeroCrossing.ar-sweep", lambda b: U.ZeroCrossing.ar(source=U.SinOsc.ar(frequency=ksine(2000.0, 1500.0, 2.0)))),
    case("ZeroCrossing.kr", lambda b: U.ZeroCrossing.kr(source=ksine(0.0, 1.0, 37.0))),
    case("PeakFollower.ar", lambda b: U.PeakFollower.ar(source=src(), decay=0.999)),
    case("PeakFollower.ar-kdecay", lambda b: U.PeakFollower.ar(source=src(), decay=ksine(0.99, 0.009, 2.0))),
    case("PeakFollower.ar-kdecay-sign", lambda b: U.PeakFollower.ar(source=src(), decay=ksine(0.0, 0.99, 3.0))),
    case("PeakFollower.ar-kdecay-negative", lambda b: U.PeakFollower.ar(source=src(), decay=ksine(-0.5, 0.4, 2.0))),
    case("PeakFollower.ar-adecay", lambda b: U.PeakFollower.ar(source=src(), decay=asine(0.95, 0.04, 3.0))),
    case("PeakFollower.kr", lambda b: U.PeakFollower.kr(source=ksrc(), decay=ksine(0.9, 0.05, 1.0))),
    case("MostChange.ar-aa", lambda b: U.MostChange.ar(a=src(), b=asine(0.0, 0.8, 300.0))),
    case("MostChange.ar-ak", lambda b: U.MostChange.ar(a=src(), b=ksine(0.0, 1.0, 20.0))),
    case("MostChange.ar-ka", lambda b: U.MostChange.ar(a=ksine(0.0, 1.0, 20.0), b=src())),
    case("MostChange.kr", lambda b: U.MostChange.kr(a=ksrc(), b=ksine(0.0, 1.0, 5.0))),
    case("LeastChange.ar-aa", lambda b: U.LeastChange.ar(a=src(), b=asine(0.0, 0.8, 300.0))),
    case("LeastChange.ar-ak", lambda b: U.LeastChange.ar(a=src(), b=ksine(0.0, 1.0, 20.0))),
    case("LeastChange.ar-ka", lambda b: U.LeastChange.ar(a=ksine(0.0, 1.0, 20.0), b=src())),
    case("LeastChange.kr", lambda b: U.LeastChange.kr(a=ksrc(), b=ksine(0.0, 1.0, 5.0))),
    case("ModDif.ar-const", lambda b: ModDif.ar(x=src(), y=0.2, mod=0.7)),
    case("ModDif.ar-kk", lambda b: ModDif.ar(x=src(), y=ksine(0.0, 0.5, 2.0), mod=ksine(1.0, 0.5, 3.0))),
    case("ModDif.ar-ak", lambda b: ModDif.ar(x=src(), y=asine(0.0, 0.5, 200.0), mod=ksine(1.0, 0.5, 3.0))),
    case("ModDif.ar-ka", lambda b: ModDif.ar(x=src(), y=ksine(0.0, 0.5, 2.0), mod=asine(1.0, 0.5, 150.0))),
    case("ModDif.ar-aa", lambda b: ModDif.ar(x=src(), y=asine(0.0, 0.5, 200.0), mod=asine(1.0, 0.5, 150.0))),
    case("ModDif.kr", lambda b: ModDif.kr(x=ksrc(), y=ksine(0.0, 0.5, 2.0), mod=0.6)),
]

BUSES = [
    case("InTrig.kr", lambda b: InTrig.kr(bus=5), events=bus_events()),
    case("InTrig.kr-two", lambda b: InTrig.kr(bus=7, channel_count=2), events=bus_events(7, 2)),
    case("InTrig.kr-setup", lambda b: InTrig.kr(bus=5), setup=[msg("/c_set", 5, 0.9)], events=bus_events()),
    case("InTrig.kr-written-by-the-synth", lambda b: written_then_read(lambda: InTrig.kr(bus=6))),
    case("InTrig.ar", lambda b: InTrig.ar(bus=5) + 0.25, events=bus_events()),
    case("LagIn.kr", lambda b: LagIn.kr(bus=5, lag=0.05), setup=[msg("/c_set", 5, 0.4)], events=bus_events()),
    case("LagIn.kr-written-by-the-synth", lambda b: written_then_read(lambda: LagIn.kr(bus=6, lag=0.03))),
    case("LagIn.kr-no-lag", lambda b: LagIn.kr(bus=5, lag=0.0), events=bus_events()),
    case("LagIn.kr-three", lambda b: LagIn.kr(bus=4, lag=0.02, channel_count=3), events=bus_events(4, 3)),
    case("LagIn.kr-last-bus", lambda b: LagIn.kr(bus=16383, lag=0.02, channel_count=2), setup=[msg("/c_set", 16383, 0.5, 0, 0.3, 1, -0.2)], allow_silent=True),
]

def written_then_read(reader):
    """A control bus written by an Out.kr of the same synth before `reader` reads it."""
    U.Out.kr(bus=6, source=U.LFPulse.kr(frequency=9.0, width=0.3) * ksine(0.5, 0.4, 2.0))
    return reader()


ALL = PANNERS + CONVERSION + TRACKERS + BUSES


@pytest.mark.parametrize("fn,kw", ALL)
def test_utility_ugens_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


# The same cases with one-sample blocks, blocks off the SIMD size, and other rates.
VARIANTS = {"z1": (["-z", "1"], 48000), "z8": (["-z", "8"], 48000), "z48": (["-z", "48"], 48000), "sr44100": ([], 44100), "sr96000-z32": (["-z", "32"], 96000)}


@pytest.mark.parametrize(
    "fn,kw,options,sr",
    [
        pytest.param(*p.values, options, sr, id=f"{p.id}@{tag}")
        for tag, (options, sr) in VARIANTS.items()
        for p in ALL
        # one-sample blocks have no room for a T2A offset
        if not (tag == "z1" and "offset" in p.id)
    ],
)
def test_utility_ugens_match_scsynth_at_other_block_sizes_and_rates(tmp_path, fn, kw, options, sr):
    check_graph(tmp_path, fn, options=options, sr=sr, **kw)
