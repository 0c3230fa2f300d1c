"""The scheduling of magnetar's real-time threads, read from /proc: the DSP helpers of ``-T 2``
run under SCHED_FIFO at the audio thread's own priority, never above it (a JACK client's audio
thread gets jackd's priority less some, far below the clock driver's), and the periodic task
threads run below it, shorter periods at higher priorities (rate-monotonic), and the control
thread (the main thread: network packets, asynchronous stages) below them all, at SCHED_FIFO 1.
A disk thread runs at normal priority until a stream is about to run dry, and then under
SCHED_FIFO as a task whose period is that deadline (the critical watermark, 100 ms): below every
task class of a shorter period, and from the first raise on."""

from __future__ import annotations

import os
import time

import collections

from rtcheck import load_defs, quit_server, rt_stats
from rtserver import OscClient

SCHED_FIFO = 1
# The task threads' names, "magnetar-task<period in blocks>", as the kernel keeps them (15 bytes).
TASK_PERIODS = {f"magnetar-task{2 << c}"[:15]: 2 << c for c in range(10)}


def threads(pid: int) -> dict[int, tuple[str, int, int]]:
    """tid → (name, policy, real-time priority) of every thread of ``pid``."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except FileNotFoundError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        # Fields after the name start at field 3; rt_priority is field 40, policy field 41.
        rest = stat[stat.rindex(")") + 2 :].split()
        out[int(tid)] = (name, int(rest[41 - 3]), int(rest[40 - 3]))
    return out


def test_helpers_at_and_task_threads_below_the_audio_thread_in_rate_monotonic_order(driver, magnetar):
    server = magnetar(extra=("-T", "2"))
    pid = server.proc.pid
    audio_tid = 0
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        audio_tid = rt_stats(server.port).audio_tid
        seen = threads(pid)
        if audio_tid in seen:
            audio = seen[audio_tid]
            helpers = [t for t in seen.values() if t[0].startswith("mg-dsp-")]
            control_moved = seen.get(pid, ("", 0, 0))[1] == SCHED_FIFO or audio[2] <= 2
            if helpers and all(h[2] == audio[2] for h in helpers) and control_moved:
                break
        time.sleep(0.05)
    seen = threads(pid)
    quit_server(server)
    assert audio_tid in seen, f"the audio thread {audio_tid} is not among {seen}"
    name, policy, priority = seen[audio_tid]
    assert policy == SCHED_FIFO and priority > 0, f"audio thread {name}: policy {policy}, priority {priority}"
    helpers = [t for t in seen.values() if t[0].startswith("mg-dsp-")]
    assert len(helpers) == 1, f"-T 2 should start one DSP helper: {sorted(seen.values())}"
    for h in helpers:
        assert h[1] == SCHED_FIFO and h[2] == priority, f"helper {h} beside the audio thread at FIFO {priority}"
    tasks = sorted((TASK_PERIODS[t[0]], t[1], t[2]) for t in seen.values() if t[0] in TASK_PERIODS)
    assert [t[0] for t in tasks] == sorted(TASK_PERIODS.values()), f"task threads: {tasks}"
    for period, policy, p in tasks:
        assert policy == SCHED_FIFO and 1 <= p < priority, (
            f"task thread of period {period}: FIFO {p} (policy {policy}), audio thread at {priority}"
        )
    prios = [t[2] for t in tasks]
    # The classes crowd at 2 when the audio thread runs low (JACK's clients), leaving 1 to the control thread.
    floor = max(1, min(2, priority - 1))
    for shorter, longer in zip(prios, prios[1:]):
        # Rate-monotonic: a longer period never above a shorter one, strictly below while room is left.
        assert longer <= shorter and (longer < shorter or shorter == floor), f"task priorities by period: {tasks}"
    control = seen[pid]
    if priority > 2:
        assert control[1] == SCHED_FIFO and control[2] == 1 < min(prios), (
            f"control thread {control}: expected SCHED_FIFO 1 below the task threads {tasks}"
        )


# The critical watermark (100 ms) in blocks of 64 at 48 kHz: the disk thread's deadline.
CRITICAL_BLOCKS = 0.1 * 48000 / 64


def test_disk_threads_raise_themselves_below_the_task_classes_of_shorter_periods(driver, magnetar, tmp_path):
    from test_disk_streams_rt import cue, disk_in_def, write_source

    write_source(tmp_path / "src.wav", 5.0)
    # Slow storage and halves of 1024 frames (21 ms): jobs are critical most of the time.
    server = magnetar(period=256, env={"MAGNETAR_DISK_DELAY_MS": "3"})
    pid = server.proc.pid
    client = OscClient(server.port)
    idle = {}
    raised = collections.Counter()
    try:
        load_defs(client, disk_in_def())
        idle = {t[0]: t[1:] for t in threads(pid).values() if t[0].startswith("magnetar-disk")}
        for b in range(4):
            cue(client, b, tmp_path / "src.wav", 2048)
            client.send(("/s_new", "rt_disk_in", 1000 + b, 0, 0, "buf", b))
        client.sync()
        for _ in range(300):
            seen = threads(pid)
            for name, policy, p in seen.values():
                # The kernel sets a thread's policy before its priority, and /proc reads both
                # without a lock: a raise caught in between shows SCHED_FIFO at 0, a priority
                # no SCHED_FIFO thread runs at.
                if name.startswith("magnetar-disk") and policy == SCHED_FIFO and p > 0:
                    raised[p] += 1
            time.sleep(0.005)
        audio = seen[rt_stats(server.port).audio_tid]
    finally:
        client.close()
        quit_server(server)
    assert idle and all(v == (0, 0) for v in idle.values()), f"idle disk threads: {idle}"
    assert raised, "no disk thread was ever seen under SCHED_FIFO with streams about to run dry"
    tasks = {TASK_PERIODS[t[0]]: t[2] for t in seen.values() if t[0] in TASK_PERIODS}
    shorter = [p for period, p in tasks.items() if period < CRITICAL_BLOCKS]
    longer = [p for period, p in tasks.items() if period >= CRITICAL_BLOCKS]
    # One priority from the first raise on: the one it was meant to take, not a default.
    assert len(raised) == 1, f"disk thread priorities seen: {dict(raised)}"
    (p,) = raised
    assert 1 <= p < audio[2], f"disk thread at FIFO {p}, the audio thread at {audio[2]}"
    assert all(p <= q for q in shorter), f"disk thread at {p} above a task class of a shorter period: {tasks}"
    # Strictly below, unless the classes crowd at their floor (a JACK client's audio thread runs low).
    floor = min(tasks.values())
    assert all(p < q for q in shorter if q > floor), f"disk thread at {p} not below the shorter task classes: {tasks}"
    assert p == max(longer), f"disk thread at {p}, the first longer task class at {max(longer)}: {tasks}"
