"""Random UGens after RandSeed: scsynth's generator is then reproducible, so these are compared
bit for bit (the unseeded cases in test_ugens_noise.py can only be compared statistically)."""

import pytest
from supriya import ugens as U
from supriya.enums import BinaryOperator, CalculationRate, UnaryOperator

import test_ugens_noise as noise
import test_ugens_ops as ops
from nrt import Score, build, check_graph, check_score, graph_def, msg, seconds_of_blocks
from sources import seeded

AR, KR = CalculationRate.AUDIO, CalculationRate.CONTROL


CASES = [pytest.param(p.values[0], id=p.id) for p in noise.CASES]
CASES += [pytest.param(lambda b, f=f: f(), id=name) for name, f in noise.SCALAR.items()]
for op in sorted(ops.RANDOM_UNARY):
    for rate, token in ((AR, "ar"), (KR, "kr")):
        CASES.append(pytest.param(ops.unary(op, rate), id=f"UnaryOpUGen-{op}.{token}"))
for op in sorted(ops.RANDOM_BINARY):
    for lrate, rrate, token in ((AR, AR, "aa"), (AR, KR, "ak"), (KR, AR, "ka"), (AR, None, "ai"), (KR, KR, "kk")):
        CASES.append(pytest.param(ops.binary(op, lrate, rrate), id=f"BinaryOpUGen-{op}.{token}"))


@pytest.mark.parametrize("fn", CASES)
def test_seeded_random_ugen_matches_scsynth_exactly(tmp_path, fn):
    check_graph(tmp_path, seeded(fn), dur=0.2, allow_silent=True)


@pytest.mark.parametrize("block", ["8", "32"])
def test_seeded_noise_at_other_block_sizes(tmp_path, block):
    check_graph(
        tmp_path,
        seeded(lambda b: [U.WhiteNoise.ar(), U.LFNoise2.ar(frequency=900.0), U.LFNoise0.kr(frequency=200.0), U.Dust2.ar(density=500.0), U.PinkNoise.ar()]),
        dur=0.2,
        options=["-z", block],
    )


def test_RandSeed_reseeds_on_trigger_and_synths_share_the_generator(tmp_path):
    # RandSeed reseeds the generator of the whole graph each time it is triggered; synths
    # started later draw from wherever the sequence has got to
    noisy, _ = graph_def("noisy", lambda b: [U.WhiteNoise.ar() * 0.5, U.K2A.ar(source=U.TRand.kr(trigger=U.Impulse.kr(frequency=30.0)))])
    seeder = build("seeder", lambda b: U.RandSeed.kr(trigger=U.Impulse.kr(frequency=7.0), seed=b["seed"]), seed=99.0)
    s = Score([noisy, seeder]).add(0.0, msg("/s_new", "seeder", 1000, 0, 0), msg("/s_new", "noisy", 1001, 1, 0))
    s.add(seconds_of_blocks(20.5), msg("/s_new", "noisy", 1002, 1, 0), msg("/n_set", 1000, "seed", 7.0)).end(0.3)
    check_score(tmp_path, s, channels=2)
