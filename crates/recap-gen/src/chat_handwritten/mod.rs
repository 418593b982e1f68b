//! The hand-authored chat-form bench corpus (`bench-data/chat-handwritten.jsonl`), shaped
//! like real tool-calling runs: a customer-service dialogue with a simulated user
//! (airline and retail), a function-calling repair, a classic fenced-command run whose
//! observations are environment USER messages, an OpenHands-like run, parallel calls,
//! tool errors and recovery, a long run with long outputs, a Claude-Code-like run with
//! reasoning, a run that ended before its first response, one with recorded usage, and
//! a Claude-Code-like run that compacts its own history (with a record of what the agent
//! sent, which the `recorded` pseudo-strategy replays).

//! All content is invented for recap.
//!
//! Regenerate the file with
//! `cargo run -p recap-gen --example chat-handwritten-corpus > bench-data/chat-handwritten.jsonl`;
//! a test checks the committed file is this module's output.

mod coding;
mod edge_cases;
mod long_run;
mod service;

use crate::chat::ChatSessionBuilder;
use recap_core::{FieldError, Session};
use serde_json::{Value as Json, json};

pub(crate) fn schema(properties: Json, required: &[&str]) -> Json {
    json!({"type": "object", "properties": properties, "required": required})
}

pub(crate) fn string_param(description: &str) -> Json {
    json!({"type": "string", "description": description})
}

/// The hand-authored chat sessions, validated like corpus lines.
pub fn sessions() -> Result<Vec<Session>, FieldError> {
    [
        service::airline(),
        service::retail(),
        coding::swe_function_calling(),
        coding::swe_classic(),
        coding::openhands(),
        edge_cases::parallel_calls(),
        edge_cases::tool_errors(),
        long_run::long_run(),
        coding::claude_code(),
        edge_cases::zero_turns(),
        edge_cases::usage_recorded(),
        edge_cases::plain_usage_dialogue(),
        coding::claude_code_compacted(),
    ]
    .into_iter()
    .map(ChatSessionBuilder::build_validated)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_validates_and_ids_are_unique() {
        let sessions = sessions().unwrap();
        assert!(sessions.len() >= 10);
        let mut ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), sessions.len());
    }
}
