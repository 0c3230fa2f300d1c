#!/usr/bin/env python3
"""Disk streaming benchmark: many cued DiskIn streams on JACK's dummy backend, for magnetar with
need-based scheduling (one and four disk threads), magnetar with a plain first-come-first-served
disk thread, and scsynth.

Each stream plays a file of its own (48 kHz stereo float, looping) whose frames encode their
index as a rising sawtooth; a glitch counter in the same synth counts every step that is not
the sawtooth's (a half played again, late or as silence), the same way in both servers, into a
control bus (one count per stretch of wrong samples). Every fourth stream has an 8192-frame buffer (a half lasts 85 ms), the others
cueSoundFile's 32768 (341 ms), so the streams differ in how soon they run dry. Before each run
the files are dropped from the page cache.

Slowed storage, the same for every server: bench/slowread.c, compiled here with `cc` and
loaded with LD_PRELOAD, sleeps --delay-ms before each read() of a file in the bench's
directory (libsndfile reads with read(), in scsynth and magnetar alike), page cache or not.

Runs: streams × (no load | a CPU hog on every core) × server, on plain and slowed storage;
then, on slowed storage, for each server and load, the most streams (of --ladder, by
bisection) that play --seconds without a glitch or a counted underrun.
Per run: streams that glitched and glitches (both servers), reads slowed (both servers, the
server's whole life, cueing included); for magnetar also its counted underruns, the smallest
time until empty left when a half arrived, disk wake-ups per second (signalled by the audio
thread / polls), and the audio thread's time per block on the disk side (mean, p99.9, max).

Usage: python3 bench/disk_bench.py [--streams 16 64 256] [--seconds 6] [--delay-ms 2]
                                   [--servers need fcfs need4 scsynth] [--ladder 16 24 ...]
                                   [--no-plain] [--no-fixed] [--no-search] [--no-write]
Environment: MAGNETAR (default target/release/magnetar), SCSYNTH (default scsynth on PATH).
Updates the "disk-bench" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "realtime"))

from rtcheck import PrivateJack, _parse_osc, compile_defs, quit_server, rt_stats, stop_cleanly_on_sigterm  # noqa: E402
from rtserver import OscClient, ServerProcess, bundle, executables  # noqa: E402
from supriya.osc import OscMessage  # noqa: E402

BEGIN = "<!-- disk-bench:begin -->"
END = "<!-- disk-bench:end -->"
RATE = 48000
PERIOD = 256
P = 65536  # sawtooth period in frames
FILE_FRAMES = 4 * P  # 5.5 s; a whole number of periods, so the loop point is a plain wrap
BIG, SMALL = 32768, 8192
DEF_NAME = "disk_bench_stream"
UNDERRUNS_FIELD = 6


def stream_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder(buf=0.0, bus=0.0) as b:
        left, _right = U.DiskIn.ar(buffer_id=b["buf"], loop=1, channel_count=2)
        step = left - U.Delay1.ar(source=left)
        off_ramp = abs(step - 1.0 / P) > 1e-6
        off_wrap = abs(step + (P - 1.0) / P) > 1e-6
        # One count per stretch of wrong samples (a replayed half, a silence).
        bad = off_ramp * off_wrap
        glitches = U.Integrator.ar(source=bad * (1.0 - U.Delay1.ar(source=bad)), coefficient=1.0)
        U.Out.kr(bus=b["bus"], source=U.A2K.kr(source=glitches))
    return b.build(name=DEF_NAME)


def make_files(directory: Path, n: int) -> list[Path]:
    paths = []
    i = np.arange(FILE_FRAMES, dtype=np.int64)
    for k in range(n):
        path = directory / f"stream{k:03d}.wav"
        if not path.exists():
            ramp = (((i + 997 * k) % P) / P).astype(np.float32)
            soundfile.write(str(path), np.stack([ramp, ramp[::-1]], axis=1), RATE, subtype="FLOAT")
        paths.append(path)
    return paths


def drop_from_cache(paths: list[Path]) -> None:
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class Hog:
    """A busy loop per core at normal priority."""

    def __init__(self, on: bool):
        self.procs = []
        if on:
            for _ in range(os.cpu_count() or 1):
                self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(5)


def disk_stats(port: int, reset: bool) -> list[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(2.0)
        sock.sendto(OscMessage("/magnetar_diskStats", 1 if reset else 0).to_datagram(), ("127.0.0.1", port))
        while True:
            address, args = _parse_osc(sock.recv(65536))
            if address == "/magnetar_diskStats.reply":
                return args


@dataclass
class Result:
    server: str
    streams: int
    hog: bool
    slow: bool
    glitched: int
    glitches: int
    reads_slowed: int | None = None
    underruns: int | None = None
    min_fill_ms: float | None = None
    signalled_per_s: float | None = None
    polled_per_s: float | None = None
    audio_mean_us: float | None = None
    audio_p999_us: float | None = None
    audio_max_us: float | None = None


def build_shim(directory: Path) -> Path:
    """Compiles bench/slowread.c into `directory`."""
    out = directory / "slowread.so"
    src = Path(__file__).resolve().parent / "slowread.c"
    subprocess.run(["cc", "-O2", "-Wall", "-shared", "-fPIC", "-o", str(out), str(src), "-ldl"], check=True)
    return out


@dataclass
class Storage:
    """How reads of the bench's files are slowed (delay_ms 0: not at all)."""
    shim: Path
    directory: Path
    delay_ms: float

    def env(self, stats: Path) -> dict:
        if self.delay_ms <= 0:
            return {}
        return {
            "LD_PRELOAD": str(self.shim),
            "SLOWREAD_US": str(int(round(self.delay_ms * 1000))),
            "SLOWREAD_DIR": str(self.directory) + "/",
            "SLOWREAD_STATS": str(stats),
        }


