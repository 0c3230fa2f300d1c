"""The one-synth UGen cases again at other block sizes and sample rates.

scsynth runs different inner loops depending on the block size: its SIMD loops only when the
block size is a multiple of 16 (with separate tables for exactly 64), plain loops otherwise;
``-z`` values that are not powers of two are rounded up (48 → 64), and ``-z 1`` makes every
UGen take its one-sample path.  Sample rate changes every coefficient.

To keep the suite fast, cases that need no setup of their own share one render: each synth
writes to its own range of output channels, and every case is still compared bit for bit
(or, if listed in ``nrt.INEXACT``, by SNR) against scsynth rendering the same score.
"""

from __future__ import annotations

import pytest
from supriya import ugens as U

import test_io_controls_buffers as io_cases
import test_ugens_filters as filters
import test_ugens_lines as lines
import test_ugens_misc as misc
import test_ugens_ops as ops
import test_ugens_osc as osc
from nrt import Score, assert_same, build, flat, inexact_min_snr, inexact_reason, msg, render_both, to_audio

CHUNK = 24  # cases per render


def _deterministic(module, *, keep=lambda case_id: True):
    out = []
    for attr in ("CASES", "BUF_CASES"):
        for p in getattr(module, attr, []):
            fn, kw = p.values
            if "statistical" in kw or "options" in kw or not keep(p.id):
                continue
            out.append((p.id, fn, kw))
    return out


ALL_UGENS = [*_deterministic(osc), *_deterministic(filters), *_deterministic(lines), *_deterministic(misc), *_deterministic(io_cases)]
ALL_OPS = _deterministic(ops)
# operators with a control input ramp differently in the plain and SIMD loops
OPS_RAMPED = _deterministic(ops, keep=lambda i: i.endswith((".ak", ".ka")) or i.startswith(("MulAdd", "Sum")))

VARIANTS = {
    "z8": (["-z", "8"], 48000, ALL_UGENS + ALL_OPS),  # plain loops everywhere
    "z32": (["-z", "32"], 48000, ALL_UGENS + ALL_OPS),  # SIMD loops other than the 64-sample ones
    "z16": (["-z", "16"], 48000, ALL_UGENS + OPS_RAMPED),
    "z128": (["-z", "128"], 48000, ALL_UGENS + OPS_RAMPED),
    "z48": (["-z", "48"], 48000, ALL_UGENS),  # rounded up to 64
    "z1": (["-z", "1"], 48000, _deterministic(osc) + _deterministic(lines) + _deterministic(filters)),
    "sr44100": ([], 44100, ALL_UGENS + OPS_RAMPED),
    "sr96000": ([], 96000, ALL_UGENS + OPS_RAMPED),
    "sr44100-z32": (["-z", "32"], 44100, _deterministic(osc) + _deterministic(filters)),
}


def _key(kw):
    """Cases can share a render when their setup and timing agree and they need no events."""
    if kw.get("events") or kw.get("synth_time"):
        return None
    return (tuple(m.encode() for m in kw.get("setup", ())), kw.get("dur", 0.15))


def _chunks():
    out = []
    for tag, (options, sr, cases) in VARIANTS.items():
        groups: dict = {}
        for case_id, fn, kw in cases:
            key = _key(kw)
            if key is None:
                continue
            groups.setdefault(key, []).append((case_id, fn, kw))
        for key, members in groups.items():
            for i in range(0, len(members), CHUNK):
                part = members[i : i + CHUNK]
                ident = f"{tag}-{part[0][0]}..{part[-1][0]}"
                out.append(pytest.param(tag, options, sr, part, id=ident))
    return out


@pytest.mark.parametrize("tag,options,sr,cases", _chunks())
def test_ugens_match_scsynth_at_other_block_sizes_and_rates(tmp_path, tag, options, sr, cases):
    defs, spans, news = [], [], []
    bus = 0
    for i, (case_id, fn, kw) in enumerate(cases):
        nch = [0]

        def body(b, fn=fn, bus=bus, nch=nch):
            chans = [to_audio(s) for s in flat(fn(b))]
            nch[0] = len(chans)
            U.Out.ar(bus=bus, source=chans)

        sd = build(f"v{i}", body, **(kw.get("params") or {}))
        defs.append(sd)
        spans.append((case_id, bus, nch[0]))
        news.append(msg("/s_new", sd.effective_name, 1000 + i, 1, 0, *kw.get("synth_args", ())))
        bus += nch[0]
    setup = cases[0][2].get("setup", ())
    dur = cases[0][2].get("dur", 0.15)
    score = Score(defs).add(0.0, *setup, *news).end(dur)
    pair = render_both(score, tmp_path, options=["-o", str(bus), *options], sr=sr)
    ref, dut = pair.read()
    failures = []
    for case_id, lo, n in spans:
        full_id = f"{case_id}@{tag}"
        reason = inexact_reason(full_id)
        try:
            assert_same(
                ref[:, lo : lo + n], dut[:, lo : lo + n], inexact_min_snr(full_id), exact=reason is None, label=full_id
            )
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures)
