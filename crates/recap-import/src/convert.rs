//! Recorded JSON → recap values.
//!
//! `Value::from_json` reads recap's own encoding, where a single-key object such as
//! `{"$ref": ..}` is a tag; foreign logs are plain JSON, so they are converted
//! structurally here and never fail. Which key type a JSON object becomes depends on the
//! agent's language: PTC-Lisp and Python see string keys, generic JSON follows SPEC
//! section 1 (keywords).

use recap_core::Value;
use serde_json::Value as Json;

/// A short description of a JSON value's type, for problem messages: the corpus
/// decoder's wording.
pub use recap_core::json_type::json_type_name as json_type;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// `{"a": 1}` → `{:a 1}` (SPEC section 1 default).
    Keyword,
    /// `{"a": 1}` → `{"a" 1}`, as PTC-Lisp and Python decode JSON.
    String,
}

/// Converts any JSON value; integers outside i64 become floats.
pub fn value_from_json(json: &Json, keys: Keys) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::List(items.iter().map(|i| value_from_json(i, keys)).collect()),
        Json::Object(obj) => Value::Map(
            obj.iter()
                .map(|(k, v)| {
                    let key = match keys {
                        Keys::Keyword => Value::Keyword(k.clone()),
                        Keys::String => Value::Str(k.clone()),
                    };
                    (key, value_from_json(v, keys))
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dollar_keys_are_plain_map_keys_and_round_trip() {
        let j = json!({"$ref": "x"});
        let v = value_from_json(&j, Keys::Keyword);
        assert_eq!(
            v,
            Value::Map(vec![(
                Value::Keyword("$ref".into()),
                Value::Str("x".into())
            )])
        );
        assert_eq!(Value::from_json(&v.to_json()).unwrap(), v);
    }

    #[test]
    fn string_keys_round_trip_through_the_map_tag() {
        let v = value_from_json(&json!({"a": [1, 2.5, null]}), Keys::String);
        assert_eq!(
            v,
            Value::Map(vec![(
                Value::Str("a".into()),
                Value::List(vec![Value::Int(1), Value::Float(2.5), Value::Nil])
            )])
        );
        assert_eq!(Value::from_json(&v.to_json()).unwrap(), v);
    }

    #[test]
    fn huge_integers_become_floats() {
        let v = value_from_json(&json!(u64::MAX), Keys::Keyword);
        assert!(matches!(v, Value::Float(_)));
    }
}
