"""Whole scores of the kind users render: node trees with done actions, many nodes, control
arrays and indices, bus traffic between synths, feedback, buffers, sample-accurate starts, and
a few small pieces of music.  Every case is compared bit for bit with scsynth."""

import json
import os
import subprocess

import pytest
import supriya
from supriya import ugens as U
from supriya.ugens import Parameter

import extra_ugens as X
from nrt import SR, Score, build, check_score, magnetar_binary, msg

PRIVATE = 64


def env_def(name, env, **params):
    """Sine through an envelope with a gate; done action 2 frees the synth."""

    def body(b):
        e = U.EnvGen.kr(envelope=env, gate=b["gate"], done_action=2)
        U.Out.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * e * b["amp"])

    return build(name, body, **{"freq": 440.0, "amp": 0.2, "out": 0.0, "gate": 1.0, **params})


# ------------------------------------------------------------------------------ envelopes


@pytest.mark.parametrize("block", ["64", "32", "8"])
def test_long_envelopes_with_sustain_and_release(tmp_path, block):
    adsr = supriya.Envelope.adsr(attack_time=0.3, decay_time=0.7, sustain=0.4, release_time=1.1, curve=-4.0)
    d = env_def("adsr", adsr)
    xl = build("xl", lambda b: U.Out.ar(bus=1, source=U.SinOsc.ar(frequency=U.XLine.kr(start=60.0, stop=4000.0, duration=2.7)) * U.Line.ar(start=0.3, stop=0.0, duration=2.9, done_action=2)))
    s = Score([d, xl]).add(0.0, msg("/s_new", "adsr", 1000, 0, 0), msg("/s_new", "xl", 1001, 0, 0))
    s.add(1.6003, msg("/n_set", 1000, "gate", 0.0)).end(3.0)
    check_score(tmp_path, s, channels=2, options=["-z", block])


def test_envelope_with_loop_node_and_many_segments(tmp_path):
    env = supriya.Envelope(amplitudes=[0.0, 1.0, 0.3, 0.8, 0.1, 0.0], durations=[0.05, 0.2, 0.15, 0.3, 0.4], curves=["sine", -3.0, "welch", 2.0, "exponential"], release_node=3, loop_node=1)
    d = env_def("loopenv", env)
    s = Score([d]).add(0.0, msg("/s_new", "loopenv", 1000, 0, 0)).add(1.7, msg("/n_set", 1000, "gate", 0.0)).end(2.4)
    check_score(tmp_path, s, channels=1)


# ------------------------------------------------------------------------------ node tree


def test_synths_in_groups_with_done_actions_while_others_run(tmp_path):
    def short(da):
        return build(f"short{da}", lambda b: U.Out.ar(bus=b["out"], source=U.Saw.ar(frequency=b["freq"]) * 0.1 * U.Line.kr(start=1.0, stop=0.0, duration=b["dur"], done_action=da)), out=0.0, freq=300.0, dur=0.1)

    drone = build("drone", lambda b: U.Out.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * 0.1), out=0.0, freq=110.0)
    s = Score([drone, *(short(da) for da in (2, 3, 4, 13, 14))])
    s.add(0.0, msg("/g_new", 100, 0, 0), msg("/g_new", 200, 1, 0), msg("/g_new", 300, 0, 200),
          msg("/s_new", "drone", 2000, 0, 0, "freq", 110.0), msg("/s_new", "drone", 2001, 1, 100, "freq", 165.0, "out", 1.0),
          msg("/s_new", "drone", 2002, 0, 300, "freq", 220.0))
    # done action 2: free self; 3: self and preceding; 4: self and following; 13: group's
    # other nodes; 14: the enclosing group
    s.add(0.0101, msg("/s_new", "short2", 3000, 1, 100, "dur", 0.05, "freq", 400.0))
    s.add(0.0202, msg("/s_new", "short3", 3001, 1, 100, "dur", 0.08, "freq", 500.0, "out", 1.0))
    s.add(0.0303, msg("/s_new", "short4", 3002, 0, 300, "dur", 0.1, "freq", 600.0))
    s.add(0.15, msg("/g_new", 400, 1, 0), msg("/s_new", "drone", 2010, 0, 400, "freq", 330.0), msg("/s_new", "drone", 2011, 1, 400, "freq", 440.0, "out", 1.0))
    s.add(0.1701, msg("/s_new", "short13", 3003, 1, 400, "dur", 0.05))
    s.add(0.25, msg("/s_new", "short14", 3004, 0, 200, "dur", 0.07, "freq", 700.0))
    s.add(0.3, msg("/g_freeAll", 100), msg("/s_new", "short2", 3005, 0, 100, "dur", 0.04))
    s.add(0.35, msg("/g_deepFree", 0)).end(0.4)
    check_score(tmp_path, s, channels=2)


def test_two_hundred_synths(tmp_path):
    d = build("voice", lambda b: U.Out.ar(bus=b["out"], source=U.Pan2.ar(source=U.LFTri.ar(frequency=b["freq"]) * b["amp"] * U.Line.kr(start=1.0, stop=0.0, duration=b["dur"], done_action=2), position=b["pan"])), freq=440.0, amp=0.01, dur=0.2, pan=0.0, out=0.0)
    s = Score([d])
    for i in range(200):
        t = (i * 37 % 200) * 0.0013  # starts scattered inside blocks
        s.add(t, msg("/s_new", "voice", 5000 + i, i % 2, 0, "freq", 100.0 + 13.7 * i, "dur", 0.05 + (i % 7) * 0.03, "pan", (i % 11) / 5.0 - 1.0))
    s.end(0.5)
    check_score(tmp_path, s, channels=2)


def test_node_reordering_and_pausing_in_an_effect_chain(tmp_path):
    src = build("src", lambda b: U.Out.ar(bus=PRIVATE, source=U.Saw.ar(frequency=b["freq"]) * 0.3), freq=220.0)
    fx = build("fx", lambda b: U.ReplaceOut.ar(bus=PRIVATE, source=U.RLPF.ar(source=U.In.ar(bus=PRIVATE), frequency=b["cut"], reciprocal_of_q=0.3)), cut=800.0)
    out = build("out", lambda b: U.Out.ar(bus=0, source=U.In.ar(bus=PRIVATE, channel_count=1)))
    s = Score([src, fx, out]).add(0.0, msg("/s_new", "src", 1000, 0, 0), msg("/s_new", "fx", 1001, 3, 1000), msg("/s_new", "out", 1002, 3, 1001))
    s.add(0.05, msg("/n_before", 1001, 1000))  # the filter now runs before its source: dry sound
    s.add(0.1, msg("/n_after", 1001, 1000), msg("/n_set", 1001, "cut", 2500.0))
    s.add(0.15, msg("/n_run", 1001, 0)).add(0.2, msg("/n_run", 1001, 1)).end(0.25)
    check_score(tmp_path, s, channels=1)


