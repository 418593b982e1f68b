//! The arguments of generated tool calls: JSON texts in the tool's schema order with
//! long string literals (paths, queries, commands, code), written compactly, Python
//! style or ASCII-escaped, and now and then malformed (cut off, single-quoted, a
//! trailing comma, bare text), as models write them.

use crate::chat_pools::{PATHS, QUERIES, SHELL, SNIPPETS, ToolDef};
use crate::chat_texts::{pick, short_text};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Value as Json, json};
use std::fmt::Write as _;

/// The arguments' JSON text of a call of `tool`, well-formed or not.
pub(crate) fn arguments_text_for(tool: &ToolDef) -> BoxedStrategy<String> {
    (arguments(tool), args_style())
        .prop_map(|(fields, style)| arguments_text(&fields, style))
        .boxed()
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
                        .map(
                            |(n, d)| json!({"flight_number": n, "date": format!("2024-05-{d:02}")}),
                        )
                        .collect(),
                )
            })
            .boxed(),
        ("path", _) => pick(PATHS).prop_map(Json::from).boxed(),
        ("query", _) => pick(QUERIES).prop_map(Json::from).boxed(),
        ("command", _) => pick(SHELL).prop_map(Json::from).boxed(),
        ("old_str" | "new_str", _) => pick(SNIPPETS).prop_map(Json::from).boxed(),
        ("user_id", _) => "[a-z]{3,6}_[a-z]{2,6}_[0-9]{3,4}"
            .prop_map(Json::from)
            .boxed(),
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
        24 => Just(ArgsStyle::Compact),
        16 => Just(ArgsStyle::Spaced),
        4 => Just(ArgsStyle::AsciiEscaped),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            arguments_text(&fields, ArgsStyle::BareText),
            "/repo/données"
        );
        for style in [
            ArgsStyle::Truncated,
            ArgsStyle::SingleQuoted,
            ArgsStyle::TrailingComma,
        ] {
            let text = arguments_text(&fields, style);
            assert!(
                serde_json::from_str::<Json>(&text).is_err(),
                "{style:?}: {text}"
            );
        }
        assert_eq!(ascii_escaped("a😀"), "a\\ud83d\\ude00");
    }
}
