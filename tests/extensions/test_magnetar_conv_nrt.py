"""MagnetarConv (an extension) rendered in NRT against numpy's convolution of the same signals.

The unit is built with the supriya class the repository ships (``clients/supriya``); the response
is prepared by ``/b_gen ... "MagnetarConvPrepare"`` (tuned, or with the sizes given), and the
output must equal the full convolution, with no latency, to 120 dB SNR, for responses of 0.1 to
20 s at block sizes 32 to 1024.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from supriya import ugens as U
from supriya.ugens import SynthDefBuilder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "clients" / "supriya"))

from magnetar_conv import MagnetarConv, MagnetarConvTD, prepare_message  # noqa: E402
from nrt import Score, magnetar_binary, msg, render  # noqa: E402

SR = 48000
INPUT_SECONDS = 0.25


def conv_def(unit):
    with SynthDefBuilder(ir=0, sig=0) as b:
        src = U.PlayBuf.ar(buffer_id=b["sig"], channel_count=1)
        U.Out.ar(bus=0, source=unit.ar(source=src, buffer_id=b["ir"]))
    return b.build(name="conv")


def room(seconds: float, seed: int) -> np.ndarray:
    n = max(1, int(seconds * SR))
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, n) * np.exp(-4.0 * np.arange(n) / n)).astype(np.float32)


def render_conv(tmp_path: Path, unit, block: int, ir: np.ndarray, x: np.ndarray, sizes=()) -> np.ndarray:
    tmp_path.mkdir(parents=True, exist_ok=True)
    soundfile.write(tmp_path / "ir.wav", ir, SR, subtype="FLOAT")
    end = (len(ir) + len(x)) / SR + 0.1
    # Silence after the input, for the whole render (PlayBuf holds its last frame).
    padded = np.zeros(int(end * SR) + 4 * block, dtype=np.float32)
    padded[: len(x)] = x
    soundfile.write(tmp_path / "x.wav", padded, SR, subtype="FLOAT")
    score = Score([conv_def(unit)])
    score.add(0.0, msg("/b_allocRead", 0, str(tmp_path / "ir.wav")), msg("/b_allocRead", 1, str(tmp_path / "x.wav")))
    score.add(0.0, msg(*prepare_message(2, 0, sizes)))
    score.add(0.0, msg("/s_new", "conv", 1000, 0, 0, "ir", 2, "sig", 1))
    score.end(end)
    r = render(magnetar_binary(), "magnetar", score, tmp_path, options=("-o", "1", "-z", str(block)))
    assert r.returncode == 0, r.log[-3000:]
    assert not r.errors(), r.errors()
    return r.read()[:, 0]


def snr_db(ref: np.ndarray, out: np.ndarray) -> float:
    n = min(len(ref), len(out))
    err = np.sum((ref[:n] - out[:n]) ** 2)
    return 10 * np.log10(np.sum(ref[:n] ** 2) / max(err, 1e-300))


CASES = [
    # (block, response seconds, sizes; () = the tuner's choice)
    (32, 0.1, ()),
    (64, 1.0, ()),
    (64, 1.0, (2048,)),
    (64, 1.0, (128, 256, 512, 1024, 2048, 4096, 8192)),
    (256, 5.0, ()),
    (256, 5.0, (8192,)),
    (1024, 5.0, ()),
    (128, 20.0, ()),
    (512, 20.0, (4096, 65536)),
]


@pytest.mark.parametrize("block,seconds,sizes", CASES, ids=[f"z{b}-{s}s-{'x'.join(map(str, z)) or 'tuned'}" for b, s, z in CASES])
def test_magnetar_conv_equals_numpy_convolution_with_no_latency(tmp_path, block, seconds, sizes):
    ir = room(seconds, 1)
    x = np.random.default_rng(2).uniform(-0.5, 0.5, int(INPUT_SECONDS * SR)).astype(np.float32)
    ref = fft_convolve(x, ir)
    out = render_conv(tmp_path, MagnetarConv, block, ir, x, sizes)
    assert len(out) >= len(ref) - block, f"rendered {len(out)} frames, the convolution has {len(ref)}"
    snr = snr_db(ref, out)
    assert snr >= 120.0, f"SNR {snr:.1f} dB"


def fft_convolve(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    n = len(x) + len(h) - 1
    size = 1 << (n - 1).bit_length()
    return np.fft.irfft(np.fft.rfft(x.astype(np.float64), size) * np.fft.rfft(h.astype(np.float64), size), size)[:n]


def test_td_variant_renders_the_same_convolution(tmp_path):
    ir = room(1.0, 3)
    x = np.random.default_rng(4).uniform(-0.5, 0.5, int(INPUT_SECONDS * SR)).astype(np.float32)
    pe = render_conv(tmp_path / "pe", MagnetarConv, 64, ir, x, (2048,))
    td = render_conv(tmp_path / "td", MagnetarConvTD, 64, ir, x, (2048,))
    ref = fft_convolve(x, ir)
    assert snr_db(ref, td) >= 120.0
    # The same arithmetic in the same order: PE and TD agree bit for bit.
    assert np.array_equal(pe, td)
