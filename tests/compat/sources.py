"""What the UGen comparisons share: deterministic test signals (the same graph is rendered by
scsynth and magnetar, so any source works as long as it draws no random numbers; these have edges,
saw and pulse, and slow modulation, sines around a centre, to exercise a unit's whole range), and
`seeded`, which makes the random units draw the same numbers on both servers."""

from supriya import ugens as U


def src():
    """Audio-rate source: a saw plus a pulse."""
    return U.Saw.ar(frequency=311.0) * 0.5 + U.Pulse.ar(frequency=97.0, width=0.3) * 0.3


def ksrc():
    """Control-rate source: a saw plus a pulse."""
    return U.LFSaw.kr(frequency=7.0) * 0.5 + U.LFPulse.kr(frequency=3.0) * 0.3


def ksine(center, depth, rate):
    """A control-rate sine swinging `depth` around `center`: a modulated parameter."""
    return U.SinOsc.kr(frequency=rate) * depth + center


def asine(center, depth, rate):
    """The audio-rate form of `ksine`."""
    return U.SinOsc.ar(frequency=rate) * depth + center


def modulator(sine, center, depth, rate):
    """`sine` (`ksine` or `asine`) with these defaults, which a call may override by position
    or by name: `kq = modulator(ksine, 0.3, 0.2, 2.0)`, then `kq()` or `kq(0.9, 0.05)`."""
    def make(center=center, depth=depth, rate=rate):
        return sine(center, depth, rate)
    return make


def seeded(fn, seed=1234):
    """Reseeds the synth's generator first, so that both servers draw the same sequence."""

    def body(b):
        U.RandSeed.ir(trigger=1, seed=seed)
        return fn(b)

    return body
