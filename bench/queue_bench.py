"""Paper 004's question measured: how the audio thread should exchange messages with the
control side. Runs crates/rt's `queue_compare` example (the four kinds of `magnetar_rt::queue`
behind one trait, and three ways back to the control thread) and writes the tables into
BENCHMARKS.md.

    python3 bench/queue_bench.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_md import write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- rt-queues:begin -->"
END = "<!-- rt-queues:end -->"


def us(ns: float) -> str:
    return f"{ns / 1000:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per row")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "-q", "-p", "magnetar-rt", "--release", "--example", "queue_compare"],
                   cwd=ROOT, check=True)
    out = subprocess.run([str(ROOT / "target/release/examples/queue_compare"), str(args.seconds)],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    into = [r for r in rows if r["scenario"] in ("hammer", "inversion")]
    back = [r for r in rows if r["scenario"] == "to_control"]
    fifo = all(r.get("fifo", True) for r in into)

    lines = [
        BEGIN,
        "## Audio-thread queues (paper 004: try-lock against lock-free)",
        "",
        f"Command: `python3 bench/queue_bench.py --seconds {args.seconds:g}` ({date.today()}, 2-core VM shared "
        f"with other work). The consumer is the audio thread: CPU 0, SCHED_FIFO 50"
        f"{'' if fifo else ' (refused: SCHED_OTHER)'}, one drain of at most 256 items per 64-sample block at "
        "48 kHz (1333 µs). `hammer`: 1, 2 or 4 SCHED_OTHER producers together aim at 60 000 items/s (the "
        "items column says what they reached). `inversion`: one producer on CPU 1 at the same rate, "
        "preempted by a SCHED_FIFO 40 hog on CPU 1 for 3 ms of every 12 ms, inside the try-lock queue's lock "
        "among other places. Cost: one drain call, per block. Delay: blocks between the first block that "
        "could have taken an item and the one that did (a try-lock miss adds one).",
        "",
        "| scenario | producers | queue | items | drain mean µs | p99.9 µs | max µs | delay mean blocks | "
        "delay max | try-lock misses (longest run) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in into:
        lines.append(
            f"| {r['scenario']} | {r['producers']} | {r['kind']} | {r['items']} | {us(r['cost_mean_ns'])} | "
            f"{us(r['cost_p999_ns'])} | {us(r['cost_max_ns'])} | {r['delay_mean_blocks']:.4f} | "
            f"{r['delay_max_blocks']} | {r['misses']} ({r['longest_miss_run']}) |"
        )
    lines += [
        "",
        "The other direction (replies, notifications, `/tr`, garbage): the audio thread sends 32 items a "
        "block to one control thread. Cost: the sends (and signal) per block on the audio thread; delivery: "
        "each item's delay until the control thread has it.",
        "",
        "| audio → control | blocks | audio cost mean µs | p99.9 µs | max µs | delivery mean µs | p99.9 µs | max µs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in back:
        lines.append(
            f"| {r['kind']} | {r['blocks']} | {us(r['cost_mean_ns'])} | {us(r['cost_p999_ns'])} | "
            f"{us(r['cost_max_ns'])} | {r['delivery_mean_us']:.1f} | {r['delivery_p999_us']} | "
            f"{r['delivery_max_us']} |"
        )
    lines += ["", "REASONING", END]
    text = "\n".join(lines)
    old = (ROOT / "BENCHMARKS.md").read_text()
    if BEGIN in old and "\n### Choice\n" in old[old.index(BEGIN):old.index(END)]:
        # Keep the written reasoning; only the numbers are regenerated.
        kept = old[old.index(BEGIN):old.index(END)]
        text = text.replace("REASONING", kept[kept.index("### Choice"):].rstrip("\n"))
    else:
        text = text.replace("REASONING", "### Choice\n\n(to be written from the numbers above)")
    print(write_section(BEGIN, END, text))
    print(text)


if __name__ == "__main__":
    main()
