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
