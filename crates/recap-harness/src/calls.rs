//! The calls of a session: which there are and what the corpus recorded for each. Every
//! part of the harness that walks a session's calls (replay, retention, `inspect`) asks
//! here, so a new session form changes one place.

use recap_core::Session;
use serde_json::{Map, Value as Json};
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

/// The provider's recorded input tokens of a turn's request, when the corpus has them:
/// `prompt_tokens` (OpenAI, which includes cached tokens), or `input_tokens` plus the
/// cache reads and writes Anthropic reports beside it (its `input_tokens` leaves them
/// out).
pub fn recorded_input_tokens(usage: &Map<String, Json>) -> Option<u64> {
    let get = |k: &str| usage.get(k).and_then(Json::as_u64);
    if let Some(p) = get("prompt_tokens") {
        return Some(p);
    }
    let input = get("input_tokens")?;
    Some(
        input
            + get("cache_read_input_tokens").unwrap_or(0)
            + get("cache_creation_input_tokens").unwrap_or(0),
    )
}

/// The input tokens the provider served from its prompt cache for a turn's request, when
/// the log records them (Anthropic `cache_read_input_tokens`, OpenAI
/// `prompt_tokens_details.cached_tokens`).
pub fn recorded_cached_tokens(usage: &Map<String, Json>) -> Option<u64> {
    usage
        .get("cache_read_input_tokens")
        .and_then(Json::as_u64)
        .or_else(|| {
            usage
                .get("prompt_tokens_details")?
                .get("cached_tokens")?
                .as_u64()
        })
}

/// The meta key where an importer puts the input tokens a whole run sent, when the log
/// only has a run-level total (SWE-agent's `model_stats.tokens_sent`).
pub const RUN_INPUT_TOKENS_KEY: &str = "recorded_input_tokens_total";

/// What the log recorded of the provider's own counts over a session's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordedUsage {
    /// Calls with recorded cache reads, and their input and cached tokens.
    pub cache_calls: u64,
    pub cache_input: u64,
    pub cache_read: u64,
    /// The run-level total of input tokens ([`RUN_INPUT_TOKENS_KEY`]), when recorded.
    pub run_input: Option<u64>,
}

/// The provider's recorded cache use and run-level input total of `session`.
pub fn recorded_usage(session: &Session) -> RecordedUsage {
    let mut r = RecordedUsage {
        run_input: session
            .meta
            .get(RUN_INPUT_TOKENS_KEY)
            .and_then(Json::as_u64),
        ..RecordedUsage::default()
    };
    for k in calls(session) {
        let Some(usage) = session.turn_usage(k) else {
            continue;
        };
        if let (Some(input), Some(cached)) =
            (recorded_input_tokens(usage), recorded_cached_tokens(usage))
        {
            r.cache_calls += 1;
            r.cache_input += input;
            r.cache_read += cached;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn anthropic_input_adds_cache_reads_and_writes_and_openai_prompt_tokens_include_them() {
        let a = map(
            json!({"input_tokens": 10, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 90, "output_tokens": 5}),
        );
        assert_eq!(recorded_input_tokens(&a), Some(1000));
        assert_eq!(recorded_cached_tokens(&a), Some(900));
        let o =
            map(json!({"prompt_tokens": 1000, "prompt_tokens_details": {"cached_tokens": 640}}));
        assert_eq!(recorded_input_tokens(&o), Some(1000));
        assert_eq!(recorded_cached_tokens(&o), Some(640));
        let plain = map(json!({"input_tokens": 12}));
        assert_eq!(recorded_input_tokens(&plain), Some(12));
        assert_eq!(recorded_cached_tokens(&plain), None);
    }
}
