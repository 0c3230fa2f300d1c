"""Machine-listening units compared with scsynth: Pitch, which works on the signal itself and
matches sample for sample, and the units that read an FFT chain. scsynth computes its transforms
with FFTW and magnetar with its own FFT, so those agree to rounding only and are held to a
signal-to-noise ratio; their sources are chosen so that no decision (an onset, a beat, a key)
sits on a knife edge where one rounding step could flip it.
"""

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from nrt import case, check_graph
from sources import src


@ugen(kr=True)
class SpecPcile(UGen):
    """SpecPcile with its fourth input, `binout`, which supriya's class lacks."""

    pv_chain = param()
    fraction = param(0.5)
    interpolate = param(0.0)
    binout = param(0.0)


def tone():
    """Two steady sines and a slow sweep."""
    return (
        U.SinOsc.ar(frequency=440.0) * 0.4
        + U.SinOsc.ar(frequency=1234.5) * 0.2
        + U.SinOsc.ar(frequency=U.Line.kr(start=200.0, stop=5000.0, duration=0.3)) * 0.2
    )


def glide(lo=150.0, hi=900.0, dur=0.6):
    """A saw gliding in pitch: something for a pitch follower to follow."""
    return U.Saw.ar(frequency=U.XLine.kr(start=lo, stop=hi, duration=dur)) * 0.4


def fft(source, frames=1024, **kw):
    return U.FFT.kr(buffer_id=U.LocalBuf.ir(channel_count=1, frame_count=frames), source=source, **kw)


PITCH_CASES = [
    case("Pitch-defaults-glide", lambda b: U.Pitch.kr(source=glide()), dur=0.6),
    case("Pitch-saw-src", lambda b: U.Pitch.kr(source=src()), dur=0.5),
    case("Pitch-median-clarity", lambda b: U.Pitch.kr(source=glide(), median=7, clarity=1, exec_frequency=200.0),
         dur=0.6),
    case("Pitch-downsample-bins", lambda b: U.Pitch.kr(
        source=glide(100.0, 600.0), down_sample_factor=2, max_bins_per_octave=4, peak_threshold=0.7,
        min_frequency=80.0, max_frequency=2000.0), dur=0.6),
    case("Pitch-amp-gate", lambda b: U.Pitch.kr(
        source=glide() * U.LFPulse.kr(frequency=4.0), amplitude_threshold=0.05, initial_frequency=220.0), dur=0.6),
    case("Pitch-kr-input", lambda b: U.Pitch.kr(
        source=U.SinOsc.kr(frequency=U.Line.kr(start=5.0, stop=40.0, duration=1.0)), min_frequency=4.0,
        max_frequency=100.0, exec_frequency=10.0), dur=1.0),
    case("Pitch-block-64-vs-128", lambda b: U.Pitch.kr(source=glide(), exec_frequency=300.0), options=("-z", "128"),
         dur=0.6),
]


@pytest.mark.parametrize("fn,kw", PITCH_CASES)
def test_pitch_follows_like_scsynth_exactly(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=True, **kw)


# Measured 90 dB and up (the polar tables' index can flip where the transforms differ in the
# last bit; SpecFlatness of a pure tone is the lowest).
SPEC_SNR = 80.0
# The raw detection functions: phase-based ones measured 88 dB, the others 106 dB and up.
RAW_ODF_SNR = 75.0

SPECTRAL_CASES = [
    case("SpecCentroid-src", lambda b: U.SpecCentroid.kr(pv_chain=fft(src())), min_snr_db=SPEC_SNR),
    case("SpecCentroid-tone-2048", lambda b: U.SpecCentroid.kr(pv_chain=fft(tone(), 2048)), min_snr_db=SPEC_SNR),
    case("SpecFlatness-src", lambda b: U.SpecFlatness.kr(pv_chain=fft(src())), min_snr_db=SPEC_SNR),
    case("SpecFlatness-tone", lambda b: U.SpecFlatness.kr(pv_chain=fft(tone(), 512, hop=0.25)), min_snr_db=SPEC_SNR),
    case("SpecPcile-median", lambda b: U.SpecPcile.kr(pv_chain=fft(tone()), fraction=0.5), min_snr_db=SPEC_SNR),
    case("SpecPcile-interp", lambda b: U.SpecPcile.kr(pv_chain=fft(src()), fraction=0.9, interpolate=1),
         min_snr_db=SPEC_SNR),
    case("SpecPcile-binout", lambda b: SpecPcile.kr(pv_chain=fft(tone()), fraction=0.3, interpolate=1, binout=1),
         min_snr_db=SPEC_SNR),
]


