//! Turns of the chat form (SPEC 11.1): a tool-calling or fenced-command agent's
//! response and every message the history gained after it.

use crate::fields::{
    FieldError, as_object, as_text, join, only_known, opt_array, opt_bool, opt_string, opt_text,
    req, wrong,
};
use crate::message::{Message, MessageToolCall, ToolCalls};
use crate::text::Text;
use serde_json::{Map, Value as Json};

/// One completed chat turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatTurn {
    pub number: u32,
    pub assistant: AssistantTurn,
    /// Every message after the response, in order.
    pub observations: Vec<Observation>,
    /// `false` when the turn's own action failed and the log says so.
    pub success: bool,
    /// The provider's token counts for the request that produced this turn.
    pub usage: Option<Map<String, Json>>,
}

/// The model's response as the history holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantTurn {
    /// `None` when the log has `null` (a response that only calls tools).
    pub content: Option<Text>,
    pub tool_calls: Vec<ChatToolCall>,
    pub reasoning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatToolCall {
    pub id: Text,
    pub name: Text,
    /// The JSON text of the arguments as the model wrote it (not necessarily valid).
    pub arguments: Text,
}

/// A message the history gained after a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// A tool's result, answering one call of the same turn.
    Tool {
        tool_call_id: Text,
        name: Option<Text>,
        content: Text,
        is_error: bool,
    },
    /// A user reply, or with `environment` the output of the agent's environment
    /// delivered as a user message (a fenced command's result).
    User { content: Text, environment: bool },
}

impl Observation {
    pub fn content(&self) -> &str {
        match self {
            Observation::Tool { content, .. } | Observation::User { content, .. } => content,
        }
    }

    /// Environment output: a tool result, or a user message marked `environment`.
    pub fn is_environment(&self) -> bool {
        match self {
            Observation::Tool { .. } => true,
            Observation::User { environment, .. } => *environment,
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Observation::Tool { is_error: true, .. })
    }

    /// The message this observation is in a prompt.
    pub fn to_message(&self) -> Message {
        match self {
            Observation::Tool {
                tool_call_id,
                name,
                content,
                ..
            } => Message::tool(tool_call_id.clone(), name.clone(), content.clone()),
            Observation::User { content, .. } => Message::user(content.clone()),
        }
    }
}

impl AssistantTurn {
    /// The ASSISTANT message of this response.
    pub fn to_message(&self) -> Message {
        Message::assistant_with_calls(
            self.content.clone().unwrap_or_default(),
            self.tool_calls
                .iter()
                .map(|c| MessageToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect::<ToolCalls>(),
        )
    }
}

impl ChatTurn {
    /// Decodes one chat-form turn object; `at` prefixes field paths in errors
    /// (`turns[2]`). Turn numbering is not checked here: that needs the turns before it.
    pub fn from_json(json: &Json, at: &str) -> Result<ChatTurn, FieldError> {
        decode_chat_turn(json, at)
    }

    /// The turn's messages in history order: the response, then each observation.
    pub fn messages(&self) -> impl Iterator<Item = Message> + '_ {
        std::iter::once(self.assistant.to_message())
            .chain(self.observations.iter().map(Observation::to_message))
    }

    /// How many messages [`ChatTurn::messages`] yields.
    pub fn message_count(&self) -> usize {
        1 + self.observations.len()
    }

    pub fn to_json(&self) -> Json {
        let mut t = Map::new();
        t.insert("number".into(), Json::from(self.number));
        let mut a = Map::new();
        a.insert(
            "content".into(),
            self.assistant
                .content
                .as_deref()
                .map_or(Json::Null, Json::from),
        );
        let calls = self
            .assistant
            .tool_calls
            .iter()
            .map(|c| {
                let mut o = Map::new();
                o.insert("id".into(), Json::from(c.id.as_str()));
                o.insert("name".into(), Json::from(c.name.as_str()));
                o.insert("arguments".into(), Json::from(c.arguments.as_str()));
                Json::Object(o)
            })
            .collect();
        a.insert("tool_calls".into(), Json::Array(calls));
        if let Some(r) = &self.assistant.reasoning {
            a.insert("reasoning".into(), Json::from(r.as_str()));
        }
        t.insert("assistant".into(), Json::Object(a));
        let observations = self.observations.iter().map(observation_json).collect();
        t.insert("observations".into(), Json::Array(observations));
        if !self.success {
            t.insert("success".into(), Json::Bool(false));
        }
        if let Some(u) = &self.usage {
            t.insert("usage".into(), Json::Object(u.clone()));
        }
        Json::Object(t)
    }
}

fn observation_json(o: &Observation) -> Json {
    let mut m = Map::new();
    match o {
        Observation::Tool {
            tool_call_id,
            name,
            content,
            is_error,
        } => {
            m.insert("role".into(), Json::from("tool"));
            m.insert("tool_call_id".into(), Json::from(tool_call_id.as_str()));
            if let Some(n) = name {
                m.insert("name".into(), Json::from(n.as_str()));
            }
            m.insert("content".into(), Json::from(content.as_str()));
            if *is_error {
                m.insert("is_error".into(), Json::Bool(true));
            }
        }
        Observation::User {
            content,
            environment,
        } => {
            m.insert("role".into(), Json::from("user"));
            m.insert("content".into(), Json::from(content.as_str()));
            if *environment {
                m.insert("environment".into(), Json::Bool(true));
            }
        }
    }
    Json::Object(m)
}