# ------------------------------------------------------------------------------ many voices of one def
# Consecutive synths of one def are computed side by side (several synths per instruction
# for band-limited oscillators and second-order filters); counts around and past the
# group sizes, frequency changes that make Saw and Pulse cross-fade their harmonic count in
# some voices only, moving filter coefficients, and block sizes with and without a remainder
# after the filters' groups of three samples.


def bank_def():
    def body(b):
        width = U.SinOsc.kr(frequency=0.7) * 0.3 + 0.5
        src = U.Saw.ar(frequency=b["freq"]) + U.Pulse.ar(frequency=b["freq"] * 1.5, width=width)
        cut, rq = b["cut"], b["rq"]
        moving = cut * (U.SinOsc.kr(frequency=1.3) * 0.4 + 1.0)
        mix = (U.LPF.ar(source=src, frequency=moving) + U.HPF.ar(source=src, frequency=cut)
               + U.BPF.ar(source=src, frequency=moving, reciprocal_of_q=rq) + U.BRF.ar(source=src, frequency=cut, reciprocal_of_q=rq)
               + U.RLPF.ar(source=src, frequency=moving, reciprocal_of_q=rq) + U.RHPF.ar(source=src, frequency=cut, reciprocal_of_q=rq)
               + X.Resonz.ar(source=src, frequency=moving, bwr=rq) + U.Ringz.ar(source=src * 0.05, frequency=cut, decay_time=0.05))
        U.Out.ar(bus=b["out"], source=mix * 0.02)

    return build("bank", body, freq=220.0, cut=1500.0, rq=0.4, out=0.0)


@pytest.mark.parametrize("kernels", ["vector", "scalar"])
@pytest.mark.parametrize("block", ["64", "16", "1"])
@pytest.mark.parametrize("voices", [3, 8, 13, 17, 23])
def test_many_voices_of_one_def_side_by_side(tmp_path, monkeypatch, voices, block, kernels):
    # The scalar lane loops are what a CPU without AVX2 runs.
    monkeypatch.setenv("MAGNETAR_SCALAR_KERNELS", "1" if kernels == "scalar" else "0")
    s = Score([bank_def()])
    for i in range(voices):
        s.add(0.0, msg("/s_new", "bank", 1000 + i, 1, 0, "freq", 60.0 + 47.3 * i, "cut", 300.0 + 211.0 * i,
                       "rq", 0.15 + 0.05 * (i % 7), "out", float(i % 2)))
    # Every third voice jumps in pitch (its harmonic count changes), every fourth filter moves.
    s.add(0.1, *(msg("/n_set", 1000 + i, "freq", 2000.0 + 97.0 * i) for i in range(0, voices, 3)))
    s.add(0.17, *(msg("/n_set", 1000 + i, "cut", 4000.0 - 90.0 * i) for i in range(0, voices, 4)))
    check_score(tmp_path, s.end(0.25), channels=2, options=["-z", block])


# Independent units of one kind in one synth (a filter bank on one source, a mix of
# oscillators) run as one step, several per instruction; FSinOsc banks of consecutive synths
# of one def run side by side across the synths as well.


def inner_bank_def():
    def body(b):
        f = b["freq"]
        saws = U.Mix.new([U.Saw.ar(frequency=f * (1 + 0.013 * i)) for i in range(8)])
        pulses = U.Mix.new([U.Pulse.ar(frequency=f * (1.5 + 0.02 * i), width=0.2 + 0.2 * i) for i in range(3)])
        src = saws * 0.05 + pulses * 0.1
        moving = b["cut"] * (U.SinOsc.kr(frequency=1.7) * 0.4 + 1.0)
        # Same source (the lanes read it once) and a constant-coefficient set next to moving ones.
        rings = U.Mix.new([U.Ringz.ar(source=src * 0.02, frequency=b["cut"] * (i + 1) * 0.5, decay_time=0.05 + 0.02 * i)
                           for i in range(6)])
        # Different sources, some coefficients moving.
        bands = U.Mix.new([U.BPF.ar(source=src if i % 2 else saws, frequency=moving * (1 + 0.3 * i), reciprocal_of_q=b["rq"])
                           for i in range(5)])
        lows = U.Mix.new([U.LPF.ar(source=pulses, frequency=moving * (0.5 + i)) for i in range(2)])
        sines = U.Mix.new([U.FSinOsc.ar(frequency=f * (i + 1)) for i in range(5)])
        U.Out.ar(bus=b["out"], source=(rings + bands + lows) * 0.05 + sines * 0.01)

    return build("inner", body, freq=220.0, cut=900.0, rq=0.3, out=0.0)


@pytest.mark.parametrize("kernels", ["vector", "scalar"])
@pytest.mark.parametrize("block", ["64", "16", "1"])
@pytest.mark.parametrize("voices", [2, 5, 19])
def test_unit_banks_inside_one_synth(tmp_path, monkeypatch, voices, block, kernels):
    monkeypatch.setenv("MAGNETAR_SCALAR_KERNELS", "1" if kernels == "scalar" else "0")
    s = Score([inner_bank_def()])
    for i in range(voices):
        s.add(0.0, msg("/s_new", "inner", 1000 + i, 1, 0, "freq", 70.0 + 31.3 * i, "cut", 400.0 + 173.0 * i,
                       "rq", 0.2 + 0.05 * (i % 5), "out", float(i % 2)))
    # Pitch jumps (harmonic counts and FSinOsc coefficients change) and moving cutoffs in some voices.
    s.add(0.08, *(msg("/n_set", 1000 + i, "freq", 1500.0 + 61.0 * i) for i in range(0, voices, 2)))
    s.add(0.15, *(msg("/n_set", 1000 + i, "cut", 3000.0 - 70.0 * i) for i in range(0, voices, 3)))
    check_score(tmp_path, s.end(0.22), channels=2, options=["-z", block])


@pytest.mark.parametrize("voices", [2, 3, 6])
def test_big_fsinosc_banks_of_consecutive_synths(tmp_path, voices):
    # 21 oscillators a synth: a whole vector's worth of its own and five that run beside other
    # synths' five; one synth's pitch jumps mid-score.
    bank = build("fbank", lambda b: U.Out.ar(bus=b["out"], source=U.Mix.new(
        [U.FSinOsc.ar(frequency=b["freq"] * (i + 1) * 0.5) for i in range(21)]) * 0.02), freq=90.0, out=0.0)
    s = Score([bank])
    for i in range(voices):
        s.add(0.0, msg("/s_new", "fbank", 1000 + i, 1, 0, "freq", 55.0 + 17.3 * i, "out", float(i % 2)))
    s.add(0.07, msg("/n_set", 1000, "freq", 130.0))
    check_score(tmp_path, s.end(0.15), channels=2)



