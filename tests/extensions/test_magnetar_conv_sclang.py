"""The sclang class file the repository ships (``clients/sclang/MagnetarConv.sc``), used by sclang
itself: sclang compiles it, writes a SynthDef with ``MagnetarConv.ar`` and prints the prepare
command its ``prepareMsg`` makes; magnetar renders that def and command in NRT, and the output is
numpy's convolution, with no latency."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_magnetar_conv_nrt import INPUT_SECONDS, SR, fft_convolve, room, snr_db  # noqa: E402

import soundfile  # noqa: E402
from nrt import Score, magnetar_binary, msg, render  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCLANG = os.environ.get("SCLANG", shutil.which("sclang") or "/usr/bin/sclang")

SCRIPT = """
SynthDef(\\sc_conv, { |ir = 0, sig = 0| Out.ar(0, MagnetarConv.ar(PlayBuf.ar(1, sig), ir)) }).writeDefFile("{dir}");
("@@MSG " ++ MagnetarConv.prepareMsg(2, 0, [1024, 8192]).asCompileString).postln;
0.exit;
"""


def test_sclang_class_file_builds_a_def_magnetar_renders_as_the_convolution(tmp_path):
    if not os.access(SCLANG, os.X_OK):
        pytest.skip("sclang is not installed")
    home = tmp_path / "home"
    (home / "runtime").mkdir(parents=True)
    (tmp_path / "conf.yaml").write_text(f"includePaths:\n  - {ROOT / 'clients' / 'sclang'}\nexcludePaths: []\n")
    (tmp_path / "t.scd").write_text(SCRIPT.replace("{dir}", str(tmp_path)))
    env = dict(os.environ, HOME=str(home), XDG_RUNTIME_DIR=str(home / "runtime"), QT_QPA_PLATFORM="offscreen",
               QTWEBENGINE_DISABLE_SANDBOX="1")
    port = str(57000 + os.getpid() % 2000)
    out = subprocess.run([SCLANG, "-u", port, "-l", str(tmp_path / "conf.yaml"), str(tmp_path / "t.scd")],
                         capture_output=True, text=True, env=env, timeout=30, stdin=subprocess.DEVNULL)
    lines = [line for line in out.stdout.splitlines() if line.startswith("@@MSG ")]
    assert lines, f"sclang printed no prepare message:\n{out.stdout[-3000:]}"
    prepare = ast.literal_eval(lines[0][len("@@MSG "):])
    assert prepare == ["/b_gen", 2, "MagnetarConvPrepare", 0, 1024, 8192]
    defs = (tmp_path / "sc_conv.scsyndef").read_bytes()

    ir = room(1.0, 9)
    x = np.zeros(int(1.5 * SR), dtype=np.float32)
    x[: int(INPUT_SECONDS * SR)] = np.random.default_rng(8).uniform(-0.5, 0.5, int(INPUT_SECONDS * SR))
    soundfile.write(tmp_path / "ir.wav", ir, SR, subtype="FLOAT")
    soundfile.write(tmp_path / "x.wav", x, SR, subtype="FLOAT")
    score = Score()
    score.add(0.0, msg("/d_recv", defs))
    score.add(0.0, msg("/b_allocRead", 0, str(tmp_path / "ir.wav")), msg("/b_allocRead", 1, str(tmp_path / "x.wav")))
    score.add(0.0, msg(*prepare))
    score.add(0.0, msg("/s_new", "sc_conv", 1000, 0, 0, "ir", 2, "sig", 1))
    score.end(1.4)
    r = render(magnetar_binary(), "magnetar", score, tmp_path / "render", options=("-o", "1"))
    assert r.returncode == 0, r.log[-3000:]
    out_sig = r.read()[:, 0]
    ref = fft_convolve(x[: int(INPUT_SECONDS * SR)], ir)
    assert snr_db(ref, out_sig) >= 120.0
