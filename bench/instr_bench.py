#!/usr/bin/env python3
"""Single-thread work of the parallel-group scores, counted in instructions rather than timed:
scsynth, supernova -T 1 and magnetar -T 1 render each score of ``parallel_bench.py`` under
``valgrind --tool=callgrind``, once for S seconds and once ending at once; the difference is the
work of S seconds of audio without start-up (loading defs, building the tree, the plugins'
set-up). Instruction counts do not change with the machine's load or speed, so this is the
figure to compare builds with and to check the "at least 2x scsynth" target on a shared VM,
where wall time swings by tenths from hour to hour. They do not see cache misses or the cost
of an instruction, so a ratio here and the wall-time ratio of ``parallel_bench.py`` differ.

Usage: python3 bench/instr_bench.py [--seconds S] [--jobs J] [--only TEXT] [--before BINARY] [--no-write]
``--before`` adds a column for another magnetar build (an older commit) counted in the same run.
Writes/updates the "Single-thread instructions" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_md import write_section
from parallel_bench import MAGNETAR, SCORES, SCSYNTH, SUPERNOVA

BEGIN = "<!-- instr-bench:begin -->"
END = "<!-- instr-bench:end -->"


def instructions(cmd: list[str], score: Path, out: Path) -> int:
    """Instructions callgrind counts for one NRT render of ``score`` (every thread)."""
    cg = out.with_suffix(".cg")
    full = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", *cmd,
            "-o", "2", "-a", "1024", "-N", str(score), "_", str(out), "48000", "WAV", "float"]
    r = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{shlex.join(full)} failed ({r.returncode}): {r.stdout[-800:]}")
    # One file holds every thread's counts (callgrind splits them only when asked).
    text = cg.read_text(errors="replace")
    cg.unlink()
    for line in text.splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"{cg}: callgrind wrote no summary line")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="renders counted at once (the counts do not depend on it)")
    ap.add_argument("--only", help="only the scores whose name contains this (implies --no-write)")
    ap.add_argument("--before", help="another magnetar binary, counted alongside")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("instr_bench: valgrind is not installed (apt-get install valgrind)")
    if args.only:
        args.no_write = True
    engines = [("scsynth", [SCSYNTH]), ("supernova -T 1", [SUPERNOVA, "-T", "1"])]
    if args.before:
        engines.append(("magnetar before", [args.before, "-T", "1", "-g", "1"]))
    engines.append(("magnetar -T 1", [MAGNETAR, "-T", "1", "-g", "1"]))
    names = [n for n in SCORES if not args.only or args.only in n]

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        jobs = []
        for k, name in enumerate(names):
            for length in (0.0, args.seconds):
                score = tmp / f"s{k}_{length:g}.osc"
                score.write_bytes(SCORES[name](length).encode(str(tmp)))
                for e, (_, cmd) in enumerate(engines):
                    jobs.append(((name, engines[e][0], length), cmd, score, tmp / f"o{k}_{e}_{length:g}.wav"))
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            counts = dict(zip([j[0] for j in jobs], pool.map(lambda j: instructions(*j[1:]), jobs)))

    per_second = {(n, e): (counts[(n, e, args.seconds)] - counts[(n, e, 0.0)]) / args.seconds
                  for n in names for e, _ in engines}
    for n in names:
        print(n, "  ".join(f"{e}: {per_second[(n, e)] / 1e6:.1f} M/s" for e, _ in engines),
              f"scsynth / magnetar: {per_second[(n, 'scsynth')] / per_second[(n, 'magnetar -T 1')]:.2f}x",
              flush=True)
    if args.no_write:
        return

    command = "python3 bench/instr_bench.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    cols = [e for e, _ in engines]
    ratios = [("scsynth", "magnetar -T 1"), ("supernova -T 1", "magnetar -T 1")]
    if args.before:
        ratios.append(("magnetar before", "magnetar -T 1"))
    lines = [BEGIN, "## Single-thread instructions (the parallel-group scores, callgrind)", "",
             f"Command: `{command.strip()}`. Millions of instructions per second of audio at 48 kHz, every "
             f"thread counted: a render of {args.seconds:g} s less a render of the same score that ends at once "
             "(start-up). magnetar runs `-T 1 -g 1`, supernova `-T 1`; all with `-o 2 -a 1024`. The counts do not "
             "depend on the machine's load; they do not see cache misses or how long an instruction takes, so "
             "these ratios differ from the wall-time ratios of the section above. Target: scsynth / magnetar at "
             "least 2x.", "",
             "| score | " + " | ".join(cols) + " | " + " | ".join(f"{a} / {b}" for a, b in ratios) + " |",
             "|---|" + "---|" * (len(cols) + len(ratios))]
    for n in names:
        cells = [f"{per_second[(n, e)] / 1e6:.1f}" for e in cols]
        cells += [f"{per_second[(n, a)] / per_second[(n, b)]:.2f}x" for a, b in ratios]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines.append(END)
    print("updated", write_section(BEGIN, END, "\n".join(lines) + "\n"))


if __name__ == "__main__":
    main()
