#!/usr/bin/env bash
# Regenerates docs/results/: every real corpus of ../shared/corpora imported and replayed
# through every built-in strategy (and, for the PTC-Lisp corpora, the two sample
# plugins). Run from the workspace root with ../shared beside it:
#   bash scripts/results.sh
# Render times vary from run to run; every other number is deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared/corpora
[[ -d $shared ]] || { echo "$shared is missing" >&2; exit 2; }

cargo build --release -p recap -p recap-ptc-output-masking -p recap-aggressive
R=target/release/recap
PLUGINS=(--plugin target/release/librecap_ptc_output_masking.so --plugin target/release/librecap_aggressive.so)
work=target/results
rm -rf "$work" && mkdir -p "$work"

# name, importer, corpus directory, extra run flags
runs=(
  "ptc-runner ptc-runner ptc-runner-loop --tokenizer o200k_base --tokenizer deepseek_v3"
  "smolagents smolagents smolagents-code"
  "tau2-bench tau2 tau2-bench-results"
  "swe-agent swe-agent swe-agent-traj"
  "openhands openhands openhands-events"
  "claude-code-attio claude-code claude-code-attio-mcp-server"
  "claude-code-snapshots claude-code claude-code-reliability-snapshots"
)
for spec in "${runs[@]}"; do
  read -r name kind dir extra <<<"$spec"
  echo "== $name: recap import $kind $shared/$dir"
  "$R" import "$kind" "$shared/$dir" -o "$work/$name.jsonl" --force 2>&1 | head -1
  rm -rf "docs/results/$name"
  # shellcheck disable=SC2086 # extra flags split on purpose
  "$R" run "$work/$name.jsonl" "${PLUGINS[@]}" $extra --out "docs/results/$name" --force \
    || [[ $? -eq 1 ]]
  # Per-session and per-call detail runs to megabytes; the summaries are committed.
  rm -f "docs/results/$name/report.json" "docs/results/$name/calls.csv" \
        "docs/results/$name/sessions.csv" "docs/results/$name/report.html"
done

# docs/results.md quotes each corpus's table: replace the fenced block under each
# corpus's heading with its report.txt (the n/a notes left out: the table shows them).
update_block() { # heading-prefix, results dir
  awk -v head="$1" -v file="docs/results/$2/report.txt" '
    index($0, head) == 1 { pending = 1 }
    pending && $0 == "```" && !inside {
      print; while ((getline l < file) > 0) if (l !~ /^n\/a: /) print l
      close(file); inside = 1; next
    }
    inside { if ($0 == "```") { print; inside = 0; pending = 0 } ; next }
    { print }
  ' docs/results.md > docs/results.md.tmp && mv docs/results.md.tmp docs/results.md
}
update_block "## ptc-runner (" ptc-runner
update_block "## smolagents (" smolagents
update_block "### tau2-bench (" tau2-bench
update_block "### SWE-agent (" swe-agent
update_block "### OpenHands (" openhands
update_block "### Claude Code, attio-mcp-server (" claude-code-attio
update_block "### Claude Code, reliability snapshots (" claude-code-snapshots
echo "docs/results.md: tables updated from docs/results/*/report.txt"
