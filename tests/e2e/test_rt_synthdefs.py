"""Loading and freeing SynthDefs: /d_recv, /d_load, /d_free, completion messages, /sync ordering."""

import struct
import time

from supriya.osc import OscMessage as M

from rtserver import OscClient, synthdef_bytes


def test_d_recv_adds_defs_counted_by_status(server):
    with OscClient(server.port) as c:
        assert c.status().contents[4] == 0
        c.send(M("/d_recv", synthdef_bytes("e2e_sine", "e2e_dc")))
        assert c.wait_for("/done").contents == ("/d_recv",)
        assert c.status().contents[4] == 2


def test_d_recv_completion_message_runs_once_def_is_loaded(server):
    with OscClient(server.port) as c:
        c.request(M("/notify", 1), "/done")
        c.send(M("/d_recv", synthdef_bytes("e2e_sine"), M("/s_new", "e2e_sine", 1000, 0, 0)))
        c.wait_for("/done")
        assert c.wait_for("/n_go").contents[0] == 1000
        assert c.messages("/fail") == []


def test_d_load_reads_a_synthdef_file(server, tmp_path):
    path = tmp_path / "e2e_dc.scsyndef"
    path.write_bytes(synthdef_bytes("e2e_dc"))
    with OscClient(server.port) as c:
        c.send(M("/d_load", str(path)))
        assert c.wait_for(["/done", "/fail"], timeout=3).contents == ("/d_load",)
        c.send(M("/s_new", "e2e_dc", 1000, 0, 0, "bus", 2.0, "value", 3.0))
        c.sync()
        assert c.request(M("/c_get", 2), "/c_set").contents == (2, 3.0)


def test_d_load_of_missing_file_fails(server, tmp_path):
    with OscClient(server.port) as c:
        c.send(M("/d_load", str(tmp_path / "nope.scsyndef")))
        m = c.wait_for(["/done", "/fail"], timeout=3)
        assert m.address == "/fail" and m.contents[0] == "/d_load"
        assert c.status().contents[4] == 0


def malformed_def_bytes(name: str) -> bytes:
    """A def giving SinOsc none of its inputs: `Out.ar(0, SinOsc.ar())` with SinOsc's two
    inputs left out (the format allows it; the UGen cannot run so)."""
    def pstr(s):
        return bytes([len(s)]) + s.encode()

    i32 = lambda v: struct.pack(">i", v)  # noqa: E731
    b = b"SCgf" + i32(2) + struct.pack(">h", 1) + pstr(name)
    b += i32(1) + struct.pack(">f", 0.0) + i32(0) + i32(0) + i32(2)
    b += pstr("SinOsc") + bytes([2]) + i32(0) + i32(1) + struct.pack(">h", 0) + bytes([2])
    b += pstr("Out") + bytes([2]) + i32(2) + i32(0) + struct.pack(">h", 0) + i32(-1) + i32(0) + i32(0) + i32(0)
    return b + struct.pack(">h", 0)


def test_d_recv_of_a_def_whose_units_cannot_run_fails_and_the_server_plays_on(server, exe):
    with OscClient(server.port) as c:
        c.send(M("/d_recv", malformed_def_bytes("e2e_bad")))
        m = c.wait_for(["/done", "/fail"], timeout=3)
        if "magnetar" in exe:
            assert m.address == "/fail" and m.contents[0] == "/d_recv"
            assert "e2e_bad" in m.contents[1] and "SinOsc" in m.contents[1], m.contents
            assert c.status().contents[4] == 0
        else:
            # scsynth takes any def as given (and its SinOsc would read past its inputs).
            assert m.contents == ("/d_recv",)
        # Still serving: a good def loads and plays.
        c.send(M("/d_recv", synthdef_bytes("e2e_dc")))
        assert c.wait_for("/done").contents == ("/d_recv",)
        c.send(M("/s_new", "e2e_dc", 1000, 0, 0, "bus", 2.0, "value", 3.0))
        c.sync()
        assert c.request(M("/c_get", 2), "/c_set").contents == (2, 3.0)


def test_d_free_removes_def_and_s_new_then_fails(client):
    before = client.status().contents[4]
    client.send(M("/d_free", "e2e_sine"))
    client.sync()
    assert client.status().contents[4] == before - 1
    client.send(M("/s_new", "e2e_sine", 1000, 0, 0))
    assert client.wait_for("/fail").contents == ("/s_new", "SynthDef not found")


def test_d_free_notifies_d_removed(client):
    client.send(M("/d_free", "e2e_dc"))
    assert client.wait_for("/d_removed").contents == ("e2e_dc",)


