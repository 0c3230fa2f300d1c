"""Fixtures for the robustness tests that boot a real-time magnetar: each such
test runs on both drivers, the built-in clock driver and JACK's dummy backend
(a private ``jackd -d dummy`` per test), as the tests in ``tests/realtime`` do."""

from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realtime"))

from rtcheck import driver, magnetar  # noqa: E402,F401 (fixtures)
