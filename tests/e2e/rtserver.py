"""Boot real-time servers (scsynth or magnetar) and talk raw OSC to them over UDP or TCP.

Used by the end-to-end tests in this directory and by ``bench/rt_bench.py``.  Both servers are
started the same way (same flags, same JACK server), so a test that passes against scsynth pins
down the behaviour magnetar has to mirror.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from supriya.osc import OscBundle, OscMessage

ROOT = Path(__file__).resolve().parents[2]
SCSYNTH = os.environ.get("SCSYNTH", shutil.which("scsynth") or "/usr/bin/scsynth")
MAGNETAR = os.environ.get("MAGNETAR", str(ROOT / "target" / "release" / "magnetar"))
READY_LINE = "SuperCollider 3 server ready."
# supernova announces itself differently (benchmarks boot it too).
READY_LINES = (READY_LINE, "Supernova ready")
BOOT_TIMEOUT = 10.0

# Seconds between 1900-01-01 (OSC/NTP epoch) and 1970-01-01 (Unix epoch).
NTP_DELTA = 2208988800


def executables() -> dict[str, str]:
    return {"scsynth": SCSYNTH, "magnetar": MAGNETAR}


# ---------------------------------------------------------------------------------------------
# JACK dummy backend
# ---------------------------------------------------------------------------------------------

# libjack binds a client's notification socket at /dev/shm/jack_<client name>_<uid>_0 while the
# client opens, whatever JACK server it opens on.  Two test processes opening a client of the
# same name at the same moment (each on its own JACK server) take that path from each other,
# and both boots fail ("Cannot open SuperCollider client", "couldn't open a client").  So the
# servers this process boots name their client after the process (-H server:client).
JACK_CLIENT = f"SuperCollider-{os.getpid()}"


def jack_device(env: dict[str, str] | None = None, client: str = JACK_CLIENT) -> str | None:
    """The -H value for a server started with ``env`` (default: ours): JACK_DEFAULT_SERVER's
    server and a client name of this process's own; None without a named JACK server."""
    server = (os.environ if env is None else env).get("JACK_DEFAULT_SERVER")
    return f"{server}:{client}" if server else None