def test_running_synth_survives_d_free_of_its_def(client):
    client.send(M("/s_new", "e2e_dc", 1000, 0, 0, "bus", 1.0, "value", 0.5))
    client.send(M("/d_free", "e2e_dc"))
    client.sync()
    assert client.request(M("/c_get", 1), "/c_set").contents == (1, 0.5)
    assert client.status().contents[2] == 1


def test_sync_answers_after_earlier_async_commands_complete(client, tmp_path):
    path = tmp_path / "e2e_trig.scsyndef"
    path.write_bytes(synthdef_bytes("e2e_trig"))
    client.send(M("/b_alloc", 0, 48000, 2))
    client.send(M("/d_load", str(path)))
    client.send(M("/b_alloc", 1, 1024, 1))
    client.send(M("/sync", 77))
    order = []
    for _ in range(4):
        m = client.wait_for(["/done", "/synced"], timeout=3)
        order.append(m.contents[0] if m.address == "/done" else ("synced", m.contents[0]))
    assert order == ["/b_alloc", "/d_load", "/b_alloc", ("synced", 77)]


def test_a_pattern_steps_a_control_bus_and_ends_its_synth(server):
    """Duty.kr stepping through a Dseq of 1, 2, 3, 4 every 0.1 s writes them to a bus in order,
    and its done action frees the synth once the pattern has run out."""
    with OscClient(server.port) as c:
        c.request(M("/notify", 1), "/done")
        c.send(M("/d_recv", synthdef_bytes("e2e_steps")))
        c.wait_for("/done")
        c.send(M("/s_new", "e2e_steps", 1000, 0, 0, "bus", 5.0, "dur", 0.1))
        started = c.wait_received("/n_go").time
        seen = []
        while not c.messages("/n_end") and time.monotonic() - started < 3.0:
            value = c.request(M("/c_get", 5), "/c_set").contents[1]
            if not seen or seen[-1] != value:
                seen.append(value)
            time.sleep(0.01)
        ended = c.wait_received("/n_end", timeout=1.0)
        assert ended.message.contents[0] == 1000
        assert seen == [1.0, 2.0, 3.0, 4.0][: len(seen)] and len(seen) >= 3, seen
        # Four values of 0.1 s: the synth ends after about 0.4 s, not before 0.3.
        assert 0.3 <= ended.time - started <= 1.5, ended.time - started


def test_poll_prints_its_value_and_sends_it_as_tr(server):
    with OscClient(server.port) as c:
        c.request(M("/notify", 1), "/done")
        c.send(M("/d_recv", synthdef_bytes("e2e_poll")))
        c.wait_for("/done")
        c.send(M("/s_new", "e2e_poll", 1000, 0, 0, "value", 0.375))
        assert c.wait_for("/tr", timeout=2).contents == (1000, 9, 0.375)
        deadline = time.monotonic() + 2.0
        while "DC: 0.375" not in server.lines and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "DC: 0.375" in server.lines, server.output[-2000:]


def test_synths_with_local_delay_lines_run_side_by_side(server):
    """Each synth gets its own LocalBuf: three of them delay a constant by 0.2 s, so their buses
    read 0 at first and 0.5 after the delay; the server stays up and answers."""
    with OscClient(server.port) as c:
        c.send(M("/d_recv", synthdef_bytes("e2e_local_delay")))
        c.wait_for("/done")
        for i in range(3):
            c.send(M("/s_new", "e2e_local_delay", 1000 + i, 0, 0, "bus", 10.0 + i))
        c.sync()
        assert c.messages("/fail") == []
        time.sleep(0.6)
        values = [c.request(M("/c_get", 10 + i), "/c_set").contents[1] for i in range(3)]
        assert values == [0.5, 0.5, 0.5], values
        assert c.status().contents[2] == 3


def padded_dc_def() -> tuple[str, bytes]:
    """A DC-writing def whose file length is not a multiple of 4, so a blob holding it has padding."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder, compile_synthdefs

    for name in ("pad_" + "abcdefghijklmnop"[:n] for n in range(1, 17)):
        with SynthDefBuilder(bus=0.0, value=0.25) as b:
            U.ReplaceOut.kr(bus=b["bus"], source=U.DC.kr(source=b["value"]))
        data = compile_synthdefs(b.build(name=name))
        if len(data) % 4 != 0 and len(name) % 4 in (0, 1):
            return name, data
    raise AssertionError("no def name gives a blob with padding and a name with room for garbage")


def osc_string_with_garbage(s: str) -> bytes:
    """s, its NUL, then non-NUL padding up to the word's last byte (which must be NUL to end it)."""
    raw = s.encode() + b"\0"
    assert len(raw) % 4 in (1, 2), "no room for garbage before the word's last byte"
    while len(raw) % 4 != 3:
        raw += b"\xa5"
    return raw + b"\0"


