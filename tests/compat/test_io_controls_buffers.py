"""Bus I/O UGens, control UGens and buffer UGens; each needs a small multi-command score."""

import pytest
import supriya
from supriya import ugens as U
from supriya.ugens import Parameter

from nrt import Score, build, check_graph, check_score, msg, tone_def

PRIVATE = 64  # an audio bus above the hardware buses


def writer(name, bus, sig_fn, rate="ar"):
    def body(b):
        if rate == "ar":
            U.Out.ar(bus=bus, source=sig_fn())
        else:
            U.Out.kr(bus=bus, source=sig_fn())

    return build(name, body)


def test_In_ar_reads_bus_written_earlier_in_the_block(tmp_path):
    w = writer("w", PRIVATE, lambda: U.SinOsc.ar(frequency=330.0) * 0.5)
    r = build("r", lambda b: U.Out.ar(bus=0, source=[U.In.ar(bus=PRIVATE) * 0.8, U.In.ar(bus=PRIVATE, channel_count=2)[1] + 0.1]))
    s = Score([w, r]).add(0, msg("/s_new", "w", 1000, 0, 0), msg("/s_new", "r", 1001, 3, 1000)).end(0.2)
    check_score(tmp_path, s)


def test_In_kr_reads_control_bus_set_by_c_set_and_Out_kr(tmp_path):
    w = writer("w", 5, lambda: U.SinOsc.kr(frequency=3.0), rate="kr")
    r = build("r", lambda b: U.Out.ar(bus=0, source=[U.K2A.ar(source=U.In.kr(bus=5)), U.K2A.ar(source=U.In.kr(bus=2))]))
    s = Score([w, r]).add(0, msg("/c_set", 2, 0.25), msg("/s_new", "w", 1000, 0, 0), msg("/s_new", "r", 1001, 3, 1000))
    s.add(0.1, msg("/c_set", 2, -0.5)).end(0.25)
    check_score(tmp_path, s)


def test_ReplaceOut_overwrites_and_Out_mixes(tmp_path):
    a = writer("a", 0, lambda: [U.SinOsc.ar(frequency=220.0) * 0.3, U.SinOsc.ar(frequency=330.0) * 0.3])
    b_ = build("b", lambda b: U.ReplaceOut.ar(bus=1, source=U.Saw.ar(frequency=100.0) * 0.2))
    c = build("c", lambda b: U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=1000.0) * 0.1))
    k = build("k", lambda b: (U.Out.kr(bus=3, source=U.SinOsc.kr(frequency=2.0)), U.ReplaceOut.kr(bus=3, source=U.LFSaw.kr(frequency=5.0))))
    rd = build("rd", lambda b: U.Out.ar(bus=2, source=U.K2A.ar(source=U.In.kr(bus=3))))
    s = Score([a, b_, c, k, rd]).add(0, *(msg("/s_new", n, 1000 + i, 1, 0) for i, n in enumerate(["a", "b", "c", "k", "rd"]))).end(0.2)
    check_score(tmp_path, s, channels=3)


@pytest.mark.parametrize("t", [0.0, 0.01, 0.0133, 0.1 + 17 / 48000])
def test_OffsetOut_starts_at_the_bundle_sample(tmp_path, t):
    d = build("o", lambda b: U.OffsetOut.ar(bus=0, source=[U.SinOsc.ar(frequency=500.0) * 0.5, U.Impulse.ar(frequency=100.0)]))
    s = Score([d]).add(t, msg("/s_new", "o", 1000, 0, 0)).add(t + 0.05, msg("/n_free", 1000)).end(0.2)
    check_score(tmp_path, s)


