#!/usr/bin/env python3
"""The graph's latency hot spots on the Supernova thesis's Listing 5.2 tree
(synth creation, graph edit, queue build), timed inside magnetar's engine
(crates/engine/examples/graph_latency.rs), next to the thesis's figures for
supernova.

Usage: python3 bench/graph_latency.py [--rounds N] [--threads T] [--no-write]
Writes/updates the "Graph latency" section of BENCHMARKS.md.
"""

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

from supriya.ugens import compile_synthdefs  # noqa: E402

from parallel_bench import fsin_bank  # noqa: E402

BEGIN = "<!-- graph-latency:begin -->"
END = "<!-- graph-latency:end -->"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        defs = Path(tmp) / "listing.scsyndef"
        defs.write_bytes(compile_synthdefs(fsin_bank("small", 4, True), fsin_bank("big", 128, True)))
        cmd = ["cargo", "run", "-q", "--release", "-p", "magnetar-engine", "--example", "graph_latency", "--",
               str(defs), "--rounds", str(args.rounds), "--threads", str(args.threads)]
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{shlex.join(cmd)} failed:\n{p.stderr[-2000:]}")
        out = p.stdout
    print(out, end="")
    rows = re.findall(r"^(.+?): count (\d+) mean (\S+) p50 (\S+) p99 (\S+) p99.9 (\S+) max (\S+) us$", out, re.M)
    head = out.splitlines()[0]
    if args.no_write:
        return
    command = "python3 bench/graph_latency.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [BEGIN, "## Graph latency (the Supernova thesis's Listing 5.2 tree)", "",
             f"Command: `{command.strip()}` ({head}). The tree of Listing 5.2 under a parallel group; "
             "each round adds its 42 synths one by one (4 and 128 FSinOsc) with two blocks after each, moves "
             "8 synths between the sections and back (a block after each move), plays 50 blocks and frees "
             "the tree. Times are taken inside the engine, on the thread that runs the blocks, which allocates "
             "from the real-time pool as the server's audio thread does. A synth's "
             "units are built on its first block (as scsynth's are by `/s_new`), so synth creation is the "
             "command plus the construction. The thesis reports 4 µs mean and 13 µs worst for supernova's "
             "queue build on this graph. magnetar compiles a parallel group's queue when the shape of its "
             "subtree changes (every layout here: the last four shapes are kept, and the 42 layouts of a "
             "round cycle through more), and prepares the group at the start of every block: after an edit "
             "of the tree it collects its synths, works out which buses and buffers they read and write and "
             "which items must see which earlier writes; without one it reuses that work (the 50 blocks of "
             "plain playing).", "",
             "| hot spot | count | mean µs | p50 µs | p99 µs | p99.9 µs | max µs |",
             "|---|---|---|---|---|---|---|"]
    for name, *vals in rows:
        lines.append(f"| {name} | " + " | ".join(vals) + " |")
    lines += ["", "The control row times a region that only spins, as long as the mean queue compilation and as "
              "many times, in the same process: what the machine alone adds to a region of that length. The "
              "maxima of tens to hundreds of µs are the shared VM interrupting or pre-empting the thread.", END]
    print("updated", write_section(BEGIN, END, "\n".join(lines) + "\n"))


if __name__ == "__main__":
    main()
