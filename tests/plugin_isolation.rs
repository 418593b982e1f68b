//! `--plugin-isolation process` through the built `recap`: plugins that abort, crash,
//! exit mid-call, write garbage on the worker's pipe, never answer, or run out of
//! memory. Each fault is one render error of the call it happened in, naming the
//! plugin, the session and the call; the session's later calls are not sent, the next
//! session gets a new worker, the built-ins' results are complete, and recap lives.
//! Those fixtures would take recap down in-process: they are only loaded isolated.
//!
//! The fixtures (`tests/reliability-fixtures/examples/`) pass the load-time checks and
//! self-test and misbehave from 3 completed turns on.

use recap_testkit::cli::{Run, run};
use recap_testkit::faulty_runs::{
    TimedRun, assert_builtins_complete, beside_builtins, corpus, run_of, run_timed,
    timeless_figures,
};
use recap_testkit::plugins::{reliability_fixture as fixture, sample};
use recap_testkit::recap_command;

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `recap run` of `sessions` sessions with full-history, single-user-coalesced and
/// `strategy` from `lib` in worker processes, as JSON, with `extra` flags.
fn run_isolated(lib: &Path, strategy: &str, sessions: usize, extra: &[&str]) -> TimedRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), sessions);
    let mut cmd = recap_command!();
    beside_builtins(&mut cmd, &corpus, strategy, lib)
        .args(["--plugin-isolation", "process", "--format", "json"])
        .args(extra);
    run_timed(&mut cmd)
}

