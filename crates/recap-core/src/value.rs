//! Recorded values (SPEC section 1) and their JSON encoding.
//!
//! Decoding is strict: a single-key object whose key starts with `$` must be one of
//! the known tags, so a typo in a corpus is an error instead of a silently different
//! value. Encoding is the inverse; `decode(encode(v)) == v` for every value.

use serde_json::{Map, Number, Value as Json};
use std::cmp::Ordering;

/// A Clojure-like value as recorded by an agent run.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Keyword(String),
    List(Vec<Value>),
    Set(Vec<Value>),
    /// Entries in recorded order; printing sorts them (SPEC section 2).
    Map(Vec<(Value, Value)>),
    Fn(Closure),
    Special(SpecialFloat),
    Var(String),
    Tuple(Vec<Value>),
    /// `YYYY-MM-DD`, validated on decode.
    Date(String),
    Builtin,
}

/// `Nil`; lets callers move a value out of a `&mut Value` with `std::mem::take`
/// (moving out by pattern is not possible because `Value` implements `Drop`).
impl Default for Value {
    fn default() -> Self {
        Value::Nil
    }
}

/// Dropping is iterative so that a value nested arbitrarily deep (only possible when
/// built in code: JSON decoding stops at depth 128) does not overflow the stack. Values
/// whose children are all leaves or empty collections take the fast path (the
/// compiler's drop glue, one level deep); deeper ones are dismantled with a heap stack.
///
/// Consequence for callers: fields cannot be moved out of a `Value` by pattern
/// matching (E0509); match on a reference and clone, or `std::mem::take` the field.
impl Drop for Value {
    fn drop(&mut self) {
        fn is_nested(v: &Value) -> bool {
            match v {
                Value::List(items) | Value::Set(items) | Value::Tuple(items) => !items.is_empty(),
                Value::Map(entries) => !entries.is_empty(),
                _ => false,
            }
        }
        fn take_children(v: &mut Value, into: &mut Vec<Value>) {
            match v {
                Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
                    into.append(items);
                }
                Value::Map(entries) => {
                    for (k, val) in std::mem::take(entries) {
                        into.push(k);
                        into.push(val);
                    }
                }
                _ => {}
            }
        }
        let deep = match self {
            Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
                items.iter().any(is_nested)
            }
            Value::Map(entries) => entries.iter().any(|(k, v)| is_nested(k) || is_nested(v)),
            _ => false,
        };
        if !deep {
            return;
        }
        let mut pending = Vec::new();
        take_children(self, &mut pending);
        while let Some(mut v) = pending.pop() {
            take_children(&mut v, &mut pending);
            // `v` now has no children, so its own drop takes the fast path.
        }
    }
}

/// A closure as recorded: parameter names (`None` is a destructuring pattern).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Closure {
    pub params: Vec<Option<String>>,
    pub rest: Option<String>,
    pub docstring: Option<String>,
    pub return_type: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialFloat {
    Infinity,
    NegativeInfinity,
    NaN,
}

/// Why a JSON value is not a valid encoded value. `path` is a JSON-pointer-like
/// location inside the value (`/0/$map/1`), empty for the root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if path.is_empty() { String::new() } else { format!("at {path}: ") })]
pub struct ValueError {
    pub path: String,
    pub message: String,
}

impl ValueError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

const TAGS: &str = "$kw, $set, $map, $fn, $special, $var, $tuple, $date, $builtin";

impl Value {
    /// Decodes the JSON encoding of SPEC section 1.
    pub fn from_json(json: &Json) -> Result<Value, ValueError> {
        decode(json, &mut String::new())
    }

    /// Encodes back to JSON. Maps whose keys are all keywords become plain objects;
    /// any other map uses `$map`.
    pub fn to_json(&self) -> Json {
        encode(self)
    }

