//! Evaluation of the golden cases (`conformance/ptc_runner_cases.json`) whose `fn` this
//! crate owns: `suc.to_messages`, `ns.tool`, `ns.data`, `ns.user`, `ns.render`,
//! `exec.render_tool_calls`, `exec.render_output`, `compression.normalize` and (through
//! `recap-ptc-trim`) `compaction.trim`.
//!
//! Inputs use the value encoding of SPEC section 1; a malformed input is an `Err` naming
//! the field (`input.turns[1].success: expected a boolean`).

use crate::elixir;
use crate::history::{self, CallRef};
use crate::namespace::{self, DataOptions, MemoryEntry, Namespaces, SampleLimits};
use crate::signature::Signature;
use crate::suc::{self, Context, Limits, TurnView};
use recap_core::{Message, ToolSpec, Value};
use serde_json::{Map, Value as Json, json};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Evaluates one golden case of a kind this crate owns (`suc.*`, `ns.*`, `exec.*`,
/// `compression.*`, `compaction.*`). `None` when the kind is not one of them.
pub fn evaluate(fn_name: &str, input: &Json) -> Option<Result<Json, String>> {
    let result = match fn_name {
        "exec.render_tool_calls" => render_tool_calls(input),
        "exec.render_output" => render_output(input),
        "ns.tool" => ns_tool(input),
        "ns.data" => ns_data(input),
        "ns.user" => ns_user(input),
        "ns.render" => ns_render(input),
        "suc.to_messages" => suc_to_messages(input),
        "compression.normalize" => normalize(input),
        "compaction.trim" => recap_ptc_trim::conformance::evaluate(input),
        _ => return None,
    };
    Some(result)
}

type R<T> = Result<T, String>;

fn obj<'a>(j: &'a Json, at: &str) -> R<&'a Map<String, Json>> {
    j.as_object()
        .ok_or_else(|| format!("{at}: expected an object, got {}", kind(j)))
}

/// An optional object field: absent or null is an empty object.
fn opt_obj<'a>(parent: &'a Json, key: &str, at: &str) -> R<Option<&'a Map<String, Json>>> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(j) => obj(j, &format!("{at}.{key}")).map(Some),
    }
}

fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn value(j: &Json, at: &str) -> R<Value> {
    Value::from_json(j).map_err(|e| format!("{at}{}: {}", e.path, e.message))
}

fn usize_field(parent: &Json, key: &str, at: &str, default: usize) -> R<usize> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(default),
        Some(j) => j
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                format!(
                    "{at}.{key}: expected a non-negative integer, got {}",
                    kind(j)
                )
            }),
    }
}

fn bool_field(parent: &Json, key: &str, at: &str) -> R<bool> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(j) => Err(format!("{at}.{key}: expected a boolean, got {}", kind(j))),
    }
}

fn str_field<'a>(parent: &'a Json, key: &str, at: &str) -> R<Option<&'a str>> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(j) => Err(format!("{at}.{key}: expected a string, got {}", kind(j))),
    }
}

fn samples(opts: &Json, at: &str) -> R<SampleLimits> {
    let d = SampleLimits::default();
    Ok(SampleLimits {
        limit: usize_field(opts, "sample_limit", at, d.limit)?,
        printable_limit: usize_field(opts, "sample_printable_limit", at, d.printable_limit)?,
    })
}

fn tools(parent: &Json, at: &str) -> R<BTreeMap<String, ToolSpec>> {
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
                },
            ))
        })
        .collect()
}

/// A named map of values (`data`, `memory`): the object's keys are the names.
fn named_values(parent: &Json, key: &str, at: &str) -> R<BTreeMap<String, Value>> {
    let Some(map) = opt_obj(parent, key, at)? else {
        return Ok(BTreeMap::new());
    };
    map.iter()
        .map(|(name, v)| Ok((name.clone(), value(v, &format!("{at}.{key}.{name}"))?)))
        .collect()
}

/// Memory as the original held it: a closure value is a function.
fn memory_entries(memory: &BTreeMap<String, Value>) -> Vec<MemoryEntry<'_>> {
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

