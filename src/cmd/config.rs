//! Experiment files: `recap run --config experiment.toml` (docs/experiments.md).
//!
//! The file says what a run's flags say — corpora (globs), strategies and sweeps, the
//! seeds' `compress_history` shorthand, tokenizers, plugins with their options, the
//! output directory — so an experiment can be repeated from one file and diffed in
//! review. Paths in the file are relative to the file's own directory, so it runs the
//! same from anywhere. Every key and value is checked before anything runs, and a bad
//! one is reported with the file, line and column, the key, and what was expected.

use super::plugins::IsolationMode;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The keys of an experiment file, as `recap init` documents them.
pub const KEYS: [&str; 18] = [
    "corpora",
    "strategies",
    "sweeps",
    "compress_history",
    "plugins",
    "plugin_dirs",
    "plugin_timeout",
    "plugin_isolation",
    "tokenizers",
    "tokenizer_backend",
    "cache_read_ratio",
    "jobs",
    "session_details",
    "out",
    "force",
    "format",
    "dump_prompts",
    "check_determinism",
];
const PLUGIN_KEYS: [&str; 3] = ["path", "options", "isolation"];
const ISOLATIONS: [&str; 2] = ["in-process", "process"];
/// `check_determinism`, as `--check-determinism` takes it.
const CHECKS: [&str; 2] = ["opaque", "all"];
const COMPRESS_KEYS: [&str; 2] = ["println_limit", "tool_call_limit"];
const TOKENIZERS: [&str; 3] = ["o200k_base", "cl100k_base", "deepseek_v3"];
const BACKENDS: [&str; 2] = ["fast", "reference"];
const FORMATS: [&str; 4] = ["table", "json", "csv", "markdown"];

/// A bad experiment file: where, which key, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    /// The dotted key (`plugins[1].path`), when the problem is under one.
    pub key: Option<String>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: ", self.file.display())?;
        } else {
            write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        }
        if let Some(k) = &self.key {
            write!(f, "`{k}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A plugin whose strategy runs with given options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRun {
    pub path: PathBuf,
    /// `key=value` pairs in the file's order.
    pub options: Vec<(String, String)>,
    /// `FILE:LINE:COLUMN: plugins[i].options`, for errors found once it is loaded.
    pub origin: String,
}

/// Where a value of the file is, for errors found only later (a strategy the registry
/// does not know): `FILE:LINE:COLUMN: `key``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub key: &'static str,
    pub value: String,
    pub at: String,
}

/// What an experiment file asks for; `None` / empty where it says nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Experiment {
    pub file: PathBuf,
    /// The file verbatim (it goes into the report's provenance).
    pub content: String,
    /// Every pattern expanded, in the file's order (each pattern's matches sorted).
    pub corpora: Vec<PathBuf>,
    /// `compress_history` mapped to strategy specs, then `strategies`.
    pub strategies: Vec<String>,
    pub sweeps: Vec<String>,
    /// Where each of `strategies` and `sweeps` was written.
    pub origins: Vec<Origin>,
    /// Plugins to load.
    pub plugins: Vec<PathBuf>,
    /// Plugins whose strategy runs with the options given.
    pub plugin_runs: Vec<PluginRun>,
    pub plugin_dirs: Vec<PathBuf>,
    pub plugin_timeout: Option<String>,
    /// `plugin_isolation`: where the file's plugins run unless one says otherwise.
    pub plugin_isolation: Option<IsolationMode>,
    /// `[[plugins]] isolation`, per library.
    pub isolation_of: BTreeMap<PathBuf, IsolationMode>,
    pub tokenizers: Vec<String>,
    pub tokenizer_backend: Option<String>,
    pub cache_read_ratio: Option<f64>,
    pub jobs: Option<u16>,
    pub session_details: Option<bool>,
    pub out: Option<PathBuf>,
    pub force: Option<bool>,
    pub format: Option<String>,
    pub dump_prompts: Option<bool>,
    /// `check_determinism`: `opaque` or `all`.
    pub check_determinism: Option<String>,
}

