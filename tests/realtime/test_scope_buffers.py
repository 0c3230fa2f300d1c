"""Scope writers take, fill and give back the shared memory scope buffers on the audio thread:
synths with ScopeOut2 started and freed in a stream, and playing in steady state, make no
system-heap operation and no read/write system call there (design, real-time rules 1 and 2)."""

from __future__ import annotations

import time

from rtcheck import SAMPLE_RATE, load_defs, rt_stats, thread_counters
from rtserver import OscClient

ALL_PERIODS, ALL_HEAP_OPS = 3, 4
PERIOD = 256


def scope_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder(index=0.0, period=1024.0) as b:
        tone = U.SinOsc.ar(frequency=330.0) * 0.1
        U.ScopeOut2.ar(scope_id=b["index"], max_frames=4096, scope_frames=b["period"], source=[tone, tone * 0.5])
    return b.build(name="rt_scope")


def test_scope_synths_use_no_system_heap_or_io_on_the_audio_thread(driver, magnetar):
    server = magnetar(period=PERIOD)
    client = OscClient(server.port)
    try:
        load_defs(client, scope_def())
        client.sync()
        before = rt_stats(server.port)
        # Started and freed in a stream: each takes a scope buffer when built, gives it back when freed.
        for i in range(200):
            client.send(("/s_new", "rt_scope", 1000 + i, 0, 0, "index", i % 16, "period", 256 + 64 * (i % 5)))
            if i >= 8:
                client.send(("/n_free", 1000 + i - 8))
            if i % 40 == 0:
                client.sync()
        client.sync()
        after = rt_stats(server.port)
        assert after.field(ALL_PERIODS) > before.field(ALL_PERIODS), "the audio thread ran"
        heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
        assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations"
        assert client.status().contents[2] == 8

        time.sleep(0.3)
        before = rt_stats(server.port)
        counters_before = thread_counters(server.pid, before.audio_tid)
        t0 = time.monotonic()
        time.sleep(2.0)
        counters_after = thread_counters(server.pid, before.audio_tid)
        elapsed = time.monotonic() - t0
        after = rt_stats(server.port)
    finally:
        client.close()
    steady = after.steady_periods - before.steady_periods
    heap_ops = after.steady_heap_ops - before.steady_heap_ops
    syscalls = (counters_after.syscr - counters_before.syscr) + (counters_after.syscw - counters_before.syscw)
    summary = f"{steady} steady periods in {elapsed:.2f} s, {heap_ops} heap operations, {syscalls} read/write calls"
    assert steady >= 0.8 * elapsed * SAMPLE_RATE / PERIOD, f"too few periods ran undisturbed: {summary}"
    assert heap_ops == 0, f"the audio thread used the system heap in steady state: {summary}"
    assert syscalls == 0, f"the audio thread made read/write system calls: {summary}"
