//! Evaluating one case's `input` for the function it names: one table of every kind
//! recap evaluates. The printer kinds (`format.to_clojure`, `type_of`) are here; the
//! original's renderers are in [`crate::ptc_runner`] and [`crate::ptc_trim`].

use crate::{ptc_runner, ptc_trim};
use recap_core::json_type::json_type_name;
use recap_core::{PrintOptions, Value, to_clojure, type_of};
use serde_json::{Map, Value as Json, json};

/// Evaluates `fn_name` on `input`: `None` when no evaluator knows the function,
/// `Some(Err(reason))` when the input is unusable or evaluation failed.
pub fn evaluate(fn_name: &str, input: &Json) -> Option<Result<Json, String>> {
    let result = match fn_name {
        "format.to_clojure" => format_to_clojure(input),
        "type_of" => value_of(input).map(|v| Json::String(type_of(&v))),
        "exec.render_tool_calls" => ptc_runner::render_tool_calls(input),
        "exec.render_output" => ptc_runner::render_output(input),
        "ns.tool" => ptc_runner::ns_tool(input),
        "ns.data" => ptc_runner::ns_data(input),
        "ns.user" => ptc_runner::ns_user(input),
        "ns.render" => ptc_runner::ns_render(input),
        "suc.to_messages" => ptc_runner::suc_to_messages(input),
        "compression.normalize" => ptc_runner::normalize(input),
        "compaction.trim" => ptc_trim::trim(input),
        _ => return None,
    };
    Some(result)
}

/// `{value, opts{limit?, printable_limit?, filter_hidden?}}` → `{text, truncated}`.
fn format_to_clojure(input: &Json) -> Result<Json, String> {
    let value = value_of(input)?;
    let opts = match input.get("opts") {
        None | Some(Json::Null) => PrintOptions::default(),
        Some(Json::Object(o)) => print_options(o)?,
        Some(other) => {
            return Err(format!(
                "input.opts: expected an object, found {}",
                json_type_name(other)
            ));
        }
    };
    let (text, truncated) = to_clojure(&value, opts);
    Ok(json!({ "text": text, "truncated": truncated }))
}

fn value_of(input: &Json) -> Result<Value, String> {
    let Json::Object(obj) = input else {
        return Err(format!(
            "input: expected an object, found {}",
            json_type_name(input)
        ));
    };
    let raw = obj
        .get("value")
        .ok_or_else(|| "input.value: required field is missing".to_string())?;
    Value::from_json(raw).map_err(|e| format!("input.value: {e}"))
}

fn print_options(o: &Map<String, Json>) -> Result<PrintOptions, String> {
    let mut opts = PrintOptions::default();
    for (key, v) in o {
        match key.as_str() {
            "limit" => opts.limit = limit_of(key, v)?,
            "printable_limit" => opts.printable_limit = limit_of(key, v)?,
            "filter_hidden" => match v {
                Json::Bool(filter) => opts.show_hidden = !filter,
                other => {
                    return Err(format!(
                        "input.opts.filter_hidden: expected true or false, found {}",
                        json_type_name(other)
                    ));
                }
            },
            other => {
                return Err(format!(
                    "input.opts: unknown option {other:?} (expected limit, printable_limit, filter_hidden)"
                ));
            }
        }
    }
    Ok(opts)
}

/// A limit is a non-negative integer; `null` means no limit (the original's infinity).
fn limit_of(key: &str, v: &Json) -> Result<Option<usize>, String> {
    match v {
        Json::Null => Ok(None),
        Json::Number(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("input.opts.{key}: expected a non-negative integer, found {n}")),
        other => Err(format!(
            "input.opts.{key}: expected a non-negative integer or null, found {}",
            json_type_name(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(fn_name: &str, input: Json) -> Result<Json, String> {
        evaluate(fn_name, &input).expect("known function")
    }

    #[test]
    fn format_maps_all_options() {
        let out = eval(
            "format.to_clojure",
            json!({"value": {"_a": "xxxxxxxxxxxxxx", "b": [1, 2, 3]},
                   "opts": {"limit": 2, "printable_limit": 12, "filter_hidden": false}}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"text": "{:_a \"xxxxxxxxxx...\" ...}", "truncated": true})
        );
        let out = eval(
            "format.to_clojure",
            json!({"value": [1], "opts": {"limit": null}}),
        );
        assert_eq!(out.unwrap(), json!({"text": "[1]", "truncated": false}));
    }

    #[test]
    fn bad_inputs_are_reported_with_the_field() {
        let cases = [
            (
                json!({"opts": {}}),
                "input.value: required field is missing",
            ),
            (json!([1]), "input: expected an object, found an array"),
            (
                json!({"value": {"$kword": 1}}),
                "input.value: at /$kword: unknown tag",
            ),
            (
                json!({"value": 1, "opts": {"limt": 3}}),
                "input.opts: unknown option \"limt\"",
            ),
            (
                json!({"value": 1, "opts": {"limit": -1}}),
                "input.opts.limit: expected a non-negative integer, found -1",
            ),
            (
                json!({"value": 1, "opts": {"printable_limit": "80"}}),
                "input.opts.printable_limit: expected a non-negative integer or null",
            ),
            (
                json!({"value": 1, "opts": {"filter_hidden": 1}}),
                "input.opts.filter_hidden: expected true or false",
            ),
            (
                json!({"value": 1, "opts": 3}),
                "input.opts: expected an object",
            ),
        ];
        for (input, want) in cases {
            let err = eval("format.to_clojure", input.clone()).unwrap_err();
            assert!(err.starts_with(want), "{input}: {err}");
        }
    }

    #[test]
    fn unknown_kinds_are_not_evaluated() {
        assert!(evaluate("no.such.kind", &json!({})).is_none());
        assert!(evaluate("format.to_clojure ", &json!({})).is_none());
    }

    #[test]
    fn type_of_uses_the_vocabulary() {
        assert_eq!(
            eval("type_of", json!({"value": [1, 2]})).unwrap(),
            json!("list[2]")
        );
    }
}
