"""Granular units (GrainSin, GrainFM, GrainIn, GrainBuf, Warp1, TGrains, PitchShift), compared
sample by sample against scsynth.

Grains start on control- and audio-rate triggers (an Impulse fires on its first sample, so the
constructor's grain is covered too), with the built-in envelope and with envelope buffers, every
interpolation mode, and one, two and more output channels. The units that draw random numbers
(Warp1's window jitter, PitchShift) run after a RandSeed so both servers draw the same numbers.
"""

import math

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from extra_ugens import GrainSin
from nrt import case, check_graph, msg
from sources import asine, ksine, seeded, src

INF = float("inf")


# -- UGens supriya lacks (or declares with inputs scsynth does not have) ----------------------



@ugen(ar=True, is_multichannel=True)
class GrainFM(UGen):
    trigger = param(0)
    duration = param(1)
    carrier_frequency = param(440)
    modulator_frequency = param(200)
    index = param(1)
    pan = param(0)
    envelope_buffer_id = param(-1)
    maximum_overlap = param(512)


@ugen(ar=True, is_multichannel=True)
class TGrains(UGen):
    trigger = param(0)
    buffer_id = param(0)
    rate = param(1)
    center_position = param(0)
    duration = param(0.1)
    pan = param(0)
    amplitude = param(0.1)
    interpolate = param(4)


@ugen(ar=True, is_multichannel=True)
class Warp1(UGen):
    """scsynth's Warp1 takes eight inputs (supriya adds a ninth)."""

    buffer_id = param(0)
    pointer = param(0)
    frequency_scaling = param(1)
    window_size = param(0.2)
    envelope_buffer_id = param(-1)
    overlaps = param(8)
    window_rand_ratio = param(0)
    interpolation = param(1)


# -- buffers -----------------------------------------------------------------------------------

SND_FRAMES = 4096


def _sound(n):
    """A deterministic, non-periodic test signal: two detuned partials and a slow chirp."""
    out = []
    for i in range(n):
        t = i / n
        out.append(0.5 * math.sin(2 * math.pi * 37.0 * t) + 0.3 * math.sin(2 * math.pi * (5.0 + 90.0 * t) * t * 7.0))
    return out


def _setn(buf, values, chunk=1024):
    return tuple(msg("/b_setn", buf, k, len(values[k : k + chunk]), *values[k : k + chunk]) for k in range(0, len(values), chunk))


# Buffer 0: mono sound, 4096 frames.  Buffer 1: a 512-point envelope (a skewed bump).
# Buffer 2: stereo sound (the two channels differ).  Buffer 3: a 100-point triangle envelope.
SOUND = (msg("/b_alloc", 0, SND_FRAMES),) + _setn(0, _sound(SND_FRAMES))
ENV = (msg("/b_alloc", 1, 512),) + _setn(1, [math.sin(math.pi * (i / 511.0) ** 0.7) ** 2 for i in range(512)])
_stereo = [v for i, x in enumerate(_sound(SND_FRAMES)) for v in (x, 0.7 * math.cos(2 * math.pi * 11.0 * i / SND_FRAMES))]
STEREO = (msg("/b_alloc", 2, SND_FRAMES, 2),) + _setn(2, _stereo)
TRI = (msg("/b_alloc", 3, 100),) + _setn(3, [1.0 - abs(i - 49.5) / 49.5 for i in range(100)])
ALL = SOUND + ENV + STEREO + TRI


def ktrig(freq=23.0):
    return U.Impulse.kr(frequency=freq)


def atrig(freq=41.0):
    return U.Impulse.ar(frequency=freq)


def recorded_local(frames=4800):
    """A synth-local mono buffer, cleared, then recording the test source in a loop."""
    buf = U.LocalBuf.ir(channel_count=1, frame_count=frames)
    U.ClearBuf.ir(buffer_id=buf)
    U.RecordBuf.ar(buffer_id=buf, source=src(), loop=1)
    return buf


