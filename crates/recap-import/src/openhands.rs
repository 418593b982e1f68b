//! OpenHands event streams → chat-form sessions (SPEC 11.1): the `history` lists of
//! evaluation `output.jsonl` records, a bare list of events, or an object holding one.
//!
//! Current format (events with `id` and `source`): each model response is recorded in
//! full in the `tool_call_metadata.model_response` of the actions it produced; one
//! response is one turn, its tool calls with their ids as the model wrote them.
//! Observations answer a call through `tool_call_metadata.tool_call_id` (their `cause`
//! is the action's event id) and are rendered as OpenHands renders them for the model.
//! Older format (no ids, no source): actions and observations alternate, and both are
//! rebuilt as that CodeActAgent rendered them. docs/importers.md has the mapping.

use crate::conversation::{Conversation, Response};
use crate::messages::{Place, content_text, openai_response, openai_tools};
use crate::ojson::{J, to_map};
use crate::problem::{At, Problem};
use crate::source::{Doc, Located};
use crate::unmapped::Unmapped;
use crate::{Import, Options};
use std::collections::BTreeSet;
use std::path::Path;

/// Event keys that are mapped or read.
const EVENT_KEYS: [&str; 10] = [
    "id",
    "source",
    "action",
    "args",
    "observation",
    "content",
    "extras",
    "cause",
    "tool_call_metadata",
    "success",
];

/// Event keys that are known and not carried over, with the reason.
const DROPPED_EVENT_KEYS: [(&str, &str); 5] = [
    ("timestamp", "per-event times have no place in a chat turn"),
    (
        "message",
        "OpenHands' one-line summary of the event for its UI; the model saw the response and the observation",
    ),
    (
        "llm_metrics",
        "accumulated cost and token counts so far; the response's own usage is kept per turn",
    ),
    ("timeout", "the action's time limit"),
    ("hidden", "a UI flag"),
];

/// Observation types whose rendering is known (content as it is, or the framing of
/// [`observation_text`]).
const KNOWN_OBSERVATIONS: [&str; 17] = [
    "run",
    "run_ipython",
    "read",
    "write",
    "edit",
    "browse",
    "browse_interactive",
    "error",
    "think",
    "mcp",
    "delegate",
    "user_rejected",
    "success",
    "chat",
    "download",
    "file_download",
    "task_tracking",
];

/// Imports every event stream of a parsed file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, _opts: &Options, out: &mut Import) {
    let stem = crate::source::stem(file);
    let mut keys = Unmapped::default();
    match doc {
        Doc::Lines(items) => {
            for Located { line, value } in items {
                let at = At::line(*line);
                let pairs: Vec<(&str, &J)> = value
                    .as_object()
                    .unwrap_or(&[])
                    .iter()
                    .map(|(k, v)| (k.as_ref(), v))
                    .collect();
                if value.as_object().is_none() {
                    out.problems.push(
                        Problem::skipped(
                            file,
                            format!(
                                "expected an OpenHands record (an object with `history`), got {}",
                                value.type_name()
                            ),
                        )
                        .at(at)
                        .kind("not-an-event-stream"),
                    );
                    continue;
                }
                record(
                    file,
                    &format!("{stem}:{line}"),
                    at,
                    &pairs,
                    &[],
                    &mut keys,
                    out,
                );
            }
        }
        Doc::Array(items) => {
            let events: Vec<&J> = items.iter().map(|l| &l.value).collect();
            let lines: Vec<usize> = items.iter().map(|l| l.line).collect();
            let at = At::line(items.first().map_or(1, |l| l.line));
            stream(file, stem.clone(), at, &events, &lines, &[], &mut keys, out);
        }
        Doc::Object(members) => {
            let pairs: Vec<(&str, &J)> =
                members.iter().map(|m| (m.key.as_str(), &m.value)).collect();
            let lines = members
                .iter()
                .find(|m| m.key == "history")
                .map_or(&[][..], |m| m.item_lines.as_slice());
            let at = At::line(members.first().map_or(1, |m| m.line));
            record(file, &stem, at, &pairs, lines, &mut keys, out);
        }
        Doc::Other(Some(l)) => out.problems.push(
            Problem::skipped(
                file,
                format!(
                    "expected OpenHands events or output records, got {}",
                    l.value.type_name()
                ),
            )
            .at_line(l.line)
            .kind("not-an-event-stream"),
        ),
        Doc::Other(None) => {}
    }
    out.problems.extend(keys.into_problems(file));
}

