"""Counts the futex calls the audio thread of `magnetar -T 2` makes (clock driver, 256-frame
periods, 64-sample blocks), idle, with 8 synths in the root group and with 8 more in a
parallel group, by tracing the server with strace for 2 s each.

    python3 bench/helper_wakes.py
"""

import collections
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for d in ("tests/realtime", "tests/e2e", "tests/compat"):
    sys.path.insert(0, str(ROOT / d))
from rtcheck import rt_stats, boot_magnetar  # noqa: E402
from rtserver import OscClient
from nrt import compile_synthdefs
from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder
def tone():
    with SynthDefBuilder(freq=440.0) as b:
        U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=b["freq"]) * 0.01)
    return b.build(name="tone")
s = boot_magnetar(None, extra=("-T", "2"))
c = OscClient(s.port)
c.send(M("/d_recv", compile_synthdefs(tone()))); c.wait_for("/done")
tid = rt_stats(s.port).audio_tid
def trace(label, secs=2.0):
    st0 = rt_stats(s.port)
    out = f"/tmp/magnetar-helper-wakes-{label}.txt"
    p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=futex", "-o", out, "-p", str(s.pid)])
    time.sleep(secs); p.terminate(); p.wait()
    st1 = rt_stats(s.port)
    periods = st1.field(3) - st0.field(3)
    calls = collections.Counter()
    for line in open(out):
        m = re.match(r"(\d+)\s+futex\(0x[0-9a-f]+, (\w+)", line)
        if m and int(m.group(1)) == tid: calls[m.group(2)] += 1
    print(label, "periods", periods, "audio-thread futex calls", dict(calls), "parallel runs", st1.field(5) - st0.field(5))
trace("idle")
for k in range(8): c.send(M("/s_new", "tone", 1000 + k, 0, 0, "freq", 200 + 50 * k))
c.request(M("/sync", 1), "/synced"); time.sleep(0.3)
trace("sequential-8")
c.send(M("/p_new", 2, 0, 0))
for k in range(8): c.send(M("/s_new", "tone", 2000 + k, 0, 2, "freq", 200 + 50 * k))
c.request(M("/sync", 2), "/synced"); time.sleep(0.3)
trace("parallel-8")
c.send(M("/quit")); time.sleep(0.5)
