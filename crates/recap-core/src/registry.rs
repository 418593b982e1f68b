//! Strategy spec strings (`name` or `name:key=value,key=value`) and the registry that
//! turns them into strategies, with clear errors for unknown names, keys and values.

use crate::strategy::Strategy;
use crate::tokens::TokenCounter;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A parsed spec string. Options keep their textual values; the factory parses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategySpec {
    pub name: String,
    pub options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("empty strategy spec")]
    Empty,
    #[error("strategy spec {spec:?}: {message}")]
    Syntax { spec: String, message: String },
    /// `hint` is `; did you mean `x`?` for a near miss, else empty.
    #[error("unknown strategy {name:?}{hint}; known strategies: {known}")]
    UnknownStrategy {
        name: String,
        hint: String,
        known: String,
    },
    #[error("strategy {strategy:?} has no option {key:?}; its options: {known}")]
    UnknownOption {
        strategy: String,
        key: String,
        known: String,
    },
    #[error("strategy {strategy:?}, option {key}={value:?}: {expected}")]
    BadValue {
        strategy: String,
        key: String,
        value: String,
        expected: String,
    },
    #[error(
        "strategy {strategy:?} counts tokens against a budget and needs the run's tokenizer, \
         but none was given to the registry"
    )]
    NeedsTokenizer { strategy: String },
    #[error("strategy {name:?} is registered twice ({first} and {second})")]
    Duplicate {
        name: String,
        first: String,
        second: String,
    },
}

/// `; did you mean `x`?` when `name` is a near miss of one of `known`, else "".
fn did_you_mean(name: &str, known: &[&str]) -> String {
    crate::fields::nearest(name, known)
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_default()
}

impl StrategySpec {
    pub fn parse(spec: &str) -> Result<Self, SpecError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(SpecError::Empty);
        }
        let syntax = |message: String| SpecError::Syntax {
            spec: spec.to_string(),
            message,
        };
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (spec, None),
        };
        if name.is_empty() {
            return Err(syntax("missing strategy name before ':'".into()));
        }
        let mut options = BTreeMap::new();
        if let Some(rest) = rest {
            for part in rest.split(',') {
                let (k, v) = part
                    .split_once('=')
                    .ok_or_else(|| syntax(format!("option {part:?} is not key=value")))?;
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() {
                    return Err(syntax(format!("option {part:?} has an empty key")));
                }
                if options.insert(k.to_string(), v.to_string()).is_some() {
                    return Err(syntax(format!("option {k:?} given twice")));
                }
            }
        }
        Ok(Self {
            name: name.to_string(),
            options,
        })
    }

    /// A spec of `name` without options: where a strategy starts printing its
    /// canonical spec string (`StrategySpec::named(NAME).non_default(…).to_string()`).
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            options: BTreeMap::new(),
        }
    }

    /// With `key=value`.
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Self {
        self.options.insert(key.to_string(), value.to_string());
        self
    }

    /// With `key=value` unless `value` is the option's default: a canonical spec string
    /// lists only the options that differ from their defaults (in key order, as
    /// [`Display`](fmt::Display) prints them), so `name` and `name:window=3` with 3 the
    /// default report under one name.
    pub fn non_default<T: PartialEq + fmt::Display>(self, key: &str, value: T, default: T) -> Self {
        if value == default {
            self
        } else {
            self.with(key, value)
        }
    }

    /// For a strategy without options: any option is unknown.
    pub fn no_options(&self) -> Result<(), SpecError> {
        match self.options.keys().next() {
            None => Ok(()),
            Some(key) => Err(SpecError::UnknownOption {
                strategy: self.name.clone(),
                key: key.clone(),
                known: "none".to_string(),
            }),
        }
    }

    /// Reads an integer option ≥ 1, or the default when absent.
    pub fn positive_int(&self, key: &str, default: u32) -> Result<u32, SpecError> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(SpecError::BadValue {
                    strategy: self.name.clone(),
                    key: key.to_string(),
                    value: v.clone(),
                    expected: "expected an integer ≥ 1".into(),
                }),
            },
        }
    }
}

