//! One Inspect sample epoch → one session: its `messages` (attachments expanded), the
//! usage of each model call from its `model` events, and — when every call sent the
//! messages before it — the record that the agent sent its whole history.

use super::Log;
use crate::Import;
use crate::conversation::{Call, Conversation, Response};
use crate::messages::{Place, arguments_text, content_text, openai_tools};
use crate::ojson::{J, to_map};
use crate::problem::{At, Problem};
use crate::unmapped::Unmapped;
use serde_json::{Map, Value as Json};
use std::borrow::Cow;
use std::path::Path;

/// Sample keys kept in `meta`.
const META_KEYS: [&str; 9] = [
    "target",
    "scores",
    "metadata",
    "model_usage",
    "total_time",
    "working_time",
    "error",
    "limit",
    "choices",
];

/// Sample keys read or deliberately not carried, with the reason.
const DROPPED_KEYS: [(&str, &str); 14] = [
    (
        "input",
        "the sample's input; the messages hold it as it was sent",
    ),
    (
        "output",
        "the final model output; the last assistant message holds it",
    ),
    ("store", "the solver's key-value state during the sample"),
    ("uuid", "the sample run's id"),
    ("error_retries", "errors of earlier attempts at the sample"),
    (
        "attachments",
        "long texts stored once; every reference to them is expanded",
    ),
    (
        "message_pool",
        "messages stored once (log version 3); the model calls' references to them are expanded",
    ),
    (
        "events",
        "the sample's event record; model calls are read for usage and what was sent, the other events are not messages",
    ),
    (
        "transcript",
        "the sample's event record (older logs); model calls are read for usage and what was sent",
    ),
    ("sandbox", "the sandbox specification"),
    ("files", "files copied into the sandbox"),
    ("setup", "the sandbox setup script"),
    ("started_at", "when the sample started"),
    ("completed_at", "when the sample completed"),
];

/// Message keys that are mapped.
const MESSAGE_KEYS: [&str; 7] = [
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "function",
    "error",
    "model",
];

/// Message keys that are known and not carried, with the reason.
const DROPPED_MESSAGE_KEYS: [(&str, &str); 4] = [
    ("id", "the message's id in the log"),
    (
        "source",
        "who produced the message (input, generate); the role carries it",
    ),
    ("metadata", "the solver's own metadata of the message"),
    ("internal", "provider-internal data of the message"),
];

/// One model call of the sample: what it was sent (expanded) and what it answered.
struct ModelCall<'a> {
    input: Vec<J<'a>>,
    message_id: Option<String>,
    usage: Option<Map<String, Json>>,
    tools: Option<&'a J<'a>>,
}

/// Imports one sample epoch as a session.
pub(super) fn import(log: &Log, path: &Path, at: At, s: &J, keys: &mut Unmapped, out: &mut Import) {
    let eval = log.header.at("eval");
    let sample_id = match s.at("id") {
        J::Str(x) => x.to_string(),
        J::Num(n) => n.to_string(),
        _ => "?".into(),
    };
    let epoch = s.at("epoch").as_u64().unwrap_or(1);
    let run = eval
        .at("run_id")
        .as_str()
        .or_else(|| eval.at("eval_id").as_str())
        .unwrap_or("run");
    let task = eval.at("task").as_str().unwrap_or("task");
    let id = format!("{task}/{run}/{sample_id}/epoch-{epoch}");
    let skip = |message: String, kind: &'static str| {
        Problem::skipped(path, message)
            .at(at)
            .in_session(&id)
            .kind(kind)
    };
    if s.as_object().is_none() {
        out.problems.push(skip(
            format!("a sample that is {}; not imported", s.type_name()),
            "bad-sample",
        ));
        return;
    }
    let expand = Expander::of(s);
    let messages = match s.get("messages") {
        Some(J::Arr(m)) if !m.is_empty() => expand.all(m),
        _ => {
            out.problems.push(skip(
                format!(
                    "sample {sample_id} epoch {epoch} has no `messages` (a list of the conversation's messages); not imported"
                ),
                "no-messages",
            ));
            return;
        }
    };
    let known: Vec<&str> = ["id", "epoch", "messages"]
        .into_iter()
        .chain(META_KEYS)
        .chain(DROPPED_KEYS.iter().map(|(k, _)| *k))
        .collect();
    keys.unknown("samples[]", s, &known, at);
    keys.dropped("samples[]", s, &DROPPED_KEYS, at);
    let mut conv = Conversation::new(path, id, at);
    let calls = conversation_calls(&messages, model_calls(s, &expand, keys, at), keys, at);
    if expand.missing.get() > 0 {
        conv.session_lossy(
            "unresolved-attachment",
            format!(
                "{} references to stored texts (`attachment://…`) name no text of the sample; kept as the reference",
                expand.missing.get()
            ),
        );
    }
    if let Some(tools) = calls.iter().find_map(|c| c.tools) {
        conv.tools = openai_tools(tools);
    }
    let usages = join_usage(&mut conv, &messages, &calls, at);
    let mut models = Vec::new();
    let mut assistant = 0;
    for m in &messages {
        if m.at("role").as_str() == Some("assistant") {
            if let Some(model) = m.at("model").as_str()
                && !models.contains(&model)
            {
                models.push(model);
            }
            let usage = usages.get(assistant).cloned().flatten();
            assistant += 1;
            message(&mut conv, keys, m, usage, at);
        } else {
            message(&mut conv, keys, m, None, at);
        }
    }
    meta(&mut conv, log, s, epoch, &models);
    if sent_history(&mut conv, &messages, &calls, at) {
        conv.meta.insert(
            recap_core::session::RECORDED_CONTEXT.into(),
            serde_json::json!({"sent": "history"}),
        );
    }
    if let Some(session) = conv.finish("inspect", &mut out.problems) {
        out.sessions.push(session);
    }
}

