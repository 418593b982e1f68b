#!/usr/bin/env bash
# Runs recap's fuzz targets (fuzz/, cargo-fuzz + libFuzzer), each for a bounded time.
#
#   scripts/fuzz.sh                 every target, 60 s each
#   FUZZ_SECONDS=300 scripts/fuzz.sh corpus_reader value_printer
#   scripts/fuzz.sh --list          the targets
#
# Environment:
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_JOBS      libFuzzer -jobs/-workers (default 1: the machines have 2 cores)
#   FUZZ_SANITIZER address (default) or none (faster, finds panics and aborts only)
#   FUZZ_ARGS      extra libFuzzer flags, e.g. "-max_len=100000"
#
# Uses the stable toolchain: cargo-fuzz passes -Z flags to rustc, which stable accepts
# with RUSTC_BOOTSTRAP=1 (no nightly is needed). Installs cargo-fuzz if it is missing.
# The working corpus grows in fuzz/corpus/<target>/ (git-ignored), seeded from
# fuzz/seeds/<target>/ (committed). A crash leaves its input in
# fuzz/artifacts/<target>/ and makes this script exit 1 after the other targets ran;
# a target that does not build makes it exit 2 before any fuzzing.
# Turn each crash into a regression test: see RELIABILITY.md, "When the fuzzer finds a
# crash".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
sanitizer=${FUZZ_SANITIZER:-address}
export RUSTC_BOOTSTRAP=1
# The fuzz workspace keeps its own target dir (git-ignored), whatever the caller set.
unset CARGO_TARGET_DIR

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz (cargo install cargo-fuzz --locked)"
    cargo install cargo-fuzz --locked || { echo "error: could not install cargo-fuzz" >&2; exit 2; }
fi

all_targets=$(cd fuzz && cargo fuzz list) || { echo "error: cannot list fuzz targets" >&2; exit 2; }
if [[ "${1:-}" == "--list" ]]; then
    echo "$all_targets"
    exit 0
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets <<<"$all_targets"
fi

for t in "${targets[@]}"; do
    if ! grep -qx "$t" <<<"$all_targets"; then
        echo "error: unknown fuzz target '$t'; targets: $(echo $all_targets)" >&2
        exit 2
    fi
done

# Build first, so that a compile error (exit 2) is not mistaken for a crash (exit 1).
echo "==> building ${targets[*]}"
for t in "${targets[@]}"; do
    (cd fuzz && cargo fuzz build --sanitizer "$sanitizer" "$t") ||
        { echo "error: fuzz target $t does not build" >&2; exit 2; }
done

failed=()
for t in "${targets[@]}"; do
    corpus="fuzz/corpus/$t"
    mkdir -p "$corpus" "fuzz/artifacts/$t"
    seeds=()
    [[ -d "fuzz/seeds/$t" ]] && seeds=("$root/fuzz/seeds/$t")
    dict=()
    parallel=()
    # libFuzzer sends each job's output to fuzz-N.log; with one job keep it on stdout.
    [[ "$jobs" -gt 1 ]] && parallel=("-jobs=$jobs" "-workers=$jobs")
    [[ -f "fuzz/dict/$t.dict" ]] && dict=("-dict=$root/fuzz/dict/$t.dict")
    echo "==> fuzzing $t for ${seconds}s (jobs=$jobs, sanitizer=$sanitizer)"
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    (cd fuzz && cargo fuzz run --sanitizer "$sanitizer" "$t" "$root/$corpus" "${seeds[@]}" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
        "${parallel[@]}" "${dict[@]}" ${FUZZ_ARGS:-})
    status=$?
    if [[ $status -ne 0 ]]; then
        echo "!!! $t: crash or error (exit $status); inputs in fuzz/artifacts/$t/" >&2
        failed+=("$t")
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzzing found problems in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzzing: no crash in ${#targets[@]} target(s), ${seconds}s each"
