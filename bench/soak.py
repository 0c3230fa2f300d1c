"""A soak: four clients each create, set, move and free nodes and read and
free buffers at 100 Hz against one magnetar, for as long as asked, on JACK's
dummy backend or on the clock driver. At the end every node and buffer the
clients made is freed, and the server must be as it was after the warm-up:
the same node count, every buffer empty, the real-time pool as full, the
resident size within a small margin, and no system-heap operation (nor
system call, with the syscall guard on) on the audio thread at any time.

    python3 bench/soak.py --seconds 600 --driver jack
    python3 bench/soak.py --seconds 600 --driver clock

tests/robustness/test_soak.py runs a short version on both drivers.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import soundfile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "realtime"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "robustness"))

from server_fuzz import Control, message, parse  # noqa: E402

CLIENTS = 4
RATE_HZ = 100
# Each client owns a range of node ids and of buffers.
NODES_PER_CLIENT = 10000
BUFFERS_PER_CLIENT = 16
LIVE_SYNTHS = 24
# Resident size may settle a little higher after the warm-up (allocator caches).
RSS_MARGIN_KB = 16 * 1024


def soak_def() -> bytes:
    from nrt import compile_synthdefs
    from supriya import SynthDefBuilder
    from supriya import ugens as U

    with SynthDefBuilder(freq=220.0, amp=0.01, buf=0.0) as b:
        tone = U.SinOsc.ar(frequency=b["freq"]) * b["amp"]
        sample = U.PlayBuf.ar(buffer_id=b["buf"], loop=1) * b["amp"]
        delay = U.CombN.ar(source=tone + sample, maximum_delay_time=0.05, delay_time=0.03, decay_time=0.2)
        U.Out.ar(bus=0, source=delay)
    return compile_synthdefs(b.build(name="soak_voice"))


@dataclass
class ClientStats:
    commands: int = 0
    replies: int = 0
    fails: int = 0
    late_ticks: int = 0
    sync_worst_ms: float = 0.0


class SoakClient(threading.Thread):
    def __init__(self, index: int, port: int, sound: str, seconds: float, stop: threading.Event):
        super().__init__(daemon=True)
        self.index, self.port, self.sound, self.seconds, self.stop = index, port, sound, seconds, stop
        self.r = random.Random(index)
        self.stats = ClientStats()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.group = 100 + index
        self.first_node = 100000 + index * NODES_PER_CLIENT
        self.first_buf = 16 + index * BUFFERS_PER_CLIENT
        self.live: list[int] = []
        self.next_node = 0
        self.bufs_used: set[int] = set()
        self.sync_id = index * 10_000_000

    def send(self, data: bytes) -> None:
        self.sock.sendto(data, ("127.0.0.1", self.port))
        self.stats.commands += 1

    def drain(self) -> list[tuple[str, list]]:
        got = []
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return got
            self.stats.replies += 1
            try:
                address, args = parse(data)
            except (ValueError, IndexError):
                continue
            if address == "/fail":
                self.stats.fails += 1
            got.append((address, args))

    def sync(self, timeout: float = 5.0) -> bool:
        self.sync_id += 1
        want = self.sync_id
        t0 = time.monotonic()
        self.send(message("/sync", want))
        while time.monotonic() - t0 < timeout:
            for address, args in self.drain():
                if address == "/synced" and args and args[0] == want:
                    self.stats.sync_worst_ms = max(self.stats.sync_worst_ms, (time.monotonic() - t0) * 1000)
                    return True
            time.sleep(0.001)
        return False

    def tick(self, k: int) -> None:
        r = self.r
        op = k % 8
        if op in (0, 4) or not self.live:
            node = self.first_node + self.next_node % NODES_PER_CLIENT
            self.next_node += 1
            buf = r.choice(sorted(self.bufs_used)) if self.bufs_used and r.random() < 0.5 else 0
            self.send(message("/s_new", "soak_voice", node, 1, self.group, "freq", r.uniform(100, 2000), "buf", float(buf)))
            self.live.append(node)
        elif op == 1:
            self.send(message("/n_set", r.choice(self.live), "freq", r.uniform(100, 2000), "amp", r.uniform(0, 0.02)))
        elif op == 2:
            a, b = r.choice(self.live), r.choice(self.live)
            if a != b:
                self.send(message("/n_before" if r.random() < 0.5 else "/n_after", a, b))
            else:
                self.send(message("/g_head" if r.random() < 0.5 else "/g_tail", self.group, a))
        elif op == 3:
            buf = self.first_buf + r.randrange(BUFFERS_PER_CLIENT)
            if buf in self.bufs_used and r.random() < 0.5:
                self.send(message("/b_read", buf, self.sound, 0, -1, 0, 0))
            else:
                self.send(message("/b_allocRead", buf, self.sound))
                self.bufs_used.add(buf)
        elif op == 5:
            if self.bufs_used:
                buf = r.choice(sorted(self.bufs_used))
                self.send(message("/b_free", buf))
                self.bufs_used.discard(buf)
        elif op == 6:
            self.send(message("/n_run", r.choice(self.live), r.randrange(2)))
        elif op == 7:
            while len(self.live) > LIVE_SYNTHS:
                self.send(message("/n_free", self.live.pop(0)))
            if r.random() < 0.3:
                self.send(message("/n_free", self.live.pop(r.randrange(len(self.live)))))
        self.drain()

    def run(self) -> None:
        self.send(message("/g_new", self.group, 1, 0))
        period = 1.0 / RATE_HZ
        start = time.monotonic()
        k = 0
        while not self.stop.is_set() and time.monotonic() - start < self.seconds:
            self.tick(k)
            k += 1
            if k % RATE_HZ == 0 and not self.sync():
                self.stats.fails += 1_000_000  # unanswered /sync: shows in the report
            due = start + k * period
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -period:
                self.stats.late_ticks += 1
        # Everything this client made goes.
        self.send(message("/g_freeAll", self.group))
        self.send(message("/n_free", self.group))
        for b in range(self.first_buf, self.first_buf + BUFFERS_PER_CLIENT):
            self.send(message("/b_free", b))
        self.sync()
        self.sock.close()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@dataclass
class Snapshot:
    rss_kb: int
    synths: int
    groups: int
    pool_free: int
    pool_used: int
    pool_misses: int
    heap_ops_all: int
    periods_all: int
    xruns: int
    guarded_syscalls: int
    buffers_with_frames: int


def snapshot(server, control: Control, buffers: range) -> Snapshot:
    from rtcheck import rt_stats

    status = control.request(message("/status"), "/status.reply", 5.0)
    memory = control.request(message("/rtMemoryStatus"), "/rtMemoryStatus.reply", 5.0)
    stats = rt_stats(server.port)
    with_frames = 0
    for b in buffers:
        info = control.request(message("/b_query", b), "/b_info", 5.0, lambda a, b=b: a and a[0] == b)
        if info and info[1] != 0:
            with_frames += 1
    return Snapshot(
        rss_kb=rss_kb(server.pid),
        synths=status[2],
        groups=status[3],
        pool_free=memory[0],
        pool_used=stats.field(0),
        pool_misses=stats.field(2),
        heap_ops_all=stats.field(4),
        periods_all=stats.field(3),
        xruns=stats.xruns,
        guarded_syscalls=stats.more[-1],
        buffers_with_frames=with_frames,
    )


@dataclass
class SoakResult:
    driver: str
    seconds: float
    commands: int
    fails: int
    late_ticks: int
    sync_worst_ms: float
    baseline: Snapshot
    final: Snapshot
    server_alive: bool
    problems: list[str] = field(default_factory=list)


def soak(jack, seconds: float, warmup: float = 2.0) -> SoakResult:
    """Runs the soak against a magnetar booted on `jack` (None: clock driver)."""
    from rtcheck import boot_magnetar, quit_server

    scratch = Path(tempfile.mkdtemp(prefix="magnetar-soak-"))
    sound = scratch / "loop.wav"
    soundfile.write(sound, (np.sin(np.arange(4800) * 0.05) * 0.1).astype(np.float32), 48000, subtype="FLOAT")
    server = boot_magnetar(jack, extra=("-b", str(16 + CLIENTS * BUFFERS_PER_CLIENT), "-n", "4096"),
                           env={"MAGNETAR_RT_GUARD": "1"})
    buffers = range(16 + CLIENTS * BUFFERS_PER_CLIENT)
    control = Control(server.port)
    try:
        control.send(message("/d_recv", soak_def()))
        control.request(message("/sync", 1), "/synced", 10.0)

        def run_clients(duration: float) -> list[ClientStats]:
            stop = threading.Event()
            clients = [SoakClient(i, server.port, str(sound), duration, stop) for i in range(CLIENTS)]
            for c in clients:
                c.start()
            for c in clients:
                c.join(timeout=duration + 60)
            stop.set()
            control.request(message("/sync", 2), "/synced", 10.0)
            time.sleep(0.3)  # frees reach the pool at the next blocks
            return [c.stats for c in clients]

        run_clients(warmup)
        baseline = snapshot(server, control, buffers)
        stats = run_clients(seconds)
        final = snapshot(server, control, buffers)
        alive = server.proc.poll() is None
    finally:
        control.close()
        quit_server(server)
    result = SoakResult(
        driver="jack" if jack is not None else "clock",
        seconds=seconds,
        commands=sum(s.commands for s in stats),
        fails=sum(s.fails for s in stats),
        late_ticks=sum(s.late_ticks for s in stats),
        sync_worst_ms=max(s.sync_worst_ms for s in stats),
        baseline=baseline,
        final=final,
        server_alive=alive,
    )
    p = result.problems
    if not alive:
        p.append("the server died")
    if result.fails:
        p.append(f"{result.fails} /fail replies or unanswered /sync")
    for name in ("synths", "groups", "pool_free", "pool_used", "buffers_with_frames"):
        if getattr(final, name) != getattr(baseline, name):
            p.append(f"{name}: {getattr(baseline, name)} before, {getattr(final, name)} after")
    if final.rss_kb > baseline.rss_kb + RSS_MARGIN_KB:
        p.append(f"resident size grew from {baseline.rss_kb} kB to {final.rss_kb} kB")
    if final.heap_ops_all != 0 or final.pool_misses != 0:
        p.append(f"audio thread heap operations {final.heap_ops_all}, pool misses {final.pool_misses}")
    if final.guarded_syscalls != 0:
        p.append(f"{final.guarded_syscalls} system calls caught on the audio thread")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--driver", choices=["clock", "jack"], default="clock")
    ap.add_argument("--json", type=Path, help="also write the result here")
    args = ap.parse_args()
    from rtcheck import PrivateJack, stop_cleanly_on_sigterm

    stop_cleanly_on_sigterm()
    jack = PrivateJack(period=256) if args.driver == "jack" else None
    if jack:
        jack.start()
    try:
        result = soak(jack, args.seconds)
    finally:
        if jack:
            jack.stop()
    d = asdict(result)
    print(json.dumps(d, indent=1))
    if args.json:
        args.json.write_text(json.dumps(d, indent=1))
    return 0 if not result.problems else 1


if __name__ == "__main__":
    sys.exit(main())
