"""UGens scsynth ships that supriya does not define (class names are the server-side names)."""

from supriya.ugens.core import UGen, param, ugen


@ugen(ar=True, kr=True)
class Osc(UGen):
    buffer_id = param()
    frequency = param(440.0)
    phase = param(0.0)


@ugen(ar=True, kr=True)
class OscN(UGen):
    buffer_id = param()
    frequency = param(440.0)
    phase = param(0.0)


@ugen(ar=True)
class Formant(UGen):
    fundamental_frequency = param(440.0)
    formant_frequency = param(1760.0)
    bandwidth_frequency = param(880.0)


@ugen(ar=True, kr=True, channel_count=2, fixed_channel_count=True)
class LinPan2(UGen):
    source = param()
    position = param(0.0)
    level = param(1.0)


@ugen(ar=True, kr=True)
class LinXFade2(UGen):
    in_a = param()
    in_b = param(0.0)
    pan = param(0.0)


@ugen(ar=True, kr=True)
class Timer(UGen):
    trigger = param(0.0)


@ugen(ar=True, kr=True)
class PulseCount(UGen):
    trigger = param(0.0)
    reset = param(0.0)


@ugen(ar=True, kr=True)
class PulseDivider(UGen):
    trigger = param(0.0)
    div = param(2.0)
    start = param(0.0)


@ugen(ar=True, kr=True)
class Stepper(UGen):
    trigger = param(0.0)
    reset = param(0.0)
    minimum = param(0.0)
    maximum = param(7.0)
    step = param(1.0)
    reset_value = param(0.0)


@ugen(ar=True, kr=True)
class SetResetFF(UGen):
    trigger = param(0.0)
    reset = param(0.0)


@ugen(ar=True, kr=True)
class Resonz(UGen):
    source = param()
    frequency = param(440.0)
    bwr = param(1.0)


@ugen(ar=True, kr=True)
class SinOscFB(UGen):
    frequency = param(440.0)
    feedback = param(0.0)


@ugen(ar=True)
class Klang(UGen):
    frequency_scale = param(1.0)
    frequency_offset = param(0.0)
    specifications = param(unexpanded=True)


@ugen(ar=True, channel_count=2, fixed_channel_count=True)
class FreeVerb2(UGen):
    source = param()
    in2 = param()
    mix = param(0.33)
    room_size = param(0.5)
    damping = param(0.5)


@ugen(ar=True, kr=True)
class TIRand(UGen):
    """supriya's own TIRand only takes numbers as bounds; this one takes signals too."""

    minimum = param(0.0)
    maximum = param(127.0)
    trigger = param(0.0)


@ugen(kr=True)
class BLowPass(UGen):
    """scsynth runs the BEQ units at control rate too; sclang and supriya only offer .ar."""

    source = param()
    frequency = param(1200.0)
    reciprocal_of_q = param(1.0)


@ugen(kr=True)
class BPeakEQ(UGen):
    source = param()
    frequency = param(1200.0)
    reciprocal_of_q = param(1.0)
    gain = param(0.0)


@ugen(ar=True, kr=True)
class TDuty(UGen):
    duration = param(1.0)
    reset = param(0.0)
    done_action = param(0.0)
    level = param(1.0)
    gap_first = param(0.0)


@ugen(dr=True)
class Ddup(UGen):
    count = param(2.0)
    source = param()


@ugen(dr=True)
class Dconst(UGen):
    total = param()
    source = param()
    tolerance = param(0.001)


@ugen(ir=True)
class SetBuf(UGen):
    buffer_id = param()
    offset = param(0)
    count = param()
    values = param(unexpanded=True)


@ugen(ar=True, is_multichannel=True)
class GrainSin(UGen):
    trigger = param(0)
    duration = param(1)
    frequency = param(440)
    pan = param(0)
    envelope_buffer_id = param(-1)
    maximum_overlap = param(512)


@ugen(ar=True, channel_count=2, fixed_channel_count=True)
class GVerb(UGen):
    source = param()
    room_size = param(10.0)
    rev_time = param(3.0)
    damping = param(0.5)
    input_bw = param(0.5)
    spread = param(15.0)
    dry_level = param(1.0)
    early_ref_level = param(0.7)
    tail_level = param(0.5)
    max_room_size = param(300.0)
