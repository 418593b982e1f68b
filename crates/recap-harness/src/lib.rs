//! recap's benchmarking harness (`recap run`, `recap inspect`).
//!
//! Replays recorded sessions through strategies call by call and measures what SPEC
//! section 9 defines: prompt tokens (real tokenizers), prompt-cache reuse and effective
//! cost, retention of recorded facts, replay fidelity against provider counts, render
//! time, and invariant violations. Reports render as a terminal table, markdown, CSV and
//! JSON (docs/report-schema.md), plus SVG charts.

mod aggregate;
pub mod calls;
pub mod chart_labels;
pub mod chart_style;
pub mod charts;
mod config;
pub mod counting;
mod driver;
pub mod engine;
pub mod html;
pub mod inspect;
pub mod line_store;
pub mod lowest_retention;
mod outcome;
pub mod output;
pub mod part;
mod prompt_dump;
#[cfg(feature = "replay-fidelity")]
pub mod replay_fidelity;
pub mod report;
pub mod retention;
pub mod segments;
mod session_run;
pub mod shard;
mod source;
pub mod stats;
pub mod sweep;
pub mod tokenizer;

pub use engine::{
    Checker, DeterminismCheck, HarnessError, Hooks, PromptDump, RunConfig, StrategyEntry,
    process_session, run_corpora, run_entries, run_sessions,
};
pub use report::Report;
pub use shard::Shard;
pub use tokenizer::{Backend, Encoding, Tokenizer};

/// Writes every format and chart of `report` into the staged output directory — the
/// JSON, CSV, markdown and text views, `sessions.csv` (when the report has per-session
/// records), the SVG charts and `report.html` with `lowest` as its lowest-retention
/// calls — and returns the file names written.
pub fn write_report(
    out: &output::OutputDir,
    report: &Report,
    lowest: &[lowest_retention::CallView],
) -> Result<Vec<String>, WriteError> {
    out.write_with("report.json", |w| report.write_json(w))?;
    let mut written = vec!["report.json".to_string()];
    let files: [(&str, String); 3] = [
        ("report.csv", report::to_csv(report)),
        ("report.md", report::to_markdown(report)),
        ("report.txt", report::to_table(report)),
    ];
    for (name, text) in files {
        out.write(name, text.as_bytes())?;
        written.push(name.to_string());
    }
    if report::sessions_csv::has_sessions(report) {
        out.write_with(output::SESSIONS_CSV, |w| {
            report::sessions_csv::write_sessions_csv(report, w)
        })?;
        written.push(output::SESSIONS_CSV.to_string());
    }
    let charts = charts::charts(report)?;
    for chart in &charts {
        out.write(&chart.file_name, chart.svg.as_bytes())?;
        written.push(chart.file_name.clone());
    }
    let html = html::to_html(report, &charts, lowest);
    out.write(output::REPORT_HTML, html.as_bytes())?;
    written.push(output::REPORT_HTML.to_string());
    Ok(written)
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Output(#[from] output::OutputError),
    #[error(transparent)]
    Chart(#[from] charts::ChartError),
}
