#!/usr/bin/env bash
# The engine-speed ratios of this tree against another revision, measured so that this
# machine's drift cannot decide the comparison: `examples/engine-cost.rs` built from
# both, and the two binaries run in alternation over the same corpora.
#
#   scripts/engine-cost-vs.sh REV [RUNS] [CORPUS ...]
#
# REV: any revision that has examples/engine-cost.rs (built in a temporary worktree,
# its target directory kept under <target>/engine-cost-vs/ so a second comparison with
# the same REV does not build it again). RUNS (default 6): alternations; each run is
# `engine-cost --rounds 5` over the corpora (default: bench-data/generated.jsonl and
# bench-data/chat-generated.jsonl, this tree's files for both sides). Prints every run's
# naive / engine and engine / floor, then per side and corpus the median of the runs'
# medians.
#
# One engine-cost run already takes its ratios within rounds, but on a shared VM whole
# runs drift by 10–20 % (the same binary's engine has measured 54–75 ms on one corpus
# within minutes); alternating the two revisions puts both under the same drift.
set -euo pipefail
cd "$(dirname "$0")/.."

rev="${1:?usage: $0 REV [RUNS] [CORPUS ...]}"
runs="${2:-6}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "error: RUNS must be a positive number, got '$runs'" >&2; exit 2; }
shift $(( $# >= 2 ? 2 : 1 ))
corpora=("$@")
if [[ ${#corpora[@]} -eq 0 ]]; then
    corpora=(bench-data/generated.jsonl bench-data/chat-generated.jsonl)
fi
for c in "${corpora[@]}"; do
    [[ -f "$c" ]] || { echo "error: no corpus at $c" >&2; exit 2; }
done
abs=()
for c in "${corpora[@]}"; do abs+=("$(cd "$(dirname "$c")" && pwd)/$(basename "$c")"); done

commit="$(git rev-parse --verify --quiet "$rev^{commit}")" \
    || { echo "error: no revision $rev in this repository" >&2; exit 2; }
git cat-file -e "$commit:examples/engine-cost.rs" 2>/dev/null \
    || { echo "error: $rev has no examples/engine-cost.rs" >&2; exit 2; }
target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"

tmp="$(mktemp -d)"
cleanup() {
    git worktree remove --force "$tmp/tree" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

echo "==> building engine-cost here and at ${commit:0:10}" >&2
cargo build --quiet --profile bench --example engine-cost
here="$target/release/examples/engine-cost"
git worktree add --quiet --detach "$tmp/tree" "$commit"
there_target="$target/engine-cost-vs/$commit"
(cd "$tmp/tree" && CARGO_TARGET_DIR="$there_target" cargo build --quiet --profile bench --example engine-cost)
there="$there_target/release/examples/engine-cost"

# One engine-cost run: "side corpus naive/engine engine/floor" per corpus.
run() {
    local side=$1 bin=$2
    "$bin" --rounds 5 "${abs[@]}" 2>/dev/null \
        | awk -v side="$side" 'NR > 1 && NF >= 9 { print side, $1, $5, $9 }'
}

results="$tmp/results"
: > "$results"
for i in $(seq 1 "$runs"); do
    run "${commit:0:10}" "$there" | tee -a "$results"
    run here "$here" | tee -a "$results"
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
printf '%-12s %-28s %14s %14s\n' side corpus "naive/engine" "engine/floor"
for side in "${commit:0:10}" here; do
    for c in "${abs[@]}"; do
        name="$(basename "$c")"
        ne="$(awk -v s="$side" -v c="$name" '$1 == s && $2 == c { print $3 }' "$results" | median)"
        ef="$(awk -v s="$side" -v c="$name" '$1 == s && $2 == c { print $4 }' "$results" | median)"
        printf '%-12s %-28s %14s %14s\n' "$side" "$name" "$ne" "$ef"
    done
done
echo "(medians of $runs alternating runs; load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs)"
