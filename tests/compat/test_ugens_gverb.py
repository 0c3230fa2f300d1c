"""GVerb, compared sample by sample against scsynth (supriya has no class for it). A room size
above the maximum makes scsynth write past its delay lines, so no case asks for one."""

import pytest
from supriya import ugens as U

from extra_ugens import GVerb
from nrt import case, check_graph
from sources import src



def clicks():
    return U.Decay.ar(source=U.Impulse.ar(frequency=2.0) * 0.5, decay_time=0.02)


CASES = [
    case("GVerb-defaults", lambda b: GVerb.ar(source=clicks()), dur=0.8),
    case("GVerb-prime-room", lambda b: GVerb.ar(source=src() * 0.2, room_size=20.5, rev_time=1.5, spread=30.0), dur=0.6),
    case("GVerb-small", lambda b: GVerb.ar(source=clicks(), room_size=3.0, rev_time=0.6, damping=0.2, input_bw=0.9, spread=5.0, max_room_size=50.0), dur=0.6),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_gverb_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
