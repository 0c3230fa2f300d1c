#!/usr/bin/env python3
"""What working out a parallel group's jobs costs when the group is edited often: a /p_new group
of N voices (Saw -> RLPF -> Pan2 under a linen envelope, done action 2) where a new note arrives
every K blocks and each note lasts N*K blocks, so that about N play at once and the tree is
edited every K blocks (a /s_new, and a synth ending by its done action).

Each score is rendered in non-real-time under callgrind (instruction counts, not wall time, so
that the figures hold on a busy machine), with -T 2 and -T 1. Printed per render, in instructions
per block: the audio thread's block (`Engine::run_block`, the helper threads' share of a spread
group not counted), working out the group's jobs (`GroupJobs::prepare`), compiling the DSP queue
of a new shape (`compile_flat`), their share of the block, and the audio thread's share of the
group when spread on the threads (`Parallel::run_group`; 0 when the group ran as a plain group).
With -T 1 there are no parallel groups: every group runs as a plain one.

With --wall REPS the same scores are rendered without callgrind instead, with the engine's own
choice of when to spread (no MAGNETAR_SPREAD), each thread count and each binary in turn REPS
times: printed are the median and best wall time per render and the ratio of -T 1's median to
each other's (wall time: it moves with the machine's load).

Usage: python3 bench/prepare_bench.py [--voices 64,256] [--every 1,4] [--blocks B]
           [--threads 2,1] [--binary PATH [PATH ...]] [--wall REPS]
"""

import argparse
import os
import re
import subprocess
import sys
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

import supriya  # noqa: E402
from supriya import ugens as U  # noqa: E402

from nrt import MAGNETAR, SR, BLOCK, Score, build, msg  # noqa: E402

# Inclusive counts of these functions (callgrind names them by their Rust paths).
PARTS = {
    "prepare": re.compile(r"GroupJobs>::prepare\b|GroupJobs::prepare\b"),
    "compile": re.compile(r"::compile_flat\b"),
    "block": re.compile(r"engine::Engine::run_block\b"),
    "spread": re.compile(r"parallel::Parallel::run_group\b"),
}


def voice_def():
    def body(b):
        env = supriya.Envelope.linen(attack_time=0.005, sustain_time=b["sustain"], release_time=0.02)
        sig = U.Saw.ar(frequency=b["freq"])
        sig = U.RLPF.ar(source=sig, frequency=b["freq"] * 4, reciprocal_of_q=0.3)
        sig = sig * U.EnvGen.kr(envelope=env, done_action=2) * 0.02
        U.Out.ar(bus=0, source=U.Pan2.ar(source=sig, position=b["pan"]))

    return build("note", body, freq=200.0, pan=0.0, sustain=1.0)


def score(voices, every, blocks):
    """`blocks` blocks; a note every `every` blocks lasting about voices*every blocks. The
    group starts full (voices notes at time 0 with staggered lengths) so that every block
    measured has about `voices` playing."""
    block_s = BLOCK / SR
    life = voices * every * block_s
    s = Score([voice_def()]).add(0, msg("/p_new", 1, 0, 0))
    node = 1000

    def note(t, length):
        nonlocal node
        node += 1
        k = node - 1000
        return msg("/s_new", "note", node, 1, 1, "freq", 80.0 + (k * 37) % 900, "pan", ((k % 9) - 4) / 4.0,
                   "sustain", max(length - 0.025, 0.001))

    s.add(0, *(note(0, life * (i + 1) / voices) for i in range(voices)))
    b = every
    while b < blocks:
        s.add(b * block_s, note(b * block_s, life))
        b += every
    return s.end(blocks * block_s)


