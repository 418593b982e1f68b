//! Reads the turns of a `session_render` request straight into recap's types, without
//! a `serde_json::Value` tree in between (the plugin decodes every turn it is sent, so
//! this is on the per-call path).
//!
//! It is a fast path only: whatever it does not accept exactly as `Turn::from_json`
//! would (after the wire's unknown fields are dropped) — a type error, a missing field,
//! a duplicate key, an unknown `$` tag, a lone surrogate, a chat turn — makes it give
//! up, and the caller decodes through the tree instead, which yields the reference
//! result or the reference error. Tests hold the two to the same turns.
//!
//! Why it is fast: the document's UTF-8 is checked once; strings without escapes are
//! found eight bytes at a time and copied once; object keys are borrowed, not
//! allocated; list and map items are gathered on a shared stack and moved into one
//! exactly-sized allocation each.

use crate::json::{Fast, GiveUp, NumberToken, Reader};
use recap_core::session::fenced_program;
use recap_core::{Closure, DefKind, Definition, SpecialFloat, ToolCall, Turn, TurnError, Value};
use serde_json::{Map, Value as Json};
use std::sync::OnceLock;

/// `(turns_offset, turns)` of a `session_render` request, or `None` to fall back.
pub(crate) fn session_delta(bytes: &[u8]) -> Option<(usize, Vec<Turn>)> {
    let mut d = Decoder {
        r: Reader::new(bytes).ok()?,
        items: Vec::new(),
        entries: Vec::new(),
        sorted_maps: json_maps_are_sorted(),
    };
    let delta = d.delta().ok()?;
    d.r.end().ok()?;
    Some(delta)
}

struct Decoder<'a> {
    r: Reader<'a>,
    /// Items of the lists being read, innermost last.
    items: Vec<Value>,
    /// Entries of the maps being read, innermost last.
    entries: Vec<(String, Value)>,
    /// See [`json_maps_are_sorted`].
    sorted_maps: bool,
}

/// Marks a known key as seen; a repeated key means "last wins" in the tree decoder,
/// which is not worth mirroring here. (Repeated unknown keys are ignored either way.)
pub(crate) fn first_time(seen: &mut u32, bit: u32) -> Fast<()> {
    if *seen & bit != 0 {
        return Err(GiveUp);
    }
    *seen |= bit;
    Ok(())
}

/// The bit of a known key of turns, tool calls and definitions (0: not a known key).
fn key_bit(key: &str) -> u32 {
    const KEYS: [&str; 16] = [
        "number",
        "program",
        "raw_response",
        "success",
        "error",
        "result",
        "prints",
        "tool_calls",
        "definitions",
        "feedback",
        "usage",
        "name",
        "args",
        "kind",
        "docstring",
        "value",
    ];
    KEYS.iter().position(|k| *k == key).map_or(0, |i| 1 << i)
}

