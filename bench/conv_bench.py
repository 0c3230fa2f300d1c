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
output) that plays on JACK's dummy backend (period = block = 256) with the 5 s response for
SEARCH_SECONDS without an xrun that jackd blames on the client ("was not finished"; the dummy
driver's own late wake-ups on a shared machine are not the client's) or a task deadline miss (/magnetar_rtStats),
every synth running (magnetar gets 1 GB of real-time memory, -m; each channel keeps its own
copy of the spectra, about 4 MB for 5 s, so memory caps it near 250 channels):
PE tuned with -T 2, PE tuned with -T 1 (the whole server pinned to one CPU), PE with two sizes,
TD tuned, and scsynth's PartConv. The paper ran 60 s trials; the default here is shorter to fit a
shared machine's time, and is stated in the table.

Usage: python3 bench/conv_bench.py [--channels 8] [--seconds 3] [--search-seconds 10] [--no-search] [--no-write]
Updates the "conv" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
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

from rtcheck import PrivateJack, compile_defs, quit_server, rt_stats  # noqa: E402
from rtserver import OscClient, ServerProcess, bundle  # noqa: E402

BEGIN = "<!-- conv:begin -->"
END = "<!-- conv:end -->"
SR = 48000
EXAMPLE = ROOT / "target" / "release" / "examples" / "conv_bench"
MAGNETAR = os.environ.get("MAGNETAR", str(ROOT / "target" / "release" / "magnetar"))
SCSYNTH = os.environ.get("SCSYNTH", shutil.which("scsynth") or "/usr/bin/scsynth")
MISSES_FIELD = 7


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


class Capacity:
    """One server on a private JACK dummy server, playing `n` convolution channels."""

    def __init__(self, name: str, jack: PrivateJack, one_cpu: bool, tmp: Path):
        self.name, self.jack, self.one_cpu, self.tmp = name, jack, one_cpu, tmp
        self.label = name

    def try_channels(self, n: int, seconds: float) -> tuple[bool, str]:
        from supriya import ugens as U
        from supriya.ugens import SynthDefBuilder
        from supriya.ugens.core import UGen, param, ugen
        from magnetar_conv import MagnetarConv, MagnetarConvTD, prepare_message

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
        extra = ["-z", str(self.jack.period), "-Z", str(self.jack.period), "-m", str(1 << 21), "-n", "4096", *threads]
        server = ServerProcess(SCSYNTH if scsynth else MAGNETAR, extra=extra, env=env)
        server.start()
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
            for k in range(0, n, 16):
                client.send(bundle(None, *[("/s_new", "cv", -1, 0, 0, "buf", 1) for _ in range(k, min(n, k + 16))]))
                client.sync(timeout=30)
            running = client.status(timeout=5).contents[2]
            if running != n:
                # Out of real-time memory (each channel keeps its input spectra; the response's are shared).
                return False, f"only {running} of {n} synths running"
            time.sleep(1.5)
            log_start = len(self.jack.log_text())
            m0 = None if scsynth else rt_stats(server.port).field(MISSES_FIELD)
            time.sleep(seconds)
            lines = self.jack.log_text()[log_start:].splitlines()
            xruns = sum(1 for line in lines if "XRun" in line)
            late = sum(1 for line in lines if "was not finished" in line)
            misses = 0 if scsynth else rt_stats(server.port).field(MISSES_FIELD) - m0
            # The client's own lateness decides; the dummy driver waking late is the machine's.
            return late == 0 and misses == 0, f"{late} client-late xruns ({xruns} in all), {misses} misses"
        finally:
            quit_server(server, client)
            client.close()


def search(cap: Capacity, seconds: float, start: int, log, factor: float = 2.0, steps: int = 3) -> int:
    """Grows `start` by `factor` until a count fails (or shrinks it until one passes), then
    halves the gap `steps` times."""
    good, bad = 0, None
    n = start
    while n <= 1024:
        ok, why = cap.try_channels(n, seconds)
        log(f"  {getattr(cap, 'label', cap.name)}: {n} channels -> {'ok' if ok else 'FAIL'} ({why})")
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
        log(f"  {getattr(cap, 'label', cap.name)}: {n} channels -> {'ok' if ok else 'FAIL'} ({why})")
        if ok:
            good = n
        else:
            bad = n
    return good


