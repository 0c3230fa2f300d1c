"""Scope writers in NRT, where no shared memory segment exists.

scsynth creates no segment in NRT and crashes (SIGSEGV) when a ScopeOut2
synth starts, so there is no reference for a score holding one; magnetar's
ScopeOut2 writes nothing and the rest of the synth renders as scsynth
renders the same synth without it. ScopeOut computes nothing in scsynth (see
crates/ugens/src/scope.rs) and loads and renders alike on both.
"""

import numpy as np
from supriya import ugens as U
from supriya.ugens import SynthDefBuilder

from nrt import SCSYNTH, Score, magnetar_binary, msg, render


def tone_def(name: str, with_scope: bool):
    with SynthDefBuilder() as b:
        tone = U.SinOsc.ar(frequency=441.0) * 0.5
        if with_scope:
            U.ScopeOut2.ar(scope_id=0, max_frames=4096, scope_frames=1024, source=[tone])
        U.Out.ar(bus=0, source=tone)
    return b.build(name=name)


def score(d) -> Score:
    return Score([d]).add(0.0, msg("/s_new", d.name, 1000, 0, 0)).end(0.5)


def test_scopeout2_in_nrt_writes_nothing_and_the_synth_plays(tmp_path):
    ref = render(SCSYNTH, "scsynth", score(tone_def("tone", False)), tmp_path / "scsynth")
    dut = render(magnetar_binary(), "magnetar", score(tone_def("tone", True)), tmp_path / "magnetar")
    assert ref.returncode == 0 and dut.returncode == 0, dut.log
    assert not dut.errors(), dut.errors()
    a, b = ref.read(), dut.read()
    assert a.shape == b.shape and np.abs(a).max() > 0.4
    assert np.array_equal(a, b)


def test_scopeout_loads_and_renders_as_in_scsynth(tmp_path):
    with SynthDefBuilder() as b:
        tone = U.SinOsc.ar(frequency=441.0) * 0.5
        U.ScopeOut.ar(buffer_id=0, source=[tone, tone])
        U.Out.ar(bus=0, source=tone)
    d = b.build(name="old_scope")
    sc = Score([d]).add(0.0, msg("/b_alloc", 0, 1024, 2), msg("/s_new", "old_scope", 1000, 0, 0)).end(0.5)
    ref = render(SCSYNTH, "scsynth", sc, tmp_path / "scsynth")
    dut = render(magnetar_binary(), "magnetar", sc, tmp_path / "magnetar")
    assert ref.returncode == 0 and dut.returncode == 0, dut.log
    assert not dut.errors(), dut.errors()
    assert np.array_equal(ref.read(), dut.read())
