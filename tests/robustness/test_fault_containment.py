"""A unit that fails ends its own synth and nothing else: the def check at
`/d_recv` refuses what cannot run (a `Shaper` without outputs, which scsynth
accepts and then writes past its outputs with), and a unit that fails at run
time (the test unit `MagnetarFault`, present only with MAGNETAR_TEST_UNITS=1)
ends its synth with `/fail` and `/n_end`, while the other synths, in the same
parallel group on two threads, play on unchanged."""

from __future__ import annotations

import struct
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder
from supriya.ugens.core import UGen, param, ugen

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nrt import Score, compile_synthdefs, magnetar_binary, msg, render  # noqa: E402
from rtserver import OscClient  # noqa: E402
from rtcheck import rt_stats  # noqa: E402

PARALLEL_GROUPS = 5  # position of parallelGroups after xruns in /magnetar_rtStats.reply

TEST_UNITS = {"MAGNETAR_TEST_UNITS": "1"}


@ugen(ar=True, kr=True)
class MagnetarFault(UGen):
    source = param(0.0)


def _pstr(s: str) -> bytes:
    return bytes([len(s)]) + s.encode()


def shaper_without_outputs() -> bytes:
    """A version 2 def: one audio-rate Shaper reading buffer 0, with no outputs."""
    d = b"SCgf" + struct.pack(">iH", 2, 1)
    d += _pstr("noout") + struct.pack(">i", 2) + struct.pack(">ff", 0.0, 0.5)
    d += struct.pack(">ii", 0, 0)  # no parameters, no names
    d += struct.pack(">i", 1)
    d += _pstr("Shaper") + struct.pack(">biih", 2, 2, 0, 0) + struct.pack(">iiii", -1, 0, -1, 1)
    return d + struct.pack(">h", 0)


def counter_def():
    """Writes the seconds since it started to control bus `bus`."""
    with SynthDefBuilder(bus=0.0) as b:
        U.Out.kr(bus=b["bus"], source=U.Sweep.kr(trigger=0.0, rate=1.0))
    return b.build(name="counter")


def faulty_counter_def():
    """As counter, through MagnetarFault: fails once `fail` is set above 0."""
    with SynthDefBuilder(bus=0.0, fail=0.0) as b:
        U.Out.kr(bus=b["bus"], source=U.Sweep.kr(trigger=0.0, rate=1.0) + MagnetarFault.kr(source=b["fail"]))
    return b.build(name="faulty_counter")


def tone_def():
    with SynthDefBuilder(freq=440.0, out=0.0) as b:
        U.Out.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * 0.1)
    return b.build(name="tone")


def faulty_tone_def():
    with SynthDefBuilder(freq=440.0, out=0.0, fail=0.0) as b:
        U.Out.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * 0.1 + MagnetarFault.ar(source=b["fail"]))
    return b.build(name="faulty_tone")


def start(magnetar, extra=(), env=None):
    server = magnetar(extra=extra, env=env)
    client = OscClient(server.port)
    client.request(("/notify", 1), "/done", timeout=3)
    return server, client


def bus_value(client, bus: int) -> float:
    return client.request(M("/c_get", bus), "/c_set", lambda m: m.contents[0] == bus).contents[1]


def test_a_def_whose_unit_cannot_run_is_refused_and_playing_synths_go_on(magnetar):
    server, client = start(magnetar)
    try:
        client.send(M("/d_recv", compile_synthdefs(counter_def())))
        client.wait_for("/done")
        client.send(M("/s_new", "counter", 1000, 0, 0, "bus", 3))
        client.send(M("/b_alloc", 0, 64, 1))
        client.wait_for("/done")
        client.send(M("/d_recv", shaper_without_outputs()))
        fail = client.wait_for("/fail")
        assert fail.contents[0] == "/d_recv" and "Shaper" in fail.contents[1]
        client.send(M("/s_new", "noout", 1001, 0, 0))
        assert client.wait_for("/fail").contents == ("/s_new", "SynthDef not found")
        before = bus_value(client, 3)
        time.sleep(0.3)
        assert client.request(M("/status"), "/status.reply", timeout=3).contents[2] == 1
        assert bus_value(client, 3) > before + 0.2, "the synth started before stopped playing"
    finally:
        client.close()


