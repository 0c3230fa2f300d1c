"""A plugin command's asynchronous stages (`DoAsynchronousCommand`) in real time, scsynth and
magnetar loading the same probe plugin (tests/plugin_probes/AsyncProbe.cpp) in the same run:
stage 2 and stage 4 run off the thread that ran the command, stage 3 and the cleanup on it, in
that order; the completion message runs after a successful stage 3, `/done` follows a successful
stage 4, and a stage that fails ends the command there. Both servers must agree on everything
the probe notes and on the replies."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_probes"))

import probes  # noqa: E402
from rtserver import BootError, OscClient, ServerProcess, encode, executables  # noqa: E402

# (bus base, stage that fails, bus the completion message sets)
CASES = [(0, 0, 100), (10, 2, 101), (20, 3, 102), (30, 4, 103)]


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    if (why := probes.missing()) is not None:
        pytest.skip(why)
    return probes.build(tmp_path_factory.mktemp("async_probe"), "AsyncProbe")


def observe(exe: str, plugin_dir: Path) -> list:
    """Runs every case on a fresh server; returns, per case, the replies' order, the probe's
    notes and the completion's bus."""
    server = ServerProcess(exe, extra=["-U", str(plugin_dir)])
    try:
        server.start()
    except BootError as e:
        pytest.fail(f"{exe} did not boot: {e}", pytrace=False)
    seen = []
    try:
        with OscClient(server.port) as c:
            for base, fail_at, bus in CASES:
                c.clear()
                completion = encode(("/c_set", bus, 7.0))
                c.send(("/cmd", "asyncProbe", base, fail_at, completion))
                c.sync()
                replies = [m.address for m in c.messages() if m.address in ("/done", "/fail")]
                done = [list(m.contents) for m in c.messages("/done")]
                notes = list(c.request(("/c_getn", base, 10), "/c_setn", timeout=2).contents[2:])
                completed = c.request(("/c_get", bus), "/c_set", timeout=2).contents[1]
                seen.append({"case": (base, fail_at), "replies": replies, "done": done,
                             "notes": notes, "completion": completed})
        assert server.alive(), server.output
    finally:
        server.stop()
    return seen


def test_async_plugin_command_stages_run_on_scsynths_threads_in_its_order(jack, probe_dir):
    exes = executables()
    scsynth = observe(exes["scsynth"], probe_dir)
    magnetar = observe(exes["magnetar"], probe_dir)
    assert magnetar == scsynth
    # What scsynth shows, spelled out.
    ok = magnetar[0]
    assert ok["done"] == [["asyncProbe"]], "/done after stage 4, before /synced"
    assert ok["notes"][:4] == [1.0, 2.0, 3.0, 4.0], "stage 2, 3, 4, then the cleanup"
    assert ok["notes"][5:9] == [0.0, 1.0, 0.0, 1.0], "stages 2 and 4 off the command's thread, 3 and cleanup on it"
    assert ok["notes"][9] == 1.0, "stages 2 and 4 on the same (non-real-time) thread"
    assert ok["completion"] == 7.0
    failed2, failed3, failed4 = magnetar[1], magnetar[2], magnetar[3]
    assert failed2["notes"][:4] == [1.0, 0.0, 0.0, 2.0] and failed2["completion"] == 0.0 and not failed2["done"]
    assert failed3["notes"][:4] == [1.0, 2.0, 0.0, 3.0] and failed3["completion"] == 0.0 and not failed3["done"]
    assert failed4["notes"][:4] == [1.0, 2.0, 3.0, 4.0] and failed4["completion"] == 7.0 and not failed4["done"]


# (header, sample format) pairs a plugin may ask the interface table about.
FORMATS = [
    ("wav", "float"), ("WAVE", "int16"), ("aiff", "int24"), ("AIFC", "int32"), ("next", "mulaw"),
    ("Sun", "alaw"), ("riff", "uint8"), ("wavex", "int8"), ("w64", "double"), ("caf", "float"),
    ("flac", "int24"), ("ogg", "vorbis"), ("ogg", "opus"), ("raw", "int16"), ("ircam", "float"),
    ("rf64", "float"), ("mpeg", "mp3"), ("mat5", "double"), ("wav", "mp4"), ("mp4", "float"),
]


def format_answers(exe: str, plugin_dir: Path) -> list:
    server = ServerProcess(exe, extra=["-U", str(plugin_dir)])
    try:
        server.start()
    except BootError as e:
        pytest.fail(f"{exe} did not boot: {e}", pytrace=False)
    try:
        with OscClient(server.port) as c:
            for i, (header, sample) in enumerate(FORMATS):
                c.send(("/cmd", "formatProbe", 2 * i, header, sample))
            c.sync()
            values = c.request(("/c_getn", 0, 2 * len(FORMATS)), "/c_setn", timeout=2).contents[2:]
        assert server.alive(), server.output
    finally:
        server.stop()
    return [(h, s, values[2 * i], values[2 * i + 1]) for i, (h, s) in enumerate(FORMATS)]


def test_sound_file_format_names_mean_to_plugins_what_they_mean_in_scsynth(jack, tmp_path):
    if (why := probes.missing()) is not None:
        pytest.skip(why)
    plugin_dir = probes.build(tmp_path / "probes", "FormatProbe")
    exes = executables()
    scsynth = format_answers(exes["scsynth"], plugin_dir)
    magnetar = format_answers(exes["magnetar"], plugin_dir)
    assert magnetar == scsynth
    assert scsynth[0][2:] == (0.0, float(0x010006)), "wav float"
    assert scsynth[-1][2] != 0.0, "an unknown header fails"
