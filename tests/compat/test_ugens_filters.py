"""Filters, lags, decays and friends, driven by deterministic sources (SNR ≥ 100 dB)."""

import pytest
from supriya import ugens as U

import extra_ugens as X
from nrt import case, check_graph
from sources import asine, ksine, modulator, ksrc, src


kfreq = modulator(ksine, 1200.0, 900.0, 3.0)
afreq = modulator(asine, 1200.0, 900.0, 5.0)
kq = modulator(ksine, 0.3, 0.2, 2.0)


def trig():
    return U.Impulse.ar(frequency=30.0)


CASES = [
    case("LPF.ar", lambda b: U.LPF.ar(source=src(), frequency=800.0)),
    case("LPF.ar-kfreq", lambda b: U.LPF.ar(source=src(), frequency=kfreq())),
    case("LPF.ar-afreq", lambda b: U.LPF.ar(source=src(), frequency=afreq())),
    case("LPF.kr", lambda b: U.LPF.kr(source=ksrc(), frequency=20.0)),
    case("HPF.ar", lambda b: U.HPF.ar(source=src(), frequency=800.0)),
    case("HPF.ar-kfreq", lambda b: U.HPF.ar(source=src(), frequency=kfreq())),
    case("HPF.kr", lambda b: U.HPF.kr(source=ksrc(), frequency=20.0)),
    case("BPF.ar", lambda b: U.BPF.ar(source=src(), frequency=1000.0, reciprocal_of_q=0.3)),
    case("BPF.ar-kfreq-krq", lambda b: U.BPF.ar(source=src(), frequency=kfreq(), reciprocal_of_q=kq())),
    case("BPF.kr", lambda b: U.BPF.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.5)),
    case("BRF.ar", lambda b: U.BRF.ar(source=src(), frequency=1000.0, reciprocal_of_q=0.3)),
    case("BRF.ar-kfreq-krq", lambda b: U.BRF.ar(source=src(), frequency=kfreq(), reciprocal_of_q=kq())),
    case("BRF.kr", lambda b: U.BRF.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.5)),
    case("RLPF.ar", lambda b: U.RLPF.ar(source=src(), frequency=900.0, reciprocal_of_q=0.2)),
    case("RLPF.ar-kfreq-krq", lambda b: U.RLPF.ar(source=src(), frequency=kfreq(), reciprocal_of_q=kq())),
    case("RLPF.kr", lambda b: U.RLPF.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.3)),
    case("RHPF.ar", lambda b: U.RHPF.ar(source=src(), frequency=900.0, reciprocal_of_q=0.2)),
    case("RHPF.ar-kfreq-krq", lambda b: U.RHPF.ar(source=src(), frequency=kfreq(), reciprocal_of_q=kq())),
    case("RHPF.kr", lambda b: U.RHPF.kr(source=ksrc(), frequency=30.0, reciprocal_of_q=0.3)),
    case("Resonz.ar", lambda b: X.Resonz.ar(source=src(), frequency=1000.0, bwr=0.1)),
    case("Resonz.ar-kfreq-kbwr", lambda b: X.Resonz.ar(source=src(), frequency=kfreq(), bwr=kq(0.2, 0.1))),
    case("Resonz.kr", lambda b: X.Resonz.kr(source=ksrc(), frequency=30.0, bwr=0.3)),
    case("Ringz.ar", lambda b: U.Ringz.ar(source=trig() * 0.1, frequency=1000.0, decay_time=0.1)),
    case("Ringz.ar-kfreq-kdecay", lambda b: U.Ringz.ar(source=trig() * 0.1, frequency=kfreq(), decay_time=kq(0.1, 0.05))),
    case("Ringz.kr", lambda b: U.Ringz.kr(source=U.Impulse.kr(frequency=5.0), frequency=30.0, decay_time=0.1)),
    case("Formlet.ar", lambda b: U.Formlet.ar(source=trig(), frequency=800.0, attack_time=0.01, decay_time=0.05)),
    case("Formlet.ar-kmod", lambda b: U.Formlet.ar(source=trig(), frequency=kfreq(), attack_time=kq(0.01, 0.005), decay_time=kq(0.05, 0.02))),
    case("Formlet.kr", lambda b: U.Formlet.kr(source=U.Impulse.kr(frequency=5.0), frequency=30.0, attack_time=0.01, decay_time=0.1)),
    case("OnePole.ar", lambda b: U.OnePole.ar(source=src(), coefficient=0.9)),
    case("OnePole.ar-kcoef", lambda b: U.OnePole.ar(source=src(), coefficient=U.SinOsc.kr(frequency=3.0) * 0.9)),
    case("OnePole.kr", lambda b: U.OnePole.kr(source=ksrc(), coefficient=0.7)),
    case("OneZero.ar", lambda b: U.OneZero.ar(source=src(), coefficient=0.5)),
    case("OneZero.ar-kcoef", lambda b: U.OneZero.ar(source=src(), coefficient=U.SinOsc.kr(frequency=3.0) * 0.9)),
    case("OneZero.kr", lambda b: U.OneZero.kr(source=ksrc(), coefficient=-0.5)),
    case("TwoPole.ar", lambda b: U.TwoPole.ar(source=src() * 0.05, frequency=1000.0, radius=0.95)),
    case("TwoPole.ar-kmod", lambda b: U.TwoPole.ar(source=src() * 0.05, frequency=kfreq(), radius=kq(0.9, 0.05))),
    case("TwoPole.kr", lambda b: U.TwoPole.kr(source=ksrc() * 0.1, frequency=30.0, radius=0.9)),
    case("TwoZero.ar", lambda b: U.TwoZero.ar(source=src(), frequency=1000.0, radius=0.9)),
    case("TwoZero.ar-kmod", lambda b: U.TwoZero.ar(source=src(), frequency=kfreq(), radius=kq(0.9, 0.05))),
    case("TwoZero.kr", lambda b: U.TwoZero.kr(source=ksrc(), frequency=30.0, radius=0.9)),
    case("SOS.ar", lambda b: U.SOS.ar(source=src(), a_0=0.3, a_1=0.2, a_2=0.1, b_1=1.2, b_2=-0.5)),
    case("SOS.ar-kcoef", lambda b: U.SOS.ar(source=src(), a_0=kq(0.3, 0.1), a_1=0.2, a_2=0.1, b_1=kq(1.2, 0.2, 1.0), b_2=-0.5)),
    case("SOS.ar-acoef", lambda b: U.SOS.ar(source=src(), a_0=U.SinOsc.ar(frequency=3.0) * 0.1 + 0.3, a_1=0.2, a_2=0.1, b_1=U.SinOsc.ar(frequency=1.0) * 0.2 + 1.2, b_2=-0.5)),
    case("SOS.kr", lambda b: U.SOS.kr(source=ksrc(), a_0=0.3, a_1=0.2, a_2=0.1, b_1=1.2, b_2=-0.5)),
    case("Lag.ar", lambda b: U.Lag.ar(source=src(), lag_time=0.005)),
    case("Lag.ar-klag", lambda b: U.Lag.ar(source=src(), lag_time=kq(0.005, 0.004))),
    case("Lag.kr", lambda b: U.Lag.kr(source=ksrc(), lag_time=0.05)),
    case("Lag2.ar", lambda b: U.Lag2.ar(source=src(), lag_time=0.005)),
    case("Lag2.ar-klag", lambda b: U.Lag2.ar(source=src(), lag_time=kq(0.005, 0.004))),
    case("Lag2.kr", lambda b: U.Lag2.kr(source=ksrc(), lag_time=0.05)),
    case("Lag3.ar", lambda b: U.Lag3.ar(source=src(), lag_time=0.005)),
    case("Lag3.ar-klag", lambda b: U.Lag3.ar(source=src(), lag_time=kq(0.005, 0.004))),
    case("Lag3.kr", lambda b: U.Lag3.kr(source=ksrc(), lag_time=0.05)),
    case("LagUD.ar", lambda b: U.LagUD.ar(source=src(), lag_time_up=0.001, lag_time_down=0.01)),
    case("LagUD.ar-klag", lambda b: U.LagUD.ar(source=src(), lag_time_up=kq(0.002, 0.001), lag_time_down=kq(0.01, 0.005, 3.0))),
    case("LagUD.kr", lambda b: U.LagUD.kr(source=ksrc(), lag_time_up=0.01, lag_time_down=0.1)),
    case("Ramp.ar", lambda b: U.Ramp.ar(source=src(), lag_time=0.003)),
    case("Ramp.ar-klag", lambda b: U.Ramp.ar(source=src(), lag_time=kq(0.003, 0.002))),
    case("Ramp.kr", lambda b: U.Ramp.kr(source=ksrc(), lag_time=0.05)),
    case("Slew.ar", lambda b: U.Slew.ar(source=src(), up=2000.0, down=500.0)),
    case("Slew.ar-kslope", lambda b: U.Slew.ar(source=src(), up=kq(2000.0, 1000.0), down=500.0)),
    case("Slew.kr", lambda b: U.Slew.kr(source=ksrc(), up=5.0, down=2.0)),
    case("LeakDC.ar", lambda b: U.LeakDC.ar(source=src() + 0.5, coefficient=0.995)),
    case("LeakDC.ar-kcoef", lambda b: U.LeakDC.ar(source=src() + 0.5, coefficient=kq(0.99, 0.009))),
    case("LeakDC.kr", lambda b: U.LeakDC.kr(source=ksrc() + 0.5, coefficient=0.9)),
    case("Decay.ar", lambda b: U.Decay.ar(source=trig(), decay_time=0.02)),
    case("Decay.ar-kdecay", lambda b: U.Decay.ar(source=trig(), decay_time=kq(0.02, 0.015))),
    case("Decay.kr", lambda b: U.Decay.kr(source=U.Impulse.kr(frequency=5.0), decay_time=0.1)),
    case("Decay2.ar", lambda b: U.Decay2.ar(source=trig(), attack_time=0.002, decay_time=0.02)),
    case("Decay2.ar-kmod", lambda b: U.Decay2.ar(source=trig(), attack_time=kq(0.002, 0.001), decay_time=kq(0.02, 0.01))),
    case("Decay2.kr", lambda b: U.Decay2.kr(source=U.Impulse.kr(frequency=5.0), attack_time=0.01, decay_time=0.1)),
    case("Integrator.ar", lambda b: U.Integrator.ar(source=src() * 0.01, coefficient=0.99)),
    case("Integrator.ar-kcoef", lambda b: U.Integrator.ar(source=src() * 0.01, coefficient=kq(0.99, 0.009))),
    case("Integrator.kr", lambda b: U.Integrator.kr(source=ksrc() * 0.1, coefficient=0.9)),
    case("Median.ar", lambda b: U.Median.ar(length=5, source=src() + U.Impulse.ar(frequency=200.0))),
    case("Median.ar-31", lambda b: U.Median.ar(length=31, source=src())),
    case("Median.kr", lambda b: U.Median.kr(length=3, source=ksrc() + U.Impulse.kr(frequency=20.0))),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_filter_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
