//! One value of an experiment file, checked against what its key expects; an error
//! names the file, line, column and key.

use super::{
    COMPRESS_KEYS, ConfigError, Ctx, ISOLATIONS, PLUGIN_KEYS, compress_history_spec,
    in_source_order, isolation_mode, unknown_key,
};
use crate::cmd::plugins::IsolationMode;
use std::ops::Range;
use std::path::PathBuf;
use toml::Spanned;
use toml::de::DeValue;

fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

fn integer(v: &DeValue<'_>) -> Option<i128> {
    match v {
        DeValue::Integer(i) => i128::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok(),
        _ => None,
    }
}

fn number(v: &DeValue<'_>) -> Option<f64> {
    match v {
        DeValue::Float(f) => f.as_str().replace('_', "").parse().ok(),
        DeValue::Integer(_) => integer(v).map(|i| i as f64),
        _ => None,
    }
}

/// One key's value, with what an error about it needs.
pub(super) struct Field<'c, 'v, 'i> {
    pub(super) ctx: &'c Ctx<'c>,
    pub(super) key: String,
    pub(super) value: &'v Spanned<DeValue<'i>>,
}

impl<'i> Field<'_, '_, 'i> {
    fn wrong(&self, span: Range<usize>, expected: &str, got: &DeValue<'_>) -> ConfigError {
        self.ctx.error(
            span,
            Some(&self.key),
            format!("expected {expected}, got {}", type_name(got)),
        )
    }

