"""UGen plugins: units from Debian's sc3-plugins-server, loaded from the same `.so` files by
scsynth and by magnetar, rendered bit for bit.

magnetar loads the plugins from scsynth's plugin directory by default (its own units keep the
names they have); each case names the library it exercises. Random units run after a RandSeed,
so both servers draw the same numbers through the plugin interface's generator. Left out: units
whose output depends on memory they never initialise (Streson, NLFiltN and SmoothDecimator read
fields before setting them; scsynth does not clear unit memory, magnetar does) or on the C
library's global rand() (Disintegrator) or on a generator seeded from the clock (DFM1)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from nrt import (
    SCSYNTH,
    Score,
    assert_same,
    build,
    case,
    check_graph,
    check_score,
    magnetar_binary,
    msg,
    render_both,
)
from sources import ksine, seeded, src

PLUGINS = Path("/usr/lib/SuperCollider/plugins")
pytestmark = pytest.mark.skipif(
    not (PLUGINS / "MdaUGens.so").exists(), reason="sc3-plugins-server is not installed (scripts/setup.sh)"
)


def _unit(name, *, ar=True, kr=False, dr=False, channels=1, **params):
    """A UGen class named as the server knows it, with its inputs in the plugin's order."""
    namespace = {"__module__": __name__}
    namespace.update({key: param(value) for key, value in params.items()})
    return ugen(ar=ar, kr=kr, dr=dr, channel_count=channels, fixed_channel_count=channels > 1)(type(name, (UGen,), namespace))


