//! Token counting as strategies see it: the run's tokenizer behind a small trait, and
//! the prompt-token formula of SPEC 9 / 11.2 written once in its plain form.
//!
//! The harness counts the same formula with caches (line- and message-level reuse);
//! its exactness test compares every total with [`prompt_tokens`].

use crate::message::Message;
use crate::text::Text;

/// A tokenizer: how many tokens a text has. Implemented by the harness over its real
/// tokenizers; strategies with token budgets get one through [`crate::BuildContext`].
pub trait TokenCounter: Send + Sync {
    /// The tokenizer's name (`o200k_base`), for error messages and reports.
    fn name(&self) -> &str;
    fn count(&self, text: &str) -> u64;
    /// The count of a message's text: [`TokenCounter::count`] of its string. A counter
    /// may remember it by the text's allocation, which the strategies and both renders of
    /// a session share.
    fn count_text(&self, text: &Text) -> u64 {
        self.count(text)
    }
}

/// Tokens one message adds to a prompt: `3 + tokens(role) + tokens(content) +
/// Σ_tool_calls (3 + tokens(name) + tokens(arguments))`. Ids and a TOOL message's
/// `name` are not counted (SPEC 11.2).
pub fn message_tokens(counter: &dyn TokenCounter, message: &Message) -> u64 {
    3 + counter.count(message.role.as_str())
        + counter.count_text(&message.content)
        + message
            .tool_calls
            .iter()
            .map(|c| 3 + counter.count_text(&c.name) + counter.count_text(&c.arguments))
            .sum::<u64>()
}

/// Prompt tokens of one call: `3 + Σ_messages message_tokens` (SPEC 9 / 11.2).
pub fn prompt_tokens(counter: &dyn TokenCounter, messages: &[Message]) -> u64 {
    3 + messages
        .iter()
        .map(|m| message_tokens(counter, m))
        .sum::<u64>()
}

/// A stand-in tokenizer for tests of token budgets: one token per whitespace-separated
/// word. Real runs always count with a real tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordCounter;

impl TokenCounter for WordCounter {
    fn name(&self) -> &str {
        "words"
    }
    fn count(&self, text: &str) -> u64 {
        text.split_whitespace().count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::MessageToolCall;

    #[test]
    fn the_formula_counts_roles_contents_and_tool_calls_but_not_ids() {
        let w = WordCounter;
        let call = MessageToolCall {
            id: "call one two".into(),
            name: "search".into(),
            arguments: "{\"q\": \"a b\"}".into(),
        };
        let messages = [
            Message::system("be brief"),
            Message::assistant_with_calls("ok then", vec![call]),
            Message::tool("call one two", Some("search name".into()), "x y z"),
        ];
        // 3 + (3+1+2) + (3+1+2 + 3+1+3) + (3+1+3)
        assert_eq!(prompt_tokens(&w, &messages), 3 + 6 + 13 + 7);
    }
}
