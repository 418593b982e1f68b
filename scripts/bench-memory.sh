#!/usr/bin/env bash
# Peak memory and wall time of `recap run` over generated corpora of growing size
# (targets: peak RSS ≤ 150 MB on a 1 GB corpus, time linear in corpus size).
#
#   scripts/bench-memory.sh [SIZE_MB ...]      default sizes: 256 512 1024
#
# The corpora are generated with recap-gen's public generator (`gen-corpus`, chunks
# of 100 sessions with seeds 1, 2, 3, … appended, so a smaller corpus is a prefix of a
# larger one) into a temporary directory that is removed on exit. Each size runs
#
#   /usr/bin/time -v recap run CORPUS --jobs $JOBS [$RECAP_RUN_ARGS]
#
# and prints the corpus size, sessions, wall time, MB/s, CPU time and peak RSS.
#
# Environment: JOBS (default 2), RECAP_RUN_ARGS (extra `recap run` arguments, e.g.
# `--no-session-details`), TMPDIR (where the corpora go; needs ~2× the largest size),
# CARGO_TARGET_DIR (as for cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

if [[ ! -x /usr/bin/time ]]; then
    echo "error: /usr/bin/time (GNU time) is missing; install it: apt-get install time" >&2
    exit 2
fi
jobs="${JOBS:-2}"
if [[ $# -gt 0 ]]; then sizes=("$@"); else sizes=(256 512 1024); fi
for s in "${sizes[@]}"; do
    [[ "$s" =~ ^[1-9][0-9]*$ ]] || { echo "error: size $s is not a whole number of MB" >&2; exit 2; }
done

bench_setup

# Chunks are generated once, up to the largest size; corpus N MB = the first chunks
# whose total reaches N MB.
largest=0
for s in "${sizes[@]}"; do (( s > largest )) && largest=$s; done
echo "==> generating up to ${largest} MB of sessions in $tmp" >&2
chunks=()
total=0
seed=1
while (( total < largest * 1000000 )); do
    chunk="$tmp/chunk-$seed.jsonl"
    gen_chunk "$seed" "$chunk"
    chunks+=("$chunk")
    total=$(( total + $(stat -c %s "$chunk") ))
    seed=$(( seed + 1 ))
done

printf '%-8s %10s %9s %10s %8s %10s %12s\n' size_MB bytes sessions wall_s MB/s cpu_s peak_RSS_MB
for s in "${sizes[@]}"; do
    corpus="$tmp/corpus-$s.jsonl"
    : > "$corpus"
    for c in "${chunks[@]}"; do
        (( $(stat -c %s "$corpus") >= s * 1000000 )) && break
        cat "$c" >> "$corpus"
    done
    bytes=$(stat -c %s "$corpus")
    sessions=$(wc -l < "$corpus")
    # shellcheck disable=SC2086 # RECAP_RUN_ARGS is a list of words on purpose
    /usr/bin/time -v -o "$tmp/time.txt" "$recap" run "$corpus" --jobs "$jobs" ${RECAP_RUN_ARGS:-} \
        > "$tmp/report.txt" 2> "$tmp/stderr.txt" || {
        status=$?
        # Exit 1 means the report lists problems (invariant violations); the run finished.
        if (( status != 1 )); then
            echo "error: recap run failed (exit $status):" >&2
            cat "$tmp/stderr.txt" >&2
            exit 1
        fi
    }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time.txt" \
        | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    user=$(sed -n 's/.*User time (seconds): //p' "$tmp/time.txt")
    sys=$(sed -n 's/.*System time (seconds): //p' "$tmp/time.txt")
    rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
    awk -v s="$s" -v b="$bytes" -v n="$sessions" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss_kb" \
        'BEGIN { printf "%-8s %10d %9d %10.2f %8.2f %10.2f %12.1f\n", s, b, n, w, b / 1e6 / w, u + y, r / 1024 }'
    rm -f "$corpus"
done
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs)" >&2
