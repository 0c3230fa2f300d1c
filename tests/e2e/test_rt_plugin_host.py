"""What plugin units ask of the server beyond their own signal, in real time, scsynth and
magnetar loading the same probe plugins (tests/plugin_probes) in the same run:

- an asynchronous command a unit starts itself (no reply address): its stages run, its
  completion message runs, and neither `/done` nor what the completion message answers reaches
  any client;
- messages a unit sends to the non-real-time side (`SendMsgFromRT`) and back
  (`SendMsgToRT`): where each perform and free function runs, in which order, and that the
  free function sees the message its perform function saw;
- a `/b_gen` command a plugin defines (`DefineBufGen`) that gives the buffer a new size with
  `BufAlloc`;
- scsynth's own ScopeOut2 plugin (preferred over magnetar's with `--prefer-plugins`) fills the
  shared memory scope buffer a client reads, without a system-heap operation on the audio
  thread.

Both servers must agree on everything the probes note and on the replies."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_probes"))

import probes  # noqa: E402
from rtserver import BootError, OscClient, ServerProcess, executables  # noqa: E402
from supriya.ugens import compile_synthdefs  # noqa: E402


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    if (why := probes.missing()) is not None:
        pytest.skip(why)
    return probes.build(tmp_path_factory.mktemp("host_probes"), *PROBES)


PROBES = ("UnitAsyncProbe", "FifoProbe", "BufGenProbe")


def unit_async_def() -> bytes:
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from supriya.ugens.core import UGen, param, ugen

    @ugen(kr=True)
    class UnitAsyncProbe(UGen):
        base = param(0.0)
        where = param(0.0)

    with SynthDefBuilder(base=0.0, where=0.0) as b:
        U.Out.kr(bus=1000, source=UnitAsyncProbe.kr(base=b["base"], where=b["where"]))
    return compile_synthdefs(b.build(name="unit_async_probe"))


# `-U` replaces scsynth's own plugin directory: it is named too, for the core units.
CORE_PLUGINS = "/usr/lib/SuperCollider/plugins"


def boot(exe: str, plugin_dir: Path, extra=()) -> ServerProcess:
    server = ServerProcess(exe, extra=["-U", f"{CORE_PLUGINS}:{plugin_dir}", *extra])
    try:
        server.start()
    except BootError as e:
        pytest.fail(f"{exe} did not boot: {e}", pytrace=False)
    return server


def heap_ops(server: ServerProcess) -> tuple:
    """magnetar's counts of system-heap operations on the audio thread (all, and C code's), from
    /magnetar_rtStats."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realtime"))
    from rtcheck import rt_stats

    stats = rt_stats(server.port)
    return stats.field(4), stats.field(8)  # allHeapOps, cHeapOps: positions after xruns (README)


def since(before: tuple, server: ServerProcess) -> tuple:
    return tuple(a - b for a, b in zip(heap_ops(server), before))


# Replies a client hears anyway; the rest would be answers the probes caused.
ROUTINE = {"/synced", "/n_go", "/n_end", "/status.reply", "/c_set", "/c_setn", "/done"}


def unit_async_observe(exe: str, plugin_dir: Path, measure: bool = False) -> tuple:
    """Starts one probe in its constructor (bus base 0) and one in its first calc call (base
    10); returns per probe the completion's bus, the stages' order and the replies heard, and
    (`measure`: magnetar) the audio thread's system-heap operations meanwhile."""
    server = boot(exe, plugin_dir)
    seen = []
    heap = None
    try:
        with OscClient(server.port) as c:
            c.request(("/notify", 1), "/done", timeout=3)
            c.send(("/d_recv", unit_async_def()))
            c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
            before = heap_ops(server) if measure else None
            for node, (base, where) in enumerate([(0, 0), (10, 1)], start=2000):
                c.clear()
                c.send(("/s_new", "unit_async_probe", node, 0, 0, "base", base, "where", where))
                c.sync()
                time.sleep(0.3)
                c.sync()
                heard = sorted({m.address for m in c.messages()} - {"/synced", "/n_go"})
                done = [list(m.contents) for m in c.messages("/done")]
                c_set = [list(m.contents) for m in c.messages("/c_set")]
                notes = list(c.request(("/c_getn", base, 5), "/c_setn", timeout=2).contents[2:])
                seen.append({"base": base, "notes": notes, "heard": heard, "done": done, "c_set": c_set})
            heap = since(before, server) if measure else None
        assert server.alive(), server.output
    finally:
        server.stop()
    return seen, heap


