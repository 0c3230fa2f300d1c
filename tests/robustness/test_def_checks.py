"""Defs that give a unit a rate it cannot run at, or fewer inputs or outputs
than it reads or writes, are refused at /d_recv and /d_load, in real time
and in NRT, with a message naming the def, the unit's index and the unit.
Defs that give units more than they need load, as scsynth takes them."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from supriya.osc import OscMessage as M

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nrt import SR, Score, assert_same, magnetar_binary, msg, render, render_both  # noqa: E402
from rtserver import OscClient  # noqa: E402

SCALAR, CONTROL, AUDIO = 0, 1, 2


def def_bytes(name: str, constants: list[float], ugens: list[tuple]) -> bytes:
    """A version-2 SynthDef file holding one def without controls. Each unit is
    (class, rate, inputs, output rates); an input is (unit, output), or (-1, k)
    for constant k."""

    def pstr(s: str) -> bytes:
        return bytes([len(s)]) + s.encode()

    i32 = lambda v: struct.pack(">i", v)  # noqa: E731
    b = b"SCgf" + i32(2) + struct.pack(">h", 1) + pstr(name)
    b += i32(len(constants)) + b"".join(struct.pack(">f", c) for c in constants)
    b += i32(0) + i32(0) + i32(len(ugens))
    for cls, rate, inputs, outputs in ugens:
        b += pstr(cls) + bytes([rate]) + i32(len(inputs)) + i32(len(outputs)) + struct.pack(">h", 0)
        b += b"".join(i32(u) + i32(o) for u, o in inputs)
        b += bytes(outputs)
    return b + struct.pack(">h", 0)


# Each kind of mismatch: the def, and what the refusal says after the def's name.
MISMATCHES = {
    # SinOsc reads its frequency and phase.
    "too_few_inputs": (
        [0.0],
        [("SinOsc", AUDIO, [], [AUDIO]), ("Out", AUDIO, [(-1, 0), (0, 0)], [])],
        "UGen 0 (SinOsc) needs 2 inputs, the def gives it 0",
    ),
    # Pan2 writes a left and a right channel.
    "too_few_outputs": (
        [0.0, 0.5],
        [("DC", AUDIO, [(-1, 1)], [AUDIO]), ("Pan2", AUDIO, [(0, 0), (-1, 0), (-1, 1)], [AUDIO]), ("Out", AUDIO, [(-1, 0), (1, 0)], [])],
        "UGen 1 (Pan2) needs 2 outputs, the def gives it 1",
    ),
    # DiskIn reads its loop flag each time it finishes half of its buffer.
    "a_disk_in_without_its_loop_input": (
        [0.0],
        [("DiskIn", AUDIO, [(-1, 0)], [AUDIO]), ("Out", AUDIO, [(-1, 0), (0, 0)], [])],
        "UGen 0 (DiskIn) needs 2 inputs, the def gives it 1",
    ),
    # OffsetOut writes audio buses a block at a time.
    "a_rate_it_cannot_run_at": (
        [0.0, 0.5],
        [("OffsetOut", CONTROL, [(-1, 0), (-1, 1)], [])],
        "UGen 0 (OffsetOut) does not run at control rate",
    ),
}


def expected(kind: str, name: str) -> str:
    return f'synthdef "{name}": {MISMATCHES[kind][2]}'


def bad_def(kind: str, name: str) -> bytes:
    constants, ugens, _ = MISMATCHES[kind]
    return def_bytes(name, constants, ugens)


def good_def(name: str) -> bytes:
    """`Out.ar(0, DC.ar(0.25))`."""
    return def_bytes(name, [0.0, 0.25], [("DC", AUDIO, [(-1, 1)], [AUDIO]), ("Out", AUDIO, [(-1, 0), (0, 0)], [])])


@pytest.mark.parametrize("kind", sorted(MISMATCHES))
def test_d_recv_of_a_mismatched_def_fails_naming_def_unit_index_and_unit_in_real_time(magnetar, kind):
    server = magnetar()
    client = OscClient(server.port)
    try:
        client.send(M("/d_recv", bad_def(kind, f"bad_{kind}")))
        fail = client.wait_for(["/done", "/fail"], timeout=5)
        assert fail.address == "/fail" and fail.contents == ("/d_recv", expected(kind, f"bad_{kind}")), fail
        assert client.status().contents[4] == 0
        # The server goes on: a good def loads and plays.
        client.send(M("/d_recv", good_def("good")))
        assert client.wait_for("/done", timeout=5).contents == ("/d_recv",)
        client.send(M("/s_new", "good", 1000, 0, 0))
        client.sync()
        assert client.status().contents[2] == 1
    finally:
        client.close()


@pytest.mark.parametrize("kind", sorted(MISMATCHES))
def test_d_load_of_a_mismatched_def_fails_naming_def_unit_index_and_unit_in_real_time(magnetar, kind, tmp_path):
    path = tmp_path / f"bad_{kind}.scsyndef"
    path.write_bytes(bad_def(kind, f"bad_{kind}"))
    server = magnetar()
    client = OscClient(server.port)
    try:
        client.send(M("/d_load", str(path)))
        fail = client.wait_for(["/done", "/fail"], timeout=5)
        assert fail.address == "/fail" and fail.contents[0] == "/d_load", fail
        assert expected(kind, f"bad_{kind}") in fail.contents[1], fail
        assert client.status().contents[4] == 0
    finally:
        client.close()


@pytest.mark.parametrize("kind", sorted(MISMATCHES))
def test_a_mismatched_def_in_a_score_is_refused_naming_def_unit_index_and_unit_in_nrt(kind, tmp_path):
    name = f"bad_{kind}"
    score = Score()
    score.add(0.0, msg("/d_recv", bad_def(kind, name)), msg("/d_recv", good_def("good")))
    score.add(0.0, msg("/s_new", name, 1000, 0, 0), msg("/s_new", "good", 1001, 0, 0))
    score.end(0.01)
    out = render(magnetar_binary(), "magnetar", score, tmp_path, options=("-o", "1"))
    assert out.returncode == 0, out.log[-2000:]
    assert expected(kind, name) in out.log, out.log[-2000:]
    # The refused def makes no synth; the good one plays.
    assert "/s_new SynthDef not found" in out.log, out.log[-2000:]
    assert (out.read()[:, 0] == 0.25).all()


def test_units_given_more_inputs_and_outputs_than_they_use_render_as_in_scsynth(tmp_path):
    """scsynth leaves a unit's extra inputs and outputs alone: SinOsc with a
    third input and a second output, Pan2 with a third output."""
    name = "roomy"
    data = def_bytes(
        name,
        [440.0, 0.0, 0.25, 3.0],
        [
            ("SinOsc", AUDIO, [(-1, 0), (-1, 1), (-1, 3)], [AUDIO, AUDIO]),
            ("Pan2", AUDIO, [(0, 0), (-1, 1), (-1, 2)], [AUDIO, AUDIO, AUDIO]),
            ("Out", AUDIO, [(-1, 1), (1, 0), (1, 1)], []),
        ],
    )
    score = Score()
    score.add(0.0, msg("/d_recv", data), msg("/s_new", name, 1000, 0, 0))
    score.end(0.1)
    pair = render_both(score, tmp_path)
    assert not pair.dut.errors(), pair.dut.log[-2000:]
    ref, dut = pair.read()
    assert abs(ref).max() > 0.1
    assert_same(ref, dut, label=name)


def test_a_vdisk_in_def_without_a_send_id_streams_and_loops_as_in_scsynth(tmp_path):
    """Defs written before VDiskIn had a sendID give it three inputs (bufnum,
    rate, loop); scsynth plays them, looping as the third input says."""
    src = tmp_path / "src.wav"
    t = np.arange(6000)
    soundfile.write(str(src), 0.5 * (t % 1000) / 1000.0 + 0.3 * np.sin(2 * np.pi * 220.0 * t / SR), SR, subtype="FLOAT")
    name = "vdisk_three"
    data = def_bytes(
        name,
        [0.0, 1.0],
        [("VDiskIn", AUDIO, [(-1, 0), (-1, 1), (-1, 1)], [AUDIO]), ("Out", AUDIO, [(-1, 0), (0, 0)], [])],
    )
    score = Score()
    score.add(0.0, msg("/b_alloc", 0, 2048, 1), msg("/b_read", 0, str(src), 0, 2048, 0, 1), msg("/d_recv", data))
    score.add(0.0, msg("/s_new", name, 1000, 0, 0))
    # The render outlasts the file: only a stream that loops is still playing at the end.
    score.add(0.45, msg("/n_free", 1000)).add(0.46, msg("/b_close", 0)).end(0.5)
    pair = render_both(score, tmp_path, options=("-o", "1"))
    assert not pair.dut.errors(), pair.dut.log[-2000:]
    ref, dut = pair.read()
    assert np.any(ref[int(0.3 * SR) : int(0.4 * SR)] != 0.0), "scsynth did not loop: the case is broken"
    assert_same(ref, dut, label=name)
