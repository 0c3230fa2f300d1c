#!/usr/bin/env python3
"""The Supernova paper's throughput experiments, in non-real-time: the same
scores rendered by scsynth, supernova -T 1 / -T 2 and magnetar -T 1 / -T 2 in
one run; wall time per render, several repetitions interleaved.

Usage: python3 bench/parallel_bench.py [--reps N] [--seconds S] [--only TEXT] [--no-write]
Writes/updates the "Parallel groups" section of BENCHMARKS.md.
"""

import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_md import write_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "compat"))

import numpy as np  # noqa: E402
import soundfile  # noqa: E402
from supriya import ugens as U  # noqa: E402

from nrt import MAGNETAR, SCSYNTH, Msg, Score, build, msg  # noqa: E402

BEGIN = "<!-- parallel-bench:begin -->"
END = "<!-- parallel-bench:end -->"
SUPERNOVA = shutil.which("supernova") or "/usr/bin/supernova"


def fsin_bank(name, n, shared_bus):
    def body(b):
        sig = U.Mix.new([U.FSinOsc.ar(frequency=b["freq"] * (i + 1)) for i in range(n)]) * (0.1 / n)
        U.Out.ar(bus=0 if shared_bus else b["bus"], source=sig)

    return build(name, body, freq=100.0, bus=0.0)


def one_group(n_synths, n_osc, shared_bus):
    def make(seconds):
        d = fsin_bank("bank", n_osc, shared_bus)
        s = Score([d]).add(0, msg("/p_new", 1, 0, 0))
        s.add(0, *(msg("/s_new", "bank", 1000 + i, 1, 1, "freq", 50.0 + i, "bus", float(2 + i))
                   for i in range(n_synths)))
        return s.end(seconds)
    return make


def two_groups(seconds):
    small, big = fsin_bank("small", 4, True), fsin_bank("big", 128, True)
    s = Score([small, big]).add(0, msg("/p_new", 1, 0, 0), msg("/p_new", 2, 3, 1))
    s.add(0, *(msg("/s_new", "small", 1000 + i, 1, 1, "freq", 60.0 + i) for i in range(64)))
    s.add(0, *(msg("/s_new", "big", 2000 + i, 1, 2, "freq", 30.0 + i) for i in range(4)))
    return s.end(seconds)


def chains(n_chains):
    """A parallel group of chains (the way the paper suggests using it): each child a group
    holding a voice that writes its own bus and an effect that reads it and sends to 0."""
    def voice(b):
        sig = U.Mix.new([U.Saw.ar(frequency=b["freq"] * (1 + 0.003 * i)) for i in range(8)]) * 0.02
        U.Out.ar(bus=b["bus"], source=U.RLPF.ar(source=sig, frequency=b["freq"] * 6, reciprocal_of_q=0.3))

    def effect(b):
        x = U.In.ar(bus=b["bus"], channel_count=1)
        wet = U.CombC.ar(source=x, maximum_delay_time=0.05, delay_time=0.031, decay_time=1.5)
        for t in (0.0071, 0.0113):
            wet = U.AllpassN.ar(source=wet, maximum_delay_time=0.02, delay_time=t, decay_time=0.8)
        U.Out.ar(bus=0, source=x + wet * 0.3)

    def make(seconds):
        v, e = build("voice", voice, freq=100.0, bus=2.0), build("effect", effect, bus=2.0)
        s = Score([v, e]).add(0, msg("/p_new", 1, 0, 0))
        for k in range(n_chains):
            g = 100 + k
            s.add(0, msg("/g_new", g, 1, 1),
                  msg("/s_new", "voice", 1000 + k, 1, g, "freq", 80.0 + 7 * k, "bus", float(2 + k)),
                  msg("/s_new", "effect", 2000 + k, 1, g, "bus", float(2 + k)))
        return s.end(seconds)
    return make


