"""Chaotic maps, Gendy1-3, Spring/Ball/TBall, LFGauss, Vibrato, AmpComp and AmpCompA, compared
sample by sample against scsynth. Chaotic orbits amplify any rounding difference, so an exact
match shows the same arithmetic in the same precision and order. The random units (Gendy, Ball,
TBall, Vibrato) run after a RandSeed so both servers draw the same numbers."""

import pytest
from supriya import ugens as U
from supriya.ugens.core import UGen, param, ugen

from nrt import case, check_graph
from sources import asine, ksine, seeded, src


def _unit(name, **params):
    """A UGen class named as the server knows it, at audio and control rate (supriya defines the
    chaos units at audio rate only, and Vibrato without its trigger input)."""
    namespace = {"__module__": __name__}
    namespace.update({key: param(value) for key, value in params.items()})
    return ugen(ar=True, kr=True)(type(name, (UGen,), namespace))


CuspN = _unit("CuspN", frequency=22050.0, a=1.0, b=1.9, xi=0.0)
CuspL = _unit("CuspL", frequency=22050.0, a=1.0, b=1.9, xi=0.0)
_FB = dict(frequency=22050.0, im=1.0, fb=0.1, a=1.1, c=0.5, xi=0.1, yi=0.1)
FBSineN = _unit("FBSineN", **_FB)
FBSineL = _unit("FBSineL", **_FB)
FBSineC = _unit("FBSineC", **_FB)
GbmanN = _unit("GbmanN", frequency=22050.0, xi=1.2, yi=2.1)
GbmanL = _unit("GbmanL", frequency=22050.0, xi=1.2, yi=2.1)
_HENON = dict(frequency=22050.0, a=1.4, b=0.3, x0=0.0, x1=0.0)
HenonN = _unit("HenonN", **_HENON)
HenonL = _unit("HenonL", **_HENON)
HenonC = _unit("HenonC", **_HENON)
_LATOO = dict(frequency=22050.0, a=1.0, b=3.0, c=0.5, d=0.5, xi=0.5, yi=0.5)
LatoocarfianN = _unit("LatoocarfianN", **_LATOO)
LatoocarfianL = _unit("LatoocarfianL", **_LATOO)
LatoocarfianC = _unit("LatoocarfianC", **_LATOO)
_LINCONG = dict(frequency=22050.0, a=1.1, c=0.13, m=1.0, xi=0.0)
LinCongN = _unit("LinCongN", **_LINCONG)
LinCongL = _unit("LinCongL", **_LINCONG)
LinCongC = _unit("LinCongC", **_LINCONG)
LorenzL = _unit("LorenzL", frequency=22050.0, s=10.0, r=28.0, b=2.667, h=0.05, xi=0.1, yi=0.0, zi=0.0)
_QUAD = dict(frequency=22050.0, a=1.0, b=-1.0, c=-0.75, xi=0.0)
QuadN = _unit("QuadN", **_QUAD)
QuadL = _unit("QuadL", **_QUAD)
QuadC = _unit("QuadC", **_QUAD)
StandardN = _unit("StandardN", frequency=22050.0, k=1.0, xi=0.5, yi=0.0)
StandardL = _unit("StandardL", frequency=22050.0, k=1.0, xi=0.5, yi=0.0)
Vibrato = _unit(
    "Vibrato", freq=440.0, rate=6.0, depth=0.02, delay=0.0, onset=0.0, rate_variation=0.04,
    depth_variation=0.1, iphase=0.0, trig=0.0,
)


def kstep(values, rate=8.0):
    """A control-rate staircase through `values` (restarts the maps whose seeds it feeds); Select
    truncates the index."""
    n = len(values)
    index = U.LFSaw.kr(frequency=rate / n) * (n / 2) + (n / 2)
    return U.Select.kr(selector=index, sources=list(values))


