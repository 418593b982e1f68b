//! The golden cases of the original's later rolling trim (`recap-ptc-trim`):
//! `compaction.trim`, `{messages, turn, config}` → `{messages, stats}`.

use crate::fields::messages_json;
use recap_core::{Message, Role};
use recap_ptc_trim::{config, trim};
use serde_json::{Value as Json, json};

pub(crate) fn trim(input: &Json) -> Result<Json, String> {
    let messages = input
        .get("messages")
        .and_then(Json::as_array)
        .ok_or("input.messages: expected an array of {role, content}")?
        .iter()
        .enumerate()
        .map(|(i, m)| message(m).map_err(|e| format!("input.messages[{i}]: {e}")))
        .collect::<Result<Vec<Message>, String>>()?;
    let turn = input
        .get("turn")
        .and_then(Json::as_u64)
        .ok_or("input.turn: expected a non-negative integer")?;
    let cfg = config::normalize(input.get("config").unwrap_or(&Json::Null))
        .map_err(|e| format!("input.config: {e}"))?;
    let Some(cfg) = cfg else {
        return Ok(json!({ "messages": messages_json(messages.iter()), "stats": null }));
    };
    let (kept, stats) = trim::run(&messages, turn, &cfg);
    Ok(json!({
        "messages": messages_json(kept.iter().map(|&i| &messages[i])),
        "stats": {
            "enabled": true,
            "triggered": stats.triggered,
            "strategy": "trim",
            "reason": stats.reason.map(trim::Reason::as_str),
            "messages_before": stats.messages_before,
            "messages_after": stats.messages_after,
            "estimated_tokens_before": stats.estimated_tokens_before,
            "estimated_tokens_after": stats.estimated_tokens_after,
            "kept_initial_user?": stats.kept_initial_user,
            "kept_recent_turns": stats.kept_recent_turns,
            "over_budget?": stats.over_budget,
        }
    }))
}

fn message(m: &Json) -> Result<Message, String> {
    let role = match m.get("role").and_then(Json::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system") => Role::System,
        _ => return Err("role: expected \"user\", \"assistant\" or \"system\"".into()),
    };
    let content = m
        .get("content")
        .and_then(Json::as_str)
        .ok_or("content: expected a string")?;
    Ok(Message::new(role, content))
}
