#!/usr/bin/env bash
# What sharding a run costs (docs/performance.md, "Sharded runs"):
#
#   1. CPU: the sum of the CPU time of `recap run --shard I/8` over I = 0..7 against the
#      CPU time of the same run unsharded (target: ≤ 1.1×);
#   2. merge: the wall time of `recap merge` over the 64 parts of `--shard I/64` against
#      the wall time of the unsharded run (target: ≤ 5 %).
#
#   scripts/bench-shards.sh [ROUNDS]      default: 5 rounds
#
# The corpus is the one of the issue: 500 sessions of recap-gen's generator
# (`gen-corpus --sessions 100 --turns 1..=30`, seeds 1–5, concatenated). Every run has
# the default strategies and --out (a shard's part is written there; the unsharded run
# writes its report there). Unsharded and sharded runs alternate, and both use --jobs 1
# for the CPU figure, so that thread hand-offs weigh the same on both sides; the
# unsharded run of the merge figure has the default --jobs (all CPUs). CPU time is
# user + system time (GNU time). Medians over the rounds are printed, with every round.
# Also checks that the merged report equals the unsharded one (timings aside).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

rounds="${1:-5}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [ROUNDS]" >&2; exit 2; }
command -v /usr/bin/time > /dev/null || { echo "error: needs GNU time (/usr/bin/time)" >&2; exit 1; }

bench_setup
corpus="$tmp/corpus.jsonl"
: > "$corpus"
for seed in 1 2 3 4 5; do
    gen_chunk "$seed" "$tmp/chunk.jsonl"
    cat "$tmp/chunk.jsonl" >> "$corpus"
done
echo "==> corpus: $(stat -c %s "$corpus") bytes, $(wc -l < "$corpus") sessions" >&2

# "CPU WALL" seconds of one command (its output discarded; exit 1 = problems found, fine).
measure() {
    local status=0
    /usr/bin/time -f "%U %S %e" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/stderr" || status=$?
    if (( status > 1 )); then
        echo "error: $* failed (exit $status):" >&2
        cat "$tmp/stderr" >&2
        exit 1
    fi
    awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$tmp/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "==> CPU: unsharded against 8 shards, --jobs 1, $rounds rounds" >&2
: > "$tmp/ratios"; : > "$tmp/whole"; : > "$tmp/sum"
for (( r = 1; r <= rounds; r++ )); do
    rm -rf "$tmp/whole-out"
    whole=$(measure "$recap" run "$corpus" --jobs 1 --out "$tmp/whole-out" | cut -d' ' -f1)
    sum=0
    for i in 0 1 2 3 4 5 6 7; do
        rm -rf "$tmp/p8-$i"
        cpu=$(measure "$recap" run "$corpus" --jobs 1 --shard "$i/8" --out "$tmp/p8-$i" | cut -d' ' -f1)
        sum=$(awk -v a="$sum" -v b="$cpu" 'BEGIN { print a + b }')
    done
    ratio=$(awk -v a="$sum" -v b="$whole" 'BEGIN { printf "%.3f", a / b }')
    echo "round $r: unsharded ${whole} s CPU, 8 shards ${sum} s CPU in all, ${ratio}x"
    echo "$ratio" >> "$tmp/ratios"; echo "$whole" >> "$tmp/whole"; echo "$sum" >> "$tmp/sum"
done
echo "median: unsharded $(median < "$tmp/whole") s, 8 shards $(median < "$tmp/sum") s, ratio $(median < "$tmp/ratios")x (target ≤ 1.1x)"

# What each shard pays whatever its share: a run of a one-session corpus, and a shard
# that owns no line of the corpus (reads and hashes all of it, replays nothing).
head -n 1 "$corpus" > "$tmp/one.jsonl"
: > "$tmp/fixed"; : > "$tmp/empty"
for (( r = 1; r <= rounds; r++ )); do
    rm -rf "$tmp/one-out" "$tmp/empty-out"
    measure "$recap" run "$tmp/one.jsonl" --jobs 1 --out "$tmp/one-out" | cut -d' ' -f1 >> "$tmp/fixed"
    measure "$recap" run "$corpus" --jobs 1 --shard 99999/100000 --out "$tmp/empty-out" | cut -d' ' -f1 >> "$tmp/empty"
done
echo "per shard, median: a one-session run $(median < "$tmp/fixed") s CPU, a shard owning none of the corpus $(median < "$tmp/empty") s CPU"

echo "==> merge: 64 parts against the unsharded run's wall time, $rounds rounds" >&2
for i in $(seq 0 63); do
    "$recap" run "$corpus" --jobs 1 --shard "$i/64" --out "$tmp/p64-$i" 2> /dev/null
done
: > "$tmp/mratios"; : > "$tmp/mwall"; : > "$tmp/rwall"
for (( r = 1; r <= rounds; r++ )); do
    rm -rf "$tmp/run-out" "$tmp/merged"
    run_wall=$(measure "$recap" run "$corpus" --out "$tmp/run-out" | cut -d' ' -f2)
    merge_wall=$(measure "$recap" merge "$tmp"/p64-* --out "$tmp/merged" | cut -d' ' -f2)
    ratio=$(awk -v a="$merge_wall" -v b="$run_wall" 'BEGIN { printf "%.1f", 100 * a / b }')
    echo "round $r: unsharded run ${run_wall} s wall, merge of 64 parts ${merge_wall} s wall, ${ratio} %"
    echo "$ratio" >> "$tmp/mratios"; echo "$merge_wall" >> "$tmp/mwall"; echo "$run_wall" >> "$tmp/rwall"
done
echo "median: run $(median < "$tmp/rwall") s, merge $(median < "$tmp/mwall") s, $(median < "$tmp/mratios") % (target ≤ 5 %)"

# The merged report is the unsharded one: every field before the provenance block (whose
# command lines differ; the tests compare the rest of it) but the render_ns* timings.
deterministic() { awk '/^  "provenance":/ { exit } /"render_ns/ { next } { print }' "$1"; }
if diff <(deterministic "$tmp/merged/report.json") <(deterministic "$tmp/run-out/report.json") > "$tmp/diff"; then
    echo "merged report identical to the unsharded one (timings and provenance aside)"
else
    echo "warning: the merged report differs from the unsharded one:" >&2
    head -20 "$tmp/diff" >&2
fi
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs)"
