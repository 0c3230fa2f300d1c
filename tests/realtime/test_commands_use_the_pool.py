"""Commands allocate too (new synths, replies), but on the audio thread only from the
real-time pool: under a stream of /s_new, /n_set and /n_free the audio thread makes no
system-heap operation at all (design, real-time rule 1)."""

from __future__ import annotations

from rtcheck import busy_voice_def, load_defs, rt_stats
from rtserver import OscClient

# Later /magnetar_rtStats.reply fields, counted after xruns (see rtcheck.RtStats.field).
ALL_PERIODS, ALL_HEAP_OPS = 3, 4


def test_a_stream_of_commands_never_reaches_the_system_heap_on_the_audio_thread(driver, magnetar):
    server = magnetar(period=256)
    client = OscClient(server.port)
    try:
        client.request(("/notify", 1), "/done", timeout=3)
        load_defs(client, busy_voice_def())
        client.sync()
        before = rt_stats(server.port)
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
    finally:
        client.close()
