//! Experiment files: `recap run --config experiment.toml` (docs/experiments.md).
//!
//! The file says what a run's flags say — corpora (globs), strategies and sweeps, the
//! `compress_history` shorthand of ptc_runner, tokenizers, plugins with their options, the
//! output directory — so an experiment can be repeated from one file and diffed in
//! review. Paths in the file are relative to the file's own directory, so it runs the
//! same from anywhere. Every key and value is checked before anything runs, and a bad
//! one is reported with the file, line and column, the key, and what was expected.

mod field;

use super::plugins::IsolationMode;
use field::Field;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The keys of an experiment file, as `recap init` documents them.
pub const KEYS: [&str; 17] = [
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
    /// Where the experiment's runs go, one `run-NNNN` directory each.
    pub out: Option<PathBuf>,
    pub format: Option<String>,
    pub dump_prompts: Option<bool>,
    /// `check_determinism`: `opaque` or `all`.
    pub check_determinism: Option<String>,
}

/// The strategy ptc_runner's `compress_history: true` selects.
pub const COMPRESS_ON: &str = "single-user-coalesced";
/// ... and `compress_history: false`.
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
            "force" => {
                return Err(ctx.error(
                    key.span(),
                    Some(name),
                    "an experiment's runs are never overwritten: each writes a new directory under `out` (run-0001, run-0002, …), so `force` has nothing to do; remove it (`recap run --out DIR --force` replaces a report in DIR)".to_string(),
                ));
            }
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

/// One of [`ISOLATIONS`], already checked.
fn isolation_mode(name: &str) -> IsolationMode {
    if name == "process" {
        IsolationMode::Process
    } else {
        IsolationMode::InProcess
    }
}

#[cfg(test)]
mod tests;