def shared_sources(n_voices, n_effects):
    """One parallel group: voices writing buses of their own, then effects, each reading one of
    those buses (as the chains' effects) and sending to 0. An effect hears its voice, so it
    waits for it; the effects then run side by side."""
    def voice(b):
        sig = U.Mix.new([U.Saw.ar(frequency=b["freq"] * (1 + 0.003 * i)) for i in range(8)]) * 0.02
        U.Out.ar(bus=b["bus"], source=U.RLPF.ar(source=sig, frequency=b["freq"] * 6, reciprocal_of_q=0.3))

    def effect(b):
        x = U.In.ar(bus=b["bus"], channel_count=1)
        wet = U.CombC.ar(source=x, maximum_delay_time=0.05, delay_time=b["delay"], decay_time=1.5)
        for t in (0.0071, 0.0113):
            wet = U.AllpassN.ar(source=wet, maximum_delay_time=0.02, delay_time=t, decay_time=0.8)
        U.Out.ar(bus=0, source=wet * 0.02)

    def make(seconds):
        v, e = build("svoice", voice, freq=100.0, bus=2.0), build("seffect", effect, bus=2.0, delay=0.031)
        s = Score([v, e]).add(0, msg("/p_new", 1, 0, 0))
        s.add(0, *(msg("/s_new", "svoice", 1000 + k, 1, 1, "freq", 90.0 + 31 * k, "bus", float(2 + k))
                   for k in range(n_voices)))
        s.add(0, *(msg("/s_new", "seffect", 2000 + k, 1, 1, "bus", float(2 + k % n_voices), "delay", 0.011 + 0.0005 * k)
                   for k in range(n_effects)))
        return s.end(seconds)
    return make


def noise_voices(n_voices):
    """Noise voices, each drawing random numbers every block: a parallel group of them spreads
    only when every synth has its own generator (magnetar's -g 1; supernova's way). Each voice
    seeds its generator (RandSeed.ir), so that renders can be compared sample for sample."""
    def voice(b):
        U.RandSeed.ir(trigger=1, seed=b["seed"])
        x = U.WhiteNoise.ar() * U.LFNoise1.kr(frequency=b["rate"]) + U.Dust2.ar(density=200.0) * 0.5
        x = U.Mix.new([U.Ringz.ar(source=x, frequency=b["freq"] * (i + 1), decay_time=0.2) for i in range(6)])
        cutoff = U.LFNoise2.kr(frequency=b["rate"] * 0.5) * 1500.0 + 2000.0
        U.Out.ar(bus=0, source=U.RLPF.ar(source=x, frequency=cutoff, reciprocal_of_q=0.5) * 0.002)

    def make(seconds):
        v = build("noise", voice, freq=200.0, rate=3.0, seed=0.0)
        s = Score([v]).add(0, msg("/p_new", 1, 0, 0))
        s.add(0, *(msg("/s_new", "noise", 1000 + k, 1, 1, "freq", 150.0 + 11 * k, "rate", 1.0 + 0.1 * k,
                       "seed", float(k))
                   for k in range(n_voices)))
        return s.end(seconds)
    return make


def identical_voices(n_voices):
    """Many copies of one voice def (the most common parallel group): Saw + Pulse through an RLPF
    swept by a SinOsc.kr, a CombL, an asr envelope and Pan2 onto bus 0."""
    import supriya

    env = supriya.Envelope.asr(attack_time=0.01, sustain=1.0, release_time=0.5)

    def voice(b):
        src = U.Saw.ar(frequency=b["freq"]) + U.Pulse.ar(frequency=b["freq"] * 1.01, width=0.3)
        f = U.RLPF.ar(source=src, frequency=U.SinOsc.kr(frequency=0.3) * 700 + 1500, reciprocal_of_q=0.3)
        f = U.CombL.ar(source=f, maximum_delay_time=0.05, delay_time=0.021, decay_time=0.6)
        sig = f * U.EnvGen.kr(envelope=env, gate=b["gate"], done_action=2) * 0.02
        U.Out.ar(bus=0, source=U.Pan2.ar(source=sig, position=b["pan"]))

    def make(seconds):
        v = build("voice", voice, freq=200.0, pan=0.0, gate=1.0)
        s = Score([v]).add(0, msg("/p_new", 1, 0, 0))
        s.add(0, *(msg("/s_new", "voice", 1000 + k, 1, 1, "freq", 60.0 + 13.0 * k, "pan", ((k % 9) - 4) / 4.0)
                   for k in range(n_voices)))
        return s.end(seconds)
    return make