CASES = [
    # -- GrainSin
    case("GrainSin.ar-ktrig", lambda b: GrainSin.ar(trigger=ktrig(), duration=0.05, frequency=440.0)),
    case("GrainSin.ar-atrig-afreq", lambda b: GrainSin.ar(trigger=atrig(57.0), duration=0.031, frequency=asine(600.0, 300.0, 3.0))),
    case("GrainSin.ar-stereo-kpan", lambda b: GrainSin.ar(channel_count=2, trigger=atrig(), duration=0.04, frequency=330.0, pan=ksine(0.0, 1.2, 2.0))),
    case("GrainSin.ar-4ch-apan", lambda b: GrainSin.ar(channel_count=4, trigger=atrig(67.0), duration=0.02, frequency=880.0, pan=U.LFSaw.ar(frequency=3.0) * 1.5)),
    case("GrainSin.ar-3ch", lambda b: GrainSin.ar(channel_count=3, trigger=ktrig(31.0), duration=0.03, frequency=500.0, pan=ksine(0.3, 2.0, 1.5))),
    case("GrainSin.ar-envbuf", lambda b: GrainSin.ar(trigger=atrig(30.0), duration=0.045, frequency=700.0, envelope_buffer_id=1), setup=ENV),
    case("GrainSin.ar-envbuf-short", lambda b: GrainSin.ar(channel_count=2, trigger=ktrig(50.0), duration=0.0107, frequency=1234.0, pan=-0.3, envelope_buffer_id=3), setup=TRI),
    case("GrainSin.ar-max-grains", lambda b: GrainSin.ar(trigger=atrig(400.0), duration=0.05, frequency=ksine(500.0, 100.0, 2.0), maximum_overlap=4)),
    case("GrainSin.ar-tiny-dur", lambda b: GrainSin.ar(trigger=atrig(300.0), duration=0.00001, frequency=2000.0)),
    case("GrainSin.ar-demand-freq", lambda b: GrainSin.ar(channel_count=2, trigger=atrig(50.0), duration=0.02, frequency=U.Dseq.dr(sequence=[300.0, 500.0, 700.0, 1100.0], repeats=INF), pan=U.Dseq.dr(sequence=[-1.0, 0.0, 0.7], repeats=INF))),
    case("GrainSin.ar-envbuf-out-of-range", lambda b: [GrainSin.ar(trigger=atrig(30.0), duration=0.03, frequency=800.0, envelope_buffer_id=5000), GrainSin.ar(trigger=ktrig(20.0), duration=0.02, frequency=300.0)], allow_silent=True),
    case("GrainSin.ar-ktrig-aparams", lambda b: GrainSin.ar(channel_count=2, trigger=ktrig(40.0), duration=asine(0.03, 0.02, 2.0), frequency=asine(500.0, 200.0, 3.0), pan=asine(0.0, 1.0, 5.0))),
    # -- GrainFM
    case("GrainFM.ar-ktrig", lambda b: GrainFM.ar(trigger=ktrig(), duration=0.05, carrier_frequency=440.0, modulator_frequency=110.0, index=3.0)),
    case("GrainFM.ar-atrig-amod", lambda b: GrainFM.ar(trigger=atrig(), duration=0.03, carrier_frequency=asine(500.0, 200.0, 2.0), modulator_frequency=asine(200.0, 50.0, 3.0), index=ksine(2.0, 1.5, 1.0))),
    case("GrainFM.ar-stereo-envbuf", lambda b: GrainFM.ar(channel_count=2, trigger=atrig(35.0), duration=0.04, carrier_frequency=660.0, modulator_frequency=330.0, index=2.0, pan=ksine(0.0, 1.0, 3.0), envelope_buffer_id=1), setup=ENV),
    case("GrainFM.ar-5ch", lambda b: GrainFM.ar(channel_count=5, trigger=atrig(70.0), duration=0.02, carrier_frequency=900.0, modulator_frequency=45.0, index=5.0, pan=U.LFSaw.kr(frequency=2.0) * 2.0)),
    # -- GrainIn
    case("GrainIn.ar-ktrig", lambda b: U.GrainIn.ar(trigger=ktrig(), duration=0.05, source=src())),
    case("GrainIn.ar-atrig-stereo", lambda b: U.GrainIn.ar(channel_count=2, trigger=atrig(45.0), duration=0.03, source=src(), position=asine(0.0, 1.0, 2.0))),
    case("GrainIn.ar-envbuf-4ch", lambda b: U.GrainIn.ar(channel_count=4, trigger=atrig(25.0), duration=0.06, source=src(), position=ksine(0.5, 1.0, 1.0), envelope_buffer_id=1), setup=ENV),
    case("GrainIn.ar-max-grains", lambda b: U.GrainIn.ar(trigger=atrig(200.0), duration=0.04, source=src(), maximum_overlap=3)),
    # -- GrainBuf
    case("GrainBuf.ar-interp1", lambda b: U.GrainBuf.ar(trigger=ktrig(), duration=0.05, buffer_id=0, rate=1.0, position=0.2, interpolate=1), setup=SOUND),
    case("GrainBuf.ar-interp2-rate", lambda b: U.GrainBuf.ar(trigger=atrig(), duration=0.04, buffer_id=0, rate=1.37, position=asine(0.5, 0.4, 1.0), interpolate=2), setup=SOUND),
    case("GrainBuf.ar-interp4-negative-rate", lambda b: U.GrainBuf.ar(trigger=atrig(33.0), duration=0.05, buffer_id=0, rate=-0.71, position=0.05, interpolate=4), setup=SOUND),
    case("GrainBuf.ar-interp4-wraps", lambda b: U.GrainBuf.ar(trigger=ktrig(19.0), duration=0.06, buffer_id=0, rate=2.3, position=0.97, interpolate=4), setup=SOUND),
    case("GrainBuf.ar-stereo-pan", lambda b: U.GrainBuf.ar(channel_count=2, trigger=atrig(), duration=0.04, buffer_id=0, rate=ksine(1.0, 0.5, 2.0), position=U.LFSaw.kr(frequency=1.0) * 0.5 + 0.5, pan=ksine(0.0, 1.0, 3.0), interpolate=4), setup=SOUND),
    case("GrainBuf.ar-4ch-envbuf", lambda b: U.GrainBuf.ar(channel_count=4, trigger=atrig(50.0), duration=0.03, buffer_id=0, rate=0.8, position=0.3, pan=U.LFSaw.ar(frequency=2.0), envelope_buffer_id=1, interpolate=2), setup=SOUND + ENV),
    case("GrainBuf.ar-max-grains", lambda b: U.GrainBuf.ar(trigger=atrig(300.0), duration=0.05, buffer_id=0, position=ksine(0.4, 0.3, 2.0), maximum_overlap=5), setup=SOUND),
    case("GrainBuf.ar-stereo-buffer-and-mono", lambda b: U.GrainBuf.ar(trigger=atrig(40.0), duration=0.03, buffer_id=U.LFPulse.kr(frequency=9.0) * 2.0, position=0.3), setup=SOUND + STEREO),
    case("GrainBuf.ar-buffer-past-the-last-is-buffer-0", lambda b: U.GrainBuf.ar(trigger=atrig(40.0), duration=0.03, buffer_id=5000, position=0.3, interpolate=4), setup=SOUND),
    case("GrainBuf.ar-demand-pos", lambda b: U.GrainBuf.ar(channel_count=2, trigger=atrig(60.0), duration=0.02, buffer_id=0, position=U.Dseq.dr(sequence=[0.1, 0.5, 0.9, 0.3], repeats=INF), pan=U.Dseq.dr(sequence=[-0.5, 0.5], repeats=INF)), setup=SOUND),
    case("GrainBuf.ar-local-buffer", lambda b: U.GrainBuf.ar(channel_count=2, trigger=atrig(45.0), duration=0.03, buffer_id=recorded_local(), rate=0.9, position=ksine(0.3, 0.2, 2.0), pan=ksine(0.0, 0.8, 3.0))),
    # -- TGrains
    case("TGrains.ar-mono-interp4", lambda b: TGrains.ar(channel_count=1, trigger=ktrig(), buffer_id=0, rate=1.0, center_position=0.04, duration=0.05, amplitude=0.5), setup=SOUND),
    case("TGrains.ar-mono-interp1", lambda b: TGrains.ar(channel_count=1, trigger=atrig(), buffer_id=0, rate=1.3, center_position=asine(0.04, 0.03, 1.0), duration=0.04, amplitude=0.5, interpolate=1), setup=SOUND),
    case("TGrains.ar-stereo-interp2", lambda b: TGrains.ar(channel_count=2, trigger=atrig(37.0), buffer_id=0, rate=-0.8, center_position=0.05, duration=0.03, pan=ksine(0.0, 1.0, 2.0), amplitude=0.4, interpolate=2), setup=SOUND),
    case("TGrains.ar-stereo-interp1", lambda b: TGrains.ar(channel_count=2, trigger=ktrig(29.0), buffer_id=0, rate=2.0, center_position=0.07, duration=0.02, pan=0.4, amplitude=0.6, interpolate=1), setup=SOUND),
    case("TGrains.ar-4ch", lambda b: TGrains.ar(channel_count=4, trigger=atrig(60.0), buffer_id=0, rate=ksine(1.0, 0.3, 3.0), center_position=0.02, duration=0.025, pan=U.LFSaw.ar(frequency=2.0) * 2.0, amplitude=0.5), setup=SOUND),
    case("TGrains.ar-wraps", lambda b: TGrains.ar(channel_count=2, trigger=atrig(20.0), buffer_id=0, rate=1.5, center_position=0.0, duration=0.08, amplitude=0.5), setup=SOUND),
    case("TGrains.ar-max-grains", lambda b: TGrains.ar(channel_count=1, trigger=atrig(1000.0), buffer_id=0, center_position=0.03, duration=0.1, amplitude=0.2), setup=SOUND),
    case("TGrains.ar-stereo-buffer-skipped", lambda b: TGrains.ar(channel_count=1, trigger=atrig(40.0), buffer_id=U.LFPulse.kr(frequency=7.0) * 2.0, center_position=0.03, duration=0.03, amplitude=0.5), setup=SOUND + STEREO),
    case("TGrains.ar-ktrig-aparams", lambda b: TGrains.ar(channel_count=2, trigger=ktrig(33.0), buffer_id=0, rate=asine(1.0, 0.5, 2.0), center_position=asine(0.04, 0.02, 1.0), duration=0.03, pan=asine(0.0, 1.0, 3.0), amplitude=0.5), setup=SOUND),
    case("TGrains.ar-demand-rate", lambda b: TGrains.ar(channel_count=2, trigger=atrig(50.0), buffer_id=0, rate=U.Dseq.dr(sequence=[1.0, -1.0, 0.5, 2.0], repeats=INF), center_position=0.05, duration=0.02, amplitude=0.5), setup=SOUND),
    case("TGrains.ar-local-buffer", lambda b: TGrains.ar(channel_count=2, trigger=atrig(40.0), buffer_id=recorded_local(), rate=1.1, center_position=ksine(0.05, 0.02, 2.0), duration=0.02, amplitude=0.5)),
    # -- Warp1
    case("Warp1.ar-mono", lambda b: Warp1.ar(buffer_id=0, pointer=U.LFSaw.kr(frequency=2.0) * 0.5 + 0.5, frequency_scaling=1.0, window_size=0.05), setup=SOUND),
    case("Warp1.ar-interp2-apointer", lambda b: Warp1.ar(buffer_id=0, pointer=asine(0.5, 0.4, 1.0), frequency_scaling=1.3, window_size=0.03, overlaps=4, interpolation=2), setup=SOUND),
    case("Warp1.ar-interp4", lambda b: Warp1.ar(buffer_id=0, pointer=0.3, frequency_scaling=ksine(0.8, 0.3, 2.0), window_size=0.04, overlaps=3, interpolation=4), setup=SOUND),
    case("Warp1.ar-envbuf", lambda b: Warp1.ar(buffer_id=0, pointer=U.LFSaw.kr(frequency=1.0) * 0.5 + 0.5, window_size=0.05, envelope_buffer_id=1, overlaps=5, interpolation=4), setup=SOUND + ENV),
    case("Warp1.ar-stereo-buffer", lambda b: Warp1.ar(channel_count=2, buffer_id=2, pointer=U.LFSaw.kr(frequency=2.0) * 0.5 + 0.5, frequency_scaling=0.9, window_size=0.04, interpolation=4), setup=STEREO),
    case("Warp1.ar-stereo-buffer-interp1", lambda b: Warp1.ar(channel_count=2, buffer_id=2, pointer=0.4, window_size=0.03, overlaps=2, interpolation=1), setup=STEREO),
    case("Warp1.ar-random-window", seeded(lambda b: Warp1.ar(buffer_id=0, pointer=U.LFSaw.kr(frequency=1.5) * 0.5 + 0.5, window_size=0.04, window_rand_ratio=0.3, interpolation=4)), setup=SOUND),
    case("Warp1.ar-stereo-random-window", seeded(lambda b: Warp1.ar(channel_count=2, buffer_id=2, pointer=0.6, window_size=0.05, window_rand_ratio=0.5, overlaps=6, interpolation=2)), setup=STEREO),
    case("Warp1.ar-kmod-overlaps", seeded(lambda b: Warp1.ar(buffer_id=0, pointer=0.5, frequency_scaling=asine(1.0, 0.4, 3.0), window_size=ksine(0.03, 0.02, 2.0), overlaps=ksine(4.0, 2.0, 1.0), window_rand_ratio=ksine(0.2, 0.2, 3.0), interpolation=2)), setup=SOUND),
    case("Warp1.ar-local-buffer", lambda b: Warp1.ar(buffer_id=recorded_local(), pointer=U.LFSaw.kr(frequency=3.0) * 0.5 + 0.5, window_size=0.02, interpolation=4)),
    # -- PitchShift
    case("PitchShift.ar-up", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.1, pitch_ratio=1.5))),
    case("PitchShift.ar-down", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.05, pitch_ratio=0.6)), dur=0.5),
    case("PitchShift.ar-unity", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.02, pitch_ratio=1.0))),
    case("PitchShift.ar-kratio", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.04, pitch_ratio=ksine(1.0, 0.8, 2.0))), dur=0.5),
    case("PitchShift.ar-dispersion", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.05, pitch_ratio=1.2, pitch_dispersion=0.3, time_dispersion=0.02)), dur=0.5),
    case("PitchShift.ar-time-dispersion-clipped", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.01, pitch_ratio=2.5, time_dispersion=0.5))),
    case("PitchShift.ar-kwindow", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=ksine(0.05, 0.03, 3.0), pitch_ratio=0.7, time_dispersion=0.04)), dur=0.5),
    case("PitchShift.ar-tiny-window", seeded(lambda b: U.PitchShift.ar(source=src(), window_size=0.0, pitch_ratio=0.8))),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_granular_unit_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


