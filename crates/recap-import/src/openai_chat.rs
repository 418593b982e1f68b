//! Generic OpenAI chat-completions transcripts → chat-form sessions (SPEC 11.1).
//!
//! A file holds conversations: a JSON array of them, JSON Lines (one per line), or a
//! single one. A conversation is a bare message list, or an object with the list under
//! `messages` (else in the one field holding a list of `{role, …}` objects); `tools`
//! become the session's tools, a request log's `response` its final turn, and its other
//! fields go to `meta`. docs/importers.md has the whole mapping.

use crate::conversation::Conversation;
use crate::messages::{Place, content_text, openai_message, openai_response, openai_tools};
use crate::ojson::{J, to_map};
use crate::problem::{At, Problem};
use crate::source::{Doc, Located};
use crate::unmapped::Unmapped;
use crate::{Import, Options};
use std::path::Path;

/// Whether a value is a message: an object with a string `role`.
pub(crate) fn is_message(v: &J) -> bool {
    v.at("role").as_str().is_some()
}

/// Whether a value is a non-empty list of messages.
pub(crate) fn is_message_list(v: &J) -> bool {
    v.as_array()
        .is_some_and(|items| !items.is_empty() && items.iter().all(is_message))
}

/// One conversation of a file: where it is, its value, and the lines of its messages
/// when the file shows them.
struct Record<'a> {
    at: At,
    value: &'a J<'a>,
    message_lines: &'a [usize],
}

/// Imports every conversation of a parsed file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, _opts: &Options, out: &mut Import) {
    let stem = crate::source::stem(file);
    let mut keys = Unmapped::default();
    let whole;
    let lines_of_items: Vec<usize>;
    let records: Vec<Record> = match doc {
        Doc::Lines(items) => items
            .iter()
            .map(|l| Record {
                at: At::line(l.line),
                value: &l.value,
                message_lines: &[],
            })
            .collect(),
        Doc::Array(items) if !items.is_empty() && items.iter().all(|l| is_message(&l.value)) => {
            // A top-level list of messages is one bare conversation.
            whole = J::Arr(items.iter().map(|l| l.value.clone()).collect());
            lines_of_items = items.iter().map(|l| l.line).collect();
            vec![Record {
                at: At::new(items[0].line.saturating_sub(1).max(1), Some(1)),
                value: &whole,
                message_lines: &lines_of_items,
            }]
        }
        Doc::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, l)| Record {
                at: At::new(l.line, Some(i + 1)),
                value: &l.value,
                message_lines: &[],
            })
            .collect(),
        Doc::Object(members) => {
            whole = crate::source::object_of(members);
            let messages = members.iter().find(|m| m.key == "messages");
            vec![Record {
                at: At::new(members.first().map_or(1, |m| m.line), Some(1)),
                value: &whole,
                message_lines: messages.map_or(&[][..], |m| m.item_lines.as_slice()),
            }]
        }
        Doc::Other(Some(Located { line, value })) => {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "expected conversations (a message list or an object holding one), got {}",
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
    for r in records {
        import_conversation(file, &stem, r, &mut keys, out);
    }
    out.problems.extend(keys.into_problems(file));
}

/// The message list of a conversation and the name of the field holding it.
fn message_list<'v, 'a>(value: &'v J<'a>) -> Result<(&'v [J<'a>], Option<&'v str>), String> {
    match value {
        J::Arr(items) => Ok((items, None)),
        J::Obj(pairs) => match value.get("messages") {
            Some(J::Arr(items)) => Ok((items, Some("messages"))),
            Some(other) => Err(format!(
                "`messages` must be a list of messages, got {}",
                other.type_name()
            )),
            None => {
                let found: Vec<&str> = pairs
                    .iter()
                    .filter(|(_, v)| is_message_list(v))
                    .map(|(k, _)| k.as_ref())
                    .collect();
                match found.as_slice() {
                    [one] => Ok((value.at(one).as_array().unwrap_or(&[]), Some(one))),
                    [] => Err(
                        "no message list: expected `messages`, or one field holding a list of {role, content} objects"
                            .into(),
                    ),
                    many => Err(format!(
                        "several fields hold message lists ({}); expected exactly one, or `messages`",
                        many.join(", ")
                    )),
                }
            }
        },
        other => Err(format!(
            "expected a conversation (a message list or an object holding one), got {}",
            other.type_name()
        )),
    }
}

