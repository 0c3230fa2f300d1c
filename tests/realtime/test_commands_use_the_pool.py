"""Commands allocate too (new synths, replies), but on the audio thread only from the
real-time pool: under a stream of /s_new, /n_set and /n_free the audio thread makes no
system-heap operation at all (design, real-time rule 1)."""

from __future__ import annotations

import contextlib

from rtcheck import busy_voice_def, load_defs, rt_stats
from rtserver import OscClient

# Later /magnetar_rtStats.reply fields, counted after xruns (see rtcheck.RtStats.field).
ALL_PERIODS, ALL_HEAP_OPS = 3, 4


@contextlib.contextmanager
def busy_voice_server(magnetar):
    """A server at 256 frames with notifications on and the busy voice loaded: the server,
    a client for it, and the statistics from before the test's commands."""
    server = magnetar(period=256)
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        load_defs(client, busy_voice_def())
        client.sync()
        yield server, client, rt_stats(server.port)
    finally:
        client.close()


def test_a_stream_of_commands_never_reaches_the_system_heap_on_the_audio_thread(driver, magnetar):
    with busy_voice_server(magnetar) as (server, client, before):
        for i in range(400):
            client.send(("/s_new", "rt_busy_voice", 1000 + i, 0, 0, "freq", 110.0 + i, "amp", 0.01))
            client.send(("/n_set", 1000 + i, "freq", 220.0))
            if i >= 16:
                client.send(("/n_free", 1000 + i - 16))
            if i % 50 == 0:
                client.sync()
        client.sync()
        after = rt_stats(server.port)
        periods = after.field(ALL_PERIODS) - before.field(ALL_PERIODS)
        heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
        assert periods > 0, "the audio thread ran"
        assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations while serving commands"
        assert client.status().contents[2] == 16, "the last 16 synths still run"


def test_a_def_replaced_while_its_synths_play_is_freed_off_the_audio_thread(driver, magnetar):
    """/d_recv of a def of the same name while synths of the old one play, then those
    synths freed: the old def goes when its last synth does, and it is dropped on the
    control thread, not on the audio thread (its memory came from the system heap)."""
    with busy_voice_server(magnetar) as (server, client, before):
        for round in range(20):
            base = 1000 + 10 * round
            for k in range(4):
                client.send(("/s_new", "rt_busy_voice", base + k, 0, 0, "freq", 110.0 + k, "amp", 0.01))
            client.sync()
            load_defs(client, busy_voice_def())
            for k in range(4):
                client.send(("/n_free", base + k))
            client.sync()
        after = rt_stats(server.port)
        heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
        assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations"
        client.send(("/s_new", "rt_busy_voice", 5000, 0, 0, "amp", 0.01))
        assert client.status().contents[2] == 1, "the def loaded last still makes synths"


def test_tree_queries_group_settings_and_unknown_commands_never_reach_the_system_heap(driver, magnetar):
    """/g_queryTree with controls, /status, /n_set, /n_map and /n_fill on groups, and a
    command the server does not know: their work on the audio thread (the tree walked,
    replies and failures handed on) takes nothing from the system heap, and each answers."""
    with busy_voice_server(magnetar) as (server, client, before):
        for g in range(8):
            client.send(("/g_new", 100 + g, 1, 0))
            client.send(("/g_new", 200 + g, 1, 100 + g))
            for k in range(6):
                client.send(("/s_new", "rt_busy_voice", 1000 + 10 * g + k, 1, 100 + g if k % 2 else 200 + g, "amp", 0.0))
        client.sync()
        for round in range(20):
            g = 100 + round % 8
            tree = client.request(("/g_queryTree", 0, 1), "/g_queryTree.reply", timeout=5)
            assert tree.contents[:3] == (1, 0, 8), "the root holds the eight groups"
            client.send(("/n_fill", g, "freq", 1, 440.0))
            client.send(("/n_map", g, "amp", 5))
            client.send(("/n_set", g, "freq", 300.0 + round))
            fail = client.request(("/no_such_command", round), "/fail", timeout=5)
            assert fail.contents[0] == "/no_such_command"
            status = client.status()
            assert status.contents[2:4] == (48, 17)
        client.sync()
        # The settings reached the synths in the nested groups too (group 100's last
        # /n_set was in round 16).
        got = client.request(("/s_get", 1000, "freq"), "/n_set", timeout=5)
        assert got.contents == (1000, "freq", 316.0)
        after = rt_stats(server.port)
        heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
        assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations"


# /magnetar_rtStats.reply fields after xruns: triggers dropped to keep the reserved share of
# the queue to the control thread, and messages the full queue refused.
DROPPED_TRIGGERS, DROPPED_MESSAGES = 9, 10


def trigger_def():
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder(id=1.0) as b:
        # A trigger every fourth sample: SendTrig.ar sends one per rising edge.
        U.SendTrig.ar(trigger=U.Impulse.ar(frequency=12000.0), id_=b["id"], value=0.5)
    return b.build(name="rt_flood_trig")


def test_a_flood_of_triggers_loses_no_reply_and_is_counted(driver, magnetar):
    """400 SendTrig units firing every fourth sample, to 8 notified clients that never read: the
    control thread cannot send every /tr, triggers past the queue's free share are dropped
    and counted, and /synced, /status.reply and /fail still reach the client that waits."""
    import socket

    from supriya.osc import OscMessage

    server = magnetar(period=256)
    client = OscClient(server.port)
    sinks = []
    try:
        load_defs(client, trigger_def())
        for _ in range(8):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.sendto(OscMessage("/notify", 1).to_datagram(), ("127.0.0.1", server.port))
            sinks.append(s)
        client.sync()
        before = rt_stats(server.port)
        for i in range(400):
            client.send(("/s_new", "rt_flood_trig", 1000 + i, 1, 0, "id", i))
        client.sync(timeout=10)
        for round in range(10):
            client.sync(timeout=10)
            assert client.request(("/status",), "/status.reply", timeout=10).contents[2] == 400
            assert client.request(("/no_such_command",), "/fail", timeout=10).contents[0] == "/no_such_command"
        after = rt_stats(server.port, timeout=10)
        client.send(("/g_freeAll", 0))
        client.sync(timeout=10)
        assert after.field(DROPPED_MESSAGES) == 0, "the full queue refused messages"
        heap_ops = after.field(ALL_HEAP_OPS) - before.field(ALL_HEAP_OPS)
        assert heap_ops == 0, f"the audio thread made {heap_ops} system-heap operations"
        dropped = after.field(DROPPED_TRIGGERS) - before.field(DROPPED_TRIGGERS)
        print(f"triggers dropped: {dropped}")
    finally:
        for s in sinks:
            s.close()
        client.close()
