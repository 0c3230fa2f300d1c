"""Delays, panners, triggers, range/ordering UGens and server-info UGens (SNR ≥ 100 dB)."""

import pytest
from supriya import ugens as U

import extra_ugens as X
from nrt import case, check_graph, msg
from sources import asine, ksine, modulator


def src():
    return U.Saw.ar(frequency=311.0) * 0.5 + U.Impulse.ar(frequency=23.0) * 0.5


def ksrc():
    return U.LFSaw.kr(frequency=7.0) * 0.5 + U.Impulse.kr(frequency=3.0) * 0.5


kdel = modulator(ksine, 0.01, 0.005, 3.0)
adel = modulator(asine, 0.01, 0.005, 5.0)


CASES = []
for kind in "NLC":
    D, Cb, A = getattr(U, f"Delay{kind}"), getattr(U, f"Comb{kind}"), getattr(U, f"Allpass{kind}")
    CASES += [
        case(f"Delay{kind}.ar", lambda b, D=D: D.ar(source=src(), maximum_delay_time=0.05, delay_time=0.0123)),
        case(f"Delay{kind}.ar-kdelay", lambda b, D=D: D.ar(source=src(), maximum_delay_time=0.05, delay_time=kdel())),
        case(f"Delay{kind}.ar-adelay", lambda b, D=D: D.ar(source=src(), maximum_delay_time=0.05, delay_time=adel())),
        case(f"Delay{kind}.ar-over-max", lambda b, D=D: D.ar(source=src(), maximum_delay_time=0.01, delay_time=0.02)),
        case(f"Delay{kind}.kr", lambda b, D=D: D.kr(source=ksrc(), maximum_delay_time=0.2, delay_time=0.05)),
        case(f"Comb{kind}.ar", lambda b, C=Cb: C.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=0.0077, decay_time=0.1)),
        case(f"Comb{kind}.ar-kdelay", lambda b, C=Cb: C.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=kdel(), decay_time=0.1)),
        case(f"Comb{kind}.ar-adelay-kdecay", lambda b, C=Cb: C.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=adel(), decay_time=kdel(0.1, 0.05))),
        case(f"Comb{kind}.ar-negative-decay", lambda b, C=Cb: C.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=0.005, decay_time=-0.1)),
        case(f"Comb{kind}.kr", lambda b, C=Cb: C.kr(source=ksrc(), maximum_delay_time=0.2, delay_time=0.05, decay_time=0.3)),
        case(f"Allpass{kind}.ar", lambda b, A=A: A.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=0.0077, decay_time=0.1)),
        case(f"Allpass{kind}.ar-kdelay", lambda b, A=A: A.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=kdel(), decay_time=0.1)),
        case(f"Allpass{kind}.ar-adelay", lambda b, A=A: A.ar(source=src() * 0.2, maximum_delay_time=0.05, delay_time=adel(), decay_time=0.1)),
        case(f"Allpass{kind}.kr", lambda b, A=A: A.kr(source=ksrc(), maximum_delay_time=0.2, delay_time=0.05, decay_time=0.3)),
    ]

