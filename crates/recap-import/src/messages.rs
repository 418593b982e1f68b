//! The one chat-message parser of the importers: OpenAI chat-completions messages and
//! Anthropic Messages API messages, as logs record them, fed into a [`Conversation`].
//! openai-chat, anthropic-messages, claude-code, swe-agent (function calling),
//! openhands (the recorded model responses) and tau2 all read their messages here.
//!
//! Text parts and blocks of one message are joined by a newline; an image becomes
//! `[image]` (other media `[audio]`, `[file]`, `[document]`) and a lossy problem.

use crate::conversation::{Call, Conversation, Response};
use crate::ojson::{J, to_map};
use crate::problem::At;
use crate::unmapped::Unmapped;
use recap_core::ToolSpec;
use std::collections::BTreeMap;

/// Where a message is, for counting its keys: its place name (`messages[]`) and line.
#[derive(Clone, Copy)]
pub(crate) struct Place<'a> {
    pub name: &'a str,
    pub at: At,
}

/// The arguments' text: a string as written, an object or other value compactly with
/// keys in recorded order, nothing as empty.
pub(crate) fn arguments_text(args: Option<&J>) -> String {
    match args {
        None | Some(J::Null) => String::new(),
        Some(J::Str(s)) => s.to_string(),
        Some(other) => other.to_compact(),
    }
}

/// The placeholder for a non-text part, by its type.
fn media_placeholder(kind: &str) -> Option<&'static str> {
    match kind {
        "image" | "image_url" | "input_image" => Some("[image]"),
        "input_audio" | "audio" => Some("[audio]"),
        "file" | "input_file" => Some("[file]"),
        "document" => Some("[document]"),
        _ => None,
    }
}

/// Text of a content value that is a string, null, or a list of parts (OpenAI `{type:
/// "text", text}` parts and Anthropic text blocks alike). Media parts become
/// placeholders with a lossy problem; other parts are counted as not carried.
pub(crate) fn content_text(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    content: &J,
) -> Option<String> {
    match content {
        J::Null => None,
        J::Str(s) => Some(s.to_string()),
        J::Arr(parts) => {
            let mut texts: Vec<String> = Vec::with_capacity(parts.len());
            for part in parts {
                match part {
                    J::Str(s) => texts.push(s.to_string()),
                    J::Obj(_) => {
                        let kind = part.at("type").as_str().unwrap_or("");
                        if let Some(t) = part.at("text").as_str() {
                            keys.unknown(
                                &format!("{}.content[]", place.name),
                                part,
                                &["type", "text", "cache_control", "cache_prompt", "citations"],
                                place.at,
                            );
                            keys.dropped(
                                &format!("{}.content[]", place.name),
                                part,
                                &[
                                    (
                                        "cache_control",
                                        "a prompt-caching hint for the provider, not content",
                                    ),
                                    (
                                        "cache_prompt",
                                        "OpenHands' prompt-caching hint for the part, not content",
                                    ),
                                    (
                                        "citations",
                                        "source citations of a text block; the text itself is kept",
                                    ),
                                ],
                                place.at,
                            );
                            texts.push(t.to_string());
                        } else if let Some(ph) = media_placeholder(kind) {
                            conv.lossy(
                                place.at,
                                "media",
                                format!(
                                    "a {kind:?} part is replaced by {ph} (recap carries text only)"
                                ),
                            );
                            texts.push(ph.to_string());
                        } else {
                            let kind = if kind.is_empty() { "untyped" } else { kind };
                            conv.lossy(
                                place.at,
                                "unknown-part",
                                format!(
                                    "a content part of type {kind:?} is not text; not carried over"
                                ),
                            );
                        }
                    }
                    other => conv.lossy(
                        place.at,
                        "unknown-part",
                        format!(
                            "a content part that is {}; not carried over",
                            other.type_name()
                        ),
                    ),
                }
            }
            Some(texts.join("\n"))
        }
        other => {
            conv.lossy(
                place.at,
                "bad-content",
                format!(
                    "`content` is {}, expected a string or a list of parts; not carried over",
                    other.type_name()
                ),
            );
            None
        }
    }
}

/// The keys of an OpenAI message this parser maps.
const OPENAI_MESSAGE_KEYS: [&str; 11] = [
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "reasoning_content",
    "reasoning",
    "function_call",
    "usage",
    "refusal",
    "is_error",
];

/// Whether `m` is a message object; when it is not, a lossy problem says so and the
/// caller leaves it out (both message formats).
pub(crate) fn is_message_object(conv: &mut Conversation, place: Place, m: &J) -> bool {
    if m.as_object().is_some() {
        return true;
    }
    conv.lossy(
        place.at,
        "bad-message",
        format!(
            "expected a message object, got {}; not imported",
            m.type_name()
        ),
    );
    false
}

