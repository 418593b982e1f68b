//! The report of a run and its renderings (table, markdown, csv, json).
//!
//! The JSON form is the stable, documented schema (docs/report-schema.md): the other
//! formats are views of the same [`Report`]. Fields whose name starts with `render_ns`
//! are wall-clock timings, and the `non_deterministic` block says when the run was;
//! every other field is identical between runs of the same input whatever the job
//! count.

pub mod call_rows;
mod columns;
mod csv;
mod markdown;
mod notes;
pub mod provenance;
pub mod sessions_csv;
mod table;

pub(crate) use columns::{Align, Shown, cells, shown_columns};
pub(crate) use notes::notes;
pub(crate) use table::heading;

pub use columns::{column_keys, parse_columns};
pub use csv::to_csv;
pub use markdown::to_markdown;
pub use provenance::{NonDeterministic, Provenance};
pub use table::{Columns, DEFAULT_WIDTH, to_table, to_table_with};

use serde::Serialize;
use std::collections::BTreeMap;

/// Bumped on any incompatible change to the JSON below (2: rows per session form, each
/// form with its own baseline; `groups`; `runs[].form`).
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub settings: Settings,
    /// One per session form present in the corpora (`ptc` first): its rows compare
    /// strategies over the same sessions.
    pub groups: Vec<FormGroup>,
    /// One per form × tokenizer × strategy that replayed a session of the form:
    /// form-major (as in `groups`), then tokenizer, then strategies in the order asked
    /// (an implicit baseline first).
    pub runs: Vec<Run>,
    /// Sessions that failed validation, in input order.
    pub rejected: Vec<Rejected>,
    /// Which recap, command, configuration, plugins, corpora and vocabularies produced
    /// the report (`recap run` fills it; `null` from library callers that do not).
    pub provenance: Option<Provenance>,
    /// When the run was: the one block that differs between identical runs. Last, so
    /// everything before it can be compared as text.
    pub non_deterministic: Option<NonDeterministic>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub corpora: Vec<CorpusInfo>,
    /// The spec of the strategy savings are measured against.
    pub baseline: String,
    /// `fast` (tiktoken 4.x) or `reference` (tiktoken-rs); counts are identical.
    pub tokenizer_backend: String,
    pub cache_read_ratio: f64,
}

