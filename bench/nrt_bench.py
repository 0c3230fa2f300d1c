#!/usr/bin/env python3
"""Render the same NRT scores with scsynth and magnetar and compare wall time.

Usage: python3 bench/nrt_bench.py [--reps N] [--seconds S] [--only NAME] [--no-write]
Environment: MAGNETAR (default target/release/magnetar), SCSYNTH (default scsynth on PATH).
Writes/updates the "NRT render benchmark" section of BENCHMARKS.md.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

import supriya  # noqa: E402
from supriya import ugens as U  # noqa: E402

from nrt import MAGNETAR, SCSYNTH, Score, build, msg  # noqa: E402

BEGIN = "<!-- nrt-bench:begin -->"
END = "<!-- nrt-bench:end -->"


def fsin_bank(name, n):
    def body(b):
        sig = sum(U.FSinOsc.ar(frequency=b["freq"] * (i + 1)) for i in range(n)) * (0.1 / n)
        U.Out.ar(bus=0, source=[sig, sig])

    return build(name, body, freq=100.0)


def score_many_small(seconds):
    d = fsin_bank("fs4", 4)
    s = Score([d]).add(0, *(msg("/s_new", "fs4", 1000 + i, 1, 0, "freq", 50.0 + i) for i in range(256)))
    return s.end(seconds)


def score_few_large(seconds):
    d = fsin_bank("fs128", 128)
    s = Score([d]).add(0, *(msg("/s_new", "fs128", 1000 + i, 1, 0, "freq", 20.0 + i) for i in range(16)))
    return s.end(seconds)


def score_mixed(seconds):
    env = supriya.Envelope.percussive(attack_time=0.01, release_time=0.4)

    def voice(b):
        src = U.Saw.ar(frequency=b["freq"]) + U.Pulse.ar(frequency=b["freq"] * 1.01, width=0.3)
        f = U.RLPF.ar(source=src, frequency=U.SinOsc.kr(frequency=0.5) * 800 + 1200, reciprocal_of_q=0.3)
        f = U.BPF.ar(source=f, frequency=b["freq"] * 3, reciprocal_of_q=0.5) + U.LPF.ar(source=f, frequency=3000.0)
        sig = f * U.EnvGen.kr(envelope=env, done_action=2) * 0.1
        U.Out.ar(bus=0, source=U.Pan2.ar(source=sig, position=b["pan"]))

    def fx(b):
        x = U.In.ar(bus=0, channel_count=2)
        d = U.CombL.ar(source=x, maximum_delay_time=0.2, delay_time=0.13, decay_time=2.0)
        d = U.AllpassC.ar(source=d, maximum_delay_time=0.05, delay_time=0.031, decay_time=1.0)
        d = U.DelayN.ar(source=d, maximum_delay_time=0.3, delay_time=0.25)
        U.ReplaceOut.ar(bus=0, source=U.LeakDC.ar(source=x + d * 0.3))

    v, f = build("voice", voice, freq=200.0, pan=0.0), build("fx", fx)
    s = Score([v, f]).add(0, msg("/s_new", "fx", 900, 1, 0))
    t, i = 0.0, 0
    while t < seconds:
        for k in range(4):  # 4 voices every 50 ms: ~32 concurrent
            s.add(t, msg("/s_new", "voice", 2000 + i, 0, 0, "freq", 100.0 + 37.0 * ((i * 7) % 23), "pan", ((i % 9) - 4) / 4.0))
            i += 1
        t += 0.05
    return s.end(seconds)


SCORES = {
    "256 synths x 4 FSinOsc": score_many_small,
    "16 synths x 128 FSinOsc": score_few_large,
    "mixed filters/delays/envelopes": score_mixed,
}


def time_render(binary, score_path, out_path):
    # magnetar single-threaded, as the comparison with scsynth asks.
    threads = ["-T", "1"] if Path(binary).name == "magnetar" else []
    cmd = [binary, *threads, "-o", "2", "-N", str(score_path), "_", str(out_path), "48000", "WAV", "float"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{binary} failed ({p.returncode}): {(p.stdout + p.stderr)[-1500:]}")
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--only", help="substring of a score name")
    ap.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    ap.add_argument("--scsynth-only", action="store_true", help="time scsynth only (magnetar not built yet)")
    args = ap.parse_args()

    engines = [("scsynth", SCSYNTH)]
    if not args.scsynth_only:
        if not os.access(MAGNETAR, os.X_OK):
            sys.exit(f"magnetar binary not found at {MAGNETAR}: run `cargo build --release -p magnetar-server` "
                     "or set MAGNETAR (or pass --scsynth-only)")
        engines.append(("magnetar", MAGNETAR))

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, make in SCORES.items():
            if args.only and args.only not in name:
                continue
            score_path = tmp / "score.osc"
            score_path.write_bytes(make(args.seconds).encode(str(tmp)))
            times = {e: [] for e, _ in engines}
            for _ in range(args.reps):
                for e, binary in engines:  # interleave engines so drift affects both alike
                    times[e].append(time_render(binary, score_path, tmp / f"{e}.wav"))
            row = {"name": name}
            for e, _ in engines:
                ts = times[e]
                row[e] = (statistics.median(ts), min(ts), max(ts))
            rows.append(row)
            line = f"{name:34s} " + "  ".join(
                f"{e}: median {row[e][0]:.3f}s min {row[e][1]:.3f}s max {row[e][2]:.3f}s" for e, _ in engines
            )
            if "magnetar" in row:
                line += f"  scsynth/magnetar {row['scsynth'][0] / row['magnetar'][0]:.2f}x"
            print(line, flush=True)

    if args.no_write:
        return
    command = "python3 bench/nrt_bench.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [
        BEGIN,
        "## NRT render benchmark",
        "",
        f"Command: `{command.strip()}` ({args.reps} repetitions, {args.seconds:g} s of audio at 48 kHz, "
        "stereo float WAV, engines interleaved; wall time per render).",
        "",
        "| score | scsynth median (min–max) | magnetar median (min–max) | scsynth / magnetar |",
        "|---|---|---|---|",
    ]
    for row in rows:
        sc = row["scsynth"]
        mg = row.get("magnetar")
        mg_s = f"{mg[0]:.3f} s ({mg[1]:.3f}–{mg[2]:.3f})" if mg else "not run"
        ratio = f"{sc[0] / mg[0]:.2f}×" if mg else "–"
        lines.append(f"| {row['name']} | {sc[0]:.3f} s ({sc[1]:.3f}–{sc[2]:.3f}) | {mg_s} | {ratio} |")
    lines.append(END)
    section = "\n".join(lines) + "\n"
    print(f"updated {write_section(BEGIN, END, section)}")


if __name__ == "__main__":
    main()