    /// A short name of the variant, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) | Value::Special(_) => "float",
            Value::Str(_) => "string",
            Value::Keyword(_) => "keyword",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::Map(_) => "map",
            Value::Fn(_) => "closure",
            Value::Var(_) => "var",
            Value::Tuple(_) => "tuple",
            Value::Date(_) => "date",
            Value::Builtin => "builtin",
        }
    }

    /// Exact structural identity: the same variants with the same contents in the same
    /// order, floats compared by their bits (`0.0` and `-0.0` differ, a NaN equals the
    /// same NaN). Identical values print identically, so a strategy may reuse the text
    /// printed for one when it meets the other (derived `==` may not: `0.0 == -0.0`).
    ///
    /// Iterative, like printing and dropping: any depth compares without recursion; a
    /// collection of leaves compares without allocating.
    pub fn is_identical(&self, other: &Value) -> bool {
        let mut pending: Vec<(&Value, &Value)> = Vec::new();
        let (mut a, mut b) = (self, other);
        loop {
            match (a, b) {
                (Value::List(x), Value::List(y))
                | (Value::Set(x), Value::Set(y))
                | (Value::Tuple(x), Value::Tuple(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    for (p, q) in x.iter().zip(y) {
                        if !leaf_identical(p, q, &mut pending) {
                            return false;
                        }
                    }
                }
                (Value::Map(x), Value::Map(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    for ((k, v), (k2, v2)) in x.iter().zip(y) {
                        if !leaf_identical(k, k2, &mut pending)
                            || !leaf_identical(v, v2, &mut pending)
                        {
                            return false;
                        }
                    }
                }
                _ => {
                    if !leaf_identical(a, b, &mut pending) {
                        return false;
                    }
                }
            }
            match pending.pop() {
                Some((p, q)) => (a, b) = (p, q),
                None => return true,
            }
        }
    }

    /// Looks up a map entry by keyword or string key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find_map(|(k, v)| match k {
                Value::Keyword(s) | Value::Str(s) if s == key => Some(v),
                _ => None,
            }),
            _ => None,
        }
    }
}

/// Compares two values that are not both collections of one kind; a pair of
/// collections is left on `pending` for [`Value::is_identical`]'s loop.
#[inline(always)]
fn leaf_identical<'v>(
    a: &'v Value,
    b: &'v Value,
    pending: &mut Vec<(&'v Value, &'v Value)>,
) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) | (Value::Keyword(x), Value::Keyword(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::List(_), Value::List(_))
        | (Value::Set(_), Value::Set(_))
        | (Value::Tuple(_), Value::Tuple(_))
        | (Value::Map(_), Value::Map(_)) => {
            pending.push((a, b));
            true
        }
        // The other variants hold no floats and no values, and different variants
        // differ: derived equality is exact and shallow here.
        _ => a == b,
    }
}

fn with_seg<T>(path: &mut String, seg: &str, f: impl FnOnce(&mut String) -> T) -> T {
    let len = path.len();
    path.push('/');
    path.push_str(seg);
    let out = f(path);
    path.truncate(len);
    out
}

fn decode(json: &Json, path: &mut String) -> Result<Value, ValueError> {
    Ok(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => decode_number(n, path)?,
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::List(decode_items(items, path)?),
        Json::Object(obj) => decode_object(obj, path)?,
    })
}

fn decode_number(n: &Number, path: &str) -> Result<Value, ValueError> {
    if let Some(i) = n.as_i64() {
        return Ok(Value::Int(i));
    }
    if n.is_u64() {
        return Err(ValueError::new(
            path,
            format!("integer {n} is out of the i64 range"),
        ));
    }
    n.as_f64()
        .map(Value::Float)
        .ok_or_else(|| ValueError::new(path, format!("number {n} is not representable")))
}

fn decode_items(items: &[Json], path: &mut String) -> Result<Vec<Value>, ValueError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| with_seg(path, &i.to_string(), |p| decode(item, p)))
        .collect()
}

fn decode_object(obj: &Map<String, Json>, path: &mut String) -> Result<Value, ValueError> {
    if obj.len() == 1 {
        let (tag, body) = obj.iter().next().expect("len checked");
        if tag.starts_with('$') {
            return with_seg(path, tag, |p| decode_tagged(tag, body, p));
        }
    }
    let mut entries = Vec::with_capacity(obj.len());
    for (k, v) in obj {
        let value = with_seg(path, k, |p| decode(v, p))?;
        entries.push((Value::Keyword(k.clone()), value));
    }
    Ok(Value::Map(entries))
}

