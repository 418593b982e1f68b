#!/usr/bin/env bash
# Instructions executed, counted by valgrind's callgrind: deterministic, so usable as a
# regression gate on noisy shared machines where wall-clock benchmarks drift by 5–15 %
# between identical runs.
#
#   scripts/bench-instructions.sh [--save FILE] [--baseline FILE] [SPEC ...]
#   scripts/bench-instructions.sh --engine [--save FILE] [--baseline FILE] [CORPUS ...]
#   scripts/bench-instructions.sh --plugin-run [--save FILE] [--baseline FILE] [STRATEGY ...]
#
# Render mode (default): each strategy (default: every built-in) renders every call
# `recap run` replays of every bench-data session of its forms once inside
# `measured_render` of examples/render-instructions.rs; only that function and its
# callees are counted (`--toggle-collect`), not loading the corpus. Prints strategy,
# calls, prompt bytes, instructions (Ir) and Ir per prompt byte.
#
# Engine mode (--engine): `recap run --jobs 1 CORPUS` (default: each bench-data/*.jsonl)
# with the default strategies and tokenizer; counted are the workers
# (`WorkLoop::run`: parsing the corpus, every session under every strategy — render,
# checks, retention, counting) and the fold into the report (`run_entries` on the
# calling thread) — not loading the tokenizer's vocabulary, not writing the report.
# (Each toggle flips collection on entry and exit, so no toggled function may run
# inside another on the same thread.)
# Prints corpus, corpus bytes, Ir and Ir per corpus byte (the per-MB cost of a form).
#
# Plugin-run mode (--plugin-run): `recap run`'s engine over bench-data (CORPUS=generated:
# the plugin bench's generated corpus instead) (one job, every check, no time limit so
# that every call runs on the counted thread) asked for each
# strategy (default: the eight built-ins with a wrapped twin) as the built-in and as its
# twin loaded in-process (examples/plugin-run-instructions.rs); each run counted whole
# minus a run that only loads and configures. Prints strategy, both counts and the
# twin's ratio: the plugin-run target of docs/performance.md, free of machine load.
#
#   --save FILE       also write the table to FILE (a baseline)
#   --baseline FILE   compare with a saved table; exit 3 if any row's Ir grew by more
#                     than THRESHOLD percent (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."

save="" baseline="" engine=false plugin_run=false
specs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --save) save="${2:?--save needs a file}"; shift 2 ;;
        --baseline) baseline="${2:?--baseline needs a file}"; shift 2 ;;
        --engine) engine=true; shift ;;
        --plugin-run) plugin_run=true; shift ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) specs+=("$1"); shift ;;
    esac
done
threshold="${THRESHOLD:-1}"
command -v valgrind > /dev/null || { echo "error: valgrind is not installed" >&2; exit 2; }
if [[ -n "$baseline" && ! -r "$baseline" ]]; then
    echo "error: baseline $baseline is not readable" >&2
    exit 2
fi

target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
table="$tmp/table.txt"