/// The fields of a chat-form turn.
pub const CHAT_TURN_FIELDS: [&str; 5] = ["number", "assistant", "observations", "success", "usage"];
/// The fields of a PTC-Lisp turn: each one in a chat turn is a rejection, so a typo
/// cannot silently switch forms.
pub const PTC_TURN_FIELDS: [&str; 11] = [
    "number",
    "program",
    "raw_response",
    "success",
    "error",
    "result",
    "prints",
    "tool_calls",
    "definitions",
    "feedback",
    "usage",
];

pub(crate) fn decode_chat_turn(j: &Json, at: &str) -> Result<ChatTurn, FieldError> {
    let obj = as_object(j, at)?;
    if let Some(key) = obj
        .keys()
        .find(|k| !CHAT_TURN_FIELDS.contains(&k.as_str()) && PTC_TURN_FIELDS.contains(&k.as_str()))
    {
        return Err(FieldError::new(
            join(at, key),
            "a PTC-Lisp field in a chat-form turn (this turn has `assistant`); a session's \
             turns are all of one form",
        ));
    }
    only_known(obj, &CHAT_TURN_FIELDS, at, "a chat-form turn")?;
    let number_json = req(obj, "number", at)?;
    let number = number_json
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| wrong(&join(at, "number"), "a positive integer", number_json))?;
    let assistant = decode_assistant(req(obj, "assistant", at)?, &join(at, "assistant"))?;
    let observations = opt_array(obj, "observations", at)?
        .iter()
        .enumerate()
        .map(|(i, o)| decode_observation(o, &format!("{at}.observations[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, o) in observations.iter().enumerate() {
        if let Observation::Tool { tool_call_id, .. } = o
            && !assistant.tool_calls.iter().any(|c| &c.id == tool_call_id)
        {
            let ids: Vec<String> = assistant
                .tool_calls
                .iter()
                .map(|c| format!("{:?}", c.id.as_str()))
                .collect();
            let valid = if ids.is_empty() {
                "it makes no tool call".to_string()
            } else {
                format!("its calls: {}", ids.join(", "))
            };
            return Err(FieldError::new(
                format!("{at}.observations[{i}].tool_call_id"),
                format!(
                    "{tool_call_id:?} answers no tool call of this turn's `assistant` ({valid})"
                ),
            ));
        }
    }
    let success = opt_bool(obj, "success", at)?.unwrap_or(true);
    let usage = match obj.get("usage") {
        None | Some(Json::Null) => None,
        Some(u) => Some(as_object(u, &join(at, "usage"))?.clone()),
    };
    Ok(ChatTurn {
        number,
        assistant,
        observations,
        success,
        usage,
    })
}

fn decode_assistant(j: &Json, at: &str) -> Result<AssistantTurn, FieldError> {
    let obj = as_object(j, at)?;
    only_known(
        obj,
        &["content", "tool_calls", "reasoning"],
        at,
        "`assistant`",
    )?;
    let content = opt_text(obj, "content", at)?;
    let tool_calls = opt_array(obj, "tool_calls", at)?
        .iter()
        .enumerate()
        .map(|(i, c)| decode_call(c, &format!("{at}.tool_calls[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, c) in tool_calls.iter().enumerate() {
        if tool_calls[..i].iter().any(|p| p.id == c.id) {
            return Err(FieldError::new(
                format!("{at}.tool_calls[{i}].id"),
                format!("{:?} is the id of an earlier call of this response", c.id),
            ));
        }
    }
    let reasoning = opt_string(obj, "reasoning", at)?;
    Ok(AssistantTurn {
        content,
        tool_calls,
        reasoning,
    })
}

fn decode_call(j: &Json, at: &str) -> Result<ChatToolCall, FieldError> {
    let obj = as_object(j, at)?;
    only_known(obj, &["id", "name", "arguments"], at, "a tool call")?;
    let id = as_text(req(obj, "id", at)?, &join(at, "id"))?;
    let name = as_text(req(obj, "name", at)?, &join(at, "name"))?;
    let arguments = as_text(req(obj, "arguments", at)?, &join(at, "arguments"))?;
    Ok(ChatToolCall {
        id,
        name,
        arguments,
    })
}

fn decode_observation(j: &Json, at: &str) -> Result<Observation, FieldError> {
    let obj = as_object(j, at)?;
    let role_json = req(obj, "role", at)?;
    match role_json.as_str() {
        Some("tool") => {
            only_known(
                obj,
                &["role", "tool_call_id", "name", "content", "is_error"],
                at,
                "a tool observation",
            )?;
            Ok(Observation::Tool {
                tool_call_id: as_text(req(obj, "tool_call_id", at)?, &join(at, "tool_call_id"))?,
                name: opt_text(obj, "name", at)?,
                content: as_text(req(obj, "content", at)?, &join(at, "content"))?,
                is_error: opt_bool(obj, "is_error", at)?.unwrap_or(false),
            })
        }
        Some("user") => {
            only_known(
                obj,
                &["role", "content", "environment"],
                at,
                "a user observation",
            )?;
            Ok(Observation::User {
                content: as_text(req(obj, "content", at)?, &join(at, "content"))?,
                environment: opt_bool(obj, "environment", at)?.unwrap_or(false),
            })
        }
        _ => Err(FieldError::new(
            join(at, "role"),
            format!("expected \"tool\" or \"user\", got {role_json}"),
        )),
    }
}
