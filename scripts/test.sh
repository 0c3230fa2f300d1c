#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests, then the end-to-end and
# compatibility suites that compare magnetar with scsynth.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== cargo test"
cargo test --workspace -q
echo "== end-to-end and compatibility tests"
python3 -m pytest tests -q -n 2 -p no:cacheprovider