def test_XOut_crossfades_audio_and_control(tmp_path):
    a = writer("a", 0, lambda: [U.SinOsc.ar(frequency=220.0) * 0.3, U.SinOsc.ar(frequency=330.0) * 0.3])
    x = build("x", lambda b: U.XOut.ar(bus=0, crossfade=U.LFTri.kr(frequency=4.0) * 0.5 + 0.5, source=[U.Saw.ar(frequency=100.0) * 0.2, U.Pulse.ar(frequency=90.0) * 0.2]))
    xa = build("xa", lambda b: U.XOut.ar(bus=1, crossfade=U.LFTri.ar(frequency=40.0) * 0.5 + 0.5, source=U.SinOsc.ar(frequency=2000.0) * 0.1))
    k = build("k", lambda b: (U.Out.kr(bus=3, source=U.SinOsc.kr(frequency=2.0)), U.XOut.kr(bus=3, crossfade=0.3, source=U.LFSaw.kr(frequency=5.0))))
    rd = build("rd", lambda b: U.Out.ar(bus=2, source=U.K2A.ar(source=U.In.kr(bus=3))))
    s = Score([a, x, xa, k, rd]).add(0, *(msg("/s_new", n, 1000 + i, 1, 0) for i, n in enumerate(["a", "x", "xa", "k", "rd"]))).end(0.2)
    check_score(tmp_path, s, channels=3)


def test_InFeedback_reads_previous_block_of_a_later_writer(tmp_path):
    r = build("r", lambda b: U.Out.ar(bus=0, source=U.InFeedback.ar(bus=PRIVATE) * 0.9 + U.Impulse.ar(frequency=10.0) * 0.1))
    w = build("w", lambda b: U.Out.ar(bus=PRIVATE, source=U.DelayN.ar(source=U.In.ar(bus=0), maximum_delay_time=0.01, delay_time=0.003)))
    s = Score([r, w]).add(0, msg("/s_new", "r", 1000, 0, 0), msg("/s_new", "w", 1001, 3, 1000)).end(0.25)
    check_score(tmp_path, s, channels=1)


def test_InFeedback_after_writer_stops(tmp_path):
    r = build("r", lambda b: U.Out.ar(bus=0, source=U.InFeedback.ar(bus=PRIVATE)))
    w = writer("w", PRIVATE, lambda: U.SinOsc.ar(frequency=440.0) * 0.5)
    s = Score([r, w]).add(0, msg("/s_new", "r", 1000, 0, 0), msg("/s_new", "w", 1001, 3, 1000))
    s.add(0.1, msg("/n_free", 1001)).end(0.2)
    check_score(tmp_path, s, channels=1)


def local_fb_ar(b):
    fb = U.LocalIn.ar(channel_count=2, default=[0.1, -0.1])
    sig = U.Impulse.ar(frequency=20.0) + U.OnePole.ar(source=fb, coefficient=0.5) * 0.95
    U.LocalOut.ar(source=[sig[1], sig[0]] if hasattr(sig, "__len__") and len(sig) > 1 else [sig, sig])
    return sig


CASES = [
    pytest.param(lambda b: local_fb_ar(b), {}, id="LocalIn-LocalOut.ar"),
    pytest.param(lambda b: _local_kr(), {}, id="LocalIn-LocalOut.kr"),
]


def _local_kr():
    fb = U.LocalIn.kr(channel_count=1, default=0.5)
    sig = fb * 0.97 + U.Impulse.kr(frequency=5.0) * 0.5
    U.LocalOut.kr(source=sig)
    return sig


@pytest.mark.parametrize("fn,kw", CASES)
def test_local_feedback_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


def test_Control_scalar_and_control_rate_parameters(tmp_path):
    # scalar parameters are read once at synth start; control ones follow /n_set
    check_graph(
        tmp_path,
        lambda b: [U.SinOsc.ar(frequency=b["ifreq"]) * 0.3, U.SinOsc.ar(frequency=b["kfreq"]) * 0.3, U.K2A.ar(source=b["multi"][1])],
        params=dict(ifreq=Parameter(value=300.0, rate="scalar"), kfreq=500.0, multi=[0.1, 0.2, 0.3]),
        synth_args=["ifreq", 350.0, "kfreq", 600.0],
        events=[(0.1, [msg("/n_set", 1000, "ifreq", 900.0, "kfreq", 700.0, "multi", 0.0, 0.5, 0.6)])],
    )