fn expect_str<'a>(body: &'a Json, path: &str, what: &str) -> Result<&'a str, ValueError> {
    body.as_str()
        .ok_or_else(|| ValueError::new(path, format!("expected {what} (a string)")))
}

fn expect_array<'a>(body: &'a Json, path: &str, what: &str) -> Result<&'a [Json], ValueError> {
    body.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| ValueError::new(path, format!("expected {what} (an array)")))
}

fn decode_tagged(tag: &str, body: &Json, path: &mut String) -> Result<Value, ValueError> {
    Ok(match tag {
        "$kw" => Value::Keyword(expect_str(body, path, "a keyword name")?.to_string()),
        "$var" => Value::Var(expect_str(body, path, "a var name")?.to_string()),
        "$set" => Value::Set(decode_items(
            expect_array(body, path, "set elements")?,
            path,
        )?),
        "$tuple" => Value::Tuple(decode_items(
            expect_array(body, path, "tuple elements")?,
            path,
        )?),
        "$map" => decode_explicit_map(body, path)?,
        "$fn" => Value::Fn(decode_closure(body, path)?),
        "$special" => Value::Special(match expect_str(body, path, "a special float")? {
            "infinity" => SpecialFloat::Infinity,
            "negative_infinity" => SpecialFloat::NegativeInfinity,
            "nan" => SpecialFloat::NaN,
            other => {
                return Err(ValueError::new(
                    path,
                    format!(
                        "unknown special float {other:?}; expected infinity, negative_infinity or nan"
                    ),
                ));
            }
        }),
        "$date" => {
            let s = expect_str(body, path, "a date YYYY-MM-DD")?;
            if !is_iso_date(s) {
                return Err(ValueError::new(
                    path,
                    format!("{s:?} is not a date of the form YYYY-MM-DD"),
                ));
            }
            Value::Date(s.to_string())
        }
        "$builtin" => match body {
            Json::Bool(true) => Value::Builtin,
            _ => return Err(ValueError::new(path, "expected `true`")),
        },
        other => {
            return Err(ValueError::new(
                path,
                format!(
                    "unknown tag {other:?}; expected one of {TAGS} (a map key starting with `$` needs `$map`)"
                ),
            ));
        }
    })
}

fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn decode_explicit_map(body: &Json, path: &mut String) -> Result<Value, ValueError> {
    let pairs = expect_array(body, path, "[key, value] pairs")?;
    let mut entries = Vec::with_capacity(pairs.len());
    for (i, pair) in pairs.iter().enumerate() {
        let entry = with_seg(path, &i.to_string(), |p| match pair.as_array() {
            Some(kv) if kv.len() == 2 => {
                let k = with_seg(p, "0", |p| decode(&kv[0], p))?;
                let v = with_seg(p, "1", |p| decode(&kv[1], p))?;
                Ok((k, v))
            }
            _ => Err(ValueError::new(p, "expected a [key, value] pair")),
        })?;
        entries.push(entry);
    }
    Ok(Value::Map(entries))
}