@pytest.mark.parametrize("kernels", ["vector", "scalar"])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_fsinosc_banks_whose_frequencies_move_every_block(tmp_path, monkeypatch, threads, kernels):
    """Five oscillators a synth (batches that fill one quad and part of the next), each one's
    frequency swept by its own control-rate LFO, so the side-by-side kernel meets changed and
    unchanged frequencies in the same quad block after block; 37 consecutive synths with
    different rates, some of them paused and resumed."""
    monkeypatch.setenv("MAGNETAR_SCALAR_KERNELS", "1" if kernels == "scalar" else "0")

    def body(b):
        oscs = []
        for i in range(5):
            lfo = U.SinOsc.kr(frequency=b["rate"] * (i + 1)) if i % 2 else U.LFTri.kr(frequency=b["rate"] * 0.7 * (i + 1))
            # Oscillator 3 keeps a constant frequency beside the moving ones.
            freq = b["freq"] * (i + 1) if i == 3 else b["freq"] * (i + 1) * (1.0 + 0.3 * lfo)
            oscs.append(U.FSinOsc.ar(frequency=freq, initial_phase=0.1 * i))
        U.Out.ar(bus=b["out"], source=U.Mix.new(oscs) * 0.01)

    bank = build("fmove", body, freq=110.0, rate=3.0, out=0.0)
    s = Score([bank])
    for i in range(37):
        s.add(0.0, msg("/s_new", "fmove", 1000 + i, 1, 0, "freq", 60.0 + 23.7 * i, "rate", 0.5 + 0.9 * (i % 7),
                       "out", float(i % 2)))
    s.add(0.05, *(msg("/n_run", 1000 + i, 0) for i in range(0, 37, 5)))
    s.add(0.09, *(msg("/n_run", 1000 + i, 1) for i in range(0, 37, 5)))
    s.add(0.11, *(msg("/n_set", 1000 + i, "rate", 40.0) for i in range(1, 37, 4)))
    check_score(tmp_path, s.end(0.2), channels=2, dut_options=["-T", threads])


# ------------------------------------------------------------------------------ controls


ARR = build("arr", lambda b: U.Out.ar(bus=0, source=[
    sum(U.SinOsc.ar(frequency=b["freqs"][i]) * b["amps"][i] for i in range(3)),
    U.K2A.ar(source=b["amps"][2] + b["offset"]),
]), freqs=[220.0, 330.0, 440.0], amps=[0.1, 0.1, 0.1], offset=0.0)


def test_s_new_with_control_arrays(tmp_path):
    s = Score([ARR]).add(0.0, msg("/s_new", "arr", 1000, 0, 0, "freqs", [300.0, 450.0, 601.0], "amps", [0.2, 0.05, 0.3], "offset", 0.1))
    s.add(0.05, msg("/s_new", "arr", 1001, 0, 0, "amps", [0.01, 0.02], "offset", -0.2))  # short array
    s.add(0.1, msg("/n_set", 1000, "freqs", [100.0, 200.0, 300.0]), msg("/n_setn", 1001, "amps", 3, 0.1, 0.1, 0.4))
    s.add(0.15, msg("/n_set", 1001, "freqs", [900.0], "amps", [0.3, 0.3, 0.0, 9.0])).end(0.2)  # extra value ignored
    check_score(tmp_path, s, channels=2)


def test_s_new_and_n_set_with_controls_by_index(tmp_path):
    # control indices: freqs 0..2, amps 3..5, offset 6
    s = Score([ARR]).add(0.0, msg("/s_new", "arr", 1000, 0, 0, 0, 500.0, 4, 0.25, 6, 0.3, "freqs", [0.0, 700.0]))
    s.add(0.05, msg("/n_set", 1000, 1, 650.0, "amps", 0.4, 5, 0.2))
    s.add(0.1, msg("/n_setn", 1000, 2, 3, 800.0, 0.05, 0.05), msg("/n_fill", 1000, "amps", 2, 0.15)).end(0.15)
    check_score(tmp_path, s, channels=2)


def test_controls_mapped_to_control_buses(tmp_path):
    s = Score([ARR]).add(0.0, msg("/c_setn", 10, 3, 250.0, 375.0, 500.0), msg("/s_new", "arr", 1000, 0, 0), msg("/n_mapn", 1000, "freqs", 10, 3))
    s.add(0.0502, msg("/c_set", 11, 777.0)).add(0.1, msg("/c_fill", 10, 3, 123.0), msg("/n_map", 1000, "offset", 20), msg("/c_set", 20, 0.5))
    s.add(0.15, msg("/n_map", 1000, "freqs", -1)).end(0.2)
    check_score(tmp_path, s, channels=2)


# ------------------------------------------------------------------------------ buses

# magnetar's thread settings for the parallel-group scores: one thread, two, and two adding
# shared-bus writes in the order the threads finish (-x 0), which may change the last bits of
# sums (an SNR far above what anyone hears) where the default renders scsynth's bits.
THREADS = ["1", "2", "2 any order"]


