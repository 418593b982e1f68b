//! What the tests of faulty plugins through the built `recap run` share (in-process in
//! `tests/reliability_plugins.rs`, in worker processes in `tests/plugin_isolation.rs`):
//! the corpus the fixtures misbehave on, a run with its duration, and the checks that
//! the built-ins beside the plugin came out complete.

use crate::cli::run;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Turns per session of [`corpus`]; the reliability fixtures misbehave from call 3 on.
pub const TURNS: u64 = 6;

/// `sessions` PTC-Lisp sessions of [`TURNS`] turns (turn 4 failed), `max_turns` 8,
/// written to `dir/c.jsonl`.
pub fn corpus(dir: &Path, sessions: usize) -> PathBuf {
    let mut text = String::new();
    for s in 0..sessions {
        let turns: Vec<Json> = (1..=TURNS)
            .map(|n| {
                let mut t = serde_json::json!({
                    "number": n,
                    "program": format!("(def x{n} {n})"),
                    "success": n != 4,
                    "prints": [format!("printed {n}")],
                    "definitions": [{"name": format!("x{n}"), "kind": "def", "value": n}],
                });
                if n == 4 {
                    t["error"] = serde_json::json!({"message": "boom"});
                }
                t
            })
            .collect();
        let session = serde_json::json!({
            "id": format!("s{s}"), "mission": "Find it", "system_prompt": "sys",
            "max_turns": 8, "turns": turns,
        });
        text.push_str(&session.to_string());
        text.push('\n');
    }
    let path = dir.join("c.jsonl");
    std::fs::write(&path, text).expect("write corpus");
    path
}

/// Makes `cmd` (a `recap` command) the run every faulty-plugin test starts from: `run
/// CORPUS` with full-history, single-user-coalesced and `strategy` from the plugin
/// `lib`; the test adds its own flags.
pub fn beside_builtins<'c>(
    cmd: &'c mut Command,
    corpus: &Path,
    strategy: &str,
    lib: &Path,
) -> &'c mut Command {
    cmd.arg("run")
        .arg(corpus)
        .args([
            "--strategy",
            "full-history",
            "--strategy",
            "single-user-coalesced",
        ])
        .args(["--strategy", strategy, "--plugin"])
        .arg(lib)
}

/// A `--format json` run of `recap`: its exit code, report, stderr and how long it took.
pub struct TimedRun {
    pub code: i32,
    pub report: Json,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `cmd` (a `recap run … --format json`) to its end, timed.
pub fn run_timed(cmd: &mut Command) -> TimedRun {
    let start = Instant::now();
    let r = run(cmd);
    let elapsed = start.elapsed();
    TimedRun {
        code: r.code,
        report: r.json(),
        stderr: r.stderr,
        elapsed,
    }
}

/// The report's run of `strategy` (the first, for its first tokenizer).
pub fn run_of<'a>(report: &'a Json, strategy: &str) -> &'a Json {
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["strategy"] == strategy)
        .unwrap_or_else(|| panic!("no run of {strategy} in {report}"))
}

/// The figures of each run of a JSON report that do not depend on time — its
/// sessions, calls, tokens, retention, violations and errors — by strategy, in report
/// order: what two runs that should agree are compared on.
pub fn timeless_figures(report: &Json) -> Vec<(String, Json)> {
    let keys = [
        "sessions",
        "not_applicable",
        "calls",
        "prompt_tokens_total",
        "cached_tokens",
        "retention",
        "invariant_violations",
        "render_errors",
    ];
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let kept: serde_json::Map<String, Json> = keys
                .iter()
                .map(|k| (k.to_string(), r[*k].clone()))
                .collect();
            (
                r["strategy"].as_str().unwrap_or_default().to_string(),
                Json::Object(kept),
            )
        })
        .collect()
}

/// full-history and single-user-coalesced ran completely over the `sessions` sessions
/// of [`corpus`] next to the faulty plugin.
pub fn assert_builtins_complete(report: &Json, sessions: u64) {
    for name in ["full-history", "single-user-coalesced"] {
        let run = run_of(report, name);
        assert_eq!(run["sessions"], sessions, "{name}: {run}");
        assert_eq!(run["calls"], sessions * TURNS, "{name}: {run}");
        assert!(
            run["prompt_tokens_total"].as_u64().unwrap_or(0) > 0,
            "{name}: {run}"
        );
        assert_eq!(run["render_errors"]["count"], 0, "{name}: {run}");
        assert_eq!(run["invariant_violations"]["count"], 0, "{name}: {run}");
    }
}
