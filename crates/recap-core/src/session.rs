//! Sessions and turns (SPEC section 4), decoded from one JSON object with errors that
//! name the field (`turns[2].error.message`) and what was expected.

use crate::value::Value;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// SS-002: `max_turns` when a session does not say.
pub const DEFAULT_MAX_TURNS: u32 = 5;

/// One recorded agent run.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub mission: String,
    pub system_prompt: String,
    pub max_turns: u32,
    pub tools: BTreeMap<String, ToolSpec>,
    /// The `data/` namespace (NS-008), by key.
    pub data: BTreeMap<String, Value>,
    /// Free-form facts about the run (source, model, outcome…), kept verbatim.
    pub meta: Map<String, Json>,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSpec {
    pub signature: Option<String>,
    pub description: Option<String>,
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

/// A field that failed validation: `field` is a path such as `turns[2].error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The default `raw_response` of a turn: its program in a clojure fence.
pub fn fenced_program(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

fn type_name(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn wrong(field: &str, expected: &str, got: &Json) -> FieldError {
    FieldError::new(
        field,
        format!("expected {expected}, got {}", type_name(got)),
    )
}

fn req<'a>(obj: &'a Map<String, Json>, key: &str, at: &str) -> Result<&'a Json, FieldError> {
    obj.get(key)
        .ok_or_else(|| FieldError::new(join(at, key), "required field is missing"))
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn as_string(j: &Json, field: &str) -> Result<String, FieldError> {
    j.as_str()
        .map(str::to_string)
        .ok_or_else(|| wrong(field, "a string", j))
}

fn opt_string(obj: &Map<String, Json>, key: &str, at: &str) -> Result<Option<String>, FieldError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(j) => as_string(j, &join(at, key)).map(Some),
    }
}

fn as_object<'a>(j: &'a Json, field: &str) -> Result<&'a Map<String, Json>, FieldError> {
    j.as_object().ok_or_else(|| wrong(field, "an object", j))
}

fn as_array<'a>(j: &'a Json, field: &str) -> Result<&'a [Json], FieldError> {
    j.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| wrong(field, "an array", j))
}

fn opt_array<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    at: &str,
) -> Result<&'a [Json], FieldError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(j) => as_array(j, &join(at, key)),
    }
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
        let id = as_string(req(obj, "id", "")?, "id")?;
        let mission = as_string(req(obj, "mission", "")?, "mission")?;
        if mission.trim().is_empty() {
            return Err(FieldError::new("mission", "must be a non-empty string"));
        }
        let system_prompt = opt_string(obj, "system_prompt", "")?.unwrap_or_default();
        let max_turns = match obj.get("max_turns") {
            None | Some(Json::Null) => DEFAULT_MAX_TURNS,
            Some(j) => match j.as_u64() {
                Some(n) if (1..=u64::from(u32::MAX)).contains(&n) => n as u32,
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
        let turns_json = opt_array(obj, "turns", "")?;
        let mut turns = Vec::with_capacity(turns_json.len());
        for (i, t) in turns_json.iter().enumerate() {
            let turn = decode_turn(t, &format!("turns[{i}]"))?;
            let expected = i as u32 + 1;
            if turn.number != expected {
                return Err(FieldError::new(
                    format!("turns[{i}].number"),
                    format!(
                        "turn numbers must be consecutive from 1: expected {expected}, got {}",
                        turn.number
                    ),
                ));
            }
            turns.push(turn);
        }
        if turns.len() > max_turns as usize {
            return Err(FieldError::new(
                "turns",
                format!(
                    "{} turns recorded but max_turns is {max_turns}",
                    turns.len()
                ),
            ));
        }
        Ok(Session {
            id,
            mission,
            system_prompt,
            max_turns,
            tools,
            data,
            meta,
            turns,
        })
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
        obj.insert("max_turns".into(), Json::from(self.max_turns));
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
        obj.insert(
            "turns".into(),
            Json::Array(self.turns.iter().map(Turn::to_json).collect()),
        );
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
                ToolSpec {
                    signature: opt_string(o, "signature", &at)?,
                    description: opt_string(o, "description", &at)?,
                }
            }
        };
        tools.insert(name.clone(), spec);
    }
    Ok(tools)
}

fn decode_turn(j: &Json, at: &str) -> Result<Turn, FieldError> {
    let obj = as_object(j, at)?;
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