def parallel(threads):
    if threads == "2 any order":
        return {"dut_options": ["-T", "2", "-x", "0"], "exact": False, "min_snr_db": 100.0}
    return {"dut_options": ["-T", threads]}


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_group_of_bus_readers_behind_their_sources(tmp_path, threads):
    """Sources write private buses before a /p_new group whose children read them (In.ar,
    In.kr, InFeedback), filter and sum into the outputs: on two threads the group is spread
    over both, and the result is still what scsynth plays in order."""
    src = build("src", lambda b: U.Out.ar(bus=b["out"], source=U.Saw.ar(frequency=b["freq"]) * 0.2), out=20.0, freq=110.0)

    def reader(b):
        x = U.In.ar(bus=b["in"], channel_count=1) + U.InFeedback.ar(bus=b["fb"], channel_count=1) * 0.5
        cutoff = U.In.kr(bus=b["cbus"], channel_count=1)
        U.Out.ar(bus=b["out"], source=U.RLPF.ar(source=x, frequency=cutoff, reciprocal_of_q=0.3) * b["amp"])

    rd = build("rd", reader, **{"in": 20.0, "fb": 21.0, "cbus": 5.0, "out": 0.0, "amp": 0.2})
    s = Score([src, rd]).add(0.0, msg("/c_set", 5, 800.0, 6, 2500.0), msg("/p_new", 1, 1, 0))
    s.add(0.0, msg("/s_new", "src", 10, 0, 0, "out", 20.0, "freq", 110.0),
          msg("/s_new", "src", 11, 0, 0, "out", 21.0, "freq", 173.0))
    for k in range(6):
        s.add(0.0, msg("/s_new", "rd", 100 + k, 1, 1, "in", 20.0 + k % 2, "fb", 21.0 - k % 2,
                       "cbus", 5.0 + k % 2, "out", float(k % 2), "amp", 0.1 + 0.03 * k))
    s.add(0.1, msg("/c_set", 5, 1600.0), msg("/n_set", 103, "in", 21.0))
    check_score(tmp_path, s.end(0.2), channels=2, **parallel(threads))


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_group_of_voice_to_effect_chains(tmp_path, threads):
    """A /p_new group whose children are groups: a percussive voice that frees itself,
    an effect that reads the voice's bus and adds to it, and a sender to the outputs.
    Chains come and go mid-score; on two threads the chains are spread, and the result
    is still what scsynth plays in order."""
    def voice(b):
        env = U.EnvGen.kr(envelope=supriya.Envelope.percussive(attack_time=0.005, release_time=0.06), done_action=2)
        U.Out.ar(bus=b["out"], source=U.Pulse.ar(frequency=b["freq"], width=0.3) * env * 0.3)

    def effect(b):
        x = U.In.ar(bus=b["bus"], channel_count=1)
        U.Out.ar(bus=b["bus"], source=U.RLPF.ar(source=x, frequency=b["cutoff"], reciprocal_of_q=0.4) * 0.5
                 + U.In.ar(bus=b["side"], channel_count=1) * 0.1)

    def send(b):
        U.Out.ar(bus=b["out"], source=U.In.ar(bus=b["bus"], channel_count=1) * b["amp"])

    vc = build("vc", voice, out=20.0, freq=220.0)
    fx = build("fx", effect, bus=20.0, side=40.0, cutoff=900.0)
    sd = build("sd", send, bus=20.0, out=0.0, amp=0.5)
    side = build("side", lambda b: U.Out.ar(bus=40.0, source=U.LFTri.ar(frequency=3.0)))
    s = Score([vc, fx, sd, side]).add(0.0, msg("/s_new", "side", 5, 0, 0), msg("/p_new", 1, 1, 0))

    def chain(t, k):
        g, bus = 100 + 10 * k, 20.0 + k
        s.add(t, msg("/g_new", g, 1, 1),
              msg("/s_new", "vc", g + 1, 1, g, "out", bus, "freq", 110.0 * (k + 2)),
              msg("/s_new", "fx", g + 2, 1, g, "bus", bus, "cutoff", 600.0 + 150.0 * k),
              msg("/s_new", "sd", g + 3, 1, g, "bus", bus, "out", float(k % 2), "amp", 0.3 + 0.05 * k))

    for k in range(6):
        chain(0.0, k)
    s.add(0.03, msg("/n_set", 122, "cutoff", 2500.0))
    # A voice frees itself mid-score; its chain's effect goes on with an empty bus.
    chain(0.05, 6)
    s.add(0.07, msg("/n_free", 130), msg("/n_run", 140, 0))
    s.add(0.09, msg("/s_new", "vc", 151, 0, 150, "out", 25.0, "freq", 700.0))
    check_score(tmp_path, s.end(0.14), channels=2, **parallel(threads))


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_groups_nested_in_chains(tmp_path, threads):
    """The shape of the Supernova thesis's Listing 5.2: inside a /p_new group, a section holding
    a parallel group of small voices and one of big voices, then an effect reading what both
    wrote, next to a section of plain groups. On two threads the inner groups spread, and the
    effects still hear every voice, as scsynth plays it in order."""
    def voice(b):
        U.Out.ar(bus=b["out"], source=U.Mix.new([U.FSinOsc.ar(frequency=b["freq"] * (i + 1)) for i in range(4)]) * 0.05)

    def big(b):
        U.Out.ar(bus=b["out"], source=U.Mix.new([U.Saw.ar(frequency=b["freq"] * (1 + 0.01 * i)) for i in range(8)]) * 0.02)

    def effect(b):
        x = U.In.ar(bus=b["in"], channel_count=1)
        U.Out.ar(bus=b["out"], source=U.CombC.ar(source=x, maximum_delay_time=0.02, delay_time=0.013, decay_time=0.3))

    vc, bg = build("vc", voice, out=20.0, freq=100.0), build("bg", big, out=20.0, freq=100.0)
    fx = build("fx", effect, **{"in": 20.0, "out": 0.0})
    s = Score([vc, bg, fx]).add(0.0, msg("/p_new", 1, 1, 0),
                                msg("/g_new", 10, 1, 1), msg("/p_new", 11, 1, 10), msg("/p_new", 12, 1, 10),
                                msg("/g_new", 20, 1, 1), msg("/g_new", 21, 1, 20), msg("/g_new", 22, 1, 20))
    for k in range(12):
        s.add(0.0, msg("/s_new", "vc", 100 + k, 0, 11, "freq", 150.0 + 40.0 * k, "out", 20.0))
    for k in range(3):
        s.add(0.0, msg("/s_new", "bg", 200 + k, 1, 12, "freq", 60.0 + 25.0 * k, "out", 20.0))
    for k in range(3):
        s.add(0.0, msg("/s_new", "vc", 300 + k, 0, 21, "freq", 500.0 + 70.0 * k, "out", 22.0),
              msg("/s_new", "bg", 400 + k, 1, 22, "freq", 90.0 + 30.0 * k, "out", 22.0))
    s.add(0.0, msg("/s_new", "fx", 500, 1, 10, "in", 20.0, "out", 0.0),
          msg("/s_new", "fx", 501, 1, 20, "in", 22.0, "out", 1.0))
    s.add(0.06, msg("/n_free", 105), msg("/g_tail", 11, 301), msg("/n_set", 301, "out", 20.0))
    check_score(tmp_path, s.end(0.12), channels=2, **parallel(threads))


