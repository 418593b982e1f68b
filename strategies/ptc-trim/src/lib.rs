//! The `ptc-trim` strategy: the original ptc_runner project's later replacement for
//! compression, a pressure-triggered rolling trim over the raw transcript
//! (`compaction: [strategy: :trim]`).
//!
//! The transcript is what `full-history` renders; when the turn being generated is
//! past `trigger_turns` (or the estimated tokens reach `trigger_tokens`) the middle is
//! dropped: the first USER message (the mission) and the last `2 × keep_recent_turns`
//! messages stay, the tail realigned to start with USER.
//!
//! Faithful consequences that break invariants other strategies keep (see
//! `docs/ptc-runner.md`): a trimmed prompt has two USER messages in a row (the mission,
//! then the first kept feedback), so role alternation does not hold once it fires; with
//! `keep_initial_user=false` the mission is dropped.

pub mod config;
pub mod trim;

use recap_core::{
    Invariant, Message, OptionInfo, RenderError, RenderRequest, SpecError, Strategy, StrategyInfo,
    StrategySpec,
};
use std::sync::Arc;
use trim::TrimConfig;

pub const NAME: &str = "ptc-trim";

/// The strategy with its normalized configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PtcTrim {
    pub config: TrimConfig,
}

const KEYS: [&str; 4] = [
    "trigger_turns",
    "trigger_tokens",
    "keep_recent_turns",
    "keep_initial_user",
];

pub fn info() -> StrategyInfo {
    let opt = |key: &str, default: &str, help: &str| OptionInfo {
        key: key.to_string(),
        default: default.to_string(),
        help: help.to_string(),
    };
    StrategyInfo {
        name: NAME.to_string(),
        summary: "the original ptc_runner's later rolling trim (compaction :trim) over the \
                  full-history transcript; breaks role alternation once it fires"
            .to_string(),
        options: vec![
            opt(
                "trigger_turns",
                "8",
                "trim when the turn being generated is past this; giving either trigger \
                 replaces the default trigger",
            ),
            opt(
                "trigger_tokens",
                "none",
                "trim when the transcript's estimated tokens (chars/4) reach this",
            ),
            opt(
                "keep_recent_turns",
                "3",
                "turns (message pairs) kept at the end",
            ),
            opt(
                "keep_initial_user",
                "true",
                "keep the first USER message (the mission)",
            ),
        ],
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    Ok(Arc::new(PtcTrim::from_spec(spec)?))
}

impl PtcTrim {
    pub fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        if let Some(key) = spec.options.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(SpecError::UnknownOption {
                strategy: spec.name.clone(),
                key: key.clone(),
                known: KEYS.join(", "),
            });
        }
        let mut config = TrimConfig::default();
        let turns = spec.options.contains_key("trigger_turns");
        let tokens = spec.options.contains_key("trigger_tokens");
        // As in the original, a given trigger replaces the default one wholesale.
        if turns || tokens {
            config.trigger_turns = match turns {
                true => Some(u64::from(spec.positive_int("trigger_turns", 8)?)),
                false => None,
            };
            config.trigger_tokens = match tokens {
                true => Some(u64::from(spec.positive_int("trigger_tokens", 1)?)),
                false => None,
            };
        }
        config.keep_recent_turns = spec.positive_int("keep_recent_turns", 3)? as usize;
        if let Some(v) = spec.options.get("keep_initial_user") {
            config.keep_initial_user = match v.as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(SpecError::BadValue {
                        strategy: spec.name.clone(),
                        key: "keep_initial_user".into(),
                        value: v.clone(),
                        expected: "expected true or false".into(),
                    });
                }
            };
        }
        Ok(Self { config })
    }
}

impl Strategy for PtcTrim {
    fn spec(&self) -> String {
        let c = &self.config;
        let mut opts: Vec<String> = Vec::new();
        if c.keep_initial_user != TrimConfig::default().keep_initial_user {
            opts.push(format!("keep_initial_user={}", c.keep_initial_user));
        }
        if c.keep_recent_turns != TrimConfig::default().keep_recent_turns {
            opts.push(format!("keep_recent_turns={}", c.keep_recent_turns));
        }
        let default = TrimConfig::default();
        if (c.trigger_turns, c.trigger_tokens) != (default.trigger_turns, default.trigger_tokens) {
            if let Some(n) = c.trigger_tokens {
                opts.push(format!("trigger_tokens={n}"));
            }
            if let Some(n) = c.trigger_turns {
                opts.push(format!("trigger_turns={n}"));
            }
        }
        if opts.is_empty() {
            NAME.to_string()
        } else {
            format!("{NAME}:{}", opts.join(","))
        }
    }

    fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        Ok(self.render_with_stats(request).0)
    }

    /// Kept: SYSTEM first, determinism, the turns line (the last feedback is never
    /// trimmed), and the mission only while it is kept. Role alternation, append-only and
    /// the failed-turns rule do not hold once it trims.
    fn invariants(&self) -> Vec<Invariant> {
        let mut out = vec![
            Invariant::SystemFirst,
            Invariant::Deterministic,
            Invariant::TurnsLine,
        ];
        if self.config.keep_initial_user {
            out.extend([Invariant::MissionVerbatim, Invariant::MissionLeadsFirstUser]);
        }
        out
    }
}

impl PtcTrim {
    /// The prompt and the trim's stats; the stats are `None` when compaction is off (a
    /// session with `max_turns = 1`, as in the original).
    pub fn render_with_stats(
        &self,
        request: &RenderRequest<'_>,
    ) -> (Vec<Message>, Option<trim::TrimStats>) {
        let mut full = recap_full_history::render(request);
        if request.max_turns <= 1 || full.is_empty() {
            return (full, None);
        }
        // The original trimmed the LLM-input messages, the system prompt excluded.
        let transcript = full.split_off(1);
        let turn = request.turns.len() as u64 + 1;
        let (kept, stats) = trim::run(&transcript, turn, &self.config);
        let mut slots: Vec<Option<Message>> = transcript.into_iter().map(Some).collect();
        full.extend(kept.into_iter().filter_map(|i| slots[i].take()));
        (full, Some(stats))
    }
}

pub mod conformance {
    //! The `compaction.trim` golden cases: `{messages, turn, config}` →
    //! `{messages, stats}`.

    use crate::{config, trim};
    use recap_core::{Message, Role};
    use serde_json::{Value as Json, json};

    pub fn evaluate(input: &Json) -> Result<Json, String> {
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
            return Ok(json!({ "messages": encode(messages.iter()), "stats": null }));
        };
        let (kept, stats) = trim::run(&messages, turn, &cfg);
        Ok(json!({
            "messages": encode(kept.iter().map(|&i| &messages[i])),
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
        Ok(Message {
            role,
            content: content.to_string(),
        })
    }

    fn encode<'a>(messages: impl Iterator<Item = &'a Message>) -> Json {
        Json::Array(
            messages
                .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
                .collect(),
        )
    }
}
