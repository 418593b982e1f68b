//! Claude Code transcripts → chat-form sessions (SPEC 11.1): the native JSON Lines
//! files (`~/.claude/projects/…/<session>.jsonl`) and the JSON arrays of the same
//! entries that logging hooks write.
//!
//! - The main conversation (entries without `isSidechain`) is one session; a new root
//!   (`parentUuid: null`) that is not a compaction starts another.
//! - Entries of one model response share `message.id` and become one turn.
//! - Sub-agent traffic (`isSidechain: true`) becomes one session per sub-agent
//!   conversation (grouped by its root entry), unless excluded by option.
//! - Claude Code's own compaction summary (`isCompactSummary`) is kept as the user
//!   message it is; `meta.compactions` lists the turns it follows.
//!
//! docs/importers.md has the whole mapping.

use crate::conversation::{Conversation, Response};
use crate::messages::{Place, anthropic_response, anthropic_user_parts, feed_user_parts};
use crate::ojson::{J, to_map};
use crate::problem::{At, Problem};
use crate::source::Doc;
use crate::unmapped::Unmapped;
use crate::{Import, Options, Sidechains};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// Entry keys that are mapped, or kept in `meta` (the envelope).
const ENTRY_KEYS: [&str; 13] = [
    "type",
    "message",
    "isSidechain",
    "isCompactSummary",
    "isApiErrorMessage",
    "sessionId",
    "cwd",
    "version",
    "gitBranch",
    "userType",
    "slug",
    "agentId",
    "teamName",
];

/// Entry keys that are known and deliberately not carried over, with the reason.
const DROPPED_ENTRY_KEYS: [(&str, &str); 12] = [
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
const ENVELOPE: [&str; 7] = [
    "cwd",
    "version",
    "gitBranch",
    "userType",
    "slug",
    "agentId",
    "teamName",
];

/// One entry with where it is.
struct Entry<'a> {
    at: At,
    value: &'a J<'a>,
}

/// The entries of one session under construction.
struct Group<'a> {
    entries: Vec<Entry<'a>>,
    sidechain: bool,
}

