//! The original's `Compaction.normalize/1` over a JSON encoding of its configuration, with
//! the same validation (unknown keys, empty trigger, non-positive integers are errors).
//!
//! Encoding: `null`/`false` (disabled), `true` (defaults), or an object standing for the
//! keyword list: `{"strategy"?: "trim", "trigger"?: {"turns"?: n, "tokens"?: n},
//! "keep_recent_turns"?: n, "keep_initial_user"?: bool, "token_counter"?: null}`.

use crate::trim::TrimConfig;
use recap_core::{SpecError, StrategySpec};
use serde_json::Value as Json;

/// A trigger option of a spec string: an integer ≥ 1, or `none` (what `recap
/// strategies` shows for an unset trigger), which counts as not given.
pub fn spec_trigger(spec: &StrategySpec, key: &str) -> Result<Option<u64>, SpecError> {
    match spec.options.get(key).map(String::as_str) {
        None | Some("none") => Ok(None),
        Some(_) => spec.positive_int(key, 1).map(|n| Some(u64::from(n))),
    }
}

/// `trigger_turns=none` without a token trigger: compaction could never start, which
/// the original refuses as an empty trigger.
pub fn no_trigger_left(spec: &StrategySpec) -> SpecError {
    SpecError::BadValue {
        strategy: spec.name.clone(),
        key: "trigger_turns".into(),
        value: "none".into(),
        expected:
            "an integer ≥ 1, or give trigger_tokens: with both unset nothing would trigger the trim"
                .into(),
    }
}

const TOP_KEYS: [&str; 5] = [
    "strategy",
    "trigger",
    "keep_recent_turns",
    "keep_initial_user",
    "token_counter",
];

/// `Ok(None)` when compaction is disabled.
pub fn normalize(config: &Json) -> Result<Option<TrimConfig>, String> {
    match config {
        Json::Null | Json::Bool(false) => Ok(None),
        Json::Bool(true) => Ok(Some(TrimConfig::default())),
        Json::Object(obj) => {
            if obj.is_empty() {
                return Err(
                    "compaction: [] is invalid. Use `compaction: true` for defaults.".into(),
                );
            }
            let unknown: Vec<&str> = obj
                .keys()
                .map(String::as_str)
                .filter(|k| !TOP_KEYS.contains(k))
                .collect();
            if !unknown.is_empty() {
                return Err(format!(
                    "Unknown compaction option(s): {unknown:?}. Valid keys: {TOP_KEYS:?}."
                ));
            }
            if let Some(s) = obj.get("strategy") {
                let name = s.as_str().or_else(|| s.get("$kw").and_then(Json::as_str));
                if name != Some("trim") {
                    return Err(format!(
                        "Phase 1 supports `strategy: :trim` only. Got: {s}."
                    ));
                }
            }
            let mut cfg = TrimConfig::default();
            if let Some(trigger) = obj.get("trigger") {
                let t = trigger.as_object().ok_or_else(|| {
                    format!("compaction trigger must be a keyword list. Got: {trigger}")
                })?;
                if t.is_empty() {
                    return Err(
                        "compaction trigger must specify at least one of `:turns` or `:tokens`."
                            .into(),
                    );
                }
                if let Some(bad) = t.keys().find(|k| *k != "turns" && *k != "tokens") {
                    return Err(format!("Unknown trigger key(s): [{bad:?}]"));
                }
                // The trigger replaces the default wholesale (a keyword merge, not deep).
                cfg.trigger_turns = positive(t.get("turns"), "trigger[:turns]")?;
                cfg.trigger_tokens = positive(t.get("tokens"), "trigger[:tokens]")?;
            }
            if let Some(n) = obj.get("keep_recent_turns") {
                cfg.keep_recent_turns = n
                    .as_u64()
                    .filter(|&n| n >= 1)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| {
                        format!("keep_recent_turns must be an integer >= 1. Got: {n}")
                    })?;
            }
            if let Some(b) = obj.get("keep_initial_user") {
                cfg.keep_initial_user = b
                    .as_bool()
                    .ok_or_else(|| format!("keep_initial_user must be a boolean. Got: {b}"))?;
            }
            match obj.get("token_counter") {
                None | Some(Json::Null) => {}
                Some(other) => {
                    return Err(format!(
                        "token_counter must be a 1-arity function or nil. Got: {other} \
                         (a function cannot be given in JSON)"
                    ));
                }
            }
            Ok(Some(cfg))
        }
        other => Err(format!(
            "Unsupported compaction configuration: {other}. Expected null, a boolean or an object."
        )),
    }
}

fn positive(v: Option<&Json>, label: &str) -> Result<Option<u64>, String> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(j) => match j.as_u64() {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!("{label} must be a positive integer. Got: {j}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_trigger_given_as_none_counts_as_not_given() {
        let spec = |text: &str| StrategySpec::parse(text).unwrap();
        let s = spec("ptc-trim:trigger_tokens=none,trigger_turns=4");
        assert_eq!(spec_trigger(&s, "trigger_tokens"), Ok(None));
        assert_eq!(spec_trigger(&s, "trigger_turns"), Ok(Some(4)));
        assert!(spec_trigger(&spec("ptc-trim:trigger_tokens=0"), "trigger_tokens").is_err());
        assert!(spec_trigger(&spec("ptc-trim:trigger_tokens=nil"), "trigger_tokens").is_err());
    }

    #[test]
    fn defaults_and_disabled() {
        assert_eq!(normalize(&json!(true)), Ok(Some(TrimConfig::default())));
        assert_eq!(normalize(&json!(null)), Ok(None));
        assert_eq!(normalize(&json!(false)), Ok(None));
    }

    #[test]
    fn trigger_replaces_the_default() {
        let cfg = normalize(&json!({"trigger": {"tokens": 100}}))
            .unwrap()
            .unwrap();
        assert_eq!(cfg.trigger_turns, None);
        assert_eq!(cfg.trigger_tokens, Some(100));
        assert!(cfg.keep_initial_user);
    }

    #[test]
    fn invalid_configurations_are_errors() {
        for bad in [
            json!({}),
            json!({"trigger": {}}),
            json!({"trigger": {"turns": 0}}),
            json!({"trigger": {"minutes": 3}}),
            json!({"keep_recent_turns": 0}),
            json!({"keep_initial_user": "yes"}),
            json!({"strategy": "summarize"}),
            json!({"window": 3}),
            json!(3),
        ] {
            assert!(normalize(&bad).is_err(), "{bad}");
        }
    }
}
