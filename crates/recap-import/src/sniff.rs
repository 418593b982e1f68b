//! Which log format a file is. `recap import auto` picks each file's importer with it,
//! and every importer asks it first: when most of a file's records fit another format,
//! the file gets one problem naming the importer that fits, instead of a problem for
//! every record.

use crate::Kind;
use crate::ojson::J;
use crate::openai_chat::{is_message, is_message_list};
use crate::source::{Doc, Member, data_extension};
use std::collections::BTreeMap;
use std::path::Path;

/// Content blocks that only the Anthropic Messages API has.
fn has_anthropic_blocks(messages: &[J]) -> bool {
    messages.iter().any(|m| {
        m.at("content").as_array().is_some_and(|blocks| {
            blocks.iter().any(|b| {
                matches!(
                    b.at("type").as_str(),
                    Some(
                        "tool_use"
                            | "tool_result"
                            | "thinking"
                            | "redacted_thinking"
                            | "server_tool_use"
                            | "web_search_tool_result"
                            | "document"
                    )
                ) || (b.at("type").as_str() == Some("image") && b.get("source").is_some())
            })
        })
    })
}

/// Message features that only the OpenAI chat format has.
fn has_openai_features(messages: &[J]) -> bool {
    messages.iter().any(|m| {
        matches!(
            m.at("role").as_str(),
            Some("tool" | "function" | "system" | "developer")
        ) || m.get("tool_calls").is_some_and(|c| !c.is_null())
            || m.get("function_call").is_some_and(|c| !c.is_null())
            || m.at("content").as_array().is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| p.at("type").as_str() == Some("image_url"))
            })
    })
}

/// The messages of a conversation record, when it is one.
fn conversation_messages<'v, 'a>(v: &'v J<'a>) -> Option<&'v [J<'a>]> {
    if is_message_list(v) {
        return v.as_array();
    }
    let messages = v.at("messages").as_array()?;
    (messages.is_empty() || messages.iter().all(is_message)).then_some(messages)
}

/// Whether `v` is an OpenHands (V0) event.
fn is_event(v: &J) -> bool {
    v.as_object().is_some()
        && (v.get("action").is_some() || v.get("observation").is_some())
        && v.get("role").is_none()
        && v.get("kind").is_none()
}

/// Whether `v` is an OpenHands SDK (V1) event, or a conversation's base state.
fn is_sdk_record(v: &J) -> bool {
    let event = v.at("kind").as_str().is_some_and(|k| {
        k.ends_with("Event") || k.ends_with("Observation") || k.starts_with("Condensation")
    }) && v.get("source").is_some();
    let base_state = v.at("agent").at("llm").as_object().is_some()
        && (v.get("execution_status").is_some() || v.get("persistence_dir").is_some());
    event || base_state
}

/// The format one record (a line, an array item, a whole object) is, when it is one.
pub(crate) fn record_kind(v: &J) -> Option<Kind> {
    if v.as_array().is_some() {
        return conversation_kind(v);
    }
    v.as_object()?;
    if v.get("record_type").is_some() && v.get("payload").is_some() {
        return Some(Kind::PtcRunner);
    }
    if v.at("intermediate_steps").as_array().is_some() {
        return Some(Kind::Smolagents);
    }
    if v.at("simulations").as_array().is_some() {
        return Some(Kind::Tau2);
    }
    if is_sdk_record(v) {
        return Some(Kind::OpenhandsSdk);
    }
    if v.at("eval").as_object().is_some() && v.at("version").as_u64().is_some() {
        return Some(Kind::Inspect);
    }
    if v.at("schema_version")
        .as_str()
        .is_some_and(|s| s.starts_with("ATIF-"))
        || (v.at("steps").as_array().is_some() && v.at("agent").as_object().is_some())
    {
        return Some(Kind::Atif);
    }
    if v.at("content").as_array().is_some_and(|items| {
        !items.is_empty() && items.iter().all(|i| i.at("class_").as_str().is_some())
    }) {
        return Some(Kind::Adp);
    }
    if v.at("type").as_str().is_some()
        && ["sessionId", "uuid", "parentUuid", "leafUuid"]
            .iter()
            .any(|k| v.get(k).is_some())
    {
        return Some(Kind::ClaudeCode);
    }
    if let Some(history) = v.at("history").as_array() {
        if history.iter().any(is_event) {
            return Some(Kind::Openhands);
        }
        if history.iter().any(is_message) {
            return Some(Kind::SweAgent);
        }
    }
    if is_event(v) {
        return Some(Kind::Openhands);
    }
    conversation_kind(v)
}

/// openai-chat or anthropic-messages for a conversation record (a plain-text one is
/// openai-chat; both importers read it).
fn conversation_kind(v: &J) -> Option<Kind> {
    let messages = conversation_messages(v)?;
    let anthropic_top = v.get("system").is_some()
        || v.at("response").at("type").as_str() == Some("message")
        || v.at("tools")
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t.get("input_schema").is_some()));
    if has_anthropic_blocks(messages) || (anthropic_top && !has_openai_features(messages)) {
        Some(Kind::AnthropicMessages)
    } else {
        Some(Kind::OpenaiChat)
    }
}