fn string_map(parent: &Json, key: &str, at: &str) -> R<BTreeMap<String, String>> {
    let Some(map) = opt_obj(parent, key, at)? else {
        return Ok(BTreeMap::new());
    };
    map.iter()
        .map(|(k, v)| match v {
            Json::String(s) => Ok((k.clone(), s.clone())),
            other => Err(format!(
                "{at}.{key}.{k}: expected a string, got {}",
                kind(other)
            )),
        })
        .collect()
}

fn opt_string(s: Option<String>) -> Json {
    s.map_or(Json::Null, Json::String)
}

struct OwnedCall {
    name: String,
    args: Value,
}

fn calls(parent: &Json, key: &str, at: &str) -> R<Vec<OwnedCall>> {
    let list = match parent.get(key) {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(j) => return Err(format!("{at}.{key}: expected an array, got {}", kind(j))),
    };
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let here = format!("{at}.{key}[{i}]");
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
        .collect()
}

fn call_refs(calls: &[OwnedCall]) -> Vec<CallRef<'_>> {
    calls
        .iter()
        .map(|c| CallRef {
            name: &c.name,
            args: &c.args,
        })
        .collect()
}

fn strings(parent: &Json, key: &str, at: &str) -> R<Vec<String>> {
    match parent.get(key) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{at}.{key}[{i}]: expected a string, got {}", kind(s)))
            })
            .collect(),
        Some(j) => Err(format!("{at}.{key}: expected an array, got {}", kind(j))),
    }
}

// ------------------------------------------------------------------------------ exec

fn render_tool_calls(input: &Json) -> R<Json> {
    let owned = calls(input, "tool_calls", "input")?;
    let limit = usize_field(input, "limit", "input", 20)?;
    Ok(Json::String(history::render_tool_calls(
        &call_refs(&owned),
        limit,
    )))
}

fn render_output(input: &Json) -> R<Json> {
    let prints = strings(input, "prints", "input")?;
    let refs: Vec<&str> = prints.iter().map(String::as_str).collect();
    let limit = usize_field(input, "limit", "input", 15)?;
    let has_println = bool_field(input, "has_println", "input")?;
    Ok(opt_string(history::render_output(
        &refs,
        limit,
        has_println,
    )))
}

// -------------------------------------------------------------------------------- ns

fn ns_tool(input: &Json) -> R<Json> {
    Ok(Json::String(namespace::render_tools(&tools(
        input, "input",
    )?)))
}

fn ns_data(input: &Json) -> R<Json> {
    let data = named_values(input, "data", "input")?;
    let opts = input.get("opts").unwrap_or(&Json::Null);
    let context_signature = match str_field(opts, "context_signature", "input.opts")? {
        None => None,
        Some(s) => Some(
            Signature::parse(s)
                .ok_or_else(|| format!("input.opts.context_signature: invalid signature {s:?}"))?,
        ),
    };
    let options = DataOptions {
        samples: samples(opts, "input.opts")?,
        field_descriptions: string_map(opts, "field_descriptions", "input.opts")?,
        context_signature,
    };
    Ok(opt_string(namespace::render_data(&data, &options)))
}

fn ns_user(input: &Json) -> R<Json> {
    let memory = named_values(input, "memory", "input")?;
    let opts = input.get("opts").unwrap_or(&Json::Null);
    let has_println = bool_field(opts, "has_println", "input.opts")?;
    Ok(opt_string(namespace::render_user(
        &memory_entries(&memory),
        has_println,
        samples(opts, "input.opts")?,
    )))
}

fn ns_render(input: &Json) -> R<Json> {
    let tools = tools(input, "input")?;
    let data = named_values(input, "data", "input")?;
    let memory = named_values(input, "memory", "input")?;
    // Sample limits may sit at the top level or under `opts`.
    let opts = input.get("opts").filter(|o| o.is_object()).unwrap_or(input);
    Ok(Json::String(namespace::render(&Namespaces {
        tools: &tools,
        data: &data,
        memory: &memory_entries(&memory),
        has_println: bool_field(input, "has_println", "input")?,
        samples: samples(opts, "input")?,
    })))
}

// ------------------------------------------------------------------------------- suc

