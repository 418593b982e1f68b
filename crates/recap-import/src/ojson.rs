//! JSON values that keep object keys in their recorded order.
//!
//! The workspace's serde_json sorts object keys (no `preserve_order`), but SPEC 11.1
//! wants tool-call arguments that a log stores as an object written back "keys in their
//! recorded order". The chat importers therefore read records into [`J`], whose objects
//! are lists of pairs in file order, and convert to `serde_json::Value` only for `meta`
//! (a free object, where order does not matter).
//!
//! Strings and keys borrow from the text they were read from when they hold no escape:
//! most keys and ids then cost no allocation (importing is allocation-bound).

use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};
use std::borrow::Cow;
use std::fmt;

/// A JSON value; objects keep their keys in recorded order (duplicates too).
#[derive(Debug, Clone, PartialEq)]
pub enum J<'a> {
    Null,
    Bool(bool),
    Num(Number),
    Str(Cow<'a, str>),
    Arr(Vec<J<'a>>),
    Obj(Vec<(Cow<'a, str>, J<'a>)>),
}

/// `null`, for `at` on a missing key.
static NULL: J<'static> = J::Null;

impl<'a> J<'a> {
    /// The value of `key` in an object (the last one when the key repeats, as serde_json
    /// reads it); `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&J<'a>> {
        match self {
            J::Obj(pairs) => pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Like [`J::get`], but a missing key is `null`.
    pub fn at(&self, key: &str) -> &J<'a> {
        self.get(key).unwrap_or(&NULL)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[J<'a>]> {
        match self {
            J::Arr(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(Cow<'a, str>, J<'a>)]> {
        match self {
            J::Obj(pairs) => Some(pairs),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            J::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            J::Num(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, J::Null)
    }

    /// A short description of the value's type for problem messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Num(_) => "a number",
            J::Str(_) => "a string",
            J::Arr(_) => "an array",
            J::Obj(_) => "an object",
        }
    }

    /// The value as serde_json holds it (object keys sorted; a repeated key keeps its
    /// last value).
    pub fn to_json(&self) -> Json {
        match self {
            J::Null => Json::Null,
            J::Bool(b) => Json::Bool(*b),
            J::Num(n) => Json::Number(n.clone()),
            J::Str(s) => Json::String(s.to_string()),
            J::Arr(items) => Json::Array(items.iter().map(J::to_json).collect()),
            J::Obj(pairs) => Json::Object(to_map(pairs)),
        }
    }

    /// Compact JSON text, object keys in recorded order.
    pub fn to_compact(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    fn write_compact(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(true) => out.push_str("true"),
            J::Bool(false) => out.push_str("false"),
            J::Num(n) => out.push_str(&n.to_string()),
            J::Str(s) => write_string(s, out),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            J::Obj(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    v.write_compact(out);
                }
                out.push('}');
            }
        }
    }
}

/// serde_json's escaping, so a compact object reads back to the same strings.
fn write_string(s: &str, out: &mut String) {
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        // Serialising a string cannot fail; keep the output JSON all the same.
        Err(_) => out.push_str("\"\""),
    }
}

/// An object's pairs as a serde_json map.
pub fn to_map(pairs: &[(Cow<'_, str>, J<'_>)]) -> Map<String, Json> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_json()))
        .collect()
}

impl<'de> Deserialize<'de> for J<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(JVisitor)
    }
}

struct JVisitor;

/// Reads an object key, borrowed from the text when it can be.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

impl<'de> Visitor<'de> for JVisitor {
    type Value = J<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<J<'de>, E> {
        Ok(J::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<J<'de>, E> {
        Ok(J::Num(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<J<'de>, E> {
        Ok(J::Num(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<J<'de>, E> {
        // JSON text has no NaN or infinity, so this is always a number.
        Ok(Number::from_f64(v).map_or(J::Null, J::Num))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<J<'de>, E> {
        Ok(J::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<J<'de>, E> {
        Ok(J::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<J<'de>, E> {
        Ok(J::Str(Cow::Owned(v)))
    }

    fn visit_none<E>(self) -> Result<J<'de>, E> {
        Ok(J::Null)
    }

    fn visit_unit<E>(self) -> Result<J<'de>, E> {
        Ok(J::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        J::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J<'de>, A::Error> {
        // serde_json gives no size hint; most lists and objects in logs are short.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J<'de>, A::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(k) = map.next_key_seed(KeySeed)? {
            let v: J<'de> = map.next_value()?;
            pairs.push((k, v));
        }
        Ok(J::Obj(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> J<'_> {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn objects_keep_their_recorded_key_order_when_written_back() {
        let j = parse(r#"{ "zeta": 1, "alpha": {"y": [true, null], "b": "x\"y"}, "mid": 2.5 }"#);
        assert_eq!(
            j.to_compact(),
            r#"{"zeta":1,"alpha":{"y":[true,null],"b":"x\"y"},"mid":2.5}"#
        );
        // serde_json's own value would have sorted them.
        let sorted: Json = serde_json::from_str(&j.to_compact()).unwrap();
        assert_eq!(
            sorted.to_string(),
            r#"{"alpha":{"b":"x\"y","y":[true,null]},"mid":2.5,"zeta":1}"#
        );
        assert_eq!(j.to_json(), sorted);
    }

    #[test]
    fn compact_text_escapes_as_serde_json_does() {
        let j = parse(r#"{"t": "tab\there \u0001 é \ud83d\ude00 / \\"}"#);
        let text = j.to_compact();
        assert_eq!(text, "{\"t\":\"tab\\there \\u0001 é 😀 / \\\\\"}");
        assert_eq!(parse(&text), j);
    }

    #[test]
    fn unescaped_strings_and_keys_borrow_from_the_text() {
        let j = parse(r#"{"key": "plain", "esc\u0061ped": "line\nbreak"}"#);
        let J::Obj(pairs) = &j else { panic!() };
        assert!(matches!(pairs[0].0, Cow::Borrowed("key")));
        assert!(matches!(pairs[0].1, J::Str(Cow::Borrowed("plain"))));
        assert!(matches!(&pairs[1].0, Cow::Owned(k) if k == "escaped"));
        assert!(matches!(&pairs[1].1, J::Str(Cow::Owned(v)) if v == "line\nbreak"));
    }

    #[test]
    fn repeated_keys_read_the_last_value_and_stay_in_the_text() {
        let j = parse(r#"{"a": 1, "a": 2}"#);
        assert_eq!(j.get("a").and_then(J::as_u64), Some(2));
        assert_eq!(j.to_compact(), r#"{"a":1,"a":2}"#);
        assert!(j.at("missing").is_null());
    }
}
