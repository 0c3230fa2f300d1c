"""Deep and wide node trees: a chain of 1,000,000 nested groups and 100,000
sibling groups are run, queried, dumped and freed without recursion (a deep
tree costs memory, not stack), in NRT and in real time on both drivers; `-n`
bounds how many nodes there are, for every way of making one."""

from __future__ import annotations

import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import soundfile
from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nrt import compile_synthdefs, magnetar_binary, osc_bundle, osc_message  # noqa: E402
from rtserver import OscClient  # noqa: E402

DEEP = 1_000_000
WIDE = 100_000
# How long a reply may take while the big tree runs: every block walks every
# running group and /status and /g_queryTree walk the whole tree, so one block
# takes tens of milliseconds here and seconds on a loaded two-core machine.
# A reply that is late is not lost; the deadline only bounds a hung server.
TREE_REPLY_TIMEOUT = 60


def counter_def():
    with SynthDefBuilder(bus=0.0) as b:
        U.Out.kr(bus=b["bus"], source=U.Sweep.kr(trigger=0.0, rate=1.0))
    return b.build(name="counter")


def tone_def():
    with SynthDefBuilder(freq=440.0) as b:
        U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=b["freq"]) * 0.1)
    return b.build(name="tone")


def chain(first: int, n: int, per_message: int = 500) -> list[bytes]:
    """/g_new messages making groups first+1 … first+n, each at the head of the one before
    (the first at the head of group `first`), several groups per message."""
    out = []
    for start in range(0, n, per_message):
        args = []
        for k in range(start, min(n, start + per_message)):
            args += [first + k + 1, 0, first + k]
        out.append(osc_message("/g_new", *args))
    return out


def siblings(first: int, n: int, per_message: int = 500) -> list[bytes]:
    out = []
    for start in range(0, n, per_message):
        args = []
        for k in range(start, min(n, start + per_message)):
            args += [first + k, 1, 0]
        out.append(osc_message("/g_new", *args))
    return out