/// Imports the main conversation(s) and the sub-agent conversations of a parsed file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, opts: &Options, out: &mut Import) {
    let entries: Vec<Entry> = match doc {
        Doc::Lines(items) => items
            .iter()
            .map(|l| Entry {
                at: At::line(l.line),
                value: &l.value,
            })
            .collect(),
        Doc::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, l)| Entry {
                at: At::new(l.line, Some(i + 1)),
                value: &l.value,
            })
            .collect(),
        Doc::Object(members) => {
            out.problems.push(
                Problem::skipped(
                    file,
                    "expected transcript entries (JSON Lines, or a JSON array of them), got one object",
                )
                .at_line(members.first().map_or(1, |m| m.line))
                .kind("not-a-transcript"),
            );
            return;
        }
        Doc::Other(_) => Vec::new(),
    };
    let mut keys = Unmapped::default();
    let groups = split(file, entries, &mut keys, out);
    let stem = crate::source::stem(file);
    let mut main_ids: Vec<String> = Vec::new();
    // Task prompts of the main sessions: a sub-agent's first message is its prompt.
    let mut task_calls: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut side_count: BTreeMap<String, usize> = BTreeMap::new();
    let mut excluded = (0usize, None::<At>);
    for g in groups {
        if g.sidechain && opts.sidechains == Sidechains::Exclude {
            excluded.0 += g.entries.len();
            excluded.1 = excluded.1.or(g.entries.first().map(|e| e.at));
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
        let parent = main_ids.last().cloned();
        if let Some(s) = build(file, &id, &g, parent, &task_calls, &mut keys, out) {
            if !g.sidechain {
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
            out.sessions.push(s);
        }
    }
    if let (n, Some(at)) = excluded
        && n > 0
    {
        out.problems.push(
            Problem::lossy(
                file,
                format!("{n} sub-agent (sidechain) entries are excluded (--sidechains exclude)"),
            )
            .at(at)
            .kind("sidechain-excluded"),
        );
    }
    out.problems.extend(keys.into_problems(file));
}

/// Splits entries into the main conversation(s) and the sidechains, each in file
/// order. Entries that are not messages are counted here.
fn split<'a>(
    file: &Path,
    entries: Vec<Entry<'a>>,
    keys: &mut Unmapped,
    out: &mut Import,
) -> Vec<Group<'a>> {
    let mut groups: Vec<Group> = Vec::new();
    // The group of the current main conversation, and of each sidechain entry by uuid.
    let mut main: Option<usize> = None;
    let mut side_of: BTreeMap<String, usize> = BTreeMap::new();
    for e in entries {
        let v = e.value;
        let Some(kind) = v.at("type").as_str() else {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "a transcript entry ({}) without a string `type`; not imported",
                        v.type_name()
                    ),
                )
                .at(e.at)
                .kind("bad-entry"),
            );
            continue;
        };
        match kind {
            "user" | "assistant" => {}
            "system" => {
                keys.dropped_item(
                    "entry",
                    "type=system",
                    "hook and status notices that Claude Code shows in its UI; they are not sent to the model",
                    e.at,
                );
                continue;
            }
            "summary" => {
                keys.dropped_item(
                    "entry",
                    "type=summary",
                    "conversation titles for Claude Code's resume list; never sent to the model",
                    e.at,
                );
                continue;
            }
            "queue-operation" | "file-history-snapshot" | "progress" => {
                keys.dropped_item(
                    "entry",
                    &format!("type={kind}"),
                    "Claude Code's own bookkeeping entries; not messages",
                    e.at,
                );
                continue;
            }
            other => {
                out.problems.push(
                    Problem::lossy(
                        file,
                        format!("an entry of unknown type {other:?}; not imported"),
                    )
                    .at(e.at)
                    .kind("unknown-entry"),
                );
                continue;
            }
        }
        let uuid = v.at("uuid").as_str().map(str::to_string);
        let parent = v.at("parentUuid").as_str();
        if v.at("isSidechain").as_bool() == Some(true) {
            let g = match parent.and_then(|p| side_of.get(p)) {
                Some(g) => *g,
                None => {
                    if parent.is_some() {
                        out.problems.push(
                            Problem::lossy(
                                file,
                                "a sidechain entry whose parent is not in the file starts a sub-agent session of its own",
                            )
                            .at(e.at)
                            .kind("orphan-entry"),
                        );
                    }
                    groups.push(Group {
                        entries: Vec::new(),
                        sidechain: true,
                    });
                    groups.len() - 1
                }
            };
            if let Some(u) = uuid {
                side_of.insert(u, g);
            }
            groups[g].entries.push(e);
        } else {
            let continues = v.at("isCompactSummary").as_bool() == Some(true) || parent.is_some();
            let g = match main {
                Some(g) if continues || groups[g].entries.is_empty() => g,
                _ => {
                    groups.push(Group {
                        entries: Vec::new(),
                        sidechain: false,
                    });
                    groups.len() - 1
                }
            };
            main = Some(g);
            groups[g].entries.push(e);
        }
    }
    groups
}

