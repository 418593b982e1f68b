//! Hostile corpora through the built `recap run`: every rejected session is listed in
//! the report with its line and reason, every other session is run, no panic, bounded
//! memory. (The same inputs through `recap validate`: `reliability_corpus.rs`.)

mod reliability_common;

use recap_testkit::cli::run;
use recap_testkit::recap_command;
use reliability_common::{big_line, hostile_mix};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `recap run CORPUS... --strategy full-history --strategy single-user-coalesced
/// --format json --jobs 2`.
fn recap_run(corpora: &[&Path]) -> Command {
    let mut cmd = recap_command!();
    cmd.arg("run")
        .args(corpora)
        .args([
            "--strategy",
            "full-history",
            "--strategy",
            "single-user-coalesced",
        ])
        .args(["--format", "json", "--jobs", "2"]);
    cmd
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write corpus");
    path
}

fn sessions_of(report: &Json, strategy: &str) -> u64 {
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["strategy"] == strategy)
        .and_then(|r| r["sessions"].as_u64())
        .unwrap_or_else(|| panic!("no run of {strategy}: {report}"))
}

#[test]
fn run_lists_every_rejected_session_and_runs_the_rest() {
    let (bytes, good, rejected) = hostile_mix();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(&dir, "mix.jsonl", &bytes);
    let r = run(&mut recap_run(&[&path]));
    assert_eq!(
        r.code, 1,
        "rejections are problems: exit 1; stderr: {}",
        r.stderr
    );
    let report = r.json();
    let listed = report["rejected"].as_array().expect("rejected is a list");
    assert_eq!(listed.len(), rejected.len(), "{listed:#?}");
    for ((line, field), entry) in rejected.iter().zip(listed) {
        let text = entry.to_string();
        assert_eq!(entry["line"], *line as u64, "{text}");
        assert_eq!(entry["field"], *field, "{text}");
        assert!(
            entry["message"].as_str().is_some_and(|m| !m.is_empty()),
            "a rejection says why: {text}"
        );
    }
    assert_eq!(sessions_of(&report, "full-history"), good as u64);
    assert_eq!(sessions_of(&report, "single-user-coalesced"), good as u64);
}

#[test]
fn run_over_an_empty_corpus_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = write(&dir, "empty.jsonl", b"");
    let blank = write(&dir, "blank.jsonl", b"\r\n \n");
    let out = dir.path().join("report");
    let r = run(recap_run(&[&empty, &blank]).arg("--out").arg(&out));
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "", "no table of zeros");
    assert!(
        r.stderr.contains(&format!(
            "no sessions to replay: {}, {} are empty or only blank lines",
            empty.display(),
            blank.display()
        )),
        "{}",
        r.stderr
    );
    assert!(!out.exists(), "no empty report is written");
}

#[test]
fn run_whose_every_line_is_rejected_is_an_error_after_the_rejections() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = write(&dir, "bad.jsonl", b"{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
    let r = run(&mut recap_run(&[&bad]));
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("2 corpus lines rejected, not replayed:")
            && r.stderr.contains("2 × mission: required field is missing")
            && r.stderr
                .contains("every one of the 2 corpus lines was rejected"),
        "{}",
        r.stderr
    );
}

#[test]
fn run_with_unreadable_files_stops_before_anything_runs_or_is_written() {
    let (bytes, _, _) = hostile_mix();
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.jsonl");
    let a_directory = dir.path().join("sub");
    std::fs::create_dir(&a_directory).expect("mkdir");
    let mix = write(&dir, "mix.jsonl", &bytes);
    let out = dir.path().join("report");
    for format in ["table", "csv", "json"] {
        let r = run(recap_command!()
            .arg("run")
            .args([&missing, &a_directory, &mix])
            .args(["--strategy", "full-history", "--format", format, "--out"])
            .arg(&out));
        assert_eq!(r.code, 2, "{format}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{format}: nothing computed, nothing printed");
        for line in [
            "2 of 3 corpus files cannot be read, so nothing was run:".to_string(),
            format!("  {}: cannot open: ", missing.display()),
            format!(
                "  {}: is a directory, expected a JSON Lines file",
                a_directory.display()
            ),
        ] {
            assert!(
                r.stderr.contains(&line),
                "{format}: {line:?} not in {}",
                r.stderr
            );
        }
        assert!(!out.exists(), "{format}: no report directory");
    }
    // The corrected run is not refused for a report the failed one left.
    let r = run(recap_run(&[&mix]).arg("--out").arg(&out));
    assert_eq!(r.code, 1, "rejections in the mix: exit 1; {}", r.stderr);
    assert!(out.join("report.json").is_file());
}

