//! The shared real corpora import completely, validate, and import identically twice.
//! (Skipped with a message when ../shared is missing, failing under RECAP_REQUIRE_SHARED=1.)

mod common;

use common::{import, jsonl, read_back, shared};
use recap_import::{Kind, Severity};
use serde_json::Value as Json;
use std::collections::BTreeMap;

#[test]
fn ptc_runner_corpus_imports_24_sessions_377_turns_1040_tool_calls() {
    let Some(dir) = shared("corpora/ptc-runner-loop") else {
        return;
    };
    let first = import(Kind::PtcRunner, std::slice::from_ref(&dir));
    assert_eq!(first.files, 24);
    assert_eq!(first.sessions.len(), 24);
    assert_eq!(first.turns(), 377);
    assert_eq!(first.tool_calls(), 1040);
    // 9 evaluation errors, 5 failed capability calls, 9 returns the workflow rejected.
    assert_eq!(first.failed_turns(), 23);
    // Nothing is skipped; the one lossy note is the rejected return whose definition the
    // runtime kept (recap drops definitions of failed turns).
    assert!(
        first.problems.iter().all(|p| p.severity == Severity::Lossy),
        "{:#?}",
        first.problems
    );
    assert_eq!(first.problems.len(), 1, "{:#?}", first.problems);
    assert!(first.problems[0].message.contains("rejected return"));

    let bytes = jsonl(&first);
    let sessions = read_back(&bytes);
    assert_eq!(sessions.len(), 24);
    let again = jsonl(&import(Kind::PtcRunner, &[dir]));
    assert!(
        bytes == again,
        "importing twice gives byte-identical output"
    );

    let turns: Vec<_> = sessions.iter().flat_map(|s| &s.turns).collect();
    let (min, max) = sessions
        .iter()
        .map(|s| s.turns.len())
        .fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
    assert_eq!((min, max), (7, 29));
    // Every turn has the provider's counts; all but each session's last turn have the
    // feedback the model saw.
    assert!(turns.iter().all(|t| {
        t.usage
            .as_ref()
            .is_some_and(|u| u.contains_key("input_tokens"))
    }));
    assert_eq!(
        turns.iter().filter(|t| t.feedback.is_some()).count(),
        377 - 24
    );
    for s in &sessions {
        assert_eq!(s.max_turns as usize, s.turns.len());
        assert!(s.system_prompt.starts_with("PTC_AGENT_PROMPT_V1"));
        assert!(s.mission.contains("The incident identifier is"));
        // The loop traces name the model; the stress-loop ones only the connector.
        let model = s.meta.get("model").or(s.meta.get("model_revision"));
        assert!(
            model
                .and_then(|m| m.as_str())
                .is_some_and(|m| m.contains("deepseek")),
            "{}",
            s.id
        );
        for t in &s.turns {
            assert!(!t.program.is_empty());
            assert!(t.raw_response.contains(&t.program));
            if let Some(e) = &t.error {
                assert!(!e.message.is_empty());
            }
        }
    }
    // Errors carry the interpreter's message, not the runner's boilerplate.
    assert!(turns.iter().any(|t| {
        t.error_message()
            .is_some_and(|m| m == "type_error: keys: arg 1 expected map, got list")
    }));
}

#[test]
fn smolagents_corpus_imports_132_sessions_464_turns() {
    let Some(dir) = shared("corpora/smolagents-code") else {
        return;
    };
    let first = import(Kind::Smolagents, std::slice::from_ref(&dir));
    assert_eq!(first.files, 3);
    assert_eq!(first.sessions.len(), 132);
    assert_eq!(first.turns(), 464);
    assert!(first.problems.is_empty(), "{:#?}", first.problems);
    // corpora/README.md counts 182 error messages: 178 are errors of a step (50 code
    // parsing errors, 128 execution errors) and 4 are "Reached max steps.", which the
    // runs logged after their last, successful step.
    assert_eq!(first.failed_turns(), 178);
    let max_steps = first
        .sessions
        .iter()
        .filter(|s| s.meta["import"].get("run_error").is_some())
        .count();
    assert_eq!(max_steps, 4);
    assert_eq!(first.failed_turns() + max_steps, 182);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for t in first
        .sessions
        .iter()
        .flat_map(|s| &s.turns)
        .filter(|t| !t.success)
    {
        *reasons
            .entry(
                t.error
                    .as_ref()
                    .and_then(|e| e.reason.clone())
                    .unwrap_or_default(),
            )
            .or_default() += 1;
    }
    assert_eq!(reasons.get("code_parsing"), Some(&50));
    // A code-parsing error has no code action.
    assert!(
        first
            .sessions
            .iter()
            .flat_map(|s| &s.turns)
            .filter(|t| t
                .error
                .as_ref()
                .is_some_and(|e| e.reason.as_deref() == Some("code_parsing")))
            .all(|t| t.program.is_empty() && t.tool_calls.is_empty())
    );
    // Every other step has exactly the executed code as its program.
    assert_eq!(first.tool_calls(), 464 - 50);

    let bytes = jsonl(&first);
    let sessions = read_back(&bytes);
    assert_eq!(sessions.len(), 132);
    assert!(
        bytes == jsonl(&import(Kind::Smolagents, &[dir])),
        "byte-identical re-import"
    );
    for s in &sessions {
        assert!(s.mission.starts_with("New task:\n"));
        assert!(!s.system_prompt.is_empty());
        assert!(s.meta.contains_key("true_answer") && s.meta.contains_key("model_id"));
    }
}