@pytest.mark.parametrize("fn,kw", SPECTRAL_CASES)
def test_spectral_statistics_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=False, **kw)


def hits(rate=3.0, freq=900.0):
    """Clear, well separated attacks: short sine bursts on an impulse train."""
    return U.Decay2.ar(source=U.Impulse.ar(frequency=rate), attack_time=0.002, decay_time=0.08) * U.SinOsc.ar(
        frequency=freq) * 0.5 + U.SinOsc.ar(frequency=220.0) * 0.05


ONSET_CASES = [
    case(f"Onsets-odf{odf}", lambda b, odf=odf: U.Onsets.kr(pv_chain=fft(hits(), 512), threshold=0.3, odftype=odf),
         dur=1.2, min_snr_db=60.0)
    for odf in range(7)
] + [
    case(f"Onsets-raw-odf{odf}", lambda b, odf=odf: U.Onsets.kr(pv_chain=fft(hits(4.0, 1500.0), 512), odftype=odf,
                                                                rawodf=1), dur=0.8, min_snr_db=RAW_ODF_SNR)
    for odf in range(7)
] + [
    case("Onsets-no-whitening-median4", lambda b: U.Onsets.kr(
        pv_chain=fft(hits(5.0), 1024), threshold=0.2, odftype=1, whtype=0, medianspan=4, mingap=3), dur=1.2,
         min_snr_db=60.0),
]


@pytest.mark.parametrize("fn,kw", ONSET_CASES)
def test_onsets_fire_on_the_same_frames_as_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=False, **kw)


PERCEPTUAL_CASES = [
    case("Loudness-src", lambda b: U.Loudness.kr(pv_chain=fft(src())), min_snr_db=SPEC_SNR),
    case("Loudness-hits-masking", lambda b: U.Loudness.kr(pv_chain=fft(hits()), smask=0.5, tmask=3.0), dur=0.8,
         min_snr_db=SPEC_SNR),
    case("MFCC-src", lambda b: U.MFCC.kr(pv_chain=fft(src())), min_snr_db=SPEC_SNR),
    case("MFCC-tone-20", lambda b: U.MFCC.kr(pv_chain=fft(tone()), coeff_count=20), min_snr_db=SPEC_SNR),
]


@pytest.mark.parametrize("fn,kw", PERCEPTUAL_CASES)
def test_loudness_and_mfcc_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=False, **kw)


def chord(freqs, amp=0.15):
    """A sustained chord of sines with a few harmonics each."""
    return sum(U.SinOsc.ar(frequency=f * h) * (amp / h) for f in freqs for h in (1, 2, 3))


C_MAJOR = [261.63, 329.63, 392.0]
A_MINOR = [220.0, 261.63, 329.63, 440.0]
D_MAJOR_TO_F_MINOR = [293.66, 369.99, 440.0]


# KeyTrack's output is a key number, C major being 0: one is added so that a steady C major
# is not a silent output.
KEY_CASES = [
    case("KeyTrack-C-major", lambda b: U.KeyTrack.kr(pv_chain=fft(chord(C_MAJOR), 4096)) + 1, dur=1.5),
    case("KeyTrack-A-minor", lambda b: U.KeyTrack.kr(pv_chain=fft(chord(A_MINOR), 4096), key_decay=1.0,
                                                     chroma_leak=0.2), dur=1.5),
    case("KeyTrack-change", lambda b: U.KeyTrack.kr(
        pv_chain=fft(U.Select.ar(selector=U.Line.kr(start=0, stop=1.99, duration=2.0),
                                 sources=[chord(D_MAJOR_TO_F_MINOR), chord([349.23, 415.3, 523.25])]), 4096),
        key_decay=0.5), dur=2.0),
]


