"""Random and malformed commands inside valid scores: magnetar reports them
and keeps rendering; it never crashes, hangs or stops early."""

import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

from nrt import magnetar_binary, osc_message, osc_bundle, compile_synthdefs, build  # noqa: E402
from supriya import ugens as U  # noqa: E402

COMMANDS = [
    "/s_new", "/g_new", "/p_new", "/n_free", "/n_run", "/n_set", "/n_setn", "/n_fill", "/n_map", "/n_mapn",
    "/n_mapa", "/n_mapan", "/n_before", "/n_after", "/n_order", "/g_head", "/g_tail", "/g_freeAll",
    "/g_deepFree", "/s_noid", "/c_set", "/c_setn", "/c_fill", "/b_alloc", "/b_free", "/b_zero", "/b_set",
    "/b_setn", "/b_fill", "/b_gen", "/b_read", "/b_allocRead", "/b_write", "/b_close", "/b_query", "/b_get",
    "/b_getn", "/d_free", "/n_query", "/s_get", "/s_getn", "/c_get", "/c_getn", "/g_queryTree",
    "/g_dumpTree", "/n_trace", "/status", "/sync", "/d_recv", "/nope",
]

INTS = [0, 1, 2, 3, 4, -1, 1000, 1001, -5, 2**31 - 1, -(2**31), 7, 64]
FLOATS = [0.0, 0.5, -1.0, 1e30, -1e30, float("nan"), float("inf"), 440.0]
STRINGS = ["tone", "freq", "gate", "c0", "a0", "c99999", "a-3", "", "sine1", "copy", "/nonexistent.wav", "x" * 40]


def random_arg(r):
    k = r.random()
    if k < 0.35:
        return r.choice(INTS)
    if k < 0.6:
        return r.choice(FLOATS)
    if k < 0.8:
        return r.choice(STRINGS)
    return bytes(r.randrange(256) for _ in range(r.randrange(12)))


def tone_def():
    def body(b):
        env = U.EnvGen.kr(envelope=__import__("supriya").Envelope.adsr(), gate=b["gate"], done_action=2)
        U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=b["freq"]) * env * 0.1)

    return build("tone", body, freq=440.0, gate=1.0)


@pytest.mark.parametrize("seed", range(24))
def test_random_commands_never_crash_or_hang(tmp_path, seed):
    r = random.Random(seed)
    defs = compile_synthdefs(tone_def())
    setup = [osc_message("/d_recv", defs), osc_message("/g_new", 1, 0, 0), osc_message("/s_new", "tone", 1000, 0, 1),
             osc_message("/b_alloc", 0, 256, 1)]
    packets = [osc_bundle(0.0, setup)]
    t = 0.0
    for _ in range(30):
        t += r.random() * 0.02
        msgs = [osc_message(r.choice(COMMANDS), *[random_arg(r) for _ in range(r.randrange(7))])
                for _ in range(r.randrange(1, 5))]
        packets.append(osc_bundle(t, msgs))
    end = t + 0.05
    packets.append(osc_bundle(end, [osc_message("/c_set", 0, 0.0)]))
    score = b"".join(struct.pack(">i", len(p)) + p for p in packets)
    path = tmp_path / "score.osc"
    path.write_bytes(score)
    out = tmp_path / "out.wav"
    proc = subprocess.run(
        [magnetar_binary(), "-o", "2", "-N", str(path), "_", str(out), "48000", "WAV", "float"],
        capture_output=True, text=True, errors="replace", timeout=60, cwd=tmp_path,
    )
    assert proc.returncode == 0, f"seed {seed}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert "panicked" not in proc.stderr
    import soundfile
    frames = soundfile.info(str(out)).frames
    # Every block up to the one holding the last bundle is rendered.
    assert frames >= int(end * 48000) - 64, f"seed {seed}: output stopped early at {frames} frames"
