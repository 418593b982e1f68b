//! JSON parsing that refuses duplicate object keys, and (for corpus lines) integers
//! beyond 64 bits.
//!
//! `serde_json::Value` keeps the last of two equal keys without a word; in a recorded
//! corpus that hides a broken writer, so corpus lines are parsed through this wrapper,
//! which builds the same `Value` but errors on the first duplicate (naming it).
//! serde_json also reads an integer literal too wide for `i64`/`u64` as the nearest
//! float, silently changing the recorded value; [`from_str_exact`] refuses it.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// Why a text is not JSON as recap reads it.
#[derive(Debug, thiserror::Error)]
pub enum StrictError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// An integer literal that fits neither `i64` nor `u64` (the literal, cut to 40
    /// characters).
    #[error("integer {0} does not fit in 64 bits")]
    WideInteger(String),
}

/// Parses one JSON document, rejecting duplicate keys at any depth.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    parse(text).map(|(value, _)| value)
}

/// [`from_str`], and also rejects an integer literal beyond 64 bits.
pub fn from_str_exact(text: &str) -> Result<Value, StrictError> {
    let (value, maybe_wide) = parse(text)?;
    // Only a whole float of 2^63 or more can have come from a wide integer, so the text
    // is scanned again only then.
    if maybe_wide && let Some(literal) = wide_integer(text) {
        return Err(StrictError::WideInteger(literal));
    }
    Ok(value)
}

/// The value, and whether a float was read that may have been a wide integer.
fn parse(text: &str) -> Result<(Value, bool), serde_json::Error> {
    let maybe_wide = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict {
        maybe_wide: &maybe_wide,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, maybe_wide.get()))
}

/// The first integer literal outside strings that fits neither `i64` nor `u64`.
fn wide_integer(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < bytes.len()
                    && matches!(bytes[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                {
                    i += 1;
                }
                let literal = &text[start..i];
                let integer = !literal.contains(['.', 'e', 'E']);
                if integer && literal.parse::<i64>().is_err() && literal.parse::<u64>().is_err() {
                    let mut shown: String = literal.chars().take(40).collect();
                    if shown.len() < literal.len() {
                        shown.push('…');
                    }
                    return Some(shown);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Builds a `Value`, erroring on duplicate keys and noting floats that may have been
/// wide integers.
#[derive(Clone, Copy)]
struct Strict<'a> {
    maybe_wide: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        if v.fract() == 0.0 && v.abs() >= 9.2e18 {
            self.maybe_wide.set(true);
        }
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = access.next_value_seed(self)?;
            if map.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_serde_json() {
        let text = r#"{"a":[1,-2,3.5,"s",null,true,{"b":{}}],"c":18446744073709551615}"#;
        assert_eq!(
            from_str(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert_eq!(
            from_str_exact(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn duplicate_keys_are_errors_at_any_depth() {
        let e = from_str(r#"{"a":{"b":1,"b":2}}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key \"b\""), "{e}");
    }

    #[test]
    fn trailing_garbage_is_an_error() {
        assert!(from_str("{} x").is_err());
    }

    #[test]
    fn integers_beyond_64_bits_are_refused_not_rounded() {
        for (text, literal) in [
            (r#"{"a":18446744073709551616}"#, "18446744073709551616"),
            (r#"[1,-9223372036854775809]"#, "-9223372036854775809"),
            (
                r#"{"s":"123456789012345678901234","n":[123456789012345678901234567890123456789012345]}"#,
                "1234567890123456789012345678901234567890…",
            ),
        ] {
            match from_str_exact(text) {
                Err(StrictError::WideInteger(got)) => assert_eq!(got, literal, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
            assert!(
                from_str(text).is_ok(),
                "from_str reads it as serde_json does"
            );
        }
    }

    #[test]
    fn wide_floats_and_wide_digits_in_strings_are_fine() {
        for text in [
            r#"{"a":1e30,"b":18446744073709551616.0,"c":-1.5e19}"#,
            r#"{"a":"99999999999999999999999","b":9223372036854775807,"c":-9223372036854775808}"#,
            r#"{"a":"x\"1e999999999999999999999\"","b":1e19}"#,
        ] {
            assert!(from_str_exact(text).is_ok(), "{text}");
        }
    }
}