impl StrategySpec {
    fn bad_value(&self, key: &str, value: &str, expected: &str) -> SpecError {
        SpecError::BadValue {
            strategy: self.name.clone(),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    /// Reads an integer option ≥ `min`, or the default when absent.
    pub fn int_at_least(&self, key: &str, min: u64, default: u64) -> Result<u64, SpecError> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(self.bad_value(key, v, &format!("expected an integer ≥ {min}"))),
            },
        }
    }

    /// Reads a boolean option (`true` or `false`), or the default when absent.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, SpecError> {
        match self.options.get(key).map(String::as_str) {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(self.bad_value(key, v, "expected true or false")),
        }
    }

    /// Reads a `|`-separated list of names (`,` separates options), empty when absent.
    /// Names are trimmed, empty ones refused, and the list returned sorted and without
    /// repeats so that equal lists give one canonical spec.
    pub fn name_list(&self, key: &str) -> Result<Vec<String>, SpecError> {
        let Some(v) = self.options.get(key) else {
            return Ok(Vec::new());
        };
        let mut names = Vec::new();
        for part in v.split('|') {
            let part = part.trim();
            if part.is_empty() {
                return Err(self.bad_value(key, v, "expected names separated by `|`"));
            }
            names.push(part.to_string());
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Refuses option keys outside `known`.
    pub fn only_options(&self, known: &[&str]) -> Result<(), SpecError> {
        match self.options.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) => Err(SpecError::UnknownOption {
                strategy: self.name.clone(),
                key: key.clone(),
                known: if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                },
            }),
        }
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for (i, (k, v)) in self.options.iter().enumerate() {
            f.write_str(if i == 0 { ":" } else { "," })?;
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// One option a strategy accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionInfo {
    pub key: String,
    pub default: String,
    pub help: String,
}

/// What a registered strategy is, for `recap strategies` and error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyInfo {
    pub name: String,
    pub summary: String,
    pub options: Vec<OptionInfo>,
    /// Where it comes from: `built-in` or a plugin library path.
    pub origin: String,
}

/// What a factory may use besides the spec: the services of the run the strategy is
/// built for.
#[derive(Clone, Default)]
pub struct BuildContext {
    /// The run's tokenizer (the first one when a run counts with several), so that
    /// strategies with token budgets count exactly what the metrics count.
    pub counter: Option<Arc<dyn TokenCounter>>,
}

impl BuildContext {
    /// The run's tokenizer, or the error a strategy that needs one reports.
    pub fn require_counter(&self, strategy: &str) -> Result<Arc<dyn TokenCounter>, SpecError> {
        self.counter
            .clone()
            .ok_or_else(|| SpecError::NeedsTokenizer {
                strategy: strategy.to_string(),
            })
    }
}

impl std::fmt::Debug for BuildContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildContext")
            .field(
                "counter",
                &self.counter.as_ref().map(|c| c.name().to_string()),
            )
            .finish()
    }
}

type Factory =
    Arc<dyn Fn(&StrategySpec, &BuildContext) -> Result<Arc<dyn Strategy>, SpecError> + Send + Sync>;

