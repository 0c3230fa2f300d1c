"""Fixtures for the robustness tests that boot a real-time magnetar: each such
test runs on both drivers, the built-in clock driver and JACK's dummy backend
(a private ``jackd -d dummy`` per test), as the tests in ``tests/realtime`` do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realtime"))

from rtcheck import boot_magnetar, driver, quit_server  # noqa: E402,F401 (driver: a fixture)
from rtserver import BootError  # noqa: E402


@pytest.fixture
def magnetar(driver):
    """magnetar(extra=(), env={}) → a booted server on ``driver``; quit at teardown.
    A server that died (other than by /quit) fails the test."""
    started = []

    def _boot(extra: tuple[str, ...] = (), env: dict[str, str] | None = None, block: int = 64, period: int = 256):
        try:
            s = boot_magnetar(driver, block=block, period=period, extra=extra, env=env)
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
        pytest.fail(f"magnetar exited with status {s.proc.returncode}:\n{s.output[-4000:]}", pytrace=False)
