"""Nodes, groups, parallel groups and their notifications, as a notified client sees them."""

import time

from supriya.osc import OscMessage as M

from rtserver import ugen_count


def ids(tag):
    return lambda m: m.contents[0] == tag


def test_s_new_sends_n_go_with_synth_layout(client):
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0, "freq", 220.0))
    m = client.wait_for("/n_go", ids(1000))
    # node, parent, previous, next, is-group (synths carry no head/tail)
    assert m.contents == (1000, 0, -1, -1, 0)


def test_g_new_sends_n_go_with_group_layout(client):
    client.send(M("/g_new", 1, 0, 0))
    assert client.wait_for("/n_go", ids(1)).contents == (1, 0, -1, -1, 1, -1, -1)
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))
    assert client.wait_for("/n_go", ids(1000)).contents == (1000, 1, -1, -1, 0)
    # A group added after group 1 sees 1 as its predecessor.
    client.send(M("/g_new", 2, 3, 1))
    assert client.wait_for("/n_go", ids(2)).contents == (2, 0, 1, -1, 1, -1, -1)


def test_add_actions_place_nodes_where_asked(client):
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))  # head of 1
    client.send(M("/s_new", "e2e_sine", 1001, 1, 1))  # tail of 1
    client.send(M("/s_new", "e2e_sine", 1002, 2, 1001))  # before 1001
    client.send(M("/s_new", "e2e_sine", 1003, 3, 1000))  # after 1000
    client.sync()
    tree = client.request(M("/g_queryTree", 1, 0), "/g_queryTree.reply")
    order = [tree.contents[i] for i in range(3, len(tree.contents), 3)]
    assert order == [1000, 1003, 1002, 1001]
    # replace: 1004 takes 1003's place and 1003 ends
    client.send(M("/s_new", "e2e_sine", 1004, 4, 1003))
    assert client.wait_for("/n_go", ids(1004)).contents == (1004, 1, 1000, 1002, 0)
    # The replaced node is gone (scsynth sends no /n_end for it).
    assert client.request(M("/n_query", 1003), "/fail").contents[0] == "/n_query"
    assert client.status().contents[2] == 4


def test_n_free_sends_n_end_and_removes_the_node(client):
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1001, 1, 0))
    client.wait_for("/n_go", ids(1001))
    client.send(M("/n_free", 1000))
    assert client.wait_for("/n_end", ids(1000)).contents == (1000, 0, -1, 1001, 0)
    client.send(M("/n_query", 1000))
    assert client.wait_for("/fail").contents[0] == "/n_query"
    status = client.status()
    assert status.contents[2] == 1  # one synth left


def test_done_action_frees_synth_and_notifies(client):
    client.send(M("/s_new", "e2e_short", 1000, 0, 0, "dur", 0.05))
    client.wait_for("/n_go", ids(1000))
    t0 = time.monotonic()
    assert client.wait_for("/n_end", ids(1000), timeout=2).contents[0] == 1000
    assert time.monotonic() - t0 < 1.0
    assert client.status().contents[2] == 0


def test_n_run_pauses_and_resumes_with_n_off_and_n_on(client):
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0))
    client.wait_for("/n_go", ids(1000))
    client.send(M("/n_run", 1000, 0))
    assert client.wait_for("/n_off", ids(1000)).contents == (1000, 0, -1, -1, 0)
    client.send(M("/n_run", 1000, 1))
    assert client.wait_for("/n_on", ids(1000)).contents == (1000, 0, -1, -1, 0)


def test_moving_nodes_sends_n_move(client):
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/g_new", 2, 1, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))
    client.sync()
    client.clear()
    client.send(M("/g_head", 2, 1000))
    assert client.wait_for("/n_move", ids(1000)).contents == (1000, 2, -1, -1, 0)
    client.send(M("/n_before", 1000, 1))
    assert client.wait_for("/n_move", ids(1000)).contents == (1000, 0, -1, 1, 0)
    client.send(M("/n_after", 1000, 2))
    assert client.wait_for("/n_move", ids(1000)).contents == (1000, 0, 2, -1, 0)
    client.send(M("/g_tail", 1, 1000))
    assert client.wait_for("/n_move", ids(1000)).contents == (1000, 1, -1, -1, 0)


