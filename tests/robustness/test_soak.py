"""A short soak (bench/soak.py runs the long one): four clients creating,
setting, moving and freeing nodes and reading and freeing buffers at 100 Hz
each leave the server as they found it, with no system-heap operation or
system call on the audio thread."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from soak import soak  # noqa: E402


def test_four_busy_clients_leave_no_trace(driver):
    result = soak(driver, seconds=10)
    assert result.commands > 2000, result
    assert result.problems == [], result
