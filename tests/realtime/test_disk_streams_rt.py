"""Disk streaming in real time: a cued DiskIn stream plays the file's samples, DiskOut records
what a synth plays, the audio thread stays off the system heap while streams run, and a disk
side slowed on purpose (MAGNETAR_DISK_DELAY_MS) shows up as counted underruns played as
silence, never as stale samples."""

from __future__ import annotations

import time

import numpy as np
import soundfile
from supriya import ugens as U
from supriya.ugens import SynthDefBuilder

from rtcheck import SAMPLE_RATE, load_defs, quit_server, rt_stats
from rtserver import OscClient
from supriya.osc import OscMessage

PERIOD = 256
# Position of the underrun count among /magnetar_rtStats' fields after xruns (README).
UNDERRUNS_FIELD = 6
# Position of the underrun count in /status 1's reply: after the nine standard values and xruns
# (task deadline misses follow it).
STATUS_UNDERRUNS = 10


def write_source(path, seconds: float) -> np.ndarray:
    """A float file whose frames are a rising ramp of distinct values, none of them zero: the
    file frame behind each sample played can be told, and silence from any frame."""
    n = int(seconds * SAMPLE_RATE)
    data = (0.1 + 0.8 * np.arange(n) / n).astype(np.float32)
    soundfile.write(str(path), data, SAMPLE_RATE, format="WAV", subtype="FLOAT")
    return data


def file_frames(played: np.ndarray, src: np.ndarray) -> np.ndarray:
    """The file frame each (non-silent) sample came from; -1 where it is no frame of the file."""
    n = src.size
    idx = np.rint((played.astype(np.float64) - 0.1) / 0.8 * n).astype(np.int64)
    ok = (idx >= 0) & (idx < n)
    ok[ok] &= src[idx[ok]] == played[ok]
    return np.where(ok, idx, -1)


def disk_in_def():
    with SynthDefBuilder(buf=0.0) as b:
        U.Out.ar(bus=0, source=U.DiskIn.ar(buffer_id=b["buf"], channel_count=1))
    return b.build(name="rt_disk_in")


def disk_out_def():
    with SynthDefBuilder(buf=0.0) as b:
        # The frame index, exact in float up to 2^24.
        count = U.Phasor.ar(trigger=0.0, rate=1.0, start=0.0, stop=1.0e7)
        U.DiskOut.ar(buffer_id=b["buf"], source=count)
    return b.build(name="rt_disk_out")


def cue(client: OscClient, bufnum: int, path, frames: int) -> None:
    """What Buffer.cueSoundFile sends: /b_alloc with /b_read (leave open) as its completion."""
    read = OscMessage("/b_read", bufnum, str(path), 0, frames, 0, 1)
    client.send(OscMessage("/b_alloc", bufnum, frames, 1, read))
    client.wait_for("/done", lambda m: m.contents[0] == "/b_read", timeout=5)


def underruns(port: int) -> int:
    value = rt_stats(port).field(UNDERRUNS_FIELD)
    assert value is not None, "/magnetar_rtStats does not report disk underruns"
    return value


def recorded_stream(wav) -> tuple[np.ndarray, int]:
    rec, sr = soundfile.read(str(wav), dtype="float32", always_2d=True)
    assert sr == SAMPLE_RATE
    x = rec[:, 0]
    nz = np.flatnonzero(x)
    assert nz.size, "the stream played nothing"
    return x, int(nz[0])


def test_cued_disk_in_plays_the_file_sample_for_sample_without_underruns(driver, magnetar, tmp_path):
    src = write_source(tmp_path / "src.wav", 2.5)
    wav = tmp_path / "out.wav"
    server = magnetar(record=wav, period=PERIOD)
    client = OscClient(server.port)
    try:
        load_defs(client, disk_in_def())
        cue(client, 0, tmp_path / "src.wav", 32768)
        client.send(("/s_new", "rt_disk_in", 1000, 0, 0))
        client.sync()
        time.sleep(0.3)
        # Steady state with a stream running: refills come and go, commands do not.
        before = rt_stats(server.port)
        time.sleep(1.5)
        after = rt_stats(server.port)
        time.sleep(1.2)
        status = client.request(OscMessage("/status", 1), "/status.reply").contents
        lost = underruns(server.port)
    finally:
        client.close()
        quit_server(server)
    heap_ops = after.steady_heap_ops - before.steady_heap_ops
    assert after.steady_periods - before.steady_periods > 0.8 * 1.5 * SAMPLE_RATE / PERIOD
    assert heap_ops == 0, f"the audio thread used the system heap while streaming: {heap_ops}"
    assert lost == 0, f"{lost} underruns with an idle disk"
    assert status[STATUS_UNDERRUNS] == 0, f"/status 1 reports {status[STATUS_UNDERRUNS]} underruns"
    x, start = recorded_stream(wav)
    played = x[start : start + src.size]
    assert played.size == src.size, "the recording ends before the file does"
    wrong = np.flatnonzero(played != src)
    assert not wrong.size, f"{wrong.size} frames differ from the file, the first at frame {wrong[0]}"
    assert not x[start + src.size :].any(), "sound after the end of the file"


