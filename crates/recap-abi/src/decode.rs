//! Reads the turns of a `session_render` request straight into recap's types, without
//! a `serde_json::Value` tree in between (the plugin decodes every turn it is sent, so
//! this is on the per-call path).
//!
//! It is a fast path only: whatever it does not accept exactly as
//! `Turn::from_json` would — a type error, a missing field, a duplicate key, a `$` tag —
//! makes it give up, and the caller decodes through the tree instead, which yields the
//! reference result or the reference error. Tests hold the two to the same turns.

use recap_core::session::fenced_program;
use recap_core::{DefKind, Definition, ToolCall, Turn, TurnError, Value};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};
use std::fmt;
use std::sync::OnceLock;

/// `(turns_offset, turns)` of a `session_render` request, or `None` to fall back.
pub(crate) fn session_delta(bytes: &[u8]) -> Option<(usize, Vec<Turn>)> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let delta = de.deserialize_map(DeltaVisitor).ok()?;
    de.end().ok()?;
    Some(delta)
}

/// Gives up: the message is never shown (the tree decoder reports the real error).
fn give_up<E: de::Error>() -> E {
    E::custom("not on the fast path")
}

struct DeltaVisitor;

impl<'de> Visitor<'de> for DeltaVisitor {
    type Value = (usize, Vec<Turn>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session_render request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut offset, mut turns) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "turns_offset" if offset.is_none() => {
                    offset = Some(map.next_value::<Option<u64>>()?.unwrap_or(0))
                }
                "turns" if turns.is_none() => turns = Some(map.next_value::<Option<TurnList>>()?),
                "turns_offset" | "turns" => return Err(give_up()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let offset = usize::try_from(offset.unwrap_or(0)).map_err(|_| give_up())?;
        Ok((offset, turns.flatten().map_or_else(Vec::new, |l| l.0)))
    }
}

struct TurnList(Vec<Turn>);

impl<'de> de::Deserialize<'de> for TurnList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TurnList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of turns")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TurnList, A::Error> {
                let mut turns = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(t) = seq.next_element_seed(TurnSeed)? {
                    turns.push(t);
                }
                Ok(TurnList(turns))
            }
        }
        d.deserialize_seq(V)
    }
}

/// One turn, as `decode_turn` in recap-core reads it.
struct TurnSeed;

impl<'de> DeserializeSeed<'de> for TurnSeed {
    type Value = Turn;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Turn, D::Error> {
        d.deserialize_map(TurnVisitor)
    }
}

struct TurnVisitor;

