"""Periodic tasks in real time (paper 003), through MagnetarConv: its later partitions run on the
server's task threads, and the result is the plain convolution of what it was given, with no
latency; task threads starved on purpose (MAGNETAR_TASK_STALL_US) miss their deadlines, which
are counted (``/magnetar_rtStats``, ``/status 1``) and played as silence, while the audio thread
never waits for them: no xrun, every period on time, the head of the response still sounding."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import soundfile
from supriya import ugens as U
from supriya.osc import OscMessage
from supriya.ugens import SynthDefBuilder

from rtcheck import ATTEMPTS, SAMPLE_RATE, load_conv, quit_server, rt_stats, until_on_time
from rtserver import OscClient

from magnetar_conv import MagnetarConv

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
        load_conv(client, [conv_def()], tmp_path / "ir.wav", tmp_path / "x.wav", sizes)
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


# The task threads run under SCHED_FIFO below the audio thread; when the other test worker runs
# real-time threads of its own on the same two cores, a task can now and then lose its period
# to them. A run that counted misses is played again (rtcheck.until_on_time); a server whose
# tasks miss on every run fails.


def deadline_misses(after) -> int:
    misses = after.field(MISSES_FIELD)
    assert misses is not None, "/magnetar_rtStats does not report task deadline misses"
    return misses


def test_tasks_in_real_time_give_the_plain_convolution_with_no_latency(driver, magnetar, tmp_path):
    ir, x = signals(tmp_path, 1.0, 2.0)

    def run(attempt):
        wav = tmp_path / f"out{attempt}.wav"
        server = magnetar(record=wav, period=PERIOD)
        # Periods of 8 and 64 blocks (43 and 341 ms).
        return wav, *play(server, tmp_path, (2048, 16384), 2.0)

    (wav, before, after, _, status), counted = until_on_time(run, lambda r: deadline_misses(r[2]))
    assert counted[-1] == 0, f"task deadline misses on each of {ATTEMPTS} runs: {counted}"
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
    """Instances read a prepared response's spectra in place, whether MagnetarConvPrepare made
    the buffer or it was read back from a file (the server makes the shared spectra of any
    buffer whose contents are a prepared response): an instance on either takes the same from
    the pool, less than its input history and a copy of the spectra would."""
    signals(tmp_path, 2.0, 1.0)
    server = magnetar(period=PERIOD, extra=("-m", str(256 * 1024)))
    client = OscClient(server.port)
    copy = tmp_path / "prepared.wav"
    try:
        load_conv(client, [conv_def()], tmp_path / "ir.wav", tmp_path / "x.wav", (2048, 16384))
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
    detail = (
        f"pool bytes per instance: {per_instance[2]:.0f} on the prepared buffer, {per_instance[3]:.0f} on one read "
        f"from a file; spectra {spectra} bytes"
    )
    assert abs(per_instance[3] - per_instance[2]) <= 0.05 * spectra, detail
    # The spectra of past input are as large as the response's, the windows and task slots
    # about as large again (2.1 times in all here); a copy of the response would make it 3.1.
    assert per_instance[2] < 2.6 * spectra, detail


def test_a_command_on_a_running_instances_buffer_changes_its_response_without_the_heap(driver, magnetar, tmp_path):
    """`/b_fill` zeroing the spectra of the last level of a prepared buffer (an audio-thread
    command): the control thread remakes the shared spectra, the audio thread swaps them in, and
    the instance convolves with the response cut there, with no system-heap call on the audio
    thread; before the change it played the whole response."""
    rng = np.random.default_rng(9)
    n = SAMPLE_RATE
    ir = (rng.uniform(-1, 1, n) * np.exp(-4.0 * np.arange(n) / n)).astype(np.float32)
    x = rng.uniform(-0.5, 0.5, 4 * SAMPLE_RATE).astype(np.float32)
    soundfile.write(tmp_path / "ir.wav", ir, SAMPLE_RATE, subtype="FLOAT")
    soundfile.write(tmp_path / "x.wav", x, SAMPLE_RATE, subtype="FLOAT")

    def run(attempt):
        wav = tmp_path / f"out{attempt}.wav"
        server = magnetar(record=wav, period=PERIOD)
        client = OscClient(server.port)
        try:
            load_conv(client, [conv_def()], tmp_path / "ir.wav", tmp_path / "x.wav", (2048, 16384))
            # The layout's header: sizes, counts and offsets per level (docs/architecture.md).
            header = client.request(OscMessage("/b_getn", 2, 0, 14), "/b_setn").contents[3:]
            levels = int(header[4])
            triples = [tuple(int(v) for v in header[5 + 3 * i : 8 + 3 * i]) for i in range(levels)]
            last_at = 5 + 3 * levels + sum(c * (2 * m + 2) for m, c, _ in triples[:-1])
            m, c, last_offset = triples[-1]
            client.send(("/s_new", "rt_conv", 1000, 0, 0, "ir", 2, "sig", 1))
            client.sync()
            time.sleep(1.2)
            before = rt_stats(server.port)
            client.send(("/b_fill", 2, last_at, c * (2 * m + 2), 0.0))
            client.sync()
            time.sleep(2.0)
            after = rt_stats(server.port)
        finally:
            client.close()
            quit_server(server)
        return wav, last_offset, before, after

    (wav, last_offset, before, after), counted = until_on_time(run, lambda r: deadline_misses(r[3]))
    heap = after.field(4) - before.field(4)
    assert heap == 0, f"the audio thread used the system heap {heap} times around the change"
    assert counted[-1] == 0, f"task deadline misses on each of {ATTEMPTS} runs: {counted}"
    out = recorded(wav)
    cut = ir.copy()
    cut[last_offset:] = 0.0
    whole, shortened = convolve(x, ir), convolve(x, cut)

    def snr(ref, seg):
        return 10 * np.log10(np.sum(ref[seg] ** 2) / np.sum((ref[seg] - out[seg]) ** 2))

    early = slice(0, int(0.9 * SAMPLE_RATE))
    # The change came about 1.2 s after the onset; a segment of the last level released then
    # plays until two of its periods (0.68 s) later.
    late = slice(int(2.4 * SAMPLE_RATE), min(len(out), len(x)) - PERIOD)
    assert late.stop - late.start >= SAMPLE_RATE // 2, f"recorded {len(out)} frames"
    assert snr(whole, early) >= 120.0, "the whole response before the change"
    assert snr(shortened, late) >= 120.0, f"the response cut after the change: SNR {snr(shortened, late):.1f} dB"
