//! Helpers shared by the importer tests.
#![allow(dead_code)]

use recap_core::Session;
use recap_core::corpus::read_all;
use recap_import::{Import, Kind, Problem, Severity};
use std::path::{Path, PathBuf};

/// `tests/fixtures/<rel>` of this crate.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// `../shared/<rel>` relative to the workspace root, or `None` (with a visible message)
/// when it is missing; under CI=true a missing corpus fails the test instead.
pub fn shared(rel: &str) -> Option<PathBuf> {
    recap_gen::shared::path(rel, "real-corpus import test")
}

pub fn import(kind: Kind, paths: &[PathBuf]) -> Import {
    recap_import::import(kind, paths).expect("inputs are readable")
}

/// The corpus bytes of an import.
pub fn jsonl(import: &Import) -> Vec<u8> {
    let mut out = Vec::new();
    import.write_jsonl(&mut out).expect("writing to memory");
    out
}

/// Reads written corpus bytes back with recap's own corpus reader: every line must be a
/// valid session, and re-encoding it must give the same line.
pub fn read_back(bytes: &[u8]) -> Vec<Session> {
    let text = std::str::from_utf8(bytes).expect("corpus is UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let entries = read_all(Path::new("import.jsonl"), bytes);
    assert_eq!(entries.len(), lines.len());
    entries
        .into_iter()
        .zip(lines)
        .map(|(e, line)| {
            let s = e
                .session
                .unwrap_or_else(|r| panic!("written session does not validate: {r}"));
            assert_eq!(
                serde_json::to_string(&s.to_json()).unwrap(),
                line,
                "session {} round-trips",
                s.id
            );
            s
        })
        .collect()
}

/// The problems whose message contains `text`.
pub fn problems_with<'a>(import: &'a Import, text: &str) -> Vec<&'a Problem> {
    import
        .problems
        .iter()
        .filter(|p| p.message.contains(text))
        .collect()
}

/// Exactly one problem contains `text`; returns it.
pub fn one_problem<'a>(import: &'a Import, text: &str, severity: Severity) -> &'a Problem {
    let found = problems_with(import, text);
    assert_eq!(
        found.len(),
        1,
        "expected one problem containing {text:?}, got: {:#?}",
        import
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    assert_eq!(found[0].severity, severity, "{}", found[0]);
    found[0]
}

/// Counts of problems by (severity, kind), for pinning.
pub fn counts(import: &Import) -> Vec<(String, usize)> {
    import
        .problem_counts()
        .into_iter()
        .map(|((sev, kind), n)| (format!("{}:{kind}", sev.as_str()), n))
        .collect()
}

/// `("lossy:kind", n)` pairs as the pinned form of [`counts`].
pub fn pinned(pairs: &[(&str, usize)]) -> Vec<(String, usize)> {
    pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

/// Whether a fact lies inside one of the messages: its content or a call's arguments
/// (a match across a message boundary does not count, as in the harness).
fn in_one_message(messages: &[recap_core::Message], fact: &str) -> bool {
    messages.iter().any(|m| {
        m.content.contains(fact) || m.tool_calls.iter().any(|c| c.arguments.contains(fact))
    })
}

/// SPEC 11.5: `full-history` keeps every fact of every chat turn, at every later call.
/// Each call's prompt is checked to be the previous one plus the turn's messages, and
/// each turn's facts to be in those messages. Returns how many facts were checked.
pub fn full_history_retains_every_fact(sessions: &[Session]) -> usize {
    let strategy = recap_builtins::registry()
        .build("full-history")
        .expect("full-history is built in");
    let mut checked = 0;
    for s in sessions {
        let n = s.chat_turns.len();
        let all = recap_core::render_call(strategy.as_ref(), s, n)
            .unwrap_or_else(|e| panic!("{}: full-history fails: {e}", s.id));
        let mut replay = strategy.open();
        let mut at = 2;
        assert_eq!(all[1].content, s.mission, "{}", s.id);
        for (k, turn) in s.chat_turns.iter().enumerate() {
            let prompt = replay
                .call(s, k, 0)
                .unwrap_or_else(|e| panic!("{} call {k}: {e}", s.id))
                .tail;
            assert_eq!(
                prompt.len(),
                at,
                "{} call {k}: one message per response and observation",
                s.id
            );
            assert!(
                prompt == all[..at],
                "{} call {k}: a prefix of the last prompt",
                s.id
            );
            let end = at + turn.message_count();
            let turn_messages = &all[at..end];
            for fact in recap_harness::retention::chat_facts::chat_turn_facts(turn) {
                assert!(
                    in_one_message(turn_messages, &fact),
                    "{} turn {}: fact {fact:?} is not in the prompt",
                    s.id,
                    turn.number
                );
                checked += 1;
            }
            at = end;
        }
    }
    checked
}

/// Every problem kind met is explained in docs/importers.md.
pub fn documented(import: &Import) {
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/importers.md"),
    )
    .expect("docs/importers.md exists");
    for p in &import.problems {
        assert!(
            docs.contains(&format!("`{}`", p.kind)),
            "problem kind {:?} is not explained in docs/importers.md ({p})",
            p.kind
        );
    }
}
