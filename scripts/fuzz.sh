#!/usr/bin/env bash
# Runs each fuzz target (all, or those named) for a bounded time at the lowest
# CPU priority, keeps what it finds in fuzz/corpus/<target>/ (minimised
# afterwards), and prints each target's executions, coverage and outcome.
# A crash, timeout or leak leaves its input in fuzz/artifacts/<target>/; turn
# it into a fix and copy the input to fuzz/regressions/<target>/ (replayed by
# `cargo test -p magnetar-fuzzing`).
#
#   scripts/fuzz.sh [-t seconds-per-target] [target ...]
#
# FUZZ_TIMEOUT=seconds sets libFuzzer's per-input limit (default 10): under
# heavy load an instrumented run of an expensive but legitimate def can pass
# 10 s. FUZZ_NO_CMIN=1 skips the corpus minimisation after a run (it can take
# as long as the run itself on the slower targets).
#
# Needs the nightly toolchain (`rustup toolchain list`) and cargo-fuzz,
# installed from crates.io here when missing. CI does not run this: it
# replays the corpora in plain `cargo test` (see docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=60
if [ "${1:-}" = "-t" ]; then
    seconds=$2
    shift 2
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(osc_packet tcp_stream commands synthdef score sound_file)
if ! rustup toolchain list | grep -q '^nightly'; then
    echo "ERROR: the nightly toolchain is needed (cargo-fuzz builds with sanitizers)" >&2
    exit 1
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
nice -n 19 cargo +nightly fuzz build -O
mkdir -p logs
# Leaks in third-party libraries (see the file) are not ours to fix here.
export LSAN_OPTIONS="suppressions=$PWD/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    # -max_len keeps new inputs (and so the corpus in the repository) small;
    # the engine prints to stderr, which -close_fd_mask=3 silences (libFuzzer
    # keeps its own report).
    if ! nice -n 19 cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=4096 -max_len=8192 \
        -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"logs/$t.log" 2>&1; then
        status=1
        echo "$t: FAILED, see fuzz/logs/$t.log and fuzz/artifacts/$t/"
    fi
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "logs/$t.log" | tail -1)
    # A set cover of the edges alone (no hit counts) keeps the corpus in the
    # repository small.
    [ -n "${FUZZ_NO_CMIN:-}" ] || nice -n 19 cargo +nightly fuzz cmin -O "$t" "corpus/$t" -- -timeout=10 -rss_limit_mb=4096 -close_fd_mask=3 \
        -set_cover_merge=1 -use_counters=0 >>"logs/$t.log" 2>&1 || status=1
    echo "$t: ${execs:-?} executions at ${rate:-?}/s (limit ${seconds} s), ${cov:-cov ?}, corpus $(ls "corpus/$t" | wc -l) files ($(du -sh --apparent-size "corpus/$t" | cut -f1))"
done
exit $status
