//! `recap eval` end to end (the binary) against the stand-in model on 127.0.0.1: no
//! endpoint, a full run and its free rerun, the key kept secret, a server that is down,
//! a damaged cache, and a run killed with SIGKILL that resumes.

use recap_eval::standin::{Config, StandIn};
use recap_testkit::cli::{Run, run};
use recap_testkit::recap_command;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus() -> String {
    root()
        .join("bench-data/chat-handwritten.jsonl")
        .display()
        .to_string()
}

/// `recap eval` on the hand-written chat corpus with the stand-in at `url`.
fn eval_args(url: &str, cache: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "eval",
        &corpus(),
        "--endpoint",
        url,
        "--model",
        "stand-in",
        "--cache",
        &cache.display().to_string(),
        "--sample",
        "12",
        "--strategy",
        "observation-masking",
        "--strategy",
        "llm-summary:trigger=300,keep=2",
        "--retries",
        "1",
        "--timeout",
        "10",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn recap(args: &[String]) -> Run {
    run(recap_command!().args(args).env_remove("OPENAI_API_KEY"))
}

#[test]
fn without_an_endpoint_it_says_what_to_pass() {
    let out = recap(&["eval".to_string(), corpus()]);
    assert_eq!(out.code, 2);
    for word in ["--endpoint", "--model", "docs/evaluation.md", "11434"] {
        assert!(out.stderr.contains(word), "{word}: {}", out.stderr);
    }
    let out = recap(&[
        "eval".into(),
        corpus(),
        "--endpoint".into(),
        "http://127.0.0.1:9/v1".into(),
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--model"), "{}", out.stderr);
}

#[test]
fn a_run_reports_both_measures_and_its_rerun_sends_nothing() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache.sqlite");
    let out = recap(&eval_args(
        &server.url(),
        &cache,
        &["--format", "json", "--price", "stand-in=1/2"],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    assert_eq!(report["schema"], "recap-eval/1");
    let names: Vec<&str> = report["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "full-history",
            "observation-masking",
            "llm-summary:keep=2,trigger=300"
        ]
    );
    let control = &report["strategies"][0];
    assert!(control["next_action"]["asked"].as_u64().unwrap() > 0);
    assert!(control["probes"]["asked"].as_u64().unwrap() > 0);
    assert!(
        report["strategies"][2]["summarizer"]["requests"]
            .as_u64()
            .unwrap_or_else(|| panic!("{}", report["strategies"][2]))
            > 0
    );
    let sent = report["requests"]["sent"].as_u64().unwrap();
    assert_eq!(sent as usize, server.received());
    assert!(report["cost"][0]["dollars"].as_f64().unwrap() > 0.0);

    let again = recap(&eval_args(&server.url(), &cache, &["--format", "json"]));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(server.received() as u64, sent, "the rerun sent requests");
    let again = again.json();
    assert_eq!(again["requests"]["sent"], 0);
    assert_eq!(again["requests"]["cached"], report["requests"]["requests"]);
    assert_eq!(again["strategies"], report["strategies"]);

    let md = recap(&eval_args(&server.url(), &cache, &["--format", "markdown"]));
    assert!(
        md.stdout.contains("| full-history (control) |"),
        "{}",
        md.stdout
    );
    assert!(md.stdout.contains("requests:"), "{}", md.stdout);
}

#[test]
fn the_api_key_is_sent_but_never_printed() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = eval_args(
        &server.url(),
        &dir.path().join("c.sqlite"),
        &["--format", "json"],
    );
    args.extend(["--api-key-env".to_string(), "RECAP_TEST_KEY".to_string()]);
    let out = run(recap_command!()
        .args(&args)
        .env("RECAP_TEST_KEY", "sk-cli-secret-42"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("sk-cli") && !out.stderr.contains("sk-cli"));
    assert!(
        server
            .authorizations()
            .iter()
            .all(|a| a == "Bearer sk-cli-secret-42")
    );
    let missing = run(recap_command!().args(&args).env_remove("RECAP_TEST_KEY"));
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("RECAP_TEST_KEY"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_server_that_is_down_is_named_and_nothing_is_written() {
    let mut server = StandIn::start(Config::default()).unwrap();
    let url = server.url();
    server.stop();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = recap(&eval_args(
        &url,
        &dir.path().join("c.sqlite"),
        &["--out", &report.display().to_string()],
    ));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(&format!("{url}/chat/completions")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("resumes"), "{}", out.stderr);
    assert!(!report.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("report"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_damaged_cache_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c.sqlite");
    std::fs::write(
        &cache,
        b"this was never a database, but someone named it so",
    )
    .unwrap();
    let out = recap(&eval_args("http://127.0.0.1:9/v1", &cache, &[]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("damaged") && out.stderr.contains("c.sqlite"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_run_killed_with_sigkill_loses_only_what_was_in_flight() {
    let slow = StandIn::start(Config {
        delay: Duration::from_millis(60),
        ..Config::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c.sqlite");
    let mut child = recap_command!()
        .args(eval_args(&slow.url(), &cache, &["--concurrency", "2"]))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while slow.answered() < 10 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let answered = slow.answered();
    assert!(answered >= 10, "the run did not get going: {answered}");
    let kept = recap_llm::Cache::open(&cache).unwrap().len().unwrap() as usize;
    assert!(kept + 2 >= answered, "{kept} kept of {answered} answered");

    let fresh = StandIn::start(Config::default()).unwrap();
    let out = recap(&eval_args(&fresh.url(), &cache, &["--format", "json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    let distinct = report["requests"]["requests"].as_u64().unwrap() as usize;
    assert_eq!(fresh.received(), distinct - kept, "asked something twice");
    assert_eq!(
        report["requests"]["cached"].as_u64().unwrap() as usize,
        kept
    );
}

#[test]
fn shards_with_their_own_caches_merge_into_one_that_answers_the_whole_evaluation() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let whole = recap(&eval_args(
        &server.url(),
        &dir.path().join("whole.sqlite"),
        &["--format", "json"],
    ));
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let asked = server.received();
    let mut merge = vec![
        "eval".to_string(),
        "--cache".to_string(),
        dir.path().join("merged.sqlite").display().to_string(),
    ];
    for i in 0..3 {
        let cache = dir.path().join(format!("shard{i}.sqlite"));
        let shard = format!("{i}/3");
        let out = recap(&eval_args(&server.url(), &cache, &["--shard", &shard]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.contains(&format!("shard {i}/3: ")) || out.stderr.contains("holds none")
        );
        merge.extend(["--merge-cache".to_string(), cache.display().to_string()]);
    }
    assert_eq!(
        server.received(),
        2 * asked,
        "the shards asked each request once"
    );
    // Merging alone needs no endpoint.
    let merged = recap(&merge);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(
        merged.stderr.matches("answers added").count(),
        3,
        "{}",
        merged.stderr
    );
    let again = recap(&eval_args(
        &server.url(),
        &dir.path().join("merged.sqlite"),
        &["--format", "json"],
    ));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(server.received(), 2 * asked, "nothing asked again");
    assert_eq!(again.json()["requests"]["sent"], 0);
    assert_eq!(again.json()["strategies"], whole.json()["strategies"]);
    let missing = recap(&[
        "eval".into(),
        "--merge-cache".into(),
        dir.path().join("none.sqlite").display().to_string(),
        "--cache".into(),
        dir.path().join("merged.sqlite").display().to_string(),
    ]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("none.sqlite"), "{}", missing.stderr);
}
