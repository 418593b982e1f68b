//! Chat-form sessions (SPEC 11.1) for tests: a builder for hand-written ones.

use recap_core::{AssistantTurn, ChatToolCall, ChatTurn, Form, Observation, Session};
use serde_json::Map;
use std::collections::BTreeMap;

/// Builds a chat-form session turn by turn; turn numbers follow the order of calls.
#[derive(Debug, Clone)]
pub struct ChatSessionBuilder {
    session: Session,
}

impl ChatSessionBuilder {
    /// A session with id `s`, an empty system prompt and no recorded budget.
    pub fn new(mission: &str) -> Self {
        ChatSessionBuilder {
            session: Session {
                id: "s".to_string(),
                mission: mission.to_string(),
                system_prompt: String::new(),
                max_turns: u32::MAX,
                budget_recorded: false,
                form: Form::Chat,
                tools: BTreeMap::new(),
                data: BTreeMap::new(),
                meta: Map::new(),
                turns: Vec::new(),
                chat_turns: Vec::new(),
            },
        }
    }

    pub fn id(mut self, id: &str) -> Self {
        self.session.id = id.to_string();
        self
    }

    pub fn system(mut self, system_prompt: &str) -> Self {
        self.session.system_prompt = system_prompt.to_string();
        self
    }

    /// A response with `content` (empty → `null`) making `calls` (`(id, name,
    /// arguments)`), answered in order by `results` (one TOOL observation each).
    pub fn tool_turn(self, content: &str, calls: &[(&str, &str, &str)], results: &[&str]) -> Self {
        let observations = calls
            .iter()
            .zip(results)
            .map(|((id, name, _), r)| Observation::Tool {
                tool_call_id: id.to_string(),
                name: Some(name.to_string()),
                content: r.to_string(),
                is_error: false,
            })
            .collect();
        self.turn(content, calls, observations)
    }

    /// A response without tool calls followed by USER observations (replies).
    pub fn text_turn(self, content: &str, replies: &[&str]) -> Self {
        let observations = replies
            .iter()
            .map(|r| Observation::User {
                content: r.to_string(),
                environment: false,
            })
            .collect();
        self.turn(content, &[], observations)
    }

    /// A fenced-command turn: the response holds the command, the environment's output
    /// comes back as a USER message marked `environment`.
    pub fn command_turn(self, content: &str, output: &str) -> Self {
        let observations = vec![Observation::User {
            content: output.to_string(),
            environment: true,
        }];
        self.turn(content, &[], observations)
    }

    /// A turn with any observations.
    pub fn turn(
        mut self,
        content: &str,
        calls: &[(&str, &str, &str)],
        observations: Vec<Observation>,
    ) -> Self {
        let number = self.session.chat_turns.len() as u32 + 1;
        self.session.chat_turns.push(ChatTurn {
            number,
            assistant: AssistantTurn {
                content: (!content.is_empty()).then(|| content.to_string()),
                tool_calls: calls
                    .iter()
                    .map(|(id, name, args)| ChatToolCall {
                        id: id.to_string(),
                        name: name.to_string(),
                        arguments: args.to_string(),
                    })
                    .collect(),
                reasoning: None,
            },
            observations,
            success: true,
            usage: None,
        });
        self
    }

    pub fn build(self) -> Session {
        self.session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_sessions_round_trip_through_json() {
        let s = ChatSessionBuilder::new("m")
            .system("sys")
            .tool_turn("", &[("c1", "f", "{\"a\":1}")], &["r"])
            .text_turn("hello", &["reply"])
            .command_turn("```\nls\n```", "a\nb")
            .build();
        let back = Session::from_json(&s.to_json()).unwrap();
        assert_eq!(back, s);
    }
}