#[test]
fn run_handles_huge_values_and_deep_nesting() {
    // A million-element list as a definition value, tool args and result; 120-deep
    // nesting; special floats; NUL and control characters in strings.
    let million = vec!["7"; 1_000_000].join(",");
    let deep = format!("{}1{}", "[".repeat(120), "]".repeat(120));
    let line = format!(
        r#"{{"id":"huge","mission":"Find it","max_turns":4,"turns":[{{"number":1,"program":"(def big (range))","success":true,"definitions":[{{"name":"big","kind":"def","value":[{million}]}},{{"name":"deep","kind":"def","value":{deep}}},{{"name":"odd","kind":"def","value":{{"$set":[{{"$special":"nan"}},9007199254740993,9007199254740992.0,"\u0000\u001b"]}}}}],"tool_calls":[{{"name":"t","args":[{million}],"result":[{million}]}}]}},{{"number":2,"program":"(println 1)","success":true,"prints":["1"]}}]}}"#
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(&dir, "huge.jsonl", format!("{line}\n").as_bytes());
    let r = run(&mut recap_run(&[&path]));
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let report = r.json();
    assert_eq!(sessions_of(&report, "single-user-coalesced"), 1);
    for run in report["runs"].as_array().expect("runs") {
        assert_eq!(run["render_errors"]["count"], 0, "{run}");
        assert_eq!(run["invariant_violations"]["count"], 0, "{run}");
    }
}

#[test]
fn run_with_a_two_megabyte_print_counts_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bytes = big_line(2);
    // A second turn, so that the big print reaches a prompt (call 1).
    let text = String::from_utf8(bytes).expect("ascii");
    bytes = text
        .replacen(
            r#""]}]}"#,
            r#""]},{"number":2,"program":"q","success":true}]}"#,
            1,
        )
        .into_bytes();
    let path = write(&dir, "big.jsonl", &bytes);
    let r = run(&mut recap_run(&[&path]));
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let report = r.json();
    let full = &report["runs"][0];
    assert_eq!(full["strategy"], "full-history");
    // 2 MiB of `x` is far more than 100,000 tokens in any BPE vocabulary.
    assert!(
        full["prompt_tokens_peak"].as_u64().unwrap_or(0) > 100_000,
        "{full}"
    );
}

/// A 100 MB line that is malformed at its very end: rejected after being read whole,
/// the sessions around it run, within an address-space limit of 6× the line.
#[test]
fn run_rejects_a_malformed_hundred_megabyte_line_within_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = r#"{"id":"a","mission":"Find it","turns":[{"number":1,"program":"(def x 1)","success":true}]}"#;
    let mut bytes = format!("{good}\n").into_bytes();
    let mut big = big_line(100);
    big.truncate(big.len() - 3); // drop `}]}`'s end: unterminated
    big.push(b'\n');
    bytes.extend_from_slice(&big);
    drop(big);
    bytes.extend_from_slice(good.replace("\"a\"", "\"b\"").as_bytes());
    let path = write(&dir, "big.jsonl", &bytes);
    drop(bytes);
    let limit_kib = 6 * 100 * 1024;
    let r = run(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {limit_kib} && exec \"$0\" run \"$1\" --strategy full-history --format json --jobs 1"
        ))
        .arg(env!("CARGO_BIN_EXE_recap"))
        .arg(&path));
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    let report = r.json();
    let rejected = report["rejected"].as_array().expect("rejected");
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0]["line"], 2);
    assert_eq!(rejected[0]["field"], "json");
    assert_eq!(sessions_of(&report, "full-history"), 2);
}
