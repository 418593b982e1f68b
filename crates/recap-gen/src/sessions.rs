//! Proptest strategies for whole sessions: exploration turns that define values from
//! tool results, println-heavy and tool-heavy turns (with runs of identical calls),
//! failed turns, redefinitions, returns, recorded feedback and usage now and then.
//!
//! Programs are assembled from what the turn recorded, so they read like the agent's
//! code and are distinctive multi-line texts (a summary that leaked one would be seen).

use crate::values::{docstring, huge_text, record, stored_value, text, value, word};
use proptest::collection::vec;
use proptest::prelude::*;
use recap_core::session::fenced_program;
use recap_core::strategy::turns_line;
use recap_core::{
    Closure, DefKind, Definition, Session, ToolCall, ToolSpec, Turn, TurnError, Value,
};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::RangeInclusive;

pub const TOOL_NAMES: &[&str] = &[
    "search-reviews",
    "get-inventory",
    "fetch-users",
    "get-weather",
    "query-db",
    "send-email",
    "list-files",
    "read-file",
    "lookup-price",
    "translate",
];

/// A small pool, so names get redefined within and across turns (DEF-001/002).
pub const DEF_NAMES: &[&str] = &[
    "products",
    "reviews",
    "inventory",
    "top-items",
    "result",
    "users",
    "counts",
    "totals",
    "report",
    "items",
    "best",
    "cache",
];

pub const FN_NAMES: &[&str] = &[
    "in-stock?",
    "score",
    "format-row",
    "parse-line",
    "avg",
    "top-n",
];

pub const MISSIONS: &[&str] = &[
    "Find well-reviewed products in stock",
    "Summarize last quarter's refunds by city and flag anomalies",
    "Which users signed up in 2024 but never placed an order?",
    "Translate the product catalog titles to German; keep SKUs unchanged",
    "Trouve les trois produits les mieux notés — réponds en français",
    "在库存中找出评分最高的产品",
    "Compute the average rating per category.\nReturn a map {:category avg}.",
];

pub const SYSTEM_PROMPTS: &[&str] = &[
    "You are a PTC-Lisp agent. Write one program per turn in a ```clojure block.",
    "You are a careful data analyst. Tools are under tool/, input data under data/.",
    "",
];

pub const ERRORS: &[&str] = &[
    "sort-by: expected a collection, got a string",
    "Undefined symbol: avg-rating",
    "tool/query-db timed out after 5000ms",
    "Parse error: unexpected end of input, expected `)`",
    "nth: index 7 out of bounds for list of length 3",
    "Symbol 'inventory' exists in both tool/ and data/ namespaces. Use explicit namespace.",
    "ArithmeticException: division by zero",
    "get-in: expected a map, got nil — check the path [:user :email]",
];

pub const REASONS: &[&str] = &["eval_error", "parse_error", "timeout", "tool_error"];

/// What kind of turn to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Explore,
    PrintlnHeavy,
    ToolHeavy,
    Return,
    Failed,
}

/// One generated turn before numbering: its data and an optional return value.
#[derive(Debug, Clone)]
struct Body {
    kind: Kind,
    calls: Vec<ToolCall>,
    definitions: Vec<Definition>,
    prints: Vec<String>,
    result: Option<Value>,
    error: Option<TurnError>,
    preamble: Option<String>,
}

fn args() -> BoxedStrategy<Value> {
    prop_oneof![
        5 => record(),
        2 => vec(crate::values::leaf(), 0..6).prop_map(Value::List),
        1 => Just(Value::Nil),
        1 => Just(Value::Map(vec![])),
        1 => value(),
    ]
    .boxed()
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        prop::sample::select(TOOL_NAMES),
        args(),
        prop::option::weighted(0.8, tool_result()),
    )
        .prop_map(|(name, args, result)| ToolCall {
            name: name.to_string(),
            args,
            result,
        })
}

