//! Token counts a host sends with chat requests (ABI 1.1), so that a plugin can keep a
//! token budget with the run's own tokenizer: the count of every message of the
//! history, by SPEC 11.2's per-message formula
//! ([`recap_core::tokens::message_tokens`]). A prompt made of whole history messages
//! (plus SYSTEM and USER(mission)) counts exactly `3 + Σ` of their counts, the number
//! recap's report shows for it.

use recap_core::tokens::message_tokens;
use recap_core::{ChatTurn, Message, TokenCounter};

/// The per-message token counts of one chat session, as far as it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCounts {
    /// The tokenizer that counted them (`o200k_base`), for messages and reports.
    pub tokenizer: String,
    /// `SYSTEM(system prompt)`.
    pub system: u64,
    /// `USER(mission)`.
    pub mission: u64,
    /// Per completed turn, its messages in history order: the ASSISTANT response, then
    /// each observation ([`ChatTurn::messages`]).
    pub turns: Vec<Vec<u64>>,
}

/// What every prompt costs before its messages (SPEC 9 / 11.2).
pub const PROMPT_OVERHEAD: u64 = 3;

impl TokenCounts {
    /// Counts SYSTEM and USER(mission) with `counter`; no turns yet.
    pub fn opening(counter: &dyn TokenCounter, system_prompt: &str, mission: &str) -> Self {
        Self {
            tokenizer: counter.name().to_string(),
            system: message_tokens(counter, &Message::system(system_prompt)),
            mission: message_tokens(counter, &Message::user(mission)),
            turns: Vec::new(),
        }
    }

    /// Counts the opening and every message of `turns`.
    pub fn of_session(
        counter: &dyn TokenCounter,
        system_prompt: &str,
        mission: &str,
        turns: &[ChatTurn],
    ) -> Self {
        let mut counts = Self::opening(counter, system_prompt, mission);
        counts.turns = turns.iter().map(|t| count_turn(counter, t)).collect();
        counts
    }

    /// The counts of the messages of turn `i` (0-based), if it was sent.
    pub fn turn(&self, i: usize) -> Option<&[u64]> {
        self.turns.get(i).map(Vec::as_slice)
    }

    /// The prompt `[SYSTEM, USER(mission)]` followed by the whole messages of `turns`
    /// (0-based indices into [`TokenCounts::turns`]), counted as recap counts it.
    pub fn prompt_with_turns(&self, turns: impl IntoIterator<Item = usize>) -> u64 {
        PROMPT_OVERHEAD
            + self.system
            + self.mission
            + turns
                .into_iter()
                .filter_map(|i| self.turns.get(i))
                .flatten()
                .sum::<u64>()
    }
}

/// The counts of one turn's messages, in history order.
pub fn count_turn(counter: &dyn TokenCounter, turn: &ChatTurn) -> Vec<u64> {
    turn.messages()
        .map(|m| message_tokens(counter, &m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_core::prompt_tokens;
    use recap_core::tokens::WordCounter;
    use recap_gen::chat::ChatSessionBuilder;

    #[test]
    fn whole_turn_prompts_count_as_the_formula_does() {
        let s = ChatSessionBuilder::new("find the bug in parser.rs")
            .system("You fix bugs.")
            .tool_turn(
                "let me look",
                &[("c1", "read_file", r#"{"path": "src/parser.rs"}"#)],
                &["fn parse() {}\n"],
            )
            .text_turn("found it, shall I fix it?", &["yes please"])
            .build();
        let counts =
            TokenCounts::of_session(&WordCounter, &s.system_prompt, &s.mission, &s.chat_turns);
        assert_eq!(counts.tokenizer, "words");
        assert_eq!(counts.turns.len(), 2);
        assert_eq!(counts.turn(0).map(<[u64]>::len), Some(2));
        let mut prompt = vec![
            Message::system(s.system_prompt.as_str()),
            Message::user(s.mission.as_str()),
        ];
        assert_eq!(
            counts.prompt_with_turns([]),
            prompt_tokens(&WordCounter, &prompt)
        );
        prompt.extend(s.chat_turns[1].messages());
        assert_eq!(
            counts.prompt_with_turns([1]),
            prompt_tokens(&WordCounter, &prompt)
        );
        prompt.splice(2..2, s.chat_turns[0].messages());
        assert_eq!(
            counts.prompt_with_turns([0, 1]),
            prompt_tokens(&WordCounter, &prompt)
        );
    }
}
