"""pytest plugin: what the end-to-end suite sends to the servers is saved,
one file per test and transport, as a stream of length-prefixed packets
(the `commands` and `tcp_stream` targets' format), into $CAPTURE_DIR.
supriya's own Server objects are captured too, at the socket.

    CAPTURE_DIR=/tmp/sessions python3 -m pytest tests/e2e -q -p capture_sessions
"""

import hashlib
import os
import socket
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ["CAPTURE_DIR"])
_current: list[bytes] = []


def _record(data: bytes) -> None:
    _current.append(struct.pack(">i", len(data)) + bytes(data))


def pytest_configure(config):
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    import rtserver

    OUT.mkdir(parents=True, exist_ok=True)
    plain_send_raw = rtserver.OscClient.send_raw

    def send_raw(self, data):
        if self.protocol == "tcp":  # UDP is caught at sendto below
            _record(data)
        return plain_send_raw(self, data)

    rtserver.OscClient.send_raw = send_raw

    # supriya's clients send with sendto on a UDP socket of their own.
    plain_sendto = socket.socket.sendto

    def sendto(self, data, *args):
        addr = args[-1]
        if isinstance(addr, tuple) and addr[0] in ("127.0.0.1", "localhost") and self.type == socket.SOCK_DGRAM:
            _record(data)
        return plain_sendto(self, data, *args)

    socket.socket.sendto = sendto


def pytest_runtest_teardown(item):
    if _current:
        data = b"".join(_current)
        (OUT / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)
        _current.clear()
