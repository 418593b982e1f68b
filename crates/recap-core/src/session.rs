//! Sessions and turns (SPEC section 4), decoded from one JSON object with errors that
//! name the field (`turns[2].error.message`) and what was expected.

use crate::chat::{ChatTurn, PTC_TURN_FIELDS, decode_chat_turn};
use crate::fields::{
    FieldError, as_object, as_string, join, only_known, opt_array, opt_string, req, wrong,
};
use crate::value::Value;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// SS-002: `max_turns` when a session does not say.
pub const DEFAULT_MAX_TURNS: u32 = 5;

/// The two forms a session can take (SPEC 11): PTC-Lisp programs, or chat messages
/// with provider tool calls / fenced commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Form {
    Ptc,
    Chat,
}

impl Form {
    pub const ALL: [Form; 2] = [Form::Ptc, Form::Chat];

    pub fn as_str(self) -> &'static str {
        match self {
            Form::Ptc => "ptc",
            Form::Chat => "chat",
        }
    }
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The fields of a session object.
pub const SESSION_FIELDS: [&str; 8] = [
    "id",
    "mission",
    "system_prompt",
    "max_turns",
    "tools",
    "data",
    "meta",
    "turns",
];

/// The `meta` key under which an importer records what the agent itself sent at each
/// call, when its log tells (`{"sent": "history", "restarts": [...]}`); the `recorded`
/// pseudo-strategy replays it (strategies/recorded, docs/importers.md).
pub const RECORDED_CONTEXT: &str = "recorded_context";

/// One recorded agent run.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub mission: String,
    pub system_prompt: String,
    /// The turn budget. A chat session that recorded none (`max_turns: null`) has
    /// `u32::MAX` here and `budget_recorded: false`: no turns line is ever rendered
    /// for it, and no call is ever past its budget.
    pub max_turns: u32,
    /// Whether `max_turns` came from the log (always true in the PTC form, where an
    /// absent budget means the default of 5).
    pub budget_recorded: bool,
    pub form: Form,
    pub tools: BTreeMap<String, ToolSpec>,
    /// The `data/` namespace (NS-008), by key.
    pub data: BTreeMap<String, Value>,
    /// Free-form facts about the run (source, model, outcome…), kept verbatim.
    pub meta: Map<String, Json>,
    /// The turns of a PTC-Lisp session (empty in the chat form).
    pub turns: Vec<Turn>,
    /// The turns of a chat-form session (empty in the PTC form).
    pub chat_turns: Vec<ChatTurn>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSpec {
    pub signature: Option<String>,
    pub description: Option<String>,
    /// The JSON schema of the tool's parameters, as sent to the provider (chat form).
    pub parameters: Option<Json>,
}

/// One completed turn: the program the model wrote and what running it recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub number: u32,
    pub program: String,
    /// The model's whole reply; defaults to the program in a clojure fence.
    pub raw_response: String,
    pub success: bool,
    pub error: Option<TurnError>,
    /// The value the program returned; `None` when not recorded (distinct from nil).
    pub result: Option<Value>,
    /// One entry per println call (TRN-008/009).
    pub prints: Vec<String>,
    pub tool_calls: Vec<ToolCall>,
    /// In execution order.
    pub definitions: Vec<Definition>,
    /// The exact text the model was shown after this turn, when recorded.
    pub feedback: Option<String>,
    /// The provider's token counts for the request that produced this turn.
    pub usage: Option<Map<String, Json>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnError {
    pub message: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub args: Value,
    pub result: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefKind {
    Def,
    Defn,
}

impl DefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DefKind::Def => "def",
            DefKind::Defn => "defn",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub name: String,
    pub kind: DefKind,
    pub docstring: Option<String>,
    /// `None` when the value was not recorded (its type is then `unknown`).
    pub value: Option<Value>,
}

impl Definition {
    /// A definition is a function when it was made with `defn` or holds a closure.
    pub fn is_function(&self) -> bool {
        self.kind == DefKind::Defn || matches!(self.value, Some(Value::Fn(_)))
    }
}

impl Turn {
    /// The error message as SPEC section 4 defines it: `message`, else `reason`.
    pub fn error_message(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.message.as_str())
    }
}

