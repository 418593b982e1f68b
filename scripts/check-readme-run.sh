#!/usr/bin/env bash
# The README's "What `recap run` prints" block must be what `recap run` prints on
# bench-data. Runs the real command (`cargo run --release --quiet -- run`, from the
# workspace root) and compares its output with the README's block, render-time columns
# aside (they are measured, so they vary from run to run); everything else is
# deterministic. Exit 1 with a diff when they differ.
#
#   scripts/check-readme-run.sh            # check (run by .ci/run)
#   scripts/check-readme-run.sh --update   # rewrite the README's block with this run's output
set -euo pipefail
cd "$(dirname "$0")/.."

update=false
case "${1:-}" in
    --update) update=true ;;
    "") ;;
    *) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac

heading='## What `recap run` prints'
grep -qxF "$heading" README.md || { echo "error: README.md has no line '$heading'" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

status=0
cargo run --release --quiet -- run > "$tmp/run.txt" 2> "$tmp/run.err" || status=$?
# 0: clean; 1: ran, with problems the output reports. Anything else is a failure to run.
if [[ $status -gt 1 ]]; then
    cat "$tmp/run.err" >&2
    echo "error: recap run exited with $status" >&2
    exit 2
fi

# The README's block: the first fenced block after the heading.
awk -v h="$heading" '
    $0 == h { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
' README.md > "$tmp/readme.txt"
[[ -s "$tmp/readme.txt" ]] || { echo "error: no fenced block after '$heading' in README.md" >&2; exit 2; }

# Cuts each table's lines (from its header to the first blank line) where the
# render-time columns start: the columns are aligned, so the end of the column before
# "render p50" in the header is the same in every row. Lines outside the tables (the
# headings and notes) are compared whole; a table without render columns (a narrow
# one) is compared whole too.
without_render_times() {
    awk '
        index($0, "render p50") > 0 {
            at = index($0, "render p50")
            cut = at - 1
            while (cut > 0 && substr($0, cut, 1) == " ") cut--
            in_table = 1
        }
        in_table && $0 == "" { in_table = 0 }
        { print (in_table ? substr($0, 1, cut) : $0) }
    ' "$1"
}

if $update; then
    awk -v h="$heading" -v run="$tmp/run.txt" '
        $0 == h { found = 1 }
        found && !done && /^```/ {
            if (!inside) { inside = 1; print; while ((getline line < run) > 0) print line; next }
            inside = 0; done = 1
        }
        !inside { print }
    ' README.md > "$tmp/README.md"
    cp "$tmp/README.md" README.md
    echo "README.md: the recap run block is this run's output"
    exit 0
fi

without_render_times "$tmp/readme.txt" > "$tmp/want.txt"
without_render_times "$tmp/run.txt" > "$tmp/got.txt"
if ! diff -u --label "README.md (What recap run prints)" --label "recap run (now)" \
        "$tmp/want.txt" "$tmp/got.txt"; then
    echo "error: README.md's recap run block differs from what recap run prints (render times aside);" >&2
    echo "       scripts/check-readme-run.sh --update rewrites it" >&2
    exit 1
fi
echo "README.md's recap run block matches recap run (render-time columns not compared)"
