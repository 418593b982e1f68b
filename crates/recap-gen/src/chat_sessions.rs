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

use crate::chat_pools::{
    ASSISTANT_REPLIES, COMMANDS, DEV_MISSIONS, DEV_SYSTEM_PROMPTS, DEV_TOOLS, DISCUSSIONS,
    ENV_FOOTERS, ERROR_OUTPUTS, FENCED_SYSTEM_PROMPTS, FINAL_ANSWERS, OUTPUT_LINES, PATHS,
    QUERIES, REASONING, RESEARCH_MISSIONS, SERVICE_MISSIONS, SERVICE_SYSTEM_PROMPTS,
    SERVICE_TOOLS, SHELL, SNIPPETS, TOOL_PREAMBLES, ToolDef, USER_REPLIES,
};
use crate::values::{TRICKY_STRINGS, WORDS};
use proptest::collection::vec;
use proptest::prelude::*;
use recap_core::{
    AssistantTurn, ChatToolCall, ChatTurn, Form, Observation, Session, ToolSpec,
};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
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

/// How a provider spells tool-call ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdStyle {
    /// `call_` and 24 letters and digits (OpenAI).
    OpenAi,
    /// `toolu_01` and 22 letters and digits (Anthropic).
    Anthropic,
    /// `call_0`, `call_1`, … over the session (some agent frameworks number calls).
    Numbered,
    /// `call_0`, `call_1`, … restarting at every response, so ids repeat across turns
    /// (some local model servers); only the calls of one response must differ.
    PerResponse,
}

/// How the arguments' JSON text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgsStyle {
    Compact,
    /// `{"key": value, …}` as Python's `json.dumps` writes it.
    Spaced,
    /// Spaced, with non-ASCII characters as `\uXXXX` escapes.
    AsciiEscaped,
    /// Cut off mid-text, as a streamed response that stopped.
    Truncated,
    /// Python `repr` quotes instead of JSON's.
    SingleQuoted,
    TrailingComma,
    /// Not JSON at all: the first value as bare text.
    BareText,
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

fn pick(pool: &'static [&'static str]) -> BoxedStrategy<String> {
    prop::sample::select(pool).prop_map(str::to_string).boxed()
}

/// A short free text: words, tricky strings, or random characters.
fn short_text() -> BoxedStrategy<String> {
    prop_oneof![
        4 => vec(prop::sample::select(WORDS), 1..8).prop_map(|w| w.join(" ")),
        1 => pick(TRICKY_STRINGS),
        1 => "[a-zA-Z0-9 ,.:;!?é日\\-]{0,40}",
    ]
    .boxed()
}

fn line_break() -> BoxedStrategy<&'static str> {
    prop_oneof![8 => Just("\n"), 2 => Just("\r\n"), 1 => Just("\r")].boxed()
}

/// Lines joined by one kind of break, with 0–2 trailing breaks.
fn lines(count: RangeInclusive<usize>, numbered: bool) -> BoxedStrategy<String> {
    (
        vec(prop::sample::select(OUTPUT_LINES), count),
        line_break(),
        prop_oneof![3 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize)],
        1u32..400,
    )
        .prop_map(move |(ls, sep, trailing, first)| {
            let mut out = String::new();
            for (i, l) in ls.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                if numbered {
                    let _ = write!(out, "{:>6}\t{l}", first + i as u32);
                } else {
                    out.push_str(l);
                }
            }
            for _ in 0..trailing {
                out.push_str(sep);
            }
            out
        })
        .boxed()
}

/// Progress output that redraws one line with lone carriage returns.
fn progress() -> BoxedStrategy<String> {
    (1usize..6, prop::bool::ANY)
        .prop_map(|(steps, newline)| {
            let mut out = String::new();
            for i in 0..=steps {
                let _ = write!(out, "Downloading {}%\r", i * 100 / steps);
            }
            out.push_str("done");
            if newline {
                out.push('\n');
            }
            out
        })
        .boxed()
}

/// What a tool or command prints: mostly a few lines, sometimes a long listing, an
/// empty output, unicode or a redrawn progress line.
fn output_text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => lines(1..=3, false),
        4 => lines(2..=25, false),
        2 => lines(5..=40, true),
        1 => lines(60..=220, true),
        1 => Just(String::new()),
        1 => short_text(),
        1 => progress(),
    ]
    .boxed()
}

/// A customer-service tool's JSON answer, as text.
fn record_text() -> BoxedStrategy<String> {
    (
        "[A-Z0-9]{6}",
        prop::sample::select(&["economy", "business", "basic_economy"][..]),
        prop::sample::select(&["New York", "Seattle", "São Paulo", "Zürich"][..]),
        0u32..2000,
        prop::bool::ANY,
    )
        .prop_map(|(id, cabin, city, price, pretty)| {
            let v = json!({
                "reservation_id": id,
                "cabin": cabin,
                "origin": city,
                "flights": [{"flight_number": "HAT170", "date": "2024-05-21", "price": price}],
                "status": "confirmed"
            });
            if pretty {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            } else {
                v.to_string()
            }
        })
        .boxed()
}