/// Builds one session from its entries.
fn build(
    file: &Path,
    id: &str,
    g: &Group,
    parent: Option<String>,
    task_calls: &BTreeMap<String, (String, String)>,
    keys: &mut Unmapped,
    out: &mut Import,
) -> Option<recap_core::Session> {
    let first = g.entries.first()?;
    let mut conv = Conversation::new(file, id.to_string(), first.at);
    let mut envelope: BTreeMap<&str, Vec<&J>> = BTreeMap::new();
    let mut models: Vec<String> = Vec::new();
    let mut session_ids: Vec<String> = Vec::new();
    let mut compactions: Vec<Json> = Vec::new();
    // Where the agent started its history over: (turns completed, summary's index).
    let mut restarts: Vec<Json> = Vec::new();
    // The message id of the response the last turn holds.
    let mut open_response: Option<String> = None;
    let known = known_entry_keys();
    for e in &g.entries {
        let v = e.value;
        keys.unknown("entry", v, &known, e.at);
        keys.dropped("entry", v, &DROPPED_ENTRY_KEYS, e.at);
        for key in ENVELOPE {
            if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
                let list = envelope.entry(key).or_default();
                if !list.contains(&x) {
                    list.push(x);
                }
            }
        }
        if let Some(s) = v.at("sessionId").as_str()
            && !session_ids.iter().any(|x| x == s)
        {
            session_ids.push(s.to_string());
        }
        let m = v.at("message");
        let place = Place {
            name: "entry.message",
            at: e.at,
        };
        keys.unknown(
            "entry.message",
            m,
            &[
                "role",
                "content",
                "id",
                "type",
                "model",
                "usage",
                "stop_reason",
                "stop_sequence",
                "container",
            ],
            e.at,
        );
        keys.dropped(
            "entry.message",
            m,
            &[
                ("stop_reason", "why the provider stopped generating"),
                ("stop_sequence", "the stop sequence that ended the response"),
                ("container", "the provider's code-execution container"),
            ],
            e.at,
        );
        match v.at("type").as_str() {
            Some("assistant") => {
                let model = m.at("model").as_str().unwrap_or("");
                if model == "<synthetic>" || v.at("isApiErrorMessage").as_bool() == Some(true) {
                    let text =
                        crate::messages::content_text(&mut conv, keys, place, m.at("content"))
                            .unwrap_or_default();
                    conv.lossy(
                        e.at,
                        "synthetic-response",
                        format!(
                            "Claude Code's own notice in place of a model response ({:?}); not a turn",
                            first_line(&text)
                        ),
                    );
                    continue;
                }
                if !model.is_empty() && !models.iter().any(|x| x == model) {
                    models.push(model.to_string());
                }
                let mut r: Response = anthropic_response(&mut conv, keys, place, m.at("content"));
                r.usage = m.at("usage").as_object().map(to_map);
                let message_id = m.at("id").as_str().map(str::to_string);
                let same = message_id.is_some() && message_id == open_response && conv.has_turns();
                if same {
                    conv.extend_assistant(r, e.at);
                } else {
                    let before = conv.turn_count();
                    conv.assistant(r, e.at);
                    if conv.turn_count() > before {
                        open_response = message_id;
                    }
                }
            }
            _ => {
                if v.at("isCompactSummary").as_bool() == Some(true) {
                    compactions.push(Json::from(conv.turn_count()));
                    // A summary that opens the transcript is the mission: nothing to
                    // start over from.
                    if conv.has_turns() {
                        restarts.push(serde_json::json!({
                            "after_turns": conv.turn_count(),
                            "observation": conv.observation_count(),
                        }));
                    }
                }
                let parts = anthropic_user_parts(&mut conv, keys, place, m.at("content"));
                feed_user_parts(&mut conv, parts, e.at);
            }
        }
    }
    conv.session_lossy(
        "no-system-prompt",
        "Claude Code does not write its system prompt or tool schemas into transcripts; system_prompt is empty and tools unknown",
    );
    let meta = &mut conv.meta;
    meta.insert("source".into(), Json::from("claude-code"));
    for (key, values) in envelope {
        meta.insert(
            key.to_string(),
            one_or_list(values.into_iter().map(J::to_json).collect()),
        );
    }
    match session_ids.len() {
        0 => {}
        1 => {}
        _ => {
            meta.insert(
                "session_ids".into(),
                Json::Array(session_ids.into_iter().map(Json::from).collect()),
            );
        }
    }
    match models.len() {
        0 => {}
        1 => {
            meta.insert("model".into(), Json::from(models.remove(0)));
        }
        _ => {
            meta.insert(
                "models".into(),
                Json::Array(models.into_iter().map(Json::from).collect()),
            );
        }
    }
    if !compactions.is_empty() {
        meta.insert("compactions".into(), Json::Array(compactions));
    }
    // Claude Code sends its whole history at every call, started over at each of its
    // own compactions: what the `recorded` pseudo-strategy replays.
    let mut record = Map::new();
    record.insert("sent".into(), Json::from("history"));
    if !restarts.is_empty() {
        record.insert("restarts".into(), Json::Array(restarts));
    }
    meta.insert(
        recap_core::session::RECORDED_CONTEXT.into(),
        Json::Object(record),
    );

    if g.sidechain {
        meta.insert("sidechain".into(), Json::Bool(true));
        if let Some(p) = parent {
            meta.insert("sidechain_of".into(), Json::from(p));
        }
        if let Some((session, call)) = first_text(g).and_then(|t| task_calls.get(&t)) {
            let mut link = Map::new();
            link.insert("session".into(), Json::from(session.as_str()));
            link.insert("tool_call_id".into(), Json::from(call.as_str()));
            meta.insert("task_call".into(), Json::Object(link));
        }
    }
    conv.finish("claude-code", &mut out.problems)
}

/// The text of a sidechain's first user message (the prompt the Task tool sent).
fn first_text(g: &Group) -> Option<String> {
    let m = g.entries.first()?.value.at("message");
    match m.at("content") {
        J::Str(s) => Some(s.to_string()),
        J::Arr(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.at("text").as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn one_or_list(mut values: Vec<Json>) -> Json {
    if values.len() == 1 {
        values.remove(0)
    } else {
        Json::Array(values)
    }
}

fn known_entry_keys() -> Vec<&'static str> {
    let mut k: Vec<&str> = ENTRY_KEYS.to_vec();
    k.extend(DROPPED_ENTRY_KEYS.iter().map(|(name, _)| *name));
    k
}
