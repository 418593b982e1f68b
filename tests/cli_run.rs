//! `recap run` and `recap inspect` end to end (the binary).

mod cli_common;

use cli_common::{bench, recap, root};
use std::path::{Path, PathBuf};

fn handwritten() -> String {
    bench("handwritten.jsonl")
}

#[test]
fn no_arguments_runs_every_builtin_over_bench_data() {
    let out = recap(&root(), &["run", "--jobs", "2"]);
    let stdout = out.stdout;
    assert_eq!(out.code, 0, "{}\n{}", stdout, out.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "PTC-Lisp sessions: 37 (o200k_base)");
    assert!(lines[1].starts_with("strategy ") && lines[1].contains("savings"));
    for name in recap_builtins::SPEC_BUILTINS {
        assert!(
            lines.iter().any(|l| l.starts_with(name)),
            "{name} missing:\n{stdout}"
        );
    }
    assert!(stdout.contains("o200k_base"));
    // Progress goes to a terminal only: none on a pipe.
    assert!(!out.stderr.contains("sessions"), "{}", out.stderr);
}

#[test]
fn missing_bench_data_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = recap(tmp.path(), &["run"]);
    assert_eq!(out.code, 2);
    let err = out.stderr;
    assert!(
        err.contains("no bench-data/ here") && err.contains("recap init"),
        "{err}"
    );
}

