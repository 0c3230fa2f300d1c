"""UGen plugins in real time: a client plays units of Debian's sc3-plugins (MdaPiano, JPverb)
and scsynth's own SendTrig and SendReply plugins (preferred over magnetar's with
`--prefer-plugins`), and the audio thread still makes no system-heap operation: the plugins'
RTAlloc memory comes from the real-time pool, their triggers reach the client, their text is
printed off the audio thread. A plugin's own `malloc` and `new` are counted as well: a plugin
built here that allocates in its calc function shows in the heap counts."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_probes"))

import probes  # noqa: E402

from rtcheck import load_defs, rt_stats  # noqa: E402
from rtserver import OscClient  # noqa: E402

# Later /magnetar_rtStats.reply fields, counted after xruns (see rtcheck.RtStats.field).
POOL_USED, POOL_MISSES, ALL_PERIODS, ALL_HEAP_OPS, C_HEAP_OPS = 0, 2, 3, 4, 8

pytestmark = pytest.mark.skipif(
    not Path("/usr/lib/SuperCollider/plugins/MdaUGens.so").exists(),
    reason="sc3-plugins-server is not installed (scripts/setup.sh)",
)


def plugin_voice_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from supriya.ugens.core import UGen, param, ugen

    @ugen(ar=True, channel_count=2, fixed_channel_count=True)
    class MdaPiano(UGen):
        freq = param(440.0)
        gate = param(1.0)
        vel = param(100.0)
        decay = param(0.8)
        release = param(0.8)
        hard = param(0.8)
        velhard = param(0.8)
        muffle = param(0.8)
        velmuff = param(0.8)
        velcurve = param(0.8)
        stereo = param(0.2)
        tune = param(0.5)
        random = param(0.1)
        stretch = param(0.1)
        sustain = param(0.0)

    @ugen(ar=True, channel_count=2, fixed_channel_count=True)
    class JPverbRaw(UGen):
        in1 = param(0.0)
        in2 = param(0.0)
        damp = param(0.0)
        earlydiff = param(0.707)
        highband = param(2000.0)
        highx = param(1.0)
        lowband = param(500.0)
        lowx = param(1.0)
        mdepth = param(0.1)
        mfreq = param(2.0)
        midx = param(1.0)
        size = param(1.0)
        t60 = param(1.0)

    with SynthDefBuilder(freq=220.0, amp=0.05) as b:
        gate = U.LFPulse.kr(frequency=4.0, width=0.5)
        piano = MdaPiano.ar(freq=b["freq"], gate=gate)
        wet = JPverbRaw.ar(in1=piano[0], in2=piano[1], t60=1.5, size=0.7)
        U.SendTrig.kr(trigger=gate, id_=7, value=b["freq"])
        U.SendReply.kr(trigger=gate, command_name="/piano", reply_id=3, source=[b["freq"], 1.5])
        U.Out.ar(bus=0, source=[wet[0] * b["amp"], wet[1] * b["amp"]])
    return b.build(name="rt_plugin_voice")


def test_plugin_units_play_on_the_pool_and_reply(driver, magnetar):
    # JPverb's delay lines take a few MB of RTAlloc memory per synth: a pool to fit eight.
    server = magnetar(period=256, extra=("-m", "131072", "--prefer-plugins", "SendTrig,SendReply"))
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        load_defs(client, plugin_voice_def())
        client.sync()
        before = rt_stats(server.port)
        for i in range(8):
            client.send(("/s_new", "rt_plugin_voice", 1000 + i, 0, 0, "freq", 200.0 + 50 * i))
        client.sync()
        time.sleep(0.3)
        playing = rt_stats(server.port)
        time.sleep(0.7)
        steady = rt_stats(server.port)
        steady_periods = steady.steady_periods - playing.steady_periods
        assert steady_periods > 0, "no period without commands while the synths played"
        assert steady.steady_heap_ops == playing.steady_heap_ops, (
            f"{steady.steady_heap_ops - playing.steady_heap_ops} system-heap operations in "
            f"{steady_periods} periods of plugin units playing"
        )
        for i in range(8):
            client.send(("/n_free", 1000 + i))
        client.sync()
        after = rt_stats(server.port)
        periods = after.field(ALL_PERIODS) - before.field(ALL_PERIODS)
        heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
        c_heap_ops = after.field(C_HEAP_OPS) - before.field(C_HEAP_OPS)
        assert periods > 0, "the audio thread ran"
        # Constructors and destructors included: these plugins take their memory through RTAlloc.
        assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations while plugin units ran"
        assert c_heap_ops == 0, f"plugin code made {c_heap_ops} malloc/free calls on the audio thread"
        # The reverbs' delay lines (RTAlloc) live in the pool while the synths play.
        grown = playing.field(POOL_USED) - before.field(POOL_USED)
        assert grown > 1_000_000, f"the pool grew by only {grown} bytes with eight reverbs playing"
        assert after.field(POOL_MISSES) == before.field(POOL_MISSES), "the pool ran dry"
        triggers = [m for m in client.messages("/tr") if m.contents[0] in range(1000, 1008)]
        assert triggers, "no /tr from the SendTrig plugin"
        assert all(m.contents[1] == 7 for m in triggers)
        assert {round(m.contents[2]) for m in triggers} <= {200 + 50 * i for i in range(8)}
        replies = client.messages("/piano")
        assert replies, "no /piano from the SendReply plugin"
        assert all(m.contents[1] == 3 and abs(m.contents[3] - 1.5) < 1e-6 for m in replies)
    finally:
        client.close()


@pytest.fixture(scope="module")
def malloc_probe_dir(tmp_path_factory):
    """A directory holding MallocProbe.so (tests/plugin_probes), a unit that mallocs in its calc
    function while its input is positive."""
    if (why := probes.missing()) is not None:
        pytest.skip(why)
    return probes.build(tmp_path_factory.mktemp("malloc_probe"), "MallocProbe")


def malloc_probe_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from supriya.ugens.core import UGen, param, ugen

    @ugen(kr=True)
    class MallocProbe(UGen):
        on = param(0.0)

    with SynthDefBuilder(on=0.0) as b:
        U.Out.kr(bus=0, source=MallocProbe.kr(on=b["on"]))
    return b.build(name="rt_malloc_probe")


def test_a_plugin_that_mallocs_in_its_calc_function_is_counted(driver, magnetar, malloc_probe_dir):
    server = magnetar(period=256, extra=("-U", str(malloc_probe_dir)))
    client = OscClient(server.port)
    try:
        load_defs(client, malloc_probe_def())
        client.send(("/s_new", "rt_malloc_probe", 1000, 0, 0))
        client.sync()
        time.sleep(0.2)
        quiet = rt_stats(server.port)
        time.sleep(0.5)
        still = rt_stats(server.port)
        assert still.steady_periods > quiet.steady_periods
        assert still.steady_heap_ops == quiet.steady_heap_ops, "the probe allocated while switched off"
        assert still.field(C_HEAP_OPS) == quiet.field(C_HEAP_OPS)
        client.send(("/n_set", 1000, "on", 1.0))
        client.sync()
        time.sleep(0.2)
        start = rt_stats(server.port)
        time.sleep(0.5)
        end = rt_stats(server.port)
        periods = end.steady_periods - start.steady_periods
        steady_ops = end.steady_heap_ops - start.steady_heap_ops
        c_ops = end.field(C_HEAP_OPS) - start.field(C_HEAP_OPS)
        assert periods > 0
        # malloc, free, new[] and delete[] in each of the period's four blocks: 16 a period.
        assert steady_ops >= 16 * periods, f"{steady_ops} heap operations counted in {periods} periods"
        assert c_ops >= steady_ops, f"{c_ops} of them counted as C code's"
        client.send(("/c_get", 0))
        value = client.wait_for("/c_set", timeout=2).contents[1]
        assert value == 1.5, "the probe ran"
    finally:
        client.close()


def membrane_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder
    from supriya.ugens.core import UGen, param, ugen

    @ugen(ar=True)
    class MembraneCircle(UGen):
        excitation = param(0.0)
        tension = param(0.05)
        loss = param(0.99999)

    with SynthDefBuilder(amp=0.05) as b:
        hit = U.Impulse.ar(frequency=4.0) * 0.5
        U.Out.ar(bus=0, source=MembraneCircle.ar(excitation=hit, tension=0.05, loss=0.9999) * b["amp"])
    return b.build(name="rt_membrane")


def test_a_plugin_constructor_that_callocs_is_counted_and_its_steady_state_is_clean(driver, magnetar):
    # sc3-plugins' MembraneCircle callocs its mesh in its constructor (scsynth allows it; the
    # counts must show it) and computes without touching the heap afterwards.
    server = magnetar(period=256)
    client = OscClient(server.port)
    try:
        load_defs(client, membrane_def())
        before = rt_stats(server.port)
        client.send(("/s_new", "rt_membrane", 1000, 0, 0))
        client.sync()
        time.sleep(0.2)
        built = rt_stats(server.port)
        time.sleep(0.5)
        steady = rt_stats(server.port)
        assert built.field(C_HEAP_OPS) - before.field(C_HEAP_OPS) > 0, "the constructor's calloc was not counted"
        assert steady.steady_periods > built.steady_periods
        assert steady.steady_heap_ops == built.steady_heap_ops, "MembraneCircle touched the heap while playing"
        assert steady.field(C_HEAP_OPS) == built.field(C_HEAP_OPS)
    finally:
        client.close()
