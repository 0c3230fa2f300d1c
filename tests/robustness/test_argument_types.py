"""Every command with a value of every OSC type in every argument position:
magnetar answers or reports each (scsynth's argument reader takes a number of
any width, and the default for a value that is not a number), and keeps
answering `/status` afterwards, in real time on both drivers and in NRT."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

from nrt import build, compile_synthdefs, magnetar_binary, osc_bundle  # noqa: E402
from supriya import ugens as U  # noqa: E402


class Typed:
    """An OSC argument given by its type tag and encoded payload."""

    def __init__(self, tag: str, payload: bytes = b"", label: str = ""):
        self.tag, self.payload, self.label = tag, payload, label or tag

    def __repr__(self) -> str:
        return self.label


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (4 - len(data) % 4)


def encode(address: str, *args) -> bytes:
    tags, body = "", b""
    for a in args:
        if isinstance(a, Typed):
            tags += a.tag
            body += a.payload
        elif isinstance(a, int):
            tags += "i"
            body += struct.pack(">i", a)
        elif isinstance(a, float):
            tags += "f"
            body += struct.pack(">f", a)
        elif isinstance(a, str):
            tags += "s"
            body += _pad(a.encode())
        elif isinstance(a, bytes):
            tags += "b"
            body += struct.pack(">i", len(a)) + a + b"\0" * ((-len(a)) % 4)
        else:
            raise TypeError(a)
    return _pad(address.encode()) + _pad(("," + tags).encode()) + body


# The values a careless or hostile client puts where a number belongs.
BAD_VALUES = [
    Typed("b", struct.pack(">i", 3) + b"\x01\x02\x03\0", "blob"),
    Typed("s", _pad(b"not a number"), "string"),
    Typed("N", label="nil"),
    Typed("T", label="true"),
    Typed("F", label="false"),
    Typed("h", struct.pack(">q", 2**40 + 1), "int64"),
    Typed("h", struct.pack(">q", -(2**62)), "int64-negative"),
    Typed("d", struct.pack(">d", 2.5), "double"),
    Typed("d", struct.pack(">d", 1e300), "double-huge"),
    Typed("f", struct.pack(">f", float("nan")), "nan"),
    Typed("i", struct.pack(">i", -(2**31)), "int-min"),
    Typed("[]", label="empty-array"),
]


def tone_def():
    def body(b):
        U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=b["freq"]) * 0.01 * b["gate"])

    return build("tone", body, freq=440.0, gate=1.0)


def commands(work: Path, defs: bytes) -> list[tuple]:
    """Each command with valid arguments, against the state `setup` makes."""
    snd = str(work / "in.wav")
    return [
        ("/s_new", "tone", 2000, 0, 1, "freq", 300.0),
        ("/g_new", 2001, 0, 1),
        ("/p_new", 2002, 0, 1),
        ("/n_run", 1000, 1),
        ("/n_set", 1000, "freq", 300.0),
        ("/n_setn", 1000, "freq", 1, 300.0),
        ("/n_fill", 1000, "freq", 1, 300.0),
        ("/n_map", 1000, "freq", 0),
        ("/n_mapn", 1000, "freq", 0, 1),
        ("/n_mapa", 1000, "freq", 0),
        ("/n_mapan", 1000, "freq", 0, 1),
        ("/n_before", 2, 1),
        ("/n_after", 2, 1),
        ("/n_order", 0, 1, 2),
        ("/g_head", 1, 1000),
        ("/g_tail", 1, 1000),
        ("/n_query", 1000),
        ("/n_trace", 1000),
        ("/s_get", 1000, "freq"),
        ("/s_getn", 1000, "freq", 1),
        ("/g_queryTree", 0, 1),
        ("/g_dumpTree", 2, 0),
        ("/c_set", 0, 1.0),
        ("/c_setn", 0, 1, 1.0),
        ("/c_fill", 0, 1, 1.0),
        ("/c_get", 0),
        ("/c_getn", 0, 1),
        ("/b_alloc", 3, 64, 1),
        ("/b_allocRead", 4, snd, 0, -1),
        ("/b_allocReadChannel", 4, snd, 0, -1, 0),
        ("/b_read", 0, snd, 0, -1, 0, 0),
        ("/b_readChannel", 0, snd, 0, -1, 0, 0, 0),
        ("/b_write", 0, str(work / "out.wav"), "wav", "float", -1, 0, 0),
        ("/b_close", 0),
        ("/b_zero", 1),
        ("/b_set", 1, 0, 1.0),
        ("/b_setn", 1, 0, 1, 1.0),
        ("/b_fill", 1, 0, 1, 1.0),
        ("/b_gen", 1, "sine1", 7, 1.0),
        ("/b_setSampleRate", 1, 44100.0),
        ("/b_query", 1),
        ("/b_get", 1, 0),
        ("/b_getn", 1, 0, 1),
        ("/b_free", 3),
        ("/d_recv", defs),
        ("/d_load", str(work / "none.scsyndef")),
        ("/d_loadDir", str(work / "nodefs")),
        ("/d_free", "nodef"),
        ("/s_noid", 2000),
        ("/g_freeAll", 2),
        ("/g_deepFree", 2),
        ("/n_free", 2001),
        ("/status",),
        ("/sync", 7),
        ("/version",),
        ("/rtMemoryStatus",),
        ("/clearSched",),
        ("/error", 1),
        ("/cmd", "nothing"),
        ("/u_cmd", 1000, 0, "nothing"),
        ("/n_cmd", 1000, "nothing"),
        ("/notify", 1),
        ("/dumpOSC", 0),
    ]


def variants(cmd: tuple):
    """The command with each bad value in each position (and one past the end)."""
    address, args = cmd[0], list(cmd[1:])
    for pos in range(len(args) + 1):
        for bad in BAD_VALUES:
            yield encode(address, *args[:pos], bad, *args[pos + 1 :])


def setup(defs: bytes) -> list[bytes]:
    return [
        encode("/d_recv", defs),
        encode("/g_new", 1, 0, 0),
        encode("/g_new", 2, 3, 1),
        encode("/s_new", "tone", 1000, 0, 1),
        encode("/b_alloc", 0, 64, 1),
        encode("/b_alloc", 1, 64, 1),
    ]


@pytest.fixture
def work(tmp_path):
    soundfile.write(str(tmp_path / "in.wav"), np.linspace(-0.5, 0.5, 128, dtype=np.float32), 48000)
    (tmp_path / "nodefs").mkdir()
    return tmp_path


def defs_blob() -> bytes:
    return compile_synthdefs(tone_def())


def test_every_type_in_every_position_in_real_time(magnetar, work):
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from rtserver import OscClient

    # Files the commands create (a string where a path belongs) stay in `work`.
    server = magnetar(extra=("-P", str(work)))
    client = OscClient(server.port)
    defs = defs_blob()
    try:
        client.request(encode("/notify", 1), "/done", timeout=3)
        for packet in setup(defs):
            client.send_raw(packet)
        client.request(encode("/sync", 1), "/synced", timeout=3)
        for cmd in commands(work, defs):
            for packet in variants(cmd):
                client.send_raw(packet)
            # Failures and replies may come; the server must still answer.
            client.request(encode("/sync", 2), "/synced", timeout=5)
            reply = client.request(encode("/status"), "/status.reply", timeout=3)
            assert server.alive(), f"server died after {cmd[0]}"
            assert reply.contents[0] == 1
            # Put back what the command may have taken away.
            client.send_raw(encode("/notify", 1))
            for packet in setup(defs):
                client.send_raw(packet)
            client.clear()
        assert "panicked" not in server.output
    finally:
        client.close()


def test_every_type_in_every_position_in_nrt(work):
    defs = defs_blob()
    packets = [osc_bundle(0.0, setup(defs))]
    t = 0.0
    for cmd in commands(work, defs):
        if cmd[0] in ("/notify", "/dumpOSC"):
            continue
        for packet in variants(cmd):
            t += 0.001
            packets.append(osc_bundle(t, [packet]))
        t += 0.001
        packets.append(osc_bundle(t, setup(defs)))
    end = t + 0.01
    packets.append(osc_bundle(end, [encode("/c_set", 0, 0.0)]))
    score = work / "score.osc"
    score.write_bytes(b"".join(struct.pack(">i", len(p)) + p for p in packets))
    out = work / "render.wav"
    proc = subprocess.run(
        [magnetar_binary(), "-o", "2", "-N", str(score), "_", str(out), "48000", "WAV", "float"],
        capture_output=True, text=True, errors="replace", timeout=300, cwd=work,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "panicked" not in proc.stderr
    assert soundfile.info(str(out)).frames >= int(end * 48000) - 64


def test_dump_osc_prints_control_bytes_escaped(magnetar):
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from rtserver import OscClient

    server = magnetar()
    client = OscClient(server.port)
    try:
        client.send_raw(encode("/dumpOSC", 1))
        client.send_raw(encode("/no_such\x1b[2J\x07", "x\x1b]0;title\x07"))
        client.request(encode("/sync", 1), "/synced", timeout=3)
        client.send_raw(encode("/dumpOSC", 0))
        client.request(encode("/sync", 2), "/synced", timeout=3)
        dumped = [line for line in server.lines if "no_such" in line]
        assert dumped, server.output[-2000:]
        assert not any("\x1b" in line or "\x07" in line for line in server.lines), dumped
    finally:
        client.close()
