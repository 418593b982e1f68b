//! The summary's options (`println_limit`, `tool_call_limit`), shared by every strategy
//! that renders the summary of SPEC 6.2, and the canonical spec strings built from them.

use recap_core::{OptionInfo, SpecError, StrategySpec};

pub const DEFAULT_PRINTLN_LIMIT: u32 = 15;
pub const DEFAULT_TOOL_CALL_LIMIT: u32 = 20;

/// API-006: the normalized options of the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryOptions {
    /// How many of the most recent prints the Output section keeps (TRN-010).
    pub println_limit: u32,
    /// How many of the most recent tool calls the Tool calls section keeps (TC-007).
    pub tool_call_limit: u32,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        Self {
            println_limit: DEFAULT_PRINTLN_LIMIT,
            tool_call_limit: DEFAULT_TOOL_CALL_LIMIT,
        }
    }
}

impl SummaryOptions {
    /// Reads both options from a spec (defaults when absent, integers ≥ 1 otherwise).
    pub fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        Ok(Self {
            println_limit: spec.positive_int("println_limit", DEFAULT_PRINTLN_LIMIT)?,
            tool_call_limit: spec.positive_int("tool_call_limit", DEFAULT_TOOL_CALL_LIMIT)?,
        })
    }

    /// The option descriptions for `recap strategies`.
    pub fn infos() -> Vec<OptionInfo> {
        vec![
            OptionInfo {
                key: "println_limit".into(),
                default: DEFAULT_PRINTLN_LIMIT.to_string(),
                help: "most recent println calls kept in the Output section".into(),
            },
            OptionInfo {
                key: "tool_call_limit".into(),
                default: DEFAULT_TOOL_CALL_LIMIT.to_string(),
                help: "most recent tool calls kept in the Tool calls section".into(),
            },
        ]
    }

    /// The options that differ from the defaults, as `(key, value)`.
    pub fn non_default(&self) -> Vec<(&'static str, u32)> {
        let mut out = Vec::new();
        if self.println_limit != DEFAULT_PRINTLN_LIMIT {
            out.push(("println_limit", self.println_limit));
        }
        if self.tool_call_limit != DEFAULT_TOOL_CALL_LIMIT {
            out.push(("tool_call_limit", self.tool_call_limit));
        }
        out
    }
}

/// Rejects option keys a strategy does not know (the registry checks this too; a
/// factory called directly must not silently ignore a typo).
pub fn reject_unknown(spec: &StrategySpec, known: &[&str]) -> Result<(), SpecError> {
    match spec.options.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => Err(SpecError::UnknownOption {
            strategy: spec.name.clone(),
            key: key.clone(),
            known: known.join(", "),
        }),
    }
}

/// The canonical spec string: the name, then the non-default options sorted by key
/// (`rolling-window:window=2`). Defaults are left out so that `name` and
/// `name:window=3` report under one name.
pub fn canonical_spec(name: &str, options: Vec<(&'static str, u32)>) -> String {
    options
        .into_iter()
        .fold(StrategySpec::named(name), |spec, (k, v)| spec.with(k, v))
        .to_string()
}
