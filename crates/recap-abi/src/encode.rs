//! Writes turns and values as JSON bytes directly — the encoding of
//! `Turn::to_json` / `Value::to_json` (SPEC sections 1 and 4) without building a
//! `serde_json::Value` tree first. The host serialises every turn it sends a plugin,
//! so this is on the per-call path; tests hold it to `to_json` on generated sessions.

use crate::json::{put_i64, put_str, put_u64};
use recap_core::session::fenced_program;
use recap_core::value::encodes_as_object;
use recap_core::{ChatTurn, Closure, Observation, SpecialFloat, Turn, Value};
use serde::Serialize;

/// Floats (ryu's shortest form) and the rare free-form objects, through serde_json.
fn put<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Numbers and string-keyed maps into memory: no failure mode.
    serde_json::to_writer(&mut *out, value).expect("serialising JSON into a Vec cannot fail");
}

/// Writes `,"key":` (or `"key":` for the first field of an object).
fn key(out: &mut Vec<u8>, first: &mut bool, name: &str) {
    if !std::mem::take(first) {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// One turn in the corpus encoding.
pub fn put_turn(out: &mut Vec<u8>, turn: &Turn) {
    let first = &mut true;
    out.push(b'{');
    key(out, first, "number");
    put_u64(out, u64::from(turn.number));
    key(out, first, "program");
    put_str(out, &turn.program);
    // Like Turn::to_json: the default (the program in a fence) is left out.
    if turn.raw_response.len() != turn.program.len() + 15
        || turn.raw_response != fenced_program(&turn.program)
    {
        key(out, first, "raw_response");
        put_str(out, &turn.raw_response);
    }
    key(out, first, "success");
    out.extend_from_slice(if turn.success { b"true" } else { b"false" });
    if let Some(e) = &turn.error {
        key(out, first, "error");
        out.extend_from_slice(b"{\"message\":");
        put_str(out, &e.message);
        if let Some(r) = &e.reason {
            out.extend_from_slice(b",\"reason\":");
            put_str(out, r);
        }
        out.push(b'}');
    }
    if let Some(r) = &turn.result {
        key(out, first, "result");
        put_value(out, r);
    }
    if !turn.prints.is_empty() {
        key(out, first, "prints");
        out.push(b'[');
        for (i, p) in turn.prints.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            put_str(out, p);
        }
        out.push(b']');
    }
    if !turn.tool_calls.is_empty() {
        key(out, first, "tool_calls");
        out.push(b'[');
        for (i, c) in turn.tool_calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"name\":");
            put_str(out, &c.name);
            out.extend_from_slice(b",\"args\":");
            put_value(out, &c.args);
            if let Some(r) = &c.result {
                out.extend_from_slice(b",\"result\":");
                put_value(out, r);
            }
            out.push(b'}');
        }
        out.push(b']');
    }
    if !turn.definitions.is_empty() {
        key(out, first, "definitions");
        out.push(b'[');
        for (i, d) in turn.definitions.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"name\":");
            put_str(out, &d.name);
            out.extend_from_slice(b",\"kind\":");
            put_str(out, d.kind.as_str());
            if let Some(doc) = &d.docstring {
                out.extend_from_slice(b",\"docstring\":");
                put_str(out, doc);
            }
            if let Some(v) = &d.value {
                out.extend_from_slice(b",\"value\":");
                put_value(out, v);
            }
            out.push(b'}');
        }
        out.push(b']');
    }
    if let Some(f) = &turn.feedback {
        key(out, first, "feedback");
        put_str(out, f);
    }
    if let Some(u) = &turn.usage {
        key(out, first, "usage");
        put(out, u);
    }
    out.push(b'}');
}

