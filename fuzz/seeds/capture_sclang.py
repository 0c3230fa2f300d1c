#!/usr/bin/env python3
"""Records what sclang sends to a server in the sclang session of tests/sclang (the Server
class booting, notifications, SynthDefs, patterns, Ndef, buffers, scope, recording, quit...):
the session runs against magnetar started under strace, which logs every datagram the server
receives; the datagrams become one stream of length-prefixed packets (capture_sessions.py's
format) in OUT_DIR, for make_seeds.py.

    python3 fuzz/seeds/capture_sclang.py OUT_DIR
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sclang"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from rtserver import MAGNETAR, JackDummy  # noqa: E402
from test_sclang_session import run_session  # noqa: E402

# recvfrom(fd, "\x2f\x73...", size, flags, {sa_family=AF_INET, ...}, [len]) = n
RECV = re.compile(r'recvfrom\(\d+, "((?:\\x[0-9a-f]{2})*)"(\.\.\.)?, \d+, [^\n]*\) = (\d+)$', re.M)


def datagrams(trace: str) -> list[bytes]:
    out = []
    for m in RECV.finditer(trace):
        data = bytes.fromhex(m[1].replace("\\x", ""))
        if m[2] is None and len(data) == int(m[3]) and data:
            out.append(data)
    return out


def main(out_dir: Path) -> int:
    strace = shutil.which("strace")
    if strace is None:
        print("strace is not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as t:
        work = Path(os.environ.get("CAPTURE_WORKDIR", t))
        wrapper = work / "magnetar-traced"
        wrapper.write_text(
            f'#!/bin/sh\nexec {strace} -f -qq -e trace=recvfrom -xx -s 1048576 -o {work}/trace-$$ {MAGNETAR} "$@"\n'
        )
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
        jack = JackDummy()
        jack.name = f"magnetar-sclang-capture-{os.getpid()}"
        jack.start()
        try:
            session = run_session("magnetar", str(wrapper), jack, work)
        finally:
            jack.stop()
            Path(f"/dev/shm/SuperColliderServer_{session.port}").unlink(missing_ok=True)
        # One trace per server the session booted (sclang may boot it more than once), in order.
        traces = sorted(work.glob("trace-*"), key=lambda p: p.stat().st_mtime)
        packets = [d for p in traces for d in datagrams(p.read_text(errors="replace"))]
    if not packets:
        print("no datagrams recorded", file=sys.stderr)
        return 1
    stream = b"".join(struct.pack(">i", len(p)) + p for p in packets)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = "sclang-" + hashlib.sha1(stream).hexdigest()[:16]
    (out_dir / name).write_bytes(stream)
    steps = [s for s in session.steps if s != "startup"]
    print(f"{len(packets)} packets, {len(stream)} bytes -> {out_dir / name}; steps {steps}, sclang exit {session.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
