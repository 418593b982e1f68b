//! Proptest strategies for recorded values: every variant of SPEC section 1, nested
//! collections, empty and huge values, unicode and escape-worthy strings.
//!
//! Generated values survive the JSON round trip exactly: floats are finite and short
//! (non-finite ones are `Special`), keyword-keyed maps have unique keys in sorted order
//! (so they encode as plain objects whatever map order serde_json keeps).

use proptest::collection::vec;
use proptest::prelude::*;
use recap_core::{Closure, SpecialFloat, Value};
use std::collections::BTreeMap;

/// Words that make realistic data, including non-ASCII ones.
pub const WORDS: &[&str] = &[
    "Laptop",
    "Mouse",
    "Keyboard",
    "Monitor",
    "Electronics",
    "stock",
    "review",
    "price",
    "café",
    "naïve",
    "日本語",
    "Ελληνικά",
    "😀",
    "émoji 👍🏽",
    "Zürich",
    "São Paulo",
    "données",
    "ok",
    "error",
    "pending",
    "shipped",
    "refund",
    "alice@example.com",
    "2024-Q3",
];

/// Strings that exercise the printer's escapes and the summary's sanitizing.
pub const TRICKY_STRINGS: &[&str] = &[
    "",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "line one\nline two",
    "crlf\r\nline",
    "#{not a set}",
    "bell\u{7}char",
    "; looks like a comment",
    "   padded   ",
];

/// Map keys, among them hidden ones (`_token`) the printer leaves out.
pub const KEYS: &[&str] = &[
    "name",
    "price",
    "category",
    "id",
    "rating",
    "stock",
    "tags",
    "url",
    "count",
    "status",
    "_token",
    "_internal",
    "email",
    "city",
    "score",
];

pub fn word() -> impl Strategy<Value = String> {
    prop::sample::select(WORDS).prop_map(str::to_string)
}

/// A short realistic string: a few words, sometimes a tricky one.
pub fn text() -> BoxedStrategy<String> {
    prop_oneof![
        6 => vec(prop::sample::select(WORDS), 1..6).prop_map(|w| w.join(" ")),
        2 => prop::sample::select(TRICKY_STRINGS).prop_map(str::to_string),
        1 => "[a-zA-Z0-9 ,.:;!?é日\\-]{0,40}",
    ]
    .boxed()
}

/// A string longer than every printer limit (and sometimes than the 2000-char print cut).
pub fn huge_text() -> impl Strategy<Value = String> {
    (prop::sample::select(WORDS), 50usize..900).prop_map(|(w, n)| {
        let mut s = String::with_capacity((w.len() + 1) * n);
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(w);
        }
        s
    })
}

fn float() -> impl Strategy<Value = f64> {
    // Short decimals parse back exactly (no more than 15 significant digits).
    (
        -1_000_000i64..1_000_000,
        prop::sample::select(&[1.0, 10.0, 100.0, 1000.0][..]),
    )
        .prop_map(|(n, d)| n as f64 / d)
}

fn date() -> impl Strategy<Value = String> {
    (1990u32..2030, 1u32..13, 1u32..29).prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
}

fn ident() -> impl Strategy<Value = String> {
    prop::sample::select(&["x", "item", "acc", "row", "n", "user", "k", "v"][..])
        .prop_map(str::to_string)
}

/// A recorded closure: named and pattern parameters, sometimes variadic, sometimes
/// with a docstring (with `;` and line breaks).
pub fn closure() -> impl Strategy<Value = Closure> {
    (
        vec(prop::option::weighted(0.85, ident()), 0..4),
        prop::option::weighted(0.2, ident()),
        prop::option::weighted(0.3, docstring()),
    )
        .prop_map(|(params, rest, docstring)| Closure {
            params,
            rest,
            docstring,
            return_type: None,
        })
}

/// Docstrings as models write them, including `;`, line breaks and empty ones.
pub fn docstring() -> BoxedStrategy<String> {
    prop_oneof![
        4 => vec(prop::sample::select(WORDS), 1..8).prop_map(|w| w.join(" ")),
        2 => (text(), text()).prop_map(|(a, b)| format!("{a}; {b}")),
        2 => (text(), text()).prop_map(|(a, b)| format!("{a}\n{b}")),
        1 => (text(), text()).prop_map(|(a, b)| format!("{a};\r\n{b}\r{a}")),
        1 => prop::sample::select(&["", ";", ";;;", "\n"][..]).prop_map(str::to_string),
    ]
    .boxed()
}

