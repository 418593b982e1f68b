//! tau2-bench results → chat-form sessions (SPEC 11.1): one session per simulation,
//! as the agent saw it.
//!
//! The system prompt is not in the results; it is rebuilt from the environment's policy
//! as tau2's agents render it (`llm_agent`, and `llm_agent_solo` with the task's ticket).
//! Messages keep their order; tool calls with `requestor: "user"` (the user simulator's
//! own tools, in telecom) and their results go to the user simulator, never to the
//! agent, so they are not part of the agent's session (counted). docs/importers.md has
//! the whole mapping.

use crate::conversation::{Call, Conversation, Response};
use crate::messages::{Place, arguments_text, content_text};
use crate::ojson::{J, to_map};
use crate::problem::{At, Problem};
use crate::source::{Doc, Member};
use crate::unmapped::Unmapped;
use crate::{Import, Options};
use serde_json::{Map, Value as Json};
use std::path::Path;

/// tau2's `AGENT_INSTRUCTION` (src/tau2/agent/llm_agent.py).
const AGENT_INSTRUCTION: &str =
    "You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.";

/// tau2's `AGENT_SOLO_INSTRUCTION`, its stop function (`done`) filled in.
const AGENT_SOLO_INSTRUCTION: &str = "You are a customer service agent that helps the user according to the <policy> provided below.
You will be provided with a ticket that contains the user's request.
You will need to plan and call the appropriate tools to solve the ticket.

You cannot communicate with the user, only make tool calls.
Stop when you consider that you have solved the ticket.
To do so, send a message containing a single tool call to the `done` tool. Do not include any other tool calls in this last message.

Always follow the policy. Always make sure you generate valid JSON only.";

/// tau2's `SYSTEM_PROMPT`.
fn system_prompt(policy: &str) -> String {
    format!("<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>")
}

/// tau2's `SYSTEM_PROMPT_SOLO`.
fn solo_system_prompt(policy: &str, ticket: &str) -> String {
    format!(
        "<instructions>\n{AGENT_SOLO_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>\n<ticket>\n{ticket}\n</ticket>"
    )
}

/// Message keys that are mapped.
const MESSAGE_KEYS: [&str; 9] = [
    "role",
    "content",
    "tool_calls",
    "reasoning",
    "usage",
    "raw_data",
    "id",
    "requestor",
    "error",
];

/// Message keys that are known and not carried, with the reason.
const DROPPED_MESSAGE_KEYS: [(&str, &str); 4] = [
    (
        "turn_idx",
        "the message's position; the order of the turns carries it",
    ),
    (
        "timestamp",
        "per-message times have no place in a chat turn",
    ),
    (
        "cost",
        "the message's price; the simulation's `agent_cost` is kept in meta",
    ),
    (
        "errors",
        "tau2's record of generation errors for the message",
    ),
];

/// Imports every simulation of a parsed results file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, _opts: &Options, out: &mut Import) {
    let Doc::Object(members) = doc else {
        if !doc.is_empty() {
            out.problems.push(
                Problem::skipped(
                    file,
                    "expected one tau2 results object (with `simulations`)",
                )
                .at_line(1)
                .kind("not-tau2-results"),
            );
        }
        return;
    };
    let member = |k: &str| members.iter().find(|m| m.key == k);
    let Some(sims) = member("simulations") else {
        out.problems.push(
            Problem::skipped(file, "no `simulations` list: not tau2 results")
                .at_line(members.first().map_or(1, |m| m.line))
                .kind("not-tau2-results"),
        );
        return;
    };
    let info = member("info").map_or(&J::Null, |m| &m.value);
    let tasks = member("tasks").map_or(&J::Null, |m| &m.value);
    let mut keys = Unmapped::default();
    let file_meta = file_meta(members);
    for (i, sim) in sims.value.as_array().unwrap_or(&[]).iter().enumerate() {
        let at = At::new(
            sims.item_lines.get(i).copied().unwrap_or(sims.line),
            Some(i + 1),
        );
        simulation(file, at, sim, info, tasks, &file_meta, &mut keys, out);
    }
    out.problems.extend(keys.into_problems(file));
}

