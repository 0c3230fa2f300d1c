"""Security defaults, as scsynth's or safer: the sockets listen on 127.0.0.1
unless `-B` says otherwise; `-P` holds for every command that names a file
(buffers, cues, SynthDef files and directories, in real time and in a score),
symlinks leading out included; with `-p` a TCP client gets nothing done before
it sends the password; one client cannot take the others' connections or
starve them with a flood or an oversized frame."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile
from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "realtime"))

from nrt import compile_synthdefs, magnetar_binary, osc_bundle, osc_message  # noqa: E402
from rtcheck import boot_magnetar, quit_server  # noqa: E402
from rtserver import OscClient, free_port  # noqa: E402


def dc_def(name: str, value: float):
    with SynthDefBuilder() as b:
        U.Out.kr(bus=0, source=U.DC.kr(source=value))
    return b.build(name=name)


@pytest.fixture
def clock_server():
    """magnetar on its clock driver (the network layer is the same on every driver)."""
    started = []

    def _boot(extra=()):
        s = boot_magnetar(None, extra=tuple(extra))
        started.append(s)
        return s

    yield _boot
    for s in started:
        quit_server(s)


def _listening_addresses(port: int) -> set[tuple[str, str]]:
    """(protocol, local address) of every socket bound to `port`, from /proc/net."""
    found = set()
    for proto in ("udp", "tcp"):
        for line in Path(f"/proc/net/{proto}").read_text().splitlines()[1:]:
            local = line.split()[1]
            addr, p = local.split(":")
            if int(p, 16) == port:
                ip = ".".join(str(b) for b in reversed(bytes.fromhex(addr)))
                found.add((proto, ip))
    return found


def test_udp_and_tcp_listen_on_loopback_unless_B_says_otherwise(clock_server):
    tcp = free_port()
    s = clock_server(["-t", str(tcp)])
    assert _listening_addresses(s.port) >= {("udp", "127.0.0.1")}
    assert ("tcp", "127.0.0.1") in _listening_addresses(tcp)
    assert not any(ip != "127.0.0.1" for _, ip in _listening_addresses(s.port) | _listening_addresses(tcp))
    tcp2 = free_port()
    s2 = clock_server(["-t", str(tcp2), "-B", "0.0.0.0"])
    assert ("udp", "0.0.0.0") in _listening_addresses(s2.port)
    assert ("tcp", "0.0.0.0") in _listening_addresses(tcp2)


@pytest.fixture
def restricted(tmp_path):
    """inside/ (the -P directory) with links leading out to outside/."""
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    data = np.linspace(-0.5, 0.5, 64, dtype=np.float32)
    soundfile.write(outside / "secret.wav", data, 48000, subtype="FLOAT")
    soundfile.write(inside / "ok.wav", data, 48000, subtype="FLOAT")
    (outside / "secret.scsyndef").write_bytes(compile_synthdefs(dc_def("secret", 7.0)))
    (inside / "fine.scsyndef").write_bytes(compile_synthdefs(dc_def("fine", 1.0)))
    os.symlink(outside / "secret.wav", inside / "link.wav")
    os.symlink(outside / "secret.scsyndef", inside / "link.scsyndef")
    os.symlink(outside, inside / "linkdir")
    # A link back up the tree: a directory walk that followed it would never end.
    os.symlink(inside, inside / "loop")
    return inside, outside


def _answer(c: OscClient, command: str) -> M:
    return c.wait_for(["/done", "/fail"], lambda m: m.contents[0] == command, timeout=5)


def test_P_holds_for_every_command_that_names_a_file(clock_server, restricted):
    inside, outside = restricted
    s = clock_server(["-P", str(inside)])
    with OscClient(s.port) as c:
        refused_reads = [
            M("/b_allocRead", 0, "link.wav"),
            M("/b_allocReadChannel", 0, "link.wav", 0, -1, 0),
            M("/b_allocRead", 0, str(outside / "secret.wav")),
            M("/b_allocRead", 0, "linkdir/secret.wav"),
        ]
        for m in refused_reads:
            c.send(m)
            got = _answer(c, m.address)
            assert got.address == "/fail" and "restricted path" in got.contents[1], (m, got)
            assert c.request(M("/b_query", 0), "/b_info").contents[1] == 0, m
        c.send(M("/b_alloc", 1, 64, 1))
        _answer(c, "/b_alloc")
        for m in [
            M("/b_read", 1, "link.wav", 0, -1, 0, 0),
            M("/b_readChannel", 1, "link.wav", 0, -1, 0, 0, 0),
            # A cue (cueSoundFile): /b_read leaving the file open.
            M("/b_read", 1, "link.wav", 0, 64, 0, 1),
            M("/b_write", 1, "linkdir/written.wav", "wav", "float"),
            M("/b_write", 1, "../outside/written.wav", "wav", "float"),
            M("/b_write", 1, str(outside / "written.wav"), "wav", "float"),
        ]:
            c.send(m)
            got = _answer(c, m.address)
            assert got.address == "/fail" and "restricted path" in got.contents[1], (m, got)
        assert not (outside / "written.wav").exists()
        assert c.request(M("/b_get", 1, 5), "/b_set").contents[2] == 0.0
        for m in [M("/d_load", "link.scsyndef"), M("/d_load", str(outside / "*.scsyndef")), M("/d_load", "../outside/secret.scsyndef")]:
            c.send(m)
            got = _answer(c, "/d_load")
            assert got.address == "/fail" and "restricted path" in got.contents[1], (m, got)
        # A pattern inside loads what lies inside and refuses the link out.
        c.send(M("/d_load", "*.scsyndef"))
        got = _answer(c, "/d_load")
        assert got.address == "/fail" and "link.scsyndef" in got.contents[1], got
        # A directory walk neither follows the link out nor loops on the link back.
        c.send(M("/d_loadDir", "."))
        _answer(c, "/d_loadDir")
        c.send(M("/d_loadDir", "linkdir"))
        got = _answer(c, "/d_loadDir")
        assert got.address == "/fail", got
        c.send(M("/s_new", "fine", 1000, 0, 0))
        c.send(M("/s_new", "secret", 1001, 0, 0))
        assert c.wait_for("/fail", lambda m: m.contents[0] == "/s_new", timeout=3).contents[1] == "SynthDef not found"
        assert c.request(M("/status"), "/status.reply").contents[2] == 1
        # Inside, everything works.
        c.send(M("/b_allocRead", 2, "ok.wav"))
        assert _answer(c, "/b_allocRead").address == "/done"
        assert c.request(M("/b_query", 2), "/b_info").contents[1] == 64


def test_P_holds_for_a_score_too(tmp_path, restricted):
    inside, outside = restricted
    score = b""
    for t, msgs in [
        (0.0, [osc_message("/b_alloc", 0, 64, 1), osc_message("/b_allocRead", 1, "link.wav")]),
        (0.01, [osc_message("/b_write", 0, str(outside / "nrt.wav"), "wav", "float"),
                osc_message("/b_write", 0, "linkdir/nrt2.wav", "wav", "float"),
                osc_message("/b_write", 0, "nrt-inside.wav", "wav", "float"),
                osc_message("/d_load", "link.scsyndef")]),
        (0.02, [osc_message("/c_set", 0, 0.0)]),
    ]:
        b = osc_bundle(t, msgs)
        score += struct.pack(">i", len(b)) + b
    (tmp_path / "score.osc").write_bytes(score)
    proc = subprocess.run(
        [magnetar_binary(), "-P", str(inside), "-o", "1", "-N", str(tmp_path / "score.osc"), "_",
         str(tmp_path / "out.wav"), "48000", "WAV", "float"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (outside / "nrt.wav").exists() and not (outside / "nrt2.wav").exists()
    assert (inside / "nrt-inside.wav").exists()
    assert proc.stderr.count("restricted path") == 4, proc.stderr


def _frame(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def test_with_p_a_tcp_client_gets_nothing_done_before_the_password(clock_server):
    tcp = free_port()
    s = clock_server(["-t", str(tcp), "-p", "s3cret"])
    with socket.create_connection(("127.0.0.1", tcp), timeout=5) as sock:
        # A command first is a wrong password: not performed.
        sock.sendall(_frame(M("/c_set", 5, 42.0).to_datagram()))
        sock.sendall(_frame(b"s3cret\0\0"))
        sock.sendall(_frame(M("/c_get", 5).to_datagram()))
        sock.settimeout(5)
        header = sock.recv(4, socket.MSG_WAITALL)
        (n,) = struct.unpack(">i", header)
        reply = M.from_datagram(sock.recv(n, socket.MSG_WAITALL))
        assert reply.address == "/c_set" and reply.contents == (5, 0.0)
    # The password guards TCP only, as in scsynth: UDP is for loopback clients.
    with OscClient(s.port) as c:
        assert c.request(M("/c_get", 5), "/c_set").contents == (5, 0.0)


def test_connections_beyond_l_are_refused_and_the_others_go_on(clock_server):
    tcp = free_port()
    clock_server(["-t", str(tcp), "-l", "2"])
    a, b = OscClient(tcp, protocol="tcp"), OscClient(tcp, protocol="tcp")
    try:
        assert a.status().contents[3] >= 1 and b.status().contents[3] >= 1
        with socket.create_connection(("127.0.0.1", tcp), timeout=5) as third:
            third.settimeout(3)
            third.sendall(_frame(M("/status").to_datagram()))
            try:
                assert third.recv(4) == b""
            except ConnectionResetError:
                pass
        assert a.status().contents[3] >= 1 and b.status().contents[3] >= 1
    finally:
        a.close()
        b.close()


def test_an_oversized_or_lying_frame_closes_only_its_connection(clock_server):
    tcp = free_port()
    clock_server(["-t", str(tcp)])
    with OscClient(tcp, protocol="tcp") as good:
        for length in (-4, 64 * 1024 * 1024 + 4, 2**31 - 1):
            with socket.create_connection(("127.0.0.1", tcp), timeout=5) as bad:
                bad.settimeout(3)
                bad.sendall(struct.pack(">i", length) + b"\0" * 64)
                try:
                    assert bad.recv(4) == b""
                except ConnectionResetError:
                    pass
            assert good.status().contents[3] >= 1


def test_a_flood_from_some_clients_does_not_starve_another(clock_server):
    tcp = free_port()
    s = clock_server(["-t", str(tcp)])
    stop = threading.Event()
    flood = M("/c_set", 10, 1.0).to_datagram()

    def tcp_flood():
        with socket.create_connection(("127.0.0.1", tcp), timeout=5) as sock:
            sock.settimeout(1)
            data = _frame(flood) * 256
            while not stop.is_set():
                try:
                    sock.sendall(data)
                except (socket.timeout, OSError):
                    pass

    def udp_flood():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            while not stop.is_set():
                for _ in range(256):
                    sock.sendto(flood, ("127.0.0.1", s.port))

    threads = [threading.Thread(target=f, daemon=True) for f in (tcp_flood, tcp_flood, tcp_flood, udp_flood)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        with OscClient(tcp, protocol="tcp") as c:
            worst = 0.0
            for k in range(20):
                t0 = time.monotonic()
                c.request(M("/sync", 100 + k), "/synced", timeout=5)
                worst = max(worst, time.monotonic() - t0)
        assert worst < 2.0, f"a /sync took {worst:.2f} s under the flood"
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