/// A worker fault: exit 1, the built-ins complete, and in each of the 3 sessions one
/// error of `kind` at call 3 naming the plugin, the session and the call and saying
/// `cause`, then calls 4 and 5 not sent. Returns the first message.
fn check_worker_fault(
    lib_name: &str,
    strategy: &str,
    kind: &str,
    cause: &str,
    extra: &[&str],
) -> String {
    let lib = fixture(lib_name);
    let r = run_isolated(
        &lib,
        strategy,
        3,
        &["--jobs", "2"]
            .iter()
            .chain(extra)
            .copied()
            .collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 1, "problems found → exit 1; stderr: {}", r.stderr);
    assert!(
        !r.stderr.contains("panicked at"),
        "recap itself panicked: {}",
        r.stderr
    );
    assert_builtins_complete(&r.report, 3);
    let run = run_of(&r.report, strategy);
    let errors = &run["render_errors"];
    assert_eq!(errors["sessions"], 3, "{run}");
    assert_eq!(errors["count"], 9, "calls 3, 4, 5 of each session: {run}");
    let examples = errors["examples"].as_array().expect("examples");
    let first = &examples[0];
    assert_eq!(
        (&first["kind"], &first["call"]),
        (&Json::from(kind), &Json::from(3)),
        "{first}"
    );
    let message = first["message"].as_str().unwrap_or_default().to_string();
    let session = first["session"].as_str().unwrap_or_default();
    for needle in [
        format!(
            "plugin {}",
            lib.canonicalize().expect("canonical").display()
        ),
        format!("in session \"{session}\" at call 3"),
        cause.to_string(),
        "the next session gets a new worker".to_string(),
    ] {
        assert!(
            message.contains(&needle),
            "{needle:?} missing from {message:?}"
        );
    }
    let later: Vec<&Json> = examples
        .iter()
        .filter(|e| e["session"] == session && e["call"] != 3)
        .collect();
    assert!(
        later.iter().all(|e| e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the worker process failed at call 3 of this session")),
        "{later:?}"
    );
    // One line for the strategy on stderr, nothing from the dead workers.
    assert!(
        r.stderr.contains(&format!(
            "{strategy}: 9 calls failed to render in 3 of 3 sessions"
        )),
        "{}",
        r.stderr
    );
    message
}

#[test]
fn a_plugin_that_aborts_is_an_error_of_the_call_it_aborted_in() {
    check_worker_fault(
        "rt_abort",
        "rt-abort",
        "crash",
        "killed by signal 6 (SIGABRT",
        &[],
    );
}

#[test]
fn a_plugin_that_segfaults_is_an_error_of_the_call_it_crashed_in() {
    check_worker_fault(
        "rt_segfault",
        "rt-segfault",
        "crash",
        "killed by signal 11 (SIGSEGV",
        &[],
    );
}

#[test]
fn a_plugin_that_exits_mid_call_is_an_error_of_that_call() {
    check_worker_fault("rt_exit", "rt-exit", "crash", "exited with status 0", &[]);
}

#[test]
fn garbage_on_the_workers_pipe_is_an_error_and_the_worker_is_replaced() {
    check_worker_fault(
        "rt_garbage_pipe",
        "rt-garbage-pipe",
        "crash",
        "wrote bytes that are not a frame of the worker protocol",
        &[],
    );
}

#[test]
fn a_plugin_that_never_answers_is_killed_at_the_time_limit_in_every_session() {
    let start = Instant::now();
    let message = check_worker_fault(
        "rt_hang",
        "rt-hang",
        "timeout",
        "did not return within the 1s time limit",
        &["--plugin-timeout", "1"],
    );
    assert!(
        message.contains("the worker process was killed"),
        "{message}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "each session waits the limit once: {:?}",
        start.elapsed()
    );
}

#[test]
fn a_plugin_past_its_memory_limit_fails_the_call_that_allocated() {
    let message = check_worker_fault(
        "rt_oom",
        "rt-oom",
        "crash",
        "its memory limit is 256 MiB",
        &["--plugin-memory-limit", "256M"],
    );
    assert!(message.contains("SIGABRT"), "{message}");
    assert!(
        message.contains("memory allocation of"),
        "the plugin's last words: {message}"
    );
}

#[test]
fn the_restart_limit_disables_the_plugin_with_a_clear_message() {
    // No restart allowed: the first failure disables the plugin. One job: the sessions
    // run in order, so which session meets the limit is fixed.
    let r = run_isolated(
        &fixture("rt_abort"),
        "rt-abort",
        2,
        &["--jobs", "1", "--plugin-restarts", "0"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_builtins_complete(&r.report, 2);
    let run = run_of(&r.report, "rt-abort");
    assert_eq!(run["render_errors"]["count"], 3 + 6, "{run}");
    let examples = run["render_errors"]["examples"]
        .as_array()
        .expect("examples");
    let message = |session: &str, call: u64| -> String {
        examples
            .iter()
            .find(|e| e["session"] == session && e["call"] == call)
            .and_then(|e| e["message"].as_str())
            .unwrap_or_else(|| panic!("no error at {session} call {call}: {run}"))
            .to_string()
    };
    let first = message("s0", 3);
    assert!(
        first.contains("SIGABRT")
            && first
                .contains("that is 1 failure, past the restart limit of 0: the plugin is disabled"),
        "{first}"
    );
    let next = message("s1", 0);
    assert!(
        next.contains("the plugin is disabled in session \"s1\" at call 0")
            && next.contains("failed 1 time, and the restart limit is 0"),
        "{next}"
    );
}

#[test]
fn todays_faults_read_the_same_in_a_worker() {
    for (lib, strategy, kind, expect) in [
        ("rt_panic", "rt-panic", "panic", "panicked"),
        (
            "rt_invalid_json",
            "rt-invalid-json",
            "invalid_response",
            "EOF while parsing",
        ),
        (
            "rt_gigantic",
            "rt-gigantic",
            "invalid_response",
            "exceeds the 268435456-byte limit",
        ),
        (
            "rt_error",
            "rt-error",
            "fixture_error",
            "this fixture refuses to render 3 turns",
        ),
    ] {
        let r = run_isolated(&fixture(lib), strategy, 3, &["--jobs", "2"]);
        assert_eq!(r.code, 1, "{lib}: {}", r.stderr);
        assert_builtins_complete(&r.report, 3);
        let run = run_of(&r.report, strategy);
        let first = &run["render_errors"]["examples"][0];
        assert_eq!(first["kind"], kind, "{lib}: {first}");
        assert_eq!(first["call"], 3, "{lib}: {first}");
        assert!(
            first["message"]
                .as_str()
                .unwrap_or_default()
                .contains(expect),
            "{lib}: {first}"
        );
    }
}

#[test]
fn output_a_plugin_prints_does_not_disturb_its_worker() {
    let r = run_isolated(&fixture("rt_prints"), "rt-prints", 3, &["--jobs", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = run_of(&r.report, "rt-prints");
    assert_eq!(run["sessions"], 3, "{run}");
    assert_eq!(run["render_errors"]["count"], 0, "{run}");
    assert!(
        !r.stderr.contains("a plugin that talks"),
        "the worker's output is not recap's: {}",
        r.stderr
    );
    assert!(r.elapsed < Duration::from_secs(60));
}

#[test]
fn an_isolated_plugin_gives_the_same_report_as_in_process() {
    let corpora: Vec<PathBuf> = ["chat-handwritten.jsonl", "handwritten.jsonl"]
        .iter()
        .map(|f| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("bench-data")
                .join(f)
        })
        .collect();
    let lib = sample("recap_aggressive");
    let report = |isolation: &str| {
        let r = run(recap_command!()
            .arg("run")
            .args(&corpora)
            .args([
                "--strategy",
                "aggressive",
                "--strategy",
                "aggressive:turns=3,max_tokens=2000",
            ])
            .arg("--plugin")
            .arg(&lib)
            .args(["--plugin-isolation", isolation, "--format", "json"]));
        assert_eq!(r.code, 0, "{isolation}: {}", r.stderr);
        timeless_figures(&r.json())
    };
    let in_process = report("in-process");
    assert!(in_process.len() >= 3, "{in_process:?}");
    assert_eq!(report("process"), in_process);
}

#[test]
fn plugins_check_loads_in_a_worker_and_reports_load_errors_alike() {
    let Run {
        code,
        stdout,
        stderr,
    } = run(recap_command!()
        .args(["plugins", "check", "--plugin-isolation", "process"])
        .arg(sample("recap_aggressive")));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("ok    aggressive"), "{stdout}");
    assert!(stdout.contains("self-test: passed"), "{stdout}");

    let bad = recap_testkit::plugins::fixture("fx_bad_magic");
    let outputs: Vec<String> = ["in-process", "process"]
        .iter()
        .map(|isolation| {
            let r = run(recap_command!()
                .args(["plugins", "check", "--plugin-isolation", isolation])
                .arg(&bad));
            assert_eq!(r.code, 1, "{isolation}: {}{}", r.stdout, r.stderr);
            r.stdout
        })
        .collect();
    assert!(
        outputs[0].contains("invalid descriptor: bad magic number"),
        "{}",
        outputs[0]
    );
    assert_eq!(outputs[0], outputs[1], "the same words in a worker");

    let r = run(recap_command!()
        .args(["plugins", "check", "--plugin-memory-limit", "512M"])
        .arg(sample("recap_aggressive")));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--plugin-memory-limit needs --plugin-isolation process"),
        "{}",
        r.stderr
    );
}

/// An experiment file isolates one plugin: the third-party library that aborts runs in
/// worker processes (its calls fail, recap lives), the trusted one beside it in-process.
#[test]
fn an_experiment_file_isolates_one_plugin_and_not_the_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 2);
    let file = dir.path().join("experiment.toml");
    let toml = |s: &Path| s.display().to_string().replace('\\', "/");
    std::fs::write(
        &file,
        format!(
            "corpora = [\"{}\"]\nstrategies = [\"full-history\", \"single-user-coalesced\", \"rt-abort\", \"aggressive\"]\nformat = \"json\"\n\n[[plugins]]\npath = \"{}\"\nisolation = \"process\"\n\n[[plugins]]\npath = \"{}\"\n",
            toml(&corpus),
            toml(&fixture("rt_abort")),
            toml(&sample("recap_aggressive")),
        ),
    )
    .expect("write the experiment file");
    let r = run_timed(recap_command!().arg("run").arg("--config").arg(&file));
    assert_eq!(r.code, 1, "problems found → exit 1: {}", r.stderr);
    assert_builtins_complete(&r.report, 2);
    let aborted = run_of(&r.report, "rt-abort");
    let first = &aborted["render_errors"]["examples"][0];
    assert_eq!(first["kind"], "crash", "{first}");
    assert!(
        first["message"]
            .as_str()
            .unwrap_or_default()
            .contains("SIGABRT"),
        "{first}"
    );
    let trusted = run_of(&r.report, "aggressive");
    assert_eq!(trusted["sessions"], 2, "{trusted}");
    assert_eq!(trusted["render_errors"]["count"], 0, "{trusted}");

    // A value other than the two is refused with its line and key.
    std::fs::write(
        &file,
        format!(
            "[[plugins]]\npath = \"{}\"\nisolation = \"sandbox\"\n",
            toml(&sample("recap_aggressive"))
        ),
    )
    .expect("write the experiment file");
    let r = run(recap_command!().arg("run").arg("--config").arg(&file));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(":3:")
            && r.stderr.contains("plugins[0].isolation")
            && r.stderr
                .contains("expected \"in-process\" or \"process\", got \"sandbox\""),
        "{}",
        r.stderr
    );
}
