"""Buffers of a synth's own (LocalBuf with MaxLocalBufs, filled by SetBuf and ClearBuf), used by
the delay, record and play units, compared sample by sample against scsynth. scsynth leaves a
new local buffer's memory as it found it, so every case writes (or clears) before it reads."""

import pytest
from supriya import ugens as U

from extra_ugens import SetBuf
from nrt import Score, assert_same, case, check_graph, graph_def, msg, render_both
from sources import ksine, src



def set_buf(buf, values, offset=0):
    return SetBuf.ir(buffer_id=buf, offset=offset, count=len(values), values=list(values))


def local(frames, channels=1):
    return U.LocalBuf.ir(channel_count=channels, frame_count=frames)


def cleared(frames, channels=1):
    buf = local(frames, channels)
    U.ClearBuf.ir(buffer_id=buf)
    return buf


TABLE = [0.0, 0.5, -0.25, 1.0, 0.75, -1.0, 0.125, 0.3]

CASES = [
    case("BufDelayN-local", lambda b: U.BufDelayN.ar(buffer_id=local(4096), source=src(), delay_time=0.02)),
    case("BufDelayC-local-kmod", lambda b: U.BufDelayC.ar(buffer_id=local(4800), source=src(), delay_time=ksine(0.04, 0.03, 2.0))),
    case("BufCombL-local", lambda b: U.BufCombL.ar(buffer_id=local(8192), source=src() * 0.2, delay_time=0.011, decay_time=0.5)),
    case("BufAllpassC-local-stereo-first", lambda b: U.BufAllpassC.ar(buffer_id=local(2048), source=src(), delay_time=0.007, decay_time=0.3)),
    case("SetBuf-BufRd", lambda b: U.BufRd.ar(buffer_id=(buf := local(len(TABLE))) + 0 * set_buf(buf, TABLE), phase=U.Phasor.ar(rate=0.01, start=0, stop=len(TABLE)), interpolation=2)),
    case("SetBuf-offset-BufRd", lambda b: U.BufRd.ar(buffer_id=(buf := cleared(16)) + 0 * set_buf(buf, TABLE, offset=5), phase=U.Phasor.ar(rate=0.02, start=0, stop=16), interpolation=1)),
    case("RecordBuf-PlayBuf-local", lambda b: record_then_play(cleared(9600))),
    case("two-local-buffers", lambda b: two_buffers()),
    case("BufFrames-BufChannels-BufSampleRate-local", lambda b: info(local(3000, 2))),
]


def record_then_play(buf):
    U.RecordBuf.ar(buffer_id=buf, source=src(), loop=1)
    return U.PlayBuf.ar(buffer_id=buf, rate=0.75, loop=1)


def two_buffers():
    a = cleared(4096)
    b = local(2000, 2)
    U.ClearBuf.ir(buffer_id=b)
    U.RecordBuf.ar(buffer_id=b, source=[src(), src() * 0.5], loop=1)
    return [U.BufDelayL.ar(buffer_id=a, source=src(), delay_time=0.013), U.PlayBuf.ar(buffer_id=b, channel_count=2, rate=1.5, loop=1)[1]]


def info(buf):
    return [U.DC.ar(source=U.BufFrames.ir(buffer_id=buf)) * 0.001, U.DC.ar(source=U.BufChannels.ir(buffer_id=buf)) * 0.1,
            U.DC.ar(source=U.BufSampleRate.ir(buffer_id=buf)) * 1e-5, U.DC.ar(source=buf + 1.0)]


@pytest.mark.parametrize("fn,kw", CASES)
def test_local_buffers_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


def test_each_synth_has_its_own_local_buffer(tmp_path):
    """Two synths of one def record different tones into their LocalBuf and play them back half
    a second later: each hears its own tone, as in scsynth."""

    def body(b):
        buf = cleared(24000)
        U.RecordBuf.ar(buffer_id=buf, source=U.SinOsc.ar(frequency=b["freq"]) * 0.2, loop=1)
        return U.PlayBuf.ar(buffer_id=buf, loop=1, start_position=12000)

    sd, _ = graph_def("own_local", body, freq=440.0)
    score = Score([sd])
    score.add(0.0, msg("/s_new", sd.effective_name, 1000, 0, 0, "freq", 300.0),
              msg("/s_new", sd.effective_name, 1001, 0, 0, "freq", 1100.0))
    score.end(0.8)
    ref, dut = render_both(score, tmp_path, options=["-o", "1"]).read()
    assert_same(ref, dut)
