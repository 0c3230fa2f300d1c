"""Server commands in a score: node tree, controls, buses, buffers, SynthDefs, done actions."""

import numpy as np
import pytest
import soundfile
import supriya
from supriya import ugens as U
from supriya.ugens import compile_synthdefs

from nrt import BLOCK, SR, Score, build, check_graph, check_score, msg, render_both, tone_def, assert_same

TONE = tone_def()
FREQS = [220.0, 330.0, 440.0, 550.0, 660.0, 770.0, 880.0, 990.0]


def tone(node, ch, action=0, target=0, name="tone", **extra):
    args = ["freq", FREQS[ch], "out", float(ch)]
    for k, v in extra.items():
        args += [k, float(v)]
    return msg("/s_new", name, node, action, target, *args)


# chain: each synth reads bus 0 (the sum so far) and adds its tone; order changes the result
CHAIN = build("chain", lambda b: U.ReplaceOut.ar(bus=0, source=U.In.ar(bus=0) * b["gain"] + U.SinOsc.ar(frequency=b["freq"]) * 0.1), gain=0.5, freq=440.0)


def chain(node, action, target, freq):
    return msg("/s_new", "chain", node, action, target, "freq", freq)


def test_s_new_controls_by_name_and_index_and_s_noid(tmp_path):
    idx = TONE.parameters["freq"][1]
    s = Score([TONE]).add(
        0,
        msg("/s_new", "tone", 1000, 0, 0, "freq", 300.0, "out", 0.0),
        msg("/s_new", "tone", 1001, 0, 0, idx, 500.0, "out", 1.0),
        msg("/s_new", "tone", -1, 0, 0, "freq", 700.0, "out", 2.0),
    )
    s.add(0.1, msg("/s_noid", 1000), msg("/n_set", 1000, "freq", 900.0))
    s.end(0.2)
    check_score(tmp_path, s, channels=3, allow_errors=True)


@pytest.mark.parametrize("action", [0, 1, 2, 3, 4])
def test_add_actions_order_the_chain(tmp_path, action):
    s = Score([CHAIN]).add(
        0,
        msg("/g_new", 1, 0, 0),
        chain(1000, 0, 1, 200.0),
        chain(1001, 3, 1000, 300.0),
        chain(1002, 3, 1001, 400.0),
    )
    target = 1 if action in (0, 1) else 1001
    s.add(0.05, chain(2000, action, target, 1000.0)).end(0.15)
    check_score(tmp_path, s, channels=1)


def test_add_action_4_replaces_node(tmp_path):
    s = Score([CHAIN]).add(0, chain(1000, 0, 0, 200.0), chain(1001, 3, 1000, 300.0))
    s.add(0.05, chain(1002, 4, 1000, 700.0)).end(0.15)
    check_score(tmp_path, s, channels=1)


def test_g_new_p_new_and_group_head_tail(tmp_path):
    s = Score([CHAIN]).add(
        0,
        msg("/g_new", 1, 0, 0, 2, 3, 1),
        msg("/p_new", 3, 1, 0),
        chain(1000, 0, 1, 200.0),
        chain(1001, 0, 2, 300.0),
        chain(1002, 0, 3, 400.0),
        chain(1003, 1, 3, 500.0),
    )
    s.add(0.05, msg("/g_head", 1, 1002, 2, 1003))
    s.add(0.1, msg("/g_tail", 2, 1000, 1, 1001)).end(0.15)
    check_score(tmp_path, s, channels=1)


def test_n_before_n_after_n_order(tmp_path):
    s = Score([CHAIN]).add(0, *(chain(1000 + i, 1, 0, 200.0 + 100 * i) for i in range(5)))
    s.add(0.04, msg("/n_before", 1000, 1004, 1001, 1003))
    s.add(0.08, msg("/n_after", 1004, 1000))
    s.add(0.12, msg("/n_order", 0, 0, 1002, 1004, 1003, 1001))
    s.add(0.16, msg("/n_order", 3, 1000, 1002, 1001)).end(0.2)
    check_score(tmp_path, s, channels=1)


