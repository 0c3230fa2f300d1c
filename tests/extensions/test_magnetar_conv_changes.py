"""A running MagnetarConv follows its buffer: commands that change a prepared buffer's contents
change what the instances convolve with, as writing into a PartConv spectrum buffer does on
scsynth (rendered in NRT against numpy's convolution of the same signals).

The response of the buffer as it is at a block applies to level 0 from that block and to each
later level from its next release, so the output is the old convolution before the change and the
new one from two periods of the longest level after it. Contents that are not a response of the
instance's layout silence it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from test_magnetar_conv_nrt import SR, conv_def, fft_convolve, room, snr_db  # noqa: E402
from supriya import ugens as U  # noqa: E402
from supriya.ugens import SynthDefBuilder  # noqa: E402
from magnetar_conv import MagnetarConv, MagnetarConvTD, prepare_message  # noqa: E402
from nrt import Score, magnetar_binary, msg, render  # noqa: E402

BLOCK = 64
SIZES = (256, 1024)
IR_SECONDS = 0.1
# The change comes at a block start; the output is rendered well past the response's end.
CHANGE_BLOCK = 150
SECONDS = 0.6
HEADER = 5


def levels(block: int, ir_len: int, sizes: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(size, count, offset) per level, as docs/architecture.md describes the layout."""
    sizes = (block, *sizes)
    out, offset = [], 0
    for i, m in enumerate(sizes):
        end = 2 * sizes[i + 1] - block if i + 1 < len(sizes) else None
        count = (end - offset) // m if end is not None and end < ir_len else -(-(ir_len - offset) // m)
        out.append((m, count, offset))
        offset += count * m
        if offset >= ir_len:
            break
    return out


def spectra_range(lv: list[tuple[int, int, int]], level: int) -> tuple[int, int]:
    """Where level `level`'s spectra lie in the prepared buffer: start, count."""
    start = HEADER + 3 * len(lv) + sum(c * (2 * m + 2) for m, c, _ in lv[:level])
    m, c, _ = lv[level]
    return start, c * (2 * m + 2)


