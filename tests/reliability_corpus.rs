//! Hostile corpora through the built `recap validate`: every bad line gets one clear
//! error naming file, line and field; every good line around it is still read; no
//! panic, no abort; memory stays bounded on a 100 MB line.
//!
//! The same inputs through `recap run` are in `reliability_run.rs`.

mod reliability_common;

use recap_testkit::cli::{Run, run};
use recap_testkit::recap_command;
use reliability_common::{big_line, hostile_mix, session_with_result};
use std::path::{Path, PathBuf};
use std::process::Command;

const GOOD_A: &str =
    r#"{"id":"a","mission":"Find it","turns":[{"number":1,"program":"(def x 1)","success":true}]}"#;
const GOOD_B: &str = r#"{"id":"b","mission":"Find it","turns":[]}"#;

fn validate(paths: &[&Path]) -> Run {
    run(recap_command!().arg("validate").args(paths))
}

/// Writes `bytes` to a fresh file in `dir`; returns its path.
fn corpus(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write corpus");
    path
}

/// `bad` between two good sessions: validate must reject exactly line 2, with this
/// field and a message containing `expect`, and accept lines 1 and 3.
fn rejects_between_good_lines(bad: &[u8], field: &str, expect: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bytes = format!("{GOOD_A}\n").into_bytes();
    bytes.extend_from_slice(bad);
    bytes.extend_from_slice(format!("\n{GOOD_B}\n").as_bytes());
    let path = corpus(&dir, "c.jsonl", &bytes);
    let r = validate(&[&path]);
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "one rejection and the count: {}", r.stdout);
    let prefix = format!(
        "{}:2: {}: ",
        path.display(),
        recap_core::fields::describe_field(field)
    );
    assert!(
        lines[0].starts_with(&prefix),
        "expected {prefix:?}…, got {:?}",
        lines[0]
    );
    assert!(
        lines[0].contains(expect),
        "expected {expect:?} in {:?}",
        lines[0]
    );
    assert_eq!(lines[1], "2 sessions ok, 1 rejected");
}

#[test]
fn invalid_utf8_is_rejected_naming_the_byte() {
    rejects_between_good_lines(
        b"{\"id\":\"x\",\"mission\":\"caf\xe9\"}",
        "line",
        "invalid UTF-8 at byte 24",
    );
}

#[test]
fn raw_nul_byte_is_malformed_json() {
    rejects_between_good_lines(
        b"{\"id\":\"x\",\"mission\":\"a\0b\"}",
        "json",
        "control character",
    );
    rejects_between_good_lines(b"\0\0\0\0", "json", "malformed JSON");
}

#[test]
fn escaped_nul_is_ordinary_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(
        &dir,
        "c.jsonl",
        br#"{"id":"x","mission":"a\u0000b","turns":[]}"#,
    );
    let r = validate(&[&path]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "1 session ok, 0 rejected\n")
    );
}

#[test]
fn nan_and_infinity_literals_are_rejected_but_tagged_specials_accepted() {
    for (lit, expect) in [
        ("NaN", "expected value"),
        ("Infinity", "expected value"),
        ("-Infinity", "invalid number"),
        ("1e999", "number out of range"),
    ] {
        rejects_between_good_lines(session_with_result(lit).as_bytes(), "json", expect);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(
        &dir,
        "c.jsonl",
        session_with_result(
            r#"[{"$special":"nan"},{"$special":"infinity"},{"$special":"negative_infinity"}]"#,
        )
        .as_bytes(),
    );
    assert_eq!(validate(&[&path]).code, 0);
}

#[test]
fn duplicate_session_id_rejects_the_second() {
    rejects_between_good_lines(GOOD_A.as_bytes(), "id", r#"duplicate session id "a""#);
}

#[test]
fn duplicate_keys_are_rejected_at_any_depth() {
    rejects_between_good_lines(
        br#"{"id":"x","id":"y","mission":"m"}"#,
        "json",
        r#"duplicate key "id""#,
    );
    rejects_between_good_lines(
        session_with_result(r#"{"k":1,"k":2}"#).as_bytes(),
        "json",
        r#"duplicate key "k""#,
    );
}

#[test]
fn deeply_nested_value_is_rejected_without_a_stack_overflow() {
    let depth = 200_000;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    rejects_between_good_lines(
        session_with_result(&deep).as_bytes(),
        "json",
        "nested deeper than 128 levels",
    );
    let deep_maps = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    rejects_between_good_lines(
        session_with_result(&deep_maps).as_bytes(),
        "json",
        "nested deeper than 128 levels",
    );
}

#[test]
fn nesting_below_the_limit_is_accepted() {
    // The session and turn objects take 3 of serde_json's 128 levels.
    let depth = 120;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(&dir, "c.jsonl", session_with_result(&nested).as_bytes());
    assert_eq!(validate(&[&path]).code, 0);
}

#[test]
fn million_element_arrays_are_accepted() {
    let zeros = vec!["0"; 1_000_000].join(",");
    let prints = vec![r#""p""#; 1_000_000].join(",");
    let line = format!(
        r#"{{"id":"big","mission":"m","turns":[{{"number":1,"program":"p","success":true,"result":[{zeros}],"prints":[{prints}]}}]}}"#
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(&dir, "c.jsonl", format!("{line}\n{GOOD_A}\n").as_bytes());
    let r = validate(&[&path]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "2 sessions ok, 0 rejected\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn bom_crlf_and_blank_lines_are_tolerated() {
    let text = format!("\u{feff}{GOOD_A}\r\n\r\n  \t \r\n\n{GOOD_B}\r\n");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(&dir, "c.jsonl", text.as_bytes());
    let r = validate(&[&path]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "2 sessions ok, 0 rejected\n")
    );
}

#[test]
fn bom_after_the_first_line_is_rejected() {
    rejects_between_good_lines(
        format!("\u{feff}{GOOD_B}").as_bytes(),
        "json",
        "malformed JSON",
    );
}

#[test]
fn empty_file_has_no_sessions_and_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in [
        ("empty.jsonl", &b""[..]),
        ("blank.jsonl", &b"\n\r\n  \n"[..]),
    ] {
        let path = corpus(&dir, name, bytes);
        let r = validate(&[&path]);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (2, "0 sessions ok, 0 rejected\n"),
            "{name}: a corpus without sessions is an error, not a pass"
        );
        assert!(
            r.stderr.contains(&format!(
                "no sessions: {} is empty or only blank lines",
                path.display()
            )),
            "{name}: {}",
            r.stderr
        );
    }
}

#[test]
fn truncated_last_line_is_rejected_and_earlier_lines_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(
        &dir,
        "c.jsonl",
        format!("{GOOD_A}\n{GOOD_B}\n{{\"id\":\"c\",\"mission\":\"m\",\"tu").as_bytes(),
    );
    let r = validate(&[&path]);
    assert_eq!(r.code, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("{}:3: json: malformed JSON", path.display())),
        "{lines:?}"
    );
    assert!(lines[0].contains("EOF"), "{lines:?}");
    assert_eq!(lines[1], "2 sessions ok, 1 rejected");
}

#[test]
fn last_line_without_newline_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(&dir, "c.jsonl", format!("{GOOD_A}\n{GOOD_B}").as_bytes());
    assert_eq!(validate(&[&path]).stdout, "2 sessions ok, 0 rejected\n");
}