fn output_for(tool: &ToolDef) -> BoxedStrategy<String> {
    if SERVICE_TOOLS.iter().any(|t| t.name == tool.name) {
        prop_oneof![4 => record_text(), 1 => short_text(), 1 => output_text()].boxed()
    } else {
        output_text()
    }
}

fn param_value(tool: &str, name: &'static str, kind: &'static str) -> BoxedStrategy<Json> {
    if (tool, name) == ("str_replace_editor", "command") {
        return Just(Json::from("str_replace")).boxed();
    }
    match (name, kind) {
        (_, "integer") => (1u32..500).prop_map(Json::from).boxed(),
        (_, "boolean") => any::<bool>().prop_map(Json::from).boxed(),
        (_, "array") => vec(("[A-Z]{3}[0-9]{3}", 1u32..29), 1..3)
            .prop_map(|fs| {
                Json::Array(
                    fs.into_iter()
                        .map(|(n, d)| json!({"flight_number": n, "date": format!("2024-05-{d:02}")}))
                        .collect(),
                )
            })
            .boxed(),
        ("path", _) => pick(PATHS).prop_map(Json::from).boxed(),
        ("query", _) => pick(QUERIES).prop_map(Json::from).boxed(),
        ("command", _) => pick(SHELL).prop_map(Json::from).boxed(),
        ("old_str" | "new_str", _) => pick(SNIPPETS).prop_map(Json::from).boxed(),
        ("user_id", _) => "[a-z]{3,6}_[a-z]{2,6}_[0-9]{3,4}".prop_map(Json::from).boxed(),
        ("reservation_id", _) => "[A-Z0-9]{6}".prop_map(Json::from).boxed(),
        ("order_id", _) => "#W[0-9]{7}".prop_map(Json::from).boxed(),
        _ => short_text().prop_map(Json::from).boxed(),
    }
}

/// The call's arguments as `(key, value)` pairs in the schema's order; optional
/// parameters are left out now and then.
fn arguments(tool: &ToolDef) -> BoxedStrategy<Vec<(&'static str, Json)>> {
    let params: Vec<BoxedStrategy<Option<(&'static str, Json)>>> = tool
        .params
        .iter()
        .map(|&(name, kind, _, required)| {
            let value = param_value(tool.name, name, kind).prop_map(move |v| (name, v));
            if required {
                value.prop_map(Some).boxed()
            } else {
                prop::option::weighted(0.4, value).boxed()
            }
        })
        .collect();
    params
        .prop_map(|ps| ps.into_iter().flatten().collect())
        .boxed()
}

fn args_style() -> BoxedStrategy<ArgsStyle> {
    prop_oneof![
        10 => Just(ArgsStyle::Compact),
        8 => Just(ArgsStyle::Spaced),
        2 => Just(ArgsStyle::AsciiEscaped),
        1 => Just(ArgsStyle::Truncated),
        1 => Just(ArgsStyle::SingleQuoted),
        1 => Just(ArgsStyle::TrailingComma),
        1 => Just(ArgsStyle::BareText),
    ]
    .boxed()
}

/// Non-ASCII characters as `\uXXXX` escapes (surrogate pairs beyond the BMP).
fn ascii_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        }
    }
    out
}

/// The JSON text a model wrote for `fields`, well-formed or not.
fn arguments_text(fields: &[(&str, Json)], style: ArgsStyle) -> String {
    let (colon, comma) = match style {
        ArgsStyle::Compact => (":", ","),
        _ => (": ", ", "),
    };
    let mut text = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            text.push_str(comma);
        }
        let _ = write!(text, "{}{colon}{value}", Json::from(*key));
    }
    match style {
        ArgsStyle::TrailingComma => text.push_str(",}"),
        _ => text.push('}'),
    }
    match style {
        ArgsStyle::AsciiEscaped => ascii_escaped(&text),
        ArgsStyle::Truncated => {
            let cut = text
                .char_indices()
                .map(|(i, _)| i)
                .nth(text.chars().count() * 2 / 3)
                .unwrap_or(text.len());
            text[..cut].to_string()
        }
        ArgsStyle::SingleQuoted => text.replace('"', "'"),
        ArgsStyle::BareText => match fields.first() {
            Some((_, Json::String(s))) => s.clone(),
            Some((_, v)) => v.to_string(),
            None => String::new(),
        },
        _ => text,
    }
}