CHAOS = [
    case("CuspN.ar", lambda b: CuspN.ar(frequency=3000.0, a=1.0, b=1.9, xi=0.3)),
    case("CuspN.ar-every-sample", lambda b: CuspN.ar(frequency=48000.0, a=1.02, b=1.95)),
    case("CuspN.ar-kmod", lambda b: CuspN.ar(frequency=ksine(5000.0, 3000.0, 2.0), a=ksine(1.0, 0.05, 3.0), b=1.9)),
    case("CuspN.ar-areset", lambda b: CuspN.ar(frequency=asine(4000.0, 1000.0, 3.0), xi=kstep([0.1, 0.2, -0.3]))),
    case("CuspN.kr", lambda b: CuspN.kr(frequency=300.0, a=1.0, b=1.9, xi=0.1)),
    case("CuspL.ar", lambda b: CuspL.ar(frequency=2000.0, a=1.0, b=1.9, xi=0.3)),
    case("CuspL.ar-kreset", lambda b: CuspL.ar(frequency=ksine(3000.0, 2000.0, 2.0), xi=kstep([0.1, 0.2, -0.3]))),
    case("CuspL.kr", lambda b: CuspL.kr(frequency=200.0, b=ksine(1.9, 0.05, 1.0))),
    case("FBSineN.ar", lambda b: FBSineN.ar(frequency=4000.0)),
    case("FBSineN.ar-every-sample", lambda b: FBSineN.ar(frequency=48000.0, im=1.3, fb=0.7, a=1.05, c=0.3)),
    case("FBSineN.ar-kreset", lambda b: FBSineN.ar(frequency=ksine(6000.0, 4000.0, 2.0), fb=ksine(0.5, 0.4, 3.0), yi=kstep([0.1, 0.4, 0.9]))),
    case("FBSineN.kr", lambda b: FBSineN.kr(frequency=400.0, im=2.0, fb=0.3)),
    case("FBSineL.ar", lambda b: FBSineL.ar(frequency=3000.0, im=1.5, fb=0.4)),
    case("FBSineL.ar-kreset", lambda b: FBSineL.ar(frequency=2000.0, xi=kstep([0.1, -0.5, 0.7]))),
    case("FBSineL.kr", lambda b: FBSineL.kr(frequency=300.0, im=ksine(1.5, 0.5, 1.0))),
    case("FBSineC.ar", lambda b: FBSineC.ar(frequency=3000.0, im=1.5, fb=0.4)),
    case("FBSineC.ar-kreset", lambda b: FBSineC.ar(frequency=2500.0, xi=kstep([0.1, -0.5, 0.7]), yi=kstep([0.2, 0.3], 5.0))),
    case("FBSineC.kr", lambda b: FBSineC.kr(frequency=250.0, fb=ksine(0.5, 0.3, 1.0))),
    case("GbmanN.ar", lambda b: GbmanN.ar(frequency=5000.0)),
    case("GbmanN.ar-kfreq", lambda b: GbmanN.ar(frequency=ksine(8000.0, 6000.0, 2.0), xi=-0.7, yi=0.3)),
    case("GbmanN.kr", lambda b: GbmanN.kr(frequency=300.0)),
    case("GbmanL.ar", lambda b: GbmanL.ar(frequency=3000.0)),
    case("GbmanL.ar-every-sample", lambda b: GbmanL.ar(frequency=48000.0, xi=0.5, yi=-1.1)),
    case("GbmanL.kr", lambda b: GbmanL.kr(frequency=ksine(200.0, 100.0, 1.0))),
    case("HenonN.ar", lambda b: HenonN.ar(frequency=6000.0)),
    case("HenonN.ar-every-sample", lambda b: HenonN.ar(frequency=48000.0, a=1.3, b=0.32, x0=0.1, x1=0.2)),
    case("HenonN.ar-unstable-kmod", lambda b: HenonN.ar(frequency=8000.0, a=kstep([1.4, 2.2, 1.3]), b=0.3)),
    case("HenonN.kr", lambda b: HenonN.kr(frequency=500.0, a=ksine(1.35, 0.05, 1.0))),
    case("HenonL.ar", lambda b: HenonL.ar(frequency=4000.0)),
    case("HenonL.ar-unstable-kmod", lambda b: HenonL.ar(frequency=3000.0, a=kstep([1.4, 2.2, 1.3]), x1=kstep([0.0, 0.1], 3.0))),
    case("HenonL.kr", lambda b: HenonL.kr(frequency=300.0)),
    case("HenonC.ar", lambda b: HenonC.ar(frequency=4000.0)),
    case("HenonC.ar-unstable-kmod", lambda b: HenonC.ar(frequency=3000.0, a=kstep([1.4, 2.2, 1.3]), b=ksine(0.3, 0.01, 2.0))),
    case("HenonC.kr", lambda b: HenonC.kr(frequency=300.0, a=1.38)),
    case("LatoocarfianN.ar", lambda b: LatoocarfianN.ar(frequency=5000.0)),
    case("LatoocarfianN.ar-kmod", lambda b: LatoocarfianN.ar(frequency=ksine(8000.0, 4000.0, 2.0), a=ksine(1.0, 0.5, 1.0), c=0.8, d=0.7)),
    case("LatoocarfianN.ar-kreset", lambda b: LatoocarfianN.ar(frequency=6000.0, xi=kstep([0.5, 0.1, 0.9]))),
    case("LatoocarfianN.kr", lambda b: LatoocarfianN.kr(frequency=400.0, b=2.5)),
    case("LatoocarfianL.ar", lambda b: LatoocarfianL.ar(frequency=3000.0, a=1.5, b=2.5)),
    case("LatoocarfianL.ar-kreset", lambda b: LatoocarfianL.ar(frequency=2000.0, yi=kstep([0.5, 0.1, 0.9]))),
    case("LatoocarfianL.kr", lambda b: LatoocarfianL.kr(frequency=200.0)),
    case("LatoocarfianC.ar", lambda b: LatoocarfianC.ar(frequency=3000.0, a=1.5, b=2.5)),
    case("LatoocarfianC.ar-kreset", lambda b: LatoocarfianC.ar(frequency=2000.0, xi=kstep([0.5, 0.1, 0.9]))),
    case("LatoocarfianC.kr", lambda b: LatoocarfianC.kr(frequency=200.0, d=ksine(0.5, 0.3, 1.0))),
    case("LinCongN.ar", lambda b: LinCongN.ar(frequency=6000.0)),
    case("LinCongN.ar-kmod", lambda b: LinCongN.ar(frequency=ksine(6000.0, 3000.0, 2.0), a=1.3, c=ksine(0.13, 0.1, 3.0), m=ksine(1.0, 0.5, 1.0), xi=0.2)),
    case("LinCongN.kr", lambda b: LinCongN.kr(frequency=400.0, a=1.7, m=2.0)),
    case("LinCongL.ar", lambda b: LinCongL.ar(frequency=3000.0, xi=0.5)),
    case("LinCongL.ar-kmod", lambda b: LinCongL.ar(frequency=4000.0, m=ksine(1.0, 0.5, 1.0))),
    case("LinCongL.kr", lambda b: LinCongL.kr(frequency=300.0)),
    case("LinCongC.ar", lambda b: LinCongC.ar(frequency=3000.0, xi=0.5)),
    case("LinCongC.ar-kmod", lambda b: LinCongC.ar(frequency=4000.0, a=ksine(1.2, 0.2, 2.0))),
    case("LinCongC.kr", lambda b: LinCongC.kr(frequency=300.0)),
    case("LorenzL.ar", lambda b: LorenzL.ar(frequency=22050.0)),
    case("LorenzL.ar-every-sample", lambda b: LorenzL.ar(frequency=48000.0, h=0.01)),
    case("LorenzL.ar-kmod", lambda b: LorenzL.ar(frequency=ksine(10000.0, 5000.0, 2.0), s=ksine(10.0, 2.0, 1.0), r=ksine(28.0, 3.0, 2.0), h=0.02)),
    case("LorenzL.ar-kreset", lambda b: LorenzL.ar(frequency=20000.0, xi=kstep([0.1, 1.0, -2.0]), zi=kstep([0.0, 5.0], 3.0))),
    case("LorenzL.kr", lambda b: LorenzL.kr(frequency=700.0, h=0.02)),
    case("QuadN.ar", lambda b: QuadN.ar(frequency=5000.0, xi=0.1)),
    case("QuadN.ar-logistic", lambda b: QuadN.ar(frequency=48000.0, a=-3.9, b=3.9, c=0.0, xi=0.3)),
    case("QuadN.ar-kreset", lambda b: QuadN.ar(frequency=ksine(5000.0, 2000.0, 2.0), a=-1.0, b=0.0, c=ksine(1.6, 0.2, 1.0), xi=kstep([0.1, 0.3, -0.2]))),
    case("QuadN.kr", lambda b: QuadN.kr(frequency=400.0, a=-3.7, b=3.7, c=0.0, xi=0.2)),
    case("QuadL.ar", lambda b: QuadL.ar(frequency=3000.0, a=-1.0, b=0.0, c=1.8, xi=0.1)),
    case("QuadL.ar-kreset", lambda b: QuadL.ar(frequency=2000.0, a=-3.8, b=3.8, c=0.0, xi=kstep([0.1, 0.3, 0.6]))),
    case("QuadL.kr", lambda b: QuadL.kr(frequency=300.0, a=-3.8, b=3.8, c=0.0, xi=0.4)),
    case("QuadC.ar", lambda b: QuadC.ar(frequency=3000.0, a=-1.0, b=0.0, c=1.8, xi=0.1)),
    case("QuadC.ar-kreset", lambda b: QuadC.ar(frequency=2000.0, a=-3.8, b=3.8, c=0.0, xi=kstep([0.1, 0.3, 0.6]))),
    case("QuadC.kr", lambda b: QuadC.kr(frequency=300.0, a=-3.8, b=3.8, c=0.0, xi=0.4)),
    case("StandardN.ar", lambda b: StandardN.ar(frequency=5000.0)),
    case("StandardN.ar-kmod", lambda b: StandardN.ar(frequency=ksine(8000.0, 4000.0, 1.0), k=ksine(1.5, 1.0, 2.0))),
    case("StandardN.ar-kreset", lambda b: StandardN.ar(frequency=6000.0, k=2.0, xi=kstep([0.5, 1.5, 3.0]), yi=kstep([0.0, 2.0], 3.0))),
    case("StandardN.kr", lambda b: StandardN.kr(frequency=500.0, k=3.0)),
    case("StandardL.ar", lambda b: StandardL.ar(frequency=3000.0, k=1.5)),
    case("StandardL.ar-kreset", lambda b: StandardL.ar(frequency=4000.0, k=2.5, xi=kstep([0.5, 1.5, 3.0]))),
    case("StandardL.kr", lambda b: StandardL.kr(frequency=300.0, k=ksine(2.0, 1.0, 1.0))),
]

