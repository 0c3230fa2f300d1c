"""The server's limits are kept at the edge, with `/fail`, and frees make
room again: `-m` (real-time memory: what units take comes from the pool,
never from the system heap), `-d` (SynthDefs), `-n` (nodes, see
test_deep_trees.py for server-assigned ids), `-P` (a dangling symlink does
not lead out)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nrt import compile_synthdefs  # noqa: E402
from rtserver import SCSYNTH, OscClient, ServerProcess, bundle  # noqa: E402
from rtcheck import PrivateJack, rt_stats, server_env  # noqa: E402


@contextlib.contextmanager
def scsynth_beside(driver, *extra: str):
    """scsynth with `extra` options on the test's JACK server (or a private one for the
    clock driver), and a client for it; both stopped afterwards."""
    jack = driver if driver is not None else PrivateJack(period=256)
    if driver is None:
        jack.start()
    try:
        sc = ServerProcess(SCSYNTH, extra=list(extra), env=server_env(jack))
        sc.start()
        client = OscClient(sc.port)
        try:
            yield sc, client
        finally:
            client.close()
            # Also removes the shared memory segment that scsynth leaves when stopped by a signal.
            sc.stop()
    finally:
        if driver is None:
            jack.stop()


POOL_MISSES = 2  # position of poolMisses after xruns in /magnetar_rtStats.reply


def dc_def(name: str, value: float):
    with SynthDefBuilder() as b:
        U.Out.kr(bus=0, source=U.DC.kr(source=value))
    return b.build(name=name)


def test_defs_past_d_are_left_out_with_fail(magnetar):
    server = magnetar(extra=("-d", "2"))
    client = OscClient(server.port)
    try:
        client.send(M("/d_recv", compile_synthdefs(dc_def("one", 1.0), dc_def("two", 2.0))))
        client.wait_for("/done")
        assert client.messages("/fail") == []
        client.send(M("/d_recv", compile_synthdefs(dc_def("three", 3.0))))
        fail = client.wait_for("/fail", timeout=3)
        assert fail.contents[0] == "/d_recv" and "three" in fail.contents[1] and "-d" in fail.contents[1], fail
        client.send(M("/s_new", "three", 1000, 0, 0))
        assert client.wait_for("/fail").contents == ("/s_new", "SynthDef not found")
        # A def of a name already loaded replaces it, and a freed def makes room.
        client.send(M("/d_recv", compile_synthdefs(dc_def("two", 4.0))))
        client.request(M("/sync", 1), "/synced")
        client.clear()
        client.send(M("/d_free", "one"))
        client.send(M("/d_recv", compile_synthdefs(dc_def("three", 3.0))))
        client.request(M("/sync", 2), "/synced")
        assert client.messages("/fail") == []
        client.send(M("/s_new", "three", 1001, 0, 0))
        client.request(M("/sync", 3), "/synced")
        assert client.request(M("/c_get", 0), "/c_set").contents == (0, 3.0)
    finally:
        client.close()


def d_limit_outcomes(client: OscClient) -> list[tuple[str, float]]:
    """Loads defs into a server started with `-d 2` (past the limit, replacing a loaded
    name, after a /d_free) and plays one after each step: what each synth wrote to
    control bus 0 (-1: no synth was made)."""
    seen = []

    def play(name: str, node: int) -> None:
        client.send(M("/c_set", 0, -1.0))
        client.send(M("/s_new", name, node, 0, 0))
        client.request(M("/sync", node), "/synced", lambda m: m.contents[0] == node, timeout=3)
        time.sleep(0.1)
        seen.append((name, client.request(M("/c_get", 0), "/c_set").contents[1]))
        client.send(M("/n_free", node))

    def load(*defs) -> None:
        client.send(M("/d_recv", compile_synthdefs(*defs)))
        client.wait_for("/done", timeout=3)

    load(dc_def("one", 1.0), dc_def("two", 2.0))
    play("one", 1000)
    load(dc_def("three", 3.0))
    play("three", 1001)
    load(dc_def("two", 4.0))
    play("two", 1002)
    client.send(M("/d_free", "one"))
    load(dc_def("three", 3.0))
    play("three", 1003)
    play("one", 1004)
    return seen


def test_d_leaves_out_the_same_defs_as_scsynth(driver, magnetar):
    """scsynth, started with the same `-d 2` in this run, is the reference for which
    defs get in: none past the limit, a replacement of a loaded name, and a new one
    after a /d_free."""
    with scsynth_beside(driver, "-d", "2") as (_, client):
        expected = d_limit_outcomes(client)
    assert expected == [("one", 1.0), ("three", -1.0), ("two", 4.0), ("three", 3.0), ("one", -1.0)], expected
    client = OscClient(magnetar(extra=("-d", "2")).port)
    try:
        assert d_limit_outcomes(client) == expected
    finally:
        client.close()


def test_a_dangling_symlink_does_not_lead_out_of_p(magnetar, tmp_path):
    inside = tmp_path / "inside"
    inside.mkdir()
    outside = tmp_path / "outside.wav"
    os.symlink(outside, inside / "link.wav")
    server = magnetar(extra=("-P", str(inside)))
    client = OscClient(server.port)
    try:
        client.send(M("/b_alloc", 0, 16, 1))
        client.wait_for("/done")
        client.send(M("/b_write", 0, "link.wav", "wav", "float"))
        fail = client.wait_for("/fail", timeout=3)
        assert fail.contents[0] == "/b_write" and "outside the restricted path" in fail.contents[1], fail
        assert not outside.exists()
        client.send(M("/b_write", 0, "fine.wav", "wav", "float"))
        client.wait_for("/done")
        assert (inside / "fine.wav").exists()
    finally:
        client.close()


def comb_def():
    """A one-second CombN: 48000 samples of delay line (256 KB at 48 kHz)."""
    with SynthDefBuilder() as b:
        U.Out.ar(bus=0, source=U.CombN.ar(source=U.Impulse.ar(frequency=1.0), maximum_delay_time=1.0, delay_time=0.5) * 0.01)
    return b.build(name="comb")


def running_sum_def(window):
    with SynthDefBuilder(window=window) as b:
        U.Out.ar(bus=0, source=U.RunningSum.ar(source=U.DC.ar(source=0.0), sample_count=b["window"]))
    return b.build(name="rsum")


def test_units_take_memory_from_the_pool_only_and_fail_cleanly_when_it_is_full(magnetar):
    server = magnetar(extra=("-m", "4096"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(comb_def())))
        client.wait_for("/done")
        # 200 synths in one bundle, before any synth of the def was built: those
        # the pool cannot hold end as they are built (or are refused at /s_new).
        client.send(bundle(None, *[("/s_new", "comb", 1000 + k, 0, 0) for k in range(200)]))
        client.request(M("/sync", 1), "/synced", timeout=5)
        fails = client.messages("/fail")
        made = client.request(M("/status"), "/status.reply").contents[2]
        assert 4 <= made < 16, made
        assert len(fails) == 200 - made
        assert all(f.contents == ("/s_new", "out of real time memory") for f in fails)
        assert rt_stats(server.port).field(POOL_MISSES) == 0, "a unit's memory came from the system heap"
        # Frees give the memory back.
        client.clear()
        client.send(M("/g_freeAll", 0))
        client.send(bundle(None, *[("/s_new", "comb", 2000 + k, 0, 0) for k in range(made)]))
        client.request(M("/sync", 2), "/synced", timeout=5)
        assert client.messages("/fail") == []
        assert client.request(M("/status"), "/status.reply").contents[2] == made
        assert rt_stats(server.port).field(POOL_MISSES) == 0
    finally:
        client.close()


def test_a_window_larger_than_the_pool_fails_and_the_server_goes_on(magnetar):
    server = magnetar(extra=("-m", "4096"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        # A default window larger than the pool: the synth ends as it is built.
        client.send(M("/d_recv", compile_synthdefs(running_sum_def(1e8))))
        client.wait_for("/done")
        client.send(M("/s_new", "rsum", 1000, 0, 0))
        assert client.wait_for("/fail", timeout=5).contents == ("/s_new", "out of real time memory")
        client.wait_for("/n_end", lambda m: m.contents[0] == 1000, timeout=3)
        # A window /s_new sets: the same.
        client.send(M("/d_recv", compile_synthdefs(running_sum_def(40))))
        client.wait_for("/done")
        client.send(M("/s_new", "rsum", 1001, 0, 0, "window", 1e8))
        assert client.wait_for("/fail", timeout=5).contents == ("/s_new", "out of real time memory")
        client.wait_for("/n_end", lambda m: m.contents[0] == 1001, timeout=3)
        client.send(M("/s_new", "rsum", 1002, 0, 0, "window", 400))
        client.request(M("/sync", 1), "/synced", timeout=5)
        assert client.request(M("/status"), "/status.reply").contents[2] == 1
        assert server.alive()
    finally:
        client.close()


ALL_HEAP_OPS = 4  # allHeapOps: system-heap operations of the audio thread over all periods


def sized_by_control_defs():
    """Defs whose unit memory a control sets; each default is small."""
    defs = {}
    with SynthDefBuilder(size=40) as b:
        U.Out.ar(bus=0, source=U.RunningSum.ar(source=U.DC.ar(source=0.0), sample_count=b["size"]))
    defs["rsum"] = (b.build(name="rsum"), 1e8)
    with SynthDefBuilder(size=0.1) as b:
        U.Out.ar(bus=0, source=U.CombN.ar(source=U.DC.ar(source=0.0), maximum_delay_time=b["size"], delay_time=0.01))
    defs["combn"] = (b.build(name="combn"), 1000.0)
    with SynthDefBuilder(size=0.1) as b:
        U.Out.ar(bus=0, source=U.Pluck.ar(source=U.DC.ar(source=0.0), trigger=1.0, maximum_delay_time=b["size"], delay_time=0.01))
    defs["pluck"] = (b.build(name="pluck"), 1000.0)
    with SynthDefBuilder(size=0.2) as b:
        U.Out.ar(bus=0, source=U.PitchShift.ar(source=U.DC.ar(source=0.0), window_size=b["size"]))
    defs["pitchshift"] = (b.build(name="pitchshift"), 10.0)
    with SynthDefBuilder(size=64) as b:
        buf = U.LocalBuf.ir(channel_count=1, frame_count=b["size"])
        U.Out.kr(bus=2, source=U.BufFrames.kr(buffer_id=buf))
    defs["localbuf"] = (b.build(name="localbuf"), 1e8)
    return defs


def counter_def():
    with SynthDefBuilder() as b:
        U.Out.kr(bus=0, source=U.Sweep.kr(trigger=0.0, rate=1.0))
    return b.build(name="counter")


def test_sizes_set_by_controls_never_take_the_system_heap(magnetar):
    """A delay line, window, grain buffer or local buffer larger than the pool, chosen by a
    control at /s_new: the synth ends with /fail "out of real time memory" and /n_end, the
    audio thread never touches the system heap, a synth started before plays on, and a
    smaller size of the same def is built afterwards. With the syscall guard on: the
    refusal and the unwinding after it make no system call either."""
    defs = sized_by_control_defs()
    server = magnetar(extra=("-m", "4096"), env={"MAGNETAR_RT_GUARD": "1"})
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(counter_def(), *[d for d, _ in defs.values()])))
        client.wait_for("/done")
        client.send(M("/s_new", "counter", 1, 0, 0))
        client.request(M("/sync", 1), "/synced")
        for k, (name, (_, huge)) in enumerate(defs.items()):
            node = 1000 + k
            client.clear()
            client.send(M("/s_new", name, node, 0, 0, "size", huge))
            fail = client.wait_for("/fail", timeout=5)
            assert fail.contents == ("/s_new", "out of real time memory"), (name, fail)
            client.wait_for("/n_end", lambda m: m.contents[0] == node, timeout=3)
            # The default size fits, on a pool the failure gave back.
            client.send(M("/s_new", name, node + 100, 0, 0))
            client.request(M("/sync", 2 + k), "/synced", timeout=5)
            assert client.messages("/fail") == [], name
        assert client.request(M("/status"), "/status.reply").contents[2] == 1 + len(defs)
        before = client.request(M("/c_get", 0), "/c_set").contents[1]
        time.sleep(0.2)
        assert client.request(M("/c_get", 0), "/c_set").contents[1] > before, "the first synth stopped"
        assert client.request(M("/c_get", 2), "/c_set").contents[1] == 64.0, "the local buffer's size"
        stats = rt_stats(server.port)
        assert stats.field(POOL_MISSES) == 0, "an allocation missed the pool"
        assert stats.field(ALL_HEAP_OPS) == 0, "the audio thread used the system heap"
        assert stats.more[-1] == 0, "system calls caught on the audio thread (guardedSyscalls)"
        assert server.alive()
    finally:
        client.close()


def test_scsynth_survives_the_same_requests_without_a_fail(driver, tmp_path):
    """The same oversized window sent to scsynth in this run: it prints that the unit's
    allocation failed and leaves a silent synth (no /fail); magnetar ends the synth and
    answers /fail instead (docs/compatibility.md). Both keep answering afterwards."""
    with scsynth_beside(driver, "-m", "4096") as (sc, client):
        rsum, huge = sized_by_control_defs()["rsum"]
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(rsum)))
        client.wait_for("/done")
        client.send(M("/s_new", "rsum", 1000, 0, 0, "size", huge))
        client.request(M("/sync", 1), "/synced", timeout=5)
        assert client.messages("/fail") == []
        assert client.request(M("/status"), "/status.reply").contents[2] == 1
        deadline = time.monotonic() + 3
        while "alloc failed" not in sc.output and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "alloc failed" in sc.output, sc.output


def buffer_commands(b: int, path: str, out: str) -> list[tuple]:
    """Every command that names a buffer, with buffer number `b`."""
    return [
        ("/b_alloc", b, 16, 1), ("/b_allocRead", b, path), ("/b_allocReadChannel", b, path, 0, -1, 0),
        ("/b_read", b, path), ("/b_readChannel", b, path, 0, -1, 0, 0, 0), ("/b_write", b, out, "wav", "float"),
        ("/b_free", b), ("/b_zero", b), ("/b_set", b, 0, 1.0), ("/b_setn", b, 0, 1, 1.0), ("/b_fill", b, 0, 1, 1.0),
        ("/b_gen", b, "sine1", 7, 1.0), ("/b_close", b), ("/b_query", b), ("/b_get", b, 0), ("/b_getn", b, 0, 1),
        ("/b_setSampleRate", b, 44100.0),
    ]


def test_buffer_numbers_past_b_fail_for_every_buffer_command(magnetar, tmp_path):
    """-b 4: each buffer command with buffer 4, -1 or 2^30 answers /fail naming the command
    (scsynth crashes on /b_alloc of such a number, docs/compatibility.md); the last buffer
    and a freed one are used again afterwards."""
    import numpy as np
    import soundfile as sf

    path = tmp_path / "in.wav"
    sf.write(str(path), np.zeros(64, dtype=np.float32), 48000, subtype="FLOAT")
    server = magnetar(extra=("-b", "4"))
    client = OscClient(server.port)
    try:
        for b in (4, -1, 1 << 30):
            for cmd in buffer_commands(b, str(path), str(tmp_path / "out.wav")):
                client.clear()
                client.send(M(*cmd))
                fail = client.wait_for("/fail", timeout=3)
                assert fail.contents[0] == cmd[0] and "out of range" in fail.contents[1], (cmd, fail)
        client.request(M("/sync", 1), "/synced")
        client.clear()
        client.send(M("/b_alloc", 3, 16, 1))
        client.wait_for("/done")
        client.send(M("/b_free", 3))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_free")
        client.send(M("/b_allocRead", 3, str(path)))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_allocRead")
        assert client.request(M("/b_query", 3), "/b_info").contents == (3, 64, 1, 48000.0)
        assert client.messages("/fail") == []
        assert server.alive()
    finally:
        client.close()


def test_buffer_memory_past_its_cap_fails_and_loses_nothing(magnetar, tmp_path):
    """--buffer-memory 64: an allocation that would take all buffers past 64 MB answers /fail
    "out of buffer memory" and leaves the buffer it named as it was (contents included); a free
    makes room. Without the option there is no cap, as with scsynth."""
    server = magnetar(extra=("--buffer-memory", "64"))
    client = OscClient(server.port)
    frames_32mb = 8 * 1024 * 1024
    try:
        client.send(M("/b_alloc", 0, frames_32mb, 1))
        client.wait_for("/done", timeout=10)
        client.send(M("/b_set", 0, 7, 0.25))
        client.request(M("/sync", 1), "/synced")
        for cmd in (M("/b_alloc", 1, frames_32mb + 4096, 1), M("/b_alloc", 0, frames_32mb, 3)):
            client.clear()
            client.send(cmd)
            fail = client.wait_for("/fail", timeout=10)
            assert fail.contents[0] == "/b_alloc" and "out of buffer memory" in fail.contents[1], fail
            assert client.messages("/done") == []
        # Nothing lost: buffer 0 keeps its shape and its contents, buffer 1 stays empty.
        assert client.request(M("/b_query", 0), "/b_info").contents[:3] == (0, frames_32mb, 1)
        assert client.request(M("/b_get", 0, 7), "/b_set").contents == (0, 7, 0.25)
        assert client.request(M("/b_query", 1), "/b_info").contents[:3] == (1, 0, 0)
        # A read of a file into a buffer is held to the same cap.
        wav = tmp_path / "big.wav"
        import numpy as np
        import soundfile
        soundfile.write(wav, np.zeros((frames_32mb + 4096, 1), dtype=np.float32), 48000, subtype="FLOAT")
        client.clear()
        client.send(M("/b_allocRead", 1, str(wav)))
        fail = client.wait_for("/fail", timeout=20)
        assert fail.contents[0] == "/b_allocRead" and "out of buffer memory" in fail.contents[1], fail
        # Room again after a free.
        client.send(M("/b_free", 0))
        client.wait_for("/done", timeout=10)
        client.clear()
        client.send(M("/b_allocRead", 1, str(wav)))
        client.wait_for("/done", timeout=20)
        assert client.messages("/fail") == []
        assert client.request(M("/b_query", 1), "/b_info").contents[:3] == (1, frames_32mb + 4096, 1)
    finally:
        client.close()
    # No option: 96 MB in one buffer is granted, as scsynth grants it.
    server = magnetar()
    client = OscClient(server.port)
    try:
        client.send(M("/b_alloc", 0, 3 * frames_32mb, 1))
        client.wait_for("/done", timeout=10)
        assert client.messages("/fail") == []
    finally:
        client.close()
