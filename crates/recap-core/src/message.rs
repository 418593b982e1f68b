//! The messages a strategy renders (SPEC 5 and 11.2).
//!
//! PTC-Lisp sessions render SYSTEM, USER and ASSISTANT messages with text content only.
//! Chat-form sessions add TOOL messages and tool calls on ASSISTANT messages, in the
//! shape provider APIs expect, so a rendered prompt can be sent as it is
//! ([`Message::to_openai_json`]).

use crate::Text;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result, answering one tool call by id (chat form only).
    Tool,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool call carried by an ASSISTANT message: `arguments` is the JSON text the model
/// wrote, kept as text (it may not even be valid JSON).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MessageToolCall {
    pub id: Text,
    pub name: Text,
    pub arguments: Text,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// Shared, not owned ([`Text`]): a kept message is the same text at every call.
    pub content: Text,
    /// ASSISTANT only: the calls this response made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<MessageToolCall>,
    /// TOOL only: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Text>,
    /// TOOL only: the tool's name, where the log recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Text>,
}

impl Message {
    /// A text message (no tool calls).
    pub fn new(role: Role, content: impl Into<Text>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
    pub fn system(content: impl Into<Text>) -> Self {
        Self::new(Role::System, content)
    }
    pub fn user(content: impl Into<Text>) -> Self {
        Self::new(Role::User, content)
    }
    pub fn assistant(content: impl Into<Text>) -> Self {
        Self::new(Role::Assistant, content)
    }
    /// An ASSISTANT message that makes tool calls.
    pub fn assistant_with_calls(
        content: impl Into<Text>,
        tool_calls: Vec<MessageToolCall>,
    ) -> Self {
        Self {
            tool_calls,
            ..Self::new(Role::Assistant, content)
        }
    }
    /// A TOOL message answering the call `tool_call_id`.
    pub fn tool(
        tool_call_id: impl Into<Text>,
        name: Option<Text>,
        content: impl Into<Text>,
    ) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            name,
            ..Self::new(Role::Tool, content)
        }
    }

    /// The message in the OpenAI chat-completions request shape: tool calls as
    /// `{"id", "type": "function", "function": {"name", "arguments"}}`, and an ASSISTANT
    /// message that only calls tools has `"content": null`, as the API writes it. Keys
    /// come in the API's documented order, so output is byte-stable.
    pub fn openai(&self) -> OpenAiMessage<'_> {
        OpenAiMessage {
            role: self.role.as_str(),
            content: (!self.content.is_empty() || self.tool_calls.is_empty())
                .then_some(self.content.as_str()),
            tool_calls: self
                .tool_calls
                .iter()
                .map(|c| OpenAiToolCall {
                    id: &c.id,
                    kind: "function",
                    function: OpenAiFunction {
                        name: &c.name,
                        arguments: &c.arguments,
                    },
                })
                .collect(),
            tool_call_id: self.tool_call_id.as_deref(),
            name: self.name.as_deref(),
        }
    }
}

/// A [`Message`] as the OpenAI chat-completions API takes it ([`Message::openai`]).
#[derive(Debug, Serialize)]
pub struct OpenAiMessage<'a> {
    pub role: &'a str,
    pub content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<OpenAiToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub struct OpenAiToolCall<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub function: OpenAiFunction<'a>,
}

#[derive(Debug, Serialize)]
pub struct OpenAiFunction<'a> {
    pub name: &'a str,
    pub arguments: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_shape_of_a_tool_calling_exchange() {
        let call = MessageToolCall {
            id: "call_1".into(),
            name: "get_user".into(),
            arguments: r#"{"id": 7}"#.into(),
        };
        let json = |m: &Message| serde_json::to_string(&m.openai()).unwrap();
        let a = Message::assistant_with_calls("", vec![call]);
        assert_eq!(
            json(&a),
            r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_user","arguments":"{\"id\": 7}"}}]}"#
        );
        let t = Message::tool("call_1", Some("get_user".into()), "ok");
        assert_eq!(
            json(&t),
            r#"{"role":"tool","content":"ok","tool_call_id":"call_1","name":"get_user"}"#
        );
        // Plain text messages keep the two-key shape, the same bytes as before tools.
        let u = Message::user("hi");
        assert_eq!(json(&u), r#"{"role":"user","content":"hi"}"#);
        assert_eq!(json(&u), serde_json::to_string(&u).unwrap());
    }
}
