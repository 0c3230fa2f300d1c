"""Once synths are running and no commands arrive, the audio thread neither touches the
system heap nor makes I/O system calls, and sleeps once per period (design, real-time rules
1 and 2)."""

from __future__ import annotations

import time

from rtcheck import SAMPLE_RATE, busy_voice_def, load_defs, rt_stats, thread_counters
from rtserver import OscClient

PERIOD = 256
VOICES = 20
STEADY_SECONDS = 3.0


def test_audio_thread_makes_no_heap_calls_or_io_with_20_voices_playing(driver, magnetar):
    server = magnetar(period=PERIOD)
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        load_defs(client, busy_voice_def())
        for i in range(VOICES):
            client.send(("/s_new", "rt_busy_voice", 1000 + i, 1, 0, "freq", 110.0 * (1 + i % 7), "amp", 0.01))
        client.sync()
        synths = client.status().contents[2]
        assert synths == VOICES, f"{synths} synths running, expected {VOICES}"
        # Let the voices reach their sustain and the stage-4 replies drain.
        time.sleep(0.3)

        before = rt_stats(server.port)
        tid = before.audio_tid
        assert tid > 0, "the audio thread did not report its thread id"
        counters_before = thread_counters(server.pid, tid)
        t0 = time.monotonic()
        time.sleep(STEADY_SECONDS)
        counters_after = thread_counters(server.pid, tid)
        t1 = time.monotonic()
        after = rt_stats(server.port)
    finally:
        client.close()

    elapsed = t1 - t0
    expected_periods = elapsed * SAMPLE_RATE / PERIOD
    steady = after.steady_periods - before.steady_periods
    heap_ops = after.steady_heap_ops - before.steady_heap_ops
    syscr = counters_after.syscr - counters_before.syscr
    syscw = counters_after.syscw - counters_before.syscw
    voluntary = counters_after.voluntary - counters_before.voluntary
    summary = (
        f"{steady} steady periods of {expected_periods:.0f} expected in {elapsed:.2f} s, "
        f"{heap_ops} heap operations, syscr +{syscr}, syscw +{syscw}, "
        f"voluntary switches +{voluntary}, involuntary +{counters_after.involuntary - counters_before.involuntary}"
    )
    print(summary)
    assert after.audio_tid == tid, "the audio thread changed"
    assert steady >= 0.8 * expected_periods, f"too few periods ran undisturbed: {summary}"
    assert heap_ops == 0, f"the audio thread used the system heap in steady state: {summary}"
    assert syscr == 0 and syscw == 0, f"the audio thread made read/write system calls: {summary}"
    # The clock driver sleeps once per period (clock_nanosleep); JACK's client thread waits once
    # per cycle for its activation.  Anything more is the audio thread blocking.
    assert voluntary <= expected_periods * 1.1 + 10, f"the audio thread blocked more than once per period: {summary}"
