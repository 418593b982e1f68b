#!/usr/bin/env bash
# Parallel speed-up of `recap run` (target: `--jobs 2` ≥ 1.7× faster than `--jobs 1`
# on a large generated corpus).
#
#   scripts/bench-jobs.sh [SIZE_MB] [REPEATS]      defaults: 64 MB, 3 repeats
#
# Generates a corpus with recap-gen's public generator (`gen-corpus`, chunks of 100
# sessions, seeds 1, 2, 3, …) in a temporary directory, then runs
#
#   recap run CORPUS --jobs 1   and   recap run CORPUS --jobs 2
#
# alternately REPEATS times each and prints every wall time, the best of each, and the
# speed-up (best --jobs 1 / best --jobs 2). The best time is the least disturbed by other
# processes; on a shared machine check the load average printed at the end — a
# speed-up needs two idle CPUs. Also checks that both reports are identical.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

size="${1:-64}"
repeats="${2:-3}"
[[ "$size" =~ ^[1-9][0-9]*$ && "$repeats" =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: $0 [SIZE_MB] [REPEATS]" >&2
    exit 2
}

bench_setup
corpus="$tmp/corpus.jsonl"
: > "$corpus"
seed=1
while (( $(stat -c %s "$corpus") < size * 1000000 )); do
    gen_chunk "$seed" "$tmp/chunk.jsonl"
    cat "$tmp/chunk.jsonl" >> "$corpus"
    seed=$(( seed + 1 ))
done
echo "==> corpus: $(stat -c %s "$corpus") bytes, $(wc -l < "$corpus") sessions" >&2

# Wall time of one run in seconds; the JSON report goes to $2.
run() {
    local jobs=$1 out=$2 start end status=0
    start=$(date +%s.%N)
    "$recap" run "$corpus" --jobs "$jobs" --format json > "$out" 2> "$tmp/stderr.txt" || status=$?
    end=$(date +%s.%N)
    # Exit 1 means the report lists problems (invariant violations); the run finished.
    if (( status > 1 )); then
        echo "error: recap run --jobs $jobs failed (exit $status):" >&2
        cat "$tmp/stderr.txt" >&2
        exit 1
    fi
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}

best1="" best2=""
for (( i = 1; i <= repeats; i++ )); do
    t1=$(run 1 "$tmp/jobs1.json")
    t2=$(run 2 "$tmp/jobs2.json")
    echo "run $i: --jobs 1 ${t1} s, --jobs 2 ${t2} s"
    best1=$(awk -v a="$t1" -v b="${best1:-$t1}" 'BEGIN { print (a < b ? a : b) }')
    best2=$(awk -v a="$t2" -v b="${best2:-$t2}" 'BEGIN { print (a < b ? a : b) }')
done
awk -v a="$best1" -v b="$best2" \
    'BEGIN { printf "best: --jobs 1 %.3f s, --jobs 2 %.3f s, speed-up %.2fx\n", a, b, a / b }'

# Output must not depend on the job count (docs/report-schema.md, "Determinism"): every
# field before the last block (`non_deterministic`: wall-clock times) but the render_ns*
# timings, and the `--jobs` value that provenance.command_line records.
deterministic_part() {
    awk '/^  "non_deterministic":/ { exit }
         /"render_ns/ { next }
         jobs_value { jobs_value = 0; next }
         /^ *"--jobs",$/ { jobs_value = 1; next }
         { print }' "$1"
}
if diff <(deterministic_part "$tmp/jobs1.json") <(deterministic_part "$tmp/jobs2.json") > /dev/null; then
    echo "reports identical apart from render_ns* timings, --jobs and the non_deterministic block"
else
    echo "warning: the --jobs 1 and --jobs 2 reports differ beyond timings" >&2
fi
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs)"
