import sys
from pathlib import Path

# Let test modules import the helpers in tests/compat as plain modules.
sys.path.insert(0, str(Path(__file__).resolve().parent / "compat"))


def _sweep_server_segments(min_age: float) -> None:
    """Removes `SuperColliderServer_<port>` segments in /dev/shm that no process maps: what
    servers killed by a signal (here or in an interrupted earlier run) left behind. A server
    maps its segment as soon as it creates it, and a segment younger than `min_age` seconds is
    kept in case its server is just starting."""
    import glob
    import os
    import time

    segments = glob.glob("/dev/shm/SuperColliderServer_*")
    if not segments:
        return
    mapped = set()
    for maps in glob.glob("/proc/[0-9]*/maps"):
        try:
            with open(maps) as f:
                mapped.update(line.split()[-1] for line in f if "SuperColliderServer_" in line)
        except OSError:
            pass
    now = time.time()
    for path in segments:
        try:
            if path not in mapped and now - os.stat(path).st_mtime >= min_age:
                os.unlink(path)
        except OSError:
            pass


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):
        _sweep_server_segments(min_age=60.0)


def pytest_sessionfinish(session, exitstatus):
    if not hasattr(session.config, "workerinput"):
        _sweep_server_segments(min_age=10.0)
