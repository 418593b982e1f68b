//! What a chat-completions response says: the message (text and tool calls) and the
//! server's token counts. A body that is not such a response is *malformed*: recorded
//! and counted, never a crash.

use serde_json::Value as Json;

/// The model's message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    pub content: Option<String>,
    pub tool_calls: Vec<ReplyCall>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyCall {
    pub name: String,
    /// The arguments' JSON text as the model wrote it.
    pub arguments: String,
}

/// Token counts of one request and its completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// Why a response body is not a usable completion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed response: {0}")]
pub struct Malformed(pub String);

/// The reply and the server's usage (when it reported one) of a response body.
pub fn parse_response(body: &str) -> Result<(Reply, Option<Usage>), Malformed> {
    let json: Json =
        serde_json::from_str(body).map_err(|e| Malformed(format!("not JSON ({e})")))?;
    let message = json
        .get("choices")
        .and_then(Json::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
        .ok_or_else(|| Malformed("no choices[0].message".into()))?;
    let content = match message.get("content") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(other) => return Err(Malformed(format!("content is not text: {other}"))),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| Malformed("tool_calls is not a list".into()))?;
        for (i, c) in calls.iter().enumerate() {
            let f = c
                .get("function")
                .ok_or_else(|| Malformed(format!("tool_calls[{i}] has no function")))?;
            let name = f
                .get("name")
                .and_then(Json::as_str)
                .ok_or_else(|| Malformed(format!("tool_calls[{i}] has no name")))?;
            // Some servers send the arguments as an object rather than JSON text.
            let arguments = match f.get("arguments") {
                Some(Json::String(s)) => s.clone(),
                Some(Json::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            tool_calls.push(ReplyCall {
                name: name.to_string(),
                arguments,
            });
        }
    }
    let usage = json.get("usage").and_then(|u| {
        Some(Usage {
            prompt_tokens: u.get("prompt_tokens")?.as_u64()?,
            completion_tokens: u.get("completion_tokens")?.as_u64()?,
        })
    });
    Ok((
        Reply {
            content,
            tool_calls,
        },
        usage,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_calls_and_usage() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}],
            "usage":{"prompt_tokens":10,"completion_tokens":3}}"#;
        let (reply, usage) = parse_response(body).unwrap();
        assert_eq!(reply.content, None);
        assert_eq!(reply.tool_calls[0].name, "f");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(usage.unwrap().completion_tokens, 3);
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for body in [
            "",
            "not json",
            "{}",
            r#"{"choices":[]}"#,
            r#"{"choices":[{"message":{"content":5}}]}"#,
        ] {
            assert!(parse_response(body).is_err(), "{body}");
        }
    }
}