/// An evaluation record: `history` plus run fields (which go to `meta`).
fn record(
    file: &Path,
    fallback_id: &str,
    at: At,
    pairs: &[(&str, &J)],
    lines: &[usize],
    keys: &mut Unmapped,
    out: &mut Import,
) {
    let field = |k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| *v)
    };
    let Some(events) = field("history").and_then(J::as_array) else {
        out.problems.push(
            Problem::skipped(file, "no `history` list of events: not an OpenHands record")
                .at(at)
                .kind("not-an-event-stream"),
        );
        return;
    };
    let id = match field("instance_id") {
        Some(J::Str(s)) if !s.is_empty() => s.to_string(),
        Some(J::Num(n)) => n.to_string(),
        _ => fallback_id.to_string(),
    };
    let events: Vec<&J> = events.iter().collect();
    stream(file, id, at, &events, lines, pairs, keys, out);
}

/// Whether the stream is the older format: no event has an id or a source.
fn is_old_format(events: &[&J]) -> bool {
    !events
        .iter()
        .any(|e| e.get("id").is_some() || e.get("source").is_some())
}

#[allow(clippy::too_many_arguments)]
fn stream(
    file: &Path,
    id: String,
    at: At,
    events: &[&J],
    lines: &[usize],
    record: &[(&str, &J)],
    keys: &mut Unmapped,
    out: &mut Import,
) {
    let mut conv = Conversation::new(file, id, at);
    for (k, v) in record {
        if *k != "history" {
            conv.meta.insert(k.to_string(), v.to_json());
        }
        if *k == "metadata"
            && let Some(max) = v.at("max_iterations").as_u64()
        {
            conv.budget = u32::try_from(max).ok();
        }
        // With the no-op condenser the agent sent its whole event history at each call:
        // what the `recorded` pseudo-strategy replays. Other condensers rewrite it in
        // ways the log does not record.
        if *k == "metadata" && v.at("condenser_config").at("type").as_str() == Some("noop") {
            conv.meta.insert(
                recap_core::session::RECORDED_CONTEXT.into(),
                serde_json::json!({"sent": "history"}),
            );
        }
    }
    let old = is_old_format(events);
    if old {
        conv.lossy(
            at,
            "old-format",
            "older OpenHands format (no event ids): the model's messages are rebuilt from each action's thought and command as that CodeActAgent rendered them, observations as its OBSERVATION messages",
        );
    }
    let mut responses: BTreeSet<String> = BTreeSet::new();
    let known = known_event_keys();
    for (i, &ev) in events.iter().enumerate() {
        let place = Place {
            name: "history[]",
            at: At::new(lines.get(i).copied().unwrap_or(at.line), at.record),
        };
        if ev.as_object().is_none() {
            conv.lossy(
                place.at,
                "bad-event",
                format!("an event that is {}; not imported", ev.type_name()),
            );
            continue;
        }
        if old {
            old_event(&mut conv, keys, place, ev);
        } else {
            keys.unknown(place.name, ev, &known, place.at);
            keys.dropped(place.name, ev, &DROPPED_EVENT_KEYS, place.at);
            event(&mut conv, keys, place, ev, &mut responses);
        }
    }
    if let Some(s) = conv.finish("openhands", &mut out.problems) {
        out.sessions.push(s);
    }
}

fn known_event_keys() -> Vec<&'static str> {
    let mut k = EVENT_KEYS.to_vec();
    k.extend(DROPPED_EVENT_KEYS.iter().map(|(n, _)| *n));
    k
}