# MdaUGens
MdaPiano = _unit(
    "MdaPiano", channels=2, freq=440.0, gate=1.0, vel=100.0, decay=0.8, release=0.8, hard=0.8, velhard=0.8,
    muffle=0.8, velmuff=0.8, velcurve=0.8, stereo=0.2, tune=0.5, random=0.1, stretch=0.1, sustain=0.0,
)
# JPverb, Greyhole (DEINDUGens)
JPverbRaw = _unit(
    "JPverbRaw", channels=2, in1=0.0, in2=0.0, damp=0.0, earlydiff=0.707, highband=2000.0, highx=1.0,
    lowband=500.0, lowx=1.0, mdepth=0.1, mfreq=2.0, midx=1.0, size=1.0, t60=1.0,
)
GreyholeRaw = _unit(
    "GreyholeRaw", channels=2, in1=0.0, in2=0.0, damping=0.0, delaytime=2.0, diffusion=0.5, feedback=0.9,
    moddepth=0.1, modfreq=2.0, size=1.0,
)
RMS = _unit("RMS", kr=True, input=0.0, lp_freq=10.0)
DiodeRingMod = _unit("DiodeRingMod", car=0.0, mod=0.0)
ComplexRes = _unit("ComplexRes", input=0.0, freq=100.0, decay=0.2)
# VOSIM
VOSIM = _unit("VOSIM", trig=0.1, freq=400.0, n_cycles=1.0, decay=0.9)
# DWGPlucked
DWGPlucked = _unit("DWGPlucked", freq=440.0, amp=0.5, gate=1.0, pos=0.14, c1=1.0, c3=30.0, inp=0.0, release=0.1)
# SLUGens
TwoTube = _unit("TwoTube", input=0.0, k=0.01, loss=1.0, d1length=100.0, d2length=100.0)
Brusselator = _unit("Brusselator", channels=2, reset=0.0, rate=0.01, mu=1.0, gamma=1.0, initx=0.5, inity=0.5)
DoubleWell = _unit("DoubleWell", reset=0.0, ratex=0.01, ratey=0.01, f=1.0, w=0.001, delta=1.0, initx=0.0, inity=0.0)
LPCError = _unit("LPCError", input=0.0, p=10.0)
# BhobFilt
MoogLadder = _unit("MoogLadder", input=0.0, ffreq=440.0, res=0.0)
RLPFD = _unit("RLPFD", input=0.0, ffreq=440.0, res=0.0, dist=0.0)
# DistortionUGens
Decimator = _unit("Decimator", input=0.0, rate=44100.0, bits=24.0)
SineShaper = _unit("SineShaper", input=0.0, limit=1.0)
CrossoverDistortion = _unit("CrossoverDistortion", input=0.0, amp=0.5, smooth=0.5)
# MCLDChaosUGens
Perlin3 = _unit("Perlin3", kr=True, x=0.0, y=0.0, z=0.0)
RosslerL = _unit("RosslerL", channels=3, freq=22050.0, a=0.2, b=0.2, c=5.7, h=0.05, xi=0.1, yi=0.0, zi=0.0)
# MCLDOscUGens
SawDPW = _unit("SawDPW", kr=True, freq=440.0, iphase=0.0)
# AntiAliasingOscillators
BlitB3Saw = _unit("BlitB3Saw", freq=440.0, leak=0.99)
DPW4Saw = _unit("DPW4Saw", freq=440.0)
# AY_UGen
AY = _unit(
    "AY", tonea=1777.0, toneb=1666.0, tonec=1555.0, noise=1.0, control=7.0, vola=15.0, volb=15.0, volc=15.0,
    envfreq=4.0, envstyle=1.0, chiptype=0.0,
)
# MembraneUGens
MembraneCircle = _unit("MembraneCircle", excitation=0.0, tension=0.05, loss=0.99999)
# BhobNoise
LFBrownNoise1 = _unit("LFBrownNoise1", kr=True, freq=20.0, dev=1.0, dist=0.0)
# MCLDDistortionUGens
WaveLoss = _unit("WaveLoss", input=0.0, drop=20.0, outof=40.0, mode=1.0)
Squiz = _unit("Squiz", input=0.0, pitchratio=2.0, zcperchunk=1.0, memlen=0.1)
# RMEQSuite
RMEQ = _unit("RMEQ", input=0.0, freq=440.0, rq=0.1, k=0.0)
RMShelf = _unit("RMShelf", input=0.0, freq=440.0, k=0.0)
# BhobChaos
Gbman2DN = _unit("Gbman2DN", minfreq=11025.0, maxfreq=22050.0, x0=1.2, y0=2.1)
# NCAnalysisUGens
WalshHadamard = _unit("WalshHadamard", input=0.0, which=0.0)
# StkUGens
StkBowed = _unit(
    "StkBowed", freq=220.0, bowpressure=64.0, bowposition=64.0, vibfreq=64.0, vibgain=64.0, loudness=64.0,
    gate=1.0, attackrate=1.0, decayrate=1.0,
)
# LoopBuf (a buffer)
LoopBuf = _unit(
    "LoopBuf", bufnum=0.0, rate=1.0, gate=1.0, start_pos=0.0, start_loop=0.0, end_loop=0.0, interpolation=2.0
)
# NoiseRing, BhobNoise: demand-rate patterns
DNoiseRing = _unit("DNoiseRing", ar=False, dr=True, change=0.5, chance=0.5, shift=1.0, num_bits=8.0, resetval=0.0)
Dbrown2 = _unit("Dbrown2", ar=False, dr=True, length=float("inf"), lo=0.0, hi=1.0, step=0.1, dist=0.0)


def kgate(rate=3.0):
    """A control-rate gate that opens and closes `rate` times a second."""
    return U.LFPulse.kr(frequency=rate, width=0.5)


SINE_TABLE = (msg("/b_alloc", 0, 2048), msg("/b_gen", 0, "sine1", 3, 1.0, 0.5, 0.33, 0.25))

