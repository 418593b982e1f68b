//! The report of a run, with its three tables as Arrow: the runs (the JSON report's
//! `runs`, flattened), the sessions (`sessions.csv`) and the calls (`calls.csv`).

use crate::arrow::{ArrowTable, Col, Ordered, flatten_rows};
use crate::errors::recap_error;
use pyo3::prelude::*;
use recap_harness::RunConfig;
use recap_harness::engine::SessionOutcome;
use recap_harness::report::call_rows::CALL_COLUMNS;
use recap_harness::report::sessions_csv::SESSION_COLUMNS;
use recap_harness::report::{self, Report};

/// Fields of a JSON `runs` item that are lists of records: the sessions and calls
/// tables hold them, the summary does not.
const NOT_IN_SUMMARY: [&str; 2] = ["session_details", "prompt_tokens_by_call"];

/// A finished run.
#[pyclass(module = "recap_replay._native", name = "NativeReport", frozen)]
pub struct PyReport {
    report: Report,
    calls: Option<ArrowTable>,
}

impl PyReport {
    pub fn new(report: Report, calls: Option<ArrowTable>) -> Self {
        PyReport { report, calls }
    }
}

fn table(py: Python<'_>, columns: Vec<(String, arrow_array::ArrayRef)>) -> PyResult<ArrowTable> {
    ArrowTable::new(columns).map_err(|e| recap_error(py, format!("building a table: {e}")))
}

