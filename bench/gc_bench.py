#!/usr/bin/env python3
"""Garbage-collector benchmark after paper 000 (appendix A.1 workload, tables of ch. 11).

Runs crates/gc/examples/gc_bench.rs for the concurrent collector, the same collector
stop-the-world, and Boehm GC (when libgc-dev is installed), at two sizes of long-lived
state, then the snapshot-bandwidth curve idle and with a background copier, and writes the
<!-- gc-bench:begin/end --> section of BENCHMARKS.md.

    python3 bench/gc_bench.py [--seconds 20] [--block 64] [--fifo 40] [--no-write]
"""

import argparse
import os
import re
import subprocess
import sys

from bench_md import write_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- gc-bench:begin -->", "<!-- gc-bench:end -->"
FULL_PERIOD = 0.05


def build(target, boehm):
    cmd = ["cargo", "build", "--release", "-p", "magnetar-gc", "--example", "gc_bench"]
    if boehm:
        cmd += ["--features", "boehm"]
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    return os.path.join(target, "release", "examples", "gc_bench")


def run(exe, args):
    out = subprocess.run([exe] + args, capture_output=True, text=True, check=True).stdout
    sys.stdout.write(out)
    return out


def summary(out):
    line = next(l for l in out.splitlines() if l.startswith("SUMMARY"))
    return dict(kv.split("=", 1) for kv in line.split()[1:])