def test_failing_unit_in_a_parallel_group_ends_only_its_synth(magnetar):
    # Every block on the threads (not only when they beat one thread): the threaded path is under test.
    server, client = start(magnetar, extra=("-T", "2"), env={**TEST_UNITS, "MAGNETAR_SPREAD": "always"})
    try:
        client.send(M("/d_recv", compile_synthdefs(counter_def(), faulty_counter_def())))
        client.wait_for("/done")
        client.send(M("/p_new", 2, 0, 0))
        ids = range(1000, 1006)
        for k, node in enumerate(ids):
            client.send(M("/s_new", "faulty_counter" if node == 1003 else "counter", node, 1, 2, "bus", k))
        client.request(M("/sync", 1), "/synced")
        time.sleep(0.2)
        assert rt_stats(server.port).field(PARALLEL_GROUPS) > 0, "the group did not run on two threads"
        client.send(M("/n_set", 1003, "fail", 1.0))
        fail = client.wait_for("/fail", timeout=3)
        assert fail.contents[0] == "/s_new"
        text = fail.contents[1]
        assert "MagnetarFault" in text and "faulty_counter" in text and "1003" in text, text
        assert client.wait_for("/n_end", lambda m: m.contents[0] == 1003, timeout=3)
        # The others play on, all alike (they started in the same block).
        first = [bus_value(client, k) for k in range(6) if k != 3]
        time.sleep(0.3)
        later = [bus_value(client, k) for k in range(6) if k != 3]
        assert all(b > a + 0.2 for a, b in zip(first, later)), (first, later)
        assert max(later) - min(later) < 0.05, later
        tree = client.request(M("/g_queryTree", 2, 0), "/g_queryTree.reply").contents
        assert tree[2] == 5 and 1003 not in tree, tree
        assert client.messages("/n_end") == []
        assert client.request(M("/status"), "/status.reply", timeout=3).contents[2] == 5
        # The group runs on two threads again.
        ran = rt_stats(server.port).field(PARALLEL_GROUPS)
        time.sleep(0.2)
        assert rt_stats(server.port).field(PARALLEL_GROUPS) > ran
    finally:
        client.close()


@pytest.mark.parametrize("threads", ["1", "2"])
def test_failing_unit_leaves_the_other_synths_output_unchanged_in_nrt(tmp_path, monkeypatch, threads):
    monkeypatch.setenv("MAGNETAR_TEST_UNITS", "1")

    def score(fail_at: float | None) -> Score:
        s = Score([tone_def(), faulty_tone_def()])
        s.add(0.0, msg("/p_new", 2, 0, 0))
        for k, f in enumerate((300.0, 500.0, 700.0)):
            s.add(0.0, msg("/s_new", "tone", 1000 + k, 1, 2, "freq", f))
        # The faulty synth writes to a bus of its own, so the outputs compare.
        s.add(0.0, msg("/s_new", "faulty_tone", 1010, 1, 2, "out", 8))
        if fail_at is not None:
            s.add(fail_at, msg("/n_set", 1010, "fail", 1.0))
        s.add(0.5, msg("/c_set", 0, 0))
        return s

    opts = ("-o", "2", "-T", threads)
    failing = render(magnetar_binary(), "magnetar", score(0.2), tmp_path / "failing", options=opts)
    clean = render(magnetar_binary(), "magnetar", score(None), tmp_path / "clean", options=opts)
    assert failing.returncode == 0, failing.log[-3000:]
    assert "MagnetarFault" in failing.stderr and "node 1010" in failing.stderr, failing.log[-3000:]
    assert "panicked" not in failing.log
    a, b = failing.read(), clean.read()
    assert a.shape == b.shape and np.abs(b).max() > 0.05
    assert np.array_equal(a, b)


@ugen(kr=True)
class MagnetarStall(UGen):
    seconds = param(0.0)