/// The run's own fields, kept in every session's `meta.tau2` (the policy is the system
/// prompt, the tasks are kept per session).
fn file_meta(members: &[Member]) -> Map<String, Json> {
    let mut m = Map::new();
    for member in members {
        match member.key.as_str() {
            "simulations" | "tasks" => {}
            "info" => {
                let mut info = member.value.to_json();
                if let Some(env) = info
                    .get_mut("environment_info")
                    .and_then(Json::as_object_mut)
                {
                    env.remove("policy");
                }
                m.insert("info".into(), info);
            }
            k => {
                m.insert(k.to_string(), member.value.to_json());
            }
        }
    }
    m
}

#[allow(clippy::too_many_arguments)]
fn simulation(
    file: &Path,
    at: At,
    sim: &J,
    info: &J,
    tasks: &J,
    file_meta: &Map<String, Json>,
    keys: &mut Unmapped,
    out: &mut Import,
) {
    let id = match sim.at("id") {
        J::Str(s) if !s.is_empty() => s.to_string(),
        _ => format!(
            "{}:{}",
            crate::source::stem(file),
            at.record.unwrap_or(at.line)
        ),
    };
    let mut conv = Conversation::new(file, id, at);
    let task_id = sim.at("task_id");
    let task = tasks
        .as_array()
        .unwrap_or(&[])
        .iter()
        .find(|t| !task_id.is_null() && t.at("id") == task_id);
    for (k, v) in sim.as_object().unwrap_or(&[]) {
        if k != "messages" {
            conv.meta.insert(k.to_string(), v.to_json());
        }
    }
    if let Some(t) = task {
        conv.meta.insert("task".into(), t.to_json());
    }
    conv.meta
        .insert("tau2".into(), Json::Object(file_meta.clone()));
    let policy = info.at("environment_info").at("policy").as_str();
    let agent = info
        .at("agent_info")
        .at("implementation")
        .as_str()
        .unwrap_or("");
    let ticket = task.and_then(|t| t.at("ticket").as_str());
    if matches!(agent, "llm_agent" | "llm_agent_solo") && policy.is_some() {
        // tau2's LLM agents send the system prompt and every message so far at each
        // call: what the `recorded` pseudo-strategy replays.
        conv.meta.insert(
            recap_core::session::RECORDED_CONTEXT.into(),
            serde_json::json!({"sent": "history"}),
        );
    }
    match (policy, agent, ticket) {
        (Some(p), "llm_agent_solo", Some(ticket)) => {
            conv.system(solo_system_prompt(p, ticket), at);
            // The solo agent gets no user message: its request is the ticket, already in
            // the system prompt. The chat form needs a mission; the ticket is it.
            conv.user(ticket.to_string(), false, at);
            conv.lossy(
                at,
                "solo-mission",
                "the solo agent received no user message: its ticket (in the system prompt) is also the mission",
            );
        }
        (Some(p), "llm_agent", _) => conv.system(system_prompt(p), at),
        (Some(p), other, _) => {
            conv.system(system_prompt(p), at);
            conv.lossy(
                at,
                "unknown-agent",
                format!(
                    "agent implementation {other:?}: the system prompt is rebuilt as tau2's llm_agent renders it, which may differ"
                ),
            );
        }
        (None, _, _) => conv.lossy(
            at,
            "no-policy",
            "no `info.environment_info.policy`: the system prompt cannot be rebuilt and is empty",
        ),
    }
    let messages = sim.at("messages").as_array().unwrap_or(&[]);
    let known = known_message_keys();
    for m in messages {
        let place = Place {
            name: "simulations[].messages[]",
            at,
        };
        keys.unknown(place.name, m, &known, at);
        keys.dropped(place.name, m, &DROPPED_MESSAGE_KEYS, at);
        message(&mut conv, keys, place, m);
    }
    if let Some(s) = conv.finish("tau2", &mut out.problems) {
        out.sessions.push(s);
    }
}

