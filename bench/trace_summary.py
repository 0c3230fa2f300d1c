#!/usr/bin/env python3
"""Summarises a trace written with MAGNETAR_TRACE=file.json: per thread, the share of the
blocks' time it spent running work (queue items, lane batches, groups on one thread), waiting
inside a block for other threads, asleep between blocks; steals and wake-ups; block and group
times.

Usage: python3 bench/trace_summary.py trace.json [--markdown]
"""

import argparse
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
        })
    groups = defaultdict(list)
    for t in spans.values():
        for name in ("group on threads", "group on one thread"):
            groups[name].extend(d for _, d in t.get(name, []))
    block_durs = [d for _, d in blocks]
    return {
        "blocks": len(blocks),
        "span_us": last - first,
        "block_us": {"median": statistics.median(block_durs), "p99": pct(block_durs, 0.99), "max": max(block_durs)},
        "groups": {k: {"count": len(v), "median_us": statistics.median(v) if v else 0.0} for k, v in groups.items()},
        "threads": rows,
        "dropped": dropped,
    }


def markdown(s):
    out = [f"{s['blocks']} blocks over {s['span_us'] / 1e6:.3f} s; block median {s['block_us']['median']:.1f} µs, "
           f"p99 {s['block_us']['p99']:.1f} µs, max {s['block_us']['max']:.1f} µs; "
           + "; ".join(f"{k}: {v['count']} (median {v['median_us']:.1f} µs)" for k, v in s["groups"].items())
           + (f"; {s['dropped']} events dropped" if s["dropped"] else ""), "",
           "| thread | busy (share of block time) | waiting in blocks (count) | asleep (wake-ups) | items | lane batches | steals |",
           "|---|---|---|---|---|---|---|"]
    for r in s["threads"]:
        out.append(f"| {r['thread']} | {r['busy_us'] / 1e3:.1f} ms ({100 * r['busy_share']:.0f} %) | "
                   f"{r['wait_us'] / 1e3:.1f} ms ({r['waits']}) | {r['asleep_us'] / 1e3:.1f} ms ({r['wakeups']}) | "
                   f"{r['items']} | {r['lane_batches']} | {r['steals']} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (for BENCHMARKS.md)")
    args = ap.parse_args()
    with open(args.trace) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    s = summarise(events)
    if args.markdown:
        print(markdown(s))
    else:
        json.dump(s, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
