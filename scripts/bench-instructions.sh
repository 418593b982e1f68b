#!/usr/bin/env bash
# Instructions executed by the render path, per built-in strategy, counted by valgrind's
# callgrind: deterministic, so usable as a regression gate on noisy shared machines
# where wall-clock benchmarks drift by 5–15 % between identical runs.
#
#   scripts/bench-instructions.sh [--save FILE] [--baseline FILE] [SPEC ...]
#
# Each strategy (default: every built-in) renders every call of every bench-data
# session once inside `measured_render` of examples/render-instructions.rs; only that
# function and its callees are counted (`--toggle-collect`), not loading the corpus.
# Prints strategy, calls, prompt bytes, instructions (Ir) and Ir per prompt byte.
#
#   --save FILE       also write the table to FILE (a baseline)
#   --baseline FILE   compare with a saved table; exit 3 if any strategy's Ir grew by
#                     more than THRESHOLD percent (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."

save="" baseline=""
specs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --save) save="${2:?--save needs a file}"; shift 2 ;;
        --baseline) baseline="${2:?--baseline needs a file}"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) specs+=("$1"); shift ;;
    esac
done
threshold="${THRESHOLD:-1}"
command -v valgrind > /dev/null || { echo "error: valgrind is not installed" >&2; exit 2; }
if [[ -n "$baseline" && ! -r "$baseline" ]]; then
    echo "error: baseline $baseline is not readable" >&2
    exit 2
fi

# The bench profile: optimised like `cargo bench`, with line tables for symbol names.
cargo build --profile bench --quiet --example render-instructions
target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
bin="$target/release/examples/render-instructions"
[[ -x "$bin" ]] || { echo "error: $bin was not built" >&2; exit 1; }
if [[ ${#specs[@]} -eq 0 ]]; then
    mapfile -t specs < <("$bin" --list)
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
table="$tmp/table.txt"
printf '%-28s %7s %12s %15s %9s\n' strategy calls bytes Ir Ir/byte > "$table"
for spec in "${specs[@]}"; do
    out="$tmp/callgrind.out"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect='*measured_render*' "$bin" "$spec" > "$tmp/stdout.txt" 2> "$tmp/valgrind.txt" || {
        echo "error: valgrind run for $spec failed:" >&2
        cat "$tmp/valgrind.txt" >&2
        exit 1
    }
    read -r _ n_calls bytes < "$tmp/stdout.txt"
    ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out")
    [[ -n "$ir" ]] || { echo "error: no totals in $out" >&2; exit 1; }
    awk -v s="$spec" -v c="$n_calls" -v b="$bytes" -v i="$ir" \
        'BEGIN { printf "%-28s %7d %12d %15d %9.2f\n", s, c, b, i, i / b }' >> "$table"
done
cat "$table"
[[ -n "$save" ]] && cp "$table" "$save"

if [[ -n "$baseline" ]]; then
    echo
    echo "change against $baseline (threshold ${threshold}%):"
    awk -v t="$threshold" '
        NR == FNR { if (FNR > 1) base[$1] = $4; next }
        FNR > 1 {
            if (!($1 in base)) { printf "%-28s %15s  (not in the baseline)\n", $1, $4; next }
            pct = (base[$1] == 0) ? 0 : ($4 - base[$1]) * 100 / base[$1]
            flag = (pct > t) ? "  REGRESSED" : ""
            if (pct > t) bad = 1
            printf "%-28s %15d -> %15d  %+7.2f%%%s\n", $1, base[$1], $4, pct, flag
        }
        END { exit bad ? 3 : 0 }' "$baseline" "$table"
fi