def test_n_run_pauses_and_resumes(tmp_path):
    s = Score([TONE]).add(0, msg("/g_new", 1, 0, 0), tone(1000, 0, 0, 1), tone(1001, 1, 0, 1), tone(1002, 2))
    s.add(0.05, msg("/n_run", 1000, 0, 1002, 0)).add(0.1, msg("/n_run", 1, 0)).add(0.15, msg("/n_run", 1000, 1, 1, 1)).end(0.2)
    check_score(tmp_path, s, channels=3)


def test_n_free_g_freeAll_g_deepFree(tmp_path):
    s = Score([TONE]).add(
        0,
        msg("/g_new", 1, 0, 0, 2, 0, 1, 3, 0, 0),
        tone(1000, 0, 0, 1), tone(1001, 1, 0, 2), tone(1002, 2, 0, 2), tone(1003, 3, 0, 3), tone(1004, 4, 0, 3), tone(1005, 5, 0, 0),
    )
    s.add(0.04, msg("/n_free", 1005, 1004))
    s.add(0.08, msg("/g_deepFree", 1))
    s.add(0.12, msg("/g_freeAll", 3)).add(0.14, tone(1006, 6, 0, 3)).add(0.16, msg("/g_freeAll", 0)).end(0.2)
    check_score(tmp_path, s, channels=7)


def test_n_set_n_setn_n_fill(tmp_path):
    multi = build("multi", lambda b: U.Out.ar(bus=0, source=[U.SinOsc.ar(frequency=f) * 0.2 for f in b["freqs"]]), freqs=[200.0, 300.0, 400.0, 500.0])
    base = multi.parameters["freqs"][1]
    s = Score([multi]).add(0, msg("/s_new", "multi", 1000, 0, 0))
    s.add(0.03, msg("/n_set", 1000, "freqs", 600.0, base + 2, 700.0))
    s.add(0.06, msg("/n_setn", 1000, "freqs", 2, 800.0, 900.0, base + 3, 1, 1000.0))
    s.add(0.09, msg("/n_fill", 1000, "freqs", 3, 250.0, base + 3, 1, 350.0))
    s.add(0.12, msg("/n_set", 1000, base, 440.0)).end(0.15)
    check_score(tmp_path, s, channels=4, allow_errors=True)


def test_n_map_n_mapn_n_mapa_n_mapan(tmp_path):
    kw = build("kw", lambda b: U.Out.kr(bus=10, source=[U.SinOsc.kr(frequency=3.0) * 100 + 300, U.LFSaw.kr(frequency=5.0) * 100 + 500]))
    aw = build("aw", lambda b: U.Out.ar(bus=64, source=[U.SinOsc.ar(frequency=40.0) * 100 + 700, U.LFTri.ar(frequency=30.0) * 100 + 900]))
    multi = build("multi", lambda b: U.Out.ar(bus=0, source=[U.SinOsc.ar(frequency=f) * 0.2 for f in b["freqs"]]), freqs=[200.0, 300.0, 400.0])
    base = multi.parameters["freqs"][1]
    s = Score([kw, aw, multi]).add(0, msg("/s_new", "kw", 900, 0, 0), msg("/s_new", "aw", 901, 3, 900), msg("/s_new", "multi", 1000, 3, 901), msg("/c_set", 20, 1234.0))
    s.add(0.03, msg("/n_map", 1000, "freqs", 10))
    s.add(0.06, msg("/n_mapn", 1000, base + 1, 10, 2))
    s.add(0.09, msg("/n_mapa", 1000, "freqs", 64))
    s.add(0.12, msg("/n_mapan", 1000, base + 1, 64, 2))
    s.add(0.15, msg("/n_map", 1000, base + 2, 20))
    s.add(0.18, msg("/n_map", 1000, "freqs", -1), msg("/n_mapa", 1000, base + 1, -1)).end(0.21)
    check_score(tmp_path, s, channels=3)


