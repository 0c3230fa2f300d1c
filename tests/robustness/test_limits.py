"""The server's limits are kept at the edge, with `/fail`, and frees make
room again: `-m` (real-time memory: what units take comes from the pool,
never from the system heap), `-d` (SynthDefs), `-n` (nodes, see
test_deep_trees.py for server-assigned ids), `-P` (a dangling symlink does
not lead out)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nrt import compile_synthdefs  # noqa: E402
from rtserver import OscClient, bundle  # noqa: E402
from rtcheck import rt_stats  # noqa: E402

POOL_MISSES = 2  # position of poolMisses after xruns in /magnetar_rtStats.reply


def dc_def(name: str, value: float):
    with SynthDefBuilder() as b:
        U.Out.kr(bus=0, source=U.DC.kr(source=value))
    return b.build(name=name)


def test_defs_past_d_are_left_out_with_fail(magnetar):
    server = magnetar(extra=("-d", "2"))
    client = OscClient(server.port)
    try:
        client.send(M("/d_recv", compile_synthdefs(dc_def("one", 1.0), dc_def("two", 2.0))))
        client.wait_for("/done")
        assert client.messages("/fail") == []
        client.send(M("/d_recv", compile_synthdefs(dc_def("three", 3.0))))
        fail = client.wait_for("/fail", timeout=3)
        assert fail.contents[0] == "/d_recv" and "three" in fail.contents[1] and "-d" in fail.contents[1], fail
        client.send(M("/s_new", "three", 1000, 0, 0))
        assert client.wait_for("/fail").contents == ("/s_new", "SynthDef not found")
        # A def of a name already loaded replaces it, and a freed def makes room.
        client.send(M("/d_recv", compile_synthdefs(dc_def("two", 4.0))))
        client.request(M("/sync", 1), "/synced")
        client.clear()
        client.send(M("/d_free", "one"))
        client.send(M("/d_recv", compile_synthdefs(dc_def("three", 3.0))))
        client.request(M("/sync", 2), "/synced")
        assert client.messages("/fail") == []
        client.send(M("/s_new", "three", 1001, 0, 0))
        client.request(M("/sync", 3), "/synced")
        assert client.request(M("/c_get", 0), "/c_set").contents == (0, 3.0)
    finally:
        client.close()


def test_a_dangling_symlink_does_not_lead_out_of_p(magnetar, tmp_path):
    inside = tmp_path / "inside"
    inside.mkdir()
    outside = tmp_path / "outside.wav"
    os.symlink(outside, inside / "link.wav")
    server = magnetar(extra=("-P", str(inside)))
    client = OscClient(server.port)
    try:
        client.send(M("/b_alloc", 0, 16, 1))
        client.wait_for("/done")
        client.send(M("/b_write", 0, "link.wav", "wav", "float"))
        fail = client.wait_for("/fail", timeout=3)
        assert fail.contents[0] == "/b_write" and "outside the restricted path" in fail.contents[1], fail
        assert not outside.exists()
        client.send(M("/b_write", 0, "fine.wav", "wav", "float"))
        client.wait_for("/done")
        assert (inside / "fine.wav").exists()
    finally:
        client.close()


def comb_def():
    """A one-second CombN: 48000 samples of delay line (256 KB at 48 kHz)."""
    with SynthDefBuilder() as b:
        U.Out.ar(bus=0, source=U.CombN.ar(source=U.Impulse.ar(frequency=1.0), maximum_delay_time=1.0, delay_time=0.5) * 0.01)
    return b.build(name="comb")


def running_sum_def(window):
    with SynthDefBuilder(window=window) as b:
        U.Out.ar(bus=0, source=U.RunningSum.ar(source=U.DC.ar(source=0.0), sample_count=b["window"]))
    return b.build(name="rsum")


def test_units_take_memory_from_the_pool_only_and_fail_cleanly_when_it_is_full(magnetar):
    server = magnetar(extra=("-m", "4096"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(comb_def())))
        client.wait_for("/done")
        # 200 synths in one bundle: none is built before the last /s_new.
        client.send(bundle(None, *[("/s_new", "comb", 1000 + k, 0, 0) for k in range(200)]))
        client.request(M("/sync", 1), "/synced", timeout=5)
        fails = client.messages("/fail")
        made = client.request(M("/status"), "/status.reply").contents[2]
        assert 4 <= made < 16, made
        assert len(fails) == 200 - made
        assert all(f.contents == ("/s_new", "out of real time memory") for f in fails)
        assert rt_stats(server.port).field(POOL_MISSES) == 0, "a unit's memory came from the system heap"
        # Frees give the memory back.
        client.clear()
        client.send(M("/g_freeAll", 0))
        client.send(bundle(None, *[("/s_new", "comb", 2000 + k, 0, 0) for k in range(made)]))
        client.request(M("/sync", 2), "/synced", timeout=5)
        assert client.messages("/fail") == []
        assert client.request(M("/status"), "/status.reply").contents[2] == made
        assert rt_stats(server.port).field(POOL_MISSES) == 0
    finally:
        client.close()


def test_a_window_larger_than_the_pool_fails_and_the_server_goes_on(magnetar):
    server = magnetar(extra=("-m", "4096"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        # Known when the def is loaded: refused at /s_new.
        client.send(M("/d_recv", compile_synthdefs(running_sum_def(1e8))))
        client.wait_for("/done")
        client.send(M("/s_new", "rsum", 1000, 0, 0))
        assert client.wait_for("/fail", timeout=3).contents == ("/s_new", "out of real time memory")
        # Known only when the synth is built: it ends with the same /fail.
        client.send(M("/d_recv", compile_synthdefs(running_sum_def(40))))
        client.wait_for("/done")
        client.send(M("/s_new", "rsum", 1001, 0, 0, "window", 1e8))
        assert client.wait_for("/fail", timeout=5).contents == ("/s_new", "out of real time memory")
        client.wait_for("/n_end", lambda m: m.contents[0] == 1001, timeout=3)
        client.send(M("/s_new", "rsum", 1002, 0, 0, "window", 400))
        client.request(M("/sync", 1), "/synced", timeout=5)
        assert client.request(M("/status"), "/status.reply").contents[2] == 1
        assert server.alive()
    finally:
        client.close()