/// A scalar value (no nesting).
pub fn leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        2 => Just(Value::Nil),
        2 => any::<bool>().prop_map(Value::Bool),
        6 => prop_oneof![-1000i64..1000, any::<i64>()].prop_map(Value::Int),
        3 => float().prop_map(Value::Float),
        8 => text().prop_map(Value::Str),
        3 => prop::sample::select(KEYS).prop_map(|k| Value::Keyword(k.to_string())),
        1 => prop::sample::select(&[SpecialFloat::Infinity, SpecialFloat::NegativeInfinity, SpecialFloat::NaN][..])
            .prop_map(Value::Special),
        1 => date().prop_map(Value::Date),
        1 => ident().prop_map(Value::Var),
        1 => Just(Value::Builtin),
        1 => closure().prop_map(Value::Fn),
    ]
    .boxed()
}

/// A keyword-keyed map with unique keys in sorted order.
fn keyword_map(inner: BoxedStrategy<Value>, max: usize) -> impl Strategy<Value = Value> {
    vec((prop::sample::select(KEYS), inner), 0..max).prop_map(|entries| {
        let unique: BTreeMap<&str, Value> = entries.into_iter().collect();
        Value::Map(
            unique
                .into_iter()
                .map(|(k, v)| (Value::Keyword(k.to_string()), v))
                .collect(),
        )
    })
}

/// A map with explicit keys of other types (`$map`): strings, integers, keywords.
fn explicit_map(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        word().prop_map(Value::Str),
        (0i64..50).prop_map(Value::Int),
        prop::sample::select(KEYS).prop_map(|k| Value::Keyword(k.to_string())),
    ];
    vec((key, inner), 1..5).prop_map(|entries| {
        let mut seen: Vec<Value> = Vec::new();
        let mut out = Vec::new();
        for (k, v) in entries {
            if !seen.contains(&k) {
                seen.push(k.clone());
                out.push((k, v));
            }
        }
        // All-keyword maps encode as plain objects, whose key order JSON does not keep.
        if out.iter().all(|(k, _)| matches!(k, Value::Keyword(_))) {
            out.sort_by(|a, b| recap_core::value::key_order(&a.0, &b.0));
        }
        Value::Map(out)
    })
}

/// Any value: nested lists, sets, maps and tuples up to depth 3.
pub fn value() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(3, 48, 6, |inner| {
            prop_oneof![
                4 => vec(inner.clone(), 0..7).prop_map(Value::List),
                4 => keyword_map(inner.clone(), 6),
                1 => explicit_map(inner.clone()),
                1 => vec(inner.clone(), 0..4).prop_map(Value::Set),
                1 => vec(inner, 0..3).prop_map(Value::Tuple),
            ]
        })
        .boxed()
}

/// A record like `{:name "Laptop" :price 1200 :category "Electronics"}`.
pub fn record() -> BoxedStrategy<Value> {
    keyword_map(leaf(), 6).boxed()
}

/// Values an agent typically stores: records, lists of records, strings, numbers, and
/// now and then an empty or a huge one.
pub fn stored_value() -> BoxedStrategy<Value> {
    prop_oneof![
        5 => vec(record(), 0..12).prop_map(Value::List),
        3 => record(),
        4 => value(),
        3 => text().prop_map(Value::Str),
        1 => prop::sample::select(vec![
            Value::Nil,
            Value::List(vec![]),
            Value::Map(vec![]),
            Value::Set(vec![]),
            Value::Str(String::new()),
        ]),
        1 => huge_value(),
    ]
    .boxed()
}

/// Values far beyond every printer limit.
pub fn huge_value() -> BoxedStrategy<Value> {
    prop_oneof![
        huge_text().prop_map(Value::Str),
        vec((-1000i64..1000).prop_map(Value::Int), 200..1500).prop_map(Value::List),
        vec(record(), 40..120).prop_map(Value::List),
    ]
    .boxed()
}