def inclusive(out_file):
    """(total instructions, {part: inclusive instructions}) from a callgrind output file."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out_file],
                          capture_output=True, text=True, check=True).stdout
    total, parts = 0, {k: 0 for k in PARTS}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(?.*?\)?\s*(\S.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = n
            continue
        for k, pat in PARTS.items():
            # A function listed several times (inlined copies, threads) counts once per copy.
            if pat.search(m.group(2)) and "file:" not in m.group(2):
                parts[k] = max(parts[k], n)
    return total, parts


def measure(binary, sc, threads, tmp, blocks):
    score_path = Path(tmp) / "score.osc"
    score_path.write_bytes(sc.encode(tmp))
    out_file = Path(tmp) / f"cg.{threads}.out"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--separate-threads=no",
           binary, "--plugins", "0", "-T", str(threads), "-o", "2", "-N", str(score_path), "_", str(Path(tmp) / "out.wav"),
           str(SR), "WAV", "float"]
    env = dict(os.environ, MAGNETAR_SPREAD=os.environ.get("MAGNETAR_SPREAD", "always"))
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return inclusive(str(out_file))


def wall(binaries, sc, threads, reps):
    """{(binary, threads): [seconds per render]}, renders interleaved."""
    times = {(b, t): [] for b in binaries for t in threads}
    with tempfile.TemporaryDirectory() as tmp:
        score_path = Path(tmp) / "score.osc"
        score_path.write_bytes(sc.encode(tmp))
        env = {k: v for k, v in os.environ.items() if k != "MAGNETAR_SPREAD"}
        for _ in range(reps):
            for b in binaries:
                for t in threads:
                    cmd = [b, "--plugins", "0", "-T", str(t), "-o", "2", "-N", str(score_path), "_",
                           str(Path(tmp) / "out.wav"), str(SR), "WAV", "float"]
                    start = time.perf_counter()
                    subprocess.run(cmd, check=True, capture_output=True, env=env)
                    times[(b, t)].append(time.perf_counter() - start)
    return times


def main_wall(a, binaries, threads):
    print(f"{a.blocks} blocks of {BLOCK} at {SR} Hz; wall seconds per render, median (best) of {a.wall}, interleaved")
    for voices in map(int, a.voices.split(",")):
        for every in map(int, a.every.split(",")):
            times = wall(binaries, score(voices, every, a.blocks), threads, a.wall)
            for b in binaries:
                med = {t: statistics.median(times[(b, t)]) for t in threads}
                cells = [f"-T {t} {med[t]:.3f} ({min(times[(b, t)]):.3f})" for t in threads]
                ratios = [f"-T 1 / -T {t} {med[1] / med[t]:.2f}x" for t in threads if t != 1 and 1 in med]
                print(f"voices {voices:>4} every {every} | {b} | " + " | ".join(cells + ratios), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--voices", default="64,256")
    ap.add_argument("--every", default="1,4")
    ap.add_argument("--blocks", type=int, default=1500)
    ap.add_argument("--threads", default="2,1")
    ap.add_argument("--binary", nargs="+", default=[MAGNETAR])
    ap.add_argument("--wall", type=int, metavar="REPS", help="time renders instead of counting instructions")
    a = ap.parse_args()
    if a.wall:
        return main_wall(a, a.binary, [int(t) for t in a.threads.split(",")])
    if len(a.binary) != 1:
        ap.error("instruction counts take one --binary at a time")
    a.binary = a.binary[0]
    print(f"binary: {a.binary}; {a.blocks} blocks of {BLOCK} at {SR} Hz; instructions per block (callgrind)")
    print(f"{'voices':>6} {'every':>5} {'-T':>2} | {'run_block':>10} {'prepare':>9} {'compile':>9} {'share':>6} {'spread':>9}")
    for voices in map(int, a.voices.split(",")):
        for every in map(int, a.every.split(",")):
            sc = score(voices, every, a.blocks)
            for threads in map(int, a.threads.split(",")):
                with tempfile.TemporaryDirectory() as tmp:
                    total, parts = measure(a.binary, sc, threads, tmp, a.blocks)
                per = lambda n: n / a.blocks  # noqa: E731
                block = parts["block"]
                share = (parts["prepare"] + parts["compile"]) / block * 100 if block else 0.0
                print(f"{voices:>6} {every:>5} {threads:>2} | {per(block):>10.0f} {per(parts['prepare']):>9.0f} "
                      f"{per(parts['compile']):>9.0f} {share:>5.1f}% {per(parts['spread']):>9.0f}", flush=True)


if __name__ == "__main__":
    main()
