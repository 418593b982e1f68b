//! The committed bench corpora: valid, reproducible from their documented commands, and
//! rendered by every built-in without an invariant violation.

use recap_core::invariants::check_session;
use recap_core::{CorpusReader, Session};
use std::path::PathBuf;

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
