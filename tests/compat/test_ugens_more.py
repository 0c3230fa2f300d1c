"""More oscillators, resonators, reverbs and noise units, compared sample by sample against
scsynth. The random ones run after a RandSeed so both servers draw the same numbers."""

import pytest
from supriya import ugens as U

from extra_ugens import FreeVerb2, Klang, SinOscFB, TIRand
from nrt import case, check_graph
from sources import asine, ksine, seeded, src


def klang(freqs, amps, phases, scale=1.0, offset=0.0):
    specs = [x for triple in zip(freqs, amps, phases) for x in triple]
    return Klang.ar(frequency_scale=scale, frequency_offset=offset, specifications=specs)


def excitation():
    """Short clicks: an impulse train through a decay, deterministic."""
    return U.Decay.ar(source=U.Impulse.ar(frequency=3.0) * 0.5, decay_time=0.01)


FREQS5 = [200.0, 671.0, 1153.0, 1723.0, 2400.0]
FREQS7 = [150.0, 310.0, 470.0, 999.0, 1500.0, 2100.0, 3333.0]

CASES = [
    case("SinOscFB.ar-const", lambda b: SinOscFB.ar(frequency=220.0, feedback=0.7)),
    case("SinOscFB.ar-zero-feedback", lambda b: SinOscFB.ar(frequency=440.0, feedback=0.0)),
    case("SinOscFB.ar-kmod", lambda b: SinOscFB.ar(frequency=ksine(300.0, 100.0, 3.0), feedback=ksine(1.0, 0.9, 2.0))),
    case("SinOscFB.ar-amod", lambda b: SinOscFB.ar(frequency=asine(300.0, 100.0, 5.0), feedback=asine(1.2, 1.0, 4.0))),
    case("SinOscFB.kr", lambda b: SinOscFB.kr(frequency=ksine(20.0, 5.0, 1.0), feedback=1.3)),
    case("Klang.ar-one", lambda b: klang([440.0], [0.5], [0.0])),
    case("Klang.ar-five-phases", lambda b: klang(FREQS5, [0.3, 0.2, 0.1, 0.1, 0.05], [0.0, 1.0, 0.0, 2.5, 0.3], 1.5, 20.0)),
    case("Klang.ar-seven", lambda b: klang(FREQS7, [0.2] * 7, [0.5] * 7)),
    case("Klang.ar-four", lambda b: klang(FREQS7[:4], [0.2, 0.3, 0.1, 0.4], [0.0] * 4, 0.5)),
    case("Klank.ar-impulse", lambda b: U.Klank.ar(source=U.Impulse.ar(frequency=4.0) * 0.1, frequencies=[800.0], decay_times=[0.5])),
    case("Klank.ar-five", lambda b: U.Klank.ar(source=excitation(), frequencies=FREQS5, amplitudes=[0.3, 0.2, 0.1, 0.1, 0.05], decay_times=[1.0, 0.8, 0.5, 0.3, 0.2])),
    case("Klank.ar-seven-scaled", lambda b: U.Klank.ar(source=src() * 0.01, frequencies=FREQS7, decay_times=[0.2, 0.4, 0.1, 0.3, 0.5, 0.05, 0.0], frequency_scale=1.3, frequency_offset=15.0, decay_scale=0.7)),
    case("Klank.ar-four", lambda b: U.Klank.ar(source=excitation(), frequencies=FREQS7[:4], decay_times=[0.3] * 4)),
    case("Klank.ar-eight", lambda b: U.Klank.ar(source=excitation(), frequencies=FREQS7 + [4000.0], decay_times=[0.2] * 8, amplitudes=[0.1] * 8)),
    case("Pluck.ar-const", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.kr(frequency=4.0), delay_time=0.005, decay_time=2.0, coefficient=0.3), dur=0.6),
    case("Pluck.ar-atrig", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.ar(frequency=5.0), maximum_delay_time=0.05, delay_time=0.01, decay_time=1.0, coefficient=0.5), dur=0.6),
    case("Pluck.ar-kdelay-kcoef", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.kr(frequency=6.0), maximum_delay_time=0.05, delay_time=ksine(0.01, 0.004, 2.0), decay_time=ksine(1.0, 0.5, 1.0), coefficient=ksine(0.3, 0.2, 3.0)), dur=0.6),
    case("Pluck.ar-atrig-kcoef", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.ar(frequency=6.0), maximum_delay_time=0.05, delay_time=ksine(0.008, 0.003, 2.0), coefficient=ksine(0.2, 0.15, 4.0)), dur=0.6),
    case("Pluck.ar-atrig-kcoef-fixed-delay", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.ar(frequency=6.0), maximum_delay_time=0.05, delay_time=0.009, coefficient=ksine(0.3, 0.25, 4.0)), dur=0.6),
    case("Pluck.ar-ktrig-kcoef-fixed-delay", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.kr(frequency=6.0), maximum_delay_time=0.05, delay_time=0.009, coefficient=ksine(0.3, 0.25, 4.0)), dur=0.6),
    case("Pluck.ar-ktrig-acoef", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.kr(frequency=6.0), maximum_delay_time=0.05, delay_time=0.007, coefficient=asine(0.4, 0.3, 5.0)), dur=0.6),
    case("Pluck.ar-atrig-acoef", lambda b: U.Pluck.ar(source=src(), trigger=U.Impulse.ar(frequency=7.0), maximum_delay_time=0.02, delay_time=ksine(0.006, 0.002, 3.0), coefficient=asine(-0.3, 0.2, 5.0)), dur=0.6),
    case("FreeVerb.ar-const", lambda b: U.FreeVerb.ar(source=excitation(), mix=0.5, room_size=0.8, damping=0.3), dur=0.6),
    case("FreeVerb.ar-kmod", lambda b: U.FreeVerb.ar(source=src() * 0.3, mix=ksine(0.5, 0.4, 2.0), room_size=ksine(0.5, 0.6, 1.0), damping=ksine(0.5, 0.6, 3.0)), dur=0.6),
    case("FreeVerb2.ar-const", lambda b: FreeVerb2.ar(source=excitation(), in2=src() * 0.2, mix=0.7, room_size=0.6, damping=0.4), dur=0.6),
    case("FreeVerb2.ar-kmod", lambda b: FreeVerb2.ar(source=src() * 0.2, in2=excitation(), mix=ksine(0.5, 0.5, 2.0), room_size=ksine(0.7, 0.3, 1.0), damping=0.2), dur=0.6),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_more_ugens_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