/// One chat-form turn in the corpus encoding (SPEC 11.1), as `ChatTurn::to_json`
/// writes it: `success` only when false, `is_error` and `environment` only when true.
pub fn put_chat_turn(out: &mut Vec<u8>, turn: &ChatTurn) {
    out.extend_from_slice(b"{\"number\":");
    put_u64(out, u64::from(turn.number));
    out.extend_from_slice(b",\"assistant\":{\"content\":");
    match &turn.assistant.content {
        Some(c) => put_str(out, c),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"tool_calls\":[");
    for (i, c) in turn.assistant.tool_calls.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        put_str(out, &c.id);
        out.extend_from_slice(b",\"name\":");
        put_str(out, &c.name);
        out.extend_from_slice(b",\"arguments\":");
        put_str(out, &c.arguments);
        out.push(b'}');
    }
    out.push(b']');
    if let Some(r) = &turn.assistant.reasoning {
        out.extend_from_slice(b",\"reasoning\":");
        put_str(out, r);
    }
    out.extend_from_slice(b"},\"observations\":[");
    for (i, o) in turn.observations.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_observation(out, o);
    }
    out.push(b']');
    if !turn.success {
        out.extend_from_slice(b",\"success\":false");
    }
    if let Some(u) = &turn.usage {
        out.extend_from_slice(b",\"usage\":");
        put(out, u);
    }
    out.push(b'}');
}

fn put_observation(out: &mut Vec<u8>, o: &Observation) {
    match o {
        Observation::Tool {
            tool_call_id,
            name,
            content,
            is_error,
        } => {
            out.extend_from_slice(b"{\"role\":\"tool\",\"tool_call_id\":");
            put_str(out, tool_call_id);
            if let Some(n) = name {
                out.extend_from_slice(b",\"name\":");
                put_str(out, n);
            }
            out.extend_from_slice(b",\"content\":");
            put_str(out, content);
            if *is_error {
                out.extend_from_slice(b",\"is_error\":true");
            }
        }
        Observation::User {
            content,
            environment,
        } => {
            out.extend_from_slice(b"{\"role\":\"user\",\"content\":");
            put_str(out, content);
            if *environment {
                out.extend_from_slice(b",\"environment\":true");
            }
        }
    }
    out.push(b'}');
}

fn tagged(out: &mut Vec<u8>, tag: &str) {
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(tag.as_bytes());
    out.extend_from_slice(b"\":");
}

fn put_items(out: &mut Vec<u8>, items: &[Value]) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_value(out, item);
    }
    out.push(b']');
}

/// One value in the encoding of SPEC section 1, as `Value::to_json` writes it.
pub fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => put_i64(out, *i),
        Value::Float(f) if f.is_finite() => put(out, f),
        Value::Float(f) => {
            tagged(out, "$special");
            put_str(out, special_name_of(*f));
            out.push(b'}');
        }
        Value::Str(s) => put_str(out, s),
        Value::Keyword(k) => {
            tagged(out, "$kw");
            put_str(out, k);
            out.push(b'}');
        }
        Value::List(items) => put_items(out, items),
        Value::Set(items) => {
            tagged(out, "$set");
            put_items(out, items);
            out.push(b'}');
        }
        Value::Tuple(items) => {
            tagged(out, "$tuple");
            put_items(out, items);
            out.push(b'}');
        }
        Value::Map(entries) => put_map(out, entries),
        Value::Fn(c) => put_closure(out, c),
        Value::Special(s) => {
            tagged(out, "$special");
            put_str(
                out,
                match s {
                    SpecialFloat::Infinity => "infinity",
                    SpecialFloat::NegativeInfinity => "negative_infinity",
                    SpecialFloat::NaN => "nan",
                },
            );
            out.push(b'}');
        }
        Value::Var(name) => {
            tagged(out, "$var");
            put_str(out, name);
            out.push(b'}');
        }
        Value::Date(d) => {
            tagged(out, "$date");
            put_str(out, d);
            out.push(b'}');
        }
        Value::Builtin => out.extend_from_slice(b"{\"$builtin\":true}"),
    }
}

fn special_name_of(f: f64) -> &'static str {
    if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "infinity"
    } else {
        "negative_infinity"
    }
}

