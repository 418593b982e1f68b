//! Anthropic Messages API conversations → chat-form sessions (SPEC 11.1).
//!
//! A file holds conversations as openai-chat files do (a JSON array of them, JSON
//! Lines, or one). A conversation is an object with `messages` (the request as sent:
//! top-level `system`, `tools`, `model`…), optionally with the final `response` (an
//! assistant message object as the API returns it), or a bare message list. Content
//! blocks: `text`, `thinking` (→ reasoning), `tool_use` (→ calls, `input` written back
//! compactly in recorded key order), `tool_result` (→ tool observations, `is_error`).

use crate::conversation::Conversation;
use crate::messages::{
    Place, anthropic_message_keys, anthropic_response, anthropic_tools, anthropic_user_parts,
    content_text, feed_user_parts,
};
use crate::ojson::{J, to_map};
use crate::openai_chat::is_message;
use crate::problem::{At, Problem};
use crate::source::{Doc, Located};
use crate::unmapped::Unmapped;
use crate::{Import, Options};
use std::path::Path;

/// Imports every conversation of a parsed file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, _opts: &Options, out: &mut Import) {
    let stem = crate::source::stem(file);
    let mut keys = Unmapped::default();
    let bare;
    let object;
    let records: Vec<(At, &J, &[usize])> = match doc {
        Doc::Lines(items) => items
            .iter()
            .map(|l| (At::line(l.line), &l.value, &[][..]))
            .collect(),
        Doc::Array(items) if !items.is_empty() && items.iter().all(|l| is_message(&l.value)) => {
            bare = (
                J::Arr(items.iter().map(|l| l.value.clone()).collect()),
                items.iter().map(|l| l.line).collect::<Vec<_>>(),
            );
            vec![(At::new(items[0].line, Some(1)), &bare.0, bare.1.as_slice())]
        }
        Doc::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, l)| (At::new(l.line, Some(i + 1)), &l.value, &[][..]))
            .collect(),
        Doc::Object(members) => {
            object = crate::source::object_of(members);
            let lines = members
                .iter()
                .find(|m| m.key == "messages")
                .map_or(&[][..], |m| m.item_lines.as_slice());
            vec![(
                At::new(members.first().map_or(1, |m| m.line), Some(1)),
                &object,
                lines,
            )]
        }
        Doc::Other(Some(Located { line, value })) => {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "expected Messages API conversations (objects with `messages`, or message lists), got {}",
                        value.type_name()
                    ),
                )
                .at_line(*line)
                .kind("not-a-conversation"),
            );
            Vec::new()
        }
        Doc::Other(None) => Vec::new(),
    };
    for (at, value, lines) in records {
        import_conversation(file, &stem, at, value, lines, &mut keys, out);
    }
    out.problems.extend(keys.into_problems(file));
}

fn import_conversation(
    file: &Path,
    stem: &str,
    at: At,
    value: &J,
    lines: &[usize],
    keys: &mut Unmapped,
    out: &mut Import,
) {
    let messages = match value {
        J::Arr(items) => items.as_slice(),
        J::Obj(_) => match value.get("messages") {
            Some(J::Arr(items)) => items.as_slice(),
            Some(other) => {
                out.problems.push(
                    Problem::skipped(
                        file,
                        format!(
                            "`messages` must be a list of messages, got {}",
                            other.type_name()
                        ),
                    )
                    .at(at)
                    .kind("not-a-conversation"),
                );
                return;
            }
            None => {
                out.problems.push(
                    Problem::skipped(file, "no `messages` list: not a Messages API conversation")
                        .at(at)
                        .kind("not-a-conversation"),
                );
                return;
            }
        },
        other => {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "expected a conversation object or message list, got {}",
                        other.type_name()
                    ),
                )
                .at(at)
                .kind("not-a-conversation"),
            );
            return;
        }
    };
    let n = at.record.unwrap_or(at.line);
    let id = match value.get("id") {
        Some(J::Str(s)) if !s.is_empty() => s.to_string(),
        Some(J::Num(num)) => num.to_string(),
        _ => format!("{stem}:{n}"),
    };
    let mut conv = Conversation::new(file, id, at);
    let top = Place {
        name: "conversation",
        at,
    };
    if let Some(pairs) = value.as_object() {
        for (k, v) in pairs {
            match k.as_ref() {
                "messages" | "response" => {}
                "system" => {
                    if let Some(s) = content_text(&mut conv, keys, top, v) {
                        conv.system(s, at);
                    }
                }
                "tools" if v.as_array().is_some() => conv.tools = anthropic_tools(v),
                _ => {
                    conv.meta.insert(k.to_string(), v.to_json());
                }
            }
        }
    }
    for (i, m) in messages.iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or(at.line);
        let place = Place {
            name: "messages[]",
            at: At::new(line, at.record),
        };
        message(&mut conv, keys, place, m);
    }
    if let Some(r) = value.get("response").filter(|r| !r.is_null()) {
        let place = Place {
            name: "response",
            at,
        };
        message(&mut conv, keys, place, r);
    }
    if let Some(s) = conv.finish("anthropic-messages", &mut out.problems) {
        out.sessions.push(s);
    }
}

/// One message: a user message (text and tool results), an assistant message (its
/// blocks), or a `system` message some logs put in the list.
fn message(conv: &mut Conversation, keys: &mut Unmapped, place: Place, m: &J) {
    if !crate::messages::is_message_object(conv, place, m) {
        return;
    }
    anthropic_message_keys(
        keys,
        place,
        m,
        &[
            ("id", "the provider's message id; not part of the history"),
            (
                "model",
                "which model answered; per-message models have no place in a turn",
            ),
        ],
    );
    match m.at("role").as_str() {
        Some("user") => {
            let parts = anthropic_user_parts(conv, keys, place, m.at("content"));
            feed_user_parts(conv, parts, place.at);
        }
        Some("assistant") => {
            let mut r = anthropic_response(conv, keys, place, m.at("content"));
            r.usage = m.at("usage").as_object().map(to_map);
            conv.assistant(r, place.at);
        }
        Some("system") => {
            if let Some(s) = content_text(conv, keys, place, m.at("content")) {
                conv.system(s, place.at);
            }
        }
        Some(other) => conv.lossy(
            place.at,
            "unknown-role",
            format!("unknown role {other:?} (expected user or assistant); not imported"),
        ),
        None => conv.lossy(
            place.at,
            "bad-message",
            "a message without a string `role`; not imported",
        ),
    }
}
