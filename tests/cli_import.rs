//! `recap import`: summary, exit codes, problem files and atomic output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/recap-import/tests/fixtures")
        .join(rel)
}

fn recap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_recap"))
        .args(args)
        .output()
        .expect("recap runs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn clean_input_exits_0_and_writes_a_valid_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chat.jsonl");
    let input = fixture("openai-chat/bare_list.json");
    let run = recap(&["import", "openai-chat", s(&input), "-o", s(&out)]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("openai-chat: 1 sessions, 2 turns (0 failed), 1 tool calls from 1 files"),
        "{stderr}"
    );
    assert!(stderr.contains("no problems"), "{stderr}");
    let validate = recap(&["validate", s(&out)]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );

    // Byte-identical on re-import; no temporary file is left behind.
    let first = std::fs::read(&out).unwrap();
    assert_eq!(
        recap(&["import", "openai-chat", s(&input), "-o", s(&out)])
            .status
            .code(),
        Some(0)
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
    let run = recap(&[
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
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
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
    let run = recap(&[
        "import",
        "langchain",
        s(&fixture("openai-chat")),
        "-o",
        s(&out),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("unknown import kind \"langchain\""));

    let missing = dir.path().join("missing");
    let run = recap(&["import", "smolagents", s(&missing), "-o", s(&out)]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("missing: cannot read"));

    let nowhere = dir.path().join("no-dir/out.jsonl");
    let run = recap(&[
        "import",
        "smolagents",
        s(&fixture("smolagents")),
        "-o",
        s(&nowhere),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("writing"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!out.exists() && !nowhere.exists());
}