def render_score(tmp_path, packets: list[bytes], max_nodes: int, name: str = "score.osc"):
    """Renders a score of `packets` with magnetar (one output channel, `-n max_nodes`) and
    checks that it ended well without a stack overflow or a panic; returns the wall time,
    the finished process and the rendered samples."""
    score = tmp_path / name
    score.write_bytes(b"".join(struct.pack(">i", len(p)) + p for p in packets))
    out = tmp_path / "out.wav"
    started = time.monotonic()
    proc = subprocess.run(
        [magnetar_binary(), "-o", "1", "-n", str(max_nodes), "-N", str(score), "_", str(out), "48000", "WAV", "float"],
        capture_output=True, text=True, errors="replace", timeout=600, cwd=tmp_path,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "overflow" not in proc.stderr and "panicked" not in proc.stderr
    data, _ = soundfile.read(str(out))
    return elapsed, proc, data


@pytest.mark.parametrize("shape", ["deep", "wide"])
def test_deep_and_wide_trees_render_in_nrt(tmp_path, shape):
    n = DEEP if shape == "deep" else WIDE
    msgs = [osc_message("/d_recv", compile_synthdefs(tone_def())), osc_message("/s_new", "tone", 1, 0, 0)]
    packets = [osc_bundle(0.0, msgs)]
    build = chain(10, n) if shape == "deep" else siblings(11, n)
    if shape == "deep":
        build.insert(0, osc_message("/g_new", 10, 1, 0))
    for m in build:
        packets.append(osc_bundle(0.0, [m]))
    # A synth in the innermost (or last) group, then the whole tree queried, dumped and freed.
    inner = 10 + n
    packets.append(osc_bundle(0.01, [osc_message("/s_new", "tone", 2, 0, inner, "freq", 660.0)]))
    packets.append(osc_bundle(0.02, [osc_message("/g_queryTree", 0, 0), osc_message("/n_free", 10 if shape == "deep" else 11)]))
    packets.append(osc_bundle(0.03, [osc_message("/g_deepFree", 0), osc_message("/g_freeAll", 0)]))
    packets.append(osc_bundle(0.05, [osc_message("/c_set", 0, 0.0)]))
    elapsed, _, data = render_score(tmp_path, packets, n + 100)
    assert abs(data).max() > 0.05
    assert elapsed < 120, f"{n} nodes took {elapsed:.1f} s"


def siblings_in(group: int, first: int, n: int, per_message: int = 500) -> list[bytes]:
    out = []
    for start in range(0, n, per_message):
        args = []
        for k in range(start, min(n, start + per_message)):
            args += [first + k, 1, group]
        out.append(osc_message("/g_new", *args))
    return out


@pytest.mark.parametrize("shape", ["deep", "wide"])
def test_deep_and_wide_trees_in_real_time(magnetar, shape):
    n = DEEP if shape == "deep" else WIDE
    server = magnetar(extra=("-n", str(n + 100)))
    client = OscClient(server.port, protocol="udp")
    try:
        client.request(("/notify", 0), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(counter_def())))
        client.wait_for("/done")
        # A synth started before, which must keep playing.
        client.send(M("/s_new", "counter", 1, 0, 0, "bus", 0))
        # Built inside a paused group, so that the blocks stay short while the
        # commands arrive (every block walks every running group, as scsynth).
        client.send(M("/g_new", 10, 1, 0))
        client.send(M("/n_run", 10, 0))
        build = chain(10, n) if shape == "deep" else siblings(11, n)
        if shape == "wide":
            build = siblings_in(10, 11, n)
        for k, m in enumerate(build):
            client.send_raw(m)
            if k % 20 == 19:
                client.request(M("/sync", k), "/synced", timeout=30)
        client.request(M("/sync", 1), "/synced", timeout=30)
        client.send(M("/n_run", 10, 1))
        status = client.request(M("/status"), "/status.reply", timeout=TREE_REPLY_TIMEOUT).contents
        assert status[3] == n + 1 + 1, status  # groups: the root, group 10 and the new ones
        client.send(M("/s_new", "counter", 2, 0, 10 + n, "bus", 1))
        # Walked without recursion too (a reply this large does not fit a datagram).
        client.send(M("/g_dumpTree", 0, 0) if shape == "wide" else M("/g_queryTree", 0, 0))
        # Both synths play (a million running groups take longer than a block
        # to walk on a small machine, so the server falls behind real time).
        before = client.request(M("/c_get", 0), "/c_set", timeout=TREE_REPLY_TIMEOUT).contents[1]
        time.sleep(0.3)
        assert client.request(M("/c_get", 0), "/c_set", timeout=TREE_REPLY_TIMEOUT).contents[1] > before
        assert client.request(M("/c_get", 1), "/c_set", timeout=TREE_REPLY_TIMEOUT).contents[1] > 0
        client.send(M("/n_free", 10))
        client.send(M("/g_freeAll", 0))
        client.request(M("/sync", 2), "/synced", timeout=TREE_REPLY_TIMEOUT)
        client.clear()
        status = client.request(M("/status"), "/status.reply", timeout=TREE_REPLY_TIMEOUT).contents
        assert status[2:4] == (0, 1), status
        assert server.alive()
    finally:
        client.close()


def test_server_assigned_ids_count_against_n(magnetar):
    server = magnetar(extra=("-n", "8"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(counter_def())))
        client.wait_for("/done")
        for _ in range(10):
            client.send(M("/s_new", "counter", -1, 0, 0))
        client.send(M("/g_new", -1, 0, 0))
        client.send(M("/p_new", -1, 0, 0))
        client.request(M("/sync", 1), "/synced")
        fails = client.messages("/fail")
        # The root is one of the 8 nodes: 7 synths, then "too many nodes" for the rest.
        assert [f.contents for f in fails] == [("/s_new", "too many nodes")] * 3 + [
            ("/g_new", "too many nodes"),
            ("/p_new", "too many nodes"),
        ]
        assert client.request(M("/status"), "/status.reply").contents[2] == 7
        # Frees make room again.
        client.send(M("/g_freeAll", 0))
        client.send(M("/g_new", -1, 0, 0))
        client.request(M("/sync", 2), "/synced")
        assert client.request(M("/status"), "/status.reply").contents[2:4] == (0, 2)
    finally:
        client.close()