struct OwnedTurn {
    success: bool,
    program: Option<String>,
    error: String,
    prints: Vec<String>,
    calls: Vec<OwnedCall>,
}

fn turns(input: &Json) -> R<Vec<OwnedTurn>> {
    let list = match input.get("turns") {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(j) => return Err(format!("input.turns: expected an array, got {}", kind(j))),
    };
    list.iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("input.turns[{i}]");
            obj(t, &at)?;
            let success = match t.get("success") {
                Some(Json::Bool(b)) => *b,
                Some(j) => {
                    return Err(format!("{at}.success: expected a boolean, got {}", kind(j)));
                }
                None => return Err(format!("{at}.success: required field is missing")),
            };
            let result = value(
                t.get("result").unwrap_or(&Json::Null),
                &format!("{at}.result"),
            )?;
            Ok(OwnedTurn {
                success,
                program: str_field(t, "program", &at)?.map(str::to_string),
                error: if success {
                    String::new()
                } else {
                    error_message(&result)
                },
                prints: strings(t, "prints", &at)?,
                calls: calls(t, "tool_calls", &at)?,
            })
        })
        .collect()
}

/// The original's error text of a failed turn's result: the `:message` of a map, else
/// its `:reason` as a string, else the string itself, else `inspect`.
fn error_message(result: &Value) -> String {
    let keyword = |key: &str| match result {
        Value::Map(entries) => entries.iter().find_map(|(k, v)| match k {
            Value::Keyword(k) if k == key => Some(v),
            _ => None,
        }),
        _ => None,
    };
    if let Some(message) = keyword("message") {
        elixir::to_string(message)
    } else if let Some(reason) = keyword("reason") {
        elixir::to_string(reason)
    } else if let Value::Str(s) = result {
        s.clone()
    } else {
        elixir::inspect(result)
    }
}

fn suc_to_messages(input: &Json) -> R<Json> {
    let owned = turns(input)?;
    let views: Vec<TurnView<'_>> = owned
        .iter()
        .map(|t| TurnView {
            success: t.success,
            program: t.program.as_deref(),
            error: Cow::Borrowed(&t.error),
            prints: t.prints.iter().map(String::as_str).collect(),
            tool_calls: call_refs(&t.calls),
        })
        .collect();
    let memory = named_values(input, "memory", "input")?;
    let entries = memory_entries(&memory);
    let opts = input.get("opts").unwrap_or(&Json::Null);
    let at = "input.opts";
    let tools = tools(opts, at)?;
    let data = named_values(opts, "data", at)?;
    let field_descriptions = string_map(opts, "field_descriptions", at)?;
    let defaults = Limits::default();
    let turns_left = usize_field(opts, "turns_left", at, 0)?;
    let ctx = Context {
        system_prompt: str_field(opts, "system_prompt", at)?.unwrap_or(""),
        prompt: str_field(opts, "prompt", at)?.unwrap_or(""),
        tools: &tools,
        data: &data,
        memory: &entries,
        turns_left: u32::try_from(turns_left)
            .map_err(|_| format!("{at}.turns_left: {turns_left} is too large"))?,
        signature: str_field(opts, "signature", at)?,
        field_descriptions: Some(&field_descriptions),
        limits: Limits {
            println_limit: usize_field(opts, "println_limit", at, defaults.println_limit)?,
            tool_call_limit: usize_field(opts, "tool_call_limit", at, defaults.tool_call_limit)?,
            samples: samples(opts, at)?,
        },
    };
    let (messages, stats) = suc::to_messages(&views, &ctx);
    Ok(json!({
        "messages": messages.iter().map(message_json).collect::<Vec<_>>(),
        "stats": stats.to_json(),
    }))
}

fn message_json(m: &Message) -> Json {
    json!({"role": m.role.as_str(), "content": m.content})
}

// ------------------------------------------------------------------------- normalize

