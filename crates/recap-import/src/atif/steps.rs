//! One ATIF trajectory's steps fed into a session: system, user and agent steps as
//! messages, an agent step's tool calls and observation as its turn, its metrics as
//! the turn's usage.

use super::Trajectory;
use crate::conversation::{Call, Conversation, Response};
use crate::messages::{Place, arguments_text, content_text};
use crate::ojson::{J, to_map};
use crate::problem::At;
use crate::unmapped::Unmapped;
use serde_json::Value as Json;

/// Step keys that are mapped.
const STEP_KEYS: [&str; 12] = [
    "step_id",
    "source",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "model_name",
    "reasoning_effort",
    "extra",
];

/// Step keys that are known and not carried, with the reason.
const DROPPED_STEP_KEYS: [(&str, &str); 2] = [
    ("timestamp", "per-step times have no place in a chat turn"),
    (
        "step_id",
        "the step's position; the order of the turns carries it",
    ),
];

/// Metrics keys that are not carried into a turn's usage, with the reason.
const DROPPED_METRICS: [(&str, &str); 3] = [
    (
        "prompt_token_ids",
        "the prompt's token ids (training data); the counts are kept",
    ),
    (
        "completion_token_ids",
        "the completion's token ids (training data); the counts are kept",
    ),
    ("logprobs", "token log-probabilities (training data)"),
];

/// What the steps of a session (a trajectory and its continuations) collect besides
/// messages.
#[derive(Default)]
pub(super) struct Collected {
    /// Distinct per-step model names, in order.
    pub models: Vec<String>,
    /// Sub-agent trajectory references: (step id, the reference).
    pub subagent_refs: Vec<(Json, Json)>,
}

/// Feeds the steps of `t` (from `from` on) into the conversation.
pub(super) fn feed(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    t: &Trajectory,
    from: usize,
    seen: &mut Collected,
) {
    let known: Vec<&str> = STEP_KEYS
        .iter()
        .copied()
        .chain(DROPPED_STEP_KEYS.iter().map(|(k, _)| *k))
        .collect();
    for (i, step) in t.steps().iter().enumerate().skip(from) {
        let at = At::line(t.step_lines.get(i).copied().unwrap_or(t.line));
        if step.as_object().is_none() {
            conv.lossy(
                at,
                "bad-step",
                format!("a step that is {}; not imported", step.type_name()),
            );
            continue;
        }
        keys.unknown("steps[]", step, &known, at);
        keys.dropped("steps[]", step, &DROPPED_STEP_KEYS, at);
        if let Some(extra) = step.get("extra").filter(|e| !e.is_null()) {
            if extra.get("context_management").is_some() {
                // The harness's record of its own compaction: no message to the model;
                // its sub-agent references are kept.
                keys.dropped_item(
                    "steps[]",
                    "extra.context_management",
                    "a step that records the harness's own context management (a compaction handoff); not a message to the model",
                    at,
                );
                refs(step, seen);
                continue;
            }
            keys.dropped(
                "steps[]",
                step,
                &[(
                    "extra",
                    "the agent's own per-step extras (not part of the conversation)",
                )],
                at,
            );
        }
        let place = Place {
            name: "steps[].message",
            at,
        };
        let text = content_text(conv, keys, place, step.at("message"));
        match step.at("source").as_str() {
            Some("system") => conv.system(text.unwrap_or_default(), at),
            Some("user") => conv.user(text.unwrap_or_default(), false, at),
            Some("agent") => agent(conv, keys, step, text, at, seen),
            Some(other) => conv.lossy(
                at,
                "unknown-source",
                format!("a step from {other:?} (expected system, user or agent); not imported"),
            ),
            None => conv.lossy(
                at,
                "bad-step",
                "a step without a string `source`; not imported",
            ),
        }
        observation(conv, keys, step, at, seen);
    }
}