def test_nested_groups_with_satellites_and_nested_satellites_in_nrt(tmp_path):
    """Every group of a 50,000-deep chain carries a satellite synth; satellites of
    satellites stop at their nesting limit with /fail instead of deepening the stack."""
    n = 50_000
    msgs = [osc_message("/d_recv", compile_synthdefs(tone_def()))]
    packets = [osc_bundle(0.0, msgs), osc_bundle(0.0, [osc_message("/g_new", 10, 1, 0)])]
    packets += [osc_bundle(0.0, [m]) for m in chain(10, n)]
    for start in range(0, n, 500):
        args = []
        for k in range(start, min(n, start + 500)):
            args += ["tone", 200_000 + k, 6, 11 + k, "freq", 0.0]
        packets.append(osc_bundle(0.0, [osc_message("/s_new", *args)]))
    # A tower of satellites, each after the one before.
    tower = [osc_message("/s_new", "tone", 300_000, 6, 11, "freq", 0.0)]
    tower += [osc_message("/s_new", "tone", 300_001 + k, 6, 300_000 + k, "freq", 0.0) for k in range(100)]
    packets.append(osc_bundle(0.0, tower))
    packets.append(osc_bundle(0.0, [osc_message("/s_new", "tone", 1, 0, 0)]))
    packets.append(osc_bundle(0.02, [osc_message("/n_free", 10)]))
    packets.append(osc_bundle(0.04, [osc_message("/c_set", 0, 0.0)]))
    _, proc, data = render_score(tmp_path, packets, 2 * n + 1000)
    assert "satellites nest at most" in proc.stderr
    assert abs(data).max() > 0.05


def render_tree(tmp_path, shape: str, n: int, seconds: float, trace: bool = False) -> tuple[float, subprocess.CompletedProcess]:
    """Renders `seconds` of a score that builds a deep chain or a row of `n` groups at time 0
    (`/n_trace` of every group in the first block, if asked); returns the wall time."""
    packets = [osc_bundle(0.0, [osc_message("/d_recv", compile_synthdefs(tone_def())), osc_message("/s_new", "tone", 1, 0, 0)])]
    if shape == "deep":
        packets.append(osc_bundle(0.0, [osc_message("/g_new", 10, 1, 0)]))
        packets += [osc_bundle(0.0, [m]) for m in chain(10, n)]
    else:
        packets += [osc_bundle(0.0, [m]) for m in siblings(11, n)]
    if trace:
        ids = range(10, 11 + n) if shape == "deep" else range(11, 11 + n)
        ids = list(ids)
        for start in range(0, len(ids), 500):
            packets.append(osc_bundle(0.0, [osc_message("/n_trace", *ids[start:start + 500])]))
    packets.append(osc_bundle(seconds, [osc_message("/c_set", 0, 0.0)]))
    elapsed, proc, _ = render_score(tmp_path, packets, n + 100, f"score-{shape}-{n}-{seconds}.osc")
    return elapsed, proc


def test_a_million_traced_nested_groups_render_in_nrt(tmp_path):
    """/n_trace of every group of a million-deep chain: each traced group names its one
    child just before running it, without a stack frame per level."""
    _, proc = render_tree(tmp_path, "deep", DEEP, 0.01, trace=True)
    out = proc.stdout
    assert out.count("TRACE Group") == DEEP + 1
    assert f"TRACE Group {10 + DEEP - 1}\n   {10 + DEEP} group\nTRACE Group {10 + DEEP}" in out


