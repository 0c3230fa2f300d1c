"""Buffer-backed delays, combs and allpasses (BufDelayN/L/C, BufCombN/L/C, BufAllpassN/L/C).

Each case allocates its buffers in the time-0 bundle before the synth.  The renders run well
past the point where the unit has written its whole buffer, so both the start-up phase (unwritten
history reads as silence) and the steady state are compared.
"""

import pytest
from supriya import ugens as U

from nrt import case, check_graph, msg
from sources import asine, ksine, modulator, ksrc, src


def clicks():
    return U.Impulse.ar(frequency=9.0) * 0.5 + U.Saw.ar(frequency=173.0) * 0.1


kdelay = modulator(ksine, 0.01, 0.004, 3.0)
adelay = modulator(asine, 0.01, 0.004, 5.0)
kdecay = modulator(ksine, 0.3, 0.2, 2.0)


# Buffer 0: 4096 samples (a line of 4096); buffer 1: 3000 (a line of 2048, the rest unused);
# buffer 2: stereo, 700 frames = 1400 samples (a line of 1024); buffer 3: 1000 samples (a line
# of 512) filled with a constant the delays must not let through before overwriting it.
BUF = (msg("/b_alloc", 0, 4096),)
ODD_BUF = (msg("/b_alloc", 1, 3000),)
STEREO_BUF = (msg("/b_alloc", 2, 700, 2),)
FILLED_BUF = (msg("/b_alloc", 3, 1000), msg("/b_fill", 3, 0, 1000, 0.75))
BUFS = BUF + ODD_BUF + STEREO_BUF + FILLED_BUF


def on(buf_setup=BUF, **kw):
    return dict(setup=buf_setup, **kw)


