#!/usr/bin/env python3
"""Summarises a trace written with MAGNETAR_TRACE=file.json: per thread, the share of the
blocks' time it spent running work (queue items, lane batches, groups on one thread), waiting
inside a block for other threads, asleep between blocks; steals and wake-ups; its lane batches'
median time, the first of each block apart (what its caches lost between blocks); block and group
times; the critical path of the groups on threads (per group, the busiest thread's items: what -T N
would take were no thread ever kept waiting by the system, a figure that the machine's load hardly
changes) and what the groups took beyond it.

Usage: python3 bench/trace_summary.py trace.json [--markdown]
       python3 bench/trace_summary.py --score TEXT [--seconds S] [--write]
The second form renders the score of bench/parallel_bench.py whose name contains TEXT with
magnetar -T 1, -T 2 and -T 2 with every block spread (MAGNETAR_SPREAD=always), each traced, and
prints (or, with --write, puts into BENCHMARKS.md) the three summaries.
"""

import argparse
import bisect
import json
import statistics
import sys
from collections import defaultdict


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def summarise(events):
    names = {}
    spans = defaultdict(lambda: defaultdict(list))  # tid -> name -> [(ts, dur)]
    instants = defaultdict(lambda: defaultdict(int))
    dropped = 0
    for e in events:
        ph, tid = e.get("ph"), e.get("tid", 0)
        if ph == "M":
            if e["name"] == "thread_name":
                names[tid] = e["args"]["name"]
            elif e["name"] == "dropped events":
                dropped = e["args"]["dropped"]
        elif ph == "X":
            spans[tid][e["name"]].append((e["ts"], e["dur"]))
        elif ph == "i":
            instants[tid][e["name"]] += 1
    blocks = [s for t in spans.values() for s in t.get("block", [])]
    if not blocks:
        raise SystemExit("the trace holds no blocks")
    first = min(ts for ts, _ in blocks)
    last = max(ts + d for ts, d in blocks)
    in_blocks = sum(d for _, d in blocks)
    block_starts = sorted(ts for ts, _ in blocks)
    rows = []
    for tid in sorted(set(spans) | set(instants)):
        s = spans[tid]
        # Work: items on the threads; on the thread that runs blocks, lane batches and groups
        # on one thread are work too (items nest in groups on threads, which are not counted).
        items = sum(d for _, d in s.get("item", []))
        outside_items = 0.0
        if "block" in s:
            # Time of the blocks outside the groups on threads is this thread's own work.
            spread = sum(d for _, d in s.get("group on threads", []))
            outside_items = in_blocks - spread
        busy = items + outside_items
        wait = sum(d for _, d in s.get("wait", []))
        asleep = sum(d for _, d in s.get("asleep", []))
        # A thread's first lane batch of a block apart from its later ones: what its caches
        # lost between blocks shows in the first.
        first_batch, later_batch, seen = [], [], set()
        for ts, d in sorted(s.get("lane batch", [])):
            block = bisect.bisect_right(block_starts, ts)
            (later_batch if block in seen else first_batch).append(d)
            seen.add(block)
        rows.append({
            "thread": names.get(tid, f"thread {tid}"),
            "busy_us": busy,
            "busy_share": busy / in_blocks if in_blocks else 0.0,
            "wait_us": wait,
            "waits": len(s.get("wait", [])),
            "asleep_us": asleep,
            "wakeups": len(s.get("asleep", [])),
            "items": len(s.get("item", [])),
            "lane_batches": len(s.get("lane batch", [])),
            "steals": instants[tid].get("steal", 0),
            "first_batch_us": statistics.median(first_batch) if first_batch else 0.0,
            "later_batch_us": statistics.median(later_batch) if later_batch else 0.0,
        })
    groups = defaultdict(list)
    for t in spans.values():
        for name in ("group on threads", "group on one thread"):
            groups[name].extend(d for _, d in t.get(name, []))
    block_durs = [d for _, d in blocks]
    # Per group on the threads: the busiest thread's items (the critical path, what the group
    # would take if no thread ever waited for the system), and what the group took beyond it
    # (hand-over, waits, the replay after the items).
    items = sorted((ts, d, tid) for tid, t in spans.items() for ts, d in t.get("item", []))
    starts = [ts for ts, _, _ in items]
    critical, beyond = [], []
    for t in spans.values():
        for ts, d in t.get("group on threads", []):
            lo, hi = bisect.bisect_left(starts, ts), bisect.bisect_right(starts, ts + d)
            per = defaultdict(float)
            for _, dur, tid in items[lo:hi]:
                per[tid] += dur
            if per:
                critical.append(max(per.values()))
                beyond.append(d - critical[-1])
    return {
        "blocks": len(blocks),
        "span_us": last - first,
        "block_us": {"median": statistics.median(block_durs), "p99": pct(block_durs, 0.99), "max": max(block_durs)},
        "groups": {k: {"count": len(v), "median_us": statistics.median(v) if v else 0.0} for k, v in groups.items()},
        "critical_path": {"sum_us": sum(critical), "median_us": statistics.median(critical) if critical else 0.0,
                          "beyond_median_us": statistics.median(beyond) if beyond else 0.0},
        "threads": rows,
        "dropped": dropped,
    }