#[pymethods]
impl PyReport {
    /// The document `recap run --format json` writes.
    fn to_json(&self) -> String {
        self.report.to_json()
    }
    /// The terminal table `recap run` prints.
    fn to_table(&self) -> String {
        report::to_table(&self.report)
    }
    fn to_markdown(&self) -> String {
        report::to_markdown(&self.report)
    }
    /// `report.csv`: one row per run.
    fn to_csv(&self) -> String {
        report::to_csv(&self.report)
    }
    /// `sessions.csv`.
    fn sessions_csv(&self) -> PyResult<String> {
        let mut out = Vec::new();
        report::sessions_csv::write_sessions_csv(&self.report, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
    /// Whether any call broke an invariant or failed to render.
    fn has_problems(&self) -> bool {
        self.report.has_problems()
    }

    /// One row per run, one column per field of the JSON report's `runs` items (nested
    /// objects by dotted path).
    fn summary_table(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        let mut rows: Vec<Ordered> = Vec::with_capacity(self.report.runs.len());
        for run in &self.report.runs {
            let text = serde_json::to_string(run)
                .map_err(|e| recap_error(py, format!("a run row as JSON: {e}")))?;
            let mut row: Ordered = serde_json::from_str(&text)
                .map_err(|e| recap_error(py, format!("a run row as JSON: {e}")))?;
            if let Ordered::Object(fields) = &mut row {
                fields.retain(|(k, _)| !NOT_IN_SUMMARY.contains(&k.as_str()));
            }
            rows.push(row);
        }
        table(py, flatten_rows(&rows))
    }

    /// One row per session × run (`sessions.csv`).
    fn sessions_table(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        let mut cols = SessionCols::default();
        for r in &self.report.runs {
            for d in &r.session_details {
                cols.key.push(
                    &d.corpus,
                    d.line,
                    &d.session,
                    &r.form,
                    &r.strategy,
                    &r.tokenizer,
                );
                cols.calls.push(Some(d.calls as u64));
                cols.complete.push(Some(d.complete));
                cols.total.push(d.prompt_tokens_total);
                cols.peak.push(d.prompt_tokens_peak);
                cols.savings.push(d.savings_vs_full_history);
                cols.cached.push(d.cached_tokens);
                cols.cost.push(d.effective_cost);
                cols.retention.push(d.retention);
                cols.violations.push(Some(d.invariant_violations));
                cols.errors.push(Some(d.render_errors));
                cols.ns.push(Some(d.render_ns_total));
                cols.implicit.push(Some(r.implicit));
            }
        }
        table(py, cols.finish())
    }

    /// One row per call × strategy × tokenizer (`calls.csv`); `None` when the run
    /// was asked not to keep calls.
    fn calls_table(&self) -> Option<ArrowTable> {
        self.calls.clone()
    }
}

/// The columns that lead both `sessions.csv` and `calls.csv`: which session of which
/// corpus, replayed by which strategy, counted with which tokenizer.
#[derive(Default)]
struct KeyCols {
    corpus: Vec<Option<String>>,
    line: Vec<Option<u64>>,
    session: Vec<Option<String>>,
    form: Vec<Option<String>>,
    strategy: Vec<Option<String>>,
    tokenizer: Vec<Option<String>>,
}

/// How many columns [`KeyCols`] holds.
const KEY_COLUMNS: usize = 6;

impl KeyCols {
    fn push(
        &mut self,
        corpus: &str,
        line: usize,
        session: &str,
        form: &str,
        strategy: &str,
        tokenizer: &str,
    ) {
        self.corpus.push(Some(corpus.to_string()));
        self.line.push(Some(line as u64));
        self.session.push(Some(session.to_string()));
        self.form.push(Some(form.to_string()));
        self.strategy.push(Some(strategy.to_string()));
        self.tokenizer.push(Some(tokenizer.to_string()));
    }

    /// The table's columns: these, then `rest`, named by `header`. `rest` is typed by
    /// the header's length, so a column added to the CSV and not here fails to compile
    /// instead of shifting every name after it.
    fn columns<const REST: usize>(
        self,
        header: &[&str],
        rest: [Col; REST],
    ) -> Vec<(String, arrow_array::ArrayRef)> {
        let key: [Col; KEY_COLUMNS] = [
            Col::Str(self.corpus),
            Col::U64(self.line),
            Col::Str(self.session),
            Col::Str(self.form),
            Col::Str(self.strategy),
            Col::Str(self.tokenizer),
        ];
        header
            .iter()
            .zip(key.into_iter().chain(rest))
            .map(|(name, c)| (name.to_string(), c.finish()))
            .collect()
    }
}

#[derive(Default)]
struct SessionCols {
    key: KeyCols,
    calls: Vec<Option<u64>>,
    complete: Vec<Option<bool>>,
    total: Vec<Option<u64>>,
    peak: Vec<Option<u64>>,
    savings: Vec<Option<f64>>,
    cached: Vec<Option<u64>>,
    cost: Vec<Option<f64>>,
    retention: Vec<Option<f64>>,
    violations: Vec<Option<u64>>,
    errors: Vec<Option<u64>>,
    ns: Vec<Option<u64>>,
    implicit: Vec<Option<bool>>,
}

impl SessionCols {
    /// In `SESSION_COLUMNS` order.
    fn finish(self) -> Vec<(String, arrow_array::ArrayRef)> {
        let rest: [Col; SESSION_COLUMNS.len() - KEY_COLUMNS] = [
            Col::U64(self.calls),
            Col::Bool(self.complete),
            Col::U64(self.total),
            Col::U64(self.peak),
            Col::F64(self.savings),
            Col::U64(self.cached),
            Col::F64(self.cost),
            Col::F64(self.retention),
            Col::U64(self.violations),
            Col::U64(self.errors),
            Col::U64(self.ns),
            Col::Bool(self.implicit),
        ];
        self.key.columns(&SESSION_COLUMNS, rest)
    }
}

/// The calls of a run, gathered as sessions finish (in input order).
pub struct CallsTable {
    corpora: Vec<String>,
    strategies: Vec<String>,
    tokenizers: Vec<String>,
    key: KeyCols,
    call: Vec<Option<u64>>,
    prompt_tokens: Vec<Option<u64>>,
    cached_tokens: Vec<Option<u64>>,
    facts: Vec<Option<u64>>,
    retained: Vec<Option<u64>>,
    retention: Vec<Option<f64>>,
    violations: Vec<Option<u64>>,
    render_error: Vec<Option<String>>,
    render_ns: Vec<Option<u64>>,
}

impl CallsTable {
    pub fn new(cfg: &RunConfig, corpora: &[String]) -> Self {
        CallsTable {
            corpora: corpora.to_vec(),
            strategies: cfg.strategy_names(),
            tokenizers: cfg.tokenizer_names(),
            key: KeyCols::default(),
            call: Vec::new(),
            prompt_tokens: Vec::new(),
            cached_tokens: Vec::new(),
            facts: Vec::new(),
            retained: Vec::new(),
            retention: Vec::new(),
            violations: Vec::new(),
            render_error: Vec::new(),
            render_ns: Vec::new(),
        }
    }

    /// The rows of one session, in `calls.csv`'s order: strategies in run order, then
    /// calls, then tokenizers; strategies that do not render the session have none.
    pub fn session(&mut self, corpus: usize, line: usize, o: &SessionOutcome) {
        let corpus = self.corpora.get(corpus).cloned().unwrap_or_default();
        for (s, so) in o
            .strategies
            .iter()
            .enumerate()
            .filter(|(_, so)| so.applicable)
        {
            for c in &so.calls {
                let retention = (c.facts > 0).then(|| c.retained as f64 / c.facts as f64);
                for (t, tokenizer) in self.tokenizers.iter().enumerate() {
                    self.key.push(
                        &corpus,
                        line,
                        &o.id,
                        o.form.as_str(),
                        &self.strategies[s],
                        tokenizer,
                    );
                    self.call.push(Some(c.call as u64));
                    self.prompt_tokens.push(c.prompt_tokens.get(t).copied());
                    self.cached_tokens.push(c.cached_tokens.get(t).copied());
                    self.facts.push(Some(c.facts));
                    self.retained.push(Some(c.retained));
                    self.retention.push(retention);
                    self.violations.push(Some(c.violations));
                    self.render_error.push(c.render_error.clone());
                    self.render_ns.push(c.render_ns);
                }
            }
        }
    }

    /// The table, columns in `CALL_COLUMNS` order.
    pub fn finish(self, py: Python<'_>) -> PyResult<ArrowTable> {
        let rest: [Col; CALL_COLUMNS.len() - KEY_COLUMNS] = [
            Col::U64(self.call),
            Col::U64(self.prompt_tokens),
            Col::U64(self.cached_tokens),
            Col::U64(self.facts),
            Col::U64(self.retained),
            Col::F64(self.retention),
            Col::U64(self.violations),
            Col::Str(self.render_error),
            Col::U64(self.render_ns),
        ];
        table(py, self.key.columns(&CALL_COLUMNS, rest))
    }
}
