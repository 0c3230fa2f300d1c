#!/usr/bin/env python3
"""64 identical voices of table and LF oscillators (Mix of 4 SinOsc, LFSaw, LFPulse -> Out) in one
parallel group, as NRT scores: writes DIR/osc64_0.osc (ends at once) and DIR/osc64_2.osc (2 s), for
instruction counts of the oscillators' lane kernels (the 0 s render is start-up, subtracted).

Usage: python3 bench/osc_lanes_score.py DIR
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
from supriya import ugens as U  # noqa: E402
from nrt import Score, build, msg  # noqa: E402


def voice(b):
    f = b["freq"]
    sig = U.Mix.new([U.SinOsc.ar(frequency=f * (1 + 0.5 * i)) for i in range(4)]
                    + [U.LFSaw.ar(frequency=f * 0.5), U.LFPulse.ar(frequency=f * 0.25, width=0.3)]) * 0.01
    U.Out.ar(bus=0, source=sig)


def make(seconds):
    v = build("oscvoice", voice, freq=200.0)
    s = Score([v]).add(0, msg("/p_new", 1, 0, 0))
    s.add(0, *(msg("/s_new", "oscvoice", 1000 + i, 1, 1, "freq", 100.0 + 3 * i) for i in range(64)))
    return s.end(seconds)


out = Path(sys.argv[1])
for t in (0, 2):
    (out / f"osc64_{t}.osc").write_bytes(make(t).encode(str(out)))