def atrig(freq=50.0):
    return U.Impulse.ar(frequency=freq)


def ktrig(freq=20.0):
    return U.Impulse.kr(frequency=freq)


def held_atrig():
    """An audio-rate trigger that stays high for several samples at a time."""
    return U.LFPulse.ar(frequency=90.0, width=0.3)


SEEDED = [
    case("LFDNoise0.ar", lambda b: U.LFDNoise0.ar(frequency=1500.0)),
    case("LFDNoise0.ar-kfreq", lambda b: U.LFDNoise0.ar(frequency=ksine(1000.0, 800.0, 2.0))),
    case("LFDNoise0.ar-afreq", lambda b: U.LFDNoise0.ar(frequency=asine(3000.0, 2500.0, 7.0))),
    case("LFDNoise0.kr", lambda b: U.LFDNoise0.kr(frequency=ksine(100.0, 60.0, 2.0))),
    case("LFDNoise1.ar", lambda b: U.LFDNoise1.ar(frequency=900.0)),
    case("LFDNoise1.ar-afreq", lambda b: U.LFDNoise1.ar(frequency=asine(2000.0, 1500.0, 5.0))),
    case("LFDNoise1.kr", lambda b: U.LFDNoise1.kr(frequency=70.0)),
    case("LFDNoise3.ar", lambda b: U.LFDNoise3.ar(frequency=700.0)),
    case("LFDNoise3.ar-kfreq", lambda b: U.LFDNoise3.ar(frequency=ksine(500.0, 400.0, 3.0))),
    case("LFDNoise3.ar-afreq", lambda b: U.LFDNoise3.ar(frequency=asine(2000.0, 1800.0, 4.0))),
    case("LFDNoise3.kr", lambda b: U.LFDNoise3.kr(frequency=ksine(50.0, 30.0, 1.0))),
    case("LFClipNoise.ar", lambda b: U.LFClipNoise.ar(frequency=1000.0)),
    case("LFClipNoise.ar-kfreq", lambda b: U.LFClipNoise.ar(frequency=ksine(800.0, 600.0, 2.0))),
    case("LFClipNoise.kr", lambda b: U.LFClipNoise.kr(frequency=90.0)),
    case("LFDClipNoise.ar", lambda b: U.LFDClipNoise.ar(frequency=1200.0)),
    case("LFDClipNoise.ar-afreq", lambda b: U.LFDClipNoise.ar(frequency=asine(1500.0, 1000.0, 6.0))),
    case("LFDClipNoise.kr", lambda b: U.LFDClipNoise.kr(frequency=ksine(80.0, 40.0, 2.0))),
    case("GrayNoise.ar", lambda b: U.GrayNoise.ar()),
    case("GrayNoise.kr", lambda b: U.GrayNoise.kr()),
    case("Crackle.ar", lambda b: U.Crackle.ar(chaos_parameter=1.95)),
    case("Crackle.ar-kmod", lambda b: U.Crackle.ar(chaos_parameter=ksine(1.6, 0.35, 1.0))),
    case("Crackle.kr", lambda b: U.Crackle.kr(chaos_parameter=1.5)),
    case("CoinGate.ar", lambda b: U.CoinGate.ar(probability=0.4, trigger=atrig(300.0))),
    case("CoinGate.ar-held", lambda b: U.CoinGate.ar(probability=ksine(0.5, 0.4, 2.0), trigger=held_atrig())),
    case("CoinGate.kr", lambda b: U.CoinGate.kr(probability=0.6, trigger=ktrig(40.0))),
    case("TExpRand.ar", lambda b: U.TExpRand.ar(minimum=0.1, maximum=10.0, trigger=atrig(400.0))),
    case("TExpRand.ar-held", lambda b: U.TExpRand.ar(minimum=100.0, maximum=ksine(2000.0, 1000.0, 2.0), trigger=held_atrig())),
    case("TExpRand.ar-abounds", lambda b: U.TExpRand.ar(minimum=asine(1.0, 0.5, 3.0), maximum=asine(50.0, 20.0, 5.0), trigger=held_atrig())),
    case("TExpRand.kr", lambda b: U.TExpRand.kr(minimum=0.5, maximum=ksine(5.0, 3.0, 1.0), trigger=ktrig())),
    case("TIRand.ar", lambda b: U.TIRand.ar(minimum=-5, maximum=12, trigger=atrig(400.0))),
    case("TIRand.ar-held", lambda b: TIRand.ar(minimum=0, maximum=ksine(100.0, 50.0, 2.0), trigger=held_atrig())),
    case("TIRand.ar-abounds", lambda b: TIRand.ar(minimum=asine(-10.0, 5.0, 3.0), maximum=asine(30.0, 20.0, 5.0), trigger=held_atrig())),
    case("TIRand.kr", lambda b: U.TIRand.kr(minimum=-3, maximum=3, trigger=ktrig())),
]