DETERMINISTIC = [
    case("Spring.ar", lambda b: Spring_(src() * 100.0, 20.0, 0.001)),
    case("Spring.ar-kmod", lambda b: Spring_(U.Impulse.ar(frequency=10.0) * 500.0, ksine(30.0, 20.0, 2.0), ksine(0.001, 0.0009, 1.0))),
    case("Spring.kr", lambda b: U.Spring.kr(source=U.Impulse.kr(frequency=5.0) * 50.0, spring=2.0, damping=0.01)),
    case("LFGauss.ar", lambda b: U.LFGauss.ar(duration=0.02, width=0.1)),
    case("LFGauss.ar-phase-width", lambda b: U.LFGauss.ar(duration=0.013, width=ksine(0.2, 0.1, 3.0), initial_phase=0.5)),
    case("LFGauss.ar-adur", lambda b: U.LFGauss.ar(duration=asine(0.01, 0.005, 4.0), width=0.3)),
    case("LFGauss.ar-adur-awidth", lambda b: U.LFGauss.ar(duration=asine(0.01, 0.005, 4.0), width=asine(0.2, 0.15, 7.0), initial_phase=-0.3)),
    case("LFGauss.ar-once", lambda b: U.LFGauss.ar(duration=0.1, width=0.2, loop=0)),
    case("LFGauss.kr", lambda b: U.LFGauss.kr(duration=0.05, width=ksine(0.3, 0.1, 1.0))),
    case("AmpComp.ar", lambda b: U.AmpComp.ar(frequency=asine(800.0, 600.0, 3.0), root=300.0, exp=0.3333)),
    case("AmpComp.ar-negative", lambda b: U.AmpComp.ar(frequency=asine(0.0, 900.0, 3.0), root=200.0, exp=0.5)),
    case("AmpComp.ar-kroot", lambda b: U.AmpComp.ar(frequency=asine(800.0, 600.0, 3.0), root=ksine(300.0, 100.0, 1.0), exp=ksine(0.4, 0.2, 2.0))),
    case("AmpComp.kr", lambda b: U.AmpComp.kr(frequency=ksine(500.0, 400.0, 2.0), root=100.0, exp=0.7)),
    case("AmpCompA.ar", lambda b: U.AmpCompA.ar(frequency=asine(2000.0, 1950.0, 2.0))),
    case("AmpCompA.ar-root", lambda b: U.AmpCompA.ar(frequency=asine(5000.0, 4900.0, 3.0), root=440.0, min_amp=0.2, root_amp=0.8)),
    case("AmpCompA.kr", lambda b: U.AmpCompA.kr(frequency=ksine(1000.0, 990.0, 2.0), root=100.0)),
]