/// Name → factory. Iteration is in name order, so listings are deterministic.
#[derive(Clone, Default)]
pub struct Registry {
    entries: BTreeMap<String, (StrategyInfo, Factory)>,
    context: BuildContext,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a strategy; a name can be registered once.
    pub fn register(
        &mut self,
        info: StrategyInfo,
        factory: impl Fn(&StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> + Send + Sync + 'static,
    ) -> Result<(), SpecError> {
        self.register_with_context(info, move |spec, _| factory(spec))
    }

    /// Registers a strategy whose factory uses the run's services ([`BuildContext`]).
    pub fn register_with_context(
        &mut self,
        info: StrategyInfo,
        factory: impl Fn(&StrategySpec, &BuildContext) -> Result<Arc<dyn Strategy>, SpecError>
        + Send
        + Sync
        + 'static,
    ) -> Result<(), SpecError> {
        if let Some((existing, _)) = self.entries.get(&info.name) {
            return Err(SpecError::Duplicate {
                name: info.name.clone(),
                first: existing.origin.clone(),
                second: info.origin.clone(),
            });
        }
        self.entries
            .insert(info.name.clone(), (info, Arc::new(factory)));
        Ok(())
    }

    /// Gives every strategy built from now on the run's tokenizer.
    pub fn set_counter(&mut self, counter: Arc<dyn TokenCounter>) {
        self.context.counter = Some(counter);
    }

    pub fn context(&self) -> &BuildContext {
        &self.context
    }

    pub fn infos(&self) -> impl Iterator<Item = &StrategyInfo> {
        self.entries.values().map(|(info, _)| info)
    }

    pub fn get(&self, name: &str) -> Option<&StrategyInfo> {
        self.entries.get(name).map(|(info, _)| info)
    }

    /// Parses a spec string, checks its option keys, and builds the strategy.
    pub fn build(&self, spec: &str) -> Result<Arc<dyn Strategy>, SpecError> {
        self.build_spec(&StrategySpec::parse(spec)?)
    }

    pub fn build_spec(&self, spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
        let (info, factory) = self.entries.get(&spec.name).ok_or_else(|| {
            let known: Vec<&str> = self.entries.keys().map(String::as_str).collect();
            SpecError::UnknownStrategy {
                name: spec.name.clone(),
                hint: did_you_mean(&spec.name, &known),
                known: known.join(", "),
            }
        })?;
        for key in spec.options.keys() {
            if !info.options.iter().any(|o| &o.key == key) {
                let known = if info.options.is_empty() {
                    "none".to_string()
                } else {
                    info.options
                        .iter()
                        .map(|o| o.key.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(SpecError::UnknownOption {
                    strategy: spec.name.clone(),
                    key: key.clone(),
                    known,
                });
            }
        }
        factory(spec, &self.context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_strategy_name_gets_a_did_you_mean() {
        let mut r = Registry::new();
        let info = StrategyInfo {
            name: "rolling-window".into(),
            summary: String::new(),
            options: Vec::new(),
            origin: "built-in".into(),
        };
        r.register(info, |_| Err(SpecError::Empty)).unwrap();
        let e = r.build("rolling-windw").err().unwrap().to_string();
        assert!(
            e.starts_with("unknown strategy \"rolling-windw\"; did you mean `rolling-window`?; known strategies: rolling-window"),
            "{e}"
        );
        let e = r.build("summarise").err().unwrap().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn parses_name_and_options() {
        let s = StrategySpec::parse("rolling-window:window=2,println_limit=4").unwrap();
        assert_eq!(s.name, "rolling-window");
        assert_eq!(s.options["window"], "2");
        assert_eq!(s.to_string(), "rolling-window:println_limit=4,window=2");
    }

    #[test]
    fn canonical_specs_list_non_defaults_in_key_order() {
        let at_defaults = StrategySpec::named("x")
            .non_default("window", 3, 3)
            .non_default("keep_mission", true, true);
        assert_eq!(at_defaults.to_string(), "x");
        let changed = StrategySpec::named("x")
            .non_default("window", 5, 3)
            .non_default("exclude_tools", "a|b".to_string(), String::new())
            .with("budget", 8);
        assert_eq!(changed.to_string(), "x:budget=8,exclude_tools=a|b,window=5");
        // What it prints parses back to itself.
        assert_eq!(StrategySpec::parse(&changed.to_string()).unwrap(), changed);
    }

    #[test]
    fn syntax_errors_are_clear() {
        for bad in ["", ":a=1", "x:a", "x:=1", "x:a=1,a=2"] {
            assert!(StrategySpec::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn positive_int_rejects_zero_and_text() {
        let s = StrategySpec::parse("x:n=0,m=abc,k=3").unwrap();
        assert!(s.positive_int("n", 1).is_err());
        assert!(s.positive_int("m", 1).is_err());
        assert_eq!(s.positive_int("k", 1).unwrap(), 3);
        assert_eq!(s.positive_int("absent", 7).unwrap(), 7);
    }
}
