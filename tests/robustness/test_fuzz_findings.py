"""What the fuzzers found, pinned down against the running server (the
inputs themselves are replayed from fuzz/regressions by cargo test)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nrt import compile_synthdefs  # noqa: E402
from rtserver import OscClient  # noqa: E402


def local_buf_def(name, frames):
    with SynthDefBuilder() as b:
        buf = U.LocalBuf.ir(frame_count=frames, channel_count=8)
        U.Out.ar(bus=0, source=U.PlayBuf.ar(buffer_id=buf) * 0.0)
    return b.build(name=name)


def test_a_def_asking_for_terabytes_fails_its_synth_and_the_server_goes_on(magnetar):
    """A MaxLocalBufs count or a LocalBuf size of billions used to make the
    server ask the allocator for terabytes when the def was tried, and abort."""
    server = magnetar()
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(local_buf_def("huge_local", 2.0**31))))
        client.wait_for("/done", timeout=10)
        # The def is well formed; its synth cannot be built, and says so.
        client.send(M("/s_new", "huge_local", 999, 0, 0))
        fail = client.wait_for("/fail", timeout=5)
        assert fail.contents[0] == "/s_new" and "memory" in fail.contents[1], fail
        client.wait_for("/n_end", lambda m: m.contents[0] == 999, timeout=5)
        # Known only at /s_new: the synth fails, the server plays on.
        with SynthDefBuilder(frames=64.0) as b:
            buf = U.LocalBuf.ir(frame_count=b["frames"], channel_count=8)
            U.Out.ar(bus=0, source=U.PlayBuf.ar(buffer_id=buf) * 0.0)
        client.send(M("/d_recv", compile_synthdefs(b.build(name="local_ctl"))))
        client.wait_for("/done", timeout=10)
        client.send(M("/s_new", "local_ctl", 1000, 0, 0, "frames", 2.0**31))
        fail = client.wait_for("/fail", timeout=5)
        assert fail.contents[0] == "/s_new", fail
        client.wait_for("/n_end", lambda m: m.contents[0] == 1000, timeout=5)
        client.send(M("/s_new", "local_ctl", 1001, 0, 0))
        client.sync()
        assert client.status().contents[2] == 1
    finally:
        client.close()


def test_a_pitch_tracker_with_a_vanishing_lowest_frequency_fails_its_synth(magnetar):
    """Pitch sizes its window from minFreq: 1e-5 Hz asked for 8 GiB, and
    aborted the server when the def was tried."""
    server = magnetar()
    client = OscClient(server.port)
    try:
        with SynthDefBuilder() as b:
            freq, _ = U.Pitch.kr(source=U.SinOsc.ar(), min_frequency=1e-5)
            U.Out.kr(bus=0, source=freq)
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(b.build(name="deep_pitch"))))
        client.wait_for("/done", timeout=10)
        client.send(M("/s_new", "deep_pitch", 999, 0, 0))
        fail = client.wait_for("/fail", timeout=5)
        assert fail.contents[0] == "/s_new" and "memory" in fail.contents[1], fail
        client.wait_for("/n_end", lambda m: m.contents[0] == 999, timeout=5)
        client.sync()
        status = client.status().contents
        assert status[2] == 0 and status[3] >= 1, status
    finally:
        client.close()


def test_a_pitch_shifter_with_a_nan_window_neither_hangs_nor_stops_the_others(magnetar):
    """A NaN window made PitchShift's frame 0 samples long and its block loop
    endless: loading the def hung the thread that tries defs."""
    server = magnetar()
    client = OscClient(server.port)
    try:
        with SynthDefBuilder(window=float("nan")) as b:
            U.Out.ar(bus=0, source=U.PitchShift.ar(source=U.SinOsc.ar(), window_size=b["window"]) * 0.0)
        client.send(M("/d_recv", compile_synthdefs(b.build(name="nan_shift"))))
        client.wait_for(["/done", "/fail"], timeout=10)
        client.send(M("/s_new", "nan_shift", 1000, 0, 0))
        client.sync()
        assert client.status().contents[2] == 1
    finally:
        client.close()


def test_no_node_can_be_placed_beside_the_root_group(magnetar):
    """`/n_before 1000 0` (found by the server-level fuzzer) put the node
    beside the root group: in no group, counted by /status for ever, never
    run, listed or freed. scsynth crashes there; magnetar answers /fail."""
    server = magnetar()
    client = OscClient(server.port)
    try:
        with SynthDefBuilder() as b:
            U.Out.kr(bus=0, source=U.DC.kr(source=1.0))
        client.send(M("/d_recv", compile_synthdefs(b.build(name="dc"))))
        client.wait_for("/done", timeout=10)
        client.send(M("/s_new", "dc", 1000, 0, 0))
        for command in [M("/n_before", 1000, 0), M("/n_after", 1000, 0), M("/n_order", 3, 0, 1000),
                        M("/s_new", "dc", 1001, 2, 0), M("/g_new", 1002, 3, 0)]:
            client.send(command)
            fail = client.wait_for("/fail", timeout=3)
            assert fail.contents == (command.address, "Can't place a node before or after the root group"), fail
        client.sync()
        tree = client.request(M("/g_queryTree", 0), "/g_queryTree.reply").contents
        assert tree[2] == 1 and tree[3] == 1000, tree
        assert client.status().contents[2:4] == (1, 1)
        client.send(M("/n_free", 1000))
        client.sync()
        assert client.status().contents[2] == 0
    finally:
        client.close()


def test_the_fuzzed_session_that_left_a_node_beside_the_root_replays_cleanly(driver):
    from rtcheck import quit_server
    from server_fuzz import ServerFuzz, boot

    server, tcp, _ = boot(driver)
    try:
        stream = (ROOT / "fuzz" / "server-findings" / "ghost-synth.stream").read_bytes()
        base, after = ServerFuzz(server.port, tcp, seed=1).replay(stream)
    finally:
        quit_server(server)
    assert after == base


# The bundle of time tag 0 after which the server-level fuzzer waited 10 to
# 17 s for /synced (fuzz/server-findings/slow-sync-burst32-client2.stream,
# its 130th packet), without the two /s_new whose defs it does not load and
# with the mutated frame count of buffer 4 (2139095040, 8 GiB) cut to 512 MiB.
SLOW_SYNC_FRAMES = 1 << 27


def slow_sync_bundle() -> bytes:
    from server_fuzz import bundle, message

    return bundle(
        message("/b_alloc", 2, 4800),
        message("/b_alloc", 3, 2000),
        message("/b_fill", 3, 0, 2000, 0.1),
        message("/b_alloc", 4, SLOW_SYNC_FRAMES),
        message("/b_alloc", 5, 100),
        time_tag=0,
    )


def sync_after_the_bundle_while_the_machine_is_busy(port: int) -> float:
    """Seconds from sending the bundle to its /synced while the CPUs are
    shared with three busy processes each (at normal priority, as a build
    beside the server would be)."""
    import subprocess
    import time

    client = OscClient(port)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3 * (os.cpu_count() or 1))]
    try:
        client.sync(timeout=10)
        time.sleep(0.3)
        start = time.monotonic()
        client.send_raw(slow_sync_bundle())
        client.sync(timeout=60)
        took = time.monotonic() - start
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()
    try:
        client.send(M("/b_free", 4))
        client.sync(timeout=30)
        assert not client.messages("/fail"), client.messages("/fail")
    finally:
        client.close()
    return took


def test_a_sync_behind_a_large_b_alloc_takes_no_longer_than_on_scsynth(driver, magnetar):
    """The /sync after a /b_alloc of 8 GiB waited as long as the allocation,
    as on scsynth, but three times as long on a busy machine: scsynth does the
    asynchronous stage of commands under SCHED_FIFO, out of reach of the
    normal-priority processes, and magnetar's control thread ran at normal
    priority. scsynth, started in this run on the same driver's JACK server,
    is the reference.

    The two servers take turns, up to three rounds: whatever else the machine
    runs (the suite's other worker) changes from one second to the next, so
    only a round's two waits are compared with each other. A control thread
    at normal priority is late in every round."""
    from test_limits import scsynth_beside

    rounds = []
    with scsynth_beside(driver) as (sc, _):
        server = magnetar()
        for _ in range(3):
            reference = sync_after_the_bundle_while_the_machine_is_busy(sc.port)
            took = sync_after_the_bundle_while_the_machine_is_busy(server.port)
            rounds.append(f"{took:.3f} s on magnetar, {reference:.3f} s on scsynth")
            if took <= 2 * reference + 0.25:
                return
    raise AssertionError("/synced after " + "; ".join(rounds))