CASES = [
    case("MdaUGens.MdaPiano", lambda b: MdaPiano.ar(freq=ksine(300.0, 100.0, 2.0), gate=kgate(), random=0.0)),
    case("JPverb.JPverbRaw", lambda b: JPverbRaw.ar(in1=src() * 0.3, in2=U.Pulse.ar(frequency=55.0) * 0.2, t60=2.0, size=0.8)),
    case("Greyhole.GreyholeRaw", lambda b: GreyholeRaw.ar(in1=src() * 0.3, in2=src() * 0.2, delaytime=0.3, feedback=0.5)),
    case("RMS.RMS", lambda b: RMS.ar(input=src(), lp_freq=20.0)),
    case("DiodeRingMod.DiodeRingMod", lambda b: DiodeRingMod.ar(car=U.SinOsc.ar(frequency=440.0), mod=src())),
    case("complexRes.ComplexRes", lambda b: ComplexRes.ar(input=src() * 0.1, freq=ksine(800.0, 300.0, 1.5), decay=0.1)),
    case("VOSIM.VOSIM", lambda b: VOSIM.ar(trig=U.Impulse.ar(frequency=100.0), freq=ksine(800.0, 200.0, 1.0), n_cycles=3.0, decay=0.8)),
    case("DWGPlucked.DWGPlucked", lambda b: DWGPlucked.ar(freq=220.0, gate=kgate(2.0), inp=U.Impulse.ar(frequency=2.0) * 0.5)),
    case("SLUGens.TwoTube", lambda b: TwoTube.ar(input=U.Impulse.ar(frequency=5.0), k=0.2, loss=0.99, d1length=60.0, d2length=90.0)),
    case("SLUGens.Brusselator", lambda b: Brusselator.ar(rate=0.05, mu=1.3)),
    case("SLUGens.DoubleWell", lambda b: DoubleWell.ar(ratex=0.05, ratey=0.05, f=0.5, w=0.05)),
    case("SLUGens.LPCError", lambda b: LPCError.ar(input=src(), p=ksine(8.0, 4.0, 1.0))),
    case("BhobFilt.MoogLadder", lambda b: MoogLadder.ar(input=src(), ffreq=ksine(1500.0, 1000.0, 2.0), res=0.5)),
    case("BhobFilt.RLPFD", lambda b: RLPFD.ar(input=src(), ffreq=ksine(1500.0, 1000.0, 2.0), res=0.5, dist=0.3)),
    case("DistortionUGens.Decimator", lambda b: Decimator.ar(input=src(), rate=ksine(8000.0, 4000.0, 1.0), bits=6.0)),
    case("DistortionUGens.SineShaper", lambda b: SineShaper.ar(input=src() * 2.0, limit=0.6)),
    case("DistortionUGens.CrossoverDistortion", lambda b: CrossoverDistortion.ar(input=src(), amp=0.4, smooth=0.3)),
    # Perlin3 reads every input as a block: all three are audio rate.
    case("MCLDChaosUGens.Perlin3", lambda b: Perlin3.ar(x=U.LFSaw.ar(frequency=3.0) * 4.0, y=U.SinOsc.ar(frequency=0.7), z=U.LFTri.ar(frequency=0.2))),
    case("MCLDChaosUGens.RosslerL", lambda b: RosslerL.ar(freq=8000.0)),
    case("MCLDOscUGens.SawDPW", lambda b: SawDPW.ar(freq=ksine(300.0, 200.0, 1.0))),
    case("AntiAliasingOscillators.BlitB3Saw", lambda b: BlitB3Saw.ar(freq=ksine(500.0, 300.0, 1.0))),
    case("AntiAliasingOscillators.DPW4Saw", lambda b: DPW4Saw.ar(freq=ksine(700.0, 300.0, 1.0))),
    case("AY_UGen.AY", lambda b: AY.ar(tonea=ksine(1200.0, 400.0, 1.0), control=3.0, envstyle=10.0)),
    case("MembraneUGens.MembraneCircle", lambda b: MembraneCircle.ar(excitation=U.Impulse.ar(frequency=4.0) * 0.5, tension=0.05, loss=0.9999)),
    case("BhobNoise.LFBrownNoise1-seeded", seeded(lambda b: LFBrownNoise1.ar(freq=200.0, dev=0.5))),
    # Mode 2 drops cycles at random, drawing from the synth's generator (the graph's RGen).
    case("MCLDDistortionUGens.WaveLoss-seeded", seeded(lambda b: WaveLoss.ar(input=src(), drop=10.0, outof=30.0, mode=2.0))),
    case("MCLDDistortionUGens.Squiz", lambda b: Squiz.ar(input=src(), pitchratio=1.5, zcperchunk=2.0)),
    case("RMEQSuite.RMEQ", lambda b: RMEQ.ar(input=src(), freq=ksine(900.0, 400.0, 1.0), rq=0.3, k=6.0)),
    case("RMEQSuite.RMShelf", lambda b: RMShelf.ar(input=src(), freq=1200.0, k=-6.0)),
    case("BhobChaos.Gbman2DN", lambda b: Gbman2DN.ar(minfreq=2000.0, maxfreq=6000.0)),
    case("NCAnalysisUGens.WalshHadamard", lambda b: WalshHadamard.ar(input=src(), which=5.0)),
    case("StkUGens.StkBowed", lambda b: StkBowed.ar(freq=220.0, gate=kgate(2.0))),
    # A native reader (Demand, Duty) pulling values from plugin patterns, and a plugin pattern
    # pulling its bounds from a native one (Dseq) through the demand input's proxy unit.
    case("NoiseRing.DNoiseRing-seeded", seeded(lambda b: U.Demand.ar(
        trigger=U.Impulse.ar(frequency=300.0), reset=0.0, source=[DNoiseRing.dr(change=0.3, chance=0.6, num_bits=12.0)]) * 0.0002)),
    case("BhobNoise.Dbrown2-seeded", seeded(lambda b: U.Duty.ar(
        duration=0.005, reset=0.0, level=Dbrown2.dr(lo=U.Dseq.dr(sequence=[-1.0, -0.5], repeats=float("inf")), hi=1.0, step=0.2, dist=0.0)))),
    case(
        "LoopBuf.LoopBuf-buffer",
        lambda b: LoopBuf.ar(bufnum=0.0, rate=ksine(1.0, 0.3, 1.0), start_loop=100.0, end_loop=1500.0),
        setup=SINE_TABLE,
    ),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_plugin_unit_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=True, **kw)