def curve(out):
    rows = []
    for l in out.splitlines():
        m = re.match(r"^\s*([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(yes|NO)$", l)
        if m:
            rows.append(m.groups())
    pm = re.search(r"p\(M\) = ([\d.]+) MB/ms, p\(M\)/c = ([\d.]+)", out)
    return rows, pm.groups() if pm else ("?", "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--fifo", type=int, default=40)
    ap.add_argument("--live-kb", default="64,1024")
    ap.add_argument("--curve-secs", type=float, default=0.25)
    ap.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--from-log", help="rebuild the section from the printed output of an earlier run")
    a = ap.parse_args()

    boehm = os.path.exists("/usr/include/gc/gc.h")
    collectors = ["concurrent", "stw", "replicating"] + (["boehm"] if boehm else [])
    sizes = a.live_kb.split(",")
    if a.from_log:
        chunks = open(a.from_log).read().split("p(M) best memcpy bandwidth")[1:]
        outs = iter(chunks)
    else:
        exe = build(a.target, boehm)
        common = ["--block", str(a.block), "--seconds", str(a.seconds), "--fifo", str(a.fifo)]
        curve_args = ["--seconds", "0.2", "--curve", "--curve-secs", str(a.curve_secs)]
        jobs = [common + ["--collector", c, "--live-kb", kb] for kb in sizes for c in collectors]
        # The forced full snapshot 20 times a second: its distribution, not just its worst case.
        jobs += [common + ["--collector", "concurrent", "--live-kb", sizes[0], "--full-period", str(FULL_PERIOD)]]
        jobs += [curve_args, curve_args + ["--load"]]
        outs = (run(exe, j) for j in jobs)
    results = [(kb, c, summary(next(outs))) for kb in sizes for c in collectors]
    fulls = summary(next(outs))
    idle, loaded = curve(next(outs)), curve(next(outs))

    names = {"concurrent": "first collector (concurrent)", "stw": "same, stop-the-world",
             "replicating": "second collector (heap replication)", "boehm": "Boehm GC 8.2 (libgc)"}
    cmd = (f"python3 bench/gc_bench.py --seconds {a.seconds:g} --block {a.block} --fifo {a.fifo} "
           f"--live-kb {a.live_kb}")
    L = [BEGIN, "## Garbage collector (paper 000, appendix A.1 workload)", "",
         f"Command: `{cmd}` (runs `crates/gc/examples/gc_bench.rs`, Boehm via `--features boehm`). "
         f"{a.seconds:g} s per run of the 60 s piece compressed in time (same events per block), "
         f"{a.block}-frame blocks at 44.1 kHz, audio loop under SCHED_FIFO {a.fifo}, collector threads "
         "at normal priority, 4 MB pointer heap, on the shared 2-core VM with other work running.", "",
         "Blocking = time the audio thread spends in the memory manager per block: the `between_blocks` "
         "call for ours, the time inside `GC_malloc` calls for Boehm (it collects there). "
         "\"no full\" leaves out the blocks that took the forced once-a-second full snapshot, which is "
         "padded to the worst case on purpose (the thesis reports it as a separate line). "
         "GC share = GC time / wall time, on the audio thread and on other threads. "
         "Overruns = blocks whose DSP + GC time exceeded the block period; late = wake-ups "
         "after the deadline (OS scheduling included). Preempted = blocks in which the kernel took the "
         "CPU from the audio thread (involuntary context switches); the last column is the worst blocking "
         "of the other blocks, so what remains of a maximum there is not the guest's scheduler "
         "(a hypervisor's pauses cannot be seen from inside the VM).", "",
         "| live state | collector | blocking min / mean / p99 / max ms | max, no full ms | GC share audio / other | full snapshot max ms (count) | overruns / late / blocks | preempted blocks: count, max blocking of the others ms |",
         "|---|---|---|---|---|---|---|---|"]
    for kb, c, s in results:
        nf = s.get("nf_max_ms", s["blk_max_ms"])
        full = f"{s['full_snap_max_ms']} ({s['full_snap_count']})" if c == "concurrent" else "n/a"
        L.append(f"| {kb} kB | {names[c]} | {s['blk_min_ms']} / {s['blk_mean_ms']} / {s['blk_p99_ms']} / {s['blk_max_ms']} "
                 f"| {nf} | {s['gc_audio_pct']} % / {s['gc_other_pct']} % | {full} | {s['overruns']} / {s['late']} / {s['blocks']} "
                 f"| {s.get('preempted', '?')}, {s.get('kept_max_ms', '?')} |")
    for kb in sizes:
        by = {c: s for k, c, s in results if k == kb}
        ours = by["concurrent"]
        nf, full = float(ours["nf_max_ms"]), float(ours["blk_max_ms"])
        for c in collectors[1:]:
            other = float(by[c]["blk_max_ms"])
            L.append(f"- {kb} kB: worst blocking of {names[c]} / first collector = {other / nf:.1f}x "
                     f"without the forced full snapshot, {other / full:.1f}x including it.")
        if "replicating" in by:
            second = float(by["replicating"]["blk_max_ms"])
            for c in ("stw", "boehm"):
                if c in by and second > 0:
                    L.append(f"- {kb} kB: worst blocking of {names[c]} / second collector = "
                             f"{float(by[c]['blk_max_ms']) / second:.1f}x.")
    L += ["", f"Forced full snapshot of the 4 MB pointer heap, taken every {FULL_PERIOD:g} s instead of every "
          f"second (first collector, {sizes[0]} kB live state, otherwise the same run): {fulls['full_snap_count']} "
          f"snapshots, blocking of their blocks p50 {fulls['full_p50_ms']} / p99 {fulls['full_p99_ms']} / max "
          f"{fulls['full_snap_max_ms']} ms (the copy is padded to heap size / p(M)); overruns {fulls['overruns']} "
          f"of {fulls['blocks']} blocks."]
    L += ["", "Snapshot bandwidth curve (memcpy of each size, repeated for "
          f"{a.curve_secs:g} s; MB = 10^6 B): best / median / worst copy time in ms; "
          "\"loaded\" runs a thread copying 20 MB buffers in a loop on the other core.", "",
          "| MB | idle best / median / worst ms | idle best MB/ms | loaded best / median / worst ms | loaded worst MB/ms | loaded best >= p(M)/c |",
          "|---|---|---|---|---|---|"]
    for r0, r1 in zip(idle[0], loaded[0]):
        L.append(f"| {r0[0]} | {r0[2]} / {r0[3]} / {r0[4]} | {r0[5]} | {r1[2]} / {r1[3]} / {r1[4]} | {r1[6]} | {r1[7]} |")
    L += ["", f"p(M) (best copy of 64 MB): idle {idle[1][0]} MB/ms, loaded {loaded[1][0]} MB/ms; "
          f"p(M)/c idle {idle[1][1]} MB/ms.", END]
    section = "\n".join(L) + "\n"
    print(section)
    if a.no_write:
        return
    write_section(BEGIN, END, section)


if __name__ == "__main__":
    main()