fn call(tools: Vec<ToolDef>) -> BoxedStrategy<CallBody> {
    prop::sample::select(tools)
        .prop_flat_map(|tool| {
            (
                arguments(&tool),
                args_style(),
                output_for(&tool),
                prop::option::weighted(0.12, pick(ERROR_OUTPUTS)),
                prop::bool::weighted(0.9),
            )
                .prop_map(move |(fields, style, output, error, named)| CallBody {
                    tool: tool.name,
                    arguments: arguments_text(&fields, style),
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
    )
        .prop_map(|(content, calls, reversed, follow_up)| Reply::Tools {
            content,
            reversed: reversed && calls.len() > 1,
            calls,
            follow_up,
        })
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
                prop::sample::select(&["gpt-4.1", "claude-sonnet-4", "qwen3-coder", "deepseek-v3.2"][..]),
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

/// A splitmix64 step: ids look random but follow from the session's salt.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `len` pseudo-random letters and digits, then the call's number in base 62, so ids
/// of one session never collide.
fn alnum_id(salt: u64, n: u32, len: usize) -> String {
    let mut out = String::with_capacity(len + 4);
    let mut state = mix(salt ^ u64::from(n).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    for _ in 0..len {
        state = mix(state);
        out.push(ALNUM[(state % 62) as usize] as char);
    }
    let mut rest = n;
    loop {
        out.push(ALNUM[(rest % 62) as usize] as char);
        rest /= 62;
        if rest == 0 {
            break;
        }
    }
    out
}

/// The id of the session's call number `n`, the `in_response`-th of its response.
fn call_id(style: IdStyle, salt: u64, n: u32, in_response: usize) -> String {
    match style {
        IdStyle::OpenAi => format!("call_{}", alnum_id(salt, n, 22)),
        IdStyle::Anthropic => format!("toolu_01{}", alnum_id(salt, n, 20)),
        IdStyle::Numbered => format!("call_{n}"),
        IdStyle::PerResponse => format!("call_{in_response}"),
    }
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
        let required: Vec<&str> = tool
            .params
            .iter()
            .filter(|p| p.3)
            .map(|p| p.0)
            .collect();
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
    let mut prompt_tokens =
        600 + u64::from((salt % 900) as u32) + rough_tokens(&frame.system_prompt) + rough_tokens(&frame.mission);
    let mut turns = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.into_iter().enumerate() {
        let (assistant, observations, success) = match body.reply {
            Reply::Tools {
                content,
                calls,
                reversed,
                follow_up,
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
                        id: id.clone(),
                        name: c.tool.to_string(),
                        arguments: c.arguments.clone(),
                    });
                    results.push(Observation::Tool {
                        tool_call_id: id,
                        name: c.named.then(|| c.tool.to_string()),
                        content: c.output.clone(),
                        is_error: c.is_error,
                    });
                }
                if reversed {
                    results.reverse();
                }
                results.extend(follow_up.map(|content| Observation::User {
                    content,
                    environment: false,
                }));
                // A turn whose every call failed is a failed action, and some logs say so.
                let failed = calls.iter().all(|c| c.is_error) && salt.wrapping_add(i as u64) % 2 == 0;
                let assistant = AssistantTurn {
                    content,
                    tool_calls,
                    reasoning: body.reasoning,
                };
                (assistant, results, !failed)
            }
            Reply::User { content, reply } => (
                text_response(content, body.reasoning),
                vec![Observation::User {
                    content: reply,
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
                    content: output,
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
        content: Some(content),
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

    #[test]
    fn arguments_texts_cover_json_and_malformed_shapes() {
        let fields = [("path", json!("/repo/données")), ("n", json!(3))];
        assert_eq!(
            arguments_text(&fields, ArgsStyle::Compact),
            r#"{"path":"/repo/données","n":3}"#
        );
        assert_eq!(
            arguments_text(&fields, ArgsStyle::Spaced),
            r#"{"path": "/repo/données", "n": 3}"#
        );
        assert_eq!(
            arguments_text(&fields, ArgsStyle::AsciiEscaped),
            r#"{"path": "/repo/donn\u00e9es", "n": 3}"#
        );
        assert_eq!(arguments_text(&fields, ArgsStyle::BareText), "/repo/données");
        for style in [
            ArgsStyle::Truncated,
            ArgsStyle::SingleQuoted,
            ArgsStyle::TrailingComma,
        ] {
            let text = arguments_text(&fields, style);
            assert!(serde_json::from_str::<Json>(&text).is_err(), "{style:?}: {text}");
        }
        assert_eq!(ascii_escaped("a😀"), "a\\ud83d\\ude00");
    }

    #[test]
    fn call_ids_look_like_the_providers_and_repeat_only_where_a_style_does() {
        let ids: Vec<String> = (0..5000).map(|n| call_id(IdStyle::OpenAi, 42, n, 0)).collect();
        assert!(ids.iter().all(|id| id.starts_with("call_") && id.len() >= 27));
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        assert!(call_id(IdStyle::Anthropic, 1, 0, 0).starts_with("toolu_01"));
        assert_eq!(call_id(IdStyle::Numbered, 1, 7, 2), "call_7");
        assert_eq!(call_id(IdStyle::PerResponse, 1, 7, 2), "call_2");
    }

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
            mark("tool schemas", s.tools.values().any(|t| t.parameters.is_some()));
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
                mark("anthropic ids", a.tool_calls.iter().any(|c| c.id.starts_with("toolu_")));
                mark(
                    "ids repeated across turns",
                    a.tool_calls.iter().any(|c| earlier_ids.contains(&c.id.as_str())),
                );
                earlier_ids.extend(a.tool_calls.iter().map(|c| c.id.as_str()));
                for o in &t.observations {
                    let c = o.content();
                    mark("tool error", o.is_error());
                    mark("user reply", matches!(o, Observation::User { environment: false, .. }));
                    mark("environment output", matches!(o, Observation::User { environment: true, .. }));
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