/// The default `raw_response` of a turn: its program in a clojure fence.
pub fn fenced_program(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

fn value(j: &Json, field: &str) -> Result<Value, FieldError> {
    Value::from_json(j).map_err(|e| {
        let field = if e.path.is_empty() {
            field.to_string()
        } else {
            format!("{field}{}", e.path)
        };
        FieldError::new(field, e.message)
    })
}

impl Session {
    /// Decodes and validates one session object.
    pub fn from_json(json: &Json) -> Result<Session, FieldError> {
        let obj = as_object(json, "session")?;
        only_known(obj, &SESSION_FIELDS, "", "a session")?;
        let id = as_string(req(obj, "id", "")?, "id")?;
        let mission = as_string(req(obj, "mission", "")?, "mission")?;
        if mission.trim().is_empty() {
            return Err(FieldError::new("mission", "must be a non-empty string"));
        }
        let system_prompt = opt_string(obj, "system_prompt", "")?.unwrap_or_default();
        let turns_json = opt_array(obj, "turns", "")?;
        let form = session_form(turns_json, obj)?;
        let (max_turns, budget_recorded) = match obj.get("max_turns") {
            None | Some(Json::Null) if form == Form::Chat => (u32::MAX, false),
            None | Some(Json::Null) => (DEFAULT_MAX_TURNS, true),
            Some(j) => match j.as_u64() {
                Some(n) if (1..=u64::from(u32::MAX)).contains(&n) => (n as u32, true),
                _ => {
                    return Err(FieldError::new(
                        "max_turns",
                        format!("expected an integer ≥ 1, got {j}"),
                    ));
                }
            },
        };
        let tools = match obj.get("tools") {
            None | Some(Json::Null) => BTreeMap::new(),
            Some(j) => decode_tools(as_object(j, "tools")?)?,
        };
        let data = match obj.get("data") {
            None | Some(Json::Null) => BTreeMap::new(),
            Some(j) => as_object(j, "data")?
                .iter()
                .map(|(k, v)| Ok((k.clone(), value(v, &format!("data.{k}"))?)))
                .collect::<Result<_, FieldError>>()?,
        };
        let meta = match obj.get("meta") {
            None | Some(Json::Null) => Map::new(),
            Some(j) => as_object(j, "meta")?.clone(),
        };
        let mut turns = Vec::new();
        let mut chat_turns = Vec::new();
        for (i, t) in turns_json.iter().enumerate() {
            let at = format!("turns[{i}]");
            let number = match form {
                Form::Ptc => {
                    let turn = decode_turn(t, &at)?;
                    let number = turn.number;
                    turns.push(turn);
                    number
                }
                Form::Chat => {
                    let turn = decode_chat_turn(t, &at)?;
                    let number = turn.number;
                    chat_turns.push(turn);
                    number
                }
            };
            let expected = i as u32 + 1;
            if number != expected {
                return Err(FieldError::new(
                    format!("{at}.number"),
                    format!(
                        "turn numbers must be consecutive from 1: expected {expected}, got {number}"
                    ),
                ));
            }
        }
        check_chat_answers(&chat_turns)?;
        if turns_json.len() > max_turns as usize {
            return Err(FieldError::new(
                "turns",
                format!(
                    "{} turns recorded but max_turns is {max_turns}",
                    turns_json.len()
                ),
            ));
        }
        Ok(Session {
            id,
            mission,
            system_prompt,
            max_turns,
            budget_recorded,
            form,
            tools,
            data,
            meta,
            turns,
            chat_turns,
        })
    }

    /// How many turns were recorded, whatever the form.
    pub fn turn_count(&self) -> usize {
        match self.form {
            Form::Ptc => self.turns.len(),
            Form::Chat => self.chat_turns.len(),
        }
    }

    /// The recorded turn budget; `None` for a chat session that recorded none.
    pub fn budget(&self) -> Option<u32> {
        self.budget_recorded.then_some(self.max_turns)
    }

    /// The provider's recorded usage for the request that produced turn `i + 1`.
    pub fn turn_usage(&self, i: usize) -> Option<&Map<String, Json>> {
        match self.form {
            Form::Ptc => self.turns.get(i)?.usage.as_ref(),
            Form::Chat => self.chat_turns.get(i)?.usage.as_ref(),
        }
    }

    /// Encodes the session in the corpus format (the inverse of [`Session::from_json`]).
    pub fn to_json(&self) -> Json {
        let mut obj = Map::new();
        obj.insert("id".into(), Json::from(self.id.clone()));
        obj.insert("mission".into(), Json::from(self.mission.clone()));
        obj.insert(
            "system_prompt".into(),
            Json::from(self.system_prompt.clone()),
        );
        obj.insert(
            "max_turns".into(),
            self.budget().map_or(Json::Null, Json::from),
        );
        if !self.tools.is_empty() {
            let tools = self
                .tools
                .iter()
                .map(|(name, spec)| {
                    let mut t = Map::new();
                    if let Some(s) = &spec.signature {
                        t.insert("signature".into(), Json::from(s.clone()));
                    }
                    if let Some(d) = &spec.description {
                        t.insert("description".into(), Json::from(d.clone()));
                    }
                    if let Some(p) = &spec.parameters {
                        t.insert("parameters".into(), p.clone());
                    }
                    (name.clone(), Json::Object(t))
                })
                .collect();
            obj.insert("tools".into(), Json::Object(tools));
        }
        if !self.data.is_empty() {
            let data = self
                .data
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
            obj.insert("data".into(), Json::Object(data));
        }
        if !self.meta.is_empty() {
            obj.insert("meta".into(), Json::Object(self.meta.clone()));
        }
        let turns = match self.form {
            Form::Ptc => self.turns.iter().map(Turn::to_json).collect(),
            Form::Chat => self.chat_turns.iter().map(ChatTurn::to_json).collect(),
        };
        obj.insert("turns".into(), Json::Array(turns));
        Json::Object(obj)
    }

    /// Failed turns among the first `k`.
    pub fn failed_turns(&self, k: usize) -> impl Iterator<Item = &Turn> {
        self.turns[..k.min(self.turns.len())]
            .iter()
            .filter(|t| !t.success)
    }
}

impl Turn {
    /// Decodes one turn object; `at` prefixes field paths in errors (`turns[2]`).
    /// Turn numbering is not checked here: that needs the turns before it.
    pub fn from_json(json: &Json, at: &str) -> Result<Turn, FieldError> {
        decode_turn(json, at)
    }

    pub fn to_json(&self) -> Json {
        let mut t = Map::new();
        t.insert("number".into(), Json::from(self.number));
        t.insert("program".into(), Json::from(self.program.clone()));
        if self.raw_response != fenced_program(&self.program) {
            t.insert("raw_response".into(), Json::from(self.raw_response.clone()));
        }
        t.insert("success".into(), Json::Bool(self.success));
        if let Some(e) = &self.error {
            let mut err = Map::new();
            err.insert("message".into(), Json::from(e.message.clone()));
            if let Some(r) = &e.reason {
                err.insert("reason".into(), Json::from(r.clone()));
            }
            t.insert("error".into(), Json::Object(err));
        }
        if let Some(r) = &self.result {
            t.insert("result".into(), r.to_json());
        }
        if !self.prints.is_empty() {
            t.insert(
                "prints".into(),
                Json::Array(self.prints.iter().cloned().map(Json::from).collect()),
            );
        }
        if !self.tool_calls.is_empty() {
            let calls = self
                .tool_calls
                .iter()
                .map(|c| {
                    let mut o = Map::new();
                    o.insert("name".into(), Json::from(c.name.clone()));
                    o.insert("args".into(), c.args.to_json());
                    if let Some(r) = &c.result {
                        o.insert("result".into(), r.to_json());
                    }
                    Json::Object(o)
                })
                .collect();
            t.insert("tool_calls".into(), Json::Array(calls));
        }
        if !self.definitions.is_empty() {
            let defs = self
                .definitions
                .iter()
                .map(|d| {
                    let mut o = Map::new();
                    o.insert("name".into(), Json::from(d.name.clone()));
                    o.insert("kind".into(), Json::from(d.kind.as_str()));
                    if let Some(doc) = &d.docstring {
                        o.insert("docstring".into(), Json::from(doc.clone()));
                    }
                    if let Some(v) = &d.value {
                        o.insert("value".into(), v.to_json());
                    }
                    Json::Object(o)
                })
                .collect();
            t.insert("definitions".into(), Json::Array(defs));
        }
        if let Some(f) = &self.feedback {
            t.insert("feedback".into(), Json::from(f.clone()));
        }
        if let Some(u) = &self.usage {
            t.insert("usage".into(), Json::Object(u.clone()));
        }
        Json::Object(t)
    }
}

fn decode_tools(obj: &Map<String, Json>) -> Result<BTreeMap<String, ToolSpec>, FieldError> {
    let mut tools = BTreeMap::new();
    for (name, spec) in obj {
        let at = format!("tools.{name}");
        let spec = match spec {
            Json::Null => ToolSpec::default(),
            j => {
                let o = as_object(j, &at)?;
                only_known(
                    o,
                    &["signature", "description", "parameters"],
                    &at,
                    "a tool",
                )?;
                ToolSpec {
                    signature: opt_string(o, "signature", &at)?,
                    description: opt_string(o, "description", &at)?,
                    parameters: o.get("parameters").filter(|p| !p.is_null()).cloned(),
                }
            }
        };
        tools.insert(name.clone(), spec);
    }
    Ok(tools)
}

/// The form of a session's turns: chat when they carry `assistant`, and all of them
/// must agree (SPEC 11.1). A session without turns is PTC, unless its budget is an
/// explicit `null`, which only the chat form allows: so a chat session with no turn yet
/// reads back as what it was written as.
fn session_form(turns: &[Json], obj: &Map<String, Json>) -> Result<Form, FieldError> {
    let is_chat = |t: &Json| t.as_object().is_some_and(|o| o.contains_key("assistant"));
    let Some(first) = turns.first() else {
        return Ok(match obj.get("max_turns") {
            Some(Json::Null) => Form::Chat,
            _ => Form::Ptc,
        });
    };
    let form = if is_chat(first) {
        Form::Chat
    } else {
        Form::Ptc
    };
    for (i, t) in turns.iter().enumerate().skip(1) {
        if t.is_object() && is_chat(t) != (form == Form::Chat) {
            let (this, first) = if is_chat(t) {
                ("chat form (it has `assistant`)", "PTC-Lisp form")
            } else {
                ("PTC-Lisp form (no `assistant`)", "chat form")
            };
            return Err(FieldError::new(
                format!("turns[{i}]"),
                format!(
                    "this turn is in the {this} but turns[0] is in the {first}; a session's turns are all of one form"
                ),
            ));
        }
    }
    Ok(form)
}

/// Every call of a chat turn is answered once, by a tool observation of the same turn
/// (the pairing provider APIs enforce, so a recorded history cannot break it). Only the
/// last turn may leave calls unanswered: a run can stop right after the model called a
/// tool, and no prompt replays that turn.
fn check_chat_answers(turns: &[ChatTurn]) -> Result<(), FieldError> {
    use crate::chat::Observation;
    let last = turns.len().saturating_sub(1);
    for (i, turn) in turns.iter().enumerate() {
        for (c, call) in turn.assistant.tool_calls.iter().enumerate() {
            let answers: Vec<usize> = turn
                .observations
                .iter()
                .enumerate()
                .filter(|(_, o)| {
                    matches!(o, Observation::Tool { tool_call_id, .. } if *tool_call_id == call.id)
                })
                .map(|(j, _)| j)
                .collect();
            match answers.as_slice() {
                [] if i < last => {
                    return Err(FieldError::new(
                        format!("turns[{i}].assistant.tool_calls[{c}]"),
                        format!(
                            "call {:?} ({}) has no tool observation answering it, and a later turn follows (only the last turn may leave a call unanswered)",
                            call.id, call.name
                        ),
                    ));
                }
                [_, second, ..] => {
                    return Err(FieldError::new(
                        format!("turns[{i}].observations[{second}].tool_call_id"),
                        format!("call {:?} is answered twice", call.id),
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn decode_turn(j: &Json, at: &str) -> Result<Turn, FieldError> {
    let obj = as_object(j, at)?;
    only_known(obj, &PTC_TURN_FIELDS, at, "a PTC-Lisp turn")?;
    let number_json = req(obj, "number", at)?;
    let number = number_json
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| wrong(&join(at, "number"), "a positive integer", number_json))?;
    let program = as_string(req(obj, "program", at)?, &join(at, "program"))?;
    let raw_response =
        opt_string(obj, "raw_response", at)?.unwrap_or_else(|| fenced_program(&program));
    let success_json = req(obj, "success", at)?;
    let success = success_json
        .as_bool()
        .ok_or_else(|| wrong(&join(at, "success"), "a boolean", success_json))?;
    let error = match obj.get("error") {
        None | Some(Json::Null) => None,
        Some(e) => Some(decode_error(e, &join(at, "error"))?),
    };
    if !success && error.is_none() {
        return Err(FieldError::new(
            join(at, "error"),
            "a failed turn (success: false) needs an error with a message or reason",
        ));
    }
    let result = match obj.get("result") {
        None => None,
        Some(r) => Some(value(r, &join(at, "result"))?),
    };
    let prints = opt_array(obj, "prints", at)?
        .iter()
        .enumerate()
        .map(|(i, p)| as_string(p, &format!("{at}.prints[{i}]")))
        .collect::<Result<_, _>>()?;
    let tool_calls = opt_array(obj, "tool_calls", at)?
        .iter()
        .enumerate()
        .map(|(i, c)| decode_tool_call(c, &format!("{at}.tool_calls[{i}]")))
        .collect::<Result<_, _>>()?;
    let definitions = opt_array(obj, "definitions", at)?
        .iter()
        .enumerate()
        .map(|(i, d)| decode_definition(d, &format!("{at}.definitions[{i}]")))
        .collect::<Result<_, _>>()?;
    let feedback = opt_string(obj, "feedback", at)?;
    let usage = match obj.get("usage") {
        None | Some(Json::Null) => None,
        Some(u) => Some(as_object(u, &join(at, "usage"))?.clone()),
    };
    Ok(Turn {
        number,
        program,
        raw_response,
        success,
        error,
        result,
        prints,
        tool_calls,
        definitions,
        feedback,
        usage,
    })
}

fn decode_error(j: &Json, at: &str) -> Result<TurnError, FieldError> {
    let obj = as_object(j, at)?;
    only_known(obj, &["message", "reason"], at, "an error")?;
    let message = opt_string(obj, "message", at)?;
    let reason = opt_string(obj, "reason", at)?;
    match (message, reason) {
        (Some(message), reason) => Ok(TurnError { message, reason }),
        (None, Some(reason)) => Ok(TurnError {
            message: reason.clone(),
            reason: Some(reason),
        }),
        (None, None) => Err(FieldError::new(
            at,
            "expected an object with `message` or `reason` (a string)",
        )),
    }
}

fn decode_tool_call(j: &Json, at: &str) -> Result<ToolCall, FieldError> {
    let obj = as_object(j, at)?;
    only_known(obj, &["name", "args", "result"], at, "a tool call")?;
    let name = as_string(req(obj, "name", at)?, &join(at, "name"))?;
    let args = match obj.get("args") {
        None => Value::Nil,
        Some(a) => value(a, &join(at, "args"))?,
    };
    let result = match obj.get("result") {
        None => None,
        Some(r) => Some(value(r, &join(at, "result"))?),
    };
    Ok(ToolCall { name, args, result })
}

fn decode_definition(j: &Json, at: &str) -> Result<Definition, FieldError> {
    let obj = as_object(j, at)?;
    only_known(
        obj,
        &["name", "kind", "docstring", "value"],
        at,
        "a definition",
    )?;
    let name = as_string(req(obj, "name", at)?, &join(at, "name"))?;
    let kind_json = req(obj, "kind", at)?;
    let kind = match kind_json.as_str() {
        Some("def") => DefKind::Def,
        Some("defn") => DefKind::Defn,
        _ => {
            return Err(FieldError::new(
                join(at, "kind"),
                format!("expected \"def\" or \"defn\", got {kind_json}"),
            ));
        }
    };
    let docstring = opt_string(obj, "docstring", at)?;
    let value = match obj.get("value") {
        None => None,
        Some(v) => Some(value(v, &join(at, "value"))?),
    };
    Ok(Definition {
        name,
        kind,
        docstring,
        value,
    })
}