def Spring_(source, spring, damping):
    return U.Spring.ar(source=source, spring=spring, damping=damping)


def gendy1(rate="ar", **kw):
    return getattr(U.Gendy1, rate)(**{"knum": kw.get("init_cps", 12), **kw})


def gendy2(rate="ar", **kw):
    return getattr(U.Gendy2, rate)(**{"knum": kw.get("init_cps", 12), **kw})


def gendy3(rate="ar", **kw):
    return getattr(U.Gendy3, rate)(**{"knum": kw.get("init_cps", 12), **kw})


def floor_wave():
    """A floor that rises and falls, for the balls to bounce on."""
    return U.LFTri.ar(frequency=2.0) * 0.3


def floor_steps():
    """A floor that jumps up and drops away: the ball falls, then is hit from below."""
    return U.LFPulse.ar(frequency=1.5, width=0.4) * 0.5


SEEDED = [
    case("Gendy1.ar", lambda b: gendy1()),
    *[
        case(f"Gendy1.ar-dist{d}", lambda b, d=d: gendy1(ampdist=d, durdist=(d + 3) % 7, adparam=0.7, ddparam=0.3))
        for d in range(7)
    ],
    case("Gendy1.ar-kmod", lambda b: gendy1(minfrequency=ksine(200.0, 100.0, 1.0), maxfrequency=900.0, ampscale=ksine(0.5, 0.3, 2.0), init_cps=8, knum=ksine(5.0, 3.0, 1.0))),
    case("Gendy1.kr", lambda b: gendy1("kr", minfrequency=20.0, maxfrequency=60.0)),
    case("Gendy2.ar", lambda b: gendy2()),
    *[
        case(f"Gendy2.ar-dist{d}", lambda b, d=d: gendy2(ampdist=d, durdist=(d + 2) % 7, adparam=0.6, ddparam=0.8, a=1.3, c=0.2))
        for d in range(7)
    ],
    case("Gendy2.ar-kmod", lambda b: gendy2(minfrequency=100.0, maxfrequency=ksine(1000.0, 500.0, 1.0), init_cps=6, a=ksine(1.17, 0.1, 2.0))),
    case("Gendy2.kr", lambda b: gendy2("kr", minfrequency=20.0, maxfrequency=60.0)),
    case("Gendy3.ar", lambda b: gendy3()),
    *[
        case(f"Gendy3.ar-dist{d}", lambda b, d=d: gendy3(ampdist=d, durdist=(d + 1) % 7, adparam=0.5, ddparam=0.9, frequency=300.0))
        for d in range(7)
    ],
    case("Gendy3.ar-kmod", lambda b: gendy3(frequency=ksine(300.0, 200.0, 1.0), durscale=ksine(0.5, 0.4, 2.0), init_cps=16, knum=ksine(8.0, 6.0, 1.0))),
    case("Gendy3.kr", lambda b: gendy3("kr", frequency=40.0)),
    case("Ball.ar", lambda b: U.Ball.ar(source=floor_wave(), gravity=3.0, damping=0.05, friction=0.01), dur=1.0),
    case("Ball.ar-kmod", lambda b: U.Ball.ar(source=floor_wave(), gravity=ksine(5.0, 3.0, 1.0), damping=0.2, friction=0.001), dur=1.0),
    case("Ball.kr", lambda b: U.Ball.kr(source=U.LFTri.kr(frequency=1.0) * 0.3, gravity=2.0, damping=0.1, friction=0.01), dur=1.0),
    case("Ball.ar-steps", lambda b: U.Ball.ar(source=floor_steps(), gravity=20.0, damping=0.1, friction=0.001), dur=1.5),
    case("TBall.ar", lambda b: U.TBall.ar(source=floor_steps(), gravity=10.0, damping=0.1, friction=0.001), dur=1.5),
    case("TBall.ar-kmod", lambda b: U.TBall.ar(source=floor_steps(), gravity=ksine(20.0, 10.0, 1.0), damping=0.3, friction=0.0001), dur=1.5),
    case("TBall.kr", lambda b: U.TBall.kr(source=U.LFPulse.kr(frequency=1.5, width=0.4) * 0.5, gravity=10.0, damping=0.1, friction=0.001), dur=1.5),
    case("Vibrato.ar", lambda b: Vibrato.ar(freq=asine(440.0, 10.0, 1.0), rate=20.0, depth=0.05)),
    case("Vibrato.ar-delay-onset", lambda b: Vibrato.ar(freq=asine(440.0, 10.0, 1.0), rate=30.0, depth=0.1, delay=0.05, onset=0.1, rate_variation=0.5, depth_variation=0.5, iphase=0.3)),
    case("Vibrato.ar-trig", lambda b: Vibrato.ar(freq=asine(300.0, 5.0, 1.0), rate=25.0, depth=0.1, onset=0.02, trig=U.Impulse.kr(frequency=7.0), iphase=0.7)),
    case("Vibrato.ar-trig-at-start", lambda b: Vibrato.ar(freq=asine(300.0, 5.0, 1.0), rate=25.0, depth=0.1, delay=0.01, trig=U.LFPulse.kr(frequency=4.0))),
    case("Vibrato.kr", lambda b: Vibrato.kr(freq=ksine(440.0, 20.0, 1.0), rate=12.0, depth=0.08, rate_variation=0.3, depth_variation=0.3)),
    case("Vibrato.kr-trig", lambda b: Vibrato.kr(freq=ksine(300.0, 10.0, 1.0), rate=8.0, depth=0.1, delay=0.05, onset=0.05, trig=U.Impulse.kr(frequency=3.0))),
    case("Vibrato.kr-onset", lambda b: Vibrato.kr(freq=440.0, rate=ksine(12.0, 5.0, 1.0), depth=0.1, onset=0.1, iphase=1.4)),
]


