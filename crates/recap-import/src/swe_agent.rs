//! SWE-agent trajectories (`.traj`) → chat-form sessions (SPEC 11.1).
//!
//! The session is the `history` the model saw: the system prompt, the task (the first
//! user message that is not a demonstration), then per step the assistant message and
//! what came back. Classic fenced-command and `<command>` trajectories have no tool
//! calls: the command is in the assistant text and every later user message is the
//! environment's output (`environment: true`, by SWE-agent's format definition).
//! Function-calling trajectories carry `tool_calls`, answered by `tool` messages with
//! `tool_call_ids`. Demonstrations (`is_demo`) are kept out of the mission, in
//! `meta.demonstrations`. docs/importers.md has the whole mapping.

use crate::conversation::Conversation;
use crate::messages::{Place, content_text, openai_response};
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::source::{Doc, Member};
use crate::unmapped::Unmapped;
use crate::{Import, Options};
use serde_json::Value as Json;
use std::path::Path;

/// Keys of a history message that are mapped or checked.
const MESSAGE_KEYS: [&str; 10] = [
    "role",
    "content",
    "agent",
    "message_type",
    "thought",
    "action",
    "tool_calls",
    "tool_call_ids",
    "is_demo",
    "cache_control",
];

/// Imports the trajectory of a parsed `.traj` file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, _opts: &Options, out: &mut Import) {
    let members: &[Member] = match doc {
        Doc::Object(members) => members,
        Doc::Other(None) => return,
        _ => {
            out.problems.push(
                Problem::skipped(file, "expected one trajectory object (with `history`)")
                    .at_line(1)
                    .kind("not-a-trajectory"),
            );
            return;
        }
    };
    let Some(history) = members.iter().find(|m| m.key == "history") else {
        out.problems.push(
            Problem::skipped(file, "no `history` list: not a SWE-agent trajectory")
                .at_line(members.first().map_or(1, |m| m.line))
                .kind("not-a-trajectory"),
        );
        return;
    };
    let Some(messages) = history.value.as_array() else {
        out.problems.push(
            Problem::skipped(
                file,
                format!(
                    "`history` is {}, expected a list of messages",
                    history.value.type_name()
                ),
            )
            .at_line(history.line)
            .kind("not-a-trajectory"),
        );
        return;
    };
    let mut keys = Unmapped::default();
    let at = At::line(members.first().map_or(1, |m| m.line));
    let mut conv = Conversation::new(file, session_id(file), at);
    for m in members {
        match m.key.as_str() {
            "history" => {}
            "trajectory" => keys.dropped_item(
                "trajectory",
                "steps",
                "SWE-agent's per-step view (action, observation, response, thought, state, execution_time, message snapshots); the history holds the messages, the steps' state and timing are not carried",
                At::line(m.line),
            ),
            key => {
                conv.meta.insert(key.to_string(), m.value.to_json());
            }
        }
    }
    run_input_tokens(&mut conv);
    let mut agents: Vec<Json> = Vec::new();
    let mut demos: Vec<Json> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let line = history.item_lines.get(i).copied().unwrap_or(history.line);
        let place = Place {
            name: "history[]",
            at: At::line(line),
        };
        keys.unknown(place.name, m, &MESSAGE_KEYS, place.at);
        keys.dropped(
            place.name,
            m,
            &[(
                "cache_control",
                "a prompt-caching hint for the provider, not content",
            )],
            place.at,
        );
        if let Some(a) = m.get("agent").map(J::to_json)
            && !agents.contains(&a)
        {
            agents.push(a);
        }
        let text = content_text(&mut conv, &mut keys, place, m.at("content"));
        if m.at("is_demo").as_bool() == Some(true) {
            demos.push(Json::from(text.unwrap_or_default()));
            continue;
        }
        match m.at("role").as_str() {
            Some("system") => conv.system(text.unwrap_or_default(), place.at),
            // After the task, every user message is the environment's output.
            Some("user") => conv.user(text.unwrap_or_default(), true, place.at),
            Some("assistant") => {
                check_derived(&mut conv, m, text.as_deref(), place.at);
                let r = openai_response(&mut conv, &mut keys, place, m, text);
                conv.assistant(r, place.at);
            }
            Some("tool") => tool_message(&mut conv, m, text, place.at),
            Some(other) => conv.lossy(
                place.at,
                "unknown-role",
                format!("unknown role {other:?}; not imported"),
            ),
            None => conv.lossy(
                place.at,
                "bad-message",
                "a message without a string `role`; not imported",
            ),
        }
    }
    match agents.len() {
        0 => {}
        1 => {
            conv.meta.insert("agent".into(), agents.remove(0));
        }
        _ => {
            conv.meta.insert("agent".into(), Json::Array(agents));
        }
    }
    if !demos.is_empty() {
        conv.meta
            .insert("demonstrations".into(), Json::Array(demos));
    }
    if let Some(s) = conv.finish("swe-agent", &mut out.problems) {
        out.sessions.push(s);
    }
    out.problems.extend(keys.into_problems(file));
}