# --- an FFT chain --------------------------------------------------------------------------------
#
# FFT and IFFT come from scsynth's own FFT_UGens.so here (`--prefer-plugins FFT,IFFT`), so that
# the transforms are the ones scsynth computes (FFTW through the plugin interface's scfft
# functions); the PV and analysis units in between are sc3-plugins'.

PV_Invert = _unit("PV_Invert", ar=False, kr=True, buffer=0.0)
PV_MagMinus = _unit("PV_MagMinus", ar=False, kr=True, buffer_a=0.0, buffer_b=0.0, remove=1.0)
FFTPower = _unit("FFTPower", ar=False, kr=True, buffer=0.0, square=1.0)
FFTFlux = _unit("FFTFlux", ar=False, kr=True, buffer=0.0, normalise=1.0)
FFTCrest = _unit("FFTCrest", ar=False, kr=True, buffer=0.0, freqlo=0.0, freqhi=50000.0)

FFT_SETUP = (msg("/b_alloc", 10, 1024), msg("/b_alloc", 11, 1024), msg("/b_alloc", 12, 1024))


def fft_chain(b):
    a = U.FFT.kr(buffer_id=10, source=src())
    power = FFTPower.kr(buffer=a)
    flux = FFTFlux.kr(buffer=a)
    crest = FFTCrest.kr(buffer=a, freqlo=200.0, freqhi=8000.0)
    other = U.FFT.kr(buffer_id=11, source=U.SinOsc.ar(frequency=600.0) * 0.3)
    a = PV_MagMinus.kr(buffer_a=a, buffer_b=other, remove=0.5)
    a = PV_Invert.kr(buffer=a)
    return [U.IFFT.ar(pv_chain=a), U.K2A.ar(source=power), U.K2A.ar(source=flux), U.K2A.ar(source=crest)]


def test_fft_chain_through_plugins_matches_scsynth(tmp_path):
    # PV_Invert draws from the synth's generator for bins near silence: seeded.
    check_graph(tmp_path, seeded(fft_chain), setup=FFT_SETUP, exact=True, dut_options=["--prefer-plugins", "FFT,IFFT"])


# --- a unit command ------------------------------------------------------------------------------
#
# FeatureSave (FeatureSave.so) defines its commands in its constructor; `/u_cmd node unit createfile
# path` opens the file its unit writes each control block's features to, `closefile` finishes it.

FeatureSave = _unit("FeatureSave", ar=False, kr=True, count=0.0, trig=0.0, f1=0.0, f2=0.0)