@pytest.mark.parametrize("threads", [*THREADS, "4"])
def test_parallel_group_whose_bus_controls_change_between_blocks(tmp_path, threads):
    """A /p_new group of voices on outputs of their own (each written in place by its work item
    on several threads), a voice-to-reader chain and a reader of a bus nothing writes; /n_set,
    /n_setn and /n_fill then move a reader onto a voice's output, a voice onto the bus the chain
    reads, voices onto another's output and onto a shared one, and every synth at once. Every
    output written is compared, and holds what scsynth plays in order."""
    vc = build("vc", lambda b: U.Out.ar(bus=b["out"], source=U.Saw.ar(frequency=b["freq"]) * 0.1), out=2.0, freq=110.0)
    rd = build("rd", lambda b: U.Out.ar(bus=b["out"], source=U.In.ar(bus=b["in"], channel_count=1) * b["amp"]),
               **{"in": 30.0, "out": 0.0, "amp": 0.5})
    s = Score([vc, rd]).add(0.0, msg("/p_new", 1, 0, 0))
    for k in range(8):
        s.add(0.0, msg("/s_new", "vc", 100 + k, 1, 1, "out", 2.0 + k, "freq", 110.0 + 37.0 * k))
    s.add(0.0, msg("/g_new", 2, 1, 1), msg("/s_new", "vc", 200, 1, 2, "out", 20.0, "freq", 70.0),
          msg("/s_new", "rd", 201, 1, 2, "in", 20.0, "out", 0.0), msg("/s_new", "rd", 300, 1, 1, "in", 30.0, "out", 1.0))
    s.add(0.02, msg("/n_set", 300, "in", 5.0))
    s.add(0.04, msg("/n_setn", 300, "in", 1, 31.0))
    s.add(0.05, msg("/n_fill", 105, "out", 1, 20.0, 20.0))
    s.add(0.07, msg("/n_set", 105, "out", 7.0), msg("/n_set", 106, "out", 2.0), msg("/n_setn", 107, "out", 1, 2.0))
    s.add(0.09, msg("/n_set", 101, "out", 0.0))
    s.add(0.11, msg("/n_set", 1, "out", 10.0))
    check_score(tmp_path, s.end(0.14), channels=11, **parallel(threads))


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_group_of_buffer_readers(tmp_path, threads):
    """Children of a /p_new group read buffers (PlayBuf that frees itself at the end, BufRd,
    a wavetable Osc, BufFrames) that commands filled before: on two threads they are spread,
    and what they play is still what scsynth plays in order. A buffer changed between blocks
    by a command is heard from the next block on, as in scsynth."""
    def player(b):
        sig = U.PlayBuf.ar(channel_count=1, buffer_id=b["buf"], rate=b["rate"], loop=0, done_action=2)
        U.Out.ar(bus=b["out"], source=sig * 0.3)

    def reader(b):
        frames = U.BufFrames.kr(buffer_id=b["buf"])
        phase = U.LFSaw.ar(frequency=b["freq"]) * 0.5 + 0.5
        U.Out.ar(bus=b["out"], source=U.BufRd.ar(channel_count=1, buffer_id=b["buf"], phase=phase * frames,
                                                 loop=1, interpolation=4) * 0.2)

    def table(b):
        U.Out.ar(bus=b["out"], source=X.Osc.ar(buffer_id=b["buf"], frequency=b["freq"]) * 0.15)

    pl = build("pl", player, buf=0.0, rate=1.0, out=0.0)
    rd = build("rd", reader, buf=1.0, freq=3.0, out=0.0)
    tb = build("tb", table, buf=2.0, freq=220.0, out=0.0)
    s = Score([pl, rd, tb]).add(
        0.0,
        msg("/b_alloc", 0, 4000), msg("/b_gen", 0, "sine1", 6, 1.0, 0.3, 0.2),
        msg("/b_alloc", 1, 1500), msg("/b_gen", 1, "cheby", 6, 1.0, 0.5, -0.3),
        msg("/b_alloc", 2, 1024), msg("/b_gen", 2, "sine1", 7, 1.0, 0.5, 0.33, 0.25),
        msg("/p_new", 1, 1, 0))
    for k in range(4):
        s.add(0.0, msg("/s_new", "pl", 100 + k, 1, 1, "rate", 0.5 + 0.4 * k, "out", float(k % 2)),
              msg("/s_new", "rd", 200 + k, 1, 1, "freq", 2.0 + k, "out", float(1 - k % 2)),
              msg("/s_new", "tb", 300 + k, 1, 1, "freq", 110.0 * (k + 1), "out", float(k % 2)))
    s.add(0.05, msg("/b_gen", 2, "sine1", 7, 0.2, 1.0))
    check_score(tmp_path, s.end(0.15), channels=2, **parallel(threads))


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_group_of_buffer_writers(tmp_path, threads):
    """Children of a /p_new group write buffers: loopers recording (RecordBuf, mixing over what
    is there) into a buffer each and playing it back, and tape heads writing with BufWr at a
    Phasor that a reader plays elsewhere. On two threads the children are spread; two loopers
    sharing a buffer later take turns, the second waiting for the first. What the children play
    back from their buffers is what scsynth plays."""
    def looper(b):
        U.RecordBuf.ar(buffer_id=b["buf"], preexisting_level=0.5, loop=1, source=U.SinOsc.ar(frequency=b["freq"]) * 0.4)
        U.Out.ar(bus=b["out"], source=U.PlayBuf.ar(channel_count=1, buffer_id=b["buf"], rate=1.0, loop=1) * 0.5)

    def tape(b):
        phase = U.Phasor.ar(rate=1.0, start=0.0, stop=U.BufFrames.kr(buffer_id=b["buf"]))
        U.BufWr.ar(buffer_id=b["buf"], phase=phase, loop=1, source=U.Saw.ar(frequency=b["freq"]) * 0.2)
        U.Out.ar(bus=b["out"], source=U.BufRd.ar(channel_count=1, buffer_id=b["buf"], phase=phase * 0.5, loop=1) * 0.5)

    lp = build("lp", looper, buf=0.0, freq=220.0, out=0.0)
    tp = build("tp", tape, buf=0.0, freq=110.0, out=0.0)
    s = Score([lp, tp]).add(0.0, *(msg("/b_alloc", k, 600 + 150 * k) for k in range(6)), msg("/p_new", 1, 1, 0))
    for k in range(4):
        s.add(0.0, msg("/s_new", "lp", 100 + k, 1, 1, "buf", float(k), "freq", 200.0 + 90.0 * k, "out", float(k % 2)))
    for k in range(2):
        s.add(0.0, msg("/s_new", "tp", 200 + k, 1, 1, "buf", float(4 + k), "freq", 80.0 + 30.0 * k, "out", float(k)))
    # Later two loopers record into the same buffer, each over what the other left.
    s.add(0.08, msg("/n_set", 103, "buf", 2.0))
    check_score(tmp_path, s.end(0.15), channels=2, **parallel(threads))


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_group_of_feedback_voices_that_end_themselves(tmp_path, threads):
    """Voices with a feedback loop through their own local bus, each ending itself: FreeSelf
    when a line passes its end, FreeSelfWhenDone after a Line, PauseSelf on a trigger (and
    /n_run to resume). On two threads the group spreads, and every voice ends where scsynth's
    does."""
    def voice(b):
        fb = U.LocalIn.ar(channel_count=1)
        x = U.SinOsc.ar(frequency=b["freq"]) * 0.2 + U.DelayN.ar(source=fb, maximum_delay_time=0.01, delay_time=0.004) * 0.6
        U.LocalOut.ar(source=x)
        life = U.Line.kr(start=0.0, stop=1.0, duration=b["life"])
        U.FreeSelf.kr(trigger=life > 0.99)
        U.PauseSelf.kr(trigger=U.Line.kr(start=0.0, stop=1.0, duration=b["pause"]) > 0.99)
        U.Out.ar(bus=b["out"], source=U.FreeSelfWhenDone.kr(source=U.Line.kr(start=1.0, stop=0.0, duration=b["fade"])) * x)

    d = build("fbv", voice, freq=200.0, life=10.0, pause=10.0, fade=10.0, out=0.0)
    s = Score([d]).add(0.0, msg("/p_new", 1, 1, 0))
    for k in range(8):
        s.add(0.0, msg("/s_new", "fbv", 100 + k, 1, 1, "freq", 150.0 + 60.0 * k, "out", float(k % 2),
                       "life", 0.05 + 0.02 * k if k < 3 else 10.0,
                       "pause", 0.08 if k == 3 else 10.0,
                       "fade", 0.06 + 0.01 * k if k in (4, 5) else 10.0))
    s.add(0.12, msg("/n_run", 103, 1))
    check_score(tmp_path, s.end(0.2), channels=2, **parallel(threads))


