"""Disk streaming against scsynth: DiskIn, VDiskIn and DiskOut through buffers that /b_read and
/b_write leave open (what `Buffer.cueSoundFile` and `s.record` send), rendered by both servers.

Source files hold a frame-index ramp plus a tone, so a half played twice, played late or left
stale shows up as a step in the output; the files are shorter than the renders, so the end of
file (zero fill, the done flag) is in every non-looping case."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

from supriya import ugens as U

from nrt import SR, Score, assert_same, build, check_score, msg

FILE_FRAMES = 21_111  # not a multiple of any half, so the end of file falls inside one


def write_source(path, channels: int, fmt: str, subtype: str, frames: int = FILE_FRAMES):
    t = np.arange(frames)
    cols = []
    for c in range(channels):
        ramp = ((t * (c + 1)) % 4000) / 4000.0 - 0.5
        tone = 0.3 * np.sin(2 * np.pi * (220.0 * (c + 1)) * t / SR)
        cols.append(0.5 * ramp + tone)
    data = np.stack(cols, axis=1)
    soundfile.write(str(path), data, SR, format=fmt, subtype=subtype)
    return str(path)


def disk_in_def(channels: int, loop: int):
    def body(b):
        sig = U.DiskIn.ar(buffer_id=b["buf"], loop=loop, channel_count=channels)
        sig = list(sig) if channels > 1 else [sig]
        done = U.K2A.ar(source=U.Done.kr(source=sig[0]))
        U.Out.ar(bus=0, source=[*sig, done])

    return build(f"diskin{channels}_{loop}", body, buf=0.0)


@pytest.mark.parametrize(
    "channels,loop,fmt,subtype,buf_frames,start",
    [
        pytest.param(1, 0, "WAV", "FLOAT", 4096, 0, id="mono-wav-float"),
        pytest.param(2, 0, "WAV", "PCM_16", 4096, 0, id="stereo-wav-int16"),
        pytest.param(2, 1, "AIFF", "PCM_24", 4096, 0, id="stereo-aiff-int24-loop"),
        pytest.param(1, 1, "FLAC", "PCM_16", 2048, 777, id="mono-flac-int16-loop-offset"),
        pytest.param(2, 0, "FLAC", "PCM_24", 32768, 0, id="stereo-flac-int24-cue"),
        pytest.param(1, 0, "AIFF", "FLOAT", 1024, 5000, id="mono-aiff-float-offset"),
    ],
)
def test_disk_in_streams_like_scsynth(tmp_path, channels, loop, fmt, subtype, buf_frames, start):
    src = write_source(tmp_path / f"src.{fmt.lower()}", channels, fmt, subtype)
    sd = disk_in_def(channels, loop)
    s = Score([sd]).add(
        0,
        msg("/b_alloc", 0, buf_frames, channels),
        msg("/b_read", 0, src, start, buf_frames, 0, 1),
        msg("/s_new", sd.effective_name, 1000, 0, 0),
    )
    # scsynth spins for ever when a looping stream outlives its file: free the synth first
    s.add(1.15, msg("/n_free", 1000)).add(1.2, msg("/b_close", 0)).end(1.3)
    # a looping stream never ends, so its done channel is silent
    _, ref, dut = check_score(tmp_path, s, channels=channels + 1, allow_silent=True)
    assert np.all(np.any(ref[:, :channels] != 0.0, axis=0)), "scsynth played nothing: the case is broken"
    # the render outlasts the file: non-looping streams end in silence and report done
    if not loop:
        tail = ref[SR : SR + 2000]
        assert np.all(tail[:, :channels] == 0.0) and tail[-1, channels] == 1.0


def test_disk_in_without_an_open_file_plays_the_buffer_then_silence(tmp_path):
    src = write_source(tmp_path / "src.wav", 1, "WAV", "FLOAT")
    sd = disk_in_def(1, 0)
    s = Score([sd]).add(
        0,
        msg("/b_alloc", 0, 2048, 1),
        msg("/b_read", 0, src, 0, 2048, 0, 0),
        msg("/s_new", sd.effective_name, 1000, 0, 0),
    )
    s.end(0.2)
    check_score(tmp_path, s, channels=2)


def vdisk_in_def(channels: int, rate_kind: str, loop: int, send_id: int):
    def body(b):
        if rate_kind == "one":
            rate = 1.0
        elif rate_kind == "const":
            rate = 0.73
        elif rate_kind == "fast":
            rate = 1.61
        else:  # a rate that moves, from a control-rate LFO
            rate = U.SinOsc.kr(frequency=0.7) * 0.45 + 1.1
        sig = U.VDiskIn.ar(buffer_id=b["buf"], rate=rate, loop=loop, send_id=send_id, channel_count=channels)
        sig = list(sig) if channels > 1 else [sig]
        done = U.K2A.ar(source=U.Done.kr(source=sig[0]))
        U.Out.ar(bus=0, source=[*sig, done])

    return build(f"vdiskin{channels}_{rate_kind}_{loop}_{send_id}", body, buf=0.0)


@pytest.mark.parametrize(
    "channels,rate_kind,loop,send_id,fmt,subtype",
    [
        pytest.param(1, "one", 0, 0, "WAV", "FLOAT", id="mono-rate1"),
        pytest.param(2, "one", 1, 7, "AIFF", "PCM_16", id="stereo-rate1-loop-sendid"),
        pytest.param(1, "const", 0, 3, "WAV", "PCM_24", id="mono-rate0.73-sendid"),
        pytest.param(2, "fast", 1, 0, "FLAC", "PCM_16", id="stereo-rate1.61-loop"),
        pytest.param(2, "lfo", 0, 9, "WAV", "FLOAT", id="stereo-varying-rate-sendid"),
        pytest.param(1, "lfo", 1, 0, "FLAC", "PCM_24", id="mono-varying-rate-loop"),
    ],
)
def test_vdisk_in_streams_like_scsynth(tmp_path, channels, rate_kind, loop, send_id, fmt, subtype):
    src = write_source(tmp_path / f"src.{fmt.lower()}", channels, fmt, subtype)
    sd = vdisk_in_def(channels, rate_kind, loop, send_id)
    s = Score([sd]).add(
        0,
        msg("/b_alloc", 0, 4096, channels),
        msg("/b_read", 0, src, 0, 4096, 0, 1),
        msg("/s_new", sd.effective_name, 1000, 0, 0),
    )
    # scsynth spins for ever when a looping stream outlives its file: free the synth first
    s.add(1.15, msg("/n_free", 1000)).add(1.2, msg("/b_close", 0)).end(1.3)
    _, ref, dut = check_score(tmp_path, s, channels=channels + 1, allow_silent=True)
    assert np.all(np.any(ref[:, :channels] != 0.0, axis=0)), "scsynth played nothing: the case is broken"


def test_vdisk_in_refuses_a_rate_too_fast_for_its_buffer(tmp_path):
    src = write_source(tmp_path / "src.wav", 1, "WAV", "FLOAT")
    sd = build(
        "vfast",
        lambda b: U.Out.ar(bus=0, source=U.VDiskIn.ar(buffer_id=0, rate=U.Line.kr(start=1.0, stop=12.0, duration=0.2))),
    )
    s = Score([sd]).add(
        0, msg("/b_alloc", 0, 1024, 1), msg("/b_read", 0, src, 0, 1024, 0, 1), msg("/s_new", "vfast", 1000, 0, 0)
    )
    s.end(0.3)
    check_score(tmp_path, s, channels=1)


@pytest.mark.parametrize(
    "header,sample,channels,buf_frames",
    [
        pytest.param("wav", "float", 2, 32768, id="stereo-wav-float"),
        pytest.param("aiff", "int16", 1, 65536, id="mono-aiff-int16"),
        pytest.param("wav", "int24", 3, 65536, id="three-wav-int24-record"),
    ],
)
def test_disk_out_writes_the_same_file(tmp_path, header, sample, channels, buf_frames):
    def body(b):
        srcs = [U.SinOsc.ar(frequency=110.0 * (c + 1)) * 0.4 + U.LFSaw.ar(frequency=3.0 + c) * 0.3 for c in range(channels)]
        count = U.DiskOut.ar(buffer_id=0, source=srcs)
        U.Out.ar(bus=0, source=[count * 0.00001, srcs[0]])

    sd = build(f"rec{channels}", body)
    path = "{dir}/rec." + header
    # scsynth writes DiskOut's halves on its disk thread even when rendering a score, so the
    # render has to leave that thread time to keep up (or it overwrites a half before the
    # thread wrote it, or closes the file first): large halves, and busy synths that slow
    # every block down
    busy = build("busy", lambda b: U.Out.ar(bus=200, source=U.Mix.new([U.SinOsc.ar(frequency=50.0 + k) for k in range(40)])))
    s = Score([sd, busy]).add(
        0,
        msg("/b_alloc", 0, buf_frames, channels),
        msg("/b_write", 0, path, header, sample, 0, 0, 1),
        *[msg("/s_new", "busy", 2000 + k, 1, 0) for k in range(30)],
        msg("/s_new", sd.effective_name, 1000, 0, 0),
    )
    # freed mid-half: the destructor writes what was recorded since the last full half
    s.add(1.6, msg("/n_free", 1000))
    s.add(2.2, msg("/b_close", 0)).end(2.3)
    pair, ref, dut = check_score(tmp_path, s, channels=2)
    rp, dp = pair.ref.workdir / f"rec.{header}", pair.dut.workdir / f"rec.{header}"
    assert dp.exists(), "magnetar wrote no recording"
    ri, di = soundfile.info(str(rp)), soundfile.info(str(dp))
    assert (di.format, di.subtype, di.channels, di.samplerate, di.frames) == (
        ri.format,
        ri.subtype,
        ri.channels,
        ri.samplerate,
        ri.frames,
    )
    assert ri.frames > SR, "the reference recording is too short to mean anything"
    rd, _ = soundfile.read(str(rp), always_2d=True, dtype="float32")
    dd, _ = soundfile.read(str(dp), always_2d=True, dtype="float32")
    assert_same(rd, dd, 100, label="DiskOut recording")
