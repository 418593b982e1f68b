//! Property tests of the value model and the printer: the JSON encoding
//! round-trips, the printer never panics, and its `truncated` flag is true exactly when
//! something was cut.
//!
//! Equivalence used by the round trip (decision, also in the docs): maps are unordered
//! (SPEC section 1), and a map with unique keyword keys is encoded as a JSON object whose
//! key order is not kept, so values are compared after sorting such maps by key.
//! `Value::Float` holding NaN or ±infinity (only possible when built in code) is encoded
//! as `{"$special": ..}` and therefore decodes as `Value::Special`; the comparison maps
//! non-finite floats to their special. All other values round-trip exactly.

use proptest::prelude::*;
use recap_core::value::key_order;
use recap_core::{Closure, PrintOptions, SpecialFloat, Value, to_clojure, type_of};

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => any::<f64>(),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(-0.0),
        1 => Just(1e300),
        2 => (-1_000_000i64..1_000_000, 0u32..6).prop_map(|(m, e)| m as f64 / 10f64.powi(e as i32)),
    ]
}

/// Names that collide often and sometimes look like tags (`$kw`) or are hidden (`_x`).
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[$_]?[a-c]{0,2}",
        1 => any::<String>(),
    ]
}

fn closure() -> impl Strategy<Value = Closure> {
    (
        prop::collection::vec(prop::option::of(name()), 0..4),
        prop::option::of(name()),
        prop::option::of(any::<String>()),
        prop::option::of(name()),
    )
        .prop_map(|(params, rest, docstring, return_type)| Closure {
            params,
            rest,
            docstring,
            return_type,
        })
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        float().prop_map(Value::Float),
        any::<String>().prop_map(Value::Str),
        "[a-z\"#{\\\\\n\t\u{1}é_ ]{0,30}".prop_map(Value::Str),
        name().prop_map(Value::Keyword),
        prop_oneof![
            Just(SpecialFloat::Infinity),
            Just(SpecialFloat::NegativeInfinity),
            Just(SpecialFloat::NaN),
        ]
        .prop_map(Value::Special),
        name().prop_map(Value::Var),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}".prop_map(Value::Date),
        Just(Value::Builtin),
        closure().prop_map(Value::Fn),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::List),
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Set),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Tuple),
            prop::collection::vec((name().prop_map(Value::Keyword), inner.clone()), 0..6)
                .prop_map(Value::Map),
            prop::collection::vec((inner.clone(), inner), 0..4).prop_map(Value::Map),
        ]
    })
}

fn options() -> impl Strategy<Value = PrintOptions> {
    (
        prop::option::of(0usize..6),
        prop::option::of(0usize..120),
        any::<bool>(),
    )
        .prop_map(|(limit, printable_limit, show_hidden)| PrintOptions {
            limit,
            printable_limit,
            show_hidden,
        })
}

/// The comparison form described in the module docs.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Float(f) if f.is_nan() => Value::Special(SpecialFloat::NaN),
        Value::Float(f) if f.is_infinite() => Value::Special(if *f > 0.0 {
            SpecialFloat::Infinity
        } else {
            SpecialFloat::NegativeInfinity
        }),
        Value::List(items) => Value::List(items.iter().map(canonical).collect()),
        Value::Set(items) => Value::Set(items.iter().map(canonical).collect()),
        Value::Tuple(items) => Value::Tuple(items.iter().map(canonical).collect()),
        Value::Map(entries) => {
            let mut out: Vec<(Value, Value)> = entries
                .iter()
                .map(|(k, v)| (canonical(k), canonical(v)))
                .collect();
            if encodes_as_object(entries) {
                out.sort_by(|a, b| key_order(&a.0, &b.0));
            }
            Value::Map(out)
        }
        other => other.clone(),
    }
}