fn decode_closure(body: &Json, path: &mut String) -> Result<Closure, ValueError> {
    let obj = body
        .as_object()
        .ok_or_else(|| ValueError::new(path, "expected an object with `params`"))?;
    let mut closure = Closure::default();
    for (key, v) in obj {
        with_seg(path, key, |p| -> Result<(), ValueError> {
            match key.as_str() {
                "params" => {
                    for (i, param) in expect_array(v, p, "parameter names")?.iter().enumerate() {
                        closure.params.push(match param {
                            Json::Null => None,
                            Json::String(s) => Some(s.clone()),
                            _ => {
                                return Err(ValueError::new(
                                    &format!("{p}/{i}"),
                                    "expected a parameter name or null",
                                ));
                            }
                        });
                    }
                }
                "rest" => closure.rest = optional_str(v, p)?,
                "docstring" => closure.docstring = optional_str(v, p)?,
                "return_type" => closure.return_type = optional_str(v, p)?,
                // Unknown fields are ignored so that newer recorders stay readable.
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(closure)
}

fn optional_str(v: &Json, path: &str) -> Result<Option<String>, ValueError> {
    match v {
        Json::Null => Ok(None),
        Json::String(s) => Ok(Some(s.clone())),
        _ => Err(ValueError::new(path, "expected a string or null")),
    }
}

fn encode(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Float(f) => match Number::from_f64(*f) {
            Some(n) => Json::Number(n),
            None => tagged("$special", Json::from(special_name(*f))),
        },
        Value::Str(s) => Json::String(s.clone()),
        Value::Keyword(k) => tagged("$kw", Json::String(k.clone())),
        Value::List(items) => Json::Array(items.iter().map(encode).collect()),
        Value::Set(items) => tagged("$set", Json::Array(items.iter().map(encode).collect())),
        Value::Tuple(items) => tagged("$tuple", Json::Array(items.iter().map(encode).collect())),
        Value::Map(entries) => encode_map(entries),
        Value::Fn(c) => {
            let mut obj = Map::new();
            obj.insert(
                "params".into(),
                Json::Array(
                    c.params
                        .iter()
                        .map(|p| p.clone().map_or(Json::Null, Json::String))
                        .collect(),
                ),
            );
            for (key, field) in [
                ("rest", &c.rest),
                ("docstring", &c.docstring),
                ("return_type", &c.return_type),
            ] {
                if let Some(s) = field {
                    obj.insert(key.into(), Json::String(s.clone()));
                }
            }
            tagged("$fn", Json::Object(obj))
        }
        Value::Special(s) => tagged(
            "$special",
            Json::from(match s {
                SpecialFloat::Infinity => "infinity",
                SpecialFloat::NegativeInfinity => "negative_infinity",
                SpecialFloat::NaN => "nan",
            }),
        ),
        Value::Var(name) => tagged("$var", Json::String(name.clone())),
        Value::Date(d) => tagged("$date", Json::String(d.clone())),
        Value::Builtin => tagged("$builtin", Json::Bool(true)),
    }
}

fn special_name(f: f64) -> &'static str {
    if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "infinity"
    } else {
        "negative_infinity"
    }
}

fn tagged(tag: &str, body: Json) -> Json {
    let mut obj = Map::new();
    obj.insert(tag.to_string(), body);
    Json::Object(obj)
}

fn encode_map(entries: &[(Value, Value)]) -> Json {
    if encodes_as_object(entries) {
        let mut obj = Map::new();
        for (k, v) in entries {
            if let Value::Keyword(name) = k {
                obj.insert(name.clone(), encode(v));
            }
        }
        Json::Object(obj)
    } else {
        tagged(
            "$map",
            Json::Array(
                entries
                    .iter()
                    .map(|(k, v)| Json::Array(vec![encode(k), encode(v)]))
                    .collect(),
            ),
        )
    }
}

/// Whether a map is encoded as a plain JSON object (SPEC section 1): every key is a
/// keyword, the keys are unique, and it would not read back as a tag (`{:$kw 1}`);
/// otherwise it is `{"$map": [[k, v], ...]}`. The corpus encoding and the plugin wire
/// format both decide by this rule.
pub fn encodes_as_object(entries: &[(Value, Value)]) -> bool {
    entries.iter().all(|(k, _)| matches!(k, Value::Keyword(_)))
        && !is_tag_lookalike(entries)
        && has_unique_keyword_keys(entries)
}

/// `{:$kw 1}` as a plain object would decode as a keyword tag, so it needs `$map`.
fn is_tag_lookalike(entries: &[(Value, Value)]) -> bool {
    entries.len() == 1 && matches!(&entries[0].0, Value::Keyword(k) if k.starts_with('$'))
}

/// Whether no keyword names two keys of the map (other keys are not compared).
pub fn has_unique_keyword_keys(entries: &[(Value, Value)]) -> bool {
    if entries.len() < 2 {
        return true;
    }
    // Maps read from JSON hold their keys in order: strictly increasing keys are
    // unique, found with one comparison per key.
    if entries.windows(2).all(|w| match (&w[0].0, &w[1].0) {
        (Value::Keyword(a), Value::Keyword(b)) => a < b,
        _ => false,
    }) {
        return true;
    }
    fn keyword(k: &Value) -> Option<&str> {
        match k {
            Value::Keyword(s) => Some(s.as_str()),
            _ => None,
        }
    }
    if entries.len() <= 8 {
        // Small maps (the usual case): compare pairwise, no allocation.
        return entries.iter().enumerate().all(|(i, (a, _))| {
            keyword(a).is_none_or(|a| entries[i + 1..].iter().all(|(b, _)| keyword(b) != Some(a)))
        });
    }
    let mut names: Vec<&str> = entries.iter().filter_map(|(k, _)| keyword(k)).collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// The total order used for map keys and set elements when printing (SPEC section 2):
/// numbers < keywords < strings < everything else, then by value.
pub fn key_order(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Int(_) | Value::Float(_) | Value::Special(_) => 0,
            Value::Keyword(_) => 1,
            Value::Str(_) => 2,
            _ => 3,
        }
    }
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Value::Keyword(x), Value::Keyword(y)) | (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Int(x), _) => int_vs_float(*x, number_of(b)),
        (_, Value::Int(y)) => int_vs_float(*y, number_of(a)).reverse(),
        _ => float_order(number_of(a), number_of(b)),
    })
}

