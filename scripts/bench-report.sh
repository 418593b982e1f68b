#!/usr/bin/env bash
# Summarises the last `cargo bench` run against the targets of docs/performance.md:
# reads criterion's results (<target>/criterion/**/new/{benchmark,estimates}.json,
# medians) and prints the side-by-side ratios, each with PASS or MISS.
#
#   cargo bench && scripts/bench-report.sh [CRITERION_DIR]
#
# Needs jq. CRITERION_DIR defaults to the workspace's target directory + /criterion
# (honours CARGO_TARGET_DIR and CRITERION_HOME like criterion does).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v jq > /dev/null || { echo "error: jq is required (apt-get install jq)" >&2; exit 2; }
if [[ $# -gt 0 ]]; then
    dir="$1"
elif [[ -n "${CRITERION_HOME:-}" ]]; then
    dir="$CRITERION_HOME"
else
    target="$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)"
    dir="$target/criterion"
fi
[[ -d "$dir" ]] || { echo "error: no criterion results in $dir; run cargo bench first" >&2; exit 1; }

# One line per benchmark: full id, median ns, throughput bytes (0 when none).
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
while IFS= read -r -d '' bench; do
    estimates="${bench%benchmark.json}estimates.json"
    [[ -r "$estimates" ]] || continue
    jq -r --slurpfile e "$estimates" \
        '[.full_id, $e[0].median.point_estimate,
          ((.throughput // {}) | to_entries | map(.value) | first // 0)] | @tsv' "$bench"
done < <(find "$dir" -path '*/new/benchmark.json' -print0) | sort > "$results"
[[ -s "$results" ]] || { echo "error: no benchmark results under $dir" >&2; exit 1; }

awk -F'\t' '
function pass(ok) { return ok ? "PASS" : "MISS" }
{ t[$1] = $2; b[$1] = $3; ids[n++] = $1 }
END {
    print "## render/turns: last call of a generated session (MB/s should not fall with n)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^render\/turns\//) {
        split(ids[i], p, "/")
        printf "  %-24s %12s turns %10.1f us %10d bytes %10.1f MB/s\n", p[3], p[4], t[ids[i]] / 1e3, b[ids[i]], b[ids[i]] * 1e3 / t[ids[i]]
    }
    print ""
    print "## render time / what recap run pays to count the same prompts (target < 5%)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^render-vs-count\/.*\/render$/) {
        s = ids[i]; sub(/^render-vs-count\//, "", s); sub(/\/render$/, "", s)
        cnt = "render-vs-count/" s "/count-in-run"
        if (!(cnt in t)) continue
        r = t[ids[i]] / t[cnt] * 100
        printf "  %-24s render %9.3f ms  count-in-run %9.3f ms  %7.2f%%  %s\n", s, t[ids[i]] / 1e6, t[cnt] / 1e6, r, pass(r < 5)
    }
    fl = "render-floor/read-shown-data"; pt = "render-vs-count/ptc-runner/count-in-run"
    if ((fl in t) && (pt in t))
        printf "  (reading the calls, definitions and prints once, no rendering: %.3f ms = %.2f%% of counting ptc-runner'"'"'s prompts)\n", t[fl] / 1e6, t[fl] / t[pt] * 100
    print ""
    print "## harness end to end vs the naive loop, same tokenizer (target: naive / engine >= 4)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^harness\/.*\/engine$/) {
        c = ids[i]; sub(/^harness\//, "", c); sub(/\/engine$/, "", c)
        nv = "harness/" c "/naive"; rf = "harness/" c "/naive-reference-tokenizer"
        if (!(nv in t)) continue
        r = t[nv] / t[ids[i]]
        printf "  %-22s engine %9.1f ms %7.2f MB/s  naive %9.1f ms  %5.2fx %s", c, t[ids[i]] / 1e6, b[ids[i]] * 1e3 / t[ids[i]], t[nv] / 1e6, r, pass(r >= 4)
        if (rf in t) printf "  (extra: naive with the reference tokenizer %6.2fx)", t[rf] / t[ids[i]]
        printf "\n"
    }
    pe = "harness/ptc-generated/engine"; ce = "harness/chat-generated/engine"
    if ((pe in t) && (ce in t)) {
        # ns per byte = ms per MB
        pm = t[pe] / b[pe]; cm = t[ce] / b[ce]
        printf "  per MB: chat-generated %.1f ms/MB, ptc-generated %.1f ms/MB: chat / ptc %.2f  %s (target: chat <= ptc)\n", cm, pm, cm / pm, pass(cm <= pm)
    }
    print ""
    print "## harness end to end vs the floor: parse, tokenize each distinct prompt line once (target: engine / floor <= 2)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^harness\/.*\/engine$/) {
        c = ids[i]; sub(/^harness\//, "", c); sub(/\/engine$/, "", c)
        fl = "harness/" c "/floor"
        if (!(fl in t)) continue
        r = t[ids[i]] / t[fl]
        printf "  %-22s engine %9.1f ms  floor %9.1f ms  %5.2fx %s\n", c, t[ids[i]] / 1e6, t[fl] / 1e6, r, pass(r <= 2)
    }
    print ""
    print "## plugin vs direct (target: abi / direct <= 1.5)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^plugin\/.*\/direct$/) {
        s = ids[i]; sub(/^plugin\//, "", s); sub(/\/direct$/, "", s)
        a = "plugin/" s "/abi"; nl = "plugin/" s "/abi-no-time-limit"; fr = "plugin/" s "/abi-full-request"
        if (!(a in t)) continue
        r = t[a] / t[ids[i]]
        printf "  %-24s direct %8.2f ms  abi %6.2fx %s", s, t[ids[i]] / 1e6, r, pass(r <= 1.5)
        if (nl in t) printf "  no-time-limit %6.2fx", t[nl] / t[ids[i]]
        if (fr in t) printf "  full-request %7.2fx", t[fr] / t[ids[i]]
        fl = "plugin/" s "/session-copy-floor"
        if (fl in t) {
            # Copying the sessions alone, added to direct: the least a plugin holding its
            # own copy of the session can cost.
            r = 1 + t[fl] / t[ids[i]]
            printf "  copy floor %6.2fx%s", r, (r > 1.5 ? " (target out of reach for a copying ABI)" : "")
        }
        printf "\n"
    }
    print ""
    print "## recap run with the strategy as a plugin vs as a built-in (end to end; no target)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^plugin-run\/.*\/builtin$/) {
        s = ids[i]; sub(/^plugin-run\//, "", s); sub(/\/builtin$/, "", s)
        pl = "plugin-run/" s "/plugin"; nl = "plugin-run/" s "/plugin-no-time-limit"
        if (!(pl in t)) continue
        printf "  %-24s built-in %8.2f ms  plugin %6.2fx", s, t[ids[i]] / 1e6, t[pl] / t[ids[i]]
        if (nl in t) printf "  no-time-limit %6.2fx", t[nl] / t[ids[i]]
        printf "\n"
    }
    print ""
    print "## tokenizers (same prompts)"
    for (i = 0; i < n; i++) if (ids[i] ~ /^tokenize\//) {
        printf "  %-48s %8.2f ms %8.1f MB/s\n", ids[i], t[ids[i]] / 1e6, b[ids[i]] * 1e3 / t[ids[i]]
    }
}' "$results"
