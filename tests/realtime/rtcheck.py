"""Helpers for the real-time tests: boot magnetar on a chosen driver, read its
``/magnetar_rtStats`` extension, read the audio thread's counters from /proc, and
analyse recorded sine tones.

Reuses the OSC client, the server process wrapper and the JACK dummy starter of
``tests/e2e/rtserver.py``.
"""

from __future__ import annotations

import math
import os
import socket
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
# The extension units' supriya classes (MagnetarConv, prepare_message).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "supriya"))

import pytest  # noqa: E402
from magnetar_conv import prepare_message  # noqa: E402
from rtserver import MAGNETAR, BootError, JackDummy, OscClient, ServerProcess  # noqa: E402
from supriya.osc import OscMessage  # noqa: E402

SAMPLE_RATE = 48000
# A JACK server name nobody runs: makes magnetar fall back to its clock driver even
# when another test session has a JACK server up.
NO_JACK_SERVER = f"magnetar-rt-nojack-{os.getpid()}"


def stop_cleanly_on_sigterm() -> None:
    """Makes SIGTERM exit through the `finally` blocks, as Ctrl-C does, so that a benchmark
    stopped by a signal still stops the JACK servers and audio servers it started."""
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


class PrivateJack(JackDummy):
    """``jackd -d dummy`` under a name of its own (the e2e session server may run too)."""

    _count = 0

    def __init__(self, rate: int = SAMPLE_RATE, period: int = 256):
        super().__init__(rate=rate, period=period)
        PrivateJack._count += 1
        self.name = f"magnetar-rt-{os.getpid()}-{PrivateJack._count}"

    def log_text(self) -> str:
        return Path(self.log.name).read_text(errors="replace")


@pytest.fixture(params=["clock", "jack"])
def driver(request):
    """A test on both drivers: None for the clock driver, or a running private JACK dummy
    server (the conftests of the suites that boot a real-time magnetar import it)."""
    if request.param == "clock":
        yield None
        return
    jack = PrivateJack(period=256)
    try:
        jack.start()
    except RuntimeError as e:
        pytest.fail(f"could not start jackd: {e}", pytrace=False)
    try:
        yield jack
    finally:
        jack.stop()