/// Compares an integer with a float by exact value. Going through `i as f64` would
/// make the order non-transitive near 2^53 (`2^53+1 == 2^53.0 == 2^53` but
/// `2^53+1 > 2^53`), and `sort_by` panics on such orders (found by fuzzing; see
/// RELIABILITY.md). NaN sorts above every number (see [`float_order`]).
fn int_vs_float(i: i64, f: f64) -> Ordering {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return Ordering::Less;
    }
    if f >= TWO_POW_63 {
        return Ordering::Less;
    }
    if f < -TWO_POW_63 {
        return Ordering::Greater;
    }
    // |t| < 2^63, so the cast is exact; the fraction `f - t` is exact too.
    let t = f.trunc();
    i.cmp(&(t as i64))
        .then_with(|| 0.0f64.partial_cmp(&(f - t)).unwrap_or(Ordering::Equal))
}

/// Floats by value (`-0.0 == 0.0`, like an integer 0 and both of them); every NaN,
/// whatever its sign or payload, above every number and equal to the other NaNs, so
/// that a NaN built in code sorts like the `##NaN` it encodes to. Equal numbers keep
/// their recorded order.
fn float_order(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (a, b) => a.cmp(&b),
    }
}

fn number_of(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Special(SpecialFloat::Infinity) => f64::INFINITY,
        Value::Special(SpecialFloat::NegativeInfinity) => f64::NEG_INFINITY,
        Value::Special(SpecialFloat::NaN) => f64::NAN,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested_lists(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |inner, _| Value::List(vec![inner]))
    }

    #[test]
    fn identical_compares_floats_by_bits_and_keeps_order() {
        let kw = |s: &str| Value::Keyword(s.into());
        let map = |a: f64| Value::Map(vec![(kw("a"), Value::Float(a)), (kw("b"), Value::Nil)]);
        assert!(map(1.5).is_identical(&map(1.5)));
        assert!(map(f64::NAN).is_identical(&map(f64::NAN)));
        assert!(
            !map(0.0).is_identical(&map(-0.0)),
            "0.0 and -0.0 print differently"
        );
        assert_eq!(map(0.0), map(-0.0), "while derived == calls them equal");
        let swapped = Value::Map(vec![(kw("b"), Value::Nil), (kw("a"), Value::Float(1.5))]);
        assert!(!map(1.5).is_identical(&swapped));
        assert!(!Value::Int(1).is_identical(&Value::Float(1.0)));
        assert!(!Value::List(vec![]).is_identical(&Value::Tuple(vec![])));
        assert!(!Value::List(vec![Value::Nil]).is_identical(&Value::List(vec![])));
        let set = |items: Vec<i64>| Value::Set(items.into_iter().map(Value::Int).collect());
        assert!(set(vec![1, 2]).is_identical(&set(vec![1, 2])));
        assert!(!set(vec![1, 2]).is_identical(&set(vec![2, 1])));
    }

    #[test]
    fn identical_walks_any_depth_without_recursion() {
        // Built twice: the derived `Clone` recurses.
        let a = nested_lists(200_000, Value::Str("x".into()));
        assert!(a.is_identical(&nested_lists(200_000, Value::Str("x".into()))));
        assert!(!a.is_identical(&nested_lists(200_000, Value::Str("y".into()))));
        assert!(!a.is_identical(&nested_lists(199_999, Value::Str("x".into()))));
        let in_map = |v: Value| Value::Map(vec![(Value::Keyword("k".into()), v)]);
        let deep_map = || in_map(nested_lists(100_000, in_map(Value::Float(-0.0))));
        assert!(deep_map().is_identical(&deep_map()));
        assert!(
            !deep_map().is_identical(&in_map(nested_lists(100_000, in_map(Value::Float(0.0)))))
        );
    }

    #[test]
    fn decodes_every_tag() {
        let j = json!([null, true, 1, 1.5, "s", {"$kw": "k"}, {"$set": [1]},
            {"$map": [["a", 1]]}, {"$fn": {"params": ["x", null], "rest": "more"}},
            {"$special": "nan"}, {"$var": "v"}, {"$tuple": [1, 2]}, {"$date": "2024-01-15"},
            {"$builtin": true}, {"a": 1}]);
        let v = Value::from_json(&j).unwrap();
        let Value::List(items) = &v else {
            panic!("not a list")
        };
        assert_eq!(items.len(), 15);
        assert_eq!(items[5], Value::Keyword("k".into()));
        assert_eq!(
            items[7],
            Value::Map(vec![(Value::Str("a".into()), Value::Int(1))])
        );
        assert_eq!(
            items[14],
            Value::Map(vec![(Value::Keyword("a".into()), Value::Int(1))])
        );
        assert_eq!(Value::from_json(&v.to_json()).unwrap(), v);
    }

    #[test]
    fn unknown_tag_is_an_error_with_a_path() {
        let err = Value::from_json(&json!([1, {"$kword": "x"}])).unwrap_err();
        assert_eq!(err.path, "/1/$kword");
        assert!(err.message.contains("unknown tag \"$kword\""), "{err}");
    }

    #[test]
    fn bad_tag_bodies_are_errors() {
        for bad in [
            json!({"$kw": 1}),
            json!({"$set": {}}),
            json!({"$map": [[1]]}),
            json!({"$special": "huge"}),
            json!({"$date": "15/01/2024"}),
            json!({"$builtin": false}),
            json!({"$fn": {"params": [1]}}),
        ] {
            assert!(Value::from_json(&bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn integer_out_of_range_is_an_error() {
        let j: Json = serde_json::from_str("18446744073709551615").unwrap();
        assert!(Value::from_json(&j).unwrap_err().message.contains("i64"));
    }

    #[test]
    fn maps_that_look_like_tags_round_trip() {
        let v = Value::Map(vec![(Value::Keyword("$kw".into()), Value::Int(1))]);
        assert_eq!(Value::from_json(&v.to_json()).unwrap(), v);
    }

    #[test]
    fn unique_keyword_keys_agree_with_sorting_every_name() {
        let kw = |s: &str| (Value::Keyword(s.into()), Value::Nil);
        let oracle = |entries: &[(Value, Value)]| {
            let mut names: Vec<&str> = entries
                .iter()
                .filter_map(|(k, _)| match k {
                    Value::Keyword(s) => Some(s.as_str()),
                    _ => None,
                })
                .collect();
            names.sort_unstable();
            names.windows(2).all(|w| w[0] != w[1])
        };
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
        let mut cases: Vec<Vec<(Value, Value)>> = vec![
            vec![],
            vec![kw("a")],
            vec![kw("b"), kw("a")],
            vec![kw("a"), kw("a")],
            vec![kw("a"), (Value::Str("a".into()), Value::Nil), kw("b")],
            vec![(Value::Int(1), Value::Nil), (Value::Int(1), Value::Nil)],
        ];
        // Sorted, reversed and with one repeat, below and above the pairwise size.
        for n in [3, 8, 9, 10] {
            let sorted: Vec<_> = names[..n].iter().map(|s| kw(s)).collect();
            let mut reversed = sorted.clone();
            reversed.reverse();
            let mut repeated = reversed.clone();
            repeated[0] = kw(names[0]);
            cases.extend([sorted, reversed, repeated]);
        }
        for entries in &cases {
            assert_eq!(
                has_unique_keyword_keys(entries),
                oracle(entries),
                "{entries:?}"
            );
        }
    }
}
