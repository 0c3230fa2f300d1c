#!/usr/bin/env bash
# The main job: set up, then render the demo score with magnetar (and with
# scsynth beside it for comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=demo/out
mkdir -p "$out"
python3 demo/make_demo_score.py "$out/demo.osc"
echo "== rendering demo/out/demo.osc with magnetar"
time ./target/release/magnetar -o 2 -N "$out/demo.osc" _ "$out/demo-magnetar.wav" 48000 WAV float
echo "== the same score with scsynth, for comparison"
scsynth -o 2 -N "$out/demo.osc" _ "$out/demo-scsynth.wav" 48000 WAV float >/dev/null
python3 demo/compare.py "$out/demo-scsynth.wav" "$out/demo-magnetar.wav"
