"""Control buses and sample buffers over OSC, including files read and written by the server."""

import numpy as np
import pytest
import soundfile
from supriya.osc import OscMessage as M


def test_c_set_and_c_get_round_trip(client):
    client.send(M("/c_set", 3, 1.5, 7, -2.25))
    assert client.request(M("/c_get", 3, 7, 8), "/c_set").contents == (3, 1.5, 7, -2.25, 8, 0.0)


def test_c_setn_c_fill_and_c_getn(client):
    client.send(M("/c_setn", 10, 3, 1.0, 2.0, 3.0))
    client.send(M("/c_fill", 20, 2, 0.5))
    m = client.request(M("/c_getn", 10, 3, 19, 4), "/c_setn")
    assert m.contents == (10, 3, 1.0, 2.0, 3.0, 19, 4, 0.0, 0.5, 0.5, 0.0)


def test_synth_writes_control_bus(client):
    client.send(M("/s_new", "e2e_dc", 1000, 0, 0, "bus", 5.0, "value", 0.75))
    client.sync()
    assert client.request(M("/c_get", 5), "/c_set").contents == (5, 0.75)


def test_b_alloc_then_b_query_reports_frames_channels_rate(client):
    client.send(M("/b_alloc", 0, 100, 2))
    assert client.wait_for("/done").contents == ("/b_alloc", 0)
    info = client.request(M("/b_query", 0), "/b_info")
    assert info.contents == (0, 100, 2, 48000.0)
    # An unallocated buffer answers with zeros.
    assert client.request(M("/b_query", 9), "/b_info").contents[:3] == (9, 0, 0)


def test_b_set_b_setn_b_fill_b_get_b_getn(client):
    client.send(M("/b_alloc", 0, 8, 2))
    client.wait_for("/done")
    client.send(M("/b_set", 0, 3, 0.5))
    client.send(M("/b_setn", 0, 5, 2, 1.0, 2.0))
    client.send(M("/b_fill", 0, 10, 3, 0.75))
    assert client.request(M("/b_get", 0, 3, 5), "/b_set").contents == (0, 3, 0.5, 5, 1.0)
    m = client.request(M("/b_getn", 0, 0, 16), "/b_setn")
    expected = [0.0] * 16
    expected[3], expected[5], expected[6] = 0.5, 1.0, 2.0
    expected[10:13] = [0.75] * 3
    assert m.contents == (0, 0, 16, *expected)
    client.send(M("/b_zero", 0))
    assert client.wait_for("/done").contents == ("/b_zero", 0)
    assert client.request(M("/b_getn", 0, 0, 16), "/b_setn").contents == (0, 0, 16, *([0.0] * 16))


def test_b_alloc_completion_message_runs_after_allocation(client):
    done = M("/b_set", 1, 2, 9.0).to_datagram()
    client.send(M("/b_alloc", 1, 4, 1, done))
    client.wait_for("/done")
    assert client.request(M("/b_get", 1, 2), "/b_set").contents == (1, 2, 9.0)


def test_b_free_releases_the_buffer(client):
    client.send(M("/b_alloc", 0, 64, 1))
    client.wait_for("/done")
    client.send(M("/b_free", 0))
    assert client.wait_for("/done").contents == ("/b_free", 0)
    assert client.request(M("/b_query", 0), "/b_info").contents[:3] == (0, 0, 0)


def test_b_allocRead_loads_a_sound_file(client, tmp_path):
    data = np.stack([np.linspace(-1, 1, 1000), np.linspace(0, 0.5, 1000)], axis=1).astype(np.float32)
    path = tmp_path / "in.wav"
    soundfile.write(path, data, 44100, subtype="FLOAT")
    client.send(M("/b_allocRead", 2, str(path)))
    assert client.wait_for(["/done", "/fail"], timeout=3).contents == ("/b_allocRead", 2)
    assert client.request(M("/b_query", 2), "/b_info").contents == (2, 1000, 2, 44100.0)
    m = client.request(M("/b_getn", 2, 0, 6), "/b_setn")  # interleaved frames 0..2
    np.testing.assert_allclose(m.contents[3:], data[:3].reshape(-1), rtol=0, atol=1e-7)
    # start frame and frame count
    client.send(M("/b_allocRead", 3, str(path), 500, 10))
    client.wait_for("/done", lambda x: x.contents == ("/b_allocRead", 3), timeout=3)
    assert client.request(M("/b_query", 3), "/b_info").contents[:3] == (3, 10, 2)
    m = client.request(M("/b_get", 3, 0), "/b_set")
    assert m.contents[2] == pytest.approx(float(data[500, 0]), abs=1e-7)


