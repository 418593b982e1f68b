//! Reading a golden case's `input` for the original's renderers: every field read
//! through these names its path in the error (`input.turns[1].success: expected a
//! boolean, got a string`); absent or null optional fields take their defaults.

use recap_core::json_type::json_type_name;
use recap_core::{Message, ToolSpec, Value};
use recap_ptc_runner::history::CallRef;
use recap_ptc_runner::namespace::{MemoryEntry, SampleLimits};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;

pub(crate) type R<T> = Result<T, String>;

pub(crate) fn obj<'a>(j: &'a Json, at: &str) -> R<&'a Map<String, Json>> {
    j.as_object()
        .ok_or_else(|| format!("{at}: expected an object, got {}", json_type_name(j)))
}

/// An optional object field: absent or null is an empty object.
pub(crate) fn opt_obj<'a>(
    parent: &'a Json,
    key: &str,
    at: &str,
) -> R<Option<&'a Map<String, Json>>> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(j) => obj(j, &format!("{at}.{key}")).map(Some),
    }
}

pub(crate) fn value(j: &Json, at: &str) -> R<Value> {
    Value::from_json(j).map_err(|e| format!("{at}{}: {}", e.path, e.message))
}

pub(crate) fn usize_field(parent: &Json, key: &str, at: &str, default: usize) -> R<usize> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(default),
        Some(j) => j
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                format!(
                    "{at}.{key}: expected a non-negative integer, got {}",
                    json_type_name(j)
                )
            }),
    }
}

pub(crate) fn bool_field(parent: &Json, key: &str, at: &str) -> R<bool> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(j) => Err(format!(
            "{at}.{key}: expected a boolean, got {}",
            json_type_name(j)
        )),
    }
}

pub(crate) fn str_field<'a>(parent: &'a Json, key: &str, at: &str) -> R<Option<&'a str>> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(j) => Err(format!(
            "{at}.{key}: expected a string, got {}",
            json_type_name(j)
        )),
    }
}

pub(crate) fn samples(opts: &Json, at: &str) -> R<SampleLimits> {
    let d = SampleLimits::default();
    Ok(SampleLimits {
        limit: usize_field(opts, "sample_limit", at, d.limit)?,
        printable_limit: usize_field(opts, "sample_printable_limit", at, d.printable_limit)?,
    })
}

pub(crate) fn tools(parent: &Json, at: &str) -> R<BTreeMap<String, ToolSpec>> {
    let Some(map) = opt_obj(parent, "tools", at)? else {
        return Ok(BTreeMap::new());
    };
    map.iter()
        .map(|(name, spec)| {
            let here = format!("{at}.tools.{name}");
            obj(spec, &here)?;
            Ok((
                name.clone(),
                ToolSpec {
                    signature: str_field(spec, "signature", &here)?.map(str::to_string),
                    description: str_field(spec, "description", &here)?.map(str::to_string),
                    parameters: None,
                },
            ))
        })
        .collect()
}

/// A named map of values (`data`, `memory`): the object's keys are the names.
pub(crate) fn named_values(parent: &Json, key: &str, at: &str) -> R<BTreeMap<String, Value>> {
    entries(parent, key, at, value)
}

/// Memory as the original held it: a closure value is a function.
pub(crate) fn memory_entries(memory: &BTreeMap<String, Value>) -> Vec<MemoryEntry<'_>> {
    memory
        .iter()
        .map(|(name, v)| MemoryEntry {
            name,
            value: Some(v),
            function: matches!(v, Value::Fn(_)),
            docstring: None,
        })
        .collect()
}

pub(crate) fn string_map(parent: &Json, key: &str, at: &str) -> R<BTreeMap<String, String>> {
    entries(parent, key, at, |v, here| match v {
        Json::String(s) => Ok(s.clone()),
        other => Err(format!(
            "{here}: expected a string, got {}",
            json_type_name(other)
        )),
    })
}

/// An optional object field, each value read by `item` with its path
/// (`{at}.{key}.{name}`); absent or null is empty.
fn entries<T>(
    parent: &Json,
    key: &str,
    at: &str,
    mut item: impl FnMut(&Json, &str) -> R<T>,
) -> R<BTreeMap<String, T>> {
    let Some(map) = opt_obj(parent, key, at)? else {
        return Ok(BTreeMap::new());
    };
    map.iter()
        .map(|(name, v)| Ok((name.clone(), item(v, &format!("{at}.{key}.{name}"))?)))
        .collect()
}

pub(crate) fn opt_string(s: Option<String>) -> Json {
    s.map_or(Json::Null, Json::String)
}

pub(crate) struct OwnedCall {
    pub name: String,
    pub args: Value,
}

pub(crate) fn calls(parent: &Json, key: &str, at: &str) -> R<Vec<OwnedCall>> {
    list(parent, key, at, |c, here| {
        obj(c, &here)?;
        let name = str_field(c, "name", &here)?
            .ok_or_else(|| format!("{here}.name: required field is missing"))?;
        let args = value(
            c.get("args").unwrap_or(&Json::Null),
            &format!("{here}.args"),
        )?;
        Ok(OwnedCall {
            name: name.to_string(),
            args,
        })
    })
}

pub(crate) fn call_refs(calls: &[OwnedCall]) -> Vec<CallRef<'_>> {
    calls
        .iter()
        .map(|c| CallRef {
            name: &c.name,
            args: &c.args,
        })
        .collect()
}

pub(crate) fn strings(parent: &Json, key: &str, at: &str) -> R<Vec<String>> {
    list(parent, key, at, |s, here| {
        s.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{here}: expected a string, got {}", json_type_name(s)))
    })
}

/// An optional array field, each item read by `item` with its path
/// (`{at}.{key}[i]`); absent or null is empty.
pub(crate) fn list<T>(
    parent: &Json,
    key: &str,
    at: &str,
    mut item: impl FnMut(&Json, String) -> R<T>,
) -> R<Vec<T>> {
    let items = match parent.get(key) {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(j) => {
            return Err(format!(
                "{at}.{key}: expected an array, got {}",
                json_type_name(j)
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, j)| item(j, format!("{at}.{key}[{i}]")))
        .collect()
}

/// Messages as the original returned them: `[{role, content}, ...]`.
pub(crate) fn messages_json<'a>(messages: impl Iterator<Item = &'a Message>) -> Json {
    Json::Array(
        messages
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect(),
    )
}