def test_n_set_changes_controls_by_name_and_index(client):
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0, "freq", 220.0))
    # The SynthDef's controls are, in order: amp, freq, out.
    client.send(M("/n_set", 1000, "freq", 330.0, 0, 0.125))
    m = client.request(M("/s_get", 1000, "freq", "amp"), "/n_set")
    assert m.contents == (1000, "freq", 330.0, "amp", 0.125)
    m = client.request(M("/s_getn", 1000, 0, 3), "/n_setn")
    assert m.contents == (1000, 0, 3, 0.125, 330.0, 0.0)
    # By index a run of values spans consecutive controls ...
    client.send(M("/n_setn", 1000, 1, 2, 110.0, 4.0))
    m = client.request(M("/s_getn", 1000, 0, 3), "/n_setn")
    assert m.contents == (1000, 0, 3, 0.125, 110.0, 4.0)
    # ... by name it stays inside that (one-value) control.
    client.send(M("/n_setn", 1000, "amp", 2, 0.5, 220.0))
    m = client.request(M("/s_getn", 1000, 0, 3), "/n_setn")
    assert m.contents == (1000, 0, 3, 0.5, 110.0, 4.0)


def test_s_get_and_s_getn_read_missing_controls_as_zero(client):
    """scsynth answers every /s_get and /s_getn: values past a named control's channels, past
    the synth's controls, or of a name the def lacks read 0 (supriya's get_range relies on it)."""
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0, "freq", 432.0, "amp", 0.25))
    m = client.request(M("/s_getn", 1000, "amp", 5), "/n_setn")
    assert m.contents == (1000, "amp", 5, 0.25, 0.0, 0.0, 0.0, 0.0)
    m = client.request(M("/s_getn", 1000, 1, 4, "nope", 2), "/n_setn")
    assert m.contents == (1000, 1, 4, 432.0, 0.0, 0.0, 0.0, "nope", 2, 0.0, 0.0)
    m = client.request(M("/s_get", 1000, "nope", 7, "freq"), "/n_set")
    assert m.contents == (1000, "nope", 0.0, 7, 0.0, "freq", 432.0)
    assert client.messages("/fail") == []


def test_n_query_reply_layouts(client):
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))
    client.send(M("/s_new", "e2e_sine", 1001, 1, 1))
    client.sync()
    assert client.request(M("/n_query", 1000), "/n_info").contents == (1000, 1, -1, 1001, 0)
    assert client.request(M("/n_query", 1), "/n_info").contents == (1, 0, -1, -1, 1, 1000, 1001)
    assert client.request(M("/n_query", 0), "/n_info").contents == (0, -1, -1, -1, 1, 1, 1)


def test_parallel_group_is_a_group_that_holds_synths(client):
    client.send(M("/p_new", 1, 0, 0))
    assert client.wait_for("/n_go", ids(1)).contents == (1, 0, -1, -1, 1, -1, -1)
    for i in range(4):
        client.send(M("/s_new", "e2e_sine", 1000 + i, 1, 1))
    for i in range(4):
        client.wait_for("/n_go", ids(1000 + i))
    info = client.request(M("/n_query", 1), "/n_info")
    assert info.contents[4] == 1
    tree = client.request(M("/g_queryTree", 1, 0), "/g_queryTree.reply")
    assert tree.contents[:3] == (0, 1, 4)
    assert sorted(tree.contents[3::3]) == [1000, 1001, 1002, 1003]
    status = client.status()
    assert status.contents[2] == 4 and status.contents[3] == 2
    client.send(M("/g_freeAll", 1))
    for i in range(4):
        client.wait_for("/n_end", ids(1000 + i))
    assert client.status().contents[2] == 0


