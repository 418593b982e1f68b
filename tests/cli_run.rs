//! `recap run` and `recap inspect` end to end (the binary).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recap(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_recap"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("recap runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn handwritten() -> String {
    root()
        .join("bench-data/handwritten.jsonl")
        .display()
        .to_string()
}

#[test]
fn no_arguments_runs_every_builtin_over_bench_data() {
    let out = recap(&root(), &["run", "--jobs", "2"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{}", stdout, text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("strategy ") && lines[0].contains("savings"));
    for name in recap_builtins::SPEC_BUILTINS {
        assert!(
            lines.iter().any(|l| l.starts_with(name)),
            "{name} missing:\n{stdout}"
        );
    }
    assert!(stdout.contains("o200k_base"));
    // Progress goes to a terminal only: none on a pipe.
    assert!(
        !text(&out.stderr).contains("sessions"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn missing_bench_data_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = recap(tmp.path(), &["run"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("bench-data") && err.contains("repository root"),
        "{err}"
    );
}

#[test]
fn out_dir_gets_every_format_and_is_never_silently_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("report");
    let d = dir.display().to_string();
    let c = handwritten();
    let args = [
        "run",
        c.as_str(),
        "--strategy",
        "single-user-coalesced",
        "--sweep",
        "rolling-window:window=1..2",
        "--tokenizer",
        "o200k_base",
        "--tokenizer",
        "cl100k_base",
        "--out",
        d.as_str(),
        "--dump-prompts",
        "--format",
        "json",
    ];
    let out = recap(tmp.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let runs = json["runs"].as_array().unwrap();
    // (implicit full-history + suc + 2 sweep settings) × 2 tokenizers
    assert_eq!(runs.len(), 8);
    assert_eq!(runs[0]["strategy"], "full-history");
    assert_eq!(runs[0]["implicit"], true);
    assert_eq!(runs[2]["strategy"], "rolling-window:window=1");
    assert_eq!(runs[2]["sweep"], "rolling-window:window=1..2");
    assert_eq!(runs[4]["tokenizer"], "cl100k_base");
    for f in [
        "report.json",
        "report.csv",
        "report.md",
        "report.txt",
        "tokens_per_call_o200k_base.svg",
        "retention_vs_tokens_cl100k_base.svg",
        "prompts/single-user-coalesced.jsonl",
        "prompts/rolling-window_window=2.jsonl",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let svg = std::fs::read_to_string(dir.join("retention_vs_tokens_o200k_base.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("single-user-coalesced"));
    assert!(svg.contains("Pareto front"));
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(on_disk["runs"].as_array().unwrap().len(), 8);
    let csv = std::fs::read_to_string(dir.join("report.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9);
    // Dumped prompts: one line per call, exact messages with token counts.
    let dump = std::fs::read_to_string(dir.join("prompts/single-user-coalesced.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(dump.lines().next().unwrap()).unwrap();
    assert_eq!(first["call"], 0);
    assert_eq!(first["messages"][0]["role"], "system");
    assert!(first["prompt_tokens"]["cl100k_base"].as_u64().unwrap() > 0);
    let calls: u64 = runs[1]["calls"].as_u64().unwrap();
    assert_eq!(dump.lines().count() as u64, calls);

    // Again into the same directory: refused, the old report untouched.
    let before = std::fs::read(dir.join("report.json")).unwrap();
    let again = recap(tmp.path(), &args);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(std::fs::read(dir.join("report.json")).unwrap(), before);
    // With --force: replaced; prompts not asked for this time are gone.
    let forced = recap(
        tmp.path(),
        &["run", c.as_str(), "--out", d.as_str(), "--force"],
    );
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert!(!dir.join("prompts").exists());
    assert!(!dir.join("tokens_per_call_cl100k_base.svg").exists());
    // No staging directories left beside it.
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let c = handwritten();
    // A missing corpus file is not a usage error: it is reported in the run
    // (`reliability_run.rs::run_reports_unreadable_files_and_runs_the_others`).
    let cases: [(&[&str], &str); 4] = [
        (&["run", &c, "--strategy", "nope"], "unknown strategy"),
        (
            &["run", &c, "--sweep", "rolling-window:window=3"],
            "no option has a range",
        ),
        (&["run", &c, "--tokenizer", "gpt2"], "o200k_base"),
        (&["run", &c, "--cache-read-ratio", "2"], "between 0 and 1"),
    ];
    for (args, want) in cases {
        let out = recap(&root(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn rejected_sessions_are_reported_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("c.jsonl");
    let good = std::fs::read_to_string(handwritten()).unwrap();
    let first = good.lines().next().unwrap();
    std::fs::write(&corpus, format!("{first}\n{{\"id\": \"x\"}}\n")).unwrap();
    let out = recap(
        tmp.path(),
        &["run", "c.jsonl", "--strategy", "full-history"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("rejected: c.jsonl:2 (session x): mission: required field is missing"),
        "{stdout}"
    );
}

#[test]
fn a_missing_corpus_is_reported_and_the_others_run() {
    let c = handwritten();
    let out = recap(
        &root(),
        &[
            "run",
            "/nonexistent/x.jsonl",
            &c,
            "--strategy",
            "full-history",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("rejected: /nonexistent/x.jsonl:0: file: cannot open:"),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("full-history")),
        "{stdout}"
    );
}

#[test]
fn inspect_shows_trace_beside_prompt_with_token_counts() {
    let c = handwritten();
    let out = recap(
        &root(),
        &[
            "inspect",
            &c,
            "--session",
            "error-recovery",
            "--strategy",
            "single-user-coalesced",
            "--turn",
            "3",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("call 3 of"), "{stdout}");
    assert!(stdout.contains("── recorded turn 3"), "{stdout}");
    assert!(stdout.contains("program:"));
    assert!(stdout.contains("sent by single-user-coalesced"));
    assert!(stdout.contains("[0] system · ") && stdout.contains("tokens (o200k_base)"));
    assert!(stdout.contains("retention:"));
    assert!(!stdout.contains("recorded turn 2 "), "only the asked turn");

    let bad = recap(
        &root(),
        &[
            "inspect",
            &c,
            "--session",
            "nope",
            "--strategy",
            "full-history",
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("no session \"nope\""));
    let bad_turn = recap(
        &root(),
        &[
            "inspect",
            &c,
            "--session",
            "error-recovery",
            "--strategy",
            "full-history",
            "--turn",
            "99",
        ],
    );
    assert!(text(&bad_turn.stderr).contains("--turn must be between 1 and"));
}

/// Unescaped `|` in a Markdown table line: the cell borders.
fn cell_borders(line: &str) -> usize {
    let mut borders = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => borders += 1,
            _ => escaped = false,
        }
    }
    borders
}

#[test]
fn markdown_report_is_a_well_formed_table_with_literal_names() {
    let out = recap(
        &root(),
        &[
            "run",
            &handwritten(),
            "--strategy",
            "single-user-coalesced",
            "--strategy",
            "rolling-window:window=2",
            "--format",
            "markdown",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert!(table[0].starts_with("| strategy | tokenizer |"), "{md}");
    // Header, alignment row, the implicit baseline and the two strategies asked for.
    assert_eq!(table.len(), 5, "{md}");
    let columns = cell_borders(table[0]);
    for line in &table {
        assert_eq!(cell_borders(line), columns, "ragged row: {line}");
    }
    // The baseline's star and the note about it are literal, not emphasis or a list.
    assert!(table[2].starts_with("| full-history\\* |"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("- \\* full-history: the savings baseline")),
        "{md}"
    );
    assert!(table[4].starts_with("| rolling-window:window=2 |"), "{md}");
}