def test_c_set_c_setn_c_fill(tmp_path):
    rd = build("rd", lambda b: U.Out.ar(bus=0, source=[U.K2A.ar(source=x) for x in U.In.kr(bus=4, channel_count=4)]))
    s = Score([rd]).add(0, msg("/s_new", "rd", 1000, 0, 0), msg("/c_set", 4, 0.1, 6, -0.3))
    s.add(0.05, msg("/c_setn", 4, 3, 0.5, 0.6, 0.7)).add(0.1, msg("/c_fill", 5, 3, -0.2, 4, 1, 0.9)).end(0.15)
    check_score(tmp_path, s, channels=4)


# ------------------------------------------------------------------------------ done actions
#
# Layout (all in group 1 unless noted; output channel in brackets):
#   group 1: A[0] B[1] group 2 {E[2]} T[3] group 3 {F[4]} C[5]      G[6] after group 1 in root
# T carries the done action and finishes at 0.1 s; at 0.2 s every node is resumed with /n_run,
# so paused nodes can be told from freed ones.

DONE_DEFS = [tone_def(f"done{n}", done_action=n) for n in range(15)]


@pytest.mark.parametrize("action", list(range(15)))
def test_done_action(tmp_path, action):
    s = Score([TONE, DONE_DEFS[action]])
    s.add(
        0,
        msg("/g_new", 1, 0, 0),
        tone(1001, 0, 1, 1),
        tone(1002, 1, 1, 1),
        msg("/g_new", 2, 1, 1),
        tone(1005, 2, 0, 2),
        tone(1003, 3, 1, 1, name=f"done{action}"),
        msg("/g_new", 3, 1, 1),
        tone(1006, 4, 0, 3),
        tone(1004, 5, 1, 1),
        tone(1007, 6, 3, 1),
    )
    s.add(0.2, msg("/n_run", 1001, 1, 1002, 1, 1003, 1, 1004, 1, 1005, 1, 1006, 1, 1007, 1, 2, 1, 3, 1))
    s.end(0.3)
    check_score(tmp_path, s, channels=7, allow_errors=True)


def test_done_flag_ugens_Done_FreeSelf_FreeSelfWhenDone_PauseSelf_Free(tmp_path):
    d = build("d", lambda b: U.Out.ar(bus=0, source=[
        U.K2A.ar(source=U.Done.kr(source=U.Line.kr(duration=0.05))),
        U.SinOsc.ar(frequency=300.0) * 0.2,
    ]))
    fs = build("fs", lambda b: (U.FreeSelf.kr(trigger=U.Impulse.kr(frequency=0) * 0 + U.Line.kr(start=0, stop=1, duration=0.07) >= 1), U.Out.ar(bus=2, source=U.SinOsc.ar(frequency=500.0) * 0.2)))
    fsd = build("fsd", lambda b: (U.FreeSelfWhenDone.kr(source=U.Line.kr(duration=0.09)), U.Out.ar(bus=3, source=U.SinOsc.ar(frequency=600.0) * 0.2)))
    ps = build("ps", lambda b: (U.PauseSelf.kr(trigger=U.Line.kr(start=0, stop=1, duration=0.11) >= 1), U.Out.ar(bus=4, source=U.SinOsc.ar(frequency=700.0) * 0.2)))
    fr = build("fr", lambda b: (U.Free.kr(trigger=U.Line.kr(start=0, stop=1, duration=0.13) >= 1, node_id=1000), U.Out.ar(bus=5, source=U.SinOsc.ar(frequency=800.0) * 0.2)))
    s = Score([d, fs, fsd, ps, fr]).add(0, *(msg("/s_new", n, 1000 + i, 1, 0) for i, n in enumerate(["d", "fs", "fsd", "ps", "fr"])))
    s.add(0.2, msg("/n_run", 1003, 1)).end(0.3)
    check_score(tmp_path, s, channels=6, allow_errors=True)


# ------------------------------------------------------------------------------ buffers

BUFPLAY = build("bufplay", lambda b: U.Out.ar(bus=0, source=U.PlayBuf.ar(channel_count=2, buffer_id=b["buf"], rate=1.0, loop=1)), buf=0.0)


def play(buf, node=1000):
    return msg("/s_new", "bufplay", node, 1, 0, "buf", float(buf))


