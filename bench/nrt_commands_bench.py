#!/usr/bin/env python3
"""CPU cost of decoding and performing commands: a command-heavy NRT score.

A handful of quiet synths and a few hundred thousand /n_set, /n_setn, /c_set
and /c_setn (named and indexed controls, one to four values each), rendered
by scsynth and by one or more magnetar binaries in the same run, the engines
interleaved, each render's CPU time (user + sys of the child process)
recorded; the median, min and max of the repetitions are printed.

Usage: python3 bench/nrt_commands_bench.py [--reps N] [--bundles B] [BINARY...]
BINARY: magnetar binaries to compare (default target/release/magnetar); an
argument LABEL=PATH names one. Environment: SCSYNTH (default scsynth on PATH).
"""

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

from supriya import ugens as U  # noqa: E402
from supriya.ugens import compile_synthdefs  # noqa: E402

from nrt import MAGNETAR, SCSYNTH, build, osc_message, timetag  # noqa: E402

SYNTHS = 8
BUS_BASE = 100


def voice_def():
    def body(b):
        lv = b["lv"]
        sig = U.SinOsc.ar(frequency=b["freq"]) * b["amp"] * (lv[0] + lv[1] + lv[2] + lv[3]) * 0.001
        U.Out.ar(bus=0, source=U.Pan2.ar(source=sig, position=b["pan"]))

    return build("cmdvoice", body, freq=220.0, amp=0.1, pan=0.0, lv=[0.25, 0.25, 0.25, 0.25])


def bundle(seconds, messages):
    body = b"".join(struct.pack(">i", len(m)) + m for m in messages)
    return b"#bundle\0" + struct.pack(">Q", timetag(seconds)) + body


def score(bundles, step):
    """`bundles` bundles `step` seconds apart, 26 commands each after the first."""
    out = []

    def add(seconds, messages):
        b = bundle(seconds, messages)
        out.append(struct.pack(">i", len(b)) + b)

    add(0.0, [osc_message("/d_recv", compile_synthdefs(voice_def()))])
    add(0.0, [osc_message("/s_new", "cmdvoice", 1000 + i, 1, 0, "freq", 100.0 + 50 * i) for i in range(SYNTHS)])
    for k in range(1, bundles + 1):
        t = k * step
        msgs = []
        for i in range(SYNTHS):
            node = 1000 + i
            x = (k * 7 + i * 13) % 97 / 97.0
            msgs.append(osc_message("/n_set", node, "freq", 100.0 + 400.0 * x, "amp", 0.05 + 0.1 * x))
            msgs.append(osc_message("/n_setn", node, "lv", 4, x, 1.0 - x, 0.5, 0.25 * x))
            msgs.append(osc_message("/n_set", node, 2, x - 0.5))  # pan, by index
        msgs.append(osc_message("/c_set", BUS_BASE, float(k % 50), BUS_BASE + 1, 0.5))
        msgs.append(osc_message("/c_setn", BUS_BASE + 2, 4, 0.1, 0.2, 0.3, float(k % 10)))
        add(t, msgs)
    add((bundles + 1) * step, [osc_message("/c_set", 0, 0.0)])
    return b"".join(out), bundles * (SYNTHS * 3 + 2)


def cpu_render(binary, score_path, out_path):
    threads = ["-T", "1"] if "magnetar" in Path(binary).name else []
    cmd = [binary, *threads, "-o", "2", "-N", str(score_path), "_", str(out_path), "48000", "WAV", "float"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{binary} failed ({p.returncode}): {out[-1500:].decode(errors='replace')}")
    text = out.decode(errors="replace")
    if "FAILURE" in text or "ERROR" in text:
        raise RuntimeError(f"{binary} reported an error: {text[-1500:]}")
    return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--bundles", type=int, default=8000, help="bundles of 26 commands")
    ap.add_argument("--step", type=float, default=0.00125, help="seconds between bundles")
    ap.add_argument("--no-scsynth", action="store_true")
    ap.add_argument("binaries", nargs="*")
    args = ap.parse_args()

    engines = [] if args.no_scsynth else [("scsynth", SCSYNTH)]
    for b in args.binaries or [MAGNETAR]:
        label, _, path = b.rpartition("=")
        engines.append((label or path, path))

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data, n = score(args.bundles, args.step)
        score_path = tmp / "score.osc"
        score_path.write_bytes(data)
        print(f"{n} commands in {args.bundles} bundles, {(args.bundles + 1) * args.step:.1f} s of audio; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
        times = {label: [] for label, _ in engines}
        for _ in range(args.reps):
            for label, binary in engines:  # interleaved: drift and load affect all alike
                times[label].append(cpu_render(binary, score_path, tmp / "out.wav"))
        for label, _ in engines:
            ts = times[label]
            print(f"{label:40s} CPU median {statistics.median(ts):.3f} s  min {min(ts):.3f}  max {max(ts):.3f}")
        print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