impl<'de> Visitor<'de> for TurnVisitor {
    type Value = Turn;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a turn object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Turn, A::Error> {
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
        while let Some(key) = map.next_key::<String>()? {
            first_time(&mut seen, key_bit(&key))?;
            match key.as_str() {
                "number" => {
                    let n: u64 = map.next_value()?;
                    number = Some(u32::try_from(n).map_err(|_| give_up())?);
                }
                "program" => program = Some(map.next_value::<String>()?),
                "raw_response" => raw_response = map.next_value::<Option<String>>()?,
                "success" => success = Some(map.next_value::<bool>()?),
                "error" => error = map.next_value::<Option<ErrorFields>>()?,
                "result" => result = Some(map.next_value_seed(ValueSeed)?),
                "prints" => prints = map.next_value::<Option<Vec<String>>>()?.unwrap_or_default(),
                "tool_calls" => {
                    tool_calls = map
                        .next_value_seed(ListSeed::<ToolCall>::new())?
                        .unwrap_or_default()
                }
                "definitions" => {
                    definitions = map
                        .next_value_seed(ListSeed::<Definition>::new())?
                        .unwrap_or_default()
                }
                "feedback" => feedback = map.next_value::<Option<String>>()?,
                "usage" => usage = map.next_value::<Option<Map<String, Json>>>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let (Some(number), Some(program), Some(success)) = (number, program, success) else {
            return Err(give_up());
        };
        let error = match error {
            None => None,
            Some(ErrorFields {
                message: Some(message),
                reason,
            }) => Some(TurnError { message, reason }),
            Some(ErrorFields {
                message: None,
                reason: Some(reason),
            }) => Some(TurnError {
                message: reason.clone(),
                reason: Some(reason),
            }),
            Some(_) => return Err(give_up()),
        };
        if !success && error.is_none() {
            return Err(give_up());
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
}

/// Marks a known key as seen; a repeated key means "last wins" in the tree decoder,
/// which is not worth mirroring here. (Repeated unknown keys are ignored either way.)
fn first_time<E: de::Error>(seen: &mut u32, bit: u32) -> Result<(), E> {
    if *seen & bit != 0 {
        return Err(give_up());
    }
    *seen |= bit;
    Ok(())
}

/// The bit of a known key of turns, tool calls and definitions (0: not a known key).
fn key_bit(key: &str) -> u32 {
    const KEYS: [&str; 14] = [
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
    ];
    match KEYS.iter().position(|k| *k == key) {
        Some(i) => 1 << i,
        None if key == "docstring" => 1 << 14,
        None if key == "value" => 1 << 15,
        None => 0,
    }
}

#[derive(serde::Deserialize)]
struct ErrorFields {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}

/// `null` or an array of `T` (tool calls, definitions).
struct ListSeed<T>(std::marker::PhantomData<T>);

impl<T> ListSeed<T> {
    fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

trait Element: Sized {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

impl<'de, T: Element> DeserializeSeed<'de> for ListSeed<T> {
    type Value = Option<Vec<T>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Element> Visitor<'de> for V<T> {
            type Value = Option<Vec<T>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null or an array of objects")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) =
                    seq.next_element_seed(ElementSeed::<T>(std::marker::PhantomData))?
                {
                    items.push(item);
                }
                Ok(Some(items))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

struct ElementSeed<T>(std::marker::PhantomData<T>);

impl<'de, T: Element> DeserializeSeed<'de> for ElementSeed<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Element> Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::read(map)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl Element for ToolCall {
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut name, mut args, mut result) = (None, Value::Nil, None);
        let mut seen = 0;
        while let Some(key) = map.next_key::<String>()? {
            first_time(&mut seen, key_bit(&key))?;
            match key.as_str() {
                "name" => name = Some(map.next_value::<String>()?),
                "args" => args = map.next_value_seed(ValueSeed)?,
                "result" => result = Some(map.next_value_seed(ValueSeed)?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ToolCall {
            name: name.ok_or_else(give_up)?,
            args,
            result,
        })
    }
}

impl Element for Definition {
    fn read<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut name, mut kind, mut docstring, mut value) = (None, None, None, None);
        let mut seen = 0;
        while let Some(key) = map.next_key::<String>()? {
            first_time(&mut seen, key_bit(&key))?;
            match key.as_str() {
                "name" => name = Some(map.next_value::<String>()?),
                "kind" => {
                    kind = Some(match map.next_value::<String>()?.as_str() {
                        "def" => DefKind::Def,
                        "defn" => DefKind::Defn,
                        _ => return Err(give_up()),
                    })
                }
                "docstring" => docstring = map.next_value::<Option<String>>()?,
                "value" => value = Some(map.next_value_seed(ValueSeed)?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Definition {
            name: name.ok_or_else(give_up)?,
            kind: kind.ok_or_else(give_up)?,
            docstring,
            value,
        })
    }
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

/// One value in the encoding of SPEC section 1, as `Value::from_json` reads it.
struct ValueSeed;

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an encoded value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Int(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        // Above i64::MAX is an error for the tree decoder: let it say so.
        i64::try_from(u).map(Value::Int).map_err(|_| give_up())
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(ValueSeed)? {
            items.push(v);
        }
        Ok(Value::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Map(Vec::new()));
        };
        if first.starts_with('$') {
            // A tag when it is the only key, an ordinary key otherwise: decide once the
            // next key is known, and let recap-core decode the tagged value itself.
            let body: Json = map.next_value()?;
            let Some(second) = map.next_key::<String>()? else {
                let mut obj = Map::new();
                obj.insert(first, body);
                return Value::from_json(&Json::Object(obj)).map_err(|_| give_up());
            };
            entries.push((first, Value::from_json(&body).map_err(|_| give_up())?));
            entries.push((second, map.next_value_seed(ValueSeed)?));
        } else {
            entries.push((first, map.next_value_seed(ValueSeed)?));
        }
        while let Some(key) = map.next_key::<String>()? {
            entries.push((key, map.next_value_seed(ValueSeed)?));
        }
        if json_maps_are_sorted() {
            // Stable: equal keys keep their order, found below.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            if entries.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(give_up());
            }
        } else if has_duplicate_keys(&entries) {
            return Err(give_up());
        }
        Ok(Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Value::Keyword(k), v))
                .collect(),
        ))
    }
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
            .iter()
            .enumerate()
            .map(|(i, t)| Turn::from_json(t, &format!("turns[{i}]")).unwrap())
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
}