CASES += [
    case("Delay1.ar", lambda b: U.Delay1.ar(source=src())),
    case("Delay1.kr", lambda b: U.Delay1.kr(source=ksrc())),
    case("Delay2.ar", lambda b: U.Delay2.ar(source=src())),
    case("Delay2.kr", lambda b: U.Delay2.kr(source=ksrc())),
    # panners
    case("Pan2.ar", lambda b: U.Pan2.ar(source=src(), position=0.3, level=0.8)),
    case("Pan2.ar-kpos", lambda b: U.Pan2.ar(source=src(), position=U.SinOsc.kr(frequency=3.0))),
    case("Pan2.ar-apos", lambda b: U.Pan2.ar(source=src(), position=U.SinOsc.ar(frequency=30.0))),
    case("Pan2.kr", lambda b: U.Pan2.kr(source=ksrc(), position=U.SinOsc.kr(frequency=3.0))),
    case("LinPan2.ar", lambda b: X.LinPan2.ar(source=src(), position=-0.4, level=0.8)),
    case("LinPan2.ar-kpos", lambda b: X.LinPan2.ar(source=src(), position=U.SinOsc.kr(frequency=3.0))),
    case("LinPan2.ar-apos", lambda b: X.LinPan2.ar(source=src(), position=U.SinOsc.ar(frequency=30.0))),
    case("LinPan2.kr", lambda b: X.LinPan2.kr(source=ksrc(), position=U.SinOsc.kr(frequency=3.0))),
    case("Balance2.ar", lambda b: U.Balance2.ar(left=src(), right=U.SinOsc.ar(frequency=200.0), position=0.2, level=0.9)),
    case("Balance2.ar-kpos", lambda b: U.Balance2.ar(left=src(), right=U.SinOsc.ar(frequency=200.0), position=U.SinOsc.kr(frequency=3.0))),
    case("Balance2.ar-apos", lambda b: U.Balance2.ar(left=src(), right=U.SinOsc.ar(frequency=200.0), position=U.SinOsc.ar(frequency=30.0))),
    case("Balance2.kr", lambda b: U.Balance2.kr(left=ksrc(), right=U.SinOsc.kr(frequency=2.0), position=U.SinOsc.kr(frequency=3.0))),
    case("Pan4.ar", lambda b: U.Pan4.ar(source=src(), x_position=0.3, y_position=-0.5, gain=0.8)),
    case("Pan4.ar-kpos", lambda b: U.Pan4.ar(source=src(), x_position=U.SinOsc.kr(frequency=3.0), y_position=U.LFTri.kr(frequency=2.0))),
    case("Pan4.kr", lambda b: U.Pan4.kr(source=ksrc(), x_position=U.SinOsc.kr(frequency=3.0), y_position=0.2)),
    case("XFade2.ar", lambda b: U.XFade2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), pan=0.3, level=0.9)),
    case("XFade2.ar-kpan", lambda b: U.XFade2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), pan=U.SinOsc.kr(frequency=3.0))),
    case("XFade2.ar-apan", lambda b: U.XFade2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), pan=U.SinOsc.ar(frequency=30.0))),
    case("XFade2.kr", lambda b: U.XFade2.kr(in_a=ksrc(), in_b=U.SinOsc.kr(frequency=2.0), pan=U.SinOsc.kr(frequency=3.0))),
    case("LinXFade2.ar", lambda b: X.LinXFade2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), pan=0.3)),
    case("LinXFade2.ar-kpan", lambda b: X.LinXFade2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), pan=U.SinOsc.kr(frequency=3.0))),
    case("LinXFade2.ar-apan", lambda b: X.LinXFade2.ar(in_a=src(), in_b=U.SinOsc.ar(frequency=200.0), pan=U.SinOsc.ar(frequency=30.0))),
    case("LinXFade2.kr", lambda b: X.LinXFade2.kr(in_a=ksrc(), in_b=U.SinOsc.kr(frequency=2.0), pan=U.SinOsc.kr(frequency=3.0))),
]


def atrig(f=40.0):
    return U.Impulse.ar(frequency=f)


def ktrig(f=10.0):
    return U.Impulse.kr(frequency=f)


def asig():
    return U.SinOsc.ar(frequency=13.0) * 0.8


def ksig():
    return U.SinOsc.kr(frequency=3.0) * 0.8


