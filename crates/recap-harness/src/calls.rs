//! The calls of a session: which there are and what the corpus recorded for each. Every
//! part of the harness that walks a session's calls (replay, retention, `inspect`) asks
//! here, so a new session form changes one place.

use recap_core::Session;
use std::ops::Range;

/// The calls of `session`: call k is the request made after k completed turns, the one
/// that produced turn k + 1.
pub fn calls(session: &Session) -> Range<usize> {
    0..session.turn_count()
}

/// The provider's recorded input tokens for call `k`, when the corpus has them.
pub fn recorded_input(session: &Session, k: usize) -> Option<u64> {
    session.turn_usage(k).and_then(recorded_input_tokens)
}

/// The provider's recorded input tokens of a turn's request, when the corpus has them.
pub fn recorded_input_tokens(usage: &serde_json::Map<String, serde_json::Value>) -> Option<u64> {
    ["input_tokens", "prompt_tokens"]
        .iter()
        .find_map(|k| usage.get(*k).and_then(serde_json::Value::as_u64))
}
