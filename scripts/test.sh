#!/usr/bin/env bash
# Runs every test: clippy with warnings as errors, Rust unit and integration
# tests and the loom model checks, then the end-to-end and compatibility suites
# that compare magnetar with scsynth.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== cargo clippy (warnings are errors; the lints are in Cargo.toml)"
cargo clippy --workspace --all-targets -q -- -D warnings
echo "== cargo test"
cargo test --workspace -q
echo "== every unit against hostile inputs (release: the server as built)"
cargo test -q --release -p magnetar-engine --test unit_sweep
echo "== loom model checks (lock-free structures under every interleaving)"
# A target directory of its own: --cfg loom rebuilds every crate, and sharing the
# normal one would throw away its cache on each run.
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom" \
    cargo test -q --release -p magnetar-rt -p magnetar-dsp --test loom
echo "== end-to-end and compatibility tests"
python3 -m pytest tests -q -n 2 -p no:cacheprovider