/// An agent step: one model response with its calls, reasoning and metrics.
fn agent(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    step: &J,
    text: Option<String>,
    at: At,
    seen: &mut Collected,
) {
    if let Some(model) = step.at("model_name").as_str()
        && !seen.models.iter().any(|m| m == model)
    {
        seen.models.push(model.to_string());
    }
    match step.at("llm_call_count").as_u64() {
        Some(0) => conv.lossy(
            at,
            "non-llm-step",
            "an agent step that made no model call (`llm_call_count: 0`) is still a turn: the chat form has no other place for the agent's message",
        ),
        Some(n) if n > 1 => conv.lossy(
            at,
            "aggregated-metrics",
            format!("the step's metrics add up {n} model calls; they are this turn's usage"),
        ),
        _ => {}
    }
    let mut calls = Vec::new();
    for c in step.at("tool_calls").as_array().unwrap_or(&[]) {
        keys.unknown(
            "steps[].tool_calls[]",
            c,
            &["tool_call_id", "function_name", "arguments", "extra"],
            at,
        );
        keys.dropped(
            "steps[].tool_calls[]",
            c,
            &[("extra", "the agent's own extras of the call")],
            at,
        );
        match c.at("function_name").as_str() {
            Some(name) => calls.push(Call {
                id: c.at("tool_call_id").as_str().map(str::to_string),
                name: name.to_string(),
                arguments: arguments_text(c.get("arguments")),
            }),
            None => conv.lossy(
                at,
                "bad-tool-call",
                "a tool call without a string `function_name`; not carried",
            ),
        }
    }
    let metrics = step.at("metrics");
    keys.dropped("steps[].metrics", metrics, &DROPPED_METRICS, at);
    let usage = metrics.as_object().map(|pairs| {
        let kept: Vec<_> = pairs
            .iter()
            .filter(|(k, _)| !DROPPED_METRICS.iter().any(|(d, _)| d == k))
            .cloned()
            .collect();
        to_map(&kept)
    });
    conv.assistant(
        Response {
            content: text,
            calls,
            reasoning: step.at("reasoning_content").as_str().map(str::to_string),
            usage: usage.filter(|u| !u.is_empty()),
        },
        at,
    );
}

/// A step's observation: each result answers the call it names, or is environment
/// output; sub-agent references are collected.
fn observation(
    conv: &mut Conversation,
    keys: &mut Unmapped,
    step: &J,
    at: At,
    seen: &mut Collected,
) {
    let observation = step.at("observation");
    keys.unknown("steps[].observation", observation, &["results"], at);
    for r in observation.at("results").as_array().unwrap_or(&[]) {
        keys.unknown(
            "steps[].observation.results[]",
            r,
            &[
                "source_call_id",
                "content",
                "subagent_trajectory_ref",
                "extra",
            ],
            at,
        );
        keys.dropped(
            "steps[].observation.results[]",
            r,
            &[("extra", "the agent's own extras of the result")],
            at,
        );
        let place = Place {
            name: "steps[].observation.results[].content",
            at,
        };
        let Some(text) = content_text(conv, keys, place, r.at("content")) else {
            continue;
        };
        match r.at("source_call_id").as_str() {
            Some(id) => conv.tool_result(Some(id), None, text, false, at),
            // A result of no call: what the environment returned.
            None => conv.user(text, true, at),
        }
    }
    refs(step, seen);
}

/// The sub-agent trajectory references of a step's observation results.
pub(super) fn subagent_refs<'s, 'a>(step: &'s J<'a>) -> impl Iterator<Item = &'s J<'a>> {
    step.at("observation")
        .at("results")
        .as_array()
        .unwrap_or(&[])
        .iter()
        .flat_map(|r| r.at("subagent_trajectory_ref").as_array().unwrap_or(&[]))
}

/// Collects the sub-agent references of a step with its id.
fn refs(step: &J, seen: &mut Collected) {
    for reference in subagent_refs(step) {
        seen.subagent_refs
            .push((step.at("step_id").to_json(), reference.to_json()));
    }
}
