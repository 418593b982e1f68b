//! `recap import`: summary, exit codes, problem files and atomic output.

use recap_testkit::recap;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/recap-import/tests/fixtures")
        .join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn clean_input_exits_0_and_writes_a_valid_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chat.jsonl");
    let input = fixture("openai-chat/bare_list.json");
    let run = recap!(&["import", "openai-chat", s(&input), "-o", s(&out)]);
    let stderr = run.stderr;
    assert_eq!(run.code, 0, "{stderr}");
    assert!(
        stderr.contains("openai-chat: 1 sessions, 2 turns (0 failed), 1 tool calls from 1 files"),
        "{stderr}"
    );
    assert!(stderr.contains("no problems"), "{stderr}");
    let validate = recap!(&["validate", s(&out)]);
    assert_eq!(validate.code, 0, "{}", validate.stdout);

    // Byte-identical on re-import; no temporary file is left behind.
    let first = std::fs::read(&out).unwrap();
    assert_eq!(
        recap!(&["import", "openai-chat", s(&input), "-o", s(&out), "--force"]).code,
        0
    );
    assert_eq!(std::fs::read(&out).unwrap(), first);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["chat.jsonl"]);
}

#[test]
fn skipped_input_exits_1_and_lists_problems() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ptc.jsonl");
    let all = dir.path().join("problems.txt");
    let run = recap!(&[
        "import",
        "ptc-runner",
        s(&fixture("ptc-runner")),
        "-o",
        s(&out),
        "--problems",
        s(&all),
        "--show-problems",
        "2",
    ]);
    let stderr = run.stderr;
    assert_eq!(run.code, 1, "{stderr}");
    assert!(
        stderr.contains("ptc-runner: 3 sessions, 6 turns (2 failed), 1 tool calls from 4 files"),
        "{stderr}"
    );
    assert!(
        stderr.contains("10 problems (8 skipped input, 2 lossy mappings):"),
        "{stderr}"
    );
    assert!(stderr.contains("... and 8 more (all in"), "{stderr}");
    let listed = std::fs::read_to_string(&all).unwrap();
    assert_eq!(listed.lines().count(), 10);
    assert!(listed.contains("run.inspection.jsonl:4: session good/damaged: skipped: record not imported: unknown record type"));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
}