VARIANTS = ("PE tuned -T 2", "PE tuned -T 1 (one CPU)", "PE 2 sizes -T 2", "TD 2 sizes -T 2", "TD tuned -T 2",
            "scsynth PartConv")


def part2(args, log) -> list[tuple[str, int]]:
    """Capacity searches; names are "<variant> @ block B, IR S s" when several settings run."""
    out = []
    starts = dict(kv.rsplit("=", 1) for kv in args.start)
    for block in args.search_block:
        for ir in args.search_ir:
            with tempfile.TemporaryDirectory() as t:
                tmp = Path(t)
                soundfile.write(tmp / "ir.wav", response(ir), SR, subtype="FLOAT")
                jack = PrivateJack(period=block)
                jack.start()
                try:
                    for name in args.variants:
                        cap = Capacity(name, jack, "-T 1" in name, tmp)
                        label = f"{name} @ block {block}, IR {ir:g} s"
                        cap.label = label
                        start = int(starts.get(name, 8))
                        out.append((label, search(cap, args.search_seconds, start, log, args.factor, args.steps)))
                finally:
                    jack.stop()
    return out


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


def caps_from_log(text: str) -> list[tuple[str, int]]:
    """The capacity results of an earlier run, from its log's probe lines."""
    best: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"  (.+?): (\d+) channels -> (ok|FAIL)", line)
        if m:
            best.setdefault(m[1], 0)
            if m[3] == "ok":
                best[m[1]] = max(best[m[1]], int(m[2]))
    return list(best.items())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--search-seconds", type=float, default=10.0)
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--search-block", type=int, nargs="+", default=[256], help="block sizes (= JACK periods) to search at")
    ap.add_argument("--search-ir", type=float, nargs="+", default=[5.0], help="response lengths (s) to search with")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--start", nargs="*", default=[], help="VARIANT=COUNT: where a variant's search starts (default 8)")
    ap.add_argument("--factor", type=float, default=2.0, help="growth of the count until it fails")
    ap.add_argument("--steps", type=int, default=3, help="bisection steps after the bracket")
    ap.add_argument("--no-part1", action="store_true", help="skip part 1 (times per block)")
    ap.add_argument("--note", default="", help="a paragraph for the table's notes (the machine's load, say)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--rows-from", help="take part 1's results from an earlier run's log instead of measuring")
    ap.add_argument("--caps-from", help="take the capacity results from an earlier run's log instead of searching")
    args = ap.parse_args()

    def log(m: str) -> None:
        print(m, flush=True)

    if not (args.no_part1 or args.rows_from):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "magnetar-engine", "--example", "conv_bench"], cwd=ROOT, check=True)
    if args.rows_from:
        rows = rows_from_log(Path(args.rows_from).read_text())
    else:
        rows = [] if args.no_part1 else part1(args, log)
    if args.caps_from:
        caps = caps_from_log(Path(args.caps_from).read_text())
    else:
        caps = [] if args.no_search else part2(args, log)
    cmd = f"python3 bench/conv_bench.py --channels {args.channels} --seconds {args.seconds} --search-seconds {args.search_seconds}"
    if caps and not args.caps_from:
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
            f"Largest channel count without a client-late xrun (jackd) or a task deadline miss, every synth running, "
            f"over {args.search_seconds:g} s per try on JACK's dummy backend, period = block; the count grows by "
            f"{args.factor:g}× from a start near the last result until it fails (or shrinks until it passes), then "
            f"{args.steps} bisection step(s), one try per count. `-T 1` pins the whole server to one CPU. "
            "A shared machine: counts swing between runs (see the notes below the table).",
            "",
            "| variant | block | IR | channels |",
            "|---|---|---|---|",
        ]
        for name, n in caps:
            m = re.match(r"(.+) @ block (\d+), IR ([\d.]+) s$", name)
            variant, block, ir = (m[1], m[2], m[3] + " s") if m else (name, "256", "5 s")
            lines.append(f"| {variant} | {block} | {ir} | {n} |")
        d = dict(caps)
        for name, n in caps:
            if name.startswith("PE tuned -T 2"):
                other = d.get(name.replace("PE tuned -T 2", "PE tuned -T 1 (one CPU)"))
                if other:
                    where = name.split(" @ ")[1] if " @ " in name else "block 256, IR 5 s"
                    lines += ["", f"PE tuned, two CPUs against one ({where}): {n / other:.2f}×."]
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
