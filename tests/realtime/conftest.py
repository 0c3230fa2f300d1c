"""Fixtures for the real-time tests of magnetar.

Each test runs on both of magnetar's drivers: the built-in clock driver (no JACK
server reachable) and JACK's dummy backend, ``jackd -d dummy -r 48000 -p 256``,
started for the test under a private server name.  magnetar's path comes from the
MAGNETAR environment variable (default: target/release/magnetar).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rtcheck import boot_magnetar, driver, quit_server  # noqa: E402,F401 (driver: a fixture)
from rtserver import BootError  # noqa: E402


@pytest.fixture
def magnetar(driver):
    """magnetar(record=None, block=64, period=256, extra=(), env=None) → a booted server on ``driver``;
    quit at teardown."""
    started = []

    def _boot(record: Path | None = None, block: int = 64, period: int = 256, extra: tuple[str, ...] = (),
              env: dict[str, str] | None = None):
        try:
            s = boot_magnetar(driver, block=block, period=period, record=record, extra=extra, env=env)
        except BootError as e:
            pytest.fail(f"magnetar did not boot: {e}", pytrace=False)
        started.append(s)
        return s

    yield _boot
    crashed = [s for s in started if s.proc is not None and s.proc.poll() not in (None, 0)]
    for s in started:
        quit_server(s)
    if crashed:
        s = crashed[0]
        pytest.fail(f"magnetar exited with status {s.proc.returncode}:\n{s.output}", pytrace=False)
