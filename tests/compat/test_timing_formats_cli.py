"""NRT timing, output length, file formats, command-line options, input files and bad input."""

import struct

import numpy as np
import pytest
import soundfile
from supriya import ugens as U

from nrt import (
    BLOCK, SR, MAGNETAR, Raw, Score, assert_same, build, check_graph, check_score, expected_frames,
    magnetar_binary, msg, osc_bundle, render, render_both, tone_def,
)

TONE = tone_def()
CLICK = build("click", lambda b: U.OffsetOut.ar(bus=0, source=U.Impulse.ar(frequency=0.0) * b["amp"]), amp=1.0)


# ------------------------------------------------------------------------------ timing


@pytest.mark.parametrize("end", [0.0, 0.1, 64 / SR * 10, 64 / SR * 10 + 1 / SR, 0.123456, 0.5])
def test_output_length_follows_last_bundle(tmp_path, end):
    s = Score([TONE]).add(0, msg("/s_new", "tone", 1000, 0, 0))
    if end:
        s.end(end)
    pair, ref, dut = check_score(tmp_path, s, channels=1)
    assert len(ref) == expected_frames(end), "scsynth's length model changed"


def test_bundles_off_block_boundaries_hit_the_right_sample(tmp_path):
    s = Score([CLICK])
    times = [0.0, 1 / SR, 63 / SR, 64 / SR, 65 / SR, 0.01, 0.0123, 0.05 + 0.4 / SR, 0.05 + 0.6 / SR, 0.09999]
    for i, t in enumerate(times):
        s.add(t, msg("/s_new", "click", 1000 + i, 0, 0, "amp", 0.5 + 0.05 * i))
    s.end(0.15)
    check_score(tmp_path, s, channels=1)


def test_block_boundary_rounding_of_time_tags(tmp_path):
    # bundles exactly on block boundaries: the first few round down into the previous block
    s = Score([CLICK])
    for i in range(1, 20):
        s.add(i * BLOCK / SR, msg("/s_new", "click", 1000 + i, 0, 0, "amp", i / 20.0))
    s.end(0.05)
    check_score(tmp_path, s, channels=1)


def test_n_set_mid_score_moves_and_pauses(tmp_path):
    chain = build("chain", lambda b: U.ReplaceOut.ar(bus=0, source=U.In.ar(bus=0) * 0.5 + U.SinOsc.ar(frequency=b["freq"]) * 0.1), freq=440.0)
    s = Score([chain]).add(0, *(msg("/s_new", "chain", 1000 + i, 1, 0, "freq", 200.0 * (i + 1)) for i in range(3)))
    s.add(0.0301, msg("/n_set", 1001, "freq", 1234.0))
    s.add(0.0502, msg("/n_before", 1002, 1000))
    s.add(0.0703, msg("/n_run", 1001, 0)).add(0.0904, msg("/n_run", 1001, 1)).end(0.12)
    check_score(tmp_path, s, channels=1)


def test_same_time_bundles_run_in_file_order(tmp_path):
    s = Score([TONE]).add(0, msg("/s_new", "tone", 1000, 0, 0))
    s.add(0.05, msg("/n_set", 1000, "freq", 600.0)).add(0.05, msg("/n_set", 1000, "freq", 900.0)).end(0.1)
    check_score(tmp_path, s, channels=1)


def test_nodes_still_running_at_the_end_are_cut_not_released(tmp_path):
    g = tone_def("g", gate=True)
    s = Score([g]).add(0, msg("/s_new", "g", 1000, 0, 0)).add(0.05, msg("/n_set", 1000, "gate", 0.0), msg("/s_new", "g", 1001, 0, 0, "freq", 300.0)).end(0.0601)
    check_score(tmp_path, s, channels=1)


# ------------------------------------------------------------------------------ formats