/// Feeds one OpenAI chat-completions message into the conversation. Keys outside
/// [`OPENAI_MESSAGE_KEYS`] and `extra_known` are counted as unknown.
pub(crate) fn openai_message(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    m: &J,
    extra_known: &[&str],
) {
    if !is_message_object(conv, place, m) {
        return;
    }
    let mut known: Vec<&str> = OPENAI_MESSAGE_KEYS.to_vec();
    known.extend_from_slice(extra_known);
    keys.unknown(place.name, m, &known, place.at);
    let Some(role) = m.at("role").as_str() else {
        conv.lossy(
            place.at,
            "bad-message",
            "a message without a string `role`; not imported",
        );
        return;
    };
    if !matches!(m.at("content"), J::Null | J::Str(_) | J::Arr(_)) {
        conv.lossy(
            place.at,
            "bad-content",
            format!(
                "`content` is {}, expected a string or a list of parts; message not imported",
                m.at("content").type_name()
            ),
        );
        return;
    }
    let text = content_text(conv, keys, place, m.at("content"));
    if role != "tool" && role != "function" {
        keys.dropped(
            place.name,
            m,
            &[(
                "name",
                "the chat form keeps names only on tool results; a participant name is not carried",
            )],
            place.at,
        );
    }
    match role {
        "system" | "developer" => conv.system(text.unwrap_or_default(), place.at),
        // The format does not say whose a user message is: a reply, never environment.
        "user" => conv.user(text.unwrap_or_default(), false, place.at),
        "assistant" => {
            let r = openai_response(conv, keys, place, m, text);
            conv.assistant(r, place.at);
        }
        "tool" => {
            let id = m.at("tool_call_id").as_str();
            if id.is_none() {
                conv.lossy(
                    place.at,
                    "no-call-id",
                    "a tool message without a string `tool_call_id`",
                );
            }
            let is_error = m.at("is_error").as_bool().unwrap_or(false);
            let name = m.at("name").as_str().map(str::to_string);
            conv.tool_result(id, name, text.unwrap_or_default(), is_error, place.at);
        }
        "function" => {
            let name = m.at("name").as_str().map(str::to_string);
            conv.tool_result(None, name, text.unwrap_or_default(), false, place.at);
        }
        other => conv.lossy(
            place.at,
            "unknown-role",
            format!(
                "unknown role {other:?} (expected system, developer, user, assistant, tool or function); not imported"
            ),
        ),
    }
}

/// The response of an OpenAI assistant message: content (or its refusal), tool calls
/// (and the legacy `function_call`), reasoning, usage.
pub(crate) fn openai_response(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    m: &J,
    text: Option<String>,
) -> Response {
    let mut content = text;
    if let Some(refusal) = m.at("refusal").as_str() {
        match &content {
            None => content = Some(refusal.to_string()),
            Some(_) => conv.lossy(
                place.at,
                "refusal",
                "the message has both content and a `refusal`; the refusal is not carried",
            ),
        }
    }
    let mut calls = Vec::new();
    match m.at("tool_calls") {
        J::Null => {}
        J::Arr(list) => {
            for c in list {
                if let Some(call) = openai_call(conv, keys, place, c) {
                    calls.push(call);
                }
            }
        }
        other => conv.lossy(
            place.at,
            "bad-tool-calls",
            format!(
                "`tool_calls` is {}, expected a list; not carried",
                other.type_name()
            ),
        ),
    }
    if let Some(fc) = m.get("function_call").filter(|f| !f.is_null()) {
        match fc.at("name").as_str() {
            Some(name) => calls.push(Call {
                id: None,
                name: name.to_string(),
                arguments: arguments_text(fc.get("arguments")),
            }),
            None => conv.lossy(
                place.at,
                "bad-tool-call",
                "`function_call` has no string `name`; not carried",
            ),
        }
    }
    let reasoning = m
        .at("reasoning_content")
        .as_str()
        .or_else(|| m.at("reasoning").as_str())
        .map(str::to_string);
    if m.at("reasoning_content").as_str().is_some() {
        keys.dropped(
            place.name,
            m,
            &[(
                "reasoning",
                "a second reasoning text beside `reasoning_content`, which is the one kept",
            )],
            place.at,
        );
    }
    let usage = m.at("usage").as_object().map(to_map);
    Response {
        content,
        calls,
        reasoning,
        usage,
    }
}

