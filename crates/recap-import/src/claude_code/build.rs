//! One session from the entries of one conversation (main or sub-agent): entries of
//! one response joined into a turn, user entries as the mission and observations,
//! compactions as restarts, the envelope as `meta`.

use super::split::{Entry, Group};
use super::{DROPPED_ENTRY_KEYS, ENVELOPE, known_entry_keys};
use crate::Import;
use crate::conversation::{Conversation, Response};
use crate::messages::{
    Place, anthropic_message_keys, anthropic_response, anthropic_user_parts, feed_user_parts,
};
use crate::ojson::{J, to_map};
use crate::unmapped::Unmapped;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// Who a session is, and what it needs from the sessions built before it.
pub(super) struct Identity<'c> {
    pub id: &'c str,
    /// The main session a sub-agent session belongs to.
    pub parent: Option<String>,
    /// Task prompts of the main sessions: a sub-agent's first message is its prompt.
    pub task_calls: &'c BTreeMap<String, (String, String)>,
}

/// What the entries of a session say about it besides its messages.
#[derive(Default)]
struct Seen<'a> {
    envelope: BTreeMap<&'static str, Vec<&'a J<'a>>>,
    models: Vec<String>,
    session_ids: Vec<String>,
    compactions: Vec<Json>,
    /// Where the agent started its history over: (turns completed, summary's index).
    restarts: Vec<Json>,
    /// The message id of the response the last turn holds.
    open_response: Option<String>,
}

/// Builds one session from its entries.
pub(super) fn build(
    files: &[&Path],
    who: Identity,
    g: &Group,
    keys: &mut [Unmapped],
    out: &mut Import,
) -> Option<recap_core::Session> {
    let first = g.entries.first()?;
    let mut conv = Conversation::new(files[first.file], who.id.to_string(), first.at);
    let mut seen = Seen::default();
    let known = known_entry_keys();
    for e in &g.entries {
        conv.set_file(files[e.file]);
        let keys = &mut keys[e.file];
        keys.unknown("entry", e.value, &known, e.at);
        keys.dropped("entry", e.value, &DROPPED_ENTRY_KEYS, e.at);
        seen.envelope_of(e.value);
        entry(&mut conv, keys, e, &mut seen);
    }
    conv.set_file(files[first.file]);
    conv.session_lossy(
        "no-system-prompt",
        "Claude Code does not write its system prompt or tool schemas into transcripts; system_prompt is empty and tools unknown",
    );
    seen.into_meta(&mut conv.meta);
    if g.sidechain {
        let meta = &mut conv.meta;
        meta.insert("sidechain".into(), Json::Bool(true));
        if let Some(p) = who.parent {
            meta.insert("sidechain_of".into(), Json::from(p));
        }
        if let Some((session, call)) = first_text(g).and_then(|t| who.task_calls.get(&t)) {
            let mut link = Map::new();
            link.insert("session".into(), Json::from(session.as_str()));
            link.insert("tool_call_id".into(), Json::from(call.as_str()));
            meta.insert("task_call".into(), Json::Object(link));
        }
    }
    conv.finish("claude-code", &mut out.problems)
}

impl<'a> Seen<'a> {
    /// The envelope keys and the session id of one entry.
    fn envelope_of(&mut self, v: &'a J<'a>) {
        for key in ENVELOPE {
            if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
                let list = self.envelope.entry(key).or_default();
                if !list.contains(&x) {
                    list.push(x);
                }
            }
        }
        if let Some(s) = v.at("sessionId").as_str()
            && !self.session_ids.iter().any(|x| x == s)
        {
            self.session_ids.push(s.to_string());
        }
    }

    /// `meta`: the source, the envelope (one value, or the distinct values in order),
    /// session ids, models, compactions, and what the agent sent at each call.
    fn into_meta(self, meta: &mut Map<String, Json>) {
        meta.insert("source".into(), Json::from("claude-code"));
        for (key, values) in self.envelope {
            meta.insert(
                key.to_string(),
                one_or_list(values.into_iter().map(J::to_json).collect()),
            );
        }
        if self.session_ids.len() > 1 {
            meta.insert(
                "session_ids".into(),
                Json::Array(self.session_ids.into_iter().map(Json::from).collect()),
            );
        }
        crate::conversation::insert_models(meta, self.models);
        if !self.compactions.is_empty() {
            meta.insert("compactions".into(), Json::Array(self.compactions));
        }
        // Claude Code sends its whole history at every call, started over at each of its
        // own compactions: what the `recorded` pseudo-strategy replays.
        let mut record = Map::new();
        record.insert("sent".into(), Json::from("history"));
        if !self.restarts.is_empty() {
            record.insert("restarts".into(), Json::Array(self.restarts));
        }
        meta.insert(
            recap_core::session::RECORDED_CONTEXT.into(),
            Json::Object(record),
        );
    }
}

/// Feeds one user or assistant entry's message into the conversation.
fn entry<'a>(conv: &mut Conversation, keys: &mut Unmapped, e: &Entry<'a>, seen: &mut Seen<'a>) {
    let v = e.value;
    let m = v.at("message");
    let place = Place {
        name: "entry.message",
        at: e.at,
    };
    anthropic_message_keys(
        keys,
        place,
        m,
        &[("container", "the provider's code-execution container")],
    );
    if v.at("type").as_str() != Some("assistant") {
        if v.at("isCompactSummary").as_bool() == Some(true) {
            seen.compactions.push(Json::from(conv.turn_count()));
            // A summary that opens the transcript is the mission: nothing to start over
            // from.
            if conv.has_turns() {
                seen.restarts.push(serde_json::json!({
                    "after_turns": conv.turn_count(),
                    "observation": conv.observation_count(),
                }));
            }
        }
        let parts = anthropic_user_parts(conv, keys, place, m.at("content"));
        feed_user_parts(conv, parts, e.at);
        return;
    }
    let model = m.at("model").as_str().unwrap_or("");
    if model == "<synthetic>" || v.at("isApiErrorMessage").as_bool() == Some(true) {
        let text =
            crate::messages::content_text(conv, keys, place, m.at("content")).unwrap_or_default();
        conv.lossy(
            e.at,
            "synthetic-response",
            format!(
                "Claude Code's own notice in place of a model response ({:?}); not a turn",
                first_line(&text)
            ),
        );
        return;
    }
    if !model.is_empty() && !seen.models.iter().any(|x| x == model) {
        seen.models.push(model.to_string());
    }
    let mut r: Response = anthropic_response(conv, keys, place, m.at("content"));
    r.usage = m.at("usage").as_object().map(to_map);
    let message_id = m.at("id").as_str().map(str::to_string);
    let same = message_id.is_some() && message_id == seen.open_response && conv.has_turns();
    if same {
        conv.extend_assistant(r, e.at);
    } else {
        let before = conv.turn_count();
        conv.assistant(r, e.at);
        if conv.turn_count() > before {
            seen.open_response = message_id;
        }
    }
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