    fn value(&self) -> &DeValue<'i> {
        self.value.get_ref()
    }

    pub(super) fn string(&self) -> Result<String, ConfigError> {
        match self.value() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.wrong(self.value.span(), "a string", other)),
        }
    }

    pub(super) fn boolean(&self) -> Result<bool, ConfigError> {
        self.value()
            .as_bool()
            .ok_or_else(|| self.wrong(self.value.span(), "true or false", self.value()))
    }

    /// A list of strings (a single string counts as a list of one), with spans.
    pub(super) fn strings_or_one(&self) -> Result<Vec<(String, Range<usize>)>, ConfigError> {
        match self.value() {
            DeValue::String(s) => Ok(vec![(s.to_string(), self.value.span())]),
            DeValue::Array(items) => items
                .iter()
                .map(|item| match item.get_ref() {
                    DeValue::String(s) => Ok((s.to_string(), item.span())),
                    other => Err(self.wrong(item.span(), "an array of strings", other)),
                })
                .collect(),
            other => Err(self.wrong(self.value.span(), "an array of strings", other)),
        }
    }

    pub(super) fn expected_one_of(
        &self,
        span: Range<usize>,
        got: &str,
        valid: &[&str],
    ) -> ConfigError {
        self.ctx.error(
            span,
            Some(&self.key),
            format!("{got:?} is not one of: {}", valid.join(", ")),
        )
    }

    pub(super) fn one_of(&self, valid: &[&str]) -> Result<String, ConfigError> {
        let s = self.string()?;
        if valid.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(self.expected_one_of(self.value.span(), &s, valid))
        }
    }

    pub(super) fn ratio(&self) -> Result<f64, ConfigError> {
        match number(self.value()) {
            Some(r) if (0.0..=1.0).contains(&r) => Ok(r),
            Some(r) => Err(self.ctx.error(
                self.value.span(),
                Some(&self.key),
                format!("expected a number between 0 and 1, got {r}"),
            )),
            None => Err(self.wrong(self.value.span(), "a number between 0 and 1", self.value())),
        }
    }

    pub(super) fn jobs(&self) -> Result<u16, ConfigError> {
        match integer(self.value()) {
            Some(n) if (1..=i128::from(u16::MAX)).contains(&n) => Ok(n as u16),
            Some(n) => Err(self.ctx.error(
                self.value.span(),
                Some(&self.key),
                format!("expected a number of worker threads from 1 to 65535, got {n}"),
            )),
            None => Err(self.wrong(
                self.value.span(),
                "an integer (worker threads)",
                self.value(),
            )),
        }
    }

    /// Seconds (a number) or `"none"`, as `--plugin-timeout` takes them.
    pub(super) fn time_limit(&self) -> Result<String, ConfigError> {
        let text = match self.value() {
            DeValue::String(s) => s.to_string(),
            DeValue::Integer(_) | DeValue::Float(_) => number(self.value())
                .map(|n| n.to_string())
                .unwrap_or_default(),
            other => return Err(self.wrong(self.value.span(), "seconds or \"none\"", other)),
        };
        recap_plugin_host::parse_limit(&text)
            .map(|_| text)
            .map_err(|e| self.ctx.error(self.value.span(), Some(&self.key), e))
    }

    /// `true`, `false`, `{ println_limit = N, tool_call_limit = M }`, or an array of
    /// these (one strategy each).
    pub(super) fn compress_history(&self) -> Result<Vec<String>, ConfigError> {
        let one = |item: &Spanned<DeValue<'_>>| -> Result<String, ConfigError> {
            match item.get_ref() {
                DeValue::Boolean(b) => Ok(compress_history_spec(Some(*b), &[])),
                DeValue::Table(t) => {
                    let mut limits = Vec::new();
                    for (k, v) in in_source_order(t) {
                        let name = k.get_ref().as_ref();
                        let Some(known) = COMPRESS_KEYS.iter().find(|c| **c == name) else {
                            return Err(unknown_key(
                                self.ctx,
                                k.span(),
                                name,
                                Some(&self.key),
                                &COMPRESS_KEYS,
                            ));
                        };
                        match integer(v.get_ref()) {
                            Some(n) if n >= 1 && n <= i128::from(u32::MAX) => {
                                limits.push((*known, n as u64))
                            }
                            _ => {
                                return Err(self.ctx.error(
                                    v.span(),
                                    Some(&format!("{}.{name}", self.key)),
                                    "expected a positive integer".to_string(),
                                ));
                            }
                        }
                    }
                    Ok(compress_history_spec(Some(true), &limits))
                }
                other => Err(self.wrong(
                    item.span(),
                    "true, false or { println_limit = N, tool_call_limit = M }",
                    other,
                )),
            }
        };
        match self.value() {
            DeValue::Array(items) => items.iter().map(one).collect(),
            _ => Ok(vec![one(self.value)?]),
        }
    }

    /// `[[plugins]]` tables: each library's path (which must exist) and, when given,
    /// the options to run its strategy with and where it runs.
    #[allow(clippy::type_complexity)]
    pub(super) fn plugins(
        &self,
    ) -> Result<
        Vec<(
            PathBuf,
            Option<(Vec<(String, String)>, String)>,
            Option<IsolationMode>,
        )>,
        ConfigError,
    > {
        let DeValue::Array(items) = self.value() else {
            return Err(self.wrong(self.value.span(), "[[plugins]] tables", self.value()));
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let here = format!("{}[{i}]", self.key);
            let DeValue::Table(t) = item.get_ref() else {
                return Err(self.wrong(item.span(), "a table with `path`", item.get_ref()));
            };
            let (mut path, mut options, mut isolation) = (None, None, None);
            for (k, v) in in_source_order(t) {
                let name = k.get_ref().as_ref();
                let key = format!("{here}.{name}");
                match name {
                    "path" => {
                        let DeValue::String(p) = v.get_ref() else {
                            return Err(self.ctx.error(
                                v.span(),
                                Some(&key),
                                format!("expected a string, got {}", type_name(v.get_ref())),
                            ));
                        };
                        let full = self.ctx.path(p);
                        if !full.is_file() {
                            return Err(self.ctx.error(
                                v.span(),
                                Some(&key),
                                format!("plugin library not found: {}", full.display()),
                            ));
                        }
                        path = Some(full);
                    }
                    "options" => {
                        options =
                            Some((self.plugin_options(v, &key)?, self.ctx.at(v.span(), &key)));
                    }
                    "isolation" => {
                        let mode = match v.get_ref() {
                            DeValue::String(m) if ISOLATIONS.contains(&m.as_ref()) => m,
                            DeValue::String(m) => {
                                return Err(self.ctx.error(
                                    v.span(),
                                    Some(&key),
                                    format!("expected \"in-process\" or \"process\", got {m:?}"),
                                ));
                            }
                            other => {
                                return Err(self.ctx.error(
                                    v.span(),
                                    Some(&key),
                                    format!(
                                        "expected \"in-process\" or \"process\", got {}",
                                        type_name(other)
                                    ),
                                ));
                            }
                        };
                        isolation = Some(isolation_mode(mode));
                    }
                    _ => {
                        return Err(unknown_key(
                            self.ctx,
                            k.span(),
                            name,
                            Some("plugins"),
                            &PLUGIN_KEYS,
                        ));
                    }
                }
            }
            let Some(path) = path else {
                return Err(self.ctx.error(
                    item.span(),
                    Some(&here),
                    "missing `path` (the plugin library)".to_string(),
                ));
            };
            out.push((path, options, isolation));
        }
        Ok(out)
    }

    fn plugin_options(
        &self,
        v: &Spanned<DeValue<'_>>,
        key: &str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        let DeValue::Table(t) = v.get_ref() else {
            return Err(self.ctx.error(
                v.span(),
                Some(key),
                format!(
                    "expected a table of options, got {}",
                    type_name(v.get_ref())
                ),
            ));
        };
        let scalar = |v: &Spanned<DeValue<'_>>, key: &str| -> Result<String, ConfigError> {
            let text = match v.get_ref() {
                DeValue::String(s) => s.to_string(),
                DeValue::Boolean(b) => b.to_string(),
                DeValue::Integer(_) => integer(v.get_ref())
                    .map(|i| i.to_string())
                    .unwrap_or_default(),
                DeValue::Float(f) => f.as_str().replace('_', ""),
                other => {
                    return Err(self.ctx.error(
                        v.span(),
                        Some(key),
                        format!(
                            "expected a string, number or boolean, got {}",
                            type_name(other)
                        ),
                    ));
                }
            };
            if text.contains([',', '=', ':', '|']) {
                return Err(self.ctx.error(v.span(), Some(key), format!("{text:?}: option values cannot hold `,` `=` `:` or `|` (they separate options in a strategy spec)")));
            }
            Ok(text)
        };
        let mut out = Vec::new();
        for (k, val) in in_source_order(t) {
            let name = k.get_ref().as_ref();
            let key = format!("{key}.{name}");
            let text = match val.get_ref() {
                // A list option (`a|b`), as strategy specs write it.
                DeValue::Array(items) => items
                    .iter()
                    .map(|i| scalar(i, &key))
                    .collect::<Result<Vec<_>, _>>()?
                    .join("|"),
                _ => scalar(val, &key)?,
            };
            out.push((name.to_string(), text));
        }
        Ok(out)
    }
}
