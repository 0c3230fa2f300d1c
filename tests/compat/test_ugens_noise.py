"""Random UGens: scsynth seeds its generators from the clock, so magnetar's output is compared
with scsynth's statistics from the same run (range, mean, RMS, quantiles, spectral slope)."""

import numpy as np
import pytest
from supriya import ugens as U

from nrt import (
    BLOCK,
    Score,
    assert_stats_close,
    case,
    check_graph,
    graph_def,
    msg,
    render_both,
    seconds_of_blocks,
)

AUDIO = dict(slope_tol_db=1.5)
CONTROL = dict(slope_tol_db=2.0, decimate=BLOCK)
# pink noise wanders slowly (its lowest octaves barely move in a short render): compare the
# spread around the mean, the spread of its steps and the -3 dB/octave slope rather than range
# or mean.  At control rate a 2 s render holds only 1500 values, too few for the spread around
# the mean to settle (two honest generators differ by more than 30% about one run in twenty),
# so there the step spread and the slope carry the comparison.
PINK = dict(AUDIO, range_tol=None, mean_tol=None, quantile_tol=None, rms_rel_tol=None, std_rel_tol=0.3,
            diff_std_rel_tol=0.1, bounds=(-1.0, 1.0))
PINK_KR = dict(PINK, std_rel_tol=None, diff_std_rel_tol=0.15, slope_tol_db=2.0, decimate=BLOCK)
# LFNoise2's curves overshoot the drawn values, and how far depends on the few steepest bends
# of a render: over 1500 simulated half-second renders at 1-3 kHz the largest excursion ranged
# from 0.93 to 1.21 (median 1.02).  Two honest renders' extremes can so differ by more than a
# tenth of the span; the quantiles still check the body of the distribution.
CURVES = dict(AUDIO, range_tol=0.25)
CURVES_KR = dict(CONTROL, range_tol=0.25)
SPARSE = dict(slope_tol_db=None, quantile_tol=None, nonzero_rel_tol=0.3, rms_rel_tol=0.2)

