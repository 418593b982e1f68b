//! The self-test every plugin passes before it is registered: render each call of a
//! tiny built-in session of every form the plugin declares, with default options,
//! through the full-request path and (when the plugin has them) the session functions,
//! and check what every strategy owes. Chat requests carry token counts (of a
//! word-counting stand-in tokenizer), so that path is exercised too.

use crate::backend::Backend;
use crate::call::CallError;
use crate::replay::{HostSession, Target};
use recap_abi::TokenCounts;
use recap_abi::wire::{self, SessionHeader};
use recap_core::tokens::WordCounter;
use recap_core::{Form, Message, Role, Session};
use std::collections::BTreeMap;

/// What the self-test exercised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfTestReport {
    /// Calls rendered (each compared where the test compares).
    pub calls: usize,
    /// Whether the session functions were exercised too.
    pub sessions: bool,
    /// The forms whose sample session was rendered: those the plugin declares.
    pub forms: Vec<Form>,
}

impl std::fmt::Display for SelfTestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let forms: Vec<&str> = self.forms.iter().map(|f| f.as_str()).collect();
        write!(
            f,
            "passed ({} renders of {} sessions{})",
            self.calls,
            forms.join(" and "),
            if self.sessions {
                ", incremental sessions included"
            } else {
                ", no incremental sessions"
            }
        )
    }
}

const SYSTEM_PROMPT: &str = "You are a PTC-Lisp agent (recap plugin self-test).";
const MISSION: &str = "Find the cheapest in-stock product";

/// Two turns: a successful one that calls a tool, prints and defines, and a failed one.
pub(crate) fn sample_session() -> Session {
    let json = serde_json::json!({
        "id": "recap-plugin-self-test",
        "system_prompt": SYSTEM_PROMPT,
        "mission": MISSION,
        "max_turns": 4,
        "tools": {"search": {"signature": "(search query)", "description": "Searches products"}},
        "data": {"budget": 100},
        "turns": [
            {
                "number": 1,
                "program": "(def products (tool/search {:query \"laptop\"}))\n(println (count products))",
                "success": true,
                "prints": ["2"],
                "tool_calls": [{"name": "search", "args": {"query": "laptop"},
                                "result": [{"name": "A", "price": 900}, {"name": "B", "price": 700}]}],
                "definitions": [{"name": "products", "kind": "def",
                                 "value": [{"name": "A", "price": 900}, {"name": "B", "price": 700}]}]
            },
            {
                "number": 2,
                "program": "(def cheapest (min-by :price products))",
                "success": false,
                "error": {"message": "min-by: undefined symbol"}
            }
        ]
    });
    Session::from_json(&json).expect("the self-test session is a valid session")
}