DETERMINISTIC = [
    case("Logistic.ar", lambda b: U.Logistic.ar(chaos_parameter=3.7, frequency=1000.0, initial_y=0.3)),
    case("Logistic.ar-every-sample", lambda b: U.Logistic.ar(chaos_parameter=3.9, frequency=48000.0, initial_y=0.4)),
    case("Logistic.ar-kmod", lambda b: U.Logistic.ar(chaos_parameter=ksine(3.6, 0.3, 1.0), frequency=ksine(3000.0, 2000.0, 2.0))),
    case("Logistic.kr", lambda b: U.Logistic.kr(chaos_parameter=3.8, frequency=200.0, initial_y=0.2)),
    case("Hasher.ar", lambda b: U.Hasher.ar(source=src())),
    case("Hasher.ar-ramp", lambda b: U.Hasher.ar(source=U.LFSaw.ar(frequency=3.0))),
    case("Hasher.kr", lambda b: U.Hasher.kr(source=ksine(0.0, 1.0, 2.0))),
]


@pytest.mark.parametrize("fn,kw", SEEDED)
def test_seeded_random_units_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)


@pytest.mark.parametrize("fn,kw", DETERMINISTIC)
def test_chaotic_and_hash_units_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


# The same cases with one-sample blocks (every unit's one-sample path), small blocks and other
# sample rates.
VARIANTS = {"z1": (["-z", "1"], 48000), "z8": (["-z", "8"], 48000), "sr44100": ([], 44100), "sr96000-z32": (["-z", "32"], 96000)}
ALL_CASES = [(p.id, *p.values, False) for p in CASES + DETERMINISTIC] + [(p.id, *p.values, True) for p in SEEDED]


@pytest.mark.parametrize(
    "fn,kw,reseed,options,sr",
    [
        pytest.param(fn, kw, reseed, options, sr, id=f"{case_id}@{tag}")
        for tag, (options, sr) in VARIANTS.items()
        for case_id, fn, kw, reseed in ALL_CASES
    ],
)
def test_more_ugens_match_scsynth_at_other_block_sizes_and_rates(tmp_path, fn, kw, reseed, options, sr):
    check_graph(tmp_path, seeded(fn) if reseed else fn, options=options, sr=sr, **kw)
