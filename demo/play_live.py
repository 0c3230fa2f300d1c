#!/usr/bin/env python3
"""Boots magnetar in real time (its built-in clock driver when no JACK server
runs), plays the demo's notes over UDP as time-stamped bundles, records what
the driver plays, and quits."""
import os
import socket
import struct
import subprocess
import sys
import time

from make_demo_score import osc_message, synthdefs
from supriya.ugens import compile_synthdefs

NTP_UNIX = 2208988800


def bundle_at(unix_time, *messages):
    secs = int(unix_time) + NTP_UNIX
    frac = int((unix_time % 1) * 2**32)
    body = b"#bundle\0" + struct.pack(">II", secs, frac)
    for m in messages:
        body += struct.pack(">i", len(m)) + m
    return body


def main(binary, record_path, port=57150):
    env = dict(os.environ, MAGNETAR_RECORD=record_path)
    server = subprocess.Popen([binary, "-u", str(port), "-o", "2"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env)
    for line in server.stdout:
        print("  |", line.rstrip())
        if "server ready" in line:
            break
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(3)
    addr = ("127.0.0.1", port)

    def request(msg, expect):
        sock.sendto(msg, addr)
        while True:
            data, _ = sock.recvfrom(65536)
            if data.startswith(expect.encode()):
                return data

    request(osc_message("/d_recv", compile_synthdefs(*synthdefs())), "/done")
    sock.sendto(osc_message("/g_new", 1, 0, 0), addr)
    sock.sendto(osc_message("/s_new", "demo_echo", 900, 1, 1), addr)
    start = time.time() + 0.3
    notes = [57, 60, 64, 67, 69, 72, 64, 60]
    for i, n in enumerate(notes):
        t = start + i * 0.4
        freq = 440.0 * 2 ** ((n - 69) / 12)
        sock.sendto(bundle_at(t, osc_message("/s_new", "demo_voice", 1000 + i, 0, 1, "freq", freq,
                                             "pan", (i % 3 - 1) * 0.6)), addr)
        sock.sendto(bundle_at(t + 0.3, osc_message("/n_set", 1000 + i, "gate", 0.0)), addr)
    time.sleep(start + len(notes) * 0.4 + 1.5 - time.time())
    status = request(osc_message("/status"), "/status.reply")
    request(osc_message("/quit"), "/done")
    server.wait(timeout=5)
    print(f"  magnetar answered /status ({len(status)} bytes) and quit with exit code {server.returncode}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