/// The strategy the seeds' `compress_history: true` selects (API-001).
pub const COMPRESS_ON: &str = "single-user-coalesced";
/// ... and `compress_history: false` (API-003).
pub const COMPRESS_OFF: &str = "full-history";

/// Reads and checks an experiment file; corpus patterns and plugin paths must name
/// existing files.
pub fn load(file: &Path) -> Result<Experiment, ConfigError> {
    let content = std::fs::read_to_string(file).map_err(|e| ConfigError {
        file: file.to_path_buf(),
        line: 0,
        column: 0,
        key: None,
        message: format!("cannot read the experiment file: {e}"),
    })?;
    parse(file, &content)
}

/// Checks `content` as the experiment file `file`.
pub fn parse(file: &Path, content: &str) -> Result<Experiment, ConfigError> {
    let ctx = Ctx {
        file,
        src: content,
        dir: file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let doc = DeTable::parse(content).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let message = e.message().trim_end().to_string();
        // "duplicate key" and the like point at the key: name it.
        let key = content.get(span.clone()).filter(|k| {
            message.contains("key") && !k.is_empty() && k.len() <= 60 && !k.contains('\n')
        });
        ctx.error(span.clone(), key, message)
    })?;
    let mut exp = Experiment {
        file: file.to_path_buf(),
        content: content.to_string(),
        ..Experiment::default()
    };
    let mut compress = Vec::new();
    for (key, value) in in_source_order(doc.get_ref()) {
        let name = key.get_ref().as_ref();
        let v = Field {
            ctx: &ctx,
            key: name.to_string(),
            value,
        };
        match name {
            "corpora" => {
                for p in v.strings_or_one()? {
                    exp.corpora.extend(ctx.corpus_pattern(&p)?);
                }
            }
            "strategies" | "sweeps" => {
                let key: &'static str = if name == "sweeps" {
                    "sweeps"
                } else {
                    "strategies"
                };
                let mut specs = Vec::new();
                for (spec, span) in v.strings_or_one()? {
                    exp.origins.push(Origin {
                        key,
                        value: spec.clone(),
                        at: ctx.at(span, key),
                    });
                    specs.push(spec);
                }
                if key == "sweeps" {
                    exp.sweeps = specs;
                } else {
                    exp.strategies = specs;
                }
            }
            "compress_history" => compress = v.compress_history()?,
            "plugins" => {
                for (path, options, isolation) in v.plugins()? {
                    exp.plugins.push(path.clone());
                    if let Some(mode) = isolation {
                        exp.isolation_of.insert(path.clone(), mode);
                    }
                    if let Some((options, origin)) = options {
                        exp.plugin_runs.push(PluginRun {
                            path,
                            options,
                            origin,
                        });
                    }
                }
            }
            "plugin_dirs" => {
                for (d, span) in v.strings_or_one()? {
                    let dir = ctx.path(&d);
                    if !dir.is_dir() {
                        return Err(ctx.error(
                            span,
                            Some(&v.key),
                            format!("no such directory: {}", dir.display()),
                        ));
                    }
                    exp.plugin_dirs.push(dir);
                }
            }
            "plugin_timeout" => exp.plugin_timeout = Some(v.time_limit()?),
            "plugin_isolation" => {
                exp.plugin_isolation = Some(isolation_mode(&v.one_of(&ISOLATIONS)?))
            }
            "tokenizers" => {
                for (t, span) in v.strings_or_one()? {
                    if !TOKENIZERS.contains(&t.as_str()) {
                        return Err(v.expected_one_of(span, &t, &TOKENIZERS));
                    }
                    exp.tokenizers.push(t);
                }
            }
            "tokenizer_backend" => exp.tokenizer_backend = Some(v.one_of(&BACKENDS)?),
            "cache_read_ratio" => exp.cache_read_ratio = Some(v.ratio()?),
            "jobs" => exp.jobs = Some(v.jobs()?),
            "session_details" => exp.session_details = Some(v.boolean()?),
            "out" => exp.out = Some(ctx.path(&v.string()?)),
            "force" => exp.force = Some(v.boolean()?),
            "format" => exp.format = Some(v.one_of(&FORMATS)?),
            "dump_prompts" => exp.dump_prompts = Some(v.boolean()?),
            "check_determinism" => exp.check_determinism = Some(v.one_of(&CHECKS)?),
            // The `recap` binary has no Python in it: the Python package runs such files.
            "python" => {
                return Err(ctx.error(
                    key.span(),
                    Some("python"),
                    "Python strategies run from the Python package: \
                     `python -m recap_replay run FILE` (docs/python.md)"
                        .to_string(),
                ));
            }
            _ => return Err(unknown_key(&ctx, key.span(), name, None, &KEYS)),
        }
    }
    compress.append(&mut exp.strategies);
    exp.strategies = compress;
    Ok(exp)
}

