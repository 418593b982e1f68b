//! What a log recorded of the provider's own counts reaches the baseline row: the
//! provider's cache hit rate beside recap's cached share, and run-level fidelity where a
//! log records only a whole run's input tokens.

use recap_core::{Session, TokenCounter};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer, run_sessions};
use serde_json::json;
use std::sync::Arc;

fn session(id: &str, meta: serde_json::Value, usage: [serde_json::Value; 2]) -> Session {
    let [u1, u2] = usage;
    let line = json!({
        "id": id, "mission": "find the order", "system_prompt": "sys", "max_turns": null,
        "meta": meta,
        "turns": [
            {"number": 1, "assistant": {"content": null, "tool_calls": [
                {"id": "c1", "name": "lookup", "arguments": "{\"order\": \"A-17\"}"}]},
             "observations": [{"role": "tool", "tool_call_id": "c1", "content": "shipped"}],
             "usage": u1},
            {"number": 2, "assistant": {"content": "It shipped.", "tool_calls": []},
             "observations": [{"role": "user", "content": "thanks"}],
             "usage": u2}
        ]
    });
    Session::from_json(&line).expect("valid chat session")
}

#[test]
fn provider_cache_and_run_level_fidelity_reach_the_baseline_row() {
    let sessions = vec![
        session(
            "anthropic",
            json!({}),
            [
                json!({"input_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 80}),
                json!({"input_tokens": 10, "cache_read_input_tokens": 80, "cache_creation_input_tokens": 30}),
            ],
        ),
        session(
            "swe-agent-like",
            json!({"recorded_input_tokens_total": 400}),
            [json!({}), json!({})],
        ),
    ];
    let tok = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(tok));
    let cfg = RunConfig::new(
        vec![StrategyEntry::new(
            registry.build("observation-masking").unwrap(),
        )],
        registry.build("full-history").unwrap(),
        vec![tok],
    )
    .unwrap();
    let report = run_sessions(&cfg, "mem", sessions.clone()).unwrap();
    let base = &report.runs[0];
    assert_eq!(base.strategy, "full-history");
    let cache = base.provider_cache.as_ref().expect("recorded cache reads");
    assert_eq!(
        (cache.calls, cache.input_tokens, cache.cache_read_tokens),
        (2, 220, 80)
    );
    assert_eq!(cache.hit_rate, Some(80.0 / 220.0));
    // Anthropic's input_tokens leave the cache out; fidelity divides by the whole input.
    let fidelity = base.replay_fidelity.as_ref().expect("per-call fidelity");
    assert_eq!(fidelity.calls, 2);
    let run = base.run_fidelity.as_ref().expect("run-level fidelity");
    assert_eq!((run.sessions, run.recorded_tokens), (1, 400));
    // The run's full-history tokens of that one session, counted independently.
    let s = &sessions[1];
    let full = recap_core::strategy::RenderRequest::for_call;
    let want: u64 = (0..2)
        .map(|k| {
            let r = full(s, k).unwrap();
            recap_core::prompt_tokens(&tok as &dyn TokenCounter, &recap_history::render(&r))
        })
        .sum();
    assert_eq!(run.full_history_tokens, want);
    assert_eq!(run.ratio, Some(want as f64 / 400.0));
    // Only the baseline row carries them.
    assert!(report.runs[1].provider_cache.is_none() && report.runs[1].run_fidelity.is_none());
}