@pytest.fixture(scope="module")
def sound_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("files")
    t = np.arange(9000) / SR
    stereo = np.stack([0.5 * np.sin(2 * np.pi * 330 * t), 0.3 * np.sign(np.sin(2 * np.pi * 110 * t))], axis=1)
    soundfile.write(str(d / "stereo.wav"), stereo, SR, subtype="FLOAT")
    soundfile.write(str(d / "stereo16.aiff"), stereo, 44100, subtype="PCM_16")
    soundfile.write(str(d / "mono24.wav"), stereo[:, 0], SR, subtype="PCM_24")
    return d


def test_b_alloc_b_zero_b_set_b_setn_b_fill_b_free(tmp_path):
    s = Score([BUFPLAY]).add(0, msg("/b_alloc", 0, 512, 2), msg("/b_fill", 0, 0, 1024, 0.3), play(0))
    s.add(0.03, msg("/b_set", 0, 10, -0.5, 11, 0.7, 500, 0.9))
    s.add(0.06, msg("/b_setn", 0, 100, 6, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 300, 2, -0.1, -0.2))
    s.add(0.09, msg("/b_fill", 0, 200, 50, -0.25, 600, 20, 0.8))
    s.add(0.12, msg("/b_zero", 0)).add(0.13, msg("/b_set", 0, 0, 1.0))
    s.add(0.16, msg("/b_free", 0)).add(0.17, msg("/b_alloc", 0, 256, 2, msg("/b_fill", 0, 0, 512, 0.1))).end(0.25)
    check_score(tmp_path, s, allow_errors=True)


GENS = {
    "sine1": [msg("/b_gen", 0, "sine1", 0, 1.0, 0.5, 0.25)],
    "sine1-normalize": [msg("/b_gen", 0, "sine1", 1, 1.0, 0.5, 0.25)],
    "sine1-wavetable": [msg("/b_gen", 0, "sine1", 4, 1.0, 0.5)],
    "sine1-noclear-accumulates": [msg("/b_gen", 0, "sine1", 2, 1.0), msg("/b_gen", 0, "sine1", 0, 0.0, 0.5)],
    "sine2": [msg("/b_gen", 0, "sine2", 3, 1.0, 1.0, 3.5, 0.5, 7.25, 0.25)],
    "sine3": [msg("/b_gen", 0, "sine3", 3, 1.0, 1.0, 0.5, 3.0, 0.5, 1.3)],
    "cheby": [msg("/b_fill", 0, 0, 1024, 0.0), msg("/b_gen", 0, "cheby", 3, 1.0, 0.0, 0.5, 0.25)],
    "cheby-wavetable": [msg("/b_gen", 0, "cheby", 5, 1.0, 0.5)],
    "normalize": [msg("/b_gen", 0, "sine1", 2, 0.3, 0.1), msg("/b_gen", 0, "normalize", 0.8)],
    "wnormalize": [msg("/b_gen", 0, "sine1", 6, 0.3, 0.1), msg("/b_gen", 0, "wnormalize", 0.8)],
    "copy": [msg("/b_alloc", 1, 1024, 1), msg("/b_gen", 1, "sine1", 3, 1.0, 0.0, 0.3), msg("/b_gen", 0, "copy", 100, 1, 50, 400)],
    "copy-all": [msg("/b_alloc", 1, 700, 1), msg("/b_gen", 1, "sine1", 3, 1.0, 0.2), msg("/b_gen", 0, "copy", 0, 1, 0, -1)],
}


@pytest.mark.parametrize("gen", GENS)
def test_b_gen(tmp_path, gen):
    rd = build("rd", lambda b: U.Out.ar(bus=0, source=U.PlayBuf.ar(buffer_id=0, rate=1.0, loop=1)))
    s = Score([rd]).add(0, msg("/b_alloc", 0, 1024, 1), msg("/b_fill", 0, 0, 1024, 0.1), *GENS[gen], msg("/s_new", "rd", 1000, 0, 0)).end(0.1)
    check_score(tmp_path, s, channels=1)