CASES += [
    case("Trig.ar", lambda b: U.Trig.ar(source=atrig() + U.SinOsc.ar(frequency=7.0), duration=0.004)),
    case("Trig.kr", lambda b: U.Trig.kr(source=ktrig() + ksig(), duration=0.03)),
    case("Trig1.ar", lambda b: U.Trig1.ar(source=atrig() + U.SinOsc.ar(frequency=7.0), duration=0.004)),
    case("Trig1.kr", lambda b: U.Trig1.kr(source=ktrig() + ksig(), duration=0.03)),
    case("TDelay.ar", lambda b: U.TDelay.ar(source=atrig(), duration=0.0033)),
    case("TDelay.kr", lambda b: U.TDelay.kr(source=ktrig(), duration=0.03)),
    case("Latch.ar", lambda b: U.Latch.ar(source=asig(), trigger=atrig(100.0))),
    case("Latch.ar-ktrig", lambda b: U.Latch.ar(source=asig(), trigger=ktrig(50.0))),
    case("Latch.kr", lambda b: U.Latch.kr(source=ksig(), trigger=ktrig())),
    case("Gate.ar", lambda b: U.Gate.ar(source=asig(), trigger=U.LFPulse.ar(frequency=9.0))),
    case("Gate.ar-ktrig", lambda b: U.Gate.ar(source=asig(), trigger=U.LFPulse.kr(frequency=9.0))),
    case("Gate.kr", lambda b: U.Gate.kr(source=ksig(), trigger=U.LFPulse.kr(frequency=9.0))),
    case("PulseCount.ar", lambda b: X.PulseCount.ar(trigger=atrig(200.0), reset=atrig(17.0))),
    case("PulseCount.kr", lambda b: X.PulseCount.kr(trigger=ktrig(100.0), reset=ktrig(7.0))),
    case("PulseDivider.ar", lambda b: X.PulseDivider.ar(trigger=atrig(200.0), div=3, start=1)),
    case("PulseDivider.kr", lambda b: X.PulseDivider.kr(trigger=ktrig(100.0), div=4, start=0)),
    case("Stepper.ar", lambda b: X.Stepper.ar(trigger=atrig(200.0), reset=atrig(13.0), minimum=-2, maximum=9, step=3, reset_value=1)),
    case("Stepper.ar-negative-step", lambda b: X.Stepper.ar(trigger=atrig(200.0), reset=0, minimum=0, maximum=5, step=-2)),
    case("Stepper.kr", lambda b: X.Stepper.kr(trigger=ktrig(100.0), reset=ktrig(9.0), minimum=1, maximum=7, step=2)),
    case("Sweep.ar", lambda b: U.Sweep.ar(trigger=atrig(9.0), rate=2.0)),
    case("Sweep.ar-arate", lambda b: U.Sweep.ar(trigger=atrig(9.0), rate=U.SinOsc.ar(frequency=4.0) + 1.5)),
    case("Sweep.kr", lambda b: U.Sweep.kr(trigger=ktrig(9.0), rate=U.SinOsc.kr(frequency=4.0) + 1.5)),
    case("Phasor.ar", lambda b: U.Phasor.ar(trigger=atrig(9.0), rate=0.01, start=-0.5, stop=0.7, reset_pos=0.2)),
    case("Phasor.ar-arate", lambda b: U.Phasor.ar(trigger=atrig(9.0), rate=U.SinOsc.ar(frequency=4.0) * 0.01, start=-0.5, stop=0.7)),
    case("Phasor.kr", lambda b: U.Phasor.kr(trigger=ktrig(3.0), rate=0.05, start=0, stop=1)),
    case("ToggleFF.ar", lambda b: U.ToggleFF.ar(trigger=atrig(50.0))),
    case("ToggleFF.kr", lambda b: U.ToggleFF.kr(trigger=ktrig(20.0))),
    case("SetResetFF.ar", lambda b: X.SetResetFF.ar(trigger=atrig(20.0), reset=U.Impulse.ar(frequency=20.0, phase=0.5))),
    case("SetResetFF.kr", lambda b: X.SetResetFF.kr(trigger=ktrig(20.0), reset=U.Impulse.kr(frequency=20.0, phase=0.5))),
    case("Timer.ar", lambda b: X.Timer.ar(trigger=U.Impulse.ar(frequency=U.LFSaw.kr(frequency=3.0) * 20 + 40))),
    case("Timer.kr", lambda b: X.Timer.kr(trigger=U.Impulse.kr(frequency=U.LFSaw.kr(frequency=3.0) * 5 + 10))),
    case("Select.ar", lambda b: U.Select.ar(selector=U.LFSaw.kr(frequency=5.0) * 2 + 2, sources=[U.SinOsc.ar(frequency=300.0), U.Saw.ar(frequency=200.0), U.LFTri.ar(frequency=100.0)])),
    case("Select.ar-aselector", lambda b: U.Select.ar(selector=U.LFSaw.ar(frequency=50.0) * 2 + 1, sources=[U.SinOsc.ar(frequency=300.0), U.Saw.ar(frequency=200.0), U.LFTri.ar(frequency=100.0)])),
    case("Select.kr", lambda b: U.Select.kr(selector=U.LFSaw.kr(frequency=5.0) * 2 + 1, sources=[U.SinOsc.kr(frequency=3.0), U.LFSaw.kr(frequency=2.0), 0.5])),
]
for name in ("Clip", "Fold", "Wrap", "InRange"):
    C = getattr(U, name)
    CASES += [
        case(f"{name}.ar", lambda b, C=C: C.ar(source=U.SinOsc.ar(frequency=50.0) * 2.5, minimum=-0.6, maximum=0.8)),
        case(f"{name}.ar-kbounds", lambda b, C=C: C.ar(source=U.SinOsc.ar(frequency=50.0) * 2.5, minimum=U.SinOsc.kr(frequency=2.0) * 0.3 - 0.5, maximum=U.LFTri.kr(frequency=3.0) * 0.3 + 0.6)),
        case(f"{name}.ar-abounds", lambda b, C=C: C.ar(source=U.SinOsc.ar(frequency=50.0) * 2.5, minimum=U.SinOsc.ar(frequency=20.0) * 0.3 - 0.5, maximum=U.LFTri.ar(frequency=30.0) * 0.3 + 0.6)),
        case(f"{name}.kr", lambda b, C=C: C.kr(source=U.SinOsc.kr(frequency=5.0) * 2.5, minimum=-0.6, maximum=0.8)),
    ]
