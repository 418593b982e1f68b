//! Chat-form sessions (SPEC 11.1) for tests and the hand-authored chat corpus: a
//! session builder, and a turn builder for turns with reasoning, errors or usage.
//!
//! Builders do not validate; [`ChatSessionBuilder::build_validated`] round-trips through
//! the corpus encoding so a hand-written session is checked exactly like a corpus line.

use recap_core::{
    AssistantTurn, ChatToolCall, ChatTurn, FieldError, Form, Observation, Session, ToolSpec,
};
use serde_json::{Map, Value as Json};

/// Builds a chat-form session turn by turn; turn numbers follow the order of calls.
#[derive(Debug, Clone)]
pub struct ChatSessionBuilder {
    session: Session,
}

impl ChatSessionBuilder {
    /// A session with id `s`, an empty system prompt and no recorded budget.
    pub fn new(mission: &str) -> Self {
        ChatSessionBuilder {
            // No budget: chat logs rarely record one (`max_turns: null`).
            session: crate::builder::bare_session(mission, Form::Chat, u32::MAX, false),
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

    /// A recorded turn budget (without it, `max_turns` is `null`).
    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.session.max_turns = max_turns;
        self.session.budget_recorded = true;
        self
    }

    /// A tool as sent to the provider: its description and its parameters' JSON schema.
    pub fn tool(mut self, name: &str, description: &str, parameters: Json) -> Self {
        self.session.tools.insert(
            name.to_string(),
            ToolSpec {
                signature: None,
                description: Some(description.to_string()),
                parameters: Some(parameters),
            },
        );
        self
    }

    pub fn meta(mut self, key: &str, value: Json) -> Self {
        self.session.meta.insert(key.to_string(), value);
        self
    }

    /// Appends a turn built with [`ChatTurnBuilder`].
    pub fn push(mut self, turn: ChatTurnBuilder) -> Self {
        let mut turn = turn.turn;
        turn.number = self.session.chat_turns.len() as u32 + 1;
        self.session.chat_turns.push(turn);
        self
    }

    /// A response with `content` (empty → `null`) making `calls` (`(id, name,
    /// arguments)`), answered in order by `results` (one TOOL observation each).
    pub fn tool_turn(self, content: &str, calls: &[(&str, &str, &str)], results: &[&str]) -> Self {
        let observations = calls
            .iter()
            .zip(results)
            .map(|((id, name, _), r)| Observation::Tool {
                tool_call_id: id.to_string().into(),
                name: Some(name.to_string().into()),
                content: r.to_string().into(),
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
                content: r.to_string().into(),
                environment: false,
            })
            .collect();
        self.turn(content, &[], observations)
    }

    /// A fenced-command turn: the response holds the command, the environment's output
    /// comes back as a USER message marked `environment`.
    pub fn command_turn(self, content: &str, output: &str) -> Self {
        let observations = vec![Observation::User {
            content: output.to_string().into(),
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
                content: (!content.is_empty()).then(|| content.into()),
                tool_calls: calls
                    .iter()
                    .map(|(id, name, args)| ChatToolCall {
                        id: id.to_string().into(),
                        name: name.to_string().into(),
                        arguments: args.to_string().into(),
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

    /// The session after a round trip through the corpus encoding: errors exactly as a
    /// corpus line with this content would.
    pub fn build_validated(self) -> Result<Session, FieldError> {
        Session::from_json(&self.session.to_json())
    }
}

/// One chat turn: the response (content, reasoning, tool calls) and what followed it.
#[derive(Debug, Clone)]
pub struct ChatTurnBuilder {
    turn: ChatTurn,
}

impl ChatTurnBuilder {
    fn with_content(content: Option<String>) -> Self {
        ChatTurnBuilder {
            turn: ChatTurn {
                number: 0,
                assistant: AssistantTurn {
                    content: content.map(Into::into),
                    tool_calls: Vec::new(),
                    reasoning: None,
                },
                observations: Vec::new(),
                success: true,
                usage: None,
            },
        }
    }

    /// A response with text content.
    pub fn says(content: &str) -> Self {
        Self::with_content(Some(content.to_string()))
    }

    /// A response whose content is `null` (it only calls tools).
    pub fn silent() -> Self {
        Self::with_content(None)
    }

    pub fn reasoning(mut self, reasoning: &str) -> Self {
        self.turn.assistant.reasoning = Some(reasoning.to_string());
        self
    }

    pub fn call(mut self, id: &str, name: &str, arguments: &str) -> Self {
        self.turn.assistant.tool_calls.push(ChatToolCall {
            id: id.to_string().into(),
            name: name.to_string().into(),
            arguments: arguments.to_string().into(),
        });
        self
    }

    fn tool_observation(mut self, id: &str, content: &str, is_error: bool, named: bool) -> Self {
        let name = named
            .then(|| {
                self.turn
                    .assistant
                    .tool_calls
                    .iter()
                    .find(|c| c.id == id)
                    .map(|c| c.name.clone())
            })
            .flatten();
        self.turn.observations.push(Observation::Tool {
            tool_call_id: id.to_string().into(),
            name,
            content: content.to_string().into(),
            is_error,
        });
        self
    }

    /// The result of call `id`, with the call's tool name.
    pub fn result(self, id: &str, content: &str) -> Self {
        self.tool_observation(id, content, false, true)
    }

    /// The result of call `id` as a log without tool names records it.
    pub fn unnamed_result(self, id: &str, content: &str) -> Self {
        self.tool_observation(id, content, false, false)
    }

    /// A failed call's result (`is_error: true`).
    pub fn error(self, id: &str, content: &str) -> Self {
        self.tool_observation(id, content, true, true)
    }

    /// A person's or a simulated user's reply.
    pub fn user(mut self, content: &str) -> Self {
        self.turn.observations.push(Observation::User {
            content: content.to_string().into(),
            environment: false,
        });
        self
    }

    /// Environment output delivered as a USER message (a fenced command's result).
    pub fn env(mut self, content: &str) -> Self {
        self.turn.observations.push(Observation::User {
            content: content.to_string().into(),
            environment: true,
        });
        self
    }

    /// The log says this turn's own action failed.
    pub fn failed(mut self) -> Self {
        self.turn.success = false;
        self
    }

    /// Recorded usage, OpenAI style.
    pub fn usage(self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        let mut u = Map::new();
        u.insert("prompt_tokens".into(), Json::from(prompt_tokens));
        u.insert("completion_tokens".into(), Json::from(completion_tokens));
        self.usage_object(u)
    }

    /// Recorded usage with any fields.
    pub fn usage_object(mut self, usage: Map<String, Json>) -> Self {
        self.turn.usage = Some(usage);
        self
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

    #[test]
    fn turn_builder_turns_round_trip_and_name_results_after_their_calls() {
        let s = ChatSessionBuilder::new("m")
            .max_turns(4)
            .tool("f", "does f", serde_json::json!({"type": "object"}))
            .meta("source", Json::from("test"))
            .push(
                ChatTurnBuilder::silent()
                    .reasoning("think")
                    .call("c1", "f", "{}")
                    .call("c2", "g", "{")
                    .error("c2", "bad json")
                    .unnamed_result("c1", "ok")
                    .user("hi")
                    .usage(10, 2),
            )
            .push(ChatTurnBuilder::says("```\nls\n```").env("a\r\nb").failed())
            .build_validated()
            .unwrap();
        assert_eq!(s.budget(), Some(4));
        let t = &s.chat_turns[0];
        assert_eq!(t.assistant.content, None);
        assert!(
            matches!(&t.observations[0], Observation::Tool { name: Some(n), is_error: true, .. } if n == "g")
        );
        assert!(matches!(
            &t.observations[1],
            Observation::Tool { name: None, .. }
        ));
        assert!(!s.chat_turns[1].success);
        assert_eq!(s.chat_turns[1].number, 2);
    }
}