class JackDummy:
    """A private ``jackd -d dummy`` that both servers connect to (by server name)."""

    def __init__(self, rate: int = 48000, period: int = 256):
        self.name = f"magnetar-e2e-{os.getpid()}"
        self.rate = rate
        self.period = period
        self.proc: subprocess.Popen | None = None
        self.log = tempfile.NamedTemporaryFile(prefix="jackd-", suffix=".log", delete=False)

    def env(self) -> dict[str, str]:
        """Environment for server processes: talk to this JACK server, never autostart one."""
        env = dict(os.environ)
        env["JACK_DEFAULT_SERVER"] = self.name
        env["JACK_NO_START_SERVER"] = "1"
        return env

    def start(self) -> "JackDummy":
        jackd = shutil.which("jackd")
        if jackd is None:
            raise RuntimeError("jackd is not installed")
        self.proc = subprocess.Popen(
            [jackd, "-n", self.name, "-d", "dummy", "-r", str(self.rate), "-p", str(self.period)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        # jackd2 creates its server socket in /dev/shm once it accepts clients.
        sock = Path(f"/dev/shm/jack_{self.name}_{os.getuid()}_0")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jackd exited: {Path(self.log.name).read_text()}")
            if sock.exists():
                time.sleep(0.1)
                return self
            time.sleep(0.05)
        raise RuntimeError(f"jackd not ready after 10 s: {Path(self.log.name).read_text()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None


# ---------------------------------------------------------------------------------------------
# Server process
# ---------------------------------------------------------------------------------------------


class BootError(RuntimeError):
    pass


def free_port() -> int:
    """A port number free for both UDP and TCP on 127.0.0.1 right now."""
    for _ in range(50):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            t.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            t.close()
            u.close()
        return port
    raise RuntimeError("no free port")


class ServerProcess:
    """One booted server.  ``output`` collects everything it printed."""

    def __init__(
        self,
        executable: str,
        port: int | None = None,
        protocol: str = "udp",
        extra: Iterable[str] = (),
        env: dict[str, str] | None = None,
    ):
        self.executable = executable
        # A port picked here may be taken by someone else before the server
        # binds it; only such a port is picked again (see `start`).
        self.port_picked = port is None
        self.port = port or free_port()
        self.protocol = protocol
        self.extra = list(extra)
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []
        self.ready = threading.Event()
        self._reader: threading.Thread | None = None
        # Clients to close only after the server is gone (see test_tcp_password_is_required_first).
        self.close_after_stop: list = []

    @property
    def args(self) -> list[str]:
        flag = "-u" if self.protocol == "udp" else "-t"
        device = []
        if "-H" not in self.extra and Path(self.executable).name != "supernova":
            named = jack_device(self.env)
            if named is not None:
                device = ["-H", named]
        return [
            self.executable, flag, str(self.port),
            "-R", "0", "-D", "0", "-i", "2", "-o", "2", *device, *self.extra,
        ]

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = BOOT_TIMEOUT) -> "ServerProcess":
        # On a loaded machine the JACK server sometimes refuses a new client
        # for a moment (scsynth and magnetar alike), and a port found free may
        # be taken (by a client socket of a parallel test) before the server
        # binds it; neither says anything about the server under test, so
        # such a boot is tried again, on a new port for the second.  The pause
        # is random so that two processes that failed together do not retry
        # together.
        attempts = 4
        for attempt in range(attempts):
            try:
                return self._start_once(timeout)
            except BootError as e:
                port_taken = self.port_picked and "Address already in use" in str(e)
                transient = port_taken or "couldn't open a client" in str(e) or "Cannot open SuperCollider client" in str(e)
                if not transient or attempt == attempts - 1:
                    raise
                if port_taken:
                    self.port = free_port()
                self.lines.clear()
                self.ready.clear()
                time.sleep(random.uniform(0.2, 1.2))
        raise AssertionError("unreachable")

    def _start_once(self, timeout: float) -> "ServerProcess":
        if not (os.path.isfile(self.executable) and os.access(self.executable, os.X_OK)):
            raise BootError(f"server executable {self.executable!r} does not exist or is not executable")
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            text=True,
            errors="replace",
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not self.ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                rc = self.proc.poll()
                self.stop()
                what = f"exited with status {rc}" if rc is not None else f"not ready after {timeout} s"
                raise BootError(
                    f"{' '.join(self.args)}: {what}; expected the line {READY_LINE!r}. "
                    f"Output:\n{self.output}"
                )
        return self

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if any(r in line for r in READY_LINES):
                self.ready.set()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout: float) -> int | None:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(3)
        if self._reader is not None:
            self._reader.join(1)
        for c in self.close_after_stop:
            c.close()
        self.close_after_stop.clear()
        # scsynth leaves a shared-memory segment named after its port behind when killed.
        try:
            os.unlink(f"/dev/shm/SuperColliderServer_{self.port}")
        except OSError:
            pass

    def __enter__(self) -> "ServerProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------------------------------------
# OSC client
# ---------------------------------------------------------------------------------------------


def decode(datagram: bytes) -> list[OscMessage]:
    """Flatten a datagram (message or nested bundles) into its messages."""
    if datagram.startswith(b"#bundle\0"):
        out: list[OscMessage] = []
        rest = datagram[16:]
        while len(rest) >= 4:
            (n,) = struct.unpack(">i", rest[:4])
            out.extend(decode(rest[4 : 4 + n]))
            rest = rest[4 + n :]
        return out
    return [OscMessage.from_datagram(datagram)]


def encode(packet) -> bytes:
    if isinstance(packet, (bytes, bytearray)):
        return bytes(packet)
    if isinstance(packet, (OscMessage, OscBundle)):
        return packet.to_datagram()
    if isinstance(packet, (list, tuple)):
        return OscMessage(*packet).to_datagram()
    raise TypeError(packet)


def bundle(timestamp: float | None, *messages) -> bytes:
    """A bundle; ``timestamp`` is Unix time in seconds (None: immediately)."""
    contents = [m if isinstance(m, OscMessage) else OscMessage(*m) for m in messages]
    return OscBundle(timestamp=timestamp, contents=contents).to_datagram()


class Received:
    """A reply with its arrival time (monotonic clock and wall clock)."""

    __slots__ = ("time", "wall", "message")

    def __init__(self, t: float, wall: float, message: OscMessage):
        self.time = t
        self.wall = wall
        self.message = message


class OscClient:
    """A UDP or TCP OSC client that records every reply with its arrival time."""

    def __init__(self, port: int, protocol: str = "udp", host: str = "127.0.0.1"):
        self.addr = (host, port)
        self.protocol = protocol
        if protocol == "udp":
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.bind(("127.0.0.1", 0))
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        else:
            self.sock = socket.create_connection(self.addr, timeout=5)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # A short timeout lets close() stop the receiver without waiting for a packet.
        self.sock.settimeout(0.05)
        self._stop = False
        self.inbox: list[Received] = []
        self.undecodable: list[bytes] = []
        self.closed = threading.Event()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._recv_loop, daemon=True)
        self._thread.start()

    # -- sending ------------------------------------------------------------------------------

    def send(self, *packet) -> None:
        """send(OscMessage) / send(bytes) / send("/addr", arg, ...)"""
        data = encode(packet[0]) if len(packet) == 1 and not isinstance(packet[0], str) else encode(packet)
        self.send_raw(data)

    def send_raw(self, data: bytes) -> None:
        if self.protocol == "udp":
            self.sock.sendto(data, self.addr)
        else:
            self.sock.sendall(struct.pack(">i", len(data)) + data)

    # -- receiving ----------------------------------------------------------------------------

    def _recv_loop(self) -> None:
        buf = b""
        while not self._stop:
            try:
                if self.protocol == "udp":
                    data, _ = self.sock.recvfrom(1 << 16)
                    packets = [data]
                else:
                    chunk = self.sock.recv(1 << 16)
                    if not chunk:
                        break
                    buf += chunk
                    packets = []
                    while len(buf) >= 4:
                        (n,) = struct.unpack(">i", buf[:4])
                        if len(buf) < 4 + n:
                            break
                        packets.append(buf[4 : 4 + n])
                        buf = buf[4 + n :]
            except socket.timeout:
                continue
            except OSError:
                break
            now, wall = time.monotonic(), time.time()
            for p in packets:
                try:
                    msgs = decode(p)
                except Exception:
                    self.undecodable.append(p)
                    continue
                with self._cond:
                    self.inbox.extend(Received(now, wall, m) for m in msgs)
                    self._cond.notify_all()
        self.closed.set()
        with self._cond:
            self._cond.notify_all()

    def wait_for(
        self,
        address: str | Iterable[str],
        predicate: Callable[[OscMessage], bool] | None = None,
        timeout: float = 2.0,
    ) -> OscMessage:
        """Remove and return the first reply with this address (matching predicate)."""
        r = self.wait_received(address, predicate, timeout)
        return r.message

    def wait_received(self, address, predicate=None, timeout: float = 2.0) -> Received:
        addresses = {address} if isinstance(address, str) else set(address)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i, r in enumerate(self.inbox):
                    if r.message.address in addresses and (predicate is None or predicate(r.message)):
                        del self.inbox[i]
                        return r
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [x.message for x in self.inbox]
                    raise TimeoutError(f"no {sorted(addresses)} reply within {timeout} s; inbox: {seen}")
                self._cond.wait(left)

    def maybe(self, address, predicate=None, timeout: float = 0.3) -> OscMessage | None:
        try:
            return self.wait_for(address, predicate, timeout)
        except TimeoutError:
            return None

    def request(self, message, reply: str | Iterable[str], predicate=None, timeout: float = 2.0) -> OscMessage:
        self.send(message)
        return self.wait_for(reply, predicate, timeout)

    def messages(self, address: str | None = None) -> list[OscMessage]:
        with self._cond:
            return [r.message for r in self.inbox if address is None or r.message.address == address]

    def clear(self) -> None:
        with self._cond:
            self.inbox.clear()

    _sync_id = 1000

    def sync(self, timeout: float = 3.0) -> None:
        OscClient._sync_id += 1
        sid = OscClient._sync_id
        self.send(OscMessage("/sync", sid))
        self.wait_for("/synced", lambda m: m.contents[0] == sid, timeout)

    def status(self, timeout: float = 2.0) -> OscMessage:
        return self.request(OscMessage("/status"), "/status.reply", timeout=timeout)

    def close(self) -> None:
        self._stop = True
        try:
            if self.protocol == "tcp":
                self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(1)
        self.sock.close()

    def __enter__(self) -> "OscClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# SynthDefs used by the tests and the benchmark