def markdown(s):
    out = [f"{s['blocks']} blocks over {s['span_us'] / 1e6:.3f} s; block median {s['block_us']['median']:.1f} µs, "
           f"p99 {s['block_us']['p99']:.1f} µs, max {s['block_us']['max']:.1f} µs; "
           + "; ".join(f"{k}: {v['count']} (median {v['median_us']:.1f} µs)" for k, v in s["groups"].items())
           + (f"; {s['dropped']} events dropped" if s["dropped"] else "")
           + (f"; critical path of the groups on threads (busiest thread's items, summed over blocks) "
              f"{s['critical_path']['sum_us'] / 1e3:.1f} ms, per group median "
              f"{s['critical_path']['median_us']:.1f} µs + {s['critical_path']['beyond_median_us']:.1f} µs beyond it"
              if s["critical_path"]["sum_us"] else ""), "",
           "| thread | busy (share of block time) | waiting in blocks (count) | asleep (wake-ups) | items | lane batches "
           "| lane batch median: first of a block / later | steals |",
           "|---|---|---|---|---|---|---|---|"]
    for r in s["threads"]:
        out.append(f"| {r['thread']} | {r['busy_us'] / 1e3:.1f} ms ({100 * r['busy_share']:.0f} %) | "
                   f"{r['wait_us'] / 1e3:.1f} ms ({r['waits']}) | {r['asleep_us'] / 1e3:.1f} ms ({r['wakeups']}) | "
                   f"{r['items']} | {r['lane_batches']} | {r['first_batch_us']:.2f} / {r['later_batch_us']:.2f} µs | "
                   f"{r['steals']} |")
    return "\n".join(out)


def load(path):
    with open(path) as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


BEGIN = "<!-- trace-summary:begin -->"
END = "<!-- trace-summary:end -->"


def traced_renders(only, seconds, write):
    """Renders a parallel_bench score traced with -T 1, -T 2 and -T 2 spread; returns Markdown."""
    import os
    import shlex
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    import parallel_bench as pb

    name, make = next((n, m) for n, m in pb.SCORES.items() if only in n)
    runs = [("magnetar -T 1", {}, ["-T", "1"]), ("magnetar -T 2", {}, ["-T", "2"]),
            ("magnetar -T 2, every block spread (MAGNETAR_SPREAD=always)", {"MAGNETAR_SPREAD": "always"}, ["-T", "2"])]
    command = "python3 bench/trace_summary.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    out = [BEGIN, f"### Trace: {name}", "",
           f"Command: `{command}` ({seconds:g} s at 48 kHz, `-o 2 -a 1024`, each render traced with "
           "`MAGNETAR_TRACE`; the summary is `bench/trace_summary.py`'s: a thread's busy time is its queue items, "
           "and on the thread that runs blocks the blocks' time outside groups on the threads; waiting is time "
           "inside a block with nothing to run; asleep is a helper parked between blocks; a thread's first lane "
           "batch of a block is given apart from its later ones). Open a trace in `ui.perfetto.dev` to see the "
           "same per block."]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        score = tmp / "score.osc"
        score.write_bytes(make(seconds).encode(str(tmp)))
        for label, env, opts in runs:
            trace = tmp / "trace.json"
            cmd = [pb.MAGNETAR, *opts, "-o", "2", "-a", "1024", "-N", str(score), "_", str(tmp / "out.wav"),
                   "48000", "WAV", "float"]
            t0 = time.perf_counter()
            p = subprocess.run(cmd, env={**os.environ, **env, "MAGNETAR_TRACE": str(trace)},
                               capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if p.returncode:
                raise SystemExit(p.stdout + p.stderr)
            out += ["", f"**{label}** (render {wall:.2f} s with the trace):", "", markdown(summarise(load(trace)))]
    out.append(END)
    text = "\n".join(out)
    if write:
        from bench_md import write_section
        print("updated", write_section(BEGIN, END, text))
    else:
        print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (for BENCHMARKS.md)")
    ap.add_argument("--score", help="render and trace this parallel_bench score instead")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--write", action="store_true", help="with --score: update BENCHMARKS.md")
    args = ap.parse_args()
    if args.score:
        traced_renders(args.score, args.seconds, args.write)
        return
    if not args.trace:
        ap.error("a trace file, or --score")
    s = summarise(load(args.trace))
    if args.markdown:
        print(markdown(s))
    else:
        json.dump(s, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