/// What tools return: mostly short texts and records, sometimes anything a stored
/// value can be (huge ones included).
fn tool_result() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => text().prop_map(Value::Str),
        3 => record(),
        2 => vec(record(), 0..5).prop_map(Value::List),
        2 => crate::values::leaf(),
        1 => stored_value(),
    ]
    .boxed()
}

/// Tool calls with runs of identical consecutive calls (TC-008), e.g. polling.
fn call_runs(runs: std::ops::Range<usize>) -> impl Strategy<Value = Vec<ToolCall>> {
    vec((tool_call(), 1usize..6), runs).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(call, n)| std::iter::repeat_n(call, n))
            .collect()
    })
}

fn definition() -> impl Strategy<Value = Definition> {
    let def = (
        prop::sample::select(DEF_NAMES),
        prop::option::weighted(0.3, docstring()),
        prop::option::weighted(0.9, stored_value()),
    )
        .prop_map(|(name, docstring, value)| Definition {
            name: name.to_string(),
            kind: DefKind::Def,
            docstring,
            value,
        });
    let defn = (
        prop::sample::select(FN_NAMES),
        prop::option::weighted(0.6, docstring()),
        prop::option::weighted(0.8, crate::values::closure()),
    )
        .prop_map(|(name, docstring, closure)| Definition {
            name: name.to_string(),
            kind: DefKind::Defn,
            docstring,
            value: closure.map(Value::Fn),
        });
    // `(def f (fn [x] ...))`: a function by its value, not its kind.
    let def_fn =
        (prop::sample::select(FN_NAMES), crate::values::closure()).prop_map(|(name, closure)| {
            Definition {
                name: name.to_string(),
                kind: DefKind::Def,
                docstring: None,
                value: Some(Value::Fn(closure)),
            }
        });
    prop_oneof![8 => def, 3 => defn, 1 => def_fn]
}

fn print_line() -> BoxedStrategy<String> {
    prop_oneof![
        6 => text(),
        2 => (word(), 0u32..500).prop_map(|(w, n)| format!("{w}: {n} units")),
        2 => vec(text(), 2..5).prop_map(|l| l.join("\n")),
        1 => huge_text(),
    ]
    .boxed()
}

fn error() -> impl Strategy<Value = TurnError> {
    (
        prop_oneof![4 => prop::sample::select(ERRORS).prop_map(str::to_string), 1 => text()],
        prop::option::weighted(0.4, prop::sample::select(REASONS)),
    )
        .prop_map(|(message, reason)| TurnError {
            message,
            reason: reason.map(str::to_string),
        })
}

fn preamble() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.2,
        prop::sample::select(
            &[
                "Let me look at the data first.",
                "The previous attempt failed; fixing the call.",
                "Je vérifie l'inventaire.",
            ][..],
        )
        .prop_map(str::to_string),
    )
}

fn body() -> impl Strategy<Value = Body> {
    let explore = (
        vec(tool_call(), 0..4),
        vec(definition(), 1..5),
        prop::option::weighted(0.3, vec(print_line(), 1..4)),
        preamble(),
    )
        .prop_map(|(calls, definitions, prints, preamble)| Body {
            kind: Kind::Explore,
            calls,
            definitions,
            prints: prints.unwrap_or_default(),
            result: None,
            error: None,
            preamble,
        });
    let println_heavy = (
        vec(tool_call(), 0..3),
        vec(definition(), 0..3),
        vec(print_line(), 3..40),
    )
        .prop_map(|(calls, definitions, prints)| Body {
            kind: Kind::PrintlnHeavy,
            calls,
            definitions,
            prints,
            result: None,
            error: None,
            preamble: None,
        });
    let tool_heavy = (
        call_runs(3..15),
        vec(definition(), 0..3),
        prop::option::weighted(0.3, vec(print_line(), 1..3)),
    )
        .prop_map(|(calls, definitions, prints)| Body {
            kind: Kind::ToolHeavy,
            calls,
            definitions,
            prints: prints.unwrap_or_default(),
            result: None,
            error: None,
            preamble: None,
        });
    let ret = (stored_value(), vec(print_line(), 0..2)).prop_map(|(result, prints)| Body {
        kind: Kind::Return,
        calls: vec![],
        definitions: vec![],
        prints,
        result: Some(result),
        error: None,
        preamble: None,
    });
    let failed = (
        error(),
        vec(tool_call(), 0..2),
        vec(definition(), 0..2),
        vec(print_line(), 0..3),
        preamble(),
    )
        .prop_map(|(error, calls, definitions, prints, preamble)| Body {
            kind: Kind::Failed,
            calls,
            definitions,
            prints,
            result: None,
            error: Some(error),
            preamble,
        });
    prop_oneof![
        3 => explore,
        2 => println_heavy,
        2 => tool_heavy,
        1 => ret,
        2 => failed,
    ]
}