def test_unit_command_runs_the_plugins_command(tmp_path):
    def body(b):
        feat = FeatureSave.kr(count=2.0, trig=1.0, f1=U.LFSaw.kr(frequency=3.0), f2=U.SinOsc.kr(frequency=5.0))
        U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=440.0) * 0.1)
        return feat

    sd = build("featuresave", body)
    index = next(i for i, u in enumerate(sd.ugens) if type(u).__name__ == "FeatureSave")
    score = Score([sd])
    score.add(0.0, msg("/s_new", "featuresave", 1000, 0, 0))
    score.add(0.01, msg("/u_cmd", 1000, index, "createfile", "{dir}/features.bin"))
    score.add(0.2, msg("/u_cmd", 1000, index, "closefile"))
    score.end(0.3)
    pair, _, _ = check_score(tmp_path, score, channels=1)
    ref = (pair.ref.workdir / "features.bin").read_bytes()
    dut = (pair.dut.workdir / "features.bin").read_bytes()
    assert len(ref) > 100, "scsynth wrote no features"
    assert dut == ref


# --- scsynth's own plugins, preferred over magnetar's units --------------------------------------


def _sample(module, name, every, seed=False):
    """Every `every`-th case of an existing compat list that compares samples (not the
    statistics of unseeded noise); `seed` reseeds the generator first, as the lists of random
    cases are run."""
    cases = [c for c in getattr(__import__(module), name) if "statistical" not in c.values[1]]
    picked = [c for i, c in enumerate(cases) if i % every == 0]
    if seed:
        picked = [pytest.param(seeded(c.values[0]), c.values[1], id=c.id + "-seeded") for c in picked]
    return picked


CORE_CASES = [
    *_sample("test_ugens_filters", "CASES", 8),
    *_sample("test_ugens_chaos", "CHAOS", 12),
    *_sample("test_ugens_demand", "CASES", 6),
    *_sample("test_ugens_fft", "ROUND_TRIPS", 4),
    *_sample("test_ugens_osc", "CASES", 10),
    *_sample("test_ugens_chaos", "SEEDED", 4, seed=True),
    *_sample("test_ugens_demand", "SEEDED", 6, seed=True),
]


@pytest.mark.parametrize("fn,kw", CORE_CASES)
def test_core_plugins_preferred_render_existing_cases_like_scsynth(tmp_path, fn, kw):
    """With `--prefer-plugins all` every name scsynth's own plugins define runs as that plugin
    inside magnetar (the engine keeps only its control and local units): cases of the compat
    suite render bit for bit, the FFT round trips included (FFTW through scfft)."""
    kw = {k: v for k, v in kw.items() if k not in ("min_snr_db", "exact")}
    check_graph(tmp_path, fn, exact=True, dut_options=["--prefer-plugins", "all"], **kw)


# --- a library that does not fit ----------------------------------------------------------------


