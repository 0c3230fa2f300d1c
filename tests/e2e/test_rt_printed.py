"""What the server prints for /g_dumpTree, /n_trace and /dumpOSC: clients (sclang, supriya's
trace tests) parse it, so both servers get the same commands in one test and must print the
same text."""

import struct
import time

from supriya.osc import OscBundle, OscMessage as M

from rtserver import OscClient, ServerProcess, executables, synthdef_bytes


def printed_after(server: ServerProcess, marker: str) -> list[str]:
    lines = list(server.lines)
    starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
    assert starts, f"{server.executable} printed no line starting with {marker!r}:\n{server.output}"
    return lines[starts[0]:]


def sync(c: OscClient, sid: int) -> None:
    """A /sync with a fixed id, so that /dumpOSC prints the same text for both servers."""
    c.send(M("/sync", sid))
    c.wait_for("/synced", lambda m: m.contents[0] == sid, timeout=3)
    time.sleep(0.1)  # what the audio thread printed reaches the pipe


def _osc_str(s: bytes) -> bytes:
    return s + b"\0" * (4 - len(s) % 4)


# Argument types sclang and supriya rarely send, as raw packets (the /x ones are unknown
# commands, which both servers report): doubles, time tags, MIDI, the data-free tags, arrays,
# blobs; a 64-bit int (a tag scsynth's dump does not know); an integer address. Not a char
# ('c'): scsynth's dump misreads the rest of the message after one (docs/compatibility.md).
EXOTIC_PACKETS = [
    _osc_str(b"/x")
    + _osc_str(b",idtmTFNI[ii]sb")
    + struct.pack(">idQ", 7, 0.1, 1 << 32)
    + bytes([0x90, 0x3C, 0x7F, 0x00])
    + struct.pack(">ii", 1, 2)
    + _osc_str(b"str")
    + struct.pack(">i", 3) + b"abc\0",
    _osc_str(b"/x") + _osc_str(b",ihi") + struct.pack(">iqi", 5, -2, 6),
    struct.pack(">i", 40) + _osc_str(b",i") + struct.pack(">i", 7),
]


def run_session(exe: str) -> list[str]:
    with ServerProcess(exe) as s, OscClient(s.port) as c:
        c.send(M("/d_recv", synthdef_bytes("e2e_sine", "e2e_dc")))
        c.wait_for("/done", timeout=3)
        c.send(M("/g_new", 1, 0, 0))
        c.send(M("/g_new", 100, 0, 1))
        c.send(M("/s_new", "e2e_sine", 1000, 0, 100, "freq", 330.0, "amp", 0.0))
        c.send(M("/s_new", "e2e_dc", 1001, 1, 1, "bus", 5.0, "value", 0.1))
        c.send(M("/g_new", 200, 1, 1))
        c.send(M("/s_new", "e2e_dc", 1002, 0, 200, "bus", 6.0, "value", 2.5))
        c.send(M("/n_run", 200, 0))
        c.send(M("/n_map", 1000, "freq", 3))
        c.send(M("/n_mapa", 1000, "amp", 17))
        sync(c, 1)
        c.send(M("/g_dumpTree", 0, 0))
        sync(c, 2)
        c.send(M("/g_dumpTree", 0, 1))
        sync(c, 3)
        c.send(M("/g_dumpTree", 200, 1))  # paused: scsynth prints nothing
        sync(c, 4)
        c.send(M("/n_trace", 1))
        sync(c, 5)
        c.send(M("/n_trace", 1001))
        sync(c, 6)
        c.send(M("/n_trace", 1, 1002))  # 1002 is paused with its group: ignored
        sync(c, 7)
        # scsynth switches dumping in its audio thread, some time after the packet arrives:
        # give it that time before and after (a /sync would race it).
        c.send(M("/dumpOSC", 1))
        time.sleep(0.2)
        c.send(M("/n_set", 1001, "value", 0.25, "bus", 5))
        c.send(M("/c_set", 7, -1.5e-7, 8, 1234567.0))
        c.send(M("/d_recv", b"\x01\x02\x03\x04\x05"))
        c.send(OscBundle(contents=(M("/status"), M("/n_query", 1001), M("/g_queryTree", 0, 1)), timestamp=None))
        for raw in EXOTIC_PACKETS:
            c.send_raw(raw)
        c.send(M("/dumpOSC", 2))
        time.sleep(0.2)
        c.send(M("/c_get", 7, 8))
        c.send(M("/dumpOSC", 0))
        time.sleep(0.2)
        sync(c, 9)
        c.send(M("/g_dumpTree", 0, 0))
        sync(c, 10)
        # scsynth prints a tree when the group next runs: after the rest of the bundle.
        c.send(OscBundle(contents=(M("/g_dumpTree", 100, 1), M("/s_new", "e2e_dc", 1003, 0, 100, "bus", 9.0)), timestamp=None))
        sync(c, 11)
        return printed_after(s, "NODE TREE")


def test_dump_tree_trace_and_dump_osc_print_what_scsynth_prints(jack):
    printed = {name: run_session(exe) for name, exe in executables().items()}
    ref, dut = printed["scsynth"], printed["magnetar"]
    # The session reached every part (a case that printed nothing would pass vacuously).
    assert "TRACE Group 1" in ref and any(line.startswith("TRACE 1001  e2e_dc") for line in ref), ref
    assert any(line.startswith('[ "/n_set", 1001') for line in ref), ref
    # scsynth alone warns that /d_recv's bytes are no SynthDef; magnetar answers /fail instead.
    ref = [line for line in ref if "SynthDef" not in line and "*** ERROR" not in line]
    # magnetar reports xruns when the machine falls behind; scsynth keeps quiet about them.
    dut = [line for line in dut if "SynthDef" not in line and "ERROR" not in line and " xrun(s)" not in line]
    assert dut == ref, "\n".join(["scsynth:", *ref, "", "magnetar:", *dut])


def test_supriya_trace_node_and_get_range(exe, jack):
    """supriya's own context checks `trace_node` and `get_synth_control_range`, on either server:
    supriya parses the trace the server prints and waits for /s_getn's /n_setn."""
    import supriya
    from supriya import default

    rtserver = __import__("rtserver")
    port = rtserver.free_port()
    device = rtserver.jack_device()
    server = supriya.Server()
    server.boot(executable=exe, port=port, input_device=device, output_device=device)
    try:
        server.add_synthdefs(default)
        server.sync()
        for _ in range(5):
            server.default_group.add_group()
        server.sync()
        with server.process_protocol.capture() as printed:
            server.default_group.trace()
            time.sleep(0.2)
        assert printed.lines == [
            "TRACE Group 1",
            "   1004 group",
            "   1003 group",
            "   1002 group",
            "   1001 group",
            "   1000 group",
        ]
        synth = server.add_synth(default, frequency=432.0, amplitude=0.25, panning=0.1)
        server.sync()
        assert synth.get_range("amplitude", 5) == (0.25, 0.0, 0.0, 0.0, 0.0)
    finally:
        server.quit()