/// Expands `attachment://<hash>` (and older logs' `tc://<hash>`) references to the
/// texts the sample stores once.
struct Expander<'s, 'a> {
    attachments: &'s J<'a>,
    content: &'s J<'a>,
    /// References to texts the sample does not store.
    missing: std::cell::Cell<usize>,
}

impl<'s, 'a> Expander<'s, 'a> {
    fn of(s: &'s J<'a>) -> Self {
        Expander {
            attachments: s.at("attachments"),
            content: s.at("transcript").at("content"),
            missing: std::cell::Cell::new(0),
        }
    }

    fn all(&self, items: &[J<'a>]) -> Vec<J<'a>> {
        items.iter().map(|v| self.value(v)).collect()
    }

    fn value(&self, v: &J<'a>) -> J<'a> {
        match v {
            J::Str(s) => {
                let hash = s
                    .strip_prefix("attachment://")
                    .or_else(|| s.strip_prefix("tc://"));
                let Some(hash) = hash else {
                    return J::Str(Cow::clone(s));
                };
                // Older logs name `tc://` texts in `transcript.content` or in
                // `attachments`.
                match self
                    .content
                    .get(hash)
                    .or_else(|| self.attachments.get(hash))
                {
                    Some(J::Str(text)) => J::Str(text.clone()),
                    _ => {
                        self.missing.set(self.missing.get() + 1);
                        J::Str(Cow::clone(s))
                    }
                }
            }
            J::Arr(items) => J::Arr(self.all(items)),
            J::Obj(pairs) => J::Obj(
                pairs
                    .iter()
                    .map(|(k, x)| (k.clone(), self.value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// The sample's model calls, in order: what each was sent (a version-3 log's
/// `input_refs` ranges into the message pool expanded), the id of the message it
/// answered, its usage and tools. Other events are counted as not carried.
fn model_calls<'s, 'a>(
    s: &'s J<'a>,
    expand: &Expander<'s, 'a>,
    keys: &mut Unmapped,
    at: At,
) -> Vec<ModelCall<'a>>
where
    's: 'a,
{
    let events = s
        .at("events")
        .as_array()
        .or_else(|| s.at("transcript").at("events").as_array())
        .unwrap_or(&[]);
    let pool = s.at("message_pool").as_array().unwrap_or(&[]);
    let mut calls = Vec::new();
    for e in events {
        let kind = e.at("event").as_str().unwrap_or("?");
        if kind != "model" {
            keys.dropped_item(
                "samples[].events[]",
                &format!("event={kind}"),
                "events other than model calls record the solver's work (spans, tools, sandbox, state, scores); the messages hold what the model saw",
                at,
            );
            continue;
        }
        let mut input: Vec<J> = expand.all(e.at("input").as_array().unwrap_or(&[]));
        for range in e.at("input_refs").as_array().unwrap_or(&[]) {
            let bounds = range.as_array().unwrap_or(&[]);
            if let [start, end] = bounds
                && let (Some(a), Some(b)) = (start.as_u64(), end.as_u64())
            {
                let (a, b) = (a as usize, (b as usize).min(pool.len()));
                if a < b {
                    input.extend(expand.all(&pool[a..b]));
                }
            }
        }
        let output = e.at("output");
        let message = output
            .at("choices")
            .as_array()
            .and_then(|c| c.first())
            .map_or(&J::Null, |c| c.at("message"));
        calls.push(ModelCall {
            input,
            message_id: message.at("id").as_str().map(str::to_string),
            usage: output.at("usage").as_object().map(to_map),
            tools: e.get("tools").filter(|t| t.as_array().is_some()),
        });
    }
    calls
}

/// The model calls that produced the conversation's responses: when the responses have
/// ids, the calls that answered one of them (a scorer's or a tool's own calls answer
/// none and are counted); else all.
fn conversation_calls<'a>(
    messages: &[J],
    calls: Vec<ModelCall<'a>>,
    keys: &mut Unmapped,
    at: At,
) -> Vec<ModelCall<'a>> {
    let ids: Vec<&str> = messages
        .iter()
        .filter(|m| m.at("role").as_str() == Some("assistant"))
        .filter_map(|m| m.at("id").as_str())
        .collect();
    if ids.is_empty() {
        return calls;
    }
    let (mine, others): (Vec<_>, Vec<_>) = calls
        .into_iter()
        .partition(|c| c.message_id.as_deref().is_some_and(|id| ids.contains(&id)));
    for _ in others {
        keys.dropped_item(
            "samples[].events[]",
            "event=model (not the conversation's)",
            "a model call whose answer is no message of the conversation (a scorer's or a tool's own call)",
            at,
        );
    }
    mine
}

/// The usage of each assistant message (in order): by the id of the message a call
/// answered, or by order when the log has as many calls as responses.
fn join_usage(
    conv: &mut Conversation,
    messages: &[J],
    calls: &[ModelCall],
    at: At,
) -> Vec<Option<Map<String, Json>>> {
    let responses: Vec<&J> = messages
        .iter()
        .filter(|m| m.at("role").as_str() == Some("assistant"))
        .collect();
    let by_id: Vec<Option<Map<String, Json>>> = responses
        .iter()
        .map(|m| {
            let id = m.at("id").as_str()?;
            calls
                .iter()
                .find(|c| c.message_id.as_deref() == Some(id))
                .and_then(|c| c.usage.clone())
        })
        .collect();
    if by_id.iter().any(Option::is_some) {
        return by_id;
    }
    if calls.len() == responses.len() {
        return calls.iter().map(|c| c.usage.clone()).collect();
    }
    if !calls.is_empty() {
        conv.lossy(
            at,
            "usage-unmatched",
            format!(
                "{} model calls for {} responses, and no message ids to pair them by: the token counts are not carried",
                calls.len(),
                responses.len()
            ),
        );
    }
    Vec::new()
}

/// One message of the conversation.
fn message(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    m: &J,
    usage: Option<Map<String, Json>>,
    at: At,
) {
    let known: Vec<&str> = MESSAGE_KEYS
        .iter()
        .copied()
        .chain(DROPPED_MESSAGE_KEYS.iter().map(|(k, _)| *k))
        .collect();
    keys.unknown("messages[]", m, &known, at);
    keys.dropped("messages[]", m, &DROPPED_MESSAGE_KEYS, at);
    let place = Place {
        name: "messages[]",
        at,
    };
    match m.at("role").as_str() {
        Some("system") => {
            let text = content_text(conv, keys, place, m.at("content")).unwrap_or_default();
            conv.system(text, at);
        }
        Some("user") => {
            let text = content_text(conv, keys, place, m.at("content")).unwrap_or_default();
            conv.user(text, false, at);
        }
        Some("assistant") => {
            let (content, reasoning) = assistant_content(conv, keys, place, m.at("content"));
            let calls = tool_calls(conv, keys, m, at);
            conv.assistant(
                Response {
                    content,
                    calls,
                    reasoning,
                    usage,
                },
                at,
            );
        }
        Some("tool") => {
            let mut text = content_text(conv, keys, place, m.at("content")).unwrap_or_default();
            let error = m.at("error");
            if text.is_empty()
                && let Some(e) = error.at("message").as_str()
            {
                text = e.to_string();
            }
            let name = m.at("function").as_str().map(str::to_string);
            conv.tool_result(
                m.at("tool_call_id").as_str(),
                name,
                text,
                !error.is_null(),
                at,
            );
        }
        Some(other) => conv.lossy(
            at,
            "unknown-role",
            format!(
                "unknown role {other:?} (expected system, user, assistant or tool); not imported"
            ),
        ),
        None => conv.lossy(
            at,
            "bad-message",
            "a message without a string `role`; not imported",
        ),
    }
}

/// An assistant message's content: its text, and its reasoning parts as reasoning.
fn assistant_content(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    content: &J,
) -> (Option<String>, Option<String>) {
    let Some(parts) = content.as_array() else {
        return (
            content_text(conv, keys, place, content).filter(|t| !t.is_empty()),
            None,
        );
    };
    let (thinking, rest): (Vec<&J>, Vec<&J>) = parts
        .iter()
        .partition(|p| p.at("type").as_str() == Some("reasoning"));
    let mut reasoning = Vec::new();
    for p in thinking {
        keys.dropped(
            "messages[].content[]",
            p,
            &[(
                "signature",
                "the provider's opaque check of the reasoning; the text is kept",
            )],
            place.at,
        );
        match p.at("reasoning").as_str() {
            Some(r) if p.at("redacted").as_bool() != Some(true) => reasoning.push(r.to_string()),
            _ => conv.lossy(
                place.at,
                "redacted-thinking",
                "redacted reasoning (encrypted by the provider) has no text; not carried",
            ),
        }
    }
    let rest = J::Arr(rest.into_iter().cloned().collect());
    let text = content_text(conv, keys, place, &rest).filter(|t| !t.is_empty());
    (text, (!reasoning.is_empty()).then(|| reasoning.join("\n")))
}

/// An assistant message's calls: `{id, function, arguments (object)}`; `view` and
/// `type` are how Inspect shows and types the call.
fn tool_calls(conv: &mut Conversation, keys: &mut Unmapped, m: &J, at: At) -> Vec<Call> {
    let mut calls = Vec::new();
    for c in m.at("tool_calls").as_array().unwrap_or(&[]) {
        keys.unknown(
            "messages[].tool_calls[]",
            c,
            &[
                "id",
                "function",
                "arguments",
                "type",
                "view",
                "parse_error",
                "internal",
            ],
            at,
        );
        keys.dropped(
            "messages[].tool_calls[]",
            c,
            &[
                ("view", "how Inspect shows the call in its viewer"),
                ("internal", "provider-internal data of the call"),
            ],
            at,
        );
        if let Some(e) = c.at("parse_error").as_str() {
            conv.lossy(
                at,
                "arguments-not-json",
                format!("Inspect could not parse the call's arguments ({e}); kept as recorded"),
            );
        }
        match c.at("function").as_str() {
            Some(name) => calls.push(Call {
                id: c.at("id").as_str().map(str::to_string),
                name: name.to_string(),
                arguments: arguments_text(c.get("arguments")),
            }),
            None => conv.lossy(
                at,
                "bad-tool-call",
                "a tool call without a string `function`; not carried",
            ),
        }
    }
    calls
}

/// `meta`: the log's own facts, and the sample's score and metadata.
fn meta(conv: &mut Conversation, log: &Log, s: &J, epoch: u64, models: &[&str]) {
    let h = log.header;
    let mut inspect = Map::new();
    for key in ["version", "status", "eval"] {
        if let Some(v) = h.get(key).filter(|v| !v.is_null()) {
            inspect.insert(key.into(), v.to_json());
        }
    }
    let meta = &mut conv.meta;
    meta.insert("source".into(), "inspect".into());
    meta.insert("inspect".into(), Json::Object(inspect));
    meta.insert("sample_id".into(), s.at("id").to_json());
    meta.insert("epoch".into(), epoch.into());
    for key in META_KEYS {
        if let Some(v) = s.get(key).filter(|v| !v.is_null()) {
            meta.insert(key.into(), v.to_json());
        }
    }
    crate::conversation::insert_models(meta, models.iter().map(|m| m.to_string()).collect());
}

/// The parts of a message that a prompt carries (role, content, calls, the call a
/// result answers), written compactly, for comparing what a call was sent with the
/// conversation's messages.
fn sent_form(m: &J) -> [String; 4] {
    let calls = J::Arr(
        m.at("tool_calls")
            .as_array()
            .unwrap_or(&[])
            .iter()
            .map(|c| {
                J::Arr(vec![
                    c.at("id").clone(),
                    c.at("function").clone(),
                    c.at("arguments").clone(),
                ])
            })
            .collect(),
    );
    [
        m.at("role").to_compact(),
        m.at("content").to_compact(),
        calls.to_compact(),
        m.at("tool_call_id").to_compact(),
    ]
}

/// Whether every model call was sent exactly the conversation's messages before the
/// response it produced (the agent sent its whole history); a problem names the first
/// call that was not.
fn sent_history(conv: &mut Conversation, messages: &[J], calls: &[ModelCall], at: At) -> bool {
    let responses: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.at("role").as_str() == Some("assistant"))
        .map(|(i, _)| i)
        .collect();
    if calls.is_empty() || calls.len() != responses.len() {
        return false;
    }
    for (k, (call, &end)) in calls.iter().zip(&responses).enumerate() {
        let sent: Vec<_> = call.input.iter().map(sent_form).collect();
        let history: Vec<_> = messages[..end].iter().map(sent_form).collect();
        if sent != history {
            conv.lossy(
                at,
                "context-not-recorded",
                format!(
                    "model call {} was sent {} messages that are not the {} messages before its response; `recorded` does not replay this sample",
                    k + 1,
                    sent.len(),
                    history.len()
                ),
            );
            return false;
        }
    }
    true
}