def test_b_write_writes_a_readable_file(client, tmp_path):
    client.send(M("/b_alloc", 0, 16, 1))
    client.wait_for("/done")
    values = [i / 16 for i in range(16)]
    client.send(M("/b_setn", 0, 0, 16, *values))
    path = tmp_path / "out.wav"
    client.send(M("/b_write", 0, str(path), "wav", "float"))
    assert client.wait_for(["/done", "/fail"], timeout=3).contents == ("/b_write", 0)
    data, rate = soundfile.read(path, dtype="float32")
    assert rate == 48000
    np.testing.assert_allclose(data, values, rtol=0, atol=1e-7)


def test_b_allocRead_of_missing_file_fails_and_leaves_buffer_empty(client, tmp_path):
    client.send(M("/b_allocRead", 4, str(tmp_path / "missing.wav")))
    m = client.wait_for(["/done", "/fail"], timeout=3)
    assert m.address == "/fail" and m.contents[0] == "/b_allocRead"
    assert isinstance(m.contents[1], str) and m.contents[1]
    assert client.request(M("/b_query", 4), "/b_info").contents[:3] == (4, 0, 0)


def test_b_write_right_after_b_alloc_writes_the_new_buffer(client, tmp_path):
    # Commands run in the order they arrive: /b_write, sent without waiting
    # for the /done of the /b_alloc before it, writes the reallocated buffer
    # (8 zero frames), not the 16 frames of values it replaces.
    client.send(M("/b_alloc", 0, 16, 1))
    client.wait_for("/done")
    client.send(M("/b_setn", 0, 0, 16, *[0.5] * 16))
    client.sync()
    path = tmp_path / "realloc.wav"
    client.send(M("/b_alloc", 0, 8, 1))
    client.send(M("/b_write", 0, str(path), "wav", "float"))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_write", timeout=3)
    data, _ = soundfile.read(path, dtype="float32")
    np.testing.assert_array_equal(data, np.zeros(8, dtype=np.float32))


def test_b_read_into_part_of_a_buffer_keeps_the_rest(client, tmp_path):
    path = tmp_path / "ramp.wav"
    soundfile.write(path, np.full(4, 0.25, dtype=np.float32), 48000, subtype="FLOAT")
    client.send(M("/b_alloc", 1, 12, 1))
    client.wait_for("/done")
    client.send(M("/b_setn", 1, 0, 12, *[i / 12 for i in range(12)]))
    client.send(M("/b_read", 1, str(path), 0, 4, 5))
    client.wait_for("/done", predicate=lambda m: m.contents[0] == "/b_read", timeout=3)
    got = client.request(M("/b_getn", 1, 0, 12), "/b_setn").contents[3:]
    want = [i / 12 for i in range(12)]
    want[5:9] = [0.25] * 4
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)


def test_b_gen_and_b_zero_are_asynchronous(client):
    # Like scsynth, /b_gen and /b_zero do their work after the bundle that holds them: a /b_get
    # beside them still reads the old contents; after their /done it reads the new ones.
    from rtserver import bundle

    client.send(M("/b_alloc", 1, 64, 1))
    client.wait_for("/done")
    client.send(M("/b_fill", 1, 0, 64, 0.25))
    client.send(bundle(None, M("/b_gen", 1, "sine1", 0, 1.0), M("/b_get", 1, 16)))
    assert client.wait_for("/b_set").contents == pytest.approx((1, 16, 0.25))
    assert client.wait_for("/done", timeout=3).contents == ("/b_gen", 1)
    # Without the clear flag sine1 adds to what the buffer holds.
    assert client.request(M("/b_get", 1, 16), "/b_set").contents == pytest.approx((1, 16, 1.25))
    client.send(bundle(None, M("/b_zero", 1), M("/b_get", 1, 16)))
    assert client.wait_for("/b_set").contents == pytest.approx((1, 16, 1.25))
    assert client.wait_for("/done", timeout=3).contents == ("/b_zero", 1)
    assert client.request(M("/b_get", 1, 16), "/b_set").contents == pytest.approx((1, 16, 0.0))
    client.send(M("/b_gen", 1, "sine1", 4, 1.0))
    assert client.wait_for("/done", timeout=3).contents == ("/b_gen", 1)
    assert client.request(M("/b_get", 1, 16), "/b_set").contents == pytest.approx((1, 16, 1.0), abs=1e-6)
