"""Turns captured traffic into seed inputs for each fuzz target.

    python3 fuzz/seeds/make_seeds.py SCORES_DIR SESSIONS_DIR OUT_DIR

SCORES_DIR holds scores (capture_compat.py), SESSIONS_DIR streams of
length-prefixed packets (capture_sessions.py). OUT_DIR/<target>/ receives
the seeds; scripts/fuzz.sh minimises them into fuzz/corpus/<target>/.
"""

import hashlib
import struct
import sys
from pathlib import Path

import numpy as np
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "robustness"))
from server_fuzz import frames  # noqa: E402  (the length-prefixed packets of a stream or score)


def messages(packet: bytes):
    """The messages of a packet, nested bundles opened."""
    if packet.startswith(b"#bundle\0"):
        yield from (m for element in frames(packet[16:]) for m in messages(element))
    else:
        yield packet


def blobs(message: bytes):
    """The blob arguments of one message."""
    try:
        end = message.index(b"\0")
        pos = (end + 4) & ~3
        end = message.index(b"\0", pos)
        tags = message[pos + 1 : end].decode()
        pos = (end + 4) & ~3
        for t in tags:
            if t in "ifc":
                pos += 4
            elif t in "hdt":
                pos += 8
            elif t == "s":
                pos = (message.index(b"\0", pos) + 4) & ~3
            elif t == "b":
                (n,) = struct.unpack_from(">i", message, pos)
                yield message[pos + 4 : pos + 4 + n]
                pos += 4 + ((n + 3) & ~3)
    except (ValueError, struct.error, UnicodeDecodeError):
        return


def save(out: Path, target: str, data: bytes) -> None:
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def main(scores: Path, sessions: Path, out: Path) -> None:
    streams = [p.read_bytes() for p in sorted(scores.iterdir())] + [p.read_bytes() for p in sorted(sessions.iterdir())]
    for stream in streams:
        save(out, "commands", stream)
        save(out, "tcp_stream", stream)
        for packet in frames(stream):
            save(out, "osc_packet", packet)
            for m in messages(packet):
                if m.startswith(b"/d_recv\0"):
                    for b in blobs(m):
                        save(out, "synthdef", b)
    for p in sorted(scores.iterdir()):
        save(out, "score", p.read_bytes())
    # Sound files of every header and sample format the buffer commands read.
    tmp = out / "tmp.snd"
    signal = (np.sin(np.arange(96) * 0.3)[:, None] * np.array([[0.5, -0.25]])).astype(np.float32)
    formats = soundfile.available_formats()
    for fmt in ["WAV", "AIFF", "AU", "CAF", "FLAC", "W64", "RF64", "IRCAM", "NIST", "SVX", "VOC", "OGG", "MAT5", "PAF"]:
        if fmt not in formats:
            continue
        for subtype in soundfile.available_subtypes(fmt):
            for channels in (1, 2):
                try:
                    soundfile.write(tmp, signal[:, :channels], 48000, format=fmt, subtype=subtype)
                except Exception:  # noqa: BLE001 (a combination the library refuses)
                    continue
                save(out, "sound_file", tmp.read_bytes())
    tmp.unlink(missing_ok=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
