"""Disk streaming in real time, the same tests against scsynth and magnetar: a cued file played
by DiskIn and recorded by DiskOut comes back whole, and VDiskIn reports its refills with
/diskin when given a sendID."""

import time

import numpy as np
import soundfile
from supriya import ugens as U
from supriya.osc import OscMessage as M
from supriya.ugens import SynthDefBuilder, compile_synthdefs


def load(client, *defs):
    client.send(M("/d_recv", compile_synthdefs(*defs)))
    client.wait_for("/done", lambda m: m.contents[0] == "/d_recv", timeout=5)


def cue(client, bufnum, path, frames, channels=1):
    """Buffer.cueSoundFile: /b_alloc, then /b_read leaving the file open as its completion."""
    read = M("/b_read", bufnum, str(path), 0, frames, 0, 1)
    client.send(M("/b_alloc", bufnum, frames, channels, read))
    client.wait_for("/done", lambda m: m.contents[0] == "/b_read", timeout=5)


def test_disk_in_through_disk_out_copies_a_cued_file(client, tmp_path):
    n = 60_000
    src = (np.sin(np.arange(n) * 0.01) * 0.5 + np.arange(n) / (4 * n)).astype(np.float32)
    soundfile.write(tmp_path / "src.wav", src, 48000, subtype="FLOAT")
    with SynthDefBuilder() as b:
        U.DiskOut.ar(buffer_id=1, source=U.DiskIn.ar(buffer_id=0, channel_count=1))
    load(client, b.build(name="e2e_copy"))
    cue(client, 0, tmp_path / "src.wav", 8192)
    client.request(M("/b_alloc", 1, 8192, 1), "/done", lambda m: m.contents == ("/b_alloc", 1))
    out = tmp_path / "copy.wav"
    client.request(M("/b_write", 1, str(out), "wav", "float", 0, 0, 1), "/done", lambda m: m.contents[0] == "/b_write")
    client.send(M("/s_new", "e2e_copy", 1000, 0, 0))
    time.sleep(n / 48000 + 0.5)
    # What Server.stopRecording sends: free the synth, then close the file.
    client.send(M("/n_free", 1000))
    client.request(M("/b_close", 1), "/done", lambda m: m.contents[0] == "/b_close", timeout=5)
    data, sr = soundfile.read(out, dtype="float32")
    assert sr == 48000
    assert data.size >= n, f"the copy has {data.size} frames, the file {n}"
    assert np.array_equal(data[:n], src), "the copy differs from the file"
    assert not data[n:].any(), "sound after the end of the file"


def test_vdisk_in_reports_each_refill_with_diskin(client, tmp_path):
    soundfile.write(tmp_path / "src.wav", np.full(48000, 0.25, dtype=np.float32), 48000, subtype="FLOAT")
    with SynthDefBuilder() as b:
        U.Out.ar(bus=0, source=U.VDiskIn.ar(buffer_id=0, rate=1.0, loop=1, send_id=5, channel_count=1) * 0.0)
    load(client, b.build(name="e2e_vdisk"))
    cue(client, 0, tmp_path / "src.wav", 4096)
    client.send(M("/s_new", "e2e_vdisk", 1000, 0, 0))
    time.sleep(6 * 2048 / 48000 + 0.2)
    client.send(M("/n_free", 1000))
    client.sync()
    replies = [m.contents for m in client.messages("/diskin")]
    assert len(replies) >= 6, f"only {len(replies)} /diskin replies: {replies}"
    assert all(r[:2] == (1000, 5) for r in replies), replies
    # Where the playhead is plus the frames asked for so far (halves of 2048 frames).
    assert [r[2] for r in replies[:6]] == [4096.0, 4096.0, 8192.0, 8192.0, 12288.0, 12288.0]