@pytest.mark.parametrize("fn,kw", KEY_CASES)
def test_keytrack_settles_on_the_same_key_as_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=True, **kw)


FEATURE_CASES = [
    case("PV_HainsworthFoote.ar", lambda b: U.PV_HainsworthFoote.ar(
        pv_chain=fft(hits(), 1024), proph=1.0, propf=0.0, threshold=0.5, waittime=0.1), dur=1.2),
    case("PV_HainsworthFoote.ar-foote", lambda b: U.PV_HainsworthFoote.ar(
        pv_chain=fft(hits(4.0, 1400.0), 512), proph=0.5, propf=1.0, threshold=0.4), dur=1.2),
    case("PV_HainsworthFoote.kr", lambda b: U.PV_HainsworthFoote.kr(
        pv_chain=fft(hits(), 1024), proph=1.0, propf=0.5, threshold=0.6, waittime=0.002), dur=1.2),
    case("PV_JensenAndersen.ar", lambda b: U.PV_JensenAndersen.ar(
        pv_chain=fft(hits(), 1024), threshold=0.05), dur=1.2),
    case("PV_JensenAndersen.ar-flux", lambda b: U.PV_JensenAndersen.ar(
        pv_chain=fft(hits(3.0, 2500.0), 512), propsc=0.0, prophfe=0.0, prophfc=0.0, propsf=1.0, threshold=0.02,
        waittime=0.2), dur=1.2),
]


@pytest.mark.parametrize("fn,kw", FEATURE_CASES)
def test_feature_detectors_fire_on_the_same_blocks_as_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=True, **kw)


def drums(bpm=120.0):
    """A steady beat: low thumps on the beat, brighter ticks off it."""
    beat = bpm / 60.0
    kick = U.Decay2.ar(source=U.Impulse.ar(frequency=beat), attack_time=0.001, decay_time=0.15) * U.SinOsc.ar(
        frequency=70.0)
    tick = U.Decay2.ar(source=U.Impulse.ar(frequency=beat, phase=0.5), attack_time=0.001, decay_time=0.04) * U.SinOsc.ar(
        frequency=3100.0) * 0.3
    return kick * 0.6 + tick


BEAT_CASES = [
    case("BeatTrack-120bpm", lambda b: U.BeatTrack.kr(pv_chain=fft(drums(), 1024)), dur=6.0),
    case("BeatTrack-100bpm-lock", lambda b: U.BeatTrack.kr(
        pv_chain=fft(drums(100.0), 1024), lock=U.LFPulse.kr(frequency=0.25, width=0.3)), dur=6.0),
]


@pytest.mark.parametrize("fn,kw", BEAT_CASES)
def test_beattrack_finds_the_same_beats_as_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=True, **kw)


def beat_features(b, bpm=120.0):
    """Writes two features of `drums` to control buses 10 and 11: loudness and onset strength."""
    chain = fft(drums(bpm), 1024)
    U.Out.kr(bus=10, source=[U.Loudness.kr(pv_chain=chain), U.Onsets.kr(pv_chain=chain, threshold=0.3, rawodf=1)])


def beattrack2(b, bpm=120.0, **kw):
    beat_features(b, bpm)
    out = U.BeatTrack2.kr(bus_index=10, feature_count=2, **kw)
    # The groove output stays 0 (scsynth never changes it); one is added so it is not silent.
    return [out[i] for i in range(5)] + [out[5] + 1]


BEAT2_CASES = [
    case("BeatTrack2-120bpm", lambda b: beattrack2(b), dur=5.0),
    case("BeatTrack2-90bpm-window3-lock", lambda b: beattrack2(
        b, 90.0, window_size=3.0, phase_accuracy=0.03, lock=U.LFPulse.kr(frequency=0.3, width=0.2)), dur=5.0),
]


@pytest.mark.parametrize("fn,kw", BEAT2_CASES)
def test_beattrack2_follows_bus_features_like_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, exact=True, **kw)
