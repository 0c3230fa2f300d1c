#!/usr/bin/env python3
"""Xrun benchmark: scsynth, supernova and magnetar, one after the other, on the same JACK dummy server.

For each JACK period (default 64 and 256 frames at 48 kHz) and each server, counts xruns over
a fixed time idle and with a load of synths of a small def (4 FSinOsc summed into Out), all in
one parallel group (/p_new; scsynth runs it as a plain group).  Then, at each search period
(default the smallest), finds by search the largest number of those synths each server
plays for a whole minute without an xrun (a count that xruns gets one more try by default;
the servers take turns, one probe each per round).
Servers: scsynth, magnetar with one thread and with two, supernova with two (`--servers`
picks some).

Xruns are counted the same way for both servers: from jackd's own reports during the server's
run ("JackEngine::XRun: client = ... was not finished" when the client was late, and
"JackTimedDriver::Process XRun" when the dummy driver itself woke late, which a busy machine
causes whoever the client is).  magnetar's own count (/magnetar_rtStats) is shown beside it.

Usage: python3 bench/rt_xruns.py [--seconds 30] [--load 50] [--periods 64 256] [--search-period P ...]
                                 [--search-seconds 60] [--search-budget 1200] [--search-start 500]
                                 [--search-retries 1]
                                 [--servers NAME ...] [--no-search] [--no-write]
Environment: MAGNETAR (default target/release/magnetar), SCSYNTH (default scsynth on PATH),
SUPERNOVA (default supernova on PATH).
Updates the "rt-xruns" section of BENCHMARKS.md when every server completed every run.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "realtime"))

from rtcheck import PrivateJack, compile_defs, quit_server, rt_stats, stop_cleanly_on_sigterm  # noqa: E402
from rtserver import BootError, OscClient, ServerProcess, bundle, executables  # noqa: E402

BEGIN = "<!-- rt-xruns:begin -->"
END = "<!-- rt-xruns:end -->"
RATE = 48000
BLOCK = 64
DEF_NAME = "xrun_fsin4"
GROUP = 2  # the parallel group every synth goes into
MAX_NODES = 32768
RT_MEMORY_KB = 262144
XRUN_LINE = re.compile(r"XRun")
CLIENT_XRUN = re.compile(r"JackEngine::XRun: client = (.*) was not finished")


def load_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder(freq=440.0, amp=0.0005, out=0.0) as b:
        f = b["freq"]
        s = U.FSinOsc.ar(frequency=f) + U.FSinOsc.ar(frequency=f * 1.5)
        s = s + U.FSinOsc.ar(frequency=f * 2.0) + U.FSinOsc.ar(frequency=f * 2.5)
        U.Out.ar(bus=b["out"], source=s * b["amp"])
    return b.build(name=DEF_NAME)


@dataclass
class Count:
    jack_xruns: int  # every XRun line jackd printed in the window
    client_late: int  # of which: the client was not finished in time
    own_xruns: int | None  # magnetar's own count; None for scsynth
    seconds: float
    stopped_early: bool = False


class Session:
    """One server on the JACK server, with a client and a way to count jackd's xrun reports."""

    def __init__(self, name: str, exe: str, jack: PrivateJack, threads: list[str]):
        self.name = name
        self.jack = jack
        env = dict(os.environ)
        env.update({k: v for k, v in jack.env().items() if k.startswith("JACK")})
        # Both servers connect to the same ports (scsynth connects nothing when these are unset).
        env["SC_JACK_DEFAULT_OUTPUTS"] = "system"
        env["SC_JACK_DEFAULT_INPUTS"] = "system"
        env.pop("MAGNETAR_RECORD", None)
        # Room for as many nodes as the capacity search may ask for (the defaults, 1024 nodes and
        # 8 MB of real-time memory, hold about a thousand of these synths).
        extra = ["-z", str(BLOCK), "-Z", str(jack.period), "-n", str(MAX_NODES), "-m", str(RT_MEMORY_KB), *threads]
        self.server = ServerProcess(exe, extra=extra, env=env)
        self.client: OscClient | None = None
        self.command = " ".join(self.server.args)

    def __enter__(self) -> "Session":
        self.server.start()
        self.client = OscClient(self.server.port)
        self.client.send(("/d_recv", compile_defs(load_def())))
        self.client.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)
        self.client.send(("/p_new", GROUP, 1, 0))
        self.client.sync(timeout=5)
        time.sleep(1.0)  # past the port connections and first periods
        return self

    def __exit__(self, *exc) -> None:
        quit_server(self.server, self.client)
        if self.client is not None:
            self.client.close()

    def set_synths(self, n: int) -> None:
        c = self.client
        assert c is not None
        c.send(("/g_freeAll", GROUP))
        c.sync(timeout=10)
        for k in range(0, n, 50):
            msgs = [("/s_new", DEF_NAME, -1, 1, GROUP, "freq", 100.0 + 3.0 * i) for i in range(k, min(n, k + 50))]
            c.send(bundle(None, *msgs))
            c.sync(timeout=30)
        running = c.status(timeout=5).contents[2]
        if running != n:
            raise RuntimeError(f"{self.name}: {running} synths running, asked for {n}")
        c.clear()
        time.sleep(1.0)  # let the creation periods pass

    def _own(self) -> int | None:
        return rt_stats(self.server.port).xruns if self.name.startswith("magnetar") else None

    def count(self, seconds: float, stop_on_first: bool = False) -> Count:
        log_start = len(self.jack.log_text())
        own0 = self._own()
        t0 = time.monotonic()
        early = False
        while True:
            left = seconds - (time.monotonic() - t0)
            if left <= 0:
                break
            time.sleep(min(0.5, left))
            if not self.server.alive():
                raise RuntimeError(f"{self.name} exited:\n{self.server.output}")
            if stop_on_first and XRUN_LINE.search(self.jack.log_text()[log_start:]):
                early = True
                break
        elapsed = time.monotonic() - t0
        lines = self.jack.log_text()[log_start:].splitlines()
        own1 = self._own()
        return Count(
            jack_xruns=sum(1 for line in lines if XRUN_LINE.search(line)),
            client_late=sum(1 for line in lines if CLIENT_XRUN.search(line)),
            own_xruns=None if own0 is None else own1 - own0,
            seconds=elapsed,
            stopped_early=early,
        )


