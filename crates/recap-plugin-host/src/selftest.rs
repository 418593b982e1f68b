//! The self-test every plugin passes before it is registered: render each call of a
//! tiny built-in session with default options, through the full-request path and (when
//! the plugin has them) the session functions, and check what every strategy owes.

use crate::call::{self, CallError, Fns};
use crate::strategy::HostSession;
use recap_abi::wire::{self, SessionHeader};
use recap_core::{Message, Role, Session};
use std::collections::BTreeMap;

/// What the self-test exercised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfTestReport {
    /// Calls rendered (each compared where the test compares).
    pub calls: usize,
    /// Whether the session functions were exercised too.
    pub sessions: bool,
}

impl std::fmt::Display for SelfTestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "passed ({} renders{})",
            self.calls,
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

/// Runs the self-test; on failure, which step failed and how.
pub(crate) fn run(fns: &Fns) -> Result<SelfTestReport, Failure> {
    let session = sample_session();
    let options = BTreeMap::new();
    let header = SessionHeader::of_session(&session);
    let mut calls = 0;
    let mut full = Vec::new();
    for k in 0..=session.turns.len() {
        let step = format!("render after {k} turn(s)");
        let request = wire::render_request(&options, &header, &session.turns[..k]);
        let messages = call::render(fns, &request).map_err(|e| (step.clone(), e))?;
        check_universal(&step, k, &messages)?;
        let again = call::render(fns, &request).map_err(|e| (step.clone(), e))?;
        if again != messages {
            return Err(broken(
                step,
                "rendering the same request twice gave different messages".into(),
            ));
        }
        calls += 2;
        full.push(messages);
    }
    let sessions = fns.sessions.is_some();
    if sessions {
        let mut host = HostSession::new(0, &session);
        // In order, then a step back (a session may be rewound).
        let order: Vec<usize> = (0..=session.turns.len()).chain([1]).collect();
        for k in order {
            let step = format!("session render after {k} turn(s)");
            let messages = host
                .render(fns, &options, &session, k)
                .map_err(|e| (step.clone(), e))?;
            if messages != full[k] {
                return Err(broken(
                    step,
                    "the session functions rendered other messages than a full request".into(),
                ));
            }
            calls += 1;
        }
    }
    Ok(SelfTestReport { calls, sessions })
}