impl Settings {
    /// The corpora's paths, as the report names them.
    pub fn corpus_paths(&self) -> Vec<&str> {
        self.corpora.iter().map(|c| c.path.as_str()).collect()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CorpusInfo {
    pub path: String,
    pub sessions: u64,
    pub rejected: u64,
}

impl CorpusInfo {
    /// `(N sessions, K rejected)`, as the Markdown and HTML reports write it after the
    /// corpus's path.
    pub fn counts(&self) -> String {
        format!(
            "({}, {} rejected)",
            fmt::plural(self.sessions, "session", "sessions"),
            fmt::int(self.rejected)
        )
    }
}

/// The sessions of one form, which every row of that form is measured over.
#[derive(Debug, Clone, Serialize)]
pub struct FormGroup {
    /// `ptc` or `chat`.
    pub form: String,
    /// Valid sessions of this form in the corpora.
    pub sessions: u64,
    /// Strategies that replay no session of this form (another form, or outside their
    /// scope): they have no row in this group.
    pub not_replayed: Vec<NotReplayed>,
}

/// A strategy left out of a form's rows, and why.
#[derive(Debug, Clone, Serialize)]
pub struct NotReplayed {
    pub strategy: String,
    /// The forms it renders.
    pub forms: Vec<String>,
    /// The sessions it replays, when narrower than its forms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Run {
    /// The session form of this row's group (`ptc`, `chat`): every figure is over
    /// sessions of this form.
    pub form: String,
    pub strategy: String,
    pub tokenizer: String,
    /// Not asked for: run only as the savings baseline.
    pub implicit: bool,
    /// The `--sweep` spec this setting came from.
    pub sweep: Option<String>,
    /// The session forms the strategy renders (`ptc`, `chat`).
    pub forms: Vec<String>,
    /// Which sessions the strategy replays, when narrower than its forms (the
    /// `recorded` pseudo-strategy: sessions with a record of what the agent sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Whether every call was rendered twice and the two prompts compared (the
    /// `deterministic` invariant): always for a strategy recap cannot see into (a
    /// plugin), for the others with `--check-determinism all`.
    pub determinism_checked: bool,
    /// Sessions rendered completely (sessions with a render error are not counted here).
    pub sessions: u64,
    /// Sessions of the row's form outside the strategy's `scope`: not replayed, and in
    /// no other figure of the row.
    pub not_applicable: u64,
    /// Calls (prompts) of those sessions.
    pub calls: u64,
    pub prompt_tokens_total: u64,
    /// The largest single prompt.
    pub prompt_tokens_peak: u64,
    pub prompt_tokens_mean: Option<f64>,
    /// `1 - total / total_full_history` over sessions both rendered completely.
    pub savings_vs_full_history: Option<f64>,
    /// Tokens in the common prefix with the previous call's prompt.
    pub cached_tokens: u64,
    /// `cached_tokens / prompt_tokens_total`.
    pub cache_hit_rate: Option<f64>,
    /// `uncached + cache_read_ratio × cached`.
    pub effective_cost: f64,
    /// Retained facts / facts, over all calls that had facts.
    pub retention: Option<f64>,
    pub retention_facts: u64,
    pub retention_retained: u64,
    pub invariant_violations: Violations,
    pub render_errors: RenderErrors,
    /// Median render time per call (ns; histogram, within 1%).
    pub render_ns_median: Option<u64>,
    pub render_ns_p95: Option<u64>,
    /// Full-history prompt tokens / recorded provider input tokens, per call; only on
    /// the baseline run and only when the corpus records them.
    pub replay_fidelity: Option<Fidelity>,
    /// Baseline only, where the log records run-level input totals.
    pub run_fidelity: Option<RunFidelity>,
    /// Baseline only, where the log records the provider's cache reads.
    pub provider_cache: Option<ProviderCache>,
    /// Message contents tokenized vs reused from the previous call.
    pub token_counting: TokenCounting,
    /// Mean prompt tokens by call index (over the sessions that reach that call).
    pub prompt_tokens_by_call: Vec<CallMean>,
    /// One record per session (complete or not), in input order.
    pub session_details: Vec<SessionDetail>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Violations {
    pub count: u64,
    /// Count per invariant id.
    pub by_invariant: BTreeMap<String, u64>,
    /// The first few, in input order.
    pub examples: Vec<ViolationExample>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ViolationExample {
    pub corpus: String,
    pub session: String,
    pub call: usize,
    pub invariant: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct RenderErrors {
    /// Failed calls.
    pub count: u64,
    /// Failed calls per error kind (`panic`, `timeout`, `invalid_response`, …).
    pub by_kind: BTreeMap<String, u64>,
    /// Sessions with at least one failed call.
    pub sessions: u64,
    pub examples: Vec<RenderErrorExample>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RenderErrorExample {
    pub corpus: String,
    pub session: String,
    pub call: usize,
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fidelity {
    pub calls: u64,
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub min: f64,
    pub max: f64,
}

/// The provider's own prompt-cache use, as the log recorded it (baseline row only):
/// recap's `cached` share of `full-history` beside it tells how close the cache model
/// comes to what the provider served.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderCache {
    /// Calls whose usage records both input and cache reads.
    pub calls: u64,
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    /// `cache_read_tokens / input_tokens`.
    pub hit_rate: Option<f64>,
}

/// Full-history prompt tokens against a run-level input total, where a log records only
/// that (SWE-agent's `tokens_sent`), over the sessions that record it.
#[derive(Debug, Clone, Serialize)]
pub struct RunFidelity {
    pub sessions: u64,
    pub full_history_tokens: u64,
    pub recorded_tokens: u64,
    /// `full_history_tokens / recorded_tokens`.
    pub ratio: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct TokenCounting {
    pub messages_tokenized: u64,
    pub messages_reused: u64,
    /// Lines of the messages counted anew that were tokenized / found already counted
    /// earlier in the session (by any strategy).
    pub segments_tokenized: u64,
    pub segments_reused: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CallMean {
    pub call: usize,
    pub sessions: u64,
    pub mean_prompt_tokens: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SessionDetail {
    pub corpus: String,
    pub line: usize,
    pub session: String,
    pub calls: usize,
    /// False when some call failed to render; token fields are then null.
    pub complete: bool,
    pub prompt_tokens_total: Option<u64>,
    pub prompt_tokens_peak: Option<u64>,
    pub savings_vs_full_history: Option<f64>,
    pub cached_tokens: Option<u64>,
    pub effective_cost: Option<f64>,
    pub retention: Option<f64>,
    pub invariant_violations: u64,
    pub render_errors: u64,
    pub render_ns_total: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    pub corpus: String,
    pub line: usize,
    pub session: Option<String>,
    pub field: String,
    pub message: String,
}

impl Report {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        // Plain data (strings, numbers, maps with string keys) always serialises.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// [`Report::to_json`], streamed: the per-session records of a big corpus can run
    /// to tens of MB, which need not exist twice in memory.
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, self)?;
        w.write_all(b"\n")
    }

    /// The group of a row's form.
    pub fn group_of(&self, run: &Run) -> Option<&FormGroup> {
        self.groups.iter().find(|g| g.form == run.form)
    }

    /// The rows of one form, in report order.
    pub fn runs_of<'a>(&'a self, group: &'a FormGroup) -> impl Iterator<Item = &'a Run> + 'a {
        self.runs.iter().filter(move |r| r.form == group.form)
    }

    /// Whether a row replayed every session of its form completely: only such rows
    /// compare with each other on tokens and retention (the Pareto front, say).
    pub fn covers_its_form(&self, run: &Run) -> bool {
        self.group_of(run)
            .is_some_and(|g| run.sessions == g.sessions && g.sessions > 0)
    }

    /// Any violation or render error (the CLI exits 1 then).
    pub fn has_problems(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.invariant_violations.count > 0 || r.render_errors.count > 0)
    }
}

/// Shared cell formatting of the human-readable views (and chart axes, and the CLI's
/// messages).
pub mod fmt {
    pub fn pct(v: Option<f64>) -> String {
        v.map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0))
    }

    pub fn int(v: u64) -> String {
        let s = v.to_string();
        let mut out = String::with_capacity(s.len() + s.len() / 3);
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    pub fn float_int(v: f64) -> String {
        int(v.round().max(0.0) as u64)
    }

    pub fn ns(v: Option<u64>) -> String {
        match v {
            None => "-".into(),
            Some(n) if n < 1_000 => format!("{n}ns"),
            Some(n) if n < 1_000_000 => format!("{:.1}µs", n as f64 / 1e3),
            Some(n) if n < 1_000_000_000 => format!("{:.1}ms", n as f64 / 1e6),
            Some(n) => format!("{:.2}s", n as f64 / 1e9),
        }
    }

    /// A form as a reader calls it.
    pub fn form_title(form: &str) -> &str {
        match form {
            "ptc" => "PTC-Lisp",
            other => other,
        }
    }

    /// `1 session`, `1,200 sessions`.
    pub fn plural(n: u64, one: &str, many: &str) -> String {
        format!("{} {}", int(n), if n == 1 { one } else { many })
    }

    pub fn strategy(run: &super::Run) -> String {
        if run.implicit {
            format!("{}*", run.strategy)
        } else {
            run.strategy.clone()
        }
    }
}
