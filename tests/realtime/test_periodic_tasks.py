"""Periodic tasks in real time (paper 003), through MagnetarConv: its later partitions run on the
server's task threads, and the result is the plain convolution of what it was given, with no
latency; task threads starved on purpose (MAGNETAR_TASK_STALL_US) miss their deadlines, which
are counted (``/magnetar_rtStats``, ``/status 1``) and played as silence, while the audio thread
never waits for them: no xrun, every period on time, the head of the response still sounding."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import soundfile
from supriya import ugens as U
from supriya.osc import OscMessage
from supriya.ugens import SynthDefBuilder

from rtcheck import SAMPLE_RATE, load_defs, quit_server, rt_stats
from rtserver import OscClient

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "supriya"))
from magnetar_conv import MagnetarConv, prepare_message  # noqa: E402

PERIOD = 256
# Position of taskDeadlineMisses among /magnetar_rtStats' fields after xruns (README).
MISSES_FIELD = 7
# ... and in /status 1's reply: after the nine standard values, xruns and disk underruns.
STATUS_MISSES = 11


def conv_def():
    with SynthDefBuilder(ir=0, sig=0) as b:
        src = U.PlayBuf.ar(buffer_id=b["sig"], channel_count=1)
        U.Out.ar(bus=0, source=MagnetarConv.ar(source=src, buffer_id=b["ir"]))
    return b.build(name="rt_conv")


def signals(tmp_path: Path, ir_seconds: float, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    n = int(ir_seconds * SAMPLE_RATE)
    ir = (rng.uniform(-1, 1, n) * np.exp(-4.0 * np.arange(n) / n)).astype(np.float32)
    x = np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32)
    x[: SAMPLE_RATE // 4] = rng.uniform(-0.5, 0.5, SAMPLE_RATE // 4)
    soundfile.write(tmp_path / "ir.wav", ir, SAMPLE_RATE, subtype="FLOAT")
    soundfile.write(tmp_path / "x.wav", x, SAMPLE_RATE, subtype="FLOAT")
    return ir, x


def play(server, tmp_path: Path, sizes: tuple[int, ...], seconds: float):
    client = OscClient(server.port)
    try:
        load_defs(client, conv_def())
        for bufnum, name in ((0, "ir.wav"), (1, "x.wav")):
            client.send(("/b_allocRead", bufnum, str(tmp_path / name)))
            client.wait_for("/done", lambda m: m.contents[0] == "/b_allocRead", timeout=5)
        client.send(prepare_message(2, 0, sizes))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_gen", timeout=10)
        before = rt_stats(server.port)
        started = time.monotonic()
        client.send(("/s_new", "rt_conv", 1000, 0, 0, "ir", 2, "sig", 1))
        client.sync()
        time.sleep(seconds)
        after = rt_stats(server.port)
        elapsed = time.monotonic() - started
        status = client.request(OscMessage("/status", 1), "/status.reply").contents
    finally:
        client.close()
        quit_server(server)
    return before, after, elapsed, status


def recorded(wav: Path) -> np.ndarray:
    rec, sr = soundfile.read(str(wav), dtype="float64", always_2d=True)
    assert sr == SAMPLE_RATE
    x = rec[:, 0]
    nz = np.flatnonzero(x)
    assert nz.size, "nothing was played"
    return x[nz[0]:]


def convolve(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    n = len(x) + len(h) - 1
    size = 1 << (n - 1).bit_length()
    return np.fft.irfft(np.fft.rfft(x.astype(np.float64), size) * np.fft.rfft(h.astype(np.float64), size), size)[:n]


def test_tasks_in_real_time_give_the_plain_convolution_with_no_latency(driver, magnetar, tmp_path):
    ir, x = signals(tmp_path, 1.0, 2.0)
    wav = tmp_path / "out.wav"
    server = magnetar(record=wav, period=PERIOD)
    # Periods of 32 and 256 blocks (43 and 341 ms): a busy shared machine does not make them miss.
    before, after, _, status = play(server, tmp_path, (2048, 16384), 2.0)
    misses = after.field(MISSES_FIELD)
    assert misses is not None, "/magnetar_rtStats does not report task deadline misses"
    assert misses == 0, f"{misses} task deadline misses on an idle server"
    assert status[STATUS_MISSES] == 0
    heap = after.steady_heap_ops - before.steady_heap_ops
    assert heap == 0, f"the audio thread used the system heap {heap} times while convolving"
    ref = convolve(x[: SAMPLE_RATE // 4], ir)
    # The synth starts at a block boundary: its first output sample is x[0]·h[0], not zero.
    out = recorded(wav)[: len(ref)]
    assert len(out) == len(ref), f"recorded {len(out)} frames after the onset, the convolution has {len(ref)}"
    snr = 10 * np.log10(np.sum(ref**2) / np.sum((ref - out) ** 2))
    assert snr >= 120.0, f"SNR {snr:.1f} dB against the plain convolution"


def test_starved_task_threads_miss_deadlines_without_stalling_the_audio_thread(driver, magnetar, tmp_path):
    ir, x = signals(tmp_path, 0.5, 2.0)
    wav = tmp_path / "out.wav"
    # Every task run waits 20 ms first: 2- and 4-block periods (2.7 and 5.3 ms at 64 samples) miss.
    server = magnetar(record=wav, period=PERIOD, env={"MAGNETAR_TASK_STALL_US": "20000"})
    before, after, elapsed, status = play(server, tmp_path, (128, 256), 1.5)
    misses = after.field(MISSES_FIELD) - before.field(MISSES_FIELD)
    assert misses > 10, f"only {misses} deadline misses counted with starved task threads"
    assert status[STATUS_MISSES] == after.field(MISSES_FIELD) or status[STATUS_MISSES] >= misses
    # The audio thread never waited for a task: periods kept their pace and no xruns came of it.
    # A thread that waited would lose a period at nearly every release (hundreds here); one or
    # two are what a shared VM costs any driver now and then.
    xruns = after.xruns - before.xruns
    assert xruns <= 2, f"{xruns} xruns while tasks were starved"
    periods = after.field(3) - before.field(3)
    assert periods >= 0.9 * elapsed * SAMPLE_RATE / PERIOD, f"{periods} periods in {elapsed:.2f} s"
    # The head of the response (level 0, in the unit: 3 partitions of 64 before the 128-sample
    # level starts) kept sounding, exactly; the levels that missed left silence, not garbage.
    ref = convolve(x[: SAMPLE_RATE // 4], ir)
    out = recorded(wav)
    head = 3 * 64
    assert np.max(np.abs(out[:head] - ref[:head])) < 1e-5
    assert np.all(np.isfinite(out))
    assert np.count_nonzero(out[: SAMPLE_RATE // 4]) > 0.99 * (SAMPLE_RATE // 4)


def test_instances_on_one_prepared_response_share_its_spectra(driver, magnetar, tmp_path):
    """Instances on a buffer that MagnetarConvPrepare made read its spectra in place: each takes
    the size of the spectra less from the pool than an instance on a copy of that buffer read
    back from a file (which has to copy them)."""
    signals(tmp_path, 2.0, 1.0)
    server = magnetar(period=PERIOD, extra=("-m", str(256 * 1024)))
    client = OscClient(server.port)
    copy = tmp_path / "prepared.wav"
    try:
        load_defs(client, conv_def())
        for bufnum, name in ((0, "ir.wav"), (1, "x.wav")):
            client.send(("/b_allocRead", bufnum, str(tmp_path / name)))
            client.wait_for("/done", lambda m: m.contents[0] == "/b_allocRead", timeout=5)
        client.send(prepare_message(2, 0, (2048, 16384)))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_gen", timeout=10)
        client.send(("/b_write", 2, str(copy), "wav", "float"))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_write", timeout=10)
        client.send(("/b_allocRead", 3, str(copy)))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_allocRead", timeout=10)
        frames = client.request(OscMessage("/b_query", 2), "/b_info").contents[1]
        per_instance = {}
        node = 1000
        for ir in (2, 3):
            before = rt_stats(server.port).field(0)
            for _ in range(4):
                client.send(("/s_new", "rt_conv", node, 0, 0, "ir", ir, "sig", 1))
                node += 1
            client.sync()
            time.sleep(0.2)
            per_instance[ir] = (rt_stats(server.port).field(0) - before) / 4
        running = client.request(OscMessage("/status"), "/status.reply").contents[2]
    finally:
        client.close()
        quit_server(server)
    assert running == 8
    spectra = 4 * frames
    saved = per_instance[3] - per_instance[2]
    assert saved >= 0.9 * spectra, (
        f"pool bytes per instance: {per_instance[2]:.0f} on the prepared buffer, {per_instance[3]:.0f} on a copy; "
        f"spectra {spectra} bytes"
    )
