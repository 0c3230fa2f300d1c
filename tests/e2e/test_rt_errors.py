"""Bad input: the server answers /fail where scsynth does, and keeps running either way."""

import os
import struct

import pytest
from supriya.osc import OscMessage as M


def still_alive(client, server):
    """The server answers /status and /sync and still executes commands."""
    assert server.alive()
    client.status()
    client.sync()
    client.send(M("/g_new", 4242, 0, 0))
    client.sync()
    tree = client.request(M("/g_queryTree", 4242, 0), "/g_queryTree.reply")
    assert tree.contents == (0, 4242, 0)
    client.send(M("/n_free", 4242))
    client.sync()


@pytest.mark.parametrize(
    "message, reply",
    [
        (M("/n_free", 999), ("/n_free", "Node 999 not found")),
        (M("/n_set", 999, "freq", 1.0), ("/n_set", "Node 999 not found")),
        (M("/n_run", 999, 0), ("/n_run", "Node 999 not found")),
        (M("/s_new", "no_such_def", 1000, 0, 0), ("/s_new", "SynthDef not found")),
        (M("/s_new", "e2e_sine", 1000, 0, 77), ("/s_new", "Group 77 not found")),
        (M("/g_new", 5, 0, 77), ("/g_new", "Group 77 not found")),
        (M("/no_such_command", 1), ("/no_such_command", "Command not found")),
        # A name that only looks like a buffer command is not one, as in scsynth.
        (M("/b_no_such_command", 0), ("/b_no_such_command", "Command not found")),
        (M("/c_get", 1 << 24), ("/c_get", "index out of range")),
    ],
    ids=["n_free", "n_set", "n_run", "s_new_def", "s_new_target", "g_new_target", "unknown", "unknown_b", "c_get_range"],
)
def test_bad_reference_gets_fail_reply(client, server, message, reply):
    client.send(message)
    m = client.wait_for("/fail")
    assert m.contents[:2] == reply
    still_alive(client, server)


def test_duplicate_node_id_fails(client, server):
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0))
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0))
    assert client.wait_for("/fail").contents == ("/s_new", "duplicate node ID")
    client.send(M("/g_new", 1000, 0, 0))
    assert client.wait_for("/fail").contents == ("/g_new", "duplicate node ID")
    still_alive(client, server)


def test_wrong_argument_type_fails(client, server):
    client.send(M("/s_new"))
    assert client.wait_for("/fail").contents == ("/s_new", "wrong argument type")
    client.send(M("/s_new", 1.5, "x"))
    assert client.wait_for("/fail").contents == ("/s_new", "wrong argument type")
    still_alive(client, server)


def test_get_out_of_buffer_range_fails(client, server):
    client.send(M("/b_alloc", 0, 8, 1))
    client.wait_for("/done")
    client.send(M("/b_get", 0, 99))
    assert client.wait_for("/fail").contents == ("/b_get", "index out of range")
    client.send(M("/b_getn", 0, 0, 1 << 30))
    assert client.wait_for("/fail").contents[0] == "/b_getn"
    still_alive(client, server)


def test_random_bytes_do_not_hurt(client, server):
    rng = __import__("random").Random(1234)
    for n in (1, 3, 4, 7, 16, 64, 512, 4000):
        client.send_raw(bytes(rng.randrange(256) for _ in range(n)))
    client.send_raw(b"\x01\x02\x03garbage")
    client.send_raw(os.urandom(0))
    still_alive(client, server)
    # Anything that came back for those is a /fail, never a /done.
    assert client.messages("/done") == []


@pytest.mark.parametrize(
    "data",
    [
        b"/n_free\0,i\0\0",  # int argument missing
        b"/n_free\0,ii\0\0\0\0\x03",  # second int cut short
        b"/s_new\0\0,sii\0\0\0\0",  # all arguments missing
        b"/b_alloc",  # no terminator, no type tags
        b"#bundle\0\0\0\0\0\0\0\0\x01\x00\x00\x10\x00",  # element longer than the packet
        b"#bundle\0\0\0",  # bundle header cut short
        M("/d_recv", b"garbage!").to_datagram(),  # not a SynthDef file
        M("/d_recv", b"SCgf\0\0\0\x02\0\x01").to_datagram(),  # header only
    ],
    ids=["missing_arg", "short_int", "no_args", "no_tags", "long_bundle_item", "short_bundle", "d_recv_garbage", "d_recv_header"],
)
def test_truncated_messages_leave_server_running(client, server, data):
    before = client.status().contents[1:5]
    client.send_raw(data)
    still_alive(client, server)
    assert client.status().contents[1:5] == before


@pytest.mark.parametrize(
    "message",
    [
        M("/b_alloc", 5, 1 << 30, 4),  # 16 GiB of samples
        M("/b_alloc", 5, -5, 1),
        M("/b_alloc", 5, 16, -1),
        M("/b_alloc", 5, 16, 0),
    ],
    ids=["huge", "negative_frames", "negative_channels", "zero_channels"],
)
def test_impossible_buffer_sizes_do_not_allocate(client, server, message):
    client.send(message)
    client.sync(timeout=10)
    # scsynth reports these only on its console (no /done, no /fail); a /fail is acceptable.
    assert [m for m in client.messages("/done") if m.contents[:1] == ("/b_alloc",)] == []
    info = client.request(M("/b_query", 5), "/b_info")
    assert info.contents[1:3] == (0, 0)
    still_alive(client, server)


@pytest.mark.parametrize(
    "message",
    [
        M("/c_setn", 0, 1 << 30, 1.0),
        M("/c_getn", 16000, 1000),
        M("/c_fill", 100, 1 << 30, 1.0),
    ],
    ids=["c_setn", "c_getn", "c_fill"],
)
def test_huge_bus_ranges_fail_or_are_ignored(client, server, message):
    client.send(message)
    client.sync()
    assert client.messages("/c_setn") == []
    still_alive(client, server)


def test_huge_declared_blob_size(client, server):
    # A blob whose length field claims 1 GiB.
    data = b"/d_recv\0,b\0\0" + struct.pack(">i", 1 << 30) + b"SCgf"
    client.send_raw(data)
    still_alive(client, server)


def test_error_off_suppresses_fail_replies(client, server):
    client.send(M("/error", 0))
    client.send(M("/n_free", 999))
    client.sync()
    assert client.messages("/fail") == []
    client.send(M("/error", 1))
    client.send(M("/n_free", 999))
    assert client.wait_for("/fail").contents[0] == "/n_free"
