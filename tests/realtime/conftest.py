"""Fixtures for the real-time tests of magnetar.

Each test runs on both of magnetar's drivers: the built-in clock driver (no JACK
server reachable) and JACK's dummy backend, ``jackd -d dummy -r 48000 -p 256``,
started for the test under a private server name.  magnetar's path comes from the
MAGNETAR environment variable (default: target/release/magnetar).
"""

from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

from rtcheck import driver, magnetar  # noqa: E402,F401 (fixtures)
