//! Tiny strategies and sessions for the harness tests, independent of the built-ins;
//! runs of the built-ins are in [`builtins`].
#![allow(dead_code)]

pub mod builtins;

use recap_core::{Message, RenderError, RenderRequest, Replay, Session, Strategy, each_call};
use std::sync::Arc;

/// Append-only: SYSTEM, USER(mission), then per turn ASSISTANT(program) and
/// USER(prints + error + turns line). Named `full-history` so it can be the baseline.
pub struct TestFull;

pub fn feedback(req: &RenderRequest<'_>, i: usize) -> String {
    let t = &req.turns[i];
    let mut parts: Vec<String> = Vec::new();
    if !t.prints.is_empty() {
        parts.push(t.prints.join("\n"));
    }
    if let Some(e) = t.error_message() {
        parts.push(format!("Error: {e}"));
    }
    parts.push(recap_core::turns_line(req.max_turns - i as u32 - 1));
    parts.join("\n\n")
}

impl TestFull {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let mut m = vec![
            Message::system(req.system_prompt),
            Message::user(req.mission),
        ];
        for (i, t) in req.turns.iter().enumerate() {
            m.push(Message::assistant(t.program.clone()));
            m.push(Message::user(feedback(req, i)));
        }
        Ok(m)
    }
}

impl Strategy for TestFull {
    fn spec(&self) -> String {
        "full-history".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| TestFull.render(r))
    }
}

/// Single user message: mission, the names defined so far, the last program.
pub struct TestSingle;

impl TestSingle {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let mut user = req.mission.to_string();
        for d in recap_core::memory::fold(req.turns) {
            user.push_str(&format!("\n; Defined: {}", d.name));
        }
        if let Some(t) = req.turns.last() {
            user.push_str(&format!("\nlast program: {}", t.program));
        }
        user.push_str(&format!("\n\n{}", req.turns_line()));
        Ok(vec![
            Message::system(req.system_prompt),
            Message::user(user),
        ])
    }
}

impl Strategy for TestSingle {
    fn spec(&self) -> String {
        "test-single".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| TestSingle.render(r))
    }
}

/// Fails on the call after one turn; otherwise like TestSingle.
pub struct TestFailing;

impl TestFailing {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if req.turns.len() == 1 {
            return Err(RenderError::new("invalid_response", "no can do"));
        }
        TestSingle.render(req)
    }
}

impl Strategy for TestFailing {
    fn spec(&self) -> String {
        "test-failing".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| TestFailing.render(r))
    }
}

/// Panics on the call after two turns.
pub struct TestPanicking;

impl TestPanicking {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if req.turns.len() == 2 {
            panic!("strategy bug");
        }
        TestSingle.render(req)
    }
}

impl Strategy for TestPanicking {
    fn spec(&self) -> String {
        "test-panicking".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| TestPanicking.render(r))
    }
}

/// Drops the mission: breaks the mission-verbatim invariant on every call.
pub struct TestForgetful;

impl TestForgetful {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        Ok(vec![
            Message::system(req.system_prompt),
            Message::user(req.turns_line()),
        ])
    }
}

impl Strategy for TestForgetful {
    fn spec(&self) -> String {
        "test-forgetful".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| TestForgetful.render(r))
    }
}

pub fn arc<S: Strategy + 'static>(s: S) -> Arc<dyn Strategy> {
    Arc::new(s)
}

/// Three turns: a success with definitions and prints, a success redefining a name,
/// a failure. Usage recorded on turns 1 and 2.
pub fn session(id: &str) -> Session {
    let json = serde_json::json!({
        "id": id,
        "mission": "Find the lowest-priced laptop",
        "system_prompt": "You are a PTC-Lisp agent.",
        "max_turns": 5,
        "turns": [
            {"number": 1, "program": "(def laptops (tool/search {:q \"laptop\"}))", "success": true,
             "prints": ["found 3 laptops\nsecond line not a fact"],
             "definitions": [{"name": "laptops", "kind": "def", "value": ["a", "b", "c"]},
                             {"name": "cheapest", "kind": "defn"}],
             "usage": {"input_tokens": 40}},
            {"number": 2, "program": "(def laptops (filter in-stock? laptops))", "success": true,
             "prints": ["2 in stock"],
             "definitions": [{"name": "laptops", "kind": "def", "value": ["a", "b"]}],
             "usage": {"input_tokens": 80}},
            {"number": 3, "program": "(first (sort-by :price laptops))", "success": false,
             "error": {"message": "sort-by: key :price missing"}}
        ]
    });
    Session::from_json(&json).expect("valid test session")
}