if $plugin_run; then
    cargo build --profile bench --quiet --example plugin-run-instructions
    bin="$target/release/examples/plugin-run-instructions"
    fixtures=crates/recap-plugin-host/tests/fixtures/Cargo.toml
    cargo build --release --quiet --manifest-path "$fixtures" -p recap-plugin-wrapped-builtins --examples
    libs="$(cargo metadata --manifest-path "$fixtures" --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/examples"
    if [[ "${CORPUS:-}" == generated ]]; then corpus=(generated); else corpus=(bench-data/*.jsonl); fi
    if [[ ${#specs[@]} -eq 0 ]]; then
        specs=(full-history single-user-coalesced per-turn-summary rolling-window ptc-runner
            ptc-trim observation-masking amortized-forgetting)
    fi
    count() { # strategy, mode -> instructions of the whole process
        PLUGIN_RUN_ONLY="$2" RECAP_PLUGIN_TIMEOUT=none valgrind --tool=callgrind \
            --callgrind-out-file="$tmp/callgrind.out" "$bin" "$libs/libwrap_${1//-/_}.so" "$1" \
            "${corpus[@]}" > /dev/null 2> "$tmp/valgrind.txt" || {
            echo "error: valgrind run for $1 ($2) failed:" >&2; cat "$tmp/valgrind.txt" >&2; exit 1
        }
        sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/callgrind.out"
    }
    printf '%-28s %15s %15s %7s\n' strategy builtin_Ir plugin_Ir ratio > "$table"
    for spec in "${specs[@]}"; do
        # Separate assignments, so that a failed count stops the script (set -e).
        setup=$(count "$spec" setup)
        builtin=$(count "$spec" builtin)
        plugin=$(count "$spec" plugin)
        builtin=$((builtin - setup)) plugin=$((plugin - setup))
        awk -v s="$spec" -v b="$builtin" -v p="$plugin" \
            'BEGIN { printf "%-28s %15d %15d %7.3f\n", s, b, p, p / b }' >> "$table"
    done
elif $engine; then
    # The bench profile: optimised like `cargo bench`, with line tables for symbol names.
    cargo build --profile bench --quiet --bin recap
    bin="$target/release/recap"
    [[ -x "$bin" ]] || { echo "error: $bin was not built" >&2; exit 1; }
    if [[ ${#specs[@]} -eq 0 ]]; then
        mapfile -t specs < <(ls bench-data/*.jsonl)
    fi
    printf '%-40s %12s %15s %9s\n' corpus bytes Ir Ir/byte > "$table"
    for corpus in "${specs[@]}"; do
        out="$tmp/callgrind.out"
        valgrind --tool=callgrind --callgrind-out-file="$out" \
            --toggle-collect='recap_harness::driver::WorkLoop::run' \
            --toggle-collect='recap_harness::driver::run_entries*' \
            "$bin" run --jobs 1 --format json "$corpus" > /dev/null 2> "$tmp/valgrind.txt" || {
            # Exit 1 is a run that reports problems (say, a rejected line): still counted.
            [[ $? -eq 1 ]] || { echo "error: valgrind run on $corpus failed:" >&2; cat "$tmp/valgrind.txt" >&2; exit 1; }
        }
        ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out")
        [[ -n "$ir" && "$ir" -gt 0 ]] || { echo "error: nothing counted for $corpus (symbol names changed?)" >&2; exit 1; }
        bytes=$(stat -c %s "$corpus")
        awk -v s="$(basename "$corpus")" -v b="$bytes" -v i="$ir" \
            'BEGIN { printf "%-40s %12d %15d %9.1f\n", s, b, i, i / b }' >> "$table"
    done
else
    # The bench profile: optimised like `cargo bench`, with line tables for symbol names.
    cargo build --profile bench --quiet --example render-instructions
    bin="$target/release/examples/render-instructions"
    [[ -x "$bin" ]] || { echo "error: $bin was not built" >&2; exit 1; }
    if [[ ${#specs[@]} -eq 0 ]]; then
        mapfile -t specs < <("$bin" --list)
    fi
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
fi
cat "$table"
[[ -n "$save" ]] && cp "$table" "$save"

if [[ -n "$baseline" ]]; then
    echo
    echo "change against $baseline (threshold ${threshold}%):"
    # Ir is the next-to-last column in every mode (the twin's, in plugin-run mode).
    awk -v t="$threshold" '
        NR == FNR { if (FNR > 1) base[$1] = $(NF - 1); next }
        FNR > 1 {
            ir = $(NF - 1)
            if (!($1 in base)) { printf "%-40s %15s  (not in the baseline)\n", $1, ir; next }
            pct = (base[$1] == 0) ? 0 : (ir - base[$1]) * 100 / base[$1]
            flag = (pct > t) ? "  REGRESSED" : ""
            if (pct > t) bad = 1
            printf "%-40s %15d -> %15d  %+7.2f%%%s\n", $1, base[$1], ir, pct, flag
        }
        END { exit bad ? 3 : 0 }' "$baseline" "$table"
fi