/// One OpenAI tool call `{id, type: "function", function: {name, arguments}}`; also the
/// flat `{id, name, arguments}` some frameworks write.
pub(crate) fn openai_call(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    c: &J,
) -> Option<Call> {
    let call_place = format!("{}.tool_calls[]", place.name);
    keys.unknown(
        &call_place,
        c,
        &["id", "type", "function", "index", "name", "arguments"],
        place.at,
    );
    let f = c.get("function").unwrap_or(c);
    if c.get("function").is_some() {
        keys.unknown(
            &format!("{call_place}.function"),
            f,
            &["name", "arguments"],
            place.at,
        );
    }
    let Some(name) = f.at("name").as_str() else {
        conv.lossy(
            place.at,
            "bad-tool-call",
            "a tool call without a string `function.name`; not carried",
        );
        return None;
    };
    Some(Call {
        id: c.at("id").as_str().map(str::to_string),
        name: name.to_string(),
        arguments: arguments_text(f.get("arguments")),
    })
}

/// OpenAI `tools` (`[{type: "function", function: {name, description, parameters}}]`,
/// or the flat form) as session tools.
pub(crate) fn openai_tools(list: &J) -> BTreeMap<String, ToolSpec> {
    let mut tools = BTreeMap::new();
    for t in list.as_array().unwrap_or(&[]) {
        let f = t.get("function").unwrap_or(t);
        if let Some(name) = f.at("name").as_str() {
            tools.insert(
                name.to_string(),
                ToolSpec {
                    signature: None,
                    description: f.at("description").as_str().map(str::to_string),
                    parameters: f.get("parameters").filter(|p| !p.is_null()).map(J::to_json),
                },
            );
        }
    }
    tools
}

/// Anthropic `tools` (`[{name, description, input_schema}]`) as session tools.
pub(crate) fn anthropic_tools(list: &J) -> BTreeMap<String, ToolSpec> {
    let mut tools = BTreeMap::new();
    for t in list.as_array().unwrap_or(&[]) {
        if let Some(name) = t.at("name").as_str() {
            tools.insert(
                name.to_string(),
                ToolSpec {
                    signature: None,
                    description: t.at("description").as_str().map(str::to_string),
                    parameters: t
                        .get("input_schema")
                        .filter(|p| !p.is_null())
                        .map(J::to_json),
                },
            );
        }
    }
    tools
}

/// Keys of an Anthropic message object (a request message, or a response) that are
/// mapped or deliberately dropped.
const ANTHROPIC_MESSAGE_KEYS: [&str; 8] = [
    "role",
    "content",
    "id",
    "type",
    "model",
    "usage",
    "stop_reason",
    "stop_sequence",
];

