"""Helpers for rendering SuperCollider NRT scores with scsynth and magnetar and comparing them.

A score is a list of timed bundles.  Both engines are run in the same test on the same score
bytes (string arguments may contain ``{dir}``, replaced by each engine's own working directory,
so file-writing commands do not collide).  Outputs are read with soundfile and compared with
:func:`assert_same`, :func:`assert_bit_exact` or the statistical helpers.

Deterministic cases must be bit-identical to scsynth: :func:`assert_same` fails on any
difference unless the case is listed in ``INEXACT`` with the reason an exact match is
impossible.  Set ``MAGNETAR_EXACT_LOG=path`` to append one line per compared case
(case id, ``exact``/``inexact``, worst-channel SNR) to that file.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import soundfile
import pytest

import supriya
from supriya import ugens as U
from supriya.enums import CalculationRate
from supriya.ugens import SynthDef, SynthDefBuilder, compile_synthdefs

SCSYNTH = os.environ.get("SCSYNTH", shutil.which("scsynth") or "/usr/bin/scsynth")
DEFAULT_MAGNETAR = str(Path(__file__).resolve().parents[2] / "target" / "release" / "magnetar")
MAGNETAR = os.environ.get("MAGNETAR", DEFAULT_MAGNETAR)

SR = 48000
BLOCK = 64
RENDER_TIMEOUT = 120

# Lines scsynth prints when a command or a SynthDef was rejected.  A case that provokes one of
# these by accident is a broken case, not a passing one.
ERROR_MARKERS = ("FAILURE", "ERROR:", "exception", "not installed", "not found", "Command not found")
BENIGN_ERRORS = ("open directory failed",)


# ---------------------------------------------------------------------------------------------
# OSC encoding
# ---------------------------------------------------------------------------------------------


class Raw(bytes):
    """Bytes that go into a score verbatim (used to build malformed input)."""


@dataclasses.dataclass(frozen=True)
class Double:
    value: float


@dataclasses.dataclass(frozen=True)
class Long:
    value: int


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (4 - len(data) % 4)


def _blob(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data + b"\0" * ((-len(data)) % 4)


def osc_message(address: str, *args) -> bytes:
    """Encode one OSC message.  int → i, float → f, str → s, bytes → b (a blob),
    list → an OSC array (``[`` … ``]`` type tags, as sclang sends control arrays)."""
    tags, body = _encode_args(args)
    return _pad(address.encode()) + _pad(("," + tags).encode()) + body


def _encode_args(args) -> tuple[str, bytes]:
    tags = ""
    body = b""
    for arg in args:
        if isinstance(arg, list):
            inner_tags, inner_body = _encode_args(arg)
            tags += "[" + inner_tags + "]"
            body += inner_body
            continue
        if isinstance(arg, bool):
            raise TypeError("use 0/1 rather than bool in OSC messages")
        if isinstance(arg, Double):
            tags += "d"
            body += struct.pack(">d", arg.value)
        elif isinstance(arg, Long):
            tags += "h"
            body += struct.pack(">q", arg.value)
        elif isinstance(arg, (int, np.integer)):
            tags += "i"
            body += struct.pack(">i", int(arg))
        elif isinstance(arg, (float, np.floating)):
            tags += "f"
            body += struct.pack(">f", float(arg))
        elif isinstance(arg, str):
            tags += "s"
            body += _pad(arg.encode())
        elif isinstance(arg, (bytes, bytearray)):
            tags += "b"
            body += _blob(bytes(arg))
        else:
            raise TypeError(f"cannot encode {arg!r}")
    return tags, body


def msg(address: str, *args) -> "Msg":
    return Msg(address, args)


@dataclasses.dataclass(frozen=True)
class Msg:
    address: str
    args: tuple

    def encode(self, workdir: str = "") -> bytes:
        return osc_message(self.address, *(_subst(a, workdir) for a in self.args))


def _subst(arg, workdir: str):
    if isinstance(arg, list):
        return [_subst(a, workdir) for a in arg]
    if isinstance(arg, str) and "{dir}" in arg:
        return arg.replace("{dir}", workdir)
    if isinstance(arg, Msg):
        return arg.encode(workdir)
    return arg


def timetag(seconds: float) -> int:
    return int(round(seconds * 2**32))


def osc_bundle(seconds: float, messages: Iterable[bytes]) -> bytes:
    out = b"#bundle\0" + struct.pack(">Q", timetag(seconds))
    for m in messages:
        out += struct.pack(">i", len(m)) + m
    return out


# ---------------------------------------------------------------------------------------------
# Scores
# ---------------------------------------------------------------------------------------------


class Score:
    """Timed bundles plus the SynthDefs to send with /d_recv at time 0."""

    def __init__(self, synthdefs: Sequence[SynthDef] = (), *, send_defs: bool = True):
        self.synthdefs = list(synthdefs)
        self.send_defs = send_defs
        self.entries: list[tuple[float, list]] = []

    def add(self, seconds: float, *messages) -> "Score":
        self.entries.append((float(seconds), list(messages)))
        return self

    def end(self, seconds: float) -> "Score":
        """Mark the end of the render (scsynth stops after the block holding the last bundle)."""
        return self.add(seconds, msg("/c_set", 0, 0.0))

    def encode(self, workdir: str = "") -> bytes:
        entries = sorted(self.entries, key=lambda e: e[0])  # stable: same-time bundles keep order
        if self.synthdefs and self.send_defs:
            entries.insert(0, (0.0, [msg("/d_recv", compile_synthdefs(*self.synthdefs))]))
        out = b""
        for seconds, messages in entries:
            if len(messages) == 1 and isinstance(messages[0], Raw):
                bundle = bytes(messages[0])
            else:
                bundle = osc_bundle(
                    seconds,
                    (m if isinstance(m, (bytes, Raw)) else m.encode(workdir) for m in messages),
                )
            out += struct.pack(">i", len(bundle)) + bundle
        return out


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Render:
    engine: str
    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str
    workdir: Path
    output: Path

    @property
    def log(self) -> str:
        return self.stdout + self.stderr

    def read(self) -> np.ndarray:
        assert self.output.exists(), (
            f"{self.engine} wrote no output file {self.output}\ncommand: {' '.join(self.cmd)}\n"
            f"exit code {self.returncode}\n{self.log[-3000:]}"
        )
        data, _ = soundfile.read(str(self.output), dtype="float64", always_2d=True)
        return data

    def info(self):
        return soundfile.info(str(self.output))

    def errors(self) -> list[str]:
        out = []
        for line in self.log.splitlines():
            if any(b in line for b in BENIGN_ERRORS):
                continue
            if any(m in line for m in ERROR_MARKERS):
                out.append(line)
        return out


def magnetar_binary() -> str:
    path = MAGNETAR
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(
            f"magnetar binary not found or not executable at {path!r}: build it with "
            "`cargo build --release -p magnetar-server` or point the MAGNETAR environment "
            "variable at it",
            pytrace=False,
        )
    return path


def render(
    binary: str,
    engine: str,
    score: Score | bytes,
    workdir: Path,
    *,
    sr: int = SR,
    header: str = "WAV",
    sample: str = "float",
    options: Sequence[str] = ("-o", "2"),
    input_file: str | None = None,
    out_name: str | None = None,
) -> Render:
    workdir.mkdir(parents=True, exist_ok=True)
    data = score.encode(str(workdir)) if isinstance(score, Score) else score
    score_path = workdir / "score.osc"
    score_path.write_bytes(data)
    ext = {"WAV": "wav", "AIFF": "aiff", "CAF": "caf"}.get(header.upper(), "snd")
    output = workdir / (out_name or f"out.{ext}")
    cmd = [
        binary,
        *options,
        "-N",
        str(score_path),
        input_file or "_",
        str(output),
        str(sr),
        header,
        sample,
    ]
    proc = subprocess.run(
        cmd, cwd=workdir, capture_output=True, text=True, errors="replace", timeout=RENDER_TIMEOUT
    )
    return Render(engine, cmd, proc.returncode, proc.stdout, proc.stderr, workdir, output)


@dataclasses.dataclass
class Pair:
    ref: Render
    dut: Render

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        return self.ref.read(), self.dut.read()


def render_both(
    score: Score | bytes, tmp_path: Path, *, allow_errors: bool = False, dut_options: Sequence[str] = (), **kw
) -> Pair:
    """Render with scsynth (reference) and magnetar (under test) into sibling directories;
    ``dut_options`` go to magnetar only (options scsynth does not have, such as -T)."""
    dut_bin = magnetar_binary()
    ref = render(SCSYNTH, "scsynth", score, tmp_path / "scsynth", **kw)
    if not allow_errors:
        errs = ref.errors()
        assert not errs, "the case itself is broken: scsynth reported\n" + "\n".join(errs)
    assert ref.returncode == 0, f"scsynth failed ({ref.returncode}):\n{ref.log[-3000:]}"
    dut_kw = dict(kw)
    if dut_options:
        dut_kw["options"] = [*kw.get("options", ("-o", "2")), *dut_options]
    dut = render(dut_bin, "magnetar", score, tmp_path / "magnetar", **dut_kw)
    assert dut.returncode == 0, (
        f"magnetar exited with {dut.returncode}\ncommand: {' '.join(dut.cmd)}\n{dut.log[-3000:]}"
    )
    return Pair(ref, dut)


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


def snr_db(ref: np.ndarray, dut: np.ndarray) -> float:
    sig = float(np.sum(np.square(ref)))
    err = float(np.sum(np.square(ref - dut)))
    if err == 0.0:
        return math.inf
    if sig == 0.0:
        return -math.inf
    return 10.0 * math.log10(sig / err)


def _shape_report(ref: np.ndarray, dut: np.ndarray) -> str | None:
    if ref.shape == dut.shape:
        return None
    return (
        f"shape differs: scsynth {ref.shape[0]} frames × {ref.shape[1]} channels "
        f"({ref.shape[0] / BLOCK:.2f} blocks), magnetar {dut.shape[0]} frames × {dut.shape[1]} "
        f"channels ({dut.shape[0] / BLOCK:.2f} blocks)"
    )


def diff_report(ref: np.ndarray, dut: np.ndarray, block: int = BLOCK, label: str = "") -> str:
    lines = [label] if label else []
    diff = np.abs(ref - dut)
    for ch in range(ref.shape[1]):
        d = diff[:, ch]
        nz = np.flatnonzero(d)
        s = snr_db(ref[:, ch], dut[:, ch])
        if len(nz) == 0:
            lines.append(f"  ch{ch}: identical")
            continue
        i = int(nz[0])
        worst = int(np.argmax(d))
        lines.append(
            f"  ch{ch}: SNR {s:.1f} dB, max |diff| {d[worst]:.3g} at frame {worst} "
            f"(block {worst // block}), first difference at frame {i} (block {i // block}, "
            f"offset {i % block}): scsynth {ref[i, ch]:.9g} magnetar {dut[i, ch]:.9g}"
        )
    return "\n".join(lines)


# Deterministic cases must match scsynth bit for bit.  A case may opt out only when an exact
# match is impossible; the key is a substring of the case id (pytest node id, or
# ``case@variant`` in test_block_sizes_rates), the value says why, optionally with the SNR
# (dB) still required.
INEXACT: dict[str, str | tuple[str, float]] = {
    "Ramp.ar-klag@": (
        "when a segment ends on a block's last sample scsynth's Ramp reads its audio input one past "
        "the block, i.e. the first sample of whichever wire buffer follows in memory",
        -math.inf,
    ),
    "Ramp.ar@z1": (
        "with one-sample blocks scsynth's Ramp writes its output before reading its input, and the "
        "two share a wire buffer when the input has no other reader, so it ramps to its own output",
        -math.inf,
    ),
}


EXACT_LOG = os.environ.get("MAGNETAR_EXACT_LOG")


def current_case() -> str:
    """The running pytest node id without the trailing ``(call)`` marker."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]