/// Maps one `compress_history` value to a strategy spec (docs/experiments.md).
pub fn compress_history_spec(on: Option<bool>, limits: &[(&str, u64)]) -> String {
    match on {
        Some(false) => COMPRESS_OFF.to_string(),
        _ if limits.is_empty() => COMPRESS_ON.to_string(),
        _ => {
            let opts: Vec<String> = limits.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{COMPRESS_ON}:{}", opts.join(","))
        }
    }
}

struct Ctx<'a> {
    file: &'a Path,
    src: &'a str,
    /// Paths in the file are relative to it.
    dir: PathBuf,
}

impl Ctx<'_> {
    fn error(&self, span: Range<usize>, key: Option<&str>, message: String) -> ConfigError {
        let (line, column) = line_column(self.src, span.start);
        ConfigError {
            file: self.file.to_path_buf(),
            line,
            column,
            key: key.map(str::to_string),
            message,
        }
    }

    fn at(&self, span: Range<usize>, key: &str) -> String {
        let (line, column) = line_column(self.src, span.start);
        format!("{}:{line}:{column}: `{key}`", self.file.display())
    }

    fn path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }

    /// The files a corpus pattern names (a plain path is a pattern matching itself);
    /// a pattern matching nothing is an error, so a typo never runs an empty corpus.
    fn corpus_pattern(
        &self,
        (pattern, span): &(String, Range<usize>),
    ) -> Result<Vec<PathBuf>, ConfigError> {
        let bad = |message: String| self.error(span.clone(), Some("corpora"), message);
        let full = if Path::new(pattern).is_absolute() {
            pattern.clone()
        } else {
            let dir = glob::Pattern::escape(&self.dir.to_string_lossy());
            format!("{dir}/{pattern}")
        };
        let paths = glob::glob(&full).map_err(|e| bad(format!("bad pattern {pattern:?}: {e}")))?;
        let mut files = Vec::new();
        for p in paths {
            let p = p.map_err(|e| bad(format!("{pattern:?}: {e}")))?;
            if p.is_file() {
                files.push(clean(&p));
            }
        }
        if files.is_empty() {
            return Err(bad(format!(
                "{pattern:?} matches no corpus file (patterns are relative to the file's directory, {})",
                self.dir.display()
            )));
        }
        files.sort();
        Ok(files)
    }
}