def _variants():
    out = []
    for tag, options, sr in (("z16", ["-z", "16"], 48000), ("z1", ["-z", "1"], 48000), ("sr44100-z32", ["-z", "32"], 44100)):
        for p in CASES:
            fn, kw = p.values
            out.append(pytest.param(fn, dict(kw, options=options, sr=sr), id=f"{p.id}@{tag}"))
    return out


@pytest.mark.parametrize("fn,kw", _variants())
def test_granular_unit_matches_scsynth_at_other_block_sizes_and_rates(tmp_path, fn, kw):
    """Grains start mid-block at any block size, and their lengths follow the sample rate."""
    check_graph(tmp_path, fn, **kw)


def test_grains_keep_playing_when_their_envelope_buffer_changes(tmp_path):
    """Running grains read their envelope buffer every block: refilling it mid-grain changes
    the rest of the grain."""
    check_graph(
        tmp_path,
        lambda b: GrainSin.ar(trigger=atrig(8.0), duration=0.1, frequency=500.0, envelope_buffer_id=1),
        setup=ENV,
        events=[(0.05, [msg("/b_fill", 1, 0, 512, 0.25)])],
    )


def test_warp1_follows_a_buffer_swapped_mid_render(tmp_path):
    """Warp1 looks its buffer up every block."""
    check_graph(
        tmp_path,
        lambda b: Warp1.ar(buffer_id=b["buf"], pointer=0.5, window_size=0.04, interpolation=2),
        params=dict(buf=0.0),
        setup=SOUND + STEREO,
        events=[(0.1, [msg("/n_set", 1000, "buf", 2.0)])],
    )