/// One recorded llm-request: the system text and its messages as (role, text), with
/// assistant messages written the way the importer writes raw_response.
struct Recorded {
    system: String,
    messages: Vec<(String, String)>,
    tools_json_chars: usize,
    /// Characters of the assistant messages' tool-call JSON (`id`, `name`, `args`) in
    /// the request, and of their content.
    call_json_chars: usize,
    content_chars: usize,
}

fn recorded_requests(file: &std::path::Path) -> Vec<Recorded> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let r: Json = serde_json::from_str(line).unwrap();
        let p = &r["payload"];
        if r["record_type"] != "capability-input" || p["name"] != "llm-request" {
            continue;
        }
        let args = &p["arguments"];
        let mut messages = Vec::new();
        let (mut call_json_chars, mut content_chars) = (0, 0);
        for m in args["messages"].as_array().unwrap() {
            let role = m["role"].as_str().unwrap().to_string();
            let text = match role.as_str() {
                "assistant" => {
                    let calls = m["tool_calls"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                    call_json_chars += serde_json::to_string(&m["tool_calls"])
                        .unwrap()
                        .chars()
                        .count();
                    content_chars += m["content"].as_str().map_or(0, |c| c.chars().count());
                    recap_import::ptc_runner::assistant_text(m["content"].as_str(), calls)
                }
                _ => m["content"].as_str().unwrap().to_string(),
            };
            messages.push((role, text));
        }
        out.push(Recorded {
            system: args["system"].as_str().unwrap().to_string(),
            messages,
            tools_json_chars: serde_json::to_string(&args["tools"])
                .unwrap()
                .chars()
                .count(),
            call_json_chars,
            content_chars,
        });
    }
    out
}

/// Replay groundwork: full-history messages rebuilt from the imported sessions —
/// SYSTEM, USER(mission), then ASSISTANT(raw_response), USER(feedback) per turn — are
/// exactly the texts of every recorded request. What the provider also counted but
/// recap's messages do not carry (the tool schema, the tool-call JSON envelope) is
/// measured and printed.
#[test]
fn full_history_rebuilds_every_recorded_ptc_runner_request() {
    let Some(dir) = shared("corpora/ptc-runner-loop") else {
        return;
    };
    let imported = import(Kind::PtcRunner, &[dir]);
    let (mut calls, mut exact) = (0usize, 0usize);
    let mut mismatches = Vec::new();
    let (mut tools_chars, mut envelope_chars, mut fence_chars) = (0usize, 0usize, 0usize);
    for s in &imported.sessions {
        let file = s.meta["import"]["file"].as_str().unwrap();
        let requests = recorded_requests(std::path::Path::new(file));
        assert_eq!(
            requests.len(),
            s.turns.len(),
            "{}: one request per turn",
            s.id
        );
        for (k, req) in requests.iter().enumerate() {
            calls += 1;
            let mut rebuilt = vec![
                ("system".to_string(), s.system_prompt.clone()),
                ("user".to_string(), s.mission.clone()),
            ];
            for t in &s.turns[..k] {
                rebuilt.push(("assistant".into(), t.raw_response.clone()));
                rebuilt.push(("user".into(), t.feedback.clone().unwrap_or_default()));
            }
            let mut recorded = vec![("system".to_string(), req.system.clone())];
            // recap has no `tool` role: the runner's tool messages are the user turns.
            recorded.extend(req.messages.iter().map(|(role, text)| {
                let role = if role == "tool" {
                    "user"
                } else {
                    role.as_str()
                };
                (role.to_string(), text.clone())
            }));
            if rebuilt == recorded {
                exact += 1;
            } else {
                mismatches.push(format!("{} call {}", s.id, k + 1));
            }
            tools_chars += req.tools_json_chars;
            // Outside the texts: the runner sends each program as JSON tool-call
            // arguments; recap's text has the content and a clojure fence instead.
            envelope_chars += req.call_json_chars + req.content_chars;
            fence_chars += s.turns[..k]
                .iter()
                .map(|t| t.raw_response.chars().count())
                .sum::<usize>();
        }
    }
    eprintln!(
        "replay groundwork: {exact}/{calls} recorded requests rebuilt exactly; \
         outside the message texts: tool schema {} chars per call ({tools_chars} in all), \
         assistant history as sent (content + tool-call JSON) {envelope_chars} chars vs recap's \
         raw_response texts {fence_chars} chars",
        tools_chars / calls.max(1)
    );
    assert_eq!(calls, 377);
    assert!(
        mismatches.is_empty(),
        "calls whose rebuilt messages differ: {mismatches:?}"
    );
    assert_eq!(exact, 377);
}
