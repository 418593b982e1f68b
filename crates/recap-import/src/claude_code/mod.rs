//! Claude Code transcripts → chat-form sessions (SPEC 11.1): the native JSON Lines
//! files (`~/.claude/projects/…/<session>.jsonl`) and the JSON arrays of the same
//! entries that logging hooks write.
//!
//! - The main conversation (entries without `isSidechain`) is one session; a new root
//!   (`parentUuid: null`) that is not a compaction starts another.
//! - Parts of one session id in different files are one session (`join.rs`).
//! - Entries of one model response share `message.id` and become one turn.
//! - Sub-agent traffic (`isSidechain: true`) becomes one session per sub-agent
//!   conversation (grouped by its root entry), unless excluded by option.
//! - Claude Code's own compaction summary (`isCompactSummary`) is kept as the user
//!   message it is; `meta.compactions` lists the turns it follows.
//!
//! docs/importers.md has the whole mapping.

mod build;
mod join;
mod split;

use crate::problem::{At, Problem};
use crate::source::Doc;
use crate::unmapped::Unmapped;
use crate::{Import, Options, Sidechains};
use build::{Identity, build};
use serde_json::Value as Json;
use split::{Entry, split};
use std::collections::BTreeMap;
use std::path::Path;

pub use join::import_files;

/// Entry keys that are mapped (the ones kept in `meta` are [`ENVELOPE`]).
const MAPPED_ENTRY_KEYS: [&str; 6] = [
    "type",
    "message",
    "isSidechain",
    "isCompactSummary",
    "isApiErrorMessage",
    "sessionId",
];

/// Entry keys that are known and deliberately not carried over, with the reason.
pub(super) const DROPPED_ENTRY_KEYS: [(&str, &str); 12] = [
    (
        "uuid",
        "entry ids link the transcript's tree; the order of the turns carries it",
    ),
    (
        "parentUuid",
        "entry ids link the transcript's tree; the order of the turns carries it",
    ),
    (
        "logicalParentUuid",
        "entry ids link the transcript's tree; the order of the turns carries it",
    ),
    ("timestamp", "per-entry times have no place in a chat turn"),
    ("requestId", "the provider's request id of a response"),
    (
        "toolUseResult",
        "Claude Code's structured copy of a tool result for its UI; the result text the model saw is kept",
    ),
    ("sourceToolAssistantUUID", "an entry id (see uuid)"),
    (
        "isMeta",
        "marks user text that Claude Code wrote itself (caveats, hook output); the text is kept as a user message",
    ),
    (
        "thinkingMetadata",
        "Claude Code's thinking settings for the turn",
    ),
    ("todos", "Claude Code's to-do list state at the entry"),
    ("isVisibleInTranscriptOnly", "a UI flag"),
    (
        "compactMetadata",
        "statistics of a compaction (the summary itself is kept)",
    ),
];

/// Keys kept in `meta`: one value, or the list of distinct values in order of
/// appearance when they change within the session.
pub(super) const ENVELOPE: [&str; 7] = [
    "cwd",
    "version",
    "gitBranch",
    "userType",
    "slug",
    "agentId",
    "teamName",
];

/// Imports the main conversation(s) and the sub-agent conversations of a parsed file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, opts: &Options, out: &mut Import) {
    let Some(entries) = entries_of(file, 0, doc, out) else {
        return;
    };
    let mut keys = [Unmapped::default()];
    import_entries(&[file], entries, opts, &mut keys, out);
    let [keys] = keys;
    out.problems.extend(keys.into_problems(file));
}