CASES = [
    # -- plain delays
    case("BufDelayN.ar", lambda b: U.BufDelayN.ar(buffer_id=0, source=src(), delay_time=0.0123), **on()),
    case("BufDelayN.ar-kdelay", lambda b: U.BufDelayN.ar(buffer_id=0, source=src(), delay_time=kdelay()), **on()),
    case("BufDelayN.ar-adelay", lambda b: U.BufDelayN.ar(buffer_id=0, source=src(), delay_time=adelay()), **on()),
    case("BufDelayN.kr", lambda b: U.BufDelayN.kr(buffer_id=0, source=ksrc(), delay_time=0.1), **on()),
    case("BufDelayL.ar", lambda b: U.BufDelayL.ar(buffer_id=0, source=src(), delay_time=0.01234), **on()),
    case("BufDelayL.ar-kdelay", lambda b: U.BufDelayL.ar(buffer_id=0, source=src(), delay_time=kdelay()), **on()),
    case("BufDelayL.ar-adelay", lambda b: U.BufDelayL.ar(buffer_id=1, source=src(), delay_time=adelay()), **on(ODD_BUF)),
    case("BufDelayL.kr", lambda b: U.BufDelayL.kr(buffer_id=0, source=ksrc(), delay_time=U.SinOsc.kr(frequency=1.0) * 0.05 + 0.1), **on()),
    case("BufDelayC.ar", lambda b: U.BufDelayC.ar(buffer_id=0, source=src(), delay_time=0.01234), **on()),
    case("BufDelayC.ar-kdelay", lambda b: U.BufDelayC.ar(buffer_id=0, source=src(), delay_time=kdelay()), **on()),
    case("BufDelayC.ar-adelay", lambda b: U.BufDelayC.ar(buffer_id=1, source=src(), delay_time=adelay()), **on(ODD_BUF)),
    case("BufDelayC.kr", lambda b: U.BufDelayC.kr(buffer_id=0, source=ksrc(), delay_time=U.SinOsc.kr(frequency=1.0) * 0.05 + 0.1), **on()),
    # -- combs
    case("BufCombN.ar", lambda b: U.BufCombN.ar(buffer_id=0, source=clicks(), delay_time=0.0123, decay_time=0.5), **on()),
    case("BufCombN.ar-negative-decay", lambda b: U.BufCombN.ar(buffer_id=0, source=clicks(), delay_time=0.007, decay_time=-0.4), **on()),
    case("BufCombN.ar-kdecay", lambda b: U.BufCombN.ar(buffer_id=0, source=clicks(), delay_time=0.0123, decay_time=kdecay()), **on()),
    case("BufCombN.ar-kdelay", lambda b: U.BufCombN.ar(buffer_id=0, source=clicks(), delay_time=kdelay(), decay_time=0.3), **on()),
    case("BufCombN.ar-adelay", lambda b: U.BufCombN.ar(buffer_id=0, source=clicks(), delay_time=adelay(), decay_time=0.3), **on()),
    case("BufCombL.ar", lambda b: U.BufCombL.ar(buffer_id=0, source=clicks(), delay_time=0.01234, decay_time=0.5), **on()),
    case("BufCombL.ar-kdelay-kdecay", lambda b: U.BufCombL.ar(buffer_id=0, source=clicks(), delay_time=kdelay(), decay_time=kdecay()), **on()),
    case("BufCombL.ar-adelay", lambda b: U.BufCombL.ar(buffer_id=1, source=clicks(), delay_time=adelay(), decay_time=0.3), **on(ODD_BUF)),
    case("BufCombC.ar", lambda b: U.BufCombC.ar(buffer_id=0, source=clicks(), delay_time=0.01234, decay_time=0.5), **on()),
    case("BufCombC.ar-kdelay-kdecay", lambda b: U.BufCombC.ar(buffer_id=0, source=clicks(), delay_time=kdelay(), decay_time=kdecay()), **on()),
    case("BufCombC.ar-adelay", lambda b: U.BufCombC.ar(buffer_id=1, source=clicks(), delay_time=adelay(), decay_time=-0.3), **on(ODD_BUF)),
    # -- allpasses
    case("BufAllpassN.ar", lambda b: U.BufAllpassN.ar(buffer_id=0, source=clicks(), delay_time=0.0123, decay_time=0.5), **on()),
    case("BufAllpassN.ar-kdecay", lambda b: U.BufAllpassN.ar(buffer_id=0, source=clicks(), delay_time=0.0123, decay_time=kdecay()), **on()),
    case("BufAllpassN.ar-adelay", lambda b: U.BufAllpassN.ar(buffer_id=0, source=clicks(), delay_time=adelay(), decay_time=0.3), **on()),
    case("BufAllpassL.ar", lambda b: U.BufAllpassL.ar(buffer_id=0, source=clicks(), delay_time=0.01234, decay_time=0.5), **on()),
    case("BufAllpassL.ar-kdelay-kdecay", lambda b: U.BufAllpassL.ar(buffer_id=0, source=clicks(), delay_time=kdelay(), decay_time=kdecay()), **on()),
    case("BufAllpassL.ar-adelay", lambda b: U.BufAllpassL.ar(buffer_id=1, source=clicks(), delay_time=adelay(), decay_time=0.3), **on(ODD_BUF)),
    case("BufAllpassC.ar", lambda b: U.BufAllpassC.ar(buffer_id=0, source=clicks(), delay_time=0.01234, decay_time=0.5), **on()),
    case("BufAllpassC.ar-kdelay-kdecay", lambda b: U.BufAllpassC.ar(buffer_id=0, source=clicks(), delay_time=kdelay(), decay_time=kdecay()), **on()),
    case("BufAllpassC.ar-adelay", lambda b: U.BufAllpassC.ar(buffer_id=1, source=clicks(), delay_time=adelay(), decay_time=0.3), **on(ODD_BUF)),
    # -- buffers: length, channels, old contents, several units, missing buffers
    case("BufDelayL.ar-delay-past-buffer", lambda b: U.BufDelayL.ar(buffer_id=3, source=src(), delay_time=0.5), **on(FILLED_BUF)),
    case("BufCombC.ar-delay-past-buffer", lambda b: U.BufCombC.ar(buffer_id=1, source=clicks(), delay_time=1.0, decay_time=0.5), **on(ODD_BUF)),
    case("BufAllpassN.ar-stereo-buffer", lambda b: U.BufAllpassN.ar(buffer_id=2, source=clicks(), delay_time=0.015, decay_time=0.2), **on(STEREO_BUF)),
    case("BufCombN.ar-filled-buffer", lambda b: U.BufCombN.ar(buffer_id=3, source=clicks(), delay_time=0.008, decay_time=0.2), **on(FILLED_BUF)),
    case("BufDelayN.ar-each-buffer", lambda b: [U.BufDelayN.ar(buffer_id=k, source=src(), delay_time=0.004 + 0.003 * k) for k in range(4)], **on(BUFS)),
    case("BufDelayC.ar-buffer-past-the-last-is-buffer-0", lambda b: U.BufDelayC.ar(buffer_id=5000, source=src(), delay_time=0.01), **on()),
    case("BufCombL.ar-unallocated-buffer", lambda b: U.BufCombL.ar(buffer_id=7, source=src(), delay_time=0.01, decay_time=0.5), **on(allow_silent=True)),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_buffer_delay_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)


def test_buffer_delay_keeps_running_when_its_buffer_is_swapped(tmp_path):
    """The unit looks its buffer up every block: a buffer number that changes mid-render moves
    the line into the other buffer, carrying on from the same write position."""
    check_graph(
        tmp_path,
        lambda b: U.BufCombN.ar(buffer_id=b["buf"], source=clicks(), delay_time=0.006, decay_time=0.3),
        params=dict(buf=0.0),
        setup=BUFS,
        events=[(0.1, [msg("/n_set", 1000, "buf", 2.0)]), (0.2, [msg("/n_set", 1000, "buf", 9.0)])],
    )