/// Counts the keys of the Anthropic message object `m` that are not carried: unknown
/// ones, how generation stopped, and `dropped`, the keys the caller's format drops
/// (known as well).
pub(crate) fn anthropic_message_keys(
    keys: &mut Unmapped,
    place: Place,
    m: &J,
    dropped: &[(&str, &'static str)],
) {
    let mut known = ANTHROPIC_MESSAGE_KEYS.to_vec();
    known.extend(dropped.iter().map(|(k, _)| *k));
    keys.unknown(place.name, m, &known, place.at);
    keys.dropped(
        place.name,
        m,
        &[
            ("stop_reason", "why the provider stopped generating"),
            ("stop_sequence", "the stop sequence that ended the response"),
        ],
        place.at,
    );
    keys.dropped(place.name, m, dropped, place.at);
}

/// The response of an Anthropic assistant message's content: text blocks → content,
/// `thinking` → reasoning, `tool_use` → calls (input written compactly, keys in order).
pub(crate) fn anthropic_response(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    content: &J,
) -> Response {
    let blocks = match content {
        J::Str(s) => {
            return Response {
                content: Some(s.to_string()),
                ..Response::default()
            };
        }
        J::Null => return Response::default(),
        J::Arr(blocks) => blocks.as_slice(),
        other => {
            conv.lossy(
                place.at,
                "bad-content",
                format!(
                    "`content` is {}, expected a string or a list of blocks; not carried over",
                    other.type_name()
                ),
            );
            return Response::default();
        }
    };
    let block_place = format!("{}.content[]", place.name);
    let mut texts: Vec<String> = Vec::new();
    let mut thoughts: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for b in blocks {
        let kind = b.at("type").as_str().unwrap_or("");
        match kind {
            "text" => {
                keys.unknown(
                    &block_place,
                    b,
                    &["type", "text", "cache_control", "citations"],
                    place.at,
                );
                keys.dropped(
                    &block_place,
                    b,
                    &[
                        (
                            "cache_control",
                            "a prompt-caching hint for the provider, not content",
                        ),
                        (
                            "citations",
                            "source citations of a text block; the text itself is kept",
                        ),
                    ],
                    place.at,
                );
                texts.push(b.at("text").as_str().unwrap_or("").to_string());
            }
            "thinking" => {
                keys.unknown(
                    &block_place,
                    b,
                    &["type", "thinking", "signature"],
                    place.at,
                );
                keys.dropped(
                    &block_place,
                    b,
                    &[(
                        "signature",
                        "the provider's opaque check of the thinking text; the text itself is kept as reasoning",
                    )],
                    place.at,
                );
                thoughts.push(b.at("thinking").as_str().unwrap_or("").to_string());
            }
            "redacted_thinking" => conv.lossy(
                place.at,
                "redacted-thinking",
                "a redacted_thinking block (encrypted by the provider) has no text; not carried",
            ),
            "tool_use" => {
                keys.unknown(
                    &block_place,
                    b,
                    &["type", "id", "name", "input", "cache_control"],
                    place.at,
                );
                match b.at("name").as_str() {
                    Some(name) => calls.push(Call {
                        id: b.at("id").as_str().map(str::to_string),
                        name: name.to_string(),
                        arguments: arguments_text(Some(
                            b.get("input").unwrap_or(&J::Obj(Vec::new())),
                        )),
                    }),
                    None => conv.lossy(
                        place.at,
                        "bad-tool-call",
                        "a tool_use block without a string `name`; not carried",
                    ),
                }
            }
            other => {
                let other = if other.is_empty() { "untyped" } else { other };
                match media_placeholder(other) {
                    Some(ph) => {
                        conv.lossy(
                            place.at,
                            "media",
                            format!(
                                "a {other:?} block is replaced by {ph} (recap carries text only)"
                            ),
                        );
                        texts.push(ph.to_string());
                    }
                    None => conv.lossy(
                        place.at,
                        "unknown-block",
                        format!("a response block of type {other:?} is not carried over"),
                    ),
                }
            }
        }
    }
    Response {
        content: (!texts.is_empty()).then(|| texts.join("\n")),
        calls,
        reasoning: (!thoughts.is_empty()).then(|| thoughts.join("\n")),
        usage: None,
    }
}

/// What an Anthropic user message's content held, in order.
pub(crate) enum UserPart {
    Text(String),
    Result {
        id: Option<String>,
        content: String,
        is_error: bool,
    },
}

/// The parts of an Anthropic user message's content: runs of text blocks (joined by a
/// newline) and tool results, in block order.
pub(crate) fn anthropic_user_parts(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    content: &J,
) -> Vec<UserPart> {
    let blocks = match content {
        J::Arr(blocks) => blocks,
        other => {
            return content_text(conv, keys, place, other)
                .map(UserPart::Text)
                .into_iter()
                .collect();
        }
    };
    let block_place = format!("{}.content[]", place.name);
    let mut parts = Vec::new();
    let mut run: Vec<J> = Vec::new();
    let flush = |run: &mut Vec<J>,
                 parts: &mut Vec<UserPart>,
                 conv: &mut Conversation,
                 keys: &mut Unmapped| {
        if !run.is_empty() {
            let arr = J::Arr(std::mem::take(run));
            if let Some(t) = content_text(conv, keys, place, &arr) {
                parts.push(UserPart::Text(t));
            }
        }
    };
    for b in blocks {
        if b.at("type").as_str() == Some("tool_result") {
            flush(&mut run, &mut parts, conv, keys);
            keys.unknown(
                &block_place,
                b,
                &[
                    "type",
                    "tool_use_id",
                    "content",
                    "is_error",
                    "cache_control",
                ],
                place.at,
            );
            let result_place = Place {
                name: &format!("{block_place}.content"),
                at: place.at,
            };
            let text = content_text(conv, keys, result_place, b.at("content")).unwrap_or_default();
            parts.push(UserPart::Result {
                id: b.at("tool_use_id").as_str().map(str::to_string),
                content: text,
                is_error: b.at("is_error").as_bool().unwrap_or(false),
            });
        } else {
            run.push(b.clone());
        }
    }
    flush(&mut run, &mut parts, conv, keys);
    parts
}

/// Feeds the parts of a user message: text as a user message (a reply, or the mission
/// before the first response), results as tool results.
pub(crate) fn feed_user_parts(conv: &mut Conversation, parts: Vec<UserPart>, at: At) {
    for p in parts {
        match p {
            UserPart::Text(t) => conv.user(t, false, at),
            UserPart::Result {
                id,
                content,
                is_error,
            } => {
                if id.is_none() {
                    conv.lossy(
                        at,
                        "no-call-id",
                        "a tool_result block without a string `tool_use_id`",
                    );
                }
                conv.tool_result(id.as_deref(), None, content, is_error, at);
            }
        }
    }
}