/// One event of the current format.
fn event(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    ev: &J,
    responses: &mut BTreeSet<String>,
) {
    let source = ev.at("source").as_str().unwrap_or("");
    let args = ev.at("args");
    let meta = ev.at("tool_call_metadata");
    if let Some(action) = ev.at("action").as_str() {
        match (action, source) {
            ("system", _) => {
                conv.system(
                    args.at("content").as_str().unwrap_or("").to_string(),
                    place.at,
                );
                if let Some(tools) = args.get("tools").filter(|t| t.as_array().is_some()) {
                    conv.tools = openai_tools(tools);
                }
                for key in ["openhands_version", "agent_class"] {
                    if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
                        conv.meta.insert(key.into(), v.to_json());
                    }
                }
            }
            ("message", "user") => {
                let text = args
                    .at("content")
                    .as_str()
                    .or_else(|| ev.at("message").as_str())
                    .unwrap_or("");
                if args
                    .at("image_urls")
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
                {
                    conv.lossy(
                        place.at,
                        "media",
                        "images of a user message are not carried (recap carries text only)",
                    );
                }
                conv.user(text.to_string(), false, place.at);
            }
            ("recall", _) => keys.dropped_item(
                "history[]",
                "action=recall",
                "OpenHands' own request for workspace context; never sent to the model",
                place.at,
            ),
            ("change_agent_state", _) => keys.dropped_item(
                "history[]",
                "action=change_agent_state",
                "agent state notices; never sent to the model",
                place.at,
            ),
            _ => agent_action(conv, keys, place, ev, meta, action, responses),
        }
        return;
    }
    let Some(obs) = observation_kind(conv, place, ev) else {
        return;
    };
    match obs {
        "null" | "agent_state_changed" => keys.dropped_item(
            "history[]",
            &format!("observation={obs}"),
            "state notices and empty observations; never sent to the model",
            place.at,
        ),
        "recall" => conv.lossy(
            place.at,
            "workspace-context",
            "a recall observation: OpenHands renders the workspace context it found (repository, runtime, microagent knowledge in `extras`) into a user message from its own template; that text is not rebuilt and not carried",
        ),
        _ => {
            if !KNOWN_OBSERVATIONS.contains(&obs) {
                conv.lossy(
                    place.at,
                    "unknown-event",
                    format!("an observation of unknown type {obs:?}: its content is kept as it is, without any framing OpenHands may add"),
                );
            }
            let content = observation_text(obs, ev, meta.is_null());
            let is_error = obs == "error";
            match meta.at("tool_call_id").as_str() {
                Some(call_id) => {
                    let name = meta.at("function_name").as_str().map(str::to_string);
                    conv.tool_result(Some(call_id), name, content, is_error, place.at);
                }
                None => conv.user(content, source == "environment", place.at),
            }
            if ev.at("success").as_bool() == Some(false) {
                conv.fail_turn();
            }
        }
    }
}

/// An agent action: the model response it came from starts a turn (once per response).
fn agent_action(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    place: Place,
    ev: &J,
    meta: &J,
    action: &str,
    responses: &mut BTreeSet<String>,
) {
    let response = meta.at("model_response");
    if let Some(message) = response
        .at("choices")
        .as_array()
        .and_then(|c| c.first())
        .map(|c| c.at("message"))
        .filter(|m| m.as_object().is_some())
    {
        let rid = response.at("id").as_str().unwrap_or("").to_string();
        if !rid.is_empty() && !responses.insert(rid) {
            // Another action of a response already imported.
            return;
        }
        let mplace = Place {
            name: "history[].tool_call_metadata.model_response.choices[].message",
            at: place.at,
        };
        keys.unknown(
            mplace.name,
            message,
            &[
                "content",
                "role",
                "tool_calls",
                "function_call",
                "reasoning_content",
                "provider_specific_fields",
                "refusal",
                "annotations",
            ],
            place.at,
        );
        keys.dropped(
            mplace.name,
            message,
            &[
                (
                    "provider_specific_fields",
                    "provider extras LiteLLM passes on",
                ),
                (
                    "annotations",
                    "provider annotations of the response (citations…)",
                ),
            ],
            place.at,
        );
        let text = content_text(conv, keys, mplace, message.at("content"));
        let mut r = openai_response(conv, keys, mplace, message, text);
        r.usage = response.at("usage").as_object().map(to_map);
        conv.assistant(r, place.at);
        return;
    }
    // No recorded response: the action's own text stands in for it.
    let args = ev.at("args");
    let text = match action {
        "message" => args.at("content").as_str(),
        _ => args
            .at("thought")
            .as_str()
            .filter(|t| !t.is_empty())
            .or_else(|| args.at("final_thought").as_str())
            .or_else(|| ev.at("message").as_str()),
    }
    .unwrap_or("")
    .to_string();
    if action != "message" {
        conv.lossy(
            place.at,
            "no-model-response",
            format!(
                "a {action:?} action without its recorded model response; its thought stands in for the response and the call is not carried"
            ),
        );
    }
    conv.assistant(
        Response {
            content: Some(text),
            ..Response::default()
        },
        place.at,
    );
}

/// An observation as OpenHands' conversation memory renders it for the model.
/// The event's `observation` kind; an event that has no action (checked before) and no
/// observation either is a lossy problem, and `None` (both event formats).
fn observation_kind<'j>(conv: &mut Conversation, place: Place, ev: &'j J) -> Option<&'j str> {
    let obs = ev.at("observation").as_str();
    if obs.is_none() {
        conv.lossy(
            place.at,
            "bad-event",
            "an event with neither `action` nor `observation`; not imported",
        );
    }
    obs
}