/// The rows of each form's block of the table: (heading, strategy names).
fn blocks(table: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = table.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.ends_with(')') || !line.contains(" sessions: ") {
            continue;
        }
        lines.next(); // the header
        lines.next(); // the rule
        let mut names = Vec::new();
        while let Some(row) = lines.next_if(|l| !l.is_empty()) {
            names.push(
                row.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        out.push((line.to_string(), names));
    }
    out
}

#[test]
fn a_mixed_corpus_gets_a_table_per_form_each_against_its_own_baseline() {
    let out = recap(&root(), &["run", "--jobs", "2", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let groups: Vec<(String, u64)> = json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["form"].as_str().unwrap().to_string(),
                g["sessions"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(groups, [("ptc".to_string(), 37), ("chat".to_string(), 43)]);
    for run in json["runs"].as_array().unwrap() {
        let (form, name) = (
            run["form"].as_str().unwrap(),
            run["strategy"].as_str().unwrap(),
        );
        let sessions = if form == "ptc" { 37 } else { 43 };
        // Every row but `recorded` (its scope) covers every session of its form, so
        // tokens and retention compare down the column.
        if name != "recorded" {
            assert_eq!(run["sessions"], sessions, "{form} {name}");
            assert_eq!(run["not_applicable"], 0, "{form} {name}");
        }
        if name == "full-history" {
            assert_eq!(run["savings_vs_full_history"], 0.0);
        }
    }

    let table = recap(&root(), &["run", "--jobs", "2"]).stdout;
    let blocks = blocks(&table);
    assert_eq!(blocks.len(), 2, "{table}");
    assert_eq!(blocks[0].0, "PTC-Lisp sessions: 37 (o200k_base)");
    assert_eq!(blocks[1].0, "chat sessions: 43 (o200k_base)");
    let (ptc, chat) = (&blocks[0].1, &blocks[1].1);
    assert_eq!(ptc[0], "full-history");
    assert_eq!(chat[0], "full-history");
    for only_ptc in [
        "single-user-coalesced",
        "per-turn-summary",
        "ptc-runner",
        "ptc-trim",
    ] {
        assert!(ptc.iter().any(|n| n == only_ptc), "{only_ptc}: {table}");
        assert!(
            !chat.iter().any(|n| n == only_ptc),
            "{only_ptc} in chat: {table}"
        );
    }
    for only_chat in ["observation-masking", "tool-result-clearing", "recorded"] {
        assert!(chat.iter().any(|n| n == only_chat), "{only_chat}: {table}");
        assert!(
            !ptc.iter().any(|n| n == only_chat),
            "{only_chat} in ptc: {table}"
        );
    }
    // One note per form says which strategies have no row there, and why.
    assert!(
        table.contains("no row for single-user-coalesced, per-turn-summary, ptc-runner, ptc-trim (they render PTC-Lisp sessions only)"),
        "{table}"
    );
    assert!(
        table.contains("n/a: recorded replays chat sessions whose log records"),
        "{table}"
    );
    // No cell says n/a any more: a row exists only where the strategy has figures.
    assert!(
        !table
            .lines()
            .filter(|l| !l.starts_with("strategy "))
            .any(|l| l.split_whitespace().any(|c| c == "n/a")),
        "{table}"
    );
    // It fits 120 characters when there is no terminal, and says what it left out.
    // The rule under each header is as wide as the table.
    let rules: Vec<usize> = table
        .lines()
        .filter(|l| l.starts_with("---"))
        .map(|l| l.chars().count())
        .collect();
    assert_eq!(rules.len(), 2);
    assert!(rules.iter().all(|w| *w <= 120), "{rules:?}\n{table}");
    assert!(
        table.contains("columns left out to fit 120 characters: render p95"),
        "{table}"
    );
}

#[test]
fn columns_are_chosen_by_name_or_all() {
    let c = handwritten();
    let chosen = recap(
        &root(),
        &[
            "run",
            c.as_str(),
            "--strategy",
            "ptc-trim",
            "--columns",
            "tokens,retention",
        ],
    );
    assert_eq!(chosen.code, 0, "{}", chosen.stderr);
    let header = chosen.stdout.lines().nth(1).unwrap().to_string();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["strategy", "tokens", "retention"]
    );
    let all = recap(
        &root(),
        &[
            "run",
            c.as_str(),
            "--strategy",
            "ptc-trim",
            "--columns",
            "all",
        ],
    );
    let header = all.stdout.lines().nth(1).unwrap().to_string();
    for h in ["tokenizer", "peak", "eff. cost", "render p95"] {
        assert!(header.contains(h), "{header}");
    }
    assert!(!all.stdout.contains("columns left out"), "{}", all.stdout);
    let typo = recap(
        &root(),
        &["run", c.as_str(), "--columns", "tokens,retension"],
    );
    assert_eq!(typo.code, 2);
    assert!(
        typo.stderr.contains("did you mean `retention`?"),
        "{}",
        typo.stderr
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
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("stdout is JSON");
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
        "tokens_per_call_ptc_o200k_base.svg",
        "retention_vs_tokens_ptc_cl100k_base.svg",
        "prompts/single-user-coalesced.jsonl",
        "prompts/rolling-window_window=2.jsonl",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let svg = std::fs::read_to_string(dir.join("retention_vs_tokens_ptc_o200k_base.svg")).unwrap();
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
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    assert_eq!(std::fs::read(dir.join("report.json")).unwrap(), before);
    // With --force: replaced; prompts not asked for this time are gone.
    let forced = recap(
        tmp.path(),
        &["run", c.as_str(), "--out", d.as_str(), "--force"],
    );
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert!(!dir.join("prompts").exists());
    assert!(!dir.join("tokens_per_call_ptc_cl100k_base.svg").exists());
    // No staging directories left beside it.
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let c = handwritten();
    // A missing corpus file stops the run too
    // (`a_missing_corpus_stops_the_run_on_stderr_in_every_format`).
    let cases: [(&[&str], &str); 5] = [
        (&["run", &c, "--strategy", "nope"], "unknown strategy"),
        (
            &["run", &c, "--strategy", "rolling-windw:window=2"],
            "unknown strategy \"rolling-windw\"; did you mean `rolling-window`?",
        ),
        (
            &["run", &c, "--sweep", "rolling-window:window=3"],
            "no option has a range",
        ),
        (&["run", &c, "--tokenizer", "gpt2"], "o200k_base"),
        (&["run", &c, "--cache-read-ratio", "2"], "between 0 and 1"),
    ];
    for (args, want) in cases {
        let out = recap(&root(), args);
        assert_eq!(out.code, 2, "{args:?}");
        let err = out.stderr;
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
    assert_eq!(out.code, 1);
    let stdout = out.stdout;
    assert!(
        stdout.contains("rejected: c.jsonl:2 (session x): mission: required field is missing"),
        "{stdout}"
    );
}

#[test]
fn a_missing_corpus_stops_the_run_on_stderr_in_every_format() {
    let c = handwritten();
    for format in ["table", "csv", "json", "markdown"] {
        let out = recap(
            &root(),
            &[
                "run",
                "/nonexistent/x.jsonl",
                &c,
                "--strategy",
                "full-history",
                "--format",
                format,
            ],
        );
        assert_eq!(out.code, 2, "{format}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{format}: nothing was run");
        assert!(
            out.stderr.contains(
                "1 of 2 corpus files cannot be read, so nothing was run:\n  /nonexistent/x.jsonl: cannot open: No such file or directory"
            ),
            "{format}: {}",
            out.stderr
        );
    }
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
    let stdout = out.stdout;
    assert_eq!(out.code, 0, "{}", out.stderr);
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
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("no session \"nope\""));
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
    assert!(bad_turn.stderr.contains("--turn must be between 1 and"));
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
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = out.stdout;
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

/// One good session of bench-data, then `bad` lines that are each malformed JSON.
fn corpus_with_bad_lines(dir: &Path, bad: usize) -> PathBuf {
    let good = std::fs::read_to_string(handwritten()).unwrap();
    let mut text = format!("{}\n", good.lines().next().unwrap());
    for i in 0..bad {
        text.push_str(&format!("{{\"id\": \"bad-{i}\", \"mission\": \n"));
    }
    let path = dir.join("c.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn rejections_are_summarised_once_per_kind_on_stderr_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = corpus_with_bad_lines(tmp.path(), 300);
    let c = corpus.to_str().unwrap();
    for format in ["csv", "json", "table"] {
        let out = recap(
            tmp.path(),
            &["run", c, "--strategy", "full-history", "--format", format],
        );
        assert_eq!(out.code, 1, "{format}: {}", out.stderr);
        let expected = [
            "300 corpus lines rejected, not replayed:".to_string(),
            format!(
                "  300 × json: malformed JSON (first: {c}:2: malformed JSON: the line ends before its JSON value does (EOF while parsing"
            ),
        ];
        for line in &expected {
            assert!(
                out.stderr.contains(line.as_str()),
                "{format}: {line:?} not in {}",
                out.stderr
            );
        }
        assert!(
            out.stderr.lines().count() <= 3,
            "a summary, not a line per rejection ({format}):\n{}",
            out.stderr
        );
        if format == "json" {
            assert_eq!(out.json()["rejected"].as_array().map(Vec::len), Some(300));
        }
    }
}

#[test]
fn a_json_array_instead_of_json_lines_is_said_once_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(handwritten()).unwrap();
    let sessions: Vec<serde_json::Value> = good
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let path = tmp.path().join("sessions.json");
    std::fs::write(&path, serde_json::to_string_pretty(&sessions).unwrap()).unwrap();
    let p = path.to_str().unwrap();
    let out = recap(tmp.path(), &["run", p, "--strategy", "full-history"]);
    assert_eq!(out.code, 2, "no session could be read: {}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "  1 × {p}:1: file: a JSON array spread over several lines, not JSON Lines (one session object per line); "
        )) && out.stderr.contains(&format!("jq -c '.[]' {p} > corpus.jsonl"))
            && out.stderr.contains("recap import openai-chat"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("malformed JSON"), "{}", out.stderr);
    let validate = recap(tmp.path(), &["validate", p]);
    assert_eq!(validate.code, 1);
    assert_eq!(validate.stdout.lines().count(), 2, "{}", validate.stdout);
}

#[test]
fn a_large_json_report_says_how_to_make_it_smaller() {
    let tmp = tempfile::tempdir().unwrap();
    let c = handwritten();
    let run = |extra: &[&str]| {
        recap_testkit::cli::run(
            recap_testkit::recap_command!()
                .current_dir(tmp.path())
                .args(["run", &c, "--strategy", "full-history", "--format", "json"])
                .args(extra)
                // The real threshold is 64 MiB; lowered so bench-data crosses it.
                .env("RECAP_LARGE_REPORT_BYTES", "1000"),
        )
    };
    let out = run(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("note: the JSON report on stdout is ")
            && out.stderr.contains("mostly its 7 per-session records (session_details); --no-session-details leaves them out"),
        "{}",
        out.stderr
    );
    let dir = tmp.path().join("report");
    let out = run(&["--out", dir.to_str().unwrap()]);
    assert!(
        out.stderr
            .contains(&format!("note: {} is ", dir.join("report.json").display())),
        "{}",
        out.stderr
    );
    let out = run(&["--no-session-details"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("note:"), "{}", out.stderr);
}

#[test]
fn a_closed_stdout_ends_run_and_inspect_quietly() {
    let c = handwritten();
    let commands: [&[&str]; 2] = [
        &["run", &c, "--strategy", "full-history", "--format", "json"],
        &[
            "inspect",
            &c,
            "--session",
            "error-recovery",
            "--strategy",
            "single-user-coalesced",
        ],
    ];
    for args in commands {
        // As `recap … | head -1` once head has gone: the pipe has no reader.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = recap_testkit::recap_command!()
            .current_dir(root())
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}: no `Broken pipe` error");
    }
}
