"""The server's shared memory segment (``SuperColliderServer_<port>``), read the way sclang reads it.

scsynth creates a boost.interprocess segment named after its port that holds the control buses
and the scope buffers; sclang connects to it at boot (``ServerShmInterface``) and reads buses
from it (``Bus.getSynchronous``).  ``magnetar-shm-peek`` opens a segment as sclang does (find the
server object by name, check its size, follow its offset pointers), so the same reads must work
on scsynth's segment and on magnetar's.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from rtserver import ROOT

PEEK = os.environ.get("MAGNETAR_SHM_PEEK", str(ROOT / "target" / "release" / "magnetar-shm-peek"))


def peek(port: int, *args: str) -> list[str]:
    if not os.access(PEEK, os.X_OK):
        pytest.fail(f"{PEEK} is missing: cargo build --release -p magnetar-shm", pytrace=False)
    r = subprocess.run([PEEK, str(port), *args], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, f"magnetar-shm-peek {args}: {r.stderr}"
    return r.stdout.split()


def buses(port: int, first: int, count: int) -> list[float]:
    return [float(x) for x in peek(port, "buses", str(first), str(count))]


def test_segment_is_named_after_the_port(server):
    assert Path(f"/dev/shm/SuperColliderServer_{server.port}").exists()


def test_c_set_is_visible_in_the_segment(server, client):
    client.send(("/c_setn", 3, 4, 0.25, -1.5, 1e-3, 7.0))
    client.request(("/sync", 1), "/synced")
    assert buses(server.port, 2, 6) == pytest.approx([0.0, 0.25, -1.5, 1e-3, 7.0, 0.0], abs=0, rel=1e-7)


def test_a_synth_writing_a_control_bus_writes_the_segment(server, client):
    client.send(("/s_new", "e2e_dc", 1000, 0, 0, "bus", 40, "value", 0.625))
    client.request(("/sync", 2), "/synced")
    deadline = time.monotonic() + 2
    while buses(server.port, 40, 1) != [0.625] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert buses(server.port, 40, 1) == [0.625]
    # /c_get answers from the same memory.
    assert list(client.request(("/c_get", 40), "/c_set").contents) == [40, 0.625]


def test_the_last_control_bus_is_in_the_segment(server, client):
    # Both servers default to 16384 control buses.
    client.send(("/c_set", 16383, 2.5))
    client.request(("/sync", 3), "/synced")
    assert buses(server.port, 16383, 1) == [2.5]


def test_segment_is_removed_when_the_server_quits(server, client):
    path = Path(f"/dev/shm/SuperColliderServer_{server.port}")
    assert path.exists()
    client.send(("/quit",))
    assert server.wait_exit(5) == 0
    assert not path.exists()


def test_a_stale_segment_of_the_same_port_is_replaced(exe, jack):
    from rtserver import ServerProcess, OscClient, free_port

    port = free_port()
    stale = Path(f"/dev/shm/SuperColliderServer_{port}")
    stale.write_bytes(b"\xff" * 4096)
    try:
        with ServerProcess(exe, port=port) as s:
            c = OscClient(s.port)
            try:
                c.send(("/c_set", 1, 0.5))
                c.request(("/sync", 1), "/synced")
                assert buses(s.port, 0, 2) == [0.0, 0.5]
            finally:
                c.close()
    finally:
        stale.unlink(missing_ok=True)


def scope_def(name: str, scope_id: int, max_frames: int, period: int, values: list[float]) -> bytes:
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder, compile_synthdefs

    with SynthDefBuilder() as b:
        U.ScopeOut2.ar(
            scope_id=scope_id,
            max_frames=max_frames,
            scope_frames=period,
            source=[U.DC.ar(source=v) for v in values],
        )
    return compile_synthdefs(b.build(name=name))


def read_scope(port: int, index: int, timeout: float = 2.0) -> tuple[list[int], list[float]]:
    """(channels, max_frames, frames) and the samples, once a region has been published."""
    deadline = time.monotonic() + timeout
    while True:
        out = peek(port, "scope", str(index))
        head = [int(x) for x in out[:3]]
        if head[2] > 0 or time.monotonic() > deadline:
            return head, [float(x) for x in out[3:]]
        time.sleep(0.05)


def test_scopeout2_publishes_regions_clients_read(server, client):
    client.send(("/d_recv", scope_def("shm_scope", 3, 2048, 512, [0.25, -0.5])))
    client.wait_for("/done", timeout=3)
    client.send(("/s_new", "shm_scope", 1000, 0, 0))
    client.request(("/sync", 4), "/synced")
    head, data = read_scope(server.port, 3)
    assert head == [2, 2048, 512]
    # Channel planes lie max_frames apart; the published region holds `frames` frames of each.
    assert set(data[:512]) == {0.25}
    assert set(data[2048 : 2048 + 512]) == {-0.5}
    # An unused scope buffer reads as not in use.
    assert read_scope(server.port, 4, timeout=0)[0] == [0, 0, 0]


def test_scope_buffer_is_free_again_when_the_synth_ends(server, client):
    client.send(("/d_recv", scope_def("shm_scope", 5, 1024, 256, [1.0])))
    client.wait_for("/done", timeout=3)
    client.send(("/s_new", "shm_scope", 1000, 0, 0))
    client.request(("/sync", 5), "/synced")
    assert read_scope(server.port, 5)[0] == [1, 1024, 256]
    client.send(("/n_free", 1000))
    # A second writer of the same buffer gets it only once the first let go.
    client.send(("/d_recv", scope_def("shm_scope2", 5, 512, 128, [0.5, 0.5, 0.5])))
    client.wait_for("/done", timeout=3)
    client.send(("/s_new", "shm_scope2", 1001, 0, 0))
    client.request(("/sync", 6), "/synced")
    deadline = time.monotonic() + 2
    while read_scope(server.port, 5)[0] != [3, 512, 128] and time.monotonic() < deadline:
        time.sleep(0.05)
    head, data = read_scope(server.port, 5)
    assert head == [3, 512, 128]
    assert set(data[:128]) == {0.5}
