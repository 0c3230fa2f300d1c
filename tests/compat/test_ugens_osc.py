"""Oscillators: deterministic, compared sample by sample against scsynth (SNR ≥ 100 dB)."""

import pytest
from supriya import ugens as U

import extra_ugens as X
from nrt import PLAIN_TABLE_SETUP, WAVETABLE_SETUP, case, check_graph


def kmod(center=440.0, depth=200.0, rate=3.0):
    return U.SinOsc.kr(frequency=rate) * depth + center


def amod(center=440.0, depth=200.0, rate=7.0):
    return U.SinOsc.ar(frequency=rate) * depth + center


CASES = [
    case("SinOsc.ar-const", lambda b: U.SinOsc.ar(frequency=440.0, phase=0.3)),
    case("SinOsc.ar-kfreq", lambda b: U.SinOsc.ar(frequency=kmod())),
    case("SinOsc.ar-afreq", lambda b: U.SinOsc.ar(frequency=amod())),
    case("SinOsc.ar-aphase", lambda b: U.SinOsc.ar(frequency=220.0, phase=U.SinOsc.ar(frequency=110.0) * 3.0)),
    case("SinOsc.ar-afreq-aphase", lambda b: U.SinOsc.ar(frequency=amod(), phase=U.SinOsc.ar(frequency=55.0))),
    case("SinOsc.kr", lambda b: U.SinOsc.kr(frequency=kmod(10.0, 5.0, 1.0))),
    case("SinOsc.ar-negative-freq", lambda b: U.SinOsc.ar(frequency=-330.0)),
    case("FSinOsc.ar", lambda b: U.FSinOsc.ar(frequency=440.0, initial_phase=0.2)),
    case("FSinOsc.ar-kfreq", lambda b: U.FSinOsc.ar(frequency=kmod())),
    case("FSinOsc.kr", lambda b: U.FSinOsc.kr(frequency=7.0)),
    case("Osc.ar-const", lambda b: X.Osc.ar(buffer_id=0, frequency=440.0, phase=0.5), setup=WAVETABLE_SETUP),
    case("Osc.ar-afreq", lambda b: X.Osc.ar(buffer_id=0, frequency=amod()), setup=WAVETABLE_SETUP),
    case("Osc.ar-kfreq-aphase", lambda b: X.Osc.ar(buffer_id=0, frequency=kmod(), phase=U.SinOsc.ar(frequency=50.0)), setup=WAVETABLE_SETUP),
    case("Osc.ar-afreq-aphase", lambda b: X.Osc.ar(buffer_id=0, frequency=amod(), phase=U.SinOsc.ar(frequency=50.0)), setup=WAVETABLE_SETUP),
    case("Osc.kr", lambda b: X.Osc.kr(buffer_id=0, frequency=kmod(5.0, 3.0, 1.0)), setup=WAVETABLE_SETUP),
    case("COsc.ar", lambda b: U.COsc.ar(buffer_id=0, frequency=220.0, beats=0.7), setup=WAVETABLE_SETUP),
    case("COsc.ar-kfreq", lambda b: U.COsc.ar(buffer_id=0, frequency=kmod(), beats=2.0), setup=WAVETABLE_SETUP),
    case("COsc.kr", lambda b: U.COsc.kr(buffer_id=0, frequency=3.0, beats=0.5), setup=WAVETABLE_SETUP),
    case("OscN.ar-const", lambda b: X.OscN.ar(buffer_id=0, frequency=440.0), setup=PLAIN_TABLE_SETUP),
    case("OscN.ar-afreq-aphase", lambda b: X.OscN.ar(buffer_id=0, frequency=amod(), phase=U.SinOsc.ar(frequency=60.0)), setup=PLAIN_TABLE_SETUP),
    case("OscN.ar-kfreq", lambda b: X.OscN.ar(buffer_id=0, frequency=kmod()), setup=PLAIN_TABLE_SETUP),
    case("OscN.kr", lambda b: X.OscN.kr(buffer_id=0, frequency=4.0), setup=PLAIN_TABLE_SETUP),
    case("Saw.ar", lambda b: U.Saw.ar(frequency=440.0)),
    case("Saw.ar-kfreq", lambda b: U.Saw.ar(frequency=kmod())),
    case("Saw.kr", lambda b: U.Saw.kr(frequency=30.0)),
    case("Pulse.ar", lambda b: U.Pulse.ar(frequency=440.0, width=0.3)),
    case("Pulse.ar-kfreq-kwidth", lambda b: U.Pulse.ar(frequency=kmod(), width=U.SinOsc.kr(frequency=2.0) * 0.4 + 0.5)),
    case("Pulse.kr", lambda b: U.Pulse.kr(frequency=20.0, width=0.25)),
    case("Blip.ar", lambda b: U.Blip.ar(frequency=220.0, harmonic_count=20)),
    case("Blip.ar-kfreq-knumharm", lambda b: U.Blip.ar(frequency=kmod(), harmonic_count=U.LFSaw.kr(frequency=3.0) * 20 + 22)),
    case("Blip.kr", lambda b: U.Blip.kr(frequency=30.0, harmonic_count=5)),
    case("LFSaw.ar", lambda b: U.LFSaw.ar(frequency=440.0, initial_phase=0.5)),
    case("LFSaw.ar-afreq", lambda b: U.LFSaw.ar(frequency=amod())),
    case("LFSaw.kr", lambda b: U.LFSaw.kr(frequency=10.0)),
    case("LFPulse.ar", lambda b: U.LFPulse.ar(frequency=440.0, initial_phase=0.1, width=0.3)),
    case("LFPulse.ar-afreq-kwidth", lambda b: U.LFPulse.ar(frequency=amod(), width=U.SinOsc.kr(frequency=2.0) * 0.4 + 0.5)),
    case("LFPulse.kr", lambda b: U.LFPulse.kr(frequency=10.0, width=0.25)),
    case("LFTri.ar", lambda b: U.LFTri.ar(frequency=440.0, initial_phase=1.0)),
    case("LFTri.ar-afreq", lambda b: U.LFTri.ar(frequency=amod())),
    case("LFTri.kr", lambda b: U.LFTri.kr(frequency=10.0)),
    case("LFPar.ar", lambda b: U.LFPar.ar(frequency=440.0, initial_phase=0.5)),
    case("LFPar.ar-afreq", lambda b: U.LFPar.ar(frequency=amod())),
    case("LFPar.kr", lambda b: U.LFPar.kr(frequency=10.0)),
    case("LFCub.ar", lambda b: U.LFCub.ar(frequency=440.0, initial_phase=0.5)),
    case("LFCub.ar-afreq", lambda b: U.LFCub.ar(frequency=amod())),
    case("LFCub.kr", lambda b: U.LFCub.kr(frequency=10.0)),
    case("VarSaw.ar", lambda b: U.VarSaw.ar(frequency=440.0, initial_phase=0.2, width=0.3)),
    case("VarSaw.ar-afreq-kwidth", lambda b: U.VarSaw.ar(frequency=amod(), width=U.SinOsc.kr(frequency=2.0) * 0.45 + 0.5)),
    case("VarSaw.kr", lambda b: U.VarSaw.kr(frequency=10.0, width=0.2)),
    case("SyncSaw.ar", lambda b: U.SyncSaw.ar(sync_frequency=200.0, saw_frequency=530.0)),
    case("SyncSaw.ar-amod", lambda b: U.SyncSaw.ar(sync_frequency=amod(200.0, 50.0), saw_frequency=amod(700.0, 300.0, 3.0))),
    case("SyncSaw.kr", lambda b: U.SyncSaw.kr(sync_frequency=5.0, saw_frequency=13.0)),
    case("Impulse.ar", lambda b: U.Impulse.ar(frequency=441.0, phase=0.25)),
    case("Impulse.ar-afreq", lambda b: U.Impulse.ar(frequency=amod(300.0, 250.0))),
    case("Impulse.ar-kfreq", lambda b: U.Impulse.ar(frequency=kmod(300.0, 250.0))),
    case("Impulse.kr", lambda b: U.Impulse.kr(frequency=37.0)),
    case("Formant.ar", lambda b: X.Formant.ar(fundamental_frequency=220.0, formant_frequency=1200.0, bandwidth_frequency=600.0)),
    case("Formant.ar-kmod", lambda b: X.Formant.ar(fundamental_frequency=kmod(220.0, 80.0), formant_frequency=kmod(1500.0, 500.0, 2.0), bandwidth_frequency=800.0)),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_oscillator_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