@pytest.mark.parametrize("shape", ["deep", "wide"])
def test_time_per_block_grows_linearly_with_the_node_count(tmp_path, shape):
    """Blocks over a tree of 4n groups take about four times as long as over n: the time
    per node per block (the difference between a long and a short render of the same
    tree, so building it does not count) stays within a factor of three, where a walk
    that is quadratic in the node count would take four. Each size is measured three
    times, interleaved, and the fastest long and short renders count: on a loaded
    machine a render is only ever slowed down, and one slowed render must not decide."""
    small = 50_000 if shape == "deep" else 25_000
    blocks = 48_000 // 64
    times = {(n, seconds): [] for n in (small, 4 * small) for seconds in (0.05, 1.05)}
    for _ in range(3):
        for n, seconds in times:
            times[(n, seconds)].append(render_tree(tmp_path, shape, n, seconds)[0])
    per_node = [max(min(times[(n, 1.05)]) - min(times[(n, 0.05)]), 1e-3) / (blocks * n) for n in (small, 4 * small)]
    ratio = per_node[1] / per_node[0]
    assert 1 / 3 < ratio < 3, f"time per node per block: {per_node[0] * 1e9:.1f} ns at {small}, {per_node[1] * 1e9:.1f} ns at {4 * small}"


def test_n_bounds_every_way_of_making_a_node(magnetar):
    """-n 5 (the root is one): /s_new, /g_new and /p_new with ids of their own, and
    satellites (add actions 5 and 6), stop at the limit with "too many nodes"; freeing one
    node makes room for exactly one."""
    server = magnetar(extra=("-n", "5"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        client.send(M("/d_recv", compile_synthdefs(counter_def())))
        client.wait_for("/done")
        client.send(M("/g_new", 10, 0, 0))
        client.send(M("/p_new", 11, 0, 0))
        client.send(M("/s_new", "counter", 12, 0, 10, "bus", 0))
        client.send(M("/s_new", "counter", 13, 5, 12, "bus", 1))
        client.request(M("/sync", 1), "/synced")
        assert client.messages("/fail") == []
        for cmd in (("/s_new", "counter", 20, 0, 0), ("/g_new", 21, 0, 0), ("/p_new", 22, 0, 0),
                    ("/s_new", "counter", 23, 6, 12), ("/g_new", 24, 5, 12)):
            client.clear()
            client.send(M(*cmd))
            assert client.wait_for("/fail", timeout=3).contents == (cmd[0], "too many nodes"), cmd
        client.request(M("/sync", 2), "/synced")
        assert client.request(M("/status"), "/status.reply").contents[2:4] == (2, 3)
        client.clear()
        client.send(M("/n_free", 11))
        client.send(M("/g_new", 21, 0, 0))
        client.send(M("/g_new", 22, 0, 0))
        fail = client.wait_for("/fail", timeout=3)
        assert fail.contents == ("/g_new", "too many nodes")
        client.request(M("/sync", 3), "/synced")
        assert client.request(M("/status"), "/status.reply").contents[2:4] == (2, 3)
        assert server.alive()
    finally:
        client.close()


def test_tracing_a_group_of_20000_prints_every_child_in_real_time(magnetar):
    """/n_trace of a group with 20,000 child groups prints a line for each (more than the
    audio thread's queue holds at once: the lines leave over several periods, in order),
    and replies keep flowing meanwhile."""
    n = 20_000
    server = magnetar(extra=("-n", str(n + 100)))
    client = OscClient(server.port)
    try:
        client.send(M("/g_new", 10, 1, 0))
        for k, m in enumerate(siblings_in(10, 11, n)):
            client.send_raw(m)
            if k % 20 == 19:
                client.request(M("/sync", k), "/synced", timeout=30)
        client.request(M("/sync", 1), "/synced", timeout=30)
        client.send(M("/n_trace", 10))
        client.request(M("/sync", 2), "/synced", timeout=10)
        deadline = time.monotonic() + 20
        last = f"   {10 + n} group"
        while last not in server.lines and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = [line for line in server.lines if line.startswith("   ") and line.endswith(" group")]
        missing = sorted(set(f"   {11 + k} group" for k in range(n)) - set(lines))[:3]
        assert len(lines) == n, f"{len(lines)} of {n} trace lines; missing {missing}"
        assert lines == [f"   {11 + k} group" for k in range(n)]
        assert server.alive()
    finally:
        client.close()
