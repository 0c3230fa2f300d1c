"""MAGNETAR_TRACE=file.json: a render writes its DSP threads' timeline in the Chrome / Perfetto
trace-event format (a block per block rendered, the parallel group's queue items on the threads
that ran them, waits, steals, the helper's sleeps), and tracing leaves the sound alone: the
traced two-thread render is the untraced one-thread render, bit for bit, and both are what
scsynth renders."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile
from supriya import ugens as U

from nrt import SCSYNTH, Score, assert_same, build, magnetar_binary, msg, render

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import trace_summary  # noqa: E402

BLOCK = 64


def voices_score(seconds=0.3):
    def voice(b):
        src = U.Saw.ar(frequency=b["freq"]) + U.Pulse.ar(frequency=b["freq"] * 1.01, width=0.3)
        U.Out.ar(bus=b["out"], source=U.RLPF.ar(source=src, frequency=1800.0, reciprocal_of_q=0.4) * 0.05)

    v = build("voice", voice, freq=200.0, out=0.0)
    s = Score([v]).add(0.0, msg("/p_new", 1, 0, 0))
    for k in range(32):
        s.add(0.0, msg("/s_new", "voice", 100 + k, 1, 1, "freq", 80.0 + 17.0 * k, "out", float(k % 2)))
    return s.end(seconds)


def test_a_trace_shows_every_block_and_the_groups_items_and_leaves_the_sound_alone(tmp_path):
    s = voices_score()
    workdir = tmp_path / "traced"
    workdir.mkdir()
    score = workdir / "score.osc"
    score.write_bytes(s.encode(str(workdir)))
    trace = workdir / "trace.json"
    out = workdir / "out.wav"
    env = {**os.environ, "MAGNETAR_TRACE": str(trace), "MAGNETAR_SPREAD": "always"}
    cmd = [magnetar_binary(), "-T", "2", "-o", "2", "-N", str(score), "_", str(out), "48000", "WAV", "float"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MAGNETAR_TRACE" not in p.stderr, p.stderr

    one = render(magnetar_binary(), "magnetar", s, tmp_path / "one", options=["-o", "2", "-T", "1"])
    assert one.returncode == 0, one.log[-2000:]
    sc = render(SCSYNTH, "scsynth", s, tmp_path / "scsynth")
    assert sc.returncode == 0, sc.log[-2000:]
    traced = soundfile.read(str(out), dtype="float32", always_2d=True)[0]
    untraced = soundfile.read(str(one.output), dtype="float32", always_2d=True)[0]
    assert np.array_equal(traced.view(np.uint32), untraced.view(np.uint32)), "tracing changed the sound"
    assert_same(sc.read(), traced, label="scsynth vs traced magnetar")

    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert "NRT" in names, names
    blocks = [e for e in events if e.get("name") == "block"]
    assert len(blocks) == len(traced) // BLOCK, "one block event per block rendered"
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in blocks)
    spread = [e for e in events if e.get("name") == "group on threads"]
    # The first block included: its new voices are built before the group runs, then spread.
    assert len(spread) == len(blocks), "the group ran on the threads in every block"
    assert all(e["args"]["group"] == 1 for e in spread)
    items = [e for e in events if e.get("name") == "item"]
    assert len(items) == sum(e["args"]["items"] for e in spread), "every queue item of every block is there"
    commands = [e for e in events if e.get("name") == "commands"]
    assert commands and commands[0]["args"]["commands"] >= 1

    summary = trace_summary.summarise(events)
    assert summary["blocks"] == len(blocks)
    nrt = next(r for r in summary["threads"] if r["thread"] == "NRT")
    assert 0.0 < nrt["busy_share"] <= 1.0
    assert sum(r["items"] for r in summary["threads"]) == len(items)


def test_without_magnetar_trace_no_file_is_written(tmp_path):
    s = voices_score(0.05)
    r = render(magnetar_binary(), "magnetar", s, tmp_path, options=["-o", "2", "-T", "2"])
    assert r.returncode == 0, r.log[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.wav", "score.osc"]
