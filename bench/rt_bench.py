#!/usr/bin/env python3
"""Real-time server benchmark: scsynth and magnetar in one run, under the same JACK dummy backend.

Measures, per server:
  * /sync → /synced round-trip latency over UDP (mean, p50, p99, p99.9, max),
  * /s_new + /n_free throughput from one client (pairs per second, confirmed by /sync),
  * idle CPU of the server process (utime + stime from /proc/<pid>/stat over a quiet interval).

Usage: python3 bench/rt_bench.py [--round-trips N] [--pairs N] [--idle-seconds S] [--no-write]
Environment: MAGNETAR (default target/release/magnetar), SCSYNTH (default scsynth on PATH).
Updates the "Real-time server benchmark" section of BENCHMARKS.md, only when both servers ran.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from supriya.osc import OscMessage as M  # noqa: E402

from rtserver import (  # noqa: E402
    BootError,
    JackDummy,
    OscClient,
    ServerProcess,
    executables,
    synthdef_bytes,
)

BEGIN = "<!-- rt-bench:begin -->"
END = "<!-- rt-bench:end -->"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[k]


def sync_latency(c: OscClient, n: int) -> dict[str, float]:
    for i in range(50):  # warm-up
        c.send(M("/sync", i))
        c.wait_for("/synced", timeout=2)
    times = []
    for i in range(n):
        sid = 100000 + i
        t0 = time.perf_counter()
        c.send(M("/sync", sid))
        c.wait_for("/synced", lambda m, sid=sid: m.contents[0] == sid, timeout=2)
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return {
        "mean": statistics.fmean(times),
        "p50": percentile(times, 0.5),
        "p99": percentile(times, 0.99),
        "p99.9": percentile(times, 0.999),
        "max": times[-1],
    }


def new_free_throughput(c: OscClient, pairs: int, batch: int = 100) -> float:
    c.send(M("/d_recv", synthdef_bytes("e2e_sine")))
    c.wait_for("/done", timeout=5)
    node = 10000
    t0 = time.perf_counter()
    done = 0
    while done < pairs:
        k = min(batch, pairs - done)
        for _ in range(k):
            c.send(M("/s_new", "e2e_sine", node, 0, 0))
            c.send(M("/n_free", node))
            node += 1
        c.sync(timeout=10)
        done += k
    elapsed = time.perf_counter() - t0
    fails = c.messages("/fail")
    if fails:
        raise RuntimeError(f"/fail during throughput run: {fails[:3]}")
    if c.status().contents[2] != 0:
        raise RuntimeError("synths left over after the throughput run")
    return pairs / elapsed


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return int(fields[11]) + int(fields[12])


def idle_cpu(pid: int, seconds: float) -> float:
    t0, c0 = time.monotonic(), cpu_ticks(pid)
    time.sleep(seconds)
    t1, c1 = time.monotonic(), cpu_ticks(pid)
    return 100.0 * (c1 - c0) / CLK_TCK / (t1 - t0)


def run_one(name: str, exe: str, args) -> dict:
    s = ServerProcess(exe)
    s.start()
    try:
        with OscClient(s.port) as c:
            c.status()
            # Measure idle first, with nothing loaded, after boot has settled.
            time.sleep(1.0)
            result = {"idle_cpu": idle_cpu(s.pid, args.idle_seconds)}
            result["sync"] = sync_latency(c, args.round_trips)
            result["pairs_per_s"] = new_free_throughput(c, args.pairs)
            result["command"] = " ".join(shlex.quote(a) for a in s.args)
            return result
    finally:
        s.stop()


def table(results: dict[str, dict]) -> str:
    head = "| server | sync mean µs | p50 µs | p99 µs | p99.9 µs | max µs | s_new+n_free pairs/s | idle CPU % |"
    rows = [head, "|" + "---|" * 8]
    for name, r in results.items():
        if "error" in r:
            rows.append(f"| {name} | failed: {r['error'].splitlines()[0][:80]} |||||||")
            continue
        sy = r["sync"]
        rows.append(
            f"| {name} | {sy['mean']:.0f} | {sy['p50']:.0f} | {sy['p99']:.0f} | {sy['p99.9']:.0f} | "
            f"{sy['max']:.0f} | {r['pairs_per_s']:.0f} | {r['idle_cpu']:.2f} |"
        )
    return "\n".join(rows)


def update_benchmarks(text: str) -> None:
    write_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--round-trips", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    jack = JackDummy().start()
    os.environ.update({k: v for k, v in jack.env().items() if k.startswith("JACK")})
    os.environ["SC_SYNTHDEF_PATH"] = tempfile.mkdtemp(prefix="rt-bench-defs-")
    results: dict[str, dict] = {}
    try:
        for name, exe in executables().items():
            print(f"running {name} ({exe}) ...", file=sys.stderr, flush=True)
            try:
                results[name] = run_one(name, exe, args)
            except (BootError, RuntimeError, TimeoutError, OSError) as e:
                results[name] = {"error": str(e)}
    finally:
        jack.stop()

    out = table(results)
    print(out)
    for name, r in results.items():
        if "error" in r:
            print(f"\n{name} failed:\n{r['error']}", file=sys.stderr)
    if args.no_write:
        return 0
    if any("error" in r for r in results.values()):
        print("not updating BENCHMARKS.md: a server did not complete the run", file=sys.stderr)
        return 1
    cmd = "python3 bench/rt_bench.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    text = "\n".join(
        [
            "## Real-time server benchmark",
            "",
            f"Command: `{cmd.strip()}` ({time.strftime('%Y-%m-%d')}, `jackd -d dummy -r {jack.rate} -p {jack.period}`).",
            f"Servers: " + "; ".join(f"`{r['command']}`" for r in results.values()) + ".",
            f"{args.round_trips} UDP /sync round trips, {args.pairs} /s_new + /n_free pairs in batches of 100 "
            f"confirmed by /sync, idle CPU over {args.idle_seconds:g} s (utime + stime, % of one core).",
            "",
            out,
        ]
    )
    update_benchmarks(text)
    print("updated BENCHMARKS.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
