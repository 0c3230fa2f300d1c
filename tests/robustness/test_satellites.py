"""Satellite nodes (magnetar's extension: add actions 5 and 6 place a node
just before or just after a reference node, which it is paused and freed
with). scsynth has no satellites, so these cases check magnetar alone."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

from nrt import Score, build, magnetar_binary, msg  # noqa: E402
from supriya import ugens as U  # noqa: E402

BLOCK = 64


def writer():
    # Writes 0.5 to private bus 10.
    return build("writer", lambda b: U.Out.ar(bus=10, source=U.DC.ar(source=0.5)))


def listener():
    # Copies whatever bus 10 holds now to output `out`.
    return build("listener", lambda b: U.Out.ar(bus=b["out"], source=U.In.ar(bus=10)), out=0.0)


def render(tmp_path, score):
    path = tmp_path / "score.osc"
    path.write_bytes(score.encode(str(tmp_path)))
    out = tmp_path / "out.wav"
    p = subprocess.run([magnetar_binary(), "-o", "2", "-N", str(path), "_", str(out), "48000", "WAV", "float"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    data, _ = soundfile.read(str(out), dtype="float32", always_2d=True)
    return data, p.stdout + p.stderr


def test_a_satellite_after_hears_its_reference_and_one_before_does_not(tmp_path):
    s = Score([writer(), listener()])
    s.add(0.0, msg("/s_new", "writer", 1000, 0, 0),
          msg("/s_new", "listener", 1001, 6, 1000, "out", 0.0),   # after the writer
          msg("/s_new", "listener", 1002, 5, 1000, "out", 1.0))   # before it
    s.end(0.05)
    data, log = render(tmp_path, s)
    assert "FAILURE" not in log, log
    assert np.all(data[BLOCK:, 0] == 0.5), "the satellite after the writer hears this block's bus"
    assert np.all(data[:, 1] == 0.0), "the satellite before the writer runs before the bus is written"


def test_satellites_are_freed_and_paused_with_their_reference(tmp_path):
    s = Score([writer(), listener()])
    s.add(0.0, msg("/s_new", "writer", 1000, 0, 0), msg("/s_new", "listener", 1001, 6, 1000, "out", 0.0))
    s.add(0.02, msg("/n_run", 1000, 0))
    s.add(0.04, msg("/n_run", 1000, 1))
    s.add(0.06, msg("/n_free", 1000))
    s.add(0.07, msg("/n_set", 1001, "out", 1.0))  # the satellite went with its reference
    s.end(0.08)
    data, log = render(tmp_path, s)
    paused = slice(int(0.021 * 48000), int(0.039 * 48000))
    running = slice(int(0.041 * 48000), int(0.059 * 48000))
    assert np.all(data[paused, 0] == 0.0), "paused with its reference"
    assert np.all(data[running, 0] == 0.5), "runs again with it"
    assert np.all(data[int(0.061 * 48000):, 0] == 0.0), "freed with it"
    assert "Node 1001 not found" in log


def test_satellite_of_a_missing_node_fails_clearly(tmp_path):
    s = Score([writer()]).add(0.0, msg("/s_new", "writer", 1000, 6, 4242))
    s.end(0.01)
    _, log = render(tmp_path, s)
    assert "Node 4242 not found" in log