fn encodes_as_object(entries: &[(Value, Value)]) -> bool {
    let mut names = Vec::new();
    for (k, _) in entries {
        match k {
            Value::Keyword(name) => names.push(name.as_str()),
            _ => return false,
        }
    }
    if names.len() == 1 && names[0].starts_with('$') {
        return false;
    }
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// The spec's rule for "something was cut", written independently of the printer.
fn expect_cut(v: &Value, o: PrintOptions) -> bool {
    let kept = |len: usize, limit: Option<usize>| limit.map_or(len, |m| m.min(len));
    match v {
        Value::Str(s) => o.printable_limit.is_some_and(|p| s.chars().count() > p),
        Value::List(items) | Value::Tuple(items) => {
            let n = kept(items.len(), o.limit);
            n < items.len() || items[..n].iter().any(|i| expect_cut(i, o))
        }
        Value::Set(items) => {
            let mut sorted: Vec<&Value> = items.iter().collect();
            sorted.sort_by(|a, b| key_order(a, b));
            let n = kept(sorted.len(), o.limit);
            n < sorted.len() || sorted[..n].iter().any(|i| expect_cut(i, o))
        }
        Value::Map(entries) => {
            let mut visible: Vec<&(Value, Value)> = entries
                .iter()
                .filter(|(k, _)| {
                    o.show_hidden
                        || !matches!(k, Value::Keyword(s) | Value::Str(s) if s.starts_with('_'))
                })
                .collect();
            visible.sort_by(|a, b| key_order(&a.0, &b.0));
            let limit = match o.printable_limit {
                Some(p) => Some(o.limit.unwrap_or(usize::MAX).min((p / 30).max(1))),
                None => o.limit,
            };
            let n = kept(visible.len(), limit);
            let child = PrintOptions {
                printable_limit: o.printable_limit.map(|p| {
                    p.saturating_sub(10 * n)
                        .checked_div(n)
                        .map_or(p, |q| q.max(10))
                }),
                ..o
            };
            n < visible.len() || visible[..n].iter().any(|(_, v)| expect_cut(v, child))
        }
        _ => false,
    }
}

fn escape_like_printer(s: &str) -> String {
    let (t, _) = to_clojure(&Value::Str(s.to_string()), PrintOptions::default());
    t[1..t.len() - 1].to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn json_round_trip_in_memory(v in value()) {
        let json = v.to_json();
        let back = Value::from_json(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back.to_json(), json);
        prop_assert_eq!(canonical(&back), canonical(&v));
    }

    #[test]
    fn json_round_trip_through_text(v in value()) {
        let json = v.to_json();
        let text = serde_json::to_string(&json).expect("encodable");
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("parsable");
        prop_assert_eq!(&parsed, &json);
        let back = Value::from_json(&parsed).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(canonical(&back), canonical(&v));
    }

    #[test]
    fn printer_never_panics_and_flags_exactly_the_cuts(v in value(), o in options()) {
        let (text, cut) = to_clojure(&v, o);
        prop_assert!(!text.is_empty());
        prop_assert_eq!(cut, expect_cut(&v, o), "text: {}", text);
        let _ = type_of(&v);
    }

    #[test]
    fn without_limits_nothing_is_cut(v in value()) {
        let (text, cut) = to_clojure(&v, PrintOptions::default());
        prop_assert!(!cut, "{}", text);
    }

    #[test]
    fn cut_list_ends_with_the_count(
        items in prop::collection::vec(prop_oneof![
            any::<i64>().prop_map(Value::Int),
            "[a-z]{0,12}".prop_map(Value::Str),
        ], 0..20),
        limit in 0usize..10,
        printable in prop::option::of(0usize..8),
    ) {
        let len = items.len();
        let v = Value::List(items);
        let (text, cut) = to_clojure(&v, PrintOptions::new(Some(limit), printable));
        let suffix = format!(" ...] ({len} items, showing first {limit})");
        if len > limit {
            prop_assert!(cut);
            prop_assert!(text.ends_with(&suffix), "{}", text);
        } else {
            prop_assert!(text.ends_with(']') && !text.ends_with(" ...]"), "{}", text);
            prop_assert!(!text.contains("items, showing first"), "{}", text);
        }
    }

    #[test]
    fn cut_string_keeps_exactly_the_first_chars(s in any::<String>(), p in 0usize..40) {
        let (text, cut) = to_clojure(&Value::Str(s.clone()), PrintOptions::new(None, Some(p)));
        let chars = s.chars().count();
        prop_assert_eq!(cut, chars > p);
        let kept: String = s.chars().take(p).collect();
        let want = if chars > p {
            format!("\"{}...\"", escape_like_printer(&kept))
        } else {
            format!("\"{}\"", escape_like_printer(&s))
        };
        prop_assert_eq!(text, want);
    }

    #[test]
    fn escaped_strings_contain_no_raw_controls_or_lone_quotes(s in any::<String>()) {
        let (text, _) = to_clojure(&Value::Str(s), PrintOptions::default());
        let inner = &text[1..text.len() - 1];
        prop_assert!(!inner.chars().any(char::is_control), "{:?}", inner);
        // Every quote inside is escaped: an odd run of backslashes precedes it.
        let bytes = inner.as_bytes();
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'"' {
                let run = bytes[..i].iter().rev().take_while(|c| **c == b'\\').count();
                prop_assert!(run % 2 == 1, "{:?}", inner);
            }
        }
    }
}