def test_a_units_own_asynchronous_command_runs_its_completion_and_answers_no_one(jack, probe_dir):
    exes = executables()
    scsynth, _ = unit_async_observe(exes["scsynth"], probe_dir)
    magnetar, heap = unit_async_observe(exes["magnetar"], probe_dir, measure=True)
    assert magnetar == scsynth
    # The command's box, its completion message and the stages on the audio thread: the pool.
    assert heap == (0, 0), f"system-heap operations on the audio thread (all, C code's): {heap}"
    for probe in scsynth:
        # The completion message set the bus; stage 2, 3, 4 and the cleanup ran in order.
        assert probe["notes"] == [7.0, 1.0, 2.0, 3.0, 4.0], probe
        # Neither /done nor the completion's /c_get answer reached the client.
        assert probe["heard"] == [] and not probe["done"] and not probe["c_set"], probe


def fifo_def() -> bytes:
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from supriya.ugens.core import UGen, param, ugen

    @ugen(kr=True)
    class FifoProbe(UGen):
        base = param(0.0)

    with SynthDefBuilder(base=0.0) as b:
        U.Out.kr(bus=1000, source=FifoProbe.kr(base=b["base"]))
    return compile_synthdefs(b.build(name="fifo_probe"))


def fifo_observe(exe: str, plugin_dir: Path, measure: bool = False) -> tuple:
    """Plays one FifoProbe; returns what it noted (see FifoProbe.cpp), the order of its four
    functions reduced to what causality fixes, and the replies heard; and (`measure`: magnetar)
    the audio thread's system-heap operations meanwhile."""
    server = boot(exe, plugin_dir)
    heap = None
    try:
        with OscClient(server.port) as c:
            c.send(("/d_recv", fifo_def()))
            c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
            c.clear()
            before = heap_ops(server) if measure else None
            c.send(("/s_new", "fifo_probe", 3000, 0, 0, "base", 20))
            c.sync()
            time.sleep(0.3)
            # scsynth runs a to-RT message's free function when the next message goes to the
            # audio thread: /sync's own trip takes it there.
            c.sync()
            time.sleep(0.1)
            notes = list(c.request(("/c_getn", 20, 12), "/c_setn", timeout=2).contents[2:])
            heard = sorted({m.address for m in c.messages()} - {"/synced", "/c_setn", "/done"})
            heap = since(before, server) if measure else None
        assert server.alive(), server.output
    finally:
        server.stop()
    from_perform, from_free, to_perform, to_free = notes[1], notes[3], notes[7], notes[9]
    order = {
        "all ran": all(x > 0 for x in (from_perform, from_free, to_perform, to_free)),
        "from-RT perform before its free": from_perform < from_free,
        "from-RT perform before the to-RT perform": from_perform < to_perform,
        "to-RT perform before its free": to_perform < to_free,
    }
    flags = {
        "sent from RT": notes[0], "from-RT perform on RT": notes[2], "from-RT free on RT": notes[4],
        "free saw perform's change": notes[5], "sent to RT": notes[6], "to-RT perform on RT": notes[8],
        "to-RT free on RT": notes[10], "to-RT free on the from-RT perform's thread": notes[11],
    }
    return {"order": order, "flags": flags, "heard": heard}, heap


def test_messages_between_a_unit_and_the_non_real_time_side_run_where_scsynth_runs_them(jack, probe_dir):
    exes = executables()
    scsynth, _ = fifo_observe(exes["scsynth"], probe_dir)
    magnetar, heap = fifo_observe(exes["magnetar"], probe_dir, measure=True)
    assert magnetar == scsynth
    # Sending, moving and freeing the messages on the audio thread: no system heap.
    assert heap == (0, 0), f"system-heap operations on the audio thread (all, C code's): {heap}"
    # What scsynth shows, spelled out.
    assert all(scsynth["order"].values()), scsynth["order"]
    assert scsynth["flags"] == {
        "sent from RT": 1.0, "from-RT perform on RT": 0.0, "from-RT free on RT": 1.0,
        "free saw perform's change": 1.0, "sent to RT": 1.0, "to-RT perform on RT": 1.0,
        "to-RT free on RT": 0.0, "to-RT free on the from-RT perform's thread": 1.0,
    }