def test_AudioControl_follows_mapped_audio_bus(tmp_path):
    w = writer("w", PRIVATE, lambda: U.SinOsc.ar(frequency=50.0) * 200 + 400)
    r = build("r", lambda b: U.Out.ar(bus=0, source=[U.SinOsc.ar(frequency=b["f"]) * 0.3, b["a"] * 0.5]), f=Parameter(value=300.0, rate="audio"), a=Parameter(value=0.2, rate="audio"))
    s = Score([w, r]).add(0, msg("/s_new", "w", 1000, 0, 0), msg("/s_new", "r", 1001, 3, 1000))
    s.add(0.05, msg("/n_set", 1001, "a", -0.3))
    s.add(0.1, msg("/n_mapa", 1001, "f", PRIVATE)).add(0.2, msg("/n_mapa", 1001, "f", -1)).end(0.3)
    check_score(tmp_path, s)


def test_TrigControl_fires_once_per_set(tmp_path):
    check_graph(
        tmp_path,
        lambda b: [U.K2A.ar(source=b["t"]), U.Decay.ar(source=U.K2A.ar(source=b["t"]), decay_time=0.02)],
        params=dict(t=Parameter(value=0.0, rate="trigger")),
        events=[(0.05, [msg("/n_set", 1000, "t", 1.0)]), (0.1, [msg("/n_set", 1000, "t", 0.5)]), (0.2, [msg("/n_set", 1000, "t", 1.0)])],
    )


def test_LagControl_smooths_n_set(tmp_path):
    check_graph(
        tmp_path,
        lambda b: [U.K2A.ar(source=b["x"]), U.SinOsc.ar(frequency=b["f"]) * 0.2],
        params=dict(x=Parameter(value=0.0, lag=0.05), f=Parameter(value=200.0, lag=0.1)),
        events=[(0.05, [msg("/n_set", 1000, "x", 1.0, "f", 800.0)]), (0.15, [msg("/n_set", 1000, "x", -0.5)])],
    )


# ------------------------------------------------------------------------------ buffer UGens

SINE_BUF = (msg("/b_alloc", 0, 4800, 1), msg("/b_gen", 0, "sine1", 3, 1.0, 0.3, 0.2))
STEREO_BUF = (msg("/b_alloc", 1, 2400, 2), msg("/b_fill", 1, 0, 4800, 0.25), msg("/b_setn", 1, 0, 8, *[0.1 * i for i in range(8)]))

BUF_CASES = [
    pytest.param(lambda b: U.PlayBuf.ar(buffer_id=0, rate=1.0, loop=1), dict(setup=SINE_BUF), id="PlayBuf.ar-loop"),
    pytest.param(lambda b: U.PlayBuf.ar(buffer_id=0, rate=1.37, loop=0), dict(setup=SINE_BUF), id="PlayBuf.ar-rate-noloop"),
    pytest.param(lambda b: U.PlayBuf.ar(buffer_id=0, rate=U.SinOsc.kr(frequency=2.0) * 1.5, trigger=U.Impulse.kr(frequency=7.0), start_position=100, loop=1), dict(setup=SINE_BUF), id="PlayBuf.ar-krate-trigger"),
    pytest.param(lambda b: U.PlayBuf.ar(buffer_id=0, rate=-0.8, loop=1), dict(setup=SINE_BUF), id="PlayBuf.ar-reverse"),
    pytest.param(lambda b: U.PlayBuf.ar(channel_count=2, buffer_id=1, rate=0.9, loop=1), dict(setup=STEREO_BUF), id="PlayBuf.ar-stereo"),
    pytest.param(lambda b: U.PlayBuf.kr(buffer_id=0, rate=20.0, loop=1), dict(setup=SINE_BUF), id="PlayBuf.kr"),
    pytest.param(lambda b: U.BufRd.ar(buffer_id=0, phase=U.LFSaw.ar(frequency=3.0) * 2400 + 2400, loop=1, interpolation=1), dict(setup=SINE_BUF), id="BufRd.ar-nointerp"),
    pytest.param(lambda b: U.BufRd.ar(buffer_id=0, phase=U.LFSaw.ar(frequency=3.3) * 2400 + 2400, loop=1, interpolation=2), dict(setup=SINE_BUF), id="BufRd.ar-linear"),
    pytest.param(lambda b: U.BufRd.ar(buffer_id=0, phase=U.LFSaw.ar(frequency=3.3) * 3000 + 2400, loop=0, interpolation=4), dict(setup=SINE_BUF), id="BufRd.ar-cubic-noloop"),
    pytest.param(lambda b: U.BufRd.kr(buffer_id=0, phase=U.LFSaw.kr(frequency=3.3) * 2400 + 2400, loop=1, interpolation=2), dict(setup=SINE_BUF), id="BufRd.kr"),
    pytest.param(lambda b: [U.K2A.ar(source=x) for x in (U.BufFrames.ir(buffer_id=1) * 1e-4, U.BufSamples.ir(buffer_id=1) * 1e-4, U.BufDur.ir(buffer_id=1), U.BufSampleRate.ir(buffer_id=1) * 1e-5, U.BufRateScale.ir(buffer_id=1), U.BufChannels.ir(buffer_id=1) * 0.1)], dict(setup=STEREO_BUF), id="BufInfo.ir"),
    pytest.param(lambda b: [U.K2A.ar(source=x) for x in (U.BufFrames.kr(buffer_id=b["buf"]) * 1e-4, U.BufSamples.kr(buffer_id=b["buf"]) * 1e-4, U.BufDur.kr(buffer_id=b["buf"]), U.BufSampleRate.kr(buffer_id=b["buf"]) * 1e-5, U.BufRateScale.kr(buffer_id=b["buf"]), U.BufChannels.kr(buffer_id=b["buf"]) * 0.1)],
                 dict(setup=SINE_BUF + STEREO_BUF, params=dict(buf=0.0), events=[(0.1, [msg("/n_set", 1000, "buf", 1.0)])]), id="BufInfo.kr-switch-buffer"),
]


