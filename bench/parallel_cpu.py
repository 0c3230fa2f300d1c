#!/usr/bin/env python3
"""Wall and CPU time (user + system of the whole render) of magnetar -T 1 and -T 2 on the
scores of bench/parallel_bench.py, renders interleaved; with several binaries (--bin A --bin B,
e.g. a build from before a change and one from after) their renders are interleaved too.

CPU time says what the second thread costs regardless of what else runs on the machine: -T 2's
CPU over -T 1's is the threads' overhead (waking, waiting, merging), where wall time on a busy
machine mostly measures the neighbours. Each render also checks that -T 2 wrote -T 1's samples.

Usage: python3 bench/parallel_cpu.py [--bin PATH ...] [--only TEXT] [--reps N] [--seconds S]
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from parallel_bench import SCORES, render, same_samples  # noqa: E402
from nrt import MAGNETAR  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", help="magnetar binary (repeat to compare builds)")
    ap.add_argument("--only", help="only the scores whose name contains this")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    args = ap.parse_args()
    bins = args.bin or [str(MAGNETAR)]
    threads = [int(t) for t in args.threads.split(",")]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, make in SCORES.items():
            if args.only and args.only not in name:
                continue
            score = tmp / "score.osc"
            score.write_bytes(make(args.seconds).encode(str(tmp)))
            runs = [(b, t) for b in bins for t in threads]
            res = {r: [] for r in runs}
            same = True
            for _ in range(args.reps):
                for b, t in runs:
                    out = tmp / f"out-{bins.index(b)}-{t}.wav"
                    res[(b, t)].append(render([b, "-T", str(t), "-g", "1"], score, out))
                for b in bins:
                    for t in threads[1:]:
                        same &= same_samples(tmp / f"out-{bins.index(b)}-{threads[0]}.wav",
                                             tmp / f"out-{bins.index(b)}-{t}.wav")
            print(f"{name}  (load {os.getloadavg()[0]:.1f})")
            for b in bins:
                base = None
                for t in threads:
                    walls = [w for w, _ in res[(b, t)]]
                    cpus = [c for _, c in res[(b, t)]]
                    wall, cpu = statistics.median(walls), statistics.median(cpus)
                    if base is None:
                        base = (wall, cpu)
                        rel = ""
                    else:
                        rel = f"  -T {threads[0]}/-T {t}: wall {base[0] / wall:.2f}x, CPU {cpu / base[1]:.2f}x of -T {threads[0]}"
                    print(f"  {b} -T {t}: wall {wall:.3f} s (best {min(walls):.3f}), "
                          f"CPU {cpu:.3f} s (best {min(cpus):.3f}){rel}")
            print(f"  output identical across thread counts: {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
