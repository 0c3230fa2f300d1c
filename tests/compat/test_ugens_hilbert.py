"""Hilbert and FreqShift, compared sample by sample against scsynth."""

import pytest
from supriya import ugens as U

from nrt import case, check_graph
from sources import asine, ksine, src

CASES = [
    case("Hilbert.ar", lambda b: U.Hilbert.ar(source=src())),
    case("Hilbert.ar-sine", lambda b: U.Hilbert.ar(source=U.SinOsc.ar(frequency=1000.0) * 0.5)),
    case("FreqShift.ar-kk", lambda b: U.FreqShift.ar(source=src(), frequency=200.0, phase=0.0)),
    case("FreqShift.ar-kk-mod", lambda b: U.FreqShift.ar(source=src(), frequency=ksine(-300.0, 200.0, 2.0), phase=ksine(0.0, 1.5, 3.0))),
    case("FreqShift.ar-aa", lambda b: U.FreqShift.ar(source=src(), frequency=asine(100.0, 80.0, 5.0), phase=asine(0.0, 2.0, 7.0))),
    case("FreqShift.ar-ak", lambda b: U.FreqShift.ar(source=src(), frequency=asine(150.0, 60.0, 4.0), phase=ksine(0.5, 1.0, 2.0))),
    case("FreqShift.ar-ka", lambda b: U.FreqShift.ar(source=src(), frequency=ksine(-120.0, 40.0, 3.0), phase=asine(0.0, 3.0, 9.0))),
    case("FreqShift.ar-sine-down", lambda b: U.FreqShift.ar(source=U.SinOsc.ar(frequency=2000.0) * 0.4, frequency=-500.0)),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_hilbert_units_match_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