fn known_message_keys() -> Vec<&'static str> {
    let mut k = MESSAGE_KEYS.to_vec();
    k.extend(DROPPED_MESSAGE_KEYS.iter().map(|(n, _)| *n));
    k
}

fn message(conv: &mut Conversation, keys: &mut Unmapped, place: Place, m: &J) {
    let at = place.at;
    match m.at("role").as_str() {
        Some("assistant") => {
            let text = content_text(conv, keys, place, m.at("content"));
            let calls = agent_calls(m);
            if !conv.has_mission() {
                // tau2 opens every conversation with its fixed greeting, before the
                // user's first message.
                conv.meta.insert(
                    "first_agent_message".into(),
                    Json::from(text.clone().unwrap_or_default()),
                );
                conv.lossy(
                    at,
                    "greeting-before-mission",
                    "the agent's history starts with tau2's fixed greeting before the user's first message; the chat form starts with the mission, so the greeting is kept in meta.first_agent_message",
                );
                return;
            }
            let r = Response {
                content: text,
                calls,
                reasoning: m.at("reasoning").as_str().map(str::to_string),
                usage: m.at("usage").as_object().map(to_map),
            };
            conv.assistant(r, at);
        }
        Some("user") => {
            let calls = m.at("tool_calls").as_array().unwrap_or(&[]);
            if !calls.is_empty() {
                // Counted per call, so the count matches the calls the results answer.
                for _ in calls {
                    keys.dropped_item(
                        place.name,
                        "tool_calls(requestor=user)",
                        "the user simulator's own tool calls (and their results) go to the simulator, never to the agent",
                        at,
                    );
                }
                if m.at("content").as_str().is_some_and(|c| !c.is_empty()) {
                    conv.lossy(
                        at,
                        "user-tool-call-text",
                        "a user-simulator message with both text and tool calls: the text is kept, the calls are not the agent's",
                    );
                } else {
                    return;
                }
            }
            keys.dropped(
                place.name,
                m,
                &[
                    (
                        "usage",
                        "the user simulator's token counts, not the agent's",
                    ),
                    ("raw_data", "the user simulator's raw completion"),
                    (
                        "reasoning",
                        "the user simulator's reasoning, never shown to the agent",
                    ),
                ],
                at,
            );
            let text = content_text(conv, keys, place, m.at("content")).unwrap_or_default();
            conv.user(text, false, at);
        }
        Some("tool") => {
            if m.at("requestor").as_str() == Some("user") {
                keys.dropped_item(
                    place.name,
                    "tool(requestor=user)",
                    "results of the user simulator's tool calls go to the simulator, never to the agent",
                    at,
                );
                return;
            }
            let text = content_text(conv, keys, place, m.at("content")).unwrap_or_default();
            let is_error = m.at("error").as_bool().unwrap_or(false);
            conv.tool_result(m.at("id").as_str(), None, text, is_error, at);
        }
        Some(other) => conv.lossy(
            at,
            "unknown-role",
            format!("unknown role {other:?}; not imported"),
        ),
        None => conv.lossy(
            at,
            "bad-message",
            "a message without a string `role`; not imported",
        ),
    }
}

/// The agent's tool calls. tau2 stores `arguments` as an object; the raw completion in
/// `raw_data` has the text the model wrote, which is used when it is there.
fn agent_calls(m: &J) -> Vec<Call> {
    let raw: Vec<&J> = m
        .at("raw_data")
        .at("message")
        .at("tool_calls")
        .as_array()
        .unwrap_or(&[])
        .iter()
        .collect();
    m.at("tool_calls")
        .as_array()
        .unwrap_or(&[])
        .iter()
        .filter_map(|c| {
            let name = c.at("name").as_str()?.to_string();
            let id = c.at("id").as_str().map(str::to_string);
            let written = raw
                .iter()
                .find(|r| r.at("id").as_str().is_some() && r.at("id").as_str() == id.as_deref())
                .and_then(|r| r.at("function").at("arguments").as_str());
            let arguments = match written {
                Some(text) => text.to_string(),
                None => arguments_text(c.get("arguments")),
            };
            Some(Call {
                id,
                name,
                arguments,
            })
        })
        .collect()
}