def test_disk_out_records_every_frame_the_synth_played(driver, magnetar, tmp_path):
    path = tmp_path / "rec.wav"
    server = magnetar(period=PERIOD)
    client = OscClient(server.port)
    try:
        load_defs(client, disk_out_def())
        # What Server.record sends: a buffer, a file left open with only its header, DiskOut.
        client.request(OscMessage("/b_alloc", 1, 65536, 1), "/done", lambda m: m.contents[0] == "/b_alloc")
        client.request(OscMessage("/b_write", 1, str(path), "wav", "float", 0, 0, 1), "/done", lambda m: m.contents[0] == "/b_write")
        client.send(("/s_new", "rt_disk_out", 1000, 0, 0, "buf", 1))
        client.sync()
        time.sleep(0.3)
        before = rt_stats(server.port)
        time.sleep(1.5)
        after = rt_stats(server.port)
        client.send(("/n_free", 1000))
        client.request(OscMessage("/b_close", 1), "/done", lambda m: m.contents[0] == "/b_close", timeout=5)
        lost = underruns(server.port)
    finally:
        client.close()
        quit_server(server)
    assert after.steady_heap_ops - before.steady_heap_ops == 0, "the audio thread used the system heap while recording"
    assert lost == 0, f"{lost} underruns with an idle disk"
    data, sr = soundfile.read(str(path), dtype="float64")
    assert sr == SAMPLE_RATE
    assert data.size > 1.8 * SAMPLE_RATE, f"only {data.size} frames recorded"
    assert data[0] == 0.0, "the recording does not start at the synth's first frame"
    steps = np.diff(data)
    gaps = np.flatnonzero(steps != 1.0)
    assert not gaps.size, f"{gaps.size} frames lost or repeated, the first after frame {gaps[0]}"


def test_a_starved_disk_side_counts_underruns_and_plays_silence_not_stale_samples(driver, magnetar, tmp_path, monkeypatch):
    src = write_source(tmp_path / "src.wav", 3.0)
    wav = tmp_path / "out.wav"
    # Each read takes 150 ms: far longer than a 2048-frame half lasts (43 ms).
    monkeypatch.setenv("MAGNETAR_DISK_DELAY_MS", "150")
    server = magnetar(record=wav, period=PERIOD)
    client = OscClient(server.port)
    try:
        load_defs(client, disk_in_def())
        cue(client, 0, tmp_path / "src.wav", 4096)
        client.send(("/s_new", "rt_disk_in", 1000, 0, 0))
        client.sync()
        time.sleep(1.5)
        client.send(("/n_free", 1000))
        client.sync()
        status = client.request(OscMessage("/status", 1), "/status.reply").contents
        lost = underruns(server.port)
    finally:
        client.close()
        quit_server(server)
    assert lost > 0, "no underrun counted though the disk was far too slow"
    assert status[STATUS_UNDERRUNS] == lost, f"/status 1 reports {status[STATUS_UNDERRUNS]} underruns, /magnetar_rtStats {lost}"
    x, start = recorded_stream(wav)
    span = x[start : start + int(1.2 * SAMPLE_RATE)]
    sound = span[span != 0.0]
    frames = file_frames(sound, src)
    assert (frames >= 0).all(), "samples that are no frame of the file"
    # The file goes on where the disk got to: late halves skip ahead, but a half played again
    # (stale contents) would step back.
    back = np.flatnonzero(np.diff(frames) <= 0)
    assert not back.size, f"{back.size} steps back into frames already played (stale halves)"
    silent = span.size - sound.size
    assert silent > 0.25 * span.size, f"only {silent} silent frames though the disk was starved"
    assert sound.size > 4096 + 2048, "nothing but silence after the cued buffer"
