//! Faulty plugins through the built `recap run`: a plugin that panics, answers invalid
//! JSON or invalid UTF-8, answers more than the response cap, returns a strategy
//! error, breaks the invariants it declares, or never returns. Each fault is reported
//! (a render error with its kind, or counted violations), the run finishes, and the
//! other strategies' results are complete — on stdout and in `--out DIR`.
//!
//! The fixtures (`tests/reliability-fixtures/examples/`) pass recap's load-time checks
//! and self-test and misbehave from 3 completed turns on. They are built once per test
//! binary by a nested `cargo build` (`recap_testkit::plugins`).

use recap_testkit::cli::{Run, run};
use recap_testkit::faulty_runs::{
    TimedRun, assert_builtins_complete, beside_builtins, corpus, run_of, run_timed,
};
use recap_testkit::plugins::reliability_fixture as fixture;
use recap_testkit::recap_command;

use serde_json::Value as Json;
use std::path::Path;
use std::time::{Duration, Instant};

/// `recap run` of 3 sessions with full-history, single-user-coalesced and the plugin
/// strategy `strategy` from `lib`, as JSON, two workers, a 1 s plugin time limit; with
/// `out`, also `--out <tempdir>/report`.
fn run_with_plugin(lib: &Path, strategy: &str, out: bool) -> (TimedRun, tempfile::TempDir) {
    run_with_plugin_jobs(lib, strategy, out, 2)
}

fn run_with_plugin_jobs(
    lib: &Path,
    strategy: &str,
    out: bool,
    jobs: usize,
) -> (TimedRun, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 3);
    let mut cmd = recap_command!();
    beside_builtins(&mut cmd, &corpus, strategy, lib).args([
        "--format",
        "json",
        "--jobs",
        &jobs.to_string(),
        "--plugin-timeout",
        "1",
    ]);
    if out {
        cmd.arg("--out").arg(dir.path().join("report"));
    }
    (run_timed(&mut cmd), dir)
}

/// The plugin's run: every session reports render errors of `kind`, the first example
/// at call 3 with a message containing `expect`.
fn assert_render_errors(report: &Json, strategy: &str, kind: &str, expect: &str) {
    let run = run_of(report, strategy);
    let errors = &run["render_errors"];
    assert_eq!(errors["sessions"], 3, "{run}");
    assert!(errors["count"].as_u64().unwrap_or(0) >= 3, "{run}");
    let first = &errors["examples"][0];
    assert_eq!(first["kind"], kind, "{first}");
    assert_eq!(first["call"], 3, "calls 0..2 succeeded: {first}");
    let message = first["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(expect),
        "expected {expect:?} in {message:?}"
    );
    assert!(
        message.contains("plugin "),
        "the message names the plugin: {message:?}"
    );
    assert!(
        run["prompt_tokens_total"].as_u64() == Some(0),
        "incomplete sessions are not counted: {run}"
    );
}

fn check_fault(lib: &str, strategy: &str, kind: &str, expect: &str) -> TimedRun {
    check_fault_jobs(lib, strategy, kind, expect, 2)
}

fn check_fault_jobs(lib: &str, strategy: &str, kind: &str, expect: &str, jobs: usize) -> TimedRun {
    let (r, _dir) = run_with_plugin_jobs(&fixture(lib), strategy, false, jobs);
    assert_eq!(r.code, 1, "problems found → exit 1; stderr: {}", r.stderr);
    // The plugin's own panic hook may print its panic; recap's code must not panic.
    for own in ["panicked at src/", "panicked at crates/"] {
        assert!(
            !r.stderr.contains(own),
            "recap itself panicked: {}",
            r.stderr
        );
    }
    assert_builtins_complete(&r.report, 3);
    assert_render_errors(&r.report, strategy, kind, expect);
    r
}

#[test]
fn plugin_panic_is_a_render_error() {
    check_fault("rt_panic", "rt-panic", "panic", "panicked");
}

#[test]
fn plugin_error_response_is_a_render_error() {
    check_fault(
        "rt_error",
        "rt-error",
        "fixture_error",
        "this fixture refuses to render 3 turns",
    );
}