fn put_closure(out: &mut Vec<u8>, c: &Closure) {
    tagged(out, "$fn");
    out.extend_from_slice(b"{\"params\":[");
    for (i, p) in c.params.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match p {
            Some(name) => put_str(out, name),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.push(b']');
    for (name, field) in [
        ("rest", &c.rest),
        ("docstring", &c.docstring),
        ("return_type", &c.return_type),
    ] {
        if let Some(s) = field {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            put_str(out, s);
        }
    }
    out.extend_from_slice(b"}}");
}

/// A plain object or `{"$map": [[k, v], ...]}`, by the corpus encoding's rule
/// ([`encodes_as_object`]).
fn put_map(out: &mut Vec<u8>, entries: &[(Value, Value)]) {
    if encodes_as_object(entries) {
        out.push(b'{');
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if let Value::Keyword(name) = k {
                put_str(out, name);
            }
            out.push(b':');
            put_value(out, v);
        }
        out.push(b'}');
    } else {
        tagged(out, "$map");
        out.push(b'[');
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'[');
            put_value(out, k);
            out.push(b',');
            put_value(out, v);
            out.push(b']');
        }
        out.extend_from_slice(b"]}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value as Json, json};

    fn direct_json(turn: &Turn) -> Json {
        let mut out = Vec::new();
        put_turn(&mut out, turn);
        serde_json::from_slice(&out).expect("valid JSON")
    }

    #[test]
    fn equals_to_json_on_generated_sessions() {
        let mut turns = 0;
        for session in recap_gen::generate_corpus(17, 60, 0..=10) {
            for turn in &session.turns {
                assert_eq!(direct_json(turn), turn.to_json(), "{}", session.id);
                turns += 1;
            }
            for v in session.data.values() {
                let mut out = Vec::new();
                put_value(&mut out, v);
                assert_eq!(serde_json::from_slice::<Json>(&out).unwrap(), v.to_json());
            }
        }
        assert!(turns > 100);
    }

    #[test]
    fn chat_turns_equal_to_json() {
        let mut checked = 0;
        for session in recap_gen::generate_chat_corpus(11, 30, 1..=8) {
            for turn in &session.chat_turns {
                let mut out = Vec::new();
                put_chat_turn(&mut out, turn);
                let json: Json = serde_json::from_slice(&out).expect("valid JSON");
                assert_eq!(json, turn.to_json(), "{}", session.id);
                checked += 1;
            }
        }
        assert!(checked > 50, "{checked}");
    }

    #[test]
    fn equals_to_json_on_tricky_values() {
        let values = json!([
            {"$map": [["$kw", 1]]},
            {"$map": [[{"$kw": "a"}, 1], [{"$kw": "a"}, 2]]},
            {"$map": [[1, 2], ["s", {"$set": [1, {"$tuple": []}]}]]},
            {"a": {"b": [1.5, -0.0, 1e300, -7]}, "c": null},
            {"$fn": {"params": ["x", null], "rest": "r", "docstring": "d\n\"q\"", "return_type": "int"}},
            {"$special": "nan"}, {"$special": "infinity"}, {"$special": "negative_infinity"},
            {"$var": "v"}, {"$date": "2024-01-15"}, {"$builtin": true}, "\u{0}\u{1f}é😀"
        ]);
        let mut big = json!({});
        for i in 0..20 {
            big[format!("k{i}")] = json!(i);
        }
        for j in values.as_array().unwrap().iter().chain([&big]) {
            let v = Value::from_json(j).unwrap();
            let mut out = Vec::new();
            put_value(&mut out, &v);
            assert_eq!(
                serde_json::from_slice::<Json>(&out).unwrap(),
                v.to_json(),
                "{j}"
            );
            assert_eq!(
                Value::from_json(&serde_json::from_slice(&out).unwrap()).unwrap(),
                v
            );
        }
        // Non-finite floats held as Float (not Special) still encode as specials.
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut out = Vec::new();
            put_value(&mut out, &Value::Float(f));
            assert_eq!(
                serde_json::from_slice::<Json>(&out).unwrap(),
                Value::Float(f).to_json()
            );
        }
    }
}