/// The original `Compression.normalize/1`: disabled, the default strategy with its
/// defaults, or a module with the defaults merged under its own options. Modules are
/// named as `inspect` shows them (no `Elixir.` prefix).
fn normalize(input: &Json) -> R<Json> {
    const DEFAULT_MODULE: &str = "PtcRunner.SubAgent.Compression.SingleUserCoalesced";
    let defaults = || {
        let mut m = Map::new();
        m.insert("println_limit".into(), json!(15));
        m.insert("tool_call_limit".into(), json!(20));
        m
    };
    let module_name = |j: &Json, at: &str| -> R<String> {
        let s = j
            .as_str()
            .or_else(|| j.get("$kw").and_then(Json::as_str))
            .ok_or_else(|| format!("{at}: expected a module name, got {}", kind(j)))?;
        Ok(s.strip_prefix("Elixir.").unwrap_or(s).to_string())
    };
    let with = |module: String, extra: Option<&Json>, at: &str| -> R<Json> {
        let mut opts = defaults();
        if let Some(extra) = extra.filter(|e| !e.is_null()) {
            for (k, v) in obj(extra, at)? {
                opts.insert(k.clone(), v.clone());
            }
        }
        Ok(json!({"strategy": module, "opts": opts}))
    };
    match input.get("config").unwrap_or(&Json::Null) {
        Json::Null | Json::Bool(false) => Ok(json!({"strategy": null, "opts": {}})),
        Json::Bool(true) => with(DEFAULT_MODULE.to_string(), None, "input.config"),
        s @ Json::String(_) => with(module_name(s, "input.config")?, None, "input.config"),
        Json::Object(o) if o.contains_key("module") => with(
            module_name(&o["module"], "input.config.module")?,
            o.get("opts"),
            "input.config.opts",
        ),
        Json::Object(o) if o.contains_key("$tuple") => match o["$tuple"].as_array() {
            Some(pair) if pair.len() == 2 => with(
                module_name(&pair[0], "input.config.$tuple[0]")?,
                Some(&pair[1]),
                "input.config.$tuple[1]",
            ),
            _ => Err("input.config.$tuple: expected [module, opts]".into()),
        },
        other => Err(format!(
            "input.config: expected null, a boolean, a module name or {{module, opts?}}, got {}",
            kind(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_are_not_ours() {
        assert!(evaluate("format.to_clojure", &json!({})).is_none());
        assert!(evaluate("type_of", &json!({})).is_none());
    }

    #[test]
    fn malformed_inputs_name_the_field() {
        let err = evaluate(
            "suc.to_messages",
            &json!({"turns": [{"number": 1, "success": "yes"}], "memory": {}, "opts": {}}),
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(
            err,
            "input.turns[0].success: expected a boolean, got a string"
        );

        let err = evaluate("ns.user", &json!({"memory": {"x": {"$kword": 1}}}))
            .unwrap()
            .unwrap_err();
        assert!(
            err.starts_with("input.memory.x/$kword: unknown tag"),
            "{err}"
        );

        let err = evaluate(
            "exec.render_tool_calls",
            &json!({"tool_calls": [{"args": {}}]}),
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(err, "input.tool_calls[0].name: required field is missing");

        let err = evaluate(
            "compaction.trim",
            &json!({"messages": [], "turn": 1, "config": {"trigger": {}}}),
        )
        .unwrap()
        .unwrap_err();
        assert!(err.starts_with("input.config: compaction trigger"), "{err}");
    }

    #[test]
    fn error_text_follows_the_original_precedence() {
        let v = |j: Json| Value::from_json(&j).unwrap();
        assert_eq!(
            error_message(&v(json!({"message": "m", "reason": "r"}))),
            "m"
        );
        assert_eq!(
            error_message(&v(json!({"reason": {"$kw": "timeout"}}))),
            "timeout"
        );
        assert_eq!(error_message(&v(json!("plain"))), "plain");
        assert_eq!(error_message(&v(json!(42))), "42");
        assert_eq!(error_message(&v(json!(null))), "nil");
        assert_eq!(
            error_message(&v(json!({"$map": [["message", "x"]]}))),
            "%{\"message\" => \"x\"}"
        );
    }

    #[test]
    fn normalize_merges_module_options() {
        let out = normalize(
            &json!({"config": {"module": "Elixir.My", "opts": {"println_limit": 5, "x": 1}}}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"strategy": "My", "opts": {"println_limit": 5, "tool_call_limit": 20, "x": 1}})
        );
    }
}
