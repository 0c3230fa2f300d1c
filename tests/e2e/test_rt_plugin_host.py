"""What plugin units ask of the server beyond their own signal, in real time, scsynth and
magnetar loading the same probe plugins (tests/plugin_probes) in the same run:

- an asynchronous command a unit starts itself (no reply address): its stages run, its
  completion message runs, and neither `/done` nor what the completion message answers reaches
  any client.

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


PROBES = ("UnitAsyncProbe",)


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


def boot(exe: str, plugin_dir: Path) -> ServerProcess:
    server = ServerProcess(exe, extra=["-U", f"{CORE_PLUGINS}:{plugin_dir}"])
    try:
        server.start()
    except BootError as e:
        pytest.fail(f"{exe} did not boot: {e}", pytrace=False)
    return server


# Replies a client hears anyway; the rest would be answers the probes caused.
ROUTINE = {"/synced", "/n_go", "/n_end", "/status.reply", "/c_set", "/c_setn", "/done"}


def unit_async_observe(exe: str, plugin_dir: Path) -> list:
    """Starts one probe in its constructor (bus base 0) and one in its first calc call (base
    10); returns per probe the completion's bus, the stages' order and the replies heard."""
    server = boot(exe, plugin_dir)
    seen = []
    try:
        with OscClient(server.port) as c:
            c.request(("/notify", 1), "/done", timeout=3)
            c.send(("/d_recv", unit_async_def()))
            c.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
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
        assert server.alive(), server.output
    finally:
        server.stop()
    return seen


def test_a_units_own_asynchronous_command_runs_its_completion_and_answers_no_one(jack, probe_dir):
    exes = executables()
    scsynth = unit_async_observe(exes["scsynth"], probe_dir)
    magnetar = unit_async_observe(exes["magnetar"], probe_dir)
    assert magnetar == scsynth
    for probe in scsynth:
        # The completion message set the bus; stage 2, 3, 4 and the cleanup ran in order.
        assert probe["notes"] == [7.0, 1.0, 2.0, 3.0, 4.0], probe
        # Neither /done nor the completion's /c_get answer reached the client.
        assert probe["heard"] == [] and not probe["done"] and not probe["c_set"], probe