def random_tree(seed):
    """A random tree under one parallel group (fixed seed, so every run renders the same tree):
    runs of identical voices, single synths of assorted defs, sequential groups holding
    voice -> effect chains on buses of their own, and parallel groups inside, writing shared
    buses (0 and 1) or buses of their own."""
    import random

    def voice(b):
        src = U.Saw.ar(frequency=b["freq"]) + U.Pulse.ar(frequency=b["freq"] * 1.01, width=0.3)
        f = U.RLPF.ar(source=src, frequency=b["cutoff"], reciprocal_of_q=0.4)
        U.Out.ar(bus=b["bus"], source=f * 0.01)

    def bank(b):
        sig = U.Mix.new([U.FSinOsc.ar(frequency=b["freq"] * (i + 1)) for i in range(6)]) * 0.005
        U.Out.ar(bus=b["bus"], source=sig)

    def effect(b):
        x = U.In.ar(bus=b["in_"], channel_count=1)
        wet = U.CombL.ar(source=x, maximum_delay_time=0.05, delay_time=0.023, decay_time=0.8)
        U.Out.ar(bus=b["bus"], source=U.LPF.ar(source=x + wet * 0.3, frequency=4000.0))

    def make(seconds):
        rnd = random.Random(seed)
        defs = [build("rvoice", voice, freq=200.0, cutoff=1500.0, bus=0.0), build("rbank", bank, freq=100.0, bus=0.0),
                build("reffect", effect, in_=2.0, bus=0.0)]
        s = Score(defs).add(0, msg("/p_new", 1, 0, 0))
        ids = iter(range(1000, 100000))
        private = iter(range(2, 1000))

        def synth(group, name, bus):
            f = 60.0 + rnd.random() * 900
            return msg("/s_new", name, next(ids), 1, group, "freq", f, "cutoff", 400 + rnd.random() * 3000, "bus", float(bus))

        def fill(group, depth):
            for _ in range(rnd.randint(3, 7)):
                kind = rnd.random()
                if kind < 0.3:
                    shared = rnd.random() < 0.5
                    for _ in range(rnd.randint(8, 32)):
                        s.add(0, synth(group, "rvoice", rnd.randint(0, 1) if shared else next(private)))
                elif kind < 0.55 and depth < 2:
                    g = next(ids)
                    s.add(0, msg("/g_new", g, 1, group))
                    bus = next(private)
                    s.add(0, synth(g, rnd.choice(["rvoice", "rbank"]), bus))
                    s.add(0, msg("/s_new", "reffect", next(ids), 1, g, "in_", float(bus), "bus", float(rnd.randint(0, 1))))
                elif kind < 0.7 and depth < 2:
                    g = next(ids)
                    s.add(0, msg("/p_new", g, 1, group))
                    fill(g, depth + 1)
                else:
                    s.add(0, synth(group, rnd.choice(["rvoice", "rbank"]), rnd.randint(0, 1) if rnd.random() < 0.5 else next(private)))
        fill(1, 0)
        return s.end(seconds)
    return make


SCORES = {
    "64 identical voices (Saw + Pulse -> RLPF -> CombL, asr, Pan2), one parallel group": identical_voices(64),
    "256 x 4 FSinOsc, one parallel group, separate buses": one_group(256, 4, False),
    "256 x 4 FSinOsc, one parallel group, one shared bus": one_group(256, 4, True),
    "16 x 128 FSinOsc, one parallel group": one_group(16, 128, True),
    "two parallel groups: 64 small, then 4 big": two_groups,
    "32 chains (8-Saw voice -> comb/allpass effect), one parallel group": chains(32),
    "64 noise voices (noise -> 6 Ringz -> RLPF), one parallel group": noise_voices(64),
    "4 voices and 64 effects reading their buses, one parallel group": shared_sources(4, 64),
    "random tree 1 (voices, chains, nested parallel groups; shared and own buses)": random_tree(1),
    "random tree 6 (voices, chains, nested parallel groups; shared and own buses)": random_tree(6),
    "random tree 3 (voices, chains, nested parallel groups; shared and own buses)": random_tree(3),
}

