"""The syscall guard (MAGNETAR_RT_GUARD=1, README): a seccomp filter on the audio thread and
the DSP helpers that lets only the allow-list through and counts every other system call.
A write made on purpose by the audio thread is caught and counted; under a load of commands
from four clients, notifications, /tr and SendReply at audio rate and a parallel group on two
threads, the audio threads make no call outside the allow-list, and without helpers the audio
thread makes none at all, not even a futex wake.

MAGNETAR_TEST_RT_GUARD=count runs the load test in counting mode instead (every call
executed, all of them listed): the way to see what a driver's callback needs."""

from __future__ import annotations

import os
import re
import threading
import time

import numpy as np
import soundfile

from rtcheck import SAMPLE_RATE, load_defs, quit_server, rt_stats, sine_def
from rtserver import OscClient

PERIOD = 256
GUARD = -1  # the guard's count: always the last value of /magnetar_rtStats.reply
PARALLEL_GROUPS = 5
LOAD_SECONDS = 3.0
CLIENTS = 4


def guard_report(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("rt guard")]
    assert lines, f"the server printed no guard report:\n{output[-3000:]}"
    return lines[-1]


def test_a_write_on_the_audio_thread_is_caught_and_counted(driver, magnetar):
    server = magnetar(period=PERIOD, env={"MAGNETAR_RT_GUARD": "1", "MAGNETAR_RT_GUARD_PROBE": "1"})
    client = OscClient(server.port)
    try:
        first = rt_stats(server.port)
        time.sleep(0.5)
        second = rt_stats(server.port)
        # The server still answers normally while its audio thread is refused a call a period.
        assert client.status().address == "/status.reply"
    finally:
        client.close()
        quit_server(server)
    periods = second.field(3) - first.field(3)
    caught = second.field(GUARD) - first.field(GUARD)
    print(f"{periods} periods, {caught} calls caught")
    assert periods > 0.3 * 0.5 * SAMPLE_RATE / PERIOD
    # One probe per period; the probe's write is the call the guard must catch.
    assert caught >= periods, f"the guard caught {caught} calls in {periods} periods"
    report = guard_report(server.output)
    print(report)
    assert re.search(r"write\(1\)x\d+", report), report


def reply_def():
    """SendReply and SendTrig driven by an audio-rate impulse (1 kHz each)."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder(rate=1000.0) as b:
        trig = U.Impulse.ar(frequency=b["rate"])
        U.SendReply.ar(trigger=trig, command_name="/rt_reply", source=[U.SinOsc.ar(frequency=3.0)], reply_id=7)
        U.SendTrig.ar(trigger=trig, id_=3, value=1.0)
    return b.build(name="rt_replies")


def hammer(port: int, k: int, wav: str, stop: threading.Event, errors: list) -> None:
    """One client's stream: /s_new, /n_set, /n_free, /b_alloc, /b_read, /sync, notifications on."""
    try:
        with OscClient(port) as c:
            c.request(("/notify", 1), "/done", timeout=3)
            i = 0
            while not stop.is_set():
                node = 10000 + k * 100000 + i
                buf = 100 + k * 8 + i % 8
                c.send(("/s_new", "rt_sine", node, 1, 2, "freq", 200.0 + 50 * k, "amp", 0.001))
                c.send(("/n_set", node, "freq", 300.0 + 50 * k))
                c.send(("/b_alloc", buf, 512, 1))
                c.send(("/b_read", buf, wav, 0, 512, 0, 0))
                c.send(("/n_free", node))
                c.sync(timeout=5)
                c.clear()
                i += 1
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors.append(f"client {k}: {e!r}")


