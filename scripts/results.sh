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
  "inspect inspect inspect-eval-logs"
  "atif atif atif-trajectories"
  "adp adp adp-trajectories"
  "openhands-sdk openhands-sdk openhands-sdk-conversations"
)
for spec in "${runs[@]}"; do
  read -r name kind dir extra <<<"$spec"
  echo "== $name: recap import $kind $shared/$dir"
  # Exit 1: some input skipped (the same Inspect run in two containers, an OpenHands
  # excerpt without its task); the summary says what.
  "$R" import "$kind" "$shared/$dir" -o "$work/$name.jsonl" --force >"$work/$name.import.txt" 2>&1 \
    || [[ $? -eq 1 ]]
  head -1 "$work/$name.import.txt"
  rm -rf "docs/results/$name"
  # shellcheck disable=SC2086 # extra flags split on purpose
  "$R" run "$work/$name.jsonl" "${PLUGINS[@]}" $extra --out "docs/results/$name" --force \
    || [[ $? -eq 1 ]]
  # Per-session and per-call detail runs to megabytes; the summaries are committed.
  rm -f "docs/results/$name/report.json" "docs/results/$name/calls.csv" \
        "docs/results/$name/sessions.csv" "docs/results/$name/report.html"
done

# observation-masking's polling against the prompt cache: SWE-agent's window (5) and
# recap's default (10), each with polling 1, 5 and 10.
for name in swe-agent tau2-bench; do
  echo "== polling: $name"
  "$R" run "$work/$name.jsonl" --strategy full-history \
    --sweep 'observation-masking:window=5,polling=1|5|10' \
    --sweep 'observation-masking:polling=1|5|10' \
    --out "$work/polling-$name" --force >/dev/null || [[ $? -eq 1 ]]
done

# docs/results.md quotes each corpus's table: replace the fenced block under each
# corpus's heading with its report.txt (the n/a notes left out: the table shows them).
update_block() { # heading-prefix, results dir (or a report.txt)
  local file="docs/results/$2/report.txt"
  [[ -f $2 ]] && file=$2
  awk -v head="$1" -v file="$file" '
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
update_block "### Inspect AI logs (" inspect
update_block "### ATIF trajectories (" atif
update_block "### ADP trajectories (" adp
update_block "### OpenHands SDK conversations (" openhands-sdk
update_block "### observation-masking's polling, SWE-agent (" "$work/polling-swe-agent/report.txt"
update_block "### observation-masking's polling, tau2-bench (" "$work/polling-tau2-bench/report.txt"
echo "docs/results.md: tables updated from docs/results/*/report.txt"
