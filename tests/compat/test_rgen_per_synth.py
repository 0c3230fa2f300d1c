"""`-g 1`: each synth draws from its own random generator, as in supernova, instead of all synths
sharing the world's in turn, as in scsynth.  Seeded noise voices in a parallel group then render
what supernova renders, bit for bit, on magnetar's two threads; scsynth renders something else
(its voices reseed one shared generator), which shows the case tells the two apart."""

import shutil

import numpy as np
from supriya import ugens as U

from nrt import SCSYNTH, Score, assert_same, build, magnetar_binary, msg, render

SUPERNOVA = shutil.which("supernova") or "/usr/bin/supernova"


def voices_score():
    def voice(b):
        U.RandSeed.ir(trigger=1, seed=b["seed"])
        x = U.WhiteNoise.ar() * U.LFNoise1.kr(frequency=b["freq"]) + U.Dust2.ar(density=300.0) * 0.3
        cutoff = U.LFNoise2.kr(frequency=4.0) * 1000.0 + 1500.0
        U.Out.ar(bus=b["out"], source=U.RLPF.ar(source=x, frequency=cutoff) * 0.2)

    v = build("voice", voice, seed=1.0, freq=5.0, out=0.0)
    s = Score([v]).add(0.0, msg("/p_new", 1, 0, 0))
    # Five voices, two of them summing into channel 1.
    for k in range(5):
        s.add(0.0, msg("/s_new", "voice", 100 + k, 1, 1, "seed", 11.0 + k, "freq", 3.0 + k, "out", float(k % 4)))
    return s.end(0.2)


def test_seeded_voices_with_a_generator_each_render_what_supernova_renders(tmp_path):
    s = voices_score()
    opts = ["-o", "4"]
    ref = render(SUPERNOVA, "supernova", s, tmp_path / "supernova", options=[*opts, "-T", "1"])
    assert ref.returncode == 0, ref.log[-2000:]
    dut = render(magnetar_binary(), "magnetar", s, tmp_path / "magnetar", options=[*opts, "-T", "2", "-g", "1"])
    assert dut.returncode == 0, dut.log[-2000:]
    sc = render(SCSYNTH, "scsynth", s, tmp_path / "scsynth", options=opts)
    assert sc.returncode == 0, sc.log[-2000:]
    # supernova ends its render a block earlier; compare what both wrote.
    a, b, c = ref.read(), dut.read(), sc.read()
    n = min(len(a), len(b))
    assert n >= len(b) - 64
    assert all(np.any(a[:n, ch]) for ch in range(4)), "every channel of the reference plays"
    assert_same(a[:n], b[:n], exact=True, label="supernova vs magnetar -g 1")
    assert not np.array_equal(c[:n], b[:n]), "scsynth, sharing one generator, renders the same"