def render_changes(
    tmp_path: Path, unit, changes: list, setup: list = (), defs: list = ()
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Renders `unit` on buffer 2 (the response `h1` of buffer 0, prepared), with each
    `(block, messages)` of `changes` performed at that block; buffer 3 holds a second response
    `h2` of the same length; `defs` are loaded beside the unit's. Returns the output, the input
    and both responses."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    h1, h2 = room(IR_SECONDS, 11), room(IR_SECONDS, 12)
    x = np.random.default_rng(13).uniform(-0.5, 0.5, int(SECONDS * SR) + 4 * BLOCK).astype(np.float32)
    for name, data in (("h1", h1), ("h2", h2), ("x", x)):
        soundfile.write(tmp_path / f"{name}.wav", data, SR, subtype="FLOAT")
    score = Score([conv_def(unit), *defs])
    score.add(
        0.0,
        msg("/b_allocRead", 0, str(tmp_path / "h1.wav")),
        msg("/b_allocRead", 1, str(tmp_path / "x.wav")),
        msg("/b_allocRead", 3, str(tmp_path / "h2.wav")),
    )
    score.add(0.0, msg(*prepare_message(2, 0, SIZES)), *setup)
    score.add(0.0, msg("/s_new", "conv", 1000, 0, 0, "ir", 2, "sig", 1))
    for block, messages in changes:
        score.add(block * BLOCK / SR, *messages)
    score.end(SECONDS)
    r = render(magnetar_binary(), "magnetar", score, tmp_path, options=("-o", "1", "-z", str(BLOCK)))
    assert r.returncode == 0, r.log[-3000:]
    assert not r.errors(), r.errors()
    return r.read()[:, 0], x, h1, h2


def render_change(tmp_path: Path, unit, change: list, setup: list = ()):
    return render_changes(tmp_path, unit, [(CHANGE_BLOCK, change)], setup)


# Blocks after a change until every level plays a segment released after it: a level of period k
# plays a release's result from k blocks after it, for k blocks.
SETTLE = 2 * max(SIZES) // BLOCK


def regions(out: np.ndarray) -> tuple[slice, slice]:
    """Before the change; and from two periods of the longest level after it on."""
    return slice(0, CHANGE_BLOCK * BLOCK), slice((CHANGE_BLOCK + SETTLE) * BLOCK, len(out))


def assert_follows(out: np.ndarray, before: np.ndarray, after: np.ndarray) -> None:
    pre, post = regions(out)
    assert snr_db(before[pre], out[pre]) >= 120.0, "the old response before the change"
    if not after[post].any():
        assert not out[post].any(), f"silent after the change, got peak {np.abs(out[post]).max()}"
    else:
        snr = snr_db(after[post], out[post])
        assert snr >= 120.0, f"the new response after the change: SNR {snr:.1f} dB"


def conv(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    return fft_convolve(x, h)[: len(x)]


@pytest.mark.parametrize("unit", [MagnetarConv, MagnetarConvTD], ids=["PE", "TD"])
def test_preparing_another_response_into_the_buffer_switches_running_instances(tmp_path, unit):
    out, x, h1, h2 = render_change(tmp_path, unit, [msg(*prepare_message(2, 3, SIZES))])
    assert_follows(out, conv(x, h1), conv(x, h2))


def test_pe_and_td_cross_over_alike(tmp_path):
    change = [msg(*prepare_message(2, 3, SIZES))]
    pe = render_change(tmp_path / "pe", MagnetarConv, change)[0]
    td = render_change(tmp_path / "td", MagnetarConvTD, change)[0]
    # Each segment takes the response of the block it is released in, in both.
    assert np.array_equal(pe, td)


def test_b_fill_zeroing_the_last_level_cuts_the_response_there(tmp_path):
    lv = levels(BLOCK, int(IR_SECONDS * SR), SIZES)
    start, count = spectra_range(lv, len(lv) - 1)
    out, x, h1, _ = render_change(tmp_path, MagnetarConv, [msg("/b_fill", 2, start, count, 0.0)])
    cut = h1.copy()
    cut[lv[-1][2] :] = 0.0
    assert_follows(out, conv(x, h1), conv(x, cut))


def test_b_setn_on_a_middle_level_takes_effect(tmp_path):
    lv = levels(BLOCK, int(IR_SECONDS * SR), SIZES)
    start, count = spectra_range(lv, 1)
    out, x, h1, _ = render_change(tmp_path, MagnetarConvTD, [msg("/b_setn", 2, start, count, *([0.0] * count))])
    m, c, offset = lv[1]
    cut = h1.copy()
    cut[offset : offset + m * c] = 0.0
    assert_follows(out, conv(x, h1), conv(x, cut))


def test_b_read_of_a_written_prepared_buffer_switches_to_its_response(tmp_path):
    path = tmp_path / "h2_prepared.wav"
    setup = [msg(*prepare_message(4, 3, SIZES)), msg("/b_write", 4, str(path), "wav", "float")]
    out, x, h1, h2 = render_change(tmp_path, MagnetarConv, [msg("/b_read", 2, str(path))], setup)
    assert_follows(out, conv(x, h1), conv(x, h2))


@pytest.mark.parametrize(
    "change",
    [
        [msg("/b_zero", 2)],
        [msg("/b_free", 2)],
        # A response of another layout: the instance was built for SIZES.
        [msg(*prepare_message(2, 3, (512,)))],
    ],
    ids=["b_zero", "b_free", "other-layout"],
)
def test_contents_that_are_not_a_response_of_the_layout_silence_the_instance(tmp_path, change):
    out, x, h1, _ = render_change(tmp_path, MagnetarConv, change)
    assert_follows(out, conv(x, h1), np.zeros(len(out)))


def test_a_silenced_instance_resumes_with_its_input_history_when_a_response_of_its_layout_returns(tmp_path):
    back = CHANGE_BLOCK + 3 * SETTLE
    # The header broken (not a response any more), then a response prepared again.
    changes = [(CHANGE_BLOCK, [msg("/b_set", 2, 0, 0.0)]), (back, [msg(*prepare_message(2, 3, SIZES))])]
    out, x, h1, h2 = render_changes(tmp_path, MagnetarConv, changes)
    pre, _ = regions(out)
    assert snr_db(conv(x, h1)[pre], out[pre]) >= 120.0
    assert not out[(CHANGE_BLOCK + SETTLE) * BLOCK : back * BLOCK].any()
    resumed = slice((back + SETTLE) * BLOCK, len(out))
    # The full convolution at once, not one that builds up from the return.
    assert snr_db(conv(x, h2)[resumed], out[resumed]) >= 120.0


def zero_writer(bufnum: int, start: int, count: int):
    """A synth that writes zeros (BufWr, one frame per sample) over frames start..start+count of
    buffer `bufnum`, over and over."""
    with SynthDefBuilder() as b:
        phase = U.Phasor.ar(rate=1.0, start=start, stop=start + count)
        U.BufWr.ar(buffer_id=bufnum, phase=phase, loop=0, source=U.DC.ar(source=0.0))
    return b.build(name="zero_writer")


@pytest.mark.parametrize("unit", [MagnetarConv, MagnetarConvTD], ids=["PE", "TD"])
def test_a_unit_writing_into_the_buffer_changes_the_response_only_at_the_next_command(tmp_path, unit):
    """BufWr zeroing the last level's spectra leaves the response alone (unlike PartConv, which
    would convolve with what the unit wrote); a later /b_set of one of those frames, to the value
    the unit already wrote, remakes the response from everything the buffer holds then, the
    unit's writes included."""
    lv = levels(BLOCK, int(IR_SECONDS * SR), SIZES)
    start, count = spectra_range(lv, len(lv) - 1)
    # The writer has covered the whole level long before the command.
    command = CHANGE_BLOCK + 4 * SETTLE
    assert count < (command - CHANGE_BLOCK) * BLOCK
    changes = [
        (CHANGE_BLOCK, [msg("/s_new", "zero_writer", 1001, 1, 0)]),
        (command, [msg("/b_set", 2, start, 0.0)]),
    ]
    out, x, h1, _ = render_changes(tmp_path, unit, changes, defs=[zero_writer(2, start, count)])
    cut = h1.copy()
    cut[lv[-1][2] :] = 0.0
    written = slice(0, command * BLOCK)
    snr = snr_db(conv(x, h1)[written], out[written])
    assert snr >= 120.0, f"the prepared response while the unit writes: SNR {snr:.1f} dB"
    after = slice((command + SETTLE) * BLOCK, len(out))
    snr = snr_db(conv(x, cut)[after], out[after])
    assert snr >= 120.0, f"the response with the unit's zeros after the command: SNR {snr:.1f} dB"