def servers(names: list[str]) -> dict[str, tuple[str, list[str]]]:
    """Executable and thread option of each named server configuration."""
    exes = executables()
    supernova = os.environ.get("SUPERNOVA") or shutil.which("supernova") or "/usr/bin/supernova"
    known = {
        "scsynth": (exes["scsynth"], []),
        "magnetar": (exes["magnetar"], ["-T", "1"]),
        "magnetar -T 2": (exes["magnetar"], ["-T", "2"]),
        "supernova -T 2": (supernova, ["-T", "2"]),
    }
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown servers {unknown}; known: {list(known)}")
    return {n: known[n] for n in names}


class Search:
    """One server's search for the largest synth count with no xrun (jackd's report) in
    `seconds`: grow ×2 from `start` until a count fails, then bisect to within 10 %.

    A count that xruns is tried again up to `retries` times and fails only when every try
    xruns: on a shared machine one pre-emption of the VM at the wrong moment should not decide
    a count, and every server gets the same chances."""

    def __init__(self, name: str, exe: str, threads: list[str], start: int, retries: int):
        self.name, self.exe, self.threads, self.retries = name, exe, threads, retries
        self.n: int | None = start
        self.passed, self.failed = 0, None
        self.probes: list[tuple[int, bool, int]] = []

    def probe(self, jack: PrivateJack, seconds: float, log) -> None:
        """Tries the next count, each try in a fresh server."""
        n = self.n
        assert n is not None
        tries = 0
        while True:
            tries += 1
            with Session(self.name, self.exe, jack, self.threads) as s:
                s.set_synths(n)
                c = s.count(seconds, stop_on_first=True)
            ok = c.jack_xruns == 0
            log(f"  {self.name}: {n} synths, try {tries} -> {'no xrun' if ok else 'xrun'} after {c.seconds:.1f} s")
            if ok or tries > self.retries:
                break
        self.probes.append((n, ok, tries))
        if ok:
            self.passed = n
        else:
            self.failed = n if self.failed is None else min(self.failed, n)
        if self.failed is None:
            self.n = n * 2
        elif self.failed - self.passed <= max(10, self.passed // 10):
            self.n = None
        else:
            self.n = (self.passed + self.failed) // 2

    def result(self) -> dict:
        return {"passed": self.passed, "failed": self.failed, "probes": self.probes}


def search_capacities(exes: dict, jack: PrivateJack, args, log, errors: list[str]) -> dict[str, dict]:
    """Searches every server's capacity in rounds, one probe per server per round, so that a
    noisy spell of the shared machine falls on all servers alike rather than on one search."""
    searches = [Search(name, exe, threads, args.search_start, args.search_retries) for name, (exe, threads) in exes.items()]
    t_start = time.monotonic()
    rnd = 0
    while any(s.n is not None for s in searches):
        rnd += 1
        if time.monotonic() - t_start > args.search_budget:
            log(f"search budget spent after {rnd - 1} rounds")
            break
        for s in searches:
            if s.n is None:
                continue
            try:
                s.probe(jack, args.search_seconds, log)
            except (BootError, RuntimeError, TimeoutError, OSError) as e:
                errors.append(f"{s.name} search: {e}")
                s.n = None
    return {s.name: s.result() for s in searches}


def main() -> int:
    stop_cleanly_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each idle/loaded count")
    ap.add_argument("--load", type=int, default=50, help="synths in the loaded count")
    ap.add_argument("--periods", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--search-seconds", type=float, default=60.0, help="length a synth count must last")
    ap.add_argument("--search-budget", type=float, default=1200.0, help="seconds of searching in all (new rounds start until then)")
    ap.add_argument("--search-start", type=int, default=500, help="first synth count tried")
    ap.add_argument("--search-period", type=int, nargs="+", help="JACK periods of the search (default: the smallest)")
    ap.add_argument("--search-retries", type=int, default=1, help="more tries a count gets after an xrun")
    ap.add_argument("--servers", nargs="+", default=["scsynth", "magnetar", "magnetar -T 2", "supernova -T 2"])
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    os.environ["SC_SYNTHDEF_PATH"] = tempfile.mkdtemp(prefix="rt-xruns-defs-")
    exes = servers(args.servers)
    search_periods = args.search_period or [min(args.periods)]
    rows: list[tuple] = []
    commands: dict[str, str] = {}
    search: dict[int, dict[str, dict]] = {}
    errors: list[str] = []
    t_begin = time.monotonic()
    for period in args.periods:
        jack = PrivateJack(rate=RATE, period=period).start()
        try:
            for name, (exe, threads) in exes.items():
                for load in (0, args.load):
                    log(f"{name}, -p {period}, {load} synths, {args.seconds:g} s ...")
                    try:
                        with Session(name, exe, jack, threads) as s:
                            commands[name] = s.command
                            s.set_synths(load)
                            c = s.count(args.seconds)
                    except (BootError, RuntimeError, TimeoutError, OSError) as e:
                        errors.append(f"{name} -p {period} load {load}: {e}")
                        continue
                    rows.append((period, name, load, c))
                    log(f"  jackd: {c.jack_xruns} xruns ({c.client_late} client late); own: {c.own_xruns}")
            if not args.no_search and period in search_periods:
                log(f"searching the largest synth count without xrun at -p {period}, servers in turn ...")
                search[period] = search_capacities(exes, jack, args, log, errors)
        finally:
            jack.stop()
    total = time.monotonic() - t_begin

    table = [
        "| JACK period | server | synths | seconds | xruns (jackd) | of which client late | xruns/s | magnetar's own count |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for period, name, load, c in rows:
        own = "" if c.own_xruns is None else str(c.own_xruns)
        table.append(
            f"| {period} | {name} | {load} | {c.seconds:.0f} | {c.jack_xruns} | {c.client_late} | "
            f"{c.jack_xruns / c.seconds:.2f} | {own} |"
        )
    cap = []
    for p, found in search.items():
        cap += [
            "",
            f"Largest number of `{DEF_NAME}` synths (4 FSinOsc → Out, in one parallel group) played "
            f"{args.search_seconds:g} s at "
            f"-p {p} with no xrun reported by jackd (a try stops at its first xrun; a count fails when "
            f"{args.search_retries + 1} tries in a row xrun; each try boots the server afresh; the servers "
            f"take turns, one probe each per round, so a noisy spell of the machine does not fall on one "
            f"server's search alone):",
            "",
            "| server | passed | smallest failed | probes (synths: ok/xrun) |",
            "|---|---:|---:|---|",
        ]
        for name, r in found.items():
            probes = ", ".join(
                f"{n}: {'ok' if ok else 'xrun'}{f' (try {t})' if ok and t > 1 else ''}{f' ×{t}' if not ok and t > 1 else ''}"
                for n, ok, t in r["probes"]
            )
            failed = "—" if r["failed"] is None else str(r["failed"])
            passed = str(r["passed"]) if any(ok for _, ok, _ in r["probes"]) else "none"
            cap.append(f"| {name} | {passed} | {failed} | {probes} |")
    out = "\n".join(table + cap)
    print(out)
    print(f"\n(total {total / 60:.1f} min)", file=sys.stderr)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if args.no_write:
        return 0
    if errors:
        print("not updating BENCHMARKS.md: a run did not complete", file=sys.stderr)
        return 1
    cmd = "python3 bench/rt_xruns.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    text = "\n".join(
        [
            "## Xruns on JACK's dummy backend",
            "",
            f"Command: `{cmd.strip()}` ({time.strftime('%Y-%m-%d')}, `jackd -d dummy -r {RATE} -p P`, "
            "one server at a time, each connected to the system ports; synths in one /p_new group).",
            "Servers: " + "; ".join(f"`{c}`" for c in commands.values()) + " (-Z is the JACK period).",
            "Xruns are jackd's own reports while the server ran (client late, or the dummy driver itself "
            "woke late, which a busy shared machine causes regardless of the client).",
            "",
            out,
        ]
    )
    update_benchmarks(text)
    log("updated BENCHMARKS.md")
    return 0


def update_benchmarks(text: str) -> None:
    write_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")


if __name__ == "__main__":
    sys.exit(main())
