"""Once synths are running and no commands arrive, the audio thread neither touches the
system heap nor makes I/O system calls, and sleeps once per period (design, real-time rules
1 and 2)."""

from __future__ import annotations

import time

import sys
from pathlib import Path

from rtcheck import SAMPLE_RATE, busy_voice_def, load_defs, rt_stats, thread_counters
from rtserver import OscClient

# The UGen classes supriya lacks, shared with the compatibility tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compat"))

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


def many_families_def():
    """One voice that uses a unit of each family added beside the classic ones: demand-rate
    patterns, a local buffer through FFT, a PV unit and IFFT, grains, a pitch shifter, a chaotic
    map, Gendy, an ambisonic panner, GVerb and Poll."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from extra_ugens import GrainSin, GVerb

    with SynthDefBuilder(amp=0.01, out=0.0) as b:
        notes = U.Dseq.dr(sequence=[220.0, 330.0, U.Dwhite.dr(minimum=200.0, maximum=400.0, length=2)], repeats=float("inf"))
        freq = U.Duty.kr(duration=0.05, level=notes)
        tone = U.SinOsc.ar(frequency=freq) + U.LorenzL.ar(frequency=2000.0) * 0.01 + U.Gendy1.ar() * 0.01
        chain = U.FFT.kr(buffer_id=U.LocalBuf.ir(frame_count=1024), source=tone)
        spectral = U.IFFT.ar(pv_chain=U.PV_MagAbove.kr(pv_chain=chain, threshold=0.1))
        grains = GrainSin.ar(channel_count=1, trigger=U.Impulse.kr(frequency=20.0), duration=0.05, frequency=freq)
        shifted = U.PitchShift.ar(source=spectral + grains, pitch_ratio=1.5)
        U.Poll.kr(trigger=U.Impulse.kr(frequency=2.0), source=freq)
        w, x, y = U.PanB2.ar(source=shifted, azimuth=0.3)
        left, right = GVerb.ar(source=w + x + y, room_size=5.0, rev_time=1.0, max_room_size=10.0)
        U.Out.ar(bus=b["out"], source=[left * b["amp"], right * b["amp"]])
    return b.build(name="rt_many_families")


def test_audio_thread_makes_no_heap_calls_with_the_newer_unit_families(driver, magnetar):
    server = magnetar(period=PERIOD)
    client = OscClient(server.port)
    try:
        load_defs(client, many_families_def())
        for i in range(8):
            client.send(("/s_new", "rt_many_families", 1000 + i, 1, 0))
        client.sync()
        assert client.status().contents[2] == 8
        time.sleep(0.3)
        before = rt_stats(server.port)
        counters_before = thread_counters(server.pid, before.audio_tid)
        t0 = time.monotonic()
        time.sleep(STEADY_SECONDS)
        counters_after = thread_counters(server.pid, before.audio_tid)
        elapsed = time.monotonic() - t0
        after = rt_stats(server.port)
    finally:
        client.close()
    steady = after.steady_periods - before.steady_periods
    heap_ops = after.steady_heap_ops - before.steady_heap_ops
    syscalls = (counters_after.syscr - counters_before.syscr) + (counters_after.syscw - counters_before.syscw)
    summary = f"{steady} steady periods in {elapsed:.2f} s, {heap_ops} heap operations, {syscalls} read/write calls"
    print(summary)
    assert steady >= 0.8 * elapsed * SAMPLE_RATE / PERIOD, f"too few periods ran undisturbed: {summary}"
    assert heap_ops == 0, f"the audio thread used the system heap in steady state: {summary}"
    assert syscalls == 0, f"the audio thread made read/write system calls: {summary}"
