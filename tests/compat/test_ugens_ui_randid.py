"""RandID (a synth picks one of the world's shared random generators) and the mouse and
keyboard units as a server without a display runs them (pointer at 0, button and keys up):
rendered by both servers, compared bit for bit."""

import pytest
from supriya import ugens as U

from nrt import Score, build, check_graph, check_score, msg

SEEDED = build(
    "rid_seeded",
    lambda b: [
        U.RandID.ir(rand_id=b["id"]),
        U.RandSeed.ir(trigger=1, seed=b["seed"]),
        U.Out.ar(bus=b["out"], source=U.WhiteNoise.ar() * 0.5),
    ],
    id=0.0,
    seed=1.0,
    out=0.0,
)
# Draws on from wherever its generator's sequence has got to; `id` may change while it runs.
FOLLOWER = build(
    "rid_follower",
    lambda b: [
        U.RandID.kr(rand_id=b["id"]),
        U.Out.ar(bus=b["out"], source=U.WhiteNoise.ar() * 0.5 + U.K2A.ar(source=U.TRand.kr(trigger=U.Impulse.kr(frequency=40.0)))),
    ],
    id=0.0,
    out=0.0,
)


def test_RandID_gives_synths_separate_shared_generators(tmp_path):
    s = Score([SEEDED, FOLLOWER])
    tail = 1
    s.add(
        0.0,
        msg("/s_new", "rid_seeded", 1000, tail, 0, "id", 3.0, "seed", 42.0, "out", 0.0),
        msg("/s_new", "rid_seeded", 1001, tail, 0, "id", 0.0, "seed", 42.0, "out", 1.0),
        msg("/s_new", "rid_seeded", 1002, tail, 0, "id", 5.0, "seed", 9.0, "out", 5.0),
        msg("/s_new", "rid_follower", 1003, tail, 0, "id", 3.0, "out", 2.0),
        msg("/s_new", "rid_follower", 1004, tail, 0, "id", 0.0, "out", 3.0),
        # No generator 100 (scsynth has 64): the synth keeps generator 0.
        msg("/s_new", "rid_follower", 1005, tail, 0, "id", 100.0, "out", 4.0),
    )
    s.add(0.1, msg("/n_set", 1004, "id", 5.0), msg("/n_set", 1005, "id", -1.0))
    s.end(0.25)
    check_score(tmp_path, s, channels=6)


@pytest.mark.parametrize("lag", [0.0, 0.2])
def test_mouse_and_key_units_read_a_pointer_at_rest(tmp_path, lag):
    def body(b):
        wobble = U.SinOsc.kr(frequency=3.0) * 100.0 + 300.0
        return [
            U.MouseX.kr(minimum=wobble, maximum=800.0, warp=0, lag=lag),
            U.MouseX.kr(minimum=wobble, maximum=800.0, warp=1, lag=lag) * 0.001,
            U.MouseY.kr(minimum=0.25, maximum=wobble, warp=0, lag=lag),
            U.MouseY.kr(minimum=wobble * 0.01, maximum=4.0, warp=1, lag=lag),
            U.MouseButton.kr(minimum=wobble * 0.001, maximum=1.0, lag=lag),
            U.KeyState.kr(keycode=38, minimum=wobble, maximum=0.9, lag=lag) * 0.01,
        ]

    check_graph(tmp_path, body, dur=0.3)