/// Session-level choices that are not turns.
#[derive(Debug, Clone)]
struct Frame {
    mission: String,
    system_prompt: String,
    data: Vec<(String, Value)>,
    record_feedback: bool,
    record_usage: bool,
    model: &'static str,
}

fn frame() -> impl Strategy<Value = Frame> {
    (
        prop_oneof![6 => prop::sample::select(MISSIONS).prop_map(str::to_string),
        1 => text().prop_filter_map("mission must not be blank", |t| {
            (!t.trim().is_empty()).then_some(t)
        })],
        prop::sample::select(SYSTEM_PROMPTS).prop_map(str::to_string),
        vec(
            (
                prop::sample::select(&["products", "orders", "config"][..]),
                stored_value(),
            ),
            0..3,
        ),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.3),
        prop::sample::select(&["deepseek-v3.2", "gpt-4o", "claude-sonnet"][..]),
    )
        .prop_map(
            |(mission, system_prompt, data, record_feedback, record_usage, model)| Frame {
                mission,
                system_prompt,
                data: data.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                record_feedback,
                record_usage,
                model,
            },
        )
}

/// Sessions with `max_turns` in `1..=30` and any number of turns up to it.
pub fn arb_session() -> BoxedStrategy<Session> {
    (1u32..=30)
        .prop_flat_map(|max| (Just(max), 0..=max))
        .prop_flat_map(|(max, n)| session_with(max, n))
        .boxed()
}

/// Sessions whose number of turns lies in `turns`; `max_turns` is that number plus
/// 0..=3 spare turns (at least 1).
pub fn session_in(turns: RangeInclusive<u32>) -> BoxedStrategy<Session> {
    turns
        .prop_flat_map(|n| (Just(n), 0u32..=3))
        .prop_flat_map(|(n, spare)| session_with(n.max(1) + spare, n))
        .boxed()
}

/// Sessions with exactly `n` turns and the given `max_turns` (`n ≤ max_turns`).
pub fn session_with(max_turns: u32, n: u32) -> BoxedStrategy<Session> {
    (frame(), vec(body(), n as usize), any::<u32>())
        .prop_map(move |(frame, bodies, salt)| assemble(frame, bodies, max_turns, salt))
        .boxed()
}

