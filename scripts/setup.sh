#!/usr/bin/env bash
# Installs what building, running and testing magnetar needs, then builds it.
# Safe to run again: each step is skipped when already satisfied.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v scsynth >/dev/null || need_apt+=(supercollider-server)
command -v supernova >/dev/null || need_apt+=(supercollider-supernova)
command -v jackd >/dev/null || need_apt+=(jackd2)
[ -e /usr/include/jack/jack.h ] || need_apt+=(libjack-jackd2-dev)
[ -e /usr/include/sndfile.h ] || need_apt+=(libsndfile1-dev)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v sox >/dev/null || need_apt+=(sox)
# boost.interprocess headers: the server's shared memory segment (crates/shm).
[ -e /usr/include/boost/interprocess/managed_shared_memory.hpp ] || need_apt+=(libboost-dev)
command -v g++ >/dev/null || need_apt+=(g++)
# SuperCollider's plugin interface headers and FFTW (single precision), to build the
# plugin host (crates/plugin); sc3-plugins' UGens, which it loads and tests/compat renders.
[ -e /usr/include/SuperCollider/plugin_interface/SC_PlugIn.h ] || need_apt+=(supercollider-dev)
[ -e /usr/include/fftw3.h ] || need_apt+=(libfftw3-dev)
[ -e /usr/lib/SuperCollider/plugins/MdaUGens.so ] || need_apt+=(sc3-plugins-server)
# sclang, for the session suite in tests/sclang.
command -v sclang >/dev/null || need_apt+=(supercollider-language)
# sc3-plugins' classes for sclang: the session's plugin step plays their units.
[ -d /usr/share/SuperCollider/Extensions/SC3plugins ] || need_apt+=(sc3-plugins-language)
# strace: fuzz/seeds/capture_sclang.py records sclang's packets with it.
command -v strace >/dev/null || need_apt+=(strace)
# valgrind: bench/instr_bench.py and bench/prepare_bench.py count instructions with callgrind.
command -v valgrind >/dev/null || need_apt+=(valgrind)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "== installing ${need_apt[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if ! python3 -c "import supriya, numpy, soundfile, pytest, xdist" 2>/dev/null; then
    echo "== installing Python packages"
    python3 -m pip install -q -r tests/requirements.txt
fi

if ! command -v cargo >/dev/null; then
    echo "ERROR: cargo (Rust) is required: https://rustup.rs" >&2
    exit 1
fi
# scripts/test.sh lints the workspace with clippy.
if ! cargo clippy --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
    rustup component add clippy
fi

echo "== building magnetar (release)"
cargo build --release -q -p magnetar-server -p magnetar-shm