def test_g_queryTree_reply_structure_with_and_without_controls(client):
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1, "freq", 220.0))
    client.send(M("/g_new", 2, 1, 1))
    client.send(M("/s_new", "e2e_sine", 1001, 0, 2, "amp", 0.5))
    client.sync()
    bare = client.request(M("/g_queryTree", 0, 0), "/g_queryTree.reply")
    assert bare.contents == (
        0, 0, 1,          # flag, root id, one child
        1, 2,             # group 1 with two children
        1000, -1, "e2e_sine",
        2, 1,             # group 2 with one child
        1001, -1, "e2e_sine",
    )
    full = client.request(M("/g_queryTree", 1, 1), "/g_queryTree.reply")
    assert full.contents == (
        1, 1, 2,
        1000, -1, "e2e_sine", 3, "amp", 0.0, "freq", 220.0, "out", 0.0,
        2, 1,
        1001, -1, "e2e_sine", 3, "amp", 0.5, "freq", 440.0, "out", 0.0,
    )


def test_g_deepFree_frees_synths_but_keeps_groups(client):
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/g_new", 2, 0, 1))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))
    client.send(M("/s_new", "e2e_sine", 1001, 0, 2))
    client.sync()
    client.clear()
    client.send(M("/g_deepFree", 1))
    ended = {client.wait_for("/n_end").contents[0] for _ in range(2)}
    assert ended == {1000, 1001}
    tree = client.request(M("/g_queryTree", 1, 0), "/g_queryTree.reply")
    assert tree.contents == (0, 1, 1, 2, 0)


def test_freeing_a_group_ends_its_children(client):
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))
    client.send(M("/g_new", 2, 1, 1))
    client.sync()
    client.clear()
    client.send(M("/n_free", 1))
    ended = {client.wait_for("/n_end").contents[0] for _ in range(3)}
    assert ended == {1, 2, 1000}
    status = client.status()
    assert status.contents[2:4] == (0, 1)


def test_status_counts_ugens_synths_groups_and_defs(client):
    base = client.status()
    assert base.contents[1:5] == (0, 0, 1, 4)
    client.send(M("/g_new", 1, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 1))
    client.send(M("/s_new", "e2e_trig", 1001, 0, 1))
    client.sync()
    s = client.status()
    assert s.contents[1] == ugen_count("e2e_sine") + ugen_count("e2e_trig")
    assert s.contents[2:5] == (2, 2, 4)


def test_send_trig_reaches_notified_client_as_tr(client):
    client.send(M("/s_new", "e2e_trig", 1000, 0, 0, "id", 42.0, "value", 0.25, "rate", 50.0))
    m = client.wait_for("/tr", timeout=2)
    assert m.contents == (1000, 42, 0.25)


def test_notify_off_stops_notifications(client):
    assert client.request(M("/notify", 0), "/done").contents[0] == "/notify"
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0))
    client.sync()
    assert client.messages("/n_go") == []
    # The node exists all the same.  (/n_info from /n_query goes to notified clients only.)
    tree = client.request(M("/g_queryTree", 0, 0), "/g_queryTree.reply")
    assert tree.contents == (0, 0, 1, 1000, -1, "e2e_sine")
    assert client.maybe("/n_info", timeout=0.1) is None


def test_notify_reply_carries_client_id_and_max_logins(client, server):
    from rtserver import OscClient

    with OscClient(server.port) as other:
        m = other.request(M("/notify", 1), "/done")
        assert m.contents[0] == "/notify"
        assert len(m.contents) == 3
        assert all(isinstance(x, int) for x in m.contents[1:])
        assert m.contents[1] != 0  # the fixture's client took id 0
        assert m.contents[2] >= 2
