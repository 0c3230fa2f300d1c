"""Triggers a block cannot hold are counted: units that make more `/tr` messages in one
block than the server queues per block (256) see the rest dropped, and
/magnetar_rtStats's droppedTriggers says how many, as it does for triggers the queue to
the control thread had no room for."""

from __future__ import annotations

import time

from rtcheck import load_defs, rt_stats
from rtserver import OscClient

# Later /magnetar_rtStats.reply fields, counted after xruns (see rtcheck.RtStats.field).
ALL_PERIODS, DROPPED_TRIGGERS = 3, 9
PERIOD, BLOCK, PER_BLOCK = 256, 64, 256
UNITS = 10


def rapid_trigger_def():
    """Ten SendTrig units on a trigger that rises every other sample: 320 a block."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder() as b:
        trig = U.Impulse.ar(frequency=U.SampleRate.ir() * 0.5)
        for k in range(UNITS):
            U.SendTrig.ar(trigger=trig, id_=k, value=0.0)
    return b.build(name="rt_rapid_trig")


def test_triggers_past_a_blocks_share_are_dropped_and_counted(driver, magnetar):
    server = magnetar(period=PERIOD)
    client = OscClient(server.port)
    try:
        load_defs(client, rapid_trigger_def())
        client.sync()
        client.send(("/s_new", "rt_rapid_trig", 1000, 0, 0))
        client.sync()
        before = rt_stats(server.port)
        time.sleep(0.5)
        after = rt_stats(server.port)
        blocks = (after.field(ALL_PERIODS) - before.field(ALL_PERIODS)) * (PERIOD // BLOCK)
        dropped = after.field(DROPPED_TRIGGERS) - before.field(DROPPED_TRIGGERS)
        assert blocks > 0, "the audio thread ran"
        # 64 of the 320 rises a block are past the block's share; a block that straddles a
        # reading may be counted in one and not the other.
        over = (UNITS * BLOCK // 2) - PER_BLOCK
        assert over * (blocks - PERIOD // BLOCK) <= dropped, f"{dropped} dropped in {blocks} blocks"
        client.send(("/n_free", 1000))
        client.sync()
    finally:
        client.close()