/// Three chat turns: parallel tool calls (one failing) with no text, a reply from the
/// user, and a fenced command whose output comes back as environment output. No budget.
pub(crate) fn sample_chat_session() -> Session {
    let json = serde_json::json!({
        "id": "recap-plugin-self-test-chat",
        "system_prompt": SYSTEM_PROMPT,
        "mission": MISSION,
        "max_turns": null,
        "tools": {"search": {"description": "Searches products",
                             "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
        "turns": [
            {
                "number": 1,
                "assistant": {"content": null, "reasoning": "Search first.", "tool_calls": [
                    {"id": "call_1", "name": "search", "arguments": "{\"query\": \"laptop\"}"},
                    {"id": "call_2", "name": "search", "arguments": "{\"query\": "}
                ]},
                "observations": [
                    {"role": "tool", "tool_call_id": "call_1", "name": "search",
                     "content": "A: 900\nB: 700"},
                    {"role": "tool", "tool_call_id": "call_2", "content": "invalid arguments",
                     "is_error": true}
                ],
                "usage": {"input_tokens": 120}
            },
            {
                "number": 2,
                "assistant": {"content": "B is the cheapest. Shall I check its stock?", "tool_calls": []},
                "observations": [{"role": "user", "content": "Yes, please."}]
            },
            {
                "number": 3,
                "assistant": {"content": "```\nstock B\n```"},
                "observations": [{"role": "user", "content": "B: 4 in stock\n", "environment": true}],
                "success": false
            }
        ]
    });
    Session::from_json(&json).expect("the chat self-test session is a valid session")
}

type Failure = (String, CallError);

fn broken(step: String, reason: String) -> Failure {
    (step, CallError::InvalidResponse { status: 0, reason })
}

fn check_universal(step: &str, k: usize, messages: &[Message]) -> Result<(), Failure> {
    let first_ok = messages
        .first()
        .is_some_and(|m| m.role == Role::System && m.content == SYSTEM_PROMPT);
    if !first_ok {
        return Err(broken(
            step.to_string(),
            "the first message must be SYSTEM with exactly the session's system prompt".into(),
        ));
    }
    if !messages.iter().any(|m| m.content.contains(MISSION)) {
        return Err(broken(
            step.to_string(),
            "the mission does not appear verbatim".into(),
        ));
    }
    if k == 0 && messages != [Message::system(SYSTEM_PROMPT), Message::user(MISSION)] {
        return Err(broken(
            step.to_string(),
            "with no turns completed every strategy must render [SYSTEM(system prompt), USER(mission)]"
                .into(),
        ));
    }
    Ok(())
}

/// Runs the self-test on the sample session of each of `forms`; on failure, which
/// step failed and how.
pub(crate) fn run(backend: &Backend, forms: &[Form]) -> Result<SelfTestReport, Failure> {
    let mut calls = 0;
    for form in forms {
        calls += run_form(backend, *form)?;
    }
    Ok(SelfTestReport {
        calls,
        sessions: backend.has_sessions(),
        forms: forms.to_vec(),
    })
}

/// The sample session of `form`, and the step names' prefix (PTC-Lisp steps keep their
/// 1.0 names).
fn sample(form: Form) -> (Session, &'static str) {
    match form {
        Form::Ptc => (sample_session(), ""),
        Form::Chat => (sample_chat_session(), "chat "),
    }
}

/// The full render request of call `k` of `session`.
fn full_request(session: &Session, k: usize) -> Vec<u8> {
    let options = BTreeMap::new();
    let header = SessionHeader::of_session(session);
    match session.form {
        Form::Ptc => wire::render_request(&options, &header, &session.turns[..k]),
        Form::Chat => {
            let turns = &session.chat_turns[..k];
            let counts = TokenCounts::of_session(
                &WordCounter,
                &session.system_prompt,
                &session.mission,
                turns,
            );
            wire::chat_render_request(&options, &header, turns, Some(&counts))
        }
    }
}

/// The self-test of one form; returns the calls rendered.
fn run_form(backend: &Backend, form: Form) -> Result<usize, Failure> {
    let (session, prefix) = sample(form);
    let options = BTreeMap::new();
    let mut calls = 0;
    let mut full = Vec::new();
    for k in 0..=session.turn_count() {
        let step = format!("{prefix}render after {k} turn(s)");
        let request = full_request(&session, k);
        let messages = backend
            .render(request.clone())
            .map_err(|e| (step.clone(), e))?;
        check_universal(&step, k, &messages)?;
        let again = backend.render(request).map_err(|e| (step.clone(), e))?;
        if again != messages {
            return Err(broken(
                step,
                "rendering the same request twice gave different messages".into(),
            ));
        }
        calls += 2;
        full.push(messages);
    }
    if backend.has_sessions() {
        let mut host = HostSession::new();
        // In order, then a step back (a session may be rewound).
        let order: Vec<usize> = (0..=session.turn_count()).chain([1]).collect();
        for k in order {
            let step = format!("{prefix}session render after {k} turn(s)");
            // Held: nothing, so each answer is the whole prompt.
            let to = Target {
                backend,
                options: &options,
                counter: Some(&WordCounter),
            };
            let messages = host
                .call(&to, &session, k, 0)
                .map_err(|e| (step.clone(), e))?
                .tail;
            if messages != full[k] {
                return Err(broken(
                    step,
                    "the session functions rendered other messages than a full request".into(),
                ));
            }
            calls += 1;
        }
    }
    Ok(calls)
}
