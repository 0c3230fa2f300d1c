#!/usr/bin/env bash
# The main job: set up, render the demo score with magnetar (and with scsynth
# beside it, for comparison), then boot magnetar as a real-time server with
# its built-in driver and play the demo's notes live.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=demo/out
mkdir -p "$out"
python3 demo/make_demo_score.py "$out/demo.osc"
echo "== rendering $out/demo.osc with magnetar (non-real-time)"
time ./target/release/magnetar -o 2 -N "$out/demo.osc" _ "$out/demo-magnetar.wav" 48000 WAV float
echo "== the same score with scsynth, for comparison"
scsynth -o 2 -N "$out/demo.osc" _ "$out/demo-scsynth.wav" 48000 WAV float >/dev/null
python3 demo/compare.py "$out/demo-scsynth.wav" "$out/demo-magnetar.wav"
echo "== booting magnetar in real time and playing the demo live (recorded to $out/live.wav)"
(cd demo && python3 play_live.py ../target/release/magnetar "out/live.wav")
python3 - "$out/live.wav" <<'PY'
import sys, numpy as np, soundfile
d, sr = soundfile.read(sys.argv[1], always_2d=True)
print(f"  live recording: {len(d)/sr:.1f} s at {sr} Hz, peak {np.abs(d).max():.3f}")
PY