impl Decoder<'_> {
    fn delta(&mut self) -> Fast<(usize, Vec<Turn>)> {
        let (mut offset, mut turns) = (None, None);
        let mut m = self.r.object()?;
        while let Some(key) = self.r.key(&mut m)? {
            match &*key {
                "turns_offset" if offset.is_none() => {
                    offset = Some(if self.r.null()? { 0 } else { self.r.u64()? });
                }
                "turns" if turns.is_none() => {
                    turns = Some(if self.r.null()? {
                        Vec::new()
                    } else {
                        let mut list = Vec::new();
                        let mut a = self.r.array()?;
                        while self.r.item(&mut a)? {
                            list.push(self.turn()?);
                        }
                        list
                    });
                }
                "turns_offset" | "turns" => return Err(GiveUp),
                _ => self.r.skip()?,
            }
        }
        let offset = usize::try_from(offset.unwrap_or(0)).map_err(|_| GiveUp)?;
        Ok((offset, turns.unwrap_or_default()))
    }

    fn turn(&mut self) -> Fast<Turn> {
        let mut number = None;
        let mut program = None;
        let mut raw_response = None;
        let mut success = None;
        let mut error = None;
        let mut result = None;
        let mut prints = Vec::new();
        let mut tool_calls = Vec::new();
        let mut definitions = Vec::new();
        let mut feedback = None;
        let mut usage = None;
        let mut seen = 0;
        let mut m = self.r.object()?;
        while let Some(key) = self.r.key(&mut m)? {
            first_time(&mut seen, key_bit(&key))?;
            match &*key {
                "number" => number = Some(u32::try_from(self.r.u64()?).map_err(|_| GiveUp)?),
                "program" => program = Some(self.r.string()?),
                "raw_response" => raw_response = self.r.opt_string()?,
                "success" => success = Some(self.r.bool()?),
                "error" => error = self.error()?,
                "result" => result = Some(self.value()?),
                "prints" => {
                    if !self.r.null()? {
                        let mut a = self.r.array()?;
                        while self.r.item(&mut a)? {
                            prints.push(self.r.string()?);
                        }
                    }
                }
                "tool_calls" => {
                    if !self.r.null()? {
                        let mut a = self.r.array()?;
                        while self.r.item(&mut a)? {
                            tool_calls.push(self.tool_call()?);
                        }
                    }
                }
                "definitions" => {
                    if !self.r.null()? {
                        let mut a = self.r.array()?;
                        while self.r.item(&mut a)? {
                            definitions.push(self.definition()?);
                        }
                    }
                }
                "feedback" => feedback = self.r.opt_string()?,
                "usage" => usage = self.usage()?,
                // A chat turn in a PTC-Lisp session: the reference decoder says why.
                "assistant" => return Err(GiveUp),
                _ => self.r.skip()?,
            }
        }
        let (Some(number), Some(program), Some(success)) = (number, program, success) else {
            return Err(GiveUp);
        };
        if !success && error.is_none() {
            return Err(GiveUp);
        }
        let raw_response = raw_response.unwrap_or_else(|| fenced_program(&program));
        Ok(Turn {
            number,
            program,
            raw_response,
            success,
            error,
            result,
            prints,
            tool_calls,
            definitions,
            feedback,
            usage,
        })
    }

    fn error(&mut self) -> Fast<Option<TurnError>> {
        if self.r.null()? {
            return Ok(None);
        }
        let (mut message, mut reason) = (None, None);
        let (mut seen_message, mut seen_reason) = (false, false);
        let mut m = self.r.object()?;
        while let Some(key) = self.r.key(&mut m)? {
            match &*key {
                "message" if !seen_message => {
                    seen_message = true;
                    message = self.r.opt_string()?;
                }
                "reason" if !seen_reason => {
                    seen_reason = true;
                    reason = self.r.opt_string()?;
                }
                "message" | "reason" => return Err(GiveUp),
                _ => self.r.skip()?,
            }
        }
        match (message, reason) {
            (Some(message), reason) => Ok(Some(TurnError { message, reason })),
            (None, Some(reason)) => Ok(Some(TurnError {
                message: reason.clone(),
                reason: Some(reason),
            })),
            (None, None) => Err(GiveUp),
        }
    }

    /// An arbitrary object, rare: validated here, then read by serde_json.
    fn usage(&mut self) -> Fast<Option<Map<String, Json>>> {
        if self.r.null()? {
            return Ok(None);
        }
        self.r.peek();
        let start = self.r.position();
        self.r.skip()?;
        let text = self.r.slice(start, self.r.position());
        serde_json::from_str(text).map(Some).map_err(|_| GiveUp)
    }

    fn tool_call(&mut self) -> Fast<ToolCall> {
        let (mut name, mut args, mut result) = (None, Value::Nil, None);
        let mut seen = 0;
        let mut m = self.r.object()?;
        while let Some(key) = self.r.key(&mut m)? {
            first_time(&mut seen, key_bit(&key))?;
            match &*key {
                "name" => name = Some(self.r.string()?),
                "args" => args = self.value()?,
                "result" => result = Some(self.value()?),
                _ => self.r.skip()?,
            }
        }
        Ok(ToolCall {
            name: name.ok_or(GiveUp)?,
            args,
            result,
        })
    }

    fn definition(&mut self) -> Fast<Definition> {
        let (mut name, mut kind, mut docstring, mut value) = (None, None, None, None);
        let mut seen = 0;
        let mut m = self.r.object()?;
        while let Some(key) = self.r.key(&mut m)? {
            first_time(&mut seen, key_bit(&key))?;
            match &*key {
                "name" => name = Some(self.r.string()?),
                "kind" => {
                    kind = Some(match &*self.r.str()? {
                        "def" => DefKind::Def,
                        "defn" => DefKind::Defn,
                        _ => return Err(GiveUp),
                    })
                }
                "docstring" => docstring = self.r.opt_string()?,
                "value" => value = Some(self.value()?),
                _ => self.r.skip()?,
            }
        }
        Ok(Definition {
            name: name.ok_or(GiveUp)?,
            kind: kind.ok_or(GiveUp)?,
            docstring,
            value,
        })
    }

    /// One value in the encoding of SPEC section 1, as `Value::from_json` reads it.
    fn value(&mut self) -> Fast<Value> {
        Ok(match self.r.peek().ok_or(GiveUp)? {
            b'"' => Value::Str(self.r.string()?),
            b'{' => self.object()?,
            b'[' => Value::List(self.items()?),
            b't' | b'f' => Value::Bool(self.r.bool()?),
            b'n' => {
                self.r.null()?;
                Value::Nil
            }
            _ => number(&self.r.number()?)?,
        })
    }

    /// An array of values, moved off the shared stack into one allocation.
    fn items(&mut self) -> Fast<Vec<Value>> {
        let start = self.items.len();
        let mut a = self.r.array()?;
        while self.r.item(&mut a)? {
            let v = self.value()?;
            self.items.push(v);
        }
        Ok(self.items.drain(start..).collect())
    }

    /// A map (an object with keyword keys), or a tagged value (an object whose only
    /// key starts with `$`).
    fn object(&mut self) -> Fast<Value> {
        let mut m = self.r.object()?;
        let Some(first) = self.r.key(&mut m)? else {
            return Ok(Value::Map(Vec::new()));
        };
        if first.starts_with('$') {
            // A tag when it is the only key, an ordinary key otherwise: look past the
            // body first, then read it as the one or the other.
            let body = self.r.position();
            self.r.skip()?;
            let only_key = self.r.peek() == Some(b'}');
            self.r.rewind(body);
            if only_key {
                let v = self.tagged(&first)?;
                return match self.r.key(&mut m)? {
                    None => Ok(v),
                    Some(_) => Err(GiveUp),
                };
            }
        }
        let start = self.entries.len();
        let v = self.value()?;
        self.entries.push((first.into_owned(), v));
        while let Some(key) = self.r.key(&mut m)? {
            let v = self.value()?;
            self.entries.push((key.into_owned(), v));
        }
        let entries = &mut self.entries[start..];
        if self.sorted_maps {
            // No equal keys survive the check, so an unstable sort gives the order of
            // serde_json's BTreeMap.
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            if entries.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(GiveUp);
            }
        } else if has_duplicate_keys(entries) {
            return Err(GiveUp);
        }
        Ok(Value::Map(
            self.entries
                .drain(start..)
                .map(|(k, v)| (Value::Keyword(k), v))
                .collect(),
        ))
    }

    fn tagged(&mut self, tag: &str) -> Fast<Value> {
        Ok(match tag {
            "$kw" => Value::Keyword(self.r.string()?),
            "$var" => Value::Var(self.r.string()?),
            "$set" => Value::Set(self.items()?),
            "$tuple" => Value::Tuple(self.items()?),
            "$map" => self.explicit_map()?,
            "$fn" => Value::Fn(self.closure()?),
            "$special" => Value::Special(match &*self.r.str()? {
                "infinity" => SpecialFloat::Infinity,
                "negative_infinity" => SpecialFloat::NegativeInfinity,
                "nan" => SpecialFloat::NaN,
                _ => return Err(GiveUp),
            }),
            "$date" => {
                let s = self.r.string()?;
                if !is_iso_date(&s) {
                    return Err(GiveUp);
                }
                Value::Date(s)
            }
            "$builtin" => match self.r.bool()? {
                true => Value::Builtin,
                false => return Err(GiveUp),
            },
            _ => return Err(GiveUp),
        })
    }

    /// `[[key, value], ...]`, in the order given.
    fn explicit_map(&mut self) -> Fast<Value> {
        let mut pairs = Vec::new();
        let mut a = self.r.array()?;
        while self.r.item(&mut a)? {
            let mut pair = self.r.array()?;
            if !self.r.item(&mut pair)? {
                return Err(GiveUp);
            }
            let k = self.value()?;
            if !self.r.item(&mut pair)? {
                return Err(GiveUp);
            }
            let v = self.value()?;
            if self.r.item(&mut pair)? {
                return Err(GiveUp);
            }
            pairs.push((k, v));
        }
        Ok(Value::Map(pairs))
    }

    fn closure(&mut self) -> Fast<Closure> {
        let mut c = Closure::default();
        let mut seen = [false; 4];
        let mut m = self.r.object()?;
        while let Some(key) = self.r.key(&mut m)? {
            let field = match &*key {
                "params" => 0,
                "rest" => 1,
                "docstring" => 2,
                "return_type" => 3,
                // Unknown fields are ignored, as by recap-core.
                _ => {
                    self.r.skip()?;
                    continue;
                }
            };
            if std::mem::replace(&mut seen[field], true) {
                return Err(GiveUp);
            }
            match field {
                0 => {
                    let mut a = self.r.array()?;
                    while self.r.item(&mut a)? {
                        c.params.push(self.r.opt_string()?);
                    }
                }
                1 => c.rest = self.r.opt_string()?,
                2 => c.docstring = self.r.opt_string()?,
                _ => c.return_type = self.r.opt_string()?,
            }
        }
        Ok(c)
    }
}

