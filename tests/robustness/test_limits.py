"""The server's limits are kept at the edge, with `/fail`, and frees make
room again: `-d` (SynthDefs), `-n` (nodes, see test_deep_trees.py for
server-assigned ids), `-P` (a dangling symlink does not lead out)."""

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
from rtserver import OscClient  # noqa: E402


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