#[test]
fn plugin_invalid_json_is_a_render_error() {
    check_fault(
        "rt_invalid_json",
        "rt-invalid-json",
        "invalid_response",
        "EOF while parsing",
    );
}

#[test]
fn plugin_invalid_utf8_is_a_render_error() {
    check_fault(
        "rt_invalid_utf8",
        "rt-invalid-utf8",
        "invalid_response",
        "invalid unicode",
    );
}

#[test]
fn plugin_gigantic_response_is_refused_unread() {
    check_fault(
        "rt_gigantic",
        "rt-gigantic",
        "invalid_response",
        "exceeds the 268435456-byte limit",
    );
}

#[test]
fn plugin_that_never_returns_times_out_and_is_disabled() {
    let r = check_fault(
        "rt_hang",
        "rt-hang",
        "timeout",
        "did not return within the 1s time limit",
    );
    let run = run_of(&r.report, "rt-hang");
    // Call 3 of every session fails; after the first time-out the plugin is disabled,
    // so later calls fail at once instead of waiting the limit each.
    let examples = run["render_errors"]["examples"]
        .as_array()
        .expect("examples");
    assert!(
        examples.iter().any(|e| e["message"]
            .as_str()
            .unwrap_or("")
            .contains("the plugin is disabled")),
        "{run}"
    );
    assert!(
        r.elapsed < Duration::from_secs(30),
        "two workers wait at most about 1 s each, not once per call: {:?}",
        r.elapsed
    );
}

/// With one job the plugin's calls run on the only worker (under the limit, without a
/// helper thread), so the hung call leaves that worker stuck: the run goes on with a new
/// worker, which replays the session (calls 0..2 rendered again, call 3 the time-out),
/// and ends without waiting for the stuck one.
#[test]
fn plugin_that_never_returns_on_the_only_worker_is_left_behind() {
    let r = check_fault_jobs(
        "rt_hang",
        "rt-hang",
        "timeout",
        "did not return within the 1s time limit",
        1,
    );
    let run = run_of(&r.report, "rt-hang");
    let errors = &run["render_errors"];
    // One call overran (session 1's call 3); every later call of the plugin is refused.
    assert_eq!(errors["by_kind"]["timeout"], errors["count"], "{run}");
    let examples = errors["examples"].as_array().expect("examples");
    let overran = examples
        .iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .unwrap_or("")
                .contains("it was abandoned")
        })
        .count();
    assert_eq!(overran, 1, "{run}");
    assert!(
        r.elapsed < Duration::from_secs(30),
        "one wait of about 1 s: {:?}",
        r.elapsed
    );
}

#[test]
fn plugin_that_hangs_at_load_fails_its_self_test_with_a_time_out() {
    let lib = fixture("rt_hang_always");
    let start = Instant::now();
    let Run {
        code,
        stdout,
        stderr,
    } = run(recap_command!()
        .args(["plugins", "check", "--plugin-timeout", "0.5"])
        .arg(&lib));
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("self-test failed"), "{all}");
    assert!(
        all.contains("did not return within the 500ms time limit"),
        "{all}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn plugin_breaking_invariants_has_them_counted() {
    let (r, _dir) = run_with_plugin(
        &fixture("rt_breaks_invariants"),
        "rt-breaks-invariants",
        false,
    );
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert_builtins_complete(&r.report, 3);
    let run = run_of(&r.report, "rt-breaks-invariants");
    assert_eq!(run["render_errors"]["count"], 0, "{run}");
    let by = &run["invariant_violations"]["by_invariant"];
    // Per session: call 3 two USERs in a row, call 4 a different text on each render,
    // call 5 no mission.
    assert_eq!(by["role-alternation"], 3, "{run}");
    assert_eq!(by["deterministic"], 3, "{run}");
    assert_eq!(by["mission-verbatim"], 3, "{run}");
    assert!(
        run["invariant_violations"]["count"].as_u64() >= Some(9),
        "{run}"
    );
}

