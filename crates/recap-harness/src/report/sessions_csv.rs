//! `sessions.csv`: one row per session × strategy × tokenizer, from the report's
//! per-session records (`session_details`).

use super::Report;
use super::csv::field;
use std::io::{self, Write};

/// The columns of `sessions.csv`, in order.
pub const SESSION_COLUMNS: [&str; 18] = [
    "corpus",
    "line",
    "session",
    "form",
    "strategy",
    "tokenizer",
    "calls",
    "complete",
    "prompt_tokens_total",
    "prompt_tokens_peak",
    "savings_vs_full_history",
    "cached_tokens",
    "effective_cost",
    "retention",
    "invariant_violations",
    "render_errors",
    "render_ns_total",
    "implicit",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Whether the report has per-session records to write (`--no-session-details` drops
/// them).
pub fn has_sessions(report: &Report) -> bool {
    report.runs.iter().any(|r| !r.session_details.is_empty())
}

/// Rows in report order: runs (form, then tokenizer, then strategies as asked), then
/// sessions in input order.
pub fn write_sessions_csv(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{}", SESSION_COLUMNS.join(","))?;
    for r in &report.runs {
        let strategy = field(&r.strategy);
        for d in &r.session_details {
            let cells = [
                field(&d.corpus),
                d.line.to_string(),
                field(&d.session),
                field(&r.form),
                strategy.clone(),
                field(&r.tokenizer),
                d.calls.to_string(),
                d.complete.to_string(),
                opt(d.prompt_tokens_total),
                opt(d.prompt_tokens_peak),
                opt(d.savings_vs_full_history),
                opt(d.cached_tokens),
                opt(d.effective_cost),
                opt(d.retention),
                d.invariant_violations.to_string(),
                d.render_errors.to_string(),
                d.render_ns_total.to_string(),
                r.implicit.to_string(),
            ];
            writeln!(w, "{}", cells.join(","))?;
        }
    }
    Ok(())
}
