#!/usr/bin/env python3
"""Writes the demo score: a few voices of a small subtractive synth with an
envelope, a delay send and a moving filter, 8 seconds long."""
import struct
import sys

import supriya
from supriya import ugens as U
from supriya.ugens import SynthDefBuilder, compile_synthdefs


def synthdefs():
    with SynthDefBuilder(freq=220.0, amp=0.1, pan=0.0, gate=1.0, cutoff=2000.0) as b:
        env = U.EnvGen.kr(envelope=supriya.Envelope.adsr(attack_time=0.01, decay_time=0.2, sustain=0.6, release_time=0.8), gate=b["gate"], done_action=2)
        osc = U.Saw.ar(frequency=b["freq"]) + U.Pulse.ar(frequency=b["freq"] * 1.01, width=0.3)
        filt = U.RLPF.ar(source=osc, frequency=b["cutoff"] * (1 + U.SinOsc.kr(frequency=0.3) * 0.5), reciprocal_of_q=0.3)
        sig = filt * env * b["amp"]
        U.Out.ar(bus=0, source=U.Pan2.ar(source=sig, position=b["pan"]))
        U.Out.ar(bus=16, source=sig * 0.5)
    voice = b.build(name="demo_voice")
    with SynthDefBuilder() as b:
        wet = U.CombL.ar(source=U.In.ar(bus=16), maximum_delay_time=0.5, delay_time=0.375, decay_time=3.0)
        U.Out.ar(bus=0, source=[wet * 0.6, U.DelayN.ar(source=wet, maximum_delay_time=0.1, delay_time=0.013) * 0.6])
    echo = b.build(name="demo_echo")
    return [voice, echo]


def osc_string(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)


def osc_message(address, *args):
    tags, data = ",", b""
    for a in args:
        if isinstance(a, bytes):
            tags += "b"
            data += struct.pack(">i", len(a)) + a + b"\0" * (-len(a) % 4)
        elif isinstance(a, str):
            tags += "s"
            data += osc_string(a)
        elif isinstance(a, int):
            tags += "i"
            data += struct.pack(">i", a)
        else:
            tags += "f"
            data += struct.pack(">f", a)
    return osc_string(address) + osc_string(tags) + data


def bundle(seconds, *messages):
    body = b"#bundle\0" + struct.pack(">Q", int(round(seconds * 2**32)))
    for m in messages:
        body += struct.pack(">i", len(m)) + m
    return struct.pack(">i", len(body)) + body


def main(path):
    score = [bundle(0.0, osc_message("/d_recv", compile_synthdefs(*synthdefs())),
                    osc_message("/g_new", 1, 0, 0), osc_message("/g_new", 2, 3, 1),
                    osc_message("/s_new", "demo_echo", 900, 0, 2))]
    notes = [57, 60, 64, 67, 69, 72, 64, 60]
    node = 1000
    for i, n in enumerate(notes):
        t = 0.5 + i * 0.75
        freq = 440.0 * 2 ** ((n - 69) / 12)
        score.append(bundle(t, osc_message("/s_new", "demo_voice", node, 0, 1, "freq", freq,
                                           "pan", (i % 3 - 1) * 0.6, "cutoff", 800.0 + 300 * i)))
        score.append(bundle(t + 0.5, osc_message("/n_set", node, "gate", 0.0)))
        node += 1
    score.append(bundle(8.0, osc_message("/c_set", 0, 0.0)))
    score.sort(key=lambda b: struct.unpack(">Q", b[12:20])[0])
    with open(path, "wb") as f:
        f.write(b"".join(score))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo.osc")
