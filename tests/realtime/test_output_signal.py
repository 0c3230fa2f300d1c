"""What the audio callback plays is the synth's signal, whole: a 1000 Hz sine at amplitude 0.25
on the first output for 3 s of scheduled time, silence on the second, no discontinuity and no
missing period.  On JACK the same samples also reach another JACK client (``jack_rec``), all of
them unless JACK's graph ran late, which may cost that client whole periods."""

from __future__ import annotations

import math
import shutil
import subprocess
import time

import numpy as np
import pytest
import soundfile

from rtcheck import (
    SAMPLE_RATE,
    fft_peak_frequency,
    load_defs,
    quit_server,
    rt_stats,
    server_env,
    sine_def,
    sine_step_bound,
    tone_span,
    until_on_time,
    zero_crossing_frequency,
)
from rtserver import JACK_CLIENT, OscClient, bundle

FREQ = 1000.0
AMP = 0.25
TONE_SECONDS = 3.0
PERIOD = 256
BLOCK = 64


def analyse_tone(x: np.ndarray, label: str, skipped: int = 0) -> tuple[int, int]:
    """Checks one channel holding exactly one tone; returns its span.  ``skipped`` is how many
    frames the server's clock moved on by after late periods while the tone played."""
    start, end = tone_span(x)
    tone = x[start:end].astype(np.float64)
    assert tone.size > 0, f"{label}: the first output is silent"
    what = f"{label}: tone of {tone.size} samples from sample {start}"

    # Scheduled for 3 s of the server's clock: every period that passed was played, none twice.
    # The synth starts and ends at block boundaries, and the sine's first sample is 0.  A late
    # period moves the clock on by the time lost (the server counts it), so the tone is that
    # much shorter, never longer.
    want = TONE_SECONDS * SAMPLE_RATE
    assert want - skipped - BLOCK - 1 <= tone.size <= want + BLOCK + 1, (
        f"{what}: expected {TONE_SECONDS} s less the {skipped} frames the clock skipped"
    )

    freq_zc = zero_crossing_frequency(tone, SAMPLE_RATE)
    freq_fft = fft_peak_frequency(tone, SAMPLE_RATE)
    assert abs(freq_zc - FREQ) < 0.5, f"{what}: {freq_zc:.3f} Hz by zero crossings"
    assert abs(freq_fft - FREQ) < 0.5, f"{what}: {freq_fft:.3f} Hz by FFT"

    rms = math.sqrt(float(np.mean(tone**2)))
    want = AMP / math.sqrt(2)
    assert abs(rms - want) <= 0.01 * want, f"{what}: RMS {rms:.5f}, expected {want:.5f}"

    # A pure sine never moves further between neighbouring samples than this; a lost, repeated
    # or torn period would (at 1000 Hz a period of 256 frames is 5⅓ cycles, a third out of phase).
    steps = np.abs(np.diff(tone))
    bound = sine_step_bound(AMP, FREQ, SAMPLE_RATE) * 1.001 + 1e-6
    worst = int(np.argmax(steps))
    assert steps[worst] <= bound, f"{what}: jump of {steps[worst]:.5f} at sample {start + worst} (bound {bound:.5f})"

    # And the tone is one sine throughout: it matches its least-squares fit everywhere.
    n = np.arange(tone.size)
    basis = np.stack([np.sin(2 * np.pi * FREQ * n / SAMPLE_RATE), np.cos(2 * np.pi * FREQ * n / SAMPLE_RATE)], 1)
    coef, *_ = np.linalg.lstsq(basis, tone, rcond=None)
    residual = np.abs(tone - basis @ coef)
    worst = int(np.argmax(residual))
    assert residual[worst] < 2e-3, f"{what}: departs from a sine by {residual[worst]:.5f} at sample {start + worst}"
    print(
        f"{what}: {freq_zc:.4f} Hz (zero crossings), {freq_fft:.4f} Hz (FFT), RMS {rms:.6f}, "
        f"largest step {steps.max():.6f} of {bound:.6f}, largest misfit {residual.max():.2e}"
    )
    return start, end


def play_scheduled_tone(port: int) -> tuple[int, int]:
    """Plays the tone; returns the late periods (xruns) the server counted meanwhile and the
    frames its clock skipped after them."""
    client = OscClient(port)
    try:
        load_defs(client, sine_def())
        before = rt_stats(port)
        t = time.time() + 0.3
        client.send(bundle(t, ("/s_new", "rt_sine", 2000, 0, 0, "freq", FREQ, "amp", AMP, "out", 0)))
        client.send(bundle(t + TONE_SECONDS, ("/n_free", 2000)))
        time.sleep(0.3 + TONE_SECONDS + 0.3)
        after = rt_stats(port)
        return after.xruns - before.xruns, after.skipped_frames - before.skipped_frames
    finally:
        client.close()


# A period that ends late moves the server's clock on by the time lost, so a tone scheduled in
# seconds is shorter by that much (the clock driver counts it; JACK's clock is JACK's). A run
# with late periods (the other test worker's real-time threads share the two cores) is played
# again on a fresh server (rtcheck.until_on_time); the last one is checked whatever it counted.