def buf_frames_def() -> bytes:
    """Writes buffer 0's frames and channels to control buses 60 and 61: what units see."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder() as b:
        U.Out.kr(bus=60, source=[U.BufFrames.kr(buffer_id=0), U.BufChannels.kr(buffer_id=0)])
    return compile_synthdefs(b.build(name="buf_frames"))


def buf_gen_observe(exe: str, plugin_dir: Path) -> list:
    """Runs the probe's generators on an allocated and an unallocated buffer; returns the
    replies, `/b_info` and the samples after each, and what a unit sees of buffer 0."""
    server = boot(exe, plugin_dir)
    seen = []
    try:
        with OscClient(server.port) as c:
            c.send(("/d_recv", buf_frames_def()))
            c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
            c.request(("/b_alloc", 0, 4, 1), "/done", timeout=3)
            c.send(("/b_setn", 0, 0, 4, 1.0, 2.0, 3.0, 4.0))
            c.send(("/s_new", "buf_frames", 4000, 0, 0))
            c.sync()
            for gen in [(0, "probeResize", 8, 2, 0.5), (1, "probeResize", 3, 1, -1.0), (0, "probeRate", 22050.0),
                        (0, "noSuchGenerator", 1)]:
                c.clear()
                c.send(("/b_gen", *gen))
                c.sync()
                # `/done` whole; `/fail` by its command (the wording differs).
                replies = [[m.address, *m.contents] if m.address == "/done" else [m.address, m.contents[0]]
                           for m in c.messages() if m.address in ("/done", "/fail")]
                info = list(c.request(("/b_query", gen[0]), "/b_info", timeout=2).contents)
                frames, channels = info[1], info[2]
                samples = list(c.request(("/b_getn", gen[0], 0, frames * channels), "/b_setn", timeout=2).contents[3:])
                time.sleep(0.05)
                unit = list(c.request(("/c_getn", 60, 2), "/c_setn", timeout=2).contents[2:])
                seen.append({"gen": gen, "replies": replies, "info": info, "samples": samples, "unit sees": unit})
        assert server.alive(), server.output
    finally:
        server.stop()
    return seen


def test_a_plugins_buffer_generator_resizes_the_buffer_as_in_scsynth(jack, probe_dir):
    exes = executables()
    scsynth = buf_gen_observe(exes["scsynth"], probe_dir)
    magnetar = buf_gen_observe(exes["magnetar"], probe_dir)
    assert magnetar == scsynth
    # What scsynth shows, spelled out.
    resized, fresh, rate, unknown = scsynth
    assert resized["replies"] == [["/done", "/b_gen", 0]]
    assert resized["info"][:3] == [0, 8, 2]
    assert resized["samples"] == [1.0, 2.0, 3.0, 4.0] + [0.5] * 12
    assert resized["unit sees"] == [8.0, 2.0]
    assert fresh["info"][:3] == [1, 3, 1] and fresh["samples"] == [-1.0] * 3
    assert rate["info"] == [0, 8, 2, 22050.0]
    assert unknown["replies"] == [["/fail", "/b_gen"]]


def scope_observe(exe: str, plugin_dir: Path, extra=()) -> tuple:
    """Plays a two-channel ScopeOut2 into scope buffer 3; returns its header and samples as a
    client reads them from the shared memory segment, the server (to ask more) and its text."""
    from test_rt_shm import read_scope, scope_def

    server = boot(exe, plugin_dir, extra)
    try:
        with OscClient(server.port) as c:
            c.send(("/d_recv", scope_def("plugin_scope", 3, 2048, 512, [0.25, -0.5])))
            c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
            c.send(("/s_new", "plugin_scope", 5000, 0, 0))
            c.sync()
            stats = scope_stats(server) if extra else None
            head, data = read_scope(server.port, 3)
            c.send(("/n_free", 5000))
            c.sync()
            time.sleep(0.2)
            after = read_scope(server.port, 3, timeout=0)[0]
        assert server.alive(), server.output
    finally:
        server.stop()
    return (head, sorted(set(data[:512])), sorted(set(data[2048:2560])), after), stats, server.output


def scope_stats(server: ServerProcess) -> tuple:
    """System-heap operations on the audio thread (all, and C code's) over half a second of the
    scope playing."""
    time.sleep(0.2)
    before = heap_ops(server)
    time.sleep(0.5)
    return since(before, server)


def test_scsynths_scopeout2_plugin_fills_the_shared_scope_buffer(jack, probe_dir):
    exes = executables()
    scsynth, _, _ = scope_observe(exes["scsynth"], probe_dir)
    magnetar, heap_ops, output = scope_observe(exes["magnetar"], probe_dir, ("--prefer-plugins", "ScopeOut2"))
    assert magnetar == scsynth
    head, first, second, after = scsynth
    assert head == [2, 2048, 512] and first == [0.25] and second == [-0.5]
    assert after == [0, 0, 0], "the buffer is free again once the synth has ended"
    assert "unavailable" not in output, output
    assert heap_ops == (0, 0), f"system-heap operations on the audio thread (all, C code's): {heap_ops}"
