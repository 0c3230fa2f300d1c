"""/status counts on a large tree as it is edited, and the replies a client waits for
(/synced, /status.reply, /fail) under a flood of /tr from many SendTrig units."""

from __future__ import annotations

import socket
import time

from supriya.osc import OscMessage as M

from rtserver import OscClient, bundle, ugen_count

GROUPS = 30
SYNTHS_PER_GROUP = 12


def counts(client) -> tuple[int, int, int]:
    """UGens, synths, groups, as /status reports them."""
    s = client.status().contents
    return s[1], s[2], s[3]


def build_tree(client) -> dict[int, list[int]]:
    """30 groups at the root's tail, each holding a nested group; 12 synths per group, every
    other one in the nested group. Returns each top group's synth ids."""
    synths: dict[int, list[int]] = {}
    for g in range(GROUPS):
        top, inner = 100 + g, 200 + g
        msgs = [M("/g_new", top, 1, 0), M("/g_new", inner, 1, top)]
        synths[top] = []
        for k in range(SYNTHS_PER_GROUP):
            node = 1000 + g * SYNTHS_PER_GROUP + k
            msgs.append(M("/s_new", "e2e_sine", node, 1, top if k % 2 == 0 else inner))
            synths[top].append(node)
        client.send_raw(bundle(None, *msgs))
    client.sync()
    return synths


def test_status_counts_stay_right_on_a_large_tree_through_frees_moves_and_group_frees(client):
    per = ugen_count("e2e_sine")
    synths = build_tree(client)
    n_synths, n_groups = GROUPS * SYNTHS_PER_GROUP, 1 + 2 * GROUPS
    assert counts(client) == (per * n_synths, n_synths, n_groups)

    # Free single synths, and a whole top group with its nested group and 12 synths.
    client.send_raw(bundle(None, M("/n_free", synths[100][0]), M("/n_free", synths[101][1])))
    client.send(M("/n_free", 102))
    client.sync()
    n_synths -= 2 + SYNTHS_PER_GROUP
    n_groups -= 2
    assert counts(client) == (per * n_synths, n_synths, n_groups)

    # Moves change no count: a synth to another group, a nested group to the root's head,
    # a group after another.
    client.send(M("/g_head", 0, 203))
    client.send(M("/n_before", synths[104][0], synths[105][0]))
    client.send(M("/n_after", 106, 107))
    client.send(M("/g_tail", 108, 209))
    client.sync()
    assert counts(client) == (per * n_synths, n_synths, n_groups)

    # /g_freeAll: the group's synths and its nested group (with its synths) go, it stays.
    client.send(M("/g_freeAll", 110))
    client.sync()
    n_synths -= SYNTHS_PER_GROUP
    n_groups -= 1
    assert counts(client) == (per * n_synths, n_synths, n_groups)

    # /g_deepFree: every synth under the group goes, its groups stay.
    client.send(M("/g_deepFree", 111))
    client.sync()
    n_synths -= SYNTHS_PER_GROUP
    assert counts(client) == (per * n_synths, n_synths, n_groups)

    # A synth replaced (add action 4) and a group's synths freed by a bundle of /n_free.
    client.send(M("/s_new", "e2e_sine", 5000, 4, synths[112][0]))
    client.send_raw(bundle(None, *(M("/n_free", n) for n in synths[113])))
    client.sync()
    n_synths -= SYNTHS_PER_GROUP
    assert counts(client) == (per * n_synths, n_synths, n_groups)

    # Everything freed from the root: only the root group is left.
    client.send(M("/g_freeAll", 0))
    client.sync()
    assert counts(client) == (0, 0, 1)


TRIGGER_SYNTHS = 200
SINKS = 4


def test_synced_status_and_fail_arrive_through_a_stream_of_triggers(client):
    """200 SendTrig units firing 300 times a second each, sent to 4 notified clients that
    never read: a client that asked for nothing but /sync, /status and an unknown command
    hears each answer in time. (tests/realtime floods magnetar far harder than scsynth
    withstands.)"""
    sinks = []
    try:
        for _ in range(SINKS):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.sendto(M("/notify", 1).to_datagram(), client.addr)
            sinks.append(s)
        # The fixture's client is notified too: it stops, so that only the sinks get /tr.
        client.request(M("/notify", 0), "/done", timeout=3)
        client.sync()
        msgs = [M("/s_new", "e2e_trig", 2000 + i, 1, 0, "rate", 300.0, "id", i) for i in range(TRIGGER_SYNTHS)]
        for start in range(0, len(msgs), 100):
            client.send_raw(bundle(None, *msgs[start : start + 100]))
        client.sync(timeout=10)
        time.sleep(0.3)
        for round in range(5):
            client.sync(timeout=10)
            status = client.request(M("/status"), "/status.reply", timeout=10)
            assert status.contents[2] == TRIGGER_SYNTHS
            fail = client.request(M("/no_such_command", round), "/fail", timeout=10)
            assert fail.contents[0] == "/no_such_command"
            time.sleep(0.1)
        client.send(M("/g_freeAll", 0))
        client.sync(timeout=10)
    finally:
        for s in sinks:
            s.close()