@pytest.mark.parametrize("threads", THREADS)
def test_parallel_group_of_notes_ending_themselves_as_new_ones_arrive(tmp_path, threads):
    """A note every other block into a /p_new group (a few into a group nested in it), each
    ending itself by its envelope (done action 2), so that most blocks hold a note that ended
    in the block before and is deleted as the walk reaches it: on two threads the group still
    spreads, deleting them after it. Synths before and after the group play NumRunningSynths
    on outputs of their own: the count each sees, block by block, is scsynth's."""
    def note(b):
        env = U.EnvGen.kr(envelope=supriya.Envelope.percussive(attack_time=0.002, release_time=b["rel"]), done_action=2)
        U.Out.ar(bus=b["out"], source=U.Saw.ar(frequency=b["freq"]) * env * 0.1)

    def counter(b):
        U.Out.ar(bus=b["out"], source=U.K2A.ar(source=U.NumRunningSynths.kr()) * 0.01)

    nt = build("nt", note, freq=220.0, rel=0.05, out=0.0)
    ct = build("ct", counter, out=2.0)
    s = Score([nt, ct]).add(0.0, msg("/p_new", 1, 0, 0), msg("/g_new", 2, 1, 1),
                            msg("/s_new", "ct", 10, 0, 0, "out", 2.0), msg("/s_new", "ct", 11, 1, 0, "out", 3.0))
    block_s = 64 / SR
    for k in range(120):
        target = 2 if k % 7 == 3 else 1
        s.add(2 * k * block_s, msg("/s_new", "nt", 100 + k, k % 2, target, "freq", 110.0 + 23.0 * (k % 17),
                                   "rel", 0.01 + 0.004 * (k * 5 % 11), "out", float(k % 2)))
    s = s.end(0.35)
    check_score(tmp_path, s, channels=4, **parallel(threads))
    if threads == "2":
        # Before ended notes were deleted after the group: 135 of the 263 blocks.
        blocks, spread = spread_blocks(tmp_path / "traced", s, ["-T", "2", "-o", "4"])
        assert spread >= blocks * 3 // 4, f"the group spread in only {spread} of {blocks} blocks"