def run_load(driver, magnetar, tmp_path, mode: str, threads: int):
    """Boots a guarded server with `threads` DSP threads, loads it for LOAD_SECONDS; returns
    (calls caught meanwhile, parallel-group runs meanwhile, the server's guard report)."""
    wav = tmp_path / "src.wav"
    soundfile.write(wav, (0.1 * np.sin(np.arange(4096) / 10.0)).astype(np.float32), SAMPLE_RATE, subtype="FLOAT")
    # Every block of the group on the threads: their calls are what the guard watches.
    server = magnetar(period=PERIOD, extra=("-T", str(threads)), env={"MAGNETAR_RT_GUARD": mode, "MAGNETAR_SPREAD": "always"})
    client = OscClient(server.port)
    errors: list = []
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        load_defs(client, sine_def(), reply_def())
        # A parallel group (node 2) holding steady voices; the clients' synths join it.
        client.send(("/p_new", 2, 0, 0))
        for v in range(4):
            client.send(("/s_new", "rt_sine", 3000 + v, 1, 2, "freq", 500.0 + 100 * v, "amp", 0.01))
        client.send(("/s_new", "rt_replies", 2900, 0, 0))
        client.sync()
        before = rt_stats(server.port)
        stop = threading.Event()
        clients = [threading.Thread(target=hammer, args=(server.port, k, str(wav), stop, errors)) for k in range(CLIENTS)]
        for t in clients:
            t.start()
        time.sleep(LOAD_SECONDS)
        stop.set()
        for t in clients:
            t.join(10)
        after = rt_stats(server.port)
        trs = len(client.messages("/tr"))
        replies = len(client.messages("/rt_reply"))
    finally:
        client.close()
        quit_server(server)
    report = guard_report(server.output)
    caught = after.field(GUARD) - before.field(GUARD)
    groups = after.field(PARALLEL_GROUPS) - before.field(PARALLEL_GROUPS)
    print(f"mode {mode}, -T {threads}: {caught} calls caught under load; {groups} parallel-group runs, "
          f"{trs} /tr and {replies} SendReply messages received")
    print(report)
    assert not errors, errors
    assert "could not be installed" not in report, report
    assert trs > 100 and replies > 100, f"{trs} /tr, {replies} /rt_reply"
    return caught, groups, report


def test_guard_under_load_catches_nothing(driver, magnetar, tmp_path):
    mode = os.environ.get("MAGNETAR_TEST_RT_GUARD", "1")
    caught, groups, report = run_load(driver, magnetar, tmp_path, mode, threads=2)
    assert groups > 0, "the parallel group did not run on two threads"
    assert caught == 0, f"the audio threads made {caught} system calls outside the allow-list: {report}"


def test_without_helpers_the_audio_thread_sends_everything_without_a_system_call(driver, magnetar, tmp_path):
    # Counting mode lists the allow-listed calls too: with no helper to wake, the audio thread
    # hands replies, notifications, /tr, SendReply and garbage to the control thread without
    # even a futex wake (the control thread polls its ring).
    caught, _, report = run_load(driver, magnetar, tmp_path, "count", threads=1)
    audio = re.search(r"audio thread:([^;]*)", report)
    calls = audio.group(1) if audio else ""
    assert caught == 0, report
    assert "futex" not in calls, f"the audio thread made futex calls: {report}"


def test_a_failing_command_prints_its_error_without_the_audio_thread_writing(driver, magnetar):
    # /s_new of an unknown def prints a line as scsynth does; the text goes to the control
    # thread to be printed, so the guard catches no write and the line is not lost.
    server = magnetar(period=PERIOD, env={"MAGNETAR_RT_GUARD": "1"})
    client = OscClient(server.port)
    try:
        before = rt_stats(server.port)
        client.send(("/s_new", "rt_no_such_def", 1000, 0, 0))
        assert client.wait_for("/fail").contents[:2] == ("/s_new", "SynthDef not found")
        client.sync()
        after = rt_stats(server.port)
    finally:
        client.close()
        quit_server(server)
    lines = server.output.splitlines()
    assert after.field(GUARD) - before.field(GUARD) == 0, guard_report(server.output)
    error = lines.index("*** ERROR: SynthDef rt_no_such_def not found")
    assert lines[error + 1].startswith("FAILURE IN SERVER /s_new SynthDef not found"), lines[error:]