CASES += [
    case("Schmidt.ar", lambda b: U.Schmidt.ar(source=U.SinOsc.ar(frequency=30.0) + U.SinOsc.ar(frequency=400.0) * 0.2, minimum=-0.3, maximum=0.5)),
    case("Schmidt.kr", lambda b: U.Schmidt.kr(source=U.SinOsc.kr(frequency=5.0), minimum=-0.3, maximum=0.5)),
    case("Peak.ar", lambda b: U.Peak.ar(source=asig() * U.LFSaw.ar(frequency=3.0), trigger=atrig(11.0))),
    case("Peak.ar-ktrig", lambda b: U.Peak.ar(source=asig() * U.LFSaw.ar(frequency=3.0), trigger=ktrig(11.0))),
    case("Peak.kr", lambda b: U.Peak.kr(source=ksig() * U.LFSaw.kr(frequency=1.0), trigger=ktrig(5.0))),
    case("RunningMax.ar", lambda b: U.RunningMax.ar(source=asig() * U.LFSaw.ar(frequency=3.0), trigger=atrig(11.0))),
    case("RunningMax.kr", lambda b: U.RunningMax.kr(source=ksig() * U.LFSaw.kr(frequency=1.0), trigger=ktrig(5.0))),
    case("RunningMin.ar", lambda b: U.RunningMin.ar(source=asig() * U.LFSaw.ar(frequency=3.0), trigger=atrig(11.0))),
    case("RunningMin.kr", lambda b: U.RunningMin.kr(source=ksig() * U.LFSaw.kr(frequency=1.0), trigger=ktrig(5.0))),
    # server information
    case("SampleRate.ir", lambda b: U.SampleRate.ir() * 1e-5),
    case("SampleDur.ir", lambda b: U.SampleDur.ir() * 1e4),
    case("ControlRate.ir", lambda b: U.ControlRate.ir() * 1e-3),
    case("ControlDur.ir", lambda b: U.ControlDur.ir() * 100.0),
    case("RadiansPerSample.ir", lambda b: U.RadiansPerSample.ir() * 1000.0),
    case("BlockSize.ir", lambda b: U.BlockSize.ir() * 0.01),
    case("NumOutputBuses.ir", lambda b: U.NumOutputBuses.ir() * 0.1),
    case("NumInputBuses.ir", lambda b: U.NumInputBuses.ir() * 0.1),
    case("NumAudioBuses.ir", lambda b: U.NumAudioBuses.ir() * 1e-3),
    case("NumControlBuses.ir", lambda b: U.NumControlBuses.ir() * 1e-4),
    case("NumBuffers.ir", lambda b: U.NumBuffers.ir() * 1e-3),
    case("server-info-with-options", lambda b: [U.NumOutputBuses.ir() * 0.1, U.NumInputBuses.ir() * 0.1, U.NumAudioBuses.ir() * 1e-3, U.NumControlBuses.ir() * 1e-4, U.NumBuffers.ir() * 1e-3, U.BlockSize.ir() * 0.01],
         options=["-i", "3", "-a", "256", "-c", "2048", "-b", "64", "-z", "32"]),
    case("SubsampleOffset-off-block", lambda b: U.SubsampleOffset.ir() + 0.25, synth_time=0.0103),
]


@pytest.mark.parametrize("fn,kw", CASES)
def test_ugen_matches_scsynth(tmp_path, fn, kw):
    check_graph(tmp_path, fn, **kw)