# ---------------------------------------------------------------------------------------------


def synthdefs():
    """name → SynthDef.  Built with supriya so the bytes are what a supriya user sends."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    defs = {}
    with SynthDefBuilder(freq=440.0, amp=0.0, out=0.0) as b:
        U.Out.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * b["amp"])
    defs["e2e_sine"] = b.build(name="e2e_sine")

    with SynthDefBuilder(id=7.0, value=0.5, rate=20.0) as b:
        U.SendTrig.kr(trigger=U.Impulse.kr(frequency=b["rate"]), id_=b["id"], value=b["value"])
    defs["e2e_trig"] = b.build(name="e2e_trig")

    with SynthDefBuilder(dur=0.05) as b:
        U.Out.kr(bus=0, source=U.Line.kr(start=0, stop=1, duration=b["dur"], done_action=2))
    defs["e2e_short"] = b.build(name="e2e_short")

    with SynthDefBuilder(bus=0.0, value=0.25) as b:
        U.ReplaceOut.kr(bus=b["bus"], source=U.DC.kr(source=b["value"]))
    defs["e2e_dc"] = b.build(name="e2e_dc")

    # Steps through 1, 2, 3, 4 (a demand-rate pattern), each held for `dur`, then ends itself.
    with SynthDefBuilder(bus=0.0, dur=0.1) as b:
        steps = U.Dseq.dr(sequence=[1.0, 2.0, 3.0, 4.0], repeats=1)
        U.Out.kr(bus=b["bus"], source=U.Duty.kr(duration=b["dur"], level=steps, done_action=2))
    defs["e2e_steps"] = b.build(name="e2e_steps")

    # Polls a value (labelled "DC") 20 times a second, also as /tr with id 9.
    with SynthDefBuilder(value=0.25) as b:
        U.Poll.kr(trigger=U.Impulse.kr(frequency=20.0), source=U.DC.kr(source=b["value"]), trigger_id=9)
    defs["e2e_poll"] = b.build(name="e2e_poll")

    # A one-second delay line in a buffer of the synth's own, fed by a tone; writes its
    # delayed output to control bus `bus` (silent for the first second).
    with SynthDefBuilder(bus=0.0) as b:
        line = U.LocalBuf.ir(channel_count=1, frame_count=48000)
        delayed = U.BufDelayN.ar(buffer_id=line, source=U.DC.ar(source=0.5), delay_time=0.2)
        U.Out.kr(bus=b["bus"], source=U.A2K.kr(source=delayed))
    defs["e2e_local_delay"] = b.build(name="e2e_local_delay")
    return defs


def synthdef_bytes(*names: str) -> bytes:
    from supriya.ugens import compile_synthdefs

    defs = synthdefs()
    return compile_synthdefs(*(defs[n] for n in names))


def ugen_count(name: str) -> int:
    return len(synthdefs()[name].ugens)