/// A number as `Value::from_json` reads it: an integer that fits an i64, else a float;
/// an integer above i64::MAX is an error there (let the tree decoder say so).
fn number(token: &NumberToken<'_>) -> Fast<Value> {
    if let Some(n) = token.small_value() {
        return Ok(Value::Int(n));
    }
    let n = token.to_number()?;
    if let Some(i) = n.as_i64() {
        return Ok(Value::Int(i));
    }
    if n.is_u64() {
        return Err(GiveUp);
    }
    n.as_f64().map(Value::Float).ok_or(GiveUp)
}

fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// Whether this build's `serde_json::Map` iterates in key order (the default) rather
/// than insertion order (the `preserve_order` feature, which some other crate in a
/// plugin's build may turn on). `Value::from_json` keeps map entries in the order its
/// `Map` iterates, and the fast path must produce the same `Value`.
fn json_maps_are_sorted() -> bool {
    static SORTED: OnceLock<bool> = OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut m = Map::new();
        m.insert("b".into(), Json::Null);
        m.insert("a".into(), Json::Null);
        m.keys().next().is_some_and(|k| k == "a")
    })
}

fn has_duplicate_keys(entries: &[(String, Value)]) -> bool {
    let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tree(bytes: &[u8]) -> (usize, Vec<Turn>) {
        let (offset, turns) = crate::wire::decode_session_delta(bytes).unwrap();
        let turns = turns
            .into_iter()
            .enumerate()
            .map(|(i, t)| crate::wire::ptc_turn(t, i).unwrap())
            .collect();
        (offset, turns)
    }

    #[test]
    fn equals_the_tree_decoder_on_generated_sessions() {
        let mut checked = 0;
        for session in recap_gen::generate_corpus(23, 60, 0..=10) {
            let bytes = crate::wire::session_render_request(3, &session.turns);
            let fast = session_delta(&bytes).expect("the fast path takes host requests");
            assert_eq!(fast, tree(&bytes), "{}", session.id);
            assert_eq!(fast.1, session.turns);
            checked += session.turns.len();
        }
        assert!(checked > 100);
    }

    #[test]
    fn tricky_values_take_the_fast_path_or_fall_back_to_the_same_result() {
        let values = [
            json!({"$kw": "a"}),
            json!({"$map": [["$kw", 1]]}),
            json!({"$kw": "a", "b": 1}),
            json!({"b": 1, "$kw": "a"}),
            json!({"z": 1, "a": {"y": 2, "b": [1, 2.5, -3]}}),
            json!({}),
            json!({"$fn": {"params": ["x", null]}}),
            json!(9_223_372_036_854_775_807_i64),
        ];
        for v in values {
            let bytes = serde_json::to_vec(&json!({"turns": [
                {"number": 1, "program": "p", "success": true, "result": v, "tool_calls": null,
                 "definitions": [{"name": "d", "kind": "def", "value": v, "extra": 1}]}
            ]}))
            .unwrap();
            let fast = session_delta(&bytes).unwrap_or_else(|| panic!("fast path for {v}"));
            assert_eq!(fast, tree(&bytes), "{v}");
        }
    }

    #[test]
    fn what_the_fast_path_does_not_take_is_left_to_the_tree_decoder() {
        for bad in [
            &br#"{"turns": [{"number": 1, "program": "p", "success": true, "result": {"$kword": 1}}]}"#[..],
            br#"{"turns": [{"number": 1, "program": "p", "success": false}]}"#,
            br#"{"turns": [{"number": 1, "program": "p", "program": "q", "success": true}]}"#,
            br#"{"turns": [{"number": 1, "program": "p", "success": true, "result": {"a": 1, "a": 2}}]}"#,
            br#"{"turns": [{"number": 1, "program": "p", "success": true, "result": 18446744073709551615}]}"#,
            br#"{"turns": [{"number": 1, "program": 5, "success": true}]}"#,
            br#"{"turns_offset": -1}"#,
            br#"{"turns": []} trailing"#,
        ] {
            assert!(session_delta(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// The tree decoder's answer (unknown fields ignored, as on the wire): `None` when
    /// it rejects the request.
    fn reference(bytes: &[u8]) -> Option<(usize, Vec<Turn>)> {
        let (offset, turns) = crate::wire::decode_session_delta(bytes).ok()?;
        let turns = turns
            .into_iter()
            .enumerate()
            .map(|(i, t)| crate::wire::ptc_turn(t, i).ok())
            .collect::<Option<_>>()?;
        Some((offset, turns))
    }

    /// A small deterministic generator of JSON text: values of every shape, strings
    /// with escapes and non-ASCII, numbers of every form, tags, whitespace.
    use crate::mutation::{Xorshift as Gen, mutant};

    impl Gen {
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
        fn string(&mut self) -> String {
            let mut s = String::from("\"");
            for _ in 0..self.next() % 12 {
                s.push_str(self.pick(&[
                    "a",
                    "Zürich",
                    "日本",
                    "👍🏽",
                    "\\n",
                    "\\\"",
                    "\\\\",
                    "\\u00e9",
                    "\\ud83d\\ude00",
                    "\\u0000",
                    "\\/",
                    " ",
                    "$",
                    "long text without any escape at all",
                ]));
            }
            s.push('"');
            s
        }
        fn value(&mut self, depth: u32) -> String {
            let pick = if depth > 3 {
                self.next() % 4
            } else {
                self.next() % 9
            };
            match pick {
                0 => self.string(),
                1 => self
                    .pick(&[
                        "0",
                        "-0",
                        "7",
                        "-12",
                        "1.5",
                        "-2.5e3",
                        "1E2",
                        "123456789012345678",
                        "9223372036854775807",
                        "-9223372036854775808",
                        "9223372036854775808",
                        "18446744073709551616",
                        "0.1",
                        "1e-7",
                    ])
                    .to_string(),
                2 => self.pick(&["true", "false", "null"]).to_string(),
                3 => format!(
                    "{{\"{}\": {}}}",
                    self.pick(&["$kw", "$var", "$date", "$special", "$builtin"]),
                    self.pick(&[
                        "\"a\"",
                        "\"2024-01-15\"",
                        "\"2024-1-15\"",
                        "\"nan\"",
                        "\"infinity\"",
                        "true",
                        "false",
                        "1",
                        "null",
                    ])
                ),
                4 | 5 => {
                    let n = self.next() % 4;
                    let items: Vec<String> = (0..n).map(|_| self.value(depth + 1)).collect();
                    let tag = self.pick(&["", "", "$set", "$tuple"]);
                    if tag.is_empty() {
                        format!("[ {} ]", items.join(" ,"))
                    } else {
                        format!("{{\"{tag}\":[{}]}}", items.join(","))
                    }
                }
                6 | 7 => {
                    // Distinct keys: duplicates are left to the tree decoder on purpose.
                    let keys = ["a", "b", "name", "$kw", "ü", "a\\n", "\\u0062x"];
                    let first = self.next() as usize;
                    let entries: Vec<String> = (0..self.next() % 4)
                        .map(|i| {
                            let key = keys[(first + i as usize) % keys.len()];
                            format!("\"{key}\":{}", self.value(depth + 1))
                        })
                        .collect();
                    format!("{{{}}}", entries.join(","))
                }
                _ => {
                    let pairs: Vec<String> = (0..self.next() % 3)
                        .map(|_| format!("[{},{}]", self.value(depth + 1), self.value(depth + 1)))
                        .collect();
                    if self.next().is_multiple_of(2) {
                        format!("{{\"$map\":[{}]}}", pairs.join(","))
                    } else {
                        format!(
                            "{{\"$fn\":{{\"params\":[\"x\",null],\"docstring\":{},\"extra\":{}}}}}",
                            self.string(),
                            self.value(depth + 1)
                        )
                    }
                }
            }
        }
        fn turn(&mut self, number: u32) -> String {
            let mut fields = vec![
                format!("\"number\":{number}"),
                format!("\"program\":{}", self.string()),
            ];
            let success = !self.next().is_multiple_of(3);
            fields.push(format!("\"success\":{success}"));
            if !success || self.next().is_multiple_of(4) {
                fields.push(format!("\"error\":{{\"message\":{}}}", self.string()));
            }
            for (key, p) in [
                ("result", 2),
                ("raw_response", 3),
                ("feedback", 3),
                ("extra", 4),
            ] {
                if self.next().is_multiple_of(p) {
                    let v = if key == "result" || key == "extra" {
                        self.value(0)
                    } else {
                        self.string()
                    };
                    fields.push(format!("\"{key}\":{v}"));
                }
            }
            fields.push(format!("\"prints\":[{}]", self.string()));
            fields.push(format!(
                "\"tool_calls\":[{{\"name\":\"t\",\"args\":{},\"result\":{}}}]",
                self.value(0),
                self.value(0)
            ));
            fields.push(format!(
                "\"definitions\":[{{\"name\":\"d\",\"kind\":\"{}\",\"value\":{}}}]",
                self.pick(&["def", "defn", "def", "defn", "defx"]),
                self.value(0)
            ));
            if self.next().is_multiple_of(5) {
                fields.push("\"usage\":{\"input_tokens\":12,\"x\":[1.5,null]}".into());
            }
            format!("{{ {} }}", fields.join(", "))
        }
    }

    #[test]
    fn accepts_only_what_the_tree_decoder_accepts_and_reads_the_same() {
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        let (mut fast, mut fell_back, mut missed) = (0, 0, 0);
        for _ in 0..3000 {
            let turns: Vec<String> = (1..=1 + g.next() % 3).map(|n| g.turn(n as u32)).collect();
            let request = format!("{{\"turns_offset\":0,\"turns\":[{}]}}", turns.join(","));
            let want = reference(request.as_bytes());
            match session_delta(request.as_bytes()) {
                Some(got) => {
                    assert_eq!(Some(&got), want.as_ref(), "{request}");
                    fast += 1;
                }
                None => {
                    fell_back += 1;
                    if want.is_some() {
                        eprintln!("the fast path gave up on a valid request: {request}");
                        missed += 1;
                    }
                }
            }
        }
        // The rest are the generator's invalid requests (bad dates, unknown kinds,
        // integers out of range, lone tags with the wrong body).
        assert_eq!(missed, 0, "valid requests off the fast path");
        assert!(
            fast > 300 && fell_back > 300,
            "fast {fast}, fell back {fell_back}"
        );
    }

    #[test]
    fn mutated_requests_decode_as_the_reference_does() {
        let mut g = Gen(0x1234_5678_9abc_def1);
        let tokens: [&[u8]; 14] = [
            b"\"", b"\\", b"{", b"}", b"[", b"]", b",", b":", b"$", b"-0", b"1e400", b"\\u",
            b"\xc3", b"null",
        ];
        let (mut mutants, mut valid) = (0, 0);
        for session in recap_gen::generate_corpus(5, 40, 1..=4) {
            let base = crate::wire::session_render_request(0, &session.turns);
            for _ in 0..100 {
                let m = mutant(&mut g, &base, &tokens, 3, true);
                let want = reference(&m);
                assert_eq!(
                    crate::wire::decode_session_turns(&m).ok(),
                    want,
                    "{}",
                    String::from_utf8_lossy(&m)
                );
                mutants += 1;
                valid += usize::from(want.is_some());
            }
        }
        assert!(
            mutants > 3000 && valid > 300,
            "{mutants} mutants, {valid} valid"
        );
    }
}
