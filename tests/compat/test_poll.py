"""Poll prints `label: value` on each rising trigger, to the server's standard output, as
scsynth does (sclang's post window shows it); magnetar must print the same lines, values
formatted the same way, in the same order."""

import re

from supriya import ugens as U

from nrt import Score, graph_def, msg, render_both


def poll_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if re.match(r"^(Saw|BinaryOpUGen): ", line)]


def test_poll_prints_what_scsynth_prints(tmp_path):
    def body(b):
        U.RandSeed.ir(trigger=1, seed=77)
        U.Poll.kr(trigger=U.Impulse.kr(frequency=9.0), source=U.SinOsc.kr(frequency=0.7, phase=0.3) * 1234.5)
        U.Poll.ar(trigger=U.Impulse.ar(frequency=13.0), source=U.Saw.ar(frequency=3.1))
        U.Poll.ar(trigger=U.Impulse.ar(frequency=5.0), source=U.SinOsc.kr(frequency=2.0) * 0.0001)
        U.Poll.kr(trigger=U.Impulse.kr(frequency=4.0), source=U.LFNoise0.kr(frequency=50.0) * 1e7, trigger_id=3)
        return U.SinOsc.ar(frequency=440.0) * 0.1

    sd, _ = graph_def("polls", body)
    score = Score([sd])
    score.add(0.0, msg("/s_new", sd.effective_name, 1000, 0, 0))
    score.end(1.5)
    pair = render_both(score, tmp_path, options=["-o", "1"])
    ref, dut = poll_lines(pair.ref.log), poll_lines(pair.dut.log)
    labels = {line.split(":")[0] for line in ref}
    # supriya labels a Poll with the name of its source's UGen.
    assert labels == {"BinaryOpUGen", "Saw"} and len(ref) > 30, ref
    assert dut == ref