def inexact_reason(case_id: str | None = None) -> str | None:
    entry = _inexact_entry(case_id)
    return None if entry is None else entry[0]


def inexact_min_snr(case_id: str | None = None, default: float = 100.0) -> float:
    entry = _inexact_entry(case_id)
    return default if entry is None or entry[1] is None else entry[1]


def _inexact_entry(case_id: str | None) -> tuple[str, float | None] | None:
    case_id = current_case() if case_id is None else case_id
    for key, value in INEXACT.items():
        if key in case_id:
            return value if isinstance(value, tuple) else (value, None)
    return None


def _record_exactness(label: str, exact: bool, worst: float) -> None:
    if not EXACT_LOG:
        return
    line = f"{current_case()}{(' ' + label) if label else ''}\t{'exact' if exact else 'inexact'}\t{worst:.1f}\n"
    with open(EXACT_LOG, "a") as f:
        f.write(line)


def assert_same(
    ref: np.ndarray,
    dut: np.ndarray,
    min_snr_db: float = 100.0,
    *,
    exact: bool | None = None,
    block: int = BLOCK,
    label: str = "",
) -> float:
    """Assert the outputs match: same shape, and bit-identical samples.

    ``exact=None`` (the default) means exact unless the running case is listed in ``INEXACT``;
    an inexact comparison needs SNR ≥ min_snr_db on every channel, and a channel that is silent
    in the reference must be silent (≤ 1e-9) in the output under test.
    Returns the worst channel SNR (inf when identical).
    """
    bad = _shape_report(ref, dut)
    assert bad is None, f"{label} {bad}"
    if exact is None:
        exact = inexact_reason() is None
        if not exact:
            min_snr_db = min(min_snr_db, inexact_min_snr())
    # NaN/inf written by both engines at the same place count as equal
    same_nonfinite = (~np.isfinite(ref)) & ((ref == dut) | (np.isnan(ref) & np.isnan(dut)))
    if np.any(same_nonfinite):
        ref = np.where(same_nonfinite, 0.0, ref)
        dut = np.where(same_nonfinite, 0.0, dut)
    identical = bool(np.array_equal(ref, dut))
    worst = math.inf
    failed = False
    for ch in range(ref.shape[1]):
        r, d = ref[:, ch], dut[:, ch]
        if not (np.all(np.isfinite(d)) and np.all(np.isfinite(r))):
            failed = True
            continue
        if not np.any(r):
            if np.max(np.abs(d), initial=0.0) > 1e-9:
                failed = True
            continue
        s = snr_db(r, d)
        worst = min(worst, s)
        if s < min_snr_db:
            failed = True
    _record_exactness(label, identical, worst)
    if exact and not identical:
        raise AssertionError(
            "outputs are not bit-identical (list the case in nrt.INEXACT with a reason if an exact "
            "match is impossible)\n" + diff_report(ref, dut, block, label)
        )
    if failed:
        raise AssertionError(
            f"outputs differ (required SNR ≥ {min_snr_db} dB)\n" + diff_report(ref, dut, block, label)
        )
    return worst