/// Whether a record fits `kind`'s importer.
fn fits(kind: Kind, v: &J) -> bool {
    match kind {
        Kind::OpenaiChat => conversation_messages(v).is_some_and(|m| !has_anthropic_blocks(m)),
        Kind::AnthropicMessages => {
            conversation_messages(v).is_some_and(|m| !has_openai_features(m))
        }
        Kind::Openhands => record_kind(v) == Some(Kind::Openhands),
        other => record_kind(v) == Some(other),
    }
}

/// A shallow copy of a top-level object (long lists cut to their first items), enough
/// to tell its format without copying a large file.
fn shallow<'a>(members: &[Member<'a>]) -> J<'a> {
    J::Obj(
        members
            .iter()
            .map(|m| {
                let v = match &m.value {
                    J::Arr(items) => J::Arr(items.iter().take(8).cloned().collect()),
                    other => other.clone(),
                };
                (std::borrow::Cow::Owned(m.key.clone()), v)
            })
            .collect(),
    )
}

/// A record as the sniffer sees it: one of the document's own, or a small made-up one.
enum Sample<'a> {
    Ref(&'a J<'a>),
    Made(J<'a>),
}

impl<'a> std::ops::Deref for Sample<'a> {
    type Target = J<'a>;

    fn deref(&self) -> &J<'a> {
        match self {
            Sample::Ref(j) => j,
            Sample::Made(j) => j,
        }
    }
}

/// The first records of a document as the sniffer sees them (a list of messages or of
/// events is one record), borrowed where they can be.
fn sample<'a>(doc: &'a Doc<'a>) -> Vec<Sample<'a>> {
    const MAX: usize = 64;
    match doc {
        Doc::Lines(items) => items
            .iter()
            .take(MAX)
            .map(|l| Sample::Ref(&l.value))
            .collect(),
        Doc::Array(items) => {
            let head = &items[..items.len().min(MAX)];
            if !head.is_empty() && head.iter().all(|l| is_message(&l.value)) {
                vec![Sample::Made(J::Arr(
                    head.iter().map(|l| l.value.clone()).collect(),
                ))]
            } else if head.iter().filter(|l| is_event(&l.value)).count() * 2 > head.len() {
                let events = head.iter().take(8).map(|l| l.value.clone()).collect();
                vec![Sample::Made(J::Obj(vec![(
                    "history".into(),
                    J::Arr(events),
                )]))]
            } else {
                head.iter().map(|l| Sample::Ref(&l.value)).collect()
            }
        }
        Doc::Object(members) => vec![Sample::Made(shallow(members))],
        Doc::Other(v) => v.iter().map(|l| Sample::Ref(&l.value)).collect(),
    }
}

/// The format most of a file's records are, by name first (`run.inspection.jsonl`,
/// `.traj`) and then by content.
pub(crate) fn file_kind(path: &Path, doc: Option<&Doc>) -> Option<Kind> {
    if crate::ptc_runner::is_inspection_log(path) {
        return Some(Kind::PtcRunner);
    }
    if data_extension(path).as_deref() == Some("traj") {
        return Some(Kind::SweAgent);
    }
    if data_extension(path).as_deref() == Some("eval") {
        return Some(Kind::Inspect);
    }
    let records = sample(doc?);
    let mut votes: BTreeMap<&'static str, (usize, Kind)> = BTreeMap::new();
    for r in &records {
        if let Some(k) = record_kind(r) {
            votes.entry(k.name()).or_insert((0, k)).0 += 1;
        }
    }
    let (count, kind) = votes.into_values().max_by_key(|(n, _)| *n)?;
    let conversations = |k: Kind| matches!(k, Kind::OpenaiChat | Kind::AnthropicMessages);
    if conversations(kind) {
        // A plain-text conversation reads as either; the records that only one of the two
        // formats can be decide, openai-chat when none does.
        let total = records
            .iter()
            .filter(|r| record_kind(r).is_some_and(conversations))
            .count();
        let anthropic = records
            .iter()
            .filter(|r| record_kind(r) == Some(Kind::AnthropicMessages))
            .count();
        let openai = records
            .iter()
            .filter(|r| conversation_messages(r).is_some_and(has_openai_features))
            .count();
        let kind = if anthropic > openai {
            Kind::AnthropicMessages
        } else {
            Kind::OpenaiChat
        };
        return (total * 2 > records.len()).then_some(kind);
    }
    (count * 2 > records.len()).then_some(kind)
}

/// When most records of `doc` do not fit `kind` but do fit another importer: that
/// importer, with how many of how many records fit it.
pub(crate) fn misfit(kind: Kind, path: &Path, doc: &Doc) -> Option<(Kind, usize, usize)> {
    let records = sample(doc);
    if records.is_empty() {
        return None;
    }
    let fitting = records.iter().filter(|r| fits(kind, r)).count();
    if fitting * 2 >= records.len() {
        return None;
    }
    let other = file_kind(path, Some(doc)).filter(|k| *k != kind)?;
    let n = records.iter().filter(|r| fits(other, r)).count();
    Some((other, n, records.len()))
}
