"""Fixtures for the real-time end-to-end tests.

Every test runs once per server executable (``scsynth`` and ``magnetar``; magnetar's path comes
from the MAGNETAR environment variable).  Both run under the same conditions: a private
``jackd -d dummy -r 48000 -p 256`` is started for the session and the servers are pointed at it
with JACK_DEFAULT_SERVER.  A server that cannot boot fails the test; it is never skipped.
"""

from __future__ import annotations

import os
import tempfile

import pytest

from rtserver import BootError, JackDummy, OscClient, ServerProcess, executables, synthdef_bytes

ALL_DEFS = ("e2e_sine", "e2e_trig", "e2e_short", "e2e_dc")


@pytest.fixture(scope="session")
def jack():
    j = JackDummy().start()
    saved = {k: os.environ.get(k) for k in ("JACK_DEFAULT_SERVER", "JACK_NO_START_SERVER", "SC_SYNTHDEF_PATH")}
    defdir = tempfile.mkdtemp(prefix="e2e-synthdefs-")
    # Children (including servers that supriya spawns) inherit these.
    os.environ["JACK_DEFAULT_SERVER"] = j.name
    os.environ["JACK_NO_START_SERVER"] = "1"
    # An empty synthdef directory keeps scsynth from reporting a missing default one as an error.
    os.environ["SC_SYNTHDEF_PATH"] = defdir
    try:
        yield j
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        j.stop()


@pytest.fixture(params=["scsynth", "magnetar"])
def exe(request, jack) -> str:
    return executables()[request.param]


@pytest.fixture
def boot(exe):
    """boot(protocol="udp", extra=(), port=None) → a started ServerProcess (stopped at teardown)."""
    started: list[ServerProcess] = []

    def _boot(protocol: str = "udp", extra=(), port: int | None = None) -> ServerProcess:
        s = ServerProcess(exe, port=port, protocol=protocol, extra=extra)
        try:
            s.start()
        except BootError as e:
            pytest.fail(f"server did not boot: {e}", pytrace=False)
        started.append(s)
        return s

    yield _boot
    crashed = [s for s in started if s.proc is not None and s.proc.poll() not in (None, 0)]
    for s in started:
        s.stop()
    if crashed:
        s = crashed[0]
        pytest.fail(f"server exited with status {s.proc.returncode}:\n{s.output}", pytrace=False)


@pytest.fixture
def server(boot) -> ServerProcess:
    return boot()


@pytest.fixture
def client(server):
    """A UDP client registered for notifications, with the test SynthDefs loaded."""
    c = OscClient(server.port)
    c.request(("/notify", 1), "/done", timeout=3)
    c.send(("/d_recv", synthdef_bytes(*ALL_DEFS)))
    c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=3)
    c.clear()
    yield c
    c.close()