/// The two renders of recap's determinism check go through two plugin-side sessions
/// that share one copy of the turns; each still has its own strategy state, so a
/// render that depends on that state is caught.
#[test]
fn plugin_rendering_from_its_session_state_is_caught_by_the_determinism_check() {
    let (r, _dir) = run_with_plugin(
        &fixture("rt_state_per_session"),
        "rt-state-per-session",
        false,
    );
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert_builtins_complete(&r.report, 3);
    let run = run_of(&r.report, "rt-state-per-session");
    assert_eq!(run["render_errors"]["count"], 0, "{run}");
    let violations = &run["invariant_violations"];
    // Every call from 3 completed turns on, in each of the 3 sessions.
    assert!(
        violations["by_invariant"]["deterministic"].as_u64() >= Some(3),
        "{run}"
    );
    assert_eq!(
        violations["count"], violations["by_invariant"]["deterministic"],
        "only the determinism check fails: {run}"
    );
}

#[test]
fn faulty_plugin_run_still_writes_every_report_file() {
    let (r, dir) = run_with_plugin(&fixture("rt_invalid_json"), "rt-invalid-json", true);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    let out = dir.path().join("report");
    for file in ["report.json", "report.csv", "report.md"] {
        assert!(
            out.join(file).is_file(),
            "{file} missing; stderr: {}",
            r.stderr
        );
    }
    let written: Json =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("read"))
            .expect("report.json is complete JSON");
    assert_builtins_complete(&written, 3);
    assert_render_errors(
        &written,
        "rt-invalid-json",
        "invalid_response",
        "EOF while parsing",
    );
    let csv = std::fs::read_to_string(out.join("report.csv")).expect("read csv");
    for name in ["full-history", "single-user-coalesced", "rt-invalid-json"] {
        assert!(csv.contains(name), "{name} missing from the CSV:\n{csv}");
    }
}

#[test]
fn a_session_goes_on_after_a_failed_call_and_each_panic_is_told_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 3);
    let out = dir.path().join("report");
    let r = run(recap_command!()
        .arg("run")
        .arg(&corpus)
        .args(["--strategy", "full-history", "--strategy", "rt-panic-once"])
        .arg("--plugin")
        .arg(fixture("rt_panic_once"))
        .args(["--format", "csv", "--jobs", "2", "--dump-prompts", "--out"])
        .arg(&out)
        // Panics would each print a backtrace under this, were they printed.
        .env("RUST_BACKTRACE", "1"));
    assert_eq!(
        r.code, 1,
        "render errors are problems; stderr: {}",
        r.stderr
    );

    // Call 3 of each session failed; calls 4 and 5 after it were rendered.
    let report: Json =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("read"))
            .expect("report.json");
    let run = run_of(&report, "rt-panic-once");
    assert_eq!(
        run["render_errors"]["count"], 3,
        "one failure per session: {run}"
    );
    assert_eq!(run["render_errors"]["sessions"], 3, "{run}");
    let dumps = std::fs::read_to_string(out.join("prompts/rt-panic-once.jsonl")).expect("dump");
    let mut rendered: Vec<(String, u64)> = dumps
        .lines()
        .map(|l| {
            let d: Json = serde_json::from_str(l).expect("dump line");
            (
                d["session"].as_str().expect("session").to_string(),
                d["call"].as_u64().expect("call"),
            )
        })
        .collect();
    rendered.sort();
    let expected: Vec<(String, u64)> = (0..3)
        .flat_map(|s| [0, 1, 2, 4, 5].map(|k| (format!("s{s}"), k)))
        .collect();
    assert_eq!(rendered, expected);

    // On stderr: no panic message or backtrace per call, one summary line, saying where
    // the plugin panicked.
    assert!(!r.stderr.contains("thread '"), "{}", r.stderr);
    assert!(!r.stderr.contains("stack backtrace"), "{}", r.stderr);
    assert_eq!(
        r.stderr.lines().count(),
        2,
        "where the report went, and the summary: {}",
        r.stderr
    );
    let summary: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("rt-panic-once: "))
        .collect();
    assert_eq!(summary.len(), 1, "{}", r.stderr);
    assert!(
        summary[0].starts_with(
            "rt-panic-once: 3 calls failed to render in 3 of 3 sessions (panic: 3); first: "
        ) && summary[0].contains("the strategy panicked at examples/rt_panic_once.rs:")
            && summary[0].contains("rt-panic-once fails at 3 turns"),
        "{}",
        summary[0]
    );
}
