//! The messages a strategy renders (SPEC 5 and 11.2).
//!
//! PTC-Lisp sessions render SYSTEM, USER and ASSISTANT messages with text content only.
//! Chat-form sessions add TOOL messages and tool calls on ASSISTANT messages, in the
//! shape provider APIs expect, so a rendered prompt can be sent as it is
//! ([`Message::openai`]).

use crate::Text;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

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
    /// ASSISTANT only: the calls this response made, shared like the texts (a kept
    /// message's clone does not allocate its list).
    #[serde(default, skip_serializing_if = "ToolCalls::is_empty")]
    pub tool_calls: ToolCalls,
    /// TOOL only: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Text>,
    /// TOOL only: the tool's name, where the log recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Text>,
}

/// An ASSISTANT message's tool calls, shared like its texts: a kept message's clone
/// does not allocate its list. Reads as a slice (`Deref`), iterates by reference, is
/// built from a `Vec` with `.into()`; [`ToolCalls::edit`] changes a copy.
///
/// An empty list holds no `Arc` at all: std's empty `Arc<[T]>` is one static
/// allocation shared by the whole process, so cloning and dropping the empty lists of
/// every other message would move one reference count between all worker threads.
#[derive(Clone, Default)]
pub struct ToolCalls(Option<Arc<[MessageToolCall]>>);

/// As the lists, by pointer first; an empty list is always `None`.
impl PartialEq for ToolCalls {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a[..] == b[..],
            _ => false,
        }
    }
}

impl Eq for ToolCalls {}

impl std::hash::Hash for ToolCalls {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl fmt::Debug for ToolCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for ToolCalls {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolCalls {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<MessageToolCall>::deserialize(deserializer).map(ToolCalls::from)
    }
}

impl ToolCalls {
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Applies `f` to a copy of the calls, which becomes this message's list (whoever
    /// else held the list keeps it unchanged).
    pub fn edit(&mut self, f: impl FnOnce(&mut [MessageToolCall])) {
        let mut calls = self.to_vec();
        f(&mut calls);
        *self = calls.into();
    }
}

impl std::ops::Deref for ToolCalls {
    type Target = [MessageToolCall];
    fn deref(&self) -> &[MessageToolCall] {
        self.0.as_deref().unwrap_or(&[])
    }
}

impl From<Vec<MessageToolCall>> for ToolCalls {
    fn from(calls: Vec<MessageToolCall>) -> Self {
        ToolCalls((!calls.is_empty()).then(|| calls.into()))
    }
}

impl FromIterator<MessageToolCall> for ToolCalls {
    fn from_iter<I: IntoIterator<Item = MessageToolCall>>(iter: I) -> Self {
        iter.into_iter().collect::<Vec<_>>().into()
    }
}

impl<'a> IntoIterator for &'a ToolCalls {
    type Item = &'a MessageToolCall;
    type IntoIter = std::slice::Iter<'a, MessageToolCall>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Message {
    /// A text message (no tool calls).
    pub fn new(role: Role, content: impl Into<Text>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: ToolCalls::default(),
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
        tool_calls: impl Into<ToolCalls>,
    ) -> Self {
        Self {
            tool_calls: tool_calls.into(),
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

    /// A clone shares the list; an edit changes this message's copy only; the JSON is a
    /// plain array, and an empty list is left out of a message.
    #[test]
    fn tool_calls_are_shared_until_edited() {
        let call = |id: &str| MessageToolCall {
            id: id.into(),
            name: "f".into(),
            arguments: "{}".into(),
        };
        let m = Message::assistant_with_calls("", vec![call("a"), call("b")]);
        let mut kept = m.clone();
        assert!(std::ptr::eq(&m.tool_calls[0], &kept.tool_calls[0]));
        kept.tool_calls
            .edit(|c| c[1].arguments = "{\"x\":1}".into());
        assert_eq!(m.tool_calls[1].arguments, "{}");
        assert_eq!(kept.tool_calls[1].arguments, "{\"x\":1}");
        let ids: Vec<&str> = (&kept.tool_calls)
            .into_iter()
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(
            json,
            r#"{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"f","arguments":"{}"},{"id":"b","name":"f","arguments":"{}"}]}"#
        );
        assert_eq!(serde_json::from_str::<Message>(&json).unwrap(), m);
        assert_eq!(
            serde_json::to_string(&Message::user("u")).unwrap(),
            r#"{"role":"user","content":"u"}"#
        );
    }

    /// However an empty list is made, it holds no `Arc` (std's empty `Arc<[T]>` is one
    /// static allocation whose count every thread would share), equals every other
    /// empty list, and an edit that empties a list leaves it empty in the same way.
    #[test]
    fn empty_tool_calls_hold_no_shared_allocation() {
        let made = [
            ToolCalls::default(),
            Vec::new().into(),
            std::iter::empty().collect(),
            Message::user("u").tool_calls,
            serde_json::from_str::<ToolCalls>("[]").unwrap(),
        ];
        for calls in &made {
            assert!(calls.0.is_none() && calls.is_empty() && calls.iter().next().is_none());
            assert_eq!(calls, &ToolCalls::default());
            assert_eq!(format!("{calls:?}"), "[]");
        }
        let call = MessageToolCall {
            id: "a".into(),
            name: "f".into(),
            arguments: "{}".into(),
        };
        let one: ToolCalls = std::iter::once(call.clone()).collect();
        assert_eq!(one.len(), 1);
        assert_ne!(one, ToolCalls::default());
        let mut emptied = one.clone();
        emptied.edit(|_| {});
        assert_eq!(emptied, one);
        let mut cleared: ToolCalls = vec![call].into();
        cleared = cleared
            .iter()
            .filter(|c| c.id.as_str() != "a")
            .cloned()
            .collect();
        assert!(cleared.0.is_none());
    }

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
