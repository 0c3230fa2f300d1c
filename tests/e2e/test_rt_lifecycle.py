"""Boot, /status, /version, /quit and port reuse, TCP with password, restricted paths, supriya."""

import socket
import struct
import time

import numpy as np
import pytest
import soundfile
from supriya.osc import OscMessage as M

from rtserver import READY_LINE, OscClient, ServerProcess, synthdefs


def test_boot_prints_ready_line(server):
    assert READY_LINE in server.output


def test_status_reply_layout(server):
    with OscClient(server.port) as c:
        m = c.status()
    assert len(m.contents) == 9
    unused, ugens, synths, groups, defs, avg_cpu, peak_cpu, nominal_sr, actual_sr = m.contents
    assert unused == 1
    assert (ugens, synths, groups, defs) == (0, 0, 1, 0)
    assert all(isinstance(x, float) for x in (avg_cpu, peak_cpu, nominal_sr, actual_sr))
    assert 0 <= avg_cpu <= 100 and 0 <= peak_cpu <= 100
    assert nominal_sr == 48000.0
    assert abs(actual_sr - 48000.0) < 480


def test_version_reply_layout(server):
    with OscClient(server.port) as c:
        m = c.request(M("/version"), "/version.reply")
    name, major, minor, patch, branch, commit = m.contents
    assert isinstance(name, str) and name
    assert isinstance(major, int) and isinstance(minor, int) and major >= 3
    assert isinstance(patch, str) and isinstance(branch, str) and isinstance(commit, str)


def test_quit_replies_done_and_port_is_reusable_at_once(server, boot):
    with OscClient(server.port) as c:
        t0 = time.monotonic()
        c.send(M("/quit"))
        assert c.wait_for("/done", timeout=1).contents == ("/quit",)
    assert server.wait_exit(1.0) == 0, f"still running 1 s after /quit:\n{server.output}"
    assert time.monotonic() - t0 < 1.0
    again = boot(port=server.port)
    with OscClient(again.port) as c:
        assert c.status().contents[3] == 1


def test_unknown_flag_is_an_error(exe, jack):
    import subprocess

    r = subprocess.run([exe, "-u", "57009", "-Q", "3"], capture_output=True, text=True, timeout=10)
    assert r.returncode != 0
    assert READY_LINE not in r.stdout
    assert "-u" in r.stdout + r.stderr  # a usage text that lists the flags


def test_tcp_commands_and_notifications(boot):
    s = boot(protocol="tcp")
    with OscClient(s.port, protocol="tcp") as c:
        assert c.status().contents[3] == 1
        c.request(M("/notify", 1), "/done")
        c.send(M("/d_recv", __import__("rtserver").synthdef_bytes("e2e_sine")))
        c.wait_for("/done")
        c.send(M("/s_new", "e2e_sine", 1000, 0, 0))
        assert c.wait_for("/n_go").contents == (1000, 0, -1, -1, 0)
        c.sync()


def _password_frame(password: str) -> bytes:
    data = password.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return data


def test_tcp_password_is_required_first(boot):
    s = boot(protocol="tcp", extra=["-p", "s3cret"])
    with OscClient(s.port, protocol="tcp") as good:
        good.send_raw(_password_frame("s3cret"))
        # scsynth pauses about a second after each password attempt.
        assert good.request(M("/status"), "/status.reply", timeout=4).contents[3] == 1
    # scsynth 3.13 aborts if a client hangs up while its password is being checked, so the
    # refused connections stay open until the server has been stopped.
    none = OscClient(s.port, protocol="tcp")
    wrong = OscClient(s.port, protocol="tcp")
    s.close_after_stop += [none, wrong]
    none.send(M("/status"))
    wrong.send_raw(_password_frame("guess"))
    wrong.send(M("/status"))
    assert none.maybe("/status.reply", timeout=1.5) is None
    assert wrong.maybe("/status.reply", timeout=0.1) is None


def test_restricted_path_refuses_files_outside(boot, tmp_path):
    inside = tmp_path / "inside"
    inside.mkdir()
    data = np.linspace(-0.5, 0.5, 64, dtype=np.float32)
    soundfile.write(inside / "ok.wav", data, 48000, subtype="FLOAT")
    soundfile.write(tmp_path / "secret.wav", data, 48000, subtype="FLOAT")
    s = boot(extra=["-P", str(inside)])
    with OscClient(s.port) as c:
        c.send(M("/b_allocRead", 0, str(inside / "ok.wav")))
        assert c.wait_for(["/done", "/fail"], timeout=3).contents == ("/b_allocRead", 0)
        assert c.request(M("/b_query", 0), "/b_info").contents[1] == 64
        for i, path in enumerate([f"{inside}/../secret.wav", "../secret.wav", str(tmp_path / "secret.wav")]):
            c.send(M("/b_allocRead", 1 + i, path))
            m = c.wait_for(["/done", "/fail"], timeout=3)
            assert m.address == "/fail" and m.contents[0] == "/b_allocRead", path
            assert c.request(M("/b_query", 1 + i), "/b_info").contents[1] == 0
        # Writing through "../" must not create a file outside either.
        c.send(M("/b_write", 0, f"{inside}/../escaped.wav", "wav", "float"))
        c.wait_for(["/done", "/fail"], timeout=3)
        assert not (tmp_path / "escaped.wav").exists()
        c.sync()
        assert c.status().contents[3] == 1


def test_supriya_drives_the_server(exe, jack):
    import supriya

    rtserver = __import__("rtserver")
    port = rtserver.free_port()
    device = rtserver.jack_device()
    server = supriya.Server()
    try:
        server.boot(executable=exe, port=port, load_synthdefs=False, input_device=device, output_device=device)
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"supriya could not boot {exe}: {e}", pytrace=False)
    try:
        d = synthdefs()["e2e_sine"]
        server.add_synthdefs(d)
        server.sync()
        group = server.add_group()
        synth = group.add_synth(d, freq=330.0)
        server.sync()
        tree = server.query_tree()
        text = str(tree)
        assert "e2e_sine" in text and str(synth.id_) in text and str(group.id_) in text
        status = server.query_status()
        assert status.synth_count == 1
        synth.free()
        server.sync()
        assert server.query_status().synth_count == 0
    finally:
        server.quit()
