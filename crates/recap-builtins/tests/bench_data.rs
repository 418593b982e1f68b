//! The committed bench corpora: valid, reproducible from their documented commands, and
//! rendered by every built-in without an invariant violation.

use recap_core::invariants::check_session;
use recap_core::tokens::WordCounter;
use recap_core::{CorpusReader, Form, Observation, Session};
use std::path::PathBuf;
use std::sync::Arc;

fn bench_data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench-data")
        .join(name)
}

fn read(name: &str) -> Vec<Session> {
    let path = bench_data(name);
    CorpusReader::open(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|entry| entry.session.unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn jsonl(sessions: &[Session]) -> String {
    let mut buf = Vec::new();
    recap_gen::write_jsonl(&mut buf, sessions).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn generated_corpus_is_what_the_documented_command_writes() {
    // cargo run -p recap-gen --example gen-corpus -- --seed 7 --sessions 30 --turns 1..=30 --out bench-data/generated.jsonl
    let expected = jsonl(&recap_gen::generate_corpus(7, 30, 1..=30));
    let committed = std::fs::read_to_string(bench_data("generated.jsonl")).unwrap();
    assert!(
        committed == expected,
        "bench-data/generated.jsonl is stale: regenerate it"
    );
    assert!(committed.len() < 2 << 20, "keep generated.jsonl under 2 MB");
}

#[test]
fn handwritten_corpus_is_what_its_example_writes() {
    // cargo run -p recap-gen --example handwritten-corpus > bench-data/handwritten.jsonl
    let expected = jsonl(&recap_gen::handwritten::sessions().unwrap());
    let committed = std::fs::read_to_string(bench_data("handwritten.jsonl")).unwrap();
    assert!(
        committed == expected,
        "bench-data/handwritten.jsonl is stale: regenerate it"
    );
}

#[test]
fn chat_generated_corpus_is_what_the_documented_command_writes() {
    // cargo run -p recap-gen --example gen-corpus -- --form chat --seed 7 --sessions 30 --turns 1..=40 --out bench-data/chat-generated.jsonl
    let expected = jsonl(&recap_gen::generate_chat_corpus(7, 30, 1..=40));
    let committed = std::fs::read_to_string(bench_data("chat-generated.jsonl")).unwrap();
    assert!(
        committed == expected,
        "bench-data/chat-generated.jsonl is stale: regenerate it"
    );
    assert!(
        committed.len() < 2 << 20,
        "keep chat-generated.jsonl under 2 MB"
    );
}

#[test]
fn chat_handwritten_corpus_is_what_its_example_writes() {
    // cargo run -p recap-gen --example chat-handwritten-corpus > bench-data/chat-handwritten.jsonl
    let expected = jsonl(&recap_gen::chat_handwritten::sessions().unwrap());
    let committed = std::fs::read_to_string(bench_data("chat-handwritten.jsonl")).unwrap();
    assert!(
        committed == expected,
        "bench-data/chat-handwritten.jsonl is stale: regenerate it"
    );
}

#[test]
fn chat_handwritten_corpus_covers_its_scenarios() {
    let sessions = read("chat-handwritten.jsonl");
    assert!(sessions.len() >= 10);
    let by_id = |id: &str| {
        sessions
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let observations = |id: &str| -> Vec<&Observation> {
        by_id(id)
            .chat_turns
            .iter()
            .flat_map(|t| &t.observations)
            .collect()
    };
    let replies = |id: &str| {
        observations(id)
            .iter()
            .filter(|o| {
                matches!(
                    o,
                    Observation::User {
                        environment: false,
                        ..
                    }
                )
            })
            .count()
    };
    let calls = |id: &str| {
        by_id(id)
            .chat_turns
            .iter()
            .map(|t| t.assistant.tool_calls.len())
            .sum::<usize>()
    };
    for id in ["airline-change-flight", "retail-return"] {
        assert!(replies(id) >= 4 && calls(id) >= 3, "{id}");
    }
    for id in [
        "swe-function-calling",
        "openhands-run",
        "claude-code-thinking",
    ] {
        assert!(calls(id) >= 5, "{id}");
    }
    let classic = by_id("swe-classic-fenced");
    assert!(classic.chat_turns.iter().all(|t| {
        t.assistant.tool_calls.is_empty()
            && t.assistant
                .content
                .as_deref()
                .is_some_and(|c| c.contains("```"))
    }));
    assert!(observations("swe-classic-fenced").iter().all(|o| matches!(
        o,
        Observation::User {
            environment: true,
            ..
        }
    )));
    assert!(
        by_id("parallel-research")
            .chat_turns
            .iter()
            .any(|t| t.assistant.tool_calls.len() >= 4)
    );
    assert!(
        observations("tool-errors-recovery")
            .iter()
            .filter(|o| o.is_error())
            .count()
            >= 3
    );
    let long = by_id("long-run");
    assert!(long.chat_turns.len() >= 40);
    assert!(
        observations("long-run")
            .iter()
            .any(|o| o.content().lines().count() > 100)
    );
    assert!(
        by_id("claude-code-thinking")
            .chat_turns
            .iter()
            .all(|t| t.assistant.reasoning.is_some())
    );
    assert_eq!(by_id("zero-turns").turn_count(), 0);
    assert!(
        by_id("usage-recorded")
            .chat_turns
            .iter()
            .all(|t| t.usage.is_some())
    );
    for s in &sessions {
        assert!(s.form == Form::Chat || s.turn_count() == 0, "{}", s.id);
    }
}

/// Every chat strategy, at its defaults and at settings that cut, mask or clear often,
/// keeps its invariants on every call of every session of `file`.
fn chat_strategies_keep_their_invariants_on(file: &str) {
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(WordCounter));
    let names: Vec<String> = registry.infos().map(|i| i.name.clone()).collect();
    let specs = names.iter().map(String::as_str).chain([
        "rolling-window:window=1",
        "observation-masking:window=1",
        "token-budget-trim:max_tokens=500",
        "token-budget-trim:max_tokens=500,keep_mission=false",
        "tool-result-clearing:trigger=0,keep=1,clear_inputs=true",
        "amortized-forgetting:max_size=6,keep_first=1",
    ]);
    let strategies: Vec<_> = specs
        .map(|spec| (spec, registry.build(spec).unwrap()))
        .filter(|(_, s)| s.forms().contains(&Form::Chat))
        .collect();
    assert!(strategies.len() >= 6 + 6);
    for session in read(file) {
        for (spec, strategy) in &strategies {
            if !strategy.applies_to(&session) {
                continue;
            }
            let violations = check_session(strategy.as_ref(), &session).unwrap();
            // Dropping the mission is what keep_mission=false allows; it is counted.
            let allowed =
                |id: &str| spec.contains("keep_mission=false") && id == "mission-verbatim";
            assert!(
                violations.iter().all(|v| allowed(v.invariant)),
                "{file} {} {spec}: {violations:?}",
                session.id
            );
        }
    }
}

// One test per file, so that the two run side by side.
#[test]
fn chat_strategies_keep_their_invariants_on_chat_handwritten() {
    chat_strategies_keep_their_invariants_on("chat-handwritten.jsonl");
}

#[test]
fn chat_strategies_keep_their_invariants_on_chat_generated() {
    chat_strategies_keep_their_invariants_on("chat-generated.jsonl");
}

#[test]
fn handwritten_corpus_covers_its_scenarios() {
    let sessions = read("handwritten.jsonl");
    let by_id = |id: &str| {
        sessions
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    assert_eq!(by_id("single-shot").max_turns, 1);
    assert_eq!(by_id("long-30-turns").turns.len(), 30);
    assert!(
        by_id("error-recovery")
            .turns
            .iter()
            .filter(|t| !t.success)
            .count()
            >= 3
    );
    assert!(
        by_id("println-logs")
            .turns
            .iter()
            .map(|t| t.prints.len())
            .sum::<usize>()
            > 30
    );
    let polling = by_id("tool-heavy-polling");
    assert!(
        polling
            .turns
            .iter()
            .map(|t| t.tool_calls.len())
            .sum::<usize>()
            > 20
    );
    assert!(
        polling
            .turns
            .iter()
            .any(|t| t.tool_calls.windows(2).any(|w| w[0] == w[1]))
    );
    assert!(
        by_id("recorded-feedback")
            .turns
            .iter()
            .all(|t| t.usage.is_some())
    );
}

#[test]
fn every_builtin_keeps_its_invariants_on_the_bench_corpora() {
    let registry = recap_builtins::registry();
    for file in ["handwritten.jsonl", "generated.jsonl"] {
        for session in read(file) {
            for spec in recap_builtins::SPEC_BUILTINS
                .iter()
                .chain(&["rolling-window:window=1"])
            {
                let strategy = registry.build(spec).unwrap();
                let violations = check_session(strategy.as_ref(), &session).unwrap();
                assert!(
                    violations.is_empty(),
                    "{file} {} {spec}: {violations:?}",
                    session.id
                );
            }
        }
    }
}
