"""sclang itself, driving scsynth and magnetar through the same day-to-day session.

``session.scd`` boots a server from sclang (headless: Qt's offscreen platform), plays functions,
patterns, Ndef/Pdef/ProxySpace, reads the sound files SuperCollider ships, uses the control buses
through shared memory, the volume, CmdPeriod, the scope, Score.recordNRT, recording and disk
streaming, plays units from sc3-plugins, and prints what it measured as ``@@RESULT step key value`` lines.  The session runs
once with scsynth and once with magnetar (at the same time, each on its own ports, both on a
private JACK dummy server); each step then asserts that magnetar's session measured what
scsynth's did and printed no error line that scsynth's did not.

Run time: about 25 s of wall time (the two sessions run side by side).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from rtserver import JACK_CLIENT, ROOT, SCSYNTH, JackDummy, executables, free_port, jack_device  # noqa: E402

SCLANG = os.environ.get("SCLANG", shutil.which("sclang") or "/usr/bin/sclang")
SCRIPT = Path(__file__).resolve().parent / "session.scd"
PEEK = os.environ.get("MAGNETAR_SHM_PEEK", str(ROOT / "target" / "release" / "magnetar-shm-peek"))
SESSION_TIMEOUT = 150

STEPS = [
    "boot", "play", "plugin", "pbind", "ndef", "pdef", "proxyspace", "buffer_read", "bus_sync",
    "volume", "cmdperiod", "scope", "score", "record", "diskin", "quit",
]

# Words that mark a line as an error report, from sclang or from a server.
ERROR_MARKERS = re.compile(
    r"ERROR|FAILURE|Exception|not found|not installed|not understood|malformed|[Ff]ailed|"
    r"could not|Cannot|crash|Segmentation|exited with exit code [^0]"
)

@dataclass
class Session:
    server: str
    port: int
    out: Path
    returncode: int | None = None
    lines: list[str] = field(default_factory=list)
    steps: dict[str, list[str]] = field(default_factory=dict)
    results: dict[str, dict[str, object]] = field(default_factory=dict)
    ended: bool = False
    # The server's shared memory segment still existed when the session was over.
    segment_left: bool = False

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def parse(self) -> None:
        current = "startup"
        self.steps[current] = []
        for line in self.lines:
            if line.startswith("@@BEGIN "):
                current = line.split()[1]
                self.steps[current] = []
            elif line.startswith("@@RESULT "):
                _, step, key, value = line.split(" ", 3)
                try:
                    parsed = json.loads(value)
                except json.JSONDecodeError:
                    parsed = value
                self.results.setdefault(step, {})[key] = parsed
            elif line.startswith("@@END"):
                self.ended = True
            else:
                self.steps[current].append(line)

    def errors(self, step: str) -> list[str]:
        return [l for l in self.steps.get(step, []) if ERROR_MARKERS.search(l)]

    def step_log(self, step: str) -> str:
        return "\n".join(self.steps.get(step, []))


def normalized(line: str) -> str:
    """An error line without the numbers (node ids, ports, offsets) that differ between runs."""
    return re.sub(r"\d+", "N", line.strip())


def run_session(server: str, program: str, jack: JackDummy, workdir: Path) -> Session:
    home = workdir / f"home-{server}"
    (home / "runtime").mkdir(parents=True)
    out = workdir / "out"
    out.mkdir(exist_ok=True)
    session = Session(server, free_port(), out)
    env = jack.env()
    env.update(
        HOME=str(home),
        XDG_RUNTIME_DIR=str(home / "runtime"),
        QT_QPA_PLATFORM="offscreen",
        QTWEBENGINE_DISABLE_SANDBOX="1",
        SESSION_PROGRAM=program,
        SESSION_PORT=str(session.port),
        SESSION_OUT=str(out),
        SESSION_TAG=server,
        SESSION_SHM_PEEK=PEEK,
        # Both servers open their JACK clients at once: names of their own keep them apart.
        SESSION_DEVICE=jack_device(env, f"{JACK_CLIENT}-{server}"),
    )
    env.pop("SC_SYNTHDEF_PATH", None)
    # A process group of its own: the server sclang starts is stopped with it on a timeout.
    proc = subprocess.Popen(
        [SCLANG, "-u", str(free_port()), str(SCRIPT)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=str(workdir),
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, _ = proc.communicate(timeout=SESSION_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, _ = proc.communicate()
    session.returncode = proc.returncode
    session.segment_left = Path(f"/dev/shm/SuperColliderServer_{session.port}").exists()
    session.lines = stdout.splitlines()
    session.parse()
    # Whatever sclang left running (a server that did not quit) goes with its group.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return session


def run_both(workdir: Path) -> dict[str, Session]:
    exes = executables()
    jack = JackDummy()
    jack.name = f"magnetar-sclang-{os.getpid()}"
    jack.start()
    done: dict[str, Session] = {}
    try:
        threads = [
            threading.Thread(target=lambda s=s: done.__setitem__(s, run_session(s, exes[s], jack, workdir)))
            for s in ("scsynth", "magnetar")
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        jack.stop()
        for s in done.values():
            Path(f"/dev/shm/SuperColliderServer_{s.port}").unlink(missing_ok=True)
    return done


def dump(sessions: dict[str, Session]) -> str:
    keep = ("server", "port", "returncode", "lines", "segment_left")
    return json.dumps({n: {**{k: getattr(s, k) for k in keep}, "out": str(s.out)} for n, s in sessions.items()})


def load(text: str) -> dict[str, Session]:
    out = {}
    for name, d in json.loads(text).items():
        s = Session(d["server"], d["port"], Path(d["out"]), d["returncode"], d["lines"], segment_left=d["segment_left"])
        s.parse()
        out[name] = s
    return out


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> dict[str, Session]:
    if not (os.path.isfile(SCLANG) and os.access(SCLANG, os.X_OK)):
        pytest.fail(f"sclang not found at {SCLANG!r}: run scripts/setup.sh (supercollider-language)", pytrace=False)
    for path in (*executables().values(), PEEK):
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is missing: run scripts/setup.sh", pytrace=False)
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return run_both(tmp_path_factory.mktemp("sclang"))
    # Under pytest-xdist the steps are spread over workers: the first one to get here runs the
    # sessions, the others read what it recorded.
    root = tmp_path_factory.getbasetemp().parent
    record = root / "sclang-sessions.json"
    with open(root / "sclang-sessions.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.exists():
            return load(record.read_text())
        workdir = root / "sclang-sessions"
        workdir.mkdir()
        sessions = run_both(workdir)
        record.write_text(dump(sessions))
        return sessions


def reference(sessions, step: str) -> Session:
    ref = sessions["scsynth"]
    if ref.results.get(step, {}).get("finished") is not True:
        pytest.fail(
            f"the session itself is broken: with scsynth, step {step!r} did not finish\n{ref.step_log(step)}",
            pytrace=False,
        )
    return ref


@pytest.mark.parametrize("step", STEPS)
def test_step_measures_what_scsynth_measures(sessions, step):
    ref = reference(sessions, step)
    dut = sessions["magnetar"]
    got = dut.results.get(step, {})
    assert got == ref.results[step], (
        f"step {step!r}: magnetar's session measured {got}, scsynth's {ref.results[step]}\n"
        f"magnetar's output during the step:\n{dut.step_log(step)}"
    )


@pytest.mark.parametrize("step", STEPS)
def test_step_prints_no_error_scsynth_does_not(sessions, step):
    reference(sessions, step)
    ref_errors = {normalized(l) for l in sessions["scsynth"].errors(step)}
    extra = [l for l in sessions["magnetar"].errors(step) if normalized(l) not in ref_errors]
    assert not extra, f"step {step!r}: errors printed with magnetar and not with scsynth:\n" + "\n".join(extra)


def test_session_ends_and_sclang_exits_0(sessions):
    for name, s in sessions.items():
        assert s.ended and s.returncode == 0, f"{name}: sclang exited {s.returncode}\n{s.log[-3000:]}"


def test_score_recordnrt_renders_the_same_file(sessions):
    """Each session's Score.recordNRT wrote a score and had its own server render it; the other
    server renders that same score file with the same command line, bit for bit alike. (Two
    sessions' scores differ in the garbage sclang leaves in padding, which scsynth reads as part
    of names, so each file is compared only with a render of the very same score.)"""
    reference(sessions, "score")
    exes = executables()
    options = sessions["scsynth"].results["score"]["nrt_options"].split()
    out = sessions["scsynth"].out
    for author, other in (("scsynth", "magnetar"), ("magnetar", "scsynth")):
        score, own = out / f"score-{author}.osc", out / f"score-{author}.wav"
        assert score.exists() and own.exists(), f"{author}'s session wrote no score or render\n{sessions[author].step_log('score')}"
        again = out / f"score-{author}-by-{other}.wav"
        cmd = [exes[other], "-N", str(score), "_", str(again), "44100", "WAV", "float", *options]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=str(out))
        assert r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}"
        assert same_sound_file(own, again), f"{author}'s score: {author} and {other} rendered different files"


def same_sound_file(a: Path, b: Path) -> bool:
    """Same format and the same samples, bit for bit. (Float WAV files also carry a PEAK chunk
    stamped with the time of writing, which differs between any two renders.)"""
    import numpy as np
    import soundfile

    ia, ib = soundfile.info(str(a)), soundfile.info(str(b))
    same_format = (ia.format, ia.subtype, ia.channels, ia.samplerate, ia.frames) == (
        ib.format, ib.subtype, ib.channels, ib.samplerate, ib.frames)
    da, _ = soundfile.read(str(a), dtype="float32", always_2d=True)
    db, _ = soundfile.read(str(b), dtype="float32", always_2d=True)
    return same_format and da.shape == db.shape and np.array_equal(da.view(np.uint32), db.view(np.uint32))


def test_shared_memory_segment_is_gone_after_quit(sessions):
    for name, s in sessions.items():
        assert s.results.get("quit", {}).get("quit") is True, f"{name} did not quit"
    assert not [n for n, s in sessions.items() if s.segment_left]


def test_plugin_units_sound_on_both(sessions):
    """The plugin step really ran sc3-plugins' units: a shaped constant and a piano that sounds."""
    for name, s in sessions.items():
        got = s.results.get("plugin", {})
        assert got.get("shaped", 0) > 0.1 and got.get("piano_sounds") is True, f"{name}: {got}\n{s.step_log('plugin')}"
