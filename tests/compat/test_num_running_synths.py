"""NumRunningSynths counts the server's synths as scsynth does: as synths start and end (by
/n_free and by their own done actions), at control and scalar rate."""

from supriya import ugens as U

from nrt import Score, assert_same, graph_def, msg, render_both


def test_num_running_synths_follows_synths_coming_and_going(tmp_path):
    def counter(b):
        return [U.K2A.ar(source=U.NumRunningSynths.kr()) * 0.1, U.DC.ar(source=U.NumRunningSynths.ir()) * 0.1]

    def short(b):
        U.Line.kr(start=0, stop=1, duration=0.15, done_action=2)
        return U.DC.ar(source=0.0)

    c, _ = graph_def("counter", counter)
    s, _ = graph_def("short", short)
    score = Score([c, s])
    score.add(0.0, msg("/s_new", c.effective_name, 1000, 0, 0))
    score.add(0.05, msg("/s_new", s.effective_name, 1001, 1, 0), msg("/s_new", s.effective_name, 1002, 1, 0))
    score.add(0.1, msg("/s_new", c.effective_name, 1003, 1, 0))
    score.add(0.3, msg("/n_free", 1003))
    score.end(0.5)
    ref, dut = render_both(score, tmp_path, options=["-o", "2"]).read()
    assert len(set(ref[:, 0].round(3))) >= 3, "the count changed over the render"
    assert_same(ref, dut)