@pytest.mark.parametrize("header", ["WAV", "AIFF", "CAF"])
@pytest.mark.parametrize("sample", ["int16", "int24", "int32", "float", "double"])
def test_header_and_sample_format(tmp_path, header, sample):
    loud = build("loud", lambda b: U.Out.ar(bus=0, source=[U.SinOsc.ar(frequency=440.0) * 1.5, U.SinOsc.ar(frequency=220.0) * 0.3]))
    s = Score([loud]).add(0, msg("/s_new", "loud", 1000, 0, 0)).end(0.1)
    pair = render_both(s, tmp_path, header=header, sample=sample, options=["-o", "2"])
    ri, di = pair.ref.info(), pair.dut.info()
    assert (di.format, di.subtype, di.channels, di.samplerate, di.frames) == (ri.format, ri.subtype, ri.channels, ri.samplerate, ri.frames)
    ref, dut = pair.read()
    # integer formats clip (channel 0 is driven to ±1.5); quantisation is identical, so be strict
    assert_same(ref, dut, 100)


@pytest.mark.parametrize("sr", [44100, 96000, 22050])
def test_sample_rates(tmp_path, sr):
    check_graph(tmp_path, lambda b: [U.SinOsc.ar(frequency=1000.0) * 0.3, U.Impulse.ar(frequency=100.0), U.K2A.ar(source=U.SampleRate.ir() * 1e-5)], sr=sr, dur=0.1)


# ------------------------------------------------------------------------------ options


@pytest.mark.parametrize("opts", [
    ["-z", "32"], ["-z", "128"], ["-z", "100"], ["-c", "64"], ["-a", "200"], ["-b", "16"], ["-m", "65536"], ["-i", "0"], ["-i", "4", "-a", "256"],
], ids=lambda o: " ".join(o))
def test_options(tmp_path, opts):
    check_graph(
        tmp_path,
        lambda b: [U.SinOsc.ar(frequency=b["f"]) * 0.3, U.K2A.ar(source=U.Decay.kr(source=U.Impulse.kr(frequency=20.0), decay_time=0.02)), U.K2A.ar(source=U.BlockSize.ir() * 0.001), U.K2A.ar(source=U.NumInputBuses.ir() * 0.1 + 0.05)],
        params=dict(f=300.0),
        events=[(0.0517, [msg("/n_set", 1000, "f", 700.0)])],
        options=opts,
        dur=0.15,
    )


def test_input_file_feeds_input_buses(tmp_path):
    t = np.arange(int(0.2 * SR)) / SR
    data = np.stack([0.4 * np.sin(2 * np.pi * 330 * t), 0.3 * np.sign(np.sin(2 * np.pi * 50 * t)), 0.2 * np.sin(2 * np.pi * 1000 * t)], axis=1)
    infile = tmp_path / "in.wav"
    soundfile.write(str(infile), data, SR, subtype="FLOAT")
    # -o 2: inputs start at bus 2; scsynth forces the input count to the file's channel count
    rd = build("rd", lambda b: U.Out.ar(bus=0, source=[U.In.ar(bus=2) + U.In.ar(bus=4), U.In.ar(bus=3) * U.SinOsc.ar(frequency=3.0)]))
    s = Score([rd]).add(0, msg("/s_new", "rd", 1000, 0, 0)).end(0.3)  # runs past the input's end
    check_score(tmp_path, s, channels=2, options=["-i", "2"], input_file=str(infile), allow_errors=True)


def test_input_file_with_SoundIn_style_offset(tmp_path):
    t = np.arange(int(0.1 * SR)) / SR
    infile = tmp_path / "in.aiff"
    soundfile.write(str(infile), 0.5 * np.sin(2 * np.pi * 440 * t), SR, subtype="PCM_24")
    rd = build("rd", lambda b: U.Out.ar(bus=0, source=U.In.ar(bus=U.NumOutputBuses.ir()) * 0.9))
    s = Score([rd]).add(0, msg("/s_new", "rd", 1000, 0, 0)).end(0.1)
    check_score(tmp_path, s, channels=1, options=["-i", "1"], input_file=str(infile))


# ------------------------------------------------------------------------------ bad input


def good_score_bytes():
    return Score([TONE]).add(0, msg("/s_new", "tone", 1000, 0, 0)).end(0.1).encode()