def spread_blocks(workdir, score, options):
    """(blocks, blocks whose parallel group ran on the threads) of a render with MAGNETAR_TRACE,
    every group that may spread spreading (MAGNETAR_SPREAD=always)."""
    workdir.mkdir()
    path = workdir / "score.osc"
    path.write_bytes(score.encode(str(workdir)))
    trace = workdir / "trace.json"
    env = {**os.environ, "MAGNETAR_TRACE": str(trace), "MAGNETAR_SPREAD": "always"}
    cmd = [magnetar_binary(), *options, "-N", str(path), "_", str(workdir / "out.wav"), "48000", "WAV", "float"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    return sum(e.get("name") == "block" for e in events), sum(e.get("name") == "group on threads" for e in events)


def test_mixed_audio_and_control_writers_on_the_same_buses(tmp_path):
    a = build("a", lambda b: (U.Out.ar(bus=0, source=U.SinOsc.ar(frequency=300.0) * 0.2), U.Out.kr(bus=0, source=U.LFSaw.kr(frequency=4.0))))
    k = build("k", lambda b: (U.Out.ar(bus=0, source=U.K2A.ar(source=U.SinOsc.kr(frequency=5.0) * 0.3)), U.Out.kr(bus=0, source=U.LFTri.kr(frequency=3.0) * 0.5)))
    r = build("r", lambda b: U.Out.ar(bus=1, source=[U.K2A.ar(source=U.In.kr(bus=0)), U.In.ar(bus=0) * 0.5]))
    s = Score([a, k, r]).add(0.0, msg("/s_new", "a", 1000, 1, 0), msg("/s_new", "k", 1001, 1, 0), msg("/s_new", "r", 1002, 1, 0))
    s.add(0.1, msg("/n_free", 1000)).end(0.2)
    check_score(tmp_path, s, channels=3)


def test_In_kr_follows_c_set_mid_score_between_blocks(tmp_path):
    r = build("r", lambda b: U.Out.ar(bus=0, source=[U.K2A.ar(source=U.In.kr(bus=3, channel_count=2)[0]), U.SinOsc.ar(frequency=U.In.kr(bus=4) * 100 + 200) * 0.2, U.K2A.ar(source=U.Lag.kr(source=U.In.kr(bus=5), lag_time=0.02))]))
    s = Score([r]).add(0.0, msg("/c_set", 3, 0.1, 4, 1.0), msg("/s_new", "r", 1000, 0, 0))
    for i, t in enumerate([0.0133, 0.02, 0.0271, 0.05 + 1 / SR, 0.0801]):
        s.add(t, msg("/c_set", 3, 0.2 * i - 0.4, 4, 1.0 + i, 5, (-1) ** i * 0.5))
    s.add(0.09, msg("/c_setn", 3, 3, 0.9, 3.0, -0.25)).end(0.12)
    check_score(tmp_path, s, channels=3)


def test_ReplaceOut_and_XOut_chain_ordering(tmp_path):
    a = build("a", lambda b: U.Out.ar(bus=0, source=[U.Saw.ar(frequency=110.0) * 0.3, U.SinOsc.ar(frequency=440.0) * 0.3]))
    x = build("x", lambda b: U.XOut.ar(bus=0, crossfade=b["xf"], source=U.LPF.ar(source=U.In.ar(bus=0, channel_count=2), frequency=600.0)), xf=0.5)
    r = build("r", lambda b: U.ReplaceOut.ar(bus=1, source=U.In.ar(bus=1) * U.LFPulse.kr(frequency=8.0)))
    o = build("o", lambda b: U.Out.ar(bus=0, source=U.Impulse.ar(frequency=50.0) * 0.5))
    s = Score([a, x, r, o]).add(0.0, *(msg("/s_new", n, 1000 + i, 1, 0) for i, n in enumerate("axro")))
    s.add(0.05, msg("/n_set", 1001, "xf", 0.9)).add(0.08, msg("/n_order", 3, 1000, 1003, 1002, 1001))
    s.add(0.12, msg("/n_before", 1000, 1003), msg("/n_set", 1001, "xf", 0.1)).end(0.18)
    check_score(tmp_path, s, channels=2)


def test_LocalIn_LocalOut_feedback_delay(tmp_path):
    def body(b):
        fb = U.LocalIn.ar(channel_count=2)
        dry = U.Impulse.ar(frequency=4.0) * 0.5
        wet = U.DelayC.ar(source=fb, maximum_delay_time=0.05, delay_time=[0.0133, 0.021]) * 0.7
        sig = [dry + wet[1], U.LPF.ar(source=wet[0], frequency=3000.0)]
        U.LocalOut.ar(source=sig)
        kfb = U.LocalIn.kr(channel_count=1)
        k = U.Impulse.kr(frequency=3.0) + kfb * 0.9
        U.LocalOut.kr(source=k)
        U.Out.ar(bus=0, source=[sig[0], sig[1], U.K2A.ar(source=k)])

    d = build("fb", body)
    s = Score([d]).add(0.0, msg("/s_new", "fb", 1000, 0, 0)).end(0.5)
    check_score(tmp_path, s, channels=3)


# ------------------------------------------------------------------------------ buffers


def test_PlayBuf_with_loop_and_rate_changes(tmp_path):
    d = build("pb", lambda b: U.Out.ar(bus=0, source=[
        U.PlayBuf.ar(buffer_id=0, rate=b["rate"], trigger=b["t"], start_position=b["pos"], loop=b["loop"]),
        U.PlayBuf.ar(buffer_id=0, rate=b["rate"] * -1.5, loop=1),
    ]), rate=1.0, t=Parameter(value=0.0, rate="trigger"), pos=0.0, loop=1.0)
    s = Score([d]).add(0.0, msg("/b_alloc", 0, 2200), msg("/b_gen", 0, "sine1", 7, 1.0, 0.4, 0.2), msg("/s_new", "pb", 1000, 0, 0))
    s.add(0.03, msg("/n_set", 1000, "rate", 2.3)).add(0.06, msg("/n_set", 1000, "rate", -0.7))
    s.add(0.0913, msg("/n_set", 1000, "t", 1.0, "pos", 1000.0)).add(0.12, msg("/n_set", 1000, "loop", 0.0, "rate", 1.9))
    s.add(0.17, msg("/n_set", 1000, "loop", 1.0, "t", 1.0, "pos", 2100.0)).end(0.25)
    check_score(tmp_path, s, channels=2)


@pytest.mark.parametrize("frames", [1001, 1024])
def test_b_gen_wavetable_fill_of_any_size_plays_back_the_same(tmp_path, frames):
    # a wavetable fill works on pairs of samples; an odd-sized buffer still gets its last one
    d = build("pbw", lambda b: U.Out.ar(bus=0, source=U.PlayBuf.ar(buffer_id=0, rate=-1.25, loop=1)))
    s = Score([d]).add(0.0, msg("/b_alloc", 0, frames), msg("/b_gen", 0, "sine1", 6, 1.0, 0.5, 0.25), msg("/s_new", "pbw", 1000, 0, 0)).end(0.1)
    check_score(tmp_path, s, channels=1)


def test_BufWr_then_PlayBuf_in_the_same_synth(tmp_path):
    def body(b):
        ph = U.Phasor.ar(rate=1.0, start=0, stop=U.BufFrames.kr(buffer_id=0))
        U.BufWr.ar(buffer_id=0, phase=ph, loop=1, source=U.SinOsc.ar(frequency=300.0) * U.LFTri.kr(frequency=5.0))
        U.Out.ar(bus=0, source=[
            U.PlayBuf.ar(buffer_id=0, rate=1.0, loop=1),
            U.BufRd.ar(buffer_id=0, phase=ph * 0.5, loop=1, interpolation=2),
            U.PlayBuf.ar(buffer_id=0, rate=0.75, loop=1),
        ])

    d = build("wr", body)
    s = Score([d]).add(0.0, msg("/b_alloc", 0, 1000), msg("/s_new", "wr", 1000, 0, 0)).end(0.2)
    check_score(tmp_path, s, channels=3)


# ------------------------------------------------------------------------------ timing


def test_OffsetOut_with_bundles_off_block_boundaries(tmp_path):
    d = build("oo", lambda b: U.OffsetOut.ar(bus=b["out"], source=U.SinOsc.ar(frequency=b["freq"]) * U.EnvGen.ar(envelope=supriya.Envelope.percussive(attack_time=0.002, release_time=0.02), done_action=2) * 0.3), freq=440.0, out=0.0)
    plain = build("pl", lambda b: U.Out.ar(bus=1, source=U.SinOsc.ar(frequency=b["freq"]) * U.EnvGen.ar(envelope=supriya.Envelope.percussive(attack_time=0.002, release_time=0.02), done_action=2) * 0.3), freq=440.0)
    s = Score([d, plain])
    for i in range(12):
        t = 0.0171 * i + (i * 7 % 64) / SR
        s.add(t, msg("/s_new", "oo", 1000 + i, 0, 0, "freq", 300.0 + 50 * i), msg("/s_new", "pl", 2000 + i, 0, 0, "freq", 300.0 + 50 * i))
    s.end(0.25)
    check_score(tmp_path, s, channels=2)


# ------------------------------------------------------------------------------ music


def _subtractive():
    def body(b):
        env = U.EnvGen.kr(envelope=supriya.Envelope.adsr(attack_time=0.01, decay_time=0.1, sustain=0.5, release_time=0.15), gate=b["gate"], done_action=2)
        osc = U.Saw.ar(frequency=[b["freq"], b["freq"] * 1.005]) * 0.5 + U.Pulse.ar(frequency=b["freq"] * 0.5, width=0.3) * 0.3
        filt = U.RLPF.ar(source=osc, frequency=U.EnvGen.kr(envelope=supriya.Envelope.percussive(attack_time=0.005, release_time=0.2)) * b["cut"] + 200, reciprocal_of_q=0.25)
        U.Out.ar(bus=b["out"], source=U.Pan2.ar(source=U.Mix.new(filt) * env * b["amp"], position=b["pan"]))

    return build("sub", body, freq=220.0, amp=0.2, gate=1.0, cut=3000.0, pan=0.0, out=0.0)


def _fm():
    def body(b):
        env = U.EnvGen.ar(envelope=supriya.Envelope.percussive(attack_time=0.001, release_time=b["rel"], curve=-6.0), done_action=2)
        mod = U.SinOsc.ar(frequency=b["freq"] * 3.5) * b["freq"] * b["index"] * env
        car = U.SinOsc.ar(frequency=b["freq"] + mod)
        U.Out.ar(bus=b["out"], source=U.Pan2.ar(source=car * env * b["amp"], position=b["pan"]))

    return build("fm", body, freq=440.0, amp=0.1, index=2.0, rel=0.4, pan=0.0, out=0.0)


def _kick():
    def body(b):
        fenv = U.XLine.kr(start=400.0, stop=45.0, duration=0.08)
        env = U.EnvGen.ar(envelope=supriya.Envelope.percussive(attack_time=0.001, release_time=0.3), done_action=2)
        U.Out.ar(bus=b["out"], source=[U.SinOsc.ar(frequency=fenv, phase=0.5) * env * b["amp"]] * 2)

    return build("kick", body, amp=0.5, out=0.0)


def _reverb():
    def body(b):
        dry = U.In.ar(bus=b["in"], channel_count=2)
        mono = U.Mix.new(dry) * 0.2
        combs = sum(U.CombL.ar(source=mono, maximum_delay_time=0.05, delay_time=t, decay_time=1.2) for t in (0.0297, 0.0371, 0.0411, 0.0437))
        wet = combs
        for t in (0.005, 0.0017):
            wet = U.AllpassN.ar(source=wet, maximum_delay_time=0.01, delay_time=t, decay_time=0.1)
        wet = U.LeakDC.ar(source=wet)
        U.Out.ar(bus=0, source=[dry[0] + wet * 0.3, dry[1] + U.DelayN.ar(source=wet, maximum_delay_time=0.01, delay_time=0.0031) * 0.3])

    return build("verb", body, **{"in": float(PRIVATE)})


@pytest.mark.parametrize("block,sr", [("64", 48000), ("32", 44100), ("128", 96000), ("8", 48000)])
def test_small_piece_of_music(tmp_path, block, sr):
    sub, fm, kick, verb = _subtractive(), _fm(), _kick(), _reverb()
    s = Score([sub, fm, kick, verb]).add(0.0, msg("/g_new", 10, 0, 0), msg("/g_new", 20, 3, 10), msg("/s_new", "verb", 900, 0, 20))
    beat = 0.125
    notes = [57, 60, 64, 67, 69, 67, 64, 60]
    nid = 1000
    for i in range(16):
        t = i * beat
        s.add(t, msg("/s_new", "kick", nid, 0, 10, "out", float(PRIVATE), "amp", 0.4 if i % 4 == 0 else 0.15))
        nid += 1
        if i % 2 == 0:
            f = 440.0 * 2 ** ((notes[i // 2 % 8] - 69) / 12)
            s.add(t + 0.003, msg("/s_new", "sub", nid, 0, 10, "freq", f, "out", float(PRIVATE), "pan", -0.3, "cut", 1500.0 + 200 * i))
            s.add(t + beat * 1.5, msg("/n_set", nid, "gate", 0.0))
            nid += 1
        s.add(t + beat / 2 + 0.0007, msg("/s_new", "fm", nid, 1, 10, "freq", 880.0 * 2 ** ((notes[(i * 3) % 8] - 69) / 12), "index", 1.0 + (i % 5), "pan", 0.4, "out", float(PRIVATE)))
        nid += 1
    s.end(2.3)
    check_score(tmp_path, s, channels=2, options=["-z", block], sr=sr)


def test_music_with_wavetables_and_modulation(tmp_path):
    import extra_ugens as X

    def pad2(b):
        osc = [X.Osc.ar(buffer_id=0, frequency=b["freq"] * r) for r in (1.0, 1.5, 2.01)]
        sig = U.Mix.new(osc) * 0.1
        sig = U.BPF.ar(source=sig, frequency=U.LFTri.kr(frequency=0.7) * 800 + 1200, reciprocal_of_q=0.5) + sig * (U.SinOsc.kr(frequency=0.3) * 0.4 + 0.5)
        sig = U.Balance2.ar(left=sig, right=U.DelayL.ar(source=sig, maximum_delay_time=0.02, delay_time=U.SinOsc.kr(frequency=0.5) * 0.004 + 0.01), position=U.LFSaw.kr(frequency=0.25) * 0.5)
        env = U.Linen.kr(gate=b["gate"], attack_time=0.3, sustain_level=1.0, release_time=0.5, done_action=2)
        U.Out.ar(bus=0, source=sig * env)

    d = build("pad", pad2, freq=220.0, gate=1.0)
    s = Score([d]).add(0.0, msg("/b_alloc", 0, 2048), msg("/b_gen", 0, "sine1", 7, 1.0, 0.5, 0.3, 0.2, 0.1))
    for i, f in enumerate([110.0, 164.81, 220.0, 277.18]):
        s.add(i * 0.2, msg("/s_new", "pad", 1000 + i, 1, 0, "freq", f))
        s.add(i * 0.2 + 0.9, msg("/n_set", 1000 + i, "gate", 0.0))
    s.end(2.2)
    check_score(tmp_path, s, channels=2)


def test_decaying_tails_flush_denormals_like_scsynth(tmp_path):
    # scsynth renders with the CPU flushing denormal floats to zero, so a tail decaying
    # below 1.2e-38 turns into exact zeros there
    def body(b):
        hit = U.Impulse.ar(frequency=0.0)
        U.Out.ar(bus=0, source=[
            U.Decay.ar(source=hit, decay_time=0.02),
            U.Ringz.ar(source=hit, frequency=2000.0, decay_time=0.03),
            U.OnePole.ar(source=hit, coefficient=0.9),
            U.LPF.ar(source=hit * 0.5, frequency=3000.0) * 1e-30,
        ])

    d = build("tails", body)
    s = Score([d]).add(0.0, msg("/s_new", "tails", 1000, 0, 0)).end(1.2)
    check_score(tmp_path, s, channels=4)
