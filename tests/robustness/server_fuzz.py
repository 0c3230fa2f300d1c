"""A server-level fuzzer: a running magnetar is driven with mutated real
sessions (the packet streams in fuzz/corpus/commands, captured from the
compatibility and end-to-end suites), valid and corrupted, from several UDP
and TCP clients at once. After every burst it checks that the server still
answers /status and /sync, that a synth started before the first burst is
still playing (its Sweep on a control bus keeps rising), and that the node
count and /rtMemoryStatus return to their baseline once the burst's nodes are
freed.

    python3 tests/robustness/server_fuzz.py --seconds 600 --seed 7 [--jack]

tests/robustness/test_server_fuzz.py runs it briefly on both drivers.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fuzz" / "corpus" / "commands"
sys.path.insert(0, str(ROOT / "tests" / "realtime"))
sys.path.insert(0, str(ROOT / "tests" / "compat"))

# The sentinel: a group and a synth the bursts must leave playing.
SENTINEL_GROUP = 90000
SENTINEL_SYNTH = 90001
SENTINEL_BUS = 4000
# Ids the sessions use are moved away from these.
PROTECTED_IDS = {SENTINEL_GROUP, SENTINEL_SYNTH}
NUM_BUFFERS = 64
# Address space the fuzzed server may use (see `boot`).
SERVER_ADDRESS_SPACE = 6 << 30

# Commands that would end the run or only flood the console.
DROPPED = {b"/quit", b"/dumpOSC"}
# Command numbers of the same (scsynth's table: /quit 3, /dumpOSC 39).
DROPPED_NUMBERS = {3, 39}


# ---------------------------------------------------------------------------------------------
# OSC, just enough of it
# ---------------------------------------------------------------------------------------------


def _pad(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def _s(text: str | bytes) -> bytes:
    return _pad((text.encode() if isinstance(text, str) else text) + b"\0")


def message(address: str, *args) -> bytes:
    tags, data = ",", b""
    for a in args:
        if isinstance(a, bool):
            raise TypeError(a)
        if isinstance(a, int):
            tags, data = tags + "i", data + struct.pack(">i", a)
        elif isinstance(a, float):
            tags, data = tags + "f", data + struct.pack(">f", a)
        elif isinstance(a, str):
            tags, data = tags + "s", data + _s(a)
        else:
            tags, data = tags + "b", data + struct.pack(">i", len(a)) + _pad(bytes(a))
    return _s(address) + _s(tags) + data


def bundle(*packets: bytes, time_tag: int = 1) -> bytes:
    out = b"#bundle\0" + struct.pack(">Q", time_tag)
    for p in packets:
        out += struct.pack(">i", len(p)) + p
    return out


def parse(data: bytes) -> tuple[str, list]:
    """Address and arguments of a reply (i f s b h d)."""
    end = data.index(b"\0")
    address = data[:end].decode(errors="replace")
    pos = (end + 4) & ~3
    if pos >= len(data):
        return address, []
    end = data.index(b"\0", pos)
    tags = data[pos + 1 : end].decode(errors="replace")
    pos = (end + 4) & ~3
    args: list = []
    for t in tags:
        if t == "i":
            args.append(struct.unpack_from(">i", data, pos)[0])
            pos += 4
        elif t == "f":
            args.append(struct.unpack_from(">f", data, pos)[0])
            pos += 4
        elif t in "hd":
            args.append(struct.unpack_from(">q" if t == "h" else ">d", data, pos)[0])
            pos += 8
        elif t == "s":
            end = data.index(b"\0", pos)
            args.append(data[pos:end].decode(errors="replace"))
            pos = (end + 4) & ~3
        elif t == "b":
            (n,) = struct.unpack_from(">i", data, pos)
            args.append(data[pos + 4 : pos + 4 + n])
            pos += 4 + ((n + 3) & ~3)
    return address, args


def frames(data: bytes):
    pos = 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        if n < 0 or pos + 4 + n > len(data):
            return
        yield data[pos + 4 : pos + 4 + n]
        pos += 4 + n


# ---------------------------------------------------------------------------------------------
# Sessions and their mutations
# ---------------------------------------------------------------------------------------------


def load_sessions(corpus: Path = CORPUS) -> list[list[bytes]]:
    sessions = []
    for p in sorted(corpus.iterdir()):
        packets = [f for f in frames(p.read_bytes()) if f]
        if packets:
            sessions.append(packets)
    if not sessions:
        raise RuntimeError(f"no sessions in {corpus}")
    return sessions


def _address_of(packet: bytes) -> bytes:
    return packet[: packet.find(b"\0")] if b"\0" in packet else packet


def _dropped(packet: bytes) -> bool:
    """Whether a packet (or a message inside a bundle) would stop the run."""
    if packet.startswith(b"#bundle\0"):
        return any(_dropped(p) for p in frames(packet[16:]))
    a = _address_of(packet)
    if a in DROPPED:
        return True
    if packet.startswith(b"\0") and len(packet) >= 4:
        # A command number is looked up by its low byte, as in scsynth.
        return packet[3] in DROPPED_NUMBERS
    return False


def _keep_away_from_sentinel(packet: bytes) -> bytes:
    """Rewrites int32 arguments that name the sentinel, and root-group frees."""
    out = bytearray(packet)
    for pid in PROTECTED_IDS:
        needle = struct.pack(">i", pid)
        start = 0
        while (k := out.find(needle, start)) >= 0:
            out[k : k + 4] = struct.pack(">i", pid + 17)
            start = k + 4
    for name in (b"/g_freeAll\0", b"/g_deepFree\0", b"/n_free\0"):
        k = out.find(name)
        if k >= 0:
            # Their first node argument 0 (the root, which holds the sentinel) becomes group 1.
            tags = out.find(b",", k)
            if tags >= 0:
                data = (out.find(b"\0", tags) + 4) & ~3
                if out[tags + 1 : tags + 2] == b"i" and out[data : data + 4] == b"\0\0\0\0":
                    out[data : data + 4] = struct.pack(">i", 1)
    return bytes(out)


INTERESTING_INTS = [0, 1, -1, 2, 7, 63, 64, 65, 1000, 1001, 2**31 - 1, -(2**31), 2**16, 2**24]
INTERESTING_FLOATS = [0.0, -0.0, 1e30, -1e30, float("nan"), float("inf"), 1e-40, 48000.0]


def mutate(packet: bytes, r: random.Random) -> bytes:
    """One of several corruptions: byte flips, cuts, splices, type-tag and
    argument swaps, or nothing (the valid packet)."""
    k = r.random()
    b = bytearray(packet)
    if k < 0.35 or not b:
        return packet
    if k < 0.5:
        for _ in range(r.randint(1, 4)):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
        return bytes(b)
    if k < 0.58:
        return bytes(b[: r.randrange(len(b))])
    if k < 0.68:
        # An argument word replaced with an interesting value.
        if len(b) >= 8:
            pos = r.randrange(len(b) // 4) * 4
            if r.random() < 0.5:
                b[pos : pos + 4] = struct.pack(">i", r.choice(INTERESTING_INTS))
            else:
                b[pos : pos + 4] = struct.pack(">f", r.choice(INTERESTING_FLOATS))
        return bytes(b)
    if k < 0.76:
        # A type tag changed.
        comma = b.find(b",")
        if 0 <= comma < len(b) - 1 and b[comma + 1] != 0:
            end = b.find(b"\0", comma)
            if end > comma + 1:
                b[r.randrange(comma + 1, end)] = ord(r.choice("ifsbhdtTFNIc[]"))
        return bytes(b)
    if k < 0.84:
        # Bytes repeated or inserted.
        pos = r.randrange(len(b))
        chunk = bytes(b[pos : pos + r.randint(1, 16)]) if r.random() < 0.5 else os.urandom(r.randint(1, 16))
        return bytes(b[:pos] + chunk + b[pos:])
    if k < 0.92:
        # The packet wrapped in a bundle, maybe with a time in the near future or past.
        t = 1 if r.random() < 0.5 else int((time.time() + 2208988800 + r.uniform(-1, 0.5)) * 2**32)
        return bundle(packet, time_tag=t)
    return os.urandom(r.randint(0, 64))


# ---------------------------------------------------------------------------------------------
# Clients
# ---------------------------------------------------------------------------------------------


class Control:
    """The client that checks the server between bursts (UDP)."""

    def __init__(self, port: int):
        self.port = port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        # Set when the server reports the sentinel's end (/notify is on).
        self.sentinel_ended = False

    def send(self, data: bytes) -> None:
        self.sock.sendto(data, ("127.0.0.1", self.port))

    def request(self, data: bytes, reply: str, timeout: float = 5.0, match=None) -> list | None:
        self.send(data)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                got = self.sock.recv(65536)
            except socket.timeout:
                continue
            try:
                address, args = parse(got)
            except (ValueError, struct.error):
                continue
            if address == "/n_end" and args and args[0] == SENTINEL_SYNTH:
                self.sentinel_ended = True
            if address == reply and (match is None or match(args)):
                return args
        return None

    def close(self) -> None:
        self.sock.close()


def _sender_udp(port: int, packets: list[bytes], stop: threading.Event) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        for p in packets:
            if stop.is_set():
                return
            try:
                s.sendto(p[:65000], ("127.0.0.1", port))
            except OSError:
                pass
            # Replies are read and thrown away so that the socket never fills.
            try:
                while s.recv(65536):
                    pass
            except OSError:
                pass


def _sender_tcp(port: int, packets: list[bytes], r: random.Random, stop: threading.Event) -> int:
    """Sends the packets framed; now and then a broken frame, after which the
    server closes the connection and a new one is opened. Returns the
    connections used."""
    connections = 0
    sock = None
    for p in packets:
        if stop.is_set():
            break
        if sock is None:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                sock.setblocking(False)
                connections += 1
            except OSError:
                time.sleep(0.05)
                continue
        if r.random() < 0.01:
            data = struct.pack(">i", r.choice([-4, 2**31 - 1, 1 << 28])) + p
        else:
            data = struct.pack(">i", len(p)) + p
        try:
            sock.setblocking(True)
            sock.settimeout(2)
            sock.sendall(data)
            sock.setblocking(False)
            while sock.recv(65536):
                pass
        except (BlockingIOError, socket.timeout):
            pass
        except OSError:
            sock.close()
            sock = None
    if sock is not None:
        sock.close()
    return connections


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------


@dataclass
class Report:
    bursts: int = 0
    packets: int = 0
    tcp_connections: int = 0
    sentinel_restarts: int = 0
    failures: list[str] = field(default_factory=list)
    saved: str = ""
    baseline: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)


def sentinel_def() -> bytes:
    from nrt import compile_synthdefs
    from supriya import SynthDefBuilder
    from supriya import ugens as U

    with SynthDefBuilder() as b:
        U.Out.kr(bus=SENTINEL_BUS, source=U.Sweep.kr(trigger=0, rate=1))
    return compile_synthdefs(b.build(name="fuzz_sentinel"))


class ServerFuzz:
    def __init__(self, udp_port: int, tcp_port: int, seed: int, clients: int = 4, burst: int = 300,
                 corpus: Path = CORPUS):
        self.udp_port, self.tcp_port = udp_port, tcp_port
        self.r = random.Random(seed)
        self.clients = clients
        self.burst = burst
        self.sessions = load_sessions(corpus)
        self.control = Control(udp_port)
        self.report = Report()
        self.last_burst: list[list[bytes]] = []
        self.sync_id = 0

    # -- checks -----------------------------------------------------------------------------

    def sync(self, timeout: float = 10.0) -> bool:
        self.sync_id += 1
        want = self.sync_id
        return self.control.request(message("/sync", want), "/synced", timeout, lambda a: a and a[0] == want) is not None

    def status(self) -> list | None:
        return self.control.request(message("/status"), "/status.reply", 5.0)

    def memory(self) -> list | None:
        return self.control.request(message("/rtMemoryStatus"), "/rtMemoryStatus.reply", 5.0)

    def sweep(self) -> float | None:
        got = self.control.request(message("/c_get", SENTINEL_BUS), "/c_set", 5.0, lambda a: a and a[0] == SENTINEL_BUS)
        return got[1] if got else None

    def sentinel_alive(self) -> bool:
        got = self.control.request(
            message("/n_query", SENTINEL_SYNTH), "/n_info", 3.0, lambda a: a and a[0] == SENTINEL_SYNTH
        )
        return got is not None

    def start_sentinel(self) -> None:
        self.control.send(message("/d_recv", sentinel_def()))
        self.sync()
        self.control.send(message("/g_new", SENTINEL_GROUP, 1, 0))
        self.control.send(message("/s_new", "fuzz_sentinel", SENTINEL_SYNTH, 0, SENTINEL_GROUP))
        self.sync()

    def clean_up(self) -> None:
        """Frees every node (so satellites, which no group lists, go with
        their reference), every buffer and every def, then brings the
        default group and the sentinel back."""
        self.control.send(message("/clearSched"))
        self.control.send(message("/error", 0))
        tree = self.control.request(message("/g_queryTree", 0, 0), "/g_queryTree.reply", 5.0)
        ids = []
        if tree:
            # flag, node id, child count, then each node: id, child count
            # (-1 for a synth, followed by its def's name).
            items, k = tree[3:], 0
            while k + 1 < len(items):
                ids.append(items[k])
                k += 3 if items[k + 1] == -1 else 2
        for i in ids:
            if i != 0:
                self.control.send(message("/n_free", i))
        self.control.send(message("/g_new", 1, 0, 0))
        for b in range(NUM_BUFFERS):
            self.control.send(message("/b_free", b))
        # Loaded defs hold memory (their names in the def table) until freed.
        self.control.send(message("/d_freeAll"))
        self.control.send(message("/error", 1))
        self.control.send(message("/clearSched"))
        self.sync()
        self.start_sentinel()
        self.control.sentinel_ended = False

    def measure(self) -> dict:
        status, memory = self.status(), self.memory()
        return {
            "synths": status[2] if status else None,
            "groups": status[3] if status else None,
            "pool_free": memory[0] if memory else None,
        }

    # -- bursts -----------------------------------------------------------------------------

    def burst_packets(self) -> list[bytes]:
        session = self.r.choice(self.sessions)
        start = self.r.randrange(len(session))
        out = []
        while len(out) < self.burst:
            p = session[(start + len(out)) % len(session)]
            if self.r.random() < 0.1:
                p = self.r.choice(self.r.choice(self.sessions))
            p = _keep_away_from_sentinel(mutate(p, self.r))
            if not _dropped(p):
                out.append(p)
        return out

    def save_burst(self, label: str) -> None:
        """Keeps the last burst's packets (one stream per client) and the tree,
        for replaying a failure: $SERVER_FUZZ_FAILURES or a temp directory."""
        out = Path(os.environ.get("SERVER_FUZZ_FAILURES", tempfile.gettempdir())) / f"server-fuzz-{os.getpid()}"
        out.mkdir(parents=True, exist_ok=True)
        for c, packets in enumerate(self.last_burst):
            stream = b"".join(struct.pack(">i", len(p)) + p for p in packets)
            (out / f"burst{self.report.bursts}-client{c}").write_bytes(stream)
        tree = self.control.request(message("/g_queryTree", 0, 1), "/g_queryTree.reply", 5.0)
        (out / f"burst{self.report.bursts}-tree.txt").write_text(f"{label}\n{tree}\n{self.status()}\n")
        self.report.saved = str(out)

    def one_burst(self) -> None:
        """Every client sends its mutated session at once; returns when all
        have sent (and the server has had a moment to take it all)."""
        stop = threading.Event()
        threads = []
        results: list[int] = []
        self.last_burst = []
        for c in range(self.clients):
            packets = self.burst_packets()
            self.last_burst.append(packets)
            self.report.packets += len(packets)
            if c % 2 == 0:
                t = threading.Thread(target=_sender_udp, args=(self.udp_port, packets, stop))
            else:
                rr = random.Random(self.r.random())
                t = threading.Thread(target=lambda p=packets, rr=rr: results.append(_sender_tcp(self.tcp_port, p, rr, stop)))
            threads.append(t)
            t.start()
        for t in threads:
            t.join(timeout=60)
        stop.set()
        self.report.tcp_connections += sum(results)
        self.report.bursts += 1
        time.sleep(0.3)

    def check(self, label: str) -> None:
        if not self.sync():
            self.report.failures.append(f"{label}: no /synced")
            if not self.report.saved:
                self.save_burst(label)
            return
        if self.status() is None:
            self.report.failures.append(f"{label}: no /status.reply")
        if not self.sentinel_alive():
            # The traffic may free it (a path of node references, a root group
            # spelled another way): then the server said so with /n_end.
            if not self.control.sentinel_ended:
                self.report.failures.append(f"{label}: the sentinel synth vanished without /n_end")
            self.report.sentinel_restarts += 1
            self.control.sentinel_ended = False
            self.start_sentinel()
        # The traffic may have paused it, or the root group (`/n_run 0 0`,
        # as a client may): resumed, it must play.
        for node in (0, SENTINEL_GROUP, SENTINEL_SYNTH):
            self.control.send(message("/n_run", node, 1))
        self.sync()
        a = self.sweep()
        time.sleep(0.15)
        b = self.sweep()
        if a is None or b is None or not b > a:
            self.report.failures.append(f"{label}: the sentinel synth stopped playing ({a} then {b})")
        base = self.report.baseline
        for attempt in range(3):
            # Packets of the burst still on their way (a TCP connection's
            # last frames) may make nodes after a clean-up: clean up again.
            self.clean_up()
            time.sleep(0.1)
            now = self.measure()
            if now["synths"] == base["synths"] and now["groups"] == base["groups"] and now["pool_free"] >= base["pool_free"]:
                break
            time.sleep(0.5)
        if now["synths"] != base["synths"] or now["groups"] != base["groups"]:
            self.report.failures.append(f"{label}: nodes {now} after clean-up, baseline {base}")
        if now["pool_free"] < base["pool_free"]:
            self.report.failures.append(f"{label}: pool free {now['pool_free']} after clean-up, baseline {base['pool_free']}")
        if self.report.failures and not self.report.saved:
            self.save_burst(label)

    def replay(self, stream: bytes) -> tuple[dict, dict]:
        """Sends a saved stream of packets over UDP in order, then cleans up:
        the baseline and what the server reports afterwards."""
        self.control.request(message("/notify", 1), "/done", 3.0)
        self.start_sentinel()
        self.clean_up()
        base = self.measure()
        for p in frames(stream):
            self.control.send(p)
            time.sleep(0.0005)
        self.sync()
        self.clean_up()
        time.sleep(0.3)
        return base, self.measure()

    def run(self, seconds: float, max_bursts: int | None = None) -> Report:
        self.control.request(message("/notify", 1), "/done", 3.0)
        self.start_sentinel()
        # The baseline is taken after a first burst: tables the server
        # grows once (and keeps) are then at their size.
        self.one_burst()
        time.sleep(0.5)
        self.clean_up()
        self.report.baseline = self.measure()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and (max_bursts is None or self.report.bursts < max_bursts):
            self.one_burst()
            self.check(f"burst {self.report.bursts}")
            if len(self.report.failures) > 5:
                break
        self.report.final = self.measure()
        return self.report


def boot(jack, extra=()):
    """magnetar with UDP and TCP on the given driver (None: clock), file
    commands kept inside a scratch directory."""
    from rtcheck import boot_magnetar
    from rtserver import free_port

    import resource

    scratch = tempfile.mkdtemp(prefix="magnetar-server-fuzz-")
    tcp = free_port()
    # The protocol lets any client allocate buffers of 8 GiB (as scsynth
    # does); under a limit of address space such a /b_alloc gets /fail
    # instead of taking the machine's memory (and other processes with it).
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = SERVER_ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(SERVER_ADDRESS_SPACE, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        server = boot_magnetar(jack, extra=("-t", str(tcp), "-P", scratch, "-b", str(NUM_BUFFERS), *extra))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return server, tcp, scratch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--jack", action="store_true", help="JACK's dummy backend instead of the clock driver")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="streams of length-prefixed packets")
    ap.add_argument("--replay", type=Path, help="send this saved stream once instead, and compare")
    args = ap.parse_args()
    from rtcheck import PrivateJack, quit_server

    if args.replay:
        server, tcp, _ = boot(None)
        try:
            base, after = ServerFuzz(server.port, tcp, args.seed, corpus=args.corpus).replay(args.replay.read_bytes())
        finally:
            quit_server(server)
        print(f"baseline {base}, after the stream and a clean-up {after}")
        return 0 if base == after else 1

    jack = PrivateJack(period=256) if args.jack else None
    if jack:
        jack.start()
    server, tcp, _ = boot(jack)
    try:
        fuzz = ServerFuzz(server.port, tcp, args.seed, clients=args.clients, corpus=args.corpus)
        report = fuzz.run(args.seconds)
        alive = server.proc.poll() is None
        if not alive:
            print(f"the server exited with {server.proc.returncode}; its last output:\n{server.output[-6000:]}")
    finally:
        quit_server(server)
        if jack:
            jack.stop()
    print(f"bursts {report.bursts}, packets {report.packets}, TCP connections {report.tcp_connections}, "
          f"sentinel restarts {report.sentinel_restarts}")
    print(f"baseline {report.baseline}, final {report.final}, server alive {alive}")
    for f in report.failures:
        print("FAILURE:", f)
    if report.saved:
        print("the failing burst's packets:", report.saved)
    return 0 if alive and not report.failures else 1


if __name__ == "__main__":
    sys.exit(main())