ENGINES = [
    ("scsynth", [SCSYNTH]),
    ("supernova -T 1", [SUPERNOVA, "-T", "1"]),
    ("supernova -T 2", [SUPERNOVA, "-T", "2"]),
    # -g 1: a random generator per synth, as supernova has (only the noise score draws).
    ("magnetar -T 1", [MAGNETAR, "-T", "1", "-g", "1"]),
    ("magnetar -T 2", [MAGNETAR, "-T", "2", "-g", "1"]),
    # Every block of a group that may spread on both threads, instead of the faster of the two
    # threads and one thread, as the default picks: what the threads alone make of the score.
    ("magnetar -T 2 spread", ["env", "MAGNETAR_SPREAD=always", MAGNETAR, "-T", "2", "-g", "1"]),
    # -x 0: shared-bus writes added as the threads finish (supernova's way) instead of in child
    # order; what the exact default costs is the ratio of the two.
    ("magnetar -T 2 -x 0", [MAGNETAR, "-T", "2", "-g", "1", "-x", "0"]),
]

# The renders whose samples must be the same, bit for bit, and how much of each score renders
# for that comparison: short renders of their own, apart from the timed ones.
IDENTICAL = ("magnetar -T 1", "magnetar -T 2", "magnetar -T 2 spread")
CHECK_SECONDS = 0.5


def written_channels(score):
    """Output channels enough to hold every bus the score's synths write, so that the comparison
    sees all of them and not only the two a timed render keeps: the scores pick the bus a synth
    writes with its control `bus` (or write 0 and 1), at most two channels from there."""
    top = 0
    for _, messages in score.entries:
        for m in messages:
            if isinstance(m, Msg) and m.address == "/s_new":
                top = max([top] + [int(v) for k, v in zip(m.args, m.args[1:]) if k == "bus"])
    return top + 2


def render(cmd, score, out, env=None, channels=2):
    """Renders `score` into `out` (`channels` output channels) with server command `cmd`; returns
    (wall seconds, CPU seconds of the server: user + system). The server's output is kept for the
    error message only."""
    full = [*cmd, "-o", str(channels), "-a", "1024", "-N", str(score), "_", str(out), "48000", "WAV", "float"]
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        pid = os.posix_spawnp(full[0], full, env if env is not None else os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, log.fileno(), 1),
                                            (os.POSIX_SPAWN_DUP2, log.fileno(), 2)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-800:]
            raise RuntimeError(f"{' '.join(full)} failed ({code}): {tail}")
    return wall, ru.ru_utime + ru.ru_stime