fn assemble(frame: Frame, bodies: Vec<Body>, max_turns: u32, salt: u32) -> Session {
    let mut tools = BTreeMap::new();
    let mut turns = Vec::with_capacity(bodies.len());
    let mut input_tokens = 900u64 + u64::from(salt % 400);
    for (i, body) in bodies.into_iter().enumerate() {
        let number = i as u32 + 1;
        for call in &body.calls {
            tools.entry(call.name.clone()).or_insert_with(|| ToolSpec {
                signature: Some(format!("({} args) -> any", call.name)),
                description: Some(format!("The {} tool.", call.name.replace('-', " "))),
                parameters: None,
            });
        }
        let program = program_text(&body, number);
        let raw_response = match &body.preamble {
            Some(p) => format!("{p}\n\n{}", fenced_program(&program)),
            None => fenced_program(&program),
        };
        let feedback = frame.record_feedback.then(|| {
            let mut f = String::new();
            if let Some(e) = &body.error {
                let _ = write!(f, "Error: {}\n\n", e.message);
            } else {
                f.push_str("OK.\n\n");
            }
            f.push_str(&turns_line(max_turns.saturating_sub(number)));
            f
        });
        let usage = frame.record_usage.then(|| {
            input_tokens += 300 + (program.len() as u64) / 3;
            let mut u = Map::new();
            u.insert("input_tokens".into(), Json::from(input_tokens));
            u.insert(
                "output_tokens".into(),
                Json::from(40 + program.len() as u64 / 4),
            );
            u
        });
        turns.push(Turn {
            number,
            program,
            raw_response,
            success: body.error.is_none(),
            error: body.error,
            result: body.result,
            prints: body.prints,
            tool_calls: body.calls,
            definitions: body.definitions,
            feedback,
            usage,
        });
    }
    let mut meta = Map::new();
    meta.insert("source".into(), Json::from("recap-gen"));
    meta.insert("model".into(), Json::from(frame.model));
    let outcome = match turns.last() {
        Some(t) if t.success && t.result.is_some() => "answered",
        _ if turns.len() as u32 == max_turns => "max_turns",
        _ => "incomplete",
    };
    meta.insert("outcome".into(), Json::from(outcome));
    Session {
        id: format!("gen-{salt:08x}"),
        mission: frame.mission,
        system_prompt: frame.system_prompt,
        max_turns,
        budget_recorded: true,
        form: recap_core::Form::Ptc,
        tools,
        data: frame.data.into_iter().collect(),
        meta,
        turns,
        chat_turns: Vec::new(),
    }
}

/// A program that reads like the agent's code for what the turn recorded.
fn program_text(body: &Body, number: u32) -> String {
    let mut p = String::new();
    let _ = writeln!(
        p,
        ";; turn {number}: {}",
        match body.kind {
            Kind::Explore => "explore the data",
            Kind::PrintlnHeavy => "inspect the results",
            Kind::ToolHeavy => "gather everything from the tools",
            Kind::Return => "answer",
            Kind::Failed => "refine",
        }
    );
    for (i, def) in body.definitions.iter().enumerate() {
        let doc = def
            .docstring
            .as_deref()
            .map(|d| format!(" {d:?}"))
            .unwrap_or_default();
        if def.kind == DefKind::Defn {
            let params = match &def.value {
                Some(Value::Fn(Closure { params, .. })) => params
                    .iter()
                    .map(|p| p.as_deref().unwrap_or("{:keys [a b]}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => "x".to_string(),
            };
            let _ = writeln!(
                p,
                "(defn {}{doc} [{params}] (map :price {params}))",
                def.name
            );
        } else {
            match body.calls.get(i) {
                Some(call) => {
                    let _ = writeln!(
                        p,
                        "(def {}{doc} (tool/{} {}))",
                        def.name,
                        call.name,
                        short(&call.args)
                    );
                }
                None => {
                    let _ = writeln!(p, "(def {}{doc} (filter :stock data/products))", def.name);
                }
            }
        }
    }
    for call in body.calls.iter().skip(body.definitions.len()) {
        let _ = writeln!(p, "(tool/{} {})", call.name, short(&call.args));
    }
    if !body.prints.is_empty() {
        let _ = writeln!(
            p,
            "(doseq [row (take {} items)] (println row))",
            body.prints.len()
        );
    }
    match body.kind {
        Kind::Return => p.push_str("(return {:answer best})"),
        Kind::Failed => p.push_str("(def top (first (sort-by :rating reviews)))"),
        _ => p.push_str("(count items)"),
    }
    p
}

/// A compact rendering of arguments for program text (not the spec printer).
fn short(v: &Value) -> String {
    let s = v.to_json().to_string();
    match s.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}