def server_env(jack: JackDummy | None, record: Path | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("MAGNETAR_RT_GUARD", "MAGNETAR_RT_GUARD_PROBE"):
        env.pop(name, None)
    env.update(extra or {})
    env["JACK_NO_START_SERVER"] = "1"
    env["JACK_DEFAULT_SERVER"] = jack.name if jack is not None else NO_JACK_SERVER
    env.pop("MAGNETAR_RECORD", None)
    env.pop("SC_JACK_DEFAULT_OUTPUTS", None)
    env.pop("SC_JACK_DEFAULT_INPUTS", None)
    if record is not None:
        env["MAGNETAR_RECORD"] = str(record)
    return env


def boot_magnetar(
    jack: JackDummy | None,
    block: int = 64,
    period: int = 256,
    record: Path | None = None,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> ServerProcess:
    """magnetar on JACK (``jack`` given) or on its clock driver (``jack`` None); ``env`` adds
    environment variables."""
    s = ServerProcess(
        MAGNETAR,
        extra=["-z", str(block), "-Z", str(period), *extra],
        env=server_env(jack, record, env),
    )
    s.start()
    want = "JACK" if jack is not None else "clock"
    driver_lines = [line for line in s.lines if "driver" in line]
    assert any(want in line for line in driver_lines), f"expected the {want} driver; output:\n{s.output}"
    return s



@pytest.fixture
def magnetar(driver):
    """magnetar(record=None, block=64, period=256, extra=(), env=None) → a booted server on ``driver``;
    quit at teardown.
    A server that died (other than by /quit) fails the test."""
    started = []

    def _boot(record: Path | None = None, block: int = 64, period: int = 256, extra: tuple[str, ...] = (),
              env: dict[str, str] | None = None):
        try:
            s = boot_magnetar(driver, block=block, period=period, record=record, extra=extra, env=env)
        except BootError as e:
            pytest.fail(f"magnetar did not boot: {e}", pytrace=False)
        started.append(s)
        return s

    yield _boot
    crashed = [s for s in started if s.proc is not None and s.proc.poll() not in (None, 0)]
    for s in started:
        quit_server(s)
    if crashed:
        s = crashed[0]
        pytest.fail(f"magnetar exited with status {s.proc.returncode}:\n{s.output[-4000:]}", pytrace=False)


# ---------------------------------------------------------------------------------------------
# /magnetar_rtStats
# ---------------------------------------------------------------------------------------------


@dataclass
class RtStats:
    steady_periods: int
    steady_heap_ops: int
    audio_tid: int
    xruns: int
    # Later fields, in the order the server sends them (README: poolUsed poolPeak poolMisses
    # allPeriods allHeapOps parallelGroups diskUnderruns taskDeadlineMisses cHeapOps droppedTriggers
    # droppedMessages skippedFrames guardedSyscalls); older servers send none of them.
    more: tuple = ()

    @property
    def skipped_frames(self) -> int:
        """Frames the clock driver's schedule moved on by after late periods (0 when not sent)."""
        return self.more[11] if len(self.more) > 12 else 0

    def field(self, index: int) -> int | None:
        """One of the later fields by its position after xruns (0 = poolUsed; -1 = the last,
        guardedSyscalls), or None."""
        return self.more[index] if index < len(self.more) else None


def _parse_osc(data: bytes) -> tuple[str, list]:
    """Address and arguments of one OSC message; knows the int64 ('h') tag."""
    end = data.index(b"\0")
    address = data[:end].decode()
    pos = (end + 4) & ~3
    end = data.index(b"\0", pos)
    tags = data[pos + 1 : end].decode()
    pos = (end + 4) & ~3
    args: list = []
    for t in tags:
        if t == "h":
            args.append(struct.unpack_from(">q", data, pos)[0])
            pos += 8
        elif t == "i":
            args.append(struct.unpack_from(">i", data, pos)[0])
            pos += 4
        elif t == "f":
            args.append(struct.unpack_from(">f", data, pos)[0])
            pos += 4
        elif t == "s":
            end = data.index(b"\0", pos)
            args.append(data[pos:end].decode())
            pos = (end + 4) & ~3
        else:
            raise ValueError(f"unexpected type tag {t!r} in {data!r}")
    return address, args


def rt_stats(port: int, timeout: float = 2.0) -> RtStats:
    """Asks the server for ``/magnetar_rtStats`` on a socket of its own.

    (supriya's decoder does not know int64 arguments, so the shared client cannot read the reply.)
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(timeout)
        sock.sendto(OscMessage("/magnetar_rtStats").to_datagram(), ("127.0.0.1", port))
        while True:
            address, args = _parse_osc(sock.recv(65536))
            if address == "/magnetar_rtStats.reply":
                # The first four fields are documented; newer servers may append more.
                assert len(args) >= 4, f"/magnetar_rtStats.reply has {args}"
                return RtStats(*args[:4], more=tuple(args[4:]))


# ---------------------------------------------------------------------------------------------
# /proc counters of one thread
# ---------------------------------------------------------------------------------------------


@dataclass
class ThreadCounters:
    syscr: int
    syscw: int
    voluntary: int
    involuntary: int


def thread_counters(pid: int, tid: int) -> ThreadCounters:
    base = Path(f"/proc/{pid}/task/{tid}")
    io = dict(line.split(": ") for line in (base / "io").read_text().splitlines())
    status = dict(line.split(":\t", 1) for line in (base / "status").read_text().splitlines() if ":\t" in line)
    return ThreadCounters(
        syscr=int(io["syscr"]),
        syscw=int(io["syscw"]),
        voluntary=int(status["voluntary_ctxt_switches"]),
        involuntary=int(status["nonvoluntary_ctxt_switches"]),
    )


# ---------------------------------------------------------------------------------------------
# Signal analysis
# ---------------------------------------------------------------------------------------------


def sine_step_bound(amp: float, freq: float, sr: float) -> float:
    """Largest difference between neighbouring samples of amp·sin(2π·freq·t) sampled at sr."""
    return 2.0 * amp * math.sin(math.pi * freq / sr)


def tone_span(x, threshold: float = 1e-6) -> tuple[int, int]:
    """First and one-past-last index where |x| exceeds threshold (the tone's extent)."""
    import numpy as np

    idx = np.flatnonzero(np.abs(x) > threshold)
    if idx.size == 0:
        return 0, 0
    return int(idx[0]), int(idx[-1]) + 1


def zero_crossing_frequency(x, sr: float) -> float:
    """Frequency from upward zero crossings, each located by linear interpolation."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    assert up.size >= 3, "fewer than three upward zero crossings"
    frac = -x[up] / (x[up + 1] - x[up])
    t = (up + frac) / sr
    return (up.size - 1) / (t[-1] - t[0])


def fft_peak_frequency(x, sr: float) -> float:
    """Frequency of the largest spectral peak (Hann window, quadratic interpolation)."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    spec = np.abs(np.fft.rfft(x * np.hanning(x.size)))
    k = int(np.argmax(spec[1:-1])) + 1
    a, b, c = np.log(spec[k - 1 : k + 2] + 1e-300)
    delta = 0.5 * (a - c) / (a - 2 * b + c)
    return (k + delta) * sr / x.size


# ---------------------------------------------------------------------------------------------
# SynthDefs
# ---------------------------------------------------------------------------------------------


def busy_voice_def():
    """A voice that keeps every kind of unit busy: oscillator, feedback through
    LocalIn/LocalOut, two filters, a sustaining envelope, a delay and a panner."""
    from supriya import ugens as U
    from supriya.ugens import Envelope, SynthDefBuilder

    with SynthDefBuilder(freq=220.0, gate=1.0, amp=0.01, out=0.0) as b:
        feedback = U.LocalIn.ar(channel_count=1)
        source = U.SinOsc.ar(frequency=b["freq"]) * 0.5 + feedback * 0.3
        filtered = U.LPF.ar(source=U.RLPF.ar(source=source, frequency=1200.0, reciprocal_of_q=0.3), frequency=5000.0)
        delayed = U.DelayC.ar(source=filtered, maximum_delay_time=0.05, delay_time=0.013)
        U.LocalOut.ar(source=delayed)
        env = U.EnvGen.kr(envelope=Envelope.adsr(attack_time=0.01, decay_time=0.1, sustain=0.7), gate=b["gate"])
        U.Out.ar(bus=b["out"], source=U.Pan2.ar(source=delayed * env * b["amp"], position=0.0))
    return b.build(name="rt_busy_voice")


def sine_def():
    """amp · SinOsc(freq) on one bus."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder(freq=1000.0, amp=0.25, out=0.0) as b:
        U.Out.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * b["amp"])
    return b.build(name="rt_sine")


def compile_defs(*defs) -> bytes:
    from supriya.ugens import compile_synthdefs

    return compile_synthdefs(*defs)


def load_defs(client: OscClient, *defs) -> None:
    client.send(("/d_recv", compile_defs(*defs)))
    client.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)


def load_conv(client: OscClient, defs, ir: Path, sig: Path, sizes: tuple[int, ...]) -> None:
    """Loads ``defs``, reads the response ``ir`` into buffer 0 and the signal ``sig`` into
    buffer 1, and prepares buffer 2 from buffer 0 for MagnetarConv with partition ``sizes``
    (``/b_gen 2 "MagnetarConvPrepare" 0 sizes...``)."""
    load_defs(client, *defs)
    for bufnum, path in ((0, ir), (1, sig)):
        client.send(("/b_allocRead", bufnum, str(path)))
        client.wait_for("/done", lambda m: m.contents[0] == "/b_allocRead", timeout=5)
    client.send(prepare_message(2, 0, sizes))
    client.wait_for("/done", lambda m: m.contents[0] == "/b_gen", timeout=10)


# Runs whose timing the machine spoiled (the other test worker's real-time threads share the
# two cores) are played again, each on a fresh server, up to this many in all.
ATTEMPTS = 3


def until_on_time(run, late, attempts: int = ATTEMPTS):
    """Calls ``run(attempt)`` (each call plays on a fresh server) until ``late(result)``
    counts 0, at most ``attempts`` times; returns the last run's result and what ``late``
    counted on every run. The caller checks the last run, whatever it counted."""
    counted = []
    for attempt in range(attempts):
        result = run(attempt)
        counted.append(late(result))
        if counted[-1] == 0:
            break
    return result, counted


# How long a server may take to leave after /quit: closing a JACK client waits
# for jackd, and the recording is finished by a thread that may be starved on a
# loaded machine. A server still running at the deadline is terminated, and
# its exit status then fails the test as a crash: the deadline is for a hung
# server only.
QUIT_TIMEOUT = 30.0


def quit_server(server: ServerProcess, client: OscClient | None = None) -> None:
    """Asks the server to quit (closing its JACK client properly), then makes sure it is gone."""
    if server.alive():
        own = client is None
        c = client or OscClient(server.port)
        try:
            c.send(("/quit",))
            server.wait_exit(QUIT_TIMEOUT)
        finally:
            if own:
                c.close()
    server.stop()


# ---------------------------------------------------------------------------------------------
# Interference from outside the test
# ---------------------------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def foreign_rt_threads(own_pids: set[int]) -> dict[int, int]:
    """CPU time so far (clock ticks) of each SCHED_FIFO/SCHED_RR thread of processes not in own_pids.

    On a shared machine other real-time threads (other audio servers, a jackd, the suite's own
    servers in another worker) outrank or share our audio thread's cores; an xrun while they ran
    is not ours."""
    threads = {}
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit() or int(pid_dir.name) in own_pids:
            continue
        try:
            tasks = list((pid_dir / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            # Fields 14, 15 (utime, stime) and 41 (policy), counted from 1 with pid and comm first.
            if int(fields[41 - 3]) in (1, 2):
                threads[int(task.name)] = int(fields[14 - 3]) + int(fields[15 - 3])
    return threads


@dataclass
class ForeignRt:
    """What other real-time threads did between two samples of ``foreign_rt_threads``."""

    seconds: float
    started: int
    ended: int

    @staticmethod
    def between(before: dict[int, int], after: dict[int, int]) -> "ForeignRt":
        ticks = sum(cpu - before.get(tid, 0) for tid, cpu in after.items())
        started = sum(1 for tid in after if tid not in before)
        # A thread that ended took its CPU time with it: how much of it fell in the window is unknown.
        ended = sum(1 for tid in before if tid not in after)
        return ForeignRt(ticks / CLK_TCK, started, ended)


def steal_seconds() -> float:
    """Time the hypervisor gave our virtual CPUs to someone else, summed over CPUs."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()
    return int(fields[8]) / CLK_TCK


_PROBE = r"""
import os, sys, time
cpu, seconds, priority, min_gap = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
os.sched_setaffinity(0, {cpu})
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
except PermissionError:
    pass
print("ready", flush=True)
gaps = []
last = time.monotonic_ns()
end = last + int(seconds * 1e9)
while last < end:
    time.sleep(0.001)
    now = time.monotonic_ns()
    if now - last >= min_gap:
        gaps.append(f"{last} {now}")
    last = now
print("\n".join(gaps), flush=True)
"""


class StallProbe:
    """One small real-time thread per CPU, each waking every millisecond for a while and
    noting every time it was kept from running for at least ``min_gap`` seconds (a hypervisor
    pause, the machine's CPU quota running out, another thread at its priority or above).

    Started before a measurement window and read after it: an audio thread on the same machine
    at the same priority was held off at the same moments, and an xrun then says nothing about
    the server."""

    def __init__(self, seconds: float, min_gap: float, priority: int = 50):
        import subprocess

        self.procs = [
            subprocess.Popen(
                [sys.executable, "-c", _PROBE, str(cpu), str(seconds), str(priority), str(int(min_gap * 1e9))],
                stdout=subprocess.PIPE,
                text=True,
            )
            for cpu in range(os.cpu_count() or 1)
        ]
        for proc in self.procs:
            assert proc.stdout.readline().strip() == "ready"
        self.pids = {proc.pid for proc in self.procs}

    def stalls(self) -> list[tuple[float, float]]:
        """Waits for the probes; the moments (monotonic seconds, start and end) when at least one
        of them was held off, overlapping gaps of different CPUs merged into one."""
        gaps = []
        for proc in self.procs:
            out = proc.communicate(timeout=60)[0]
            assert proc.returncode == 0, f"stall probe failed: {out}"
            gaps += [tuple(int(t) / 1e9 for t in line.split()) for line in out.split("\n") if line.strip()]
        merged: list[tuple[float, float]] = []
        for begin, end in sorted(gaps):
            if merged and begin <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((begin, end))
        return merged
