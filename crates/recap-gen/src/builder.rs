//! Builders for hand-written sessions: tests and the hand-authored bench corpus read
//! better as `TurnBuilder::ok(program).call(..).def(..)` than as JSON.
//!
//! Builders do not validate; [`SessionBuilder::build_validated`] round-trips through
//! the corpus encoding so a hand-written session is checked exactly like a corpus line.

use recap_core::session::{DEFAULT_MAX_TURNS, fenced_program};
use recap_core::{
    Closure, DefKind, Definition, FieldError, Session, ToolCall, ToolSpec, Turn, TurnError, Value,
};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// Decodes a value from its JSON encoding (SPEC section 1).
///
/// # Panics
/// When `json` is not a valid encoding: builders are for code-written values, where
/// that is a bug in the calling code.
pub fn value(json: Json) -> Value {
    match Value::from_json(&json) {
        Ok(v) => v,
        Err(e) => panic!("invalid value encoding {json}: {e}"),
    }
}

/// A closure value with the given parameter names.
pub fn closure(params: &[&str], docstring: Option<&str>) -> Value {
    Value::Fn(Closure {
        params: params.iter().map(|p| Some((*p).to_string())).collect(),
        rest: None,
        docstring: docstring.map(str::to_string),
        return_type: None,
    })
}

#[derive(Debug, Clone)]
pub struct SessionBuilder {
    session: Session,
}

/// A session of `form` with id `s`, `mission`, an empty system prompt, no turns and
/// nothing else: where both builders start.
pub(crate) fn bare_session(
    mission: &str,
    form: recap_core::Form,
    max_turns: u32,
    budget_recorded: bool,
) -> Session {
    Session {
        id: "s".to_string(),
        mission: mission.to_string(),
        system_prompt: String::new(),
        max_turns,
        budget_recorded,
        form,
        tools: BTreeMap::new(),
        data: BTreeMap::new(),
        meta: Map::new(),
        turns: Vec::new(),
        chat_turns: Vec::new(),
    }
}

impl SessionBuilder {
    /// A session with id `s`, an empty system prompt and `max_turns` 5 (SS-002).
    pub fn new(mission: &str) -> Self {
        Self {
            session: bare_session(mission, recap_core::Form::Ptc, DEFAULT_MAX_TURNS, true),
        }
    }

    pub fn id(mut self, id: &str) -> Self {
        self.session.id = id.to_string();
        self
    }

    pub fn system(mut self, system_prompt: &str) -> Self {
        self.session.system_prompt = system_prompt.to_string();
        self
    }

    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.session.max_turns = max_turns;
        self
    }

    pub fn tool(mut self, name: &str, signature: &str, description: &str) -> Self {
        self.session.tools.insert(
            name.to_string(),
            ToolSpec {
                signature: Some(signature.to_string()),
                description: Some(description.to_string()),
                parameters: None,
            },
        );
        self
    }

    pub fn data(mut self, key: &str, v: Value) -> Self {
        self.session.data.insert(key.to_string(), v);
        self
    }

    pub fn meta(mut self, key: &str, v: Json) -> Self {
        self.session.meta.insert(key.to_string(), v);
        self
    }

    /// Appends a turn, numbering it.
    pub fn turn(mut self, turn: TurnBuilder) -> Self {
        let mut turn = turn.turn;
        turn.number = self.session.turns.len() as u32 + 1;
        self.session.turns.push(turn);
        self
    }

    pub fn build(self) -> Session {
        self.session
    }

    /// The session after a round trip through the corpus encoding: errors exactly as a
    /// corpus line with this content would.
    pub fn build_validated(self) -> Result<Session, FieldError> {
        Session::from_json(&self.session.to_json())
    }
}

#[derive(Debug, Clone)]
pub struct TurnBuilder {
    turn: Turn,
}

impl TurnBuilder {
    fn new(program: &str, success: bool) -> Self {
        Self {
            turn: Turn {
                number: 0,
                program: program.to_string(),
                raw_response: fenced_program(program),
                success,
                error: None,
                result: None,
                prints: Vec::new(),
                tool_calls: Vec::new(),
                definitions: Vec::new(),
                feedback: None,
                usage: None,
            },
        }
    }

    /// A successful turn running `program`.
    pub fn ok(program: &str) -> Self {
        Self::new(program, true)
    }

    /// A failed turn with an error message.
    pub fn failed(program: &str, message: &str) -> Self {
        let mut b = Self::new(program, false);
        b.turn.error = Some(TurnError {
            message: message.to_string(),
            reason: None,
        });
        b
    }

    /// The error's machine-readable reason (failed turns).
    pub fn reason(mut self, reason: &str) -> Self {
        if let Some(e) = &mut self.turn.error {
            e.reason = Some(reason.to_string());
        }
        self
    }

    /// The model's whole reply, when it is more than the fenced program.
    pub fn raw(mut self, raw_response: &str) -> Self {
        self.turn.raw_response = raw_response.to_string();
        self
    }

    pub fn result(mut self, v: Value) -> Self {
        self.turn.result = Some(v);
        self
    }

    pub fn print(mut self, line: &str) -> Self {
        self.turn.prints.push(line.to_string());
        self
    }

    pub fn prints<I, S>(mut self, lines: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.turn.prints.extend(lines.into_iter().map(Into::into));
        self
    }

    /// A tool call; `result` is `None` when not recorded.
    pub fn call(mut self, name: &str, args: Value, result: Option<Value>) -> Self {
        self.turn.tool_calls.push(ToolCall {
            name: name.to_string(),
            args,
            result,
        });
        self
    }

    /// `(def name value)`.
    pub fn def(self, name: &str, v: Value) -> Self {
        self.definition(name, DefKind::Def, None, Some(v))
    }

    /// `(def name "doc" value)`.
    pub fn def_doc(self, name: &str, doc: &str, v: Value) -> Self {
        self.definition(name, DefKind::Def, Some(doc), Some(v))
    }

    /// `(defn name "doc"? [params] ...)` with a recorded closure value.
    pub fn defn(self, name: &str, doc: Option<&str>, params: &[&str]) -> Self {
        self.definition(name, DefKind::Defn, doc, Some(closure(params, None)))
    }

    pub fn definition(
        mut self,
        name: &str,
        kind: DefKind,
        docstring: Option<&str>,
        v: Option<Value>,
    ) -> Self {
        self.turn.definitions.push(Definition {
            name: name.to_string(),
            kind,
            docstring: docstring.map(str::to_string),
            value: v,
        });
        self
    }

    /// The exact feedback text the model was shown after this turn.
    pub fn feedback(mut self, text: &str) -> Self {
        self.turn.feedback = Some(text.to_string());
        self
    }

    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        let mut u = Map::new();
        u.insert("input_tokens".into(), Json::from(input_tokens));
        u.insert("output_tokens".into(), Json::from(output_tokens));
        self.turn.usage = Some(u);
        self
    }

    pub fn build(self) -> Turn {
        self.turn
    }
}