fn import_conversation(file: &Path, stem: &str, r: Record, keys: &mut Unmapped, out: &mut Import) {
    let (messages, field) = match message_list(r.value) {
        Ok(x) => x,
        Err(msg) => {
            out.problems.push(
                Problem::skipped(file, msg)
                    .at(r.at)
                    .kind("not-a-conversation"),
            );
            return;
        }
    };
    let n = r.at.record.unwrap_or(r.at.line);
    let id = match r.value.get("id") {
        Some(J::Str(s)) if !s.is_empty() => s.to_string(),
        Some(J::Num(num)) => num.to_string(),
        _ => format!("{stem}:{n}"),
    };
    let mut conv = Conversation::new(file, id, r.at);
    let mut response = None;
    if let Some(pairs) = r.value.as_object() {
        for (k, v) in pairs {
            if Some(k.as_ref()) == field {
                continue;
            }
            if k == "tools" && v.as_array().is_some() {
                conv.tools = openai_tools(v);
                continue;
            }
            if k == "response" && field.is_some() && !v.is_null() {
                response = Some(v);
                continue;
            }
            conv.meta.insert(k.to_string(), v.to_json());
        }
    }
    for (i, m) in messages.iter().enumerate() {
        let line = r.message_lines.get(i).copied().unwrap_or(r.at.line);
        let place = Place {
            name: "messages[]",
            at: At::new(line, r.at.record),
        };
        openai_message(&mut conv, keys, place, m, &[]);
    }
    if let Some(response) = response {
        final_response(&mut conv, keys, At::new(r.at.line, r.at.record), response);
    }
    if let Some(s) = conv.finish("openai-chat", &mut out.problems) {
        out.sessions.push(s);
    }
}

/// A request log's `response`: a chat completion (`choices[0].message`, with the
/// response's `usage`) or an assistant message. It is the final turn; the response's
/// other fields go to `meta.response`. A response that is neither stays in
/// `meta.response` and is a problem (`response-not-a-turn`).
fn final_response(conv: &mut Conversation, keys: &mut Unmapped, at: At, response: &J) {
    let place = Place {
        name: "response",
        at,
    };
    let choices = response.at("choices").as_array().unwrap_or(&[]);
    let message = match choices.first() {
        Some(choice) => choice.at("message"),
        None => response,
    };
    if message.at("role").as_str() != Some("assistant") {
        conv.meta.insert("response".into(), response.to_json());
        conv.lossy(
            at,
            "response-not-a-turn",
            format!(
                "`response` holds no assistant message (expected a chat completion with `choices[0].message`, or a message with role assistant), so it is not the final turn; kept in meta.response{}",
                match response.get("error") {
                    Some(e) => format!(" (the log records an error: {})", e.to_compact()),
                    None => String::new(),
                }
            ),
        );
        return;
    }
    if choices.len() > 1 {
        conv.lossy(
            at,
            "extra-choices",
            format!(
                "the response has {} choices; the first is the final turn, the others are not imported",
                choices.len()
            ),
        );
    }
    let place = Place {
        name: if choices.is_empty() {
            "response"
        } else {
            "response.choices[].message"
        },
        ..place
    };
    keys.unknown(place.name, message, &OPENAI_RESPONSE_MESSAGE_KEYS, at);
    keys.dropped(
        place.name,
        message,
        &[
            (
                "annotations",
                "provider annotations of the response (citations…)",
            ),
            ("audio", "audio output; recap carries text only"),
        ],
        at,
    );
    let text = content_text(conv, keys, place, message.at("content"));
    let mut r = openai_response(conv, keys, place, message, text);
    if r.usage.is_none() {
        r.usage = response.at("usage").as_object().map(to_map);
    }
    conv.assistant(r, at);
    // What is left of the response: its id, model, finish reason…
    if !choices.is_empty() {
        let mut rest = serde_json::Map::new();
        for (k, v) in response.as_object().unwrap_or(&[]) {
            if k != "choices" && k != "usage" {
                rest.insert(k.to_string(), v.to_json());
            }
        }
        if let Some(reason) = choices[0].get("finish_reason").filter(|r| !r.is_null()) {
            rest.insert("finish_reason".into(), reason.to_json());
        }
        conv.meta
            .insert("response".into(), serde_json::Value::Object(rest));
    }
}

/// The keys of a response's assistant message that are mapped.
const OPENAI_RESPONSE_MESSAGE_KEYS: [&str; 10] = [
    "role",
    "content",
    "tool_calls",
    "function_call",
    "reasoning_content",
    "reasoning",
    "refusal",
    "usage",
    "annotations",
    "audio",
];