@pytest.mark.parametrize("fn,kw", BUF_CASES)
def test_buffer_ugen_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


def test_BufWr_and_RecordBuf_write_what_PlayBuf_reads_back(tmp_path):
    rec = build("rec", lambda b: (
        U.BufWr.ar(buffer_id=2, phase=U.Phasor.ar(rate=1.0, start=0, stop=4800), loop=1, source=U.SinOsc.ar(frequency=300.0) * 0.5),
        U.RecordBuf.ar(buffer_id=3, offset=0, record_level=0.8, preexisting_level=0.5, run=1, loop=1, trigger=1, done_action=0, source=U.Saw.ar(frequency=200.0) * 0.4),
        U.RecordBuf.kr(buffer_id=4, record_level=1.0, loop=0, source=U.SinOsc.kr(frequency=5.0)),
        U.BufWr.kr(buffer_id=5, phase=U.LFSaw.kr(frequency=2.0) * 50 + 50, loop=1, source=U.LFTri.kr(frequency=3.0)),
    ))
    play = build("play", lambda b: U.Out.ar(bus=0, source=[
        U.PlayBuf.ar(buffer_id=2, rate=1.0, loop=1),
        U.PlayBuf.ar(buffer_id=3, rate=1.0, loop=1),
        U.PlayBuf.ar(buffer_id=4, rate=1.0, loop=1),
        U.PlayBuf.ar(buffer_id=5, rate=1.0, loop=1),
    ]))
    s = Score([rec, play]).add(
        0,
        msg("/b_alloc", 2, 4800), msg("/b_alloc", 3, 2000), msg("/b_fill", 3, 0, 2000, 0.1), msg("/b_alloc", 4, 200), msg("/b_alloc", 5, 100),
        msg("/s_new", "rec", 1000, 0, 0), msg("/s_new", "play", 1001, 3, 1000),
    ).end(0.3)
    check_score(tmp_path, s, channels=4)


def test_PlayBuf_done_action_frees_synth(tmp_path):
    d = build("p", lambda b: U.Out.ar(bus=0, source=U.PlayBuf.ar(buffer_id=0, rate=1.0, loop=0, done_action=2)))
    s = Score([d]).add(0, msg("/b_alloc", 0, 3000), msg("/b_gen", 0, "sine2", 3, 100.0, 1.0), msg("/s_new", "p", 1000, 0, 0))
    s.add(0.01, msg("/b_fill", 0, 0, 3000, 0.5)).end(0.2)
    check_score(tmp_path, s, channels=1)