@pytest.mark.parametrize("fn,kw", CHAOS + DETERMINISTIC)
def test_chaos_family_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


@pytest.mark.parametrize("fn,kw", SEEDED)
def test_random_chaos_family_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, seeded(fn), **kw)


# One case per unit again with one-sample and small blocks and other sample rates.
VARIANTS = {"z1": (["-z", "1"], 48000), "z8": (["-z", "8"], 48000), "sr44100": ([], 44100)}
FIRST_OF_EACH = {}
for _params, _reseed in [(CHAOS + DETERMINISTIC, False), (SEEDED, True)]:
    for _p in _params:
        FIRST_OF_EACH.setdefault(_p.id.split(".")[0], (_p.id, *_p.values, _reseed))


@pytest.mark.parametrize(
    "fn,kw,reseed,options,sr",
    [
        pytest.param(fn, kw, reseed, options, sr, id=f"{case_id}@{tag}")
        for tag, (options, sr) in VARIANTS.items()
        for case_id, fn, kw, reseed in FIRST_OF_EACH.values()
    ],
)
def test_chaos_family_matches_scsynth_at_other_block_sizes_and_rates(tmp_path, fn, kw, reseed, options, sr):
    check_graph(tmp_path, seeded(fn) if reseed else fn, options=options, sr=sr, **kw)
