"""Small UGen plugins built from C++ for the tests, with the plugin interface headers of
SuperCollider 3.13 (Debian: supercollider-dev), so scsynth and magnetar load the same `.so`.

Each source here is one plugin library: ``build(tmp_dir, "AsyncProbe")`` compiles
``AsyncProbe.cpp`` into ``tmp_dir/AsyncProbe.so`` (pass ``tmp_dir`` to a server with ``-U``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADERS = Path("/usr/include/SuperCollider")


def missing() -> str | None:
    """Why probes cannot be built here, or None."""
    if shutil.which("c++") is None:
        return "no C++ compiler (c++)"
    if not (HEADERS / "plugin_interface" / "SC_PlugIn.h").exists():
        return "no SuperCollider plugin headers (supercollider-dev, scripts/setup.sh)"
    return None


def build(out_dir: Path, *names: str) -> Path:
    """Compiles each named probe into ``out_dir``; returns ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        subprocess.run(
            [
                "c++", "-std=c++17", "-O1", "-shared", "-fPIC",
                f"-I{HEADERS / 'plugin_interface'}", f"-I{HEADERS / 'common'}",
                "-o", str(out_dir / f"{name}.so"), str(HERE / f"{name}.cpp"),
            ],
            check=True,
        )
    return out_dir