def test_b_read_b_allocRead_and_channel_variants(tmp_path, sound_files):
    st, st16, m24 = (str(sound_files / n) for n in ("stereo.wav", "stereo16.aiff", "mono24.wav"))
    rd = build("rd", lambda b: U.Out.ar(bus=0, source=[
        *U.PlayBuf.ar(channel_count=2, buffer_id=0, loop=1),
        U.PlayBuf.ar(buffer_id=1, loop=1),
        U.PlayBuf.ar(buffer_id=2, loop=1),
        *U.PlayBuf.ar(channel_count=2, buffer_id=3, loop=1),
        U.PlayBuf.ar(buffer_id=4, loop=1),
        U.K2A.ar(source=U.BufRateScale.kr(buffer_id=3)),
    ]))
    s = Score([rd]).add(
        0,
        msg("/b_allocRead", 0, st, 100, 4000),
        msg("/b_allocReadChannel", 1, st, 0, -1, 1),
        msg("/b_allocRead", 2, m24),
        msg("/b_alloc", 3, 3000, 2),
        msg("/b_read", 3, st16, 50, 2000, 500, 0),
        msg("/b_alloc", 4, 3000, 1),
        msg("/b_readChannel", 4, st, 0, -1, 0, 0, 1),
        msg("/s_new", "rd", 1000, 0, 0),
    ).end(0.2)
    check_score(tmp_path, s, channels=7)


@pytest.mark.parametrize("fmt", [("WAV", "float"), ("AIFF", "int16"), ("WAV", "int24"), ("CAF", "int32")])
def test_b_write_writes_the_same_file(tmp_path, fmt):
    header, sample = fmt
    ext = header.lower()
    rec = build("rec", lambda b: U.RecordBuf.ar(buffer_id=0, loop=0, source=[U.SinOsc.ar(frequency=300.0) * 0.5, U.Saw.ar(frequency=100.0) * 0.3]))
    out = build("out", lambda b: U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=100.0) * 0.1))
    s = Score([rec, out]).add(0, msg("/b_alloc", 0, 4000, 2), msg("/s_new", "rec", 1000, 0, 0), msg("/s_new", "out", 1001, 1, 0))
    s.add(0.1, msg("/b_write", 0, "{dir}/buf." + ext, header.lower(), sample, -1, 0, 0))
    s.add(0.11, msg("/b_write", 0, "{dir}/part." + ext, header.lower(), sample, 1000, 500, 1), msg("/b_close", 0)).end(0.15)
    pair, ref, dut = check_score(tmp_path, s, channels=1)
    for name in ("buf", "part"):
        rp, dp = pair.ref.workdir / f"{name}.{ext}", pair.dut.workdir / f"{name}.{ext}"
        assert dp.exists(), f"magnetar did not write {dp.name}"
        ri, di = soundfile.info(str(rp)), soundfile.info(str(dp))
        assert (di.format, di.subtype, di.channels, di.samplerate, di.frames) == (ri.format, ri.subtype, ri.channels, ri.samplerate, ri.frames)
        rd_, _ = soundfile.read(str(rp), always_2d=True)
        dd_, _ = soundfile.read(str(dp), always_2d=True)
        assert_same(rd_, dd_, 100, label=f"/b_write {name}")


def test_d_recv_d_load_d_loadDir_d_free(tmp_path):
    a = tone_def("a")
    b = build("b", lambda bb: U.Out.ar(bus=1, source=U.Saw.ar(frequency=bb["freq"]) * 0.2), freq=200.0)
    c = build("c", lambda bb: U.Out.ar(bus=2, source=U.Pulse.ar(frequency=bb["freq"]) * 0.2), freq=300.0)
    d = build("d", lambda bb: U.Out.ar(bus=3, source=U.LFTri.ar(frequency=bb["freq"]) * 0.2), freq=400.0)
    defdir = tmp_path / "defs"
    (defdir / "sub").mkdir(parents=True)
    (defdir / "b.scsyndef").write_bytes(compile_synthdefs(b))
    (defdir / "sub" / "c.scsyndef").write_bytes(compile_synthdefs(c))
    (defdir / "sub" / "d.scsyndef").write_bytes(compile_synthdefs(d))
    s = Score([a]).add(0, msg("/s_new", "a", 1000, 0, 0))
    s.add(0.02, msg("/d_load", str(defdir / "b.scsyndef")), msg("/s_new", "b", 1001, 0, 0))
    s.add(0.04, msg("/d_loadDir", str(defdir / "sub"), msg("/s_new", "c", 1002, 0, 0)), msg("/s_new", "d", 1003, 0, 0))
    s.add(0.06, msg("/d_free", "a"), msg("/s_new", "a", 1004, 0, 0))  # fails: a is gone, 1000 keeps playing
    s.add(0.08, msg("/d_recv", compile_synthdefs(tone_def("a2")), msg("/s_new", "a2", 1005, 0, 0, "out", 1.0, "freq", 500.0)))
    s.end(0.12)
    check_score(tmp_path, s, channels=4, allow_errors=True)