/// The entries of a parsed file (`file` is its index among the files read together);
/// `None` with a problem when the file is not a list of entries.
fn entries_of<'a>(
    path: &Path,
    file: usize,
    doc: &'a Doc<'a>,
    out: &mut Import,
) -> Option<Vec<Entry<'a>>> {
    let entry = |at: At, value| Entry {
        file,
        at,
        value,
        continues: false,
    };
    match doc {
        Doc::Lines(items) => Some(
            items
                .iter()
                .map(|l| entry(At::line(l.line), &l.value))
                .collect(),
        ),
        Doc::Array(items) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, l)| entry(At::new(l.line, Some(i + 1)), &l.value))
                .collect(),
        ),
        Doc::Object(members) => {
            out.problems.push(
                Problem::skipped(
                    path,
                    "expected transcript entries (JSON Lines, or a JSON array of them), got one object",
                )
                .at_line(members.first().map_or(1, |m| m.line))
                .kind("not-a-transcript"),
            );
            None
        }
        Doc::Other(_) => Some(Vec::new()),
    }
}

/// Imports the sessions of entries read from `files` (one file, or the files of one
/// joined session, in the order the session runs through them).
fn import_entries(
    files: &[&Path],
    entries: Vec<Entry>,
    opts: &Options,
    keys: &mut [Unmapped],
    out: &mut Import,
) {
    let groups = split(files, entries, keys, out);
    let stem = crate::source::stem(files[0]);
    let mut main_ids: Vec<String> = Vec::new();
    // Task prompts of the main sessions: a sub-agent's first message is its prompt.
    let mut task_calls: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut side_count: BTreeMap<String, usize> = BTreeMap::new();
    // Per file: how many sidechain entries were left out, and where the first was.
    let mut excluded: BTreeMap<usize, (usize, At)> = BTreeMap::new();
    for g in groups {
        if g.sidechain && opts.sidechains == Sidechains::Exclude {
            for e in &g.entries {
                excluded.entry(e.file).or_insert((0, e.at)).0 += 1;
            }
            continue;
        }
        let session_id = g
            .entries
            .iter()
            .find_map(|e| e.value.at("sessionId").as_str())
            .map_or_else(|| stem.clone(), str::to_string);
        let id = if g.sidechain {
            // Named after the main conversation it belongs to, when the file has one.
            let owner = main_ids.last().cloned().unwrap_or(session_id);
            let n = side_count.entry(owner.clone()).or_default();
            *n += 1;
            format!("{owner}/sidechain-{n}")
        } else {
            let taken = main_ids
                .iter()
                .filter(|i| i.starts_with(&session_id))
                .count();
            let id = match taken {
                0 => session_id.clone(),
                n => format!("{session_id}#{}", n + 1),
            };
            main_ids.push(id.clone());
            id
        };
        let who = Identity {
            id: &id,
            parent: main_ids.last().cloned(),
            task_calls: &task_calls,
        };
        if let Some(s) = build(files, who, &g, keys, out) {
            if !g.sidechain {
                note_task_calls(&s, &mut task_calls);
            }
            out.sessions.push(s);
        }
    }
    for (file, (n, at)) in excluded {
        out.problems.push(
            Problem::lossy(
                files[file],
                format!("{n} sub-agent (sidechain) entries are excluded (--sidechains exclude)"),
            )
            .at(at)
            .kind("sidechain-excluded"),
        );
    }
}

/// The prompts of a main session's Task calls, which the sub-agent sessions they
/// started begin with.
fn note_task_calls(s: &recap_core::Session, task_calls: &mut BTreeMap<String, (String, String)>) {
    for t in &s.chat_turns {
        for c in &t.assistant.tool_calls {
            if c.name == "Task"
                && let Ok(args) = serde_json::from_str::<Json>(&c.arguments)
                && let Some(prompt) = args.get("prompt").and_then(Json::as_str)
            {
                task_calls.insert(prompt.to_string(), (s.id.clone(), c.id.to_string()));
            }
        }
    }
}

/// Every entry key the importer knows: mapped, kept in `meta`, or dropped.
pub(super) fn known_entry_keys() -> Vec<&'static str> {
    let mut k: Vec<&str> = MAPPED_ENTRY_KEYS.to_vec();
    k.extend(ENVELOPE);
    k.extend(DROPPED_ENTRY_KEYS.iter().map(|(name, _)| *name));
    k
}