fn observation_text(obs: &str, ev: &J, by_user: bool) -> String {
    let content = ev.at("content").as_str().unwrap_or("");
    match obs {
        "run" => {
            let text = command_output(
                content,
                ev.at("extras").at("metadata"),
                ev.at("extras").at("exit_code"),
            );
            if by_user {
                format!("\nObserved result of command executed by user:\n{text}")
            } else {
                text
            }
        }
        "error" => format!("{content}\n[Error occurred in processing last action]"),
        _ => content.to_string(),
    }
}

/// A command's output as OpenHands frames it for the model (V0's
/// `CmdOutputObservation`, and the SDK's terminal observation alike): the metadata's
/// prefix and suffix around the output, then the working directory, the interpreter and
/// the exit code (from the metadata, else `exit_code`; -1 is none).
pub(crate) fn command_output(content: &str, metadata: &J, exit_code: &J) -> String {
    let m = metadata;
    let mut text = format!(
        "{}{content}{}",
        m.at("prefix").as_str().unwrap_or(""),
        m.at("suffix").as_str().unwrap_or("")
    );
    if let Some(dir) = m.at("working_dir").as_str().filter(|d| !d.is_empty()) {
        text.push_str(&format!("\n[Current working directory: {dir}]"));
    }
    if let Some(py) = m
        .at("py_interpreter_path")
        .as_str()
        .filter(|d| !d.is_empty())
    {
        text.push_str(&format!("\n[Python interpreter: {py}]"));
    }
    let number = |v: &J| match v {
        J::Num(n) => n.as_i64(),
        _ => None,
    };
    let code = number(m.at("exit_code")).or_else(|| number(exit_code));
    if let Some(code) = code.filter(|c| *c != -1) {
        text.push_str(&format!("\n[Command finished with exit code {code}]"));
    }
    text
}

/// One event of the older format, rebuilt as that CodeActAgent sent it.
fn old_event(conv: &mut Conversation, keys: &mut Unmapped, place: Place, ev: &J) {
    keys.unknown(
        place.name,
        ev,
        &[
            "action",
            "observation",
            "content",
            "command",
            "code",
            "thought",
            "command_id",
            "exit_code",
            "outputs",
            "keep_prompt",
            "is_confirmed",
            "action_risk",
            "kernel_init_code",
            "images_urls",
            "image_urls",
            "wait_for_response",
        ],
        place.at,
    );
    keys.dropped(
        place.name,
        ev,
        &[
            ("keep_prompt", "a runtime flag of the command"),
            (
                "is_confirmed",
                "the user's confirmation state of the action",
            ),
            ("action_risk", "the action's security risk estimate"),
            (
                "kernel_init_code",
                "code the Jupyter kernel ran at start; not sent to the model",
            ),
            (
                "outputs",
                "the finish action's outputs; the thought is the message",
            ),
        ],
        place.at,
    );
    let s = |k: &str| ev.at(k).as_str().unwrap_or("").to_string();
    if let Some(action) = ev.at("action").as_str() {
        let text = match action {
            "message" => s("content"),
            "run" => format!(
                "{}\n<execute_bash>\n{}\n</execute_bash>",
                s("thought"),
                s("command")
            ),
            "run_ipython" => format!(
                "{}\n<execute_ipython>\n{}\n</execute_ipython>",
                s("thought"),
                s("code")
            ),
            "finish" => s("thought"),
            other => {
                conv.lossy(
                    place.at,
                    "old-format",
                    format!("an older-format {other:?} action is rebuilt from its thought alone"),
                );
                s("thought")
            }
        };
        if action == "message" && !conv.has_turns() {
            conv.user(text, false, place.at);
        } else {
            conv.assistant(
                Response {
                    content: Some(text),
                    ..Response::default()
                },
                place.at,
            );
        }
        return;
    }
    let Some(obs) = observation_kind(conv, place, ev) else {
        return;
    };
    let mut text = format!("OBSERVATION:\n{}", s("content"));
    match obs {
        "run" => {
            let n = |k: &str| match ev.at(k) {
                J::Num(n) => n.to_string(),
                _ => "-1".to_string(),
            };
            text.push_str(&format!(
                "\n[Command {} finished with exit code {}]",
                n("command_id"),
                n("exit_code")
            ));
        }
        "error" => text.push_str("\n[Error occurred in processing last action]"),
        _ => {}
    }
    // The format defines observations as the environment's output sent as user text.
    conv.user(text, true, place.at);
}