def test_nrt_end_marks_the_last_bundle(tmp_path):
    s = Score([TONE]).add(0, tone(1000, 0)).add(0.1, msg("/nrt_end"))
    pair, ref, dut = check_score(tmp_path, s, channels=1, allow_errors=True)


def test_score_with_garbage_in_its_padding_renders_as_scsynth_renders_it(tmp_path):
    """sclang's Score.write leaves garbage after blobs; scsynth skips padding unread, after
    blobs and after strings (a string ends with the first word whose last byte is NUL)."""
    import struct

    defs = compile_synthdefs(TONE)
    pad = -len(defs) % 4
    defs_blob = struct.pack(">i", len(defs)) + defs + b"\xde\xad\xbe"[:pad]
    assert pad, "the def file fills whole words: no padding to fill with garbage"
    d_recv = b"/d_recv\0,b\0\0" + defs_blob
    # ",siiisfss" + NUL, garbage: the tag string; "c100" + NUL, garbage: maps freq to bus 100.
    s_new = (
        b"/s_new\0\0"
        + b",siiisfss\0\xa5\0"
        + b"tone\0\0\0\0"
        + struct.pack(">iii", 1000, 0, 0)
        + b"out\0"
        + struct.pack(">f", 1.0)
        + b"amp\0"
        + b"c100\0\x5a\x5a\0"
    )
    assert len(s_new) % 4 == 0
    s = Score([TONE], send_defs=False)
    s.add(0.0, d_recv)
    s.add(0.0, msg("/c_set", 100, 0.25), s_new, msg("/s_new", "tone", 1001, 0, 0, "freq", 550.0))
    s.add(0.1, msg("/c_set", 100, 0.5))
    s.end(0.2)
    pair, ref, dut = check_score(tmp_path, s, channels=2)
    # The mapped amplitude reached channel 1: the garbage-padded strings were read as scsynth read them.
    assert np.abs(ref[:, 1]).max() > 0.4


def test_n_trace_in_a_score_prints_what_scsynth_prints(tmp_path):
    """/n_trace prints the node's next block: a group lists its children, a synth its units'
    first input and output values. In NRT both servers print it on stdout."""
    dc = build("tdc", lambda b: U.Out.kr(bus=b["bus"], source=U.DC.kr(source=b["value"]) * 2.0), bus=0.0, value=0.1)
    s = Score([dc, TONE]).add(0.0, msg("/g_new", 10, 0, 0), msg("/s_new", "tdc", 1000, 0, 10, "bus", 3.0), msg("/s_new", "tone", 1001, 1, 10))
    s.add(0.01, msg("/n_trace", 10, 1000), msg("/n_set", 1000, "value", 0.375))
    s.end(0.02)
    pair, _, _ = check_score(tmp_path, s, channels=1)

    def traced(log):
        keep = ("TRACE", "  unit", "    in", "    out", "   10", "   1000", "   1001")
        return [line for line in log.splitlines() if line.startswith(keep)]

    ref, dut = traced(pair.ref.stdout), traced(pair.dut.stdout)
    assert ref[:1] == ["TRACE Group 10"] and any(line.startswith("TRACE 1000  tdc") for line in ref), ref
    assert dut == ref