/// SWE-agent records only the run's total input tokens; the harness compares
/// full-history with it (run-level fidelity). Scripted replays made no API calls and
/// record 0: nothing to compare.
fn run_input_tokens(conv: &mut Conversation) {
    let stats = conv.meta.get("info").and_then(|i| i.get("model_stats"));
    let sent = stats
        .and_then(|m| m.get("tokens_sent"))
        .and_then(Json::as_u64);
    let api_calls = stats
        .and_then(|m| m.get("api_calls"))
        .and_then(Json::as_u64);
    if let (Some(sent), Some(calls)) = (sent, api_calls)
        && sent > 0
        && calls > 0
    {
        conv.meta
            .insert("recorded_input_tokens_total".into(), Json::from(sent));
    }
}

/// A function-calling tool message: the result of its first `tool_call_ids` entry.
fn tool_message(conv: &mut Conversation, m: &J, text: Option<String>, at: At) {
    let ids: Vec<&str> = match m.at("tool_call_ids") {
        J::Arr(ids) => ids.iter().filter_map(J::as_str).collect(),
        J::Str(id) => vec![id.as_ref()],
        _ => Vec::new(),
    };
    if ids.len() > 1 {
        conv.lossy(
            at,
            "multi-id-result",
            format!(
                "one tool message answers {} calls; it is kept as the result of the first, {:?}",
                ids.len(),
                ids[0]
            ),
        );
    }
    let id = ids
        .first()
        .copied()
        .or_else(|| m.at("tool_call_id").as_str());
    if id.is_none() {
        conv.lossy(at, "no-call-id", "a tool message without `tool_call_ids`");
    }
    conv.tool_result(id, None, text.unwrap_or_default(), false, at);
}

/// `thought` and `action` are SWE-agent's parse of the response; they are not carried,
/// so check that the content (or, for function calling, the calls) holds them.
fn check_derived(conv: &mut Conversation, m: &J, content: Option<&str>, at: At) {
    let content = content.unwrap_or("");
    if let Some(thought) = m.at("thought").as_str()
        && !content.contains(thought.trim())
    {
        conv.lossy(
            at,
            "derived-not-in-content",
            "the message's `thought` is not part of its content; only the content is carried",
        );
    }
    let has_calls = m.at("tool_calls").as_array().is_some_and(|c| !c.is_empty());
    if let Some(action) = m.at("action").as_str()
        && !has_calls
        && !content.contains(action.trim())
    {
        conv.lossy(
            at,
            "derived-not-in-content",
            "the message's `action` is not part of its content; only the content is carried",
        );
    }
}

/// The run directory and the instance (`<run>/<instance>`): SWE-agent names every
/// trajectory of a run after its instance, so the directory tells runs apart.
fn session_id(file: &Path) -> String {
    let stem = crate::source::stem(file);
    match file
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
    {
        Some(dir) if !dir.is_empty() => format!("{dir}/{stem}"),
        _ => stem,
    }
}
