#!/usr/bin/env python3
"""Convolution benchmark (paper 003's experiments): magnetar's MagnetarConv with its later
partitions on the task threads (PE), the same convolution sliced into the audio thread (TD), and
scsynth's PartConv on the same impulse response.

Part 1, audio-thread time per block and total CPU: 48 kHz, blocks of 64 and 256, responses of
1, 5 and 12 s, CHANNELS instances each, paced at the real-time rate for SECONDS
(`crates/engine/examples/conv_bench.rs`: the unit's own loop, the calling thread under
SCHED_FIFO 50 as the audio thread, the server's task threads for PE). Variants: PE with the
tuned layout, TD with the same layout, PE and TD with two partition sizes (block and 32 blocks,
the paper's TD setup), and magnetar's PartConv (scsynth's algorithm, FFT size 64 blocks:
latency 32 blocks) for the audio-thread split. scsynth's own PartConv is measured for CPU only
(its NRT render of the same channels, CPU seconds per second of audio), since its audio thread
cannot be timed from outside.

Part 2, capacity: the largest number of channels (WhiteNoise into the unit, summed to the
output) that plays on JACK's dummy backend (period = block) for SEARCH_SECONDS, every synth
running (magnetar gets 2 GB of real-time memory, -m; instances share the response's spectra and
keep their own input history), for PE tuned with -T 2 (synths in the root group: their heads
all on the audio thread), PE tuned with -T 2 in a parallel group (/p_new, with -g 1 since
WhiteNoise draws: the heads spread over both DSP threads), PE tuned with -T 1 (the whole server
pinned to one CPU), PE and TD with two sizes, TD tuned, and scsynth's PartConv. The machine's
own jitter is measured beside each try: an idle scsynth on a JACK dummy server of its own, same
period, runs through the search, and each try reports the client-late xruns ("was not
finished" in jackd's log; the dummy driver's own late wake-ups are not the client's) of both
servers over the same window. A count passes *strict* with no client-late xrun and no task
deadline miss (/magnetar_rtStats), *relative* with no deadline miss and no more client-late
xruns than the idle reference; the search follows strict, or relative at the blocks of
--relative-blocks (64 by default: this shared VM gives no client a clean minute at 1.33 ms),
and the table shows both figures and which one each row searched by. The paper ran 60 s trials.

The issue's whole experiment in one command (part 1, then capacity at blocks 64 and 256 with
responses of 1, 5 and 12 s for every variant, 60 s tries): 42 searches of at most 11 tries,
at most 9 h (`--plan` prints the searches and the bound and runs nothing; `--start` with last
results shortens it, `--search-seconds 2` makes a short trial of the same run):
  python3 bench/conv_bench.py --full

Two CPUs against one in one run (the paper's Fig. 5.4; prints, writes nothing; 6 searches, at
most 1.3 h):
  python3 bench/conv_bench.py --scaling --search-block 256 --search-ir 1 12 --search-seconds 60

Two builds at one count (--compare BIN_A BIN_B --count N): one search's try per count decides
little on a shared VM, so the same count is played by the two binaries alternately, --tries times
each, on one private JACK dummy server with one idle reference for all tries; prints each try
(pass or fail, client-late xruns of the server and the reference, deadline misses) and a
summary per build, writes nothing. With the variant, block, response and try length as for the
searches:
  python3 bench/conv_bench.py --compare OLD/magnetar NEW/magnetar --count 266 --tries 2 \
    --variants 'PE tuned -T 2 (parallel group)' --search-block 256 --search-ir 1 --search-seconds 60

Part 3 (--profile CHANNELS), for a busy machine: no capacity search, but the CPU time (the
scheduler's, per thread) that the audio thread, the DSP helper and the task threads spend per
block, and the CPU per channel, for a fixed number of channels with -T 1, -T 2 and -T 2 in a
parallel group, repeated in turn.

Usage: python3 bench/conv_bench.py [--full] [--plan] [--channels 8] [--seconds 3] [--search-seconds 10] [--no-search] [--no-write]
  [--search-block 256] [--search-ir 5] [--relative-blocks 64] [--no-reference] [--caps-from LOG ...]
  [--scaling] [--profile CHANNELS --profile-seconds 10 --profile-reps 3] [--compare BIN_A BIN_B --count N --tries 2]
Updates the "conv" section of BENCHMARKS.md (--caps-from: earlier runs' logs, merged).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "realtime"))
sys.path.insert(0, str(ROOT / "tests" / "compat"))
sys.path.insert(0, str(ROOT / "clients" / "supriya"))

from rtcheck import PrivateJack, compile_defs, quit_server, rt_stats, stop_cleanly_on_sigterm  # noqa: E402
from rtserver import OscClient, ServerProcess, bundle  # noqa: E402

BEGIN = "<!-- conv:begin -->"
END = "<!-- conv:end -->"
SR = 48000
EXAMPLE = ROOT / "target" / "release" / "examples" / "conv_bench"
MAGNETAR = os.environ.get("MAGNETAR", str(ROOT / "target" / "release" / "magnetar"))
SCSYNTH = os.environ.get("SCSYNTH", shutil.which("scsynth") or "/usr/bin/scsynth")
MISSES_FIELD = 7
# How long a capacity try's server may take to boot.
BOOT_SECONDS = 60.0


def run_example(unit: str, block: int, ir: float, channels: int, seconds: float, cpus: int, sizes=()) -> dict:
    cmd = [str(EXAMPLE), unit, str(block), str(ir), str(channels), str(seconds), str(cpus), *map(str, sizes)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def response(seconds: float) -> np.ndarray:
    n = int(seconds * SR)
    rng = np.random.default_rng(1)
    return (rng.uniform(-0.5, 0.5, n) * np.exp(-4.0 * np.arange(n) / n)).astype(np.float32)


def scsynth_partconv_cpu(block: int, ir: float, channels: int, seconds: float, fftsize: int, tmp: Path) -> float:
    """CPU seconds per second of audio of scsynth rendering `channels` PartConvs in NRT."""
    from nrt import Score, msg
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from supriya.ugens.core import UGen, param, ugen

    @ugen(ar=True)
    class PartConv(UGen):
        source = param()
        fftsize = param()
        ir_buffer_id = param()

    with SynthDefBuilder(buf=0) as b:
        U.Out.ar(bus=0, source=PartConv.ar(source=U.WhiteNoise.ar() * 0.1, fftsize=fftsize, ir_buffer_id=b["buf"]) * 0.01)
    d = b.build(name="pc")
    h = response(ir)
    soundfile.write(tmp / "ir.wav", h, SR, subtype="FLOAT")
    size = fftsize * -(-len(h) // (fftsize // 2))
    score = Score([d])
    score.add(0.0, msg("/b_allocRead", 0, str(tmp / "ir.wav")), msg("/b_alloc", 1, size))
    score.add(0.0, msg("/b_gen", 1, "PreparePartConv", 0, fftsize))
    for c in range(channels):
        score.add(0.0, msg("/s_new", "pc", 1000 + c, 0, 0, "buf", 1))
    score.end(seconds)
    (tmp / "score.osc").write_bytes(score.encode(str(tmp)))

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    c0 = cpu()
    subprocess.run(
        [SCSYNTH, "-z", str(block), "-o", "1", "-N", str(tmp / "score.osc"), "_", str(tmp / "o.wav"), str(SR), "WAV", "float"],
        capture_output=True, check=True, timeout=600,
    )
    return (cpu() - c0) / seconds


def part1(args, log) -> list[dict]:
    rows = []
    for block in (64, 256):
        for ir in (1.0, 5.0, 12.0):
            pe = run_example("MagnetarConv", block, ir, args.channels, args.seconds, 2)
            tuned = [int(x.split("x")[0]) for x in pe["layout"].split()[1:]]
            two = [32 * block]
            runs = [
                ("PE tuned", pe),
                ("TD tuned", run_example("MagnetarConvTD", block, ir, args.channels, args.seconds, 2, tuned)),
                ("PE 2 sizes", run_example("MagnetarConv", block, ir, args.channels, args.seconds, 2, two)),
                ("TD 2 sizes", run_example("MagnetarConvTD", block, ir, args.channels, args.seconds, 2, two)),
                ("PartConv (magnetar)", run_example("PartConv", block, ir, args.channels, args.seconds, 2, [64 * block])),
            ]
            with tempfile.TemporaryDirectory() as t:
                sc = scsynth_partconv_cpu(block, ir, args.channels, args.seconds, 64 * block, Path(t))
            for name, r in runs:
                r["variant"] = name
                rows.append(r)
                log(f"block {block} IR {ir}s {name}: {r}")
            rows.append({"variant": "PartConv (scsynth, NRT)", "block": block, "ir": ir, "channels": args.channels,
                         "layout": f"uniform {32 * block}, latency {32 * block}", "cpu_nrt": 100.0 * sc})
            log(f"block {block} IR {ir}s scsynth PartConv NRT CPU {100 * sc:.1f}%")
    return rows


def late_counts(text: str) -> tuple[int, int]:
    """(xruns jackd blames on a client, xruns in all) in a stretch of jackd's log."""
    lines = text.splitlines()
    return sum(1 for line in lines if "was not finished" in line), sum(1 for line in lines if "XRun" in line)