def run(name: str, exe: str, extra: list[str], storage: Storage, jack: PrivateJack, files: list[Path],
        n: int, seconds: float, hog_on: bool) -> Result:
    slow = storage.delay_ms > 0
    env = dict(os.environ)
    env.update({k: v for k, v in jack.env().items() if k.startswith("JACK")})
    env.pop("MAGNETAR_RECORD", None)
    env.pop("MAGNETAR_DISK_DELAY_MS", None)
    stats = storage.directory.parent / f"slowread-{os.getpid()}.txt"
    stats.unlink(missing_ok=True)
    env.update(storage.env(stats))
    server = ServerProcess(exe, extra=["-z", "64", "-Z", str(PERIOD), "-b", "1024", "-m", "65536", *extra], env=env)
    server.start()
    client = OscClient(server.port)
    magnetar = name != "scsynth"
    try:
        client.send(("/d_recv", compile_defs(stream_def())))
        client.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=10)
        drop_from_cache(files[:n])
        for k in range(n):
            frames = SMALL if k % 4 == 3 else BIG
            read = OscMessage("/b_read", k, str(files[k]), 0, frames, 0, 1)
            client.send(OscMessage("/b_alloc", k, frames, 2, read))
        for k in range(n):
            client.wait_for("/done", lambda m: m.contents[0] == "/b_read", timeout=60)
        for k in range(0, n, 32):
            msgs = [("/s_new", DEF_NAME, 1000 + i, 1, 0, "buf", i, "bus", i) for i in range(k, min(n, k + 32))]
            client.send(bundle(None, *msgs))
        client.sync(timeout=30)
        hog = Hog(hog_on)
        try:
            time.sleep(1.0)
            before = client.request(OscMessage("/c_getn", 0, n), "/c_setn", timeout=5).contents[2:]
            if magnetar:
                disk_stats(server.port, reset=True)
                d0 = disk_stats(server.port, reset=False)
                u0 = rt_stats(server.port).field(UNDERRUNS_FIELD)
            t0 = time.monotonic()
            time.sleep(seconds)
            elapsed = time.monotonic() - t0
            after = client.request(OscMessage("/c_getn", 0, n), "/c_setn", timeout=5).contents[2:]
            if magnetar:
                d1 = disk_stats(server.port, reset=False)
                u1 = rt_stats(server.port).field(UNDERRUNS_FIELD)
        finally:
            hog.stop()
    finally:
        client.close()
        quit_server(server)
    counts = [int(a - b) for a, b in zip(after, before)]
    r = Result(name, n, hog_on, slow, sum(1 for c in counts if c > 0), sum(counts))
    if slow:
        try:
            r.reads_slowed = int(stats.read_text().strip())
        except (OSError, ValueError):
            r.reads_slowed = None
        stats.unlink(missing_ok=True)
    if magnetar:
        r.underruns = u1 - u0
        r.min_fill_ms = d1[4] / 1000.0
        r.signalled_per_s = (d1[0] - d0[0]) / elapsed
        r.polled_per_s = (d1[1] - d0[1]) / elapsed
        r.audio_mean_us = d1[8] / 1000.0
        r.audio_p999_us = d1[9] / 1000.0
        r.audio_max_us = d1[10] / 1000.0
    return r


def fmt(v, spec: str = "") -> str:
    return "n/a" if v is None else format(v, spec)