def printed(server, text: str, seconds: float = 3.0) -> bool:
    """Whether the server prints a line holding `text` within `seconds`."""
    deadline = time.monotonic() + seconds
    while not any(text in line for line in server.lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    return any(text in line for line in server.lines)


def test_a_stalled_audio_thread_is_reported_and_its_recovery_too(magnetar):
    server, client = start(magnetar, env=TEST_UNITS)
    try:
        with SynthDefBuilder(seconds=0.0) as b:
            U.Out.kr(bus=0, source=MagnetarStall.kr(seconds=b["seconds"]))
        client.send(M("/d_recv", compile_synthdefs(b.build(name="stall"))))
        client.wait_for("/done")
        client.send(M("/s_new", "stall", 1000, 0, 0, "seconds", 2.5))
        fail = client.wait_for("/fail", timeout=5)
        assert fail.contents[0] == "/watchdog" and "no period" in fail.contents[1], fail
        # The printer thread writes the line after the /fail may have gone out.
        assert printed(server, "finished no period"), server.output[-2000:]
        # Once the unit lets go, the server renders and answers again.
        assert client.request(M("/status"), "/status.reply", timeout=5).contents[2] == 1
        assert printed(server, "finishes periods again"), server.output[-2000:]
    finally:
        client.close()


def test_the_three_inputs_that_stopped_the_server_leave_it_answering(magnetar, tmp_path):
    """The issue's three inputs in one run: a Shaper without outputs (/d_recv, then /s_new
    with buffer 0 present), 20,000 nested groups, and /b_read, /b_readChannel and /b_write
    whose buffer argument is a string or a blob. Afterwards the server answers /status and
    a synth started before them still plays."""
    server, client = start(magnetar, extra=("-n", "21000"))
    try:
        client.send(M("/d_recv", compile_synthdefs(counter_def())))
        client.wait_for("/done")
        client.send(M("/s_new", "counter", 100_000, 0, 0, "bus", 3))
        client.send(M("/b_alloc", 0, 64, 1))
        client.wait_for("/done")
        client.send(M("/d_recv", shaper_without_outputs()))
        client.send(M("/s_new", "noout", 100_001, 0, 0))
        client.send(M("/g_new", 10, 1, 0))
        for start_id in range(0, 20_000, 500):
            args = []
            for k in range(start_id, start_id + 500):
                args += [11 + k, 0, 10 + k]
            client.send(M("/g_new", *args))
            client.request(M("/sync", start_id), "/synced", timeout=10)
        for cmd in ("/b_read", "/b_readChannel", "/b_write"):
            for bad in ("zero", b"\x00\x00\x00\x00"):
                client.send(M(cmd, bad, str(tmp_path / "x.wav")))
        client.request(M("/sync", 2), "/synced", timeout=10)
        assert server.alive()
        status = client.request(M("/status"), "/status.reply", timeout=3).contents
        assert status[2:4] == (1, 20_002), (status, client.messages("/fail")[:3])  # the counter; the root, group 10 and 20,000 more
        before = bus_value(client, 3)
        time.sleep(0.3)
        assert bus_value(client, 3) > before + 0.2, "the synth started before stopped playing"
    finally:
        client.close()


@pytest.mark.parametrize("threads", ["1", "2"])
def test_failing_unit_in_a_batch_of_identical_synths_leaves_the_others_unchanged(tmp_path, monkeypatch, threads):
    """Identical synths run side by side, step by step; one of them failing mid-render must end
    it alone, the others' samples bit for bit as in a render where nothing fails."""
    monkeypatch.setenv("MAGNETAR_TEST_UNITS", "1")
    voices = 8
    # Saw and RLPF have lane kernels; the fault is a plain step between them.
    with SynthDefBuilder(freq=440.0, out=0.0, fail=0.0) as b:
        x = U.Saw.ar(frequency=b["freq"]) + MagnetarFault.ar(source=b["fail"])
        U.Out.ar(bus=b["out"], source=U.RLPF.ar(source=x, frequency=900.0, reciprocal_of_q=0.3) * 0.1)
    faulty_saw = b.build(name="faulty_tone")

    def score(fail_at: float | None) -> Score:
        s = Score([faulty_saw])
        s.add(0.0, msg("/p_new", 2, 0, 0))
        for k in range(voices):
            s.add(0.0, msg("/s_new", "faulty_tone", 1000 + k, 1, 2, "freq", 200.0 + 50.0 * k, "out", k))
        if fail_at is not None:
            s.add(fail_at, msg("/n_set", 1003, "fail", 1.0))
        s.add(0.5, msg("/c_set", 0, 0))
        return s

    opts = ("-o", str(voices), "-T", threads)
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("MAGNETAR_TRACE", str(trace))
    failing = render(magnetar_binary(), "magnetar", score(0.2), tmp_path / "failing", options=opts)
    monkeypatch.delenv("MAGNETAR_TRACE")
    clean = render(magnetar_binary(), "magnetar", score(None), tmp_path / "clean", options=opts)
    assert failing.returncode == 0, failing.log[-3000:]
    assert "MagnetarFault" in failing.stderr and "node 1003" in failing.stderr, failing.log[-3000:]
    assert "panicked" not in failing.log
    # The voices did run as a batch, the path under test.
    assert '"name":"lane batch"' in trace.read_text()
    a, b = failing.read(), clean.read()
    assert a.shape == b.shape and np.abs(b).max() > 0.05
    others = [k for k in range(voices) if k != 3]
    assert np.array_equal(a[:, others], b[:, others])
    # The failed voice played until it failed, then fell silent.
    cut = int(0.2 * 48000)
    assert np.array_equal(a[: cut - 64, 3], b[: cut - 64, 3]) and not np.any(a[cut + 128 :, 3])