class IdleReference:
    """The machine's own jitter: an idle scsynth (no synths) on a JACK dummy server of its own,
    same rate and period as the measured one, running through every try, so that each try's
    xruns can be set against the ones a server doing nothing suffers in the same minute.
    Both processes are started here and stopped by their own handles (PIDs), nothing else."""

    def __init__(self, period: int):
        self.period = period
        self.jack = PrivateJack(period=period)
        self.server: ServerProcess | None = None

    def start(self) -> "IdleReference":
        self.jack.start()
        self._boot()
        return self

    def _boot(self) -> None:
        env = dict(os.environ)
        env.update({k: v for k, v in self.jack.env().items() if k.startswith("JACK")})
        env["SC_JACK_DEFAULT_OUTPUTS"] = "system"
        env.pop("MAGNETAR_RECORD", None)
        self.server = ServerProcess(SCSYNTH, extra=["-z", str(self.period), "-Z", str(self.period)], env=env)
        self.server.start()

    def mark(self) -> int:
        """Where the window starts (restarts the idle server first if it died)."""
        if self.server is None or not self.server.alive():
            self._boot()
        return len(self.jack.log_text())

    def since(self, mark: int) -> tuple[int, int]:
        return late_counts(self.jack.log_text()[mark:])

    def stop(self) -> None:
        if self.server is not None:
            quit_server(self.server)
            self.server = None
        self.jack.stop()


def verdicts(late: int, misses: int, ref_late: int | None) -> tuple[bool, bool | None]:
    """(strict, relative): strict = no client-late xrun and no deadline miss; relative = no
    deadline miss and no more client-late xruns than the idle reference in the same window."""
    return late == 0 and misses == 0, None if ref_late is None else (misses == 0 and late <= ref_late)


