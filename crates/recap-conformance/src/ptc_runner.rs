//! The golden cases of the original ptc_runner renderer (`recap-ptc-runner`):
//! `exec.render_tool_calls`, `exec.render_output`, `ns.tool`, `ns.data`, `ns.user`,
//! `ns.render`, `suc.to_messages` and `compression.normalize`. Inputs use the value
//! encoding of SPEC section 1.

use crate::elixir;
use crate::fields::{
    OwnedCall, R, bool_field, call_refs, calls, list, memory_entries, messages_json, named_values,
    obj, opt_string, samples, str_field, string_map, strings, tools, usize_field, value,
};
use recap_core::Value;
use recap_core::json_type::json_type_name;
use recap_ptc_runner::history;
use recap_ptc_runner::namespace::{self, DataOptions, Namespaces};
use recap_ptc_runner::signature::Signature;
use recap_ptc_runner::suc::{self, Context, Limits, TurnView};
use serde_json::{Map, Value as Json, json};
use std::borrow::Cow;

// ------------------------------------------------------------------------------ exec

pub(crate) fn render_tool_calls(input: &Json) -> R<Json> {
    let owned = calls(input, "tool_calls", "input")?;
    let limit = usize_field(input, "limit", "input", 20)?;
    Ok(Json::String(history::render_tool_calls(
        &call_refs(&owned),
        limit,
    )))
}

pub(crate) fn render_output(input: &Json) -> R<Json> {
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

pub(crate) fn ns_tool(input: &Json) -> R<Json> {
    Ok(Json::String(namespace::render_tools(&tools(
        input, "input",
    )?)))
}

pub(crate) fn ns_data(input: &Json) -> R<Json> {
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

pub(crate) fn ns_user(input: &Json) -> R<Json> {
    let memory = named_values(input, "memory", "input")?;
    let opts = input.get("opts").unwrap_or(&Json::Null);
    let has_println = bool_field(opts, "has_println", "input.opts")?;
    Ok(opt_string(namespace::render_user(
        &memory_entries(&memory),
        has_println,
        samples(opts, "input.opts")?,
    )))
}

pub(crate) fn ns_render(input: &Json) -> R<Json> {
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
    list(input, "turns", "input", |t, at| {
        obj(t, &at)?;
        let success = match t.get("success") {
            Some(Json::Bool(b)) => *b,
            Some(j) => {
                return Err(format!(
                    "{at}.success: expected a boolean, got {}",
                    json_type_name(j)
                ));
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

pub(crate) fn suc_to_messages(input: &Json) -> R<Json> {
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
        "messages": messages_json(messages.iter()),
        "stats": stats.to_json(),
    }))
}

// ------------------------------------------------------------------------- normalize

/// The original `Compression.normalize/1`: disabled, the default strategy with its
/// defaults, or a module with the defaults merged under its own options. Modules are
/// named as `inspect` shows them (no `Elixir.` prefix).
pub(crate) fn normalize(input: &Json) -> R<Json> {
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
            .ok_or_else(|| format!("{at}: expected a module name, got {}", json_type_name(j)))?;
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
            json_type_name(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate;

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