def assert_bit_exact(ref: np.ndarray, dut: np.ndarray, *, block: int = BLOCK, label: str = ""):
    bad = _shape_report(ref, dut)
    assert bad is None, f"{label} {bad}"
    if not np.array_equal(ref, dut):
        raise AssertionError("outputs are not bit-identical\n" + diff_report(ref, dut, block, label))


def assert_nontrivial(ref: np.ndarray, channels: Iterable[int] | None = None, label: str = ""):
    """Guard against cases that silently test nothing: the reference must not be silent."""
    chans = range(ref.shape[1]) if channels is None else channels
    for ch in chans:
        assert np.any(ref[:, ch]), f"{label}: scsynth output channel {ch} is silent; the case is broken"


# ---------------------------------------------------------------------------------------------
# Statistics for random UGens
# ---------------------------------------------------------------------------------------------


def spectral_slope_db_per_octave(x: np.ndarray, sr: int = SR) -> float:
    """Slope of the averaged power spectrum (dB per octave) between sr/480 and sr/6."""
    lo, hi = sr / 480.0, sr / 6.0
    n = 1024
    if len(x) < n * 4:
        n = 256
    win = np.hanning(n)
    frames = [x[i : i + n] * win for i in range(0, len(x) - n + 1, n // 2)]
    psd = np.mean([np.abs(np.fft.rfft(f)) ** 2 for f in frames], axis=0)
    freqs = np.fft.rfftfreq(n, 1.0 / sr)
    sel = (freqs >= lo) & (freqs <= hi) & (psd > 0)
    if sel.sum() < 4:
        return 0.0
    # average into octave-ish bands to reduce the estimator's variance
    slope, _ = np.polyfit(np.log2(freqs[sel]), 10 * np.log10(psd[sel]), 1)
    return float(slope)


@dataclasses.dataclass
class Stats:
    min: float
    max: float
    mean: float
    rms: float
    std: float
    diff_std: float
    slope: float
    quantiles: np.ndarray
    nonzero_fraction: float

    def __str__(self):
        q = ", ".join(f"{v:.4g}" for v in self.quantiles)
        return (
            f"min {self.min:.4g} max {self.max:.4g} mean {self.mean:.4g} rms {self.rms:.4g} "
            f"std {self.std:.4g} diff-std {self.diff_std:.4g} slope {self.slope:.2f} dB/oct nonzero {self.nonzero_fraction:.4f} "
            f"quantiles[10,25,50,75,90] {q}"
        )


def stats(x: np.ndarray, sr: int = SR, with_slope: bool = True) -> Stats:
    x = np.asarray(x, dtype=np.float64)
    return Stats(
        min=float(x.min()),
        max=float(x.max()),
        mean=float(x.mean()),
        rms=float(np.sqrt(np.mean(x * x))),
        std=float(x.std()),
        diff_std=float(np.diff(x).std()) if len(x) > 1 else 0.0,
        slope=spectral_slope_db_per_octave(x, sr) if with_slope else 0.0,
        quantiles=np.quantile(x, [0.1, 0.25, 0.5, 0.75, 0.9]),
        nonzero_fraction=float(np.count_nonzero(x)) / len(x),
    )


def ds_min_ok(x: np.ndarray, lo: float, hi: float) -> bool:
    return bool(np.min(x) >= lo and np.max(x) <= hi)


def assert_stats_close(
    ref: np.ndarray,
    dut: np.ndarray,
    *,
    range_tol: float | None = 0.1,
    mean_tol: float | None = 0.1,
    rms_rel_tol: float | None = 0.15,
    std_rel_tol: float | None = None,
    diff_std_rel_tol: float | None = None,
    slope_tol_db: float | None = 1.5,
    quantile_tol: float | None = 0.12,
    nonzero_rel_tol: float | None = None,
    bounds: tuple[float, float] | None = None,
    sr: int = SR,
    label: str = "",
) -> tuple[Stats, Stats]:
    """Compare the statistics of a random signal with scsynth's own rendering.

    Tolerances for range, mean and quantiles are fractions of the reference's peak-to-peak span;
    rms, std, diff-std (the spread of sample-to-sample steps, which settles quickly even for
    signals that wander, like pink noise) and the fraction of nonzero samples are relative;
    slope is absolute dB/octave; ``None`` skips a check.  Also requires equal shapes, finite
    output and (optionally) output within ``bounds``.
    """
    assert ref.shape == dut.shape, f"{label}: shape differs: scsynth {ref.shape}, magnetar {dut.shape}"
    assert np.all(np.isfinite(dut)), f"{label}: magnetar output has non-finite samples"
    if bounds is not None:
        lo, hi = bounds
        assert ds_min_ok(dut, lo, hi), f"{label}: magnetar output leaves [{lo}, {hi}]: {dut.min()}..{dut.max()}"
    rs = stats(ref, sr, with_slope=slope_tol_db is not None)
    ds = stats(dut, sr, with_slope=slope_tol_db is not None)
    span = max(rs.max - rs.min, 1e-12)

    def off_rel(d: float, r: float, tol: float | None) -> bool:
        return tol is not None and abs(d - r) > tol * max(r, 1e-12)

    problems = []
    if range_tol is not None and (
        abs(ds.min - rs.min) > range_tol * span or abs(ds.max - rs.max) > range_tol * span
    ):
        problems.append("range")
    if mean_tol is not None and abs(ds.mean - rs.mean) > mean_tol * span:
        problems.append("mean")
    if off_rel(ds.rms, rs.rms, rms_rel_tol):
        problems.append("rms")
    if off_rel(ds.std, rs.std, std_rel_tol):
        problems.append("std")
    if off_rel(ds.diff_std, rs.diff_std, diff_std_rel_tol):
        problems.append("diff-std")
    if slope_tol_db is not None and abs(ds.slope - rs.slope) > slope_tol_db:
        problems.append("slope")
    if quantile_tol is not None and np.any(np.abs(ds.quantiles - rs.quantiles) > quantile_tol * span):
        problems.append("quantiles")
    if off_rel(ds.nonzero_fraction, rs.nonzero_fraction, nonzero_rel_tol):
        problems.append("nonzero fraction")
    assert not problems, (
        f"{label}: statistics differ ({', '.join(problems)})\n  scsynth:  {rs}\n  magnetar: {ds}"
    )
    return rs, ds


# ---------------------------------------------------------------------------------------------
# SynthDef construction
# ---------------------------------------------------------------------------------------------


def build(name: str, fn: Callable, **params) -> SynthDef:
    """Build a SynthDef: ``fn(builder)`` adds UGens inside a SynthDefBuilder."""
    with SynthDefBuilder(**params) as b:
        fn(b)
    return b.build(name=name)


def rate_of(x) -> CalculationRate:
    return CalculationRate.from_expr(x)


def to_audio(x):
    """Route any signal to audio rate so it can be written to an output bus."""
    if isinstance(x, (int, float)):
        return U.DC.ar(source=float(x))
    r = rate_of(x)
    if r == CalculationRate.AUDIO:
        return x
    return U.K2A.ar(source=x)


def flat(sig) -> list:
    if isinstance(sig, (list, tuple)):
        out = []
        for s in sig:
            out.extend(flat(s))
        return out
    if isinstance(sig, U.UGenVector):
        return [s for s in sig]
    if hasattr(sig, "__len__") and not isinstance(sig, (int, float)) and len(sig) > 1:
        return [sig[i] for i in range(len(sig))]
    return [sig]


def graph_def(name: str, fn: Callable, **params) -> tuple[SynthDef, int]:
    """SynthDef that writes the channels returned by ``fn(builder)`` to output buses 0..n-1."""
    n = [0]

    def body(b):
        chans = [to_audio(s) for s in flat(fn(b))]
        n[0] = len(chans)
        U.Out.ar(bus=0, source=chans)

    return build(name, body, **params), n[0]


def seconds_of_blocks(n: float, sr: int = SR, block: int = BLOCK) -> float:
    return n * block / sr


def expected_frames(last_bundle_seconds: float, sr: int = SR, block: int = BLOCK) -> int:
    """Frames scsynth writes: every block up to and including the one holding the last bundle."""
    osc_inc = int(block / (sr / 2**32))
    t = timetag(last_bundle_seconds)
    blocks = 0
    while True:
        next_time = (blocks + 1) * osc_inc
        blocks += 1
        if t <= next_time:
            return blocks * block


# ---------------------------------------------------------------------------------------------
# One-synth cases
# ---------------------------------------------------------------------------------------------

_def_counter = [0]


def check_graph(
    tmp_path: Path,
    fn: Callable,
    *,
    dur: float = 0.3,
    params: dict | None = None,
    setup: Sequence = (),
    events: Sequence[tuple[float, Sequence]] = (),
    synth_args: Sequence = (),
    min_snr_db: float = 100.0,
    options: Sequence[str] = (),
    allow_silent: bool = False,
    statistical: dict | None = None,
    synth_time: float = 0.0,
    exact: bool | None = None,
    **render_kw,
):
    """Render a single synth built from ``fn(builder)`` on both engines and compare.

    ``setup`` messages go in the time-0 bundle before /s_new (node id 1000, head of group 0);
    ``events`` are extra (time, messages) bundles.  With ``statistical`` (a dict of tolerances
    for :func:`assert_stats_close`) each channel is compared statistically instead.
    """
    _def_counter[0] += 1
    sd, nch = graph_def(f"case{_def_counter[0]}", fn, **(params or {}))
    score = Score([sd])
    if synth_time:
        score.add(0.0, *setup)
        score.add(synth_time, msg("/s_new", sd.effective_name, 1000, 0, 0, *synth_args))
    else:
        score.add(0.0, *setup, msg("/s_new", sd.effective_name, 1000, 0, 0, *synth_args))
    for t, ms in events:
        score.add(t, *ms)
    score.end(dur)
    opts = ["-o", str(max(nch, 1)), *options] if "-o" not in options else list(options)
    pair = render_both(score, tmp_path, options=opts, **render_kw)
    ref, dut = pair.read()
    if not allow_silent:
        assert_nontrivial(ref, label=str(tmp_path.name))
    if statistical is not None:
        statistical = dict(statistical)
        step = statistical.pop("decimate", 1)
        for ch in range(ref.shape[1]):
            # control-rate signals reach the file through K2A: keep one value per block
            r, d = ref[step - 1 :: step, ch], dut[step - 1 :: step, ch]
            assert_stats_close(r, d, label=f"channel {ch}", sr=SR // step, **statistical)
    else:
        assert_same(ref, dut, min_snr_db, exact=exact)
    return ref, dut


def case(case_id: str, fn: Callable, **kw):
    """A parametrized one-synth case: ``fn(builder)`` returns the signals to compare."""
    return pytest.param(fn, kw, id=case_id)


WAVETABLE_SETUP = (
    msg("/b_alloc", 0, 1024),
    msg("/b_gen", 0, "sine1", 7, 1.0, 0.5, 0.33, 0.25),
)
PLAIN_TABLE_SETUP = (
    msg("/b_alloc", 0, 1024),
    msg("/b_gen", 0, "sine1", 3, 1.0, 0.5, 0.33, 0.25),
)


def check_score(
    tmp_path: Path,
    score: Score,
    *,
    channels: int = 2,
    min_snr_db: float = 100.0,
    options: Sequence[str] = (),
    allow_silent: bool = False,
    allow_errors: bool = False,
    exact: bool | None = None,
    **render_kw,
):
    """Render a whole score on both engines and require matching outputs."""
    opts = ["-o", str(channels), *options]
    pair = render_both(score, tmp_path, options=opts, allow_errors=allow_errors, **render_kw)
    ref, dut = pair.read()
    if not allow_silent:
        assert_nontrivial(ref, label=str(tmp_path.name))
    assert_same(ref, dut, min_snr_db, exact=exact)
    return pair, ref, dut


def tone_def(name: str = "tone", done_action: int | None = None, gate: bool = False) -> SynthDef:
    """Sine at ``freq`` × ``amp`` to bus ``out``; optionally ends after ``dur`` with a done action."""

    def body(b):
        sig = U.SinOsc.ar(frequency=b["freq"]) * b["amp"]
        if done_action is not None:
            sig = sig * U.Line.kr(start=1.0, stop=1.0, duration=b["dur"], done_action=done_action)
        if gate:
            sig = sig * U.EnvGen.kr(envelope=supriya.Envelope.asr(attack_time=0.01, release_time=0.02), gate=b["gate"], done_action=2)
        U.Out.ar(bus=b["out"], source=sig)

    params = dict(freq=440.0, amp=0.2, out=0.0)
    if done_action is not None:
        params["dur"] = 0.1
    if gate:
        params["gate"] = 1.0
    return build(name, body, **params)