class Capacity:
    """One server on a private JACK dummy server, playing `n` convolution channels."""

    def __init__(self, name: str, jack: PrivateJack, one_cpu: bool, tmp: Path,
                 ref: IdleReference | None = None, criterion: str = "strict", binary: str = MAGNETAR):
        self.name, self.jack, self.one_cpu, self.tmp = name, jack, one_cpu, tmp
        self.ref, self.criterion, self.binary = ref, criterion, binary
        self.label = name
        # The last judged try's counts (None when not every synth ran), for callers that tabulate.
        self.last: dict | None = None

    def try_channels(self, n: int, seconds: float, measure=None) -> tuple[bool, str]:
        """Plays `n` channels for `seconds` and judges the try; with `measure`, calls it
        with the server and client instead, once every synth runs."""
        from supriya import ugens as U
        from supriya.ugens import SynthDefBuilder
        from supriya.ugens.core import UGen, param, ugen
        from magnetar_conv import MagnetarConv, MagnetarConvTD, prepare_message

        self.last = None

        @ugen(ar=True)
        class PartConv(UGen):
            source = param()
            fftsize = param()
            ir_buffer_id = param()

        scsynth = self.name.startswith("scsynth")
        fft = 64 * self.jack.period
        with SynthDefBuilder(buf=0) as b:
            src = U.WhiteNoise.ar() * 0.1
            if scsynth:
                sig = PartConv.ar(source=src, fftsize=fft, ir_buffer_id=b["buf"])
            else:
                unit = MagnetarConvTD if self.name.startswith("TD") else MagnetarConv
                sig = unit.ar(source=src, buffer_id=b["buf"])
            U.Out.ar(bus=0, source=sig * 0.001)
        d = b.build(name="cv")
        env = dict(os.environ)
        env.update({k: v for k, v in self.jack.env().items() if k.startswith("JACK")})
        env["SC_JACK_DEFAULT_OUTPUTS"] = "system"
        env.pop("MAGNETAR_RECORD", None)
        threads = [] if scsynth else ["-T", "1" if self.one_cpu else "2"]
        # In a parallel group each synth may run on either DSP thread; WhiteNoise draws random
        # numbers, so each synth takes its own generator (-g 1) to stay free of the order.
        par = "parallel group" in self.name
        if par:
            threads += ["-g", "1"]
        extra = ["-z", str(self.jack.period), "-Z", str(self.jack.period), "-m", str(1 << 21), "-n", "4096", *threads]
        server = ServerProcess(SCSYNTH if scsynth else self.binary, extra=extra, env=env)
        # The 2 GB pool is touched at boot: seconds on a quiet machine, past the harness's 10 s on
        # a loaded one, which would end a run of hours at one try.
        server.start(timeout=BOOT_SECONDS)
        client = OscClient(server.port)
        try:
            if self.one_cpu:
                subprocess.run(["taskset", "-a", "-cp", "0", str(server.pid)], capture_output=True, check=True)
            client.send(("/d_recv", compile_defs(d)))
            client.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
            client.send(("/b_allocRead", 0, str(self.tmp / "ir.wav")))
            client.wait_for("/done", lambda m: m.contents[0] == "/b_allocRead", timeout=10)
            if scsynth:
                frames = soundfile.info(str(self.tmp / "ir.wav")).frames
                client.send(("/b_alloc", 1, fft * -(-frames // (fft // 2))))
                client.wait_for("/done", lambda m: m.contents[0] == "/b_alloc", timeout=10)
                client.send(("/b_gen", 1, "PreparePartConv", 0, fft))
            else:
                sizes = (32 * self.jack.period,) if "2 sizes" in self.name else ()
                client.send(prepare_message(1, 0, sizes))
            client.wait_for("/done", lambda m: m.contents[0] == "/b_gen", timeout=30)
            target = 0
            if par:
                client.send(("/p_new", 2, 0, 0))
                target = 2
            for k in range(0, n, 16):
                client.send(bundle(None, *[("/s_new", "cv", -1, 1, target, "buf", 1) for _ in range(k, min(n, k + 16))]))
                try:
                    client.sync(timeout=30)
                except TimeoutError:
                    # So loaded that the control thread gets no CPU time: the count fails.
                    return False, f"only {k} of {n} synths running; search {self.criterion}"
            running = client.status(timeout=5).contents[2]
            if running != n:
                # Out of real-time memory (each channel keeps its input spectra; the response's are shared).
                return False, f"only {running} of {n} synths running; search {self.criterion}"
            time.sleep(1.5)
            if measure is not None:
                if not scsynth:
                    # The layout the server's tuner picked: the prepared buffer's header.
                    head = client.request(("/b_getn", 1, 0, 5 + 3 * 12), "/b_setn", timeout=5).contents[3:]
                    levels = int(head[4])
                    self.layout = " ".join(f"{int(head[5 + 3 * i])}x{int(head[6 + 3 * i])}" for i in range(levels))
                measure(server, client)
                return True, "measured"
            ref_start = self.ref.mark() if self.ref else None
            log_start = len(self.jack.log_text())
            m0 = None if scsynth else rt_stats(server.port).field(MISSES_FIELD)
            time.sleep(seconds)
            late, xruns = late_counts(self.jack.log_text()[log_start:])
            ref_late, ref_xruns = self.ref.since(ref_start) if self.ref else (None, None)
            misses = 0 if scsynth else rt_stats(server.port).field(MISSES_FIELD) - m0
            # The client's own lateness decides; the dummy driver waking late is the machine's.
            strict, relative = verdicts(late, misses, ref_late)
            self.last = {"late": late, "xruns": xruns, "misses": misses, "ref_late": ref_late,
                         "ref_xruns": ref_xruns, "strict": strict, "relative": relative}
            why = f"{late} client-late xruns ({xruns} in all), {misses} misses"
            if self.ref:
                why += (f"; idle reference {ref_late} client-late ({ref_xruns} in all)"
                        f"; strict {'ok' if strict else 'FAIL'}, relative {'ok' if relative else 'FAIL'}")
            why += f"; search {self.criterion}"
            return (relative if self.criterion == "relative" else strict), why
        finally:
            quit_server(server, client)
            client.close()


def probe_line(cap: Capacity, n: int, ok: bool, why: str) -> str:
    """A try's log line, in the form `caps_from_log` reads back."""
    return f"  {getattr(cap, 'label', cap.name)}: {n} channels -> {'ok' if ok else 'FAIL'} ({why})"


def search(cap: Capacity, seconds: float, start: int, log, factor: float = 2.0, steps: int = 3) -> int:
    """Grows `start` by `factor` until a count fails (or shrinks it until one passes), then
    halves the gap `steps` times."""
    good, bad = 0, None
    n = start
    while n <= 1024:
        ok, why = cap.try_channels(n, seconds)
        log(probe_line(cap, n, ok, why))
        if ok:
            good = n
            if bad is not None:
                break
            n = max(n + 1, int(n * factor))
        else:
            bad = n
            if good or n == 1:
                break
            n = max(1, int(n / factor))
    for _ in range(steps):
        if bad is None or bad - good <= 1:
            break
        n = (good + bad) // 2
        ok, why = cap.try_channels(n, seconds)
        log(probe_line(cap, n, ok, why))
        if ok:
            good = n
        else:
            bad = n
    return good


def most_tries(start: int, factor: float, steps: int) -> int:
    """The most tries `search` makes from `start`: all growth steps to 1024 (or all shrinking
    steps to 1), then every bisection step."""
    grow, n = 0, start
    while n <= 1024:
        grow, n = grow + 1, max(n + 1, int(n * factor))
    shrink, n = 1, start
    while n > 1:
        shrink, n = shrink + 1, max(1, int(n / factor))
    return max(grow, shrink) + steps


# Wall time a capacity try takes beyond its SEARCH_SECONDS: boot the server, read and prepare
# the response, start and acknowledge the synths, quit. Measured: `--scaling --search-block 256
# --search-ir 1 12 --search-seconds 2` made 57 tries in 640 s (tens to hundreds of channels,
# load average 11-14), 11.2 s a try. Part 1 takes about PART1_PER_SETTING per setting at the
# default 8 channels and 3 s.
TRY_OVERHEAD = 9.0
PART1_PER_SETTING = 60.0


def plan(args) -> str:
    """What the run will do and the longest it may take, from the settings alone (a search
    started from 8 channels that reaches hundreds makes nearly its most tries; one started near
    its result, about half)."""
    starts = dict(kv.rsplit("=", 1) for kv in args.start)
    searches = [(b, ir, v) for b in args.search_block for ir in args.search_ir for v in args.variants]
    tries = sum(most_tries(int(starts.get(v, 8)), args.factor, args.steps) for _, _, v in searches)
    part1 = 0.0 if (args.no_part1 or args.rows_from) else 6 * PART1_PER_SETTING * max(1.0, args.seconds / 3.0)
    search_s = 0.0 if args.no_search else tries * (args.search_seconds + TRY_OVERHEAD)
    return (
        f"plan: part 1 {'skipped' if not part1 else f'6 settings, about {part1 / 60:.0f} min'}; "
        + ("no capacity search" if args.no_search else
           f"{len(searches)} capacity searches (blocks {' '.join(map(str, args.search_block))}, "
           f"IR {' '.join(f'{v:g}' for v in args.search_ir)} s, {len(args.variants)} variants), "
           f"at most {tries} tries of {args.search_seconds:g} s (+ about {TRY_OVERHEAD:g} s each)")
        + f": at most {(part1 + search_s) / 3600:.1f} h"
    )


VARIANTS = ("PE tuned -T 2", "PE tuned -T 2 (parallel group)", "PE tuned -T 1 (one CPU)", "PE 2 sizes -T 2",
            "TD 2 sizes -T 2", "TD tuned -T 2", "scsynth PartConv")
# `--scaling`: two CPUs against one, the paper's Fig. 5.4, in one run.
SCALING = ("PE tuned -T 2", "PE tuned -T 2 (parallel group)", "PE tuned -T 1 (one CPU)")


def uptime() -> str:
    """The load averages, as `uptime` prints them."""
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


@contextlib.contextmanager
def setting(args, block: int, ir: float):
    """What every try at one block and response shares: the response in a temporary folder, a
    private JACK dummy server (period = block) and, unless --no-reference, the idle reference on
    one of its own; yields (folder, jack, reference or None, criterion). Both servers are
    stopped by their own handles when the setting's tries are done."""
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        soundfile.write(tmp / "ir.wav", response(ir), SR, subtype="FLOAT")
        jack = PrivateJack(period=block)
        jack.start()
        ref = None if args.no_reference else IdleReference(block)
        try:
            if ref:
                ref.start()
            yield tmp, jack, ref, "relative" if block in args.relative_blocks and ref else "strict"
        finally:
            if ref:
                ref.stop()
            jack.stop()


def now() -> str:
    return time.strftime("%H:%M:%S", time.gmtime())


def part2(args, log) -> list[tuple[str, int]]:
    """Capacity searches; names are "<variant> @ block B, IR S s" when several settings run."""
    out = []
    starts = dict(kv.rsplit("=", 1) for kv in args.start)
    for block in args.search_block:
        for ir in args.search_ir:
            with setting(args, block, ir) as (tmp, jack, ref, criterion):
                for name in args.variants:
                    cap = Capacity(name, jack, "-T 1" in name, tmp, ref, criterion)
                    label = f"{name} @ block {block}, IR {ir:g} s"
                    cap.label = label
                    start = int(starts.get(name, 8))
                    log(f"# {label}: start {now()} UTC, {uptime()}")
                    out.append((label, search(cap, args.search_seconds, start, log, args.factor, args.steps)))
                    log(f"# {label}: end {now()} UTC, {uptime()}")
    return out


def compare(args, log) -> list[dict]:
    """The same count played by two binaries alternately (A, B, A, B, ...), `args.tries` times
    each, for every variant, block and response: one search's try per count cannot tell two
    builds apart on a shared machine, several alternate tries in the same minutes can. Each try
    is judged as the search judges it (strict, or relative at --relative-blocks)."""
    rows = []
    builds = (("A", args.compare[0]), ("B", args.compare[1]))
    for block in args.search_block:
        for ir in args.search_ir:
            with setting(args, block, ir) as (tmp, jack, ref, criterion):
                for name in args.variants:
                    for k in range(args.tries):
                        for tag, binary in builds:
                            cap = Capacity(name, jack, "-T 1" in name, tmp, ref, criterion, binary)
                            cap.label = f"{tag} {name} @ block {block}, IR {ir:g} s"
                            at = now()
                            log(f"# {cap.label}: try {k + 1} of {args.tries}, {at} UTC, {uptime()}")
                            ok, why = cap.try_channels(args.count, args.search_seconds)
                            log(probe_line(cap, args.count, ok, why))
                            rows.append({"utc": at, "build": tag, "variant": name, "block": block, "ir": ir,
                                         "criterion": criterion, "ok": ok, "last": cap.last})
    return rows


def compare_report(args, rows: list[dict]) -> list[str]:
    """The tries as a table (the form of BENCHMARKS.md's A/B table) and a summary line per
    build and setting."""
    builds = {"A": args.compare[0], "B": args.compare[1]}
    lines = ["| UTC | build | variant | block | IR | channels | result | client-late xruns (server / reference) | deadline misses |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        last = r["last"]
        if last is None:
            xr, misses = "not every synth ran", ""
        else:
            xr = f"{last['late']} / {'–' if last['ref_late'] is None else last['ref_late']}"
            misses = str(last["misses"])
        lines.append(f"| {r['utc']} | {r['build']} | {r['variant']} | {r['block']} | {r['ir']:g} s | {args.count} | "
                     f"{'passed' if r['ok'] else 'failed'} | {xr} | {misses} |")
    lines.append("")
    for key in dict.fromkeys((r["variant"], r["block"], r["ir"], r["criterion"]) for r in rows):
        name, block, ir, criterion = key
        per = []
        for tag in builds:
            rs = [r for r in rows if (r["variant"], r["block"], r["ir"], r["criterion"]) == key and r["build"] == tag]
            misses = sum(r["last"]["misses"] for r in rs if r["last"])
            late = sum(r["last"]["late"] for r in rs if r["last"])
            per.append(f"{tag} passed {sum(r['ok'] for r in rs)} of {len(rs)} "
                       f"({late} client-late xruns, {misses} deadline misses in all)")
        lines.append(f"summary: {name} @ block {block}, IR {ir:g} s, {args.count} channels, "
                     f"{args.search_seconds:g} s tries, {criterion}: {'; '.join(per)}")
    lines += [f"{tag} = {path}" for tag, path in builds.items()]
    return lines


def thread_times(pid: int) -> dict[int, tuple[str, float]]:
    """Each thread of a process: (name, seconds it has run on a CPU), from the scheduler's
    own accounting (/proc/PID/task/TID/schedstat, nanoseconds): CPU time, not wall time, so
    other work on the machine stretches it little."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            ns = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        out[int(task.name)] = (name, ns * 1e-9)
    return out


PROFILES = ("-T 1 (one CPU)", "-T 2", "-T 2 (parallel group)")


def profile_once(config: str, block: int, ir: float, n: int, seconds: float, tmp: Path) -> dict:
    """Plays `n` PE channels (tuned layout) on a private JACK dummy server for `seconds` and
    returns the CPU time of each kind of thread per block and per channel."""
    jack = PrivateJack(period=block)
    jack.start()
    try:
        cap = Capacity(f"PE tuned {config}", jack, "-T 1" in config, tmp)
        held = {}

        def measure(server, client) -> None:
            stats = rt_stats(server.port)
            t0, m0, p0 = thread_times(server.pid), stats.field(MISSES_FIELD), stats.field(5)
            log_start = len(jack.log_text())
            w0 = time.monotonic()
            time.sleep(seconds)
            wall = time.monotonic() - w0
            t1 = thread_times(server.pid)
            stats = rt_stats(server.port)
            late, xruns = late_counts(jack.log_text()[log_start:])
            kinds: dict[str, float] = {"audio": 0.0, "dsp helper": 0.0, "tasks": 0.0, "other": 0.0}
            for tid, (name, sec) in t1.items():
                d = sec - t0.get(tid, (name, 0.0))[1]
                kind = ("audio" if tid == stats.audio_tid else "dsp helper" if name.startswith("mg-dsp")
                        else "tasks" if name.startswith("magnetar-task") else "other")
                kinds[kind] += d
            blocks = wall * SR / block
            held.update({
                "config": config, "block": block, "ir": ir, "channels": n, "wall": wall,
                **{f"{k} us/block": 1e6 * v / blocks for k, v in kinds.items()},
                "cpu % per channel": 100.0 * sum(kinds.values()) / wall / n,
                "client-late xruns": late, "xruns": xruns, "misses": stats.field(MISSES_FIELD) - m0,
                "spread blocks %": 100.0 * (stats.field(5) - p0) / blocks,
            })

        ok, why = cap.try_channels(n, 0.0, measure)
        if not held:
            raise RuntimeError(f"{config}: {why}")
        held["layout"] = getattr(cap, "layout", "")
        return held
    finally:
        jack.stop()


def part3(args, log) -> list[dict]:
    """Thread profile under the machine's load: interleaved repetitions of each placement."""
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for block in args.search_block:
            for ir in args.search_ir:
                soundfile.write(tmp / "ir.wav", response(ir), SR, subtype="FLOAT")
                for rep in range(args.profile_reps):
                    for config in args.profile_configs:
                        r = profile_once(config, block, ir, args.profile, args.profile_seconds, tmp)
                        r["rep"] = rep
                        log(f"profile {uptime()}: {r}")
                        rows.append(r)
    return rows


def profile_table(rows: list[dict]) -> list[str]:
    import statistics

    lines = ["| block | IR | channels | placement | layouts (size x count) | audio thread µs/block | DSP helper µs/block | task threads µs/block "
             "| other µs/block | CPU % per channel | client-late xruns | deadline misses | blocks spread % | reps |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["block"], r["ir"], r["channels"], r["config"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2], PROFILES.index(k[3])))
    for k in keys:
        rs = [r for r in rows if (r["block"], r["ir"], r["channels"], r["config"]) == k]
        med = lambda f: statistics.median(r[f] for r in rs)  # noqa: E731
        layouts = "; ".join(sorted({r.get("layout", "") for r in rs}))
        lines.append(f"| {k[0]} | {k[1]:g} s | {k[2]} | {k[3]} | {layouts} | {med('audio us/block'):.0f} | {med('dsp helper us/block'):.0f} | "
                     f"{med('tasks us/block'):.0f} | {med('other us/block'):.0f} | {med('cpu % per channel'):.2f} | "
                     f"{sum(r['client-late xruns'] for r in rs)} | {sum(r['misses'] for r in rs)} | "
                     f"{med('spread blocks %'):.0f} | {len(rs)} |")
    return lines


def rows_from_log(text: str) -> list[dict]:
    """Part 1's results of an earlier run, from its log."""
    import ast

    rows = []
    for line in text.splitlines():
        m = re.match(r"block (\d+) IR ([\d.]+)s (.+?): (\{.*\})$", line)
        if m:
            rows.append(ast.literal_eval(m[4]))
            continue
        m = re.match(r"block (\d+) IR ([\d.]+)s scsynth PartConv NRT CPU ([\d.]+)%", line)
        if m:
            b = int(m[1])
            rows.append({"variant": "PartConv (scsynth, NRT)", "block": b, "ir": float(m[2]),
                         "layout": f"uniform {32 * b}, latency {32 * b}", "cpu_nrt": float(m[3])})
    return rows


PROBE = re.compile(
    r"  (?P<label>.+?): (?P<n>\d+) channels -> (?:ok|FAIL) \((?:only \d+ of \d+ synths running"
    r"|(?P<late>\d+) client-late xruns \((?P<xruns>\d+) in all\), (?P<misses>\d+) misses"
    r"(?:; idle reference (?P<ref>\d+) client-late \((?P<refx>\d+) in all\)[^;)]*(?:;[^;)]*)?)?)"
    r"(?:; search (?P<crit>\w+))?\)"
)
LOAD = re.compile(r"# (?P<label>.+?): (?P<at>start|end) (?P<time>[\d:]+) UTC, load average (?P<load>[\d.]+)")


def caps_from_log(text: str) -> dict[str, dict]:
    """The capacity results of a run, from its log's probe lines: per label, the criterion the
    search used, the largest count that passed each criterion (relative: None when the try had
    no idle reference), the xruns at those counts, and the load at the search's start and end."""
    caps: dict[str, dict] = {}
    for line in text.splitlines():
        m = LOAD.match(line)
        if m:
            c = caps.setdefault(m["label"], {"tries": []})
            c[m["at"]] = f"{m['load']} ({m['time']})"
            continue
        m = PROBE.match(line)
        if not m:
            continue
        c = caps.setdefault(m["label"], {"tries": []})
        c["criterion"] = m["crit"] or "strict"
        if m["late"] is None:  # not every synth ran: fails both ways
            c["tries"].append((int(m["n"]), None, None, None))
        else:
            ref = None if m["ref"] is None else int(m["ref"])
            c["tries"].append((int(m["n"]), int(m["late"]), int(m["misses"]), ref))
    for c in caps.values():
        c.setdefault("criterion", "strict")
        strict = [(n, late, ref) for n, late, misses, ref in c["tries"] if late is not None and verdicts(late, misses, ref)[0]]
        rel = [(n, late, ref) for n, late, misses, ref in c["tries"] if late is not None and verdicts(late, misses, ref)[1]]
        has_ref = any(t[3] is not None for t in c["tries"])
        c["strict"] = max(strict, default=(0, None, None))
        c["relative"] = max(rel, default=(0, None, None)) if has_ref else None
        c["channels"] = (c["relative"] if c["criterion"] == "relative" else c["strict"])[0]
    return caps


def caps_from_logs(paths: list[str]) -> dict[str, dict]:
    """Several runs' logs; a later log's search replaces an earlier one's for the same setting."""
    caps: dict[str, dict] = {}
    for path in paths:
        caps.update(caps_from_log(Path(path).read_text()))
    return caps


def capacity_table(caps: dict[str, dict]) -> list[str]:
    def key(label: str):
        m = re.match(r"(.+) @ block (\d+), IR ([\d.]+) s$", label)
        v = m[1] if m else label
        return (int(m[2]) if m else 256, float(m[3]) if m else 5.0, VARIANTS.index(v) if v in VARIANTS else 99)

    def at(fig) -> str:
        n, late, ref = fig
        if not n:
            return "none of the counts tried"
        return f"{n} ({late} / {'–' if ref is None else ref})"

    lines = [
        "| variant | block | IR | search criterion | channels | strict: zero client-late xruns (server / idle reference xruns at that count) | relative: not above the idle reference (server / reference) | load average at the search's start → end (UTC) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label in sorted(caps, key=key):
        c = caps[label]
        m = re.match(r"(.+) @ block (\d+), IR ([\d.]+) s$", label)
        variant, block, ir = (m[1], m[2], m[3] + " s") if m else (label, "256", "5 s")
        rel = "not measured (no reference)" if c["relative"] is None else at(c["relative"])
        load = f"{c['start']} → {c['end']}" if "start" in c and "end" in c else ""
        if "start" in c and "end" not in c:
            load = f"{c['start']} → search cut short (no bisection)"
        lines.append(f"| {variant} | {block} | {ir} | {c['criterion']} | {c['channels']} | {at(c['strict'])} | {rel} | {load} |")
    for label, c in sorted(caps.items(), key=lambda kv: key(kv[0])):
        for two in ("PE tuned -T 2 (parallel group)", "PE tuned -T 2"):
            if label.startswith(two):
                break
        else:
            continue
        other = caps.get(label.replace(two, "PE tuned -T 1 (one CPU)"))
        if other and other["channels"] and other["criterion"] == c["criterion"]:
            where = label.split(" @ ")[1] if " @ " in label else "block 256, IR 5 s"
            how = " in a parallel group" if "parallel group" in two else ""
            lines += ["", f"PE tuned, two CPUs{how} against one ({where}, {c['criterion']}): "
                          f"{c['channels']} / {other['channels']} = {c['channels'] / other['channels']:.2f}×."]
    return lines


def main() -> int:
    stop_cleanly_on_sigterm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--search-seconds", type=float, default=None,
                    help="length of each capacity try (default 10 s; 60 s with --full, as the paper)")
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--search-block", type=int, nargs="+", default=[256], help="block sizes (= JACK periods) to search at")
    ap.add_argument("--search-ir", type=float, nargs="+", default=[5.0], help="response lengths (s) to search with")
    ap.add_argument("--variants", nargs="+", default=None, choices=VARIANTS,
                    help="default: all of them (with --compare, all but scsynth PartConv)")
    ap.add_argument("--start", nargs="*", default=[], help="VARIANT=COUNT: where a variant's search starts (default 8)")
    ap.add_argument("--factor", type=float, default=2.0, help="growth of the count until it fails")
    ap.add_argument("--steps", type=int, default=3, help="bisection steps after the bracket")
    ap.add_argument("--no-part1", action="store_true", help="skip part 1 (times per block)")
    ap.add_argument("--note", default="", help="a paragraph for the table's notes (the machine's load, say)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--full", action="store_true",
                    help="issue 15's whole experiment: part 1, then capacity at blocks 64 and 256 with responses of "
                         "1, 5 and 12 s for every variant (-T 1 and -T 2 among them), 60 s tries unless "
                         "--search-seconds says otherwise; --plan prints how long it may take")
    ap.add_argument("--plan", action="store_true", help="print the searches and how long they may take, run nothing")
    ap.add_argument("--scaling", action="store_true",
                    help="capacity of PE tuned with -T 2 (channels in the root group, and in a parallel group) "
                         "against -T 1, nothing else (no part 1); prints the table and writes nothing")
    ap.add_argument("--profile", type=int, default=0, metavar="CHANNELS",
                    help="instead of capacity searches: CPU time of the audio thread, the DSP helper and the task "
                         "threads per block, and CPU per channel, for CHANNELS channels with -T 1, -T 2 and -T 2 "
                         "in a parallel group (interleaved repetitions); prints, writes nothing")
    ap.add_argument("--profile-seconds", type=float, default=10.0)
    ap.add_argument("--profile-reps", type=int, default=3)
    ap.add_argument("--profile-configs", nargs="+", default=list(PROFILES), choices=PROFILES)
    ap.add_argument("--compare", nargs=2, metavar=("BIN_A", "BIN_B"),
                    help="instead of searches: play --count channels with two magnetar binaries alternately, "
                         "--tries times each, for each variant, block (--search-block) and response (--search-ir); "
                         "prints each try and a summary, writes nothing")
    ap.add_argument("--count", type=int, default=0, help="with --compare: the channels every try plays")
    ap.add_argument("--tries", type=int, default=2, help="with --compare: tries per binary")
    ap.add_argument("--rows-from", help="take part 1's results from an earlier run's log instead of measuring")
    ap.add_argument("--caps-from", nargs="+", default=[],
                    help="capacity results of earlier runs' logs (a later log's search replaces an earlier one's; "
                         "a search run now replaces them all for its settings)")
    ap.add_argument("--no-reference", action="store_true",
                    help="no idle scsynth on a JACK server of its own as the reference for the machine's jitter")
    ap.add_argument("--relative-blocks", type=int, nargs="*", default=[64],
                    help="block sizes whose search passes a count whose client-late xruns are not above the idle "
                         "reference's in the same window (the others: zero client-late xruns)")
    args = ap.parse_args()
    if args.full:
        args.search_block, args.search_ir, args.variants = [64, 256], [1.0, 5.0, 12.0], list(VARIANTS)
    if args.search_seconds is None:
        args.search_seconds = 60.0 if args.full else 10.0
    if args.scaling:
        args.variants, args.no_part1, args.no_write = list(SCALING), True, True
    if args.variants is None:
        args.variants = [v for v in VARIANTS if not (args.compare and v == "scsynth PartConv")]
    if args.compare:
        if args.count < 1 or args.tries < 1:
            ap.error("--compare needs --count N (N >= 1) and --tries K (K >= 1)")
        if "scsynth PartConv" in args.variants:
            ap.error("--compare plays magnetar binaries: name the variants (--variants), without scsynth PartConv")
        for b in args.compare:
            if not (os.path.isfile(b) and os.access(b, os.X_OK)):
                ap.error(f"--compare: {b} is not an executable file")
    logged: list[str] = []

    def log(m: str) -> None:
        logged.append(m)
        print(m, flush=True)

    if args.compare:
        n = 2 * args.tries * len(args.variants) * len(args.search_block) * len(args.search_ir)
        log(f"# compare: {n} tries of {args.search_seconds:g} s (+ about {TRY_OVERHEAD:g} s each), "
            f"about {n * (args.search_seconds + TRY_OVERHEAD) / 60:.0f} min")
        if args.plan:
            return 0
        print("\n".join(compare_report(args, compare(args, log))))
        return 0
    if not args.profile:
        if args.plan:
            print(plan(args))
            return 0
        log(f"# {plan(args)}")

    if args.profile:
        print("\n".join(profile_table(part3(args, log))))
        return 0
    if not (args.no_part1 or args.rows_from):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "magnetar-engine", "--example", "conv_bench"], cwd=ROOT, check=True)
    if args.rows_from:
        rows = rows_from_log(Path(args.rows_from).read_text())
    else:
        rows = [] if args.no_part1 else part1(args, log)
    caps = caps_from_logs(args.caps_from)
    if not args.no_search:
        part2(args, log)
        caps.update(caps_from_log("\n".join(logged)))
    cmd = f"python3 bench/conv_bench.py --channels {args.channels} --seconds {args.seconds} --search-seconds {args.search_seconds}"
    if not args.no_search:
        cmd += f" --search-block {' '.join(map(str, args.search_block))} --search-ir {' '.join(f'{v:g}' for v in args.search_ir)} --factor {args.factor:g} --steps {args.steps}"
    lines = [
        BEGIN,
        "## Zero-latency convolution: tasks (PE) against slices in the audio thread (TD) and PartConv",
        "",
        f"`{cmd}` ({time.strftime('%Y-%m-%d')}, 2-core VM shared with other work). "
        f"{args.channels} channels, 48 kHz, paced at the real-time rate for {args.seconds:g} s; audio-thread time is "
        "what the audio thread spends in the units per block (PE: level 0 only; the rest on the task threads); "
        "CPU is the whole process (audio thread and task threads) over wall time, including the pacing "
        "loop's wake-ups (a few percent), so it separates the variants less than the per-block times do. "
        "PartConv (magnetar) is the "
        "port of scsynth's algorithm with a latency of 32 blocks; scsynth's own PartConv is measured as CPU "
        "seconds per second of audio in an NRT render (FFTW).",
        "",
        "| block | IR | variant | layout (size x count) | audio thread mean µs | p99.9 µs | max µs | block period µs | CPU % | deadline misses | periods lost by the pacing |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "cpu_nrt" in r:
            lines.append(f"| {r['block']} | {r['ir']:g} s | {r['variant']} | {r['layout']} | | | | | {r['cpu_nrt']:.1f} (NRT) | | |")
        else:
            lines.append(
                f"| {r['block']} | {r['ir']:g} s | {r['variant']} | {r['layout']} | {r['mean_us']:.1f} | {r['p999_us']:.1f} | "
                f"{r['max_us']:.1f} | {r['period_us']:.0f} | {r['cpu_pct']:.1f} | {r['misses']} | {r.get('late', '')} |"
            )
    if caps:
        lines += [
            "",
            "Capacity: the largest number of channels (WhiteNoise into the unit, summed to the output; every synth "
            f"running) that plays {args.search_seconds:g} s per try on JACK's dummy backend, period = block, "
            "by one of two criteria, named in each row. **Strict**: no xrun that jackd blames on the client "
            "(\"was not finished\") and no task deadline miss (`/magnetar_rtStats`). **Relative** (used at block 64): "
            "no deadline miss, and no more client-late xruns than an idle scsynth suffers in the same window on a "
            "JACK dummy server of its own with the same period (the reference, started by the bench for the whole "
            "search, its xruns counted over exactly the try's window). The relative criterion measures what the "
            "server's own load costs above the machine's jitter: on this VM an idle client at a 1.33 ms period is "
            "late tens of times a minute, so no count passes the strict one at block 64. Every row shows both: the "
            "figure by the criterion its search used, and the largest count tried that passes each criterion, with "
            "the server's and the reference's client-late xruns at that count (– where the try had no reference). "
            f"The count grows by the factor from a start near the last result until it fails (or shrinks until it "
            "passes), then a few bisection steps, one try per count. `-T 1` pins the whole server to one CPU. "
            "A shared machine: counts swing with the load (its 1-minute average at each search's start and end is "
            "in the row; see the notes below the table).",
            "",
            *capacity_table(caps),
        ]
    if args.note:
        lines += ["", args.note]
    lines += [
        "",
        "Paper 003 (its Fig. 5.1–5.4, no absolute numbers): TD and PE with two partition sizes within a few "
        "percent in CPU, PE with tuned partitions far lower; channels without dropouts on one core PEO > PE2 > TD; "
        "several cores 1.23–1.83× one core.",
        END,
    ]
    if not args.no_write:
        write_section(BEGIN, END, "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