#[test]
fn json_that_is_not_an_object_is_rejected() {
    for (line, expect) in [
        ("42", "got a number"),
        ("null", "got null"),
        (r#""s""#, "got a string"),
    ] {
        rejects_between_good_lines(line.as_bytes(), "session", expect);
    }
}

#[test]
fn out_of_range_numbers_name_their_field() {
    rejects_between_good_lines(
        session_with_result("18446744073709551615").as_bytes(),
        "turns[0].result",
        "out of the i64 range",
    );
    rejects_between_good_lines(
        br#"{"id":"x","mission":"m","max_turns":99999999999}"#,
        "max_turns",
        "expected an integer",
    );
}

#[test]
fn unreadable_and_missing_files_are_reported_and_the_others_validated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = corpus(&dir, "good.jsonl", format!("{GOOD_A}\n").as_bytes());
    let missing = dir.path().join("missing.jsonl");
    let a_directory = dir.path().join("sub");
    std::fs::create_dir(&a_directory).expect("mkdir");
    let r = validate(&[&missing, &a_directory, &good]);
    assert_eq!(
        r.code, 1,
        "the good file was read: a problem found, not a failure to run"
    );
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert!(
        lines[0].starts_with(&format!("{}:0: file: cannot open", missing.display())),
        "{lines:?}"
    );
    // The same words as `recap run`'s rejection of it
    // (`reliability_run.rs::run_reports_unreadable_files_and_runs_the_others`).
    assert_eq!(
        lines[1],
        format!(
            "{}:0: file: is a directory, expected a JSON Lines file",
            a_directory.display()
        ),
        "{lines:?}"
    );
    assert_eq!(lines[2], "1 session ok, 0 rejected, 2 files unreadable");
}

#[test]
fn hostile_mix_reports_every_rejection_and_reads_every_good_session() {
    let (bytes, good, rejected) = hostile_mix();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus(&dir, "mix.jsonl", &bytes);
    let r = validate(&[&path]);
    assert_eq!(r.code, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), rejected.len() + 1, "{}", r.stdout);
    for ((line, field), out) in rejected.iter().zip(&lines) {
        let prefix = format!(
            "{}:{line}: {}: ",
            path.display(),
            recap_core::fields::describe_field(field)
        );
        assert!(
            out.starts_with(&prefix),
            "expected {prefix:?}…, got {out:?}"
        );
    }
    assert_eq!(
        lines[rejected.len()],
        format!("{good} sessions ok, {} rejected", rejected.len())
    );
}

/// A 100 MB line is read whole and validated, and the process stays within a fixed
/// multiple of the line size: the test runs `recap validate` under an address-space
/// limit (`ulimit -v`) of 6× the line, which an unbounded reader (or a copy per
/// parsing stage beyond the few it needs) would exceed and abort on. RELIABILITY.md
/// records the measured peak RSS.
#[test]
fn hundred_megabyte_line_is_validated_within_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bytes = big_line(100);
    bytes.extend_from_slice(format!("{GOOD_A}\n").as_bytes());
    let path = corpus(&dir, "big.jsonl", &bytes);
    drop(bytes);
    let limit_kib = 6 * 100 * 1024;
    let r = run(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {limit_kib} && exec \"$0\" validate \"$1\""
        ))
        .arg(env!("CARGO_BIN_EXE_recap"))
        .arg(&path));
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "2 sessions ok, 0 rejected\n"),
        "stderr: {}",
        r.stderr
    );
}

#[test]
fn integers_beyond_64_bits_are_rejected_not_rounded_to_floats() {
    for literal in ["18446744073709551616", "-9223372036854775809"] {
        rejects_between_good_lines(
            session_with_result(&format!("[1,{literal}]")).as_bytes(),
            "json",
            &format!("integer {literal} does not fit in 64 bits"),
        );
    }
}
