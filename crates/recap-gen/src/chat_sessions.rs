//! Proptest strategies for chat-form sessions (SPEC 11.1): runs of tool-calling and
//! fenced-command agents as importers write them.
//!
//! A session has one *style*, which sets the mix of turns: function calling (coding
//! agents), customer service (tool calls and a simulated user's replies), classic
//! fenced commands (no tool calls; the output comes back as an environment USER
//! message), or a mix. Turns make 1–4 parallel tool calls with unique ids (`call_…`,
//! `toolu_…`), some of which fail (`is_error`); outputs are often long and multi-line
//! (`\n`, `\r\n`, lone `\r`, trailing breaks, unicode, empty ones); arguments are JSON
//! texts with long string literals, sometimes malformed. Assistant content is `null` or
//! text, with optional reasoning; usage, a turn budget and tool schemas are recorded
//! now and then.

use crate::chat_arguments::arguments_text_for;
use crate::chat_ids::{IdStyle, call_id};
use crate::chat_pools::{
    ASSISTANT_REPLIES, COMMANDS, DEV_MISSIONS, DEV_SYSTEM_PROMPTS, DEV_TOOLS, DISCUSSIONS,
    ENV_FOOTERS, ERROR_OUTPUTS, FENCED_SYSTEM_PROMPTS, FINAL_ANSWERS, REASONING, RESEARCH_MISSIONS,
    SERVICE_MISSIONS, SERVICE_SYSTEM_PROMPTS, SERVICE_TOOLS, TOOL_PREAMBLES, ToolDef, USER_REPLIES,
};
use crate::chat_texts::{output_for, output_text, pick, short_text};
use proptest::collection::vec;
use proptest::prelude::*;
use recap_core::{AssistantTurn, ChatToolCall, ChatTurn, Form, Observation, Session, ToolSpec};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// The kind of agent a generated session stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    FunctionCalling,
    CustomerService,
    FencedCommands,
    Mixed,
}

impl Style {
    fn as_str(self) -> &'static str {
        match self {
            Style::FunctionCalling => "function-calling",
            Style::CustomerService => "customer-service",
            Style::FencedCommands => "fenced-commands",
            Style::Mixed => "mixed",
        }
    }

    fn tools(self) -> Vec<ToolDef> {
        match self {
            Style::FunctionCalling => DEV_TOOLS.to_vec(),
            Style::CustomerService => SERVICE_TOOLS.to_vec(),
            Style::FencedCommands => Vec::new(),
            Style::Mixed => DEV_TOOLS.iter().chain(SERVICE_TOOLS).copied().collect(),
        }
    }
}

/// One tool call of a generated turn and its result, before ids are assigned.
#[derive(Debug, Clone)]
struct CallBody {
    tool: &'static str,
    arguments: String,
    output: String,
    is_error: bool,
    /// Whether the TOOL observation records the tool's name.
    named: bool,
}

#[derive(Debug, Clone)]
enum Reply {
    Tools {
        content: Option<String>,
        calls: Vec<CallBody>,
        /// Results recorded in the reverse order of the calls.
        reversed: bool,
        /// A USER message after the results (a person interjecting).
        follow_up: Option<String>,
        /// When every call failed: whether the log marks the turn failed (some do).
        failure_marked: bool,
    },
    /// Text for the user and the (simulated) user's answer.
    User { content: String, reply: String },
    /// A fenced command; its output comes back as environment output.
    Command {
        content: String,
        output: String,
        failed: bool,
    },
    /// Text and nothing after it.
    Plain { content: String },
}

#[derive(Debug, Clone)]
struct TurnBody {
    reply: Reply,
    reasoning: Option<String>,
}

