"""Pause, the unit that runs and pauses another node: compared against scsynth with the paused
node before and after the pausing synth in the tree, and a missing node id."""

import pytest
from supriya import ugens as U

from nrt import Score, assert_same, graph_def, msg, render_both


def tone():
    def body(b):
        return U.SinOsc.ar(frequency=b["freq"]) * 0.2

    return graph_def("pause_tone", body, freq=440.0)[0]


def pauser():
    def body(b):
        U.Pause.kr(trigger=U.LFPulse.kr(frequency=b["rate"], width=0.6), node_id=b["target"])
        return U.DC.ar(source=0.0)

    return graph_def("pauser", body, rate=7.0, target=1000.0)[0]


@pytest.mark.parametrize("target_first", [True, False], ids=["target-before", "target-after"])
def test_pause_runs_and_pauses_another_node_as_scsynth_does(tmp_path, target_first):
    t, p = tone(), pauser()
    score = Score([t, p])
    tone_msg = msg("/s_new", t.effective_name, 1000, 1, 0, "freq", 330.0)
    pause_msg = msg("/s_new", p.effective_name, 1001, 0 if target_first else 1, 0, "target", 1000.0)
    score.add(0.0, tone_msg, pause_msg)
    score.add(0.2, msg("/s_new", p.effective_name, 1002, 1, 0, "target", 4242.0, "rate", 13.0))
    score.end(0.7)
    ref, dut = render_both(score, tmp_path, options=["-o", "1"]).read()
    assert (ref[:, 0] == 0).sum() > 4800, "the tone was paused for a while"
    assert_same(ref, dut)
