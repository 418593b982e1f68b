//! Chat-completions request bodies, byte-exact, and the key the response cache files
//! them under: a SHA-256 of (model, exact body). Bodies are built from structs, never
//! from maps, so the same prompt always gives the same bytes and the same key.

use recap_core::{Message, OpenAiMessage, Session};
use serde::Serialize;
use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};
use std::fmt;

/// The cache key of a request: SHA-256 of the model name, a NUL, and the body.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub [u8; 32]);

impl Key {
    pub fn of(model: &str, body: &str) -> Key {
        let mut h = Sha256::new();
        h.update(model.as_bytes());
        h.update([0u8]);
        h.update(body.as_bytes());
        Key(h.finalize().into())
    }

    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", &self.hex()[..12])
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// How the model is asked: the same for every request of an evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampling {
    pub model: String,
    /// Completion tokens at most (`max_tokens`, which vLLM, llama.cpp and Ollama take).
    pub max_tokens: u32,
    pub temperature: f64,
}

/// One request, ready to send or to look up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRequest {
    pub model: String,
    /// The exact JSON body sent.
    pub body: String,
    pub key: Key,
    /// Completion tokens asked for at most (for the tokens-per-minute limit).
    pub max_tokens: u32,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<OpenAiMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [Json]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'a str>,
    temperature: f64,
    max_tokens: u32,
}

/// What the model may do besides writing text.
#[derive(Debug, Clone, Copy)]
pub enum Tools<'a> {
    /// No `tools` field.
    None,
    /// The session's tools; the model may call them.
    Offer(&'a [Json]),
    /// The session's tools with `tool_choice: "none"`: a history with tool calls stays
    /// valid for servers that check calls against the tools, and the model answers in text.
    Describe(&'a [Json]),
}

impl ChatRequest {
    pub fn new(sampling: &Sampling, messages: &[Message], tools: Tools<'_>) -> ChatRequest {
        Self::with_question(sampling, messages, None, tools)
    }

    /// The request of `messages` followed by `question` (a USER message), without
    /// copying the prompt.
    pub fn with_question(
        sampling: &Sampling,
        messages: &[Message],
        question: Option<&Message>,
        tools: Tools<'_>,
    ) -> ChatRequest {
        let (tools, tool_choice) = match tools {
            Tools::None | Tools::Offer([]) | Tools::Describe([]) => (None, None),
            Tools::Offer(t) => (Some(t), None),
            Tools::Describe(t) => (Some(t), Some("none")),
        };
        let body = Body {
            model: &sampling.model,
            messages: messages
                .iter()
                .chain(question)
                .map(Message::openai)
                .collect(),
            tools,
            tool_choice,
            temperature: sampling.temperature,
            max_tokens: sampling.max_tokens,
        };
        // Serialising plain structs of strings and numbers cannot fail.
        let body = serde_json::to_string(&body).unwrap_or_default();
        ChatRequest {
            key: Key::of(&sampling.model, &body),
            model: sampling.model.clone(),
            body,
            max_tokens: sampling.max_tokens,
        }
    }
}

/// A session's tools as the chat-completions `tools` array, in name order. A tool
/// without recorded parameters gets an empty object schema, which every server accepts.
pub fn session_tools(session: &Session) -> Vec<Json> {
    session
        .tools
        .iter()
        .map(|(name, spec)| {
            let mut function = serde_json::Map::new();
            function.insert("name".into(), Json::from(name.as_str()));
            if let Some(d) = &spec.description {
                function.insert("description".into(), Json::from(d.as_str()));
            }
            function.insert(
                "parameters".into(),
                spec.parameters
                    .clone()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            );
            json!({"type": "function", "function": Json::Object(function)})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling() -> Sampling {
        Sampling {
            model: "m".into(),
            max_tokens: 64,
            temperature: 0.0,
        }
    }

    #[test]
    fn same_prompt_same_bytes_and_key_other_model_other_key() {
        let msgs = [Message::system("s"), Message::user("u")];
        let a = ChatRequest::new(&sampling(), &msgs, Tools::None);
        let b = ChatRequest::new(&sampling(), &msgs, Tools::None);
        assert_eq!(a, b);
        assert_eq!(
            a.body,
            r#"{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"temperature":0.0,"max_tokens":64}"#
        );
        let other = Sampling {
            model: "n".into(),
            ..sampling()
        };
        assert_ne!(ChatRequest::new(&other, &msgs, Tools::None).key, a.key);
    }

    #[test]
    fn a_question_is_the_same_request_as_the_prompt_with_it_appended() {
        let msgs = [Message::system("s"), Message::user("u")];
        let q = Message::user("q?");
        let mut longer = msgs.to_vec();
        longer.push(q.clone());
        assert_eq!(
            ChatRequest::with_question(&sampling(), &msgs, Some(&q), Tools::None),
            ChatRequest::new(&sampling(), &longer, Tools::None)
        );
    }

    #[test]
    fn described_tools_forbid_calls() {
        let tools = [json!({"type": "function"})];
        let r = ChatRequest::new(&sampling(), &[Message::user("u")], Tools::Describe(&tools));
        assert!(r.body.contains(r#""tool_choice":"none""#), "{}", r.body);
        let r = ChatRequest::new(&sampling(), &[Message::user("u")], Tools::Offer(&tools));
        assert!(r.body.contains(r#""tools":["#) && !r.body.contains("tool_choice"));
    }
}