#[test]
fn unusable_arguments_exit_2_without_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let run = recap!(&[
        "import",
        "langchain",
        s(&fixture("openai-chat")),
        "-o",
        s(&out),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("unknown import kind \"langchain\""));

    let missing = dir.path().join("missing");
    let run = recap!(&["import", "smolagents", s(&missing), "-o", s(&out)]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("missing: cannot read"));

    let nowhere = dir.path().join("no-dir/out.jsonl");
    let run = recap!(&[
        "import",
        "smolagents",
        s(&fixture("smolagents")),
        "-o",
        s(&nowhere),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("writing"), "{}", run.stderr);
    assert!(!out.exists() && !nowhere.exists());
}

#[test]
fn an_existing_corpus_is_never_replaced_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("precious.jsonl");
    std::fs::write(&out, "{\"id\":\"mine\",\"mission\":\"m\"}\n").unwrap();
    let input = fixture("openai-chat/bare_list.json");
    let run = recap!(&["import", "openai-chat", s(&input), "-o", s(&out)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("already exists; refusing to replace it — pass --force"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"id\":\"mine\",\"mission\":\"m\"}\n"
    );
}

#[test]
fn an_import_that_produced_nothing_never_replaces_a_file_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("precious.jsonl");
    std::fs::write(&out, "keep me\n").unwrap();
    // The wrong importer: smolagents logs through the ptc-runner importer.
    let logs = fixture("smolagents/runs.jsonl");
    let run = recap!(&["import", "ptc-runner", s(&logs), "-o", s(&out), "--force"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the ptc-runner importer found no session in")
            && run.stderr.contains("so nothing was written")
            && run.stderr.contains("is unchanged")
            && run.stderr.contains("is ptc-runner the right kind of log?"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    let fresh = dir.path().join("fresh.jsonl");
    let run = recap!(&["import", "ptc-runner", s(&logs), "-o", s(&fresh)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!fresh.exists(), "no empty corpus is written");
}

#[test]
fn a_closed_stderr_ends_an_import_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ptc.jsonl");
    // As `recap import … 2>&1 | head -1` once head has gone: the pipe has no reader.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = recap_testkit::recap_command!()
        .args([
            "import",
            "ptc-runner",
            s(&fixture("ptc-runner")),
            "-o",
            s(&out),
        ])
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .status()
        .unwrap();
    // Exit 1 as with a readable stderr (the fixture skips input), not 101 (a panic).
    assert_eq!(status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
}

#[test]
fn auto_imports_a_directory_of_mixed_logs_and_counts_problems_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mixed.jsonl");
    let run = recap!(&["import", "auto", s(&fixture("mixed")), "-o", s(&out)]);
    // One file is of no known format: skipped input, exit 1.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("auto: 7 sessions, 11 turns (0 failed), 6 tool calls from 7 files"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("  by kind: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("1 skipped unknown-format"),
        "{}",
        run.stderr
    );
    // The format of each file is said.
    let mixed = fixture("mixed");
    for (format, file) in [
        ("anthropic-messages", "a-anthropic.jsonl"),
        ("claude-code", "b-claude.json"),
        ("tau2", "c-tau2.json"),
        ("openhands", "d-openhands.json"),
        ("swe-agent", "e-swe.traj"),
        ("openai-chat", "f-openai.json"),
        ("unknown format", "g-unknown.json"),
    ] {
        let line = format!("  {format}: {}\n", mixed.join(file).display());
        assert!(run.stderr.contains(&line), "{line:?} in {}", run.stderr);
    }
    assert!(run.stderr.contains("formats read:\n"), "{}", run.stderr);
    let validate = recap!(&["validate", s(&out)]);
    assert_eq!(validate.code, 0, "{}", validate.stdout);
}

#[test]
fn a_session_split_over_two_files_is_joined_and_the_summary_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read_to_string(fixture("claude-code/session.jsonl")).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    // The later part's name sorts first: the parentUuid link orders them.
    std::fs::write(parts.join("2-start.jsonl"), lines[..8].join("\n")).unwrap();
    std::fs::write(parts.join("1-rest.jsonl"), lines[8..].join("\n")).unwrap();
    let joined = dir.path().join("joined.jsonl");
    let run = recap!(&["import", "claude-code", s(&parts), "-o", s(&joined)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = format!(
        "joined: session cc-1 from 2 files, in this order: {}, {}\n",
        parts.join("2-start.jsonl").display(),
        parts.join("1-rest.jsonl").display()
    );
    assert!(run.stderr.contains(&line), "{line:?} in {}", run.stderr);
    assert!(!run.stderr.contains("formats read"), "{}", run.stderr);

    // The same sessions as from the one file, but for where they were read.
    let one = dir.path().join("one.jsonl");
    let input = fixture("claude-code/session.jsonl");
    assert_eq!(
        recap!(&["import", "claude-code", s(&input), "-o", s(&one)]).code,
        0
    );
    let sessions = |p: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["meta"].as_object_mut().unwrap().remove("import");
                v
            })
            .collect()
    };
    assert_eq!(sessions(&joined), sessions(&one));
    assert_eq!(sessions(&one).len(), 2);
}

#[test]
fn sidechains_are_sessions_unless_excluded() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("claude-code/session.jsonl");
    let with = dir.path().join("with.jsonl");
    let run = recap!(&["import", "claude-code", s(&input), "-o", s(&with)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("claude-code: 2 sessions, 6 turns"),
        "{}",
        run.stderr
    );
    let without = dir.path().join("without.jsonl");
    let run = recap!(&[
        "import",
        "claude-code",
        s(&input),
        "-o",
        s(&without),
        "--sidechains",
        "exclude"
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("claude-code: 1 sessions, 4 turns"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("1 lossy sidechain-excluded"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_same_file_twice_exits_2_and_gzip_corpora_validate() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let input = fixture("tau2/solo.json");
    let run = recap!(&["import", "tau2", s(&input), s(&input), "-o", s(&out)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("this file is given twice"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());

    // A gzip-compressed corpus validates as the plain one does.
    let run = recap!(&["import", "tau2", s(&input), "-o", s(&out)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let gz = dir.path().join("out.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, &std::fs::read(&out).unwrap()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let validate = recap!(&["validate", s(&gz)]);
    assert_eq!(validate.code, 0, "{}", validate.stdout);
    assert!(
        validate.stdout.contains("1 sessions ok"),
        "{}",
        validate.stdout
    );
}