def pair_speed(cmd, score, outs):
    """Two renders of `score` started at once: their combined speed in renders per second.
    What two threads on this machine can do at best, measured rather than assumed: two vCPUs of a
    shared VM need not give twice the work of one (a busy neighbour, a shared physical core)."""
    times = [0.0, 0.0]

    def one(k):
        times[k] = render(cmd, score, outs[k])[0]

    threads = [threading.Thread(target=one, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(1.0 / t for t in times)


def same_samples(a, b):
    """Whether two float renders hold the same samples, bit for bit (the files' bytes may
    differ: libsndfile stamps float WAVs with the time in a PEAK chunk)."""
    x, y = (soundfile.read(str(f), dtype="float32", always_2d=True)[0] for f in (a, b))
    return x.shape == y.shape and np.array_equal(x.view(np.uint32), y.view(np.uint32))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--only", help="run only the scores whose name contains this (implies --no-write)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.only:
        args.no_write = True
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, make in SCORES.items():
            if args.only and args.only not in name:
                continue
            score = tmp / "score.osc"
            score.write_bytes(make(args.seconds).encode(str(tmp)))
            check, short = tmp / "check.osc", make(CHECK_SECONDS)
            check.write_bytes(short.encode(str(tmp)))
            times = {e: [] for e, _ in ENGINES}
            outs = {e: tmp / f"out{k}.wav" for k, (e, _) in enumerate(ENGINES)}
            pairs = []
            for _ in range(args.reps):
                for e, cmd in ENGINES:
                    times[e].append(render(cmd, score, outs[e])[0])
                pairs.append(pair_speed(dict(ENGINES)["magnetar -T 1"], score, [tmp / "pair0.wav", tmp / "pair1.wav"]))
            row = {e: statistics.median(ts) for e, ts in times.items()}
            best = {e: min(ts) for e, ts in times.items()}
            # Combined speed of two -T 1 renders at once over the speed of one alone.
            ceiling = statistics.median(pairs) * row["magnetar -T 1"]
            # The timed renders keep two channels; the comparison renders every bus written.
            checks = {e: tmp / f"check{k}.wav" for k, e in enumerate(IDENTICAL)}
            for e in IDENTICAL:
                render(dict(ENGINES)[e], check, checks[e], channels=written_channels(short))
            same = all(same_samples(checks[IDENTICAL[0]], checks[e]) for e in IDENTICAL[1:])
            rows.append((name, row, best, ceiling, same))
            print(name, "  ".join(f"{e}: {t:.3f}s (best {best[e]:.3f}s)" for e, t in row.items()),
                  f"two -T 1 at once: {ceiling:.2f}x", "identical" if same else "DIFFER", flush=True)
    if args.no_write:
        return
    command = "python3 bench/parallel_bench.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [BEGIN, "## Parallel groups (the Supernova paper's experiments, NRT)", "",
             f"Command: `{command.strip()}` ({args.seconds:g} s of audio at 48 kHz, {args.reps} interleaved "
             "renders per server, wall time: median, and in brackets the best, which leaves out most of what "
             "other work on the shared machine adds; ratios are given for both). magnetar runs a parallel group's children on its threads when "
             "its subtree holds running synths of parallel-safe defs (a synth reading a bus or using a buffer that an "
             "earlier one writes waits for it); it runs with `-g 1` (a random generator per synth, as supernova has), "
             "which only the noise score needs. `-x 0` adds the children's writes to a shared bus in the order the "
             "threads finish, under a lock per bus, as supernova does, instead of in child order (the default, which "
             "renders one thread's samples bit for bit); the exact sums cost the ratio of the two columns. "
             "By default magnetar measures each parallel group's blocks on its threads and on one thread and "
             "runs the faster way (both render the same samples); \"-T 2 spread\" (`MAGNETAR_SPREAD=always`) runs "
             "every block on the threads. \"Two -T 1 at once\" starts two magnetar -T 1 renders of the score together in each repetition and "
             "gives their combined speed over the median speed of one alone: what two threads of this VM deliver "
             "when nothing is shared between them, the ceiling for -T 1 / -T 2 at the time of the run, and "
             "\"of the ceiling\" is -T 1 / -T 2 over it. The last column compares the samples of magnetar's -T 1, "
             f"-T 2 and -T 2 spread renders, bit for bit: of renders of the score's first {CHECK_SECONDS:g} s made "
             "for that, with an output channel for every bus the score writes (the timed renders keep two). Targets: -T 1 / -T 2 at least 1.3x and 85 % of the "
             "ceiling; scsynth / -T 1 at least 2x.", "",
             "| score | " + " | ".join(e for e, _ in ENGINES)
             + " | magnetar -T 1 / -T 2 | -T 1 / -T 2 spread | two -T 1 at once / one alone | -T 2 of the ceiling"
             " | scsynth / magnetar -T 1 | supernova -T 2 / magnetar -T 2"
             " | -T 2 / -T 2 -x 0 (cost of exact sums) | -T 2 output = -T 1 |",
             "|---|" + "---|" * (len(ENGINES) + 8)]
    ratios = [("magnetar -T 1", "magnetar -T 2"), ("magnetar -T 1", "magnetar -T 2 spread"),
              ("scsynth", "magnetar -T 1"), ("supernova -T 2", "magnetar -T 2"),
              ("magnetar -T 2", "magnetar -T 2 -x 0")]
    for name, row, best, ceiling, same in rows:
        cells = [f"{row[a] / row[b]:.2f}x ({best[a] / best[b]:.2f}x)" for a, b in ratios]
        share = row["magnetar -T 1"] / row["magnetar -T 2"] / ceiling
        cells[2:2] = [f"{ceiling:.2f}x", f"{100 * share:.0f} %"]
        lines.append(f"| {name} | " + " | ".join(f"{row[e]:.3f} s ({best[e]:.3f})" for e, _ in ENGINES)
                     + "".join(f" | {c}" for c in cells) + f" | {'yes' if same else 'no'} |")
    lines.append(END)
    section = "\n".join(lines) + "\n"
    print("updated", write_section(BEGIN, END, section))


if __name__ == "__main__":
    main()
