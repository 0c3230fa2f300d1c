#!/usr/bin/env python3
"""Prints how closely two renders agree (SNR per channel, in dB)."""
import sys

import numpy as np
import soundfile


def main(ref_path, dut_path):
    ref, _ = soundfile.read(ref_path, dtype="float64", always_2d=True)
    dut, _ = soundfile.read(dut_path, dtype="float64", always_2d=True)
    print(f"scsynth: {ref.shape[0]} frames x {ref.shape[1]} ch; magnetar: {dut.shape[0]} frames x {dut.shape[1]} ch")
    n = min(len(ref), len(dut))
    for ch in range(min(ref.shape[1], dut.shape[1])):
        r, d = ref[:n, ch], dut[:n, ch]
        noise = np.sum((r - d) ** 2)
        snr = float("inf") if noise == 0 else 10 * np.log10(np.sum(r**2) / noise)
        print(f"channel {ch}: SNR {snr:.1f} dB, peak {np.max(np.abs(d)):.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
