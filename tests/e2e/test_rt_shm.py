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