/// `./x` as `x`: corpus names in reports stay as short as the file wrote them.
fn clean(p: &Path) -> PathBuf {
    p.strip_prefix(".")
        .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(src: &str, at: usize) -> (usize, usize) {
    let at = at.min(src.len());
    let before = src.get(..at).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A table's entries in the order the file wrote them (the parsed map is sorted).
fn in_source_order<'t, 'i>(
    table: &'t DeTable<'i>,
) -> Vec<(
    &'t Spanned<std::borrow::Cow<'i, str>>,
    &'t Spanned<DeValue<'i>>,
)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

fn unknown_key(
    ctx: &Ctx<'_>,
    span: Range<usize>,
    key: &str,
    under: Option<&str>,
    valid: &[&str],
) -> ConfigError {
    let full = match under {
        Some(u) => format!("{u}.{key}"),
        None => key.to_string(),
    };
    let mut message = format!("unknown key `{full}`");
    // Up to two edits, more for long keys (`strategy` for `strategies` is three).
    let reach = (key.chars().count() * 2 / 5).max(2);
    let closest = valid
        .iter()
        .map(|v| (edit_distance(v, key), *v))
        .filter(|(d, _)| *d <= reach)
        .min();
    if let Some((_, close)) = closest {
        let _ = write!(message, " (did you mean `{close}`?)");
    }
    let _ = write!(
        message,
        "; valid keys{}: {}",
        under.map(|u| format!(" of `{u}`")).unwrap_or_default(),
        valid.join(", ")
    );
    ctx.error(span, None, message)
}

/// Levenshtein distance (small keys only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

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
struct Field<'c, 'v, 'i> {
    ctx: &'c Ctx<'c>,
    key: String,
    value: &'v Spanned<DeValue<'i>>,
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

    fn string(&self) -> Result<String, ConfigError> {
        match self.value() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.wrong(self.value.span(), "a string", other)),
        }
    }

    fn boolean(&self) -> Result<bool, ConfigError> {
        self.value()
            .as_bool()
            .ok_or_else(|| self.wrong(self.value.span(), "true or false", self.value()))
    }

    /// A list of strings (a single string counts as a list of one), with spans.
    fn strings_or_one(&self) -> Result<Vec<(String, Range<usize>)>, ConfigError> {
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

    fn expected_one_of(&self, span: Range<usize>, got: &str, valid: &[&str]) -> ConfigError {
        self.ctx.error(
            span,
            Some(&self.key),
            format!("{got:?} is not one of: {}", valid.join(", ")),
        )
    }

    fn one_of(&self, valid: &[&str]) -> Result<String, ConfigError> {
        let s = self.string()?;
        if valid.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(self.expected_one_of(self.value.span(), &s, valid))
        }
    }

    fn ratio(&self) -> Result<f64, ConfigError> {
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

    fn jobs(&self) -> Result<u16, ConfigError> {
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
    fn time_limit(&self) -> Result<String, ConfigError> {
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
    fn compress_history(&self) -> Result<Vec<String>, ConfigError> {
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
    fn plugins(
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

/// One of [`ISOLATIONS`], already checked.
fn isolation_mode(name: &str) -> IsolationMode {
    if name == "process" {
        IsolationMode::Process
    } else {
        IsolationMode::InProcess
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in(dir: &Path, text: &str) -> Result<Experiment, ConfigError> {
        parse(&dir.join("exp.toml"), text)
    }

    fn corpus_dir() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("data")).unwrap();
        for f in ["b.jsonl", "a.jsonl", "notes.txt"] {
            std::fs::write(tmp.path().join("data").join(f), "").unwrap();
        }
        tmp
    }

    #[test]
    fn every_key_is_read_and_paths_are_relative_to_the_file() {
        let tmp = corpus_dir();
        let e = parse_in(
            tmp.path(),
            r#"
corpora = ["data/*.jsonl"]
strategies = ["rolling-window:window=3"]
sweeps = "rolling-window:window=1..2"
compress_history = [false, true, { println_limit = 5, tool_call_limit = 7 }]
tokenizers = ["cl100k_base"]
tokenizer_backend = "reference"
cache_read_ratio = 0
jobs = 3
session_details = false
out = "results/one"
force = true
format = "markdown"
dump_prompts = true
plugin_timeout = "none"
"#,
        )
        .unwrap();
        let d = tmp.path().join("data");
        assert_eq!(e.corpora, [d.join("a.jsonl"), d.join("b.jsonl")]);
        assert_eq!(
            e.strategies,
            [
                "full-history",
                "single-user-coalesced",
                "single-user-coalesced:println_limit=5,tool_call_limit=7",
                "rolling-window:window=3"
            ]
        );
        assert_eq!(e.sweeps, ["rolling-window:window=1..2"]);
        let origins: Vec<(&str, &str)> = e
            .origins
            .iter()
            .map(|o| (o.key, o.value.as_str()))
            .collect();
        assert_eq!(
            origins,
            [
                ("strategies", "rolling-window:window=3"),
                ("sweeps", "rolling-window:window=1..2")
            ]
        );
        assert!(
            e.origins[1].at.ends_with("exp.toml:4:10: `sweeps`"),
            "{}",
            e.origins[1].at
        );
        assert_eq!(e.tokenizers, ["cl100k_base"]);
        assert_eq!(e.tokenizer_backend.as_deref(), Some("reference"));
        assert_eq!(e.cache_read_ratio, Some(0.0));
        assert_eq!(e.jobs, Some(3));
        assert_eq!(e.session_details, Some(false));
        assert_eq!(e.out, Some(tmp.path().join("results/one")));
        assert_eq!((e.force, e.dump_prompts), (Some(true), Some(true)));
        assert_eq!(e.format.as_deref(), Some("markdown"));
        assert_eq!(e.plugin_timeout.as_deref(), Some("none"));
    }

    #[test]
    fn an_unknown_key_names_file_line_and_the_valid_keys() {
        let tmp = corpus_dir();
        let e = parse_in(tmp.path(), "jobs = 2\n\nstrategy = [\"full-history\"]\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 1));
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{}:3:1: ", tmp.path().join("exp.toml").display())),
            "{text}"
        );
        assert!(text.contains("unknown key `strategy`"), "{text}");
        let python = parse(
            Path::new("/x/e.toml"),
            "python = [\"m:KeepLast(turns=3)\"]\n",
        )
        .expect_err("the binary runs no Python");
        assert_eq!((python.line, python.key.as_deref()), (1, Some("python")));
        assert!(
            python.message.contains("python -m recap_replay run"),
            "{python}"
        );
        assert!(text.contains("did you mean `strategies`?"), "{text}");
        assert!(text.contains(&KEYS.join(", ")), "{text}");
    }

    #[test]
    fn a_bad_value_names_its_key_and_what_was_expected() {
        let tmp = corpus_dir();
        let cases: [(&str, usize, &str, &str); 8] = [
            ("jobs = \"two\"", 1, "jobs", "expected an integer"),
            ("jobs = 0", 1, "jobs", "from 1 to 65535, got 0"),
            (
                "\ncache_read_ratio = 1.5",
                2,
                "cache_read_ratio",
                "between 0 and 1, got 1.5",
            ),
            (
                "format = \"html\"",
                1,
                "format",
                "not one of: table, json, csv, markdown",
            ),
            (
                "tokenizers = [\"o200k_base\", \"gpt2\"]",
                1,
                "tokenizers",
                "\"gpt2\" is not one of",
            ),
            (
                "compress_history = \"yes\"",
                1,
                "compress_history",
                "expected true, false or {",
            ),
            (
                "compress_history = { println_limit = 0 }",
                1,
                "compress_history.println_limit",
                "positive integer",
            ),
            (
                "force = 1",
                1,
                "force",
                "expected true or false, got an integer",
            ),
        ];
        for (text, line, key, wanted) in cases {
            let e = parse_in(tmp.path(), text).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
            assert!(e.to_string().contains(wanted), "{text}: {e}");
        }
        let e = parse_in(tmp.path(), "compress_history = { window = 2 }").unwrap_err();
        assert!(e.to_string().contains("unknown key `compress_history.window`; valid keys of `compress_history`: println_limit, tool_call_limit"), "{e}");
    }

    #[test]
    fn isolation_is_read_per_plugin_and_for_the_file() {
        let tmp = corpus_dir();
        let e = parse_in(
            tmp.path(),
            "plugin_isolation = \"process\"\n[[plugins]]\npath = \"data/a.jsonl\"\nisolation = \"in-process\"\n[[plugins]]\npath = \"data/b.jsonl\"\n",
        )
        .unwrap();
        assert_eq!(e.plugin_isolation, Some(IsolationMode::Process));
        assert_eq!(
            e.isolation_of.values().collect::<Vec<_>>(),
            [&IsolationMode::InProcess],
            "only the plugin that says so"
        );
        let e = parse_in(tmp.path(), "plugin_isolation = \"thread\"").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (1, Some("plugin_isolation")));
        let e = parse_in(
            tmp.path(),
            "[[plugins]]\npath = \"data/a.jsonl\"\nisolation = true\n",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (3, Some("plugins[0].isolation"))
        );
        assert!(e.message.contains("got a boolean"), "{e}");
    }

    #[test]
    fn missing_corpora_and_plugins_fail_with_their_line() {
        let tmp = corpus_dir();
        let e = parse_in(
            tmp.path(),
            "corpora = [\"data/*.jsonl\",\n  \"nowhere/*.jsonl\"]",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (2, Some("corpora")));
        assert!(e.message.contains("matches no corpus file"), "{e}");
        let e = parse_in(tmp.path(), "corpora = \"data/c.jsonl\"").unwrap_err();
        assert!(
            e.message
                .contains("\"data/c.jsonl\" matches no corpus file"),
            "{e}"
        );
        let e = parse_in(tmp.path(), "[[plugins]]\npath = \"libnone.so\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (2, Some("plugins[0].path")));
        assert!(e.message.contains("plugin library not found"), "{e}");
        let e = parse_in(tmp.path(), "[[plugins]]\noptions = { a = 1 }\n").unwrap_err();
        assert!(e.message.contains("missing `path`"), "{e}");
        let e = parse_in(
            tmp.path(),
            "[[plugins]]\npath = \"data/a.jsonl\"\nwhere = 1\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(
            e.message.contains("valid keys of `plugins`: path, options"),
            "{e}"
        );
    }

    #[test]
    fn plugin_options_become_a_strategy_spec_and_bad_ones_are_refused() {
        let tmp = corpus_dir();
        let e = parse_in(
            tmp.path(),
            "[[plugins]]\npath = \"data/a.jsonl\"\noptions = { keep = 3, tools = [\"a\", \"b\"], on = true }\n[[plugins]]\npath = \"data/b.jsonl\"\n",
        )
        .unwrap();
        assert_eq!(e.plugins.len(), 2);
        assert_eq!(e.plugin_runs.len(), 1);
        assert!(
            e.plugin_runs[0]
                .origin
                .ends_with("exp.toml:3:11: `plugins[0].options`"),
            "{}",
            e.plugin_runs[0].origin
        );
        assert_eq!(
            e.plugin_runs[0].options,
            [
                ("keep".into(), "3".into()),
                ("tools".into(), "a|b".into()),
                ("on".into(), "true".into())
            ]
        );
        let e = parse_in(
            tmp.path(),
            "[[plugins]]\npath = \"data/a.jsonl\"\noptions = { x = \"a,b\" }\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("plugins[0].options.x"));
    }

    #[test]
    fn toml_syntax_errors_have_a_line_too() {
        let tmp = corpus_dir();
        let e = parse_in(tmp.path(), "jobs = 2\nout = \"x\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.key.is_none());
        let e = parse_in(tmp.path(), "jobs = 2\njobs = 3\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (2, Some("jobs")), "{e}");
        assert!(e.message.contains("duplicate key"), "{e}");
    }

    #[test]
    fn compress_history_follows_the_seeds() {
        assert_eq!(
            compress_history_spec(Some(true), &[]),
            "single-user-coalesced"
        );
        assert_eq!(compress_history_spec(Some(false), &[]), "full-history");
        assert_eq!(
            compress_history_spec(Some(true), &[("println_limit", 3)]),
            "single-user-coalesced:println_limit=3"
        );
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_column("a\nbé = 1", 5), (2, 3));
        assert_eq!(line_column("", 0), (1, 1));
    }
}