def table(results: list[Result]) -> str:
    lines = [
        "| storage | CPU hog | streams | server | streams glitched | glitches | reads slowed | underruns counted "
        "| min fill ms | wake-ups/s signalled + polled | audio thread µs/block mean / p99.9 / max |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        wake = "n/a" if r.signalled_per_s is None else f"{r.signalled_per_s:.1f} + {r.polled_per_s:.1f}"
        audio = "n/a" if r.audio_mean_us is None else f"{r.audio_mean_us:.2f} / {r.audio_p999_us:.1f} / {r.audio_max_us:.1f}"
        lines.append(
            f"| {'slowed' if r.slow else 'plain'} | {'yes' if r.hog else 'no'} | {r.streams} | {r.server} "
            f"| {r.glitched} | {r.glitches} | {fmt(r.reads_slowed)} | {fmt(r.underruns)} | {fmt(r.min_fill_ms, '.0f')} "
            f"| {wake} | {audio} |"
        )
    return "\n".join(lines)


def held(r: Result) -> bool:
    """Whether every stream played whole: no glitch, and no underrun counted."""
    return r.glitches == 0 and not r.underruns


def most_streams_table(found: dict, ladder: list[int]) -> str:
    lines = [
        "| server | CPU hog | most streams held | first count that failed | runs (streams: glitches) |",
        "|---|---|---:|---:|---|",
    ]
    for (label, hog), (best, worst, runs) in found.items():
        tried = ", ".join(f"{r.streams}: {r.glitches}" + ("" if r.underruns in (None, 0) else f" ({r.underruns} underruns)")
                          for r in sorted(runs, key=lambda r: r.streams))
        lines.append(f"| {label} | {'yes' if hog else 'no'} | {best if best else f'< {ladder[0]}'} "
                     f"| {worst if worst else f'> {ladder[-1]}'} | {tried} |")
    return "\n".join(lines)


def main() -> int:
    stop_cleanly_on_sigterm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--delay-ms", type=float, default=2.0)
    ap.add_argument("--servers", nargs="+", default=["need", "fcfs", "need4", "scsynth"])
    ap.add_argument("--ladder", type=int, nargs="+", default=[16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512])
    ap.add_argument("--no-plain", action="store_true", help="skip the fixed counts on plain storage")
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed counts on slowed storage")
    ap.add_argument("--no-search", action="store_true", help="skip the search for the most streams held")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    exes = executables()
    configs = {
        "need": ("magnetar need", exes["magnetar"], ["--disk-scheduling", "need"]),
        "fcfs": ("magnetar fcfs", exes["magnetar"], ["--disk-scheduling", "fcfs"]),
        "need4": ("magnetar need, 4 disk threads", exes["magnetar"], ["--disk-scheduling", "need", "--disk-threads", "4"]),
        "scsynth": ("scsynth", exes["scsynth"], []),
    }
    workdir = Path(tempfile.gettempdir()) / "magnetar-disk-bench"
    sounds = workdir / "sounds"
    sounds.mkdir(parents=True, exist_ok=True)
    ladder = sorted(args.ladder)
    files = make_files(sounds, max(max(args.streams), ladder[-1] if not args.no_search else 0))
    shim = build_shim(workdir)
    plain = Storage(shim, sounds, 0.0)
    slowed = Storage(shim, sounds, args.delay_ms)
    plan = []
    if not args.no_plain:
        for hog in (False, True):
            for n in args.streams:
                for s in args.servers:
                    if s != "need4":
                        plan.append((s, n, hog, plain))
    if not args.no_fixed:
        for hog in (False, True):
            for n in args.streams:
                for s in args.servers:
                    plan.append((s, n, hog, slowed))
    results = []
    found = {}
    t_start = time.monotonic()
    jack = PrivateJack(period=PERIOD)
    jack.start()
    try:
        for s, n, hog, storage in plan:
            label, exe, extra = configs[s]
            r = run(label, exe, extra, storage, jack, files, n, args.seconds, hog)
            results.append(r)
            print(table([r]).splitlines()[-1], flush=True)
        if not args.no_search:
            for hog in (False, True):
                for s in args.servers:
                    label, exe, extra = configs[s]
                    lo, hi, runs = -1, len(ladder), []
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        r = run(label, exe, extra, slowed, jack, files, ladder[mid], args.seconds, hog)
                        runs.append(r)
                        print("search " + table([r]).splitlines()[-1], flush=True)
                        if held(r):
                            lo = mid
                        else:
                            hi = mid
                    found[(label, hog)] = (ladder[lo] if lo >= 0 else None, ladder[hi] if hi < len(ladder) else None, runs)
    finally:
        jack.stop()
    minutes = (time.monotonic() - t_start) / 60
    text = table(results)
    most = most_streams_table(found, ladder) if found else ""
    print(text)
    print(most)
    print(f"{minutes:.1f} min")
    if not args.no_write:
        cmd = "python3 bench/disk_bench.py " + " ".join(sys.argv[1:])
        section = f"""{BEGIN}
## Disk streaming

Command: `{cmd.strip()}` ({datetime.date.today()}, `jackd -d dummy -r 48000 -p {PERIOD}`, block 64,
{minutes:.0f} minutes). Each stream: a cued 48 kHz stereo float file of its own, looping, dropped
from the page cache before the run; every fourth stream has an 8192-frame buffer (85 ms halves),
the others 32768 (341 ms). Glitches: stretches of samples that break the file's sawtooth (a half
played again, late or as silence), counted in the synth the same way in both servers
({args.seconds:g} s per run). "Slowed": every server runs with `bench/slowread.c` preloaded, which
sleeps {args.delay_ms:g} ms before each `read()` of a file in the bench's directory (libsndfile's
only way of reading, in both servers), page cache or not; "reads slowed" counts them over the
server's life, cueing included. Min fill: the least time until empty a stream had left when its
half arrived (negative: late). The CPU hog is a busy loop per core at normal priority.

{text}

Most streams held on slowed storage (no glitch and no counted underrun for {args.seconds:g} s),
found by bisection over {", ".join(map(str, ladder))}; one run per count:

{most}
{END}"""
        write_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