CASES = [
    case("WhiteNoise.ar", lambda b: U.WhiteNoise.ar(), statistical=AUDIO),
    case("WhiteNoise.kr", lambda b: U.WhiteNoise.kr(), statistical=CONTROL),
    case("PinkNoise.ar", lambda b: U.PinkNoise.ar(), statistical=PINK),
    case("PinkNoise.kr", lambda b: U.PinkNoise.kr(), statistical=PINK_KR),
    case("BrownNoise.ar", lambda b: U.BrownNoise.ar(), statistical=dict(AUDIO, range_tol=1.0, mean_tol=1.0, rms_rel_tol=0.6, quantile_tol=1.0, bounds=(-1.0, 1.0))),
    case("BrownNoise.kr", lambda b: U.BrownNoise.kr(), statistical=dict(CONTROL, range_tol=2.0, mean_tol=2.0, rms_rel_tol=0.9, quantile_tol=2.0, bounds=(-1.0, 1.0), slope_tol_db=2.5)),
    case("ClipNoise.ar", lambda b: U.ClipNoise.ar(), statistical=dict(AUDIO, quantile_tol=None)),
    case("ClipNoise.kr", lambda b: U.ClipNoise.kr(), statistical=dict(CONTROL, quantile_tol=None)),
    case("LFNoise0.ar", lambda b: U.LFNoise0.ar(frequency=2000.0), statistical=AUDIO),
    case("LFNoise0.ar-kfreq", lambda b: U.LFNoise0.ar(frequency=U.SinOsc.kr(frequency=2.0) * 1000 + 2000), statistical=AUDIO),
    case("LFNoise0.kr", lambda b: U.LFNoise0.kr(frequency=300.0), statistical=CONTROL),
    case("LFNoise1.ar", lambda b: U.LFNoise1.ar(frequency=2000.0), statistical=AUDIO),
    case("LFNoise1.ar-kfreq", lambda b: U.LFNoise1.ar(frequency=U.SinOsc.kr(frequency=2.0) * 1000 + 2000), statistical=AUDIO),
    case("LFNoise1.kr", lambda b: U.LFNoise1.kr(frequency=300.0), statistical=CONTROL),
    case("LFNoise2.ar", lambda b: U.LFNoise2.ar(frequency=2000.0), statistical=CURVES),
    case("LFNoise2.ar-kfreq", lambda b: U.LFNoise2.ar(frequency=U.SinOsc.kr(frequency=2.0) * 1000 + 2000), statistical=CURVES),
    case("LFNoise2.kr", lambda b: U.LFNoise2.kr(frequency=300.0), statistical=CURVES_KR),
    case("Dust.ar", lambda b: U.Dust.ar(density=800.0), statistical=SPARSE),
    case("Dust.kr", lambda b: U.Dust.kr(density=200.0), statistical=dict(SPARSE, nonzero_rel_tol=0.4, decimate=BLOCK)),
    case("Dust2.ar", lambda b: U.Dust2.ar(density=800.0), statistical=dict(SPARSE, mean_tol=0.1)),
    case("Dust2.kr", lambda b: U.Dust2.kr(density=200.0), statistical=dict(SPARSE, nonzero_rel_tol=0.4, decimate=BLOCK)),
    case("TRand.ar", lambda b: U.TRand.ar(minimum=-0.5, maximum=2.0, trigger=U.Impulse.ar(frequency=2000.0)), statistical=AUDIO),
    case("TRand.kr", lambda b: U.TRand.kr(minimum=-0.5, maximum=2.0, trigger=U.Impulse.kr(frequency=300.0)), statistical=CONTROL),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_noise_statistics_match_scsynth(tmp_path, fn, kw):
    # Control-rate cases get more blocks so that their statistics settle, and so does PinkNoise.ar:
    # its slowest rows change every 2^16 samples, and over 0.5 s the std of two honest renders
    # differed by more than the tolerance in about one run in forty.
    dur = 2.0 if kw["statistical"].get("decimate") or kw["statistical"] is PINK else 0.5
    check_graph(tmp_path, fn, dur=dur, **kw)


# Scalar-rate random UGens draw one value per synth: spawn one synth per block and collect them.
SCALAR = {
    "Rand": lambda: U.Rand.ir(minimum=-2.0, maximum=3.0),
    "IRand": lambda: U.IRand.ir(minimum=-5, maximum=12),
    "ExpRand": lambda: U.ExpRand.ir(minimum=0.1, maximum=10.0),
    "LinRand-skew0": lambda: U.LinRand.ir(minimum=-1.0, maximum=4.0, skew=0),
    "LinRand-skew1": lambda: U.LinRand.ir(minimum=-1.0, maximum=4.0, skew=1),
    "NRand-n1": lambda: U.NRand.ir(minimum=0.0, maximum=1.0, n=1),
    "NRand-n3": lambda: U.NRand.ir(minimum=-1.0, maximum=1.0, n=3),
}


@pytest.mark.parametrize("name", SCALAR)
def test_scalar_random_distribution_matches_scsynth(tmp_path, name):
    # enough draws that two honest generators' quantiles agree to a few hundredths of the span
    n = 2000
    sd, _ = graph_def("scalar_rand", lambda b: SCALAR[name]())
    score = Score([sd])
    for i in range(n):
        t = seconds_of_blocks(i + 0.5)
        ms = [msg("/s_new", "scalar_rand", 2000 + i, 0, 0)]
        if i:
            ms.insert(0, msg("/n_free", 2000 + i - 1))
        score.add(t, *ms)
    score.end(seconds_of_blocks(n + 0.5))
    ref, dut = render_both(score, tmp_path, options=["-o", "1"]).read()
    assert ref.shape == dut.shape
    pick = np.arange(n) * BLOCK + BLOCK - 1
    r, d = ref[pick, 0], dut[pick, 0]
    assert len(np.unique(r)) > 15, "scsynth drew too few distinct values; the case is broken"
    if name == "ExpRand":
        # log-uniform: compare in the log domain, where it is uniform
        assert np.all(d > 0), "ExpRand produced non-positive values"
        r, d = np.log(r), np.log(d)
    assert_stats_close(r, d, slope_tol_db=None, range_tol=0.25, label=name)
    if name == "IRand":
        assert np.all(d == np.round(d)), "IRand produced non-integers"
        assert set(np.unique(d)) <= set(range(-5, 13))
