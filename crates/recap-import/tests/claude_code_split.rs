//! A Claude Code transcript split into two files that share no entry (no uuid in
//! common) imports as the one transcript does: every main-thread turn, every sub-agent
//! session, whichever file sorts first, with or without a link between the parts, and
//! with entries repeated across the files dropped and counted. Built from both Claude
//! Code corpora of `../shared` (skipped with a message when it is missing, failing
//! under CI=true).

mod common;

use common::{documented, shared};
use recap_core::Session;
use recap_import::{Import, Kind};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The entries of a transcript: a JSON array (hook dumps) or JSON Lines.
fn entries(path: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(path).unwrap();
    match serde_json::from_str::<Json>(&text) {
        Ok(Json::Array(items)) => items,
        _ => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    }
}

fn write_jsonl(path: &Path, entries: &[Json]) {
    let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Sessions without their `meta.import` (which names the files read).
fn comparable(import: &Import) -> Vec<Session> {
    import
        .sessions
        .iter()
        .cloned()
        .map(|mut s| {
            s.meta.remove("import");
            s
        })
        .collect()
}

fn main_turns(sessions: &[Session]) -> usize {
    sessions
        .iter()
        .filter(|s| !s.meta.contains_key("sidechain"))
        .map(|s| s.chat_turns.len())
        .sum()
}

/// The index of the main-thread user entry in the middle of the transcript: where it
/// is cut in two.
fn middle(entries: &[Json]) -> usize {
    let users: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "user" && e["isSidechain"] != Json::Bool(true))
        .map(|(i, _)| i)
        .collect();
    users[users.len() / 2]
}

/// Imports `first` and `second` (named so that the later part sorts first) from a
/// fresh directory.
fn import_parts(first: &[Json], second: &[Json]) -> (Import, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("b-first-part.jsonl"), first);
    write_jsonl(&dir.path().join("a-second-part.jsonl"), second);
    let imp = common::import(Kind::ClaudeCode, &[dir.path().to_path_buf()]);
    (imp, dir)
}

/// Checks every way of splitting `transcript` against importing it whole. The entries
/// are written back as JSON Lines (keys sorted by serde_json) for both.
fn split_imports_as_whole(transcript: &Path) {
    let all = entries(transcript);
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("whole.jsonl");
    write_jsonl(&one, &all);
    let whole = common::import(Kind::ClaudeCode, &[one]);
    let expected = comparable(&whole);
    assert!(main_turns(&expected) > 0);
    let cut = middle(&all);
    let (first, second) = all.split_at(cut);
    assert!(
        second[0]["parentUuid"].is_string(),
        "the second part links to the first"
    );

    // Linked by parentUuid: joined in the order of the link, not of the names.
    let (linked, dir) = import_parts(first, second);
    assert_eq!(
        comparable(&linked),
        expected,
        "{}: linked parts",
        transcript.display()
    );
    assert_eq!(linked.joins.len(), 1, "{:?}", linked.joins);
    let join = &linked.joins[0];
    assert_eq!(
        join.files,
        [
            dir.path().join("b-first-part.jsonl"),
            dir.path().join("a-second-part.jsonl")
        ]
    );
    assert_eq!(join.duplicates, 0);
    assert!(linked.problems.iter().all(|p| p.kind != "duplicate-id"));
    documented(&linked);

    // No link between the parts: joined in the order of their first timestamps.
    let mut unlinked = second.to_vec();
    unlinked[0]["parentUuid"] = Json::Null;
    let (by_time, _dir) = import_parts(first, &unlinked);
    assert_eq!(
        main_turns(&comparable(&by_time)),
        main_turns(&expected),
        "{}: unlinked parts",
        transcript.display()
    );
    assert_eq!(by_time.joins.len(), 1);

    // The same entries in both files: the second copies are dropped and counted.
    let overlap = &all[cut - 5..];
    let (overlapping, _dir) = import_parts(first, overlap);
    assert_eq!(
        comparable(&overlapping),
        expected,
        "{}",
        transcript.display()
    );
    assert_eq!(overlapping.joins[0].duplicates, 5);
    let dropped: Vec<_> = overlapping
        .problems
        .iter()
        .filter(|p| p.kind == "duplicate-entry")
        .collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert!(dropped[0].message.starts_with("5 entries of this file"));
    documented(&overlapping);
}

#[test]
fn a_hook_dump_split_in_two_files_imports_every_main_thread_turn() {
    let Some(dir) = shared("corpora/claude-code-attio-mcp-server") else {
        return;
    };
    // The longest transcript, with sub-agents and a compaction.
    let file: PathBuf = dir.join("816b68aa846ef9c2430ba001747caa6b048adfe6/logs/chat.json");
    split_imports_as_whole(&file);
}

#[test]
fn a_native_transcript_split_in_two_files_imports_every_main_thread_turn() {
    let Some(dir) = shared("corpora/claude-code-reliability-snapshots") else {
        return;
    };
    let file = dir.join("snapshot-tests/tests/python-to-rust-port/transcript.jsonl");
    split_imports_as_whole(&file);
}

#[test]
fn files_of_different_sessions_are_not_joined() {
    let Some(dir) = shared("corpora/claude-code-attio-mcp-server") else {
        return;
    };
    let imp = common::import(Kind::ClaudeCode, &[dir]);
    assert!(imp.joins.is_empty(), "{:?}", imp.joins);
}