/// Session-level choices that are not turns.
#[derive(Debug, Clone)]
struct Frame {
    style: Style,
    mission: String,
    system_prompt: String,
    /// 0: no tools recorded, 1: descriptions only, 2: full schemas.
    tool_detail: u8,
    usage: Option<UsageStyle>,
    thinking: bool,
    id_style: IdStyle,
    model: &'static str,
    /// `Some(spare)`: a budget of the number of turns plus `spare` was recorded.
    budget_spare: Option<u32>,
    /// The last turn is a final answer.
    finished: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UsageStyle {
    /// `{prompt_tokens, completion_tokens}`.
    OpenAi,
    /// `{input_tokens, output_tokens, cache_read_input_tokens}`.
    Anthropic,
}

fn call(tools: Vec<ToolDef>) -> BoxedStrategy<CallBody> {
    prop::sample::select(tools)
        .prop_flat_map(|tool| {
            (
                arguments_text_for(&tool),
                output_for(&tool),
                prop::option::weighted(0.12, pick(ERROR_OUTPUTS)),
                prop::bool::weighted(0.9),
            )
                .prop_map(move |(arguments, output, error, named)| CallBody {
                    tool: tool.name,
                    arguments,
                    is_error: error.is_some(),
                    output: error.unwrap_or(output),
                    named,
                })
        })
        .boxed()
}

fn tools_reply(tools: Vec<ToolDef>) -> BoxedStrategy<Reply> {
    let calls = prop_oneof![
        6 => vec(call(tools.clone()), 1..=1),
        2 => vec(call(tools.clone()), 2..=2),
        2 => vec(call(tools), 3..=4),
    ];
    (
        prop_oneof![
            11 => Just(None),
            1 => Just(Some(String::new())),
            8 => pick(TOOL_PREAMBLES).prop_map(Some),
        ],
        calls,
        prop::bool::weighted(0.1),
        prop::option::weighted(0.05, pick(USER_REPLIES)),
        any::<bool>(),
    )
        .prop_map(
            |(content, calls, reversed, follow_up, failure_marked)| Reply::Tools {
                content,
                reversed: reversed && calls.len() > 1,
                calls,
                follow_up,
                failure_marked,
            },
        )
        .boxed()
}

fn user_reply() -> BoxedStrategy<Reply> {
    (pick(ASSISTANT_REPLIES), pick(USER_REPLIES))
        .prop_map(|(content, reply)| Reply::User { content, reply })
        .boxed()
}

fn command_reply() -> BoxedStrategy<Reply> {
    (
        pick(DISCUSSIONS),
        pick(COMMANDS),
        prop_oneof![5 => output_text(), 1 => pick(ERROR_OUTPUTS)],
        prop::option::weighted(0.6, pick(ENV_FOOTERS)),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(discussion, command, output, footer, failed)| {
            let output = match footer {
                Some(f) if output.is_empty() || output.ends_with('\n') => format!("{output}{f}"),
                Some(f) => format!("{output}\n{f}"),
                None => output,
            };
            Reply::Command {
                content: format!("{discussion}\n\n```\n{command}\n```"),
                output,
                failed,
            }
        })
        .boxed()
}

fn plain_reply() -> BoxedStrategy<Reply> {
    prop_oneof![pick(TOOL_PREAMBLES), pick(FINAL_ANSWERS), short_text()]
        .prop_map(|content| Reply::Plain { content })
        .boxed()
}

fn turn_body(style: Style, thinking: bool) -> BoxedStrategy<TurnBody> {
    let tools = style.tools();
    let reply = match style {
        Style::FunctionCalling => prop_oneof![
            16 => tools_reply(tools),
            1 => user_reply(),
            1 => plain_reply(),
        ]
        .boxed(),
        Style::CustomerService => prop_oneof![5 => tools_reply(tools), 5 => user_reply()].boxed(),
        Style::FencedCommands => command_reply(),
        Style::Mixed => prop_oneof![
            4 => tools_reply(tools),
            2 => user_reply(),
            2 => command_reply(),
            1 => plain_reply(),
        ]
        .boxed(),
    };
    let reasoning = prop::option::weighted(if thinking { 0.85 } else { 0.05 }, pick(REASONING));
    (reply, reasoning)
        .prop_map(|(reply, reasoning)| TurnBody { reply, reasoning })
        .boxed()
}

fn style() -> BoxedStrategy<Style> {
    prop_oneof![
        4 => Just(Style::FunctionCalling),
        3 => Just(Style::CustomerService),
        2 => Just(Style::FencedCommands),
        2 => Just(Style::Mixed),
    ]
    .boxed()
}

fn mission(style: Style) -> BoxedStrategy<String> {
    let pool = match style {
        Style::FunctionCalling | Style::FencedCommands => pick(DEV_MISSIONS),
        Style::CustomerService => pick(SERVICE_MISSIONS),
        Style::Mixed => prop_oneof![pick(DEV_MISSIONS), pick(RESEARCH_MISSIONS)].boxed(),
    };
    let free = short_text().prop_filter_map("a mission must not be blank", |t| {
        (!t.trim().is_empty()).then_some(t)
    });
    prop_oneof![8 => pool, 1 => free].boxed()
}

fn system_prompt(style: Style) -> BoxedStrategy<String> {
    match style {
        Style::FunctionCalling | Style::Mixed => pick(DEV_SYSTEM_PROMPTS),
        Style::CustomerService => pick(SERVICE_SYSTEM_PROMPTS),
        Style::FencedCommands => pick(FENCED_SYSTEM_PROMPTS),
    }
}

fn frame() -> BoxedStrategy<Frame> {
    style()
        .prop_flat_map(|style| {
            (
                mission(style),
                system_prompt(style),
                prop_oneof![2 => Just(0u8), 1 => Just(1u8), 3 => Just(2u8)],
                prop_oneof![
                    6 => Just(None),
                    3 => Just(Some(UsageStyle::OpenAi)),
                    1 => Just(Some(UsageStyle::Anthropic)),
                ],
                prop::bool::weighted(0.25),
                prop_oneof![
                    4 => Just(IdStyle::OpenAi),
                    3 => Just(IdStyle::Anthropic),
                    1 => Just(IdStyle::Numbered),
                    1 => Just(IdStyle::PerResponse),
                ],
                prop::sample::select(
                    &["gpt-4.1", "claude-sonnet-4", "qwen3-coder", "deepseek-v3.2"][..],
                ),
                prop::option::weighted(0.2, 0u32..=10),
                prop::option::weighted(0.4, pick(FINAL_ANSWERS)),
            )
                .prop_map(
                    move |(
                        mission,
                        system_prompt,
                        tool_detail,
                        usage,
                        thinking,
                        id_style,
                        model,
                        budget_spare,
                        finished,
                    )| Frame {
                        style,
                        mission,
                        system_prompt,
                        tool_detail,
                        usage,
                        thinking,
                        id_style,
                        model,
                        budget_spare,
                        finished,
                    },
                )
        })
        .boxed()
}

/// Chat sessions with 1 to 30 turns.
pub fn arb_chat_session() -> BoxedStrategy<Session> {
    chat_session_in(1..=30)
}

/// Chat sessions whose number of turns lies in `turns`, at least 1: a session without
/// turns is read back as the PTC-Lisp form (its form cannot be told from the line), so
/// it would not round-trip as a chat session.
pub fn chat_session_in(turns: RangeInclusive<u32>) -> BoxedStrategy<Session> {
    let (low, high) = (*turns.start(), *turns.end());
    (low.max(1)..=high.max(1))
        .prop_flat_map(chat_session_with)
        .boxed()
}

/// Chat sessions with exactly `n` turns (`n ≥ 1`).
pub fn chat_session_with(n: u32) -> BoxedStrategy<Session> {
    frame()
        .prop_flat_map(move |frame| {
            let bodies = vec(turn_body(frame.style, frame.thinking), n as usize);
            (Just(frame), bodies, any::<u64>())
        })
        .prop_map(|(frame, bodies, salt)| assemble(frame, bodies, salt))
        .boxed()
}

fn tool_spec(tool: &ToolDef, detail: u8) -> ToolSpec {
    let parameters = (detail >= 2).then(|| {
        let mut properties = Map::new();
        for (name, kind, description, _) in tool.params {
            properties.insert(
                (*name).to_string(),
                json!({"type": kind, "description": description}),
            );
        }
        let required: Vec<&str> = tool.params.iter().filter(|p| p.3).map(|p| p.0).collect();
        json!({"type": "object", "properties": properties, "required": required})
    });
    ToolSpec {
        signature: None,
        description: Some(tool.description.to_string()),
        parameters,
    }
}

/// Rough token count of a text, for plausible recorded usage.
fn rough_tokens(text: &str) -> u64 {
    text.len() as u64 / 4 + 1
}

fn assemble(frame: Frame, mut bodies: Vec<TurnBody>, salt: u64) -> Session {
    if let (Some(answer), Some(last)) = (&frame.finished, bodies.last_mut()) {
        last.reply = Reply::Plain {
            content: answer.clone(),
        };
    }
    let all_tools = frame.style.tools();
    let mut used: BTreeMap<String, ToolSpec> = BTreeMap::new();
    let mut next_call = 0u32;
    let mut prompt_tokens = 600
        + u64::from((salt % 900) as u32)
        + rough_tokens(&frame.system_prompt)
        + rough_tokens(&frame.mission);
    let mut turns = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.into_iter().enumerate() {
        let (assistant, observations, success) = match body.reply {
            Reply::Tools {
                content,
                calls,
                reversed,
                follow_up,
                failure_marked,
            } => {
                let mut tool_calls = Vec::with_capacity(calls.len());
                let mut results = Vec::with_capacity(calls.len());
                for (j, c) in calls.iter().enumerate() {
                    let id = call_id(frame.id_style, salt, next_call, j);
                    next_call += 1;
                    if let Some(def) = all_tools.iter().find(|t| t.name == c.tool) {
                        used.entry(def.name.to_string())
                            .or_insert_with(|| tool_spec(def, frame.tool_detail));
                    }
                    tool_calls.push(ChatToolCall {
                        id: id.clone().into(),
                        name: c.tool.to_string().into(),
                        arguments: c.arguments.clone().into(),
                    });
                    results.push(Observation::Tool {
                        tool_call_id: id.into(),
                        name: c.named.then(|| c.tool.into()),
                        content: c.output.clone().into(),
                        is_error: c.is_error,
                    });
                }
                if reversed {
                    results.reverse();
                }
                results.extend(follow_up.map(|content| Observation::User {
                    content: content.into(),
                    environment: false,
                }));
                let failed = failure_marked && calls.iter().all(|c| c.is_error);
                let assistant = AssistantTurn {
                    content: content.map(Into::into),
                    tool_calls,
                    reasoning: body.reasoning,
                };
                (assistant, results, !failed)
            }
            Reply::User { content, reply } => (
                text_response(content, body.reasoning),
                vec![Observation::User {
                    content: reply.into(),
                    environment: false,
                }],
                true,
            ),
            Reply::Command {
                content,
                output,
                failed,
            } => (
                text_response(content, body.reasoning),
                vec![Observation::User {
                    content: output.into(),
                    environment: true,
                }],
                !failed,
            ),
            Reply::Plain { content } => (text_response(content, body.reasoning), Vec::new(), true),
        };
        let usage = frame.usage.map(|style| {
            let completion = assistant.content.as_deref().map_or(0, rough_tokens)
                + assistant
                    .tool_calls
                    .iter()
                    .map(|c| rough_tokens(&c.arguments) + 5)
                    .sum::<u64>()
                + assistant.reasoning.as_deref().map_or(0, rough_tokens);
            let usage = usage_json(style, prompt_tokens, completion);
            prompt_tokens += completion
                + observations
                    .iter()
                    .map(|o| rough_tokens(o.content()) + 4)
                    .sum::<u64>();
            usage
        });
        turns.push(ChatTurn {
            number: i as u32 + 1,
            assistant,
            observations,
            success,
            usage,
        });
    }
    let mut meta = Map::new();
    meta.insert("source".into(), Json::from("recap-gen"));
    meta.insert("agent".into(), Json::from(frame.style.as_str()));
    meta.insert("model".into(), Json::from(frame.model));
    let outcome = if frame.finished.is_some() {
        "submitted"
    } else {
        "incomplete"
    };
    meta.insert("outcome".into(), Json::from(outcome));
    let budget = frame
        .budget_spare
        .map(|spare| (turns.len() as u32 + spare).max(1));
    Session {
        id: format!("chat-gen-{salt:016x}"),
        mission: frame.mission,
        system_prompt: frame.system_prompt,
        max_turns: budget.unwrap_or(u32::MAX),
        budget_recorded: budget.is_some(),
        form: Form::Chat,
        tools: if frame.tool_detail == 0 {
            BTreeMap::new()
        } else {
            used
        },
        data: BTreeMap::new(),
        meta,
        turns: Vec::new(),
        chat_turns: turns,
    }
}

fn text_response(content: String, reasoning: Option<String>) -> AssistantTurn {
    AssistantTurn {
        content: Some(content.into()),
        tool_calls: Vec::new(),
        reasoning,
    }
}

fn usage_json(style: UsageStyle, prompt: u64, completion: u64) -> Map<String, Json> {
    let mut u = Map::new();
    match style {
        UsageStyle::OpenAi => {
            u.insert("prompt_tokens".into(), Json::from(prompt));
            u.insert("completion_tokens".into(), Json::from(completion));
        }
        UsageStyle::Anthropic => {
            // Anthropic reports cached input apart from the rest.
            let cached = prompt * 3 / 4;
            u.insert("input_tokens".into(), Json::from(prompt - cached));
            u.insert("cache_read_input_tokens".into(), Json::from(cached));
            u.insert("output_tokens".into(), Json::from(completion));
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::TestRunner;

    /// The generator covers every shape it promises, in a modest sample.
    #[test]
    fn generated_sessions_cover_the_promised_shapes() {
        let mut runner = TestRunner::deterministic();
        let strategy = arb_chat_session();
        let mut seen = BTreeMap::<&str, bool>::new();
        let mut mark = |k: &'static str, v: bool| *seen.entry(k).or_default() |= v;
        for _ in 0..120 {
            let s = strategy
                .new_tree(&mut runner)
                .expect("the chat generator draws")
                .current();
            mark("null budget", !s.budget_recorded);
            mark("recorded budget", s.budget_recorded);
            mark(
                "tool schemas",
                s.tools.values().any(|t| t.parameters.is_some()),
            );
            let mut earlier_ids: Vec<&str> = Vec::new();
            for t in &s.chat_turns {
                let a = &t.assistant;
                mark("parallel calls", a.tool_calls.len() >= 3);
                mark("null content", a.content.is_none());
                mark("reasoning", a.reasoning.is_some());
                mark("usage", t.usage.is_some());
                mark("failed turn", !t.success);
                mark(
                    "malformed arguments",
                    a.tool_calls
                        .iter()
                        .any(|c| serde_json::from_str::<Json>(&c.arguments).is_err()),
                );
                mark(
                    "anthropic ids",
                    a.tool_calls.iter().any(|c| c.id.starts_with("toolu_")),
                );
                mark(
                    "ids repeated across turns",
                    a.tool_calls
                        .iter()
                        .any(|c| earlier_ids.contains(&c.id.as_str())),
                );
                earlier_ids.extend(a.tool_calls.iter().map(|c| c.id.as_str()));
                for o in &t.observations {
                    let c = o.content();
                    mark("tool error", o.is_error());
                    mark(
                        "user reply",
                        matches!(
                            o,
                            Observation::User {
                                environment: false,
                                ..
                            }
                        ),
                    );
                    mark(
                        "environment output",
                        matches!(
                            o,
                            Observation::User {
                                environment: true,
                                ..
                            }
                        ),
                    );
                    mark("crlf", c.contains("\r\n"));
                    mark("lone cr", c.contains('\r') && !c.contains("\r\n"));
                    mark("trailing newline", c.ends_with('\n'));
                    mark("empty output", c.is_empty());
                    mark("non-ascii", !c.is_ascii());
                    mark("long output", c.lines().count() > 100);
                }
            }
        }
        let missing: Vec<_> = seen.iter().filter(|(_, v)| !**v).map(|(k, _)| *k).collect();
        assert!(missing.is_empty(), "never generated: {missing:?}");
        assert_eq!(seen.len(), 20, "every shape was looked for");
    }
}