def test_bad_plugins_are_refused_by_name_and_the_server_boots(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    # A supernova build (its server_type says so), under a name that does not.
    shutil.copy(PLUGINS / "AY_UGen_supernova.so", plugins / "Disguised.so")
    # A shared library without the plugin entry points.
    libm = next(p for p in (Path("/lib/x86_64-linux-gnu/libm.so.6"), Path("/usr/lib/x86_64-linux-gnu/libm.so.6")) if p.exists())
    shutil.copy(libm, plugins / "NotAPlugin.so")
    # A file that is no library at all.
    (plugins / "Broken.so").write_bytes(b"not an ELF file")
    # And one good library, whose unit must work.
    shutil.copy(PLUGINS / "AY_UGen.so", plugins / "AY_UGen.so")

    sd = build("ay", lambda b: U.Out.ar(bus=0, source=AY.ar(tonea=500.0)))
    score = Score([sd])
    score.add(0.0, msg("/s_new", "ay", 1000, 0, 0))
    score.end(0.1)
    out = tmp_path / "out.wav"
    (tmp_path / "score.osc").write_bytes(score.encode(str(tmp_path)))
    proc = subprocess.run(
        [magnetar_binary(), "-U", str(plugins), "-o", "1", "-N", str(tmp_path / "score.osc"), "_", str(out), "48000", "WAV", "float"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for name, why in (("Disguised.so", "supernova"), ("NotAPlugin.so", "api_version"), ("Broken.so", "")):
        line = next((l for l in proc.stderr.splitlines() if name in l), None)
        assert line is not None, f"no message names {name}:\n{proc.stderr}"
        assert "refused" in line and why in line, line
    import soundfile

    data, _ = soundfile.read(str(out))
    assert abs(data).max() > 0.01, "the good plugin's unit rendered silence"


# --- Print ------------------------------------------------------------------------------------


def test_print_from_plugin_units_prints_what_scsynth_prints(tmp_path):
    """scsynth's own Poll plugin prints through the interface's Print, from the audio thread's
    calc functions: magnetar queues that text and prints it off the thread, the same lines in
    the same order."""
    from nrt import graph_def, render_both
    from test_poll import poll_lines

    def body(b):
        U.Poll.kr(trigger=U.Impulse.kr(frequency=9.0), source=U.SinOsc.kr(frequency=0.7, phase=0.3) * 1234.5)
        U.Poll.ar(trigger=U.Impulse.ar(frequency=13.0), source=U.Saw.ar(frequency=3.1))
        return U.SinOsc.ar(frequency=440.0) * 0.1

    sd, _ = graph_def("plugin_polls", body)
    score = Score([sd])
    score.add(0.0, msg("/s_new", sd.effective_name, 1000, 0, 0))
    score.end(1.0)
    pair = render_both(score, tmp_path, options=["-o", "1"], dut_options=["--prefer-plugins", "Poll"])
    ref, dut = poll_lines(pair.ref.log), poll_lines(pair.dut.log)
    assert len(ref) > 20, ref
    assert dut == ref


# --- parallel groups ---------------------------------------------------------------------------


def test_plugin_synths_in_a_parallel_group_render_as_scsynth(tmp_path):
    """Synths with plugin units inside a parallel group run in order on one thread (scsynth runs
    `/p_new` as a group): with several threads the output is still scsynth's."""
    piano = build("ppiano", lambda b: U.Out.ar(bus=0, source=MdaPiano.ar(freq=b["freq"], gate=kgate(5.0), random=0.0)), freq=300.0)
    ay = build("pay", lambda b: U.Out.ar(bus=0, source=[AY.ar(tonea=b["tone"], vola=9.0)] * 2), tone=900.0)
    score = Score([piano, ay])
    score.add(
        0.0,
        msg("/p_new", 2, 0, 0),
        *[msg("/s_new", "ppiano", 1000 + i, 1, 2, "freq", 200.0 + 70 * i) for i in range(4)],
        *[msg("/s_new", "pay", 1100 + i, 1, 2, "tone", 700.0 + 90 * i) for i in range(4)],
    )
    score.end(0.3)
    check_score(tmp_path, score, channels=2, exact=True, dut_options=["-T", "2"])


def test_unit_command_before_the_first_block_fails_as_in_scsynth(tmp_path):
    """The units of a synth exist from its first block on: a `/u_cmd` in the bundle of its
    `/s_new` fails on both servers (and FeatureSave writes nothing)."""
    sd = build("featuresave_early", lambda b: FeatureSave.kr(count=1.0, trig=1.0, f1=U.LFSaw.kr(frequency=3.0)))
    index = next(i for i, u in enumerate(sd.ugens) if type(u).__name__ == "FeatureSave")
    score = Score([sd])
    score.add(0.0, msg("/s_new", "featuresave_early", 1000, 0, 0), msg("/u_cmd", 1000, index, "createfile", "{dir}/early.bin"))
    score.end(0.1)
    pair = render_both(score, tmp_path, options=["-o", "1"], allow_errors=True)
    for render in (pair.ref, pair.dut):
        assert "FAILURE IN SERVER /u_cmd" in render.log, f"{render.engine}:\n{render.log[-2000:]}"
        assert not (render.workdir / "early.bin").exists(), render.engine


# --- a plugin command's asynchronous stages ------------------------------------------------------
#
# AsyncProbe (tests/plugin_probes, built here) defines `/cmd asyncProbe base failAt [completion]`,
# whose stages note their order on control buses from `base` on; offline, scsynth runs every
# stage at once, the completion message after stage 3. A synth plays the buses.


def test_async_plugin_command_runs_its_stages_and_completion_as_scsynth(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_probes"))
    import probes

    if (why := probes.missing()) is not None:
        pytest.skip(why)
    plugin_dir = probes.build(tmp_path / "probes", "AsyncProbe")

    def body(b):
        notes = U.In.kr(bus=0, channel_count=10)
        mix = sum(n * (0.01 * (i + 1)) for i, n in enumerate(notes))
        U.Out.ar(bus=0, source=U.K2A.ar(source=mix + U.In.kr(bus=100) + U.In.kr(bus=101)))

    sd = build("asyncprobe_buses", body)
    score = Score([sd])
    score.add(0.0, msg("/cmd", "asyncProbe", 0, 0, msg("/c_set", 100, 0.25)))
    # Stage 3 fails: neither stage 4 nor the completion message run.
    score.add(0.0, msg("/cmd", "asyncProbe", 20, 3, msg("/c_set", 101, 0.5)))
    score.add(0.01, msg("/s_new", "asyncprobe_buses", 1000, 0, 0))
    score.end(0.05)
    options = ["-U", f"{plugin_dir}:{PLUGINS}"]
    _, ref, _ = check_score(tmp_path, score, channels=1, exact=True, options=options)
    # The notes weigh under 0.7 together: the first completion's 0.25 is in, the second's not.
    assert 0.9 < float(ref[-1, 0]) < 1.1


# UnitAsyncProbe (tests/plugin_probes) starts an asynchronous command in its constructor, with no
# reply address; offline, scsynth runs every stage at once and performs the completion message
# (`/c_set base 7` and a `/c_get` that answers no one). A later synth plays the buses.
UnitAsyncProbe = _unit("UnitAsyncProbe", ar=False, kr=True, base=0.0, where=0.0)


def test_a_units_own_asynchronous_command_runs_its_completion_offline_as_scsynth(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_probes"))
    import probes

    if (why := probes.missing()) is not None:
        pytest.skip(why)
    plugin_dir = probes.build(tmp_path / "probes", "UnitAsyncProbe")

    def starter(b):
        U.Out.kr(bus=1000, source=UnitAsyncProbe.kr(base=0.0, where=0.0))

    def reader(b):
        notes = U.In.kr(bus=0, channel_count=5)
        U.Out.ar(bus=0, source=U.K2A.ar(source=sum(n * (0.01 * (i + 1)) for i, n in enumerate(notes))))

    score = Score([build("unit_async_start", starter), build("unit_async_read", reader)])
    score.add(0.0, msg("/s_new", "unit_async_start", 1000, 0, 0))
    score.add(0.01, msg("/s_new", "unit_async_read", 1001, 0, 0))
    score.end(0.05)
    options = ["-U", f"{plugin_dir}:{PLUGINS}"]
    _, ref, _ = check_score(tmp_path, score, channels=1, exact=True, options=options)
    # 7 (the completion message) and the stages' order 1, 2, 3, 4, weighed 0.01 to 0.05.
    assert abs(float(ref[len(ref) // 2, 0]) - 0.47) < 1e-5


# BufGenProbe (tests/plugin_probes) defines `/b_gen buf "probeResize" frames channels value`, which
# gives the buffer a new size with BufAlloc (old samples first, then `value`). Offline, as in real
# time, a synth then plays the resized buffer.
def test_a_plugins_buffer_generator_resizes_the_buffer_offline_as_scsynth(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_probes"))
    import probes

    if (why := probes.missing()) is not None:
        pytest.skip(why)
    plugin_dir = probes.build(tmp_path / "probes", "BufGenProbe")

    def player(b):
        frames = U.BufFrames.kr(buffer_id=0)
        U.Out.ar(bus=0, source=U.PlayBuf.ar(channel_count=2, buffer_id=0, loop=1) + U.K2A.ar(source=frames * 0.001))

    score = Score([build("bufgen_player", player)])
    score.add(0.0, msg("/b_alloc", 0, 4, 1))
    score.add(0.0, msg("/b_setn", 0, 0, 4, 0.1, 0.2, 0.3, 0.4))
    score.add(0.001, msg("/b_gen", 0, "probeResize", 6, 2, -0.25))
    score.add(0.002, msg("/s_new", "bufgen_player", 1000, 0, 0))
    score.end(0.02)
    options = ["-U", f"{plugin_dir}:{PLUGINS}"]
    _, ref, _ = check_score(tmp_path, score, channels=2, exact=True, options=options)
    # Six stereo frames: the old samples interleaved, then -0.25; BufFrames says 6.
    frames = ref[len(ref) // 2 : len(ref) // 2 + 12]
    assert {round(float(v) - 0.006, 4) for v in frames[:, 0]} | {round(float(v) - 0.006, 4) for v in frames[:, 1]} == {
        0.1, 0.2, 0.3, 0.4, -0.25
    }