def test_garbage_in_padding_is_ignored_as_sclang_sends_it(server, exe, tmp_path):
    """sclang's blob writer leaves garbage after a blob's bytes; scsynth skips padding unread,
    after blobs and after strings, and so must the server here."""
    name, data = padded_dc_def()
    d_recv = b"/d_recv\0,b\0\0" + struct.pack(">i", len(data)) + data + b"\xde\xad\xbe"[: -len(data) % 4]
    assert len(d_recv) % 4 == 0
    # A path whose NUL is followed by garbage up to the end of its word.
    for n in range(1, 5):
        path = tmp_path / ("d" * n) / "e2e_dc.scsyndef"
        if len(str(path)) % 4 in (0, 1):
            break
    path.parent.mkdir()
    path.write_bytes(synthdef_bytes("e2e_dc"))
    d_load = b"/d_load\0,s\0\0" + osc_string_with_garbage(str(path))
    assert b"\xa5" in d_load
    with OscClient(server.port) as c:
        c.send_raw(d_recv)
        assert c.wait_for(["/done", "/fail"], timeout=3).contents == ("/d_recv",)
        c.send_raw(d_load)
        assert c.wait_for(["/done", "/fail"], timeout=3).contents == ("/d_load",)
        assert c.status().contents[4] == 2
        c.send(M("/s_new", name, 1000, 0, 0, "bus", 6.0, "value", 0.75))
        c.send(M("/s_new", "e2e_dc", 1001, 0, 0, "bus", 7.0, "value", 0.5))
        c.sync()
        assert c.messages("/fail") == []
        assert c.request(M("/c_get", 6), "/c_set").contents == (6, 0.75)
        assert c.request(M("/c_get", 7), "/c_set").contents == (7, 0.5)

        # A def name with garbage padding: scsynth compares names word by word, padding
        # included, and finds no def; magnetar matches the name's text (docs/compatibility.md).
        s_new = b"/s_new\0\0,siii\0\0\0" + osc_string_with_garbage(name) + struct.pack(">iii", 1002, 0, 0)
        c.send_raw(s_new)
        c.sync()
        if "magnetar" in exe:
            assert c.messages("/fail") == []
            assert c.status().contents[2] == 3
        else:
            assert [m.contents for m in c.messages("/fail")] == [("/s_new", "SynthDef not found")]


def test_truncated_packet_gets_a_fail_naming_the_problem(server, exe):
    """A packet cut inside an argument cannot be read; scsynth reads past it, magnetar says so."""
    with OscClient(server.port) as c:
        c.request(M("/notify", 1), "/done")
        c.send_raw(b"/n_free\0,ii\0\0\0\0\x03")
        c.sync()
        fails = c.messages("/fail")
        if "magnetar" in exe:
            assert len(fails) == 1 and fails[0].contents[0] == "/n_free", fails
            assert "truncated" in fails[0].contents[1], fails
        assert c.status().contents[2] == 0
def _parallel_sines(name: str, count: int):
    """`count` SinOsc read together by one Out: `count` wire buffers live at once."""
    from supriya import ugens as U
    from supriya.ugens import SynthDefBuilder

    with SynthDefBuilder() as b:
        U.Out.ar(bus=0, source=[U.SinOsc.ar(frequency=100.0 * (k + 1)) * 0.01 for k in range(count)])
    return b.build(name=name)


def test_a_def_needing_more_wire_buffers_than_w_is_left_out(boot):
    from supriya.ugens import compile_synthdefs

    # Four sines read together need four buffers, eight need eight (measured
    # against scsynth from -w 1 to 9).
    server = boot(extra=("-w", "7"))
    with OscClient(server.port) as c:
        # One def per file: scsynth drops a whole file when one of its defs needs too many.
        c.send(M("/d_recv", compile_synthdefs(_parallel_sines("few_wires", 4))))
        c.send(M("/d_recv", compile_synthdefs(_parallel_sines("many_wires", 8))))
        c.request(M("/sync", 1), "/synced", timeout=3)
        c.send(M("/s_new", "few_wires", 1000, 0, 0))
        c.send(M("/s_new", "many_wires", 1001, 0, 0))
        c.request(M("/sync", 2), "/synced", timeout=3)
        missing = [m.contents for m in c.messages("/fail") if m.contents[0] == "/s_new"]
        assert missing == [("/s_new", "SynthDef not found")]
        assert c.status().contents[2] == 1
