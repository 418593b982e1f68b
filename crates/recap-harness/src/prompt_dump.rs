//! `--dump-prompts`: the exact prompt of every call, one JSON line each.

use crate::config::RunConfig;
use recap_core::Message;
use serde::Serialize;
use std::collections::BTreeMap;

/// A rendered call's exact prompt, for `--dump-prompts`: one JSON line.
#[derive(Debug, Clone, Serialize)]
pub struct PromptDump {
    pub corpus: String,
    pub session: String,
    pub call: usize,
    pub strategy: String,
    /// Prompt tokens per tokenizer.
    pub prompt_tokens: BTreeMap<String, u64>,
    pub messages: Vec<DumpedMessage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DumpedMessage {
    pub role: String,
    /// Body tokens per tokenizer: the content and, in the chat form, the tool calls
    /// (without the 3-token message overhead and the role).
    pub content_tokens: BTreeMap<String, u32>,
    pub content: recap_core::Text,
    /// Chat form: the calls an ASSISTANT message makes.
    #[serde(skip_serializing_if = "recap_core::ToolCalls::is_empty")]
    pub tool_calls: recap_core::ToolCalls,
    /// Chat form: the call a TOOL message answers, and the tool's name where recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<recap_core::Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<recap_core::Text>,
}

/// Which call of which run a dump line is.
pub(crate) struct DumpedCall<'a> {
    pub corpus: &'a str,
    pub session: &'a str,
    pub call: usize,
    pub strategy: &'a str,
}

/// The dump line of one call: `counts[t][i]` is message i's content tokens and
/// `prompt_tokens[t]` the prompt's tokens under tokenizer t.
pub(crate) fn dump_line(
    cfg: &RunConfig,
    at: DumpedCall<'_>,
    messages: &[Message],
    counts: &[Vec<u32>],
    prompt_tokens: &[u64],
) -> String {
    let names: Vec<String> = cfg
        .tokenizers
        .iter()
        .map(|t| t.encoding().name().to_string())
        .collect();
    let dump = PromptDump {
        corpus: at.corpus.to_string(),
        session: at.session.to_string(),
        call: at.call,
        strategy: at.strategy.to_string(),
        prompt_tokens: names
            .iter()
            .cloned()
            .zip(prompt_tokens.iter().copied())
            .collect(),
        messages: messages
            .iter()
            .enumerate()
            .map(|(i, m)| DumpedMessage {
                role: m.role.as_str().to_string(),
                content_tokens: names
                    .iter()
                    .cloned()
                    .zip(counts.iter().map(|c| c[i]))
                    .collect(),
                content: m.content.clone(),
                tool_calls: m.tool_calls.clone(),
                tool_call_id: m.tool_call_id.clone(),
                name: m.name.clone(),
            })
            .collect(),
    };
    // Serialising plain strings and integers cannot fail.
    serde_json::to_string(&dump).unwrap_or_default()
}