def _bad_variants():
    good = good_score_bytes()
    first_len = struct.unpack(">i", good[:4])[0]
    yield "truncated-bundle", good[: 4 + first_len // 2], 4
    yield "length-past-end", good + struct.pack(">i", 1000) + b"#bundle\0" + b"\0" * 12, len(good)
    yield "negative-length", struct.pack(">i", -8) + good[4:], 0
    yield "not-a-bundle", struct.pack(">i", 12) + b"/s_new\0\0,\0\0\0" + good, 4
    bad_tags = osc_bundle(0.0, [b"/n_set\0\0,ix\0" + struct.pack(">i", 1000) + b"\0\0\0\0"])
    yield "unknown-type-tag", good + struct.pack(">i", len(bad_tags)) + bad_tags, len(good) + 4
    short_arg = osc_bundle(0.0, [b"/n_set\0\0,if\0" + struct.pack(">i", 1000)])
    yield "missing-argument-bytes", good + struct.pack(">i", len(short_arg)) + short_arg, len(good) + 4
    bad_elem = b"#bundle\0" + b"\0" * 8 + struct.pack(">i", 4000) + b"/c_set\0\0"
    yield "element-length-past-bundle", good + struct.pack(">i", len(bad_elem)) + bad_elem, len(good) + 4
    yield "trailing-partial-length", good + b"\0\0", len(good)


BAD = list(_bad_variants())


@pytest.mark.parametrize("name,data,offset", BAD, ids=[b[0] for b in BAD])
def test_malformed_score_fails_naming_the_byte_offset(tmp_path, name, data, offset):
    binary = magnetar_binary()
    r = render(binary, "magnetar", data, tmp_path / "magnetar", options=["-o", "1"])
    assert r.returncode != 0, f"magnetar accepted a malformed score ({name}):\n{r.log[-2000:]}"
    log = r.log.lower()
    assert "offset" in log or "byte" in log, f"error does not mention a byte offset:\n{r.log[-2000:]}"
    assert any(str(o) in r.log for o in range(max(0, offset - 8), offset + 64)), (
        f"error does not name an offset near {offset}:\n{r.log[-2000:]}"
    )


BAD_COMMANDS = {
    "unknown-command": [msg("/no_such_command", 1, 2)],
    "b_setSampleRate-unsupported-by-scsynth": [msg("/b_setSampleRate", 0, 44100.0)],
    "s_new-unknown-def": [msg("/s_new", "nope", 2000, 0, 0)],
    "s_new-duplicate-id": [msg("/s_new", "tone", 1000, 0, 0, "freq", 900.0)],
    "n_set-missing-node": [msg("/n_set", 4242, "freq", 100.0)],
    "n_set-unknown-control": [msg("/n_set", 1000, "nope", 100.0, "freq", 660.0)],
    "g_new-target-missing": [msg("/g_new", 5, 0, 77)],
    "n_free-missing": [msg("/n_free", 31337)],
    "b_gen-unknown-command": [msg("/b_alloc", 0, 64), msg("/b_gen", 0, "nope", 0)],
    "b_read-missing-file": [msg("/b_allocRead", 0, "/nonexistent/file.wav")],
    "b_set-out-of-range": [msg("/b_alloc", 0, 64), msg("/b_set", 0, 1000, 0.5)],
    "c_set-out-of-range": [msg("/c_set", 999999, 0.5)],
    "wrong-arg-types": [msg("/n_set", "tone", 1.5, 3)],
    "d_recv-garbage": [msg("/d_recv", b"SCgf\0\0\0\2\0\1garbage")],
}


@pytest.mark.parametrize("name", BAD_COMMANDS)
def test_bad_command_is_reported_and_rendering_continues(tmp_path, name):
    s = Score([TONE]).add(0, msg("/s_new", "tone", 1000, 0, 0))
    s.add(0.05, *BAD_COMMANDS[name], msg("/n_set", 1000, "amp", 0.4))
    s.end(0.1)
    pair, ref, dut = check_score(tmp_path, s, channels=1, allow_errors=True)
    assert pair.dut.log.strip(), f"magnetar printed nothing about the bad command ({name})"