def record_tone(driver, magnetar, wav, jack_wav):
    server = magnetar(record=wav, block=BLOCK, period=PERIOD)

    rec = None
    rec_out = ""
    if driver is not None:
        # A second JACK client records magnetar's ports: the signal really leaves the process.
        jack_rec = shutil.which("jack_rec")
        assert jack_rec, "jack_rec (Debian jackd2's example clients) is not installed"
        # jack_rec's process callback writes each frame to a ring buffer channel by channel, and
        # a full buffer drops the rest of a frame, which shifts every later frame across the
        # channels. A buffer that holds the whole recording cannot fill, however long its
        # disk thread is kept off the cores.
        frames = int((TONE_SECONDS + 1.5) * SAMPLE_RATE)
        rec = subprocess.Popen(
            [jack_rec, "-f", str(jack_wav), "-d", str(TONE_SECONDS + 1.5), "-b", "32", "-B", str(frames),
             f"{JACK_CLIENT}:out_1", f"{JACK_CLIENT}:out_2"],
            env=server_env(driver), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        time.sleep(0.2)
    try:
        late, skipped = play_scheduled_tone(server.port)
    finally:
        quit_server(server)
        if rec is not None:
            try:
                rec_out, _ = rec.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                rec.kill()
                rec_out, _ = rec.communicate()
    return rec, rec_out, late, skipped


def test_first_output_plays_the_sine_whole_and_second_is_silent(driver, magnetar, tmp_path):
    def run(attempt):
        wav = tmp_path / f"magnetar{attempt}.wav"
        jack_wav = tmp_path / f"jack_rec{attempt}.wav"
        return attempt, wav, jack_wav, *record_tone(driver, magnetar, wav, jack_wav)

    (attempt, wav, jack_wav, rec, rec_out, late, skipped), _ = until_on_time(run, lambda r: r[5])

    data, sr = soundfile.read(wav, dtype="float32", always_2d=True)
    assert sr == SAMPLE_RATE
    assert data.shape[1] == 2, f"MAGNETAR_RECORD wrote {data.shape[1]} channels"
    start, end = analyse_tone(
        data[:, 0], f"MAGNETAR_RECORD (run {attempt + 1}, {late} late periods, {skipped} frames skipped)", skipped
    )
    assert not data[:start, 0].any() and not data[end:, 0].any(), "sound outside the scheduled tone"
    assert not data[:, 1].any(), f"the second output is not silent: peak {np.abs(data[:, 1]).max()}"

    if rec is not None:
        assert rec.returncode == 0, f"jack_rec failed:\n{rec_out}"
        assert "overrun" not in rec_out, f"jack_rec lost frames:\n{rec_out}"
        captured, sr = soundfile.read(jack_wav, dtype="float64", always_2d=True)
        assert sr == SAMPLE_RATE
        assert not captured[:, 1].any(), "jack_rec heard sound on the second output"
        if late == 0:
            jstart, jend = analyse_tone(captured[:, 0], "jack_rec", skipped)
            # Sample for sample what magnetar recorded (32-bit PCM rounds below 1e-9).
            assert jend - jstart == end - start, "JACK carried a tone of another length"
            diff = np.abs(captured[jstart:jend, 0] - data[start:end, 0])
            assert diff.max() < 1e-6, f"JACK carried other samples: differ by up to {diff.max()}"
        else:
            # A late period is an xrun of JACK's whole graph: the other client may have missed
            # a cycle of magnetar's ports that magnetar itself played and recorded.
            jstart, jend = tone_span(captured[:, 0])
            carried_with_lost_periods(captured[jstart:jend, 0], data[start:end, 0], late)


def carried_with_lost_periods(got: np.ndarray, sent: np.ndarray, late: int) -> None:
    """``got`` is ``sent`` sample for sample, except for at most ``late`` JACK periods it missed
    (left out, or silent in their place) and the parts of periods cut at the tone's ends."""
    tol = 1e-6
    i = 0  # got[i] is sent[i + shift]
    shift = 0
    lost = 0
    while True:
        n = min(got.size - i, sent.size - i - shift)
        bad = np.flatnonzero(np.abs(got[i : i + n] - sent[i + shift : i + shift + n]) > tol)
        if bad.size == 0:
            i += n
            break
        i += int(bad[0])
        lost += 1
        assert lost <= late + 2, f"jack_rec departs from magnetar's samples more often than {late} late periods explain"
        silent = 0
        while i + silent < got.size and got[i + silent] == 0.0:
            silent += 1
        if 0 < silent <= PERIOD:
            i += silent  # a period heard as silence: the samples stay aligned
            continue
        # A period left out: the capture goes on from a later sample of what magnetar sent.
        probe = min(BLOCK, got.size - i)
        for skip in range(1, PERIOD + 1):
            ahead = sent[i + shift + skip : i + shift + skip + probe]
            if ahead.size == probe and np.all(np.abs(got[i : i + probe] - ahead) <= tol):
                shift += skip
                break
        else:
            raise AssertionError(f"jack_rec heard samples magnetar did not send at capture sample {i}")
    assert i == got.size, "jack_rec heard more than magnetar sent"
    missing = sent.size - got.size
    assert 0 <= missing <= late * PERIOD, (
        f"jack_rec's tone is {missing} samples shorter than magnetar's, more than {late} late periods of {PERIOD}"
    )


if __name__ == "__main__":
    pytest.main([__file__, "-s"])
