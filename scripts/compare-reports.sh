#!/usr/bin/env bash
# Do two recap binaries write the same reports? Runs each over the same corpora and
# compares everything they write that is deterministic:
#
#   scripts/compare-reports.sh OLD_RECAP NEW_RECAP
#
# Both are paths to recap binaries (e.g. a release build of main and target/release/recap
# built here); neither has a default. The corpora: bench-data (as `recap run` reads it
# by default); the ptc-runner, tau2, SWE-agent and OpenHands corpora of ../shared/corpora,
# imported with OLD_RECAP as scripts/results.sh imports them (into a temporary
# directory; each also imported with NEW_RECAP, and the two corpora compared) and run
# with the two sample plugins as results.sh runs them; and 500 generated PTC-Lisp
# sessions (`gen-corpus --sessions 100 --turns 1..=30`, seeds 1–5, concatenated).
#
# Each run is `recap run CORPUS --format json --out DIR`; compared are its exit status,
# the JSON on stdout, and in DIR report.json, the CSVs, report.txt, report.md and the SVG
# charts. Left out as not deterministic: render times (`render_ns*` keys and columns,
# the `render p50`/`render p95` columns), the `non_deterministic` block, the provenance's
# `git_commit` and `command_line`; left out as new: the runs' `determinism_checked` and
# the text reports' `determinism:` note. Of report.html (its figures are report.json's,
# beside render times, the commit and the wall clock) only the calls of lowest retention
# are compared: their texts are the page's own.
#
# Prints one line per corpus and file; exits 1 when anything differs (a diff of the
# first difference is shown), 2 when something could not run.
set -euo pipefail
if (( $# != 2 )); then
    echo "usage: scripts/compare-reports.sh OLD_RECAP NEW_RECAP" >&2
    exit 2
fi
# The binaries as given, relative to where the script was started.
old="$(realpath -m -- "$1")"
new="$(realpath -m -- "$2")"
cd "$(dirname "$0")/.."
echo "==> building gen-corpus and the sample plugins (release)" >&2
cargo build --release --quiet -p recap-gen --example gen-corpus
cargo build --release --quiet -p recap-ptc-output-masking -p recap-aggressive
target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
gen="$target/release/examples/gen-corpus"
for bin in "$old" "$new" "$gen"; do
    [[ -x "$bin" ]] || { echo "error: $bin is not an executable" >&2; exit 2; }
done
plugins=(--plugin "$target/release/librecap_ptc_output_masking.so"
         --plugin "$target/release/librecap_aggressive.so")
shared=../shared/corpora
[[ -d $shared ]] || { echo "error: $shared is missing (the imported corpora come from it)" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# name, importer, directory under ../shared/corpora, extra run flags (as results.sh)
imports=(
    "ptc-runner ptc-runner ptc-runner-loop --tokenizer o200k_base --tokenizer deepseek_v3"
    "tau2-bench tau2 tau2-bench-results"
    "swe-agent swe-agent swe-agent-traj"
    "openhands openhands openhands-events"
)
# name, extra run flags, corpus files (after the flags, separated by --)
runs=("bench-data -- $(echo bench-data/*.jsonl)")
for spec in "${imports[@]}"; do
    read -r name kind dir extra <<<"$spec"
    echo "==> importing $name ($kind $shared/$dir)" >&2
    "$old" import "$kind" "$shared/$dir" -o "$tmp/$name.jsonl" --force > /dev/null 2>&1 \
        || { echo "error: $old could not import $shared/$dir" >&2; exit 2; }
    "$new" import "$kind" "$shared/$dir" -o "$tmp/$name.new.jsonl" --force > /dev/null 2>&1 \
        || { echo "error: $new could not import $shared/$dir" >&2; exit 2; }
    runs+=("$name ${plugins[*]} $extra -- $tmp/$name.jsonl")
done
echo "==> generating 500 sessions" >&2
: > "$tmp/generated.jsonl"
for seed in 1 2 3 4 5; do
    "$gen" --seed "$seed" --sessions 100 --turns 1..=30 --out "$tmp/chunk.jsonl" 2>/dev/null
    cat "$tmp/chunk.jsonl" >> "$tmp/generated.jsonl"
done
runs+=("generated -- $tmp/generated.jsonl")

status=0
for spec in "${imports[@]}"; do
    read -r name _ <<<"$spec"
    if cmp -s "$tmp/$name.jsonl" "$tmp/$name.new.jsonl"; then
        echo "same     $name: imported corpus"
    else
        echo "DIFFERS  $name: imported corpus (the runs below use the old binary's)"
        status=1
    fi
done

for spec in "${runs[@]}"; do
    name="${spec%% *}"
    rest="${spec#* }"
    flags="${rest%%-- *}"
    files="${rest#*-- }"
    for side in old new; do
        bin="$old"; [[ $side == new ]] && bin="$new"
        code=0
        # shellcheck disable=SC2086 # flags and files split on purpose
        "$bin" run $files $flags --format json --out "$tmp/$name.$side" \
            > "$tmp/$name.$side.json" 2> "$tmp/$name.$side.err" || code=$?
        if (( code > 1 )); then
            echo "error: $bin run over $name exited with $code:" >&2
            cat "$tmp/$name.$side.err" >&2
            exit 2
        fi
        echo "$code" > "$tmp/$name.$side.code"
    done
    python3 - "$tmp" "$name" <<'PY' || status=1
import csv, difflib, io, json, os, sys

tmp, name = sys.argv[1], sys.argv[2]
NEW_KEYS = {"determinism_checked"}

def scrub(v):
    if isinstance(v, dict):
        return {k: scrub(x) for k, x in v.items()
                if not k.startswith("render_ns") and k not in NEW_KEYS
                and k != "non_deterministic"}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v

def json_text(path):
    report = json.load(open(path))
    for key in ("git_commit", "command_line"):
        (report.get("provenance") or {}).pop(key, None)
    return json.dumps(scrub(report), indent=1, sort_keys=True).splitlines()

def csv_text(path):
    rows = list(csv.reader(open(path, newline="")))
    if not rows:
        return []
    keep = [i for i, h in enumerate(rows[0])
            if not h.startswith("render_ns") and h not in NEW_KEYS]
    out = io.StringIO()
    w = csv.writer(out)
    for r in rows:
        w.writerow([r[i] for i in keep if i < len(r)])
    return out.getvalue().splitlines()

def table_text(path):
    # Every table (one per session form) is cut before its render columns: from its
    # header line, which names "render p50", to the blank line that ends it.
    lines = open(path).read().splitlines()
    out, cut = [], None
    for line in lines:
        if line.lstrip("- ").startswith("determinism:"):
            continue
        if path.endswith(".md"):
            if line.startswith("|"):
                cells = line.split(" | ")
                line = " | ".join(cells[:-2])
        else:
            at = line.find("render p50")
            if at >= 0:
                cut = len(line[:at].rstrip())
            if line == "":
                cut = None
            elif cut is not None:
                line = line[:cut]
        out.append(line)
    return out

def compare(label, a, b):
    if a == b:
        print(f"same     {name}: {label}")
        return True
    print(f"DIFFERS  {name}: {label}")
    diff = list(difflib.unified_diff(a, b, "old", "new", lineterm="", n=2))
    print("\n".join(diff[:40]))
    return False

ok = compare("exit status", [open(f"{tmp}/{name}.old.code").read()],
             [open(f"{tmp}/{name}.new.code").read()])
ok &= compare("stdout (--format json)", json_text(f"{tmp}/{name}.old.json"),
              json_text(f"{tmp}/{name}.new.json"))
old_dir, new_dir = f"{tmp}/{name}.old", f"{tmp}/{name}.new"
files = sorted(set(os.listdir(old_dir)) | set(os.listdir(new_dir)))
for f in files:
    a, b = os.path.join(old_dir, f), os.path.join(new_dir, f)
    if f == "report.html":
        def lowest(path):
            page = open(path).read()
            start = page.find('<section id="lowest-retention">')
            return page[start:page.find("</section>", start)].splitlines()
        ok &= compare(f"--out {f} (lowest retention)", lowest(a), lowest(b))
        continue
    if not (os.path.exists(a) and os.path.exists(b)):
        ok &= compare(f"--out {f} (written by one side only)", [str(os.path.exists(a))],
                      [str(os.path.exists(b))])
        continue
    if f.endswith(".json"):
        ok &= compare(f"--out {f}", json_text(a), json_text(b))
    elif f.endswith(".csv"):
        ok &= compare(f"--out {f}", csv_text(a), csv_text(b))
    elif f.endswith((".txt", ".md")):
        ok &= compare(f"--out {f}", table_text(a), table_text(b))
    else:
        ok &= compare(f"--out {f}", open(a, "rb").read().splitlines(),
                      open(b, "rb").read().splitlines())
sys.exit(0 if ok else 1)
PY
done
if (( status == 0 )); then
    echo "==> every report identical in its deterministic part" >&2
else
    echo "==> reports differ (above)" >&2
fi
exit "$status"
